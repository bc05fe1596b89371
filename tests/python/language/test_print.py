"""print() and printf() in kernels: C's printf on the CPU, lines in thread
order (kernels that print run their threads in order), not repeated by the
backward pass; formats checked when the kernel compiles."""
import re

import numpy as np
import pytest

import adjit as wp


@wp.kernel
def show(x: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat22d),
         y: wp.array(dtype=float)):
    i = wp.tid()
    print("thread", i, "x =", x[i], v[i], m[i], i > 1, wp.int64(i) * wp.int64(3000000000))
    wp.printf("%d: %.2f %5.1f%% %x\n", i, x[i], wp.float64(x[i]), i + 10)
    y[i] = x[i] * x[i]


def test_print_and_printf_in_thread_order_and_not_in_backward(capfd):
    n = 2000  # over the parallel grain: still one line per thread, in order
    x = wp.array(np.arange(n, dtype=np.float32) * 0.5, requires_grad=True)
    v = wp.array(np.tile([1.0, -2.0, 0.25], (n, 1)).astype(np.float32), dtype=wp.vec3)
    m = wp.array(np.tile([[1.0, 2.0], [3.0, 4.5]], (n, 1, 1)), dtype=wp.mat22d)
    y = wp.zeros(n, dtype=float, requires_grad=True)
    print("before")
    tape = wp.Tape()
    with tape:
        wp.launch(show, dim=n, inputs=[x, v, m, y])
    print("after")
    lines = capfd.readouterr().out.splitlines()
    assert lines[0] == "before" and lines[-1] == "after" and len(lines) == 2 * n + 2
    for i in range(n):
        assert lines[1 + 2 * i] == (f"thread {i} x = {i * 0.5:g} [1 -2 0.25] [[1 2] [3 4.5]] {int(i > 1)} "
                                    f"{i * 3000000000}")
        assert lines[2 + 2 * i] == f"{i}: {i * 0.5:.2f} {i * 0.5:5.1f}% {i + 10:x}"
    tape.backward(grads={y: wp.array(np.ones(n, np.float32))})
    assert capfd.readouterr().out == ""
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy())


@pytest.mark.parametrize("line, message", [
    ('wp.printf("%d\\n", x[i])', "conversion %d does not match a float32"),
    ('wp.printf("%f %f\\n", x[i])', "2 conversion(s) for 1 value(s)"),
    ('wp.printf("%s\\n", i)', "conversion '%s' is not supported"),
    ('wp.printf("100%")', "lone '%'"),
    ('wp.printf("%d\\n", wp.vec3(1.0))', "cannot print a vec3"),
    ('print(x)', "print() takes numbers, vectors and matrices"),
    ('print(i, end=i)', "sep= and end= string literals"),
])
def test_bad_formats_are_located_errors(tmp_path, line, message):
    src = tmp_path / "bad_print.py"
    src.write_text("import adjit as wp\n\n\n@wp.kernel\ndef k(x: wp.array(dtype=float)):\n"
                   f"    i = wp.tid()\n    {line}\n")
    import importlib.util
    spec = importlib.util.spec_from_file_location("bad_print", src)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(wp.KernelError, match=re.escape(message)) as e:
        wp.launch(module.k, dim=1, inputs=[wp.zeros(1, dtype=float)])
    assert "bad_print.py:7" in str(e.value)
