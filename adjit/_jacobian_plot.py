"""``adjit.autograd.jacobian_plot``: the Jacobians of ``jacobian`` /
``jacobian_fd`` drawn with matplotlib (Warp's signature)."""
from __future__ import annotations

import numpy as np

from .runtime.array import Array


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
