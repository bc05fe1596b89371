"""The builtin registry: the entry type, registration and lookup.

Each builtin function of the kernel language is one ``Builtin`` entry: what
it accepts and returns (``infer``, which raises ``TypeError`` with a readable
reason), how it is emitted (``emit``), whether it is differentiable, and its
documentation. The frontend type-checks calls with ``infer`` before emitting
any IR; docs and the gradient fuzzer read the same entries
(``adjit.builtin_registry()``). The rooms of ``adjit.builtins`` add their
entries with ``add_builtin`` when they are imported.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .. import types as T
from .._deferred import deferred_import
from ..errors import AdjitError

ir = deferred_import("mlir.ir")  # (annotations only)

#: The default of a static parameter that must be given.
REQUIRED = object()


@dataclass(frozen=True)
class StaticParam:
    """A compile-time parameter of a builtin, passed by keyword (``identity(n=3, dtype=float)``).

    ``kind`` is ``"int"`` (a constant integer) or ``"dtype"`` (a scalar type:
    ``float``, ``int``, ``adjit.float64``, ...). Its value is passed to the
    builtin's ``infer`` and ``emit`` as a keyword argument.
    """

    name: str
    kind: str
    default: object = REQUIRED


@dataclass
class Builtin:
    """One builtin function of the kernel language.

    ``infer(types, **static)`` returns the result type (or raises ``TypeError``
    with a readable reason) and ``emit(values, types, result, **static)`` builds
    the MLIR; ``static`` holds the values of the builtin's ``static_params``.
    """

    name: str
    doc: str
    infer: Callable[..., T.Type]
    emit: Callable[..., ir.Value]
    differentiable: bool = True
    #: For each argument, the open interval of inputs on which the builtin is
    #: smooth (used to draw test inputs away from kinks and poles).
    domain: tuple[tuple[float, float], ...] | None = None
    #: Whether literal arguments adopt the type of the other arguments.
    unify_literals: bool = True
    #: Compile-time keyword parameters (see StaticParam).
    static_params: tuple[StaticParam, ...] = ()
    #: Whether the static parameters may also be given positionally (for
    #: builtins that take no other arguments: ``identity(3, float)``).
    static_positional: bool = False
    #: Warp's names of the builtin's parameters in order, value and static
    #: ones alike (``cast``: a, dtype): a call may give each positionally or
    #: by its name, as in Warp (``cast(x, float32)``, ``cast(a=x, dtype=float32)``).
    params: tuple[str, ...] = ()
    #: Whether the builtin takes arrays among its arguments (the atomics).
    array_args: bool = False
    #: types -> for each argument, the type a literal there adopts (or None);
    #: overrides unify_literals.
    literal_types: Callable[[list[T.Type]], list[T.Type | None]] | None = None
    #: The Python operator the builtin is (``mul`` is ``*``): calls go through
    #: the operator's rules, literal folding and unification included.
    operator: type | None = None
    #: The arguments the call writes (Warp passes them by reference): a
    #: random draw's state (0,), transform_set_translation's transform,
    #: quat_to_axis_angle's outputs. ``emit`` returns (value or None, [the
    #: new value of each]) and the frontend rebinds the argument names.
    rebinds: tuple[int, ...] = ()
    #: A random draw: the argument it writes is a generator state, which may
    #: be a temporary (``randf(rand_init(3))``), and a call from Python
    #: leaves it unchanged (Warp's rule).
    advances_state: bool = False
    #: A tile builtin, whose arguments are not all values (shapes and offsets
    #: as tuples, tile_map's function): adjit/compiler/tiles.py emits its
    #: calls from the argument nodes bound to ``params`` (``defaults`` for
    #: those not given); ``infer`` and ``emit`` are not used.
    tile: bool = False
    defaults: dict | None = None
    #: ``builtin[params]`` as a type annotation (Warp's ``wp.tile[float, M, N]``,
    #: which is both the ``tile`` builtin and the tile type): params -> a type.
    subscript: Callable[[object], object] | None = None
    #: What a call from Python returns instead of evaluating the builtin
    #: (``tile_stack(capacity=, dtype=)``: the stack's type, an annotation).
    host: Callable[..., object] | None = None

    def __call__(self, *args, **kwargs):
        """Evaluated on the host, as in a kernel (adjit/host_calls.py sets the hook)."""
        if self.host is not None:
            return self.host(*args, **kwargs)
        if host_call is None:
            raise AdjitError(f"adjit.{self.name} can only be called inside an @adjit.kernel or @adjit.func here "
                             "(import adjit to evaluate builtins on the host)")
        return host_call(self, args, kwargs)

    def __getitem__(self, params):
        if self.subscript is None:
            raise TypeError(f"adjit builtin {self.name} is not subscriptable (it is not a type)")
        return self.subscript(params)

    def __repr__(self):
        return f"<adjit builtin {self.name}>"


_REGISTRY: dict[str, Builtin] = {}

#: Evaluates a builtin called from Python (set by adjit.host_calls).
host_call = None

#: The order of ``registry()``: the builtins as they were registered when they
#: all lived in one module, before they moved into rooms by topic. The gradient
#: fuzzer draws builtins by their index in this order (its CI examples are
#: derandomized), so the order is kept. Builtins not listed here follow in the
#: order they are registered: a new builtin need not be added.
_ORDER = (
    "sqrt", "exp", "log", "sin", "cos", "tanh", "floor", "ceil", "round", "rint", "trunc", "frac", "degrees",
    "radians", "lerp", "smoothstep", "step", "isnan", "isinf", "isfinite", "abs", "min", "max", "dot", "length",
    "length_sq", "normalize", "cross", "tan", "asin", "acos", "atan", "sinh", "cosh", "log2", "log10", "cbrt",
    "erf", "erfc", "erfinv", "erfcinv", "pow", "atan2", "copysign", "sign", "clamp", "where", "select",
    "transpose", "trace", "determinant", "inverse", "outer", "diag", "stop_gradient", "mul", "identity",
    "quat_identity", "quat_inverse", "quat_rotate", "quat_rotate_inv", "quat_to_matrix", "quat_from_matrix",
    "quat_from_axis_angle", "atomic_add", "atomic_sub", "atomic_min", "atomic_max", "atomic_exch", "atomic_cas",
    "atomic_and", "atomic_or", "atomic_xor", "cw_mul", "cw_div", "norm_l1", "norm_l2", "norm_huber",
    "norm_pseudo_huber", "smooth_normalize", "skew", "get_diag", "matrix_from_rows", "matrix_from_cols", "argmin",
    "argmax", "spatial_top", "spatial_bottom", "spatial_dot", "spatial_cross", "spatial_cross_dual",
    "transform_identity", "transform_get_translation", "transform_get_rotation", "transform_multiply",
    "transform_point", "transform_vector", "transform_inverse", "transform_to_matrix", "transform_from_matrix",
    "transform_compose", "transform_twist", "transform_wrench", "velocity_at_point", "add", "sub", "div",
    "floordiv", "mod", "bit_and", "bit_or", "bit_xor", "lshift", "rshift", "neg", "pos", "invert", "unot", "svd3",
    "svd2", "eig3", "qr3", "quat_slerp", "quat_rpy", "quat_to_rpy", "quat_twist", "quat_twist_angle",
    "quat_twist_angle_signed", "quat_from_euler", "quat_to_euler", "ddot", "lower_bound",
    "transform_set_translation", "transform_set_rotation", "quat_to_axis_angle", "transform_decompose",
    "bit_count", "nonzero", "rand_init", "randi", "randu", "randf", "randn", "sample_unit_ring",
    "sample_unit_disk", "sample_unit_square", "sample_unit_cube", "sample_unit_sphere_surface",
    "sample_unit_sphere", "sample_unit_hemisphere_surface", "sample_unit_hemisphere", "sample_triangle",
    "sample_cdf", "poisson", "noise", "pnoise", "curlnoise", "block_dim",
)


def registry() -> dict[str, Builtin]:
    """All builtins by name (a copy), in the order of ``_ORDER``."""
    ordered = {name: _REGISTRY[name] for name in _ORDER if name in _REGISTRY}
    ordered.update(_REGISTRY)  # the others, after them, in registration order
    return ordered


def add_builtin(name, doc, infer, emit, **kwargs) -> Builtin:
    """Registers the builtin ``name`` (keyword arguments: the fields of ``Builtin``)."""
    entry = Builtin(name, doc, infer, emit, **kwargs)
    _REGISTRY[name] = entry
    return entry


def lookup(name: str) -> Builtin | None:
    """The builtin ``name``, or None."""
    return _REGISTRY.get(name)
