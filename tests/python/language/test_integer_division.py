"""Integer division never traps: a zero divisor gives 0, INT_MIN / -1 wraps to
INT_MIN (remainder 0); a literal zero divisor is a compile-time error. (Before,
these killed the interpreter with SIGFPE, or returned x for `x // 0`.)"""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import adjit as wp


@wp.kernel
def divide32(a: wp.array(dtype=wp.int32), b: wp.array(dtype=wp.int32), q: wp.array(dtype=wp.int32),
             f: wp.array(dtype=wp.int32), r: wp.array(dtype=wp.int32)):
    i = wp.tid()
    q[i] = a[i] / b[i]
    f[i] = a[i] // b[i]
    r[i] = a[i] % b[i]


@wp.kernel
def divide64(a: wp.array(dtype=wp.int64), b: wp.array(dtype=wp.int64), q: wp.array(dtype=wp.int64),
             f: wp.array(dtype=wp.int64), r: wp.array(dtype=wp.int64)):
    i = wp.tid()
    q[i] = a[i] / b[i]
    f[i] = a[i] // b[i]
    r[i] = a[i] % b[i]


def _expected(a: int, b: int, bits: int):
    """Warp's semantics: `/` truncates, `//` floors, `%` has the dividend's sign;
    b == 0 gives 0, and INT_MIN / -1 wraps to INT_MIN."""
    if b == 0:
        return 0, 0, 0
    int_min = -(1 << (bits - 1))
    if a == int_min and b == -1:
        return int_min, int_min, 0
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return q, a // b, a - q * b


@pytest.mark.parametrize("kernel,dtype,bits", [(divide32, np.int32, 32), (divide64, np.int64, 64)])
def test_integer_division_is_defined_for_every_input(kernel, dtype, bits):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(bits)
    special = [(7, 0), (-7, 0), (0, 0), (info.min, 0), (info.max, 0), (info.min, -1), (info.min, 1),
               (info.max, -1), (7, 2), (-7, 2), (7, -2), (-7, -2), (info.min, 2), (info.min, info.min)]
    random = [(int(x), int(y)) for x, y in rng.integers(-1000, 1000, size=(200, 2))]
    pairs = special + random
    a = wp.array(np.array([p[0] for p in pairs], dtype))
    b = wp.array(np.array([p[1] for p in pairs], dtype))
    outs = [wp.zeros(len(pairs), dtype=dtype) for _ in range(3)]
    wp.launch(kernel, dim=len(pairs), inputs=[a, b], outputs=outs)
    got = list(zip(*(o.numpy().tolist() for o in outs)))
    want = [_expected(x, y, bits) for x, y in pairs]
    assert got == want


@wp.kernel
def cw_divide(a: wp.array(dtype=wp.vec3i), b: wp.array(dtype=wp.vec3i), q: wp.array(dtype=wp.vec3i)):
    i = wp.tid()
    q[i] = wp.cw_div(a[i], b[i])


def test_componentwise_integer_division_by_zero_gives_zero():
    a = wp.array(np.array([[7, -7, -2147483648]], np.int32), dtype=wp.vec3i)
    b = wp.array(np.array([[0, 2, -1]], np.int32), dtype=wp.vec3i)
    q = wp.zeros(1, dtype=wp.vec3i)
    wp.launch(cw_divide, dim=1, inputs=[a, b], outputs=[q])
    assert q.numpy().tolist() == [[0, -3, -2147483648]]


def test_float_division_by_zero_is_ieee():
    @wp.kernel
    def fdiv(a: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = a[i] / 0.0

    y = wp.zeros(2)
    wp.launch(fdiv, dim=2, inputs=[wp.array(np.array([1.0, -1.0], np.float32))], outputs=[y])
    assert y.numpy().tolist() == [np.inf, -np.inf]


@pytest.mark.parametrize("expression", ["x[i] // 0", "x[i] % 0", "x[i] / 0"])
def test_a_literal_zero_divisor_is_a_compile_time_error(tmp_path, expression):
    source = tmp_path / "literal_zero.py"
    source.write_text(textwrap.dedent(f"""
        import adjit as wp

        @wp.kernel
        def k(x: wp.array(dtype=wp.int32)):
            i = wp.tid()
            x[i] = {expression}
        """))
    sys.path.insert(0, str(tmp_path))
    try:
        import literal_zero
        with pytest.raises(wp.KernelTypeError, match="integer division by zero") as e:
            wp.launch(literal_zero.k, dim=1, inputs=[wp.zeros(1, dtype=wp.int32)])
        assert "literal_zero.py:7" in str(e.value)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("literal_zero", None)


def test_division_by_zero_does_not_kill_the_interpreter(tmp_path):
    # A trap (SIGFPE) would end this subprocess with a signal, not with 0.
    script = tmp_path / "divide.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import adjit as wp

        @wp.kernel
        def k(a: wp.array(dtype=wp.int32), b: wp.array(dtype=wp.int32), y: wp.array(dtype=wp.int32)):
            i = wp.tid()
            y[i] = a[i] // b[i] + a[i] % b[i]

        y = wp.zeros(4096, dtype=wp.int32)
        a = wp.array(np.full(4096, -2147483648, np.int32))
        for b in (0, -1):
            wp.launch(k, dim=4096, inputs=[a, wp.array(np.full(4096, b, np.int32))], outputs=[y])
            print(b, int(y.numpy()[0]))
        """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "0", "-1", "-2147483648"]
