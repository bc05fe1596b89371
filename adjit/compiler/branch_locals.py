"""Locals first assigned inside a loop body or on one path of an ``if``, and
read after the statement.

Warp keeps such a local visible after the statement (its C++ declares every
local at the top of the function): after a loop it holds the value the loop
last gave it, after an ``if`` the value of the path that assigned it, and
where nothing assigned it (a loop that ran no iteration, the other path)
it is uninitialized memory. adjit gives the same values, and zero where
Warp's is undefined:

- a loop: the frontend builds the loop's body once into a throwaway region
  to learn the types of the locals it assigns first (``probe_types``),
  binds them to zero before the loop and builds the loop for real, so they
  are carried through it like any local bound before it (a value kept
  across iterations, as in Python);
- an ``if``: the path that does not assign the local gives it zero.

Only locals that are read after the statement are carried (``reads_after``,
by source position), and only numbers, vectors, matrices, quaternions and
transforms: a struct, array or local array cannot start at zero, so reading
one after the statement is a KernelNameError saying why (``explain``), as
is reading a local before any assignment reaches it (Warp refuses that
too: "Referencing undefined symbol").
"""
from __future__ import annotations

import ast

from mlir import ir
from mlir.dialects import arith, scf

from .. import types as T
from . import views as V
from .desugar import _guard_jumps, assigned_names, has_jump
from .values import Val, constant


def _position(node) -> tuple[int, int]:
    return (node.lineno, node.col_offset)


def end_of(node) -> tuple[int, int]:
    """Where ``node`` ends in the source: the furthest end of the nodes in
    it (desugared statements may carry the position of their first part)."""
    end = (0, 0)
    for n in ast.walk(node):
        if getattr(n, "lineno", None) is None:
            continue
        line = getattr(n, "end_lineno", None) or n.lineno
        col = getattr(n, "end_col_offset", None)
        end = max(end, (line, col if col is not None else n.col_offset))
    return end


class Reads:
    """Where each local of a function's source is read and assigned."""

    def __init__(self, tree: ast.AST):
        self.loads: list[tuple[tuple[int, int], str]] = []
        self.stores: dict[str, list[ast.AST]] = {}
        for n in ast.walk(tree):
            if isinstance(n, ast.Name) and getattr(n, "lineno", None) is not None:
                if isinstance(n.ctx, ast.Load):
                    self.loads.append((_position(n), n.id))
                else:
                    self.stores.setdefault(n.id, []).append(n)

    def after(self, node) -> set[str]:
        """The names read after ``node`` ends."""
        end = end_of(node)
        return {name for pos, name in self.loads if pos >= end}


def zeroable(v) -> bool:
    """Whether a local's value can start at zero: a number, vector, matrix,
    quaternion or transform (not a struct, array or local array)."""
    return isinstance(v, Val) and isinstance(v.type, (T.ScalarType, T.VectorType, T.MatrixType))


def what(v) -> str:
    if V.is_view(v):
        return "a row of an array"
    if isinstance(v, Val) and isinstance(v.type, T.LocalArrayType):
        return "a local array"
    if isinstance(v, Val) and isinstance(v.type, T.ArrayType):
        return "an array"
    if isinstance(v, Val):
        return f"a {v.type} value"
    name = getattr(getattr(v, "type", None), "name", None)
    return f"a {name} struct" if name else "not a value"


def bind_loop_locals(fe, loop) -> None:
    """Before ``loop`` (a for or while statement) is built: binds to zero
    the locals its body assigns first that are read after it, so the loop
    carries them (see the module's docstring)."""
    target = loop.target.id if isinstance(loop, ast.For) else None
    assigned = assigned_names(loop.body)
    fresh = sorted(n for n in assigned if n not in fe.env and n != target and not n.startswith("_adjit")
                   and "." not in n)
    if not fresh:
        return
    fresh = [n for n in fresh if n in fe.reads.after(loop)]
    if not fresh:
        return
    seen = probe_types(fe, loop, fresh)
    line = fe.src.line_of(loop)
    for name in fresh:
        v = seen.get(name)
        if zeroable(v):
            t = v.type
            fe.env[name] = Val(t, constant(t, 0))
        elif v is not None:
            fe.out_of_scope[name] = (
                f"'{name}' is first assigned inside the loop at line {line} and is {what(v)} there, which adjit "
                "does not carry out of a loop (a number, vector or matrix local is carried, zero if the loop "
                "gave it no value); assign it before the loop")


def probe_types(fe, loop, names) -> dict:
    """The values ``names`` have at the end of one pass of ``loop``'s body,
    built into a throwaway ``scf.if`` (types only: the ops are erased)."""
    saved_env = dict(fe.env)
    saved_acc = dict(fe.adjoint_acc)
    saved_out = dict(fe.out_of_scope)
    body = loop.body
    i1 = ir.IntegerType.get_signless(1)
    cond = arith.ConstantOp(i1, 1)
    probe = scf.IfOp(cond.result, [], has_else=False)
    try:
        with ir.InsertionPoint(probe.then_block):
            if has_jump(body):  # as lower_loop_jumps guards what follows a break or continue
                brk, cont = "_adjit_probe_break", "_adjit_probe_continue"
                fe.env[brk] = fe.env[cont] = Val(T.bool_, arith.ConstantOp(i1, 0).result)
                body = _guard_jumps(body, brk, cont)
            if isinstance(loop, ast.For):
                fe.env[loop.target.id] = Val(T.int32, constant(T.int32, 0))
            fe.visit_block(body)
            return {n: fe.env.get(n) for n in names}
    finally:
        probe.operation.erase()
        cond.operation.erase()
        fe.env, fe.adjoint_acc, fe.out_of_scope = saved_env, saved_acc, saved_out


def merge_one_path(fe, stmt, name, then_v, else_v, then_block, else_block):
    """For a local ``name`` that one path of the if ``stmt`` assigns and the
    other does not: (then value, else value), the missing one zero when the
    local is read after the if; (None, None) when it is not visible after
    it (explained in ``fe.out_of_scope`` where that matters)."""
    if name not in fe.reads.after(stmt):
        return None, None
    present = then_v if then_v is not None else else_v
    if not zeroable(present):
        fe.out_of_scope[name] = (
            f"'{name}' is assigned on one path of the if at line {fe.src.line_of(stmt)} only and is "
            f"{what(present)} there, which cannot be zero on the other path (as a number, vector or matrix "
            "local is); assign it before the if")
        return None, None
    with ir.InsertionPoint(else_block if else_v is None else then_block):
        zero = Val(present.type, constant(present.type, 0))
    return (then_v, zero) if else_v is None else (zero, else_v)


def explain(fe, node: ast.Name) -> str:
    """Why the local ``node.id`` is not defined where ``node`` reads it
    (an empty string when it is never assigned in the function)."""
    name = node.id
    if name in fe.out_of_scope:
        return ": " + fe.out_of_scope[name]
    stores = fe.reads.stores.get(name, [])
    if not stores:
        return ""
    later = [s for s in stores if s.lineno >= node.lineno]  # x = x + 1: the read comes first
    if later and len(later) == len(stores):
        return (f": it is assigned only later (line {fe.src.line_of(later[0])}); as in Warp, a local must be "
                "assigned before it is read, and one first assigned later in a loop body does not carry its "
                "value into the next iteration: assign it before the loop")
    return (f": the assignment at line {fe.src.line_of(stores[0])} does not reach this read (it is on another "
            "path, or in a function of its own)")
