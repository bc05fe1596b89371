"""Fit a pose to a mesh: find the rotation and translation that put a scanned
point cloud onto a triangle mesh, by gradient descent on the squared
distances to the mesh.

Each thread moves one point by the current pose and asks the mesh for its
closest point (``wp.mesh_query_point_no_sign``, written in adjit's own kernel
language and walking the mesh's BVH). The loss is the sum of squared
distances; ``tape.backward`` differentiates the pose math and the closest
point (exactly, for the face each query found), giving d(loss)/d(pose).
Adam, in numpy, updates the pose.

    python examples/mesh_fit.py            # writes examples/output/mesh_fit.png
    python examples/mesh_fit.py --small    # fewer optimization steps
"""
import numpy as np

import adjit as wp
from _common import log, parse_args, progress, pyplot, save
from projectile import Adam


@wp.kernel
def pose_loss(mesh: wp.uint64, points: wp.array(dtype=wp.vec3), pose: wp.array(dtype=float),
              moved: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    i = wp.tid()                                  # one thread per point
    c = wp.cos(pose[0])                           # the pose: a turn about z, then a shift
    s = wp.sin(pose[0])
    p = points[i]
    q = wp.vec3(c * p[0] - s * p[1], s * p[0] + c * p[1], p[2]) + wp.vec3(pose[1], pose[2], pose[3])
    moved[i] = q
    hit = wp.mesh_query_point_no_sign(mesh, q, 10.0)
    on_mesh = wp.mesh_eval_position(mesh, hit.face, hit.u, hit.v)
    wp.atomic_add(loss, 0, wp.length_sq(q - on_mesh))


def bumpy_ellipsoid(rings: int = 24):
    """A closed surface without symmetries that would hide the pose."""
    segments = 2 * rings
    t = np.pi * np.arange(1, rings) / rings
    ph = 2 * np.pi * np.arange(segments) / segments
    T, P = np.meshgrid(t, ph, indexing="ij")
    r = 1 + 0.15 * np.sin(3 * T) * np.cos(2 * P) + 0.1 * np.cos(P)
    body = np.stack([1.6 * r * np.sin(T) * np.cos(P), r * np.sin(T) * np.sin(P), 0.7 * r * np.cos(T)], -1)
    pts = np.concatenate([[[0, 0, 0.7]], body.reshape(-1, 3), [[0, 0, -0.7]]]).astype(np.float32)
    ring = lambda i, k: 1 + (i - 1) * segments + (k % segments)  # noqa: E731
    k = np.arange(segments)
    tris = [np.stack([np.zeros(segments, int), ring(1, k), ring(1, k + 1)], 1)]
    for i in range(1, rings - 1):
        tris += [np.stack([ring(i, k), ring(i + 1, k), ring(i + 1, k + 1)], 1),
                 np.stack([ring(i, k), ring(i + 1, k + 1), ring(i, k + 1)], 1)]
    tris.append(np.stack([np.full(segments, len(pts) - 1), ring(rings - 1, k + 1), ring(rings - 1, k)], 1))
    return pts, np.concatenate(tris).astype(np.int32)


def main():
    args = parse_args("mesh_fit", __doc__.splitlines()[0], steps=200, small_steps=80)
    plt = pyplot()
    vertices, faces = bumpy_ellipsoid()
    mesh = wp.Mesh(wp.array(vertices, dtype=wp.vec3), wp.array(faces.flatten(), dtype=wp.int32))

    # The scan: points of the surface, seen from a pose we pretend not to know
    # (its inverse is what the fit must find), with a little noise.
    rng = np.random.default_rng(0)
    surface = vertices[rng.choice(len(vertices), 400, replace=False)].astype(np.float64)
    true_pose = np.array([0.5, 0.3, -0.2, 0.1])            # angle (rad), shift
    c, s = np.cos(true_pose[0]), np.sin(true_pose[0])
    rot = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    scan = ((surface - true_pose[1:]) @ rot + rng.normal(0, 0.003, surface.shape)).astype(np.float32)
    n = len(scan)

    points = wp.array(scan, dtype=wp.vec3)
    pose = wp.zeros(4, dtype=float, requires_grad=True)     # start from the identity
    moved = wp.zeros(n, dtype=wp.vec3)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    optimizer = Adam(lr=0.02)
    losses, first_moved = [], None
    log.info("fitting a 4-parameter pose to %d points on a %d-triangle mesh", n, len(faces))
    for it in progress(range(args.steps + 1), "mesh_fit"):
        loss.zero_()
        tape = wp.Tape()
        with tape:
            wp.launch(pose_loss, dim=n, inputs=[mesh.id, points, pose, moved, loss])
        losses.append(float(loss.numpy()[0]) / n)
        if first_moved is None:
            first_moved = moved.numpy().copy()
        if it == args.steps:
            break
        tape.backward(loss=loss)
        optimizer.step(pose.numpy(), pose.grad.numpy())
        tape.zero()
    found = pose.numpy().astype(np.float64)
    angle_error = abs(found[0] - true_pose[0])
    shift_error = float(np.linalg.norm(found[1:] - true_pose[1:]))
    log.info("pose found: %s (true %s)", np.round(found, 4).tolist(), true_pose.tolist())
    # One line a test can parse: RMS distance to the mesh before and after, pose errors.
    print(f"mesh_fit: initial_rms={np.sqrt(losses[0]):.6g} final_rms={np.sqrt(losses[-1]):.6g} "
          f"angle_error={angle_error:.6g} shift_error={shift_error:.6g}")

    if plt is not None:
        fig, (ax, ax_loss) = plt.subplots(1, 2, figsize=(10, 4.6))
        rings = 24  # the equator of bumpy_ellipsoid(): its ring of vertices at z = 0, closed
        equator = vertices[1 + (rings // 2 - 1) * 2 * rings: 1 + (rings // 2) * 2 * rings]
        ax.plot(*np.vstack([equator, equator[:1]])[:, :2].T, color="0.3", lw=1.5, label="mesh at z = 0")
        near = np.abs(moved.numpy()[:, 2]) < 0.12   # the scan points near that section
        ax.scatter(*first_moved[near, :2].T, s=12, c="tab:red", alpha=0.7, label="scan near z = 0, initial pose")
        ax.scatter(*moved.numpy()[near, :2].T, s=12, c="tab:blue", label=f"after {args.steps} Adam steps")
        ax.set_aspect("equal")
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        ax.set_title("Fitting a pose to a mesh (seen from above)")
        ax.legend(loc="lower left", fontsize=8)
        ax_loss.semilogy(np.sqrt(losses))
        ax_loss.set_xlabel("optimization step (Adam, gradients from adjit.Tape)")
        ax_loss.set_ylabel("RMS distance to the mesh")
        ax_loss.set_title("Loss: gradient descent through mesh queries")
        ax_loss.grid(alpha=0.3, which="both")
        fig.tight_layout()
        save(fig, args.out)


if __name__ == "__main__":
    main()
