"""Warp's gradient checks (``adjit.autograd.gradcheck``, ``gradcheck_tape``,
``jacobian_plot``): adjoint Jacobians against central finite differences,
for one kernel, a Python function of launches, or every launch on a tape."""
from __future__ import annotations

import inspect

import numpy as np

from .autograd import GradcheckResult, JacobianDict, compare_jacobians, jacobian, jacobian_fd
from .errors import GradientError
from .language import Kernel
from .launch import launch
from .loader import written_arguments
from .runtime.array import Array, clone


def gradcheck(function, dim=None, inputs=None, outputs=None, *, eps: float = 1e-4, atol: float = 1e-3,
              rtol: float = 1e-2, raise_exception: bool = True, input_output_mask=None, device=None,
              max_blocks: int = 0, block_dim: int = 256, max_inputs_per_var: int = -1,
              max_outputs_per_var: int = -1, plot_relative_error: bool = False, plot_absolute_error: bool = False,
              show_summary: bool = True) -> GradcheckResult:
    """Compares ``jacobian`` with ``jacobian_fd`` elementwise (Warp's
    signature): passes when no adjoint entry is NaN and every entry has
    ``|J - J_fd| <= atol + rtol * |J_fd|``. ``function``: a kernel (with
    ``dim``, ``inputs``, ``outputs``) or a Python function of launches.

    Returns a GradcheckResult, truthy when it passes, with a readable report
    (printed when ``show_summary``). ``raise_exception``: a failure raises a
    ValueError carrying the report. ``max_outputs_per_var`` /
    ``max_inputs_per_var`` limit the rows / columns compared.
    ``plot_relative_error`` / ``plot_absolute_error`` show the error
    matrices with ``jacobian_plot``. The defaults suit float32 kernels; for
    tight checks compile the kernel for float64 and lower them."""
    analytic = jacobian(function, dim, inputs, outputs, input_output_mask, device, max_blocks, block_dim,
                        max_outputs_per_var)
    numeric = jacobian_fd(function, dim, inputs, outputs, input_output_mask, device, max_blocks, block_dim,
                          max_inputs_per_var, eps)
    rows = max_outputs_per_var if max_outputs_per_var > 0 else None
    cols = max_inputs_per_var if max_inputs_per_var > 0 else None
    a = {key: value.numpy()[:rows, :cols] for key, value in dict.items(analytic)}
    n = {key: value.numpy()[:rows, :cols] for key, value in dict.items(numeric)}
    comparisons = compare_jacobians(a, n, rtol, atol)
    names_in, names_out = analytic._names_in, analytic._names_out
    lines = []
    for c in comparisons:
        i, o = c.pair
        line = (f"{'ok  ' if c.passed else 'FAIL'} d {names_out[o]} / d {names_in[i]}: "
                f"max |J - J_fd| = {c.max_error:.3g}")
        if np.isnan(c.analytic).any():
            line += ", the adjoint has NaN entries"
        elif not c.passed:
            worst = c.worst(1)[0]
            line += (f", {int(c.failed.sum())} of {c.failed.size} entries out of tolerance; worst at "
                     f"(output {worst[0]}, input {worst[1]}): adjoint {c.analytic[worst]:.6g} vs "
                     f"finite difference {c.numeric[worst]:.6g}")
        lines.append(line)
    passed = all(c.passed for c in comparisons)
    what = f"kernel '{function.__name__}'" if isinstance(function, Kernel) else \
        f"function '{getattr(function, '__name__', 'function')}'"
    header = f"gradcheck of {what}: {'passed' if passed else 'FAILED'} (eps={eps}, atol={atol}, rtol={rtol})"
    result = GradcheckResult(passed, "\n".join([header] + lines))
    for wanted, label, error in ((plot_absolute_error, "absolute", lambda c: c.error),
                                 (plot_relative_error, "relative", lambda c: c.error / np.maximum(np.abs(c.numeric),
                                                                                                  1e-30))):
        if wanted:
            errors = JacobianDict(names_in, names_out)
            for c in comparisons:
                errors[c.pair] = error(c)
            jacobian_plot(errors, function, inputs, title=f"{label} error of {what}")
    if show_summary:
        print(result.report)
    if raise_exception and not passed:
        raise ValueError(result.report)
    return result


def gradcheck_tape(tape, *, eps: float = 1e-4, atol: float = 1e-3, rtol: float = 1e-2,
                   raise_exception: bool = True, input_output_masks: dict | None = None,
                   blacklist_kernels=None, whitelist_kernels=None, max_inputs_per_var: int = -1,
                   max_outputs_per_var: int = -1, plot_relative_error: bool = False,
                   plot_absolute_error: bool = False, show_summary: bool = True, reverse_launches: bool = False,
                   skip_to_launch_index: int = 0) -> GradcheckResult:
    """``gradcheck`` of every kernel launch recorded on ``tape`` (Warp's
    signature), each on copies of the arrays as that launch read them (the
    tape's snapshots), so the caller's arrays are left alone. Steps other
    than launches (``record_func``, copies) are not checked; a launch with
    no float input and output array, or with struct parameters, is reported
    as skipped. ``input_output_masks``: per kernel key, a mask as in
    ``jacobian``; ``blacklist_kernels`` / ``whitelist_kernels``: kernels (or
    their keys) to skip / to check only; ``reverse_launches`` checks the
    latest first, from launch ``skip_to_launch_index`` on."""
    from .runtime.tape import _LaunchStep
    launches = [s for s in tape._steps if isinstance(s, _LaunchStep)]
    order = list(range(len(launches)))
    if reverse_launches:
        order.reverse()
    order = order[skip_to_launch_index:]
    keys = lambda kernels: {k.key if isinstance(k, Kernel) else k for k in kernels or ()}  # noqa: E731
    black, white = keys(blacklist_kernels), keys(whitelist_kernels)
    lines, passed = [], True
    for index in order:
        step = launches[index]
        kernel = step.kernel
        label = f"launch {index} of kernel '{kernel.__name__}'"
        if kernel.key in black or (white and kernel.key not in white):
            lines.append(f"skip {label}: not selected")
            continue
        n_inputs = getattr(step, "n_inputs", None)
        if n_inputs is None or len(kernel.arg_names) != len(kernel.param_names):
            lines.append(f"skip {label}: struct parameters are not differentiated by gradcheck")
            continue
        args = [Array(a._buffer.copy(), a.dtype, False, a.device) if isinstance(a, Array) else a
                for a in step.captured]
        in_place = [p for p in written_arguments(kernel) if p < n_inputs and isinstance(args[p], Array)]
        if in_place:  # outputs among the inputs: d (array after) / d (arrays before), through clones
            function, call = _in_place_function(kernel, step.dim, n_inputs), dict(inputs=args)
        else:
            function, call = kernel, dict(dim=step.dim, inputs=args[:n_inputs], outputs=args[n_inputs:])
        try:
            result = gradcheck(function, **call, eps=eps, atol=atol, rtol=rtol, raise_exception=False,
                               input_output_mask=(input_output_masks or {}).get(kernel.key),
                               max_inputs_per_var=max_inputs_per_var, max_outputs_per_var=max_outputs_per_var,
                               plot_relative_error=plot_relative_error, plot_absolute_error=plot_absolute_error,
                               show_summary=False)
        except GradientError as e:
            lines.append(f"skip {label}: {e}")
            continue
        passed = passed and bool(result)
        lines.append(f"{'ok  ' if result else 'FAIL'} {label}")
        lines += ["    " + line for line in result.report.splitlines()[1:]]
    header = (f"gradcheck_tape of {len(launches)} launches: {'passed' if passed else 'FAILED'} "
              f"(eps={eps}, atol={atol}, rtol={rtol})")
    result = GradcheckResult(passed, "\n".join([header] + lines))
    if show_summary:
        print(result.report)
    if raise_exception and not passed:
        raise ValueError(result.report)
    return result


def _in_place_function(kernel: Kernel, dim, n_inputs: int):
    """A launch of ``kernel`` as a function of its arguments that returns the
    arrays it writes, written into clones (so that their values before and
    after are separate arrays, as a Jacobian needs)."""
    written = [p for p in written_arguments(kernel)]

    def launch_on_clones(*values):
        values = list(values)
        for p in written:
            values[p] = clone(values[p], requires_grad=True)
        launch(kernel, dim, inputs=values[:n_inputs], outputs=values[n_inputs:])
        return [values[p] for p in written]
    launch_on_clones.__name__ = kernel.__name__
    launch_on_clones.__signature__ = inspect.Signature(
        [inspect.Parameter(name, inspect.Parameter.POSITIONAL_ONLY) for name in kernel.param_names])
    launch_on_clones.output_names = [f"{kernel.param_names[p]} (after)" for p in written]
    return launch_on_clones


def jacobian_plot(jacobians, kernel, inputs=None, show_plot: bool = True, show_colorbar: bool = True,
                  scale_colors_per_submatrix: bool = False, title: str | None = None, colormap: str = "coolwarm",
                  log_scale: bool = False):
    """Shows the Jacobians ``{(i, o): J}`` of ``jacobian`` / ``jacobian_fd``
    in one figure, a grid of images (a row per output, a column per input),
    and returns the matplotlib Figure (Warp's signature; needs matplotlib).
    ``kernel`` names the figure (a kernel, a function, or a name); the
    entries are named by the parameter names the Jacobians carry."""
    try:
        import matplotlib.pyplot as plt
        from matplotlib import colors
    except ImportError:
        raise ImportError("jacobian_plot needs matplotlib (pip install matplotlib)") from None
    if not jacobians:
        raise ValueError("jacobian_plot: no Jacobians to plot")
    values = {key: (v.numpy() if isinstance(v, Array) else np.asarray(v, np.float64))
              for key, v in dict.items(jacobians)}
    names_in = getattr(jacobians, "_names_in", None)
    names_out = getattr(jacobians, "_names_out", None)
    ins = sorted({i for i, _ in values})
    outs = sorted({o for _, o in values})
    name = kernel if isinstance(kernel, str) else (
        kernel[0] if isinstance(kernel, tuple) else getattr(kernel, "__name__", "kernel"))
    fig, axes = plt.subplots(len(outs), len(ins), squeeze=False, figsize=(3 * len(ins) + 1, 3 * len(outs) + 1))
    finite = [v[np.isfinite(v)] for v in values.values()]
    everything = np.concatenate([f.ravel() for f in finite]) if finite else np.zeros(1)

    def norm_of(data):
        low, high = (float(data.min()), float(data.max())) if data.size else (0.0, 0.0)
        if log_scale:
            nonzero = np.abs(data[data != 0])
            return colors.SymLogNorm(linthresh=float(nonzero.min()) if nonzero.size else 1e-12,
                                     vmin=min(low, -high), vmax=max(high, -low))
        bound = max(abs(low), abs(high)) or 1.0
        return colors.Normalize(vmin=-bound, vmax=bound)  # zero in the colormap's middle

    shared = norm_of(everything)
    for r, o in enumerate(outs):
        for c, i in enumerate(ins):
            ax = axes[r][c]
            if (i, o) not in values:
                ax.axis("off")
                continue
            data = values[(i, o)]
            image = ax.imshow(data, cmap=colormap, interpolation="nearest",
                              norm=norm_of(data[np.isfinite(data)]) if scale_colors_per_submatrix else shared)
            label_in = names_in[i] if names_in else f"inputs[{i}]"
            label_out = names_out[o] if names_out else f"outputs[{o}]"
            ax.set_title(f"d {label_out} / d {label_in}", fontsize=9)
            ax.set_xlabel(f"{label_in} element")
            ax.set_ylabel(f"{label_out} element")
            if show_colorbar and (scale_colors_per_submatrix or (r, c) == (len(outs) - 1, len(ins) - 1)):
                fig.colorbar(image, ax=ax if scale_colors_per_submatrix else list(axes.ravel()))
    fig.suptitle(title or f"Jacobians of {name}")
    if show_plot:
        plt.show()
    return fig
