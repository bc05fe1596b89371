"""The springs gradient as a scalar and as a SIMD program (docs/simd.md, issue 27 item 3).

    python benchmarks/simd_adjoint.py [--threads 1] [--steps 100] [--n 20000]

Runs ``tape.backward()`` of kernels.py's ``springs`` (n particles, ``steps`` steps of its
runtime loop, dt 0.01, stiffness 5) in one fresh process per ``ADJIT_SIMD_WIDTH`` (0: scalar
bodies, 8: SIMD bodies), each with an empty compile cache and ``ADJIT_NUM_THREADS`` threads,
and prints the best CPU time of 7 calls after the first (which compiles the adjoint) and
whether the two gradients are bitwise equal."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def child(n: int, steps: int, out: str) -> None:
    sys.path.insert(0, str(HERE))
    import adjit as wp
    import kernels
    from bench import springs_inputs
    x, v, rot = springs_inputs(n)
    g = lambda a, dtype: wp.array(a, dtype=dtype, requires_grad=True)  # noqa: E731
    args = [g(x, wp.vec3), g(v, wp.vec3), g(rot, wp.mat33), g(np.zeros_like(x), wp.vec3),
            g(np.zeros_like(x), wp.vec3), 0.01, 5.0, steps]
    rng = np.random.default_rng(3)
    seeds = [wp.array(rng.standard_normal((n, 3)).astype(np.float32), dtype=wp.vec3) for _ in range(2)]
    times = []
    for _ in range(8):
        for a in args[:5]:
            a.grad.zero_()
        tape = wp.Tape()
        with tape:
            wp.launch(kernels.springs, n, inputs=args)
        t0 = time.process_time()
        tape.backward(grads={args[3]: seeds[0], args[4]: seeds[1]})
        wp.synchronize()
        times.append(time.process_time() - t0)
    np.savez(out, gx=args[0].grad.numpy(), gv=args[1].grad.numpy(), grot=args[2].grad.numpy(),
             times=np.array(times))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--n", type=int, default=20000)
    p.add_argument("--child", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        return child(a.n, a.steps, a.child)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for width in (0, 8):
            out = os.path.join(tmp, f"w{width}.npz")
            env = dict(os.environ, ADJIT_SIMD_WIDTH=str(width), ADJIT_NUM_THREADS=str(a.threads),
                       ADJIT_CACHE_DIR=os.path.join(tmp, f"cache{width}"))
            subprocess.run([sys.executable, __file__, "--n", str(a.n), "--steps", str(a.steps), "--child", out],
                           env=env, check=True)
            results[width] = dict(np.load(out))
    for width, r in results.items():
        print(f"ADJIT_SIMD_WIDTH={width}: springs backward {1e3 * r['times'][1:].min():.1f} ms "
              f"(CPU time, best of 7; first call with compile {1e3 * r['times'][0]:.0f} ms)")
    same = all(results[0][k].tobytes() == results[8][k].tobytes() for k in ("gx", "gv", "grot"))
    print(f"speedup {results[0]['times'][1:].min() / results[8]['times'][1:].min():.1f}x; "
          f"gradients bitwise equal: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
