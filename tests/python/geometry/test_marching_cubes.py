"""MarchingCubes (adjit/geometry/marching_cubes.py): level sets of grid
fields, against analytic surfaces and Warp 1.19's output."""
import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import adjit as wp
from adjit.geometry.marching_cubes import EDGE_OFFSETS, TRI_EDGES, TRI_STARTS


def _mesh(field, threshold=0.0, **kw):
    f = np.ascontiguousarray(field, np.float32)
    mc = wp.MarchingCubes(*f.shape, **kw)
    mc.surface(wp.array(f, dtype=wp.float32), threshold)
    return mc.verts.numpy().astype(np.float64).reshape(-1, 3), mc.indices.numpy().reshape(-1, 3)


def _area_volume(v, t):
    a, b, c = v[t[:, 0]], v[t[:, 1]], v[t[:, 2]]
    area = 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1).sum()
    volume = np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0  # > 0: outward (counter-clockwise) winding
    return area, volume


def _sphere(n, radius, centre):
    x = np.arange(n, dtype=np.float64)
    X, Y, Z = np.meshgrid(x, x, x, indexing="ij")
    return np.sqrt((X - centre[0]) ** 2 + (Y - centre[1]) ** 2 + (Z - centre[2]) ** 2) - radius


def test_table_is_consistent():
    # 256 cases, 820 triangles; complementary cases cross the same edges
    assert len(TRI_STARTS) == 257 and TRI_STARTS[-1] == 3 * 820
    for case in range(256):
        edges = set(TRI_EDGES[TRI_STARTS[case]:TRI_STARTS[case + 1]])
        crossed = {e for e, (a, b) in enumerate(wp.MarchingCubes.EDGE_TO_CORNERS)
                   if bool(case >> a & 1) != bool(case >> b & 1)}
        assert edges == crossed, case
    assert EDGE_OFFSETS.tolist()[8] == [0, 0, 0, 2] and EDGE_OFFSETS.tolist()[6] == [0, 1, 1, 0]


@pytest.mark.parametrize("n,radius", [(24, 8.0), (48, 16.0)])
def test_sphere_area_volume_and_closed_manifold(n, radius):
    centre = (n / 2 - 0.37, n / 2 - 0.52, n / 2 - 0.61)
    v, t = _mesh(_sphere(n, radius, centre))
    area, volume = _area_volume(v, t)
    # Vertices lie where the distance's linear interpolant along a grid edge
    # (length h = 1) is 0: within h^2 / (8 R) of the sphere; the flat triangles
    # between them sag by about the same. So the mesh lies inside the sphere by
    # O(h^2 / R), and area and volume fall short by O((h / R)^2) relative
    # (measured: 0.49% and 0.93% at R = 8 h, a quarter of that at R = 16 h).
    # Tolerance (h / R)^2: 1.6% at R = 8, 0.4% at R = 16.
    tol = (1.0 / radius) ** 2
    assert -tol < area / (4 * np.pi * radius ** 2) - 1 < 0
    assert -tol < volume / (4 / 3 * np.pi * radius ** 3) - 1 < 0
    # vertices on the sphere within h^2 / (8 R) (plus float32 rounding)
    r = np.linalg.norm(v - np.asarray(centre), axis=1)
    assert np.abs(r - radius).max() < 1.0 / (8 * radius) + 1e-4
    # closed, consistently oriented 2-manifold: each directed edge once, its reverse once
    directed = np.concatenate([t[:, [0, 1]], t[:, [1, 2]], t[:, [2, 0]]])
    keys = directed[:, 0].astype(np.int64) * len(v) + directed[:, 1]
    assert len(np.unique(keys)) == len(keys)
    reverse = directed[:, 1].astype(np.int64) * len(v) + directed[:, 0]
    assert np.array_equal(np.sort(keys), np.sort(reverse))
    assert len(np.unique(t)) == len(v)  # every vertex used
    assert len(v) - len(keys) // 2 + len(t) == 2  # Euler characteristic of a sphere


def test_plane_and_bounds():
    nx, ny, nz = 6, 5, 4
    x = np.arange(nx, dtype=np.float32)[:, None, None]
    field = np.broadcast_to(x - 2.3, (nx, ny, nz))
    v, t = _mesh(field)
    assert len(v) == ny * nz and len(t) == 2 * (ny - 1) * (nz - 1)
    np.testing.assert_allclose(v[:, 0], 2.3, atol=1e-6)
    a, b, c = v[t[:, 0]], v[t[:, 1]], v[t[:, 2]]
    normals = np.cross(b - a, c - a)
    assert (normals[:, 0] > 0).all()  # towards the side at or above the threshold
    np.testing.assert_allclose(_area_volume(v, t)[0], (ny - 1) * (nz - 1), rtol=1e-6)
    # lower/upper map node (0, 0, 0) and (n - 1) to them
    v2, t2 = _mesh(field, lower=(1.0, -1.0, 0.0), upper=(3.0, 1.0, 6.0))
    np.testing.assert_array_equal(t2, t)
    np.testing.assert_allclose(v2, v * [2 / 5, 2 / 4, 6 / 3] + [1.0, -1.0, 0.0], atol=1e-6)


def test_empty_fields():
    for value in (-1.0, 0.0, 2.0):  # all below, exactly at (counts as above), all above
        v, t = _mesh(np.full((3, 4, 5), value))
        assert v.shape == (0, 3) and t.shape == (0, 3)


def test_threshold():
    n = 20
    centre = (9.3, 9.6, 9.1)
    field = _sphere(n, 4.0, centre)
    for threshold in (-1.5, 0.0, 2.5):  # the level set of distance r - 4 = threshold
        v, _ = _mesh(field, threshold)
        r = np.linalg.norm(v - np.asarray(centre), axis=1)
        assert np.abs(r - (4.0 + threshold)).max() < 0.05
    # a node exactly at the threshold is at or above it: vertices sit on that node
    field = np.full((3, 3, 3), 1.0, np.float32)
    field[1, 1, 1] = -1.0
    field[1, 1, 2] = 0.0
    v, t = _mesh(field, 0.0)
    assert len(t) and any(np.allclose(p, (1, 1, 2)) for p in v)
    v_above, _ = _mesh(field, -0.5)
    assert not any(np.allclose(p, (1, 1, 2)) for p in v_above)


def test_max_verts_and_max_tris_are_ignored_as_in_warp():
    # Warp 1.9 deprecated max_verts, max_tris and device (outputs sized to fit;
    # no overflow) and 1.19 removed them. adjit ignores them with a warning.
    field = _sphere(12, 4.0, (5.5, 5.2, 5.7)).astype(np.float32)
    v, t = _mesh(field)
    with pytest.warns(DeprecationWarning):
        mc = wp.MarchingCubes(12, 12, 12, max_verts=3, max_tris=2, device="cpu")
    mc.surface(wp.array(field, dtype=wp.float32), 0.0)
    assert mc.verts.shape[0] == len(v) > 3 and mc.indices.shape[0] == 3 * len(t) > 6
    with pytest.raises(TypeError, match="lower"):
        wp.MarchingCubes(12, 12, 12, 1000, 1000)  # Warp 1.8's positional max_verts: 1.19's `lower`
    with pytest.raises(ValueError, match="does not match"):
        mc.surface(wp.array(field[:-1], dtype=wp.float32), 0.0)
    mc.resize(11, 12, 12)
    mc.surface(wp.array(field[:-1], dtype=wp.float32), 0.0)
    with pytest.raises(TypeError):
        wp.MarchingCubes.extract(wp.array(field.astype(np.float64), dtype=wp.float64))
    with pytest.raises(ValueError):
        wp.MarchingCubes.extract(wp.array(field[:1], dtype=wp.float32))


# Warp 1.19's IsoSurfaceMarchingCubes.extract(field, 0.0) on this field
# (integers + 0.25): vertex positions (rounded to 1e-6) and indices, index for index.
_FIELD = [[[3, 1, 1], [3, 1, 2], [2, -2, -3], [-1, -2, 3]], [[3, -3, 0], [2, -3, 2], [-3, 0, 2], [-1, -1, -2]],
          [[2, -2, 3], [0, 0, 0], [1, 0, 0], [3, 2, 2]]]
_WARP_VERTS = [[0.3125, 0.0, 1.0], [0.3125, 1.0, 1.0], [0.0, 1.416667, 1.0], [0.0, 1.45, 2.0], [0.45, 2.0, 0.0],
               [0.0, 2.75, 0.0], [0.0, 2.0, 0.5625], [0.875, 2.0, 1.0], [0.55, 2.0, 2.0], [0.0, 2.458333, 2.0],
               [0.0, 3.0, 1.35], [0.65, 3.0, 2.0], [1.0, 0.0, 0.541667], [1.0, 0.0, 1.916667], [1.0, 1.45, 0.0],
               [1.0, 1.0, 0.45], [1.916667, 1.0, 1.0], [1.0, 1.916667, 1.0], [1.0, 1.0, 1.55], [1.6875, 2.0, 0.0],
               [1.0, 2.0, 0.916667], [1.0, 2.25, 1.0], [1.0, 2.5625, 2.0], [1.1875, 3.0, 0.0], [1.25, 3.0, 1.0],
               [1.4375, 3.0, 2.0], [2.0, 0.0, 0.5625], [2.0, 0.875, 1.0], [2.0, 0.0, 1.35]]
_WARP_INDICES = [15, 12, 0, 1, 15, 0, 13, 18, 1, 0, 13, 1, 15, 4, 14, 15, 6, 4, 15, 1, 6, 2, 6, 1, 17, 20, 7, 7, 8,
                 18, 7, 18, 17, 8, 3, 18, 1, 18, 2, 3, 2, 18, 20, 21, 7, 4, 6, 5, 22, 7, 21, 22, 8, 7, 9, 11, 10, 16,
                 27, 26, 16, 26, 15, 15, 26, 12, 27, 16, 18, 27, 18, 28, 28, 18, 13, 20, 17, 16, 20, 16, 19, 15, 14,
                 16, 14, 19, 16, 16, 17, 18, 21, 20, 19, 21, 19, 24, 24, 19, 23, 22, 21, 24, 25, 22, 24]


def test_matches_warp_reference():
    field = wp.array(np.asarray(_FIELD, np.float32) + np.float32(0.25), dtype=wp.float32)
    verts, indices = wp.MarchingCubes.extract(field, 0.0)
    np.testing.assert_allclose(verts.numpy(), _WARP_VERTS, atol=1e-6)
    np.testing.assert_array_equal(indices.numpy(), _WARP_INDICES)


def _warp_python():
    """A Python that imports Warp: $ADJIT_WARP_PYTHON, this one if Warp is
    installed here (run apart: Warp and adjit's warp alias do not mix in one
    process), or the peers' venv."""
    for python in (os.environ.get("ADJIT_WARP_PYTHON"),
                   sys.executable if importlib.util.find_spec("warp") else None, "/work/peers/bin/python"):
        if python and shutil.which(python) and subprocess.run(
                [python, "-c", "import warp.geometry"], capture_output=True).returncode == 0:
            return python
    return None


def test_matches_warp_on_random_fields(tmp_path):
    python = _warp_python()
    if python is None:
        pytest.skip("warp is not importable")
    rng = np.random.default_rng(3)
    fields = {"random": rng.standard_normal((7, 9, 6)).astype(np.float32),
              "sphere": _sphere(12, 3.7, (5.3, 5.6, 5.1)).astype(np.float32)}
    np.savez(tmp_path / "fields.npz", **fields)
    script = textwrap.dedent(f"""
        import numpy as np, warp as wp, warp.geometry
        wp.config.quiet = True
        fields = np.load({str(tmp_path / 'fields.npz')!r})
        out = {{}}
        for name in fields.files:
            v, i = wp.geometry.IsoSurfaceMarchingCubes.extract(
                wp.array(fields[name], dtype=wp.float32, device="cpu"), 0.1, lower=(-1, 0, 2), upper=(3, 4, 9))
            out[name + "_v"], out[name + "_i"] = v.numpy(), i.numpy()
        np.savez({str(tmp_path / 'warp.npz')!r}, **out)
    """)
    subprocess.run([python, "-c", script], check=True, capture_output=True)
    ref = np.load(tmp_path / "warp.npz")
    for name, field in fields.items():
        verts, indices = wp.MarchingCubes.extract(wp.array(field, dtype=wp.float32), 0.1, lower=(-1, 0, 2),
                                                  upper=(3, 4, 9))
        # the same vertices in the same order (to float32 rounding) and the same triangles, index for index
        np.testing.assert_allclose(verts.numpy(), ref[name + "_v"], atol=1e-5)
        np.testing.assert_array_equal(indices.numpy(), ref[name + "_i"])


def test_vertex_gradient_wrt_field():
    # on a tape, verts are differentiable in the field through the edge interpolation
    field = wp.array(np.asarray(_FIELD, np.float32) + np.float32(0.25), dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        verts, _ = wp.MarchingCubes.extract(field, 0.0)
    assert verts.requires_grad
    tape.backward(grads={verts: wp.array(np.ones((len(verts), 3), np.float32), dtype=wp.vec3)})
    # vertex 0 lies on the x edge from node (0, 0, 1) (a = 1.25) to (1, 0, 1) (b = -2.75):
    # x = t = a / (a - b); dx/da = -b / (a - b)^2, dx/db = a / (a - b)^2
    g = field.grad.numpy()
    assert g.shape == (3, 4, 3) and np.isfinite(g).all() and np.abs(g).sum() > 0
    a, b = 1.25, -2.75
    verts_on_node = [i for i, p in enumerate(_WARP_VERTS) if p[1] == 0.0 and p[2] == 1.0 and 0 < p[0] < 1]
    assert verts_on_node == [0]
    # node (0, 0, 1)'s other crossed edges: none (its y neighbour 1.25 and z neighbours 1.25 are above)
    np.testing.assert_allclose(g[0, 0, 1], -b / (a - b) ** 2, rtol=1e-5)


def test_warp_names():
    import adjit.geometry as geometry
    assert geometry.IsoSurfaceMarchingCubes is wp.MarchingCubes
    with pytest.raises(wp.NotInAdjitError):
        geometry.IsoSurfaceNets  # noqa: B018
