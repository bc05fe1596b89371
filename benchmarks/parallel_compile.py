"""Cold compile of a module of many kernels: ``adjit.force_load`` on one
core against all cores (issue 25, item 6: the passes and code generation run
without the GIL, so variants compile in parallel).

    python benchmarks/parallel_compile.py [--kernels 50]

Each measurement runs in a fresh process with an empty cache; "one core"
is the same process with ``ADJIT_COMPILE_THREADS=1``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KERNEL = '''
@wp.kernel
def k{n}(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    p = x[i] * {scale}
    q = v[i]
    for s in range(4):
        q = q + wp.vec3(wp.sin(p[0] + {n}.0), wp.cos(p[1]), p[2] * p[2]) * 0.01
        p = p + q * 0.01
    out[i] = wp.length(wp.cross(p, q)) + wp.dot(p, q) * {scale}
'''

RUN = '''
import sys, time
sys.path.insert(0, {folder!r})
import adjit as wp
import many_kernels
start = time.perf_counter()
wp.force_load(modules=[many_kernels])
print(time.perf_counter() - start)
'''


def measure(folder: Path, threads: int | None) -> float:
    env = dict(os.environ, ADJIT_CACHE_DIR=tempfile.mkdtemp(prefix="adjit-bench-cache-"))
    if threads is not None:
        env["ADJIT_COMPILE_THREADS"] = str(threads)
    out = subprocess.run([sys.executable, "-c", RUN.format(folder=str(folder))], env=env, capture_output=True,
                         text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", type=int, default=50)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="adjit-many-kernels-"))
    (folder / "many_kernels.py").write_text("import adjit as wp\n" + "".join(
        KERNEL.format(n=n, scale=1.0 + n / 100) for n in range(args.kernels)))
    one = measure(folder, 1)
    every = measure(folder, None)
    print(json.dumps({"kernels": args.kernels, "variants": 2 * args.kernels, "cores": os.cpu_count(),
                      "one_core_s": round(one, 2), "all_cores_s": round(every, 2),
                      "speedup": round(one / every, 2)}, indent=1))


if __name__ == "__main__":
    main()
