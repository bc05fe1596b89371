"""Utility builtins: where and select, stop_gradient, block_dim, cast."""
from __future__ import annotations

from .. import types as T
from .._deferred import deferred_import
from .registry import REQUIRED, StaticParam, add_builtin

ir = deferred_import("mlir.ir")
arith = deferred_import("mlir.dialects.arith")
adjit_d = deferred_import("adjit.dialects.adjit")
values = deferred_import("adjit.compiler.values")
vector_d = deferred_import("mlir.dialects.vector")


def _infer_where(name):
    def infer(args):
        if len(args) != 3:
            raise TypeError(f"{name}() takes 3 arguments, got {len(args)}")
        if args[0] != T.bool_:
            raise TypeError(f"{name}() needs a bool condition first, got {args[0]}")
        if args[1] != args[2]:
            raise TypeError(f"{name}() needs two values of one type, got {args[1]} and {args[2]}")
        return args[1]
    return infer


add_builtin("where", "where(cond, a, b): a if cond else b (both are evaluated).",
            _infer_where("where"), lambda v, t, r: arith.SelectOp(v[0], v[1], v[2]).result)
add_builtin("select", "select(cond, a, b): b if cond else a (Warp's argument order).",
            _infer_where("select"), lambda v, t, r: arith.SelectOp(v[0], v[2], v[1]).result)


def _infer_stop_gradient(args):
    if len(args) != 1:
        raise TypeError(f"stop_gradient() takes 1 argument, got {len(args)}")
    return args[0]


add_builtin("stop_gradient", "The value itself, through which no gradient flows.",
            _infer_stop_gradient,
            lambda v, t, r: adjit_d.StopGradientOp(v[0].type, v[0]).result,
            differentiable=False)


def _infer_block_dim(args):
    if args:
        raise TypeError(f"block_dim() takes no arguments, got {len(args)}")
    return T.int32


add_builtin("block_dim", "block_dim(): the number of threads in the calling thread's block. adjit runs kernels on "
            "the CPU, where a launch has no thread blocks (each thread runs alone): 1, as Warp's CPU launches "
            "return (whatever block_dim the launch or module names). (The PTX of adjit.compile(target=\"cuda\") "
            "says 1 too: adjit does not launch it.)", _infer_block_dim,
            lambda v, t, r: values.constant(T.int32, 1), differentiable=False)


def _infer_cast(args, dtype):
    if len(args) != 1:
        raise TypeError(f"cast() takes one value and dtype=, got {len(args)} values")
    a = args[0]
    scalar = T.scalar_of(a)
    if scalar is None or scalar.is_bool or dtype.is_bool or isinstance(a, T.MatrixType):
        raise TypeError(f"cast() reinterprets a non-bool scalar or vector as a non-bool scalar type, got {a} to "
                        f"{dtype}")
    bits = scalar.bits * (a.length if isinstance(a, T.VectorType) else 1)
    if bits != dtype.bits:
        raise TypeError(f"cast() keeps the bits, so the sizes must match: {a} has {bits} bits, {dtype} {dtype.bits}")
    return dtype


def _emit_cast(vals, types, result, dtype):
    # No gradient flows through a reinterpretation (as Warp's): the input is cut first.
    x = adjit_d.StopGradientOp(vals[0].type, vals[0]).result
    if isinstance(types[0], T.VectorType):  # vector<n x s> -> vector<1 x dtype> -> its element
        x = vector_d.BitCastOp(ir.VectorType.get([1], dtype.mlir()), x).result
        x = vector_d.ExtractOp(x, [], [0]).result
    else:
        x = arith.BitcastOp(dtype.mlir(), x).result
    return adjit_d.StopGradientOp(x.type, x).result  # (and out: the bitcasts have no derivative rules)


add_builtin("cast", "cast(a, dtype): the bits of a (a scalar, or a vector of the same total size) read as a "
            "dtype scalar (Warp's reinterpretation, e.g. cast(int32(0x40000000), float32) == 2.0); not "
            "differentiable. Sizes must match.", _infer_cast, _emit_cast, differentiable=False,
            static_params=(StaticParam("dtype", "dtype", REQUIRED),), params=("a", "dtype"))
