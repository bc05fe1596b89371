"""Builtins that take arrays (``array_args``): the atomics, and lower_bound
(whose binary search sample_cdf shares, see random.py).
"""
from __future__ import annotations

from .. import types as T
from .._deferred import deferred_import
from .registry import add_builtin

ir = deferred_import("mlir.ir")
arith = deferred_import("mlir.dialects.arith")
scf = deferred_import("mlir.dialects.scf")
adjit_d = deferred_import("adjit.dialects.adjit")
values = deferred_import("adjit.compiler.values")


# --- atomics ----------------------------------------------------------------------------

def _infer_atomic(name):
    nvalues = 2 if name == "atomic_cas" else 1  # atomic_cas(a, i, ..., compare, value)
    trailing = "compare, value" if nvalues == 2 else "value"

    def infer(args):
        if len(args) < 2 + nvalues or not isinstance(args[0], T.ArrayType):
            raise TypeError(f"{name}() takes an array, one index per dimension and "
                            f"{'a compare and a value' if nvalues == 2 else 'a value'} "
                            f"({name}(a, i, {trailing}), {name}(a, i, j, {trailing}), ...), got "
                            f"({', '.join(map(str, args))})")
        array, indices, given = args[0], args[1:-nvalues], args[-nvalues:]
        if len(indices) != array.ndim:
            raise TypeError(f"{name}() on a {array.ndim}-d array needs {array.ndim} "
                            f"{'index' if array.ndim == 1 else 'indices'}, got {len(indices)}")
        for t in indices:
            if not isinstance(t, T.ScalarType) or not t.is_int:
                raise TypeError(f"{name}() indices must be integers, got {t}")
        for value in given:
            if value != array.dtype:
                raise TypeError(f"{name}() on an array of {array.dtype} needs {trailing} of type {array.dtype}, "
                                f"got {value}")
        scalar = T.scalar_of(array.dtype)
        if name in ("atomic_and", "atomic_or", "atomic_xor") and not scalar.is_int:
            raise TypeError(f"{name}() needs an array of integers (scalars, vectors or matrices), got an array "
                            f"of {array.dtype}")
        if name in ("atomic_exch", "atomic_cas") and not (
                isinstance(array.dtype, T.ScalarType) and (scalar.is_int or scalar.is_float)):
            raise TypeError(f"{name}() needs an array of integer or float scalars, got an array of {array.dtype}")
        if name in ("atomic_min", "atomic_max") and scalar.is_unsigned:
            raise TypeError(f"{name}() on unsigned integers is not supported yet (use a signed type)")
        if scalar.bits < 32 and scalar not in _SMALL_ATOMICS.get(name, ()):
            raise TypeError(f"{name}() on {scalar} is not supported (as in Warp, 8- and 16-bit atomics are "
                            "atomic_add and atomic_sub on float16 and bfloat16, atomic_min and atomic_max "
                            "on bfloat16)")
        return array.dtype
    return infer


#: The 8- and 16-bit element types each atomic takes (Warp 1.19's: the
#: others are refused there too). On the CPU LLVM expands them into
#: compare-and-swap loops on the 16-bit word; a float16/bfloat16 kernel's
#: adds stay in thread order by running the launch serially
#: (adjit-atomic-order: the runtime's ordered adds take f32/f64 only).
_SMALL_ATOMICS = {"atomic_add": (T.float16, T.bfloat16), "atomic_sub": (T.float16, T.bfloat16),
                  "atomic_min": (T.bfloat16,), "atomic_max": (T.bfloat16,)}


def _atomic_literal_types(types, nvalues=1):
    # Literal indices are int32; a literal value takes the array's element type.
    array = types[0] if types else None
    value_t = array.dtype if isinstance(array, T.ArrayType) else None
    if len(types) < 1 + nvalues:
        return [None] * len(types)
    return [None] + [T.int32] * (len(types) - 1 - nvalues) + [value_t] * nvalues


def _emit_atomic(op_name, negate=False):
    def emit(vals, types, result):
        op = getattr(adjit_d, op_name)
        if op_name == "AtomicCasOp":  # (a, i, ..., compare, value)
            array, *indices, compare, value = vals
            return op(result.mlir(), compare, value, array,
                      [values.to_index(i, t) for i, t in zip(indices, types[1:-2])],
                      position=ir.DenseI64ArrayAttr.get([])).result
        array, *indices, value = vals
        if negate:
            scalar = T.scalar_of(result)
            value = (arith.NegFOp(value).result if scalar.is_float
                     else arith.SubIOp(values.constant(result, 0), value).result)
        return op(result.mlir(), value, array, [values.to_index(i, t) for i, t in zip(indices, types[1:-1])],
                  position=ir.DenseI64ArrayAttr.get([])).result
    return emit


_ATOMICS = [
    ("atomic_add", "AtomicAddOp", False, "adds value to"),
    ("atomic_sub", "AtomicAddOp", True, "subtracts value from"),  # adds -value
    ("atomic_min", "AtomicMinOp", False, "stores the minimum of value and"),
    ("atomic_max", "AtomicMaxOp", False, "stores the maximum of value and"),
]
# Not marked differentiable: their gradients flow through arrays (as Warp's
# adjoints do), which the scalar-input gradient checks do not model yet.
for _name, _op, _neg, _what in _ATOMICS:
    add_builtin(_name, f"{_name}(a, i, [j, ...], value) atomically {_what} a[i, j, ...] and returns the old "
                "element (vectors and matrices component by component, each component atomically).",
                _infer_atomic(_name), _emit_atomic(_op, _neg), array_args=True, unify_literals=False,
                literal_types=_atomic_literal_types, differentiable=False)

# Warp's other atomics. No gradients: integer ones carry none, and for floats
# the value atomic_exch/atomic_cas leave depends on the threads' order (a
# GradientError at the call when differentiated). On the CPU a kernel using
# atomic_exch or atomic_cas (or using any atomic's old value) runs its threads
# in order, so its results are those of the serial loop over thread indices.
_ATOMICS_MORE = [
    ("atomic_exch", "AtomicExchOp", "atomic_exch(a, i, [j, ...], value) atomically stores value into "
     "a[i, j, ...] and returns the element it replaced (integer or float scalar elements)."),
    ("atomic_cas", "AtomicCasOp", "atomic_cas(a, i, [j, ...], compare, value) atomically stores value into "
     "a[i, j, ...] if the element equals compare and returns the element it read (integer or float scalar "
     "elements; floats compare as their bits, as Warp's GPU atomics do: -0.0 does not match 0.0)."),
    ("atomic_and", "AtomicAndOp", "atomic_and(a, i, [j, ...], value) atomically stores a[i, j, ...] & value "
     "and returns the old element (integers; vectors and matrices component by component)."),
    ("atomic_or", "AtomicOrOp", "atomic_or(a, i, [j, ...], value) atomically stores a[i, j, ...] | value "
     "and returns the old element (integers; vectors and matrices component by component)."),
    ("atomic_xor", "AtomicXorOp", "atomic_xor(a, i, [j, ...], value) atomically stores a[i, j, ...] ^ value "
     "and returns the old element (integers; vectors and matrices component by component)."),
]
for _name, _op, _doc in _ATOMICS_MORE:
    add_builtin(_name, _doc, _infer_atomic(_name), _emit_atomic(_op), array_args=True, unify_literals=False,
                literal_types=(lambda types: _atomic_literal_types(types, 2)) if _name == "atomic_cas"
                else _atomic_literal_types, differentiable=False)


# --- lower_bound ----------------------------------------------------------------------------------

def emit_lower_bound(array, begin, end, value, element):
    """The first index in [begin, end) whose element is >= value (end if
    none): a binary search (elements read with their range checks)."""
    i32 = T.int32.mlir()
    less = (lambda a, b: arith.CmpFOp(arith.CmpFPredicate.OLT, a, b).result) if element.is_float else (
        lambda a, b: arith.CmpIOp(arith.CmpIPredicate.ult if element.is_unsigned else arith.CmpIPredicate.slt,
                                  a, b).result)
    loop = scf.WhileOp([i32, i32], [begin, end])
    before = loop.before.blocks.append(i32, i32)
    with ir.InsertionPoint(before):
        lo, hi = before.arguments
        scf.ConditionOp(arith.CmpIOp(arith.CmpIPredicate.slt, lo, hi).result, [lo, hi])
    after = loop.after.blocks.append(i32, i32)
    with ir.InsertionPoint(after):
        lo, hi = after.arguments
        mid = arith.AddIOp(lo, arith.DivSIOp(arith.SubIOp(hi, lo).result, values.constant(T.int32, 2)).result).result
        x = adjit_d.LoadOp(element.mlir(), array, [values.to_index(mid)]).result
        go_right = less(x, value)
        scf.YieldOp([arith.SelectOp(go_right, arith.AddIOp(mid, values.constant(T.int32, 1)).result, lo).result,
                     arith.SelectOp(go_right, hi, mid).result])
    return loop.results[0]


def _infer_lower_bound(args):
    if len(args) in (2, 4) and isinstance(args[0], T.ArrayType) and args[0].ndim == 1 \
            and isinstance(args[0].dtype, T.ScalarType) and not args[0].dtype.is_bool \
            and args[-1] == args[0].dtype and all(a == T.int32 for a in args[1:-1]):
        return T.int32
    raise TypeError("lower_bound() takes a sorted 1-d array of scalars and a value of its type, or the array, "
                    f"int begin and end, and the value; got {', '.join(map(str, args))}")


def _emit_lower_bound(vals, types, result):
    array, value = vals[0], vals[-1]
    if len(vals) == 4:
        begin, end = vals[1], vals[2]
    else:
        begin = values.constant(T.int32, 0)
        end = values.from_index(adjit_d.DimOp(ir.IndexType.get(), array,
                                              ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 0)).result)
    return emit_lower_bound(array, begin, end, value, types[0].dtype)


add_builtin("lower_bound", "lower_bound(a, value) / lower_bound(a, begin, end, value): the first index of the "
            "sorted 1-d array a (in [begin, end)) whose element is >= value; the end if none.",
            _infer_lower_bound, _emit_lower_bound, array_args=True, differentiable=False,
            literal_types=lambda ts: [None] + [T.int32] * (len(ts) - 2) + [
                ts[0].dtype if ts and isinstance(ts[0], T.ArrayType) else None] if len(ts) >= 2 else [None] * len(ts))
