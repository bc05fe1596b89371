"""Warp's ``warp.optim`` optimizers, ``SGD`` and ``Adam``, updating adjit
arrays in place on the host (numpy, in the parameters' dtype).

They take the same arguments and apply the same updates as Warp's (which
follow PyTorch's ``torch.optim.SGD`` and ``torch.optim.Adam``). Parameters
are arrays of float32 or float64 scalars, vectors or matrices (updated
componentwise), of any shape. Each step is an adjit write: the parameters'
versions are bumped, so a tape that recorded a launch reading them saves
their old values first (or reports the overwrite). As in Warp, a step is not
differentiable: recorded on a tape, a nonzero gradient reaching an updated
parameter on ``backward()`` raises ``GradientError``.
"""
from __future__ import annotations

import numpy as np

from . import types as T
from .runtime import recording
from .runtime.array import Array, _before_write, _host_copy, _record_non_differentiable
from .runtime.recording import active_tapes

__all__ = ["SGD", "Adam"]


def _check_params(params, who: str) -> list[Array]:
    if params is None:
        return []
    params = list(params)
    for p in params:
        if not isinstance(p, Array):
            raise TypeError(f"{who}: params must be adjit arrays, got {type(p).__name__}")
        if T.scalar_of(p.dtype) not in (T.float32, T.float64):
            raise TypeError(f"{who}: parameters of {p.dtype} are not supported (float32 or float64 scalars, "
                            "vectors or matrices)")
    return params


def _check_grads(params: list[Array], grad, who: str) -> list[Array]:
    grad = list(grad)
    if len(grad) != len(params):
        raise ValueError(f"{who}.step: got {len(grad)} gradient arrays for {len(params)} parameters")
    for k, (p, g) in enumerate(zip(params, grad)):
        if not isinstance(g, Array):
            raise TypeError(f"{who}.step: gradient {k} must be an adjit array, got {type(g).__name__}")
        if g.shape != p.shape or g.dtype != p.dtype:
            raise ValueError(f"{who}.step: gradient {k} ({g.shape} {g.dtype}) does not match its parameter "
                             f"({p.shape} {p.dtype})")
    return grad


def _number(value, who: str, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{who}: {name} must be a number, got {value!r}")
    return float(value)


def _update(who: str, params: list[Array], grads: list[Array], update) -> None:
    """Writes ``update(k, p, g)`` (new values from numpy copies of the
    parameter's and gradient's values) into each parameter, as adjit writes
    (a CUDA parameter's: through the host, so far)."""
    with recording.locked(active_tapes()):
        for k, (p, g) in enumerate(zip(params, grads)):
            new = update(k, _host_copy(p._buffer), _host_copy(g._buffer))
            _before_write(p)
            p._buffer[...] = new
        _record_non_differentiable(f"{who}.step", params, params)


class SGD:
    """Stochastic gradient descent with optional momentum, dampening, weight
    decay and Nesterov momentum (Warp's ``warp.optim.SGD``). Per step, with
    ``g`` the gradient and ``b`` the momentum buffer::

        g = g + weight_decay * p
        b = g (first step) or momentum * b + (1 - dampening) * g   [momentum != 0]
        g = g + momentum * b (nesterov) or b                        [momentum != 0]
        p = p - lr * g
    """

    def __init__(self, params=None, lr: float = 0.001, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False):
        who = "SGD"
        self.lr = _number(lr, who, "lr")
        self.momentum = _number(momentum, who, "momentum")
        self.dampening = _number(dampening, who, "dampening")
        self.weight_decay = _number(weight_decay, who, "weight_decay")
        if type(nesterov) is not bool:
            raise TypeError(f"SGD: nesterov must be True or False, got {nesterov!r}")
        if nesterov and (self.momentum <= 0.0 or self.dampening != 0.0):
            raise ValueError("SGD: nesterov momentum needs momentum > 0 and dampening = 0 (as in Warp and PyTorch)")
        self.nesterov = nesterov
        self.set_params(params)

    def set_params(self, params) -> None:
        """Sets the parameters to optimize (a list of arrays, or None) and
        resets the momentum buffers."""
        self.params = _check_params(params, "SGD")
        self.reset_internal_state()

    def reset_internal_state(self) -> None:
        """Zeroes the momentum buffers and the step count."""
        self.b = [np.zeros(p._buffer.shape, p._buffer.dtype) for p in self.params]
        self.t = 0

    def step(self, grad) -> None:
        """One step: updates every parameter in place from its gradient
        (``grad``: a list of arrays matching ``params``)."""
        grads = _check_grads(self.params, grad, "SGD")
        first = self.t == 0

        def update(k, p, g):
            if self.weight_decay:
                g = g + p.dtype.type(self.weight_decay) * p
            if self.momentum:
                b = g.copy() if first else (p.dtype.type(self.momentum) * self.b[k]
                                            + p.dtype.type(1.0 - self.dampening) * g)
                self.b[k] = b
                g = g + p.dtype.type(self.momentum) * b if self.nesterov else b
            return p - p.dtype.type(self.lr) * g
        _update("SGD", self.params, grads, update)
        self.t += 1


class Adam:
    """Adam (Warp's ``warp.optim.Adam``). Per step ``t`` (from 1), with ``g``
    the gradient and moments ``m``, ``v`` starting at zero::

        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        p = p - lr * (m / (1 - beta1**t)) / (sqrt(v / (1 - beta2**t)) + eps)
    """

    def __init__(self, params=None, lr: float = 0.001, betas=(0.9, 0.999), eps: float = 1e-08):
        who = "Adam"
        self.lr = _number(lr, who, "lr")
        try:
            beta1, beta2 = betas
        except (TypeError, ValueError):
            raise TypeError(f"Adam: betas must be a pair (beta1, beta2), got {betas!r}") from None
        self.beta1 = _number(beta1, who, "beta1")
        self.beta2 = _number(beta2, who, "beta2")
        self.eps = _number(eps, who, "eps")
        self.set_params(params)

    def set_params(self, params) -> None:
        """Sets the parameters to optimize (a list of arrays, or None) and
        resets the moments."""
        self.params = _check_params(params, "Adam")
        self.reset_internal_state()

    def reset_internal_state(self) -> None:
        """Zeroes the moments and the step count."""
        self.m = [np.zeros(p._buffer.shape, p._buffer.dtype) for p in self.params]
        self.v = [np.zeros(p._buffer.shape, p._buffer.dtype) for p in self.params]
        self.t = 0

    def step(self, grad) -> None:
        """One step: updates every parameter in place from its gradient
        (``grad``: a list of arrays matching ``params``)."""
        grads = _check_grads(self.params, grad, "Adam")
        t = self.t + 1

        def update(k, p, g):
            f = p.dtype.type
            self.m[k] = f(self.beta1) * self.m[k] + f(1.0 - self.beta1) * g
            self.v[k] = f(self.beta2) * self.v[k] + f(1.0 - self.beta2) * g * g
            m_hat = self.m[k] / f(1.0 - self.beta1 ** t)
            v_hat = self.v[k] / f(1.0 - self.beta2 ** t)
            return p - f(self.lr) * m_hat / (np.sqrt(v_hat) + f(self.eps))
        _update("Adam", self.params, grads, update)
        self.t = t


def __getattr__(name: str):
    # Only called for names this module lacks: Warp code asking for one gets a
    # NotInAdjitError naming it (errors.missing_name), never a bare AttributeError.
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name == "linear":  # Warp's warp.optim.linear (adjit.optim_linear), imported on first use
        from . import optim_linear
        return optim_linear
    import sys as _sys
    from .errors import missing_name
    raise missing_name(__name__, name, _sys._getframe(1))
