"""CPU kernel bodies as SIMD programs (adjit-vectorize-threads, docs/simd.md):
the kernels below are vectorized, and give bitwise the results of the scalar
bodies (ADJIT_SIMD_WIDTH=0), each in a fresh process and compile cache; a
failed check in a SIMD body names the thread that failed."""
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import adjit as wp
from adjit.errors import OutOfBoundsError

PROGRAM = textwrap.dedent('''
    import sys
    import numpy as np
    import adjit as wp

    @wp.kernel
    def steps(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), n: int, dt: float,
              x_out: wp.array(dtype=wp.vec3)):
        # a uniform loop with a branch on each thread's own values
        i = wp.tid()
        p = x[i]
        q = v[i]
        for k in range(n):
            q = q - p * dt
            if wp.length(p) > 1.0:
                q = q * 0.5
            p = p + q * dt
        x_out[i] = p

    @wp.kernel
    def escape(cx: wp.array(dtype=float), cy: wp.array(dtype=float), count: wp.array2d(dtype=int)):
        # a data-dependent while loop, 2-D threads writing their own element
        i, j = wp.tid()
        zr = float(0.0)
        zi = float(0.0)
        n = int(0)
        while n < 64 and zr * zr + zi * zi <= 4.0:
            t = zr * zr - zi * zi + cx[j]
            zi = 2.0 * zr * zi + cy[i]
            zr = t
            n += 1
        count[i, j] = n

    @wp.kernel
    def lookup(x: wp.array(dtype=float), k: int, y: wp.array(dtype=float)):
        # an index checked at run time (from a float), in a loop
        i = wp.tid()
        s = float(0.0)
        for r in range(k):
            s += x[int(x[i]) % 37] * float(r)
        y[i] = s

    @wp.kernel
    def rows(start: wp.array(dtype=int), vals: wp.array(dtype=float), out: wp.array(dtype=float)):
        # a loop whose bounds differ between threads (a CSR row's sum)
        i = wp.tid()
        s = float(0.0)
        for j in range(start[i], start[i + 1]):
            s += vals[j] * vals[j]
        out[i] = s

    rng = np.random.default_rng(1)
    n = 1003  # (not a multiple of 8: the scalar body runs the rest)
    x = wp.array(rng.standard_normal((n, 3)).astype(np.float32), dtype=wp.vec3)
    v = wp.array(rng.standard_normal((n, 3)).astype(np.float32), dtype=wp.vec3)
    x_out = wp.zeros(n, dtype=wp.vec3)
    wp.launch(steps, n, inputs=[x, v, 25, 0.1, x_out])
    cx = wp.array(np.linspace(-2.0, 0.6, 45).astype(np.float32))
    cy = wp.array(np.linspace(-1.2, 1.2, 29).astype(np.float32))
    count = wp.zeros((29, 45), dtype=int)
    wp.launch(escape, (29, 45), inputs=[cx, cy, count])
    xs = wp.array((rng.random(n) * 36).astype(np.float32))
    y = wp.zeros(n, dtype=float)
    wp.launch(lookup, n, inputs=[xs, 5, y])
    counts = rng.integers(0, 9, 203)
    start = wp.array(np.concatenate([[0], np.cumsum(counts)]).astype(np.int32))
    vals = wp.array(rng.standard_normal(int(counts.sum())).astype(np.float32))
    sums = wp.zeros(203, dtype=float)
    wp.launch(rows, 203, inputs=[start, vals, sums])
    np.savez(sys.argv[1], x_out=x_out.numpy(), count=count.numpy(), y=y.numpy(), sums=sums.numpy())
''')


def _run(tmp_path: Path, width: int) -> dict:
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    out = tmp_path / f"out{width}.npz"
    env = dict(os.environ, ADJIT_SIMD_WIDTH=str(width), ADJIT_CACHE_DIR=str(tmp_path / f"cache{width}"),
               ADJIT_DUMP_DIR=str(tmp_path / f"dump{width}"))
    subprocess.run([sys.executable, str(script), str(out)], env=env, check=True, timeout=300)
    return dict(np.load(out))


def test_simd_bodies_give_the_scalar_bodies_bits(tmp_path):
    scalar, simd = _run(tmp_path, 0), _run(tmp_path, 8)
    for name in scalar:
        assert scalar[name].dtype == simd[name].dtype
        assert scalar[name].tobytes() == simd[name].tobytes(), name
    # (the programs compute something: not all zeros)
    assert np.abs(scalar["x_out"]).sum() > 0 and scalar["count"].max() == 64 and scalar["y"].any()
    assert scalar["sums"].any()
    outcomes = {}
    for stage in (tmp_path / "dump8").glob("*cpu.mlir"):
        for body, outcome in re.findall(r'@(\w+)_body\(.*adjit\.simd = "([^"]*)"', stage.read_text()):
            outcomes[body] = outcome
    for kernel in ("steps", "escape", "lookup", "rows"):
        assert outcomes.get(kernel, "").startswith("vectorized: 8 threads"), (kernel, outcomes.get(kernel))
    assert not any("adjit.simd" in p.read_text() for p in (tmp_path / "dump0").glob("*cpu.mlir"))


@wp.kernel
def gather_in_loop(x: wp.array(dtype=float), idx: wp.array(dtype=float), k: int, y: wp.array(dtype=float)):
    i = wp.tid()
    s = float(0.0)
    for r in range(k):
        s += x[int(idx[i])]
    y[i] = s


def test_a_failed_check_in_a_simd_body_names_its_thread():
    idx = np.zeros(40, dtype=np.float32)
    idx[13] = 99.0  # thread 13 reads x[99]: out of range
    x, y = wp.zeros(8, dtype=float), wp.zeros(40, dtype=float)
    with pytest.raises(OutOfBoundsError) as e:
        wp.launch(gather_in_loop, 40, inputs=[x, wp.array(idx), 3, y])
    message = str(e.value)
    assert "s += x[int(idx[i])]" in message and "99" in message
    assert "(read in thread 13)" in message, message  # (the lane's thread, not its group's first)
