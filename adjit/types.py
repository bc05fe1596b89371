"""The kernel language's types: scalars, vectors, matrices and arrays.

A type object serves three purposes: a kernel annotation (``x: adjit.vec3``),
a constructor inside kernels (``adjit.vec3(1.0, 2.0, 3.0)``) and outside
them (it returns a numpy value), and the source of its MLIR type.
"""
from __future__ import annotations

import copy
import sys
import typing

import numpy as np

from ._deferred import deferred_import

ir = deferred_import("mlir.ir")  # only types' .mlir() methods need it


class Type:
    """Base of the kernel-language types."""

    name: str

    def __repr__(self) -> str:
        return self.name

    def mlir(self) -> ir.Type:
        """The MLIR type of a value of this type (needs an active context)."""
        raise NotImplementedError

    # ``wp.array(dtype=float) | None`` in annotations, as with Warp's type
    # classes: a typing.Union, whose Optional form annotates the type itself
    # (without_none; a launch may pass None for an array).
    def __or__(self, other):
        return typing.Union[self, other]

    def __ror__(self, other):
        return typing.Union[other, self]

    # ``issubclass(dtype, wp.float32)``, ``issubclass(dtype, wp.float16 | wp.float32)``
    # (typing.Union asks each member), as with Warp's type classes: adjit's
    # types are values, each its own only subclass (a subclassed type equals its base).
    def __subclasscheck__(self, sub) -> bool:
        if not isinstance(sub, (Type, type)):
            raise TypeError("issubclass() arg 1 must be a class or an adjit type")
        return sub == self


def without_none(annotation):
    """``X`` for the annotations ``Optional[X]``, ``X | None`` and
    ``Union[X, None]``; any other annotation as it is."""
    import types as _types
    if typing.get_origin(annotation) in (typing.Union, _types.UnionType):
        rest = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(rest) == 1 and len(typing.get_args(annotation)) == 2:
            return rest[0]
    return annotation


class ScalarType(Type):
    """A float (16, 32 or 64 bits), a signed or unsigned integer (8 to 64
    bits) or bool."""

    def __init__(self, name: str, np_dtype, kind: str, bits: int, signed: bool = True):
        self.name = name
        self.np_dtype = np.dtype(np_dtype)
        self.kind = kind  # "float", "int" or "bool"
        self.bits = bits
        #: (integers) two's complement signed, or unsigned: the same MLIR
        #: type (signless), other ops (divui, cmpi ult, shrui, extui, uitofp)
        self.signed = signed

    @property
    def __name__(self) -> str:  # Warp's types are classes: wp.float32.__name__ == "float32"
        return self.name

    @property
    def _type_(self):  # Warp's scalar types are ctypes-backed: wp.float32._type_ is ctypes.c_float
        return type_ctype(self)

    @property
    def is_unsigned(self) -> bool:
        return self.kind == "int" and not self.signed

    @property
    def range(self) -> tuple[int, int]:
        """(min, max) of an integer type."""
        if self.signed:
            return -(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1
        return 0, (1 << self.bits) - 1

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        return self.kind == "int"

    @property
    def is_bool(self) -> bool:
        return self.kind == "bool"

    def mlir(self) -> ir.Type:
        if self.kind == "float":
            return {16: ir.F16Type, 32: ir.F32Type, 64: ir.F64Type}[self.bits].get()
        return ir.IntegerType.get_signless(self.bits)

    def host(self, values) -> np.ndarray:
        """``values`` as a numpy array in this type's host storage."""
        return np.asarray(values, dtype=self.np_dtype)

    def __call__(self, value=0):
        return self.np_dtype.type(value)

    def __reduce__(self):
        # Unpickles to the interned instance (types compare by identity).
        return (_scalar_named, (self.name,))


float16 = ScalarType("float16", np.float16, "float", 16)


def _ml_dtypes_bfloat16():
    """``ml_dtypes.bfloat16`` where the package is installed, else None."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    return ml_dtypes.bfloat16


def float32_to_bfloat16_bits(values) -> np.ndarray:
    """The bfloat16 bit patterns (uint16) of ``values`` rounded to float32 and
    then to bfloat16, to nearest even; a NaN stays a (quiet) NaN with its
    sign, infinities and signed zeros are kept, subnormals round like any
    other value (as Warp's float_to_bfloat16_bits)."""
    f = np.asarray(values, dtype=np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = np.isnan(f)
    result = np.where(nan, (bits >> 16) | 0x40, rounded)
    return result.astype(np.uint16)


def bfloat16_bits_to_float32(bits) -> np.ndarray:
    """The float32 values of bfloat16 bit patterns (exact)."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


class BFloat16Type(ScalarType):
    """bfloat16 (Warp's ``wp.bfloat16``): float32's sign and 8-bit exponent
    with 7 stored mantissa bits, 2 bytes. Arithmetic is float32 rounded to
    bfloat16 after each operation (to nearest even). numpy has no bfloat16:
    on the host its arrays are ``ml_dtypes.bfloat16`` where ml_dtypes is
    installed, else uint16 bit patterns (as Warp's ``array.numpy()``)."""

    def __init__(self):
        super().__init__("bfloat16", _ml_dtypes_bfloat16() or np.uint16, "float", 16)

    def mlir(self) -> ir.Type:
        return ir.BF16Type.get()

    def host(self, values) -> np.ndarray:
        """``values`` in this type's host storage: uint16 values (and
        ml_dtypes.bfloat16 ones) are taken as bit patterns, anything else
        is rounded to bfloat16 (through float32, to nearest even)."""
        a = np.asarray(values)
        if a.dtype == np.uint16 or a.dtype == self.np_dtype:
            return a.view(self.np_dtype)
        return float32_to_bfloat16_bits(a).view(self.np_dtype)

    def to_float32(self, values) -> np.ndarray:
        """Host values of this type (bits or ml_dtypes) as float32."""
        return bfloat16_bits_to_float32(np.asarray(values).view(np.uint16))

    def __call__(self, value=0):
        # A bfloat16 scalar (ml_dtypes), else the float32 of the rounded value
        # (uint16 would read as an integer where it is used as a number).
        bits = float32_to_bfloat16_bits(float(value))
        if self.np_dtype != np.uint16:
            return bits.view(self.np_dtype)[()]
        return bfloat16_bits_to_float32(bits)[()]


bfloat16 = BFloat16Type()
float32 = ScalarType("float32", np.float32, "float", 32)
float64 = ScalarType("float64", np.float64, "float", 64)
int8 = ScalarType("int8", np.int8, "int", 8)
int16 = ScalarType("int16", np.int16, "int", 16)
int32 = ScalarType("int32", np.int32, "int", 32)
int64 = ScalarType("int64", np.int64, "int", 64)
uint8 = ScalarType("uint8", np.uint8, "int", 8, signed=False)
uint16 = ScalarType("uint16", np.uint16, "int", 16, signed=False)
uint32 = ScalarType("uint32", np.uint32, "int", 32, signed=False)
uint64 = ScalarType("uint64", np.uint64, "int", 64, signed=False)
bool_ = ScalarType("bool", np.bool_, "bool", 1)
#: bfloat16 comes last: without ml_dtypes its host dtype is uint16's.
SCALAR_TYPES = (float32, float64, int32, int64, bool_, float16, int8, int16, uint8, uint16, uint32, uint64,
                bfloat16)


def _scalar_named(name: str) -> ScalarType:
    """The scalar type called ``name`` (for unpickling)."""
    for s in SCALAR_TYPES:
        if s.name == name:
            return s
    raise TypeError(f"no adjit scalar type is called {name!r}")


#: The most scalars in a vector or matrix a kernel takes (an 8x8 float64
#: matrix passed by value fills the runtime's argument slot,
#: cpp/runtime/KernelArgs.h); vectors have at least 2 components and
#: matrices 2 rows and columns there. Shorter vectors (Warp's vector(0) and
#: vector(1), what slicing can make) and larger types can be declared and
#: used on the host; a kernel using one is a located KernelTypeError.
MAX_COMPONENTS = 64
#: The largest extents numpy constants read by kernels are taken as vectors
#: and matrices of (longer ones are not composite constants).
MAX_CONSTANT_EXTENT = 8


class NotInKernelsError(TypeError):
    """A vector or matrix type that exists on the host but no kernel takes."""


def _check_kernel_shape(t, shape) -> None:
    if min(shape) < 2 or int(np.prod(shape)) > MAX_COMPONENTS:
        what = "vectors of 2 to" if len(shape) == 1 else "matrices of at least 2x2 and at most"
        raise NotInKernelsError(f"{t} cannot be used in kernels: adjit's kernels take {what} {MAX_COMPONENTS} "
                                "scalars")


class _SubclassedType(type):
    """The metaclass behind ``class vec5(wp.types.vector(length=5, dtype=float)): pass``.

    Warp's vector and matrix types are classes, which Warp code subclasses to
    name a type; adjit's are instances (``VectorType``, ``MatrixType``). Such
    a class statement gets this metaclass through the type's
    ``__mro_entries__``, and makes a copy of the base type under the class's
    name instead of a class: the same type for kernels and arrays (equal to
    its base, as Warp's ``types_equal`` has it), built with ``vec5(...)`` in
    kernels and on the host. A body with members other than a docstring is a
    TypeError (adjit's types carry no methods)."""

    def __new__(mcs, name, bases, namespace):
        if "__orig_bases__" not in namespace:  # _SubclassBase itself
            return super().__new__(mcs, name, bases, namespace)
        base, *others = namespace["__orig_bases__"]
        if others:
            raise TypeError(f"class {name}: a vector or matrix type can only be subclassed alone, got the bases "
                            f"{namespace['__orig_bases__']}")
        members = sorted(k for k in namespace if not (k.startswith("__") and k.endswith("__")))
        if members:
            raise TypeError(f"class {name}({base.__name__}): adjit's vector and matrix types have no methods, so "
                            f"a subclass can only rename its base (`pass` or a docstring), got {members}")
        t = copy.copy(base)
        t.name = name
        t.subclass_name = name
        t.__module__ = namespace.get("__module__")
        t.__qualname__ = namespace.get("__qualname__", name)
        t.__doc__ = namespace.get("__doc__")
        return t


class _SubclassBase(metaclass=_SubclassedType):
    """What ``__mro_entries__`` puts in place of a vector or matrix type among a class's bases."""


def _mro_entries(self, bases):
    return (_SubclassBase,)


#: The scalar suffix of Warp's type class names (vec3f, mat33d, vec2ui, ...).
_WARP_SUFFIX = {"float16": "h", "float32": "f", "float64": "d", "int8": "b", "uint8": "ub", "int16": "s",
                "uint16": "us", "int32": "i", "uint32": "ui", "int64": "l", "uint64": "ul"}


class VectorType(Type):
    """A small vector of 2 to MAX_COMPONENTS scalars, a value (never shared)."""

    COMPONENTS = "xyzw"

    def __init__(self, length: int, dtype: ScalarType, name: str | None = None):
        if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 0:
            raise TypeError(f"vector length must be an int >= 0, got {length!r}")
        length = int(length)
        self.length = length
        self.dtype = dtype
        self.name = name or f"vector({length}, {dtype})"

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.length,)

    # Warp's vector types are classes; these are the attributes Warp code
    # reads from them (``wp.vec3.__name__ == "vec3f"``, ``_length_``, ...).
    _WARP_KIND = ("vec", "vec_t")

    #: The class name of a subclass (``class vec5(vector(5, float)): pass``), see _SubclassedType.
    subclass_name = None
    __mro_entries__ = _mro_entries

    @property
    def __name__(self) -> str:
        if self.subclass_name is not None:
            return self.subclass_name
        base, _ = self._WARP_KIND
        return f"{base}{self.length if base == 'vec' else ''}{_WARP_SUFFIX.get(self.dtype.name, self.dtype.name)}"

    @property
    def _length_(self) -> int:
        return self.length

    @property
    def _type_(self):  # the ctypes type of the components, as Warp's
        return type_ctype(self.dtype)

    @property
    def _shape_(self) -> tuple[int, ...]:
        return self.shape

    @property
    def _wp_scalar_type_(self) -> "ScalarType":
        return self.dtype

    @property
    def _wp_generic_type_str_(self) -> str:
        return self._WARP_KIND[1]

    @property
    def _wp_type_params_(self) -> list:
        return [self.length, self.dtype] if self._WARP_KIND[0] == "vec" else [self.dtype]

    def mlir(self) -> ir.Type:
        _check_kernel_shape(self, (self.length,))
        return ir.VectorType.get([self.length], self.dtype.mlir())

    def __eq__(self, other):
        # A quaternion is not a 4-vector: the class takes part in equality.
        return type(other) is type(self) and (other.length, other.dtype) == (self.length, self.dtype)

    def __hash__(self):
        return hash((type(self).__name__, self.length, self.dtype.name))

    def __reduce__(self):
        # Unpickles to the interned instance (``vector()`` interns).
        return (vector, (self.length, self.dtype))

    def __call__(self, *values):
        if len(values) == 1:
            values = values * self.length if np.ndim(values[0]) == 0 else tuple(values[0])
        if len(values) == 0:
            values = (0,) * self.length
        return np.array(values, dtype=self.dtype.np_dtype).reshape(self.length).view(CompositeValue)


class MatrixType(Type):
    """A small row-major matrix of 2 to MAX_COMPONENTS rows and columns, a value."""

    def __init__(self, rows: int, cols: int, dtype: ScalarType, name: str | None = None):
        if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 1 for n in (rows, cols)):
            raise TypeError(f"matrix shape must be two ints >= 1, got ({rows!r}, {cols!r})")
        rows, cols = int(rows), int(cols)
        self.rows = rows
        self.cols = cols
        self.dtype = dtype
        self.name = name or f"matrix(({rows}, {cols}), {dtype})"

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.rows, self.cols)

    subclass_name = None  # see VectorType
    __mro_entries__ = _mro_entries

    @property
    def __name__(self) -> str:  # as Warp's matrix classes: "mat33f"
        if self.subclass_name is not None:
            return self.subclass_name
        return f"mat{self.rows}{self.cols}{_WARP_SUFFIX.get(self.dtype.name, self.dtype.name)}"

    @property
    def _length_(self) -> int:
        return self.rows * self.cols

    @property
    def _type_(self):  # the ctypes type of the components, as Warp's
        return type_ctype(self.dtype)

    @property
    def _shape_(self) -> tuple[int, ...]:
        return self.shape

    @property
    def _wp_scalar_type_(self) -> ScalarType:
        return self.dtype

    _wp_generic_type_str_ = "mat_t"

    @property
    def _wp_type_params_(self) -> list:
        return [self.rows, self.cols, self.dtype]

    def row_type(self) -> VectorType:
        return vector(self.cols, self.dtype)

    def mlir(self) -> ir.Type:
        _check_kernel_shape(self, (self.rows, self.cols))
        return ir.VectorType.get([self.rows, self.cols], self.dtype.mlir())

    def __eq__(self, other):
        return isinstance(other, MatrixType) and (other.rows, other.cols, other.dtype) == (
            self.rows, self.cols, self.dtype)

    def __hash__(self):
        return hash(("mat", self.rows, self.cols, self.dtype.name))

    def __reduce__(self):
        return (matrix, ((self.rows, self.cols), self.dtype))

    def __call__(self, *values):
        if len(values) == 0:
            values = (0,) * (self.rows * self.cols)
        elif len(values) == 1 and np.ndim(values[0]) == 0:  # one scalar fills the matrix, as Warp's
            values = values * (self.rows * self.cols)
        return np.array(values, dtype=self.dtype.np_dtype).reshape(self.rows, self.cols).view(CompositeValue)


#: The most scalars a fixed-size local array holds (its value is one SSA
#: vector, kept in registers: a bigger buffer belongs in an array argument).
MAX_LOCAL_ARRAY_SCALARS = 256


class LocalArrayType(Type):
    """A per-thread fixed-size array, ``zeros(shape, dtype)`` in a kernel: a
    value (``b = a`` copies it, as in Warp), held as one
    ``vector<N x scalar>`` with the elements flattened row-major and a vector
    or matrix element's components inline (N = prod(shape) * components)."""

    def __init__(self, shape: tuple[int, ...], dtype):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.scalar = dtype if isinstance(dtype, ScalarType) else dtype.dtype
        self.width = int(np.prod(dtype.shape)) if isinstance(dtype, (VectorType, MatrixType)) else 1
        self.size = int(np.prod(self.shape)) * self.width
        dims = ", ".join(map(str, self.shape)) + ("," if len(self.shape) == 1 else "")
        self.name = f"zeros(({dims}), {dtype})"

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def mlir(self) -> ir.Type:
        return ir.VectorType.get([self.size], self.scalar.mlir())

    def __eq__(self, other):
        return isinstance(other, LocalArrayType) and (other.shape, other.dtype) == (self.shape, self.dtype)

    def __hash__(self):
        return hash(("zeros", self.shape, self.dtype))


#: The most scalars a tile holds. A tile is one SSA vector, its operations
#: unrolled over its elements (see adjit/compiler/tiles.py), so its size
#: bounds the kernel's code size and compile time: a 32 x 32 tile's load and
#: store compile in about 14 s on a 2-core machine, a 64 x 64 one's in minutes.
MAX_TILE_SCALARS = 1024

#: Where Warp keeps a tile (``storage=``). On the CPU, where a block is one
#: thread, both are the thread's registers (its stack when they spill).
TILE_STORAGES = ("register", "shared")


class TileType(Type):
    """A tile: a block-wide array of ``shape`` elements (Warp's ``wp.tile``),
    a value. Its elements are scalars, vectors or matrices (``dtype``; Warp's
    tiles of vec3 and mat33 too). On the CPU a block is one thread
    (``block_dim()`` is 1, as in Warp), so the tile is held by that thread as
    one ``vector<shape x element shape x scalar>``. ``storage`` is recorded
    (Warp's types carry it) and does not change the type's equality or
    layout."""

    def __init__(self, shape: tuple[int, ...], dtype, storage: str = "register"):
        shape = tuple(shape)
        if not 1 <= len(shape) <= 4 or any(isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1
                                           for n in shape):
            raise TypeError(f"a tile's shape must be 1 to 4 positive ints, got {shape!r}")
        scalar = scalar_of(dtype) if isinstance(dtype, (ScalarType, VectorType, MatrixType)) else None
        if scalar is None or scalar.is_bool:
            raise TypeError(f"tiles of {dtype} are not supported yet (tiles of int and float scalars, vectors and "
                            "matrices are)")
        if storage not in TILE_STORAGES:
            raise TypeError(f"a tile's storage is 'register' or 'shared', got {storage!r}")
        self.shape = tuple(int(n) for n in shape)
        self.dtype = dtype
        self.storage = storage
        self.size = int(np.prod(self.shape))
        #: the scalars of one element: () for a scalar tile, (3,) for vec3, (3, 3) for mat33
        self.elem_shape = () if isinstance(dtype, ScalarType) else tuple(dtype.shape)
        #: the element's scalar type (the dtype of a scalar tile)
        self.scalar = scalar
        scalars = self.size * int(np.prod(self.elem_shape, dtype=np.int64))
        if scalars > MAX_TILE_SCALARS:
            raise TypeError(f"a tile of shape {self.shape} of {dtype} holds {scalars} scalars; adjit's tiles hold at "
                            f"most {MAX_TILE_SCALARS} for now: their operations are unrolled, so bigger ones take "
                            "minutes to compile (split the work into smaller tiles; see docs/tiles.md)")
        dims = ", ".join(map(str, self.shape)) + ("," if len(self.shape) == 1 else "")
        self.name = f"tile(shape=({dims}), dtype={dtype})"

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def composite(self) -> bool:
        """Whether the elements are vectors or matrices."""
        return bool(self.elem_shape)

    def mlir(self) -> ir.Type:
        return ir.VectorType.get(list(self.shape) + list(self.elem_shape), self.scalar.mlir())

    def __eq__(self, other):
        return isinstance(other, TileType) and (other.shape, other.dtype) == (self.shape, self.dtype)

    def __hash__(self):
        return hash(("tile", self.shape, self.dtype))


#: The largest count each scalar type holds exactly (a tile stack keeps its
#: count in its elements' type; see TileStackType).
_EXACT_COUNT = {"int8": 127, "uint8": 255, "float16": 2048, "bfloat16": 256}


class TileStackType(TileType):
    """Warp's ``tile_stack(capacity=, dtype=)``: a block-wide stack of up to
    ``capacity`` elements of ``dtype`` (a scalar, vector or matrix type). On
    the CPU a block is one thread, so a stack is a value of that thread, as
    a tile is: one ``vector<capacity + 1 x element x scalar>`` whose last
    element holds the count (in every component, converted to the scalar
    type: exact for the capacities allowed). The builtins that change it
    (push, pop, clear) rebind its local, so loops carry it like a tile."""

    def __init__(self, capacity: int, dtype):
        if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) or capacity <= 0:
            raise ValueError(f"tile_stack() requires capacity to be a positive integer, got {capacity!r}")
        capacity = int(capacity)
        scalar = scalar_of(dtype) if isinstance(dtype, (ScalarType, VectorType, MatrixType)) else None
        if scalar is not None and capacity > _EXACT_COUNT.get(scalar.name, capacity):
            raise ValueError(f"a tile_stack of {dtype} holds at most {_EXACT_COUNT[scalar.name]} elements in adjit "
                             f"(its count is kept in {scalar}), got capacity {capacity}")
        super().__init__((capacity + 1,), dtype)
        self.capacity = capacity
        self.name = f"tile_stack(capacity={capacity}, dtype={dtype})"

    def __eq__(self, other):
        return isinstance(other, TileStackType) and (other.capacity, other.dtype) == (self.capacity, self.dtype)

    def __hash__(self):
        return hash(("tile_stack", self.capacity, self.dtype))


def tile_stack_type(capacity=None, dtype=None) -> TileStackType:
    """``adjit.tile_stack(capacity=, dtype=)`` called from Python: the type
    (a @func parameter's annotation, as Warp's)."""
    if dtype is None:
        raise TypeError("tile_stack() missing required keyword argument 'dtype'")
    if capacity is None:
        raise TypeError("tile_stack() missing required keyword argument 'capacity'")
    if not isinstance(dtype, (VectorType, MatrixType)):
        try:
            dtype = scalar_type_of(dtype)
        except TypeError:
            raise TypeError(f"tile_stack(): dtype must be a scalar, vector or matrix type, got {dtype!r}") from None
    return TileStackType(capacity, dtype)


def tile_annotation(params):
    """Warp's ``wp.tile[dtype, M, N]`` (or ``[dtype, (M, N)]``): the tile
    type, annotating @func parameters; ``wp.tile[dtype]``: a tile of that
    dtype and any shape (generic, as ``typing.Any``: each call's tile)."""
    if not isinstance(params, tuple):
        params = (params,)
    if not params:
        raise TypeError("adjit.tile[...] needs a dtype: tile[float, M, N]")
    dtype, rest = params[0], params[1:]
    if len(rest) == 1 and isinstance(rest[0], tuple):
        rest = rest[0]
    dtype = dtype if isinstance(dtype, (VectorType, MatrixType)) else scalar_type_of(dtype)
    if not rest:
        return TypePattern(f"tile[{dtype}]", TileType, dtype=dtype)
    return TileType(rest, dtype)


class fixedarray(LocalArrayType):  # noqa: N801 (Warp's name)
    """Warp's ``fixedarray(dtype=..., shape=...)``: the type of a fixed-size
    per-thread array (what ``zeros(shape, dtype)`` makes in a kernel), for
    annotating @func parameters and results. Without a shape (or with
    ``dtype=typing.Any``) it is generic: it takes a local array of any shape
    (any dtype). A local array passed to a func is passed by reference, as in
    Warp: the func's writes to it change the caller's array."""

    def __init__(self, dtype=typing.Any, shape=None):
        if isinstance(shape, (int, np.integer)):
            shape = (int(shape),)
        if shape is not None:
            shape = tuple(shape)
            if not shape or any(isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1
                                for n in shape):
                raise TypeError(f"fixedarray shape must be positive ints, got {shape!r}")
            shape = tuple(int(n) for n in shape)
        if dtype is not typing.Any:
            dtype = value_type_of(dtype)
        if shape is not None and dtype is not typing.Any:
            super().__init__(shape, dtype)
            if self.size > MAX_LOCAL_ARRAY_SCALARS:
                raise TypeError(f"{self} holds {self.size} scalars; a local array holds at most "
                                f"{MAX_LOCAL_ARRAY_SCALARS}")
            return
        self.shape, self.dtype = shape, (None if dtype is typing.Any else dtype)
        self.name = f"fixedarray(dtype={self.dtype or 'Any'}, shape={shape or 'Any'})"

    @property
    def is_generic(self) -> bool:
        return self.shape is None or self.dtype is None

    def accepts(self, t) -> bool:
        """Whether a local array of type ``t`` fits this annotation."""
        return isinstance(t, LocalArrayType) and self.shape in (None, t.shape) and self.dtype in (None, t.dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape) if self.shape is not None else 0

    def mlir(self):
        if self.is_generic:
            raise TypeError(f"{self} is generic (an annotation only)")
        return super().mlir()

    def __eq__(self, other):
        if self.is_generic or getattr(other, "is_generic", False):
            return self is other or (isinstance(other, fixedarray) and (other.shape, other.dtype) ==
                                     (self.shape, self.dtype))
        return super().__eq__(other)

    def __hash__(self):
        return hash(("zeros", self.shape, self.dtype))


class Reference:
    """``ref[T]``: a @func parameter passed by reference (Warp's
    ``wp.ref[T]``). The func's assignments to it change the caller's
    variable, array element, component or struct field."""

    def __init__(self, value_type):
        self.value_type = value_type

    @property
    def dtype(self):
        return self.value_type

    def __eq__(self, other):
        return isinstance(other, Reference) and other.value_type == self.value_type

    def __hash__(self):
        return hash(("ref", self.value_type))

    def __repr__(self):
        return f"ref[{self.value_type}]"

    __str__ = __repr__


class ref:  # noqa: N801 (Warp's name)
    """Pass-by-reference parameter annotation of @func parameters:
    ``def inc(x: ref[float]): x += 1.0`` adds one to the caller's ``x``. The
    argument must be assignable: a local variable, an array element, a
    vector/matrix component, a struct field or another ref parameter (not a
    literal, an arithmetic result or a call's result). Not for kernel
    parameters."""

    def __class_getitem__(cls, dtype):
        return Reference(dtype)


_VECTORS: dict[tuple[int, str], VectorType] = {}
_MATRICES: dict[tuple[int, int, str], MatrixType] = {}


class TypePattern:
    """A generic annotation: a family of kernel types a generic kernel or
    func parameter takes (Warp's ``vector(length=Any, dtype=Any)``,
    ``matrix(shape=(Any, Any), dtype=Any)``, ``Int``, ``Float``,
    ``Scalar``). Like ``typing.Any``, each launch or call instantiates the
    kernel or func for its argument's type, which must match."""

    def __init__(self, name: str, kind, length=None, shape=None, dtype=None):
        self.name, self.kind, self.length, self.shape, self.dtype = name, kind, length, shape, dtype

    def matches(self, t) -> bool:
        if self.kind == "scalar":
            return isinstance(t, ScalarType) and not t.is_bool and (self.dtype is None or self.dtype(t))
        if type(t) is not self.kind:
            return False
        scalar = t.dtype
        if isinstance(self.dtype, TypePattern):
            if not self.dtype.matches(scalar):
                return False
        elif self.dtype is not None and scalar != self.dtype:
            return False
        if self.kind is VectorType:
            return self.length is None or t.length == self.length
        if self.shape is None:  # a tile of any shape
            return True
        return all(want is None or want == got for want, got in zip(self.shape, t.shape))

    def __repr__(self) -> str:
        return self.name


def _is_any(x) -> bool:
    return x is typing.Any


#: Warp's generic scalar annotations: any integer, any float, any number.
Int = TypePattern("Int", "scalar", dtype=lambda t: not t.is_float)
Float = TypePattern("Float", "scalar", dtype=lambda t: t.is_float)
Scalar = TypePattern("Scalar", "scalar")


def _pattern_dtype(dtype):
    """``dtype`` of a generic vector or matrix: None (any), a pattern or a scalar type."""
    if _is_any(dtype):
        return None
    return dtype if isinstance(dtype, TypePattern) else scalar_type_of(dtype)


def vector(length: int, dtype: ScalarType = float32) -> VectorType:
    """The vector type of ``length`` components of ``dtype`` (interned); with
    ``typing.Any`` for either, or a generic scalar (``Int``, ``Float``,
    ``Scalar``) for ``dtype``, the generic annotation for such vectors."""
    if _is_any(length) or _is_any(dtype) or isinstance(dtype, TypePattern):
        d = _pattern_dtype(dtype)
        return TypePattern(f"vector(length={'Any' if _is_any(length) else length}, dtype={'Any' if d is None else d})",
                           VectorType, length=None if _is_any(length) else length, dtype=d)
    dtype = scalar_type_of(dtype)
    key = (length, dtype.name)
    if key not in _VECTORS:
        _VECTORS[key] = VectorType(length, dtype)
    return _VECTORS[key]


def matrix(shape: tuple[int, int], dtype: ScalarType = float32) -> MatrixType:
    """The matrix type of ``shape`` (rows, cols) of ``dtype`` (interned); with
    ``typing.Any`` for an extent or the dtype (or a generic scalar dtype),
    the generic annotation for such matrices."""
    if any(_is_any(n) for n in shape) or _is_any(dtype) or isinstance(dtype, TypePattern):
        d = _pattern_dtype(dtype)
        extents = tuple(None if _is_any(n) else n for n in shape)
        text = ", ".join("Any" if n is None else str(n) for n in extents)
        return TypePattern(f"matrix(shape=({text}), dtype={'Any' if d is None else d})", MatrixType,
                           shape=extents, dtype=d)
    dtype = scalar_type_of(dtype)
    key = (shape[0], shape[1], dtype.name)
    if key not in _MATRICES:
        _MATRICES[key] = MatrixType(shape[0], shape[1], dtype)
    return _MATRICES[key]


class CompositeValue(np.ndarray):
    """A vector or matrix value outside kernels (what ``adjit.vec3(...)``,
    ``adjit.mat33(...)`` and host calls of builtins return): a numpy array
    with two of Warp's value semantics.

    - It is truthy whatever its components, as Warp's vector and matrix
      values are (ctypes arrays: ``bool(v)`` is ``len(v) > 0``), so Warp code
      such as ``any(x for x in inertia)`` (true when the matrix has a row)
      runs as on Warp instead of asking numpy for the truth of a row.
    - What it computes keeps the class (``m @ v``, ``a + b``, a row ``m[0]``),
      except elementwise comparisons and reductions to one number: those
      are plain numpy results, so ``if a == b:`` still raises numpy's
      ambiguity error rather than being silently true.
    """

    def __bool__(self) -> bool:
        return self.size > 0

    def __array_wrap__(self, array, context=None, return_scalar=False):
        if array.ndim == 0 or array.dtype == np.bool_:
            array = array.view(np.ndarray)
            return array[()] if return_scalar or array.ndim == 0 else array
        return super().__array_wrap__(array, context, return_scalar)


class QuatValue(CompositeValue):
    """A quaternion outside kernels: a numpy array of 4 components (x, y, z, w).

    It behaves as an ordinary numpy array; the subclass only records that the
    value is a quaternion, so a global ``q = adjit.quat(...)`` is a quat
    constant (not a vec4) in kernels.
    """


class QuatType(VectorType):
    """A quaternion ``(x, y, z, w)``: ``w`` is the real part, stored last (as in Warp).

    It is a distinct type from the 4-vector of the same scalar type (also as
    in Warp): it has the same storage (and MLIR type, ``vector<4xf32>``) and
    supports the same component access, ``+``, ``-``, negation and scaling by
    a scalar, but ``q1 * q2`` is the Hamilton product, ``quat * vec4`` is an
    error, and a quat array or argument does not accept vec4 values.
    """

    _WARP_KIND = ("quat", "quat_t")

    def __init__(self, dtype: ScalarType, name: str | None = None):
        if not dtype.is_float:
            raise TypeError(f"quaternions need a float type, got {dtype}")
        super().__init__(4, dtype, name or f"quaternion({dtype})")

    def __reduce__(self):
        return (quaternion, (self.dtype,))

    def __call__(self, *values):
        if len(values) == 2 and np.ndim(values[0]) == 1:  # quat(xyz, w)
            values = (*values[0], values[1])
        if len(values) == 1:
            values = tuple(values[0])
        if len(values) == 0:
            values = (0,) * 4
        if len(values) != 4:
            raise TypeError(f"{self.name}() takes 4 components (x, y, z, w), got {len(values)}")
        return np.array(values, dtype=self.dtype.np_dtype).reshape(4).view(QuatValue)


_QUATS: dict[str, QuatType] = {}


def quaternion(dtype: ScalarType = float32) -> QuatType:
    """The quaternion type of ``dtype`` components (interned)."""
    dtype = scalar_type_of(dtype)
    if dtype.name not in _QUATS:
        _QUATS[dtype.name] = QuatType(dtype)
    return _QUATS[dtype.name]


class TransformValue(CompositeValue):
    """A rigid transform outside kernels: a numpy array of 7 components
    (p, then q), with ``.p`` and ``.q`` views; a global holding one is a
    transform constant (not a 7-vector) in kernels."""

    @property
    def p(self) -> np.ndarray:
        return np.asarray(self)[:3].view(CompositeValue)

    @property
    def q(self) -> np.ndarray:
        return np.asarray(self)[3:].view(QuatValue)


class TransformType(VectorType):
    """A rigid transform ``(p, q)``: a translation 3-vector ``p`` and a unit
    quaternion ``q`` (x, y, z, w), stored as 7 components, p first (as in
    Warp). A distinct type from the 7-vector of the same storage: ``t.p`` and
    ``t.q`` read and write the parts, ``t1 * t2`` composes
    (transform_multiply), and a transform array or argument takes no
    7-vectors. ``transform()`` is the identity."""

    _WARP_KIND = ("transform", "transform_t")

    def __init__(self, dtype: ScalarType, name: str | None = None):
        if not dtype.is_float:
            raise TypeError(f"transforms need a float type, got {dtype}")
        super().__init__(7, dtype, name or f"transformation({dtype})")

    def __reduce__(self):
        return (transformation, (self.dtype,))

    def __call__(self, *values, **parts):
        if parts:  # transform(p=..., q=...), transform(p, q=...), as Warp's
            unknown = sorted(set(parts) - {"p", "q"})
            if unknown or len(values) + len(parts) > 2 or (values and "p" in parts):
                raise TypeError(f"{self.name}() takes p and q once each (positionally or as keywords), got "
                                f"{len(values)} positional values and the keywords {sorted(parts)}")
            p = values[0] if values else parts.get("p", (0.0, 0.0, 0.0))
            values = (p, parts.get("q", (0.0, 0.0, 0.0, 1.0)))
        if len(values) == 0:
            values = (0, 0, 0, 0, 0, 0, 1)
        elif len(values) == 2 and np.size(values[0]) == 3 and np.size(values[1]) == 4:  # (p, q)
            values = (*np.ravel(values[0]), *np.ravel(values[1]))
        elif len(values) == 1:
            values = tuple(np.ravel(values[0]))
        if len(values) != 7:
            raise TypeError(f"{self.name}() takes a position and a quaternion, or 7 components "
                            f"(px, py, pz, qx, qy, qz, qw); got {len(values)} values")
        return np.array(values, dtype=self.dtype.np_dtype).reshape(7).view(TransformValue)


_TRANSFORMS: dict[str, TransformType] = {}


def transformation(dtype: ScalarType = float32) -> TransformType:
    """The transform type of ``dtype`` components (interned)."""
    dtype = scalar_type_of(dtype)
    if dtype.name not in _TRANSFORMS:
        _TRANSFORMS[dtype.name] = TransformType(dtype)
    return _TRANSFORMS[dtype.name]


ValueType = ScalarType | VectorType | MatrixType


class StructType(Type):
    """A struct (``@adjit.struct``): named fields of scalar, vector, matrix,
    array or struct type, as Warp's ``@wp.struct``.

    Kernels take struct parameters and compute with struct locals; a struct
    is a value (``b = a`` copies). The compiler flattens a struct into its
    fields (``leaves``): a struct parameter is one kernel argument per
    field, so arrays in structs get gradients as any array argument does.
    Calling the type makes a host value (``State()``, fields zero, arrays
    None)."""

    def __init__(self, cls):
        self.cls = cls
        self.name = cls.__name__
        self.__name__ = cls.__name__
        self.__qualname__ = cls.__qualname__
        self.__module__ = cls.__module__
        self.__doc__ = cls.__doc__
        namespace = vars(sys.modules[cls.__module__]) if cls.__module__ in sys.modules else {}
        self._fields: dict[str, Type] = {}
        #: Fields of a type Warp has and adjit lacks, with why: the struct can be
        #: declared (a module declaring it imports) and fails where it is used.
        self.refused: dict[str, str] = {}
        for field, ann in getattr(cls, "__annotations__", {}).items():
            if isinstance(ann, str):
                ann = eval(ann, dict(namespace))
            ann = without_none(ann)  # pos: wp.array(dtype=float) | None
            if isinstance(ann, StructArrayType):
                self.refused[field] = (f"struct {self.name} field '{field}': an array of structs "
                                       f"({ann.dtype.name}) cannot be a struct field yet; pass it as its own "
                                       "kernel parameter")
                continue
            if isinstance(ann, (ArrayType, StructType)):
                self._fields[field] = ann
                continue
            from .warp.placeholders import is_placeholder
            if is_placeholder(ann):
                self.refused[field] = (f"struct {self.name} field '{field}': {ann.__name__} is not in adjit "
                                       f"({ann._why})")
                continue
            try:
                self._fields[field] = value_type_of(ann)
            except TypeError:
                raise TypeError(f"struct {self.name} field '{field}': {ann!r} is not a kernel type") from None

    @property
    def fields(self) -> dict[str, Type]:
        """The fields and their types, in order; TypeError where a field's
        type is one adjit lacks (``refused``): a struct using one is
        declared, and fails here, where a kernel or the host uses it."""
        if self.refused:
            raise TypeError(next(iter(self.refused.values())))
        return self._fields

    def __repr__(self) -> str:
        # The compile cache keys on it: the fields, in order, with their types.
        return f"{self.name}{{{', '.join(f'{k}: {t!r}' for k, t in self._fields.items())}}}"

    def leaves(self, prefix: str) -> list[tuple[str, Type]]:
        """(``prefix.field`` path, type) of every non-struct field, nested
        structs expanded, in declaration order."""
        out = []
        for field, t in self.fields.items():
            path = f"{prefix}.{field}"
            out += t.leaves(path) if isinstance(t, StructType) else [(path, t)]
        return out

    def mlir(self):
        raise TypeError(f"struct {self.name} has no single MLIR type (it is flattened into its fields)")

    def numpy_dtype(self) -> np.dtype:
        """The numpy structured dtype of one element of an array of this
        struct (fields in order, nested structs nested, aligned as C aligns a
        struct), the dtype of Warp's ``array.numpy()`` of a struct array;
        TypeError if a field is an array."""
        fields = []
        for field, t in self.fields.items():
            if isinstance(t, StructType):
                fields.append((field, t.numpy_dtype()))
            elif isinstance(t, ArrayType):
                raise TypeError(f"struct {self.name} has an array field '{field}', so there are no arrays of "
                                f"{self.name}")
            else:
                fields.append((field, scalar_of(t).np_dtype, getattr(t, "shape", ())))
        return np.dtype(fields, align=True)

    def __call__(self, **fields) -> "StructValue":
        return StructValue(self, **fields)


class StructValue:
    """A struct value on the host: its fields as attributes (checked and
    converted to the field types on assignment)."""

    __slots__ = ("_type", "_values")

    def __init__(self, t: StructType, **fields):
        object.__setattr__(self, "_type", t)
        object.__setattr__(self, "_values", {})
        for name, ft in t.fields.items():
            if isinstance(ft, StructType):
                self._values[name] = ft()
            elif isinstance(ft, ArrayType):
                self._values[name] = None
            else:
                self._values[name] = ft(0) if isinstance(ft, ScalarType) else ft()
        for name, value in fields.items():
            setattr(self, name, value)

    def __getattr__(self, name):
        values = object.__getattribute__(self, "_values")
        if name not in values:
            raise AttributeError(f"struct {self._type.name} has no field '{name}'")
        return values[name]

    def __setattr__(self, name, value):
        t = self._type
        if name not in t.fields:
            raise AttributeError(f"struct {t.name} has no field '{name}' (fields: {', '.join(t.fields)})")
        ft = t.fields[name]
        if isinstance(ft, StructType):
            if not (isinstance(value, StructValue) and value._type is ft):
                raise TypeError(f"struct {t.name} field '{name}' takes a {ft.name}, got {value!r}")
        elif isinstance(ft, ArrayType):
            dtype, ndim = getattr(value, "dtype", None), getattr(value, "ndim", None)
            if value is not None and (dtype != ft.dtype or ndim != ft.ndim or not hasattr(value, "_buffer")):
                raise TypeError(f"struct {t.name} field '{name}' takes an adjit array of {ft.dtype} with "
                                f"{ft.ndim} dimension(s), got {value!r}")
        else:
            try:
                value = ft(value) if isinstance(ft, ScalarType) else np.asarray(value, dtype=ft.dtype.np_dtype)
            except (TypeError, ValueError, OverflowError):
                raise TypeError(f"struct {t.name} field '{name}' takes {ft}, got {value!r}") from None
            if not isinstance(ft, ScalarType):
                if value.shape != ft.shape:
                    raise TypeError(f"struct {t.name} field '{name}' takes {ft} (shape {ft.shape}), got "
                                    f"shape {value.shape}")
                value = value.copy()
        self._values[name] = value

    def leaf_values(self) -> list:
        """The fields' values in ``StructType.leaves`` order."""
        out = []
        for name, ft in self._type.fields.items():
            value = self._values[name]
            out += value.leaf_values() if isinstance(ft, StructType) else [value]
        return out

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"{self._type.name}({body})"


def struct(cls) -> StructType:
    """Decorator (``@adjit.struct``, Warp's ``@wp.struct``): a class whose
    annotated attributes are the fields becomes a StructType."""
    if not isinstance(cls, type):
        raise TypeError(f"@struct decorates a class, got {cls!r}")
    return StructType(cls)


class ArrayType(Type):
    """An array annotation: ``adjit.array(dtype=vec3, ndim=2)`` (with a
    struct dtype, a StructArrayType)."""

    def __new__(cls, dtype=None, ndim: int = 1):
        if cls is ArrayType and isinstance(dtype, StructType):
            cls = StructArrayType
        return super().__new__(cls)

    #: A generic array's element pattern (``array(dtype=vector(length=Any, ...))``).
    dtype_pattern = None

    def __init__(self, dtype, ndim: int = 1):
        import typing
        if dtype is typing.Any or isinstance(dtype, TypePattern):
            # generic: a kernel instance per element type (adjit.overload), within the pattern if one
            if not 1 <= ndim <= 4:
                raise TypeError(f"array ndim must be 1 to 4, got {ndim}")
            self.dtype, self.ndim = None, ndim
            self.dtype_pattern = None if dtype is typing.Any else dtype
            self.name = f"array(dtype={'Any' if dtype is typing.Any else dtype}, ndim={ndim})"
            return
        self.dtype = value_type_of(dtype)
        if not 1 <= ndim <= 4:
            raise TypeError(f"array ndim must be 1 to 4, got {ndim}")
        self.ndim = ndim
        self.name = f"array(dtype={self.dtype}, ndim={ndim})"

    def __eq__(self, other):
        return isinstance(other, ArrayType) and (other.dtype, other.ndim, other.dtype_pattern) == \
            (self.dtype, self.ndim, self.dtype_pattern)

    def __hash__(self):
        return hash(("array", self.dtype, self.ndim))

    @property
    def component_shape(self) -> tuple[int, ...]:
        return () if isinstance(self.dtype, ScalarType) else self.dtype.shape

    def mlir(self) -> ir.Type:
        # bools are stored as bytes (0 or 1): memory holds nothing narrower
        i8 = ir.IntegerType.get_signless(8)
        element = i8 if self.dtype == bool_ else ir.VectorType.get(list(self.dtype.shape), i8) \
            if isinstance(self.dtype, (VectorType, MatrixType)) and self.dtype.dtype.is_bool else self.dtype.mlir()
        return ir.Type.parse(f"!adjit.array<{element}, {self.ndim}>")


class StructArrayType(ArrayType):
    """An array of structs, ``adjit.array(dtype=MyStruct, ndim=1)``: stored
    as one array per leaf field of the struct (a structure of arrays), all
    of the array's shape, so a kernel parameter of this type is one array
    argument per leaf (``a.x``, ``a.inner.y``), as a struct parameter is one
    argument per field. The struct may not hold arrays."""

    def __init__(self, dtype: StructType, ndim: int = 1):
        if not 1 <= ndim <= 4:
            raise TypeError(f"array ndim must be 1 to 4, got {ndim}")
        for path, t in dtype.leaves(dtype.name):
            if isinstance(t, ArrayType):
                raise TypeError(f"arrays of structs ({dtype.name}) whose struct holds an array ({path}) are not "
                                "supported: pass that array as its own parameter")
        self.dtype = dtype
        self.ndim = ndim
        self.name = f"array(dtype={dtype.name}, ndim={ndim})"

    def __repr__(self) -> str:
        # The compile cache keys on it: the struct's layout too.
        return f"array(dtype={self.dtype!r}, ndim={self.ndim})"

    def __eq__(self, other):
        return isinstance(other, StructArrayType) and other.dtype is self.dtype and other.ndim == self.ndim

    def __hash__(self):
        return hash(("struct array", id(self.dtype), self.ndim))

    @property
    def component_shape(self) -> tuple[int, ...]:
        return ()

    def leaves(self, prefix: str) -> list[tuple[str, ArrayType]]:
        """(``prefix.field`` path, array type) of every leaf field, in
        ``StructType.leaves`` order: the arrays that hold the values."""
        return [(path, ArrayType(t, self.ndim)) for path, t in self.dtype.leaves(prefix)]

    def mlir(self):
        raise TypeError(f"an {self.name} has no single MLIR type (it is one array per field)")


class IndexedArrayType(Type):
    """An indexed array annotation, ``adjit.indexedarray(dtype=float, ndim=2)``
    (Warp's ``wp.indexedarray``): an array whose dimension ``d`` is gathered
    through a 1-d int32 index array, ``ia[i, j] == data[idx0[i], idx1[j]]``.
    A kernel parameter of this type is ``ndim + 1`` array arguments: the data
    array (under the parameter's name) and one index array per dimension
    (``ia.idx0``, ...; a dimension the host value does not index gets the
    identity), so loads, stores, atomics, bounds checks, aliasing and
    gradients are those of ``data[idx0[i], idx1[j]]``
    (adjit.compiler.indexed_arrays)."""

    def __init__(self, dtype, ndim: int = 1):
        if isinstance(dtype, StructType):
            raise TypeError("indexed arrays of structs are not supported yet")
        if not isinstance(ndim, int) or not 1 <= ndim <= 4:
            raise TypeError(f"indexedarray ndim must be 1 to 4, got {ndim!r}")
        self.dtype = value_type_of(dtype)
        self.ndim = ndim
        self.name = f"indexedarray(dtype={self.dtype}, ndim={ndim})"

    def __eq__(self, other):
        return isinstance(other, IndexedArrayType) and (other.dtype, other.ndim) == (self.dtype, self.ndim)

    def __hash__(self):
        return hash(("indexedarray", self.dtype, self.ndim))

    @property
    def data_type(self) -> ArrayType:
        return ArrayType(self.dtype, self.ndim)

    def leaves(self, prefix: str) -> list[tuple[str, ArrayType]]:
        """(argument name, array type): the data array, then the index arrays."""
        return [(prefix, self.data_type)] + [(f"{prefix}.idx{d}", ArrayType(int32, 1)) for d in range(self.ndim)]

    def mlir(self):
        raise TypeError(f"an {self.name} has no single MLIR type (it is its data and index arrays)")


def scalar_type_of(t) -> ScalarType:
    """Maps ``float``/``int``/``bool``/numpy dtypes/ScalarType to a ScalarType."""
    if isinstance(t, ScalarType):
        return t
    if t is float:
        return float32
    if t is int:
        return int32
    if t is bool:
        return bool_
    try:
        dt = np.dtype(t)
    except (TypeError, ValueError):
        raise TypeError(f"{t!r} is not a scalar type") from None
    for s in SCALAR_TYPES:
        if s.np_dtype == dt:
            return s
    raise TypeError(f"numpy dtype {dt} has no adjit scalar type")


def scalar_of(t) -> ScalarType | None:
    """The scalar type of a scalar, vector, matrix or quaternion type (None for
    anything else; an array's is ``scalar_of(a.dtype)``)."""
    if isinstance(t, ScalarType):
        return t
    return t.dtype if isinstance(t, (VectorType, MatrixType)) else None


def value_type_of(t) -> ValueType:
    """Maps an annotation or dtype to a scalar, vector or matrix type."""
    if isinstance(t, (VectorType, MatrixType)):
        return t
    return scalar_type_of(t)


def constant_type_of(value) -> ValueType | None:
    """The kernel type of a numpy scalar or small numpy array used as a constant
    in kernels (``adjit.vec3(...)`` values, ``adjit.float32(2)``), else None."""
    if not isinstance(value, (np.generic, np.ndarray)):
        return None
    try:
        dtype = scalar_type_of(value.dtype)
    except TypeError:
        return None
    shape = np.shape(value)
    if len(shape) == 0:
        return dtype

    if isinstance(value, QuatValue) and shape == (4,) and dtype.is_float:
        return quaternion(dtype)
    if isinstance(value, TransformValue) and shape == (7,) and dtype.is_float:
        return transformation(dtype)
    if len(shape) == 1 and 2 <= shape[0] <= MAX_CONSTANT_EXTENT:
        return vector(shape[0], dtype)
    if len(shape) == 2 and 2 <= shape[0] <= MAX_CONSTANT_EXTENT and 2 <= shape[1] <= MAX_CONSTANT_EXTENT:
        return matrix(shape, dtype)
    return None


def _named_vector(length, dtype, name):
    t = vector(length, dtype)
    t.name = name
    return t


def _named_matrix(n, dtype, name):
    t = matrix((n, n), dtype)
    t.name = name
    return t


vec2 = _named_vector(2, float32, "vec2")
vec3 = _named_vector(3, float32, "vec3")
vec4 = _named_vector(4, float32, "vec4")
vec2d = _named_vector(2, float64, "vec2d")
vec3d = _named_vector(3, float64, "vec3d")
vec4d = _named_vector(4, float64, "vec4d")
vec2i = _named_vector(2, int32, "vec2i")
vec3i = _named_vector(3, int32, "vec3i")
vec4i = _named_vector(4, int32, "vec4i")
mat22 = _named_matrix(2, float32, "mat22")
mat33 = _named_matrix(3, float32, "mat33")
mat44 = _named_matrix(4, float32, "mat44")
mat22d = _named_matrix(2, float64, "mat22d")
mat33d = _named_matrix(3, float64, "mat33d")
mat44d = _named_matrix(4, float64, "mat44d")
quat = quaternion(float32)
quat.name = "quat"
quatd = quaternion(float64)
quatd.name = "quatd"
transform = transformation(float32)
transform.name = "transform"
transformd = transformation(float64)
transformd.name = "transformd"


def _explicit_precision_names() -> dict:
    """Warp's explicit-precision names not defined above: vec{2,3,4} with
    the suffixes b (int8), ub, s (int16), us, ui, l (int64), ul and h
    (float16); mat{22,33,44}h, quath, transformh and the half spatial types."""
    suffixes = {"b": int8, "ub": uint8, "s": int16, "us": uint16, "ui": uint32, "l": int64, "ul": uint64,
                "h": float16}
    names = {}
    for n in (2, 3, 4):
        for suffix, dtype in suffixes.items():
            names[f"vec{n}{suffix}"] = _named_vector(n, dtype, f"vec{n}{suffix}")
        names[f"mat{n}{n}h"] = _named_matrix(n, float16, f"mat{n}{n}h")
    names["quath"] = quaternion(float16)
    names["quath"].name = "quath"
    names["transformh"] = transformation(float16)
    names["transformh"].name = "transformh"
    names["spatial_vectorh"] = vector(6, float16)
    names["spatial_matrixh"] = matrix((6, 6), float16)
    return names


EXPLICIT_PRECISION_NAMES = _explicit_precision_names()


def dtype_from_numpy(numpy_dtype) -> ScalarType:
    """The adjit scalar type of a numpy dtype (as Warp's dtype_from_numpy);
    TypeError for dtypes adjit has no type for."""
    try:
        dt = np.dtype(numpy_dtype)
    except (TypeError, ValueError):
        raise TypeError(f"{numpy_dtype!r} is not a numpy dtype") from None
    for s in SCALAR_TYPES:
        if s.np_dtype == dt:
            return s
    raise TypeError(f"numpy dtype {dt} has no adjit type (adjit has {', '.join(s.name for s in SCALAR_TYPES)})")


def dtype_to_numpy(t) -> np.dtype:
    """The numpy dtype of an adjit scalar type (``float``, ``int`` and
    ``bool`` too), as Warp's dtype_to_numpy."""
    if not isinstance(t, ScalarType) and t not in (float, int, bool):
        raise TypeError(f"dtype_to_numpy() takes a scalar type, got {t!r} (a vector's components: "
                        f"dtype_to_numpy(T.dtype))")
    return scalar_type_of(t).np_dtype


#: Warp's spatial types (Featherstone's 6-vectors: angular on top, linear
#: below; spatial_top / spatial_bottom read them).
spatial_vector = spatial_vectorf = vector(6, float32)
spatial_vectord = vector(6, float64)
spatial_matrix = spatial_matrixf = matrix((6, 6), float32)
spatial_matrixd = matrix((6, 6), float64)


def host_type(value, what: str):
    """The kernel type of a host value passed where a kernel value goes (a
    launch argument of a generic kernel, an argument of a builtin called from
    Python): a Python float is a float32, an int an int32, a bool a bool;
    numpy scalars keep their type; numpy arrays of vector or matrix shape
    are vectors or matrices (quaternion and transform values keep their kind)."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, np.generic):  # (np.float64 is also a Python float)
        t = constant_type_of(value)
        if t is None:
            raise TypeError(f"{what}: {value!r} has no kernel type")
        return t
    if isinstance(value, int):
        return int32
    if isinstance(value, float):
        return float32
    t = constant_type_of(value) if isinstance(value, np.ndarray) else None
    if t is None:
        raise TypeError(f"{what}: {value!r} is not a value a kernel takes (numbers, numpy scalars, and numpy "
                        "arrays of vector or matrix shape)")
    return t


# --- Warp's type introspection (warp.types) ---------------------------------------------

def type_is_vector(t) -> bool:
    """A vector type (quaternions and transforms are their own kinds)."""
    return isinstance(t, VectorType) and not isinstance(t, (QuatType, TransformType))


def type_is_matrix(t) -> bool:
    return isinstance(t, MatrixType)


def type_is_quaternion(t) -> bool:
    return isinstance(t, QuatType)


def type_is_transformation(t) -> bool:
    return isinstance(t, TransformType)


def type_is_composite(t) -> bool:
    """A vector, matrix, quaternion or transform type."""
    return isinstance(t, (VectorType, MatrixType))


def type_is_float(t) -> bool:
    """A float scalar type (``float`` is float32)."""
    return t is float or (isinstance(t, ScalarType) and t.is_float)


def type_is_int(t) -> bool:
    """An integer scalar type (``int`` is int32; bool is not an integer)."""
    return t is int or (isinstance(t, ScalarType) and t.is_int and not t.is_bool)


def type_is_value(t) -> bool:
    """A scalar or composite type (what a kernel holds in a local)."""
    return t in (float, int, bool) or isinstance(t, (ScalarType, VectorType, MatrixType))


def type_is_array(t) -> bool:
    return isinstance(t, (ArrayType, IndexedArrayType))


def type_is_scalar(t) -> bool:
    """A scalar type (``float``, ``int`` and ``bool`` are scalars)."""
    return t in (float, int, bool) or isinstance(t, ScalarType)


def type_is_struct(t) -> bool:
    return isinstance(t, StructType)


def type_size(t) -> int:
    """The number of scalars in a value of ``t`` (1 for a scalar or a struct)."""
    return 1 if isinstance(t, StructType) else type_length(t)


def type_ctype(t):
    """The ctypes type of ``t``'s scalars (a float16's or bfloat16's bits: c_uint16)."""
    import ctypes
    scalar = type_scalar_type(t)
    if scalar.np_dtype.kind == "b":
        return ctypes.c_bool
    if scalar.np_dtype.itemsize == 2 and scalar.is_float:
        return ctypes.c_uint16
    return np.ctypeslib.as_ctypes_type(scalar.np_dtype)


def _type_of_value(x):
    """The kernel type of a host value (None for what is not a value)."""
    try:
        return host_type(x, "value")
    except TypeError:
        return None


# Warp's predicates of values: what type_is_* says of the value's type.
def is_scalar(x) -> bool:
    return type_is_scalar(_type_of_value(x))


def is_vector(x) -> bool:
    return type_is_vector(_type_of_value(x))


def is_matrix(x) -> bool:
    return type_is_matrix(_type_of_value(x))


def is_quaternion(x) -> bool:
    return type_is_quaternion(_type_of_value(x))


def is_transformation(x) -> bool:
    return type_is_transformation(_type_of_value(x))


def is_composite(x) -> bool:
    return type_is_composite(_type_of_value(x))


def is_float(x) -> bool:
    return type_is_float(_type_of_value(x))


def is_int(x) -> bool:
    return type_is_int(_type_of_value(x))


def is_value(x) -> bool:
    return _type_of_value(x) is not None


def is_struct(x) -> bool:
    return isinstance(x, StructValue)


#: The host array classes (Array, IndexedArray, StructArray): the runtime,
#: a layer above this module, registers each one when it is defined.
_host_array_classes: list[type] = []


def register_host_array_class(cls: type) -> type:
    _host_array_classes.append(cls)
    return cls


def is_array(x) -> bool:
    """An adjit array, indexed array or array of structs, or an array
    annotation (``array(dtype=float)``): in Warp, annotations are array
    objects, so ``is_array`` of a kernel's parameter type is true there too."""
    return isinstance(x, tuple(_host_array_classes)) or isinstance(x, (ArrayType, IndexedArrayType))


def type_scalar_type(t) -> ScalarType:
    """The scalar type of a scalar or composite type (of an array's elements)."""
    if isinstance(t, (ArrayType, IndexedArrayType)):
        t = t.dtype
    return scalar_of(value_type_of(t))


def type_length(t) -> int:
    """The number of scalars in a value of ``t`` (1 for a scalar)."""
    t = value_type_of(t)
    return 1 if isinstance(t, ScalarType) else int(np.prod(t.shape))


def type_size_in_bytes(t) -> int:
    t = value_type_of(t)
    if isinstance(t, StructType):
        return t.numpy_dtype().itemsize
    return type_length(t) * scalar_of(t).np_dtype.itemsize


def type_typestr(t) -> str:
    """The numpy array-interface typestr of ``t``'s scalars (``<f4``)."""
    return type_scalar_type(t).np_dtype.str


def types_equal(a, b, match_generic: bool = False) -> bool:
    """Whether two types are the same (``float`` and float32 are; with
    ``match_generic``, ``typing.Any`` matches anything)."""
    if match_generic and (a is typing.Any or b is typing.Any):
        return True
    try:
        return value_type_of(a) == value_type_of(b)
    except TypeError:
        return a == b


def type_repr(t) -> str:
    """A readable name of a type, as Warp writes it: ``vector(length=3,
    dtype=float32)``, ``matrix(shape=(3, 3), dtype=float64)``,
    ``quaternion(dtype=float32)``, ``array(ndim=1, dtype=...)``, a scalar's
    or struct's name."""
    if isinstance(t, (ArrayType, IndexedArrayType)):
        kind = "indexedarray" if isinstance(t, IndexedArrayType) else "array"
        return f"{kind}(ndim={t.ndim}, dtype={type_repr(t.dtype)})"
    if t in (float, int, bool):
        t = value_type_of(t)
    if isinstance(t, QuatType):
        return f"quaternion(dtype={t.dtype.name})"
    if isinstance(t, TransformType):
        return f"transformation(dtype={t.dtype.name})"
    if isinstance(t, VectorType):
        return f"vector(length={t.length}, dtype={t.dtype.name})"
    if isinstance(t, MatrixType):
        return f"matrix(shape=({t.rows}, {t.cols}), dtype={t.dtype.name})"
    if isinstance(t, (ScalarType, StructType)):
        return t.name
    return str(t)


def __getattr__(name: str):
    # Only called for names this module lacks: Warp code asking for one gets a
    # NotInAdjitError naming it (errors.missing_name), never a bare AttributeError.
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import sys as _sys
    from .errors import missing_name
    raise missing_name(__name__, name, _sys._getframe(1))
