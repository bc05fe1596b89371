"""expect_eq / expect_neq / expect_near in kernels: a failed check prints the
file, line, call and values; passing checks print nothing; the launch goes on."""
import numpy as np

import adjit as wp


@wp.kernel
def checks(x: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), y: wp.array(dtype=float)):
    i = wp.tid()
    wp.expect_eq(i, i)
    wp.expect_eq(x[i], 2.0)
    wp.expect_neq(v[i], wp.vec3(0.0))
    wp.expect_near(x[i], 2.0 + 1.0e-7)
    wp.expect_near(v[i], wp.vec3(1.0, 1.0, 1.0), 0.5)
    y[i] = x[i] + 1.0


def test_failed_checks_print_and_the_launch_goes_on(capfd):
    x = wp.array(np.array([2.0, 3.0, 2.0], np.float32))
    v = wp.array(np.array([[1, 1, 1], [0, 0, 0], [1, 1, 2]], np.float32), dtype=wp.vec3)
    y = wp.zeros(3, dtype=float)
    wp.launch(checks, dim=3, inputs=[x, v, y])
    np.testing.assert_array_equal(y.numpy(), [3.0, 4.0, 3.0])
    lines = capfd.readouterr().out.splitlines()
    line = checks.source.first_line
    where = f"{checks.source.filename}:"
    assert lines == [
        f"{where}{line + 4}: wp.expect_eq(x[i], 2.0) failed: 3 vs 2",
        f"{where}{line + 5}: wp.expect_neq(v[i], wp.vec3(0.0)) failed: [0 0 0] vs [0 0 0]",
        f"{where}{line + 6}: wp.expect_near(x[i], 2.0 + 1e-07) failed: 3 vs 2",
        f"{where}{line + 7}: wp.expect_near(v[i], wp.vec3(1.0, 1.0, 1.0), 0.5) failed: [0 0 0] vs [1 1 1]",
        f"{where}{line + 7}: wp.expect_near(v[i], wp.vec3(1.0, 1.0, 1.0), 0.5) failed: [1 1 2] vs [1 1 1]",
    ]
