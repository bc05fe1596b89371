"""adjit's mesh_query_point_sign_parity, mesh_query_sphere, bvh_query_sphere
and bvh_query_capsule against Warp 1.19's on the CPU, result for result (not
timed; the figures in docs/geometry.md).

    python benchmarks/geometry_queries_vs_warp.py

Needs ``warp-lang`` (1.19) importable beside adjit (not in CI). This file is
executed once per system with ``wp`` bound to adjit or warp, so both compile
the very same kernel lines. Prints, per check, how many results differ.
"""
try:
    wp  # noqa: B018  (bound by load())
except NameError:  # run as a script
    wp = None

if wp is not None:
    @wp.kernel
    def parity(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), n_sample: int, scale: float,
               out: wp.array(dtype=wp.vec4)):
        i = wp.tid()
        r = wp.mesh_query_point_sign_parity(mesh, qs[i], 10.0, n_sample, scale)
        out[i] = wp.vec4(r.sign, float(r.face), r.u, r.v)

    @wp.kernel
    def directions(n: int, scale: float, out: wp.array(dtype=wp.vec3)):
        state = wp.rand_init(42)
        for i in range(n):
            x = wp.randf(state, -scale, scale)
            y = wp.randf(state, -scale, scale)
            z = wp.randf(state, -scale, scale)
            out[i] = wp.vec3(1.0 + x, 1.0 + y, 1.0 + z)

    @wp.kernel
    def mesh_sphere(mesh: wp.uint64, c: wp.array(dtype=wp.vec3), r: wp.array(dtype=float),
                    hits: wp.array2d(dtype=int)):
        i = wp.tid()
        query = wp.mesh_query_sphere(mesh, c[i], r[i])
        face = int(0)
        while wp.mesh_query_next(query, face):
            hits[i, face] += 1

    @wp.kernel
    def bvh_sphere(bvh: wp.uint64, c: wp.array(dtype=wp.vec3), r: wp.array(dtype=float),
                   hits: wp.array2d(dtype=int)):
        i = wp.tid()
        query = wp.bvh_query_sphere(bvh, c[i], r[i])
        item = int(0)
        while wp.bvh_query_next(query, item):
            hits[i, item] += 1

    @wp.kernel
    def bvh_capsule(bvh: wp.uint64, s: wp.array(dtype=wp.vec3), d: wp.array(dtype=wp.vec3),
                    r: wp.array(dtype=float), max_dist: float, hits: wp.array2d(dtype=int)):
        i = wp.tid()
        query = wp.bvh_query_capsule(bvh, s[i], d[i], r[i])
        item = int(0)
        while wp.bvh_query_next(query, item, max_dist):
            hits[i, item] += 1


def bumpy_sphere(rings=12, segments=24, seed=0):
    import numpy as np
    rng = np.random.default_rng(seed)
    th = np.linspace(0, np.pi, rings + 1)[1:-1]
    ph = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    t, p = np.meshgrid(th, ph, indexing="ij")
    r = 1 + 0.15 * rng.uniform(-1, 1, t.shape)
    pts = np.stack([r * np.sin(t) * np.cos(p), r * np.sin(t) * np.sin(p), r * np.cos(t)], -1).reshape(-1, 3)
    n = len(pts)
    pts = np.vstack([pts, [[0, 0, 1], [0, 0, -1]]])
    faces = []
    for i in range(rings - 2):
        for j in range(segments):
            a, b = i * segments + j, i * segments + (j + 1) % segments
            faces += [[a, a + segments, b], [b, a + segments, b + segments]]
    for j in range(segments):
        faces.append([n, j, (j + 1) % segments])
        last = (rings - 2) * segments
        faces.append([n + 1, last + (j + 1) % segments, last + j])
    return pts.astype(np.float32), np.array(faces, np.int32)


def run(lib, kernels, data):
    """Every check's results from one system (adjit or warp)."""
    import numpy as np

    def vec3(a):
        return lib.array(a, dtype=lib.vec3)

    out = {}
    d = lib.zeros(8, dtype=lib.vec3)
    lib.launch(kernels.directions, dim=1, inputs=[8, 0.3, d])
    out["directions"] = d.numpy()
    for name, (pts, faces) in (("closed", data["closed"]), ("open", data["open"])):
        mesh = lib.Mesh(vec3(pts), lib.array(faces.ravel(), dtype=lib.int32))
        for n_sample, scale in data["parity_args"]:
            o = lib.zeros(len(data["qs"]), dtype=lib.vec4)
            lib.launch(kernels.parity, dim=len(data["qs"]), inputs=[mesh.id, vec3(data["qs"]), n_sample, scale, o])
            out[f"parity {name} {n_sample} {scale}"] = o.numpy()
    pts, faces = data["soup"]
    mesh = lib.Mesh(vec3(pts), lib.array(faces.ravel(), dtype=lib.int32))
    c, r = vec3(data["centres"]), lib.array(data["radii"], dtype=float)
    hits = lib.zeros((len(data["radii"]), len(faces)), dtype=int)
    lib.launch(kernels.mesh_sphere, dim=len(data["radii"]), inputs=[mesh.id, c, r, hits])
    out["mesh_query_sphere"] = hits.numpy()
    bvh = lib.Bvh(vec3(data["lowers"]), vec3(data["uppers"]))
    hits = lib.zeros((len(data["radii"]), len(data["lowers"])), dtype=int)
    lib.launch(kernels.bvh_sphere, dim=len(data["radii"]), inputs=[bvh.id, c, r, hits])
    out["bvh_query_sphere"] = hits.numpy()
    for max_dist in (1.0, 0.5, float("inf")):
        hits = lib.zeros((len(data["radii"]), len(data["lowers"])), dtype=int)
        lib.launch(kernels.bvh_capsule, dim=len(data["radii"]),
                   inputs=[bvh.id, vec3(data["starts"]), vec3(data["dirs"]), r, max_dist, hits])
        out[f"bvh_query_capsule max_dist {max_dist}"] = hits.numpy()
    return {k: np.asarray(v) for k, v in out.items()}


def main():
    import importlib.util
    import sys
    from pathlib import Path

    import numpy as np

    import adjit
    import warp
    warp.config.quiet = True

    def load(lib, name):
        spec = importlib.util.spec_from_file_location(f"geometry_queries_{name}", Path(__file__))
        module = importlib.util.module_from_spec(spec)
        module.wp = lib
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module

    rng = np.random.default_rng(1)
    closed = bumpy_sphere()
    keep = np.random.default_rng(5).uniform(size=len(closed[1])) > 0.08  # 8% of the faces removed
    soup = (rng.normal(0, 0.15, (400, 3, 3)) + rng.uniform(-1, 1, (400, 1, 3))).reshape(-1, 3)
    soup[3 * 5 + 2] = 0.3 * soup[3 * 5] + 0.7 * soup[3 * 5 + 1]  # collinear corners
    soup[3 * 7 + 1] = soup[3 * 7 + 2] = soup[3 * 7]  # a point
    lowers = rng.uniform(-1, 1, (300, 3))
    dirs = rng.normal(0, 0.6, (200, 3))
    dirs[:20, 0] = 0  # parallel to the x slabs
    dirs[20:30, 1:] = 0  # along x
    data = {"closed": closed, "open": (closed[0], closed[1][keep]),
            "qs": rng.uniform(-1.4, 1.4, (400, 3)).astype(np.float32),
            "parity_args": [(1, 0.1), (3, 0.1), (5, 0.5), (4, 0.2), (0, 0.1)],
            "soup": (soup.astype(np.float32), np.arange(1200, dtype=np.int32).reshape(400, 3)),
            "centres": rng.uniform(-1.2, 1.2, (200, 3)).astype(np.float32),
            "radii": rng.uniform(-0.05, 0.5, 200).astype(np.float32),
            "lowers": lowers.astype(np.float32), "uppers": (lowers + rng.uniform(0, 0.2, (300, 3))).astype(np.float32),
            "starts": rng.uniform(-1.2, 1.2, (200, 3)).astype(np.float32), "dirs": dirs.astype(np.float32)}
    ours = run(adjit, load(adjit, "adjit"), data)
    theirs = run(warp, load(warp, "warp"), data)
    print(f"adjit against Warp {warp.__version__} (CPU)")
    print(f"parity ray directions bitwise equal: {np.array_equal(ours['directions'], theirs['directions'])}")
    for key in ours:
        if key.startswith("parity"):
            a, b = ours[key], theirs[key]
            f = data["closed" if " closed " in key else "open"][1]
            pts = data["closed"][0].astype(np.float64)

            def closest(r):
                k, u, v = r[:, 1].astype(int), r[:, 2:3], r[:, 3:4]
                return pts[f[k, 0]] * u + pts[f[k, 1]] * v + pts[f[k, 2]] * (1 - u - v)
            gap = np.abs(np.linalg.norm(closest(a) - data["qs"], axis=1)
                         - np.linalg.norm(closest(b) - data["qs"], axis=1)).max()
            print(f"{key}: signs differing {(a[:, 0] != b[:, 0]).sum()} of {len(a)} ({(b[:, 0] < 0).sum()} inside), "
                  f"faces differing {(a[:, 1] != b[:, 1]).sum()} (ties), closest distances within {gap:.2g}")
        elif key != "directions":
            print(f"{key}: {theirs[key].sum()} hits in Warp, {ours[key].sum()} in adjit, "
                  f"{(ours[key] != theirs[key]).sum()} (query, item) entries differing")


if __name__ == "__main__":
    main()
