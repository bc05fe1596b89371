"""Per-node data for the generalized winding number of a Mesh, computed on
the host with numpy (``Mesh(support_winding_number=True)``, at build and
refit).

The winding number of a surface S at q is its solid angle seen from q over
4 pi: w(q) = (1 / 4 pi) * integral over S of n(x) . f(x - q) dA, with
f(y) = y / |y|^3. A query (mesh_queries.py) sums the exact solid angles of
the triangles of the tree's leaves near q, and for a node far from q (q
farther from the node's centre p than ``accuracy`` times the node's radius)
uses the second-order Taylor expansion of f about r = p - q instead:

    n . f(r + d) ~ n . f(r) + n_i d_j df_i/dr_j + 1/2 n_i d_j d_k d2f_i/dr_j dr_k

integrated over the node's triangles (d = x - p). The integrals are the
node's moments of its area-weighted normals:

    M0_i = int n_i dA,   M1_ij = int n_i d_j dA,   M2_ijk = int n_i d_j d_k dA

With rho = |r| and u = r / rho, the derivatives of f give

    omega ~ M0 . u / rho^2 + (tr M1 - 3 u.M1.u) / rho^3
            + (-1.5 g . u + 7.5 sum_i u_i u.M2_i.u) / rho^4,

where g_k = 2 sum_i M2_iik + sum_j M2_kjj (M2_i is symmetric in j, k).
Its error falls as rho^-5 (the next term). A triangle's moments about its
own centroid are M0 = N (its area-weighted normal), M1 = 0 and
M2_i = N_i * C, C = (1/12) sum over corners of (v - c)(v - c)^T its
second moment per unit area; a parent's are its children's moved to its
centre (the area-weighted mean of theirs: d -> d + delta), as in Barill et
al. 2018, "Fast winding numbers for soups and clouds".

Layout: ``(nodes, ROWS, 3)`` float32, one block of ROWS vec3 per node of
bvh.py's heap-ordered tree (leaves included, though the queries sum the
leaves' triangles exactly):

    0: the centre p               1: (radius^2, tr M1, 0)
    2: M0                          3-5: the rows of M1
    6: g                           7 + 2i: the diagonal of M2_i
    8 + 2i: (M2_i[0,1], M2_i[0,2], M2_i[1,2])     (i = 0, 1, 2)

The radius is the distance from the centre to the farthest corner of the
node's box. Empty nodes (the tree's padding) have all zeros.
"""
from __future__ import annotations

import numpy as np

from .bvh import TreeArrays

#: vec3 rows per node.
ROWS = 13


def _combine(area, centre, m0, m1, m2, box_centre):
    """The moments of groups of children (axis 1) about each group's centre:
    the area-weighted mean of the children's centres (the box's centre where
    the group has no area)."""
    total = area.sum(axis=1)
    weighted = (area[..., None] * centre).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = weighted / total[:, None]
    new_centre = np.where(total[:, None] > 0, mean, box_centre)
    delta = centre - new_centre[:, None, :]   # (groups, k, 3): each child's centre, from the new one
    new_m0 = m0.sum(axis=1)
    new_m1 = (m1 + m0[..., :, None] * delta[..., None, :]).sum(axis=1)
    new_m2 = (m2 + m1[..., :, :, None] * delta[..., None, None, :] + m1[..., :, None, :] * delta[..., None, :, None]
              + m0[..., :, None, None] * delta[..., None, :, None] * delta[..., None, None, :]).sum(axis=1)
    return total, new_centre, new_m0, new_m1, new_m2


def winding_data(tree: TreeArrays, points: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """The per-node data (layout above) of the tree over ``triangles`` ((n, 3)
    vertex indices into ``points``), in float32. The node bounds must be
    current (a build or refit of ``tree`` with these points)."""
    n = len(tree.order)
    slots = tree.leaves * tree.leaf_size
    corners = points.astype(np.float64)[triangles[tree.order]]            # (n, 3 corners, 3)
    normal = np.zeros((slots, 3))
    normal[:n] = 0.5 * np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    area = np.linalg.norm(normal, axis=1)
    centre = np.zeros((slots, 3))
    centre[:n] = corners.mean(axis=1)
    spread = corners - centre[:n, None, :]
    second = np.zeros((slots, 3, 3))
    second[:n] = np.einsum("tvj,tvk->tjk", spread, spread) / 12.0     # per unit area, about the centroid
    m0 = normal
    m1 = np.zeros((slots, 3, 3))
    m2 = normal[:, :, None, None] * second[:, None, :, :]

    node_count = tree.nodes
    lower = tree.lower.astype(np.float64)
    upper = tree.upper.astype(np.float64)
    with np.errstate(invalid="ignore"):  # the padding's empty boxes: inf + -inf
        box_centre = np.where(lower <= upper, 0.5 * (lower + upper), 0.0)
    out_centre = np.zeros((node_count, 3))
    out_m0 = np.zeros((node_count, 3))
    out_m1 = np.zeros((node_count, 3, 3))
    out_m2 = np.zeros((node_count, 3, 3, 3))

    # the leaves from their triangles, then each level from the one below
    first, width = tree.leaves - 1, tree.leaves
    k = tree.leaf_size
    while True:
        rows = slice(first, first + width)
        area, centre, m0, m1, m2 = _combine(area.reshape(width, k), centre.reshape(width, k, 3),
                                            m0.reshape(width, k, 3), m1.reshape(width, k, 3, 3),
                                            m2.reshape(width, k, 3, 3, 3), box_centre[rows])
        out_centre[rows], out_m0[rows], out_m1[rows], out_m2[rows] = centre, m0, m1, m2
        if width == 1:
            break
        first, width, k = (first - 1) // 2, width // 2, 2

    data = np.zeros((node_count, ROWS, 3))
    full = lower[:, 0] <= upper[:, 0]
    reach = np.maximum(out_centre - lower, upper - out_centre)
    data[:, 0] = out_centre
    data[full, 1, 0] = np.einsum("ij,ij->i", reach, reach)[full]
    data[:, 1, 1] = np.trace(out_m1, axis1=1, axis2=2)
    data[:, 2] = out_m0
    data[:, 3:6] = out_m1
    data[:, 6] = 2.0 * np.einsum("niik->nk", out_m2) + np.einsum("nkjj->nk", out_m2)
    for i in range(3):
        data[:, 7 + 2 * i] = np.diagonal(out_m2[:, i], axis1=1, axis2=2)
        data[:, 8 + 2 * i] = out_m2[:, i][:, [0, 0, 1], [1, 2, 2]]
    data[~full] = 0.0
    return np.ascontiguousarray(data, dtype=np.float32)


def far_solid_angle(data: np.ndarray, q: np.ndarray) -> np.ndarray:
    """float64 reference of the queries' far-field term: the expansion of each
    node's solid angle seen from ``q`` ((nodes,) values; for tests)."""
    d = data.astype(np.float64)
    r = d[:, 0] - q
    rho = np.linalg.norm(r, axis=1)
    u = r / rho[:, None]
    uu = u * u
    cubic = np.zeros(len(d))
    for i in range(3):
        diag, off = d[:, 7 + 2 * i], d[:, 8 + 2 * i]
        cubic += u[:, i] * (np.einsum("nj,nj->n", uu, diag)
                            + 2.0 * (u[:, 0] * u[:, 1] * off[:, 0] + u[:, 0] * u[:, 2] * off[:, 1]
                                     + u[:, 1] * u[:, 2] * off[:, 2]))
    m1u = np.einsum("nij,nj->ni", d[:, 3:6], u)
    return (np.einsum("ni,ni->n", d[:, 2], u) / rho ** 2
            + (d[:, 1, 1] - 3.0 * np.einsum("ni,ni->n", u, m1u)) / rho ** 3
            + (-1.5 * np.einsum("ni,ni->n", d[:, 6], u) + 7.5 * cubic) / rho ** 4)
