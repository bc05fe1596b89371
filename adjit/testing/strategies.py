"""Hypothesis strategies: adjit arrays for users' tests, and generated
kernel programs for the gradient fuzzer."""
from __future__ import annotations

import numpy as np
from hypothesis import assume, strategies as st
from hypothesis.extra import numpy as hnp

from .. import types as T
from ..runtime.array import Array, array
from . import _generate as G
from . import _oracle as O


def arrays(dtype, shape, elements=None, requires_grad: bool = True) -> st.SearchStrategy:
    """Adjit arrays of ``dtype`` elements (a scalar, vector or matrix type).

    ``shape`` is an int, a tuple or a strategy of either; ``elements`` draws
    each scalar component (default: finite floats in [-1, 1], or integers in
    [-100, 100] for integer types). Drawn arrays print as the ``adjit.array``
    call that rebuilds them, so falsifying examples can be pasted back.
    """
    t = T.value_type_of(dtype)
    scalar = T.scalar_of(t)
    comp = () if isinstance(t, T.ScalarType) else t.shape
    if elements is None:
        if scalar.is_float:
            elements = st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False, width=scalar.bits)
        else:
            elements = st.integers(-100, 100)
    shapes = shape if isinstance(shape, st.SearchStrategy) else st.just(shape)

    def build(s):
        s = (int(s),) if np.ndim(s) == 0 else tuple(int(x) for x in s)
        return hnp.arrays(scalar.np_dtype, s + comp, elements=elements).map(
            lambda data: array(data, dtype=t, requires_grad=requires_grad))

    return shapes.flatmap(build)


def _pretty_array(a: Array, printer, cycle) -> None:
    scalar = T.scalar_of(a.dtype)
    printer.text(f"adjit.array(np.array({a.numpy().tolist()!r}, dtype=np.{scalar.np_dtype.name}), "
                 f"dtype=adjit.{a.dtype.name}, requires_grad={a.requires_grad})")


try:  # Hypothesis' printer of falsifying examples
    from hypothesis.vendor.pretty import for_type_by_name
    for_type_by_name(Array.__module__, "Array", _pretty_array)
except ImportError:  # pragma: no cover - an older or newer Hypothesis
    pass


@st.composite
def programs(draw, config: G.GenConfig = G.GenConfig(), tolerances: O.Tolerances = O.DEFAULT_TOLERANCES):
    """Generated programs (device functions, kernels, launches, inputs) that
    are fair gradient tests: examples that come close to a kink or branch
    switch, or have large intermediate values, are discarded (``assume``)."""
    program = G.Generator(draw, config).program()
    program.evaluate()
    assume(O.well_conditioned(program, tolerances) is None)
    return program
