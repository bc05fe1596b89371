"""adjit's mesh queries against Warp's on the CPU, side by side in one run.

    python benchmarks/geometry.py            # 1M triangles, 1M points, 1M rays
    python benchmarks/geometry.py --quick    # small sizes, a smoke run

Needs ``warp-lang`` (1.19) in the same interpreter as adjit (optional, not in CI; see
``peers.py`` for an environment). Rows, each checked against the other system before timing:

1. BVH build of a triangle mesh (``Mesh(points, indices)``) of about N triangles;
2. closest points (``mesh_query_point_no_sign`` + ``mesh_eval_position``) of N random points
   in the mesh's bounding box;
3. the first hit of N rays (``mesh_query_ray``) from random points towards the mesh;
4. the gradient of sum(|p - closest(p)|^2) with respect to the points (forward + backward).

Times are wall-clock medians of interleaved rounds. adjit runs on every core
(``ADJIT_NUM_THREADS``), Warp's CPU launches on one (its CPU backend is serial); the thread
count is printed. Writes ``benchmarks/results/geometry_last_run.json`` unless ``--no-write``.
"""
import argparse
import json
import os
import statistics
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

import adjit

HERE = Path(__file__).resolve().parent


def wavy_sphere(triangles: int):
    """A closed, bumpy sphere of about ``triangles`` faces (vertices float32, indices int32)."""
    rings = max(4, int(np.sqrt(triangles / 4)))
    segments = 2 * rings
    t = np.pi * np.arange(1, rings) / rings
    p = 2 * np.pi * np.arange(segments) / segments
    T, P = np.meshgrid(t, p, indexing="ij")
    r = 1 + 0.05 * np.sin(7 * T) * np.cos(5 * P)
    body = np.stack([r * np.sin(T) * np.cos(P), r * np.sin(T) * np.sin(P), r * np.cos(T)], -1).reshape(-1, 3)
    pts = np.concatenate([[[0, 0, 1]], body, [[0, 0, -1]]]).astype(np.float32)
    ring = lambda i, s: 1 + (i - 1) * segments + (s % segments)  # noqa: E731
    s = np.arange(segments)
    tris = [np.stack([np.zeros(segments, int), ring(1, s), ring(1, s + 1)], 1)]
    for i in range(1, rings - 1):
        a, b, c, d = ring(i, s), ring(i + 1, s), ring(i + 1, s + 1), ring(i, s + 1)
        tris += [np.stack([a, b, c], 1), np.stack([a, c, d], 1)]
    tris.append(np.stack([np.full(segments, len(pts) - 1), ring(rings - 1, s + 1), ring(rings - 1, s)], 1))
    return pts, np.concatenate(tris).astype(np.int32)


@adjit.kernel
def adjit_closest(mesh: adjit.uint64, qs: adjit.array(dtype=adjit.vec3), dist: adjit.array(dtype=float)):
    i = adjit.tid()
    q = adjit.mesh_query_point_no_sign(mesh, qs[i], 1.0e6)
    dist[i] = adjit.length(adjit.mesh_eval_position(mesh, q.face, q.u, q.v) - qs[i])


@adjit.kernel
def adjit_rays(mesh: adjit.uint64, starts: adjit.array(dtype=adjit.vec3), dirs: adjit.array(dtype=adjit.vec3),
               t: adjit.array(dtype=float)):
    i = adjit.tid()
    q = adjit.mesh_query_ray(mesh, starts[i], dirs[i], 1.0e6)
    t[i] = q.t


@adjit.kernel
def adjit_point(mesh: adjit.uint64, qs: adjit.array(dtype=adjit.vec3), at: adjit.array(dtype=adjit.vec3)):
    i = adjit.tid()
    q = adjit.mesh_query_point_no_sign(mesh, qs[i], 1.0e6)
    at[i] = adjit.mesh_eval_position(mesh, q.face, q.u, q.v)


@adjit.kernel
def adjit_loss(mesh: adjit.uint64, qs: adjit.array(dtype=adjit.vec3), loss: adjit.array(dtype=float)):
    i = adjit.tid()
    q = adjit.mesh_query_point_no_sign(mesh, qs[i], 1.0e6)
    adjit.atomic_add(loss, 0, adjit.length_sq(adjit.mesh_eval_position(mesh, q.face, q.u, q.v) - qs[i]))


def warp_kernels(warp):
    @warp.kernel
    def closest(mesh: warp.uint64, qs: warp.array(dtype=warp.vec3), dist: warp.array(dtype=float)):
        i = warp.tid()
        q = warp.mesh_query_point_no_sign(mesh, qs[i], 1.0e6)
        dist[i] = warp.length(warp.mesh_eval_position(mesh, q.face, q.u, q.v) - qs[i])

    @warp.kernel
    def rays(mesh: warp.uint64, starts: warp.array(dtype=warp.vec3), dirs: warp.array(dtype=warp.vec3),
             t: warp.array(dtype=float)):
        i = warp.tid()
        q = warp.mesh_query_ray(mesh, starts[i], dirs[i], 1.0e6)
        t[i] = q.t

    @warp.kernel
    def point(mesh: warp.uint64, qs: warp.array(dtype=warp.vec3), at: warp.array(dtype=warp.vec3)):
        i = warp.tid()
        q = warp.mesh_query_point_no_sign(mesh, qs[i], 1.0e6)
        at[i] = warp.mesh_eval_position(mesh, q.face, q.u, q.v)

    @warp.kernel
    def loss(mesh: warp.uint64, qs: warp.array(dtype=warp.vec3), out: warp.array(dtype=float)):
        i = warp.tid()
        q = warp.mesh_query_point_no_sign(mesh, qs[i], 1.0e6)
        warp.atomic_add(out, 0, warp.length_sq(warp.mesh_eval_position(mesh, q.face, q.u, q.v) - qs[i]))
    return closest, rays, point, loss


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    n = 20_000 if args.quick else 1_000_000
    rounds = 2 if args.quick else args.rounds
    import warp
    warp.config.quiet = True
    warp.init()
    w_closest, w_rays, w_point, w_loss = warp_kernels(warp)

    pts, tris = wavy_sphere(n)
    rng = np.random.default_rng(0)
    qs = rng.uniform(-1.3, 1.3, (n, 3)).astype(np.float32)
    starts = rng.uniform(-3, 3, (n, 3)).astype(np.float32)
    dirs = (rng.uniform(-0.5, 0.5, (n, 3)) - starts).astype(np.float32)
    print(f"{len(tris)} triangles, {n} points and rays; adjit threads: "
          f"{os.environ.get('ADJIT_NUM_THREADS', os.cpu_count())}, Warp CPU: 1")

    A = {"points": adjit.array(pts, dtype=adjit.vec3), "indices": adjit.array(tris.flatten(), dtype=adjit.int32),
         "qs": adjit.array(qs, dtype=adjit.vec3), "starts": adjit.array(starts, dtype=adjit.vec3),
         "dirs": adjit.array(dirs, dtype=adjit.vec3), "out": adjit.zeros(n, dtype=float)}
    W = {"points": warp.array(pts, dtype=warp.vec3, device="cpu"),
         "indices": warp.array(tris.flatten(), dtype=warp.int32, device="cpu"),
         "qs": warp.array(qs, dtype=warp.vec3, device="cpu"), "starts": warp.array(starts, dtype=warp.vec3, device="cpu"),
         "dirs": warp.array(dirs, dtype=warp.vec3, device="cpu"), "out": warp.zeros(n, dtype=float, device="cpu")}
    a_mesh = adjit.Mesh(A["points"], A["indices"])
    w_mesh = warp.Mesh(W["points"], W["indices"])

    # checks before timing: the same closest distances and ray hits
    adjit.launch(adjit_closest, n, [a_mesh.id, A["qs"], A["out"]])
    warp.launch(w_closest, n, [w_mesh.id, W["qs"], W["out"]], device="cpu")
    np.testing.assert_allclose(A["out"].numpy(), W["out"].numpy(), rtol=1e-4, atol=1e-5)
    adjit.launch(adjit_rays, n, [a_mesh.id, A["starts"], A["dirs"], A["out"]])
    warp.launch(w_rays, n, [w_mesh.id, W["starts"], W["dirs"], W["out"]], device="cpu")
    hit_a, hit_w = A["out"].numpy(), W["out"].numpy()
    agree = np.isclose(hit_a, hit_w, rtol=1e-4, atol=1e-5)
    assert agree.mean() > 0.999, f"ray distances differ on {np.count_nonzero(~agree)} rays"

    a_qs = adjit.array(qs, dtype=adjit.vec3, requires_grad=True)
    w_qs = warp.array(qs, dtype=warp.vec3, device="cpu", requires_grad=True)
    a_l, w_l = adjit.zeros(1, dtype=float, requires_grad=True), warp.zeros(1, dtype=float, device="cpu",
                                                                           requires_grad=True)

    def a_grad():
        a_qs.grad.zero_()
        a_l.zero_()
        tape = adjit.Tape()
        with tape:
            adjit.launch(adjit_loss, n, [a_mesh.id, a_qs, a_l])
        tape.backward(a_l)

    def w_grad():
        w_qs.grad.zero_()
        w_l.zero_()
        tape = warp.Tape()
        with tape:
            warp.launch(w_loss, n, [w_mesh.id, w_qs, w_l], device="cpu")
        tape.backward(w_l)
    a_grad()
    w_grad()
    # d/dp |p - c(p)|^2 = 2 (p - c) (c moves perpendicular to p - c): each system's
    # gradient against that of its own closest points
    a_at, w_at = adjit.zeros(n, dtype=adjit.vec3), warp.zeros(n, dtype=warp.vec3, device="cpu")
    adjit.launch(adjit_point, n, [a_mesh.id, A["qs"], a_at])
    warp.launch(w_point, n, [w_mesh.id, W["qs"], w_at], device="cpu")
    gradient_errors = {}
    for system, grad, at in (("adjit", a_qs.grad.numpy(), a_at.numpy()), ("Warp", w_qs.grad.numpy(), w_at.numpy())):
        want = 2 * (qs.astype(np.float64) - at)
        wrong = ~np.isclose(grad, want, rtol=1e-3, atol=1e-4).all(axis=1)
        gradient_errors[system] = int(np.count_nonzero(wrong))
        print(f"{system}: gradient differs from 2 (p - c) at {gradient_errors[system]} of {n} points "
              f"(largest difference {np.abs(grad - want).max():.3g})")
    assert gradient_errors["adjit"] == 0

    rows = {
        "BVH build": (lambda: adjit.Mesh(A["points"], A["indices"]), lambda: warp.Mesh(W["points"], W["indices"])),
        "closest points": (lambda: adjit.launch(adjit_closest, n, [a_mesh.id, A["qs"], A["out"]]),
                           lambda: warp.launch(w_closest, n, [w_mesh.id, W["qs"], W["out"]], device="cpu")),
        "rays": (lambda: adjit.launch(adjit_rays, n, [a_mesh.id, A["starts"], A["dirs"], A["out"]]),
                 lambda: warp.launch(w_rays, n, [w_mesh.id, W["starts"], W["dirs"], W["out"]], device="cpu")),
        "closest-point gradient": (a_grad, w_grad),
    }
    results = {}
    print(f"{'row':<24}{'adjit ms':>10}{'Warp ms':>10}{'Warp/adjit':>12}")
    for name, (run_a, run_w) in rows.items():
        times = {"adjit": [], "warp": []}
        for _ in range(rounds):
            for system, run in (("adjit", run_a), ("warp", run_w)):
                t0 = time.perf_counter()
                run()
                times[system].append(time.perf_counter() - t0)
        a_ms, w_ms = (1e3 * statistics.median(times[s]) for s in ("adjit", "warp"))
        results[name] = {"adjit_ms": a_ms, "warp_ms": w_ms, "speedup": w_ms / a_ms}
        print(f"{name:<24}{a_ms:>10.1f}{w_ms:>10.1f}{w_ms / a_ms:>11.2f}x")
    if not (args.quick or args.no_write):
        out = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "triangles": int(len(tris)),
               "queries": n, "adjit_threads": int(os.environ.get("ADJIT_NUM_THREADS", os.cpu_count())),
               "warp": warp.__version__, "gradient_points_off_2(p-c)": gradient_errors, "rows": results}
        (HERE / "results" / "geometry_last_run.json").write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
