"""Fit a damped spring to noisy measurements with PyTorch: the simulation is
an adjit kernel, the loss and the optimizer are PyTorch's.

``adjit.torch.op`` turns the kernel launch into a ``torch.autograd.Function``:
its forward runs the kernel, and ``loss.backward()`` runs the kernel's
adjoint (the reversed time loop) to give the gradient with respect to the
spring's parameters, which ``torch.optim.Adam`` then updates. Needs PyTorch
(``pip install torch``).

    python examples/torch_fit.py            # writes examples/output/torch_fit.png
    python examples/torch_fit.py --small    # fewer optimization steps
"""
import adjit as wp
from _common import log, parse_args, progress, pyplot, save

STEPS, DT = 300, 0.02  # a 6-second recording, one sample per time step


@wp.kernel
def spring(params: wp.array(dtype=float), steps: int, dt: float, x: wp.array(dtype=float)):
    """Simulates a unit mass on a spring, x'' = -k x - c x', from x(0) = x0, x'(0) = v0,
    with params = [k, c, x0, v0]; writes the position at every step into x."""
    k = params[0]
    c = params[1]
    pos = params[2]
    vel = params[3]
    for t in range(steps):                         # a runtime loop, differentiated exactly
        vel = vel + dt * (-k * pos - c * vel)      # semi-implicit Euler
        pos = pos + dt * vel
        x[t] = pos


def main():
    args = parse_args("torch_fit", __doc__.splitlines()[0], steps=300, small_steps=120)
    try:
        import torch
        import adjit.torch
    except ImportError:
        log.error("this example needs PyTorch: pip install torch")
        raise SystemExit(1)
    plt = pyplot()
    torch.manual_seed(0)

    # The op: the kernel's inputs in, the array x out (STEPS long); one thread (dim=1).
    simulate = adjit.torch.op(spring, dim=1, outputs="x", shapes={"x": (STEPS,)})

    # Measurements: the true spring plus noise.
    names = ["stiffness k", "damping c", "x0", "v0"]
    true = torch.tensor([4.0, 0.3, 1.0, 0.0])
    time = DT * torch.arange(1, STEPS + 1)
    noise = 0.05
    data = simulate(true, STEPS, DT) + noise * torch.randn(STEPS)

    # The parameters to fit: a guess, optimized by PyTorch.
    params = torch.tensor([3.0, 0.8, 0.5, 0.5], requires_grad=True)
    guess = simulate(params, STEPS, DT).detach()
    optimizer = torch.optim.Adam([params], lr=0.05)
    losses = []
    log.info("fitting %d parameters to %d measurements for %d steps", len(params), STEPS, args.steps)
    for it in progress(range(args.steps), "torch_fit"):
        optimizer.zero_grad()
        loss = torch.mean((simulate(params, STEPS, DT) - data) ** 2)   # adjit kernel, then torch
        loss.backward()                                                # torch autograd -> adjit adjoint
        optimizer.step()
        losses.append(loss.item())
        log.debug("step %d: loss %.6g, params %s", it, losses[-1], params.tolist())
    with torch.no_grad():
        fit = simulate(params, STEPS, DT)
        final = torch.mean((fit - data) ** 2).item()
    error = ((params.detach() - true).abs() / true.abs().clamp(min=1.0)).max().item()
    for name, t, p in zip(names, true.tolist(), params.tolist()):
        log.info("%-12s true %6.3f  fitted %6.3f", name, t, p)
    # One line a test (or a script) can parse: a good fit leaves the noise (loss ~ noise**2);
    # the parameter error is relative (absolute for parameters below 1).
    print(f"torch_fit: initial_loss={losses[0]:.6g} final_loss={final:.6g} noise_variance={noise ** 2:.6g} "
          f"max_param_error={error:.3g}")

    if plt is not None:
        fig, (ax, ax_loss) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [1.6, 1]})
        ax.plot(time, data, ".", ms=3, color="0.55", label="measurements")
        ax.plot(time, guess, "--", color="C1", label="initial guess")
        ax.plot(time, fit, color="C0", lw=2, label="fitted")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("position")
        ax.set_title("A damped spring simulated by an adjit kernel, fitted with torch.optim.Adam", fontsize=10)
        ax.legend(fontsize=9)
        ax.grid(alpha=0.3)
        text = "\n".join(f"{n}: {p:.3f} (true {t:.2f})" for n, t, p in zip(names, true.tolist(), params.tolist()))
        ax.text(0.98, 0.03, text, transform=ax.transAxes, ha="right", va="bottom", fontsize=8, family="monospace",
                bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "0.8"})
        ax_loss.semilogy(losses, label="loss")
        ax_loss.axhline(noise ** 2, ls=":", color="0.4", label="noise variance")
        ax_loss.legend(fontsize=9)
        ax_loss.set_xlabel("optimization step")
        ax_loss.set_ylabel("mean squared error")
        ax_loss.set_title("Loss (loss.backward() runs the adjoint)", fontsize=10)
        ax_loss.grid(alpha=0.3, which="both")
        fig.tight_layout()
        save(fig, args.out)


if __name__ == "__main__":
    main()
