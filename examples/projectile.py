"""Hit three targets: find the launch velocities of three projectiles by
gradient descent through a simulation loop.

The whole flight (gravity and quadratic air drag, 200 time steps) is one
adjit kernel with a runtime ``for`` loop; one thread simulates one
projectile. ``adjit.Tape`` records the launch and ``tape.backward`` runs the
kernel's adjoint, which differentiates the loop exactly (it replays the loop
backwards from checkpoints), giving d(miss)/d(launch velocity). Adam, written
in numpy, then updates the velocities.

    python examples/projectile.py            # writes examples/output/projectile.png
    python examples/projectile.py --small    # fewer optimization steps
"""
import numpy as np

import adjit as wp
from _common import log, parse_args, progress, pyplot, save

GRAVITY = wp.constant(wp.vec2(0.0, -9.81))  # m/s^2; globals are compiled into the kernel


@wp.kernel
def simulate(v0: wp.array(dtype=wp.vec2), target: wp.array(dtype=wp.vec2), steps: int, dt: float,
             drag: float, path: wp.array(dtype=wp.vec2, ndim=2), miss: wp.array(dtype=float)):
    i = wp.tid()                                  # one thread per projectile
    p = wp.vec2(0.0, 0.0)                         # every projectile starts at the origin
    v = v0[i]
    for t in range(steps):                        # a loop whose length is only known at run time
        a = GRAVITY - drag * wp.length(v) * v     # gravity + drag against the velocity
        v = v + dt * a                            # semi-implicit Euler
        p = p + dt * v
        path[i, t] = p                            # the trajectory, for the picture
    d = p - target[i]
    miss[i] = wp.dot(d, d)                        # squared distance to the target at the end


class Adam:
    """The Adam optimizer in plain numpy."""

    def __init__(self, lr: float, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8):
        self.lr, self.beta1, self.beta2, self.eps = lr, beta1, beta2, eps
        self.m = self.v = None
        self.t = 0

    def step(self, params: np.ndarray, grad: np.ndarray) -> None:
        if self.m is None:
            self.m, self.v = np.zeros_like(grad), np.zeros_like(grad)
        self.t += 1
        self.m = self.beta1 * self.m + (1 - self.beta1) * grad
        self.v = self.beta2 * self.v + (1 - self.beta2) * grad * grad
        m_hat = self.m / (1 - self.beta1 ** self.t)
        v_hat = self.v / (1 - self.beta2 ** self.t)
        params -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)  # in place


def main():
    args = parse_args("projectile", __doc__.splitlines()[0], steps=300, small_steps=120)
    plt = pyplot()

    steps, dt, drag = 200, 0.01, 0.05             # a 2-second flight
    targets = np.array([[9.0, 1.0], [4.0, 4.0], [12.0, -3.0]], np.float32)
    n = len(targets)
    target = wp.array(targets, dtype=wp.vec2)
    # The parameters: launch velocities, all the same at first. requires_grad
    # gives them a .grad array that tape.backward fills.
    v0 = wp.array(np.tile([6.0, 6.0], (n, 1)).astype(np.float32), dtype=wp.vec2, requires_grad=True)
    path = wp.zeros((n, steps), dtype=wp.vec2)   # no gradient needed: the loss does not use it
    miss = wp.zeros(n, requires_grad=True)

    optimizer = Adam(lr=0.4)
    losses, snapshots = [], []
    log.info("optimizing the launch velocities of %d projectiles for %d steps", n, args.steps)
    for it in progress(range(args.steps + 1), "projectile"):
        tape = wp.Tape()
        with tape:                                # record the launch ...
            wp.launch(simulate, dim=n, inputs=[v0, target, steps, dt, drag, path, miss])
        losses.append(float(miss.numpy().sum()))
        if it in (0, 3, 6, 10, 16, 25, 40) or it == args.steps:
            snapshots.append((it, path.numpy().copy()))   # trajectories to draw
        if it == args.steps:
            break                                 # the last iteration only evaluates
        tape.backward(loss=miss)                  # ... and run its adjoint: d(sum of miss)/d v0
        optimizer.step(v0.numpy(), v0.grad.numpy())
        tape.zero()                               # gradients accumulate: clear them
        log.debug("step %d: loss %.6g", it, losses[-1])

    initial = float(np.sqrt(np.max(miss_of(snapshots[0][1], targets))))
    final = float(np.sqrt(miss.numpy().max()))
    log.info("launch velocities (m/s): %s", np.round(v0.numpy(), 3).tolist())
    # One line a test (or a script) can parse: the largest distance to a target, before and after.
    print(f"projectile: initial_miss={initial:.6g} final_miss={final:.6g}")

    if plt is not None:
        fig, (ax, ax_loss) = plt.subplots(1, 2, figsize=(10, 4.6))
        colors = plt.cm.tab10(np.arange(n))
        for k, (it, p) in enumerate(snapshots):
            first, last = k == 0, k == len(snapshots) - 1
            for i in range(n):
                xy = np.vstack([[0.0, 0.0], p[i]])
                if first:
                    ax.plot(*xy.T, "--", color="0.45", lw=1.2, label="initial guess (all three)" if i == 0 else None)
                elif last:
                    ax.plot(*xy.T, color=colors[i], lw=2.2,
                            label=f"after {it} Adam steps" if i == 0 else None)
                else:
                    ax.plot(*xy.T, color=colors[i], lw=0.8, alpha=0.2 + 0.4 * k / len(snapshots),
                            label=f"steps {snapshots[1][0]}-{snapshots[-2][0]}" if i == 0 and k == 1 else None)
        ax.scatter(*targets.T, marker="*", s=260, c=colors, edgecolors="k", zorder=5, label="targets")
        ax.plot(0, 0, "ko")
        ax.set_xlabel("x (m)")
        ax.set_ylabel("y (m)")
        ax.set_title("2 s flights: gravity + drag, 200 time steps")
        ax.set_aspect("equal")
        ax.grid(alpha=0.3)
        ax.legend(loc="lower left", fontsize=9)
        ax_loss.semilogy(losses)
        ax_loss.set_xlabel("optimization step (Adam, gradients from adjit.Tape)")
        ax_loss.set_ylabel("sum of squared misses (m$^2$)")
        ax_loss.set_title("Loss: gradient descent through the loop")
        ax_loss.grid(alpha=0.3, which="both")
        fig.tight_layout()
        save(fig, args.out)


def miss_of(path: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Squared distance of each trajectory's end point to its target."""
    return ((path[:, -1] - targets) ** 2).sum(axis=1)


if __name__ == "__main__":
    main()
