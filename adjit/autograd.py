"""Jacobians and gradient checks of kernels (``adjit.autograd``).

``jacobian`` uses the adjoint kernels (one backward pass per output element);
``jacobian_fd`` uses central finite differences; ``gradcheck`` compares the
two. Masks name (input, output) pairs either by parameter name,
``("a", "out1")``, or by integer index, ``(0, 0)`` = ``inputs[0]`` and
``outputs[0]``; both spellings give identical results.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import types as T
from .language import Kernel
from .launch import launch
from .errors import GradientError
from .runtime.array import Array, zeros_like
from .runtime.tape import Tape


class JacobianDict(dict):
    """Jacobians keyed by ``(input index, output index)``; lookups also accept
    parameter names, e.g. ``J["a", "out1"]``."""

    def __init__(self, names_in, names_out):
        super().__init__()
        self._names_in, self._names_out = names_in, names_out

    def __getitem__(self, key):
        return super().__getitem__(_normalize_pair(key, self._names_in, self._names_out))

    def __contains__(self, key):
        try:
            return super().__contains__(_normalize_pair(key, self._names_in, self._names_out))
        except GradientError:
            return False


def _normalize_pair(pair, names_in, names_out):
    if not isinstance(pair, tuple) or len(pair) != 2:
        raise GradientError(f"a mask entry is an (input, output) pair, got {pair!r}")
    return (_index(pair[0], names_in, "input"), _index(pair[1], names_out, "output"))


def _index(item, names, what):
    if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
        if not 0 <= item < len(names):
            raise GradientError(f"{what} index {item} is out of range (there are {len(names)} {what}s)")
        return int(item)
    if isinstance(item, str):
        if item not in names:
            raise GradientError(f"'{item}' is not one of the {what}s {names}")
        return names.index(item)
    raise GradientError(f"a mask names an {what} by name or integer index, got {item!r}")


def _differentiable(a) -> bool:
    if not isinstance(a, Array):
        return False
    scalar = T.scalar_of(a.dtype)
    return scalar.is_float


def _pairs(kernel: Kernel, inputs, outputs, mask):
    names_in = kernel.arg_names[:len(inputs)]
    names_out = kernel.arg_names[len(inputs):len(inputs) + len(outputs)]
    if mask is None:
        pairs = [(i, o) for i, a in enumerate(inputs) if _differentiable(a)
                 for o, b in enumerate(outputs) if _differentiable(b)]
    else:
        pairs = [_normalize_pair(p, names_in, names_out) for p in mask]
    for i, o in pairs:
        for what, arr, idx in (("input", inputs[i], i), ("output", outputs[o], o)):
            if not _differentiable(arr):
                raise GradientError(f"{what} {idx} ('{(names_in if what == 'input' else names_out)[idx]}') "
                                    "is not a float array, so it has no Jacobian")
    if not pairs:
        raise GradientError(f"kernel '{kernel.__name__}' has no (float input array, float output "
                            "array) pair to differentiate")
    return pairs, names_in, names_out


def _with_grads(arrays):
    """Gives every array a gradient buffer (temporarily); returns an undo."""
    added = []
    for a in arrays:
        if isinstance(a, Array) and a.grad is None:
            a.grad = zeros_like(a, requires_grad=False)
            added.append(a)

    def undo():
        for a in added:
            a.grad = None
    return undo


def jacobian(kernel: Kernel, dim, inputs, outputs, input_output_mask=None) -> JacobianDict:
    """The Jacobians d outputs[o] / d inputs[i] of one launch, by reverse mode.

    Returns ``{(i, o): J}`` with ``J`` of shape (output size, input size)
    (vector/matrix components flattened). The launch runs once; each row is
    one backward pass seeded with a unit gradient on one output element.
    """
    pairs, names_in, names_out = _pairs(kernel, inputs, outputs, input_output_mask)
    undo = _with_grads(list(inputs) + list(outputs))
    try:
        tape = Tape()
        with tape:
            launch(kernel, dim, inputs=inputs, outputs=outputs)
        result = JacobianDict(names_in, names_out)
        for o in sorted({o for _, o in pairs}):
            out = outputs[o]
            ins = [i for i, oo in pairs if oo == o]
            jac = {i: np.zeros((out.numpy().size, inputs[i].numpy().size)) for i in ins}
            for row in range(out.numpy().size):
                tape.zero()
                for a in list(inputs) + list(outputs):
                    if isinstance(a, Array) and a.grad is not None:
                        a.grad.numpy()[...] = 0
                out.grad.numpy().reshape(-1)[row] = 1
                tape.backward()
                for i in ins:
                    jac[i][row] = inputs[i].grad.numpy().reshape(-1)
            for i in ins:
                result[(i, o)] = jac[i]
        for a in list(inputs) + list(outputs):
            if isinstance(a, Array) and a.grad is not None:
                a.grad.numpy()[...] = 0
        return result
    finally:
        undo()


def jacobian_fd(kernel: Kernel, dim, inputs, outputs, input_output_mask=None,
                eps: float = 1e-4) -> JacobianDict:
    """The same Jacobians by central finite differences (2 launches per input
    element). Outputs are restored to their values before each launch, so
    kernels that accumulate into outputs are handled."""
    pairs, names_in, names_out = _pairs(kernel, inputs, outputs, input_output_mask)
    initial = [o.numpy().copy() if isinstance(o, Array) else o for o in outputs]

    def evaluate():
        for o, init in zip(outputs, initial):
            if isinstance(o, Array):
                o.numpy()[...] = init
        launch(kernel, dim, inputs=inputs, outputs=outputs)
        return [o.numpy().astype(np.float64).reshape(-1).copy() if isinstance(o, Array) else None
                for o in outputs]

    result = JacobianDict(names_in, names_out)
    for i in sorted({i for i, _ in pairs}):
        flat = inputs[i].numpy().reshape(-1)
        outs = [o for ii, o in pairs if ii == i]
        jac = {o: np.zeros((outputs[o].numpy().size, flat.size)) for o in outs}
        for col in range(flat.size):
            original = flat[col].copy()
            flat[col] = original + eps
            plus = evaluate()
            flat[col] = original - eps
            minus = evaluate()
            flat[col] = original
            for o in outs:
                jac[o][:, col] = (plus[o] - minus[o]) / (2 * eps)
        for o in outs:
            result[(i, o)] = jac[o]
    evaluate()  # leave the outputs as one launch at the original inputs leaves them
    return result


@dataclass
class GradcheckResult:
    """Whether the adjoint Jacobians match finite differences, and how closely."""

    passed: bool
    report: str

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return self.report


@dataclass(frozen=True)
class JacobianComparison:
    """One adjoint Jacobian against its finite-difference one, entry by entry:
    an entry fails unless ``|J - J_fd| <= atol + rtol * |J_fd|`` (so a NaN fails)."""

    pair: tuple  # (input index, output index)
    analytic: np.ndarray
    numeric: np.ndarray
    error: np.ndarray  # |J - J_fd|
    allowed: np.ndarray  # atol + rtol * |J_fd|

    @property
    def failed(self) -> np.ndarray:
        """The entries out of tolerance (a boolean mask); a NaN entry is out."""
        return ~(self.error <= self.allowed)

    @property
    def passed(self) -> bool:
        return not self.failed.any()

    @property
    def max_error(self) -> float:
        return float(self.error.max()) if self.error.size else 0.0

    def worst(self, count: int) -> list:
        """Up to ``count`` failing entries ``(row, column)``, the farthest out of tolerance first."""
        order = np.argsort(-(self.error - self.allowed), axis=None)[:count]
        entries = [np.unravel_index(flat, self.error.shape) for flat in order]
        return [(int(r), int(c)) for r, c in entries if self.failed[r, c]]


def compare_jacobians(analytic, numeric, rtol: float, atol: float) -> list:
    """Compares the Jacobians ``{(i, o): J}`` with ``{(i, o): J_fd}``
    elementwise; one JacobianComparison per pair, in sorted order."""
    out = []
    for pair in sorted(analytic):
        j, fd = analytic[pair], numeric[pair]
        out.append(JacobianComparison(pair, j, fd, np.abs(j - fd), atol + rtol * np.abs(fd)))
    return out


def gradcheck(kernel: Kernel, dim, inputs, outputs, eps: float = 1e-4, atol: float = 1e-3,
              rtol: float = 1e-2, input_output_mask=None) -> GradcheckResult:
    """Compares ``jacobian`` with ``jacobian_fd`` elementwise:
    ``|J - J_fd| <= atol + rtol * |J_fd|``.

    Finite differences of float32 kernels are noisy (use eps around 1e-3 and
    loose tolerances); for tight checks, compile the kernel for float64.
    Returns a GradcheckResult (truthy when it passes) with a readable report.
    """
    analytic = jacobian(kernel, dim, inputs, outputs, input_output_mask)
    numeric = jacobian_fd(kernel, dim, inputs, outputs, input_output_mask, eps)
    names_in, names_out = analytic._names_in, analytic._names_out
    comparisons = compare_jacobians(dict(analytic), dict(numeric), rtol, atol)
    lines = []
    for c in comparisons:
        i, o = c.pair
        line = (f"{'ok  ' if c.passed else 'FAIL'} d {names_out[o]} / d {names_in[i]}: "
                f"max |J - J_fd| = {c.max_error:.3g}")
        if not c.passed:
            worst = c.worst(1)[0]
            line += (f", {int(c.failed.sum())} of {c.failed.size} entries out of tolerance; worst at "
                     f"(output {worst[0]}, input {worst[1]}): adjoint {c.analytic[worst]:.6g} vs "
                     f"finite difference {c.numeric[worst]:.6g}")
        lines.append(line)
    passed = all(c.passed for c in comparisons)
    header = f"gradcheck of kernel '{kernel.__name__}': {'passed' if passed else 'FAILED'} " \
             f"(eps={eps}, atol={atol}, rtol={rtol})"
    return GradcheckResult(passed, "\n".join([header] + lines))
