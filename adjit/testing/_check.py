"""Gradient checks that raise a readable AssertionError: adjoint Jacobians
(``adjit.autograd.jacobian`` / ``adjit.Tape``) against central finite
differences, and forward mode against reverse mode (the dot-product test)."""
from __future__ import annotations

import unittest

import numpy as np

from .. import autograd
from ..autograd import compare_jacobians
from .. import types as T
from ..errors import GradientError
from ..runtime.array import Array
from ..runtime.tape import Tape

#: Defaults for float64 kernels (see docs/testing.md for the reasoning).
EPS, RTOL, ATOL = 1e-6, 1e-5, 1e-7

#: Default (eps, rtol, atol) by the least precise float type among a check's
#: arrays: the step balances truncation (eps**2 times the third derivative
#: / 6) against rounding (a few ulp(f) / eps), and the tolerances cover what
#: is left (docs/testing.md, "Tolerances").
TOLERANCES_BY_DTYPE = {
    "float64": (EPS, RTOL, ATOL),
    "float32": (1e-3, 1e-2, 1e-3),
    "float16": (1e-1, 5e-2, 5e-2),
    "bfloat16": (2.5e-1, 1e-1, 1e-1),
}
_PRECISION_ORDER = ("bfloat16", "float16", "float32", "float64")


def default_tolerances(arrays) -> tuple[float, float, float]:
    """(eps, rtol, atol) for the least precise float dtype of ``arrays``."""
    names = {T.scalar_of(a.dtype).name for a in arrays if _is_float_array(a)}
    for name in _PRECISION_ORDER:
        if name in names:
            return TOLERANCES_BY_DTYPE[name]
    return TOLERANCES_BY_DTYPE["float64"]


def _resolve(arrays, eps, rtol, atol) -> tuple[float, float, float]:
    d_eps, d_rtol, d_atol = default_tolerances(arrays)
    return (d_eps if eps is None else eps, d_rtol if rtol is None else rtol, d_atol if atol is None else atol)


#: The dot-product test's relative tolerance for float64 (see check_dot_product).
DOT_RTOL = 1e-12


class GradientMismatch(AssertionError):
    """Adjoint gradients differ from finite differences (the report is the message)."""


class DotProductMismatch(AssertionError):
    """Forward mode and reverse mode disagree: <u, J v> != <J^T u, v>."""


class ForwardModeUnsupported(unittest.SkipTest):
    """The tangent pass rejects a kernel (a ``@func_grad`` custom adjoint, a
    float atomic min/max, ...), so forward mode cannot be checked. A
    ``unittest.SkipTest``: pytest reports the test as skipped, with the reason."""


def _is_float_array(a) -> bool:
    if not isinstance(a, Array):
        return False
    scalar = T.scalar_of(a.dtype)
    return scalar.is_float


def _element_name(name: str, dtype, flat: int) -> str:
    """``y[2].z`` / ``m[1][0, 2]`` / ``x[3]`` for a flat index into an array's numpy buffer."""
    comp = () if isinstance(dtype, T.ScalarType) else dtype.shape
    per = int(np.prod(comp)) if comp else 1
    element, rest = divmod(flat, per)
    if not comp:
        return f"{name}[{element}]"
    if len(comp) == 1:
        return f"{name}[{element}].{'xyzw'[rest]}" if comp[0] <= 4 else f"{name}[{element}][{rest}]"
    r, c = divmod(rest, comp[1])
    return f"{name}[{element}][{r}, {c}]"


def _values(a) -> str:
    if isinstance(a, Array):
        return np.array2string(a.numpy(), precision=17, separator=", ", threshold=200)
    return repr(a)


def _mismatch_report(title: str, comparisons, names_in, names_out, arrays_in, arrays_out, eps, rtol, atol,
                     max_entries: int) -> str | None:
    """None when every comparison passed, else a report: the inputs, and per
    pair the worst entries out of tolerance."""
    if all(c.passed for c in comparisons):
        return None
    lines = []
    for c in comparisons:
        i, o = c.pair
        if c.passed:
            lines.append(f"  ok    d {names_out[o]} / d {names_in[i]}: max |adjoint - fd| = {c.max_error:.3g}")
            continue
        lines.append(f"  FAIL  d {names_out[o]} / d {names_in[i]}: {int(c.failed.sum())} of {c.failed.size} "
                     "entries out of tolerance:")
        for r, col in c.worst(max_entries):
            lines.append(f"          d {_element_name(names_out[o], arrays_out[o].dtype, r)} / "
                         f"d {_element_name(names_in[i], arrays_in[i].dtype, col)}: "
                         f"adjoint {c.analytic[r, col]:.10g}, finite difference {c.numeric[r, col]:.10g} "
                         f"(|diff| {c.error[r, col]:.3g} > allowed {c.allowed[r, col]:.3g})")
    header = [(f"{title}: adjoint gradients differ from central finite differences "
               f"(eps={eps:g}, rtol={rtol:g}, atol={atol:g}; an entry fails when "
               "|adjoint - fd| > atol + rtol*|fd|)"),
              "  at the inputs:"]
    header += [f"    {name} = {_values(a)}" for name, a in zip(names_in, arrays_in)]
    return "\n".join(header + lines)


def check_gradients(kernel, dim, inputs, outputs, eps: float | None = None, rtol: float | None = None,
                    atol: float | None = None, input_output_mask=None, max_entries: int = 8) -> None:
    """Checks a kernel's adjoint against central finite differences.

    For every (float input array, float output array) pair (or those in
    ``input_output_mask``, as in ``adjit.autograd.jacobian``), the Jacobian
    from the adjoint kernel (one backward pass per output element) must match
    the central finite-difference Jacobian (two launches per input element)
    elementwise: ``|J - J_fd| <= atol + rtol * |J_fd|``. Raises an
    AssertionError (``GradientMismatch``) naming the worst entries otherwise.

    The adjoint Jacobian takes one backward pass per output element with the
    one-lane adjoint kernel: batched seeds would compile a 16-lane kernel,
    which for a complex kernel takes far longer to compile (seconds) than a
    test's small arrays take to run.

    ``eps``, ``rtol`` and ``atol`` left None are chosen by the least precise
    float dtype among the arrays (``TOLERANCES_BY_DTYPE``: float64 1e-6,
    1e-5, 1e-7; float32 1e-3, 1e-2, 1e-3). Keep the inputs away from kinks
    (``abs``, ``min``/``max``, branch conditions): finite differences across
    a kink are meaningless.
    """
    inputs, outputs = list(inputs), list(outputs)
    autograd.arrays_device(f"check_gradients of kernel '{getattr(kernel, '__name__', kernel)}'", inputs + outputs)
    eps, rtol, atol = _resolve(inputs + outputs, eps, rtol, atol)
    snapshot = [o.numpy().copy() if isinstance(o, Array) else None for o in outputs]
    analytic = autograd._kernel_jacobian(kernel, dim, inputs, outputs, input_output_mask, batch=1)
    for o, s in zip(outputs, snapshot):  # jacobian() leaves the outputs as one launch does
        if s is not None:
            autograd.set_values(o, s)
    numeric = autograd._kernel_jacobian_fd(kernel, dim, inputs, outputs, input_output_mask, eps)
    names_in, names_out = analytic._names_in, analytic._names_out
    src = kernel.source
    report = _mismatch_report(
        f"kernel '{kernel.__name__}' ({src.filename}:{src.first_line})",
        compare_jacobians(analytic, numeric, rtol, atol), names_in, names_out, inputs, outputs, eps, rtol, atol,
        max_entries)
    if report is not None:
        raise GradientMismatch(report)


def check_tape_gradients(run, inputs, eps: float | None = None, rtol: float | None = None,
                         atol: float | None = None, names=None, output_names=None, max_entries: int = 8) -> None:
    """Checks the gradients of several launches recorded on one tape.

    ``run(*inputs)`` launches kernels (any number, in any order) and returns
    the list of output arrays it created, each with ``requires_grad=True``;
    it is called once under a ``Tape`` and then once per finite-difference
    evaluation, so it must create fresh outputs on every call. The Jacobian of
    every returned output with respect to every float input array, from
    ``tape.backward`` seeded with each output element in turn, must match
    central finite differences of ``run`` elementwise (as in check_gradients).
    ``names`` and ``output_names`` name the inputs and outputs in the report.
    """
    inputs = list(inputs)
    autograd.arrays_device("check_tape_gradients", inputs)
    names = list(names) if names is not None else [f"inputs[{k}]" for k in range(len(inputs))]
    diff = [k for k, a in enumerate(inputs) if _is_float_array(a)]
    if not diff:
        raise ValueError("check_tape_gradients: no float input array to differentiate with respect to")
    added = []
    for k in diff:
        if inputs[k].grad is None:
            inputs[k].grad = autograd.zero_gradient(inputs[k])
            added.append(inputs[k])
    try:
        tape = Tape()
        with tape:
            outs = list(run(*inputs))
        for n, o in enumerate(outs):
            if not isinstance(o, Array) or o.grad is None:
                raise ValueError(f"check_tape_gradients: output {n} of run() is not an array created with "
                                 "requires_grad=True (the tape needs its gradient to seed it)")
        eps, rtol, atol = _resolve(inputs + outs, eps, rtol, atol)
        out_names = (list(output_names) if output_names is not None
                     else [f"outputs[{n}]" for n in range(len(outs))])
        analytic = {(k, o): np.zeros((autograd._numbers(outs[o]), autograd._numbers(inputs[k])))
                    for k in diff for o in range(len(outs))}
        for o, out in enumerate(outs):
            for row in range(autograd._numbers(out)):
                tape.zero()
                for k in diff:
                    autograd.set_values(inputs[k].grad, 0)
                for other in outs:
                    autograd.set_values(other.grad, 0)
                autograd.set_number(out.grad, row, 1)
                tape.backward()
                for k in diff:
                    analytic[k, o][row] = inputs[k].grad.numpy().reshape(-1)
        tape.zero()
        numeric = {key: np.zeros_like(j) for key, j in analytic.items()}
        for k in diff:
            flat = autograd.FlatNumbers(inputs[k])
            for col in range(flat.size):
                original = flat[col].copy()
                values = []
                for sign in (1, -1):
                    flat[col] = original + sign * eps
                    values.append([np.asarray(o.numpy(), np.float64).reshape(-1).copy() for o in run(*inputs)])
                flat[col] = original
                for o in range(len(outs)):
                    numeric[k, o][:, col] = (values[0][o] - values[1][o]) / (2 * eps)
        report = _mismatch_report(
            f"launches of {getattr(run, '__qualname__', 'run')}", compare_jacobians(analytic, numeric, rtol, atol),
            names, out_names, inputs, outs, eps, rtol, atol, max_entries)
        if report is not None:
            raise GradientMismatch(report)
    finally:
        for a in added:
            a.grad = None
        for k in diff:
            if inputs[k].grad is not None:
                autograd.set_values(inputs[k].grad, 0)


def check_dot_product(run, inputs, rtol: float = DOT_RTOL, seed: int = 0, names=None,
                      output_names=None) -> None:
    """Checks forward mode against reverse mode over the launches of ``run``
    (the dot-product test): for random ``u`` over the outputs and ``v`` over
    the float input arrays (uniform in [-1, 1], from ``seed``),

        <u, J v>    from ``adjit.autograd.jvp(run, inputs, v)`` (tangent kernels)
        <J^T u, v>  from ``Tape.backward`` seeded with ``u`` (adjoint kernels)

    must agree: ``|fwd - rev| <= rtol * (scale + unit)`` where ``scale`` is
    ``sum |u| |J v| + sum |J^T u| |v|``, the magnitude of the terms both sums
    add up (so the bound is relative to what was summed, not to a sum that
    cancels), and ``unit`` is ``sum |u| * sum |v|``, the largest ``<u, J v>``
    of a Jacobian whose entries are at most 1. ``unit`` is there for
    derivatives that vanish by cancellation inside a kernel (the derivative
    of ``length_sq(normalize(h))`` is 0): one mode may give 0 and the other a
    rounding residue of the order-1 partials it combined, which ``scale``
    (made of that residue) cannot cover. Both sides are exact up to
    rounding, so for float64 kernels whose values stay of order 1 to 50 (the
    fuzzer's) the default 1e-12 leaves room for thousands of roundings and
    still catches a tangent or adjoint rule off by one part in 1e9. ``run`` is as for
    check_tape_gradients (fresh outputs with ``requires_grad=True`` on every
    call). Raises DotProductMismatch, or ForwardModeUnsupported (a skip) when
    the tangent pass rejects one of the kernels, with its reason.
    """
    inputs = list(inputs)
    autograd.arrays_device("check_dot_product", inputs)
    names = list(names) if names is not None else [f"inputs[{k}]" for k in range(len(inputs))]
    diff = [k for k, a in enumerate(inputs) if _is_float_array(a)]
    if not diff:
        raise ValueError("check_dot_product: no float input array to differentiate with respect to")
    rng = np.random.default_rng(seed)
    v = {k: rng.uniform(-1.0, 1.0, inputs[k]._buffer.shape) for k in diff}
    try:
        outs, out_tangents = autograd.jvp(run, inputs, [v.get(k) for k in range(len(inputs))])
    except GradientError as e:
        if "in forward mode" in str(e):
            raise ForwardModeUnsupported(f"the tangent pass rejects a kernel: {e}") from None
        raise
    outs, out_tangents = (([outs], [out_tangents]) if isinstance(outs, Array)
                          else (list(outs), list(out_tangents)))
    u = [rng.uniform(-1.0, 1.0, o._buffer.shape) for o in outs]
    forward_terms = [uo * np.asarray(t.numpy(), np.float64) for uo, t in zip(u, out_tangents)]

    added = []
    for k in diff:
        if inputs[k].grad is None:
            inputs[k].grad = autograd.zero_gradient(inputs[k])
            added.append(inputs[k])
    try:
        for k in diff:
            autograd.set_values(inputs[k].grad, 0)
        tape = Tape()
        with tape:
            replayed = list(run(*inputs))
        for n, (o, uo) in enumerate(zip(replayed, u)):
            if not isinstance(o, Array) or o.grad is None:
                raise ValueError(f"check_dot_product: output {n} of run() is not an array created with "
                                 "requires_grad=True (the tape needs its gradient to seed it)")
            autograd.set_values(o.grad, uo)
        tape.backward()
        reverse_terms = [np.asarray(inputs[k].grad.numpy(), np.float64) * v[k] for k in diff]
        tape.zero()
    finally:
        for a in added:
            a.grad = None
        for k in diff:
            if inputs[k].grad is not None:
                autograd.set_values(inputs[k].grad, 0)

    forward = float(sum(np.sum(t) for t in forward_terms))
    reverse = float(sum(np.sum(t) for t in reverse_terms))
    scale = float(sum(np.sum(np.abs(t)) for t in forward_terms + reverse_terms))
    unit = float(sum(np.sum(np.abs(uo)) for uo in u) * sum(np.sum(np.abs(vk)) for vk in v.values()))
    error = abs(forward - reverse)
    if not error <= rtol * (scale + unit):  # (a NaN fails)
        out_names = (list(output_names) if output_names is not None
                     else [f"outputs[{n}]" for n in range(len(outs))])
        lines = [f"launches of {getattr(run, '__qualname__', 'run')}: forward mode and reverse mode disagree "
                 f"(the dot-product test, seed={seed}):",
                 f"  <u, J v>   (tangent kernels) = {forward!r}",
                 f"  <J^T u, v> (adjoint kernels) = {reverse!r}",
                 f"  |difference| {error:.3g} > allowed {rtol:g} * ({scale:.6g} + {unit:.6g}) (the sum of the terms' "
                 "magnitudes + sum |u| * sum |v|)",
                 "  per output, <u, J v>: " + ", ".join(f"{name} {float(np.sum(t)):.17g}"
                                                      for name, t in zip(out_names, forward_terms)),
                 "  per input, <J^T u, v>: " + ", ".join(f"{names[k]} {float(np.sum(t)):.17g}"
                                                       for k, t in zip(diff, reverse_terms)),
                 "  at the inputs:"]
        lines += [f"    {names[k]} = {_values(inputs[k])}" for k in diff]
        raise DotProductMismatch("\n".join(lines))


class HessianAsymmetry(AssertionError):
    """Forward over reverse gives a Hessian that is not symmetric: v2 . H v1 != v1 . H v2."""


def check_hessian_symmetry(run, inputs, rtol: float = DOT_RTOL, seed: int = 0, names=None) -> None:
    """Checks second order (forward over reverse, ``adjit.autograd.hvp``)
    over the launches of ``run``: for random seeds ``u`` over the outputs and
    directions ``v1``, ``v2`` over the float input arrays (uniform in
    [-1, 1], from ``seed``), the Hessian H of ``<u, run(inputs)>`` must be
    symmetric as the products give it:

        v2 . (H v1)  ==  v1 . (H v2)

    within ``rtol * (scale + unit)``, where ``scale`` is the sum of both
    sums' terms' magnitudes and ``unit`` is ``sum|u| sum|v1| sum|v2|`` (the
    largest such product of second derivatives at most 1), as in
    ``check_dot_product``. Each side is one run of the tangent kernels of the
    adjoint kernels, so a wrong second-order rule (a tangent rule applied to
    an adjoint's ops, a tangent buffer of a loop reversal) breaks the
    symmetry. Raises HessianAsymmetry, or ForwardModeUnsupported (a skip)
    when a kernel has no forward-mode derivative."""
    inputs = list(inputs)
    autograd.arrays_device("check_hessian_symmetry", inputs)
    names = list(names) if names is not None else [f"inputs[{k}]" for k in range(len(inputs))]
    diff = [k for k, a in enumerate(inputs) if _is_float_array(a)]
    if not diff:
        raise ValueError("check_hessian_symmetry: no float input array to differentiate with respect to")
    rng = np.random.default_rng(seed)
    v1 = {k: rng.uniform(-1.0, 1.0, inputs[k]._buffer.shape) for k in diff}
    v2 = {k: rng.uniform(-1.0, 1.0, inputs[k]._buffer.shape) for k in diff}
    shapes = [o._buffer.shape for o in run(*inputs)]
    u = [rng.uniform(-1.0, 1.0, shape) for shape in shapes]

    def product(v):
        try:
            _, _, hvps = autograd.hvp(run, inputs, [v.get(k) for k in range(len(inputs))], output_grads=u)
        except GradientError as e:
            if "in forward mode" in str(e):
                raise ForwardModeUnsupported(f"the tangent pass rejects a kernel: {e}") from None
            raise
        return hvps

    h1, h2 = product(v1), product(v2)
    terms_a = [v2[k] * np.asarray(h1[k], np.float64) for k in diff]
    terms_b = [v1[k] * np.asarray(h2[k], np.float64) for k in diff]
    a, b = float(sum(np.sum(t) for t in terms_a)), float(sum(np.sum(t) for t in terms_b))
    scale = float(sum(np.sum(np.abs(t)) for t in terms_a + terms_b))
    unit = float(sum(np.sum(np.abs(x)) for x in u) * sum(np.sum(np.abs(x)) for x in v1.values())
                 * sum(np.sum(np.abs(x)) for x in v2.values()))
    error = abs(a - b)
    if not error <= rtol * (scale + unit):  # (a NaN fails)
        lines = [f"launches of {getattr(run, '__qualname__', 'run')}: the Hessian from forward over reverse is not "
                 f"symmetric (seed={seed}):",
                 f"  v2 . H v1 = {a!r}", f"  v1 . H v2 = {b!r}",
                 f"  |difference| {error:.3g} > allowed {rtol:g} * ({scale:.6g} + {unit:.6g})",
                 "  at the inputs:"]
        lines += [f"    {names[k]} = {_values(inputs[k])}" for k in diff]
        raise HessianAsymmetry("\n".join(lines))
