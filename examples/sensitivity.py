"""Sensitivity maps of a heat simulation: which pixels matter to a sensor?

Heat spreads from a heater through a plate whose conductivity is given per
pixel; an insulating wall with one door separates the heater from a
temperature sensor. A 2-D kernel (one thread per pixel) advances the heat
equation by one time step; the simulation launches it hundreds of times on
one ``adjit.Tape``. One ``tape.backward`` from the sensor's reading then
gives its gradient with respect to *every* pixel's conductivity and heat
source at once (reverse mode: one backward pass for a scalar, however many
parameters): the two sensitivity maps of the picture. A few entries are
checked against finite differences.

The conductivity map shows ``kappa * d reading / d kappa``, the relative
sensitivity (the change of the reading, to first order, if a pixel's
conductivity doubled): the raw gradient is largest inside the wall itself (a
little conduction there would shortcut it), which would hide the rest.

    python examples/sensitivity.py            # writes examples/output/sensitivity.png
    python examples/sensitivity.py --small    # a coarser grid, fewer time steps
"""
import numpy as np

import adjit as wp
from _common import log, parse_args, progress, pyplot, save

DT = wp.constant(0.2)  # time step; stable while DT * (sum of the 4 face conductivities) < 1


@wp.kernel
def diffuse(temp: wp.array(dtype=wp.float64, ndim=2), kappa: wp.array(dtype=wp.float64, ndim=2),
            heat: wp.array(dtype=wp.float64, ndim=2), out: wp.array(dtype=wp.float64, ndim=2)):
    """One explicit Euler step of dT/dt = div(kappa grad T) + heat (no flux through the border)."""
    i, j = wp.tid()                               # one thread per pixel of a 2-D launch
    t = temp[i, j]
    k = kappa[i, j]
    flow = heat[i, j]
    # heat flowing in from each neighbour, through a face of mean conductivity
    if i > 0:
        flow += 0.5 * (k + kappa[i - 1, j]) * (temp[i - 1, j] - t)
    if i < temp.shape[0] - 1:
        flow += 0.5 * (k + kappa[i + 1, j]) * (temp[i + 1, j] - t)
    if j > 0:
        flow += 0.5 * (k + kappa[i, j - 1]) * (temp[i, j - 1] - t)
    if j < temp.shape[1] - 1:
        flow += 0.5 * (k + kappa[i, j + 1]) * (temp[i, j + 1] - t)
    out[i, j] = t + DT * flow


@wp.kernel
def sensor(temp: wp.array(dtype=wp.float64, ndim=2), weight: wp.array(dtype=wp.float64, ndim=2),
           reading: wp.array(dtype=wp.float64)):
    """The sensor's reading: a weighted sum of the temperature."""
    i, j = wp.tid()
    wp.atomic_add(reading, 0, weight[i, j] * temp[i, j])


def simulate(kappa, heat, weight, steps: int, show_progress: bool = False):
    """Runs the simulation from a cold plate; returns (final temperature, sensor reading)."""
    n = kappa.shape[0]
    temp = wp.zeros((n, n), dtype=wp.float64, requires_grad=True)
    steps_iter = progress(range(steps), "time steps") if show_progress else range(steps)
    for _ in steps_iter:
        # A fresh array per step: the tape keeps each step's input for the backward pass.
        new = wp.zeros((n, n), dtype=wp.float64, requires_grad=True)
        wp.launch(diffuse, dim=(n, n), inputs=[temp, kappa, heat, new])
        temp = new
    reading = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    wp.launch(sensor, dim=(n, n), inputs=[temp, weight, reading])
    return temp, reading


def plate(n: int):
    """The plate: conductivity (a wall with a door), the heater and the sensor's weights."""
    kappa = np.ones((n, n))
    wall, door = slice(n // 2 - 1, n // 2 + 1), slice(int(0.45 * n), int(0.6 * n))
    kappa[:, wall] = 0.001
    kappa[door, wall] = 1.0
    heat = np.zeros((n, n))
    heat[int(0.15 * n):int(0.3 * n), int(0.15 * n):int(0.25 * n)] = 1.0
    weight = np.zeros((n, n))
    weight[int(0.7 * n):int(0.85 * n), int(0.75 * n):int(0.85 * n)] = 1.0
    return kappa, heat, weight / weight.sum()


def main():
    args = parse_args("sensitivity", __doc__.splitlines()[0], steps=2500, small_steps=600,
                      steps_help="time steps of the simulation")
    plt = pyplot()
    n = 32 if args.small else 64
    kappa_np, heat_np, weight_np = plate(n)
    # Parameters we want sensitivities for get requires_grad (a .grad array).
    kappa = wp.array(kappa_np, dtype=wp.float64, requires_grad=True)
    heat = wp.array(heat_np, dtype=wp.float64, requires_grad=True)
    weight = wp.array(weight_np, dtype=wp.float64)

    log.info("simulating %d time steps on a %dx%d plate", args.steps, n, n)
    with wp.Tape() as tape:
        temp, reading = simulate(kappa, heat, weight, args.steps, show_progress=True)
    tape.backward(loss=reading)          # d reading / d every input, in one pass
    d_kappa, d_heat = kappa.grad.numpy().copy(), heat.grad.numpy().copy()
    log.info("sensor reading %.6g; largest |d reading / d kappa| %.3g", reading.numpy()[0],
             np.abs(d_kappa).max())

    # Check a few entries against central finite differences (two more simulations each).
    def reading_with(kappa_values):
        return simulate(wp.array(kappa_values, dtype=wp.float64), heat, weight, args.steps)[1].numpy()[0]

    checks = [np.unravel_index(np.argmax(np.abs(d_kappa)), d_kappa.shape),   # the most sensitive pixel
              (int(0.52 * n), n // 2),                                         # in the door
              (int(0.4 * n), int(0.35 * n))]                                   # on the heater's side
    worst, eps = 0.0, 1e-4
    for pixel in checks:
        plus, minus = kappa_np.copy(), kappa_np.copy()
        plus[pixel] += eps
        minus[pixel] -= eps
        fd = (reading_with(plus) - reading_with(minus)) / (2 * eps)
        rel = abs(d_kappa[pixel] - fd) / abs(fd)
        worst = max(worst, rel)
        log.info("d reading / d kappa%s: adjoint %.8g, finite difference %.8g", tuple(map(int, pixel)),
                 d_kappa[pixel], fd)
    # One line a test (or a script) can parse.
    print(f"sensitivity: reading={reading.numpy()[0]:.6g} max_rel_error={worst:.3g} checked={len(checks)}")

    if plt is not None:
        fig, axes = plt.subplots(1, 3, figsize=(13.5, 4.4))
        panels = [
            (temp.numpy(), "inferno", f"temperature after {args.steps} steps", False),
            (d_heat, "viridis", "d reading / d heat source (per pixel)", False),
            # relative sensitivity (see the top of the file)
            (kappa_np * d_kappa, "RdBu_r", "kappa * d reading / d kappa (per pixel)", True),
        ]
        for ax, (image, cmap, title, diverging) in zip(axes, panels):
            limit = np.percentile(np.abs(image), 99.5)     # a few door-corner pixels go beyond
            im = ax.imshow(image, cmap=cmap, vmin=-limit if diverging else None, vmax=limit if diverging else None)
            fig.colorbar(im, ax=ax, fraction=0.046, pad=0.03, extend="both" if diverging else "neither")
            ax.contour(kappa_np < 0.5, levels=[0.5], colors="w" if not diverging else "k", linewidths=0.8)
            ax.contour(heat_np, levels=[0.5], colors="c", linewidths=1.2)
            ax.contour(weight_np > 0, levels=[0.5], colors="lime", linewidths=1.2)
            ax.set_title(title, fontsize=10)
            ax.set_xticks([])
            ax.set_yticks([])
        fig.suptitle("Heater (cyan) warms a sensor (green) through a door in an insulating wall: "
                     "sensitivities from one tape.backward", fontsize=11)
        fig.tight_layout()
        save(fig, args.out)


if __name__ == "__main__":
    main()
