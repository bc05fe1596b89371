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


def _run(tmp_path: Path, width: int, program: str = PROGRAM) -> dict:
    script = tmp_path / "program.py"
    script.write_text(program)
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


ADJOINT_PROGRAM = textwrap.dedent('''
    import sys
    import numpy as np
    import adjit as wp

    @wp.kernel
    def springs(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), rot: wp.array(dtype=wp.mat33),
                x_out: wp.array(dtype=wp.vec3), v_out: wp.array(dtype=wp.vec3),
                dt: float, stiffness: float, n_iter: int):
        # benchmarks/kernels.py springs: a runtime loop with vec3/mat33 math
        # and branches; its adjoint keeps checkpoints in local arrays
        i = wp.tid()
        p = x[i]
        vel = v[i]
        R = rot[i]
        anchor = wp.vec3(0.0, 1.0, 0.0)
        omega = wp.vec3(0.1, 0.2, 0.3)
        for k in range(n_iter):
            q = R * p
            d = q - anchor
            L = wp.length(d)
            f = wp.vec3(0.0, 0.0, 0.0)
            if L > 1.0e-6:
                f = wp.normalize(d) * (-stiffness * (L - 1.0))
            else:
                f = wp.vec3(0.0, -1.0, 0.0)
            f = f - vel * 0.1 + wp.cross(omega, vel)
            vel = vel + f * dt
            p = p + vel * dt
            h = wp.dot(p, wp.vec3(0.0, 1.0, 0.0))
            if h < 0.0:
                p = p - wp.vec3(0.0, h, 0.0)
                vel = vel * 0.5
        x_out[i] = p
        v_out[i] = vel

    @wp.kernel
    def damped(x: wp.array(dtype=float), w: wp.array(dtype=float), n: int, y: wp.array(dtype=float)):
        # a loop of math calls and a branch (its adjoint keeps flags and
        # values), reading x[i] in the loop (the adjoint adds into x.grad[i])
        i = wp.tid()
        s = x[i]
        for k in range(n):
            if s > 0.0:
                s = wp.sin(s) * w[i] + x[i]
            else:
                s = wp.exp(s) - x[i] * 0.5
        y[i] = s

    @wp.kernel
    def accumulate(x: wp.array(dtype=float), n: int, out: wp.array(dtype=float)):
        # atomics at the thread's own element, under a condition
        i = wp.tid()
        for k in range(n):
            if x[i] > float(k) * 0.1:
                wp.atomic_add(out, i, x[i] * float(k))

    rng = np.random.default_rng(2)
    n = 1003  # (not a multiple of 8: the scalar body runs the rest)
    x = rng.standard_normal((n, 3)).astype(np.float32)
    x[:, 1] = np.abs(x[:, 1])
    q = rng.standard_normal((n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    a, b, c, d = q.T
    rot = np.stack([np.stack([1 - 2 * (c * c + d * d), 2 * (b * c - a * d), 2 * (b * d + a * c)], -1),
                    np.stack([2 * (b * c + a * d), 1 - 2 * (b * b + d * d), 2 * (c * d - a * b)], -1),
                    np.stack([2 * (b * d - a * c), 2 * (c * d + a * b), 1 - 2 * (b * b + c * c)], -1)], 1)
    g = lambda data, dtype: wp.array(data.astype(np.float32), dtype=dtype, requires_grad=True)
    args = [g(x, wp.vec3), g(rng.standard_normal((n, 3)), wp.vec3), g(rot, wp.mat33),
            wp.zeros(n, dtype=wp.vec3, requires_grad=True), wp.zeros(n, dtype=wp.vec3, requires_grad=True),
            0.01, 5.0, 60]
    xs = wp.array(rng.standard_normal(n).astype(np.float32), requires_grad=True)
    ws = wp.array(rng.random(n).astype(np.float32), requires_grad=True)
    ys = wp.zeros(n, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(springs, n, inputs=args)
        wp.launch(damped, n, inputs=[xs, ws, 12, ys])
    tape.backward(grads={args[3]: wp.array(rng.standard_normal((n, 3)).astype(np.float32), dtype=wp.vec3),
                         args[4]: wp.array(rng.standard_normal((n, 3)).astype(np.float32), dtype=wp.vec3),
                         ys: wp.array(rng.standard_normal(n).astype(np.float32))})
    acc = wp.zeros(n, dtype=float)
    wp.launch(accumulate, n, inputs=[xs, 20, acc])
    np.savez(sys.argv[1], gx=args[0].grad.numpy(), gv=args[1].grad.numpy(), grot=args[2].grad.numpy(),
             x_out=args[3].numpy(), gxs=xs.grad.numpy(), gws=ws.grad.numpy(), ys=ys.numpy(), acc=acc.numpy())
''')


def _outcomes(dump: Path) -> dict:
    """Body name -> its adjit.simd outcome, from a dump directory's cpu stages."""
    outcomes = {}
    for stage in dump.glob("*cpu.mlir"):
        for body, outcome in re.findall(r'@(\w+)_body\(.*adjit\.simd = "([^"]*)"', stage.read_text()):
            outcomes[body] = outcome
    return outcomes


def test_simd_adjoints_give_the_scalar_adjoints_bits(tmp_path):
    # checkpointed loop adjoints (local arrays per lane) and atomics at the
    # thread's own elements run as SIMD programs, bitwise as the scalar ones
    scalar, simd = _run(tmp_path, 0, ADJOINT_PROGRAM), _run(tmp_path, 8, ADJOINT_PROGRAM)
    for name in scalar:
        assert scalar[name].dtype == simd[name].dtype
        assert scalar[name].tobytes() == simd[name].tobytes(), name
        assert np.isfinite(scalar[name]).all() and np.abs(scalar[name]).sum() > 0, name
    outcomes = _outcomes(tmp_path / "dump8")
    for body in ("springs_adjoint", "damped_adjoint", "accumulate"):
        assert outcomes.get(body, "").startswith("vectorized: 8 threads"), (body, outcomes.get(body))


def _springs64(x, v, rot, dt, stiffness, n_iter):
    p, vel = x.copy(), v.copy()
    anchor, omega = np.array([0.0, 1.0, 0.0]), np.array([0.1, 0.2, 0.3])
    for _ in range(n_iter):
        d = np.einsum("nij,nj->ni", rot, p) - anchor
        L = np.sqrt((d * d).sum(1))
        f = np.where((L > 1e-6)[:, None], d / L[:, None] * (-stiffness * (L - 1.0))[:, None], [0.0, -1.0, 0.0])
        f = f - vel * 0.1 + np.cross(omega, vel)
        vel = vel + f * dt
        p = p + vel * dt
        ground = p[:, 1] < 0
        p[ground, 1] = 0.0
        vel[ground] *= 0.5
    return p, vel


@wp.kernel
def springs_small(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), rot: wp.array(dtype=wp.mat33),
                  x_out: wp.array(dtype=wp.vec3), v_out: wp.array(dtype=wp.vec3),
                  dt: float, stiffness: float, n_iter: int):
    i = wp.tid()
    p = x[i]
    vel = v[i]
    R = rot[i]
    anchor = wp.vec3(0.0, 1.0, 0.0)
    omega = wp.vec3(0.1, 0.2, 0.3)
    for k in range(n_iter):
        q = R * p
        d = q - anchor
        L = wp.length(d)
        f = wp.vec3(0.0, 0.0, 0.0)
        if L > 1.0e-6:
            f = wp.normalize(d) * (-stiffness * (L - 1.0))
        else:
            f = wp.vec3(0.0, -1.0, 0.0)
        f = f - vel * 0.1 + wp.cross(omega, vel)
        vel = vel + f * dt
        p = p + vel * dt
        h = wp.dot(p, wp.vec3(0.0, 1.0, 0.0))
        if h < 0.0:
            p = p - wp.vec3(0.0, h, 0.0)
            vel = vel * 0.5
    x_out[i] = p
    v_out[i] = vel


def test_simd_springs_gradient_matches_float64_differences():
    # 21 particles: two SIMD groups and a scalar rest; gradients of
    # sum(sx * x_out + sv * v_out) along random directions vs float64
    # central differences of the same steps
    rng = np.random.default_rng(5)
    n, dt, k, steps = 21, 0.01, 5.0, 40
    x = rng.standard_normal((n, 3)).astype(np.float32)
    x[:, 1] = np.abs(x[:, 1]) + 0.5
    v = rng.standard_normal((n, 3)).astype(np.float32)
    rot = np.linalg.qr(rng.standard_normal((n, 3, 3)))[0].astype(np.float32)
    sx, sv = rng.standard_normal((n, 3)), rng.standard_normal((n, 3))
    arrays = [wp.array(x, dtype=wp.vec3, requires_grad=True), wp.array(v, dtype=wp.vec3, requires_grad=True),
              wp.array(rot, dtype=wp.mat33, requires_grad=True), wp.zeros(n, dtype=wp.vec3, requires_grad=True),
              wp.zeros(n, dtype=wp.vec3, requires_grad=True)]
    tape = wp.Tape()
    with tape:
        wp.launch(springs_small, n, inputs=arrays + [dt, k, steps])
    tape.backward(grads={arrays[3]: wp.array(sx.astype(np.float32), dtype=wp.vec3),
                         arrays[4]: wp.array(sv.astype(np.float32), dtype=wp.vec3)})
    grads = [a.grad.numpy().astype(np.float64) for a in arrays[:3]]
    dirs = [rng.standard_normal(a.shape) for a in (x, v, rot)]
    base = [a.astype(np.float64) for a in (x, v, rot)]

    def loss(h):
        p, vel = _springs64(*(b + h * d for b, d in zip(base, dirs)), dt, k, steps)
        return (sx * p + sv * vel).sum(1)
    fd = (loss(1e-6) - loss(-1e-6)) / 2e-6
    an = sum((g * d).reshape(n, -1).sum(1) for g, d in zip(grads, dirs))
    err = np.abs(an - fd) / (np.abs(fd) + 1e-2)
    assert err.max() < 2e-5, (err.max(), an, fd)  # (2.2e-6 measured)


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


EXPECT_PROGRAM = textwrap.dedent('''
    import numpy as np
    import adjit as wp

    @wp.kernel
    def check(c: wp.array(dtype=int)):
        i = wp.tid()
        wp.expect_eq(c[i], 0)
        wp.expect_neq(c[i], 5)

    wp.launch(check, dim=12, inputs=[wp.array(np.array([0] * 9 + [5, 0, 0], np.int32))])
    wp.synchronize()
    print("done")
''')


def test_expect_on_varying_values_compiles_and_reports(tmp_path):
    # A print of a varying value keeps the body scalar; building the SIMD body widened the print's format
    # string (a pointer) and aborted the process (an LLVM assertion). In a child process, so a regression
    # fails this test instead of ending the run.
    script = tmp_path / "expect.py"
    script.write_text(EXPECT_PROGRAM)
    env = dict(os.environ, ADJIT_SIMD_WIDTH="8", ADJIT_CACHE_DIR=str(tmp_path / "cache"),
               ADJIT_DUMP_DIR=str(tmp_path / "dump"))
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    lines = run.stdout.splitlines()
    assert lines[-1] == "done"
    failed = [line for line in lines if "failed" in line]
    assert len(failed) == 2 and all(f"{script}:" in line for line in failed), run.stdout
    assert any("expect_eq(c[i], 0) failed: 5 vs 0" in line for line in failed), run.stdout
    assert any("expect_neq(c[i], 5) failed" in line for line in failed), run.stdout
    cpu = "".join(p.read_text() for p in (tmp_path / "dump").glob("*check*cpu.mlir"))
    assert 'adjit.simd = "scalar: an op with side effects on varying values' in cpu
