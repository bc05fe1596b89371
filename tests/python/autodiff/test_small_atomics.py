"""Atomics on 8- and 16-bit elements, as Warp 1.19 has them: atomic_add and
atomic_sub on float16 and bfloat16, atomic_min and atomic_max on bfloat16;
every other 8/16-bit combination is a located KernelTypeError (as Warp
refuses them). On the CPU the float adds of such a kernel run in thread
order (the launch is serial), so sums round as numpy's do in order."""
import shutil
import subprocess

import numpy as np
import pytest

import adjit as wp
from adjit import types as T


def _bits_to_f32(bits):
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def _as_f32(a: wp.Array) -> np.ndarray:
    """Host values of a float16 or bfloat16 array as float32."""
    if a.dtype is wp.bfloat16:
        return _bits_to_f32(a.numpy().view(np.uint16))
    return a.numpy().astype(np.float32)


def _round(x, dtype) -> np.float32:
    """float32 x rounded to dtype (float16 by numpy, bfloat16 by adjit's host
    conversion, which test_bfloat16.py checks bit for bit)."""
    if dtype is wp.float16:
        return np.float32(np.float16(x))
    return _bits_to_f32(T.float32_to_bfloat16_bits(np.float32(x)))[()]


def _kernels(dtype):
    @wp.kernel
    def add_sub(x: wp.array(dtype=dtype), total: wp.array(dtype=dtype), neg: wp.array(dtype=dtype),
                olds: wp.array(dtype=dtype)):
        i = wp.tid()
        wp.atomic_add(total, 0, x[i])
        wp.atomic_sub(neg, 0, x[i])
        olds[i] = wp.atomic_add(total, 1, dtype(1.0))
    return add_sub


SMALL_FLOATS = [wp.float16, wp.bfloat16]


@pytest.mark.parametrize("dtype", SMALL_FLOATS, ids=str)
def test_small_float_atomic_add_and_sub_in_thread_order(dtype):
    rng = np.random.default_rng(7)
    n = 64
    x = np.array([_round(v, dtype) for v in rng.normal(size=n).astype(np.float32)], np.float32)
    total, neg, olds = wp.zeros(2, dtype=dtype), wp.zeros(1, dtype=dtype), wp.zeros(n, dtype=dtype)
    wp.launch(_kernels(dtype), dim=n, inputs=[wp.array(x, dtype=dtype)], outputs=[total, neg, olds])
    acc = neg_acc = np.float32(0.0)
    for v in x:  # thread order, rounded after each add
        acc = _round(acc + v, dtype)
        neg_acc = _round(neg_acc - v, dtype)
    assert _as_f32(total)[0] == acc and _as_f32(neg)[0] == neg_acc
    assert _as_f32(total)[1] == n
    # each thread saw the count before its add (the launch is serial: in thread order)
    np.testing.assert_array_equal(_as_f32(olds), np.arange(n, dtype=np.float32))


@wp.kernel
def bf16_min_max(x: wp.array(dtype=wp.bfloat16), lo: wp.array(dtype=wp.bfloat16), hi: wp.array(dtype=wp.bfloat16)):
    i = wp.tid()
    wp.atomic_min(lo, i % 2, x[i])
    wp.atomic_max(hi, i % 2, x[i])


def test_bfloat16_atomic_min_max():
    rng = np.random.default_rng(2)
    x = _bits_to_f32(T.float32_to_bfloat16_bits(rng.normal(size=101).astype(np.float32) * 100))
    lo = wp.full(2, 1.0e30, dtype=wp.bfloat16)
    hi = wp.full(2, -1.0e30, dtype=wp.bfloat16)
    wp.launch(bf16_min_max, dim=x.size, inputs=[wp.array(x, dtype=wp.bfloat16)], outputs=[lo, hi])
    np.testing.assert_array_equal(_as_f32(lo), [x[0::2].min(), x[1::2].min()])
    np.testing.assert_array_equal(_as_f32(hi), [x[0::2].max(), x[1::2].max()])


@wp.kernel
def bf16_min_loss(x: wp.array(dtype=wp.bfloat16), lo: wp.array(dtype=wp.bfloat16)):
    i = wp.tid()
    wp.atomic_min(lo, 0, x[i] * x[i])


def test_bfloat16_atomic_min_gradient_reaches_the_winner():
    x0 = np.array([2.0, -0.5, 1.5, 3.0], np.float32)  # the minimum of x^2 is at x = -0.5
    x = wp.array(x0, dtype=wp.bfloat16, requires_grad=True)
    lo = wp.full(1, 100.0, dtype=wp.bfloat16, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(bf16_min_loss, dim=4, inputs=[x], outputs=[lo])
    assert _as_f32(lo)[0] == 0.25
    tape.backward(grads={lo: np.ones(1)})
    np.testing.assert_array_equal(_as_f32(x.grad), [0.0, -1.0, 0.0, 0.0])  # d(x^2)/dx at the winner only


# --- refused combinations -----------------------------------------------------------------------

REFUSED = [(name, d) for name in ("atomic_add", "atomic_sub", "atomic_min", "atomic_max", "atomic_exch",
                                  "atomic_and", "atomic_or", "atomic_xor", "atomic_cas")
           for d in (wp.int8, wp.uint8, wp.int16, wp.uint16)] + \
    [(name, wp.float16) for name in ("atomic_min", "atomic_max", "atomic_exch", "atomic_cas")] + \
    [(name, wp.bfloat16) for name in ("atomic_exch", "atomic_cas")] + \
    [(name, d) for name in ("atomic_and", "atomic_or", "atomic_xor") for d in SMALL_FLOATS]


def _refused_kernel(name, dtype):
    f = getattr(wp, name)
    if name == "atomic_cas":
        def k(a: wp.array(dtype=dtype)):
            f(a, 0, dtype(0), dtype(1))
    else:
        def k(a: wp.array(dtype=dtype)):
            f(a, 0, dtype(1))
    k.__name__ = f"refused_{name}_{dtype}"
    return wp.kernel(k)


@pytest.mark.parametrize("name,dtype", REFUSED, ids=[f"{n}-{d}" for n, d in REFUSED])
def test_unsupported_small_atomics_are_located_errors(name, dtype):
    k = _refused_kernel(name, dtype)
    with pytest.raises(wp.KernelTypeError, match=name) as e:
        wp.launch(k, dim=1, inputs=[wp.zeros(2, dtype=dtype)])
    assert "test_small_atomics.py" in str(e.value)


@wp.kernel
def small_int_accumulate(a: wp.array(dtype=wp.int8), h: wp.array(dtype=wp.uint16)):
    a[0] += wp.int8(100)
    h[0] -= wp.uint16(3)


def test_augmented_add_into_small_int_arrays_is_atomic_and_wraps():
    """``a[i] += v`` on 8/16-bit integer arrays (an adjit extension: Warp
    refuses atomic_add there) is an atomic add that wraps, as numpy's."""
    a, h = wp.zeros(1, dtype=wp.int8), wp.zeros(1, dtype=wp.uint16)
    wp.launch(small_int_accumulate, dim=1000, inputs=[a, h])
    assert a.numpy()[0] == np.int8(np.int64(100 * 1000).astype(np.int8))
    assert h.numpy()[0] == np.uint16((-3 * 1000) % 65536)


# --- PTX ----------------------------------------------------------------------------------------

@wp.kernel
def small_atomics_ptx(h: wp.array(dtype=wp.float16), b: wp.array(dtype=wp.bfloat16), x: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(h, 0, wp.float16(x[i]))
    wp.atomic_sub(b, 0, wp.bfloat16(x[i]))
    wp.atomic_min(b, 1, wp.bfloat16(x[i]))
    wp.atomic_max(b, 2, wp.bfloat16(x[i]) * b[3])


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on PATH")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_small_atomics_ptx_assembles(tmp_path, arch):
    ptx = wp.compile(small_atomics_ptx, target="cuda", arch=arch)
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    proc = subprocess.run(["ptxas", f"-arch={arch}", str(src), "-o", str(tmp_path / "k.cubin")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "atom" in ptx
