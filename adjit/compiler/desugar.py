"""Rewrites of a kernel's Python AST into the structured subset the frontend
builds IR from, and the small AST analyses the frontend asks of it.

- ``normalize_returns``: early returns in branches become if/else.
- ``lower_loop_jumps``: ``break``/``continue`` become flags and guarded code.
- ``lower_loop_returns``: returns inside loops become flags, ``break``s and a
  return after the loop (a value through result locals, typed by the frontend
  with ``build_returning_loop``).
- ``assigned_names``, ``always_returns``, ``has_jump``: what a statement list
  (re)binds, whether it returns on every path, whether it jumps.
"""
from __future__ import annotations

import ast
import copy

from mlir import ir
from mlir.dialects import arith, scf

from .. import types as T
from .. import builtins as B
from .values import StructRef, Val, constant


def assigned_names(stmts) -> set[str]:
    """Local names a statement list may (re)bind, including `v.x = ...` on locals."""
    names: set[str] = set()

    def target_root(t):
        while isinstance(t, (ast.Attribute, ast.Subscript)):
            t = t.value
        return t

    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    for leaf in (t.elts if isinstance(t, ast.Tuple) else [t]):
                        root = target_root(leaf)
                        if isinstance(root, ast.Name):
                            names.add(root.id)
            elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
            elif isinstance(node, LoopReturn):
                names.update(_result_of(node).names)
            elif isinstance(node, ast.Call):
                for arg in _written_arguments(node):
                    if isinstance(arg, ast.Name):
                        names.add(arg.id)  # the call writes it (Builtin.rebinds)
                if not _is_builtin_call(node):
                    # An @func may take arguments by reference (ref[T], local
                    # arrays) and write them back (by_reference.py).
                    for arg in [*node.args, *(k.value for k in node.keywords)]:
                        root = target_root(arg.value if isinstance(arg, ast.Starred) else arg)
                        if isinstance(root, ast.Name):
                            names.add(root.id)
    return names


def _is_builtin_call(call: ast.Call) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return B.lookup(name) is not None


def _written_arguments(call: ast.Call) -> list[ast.expr]:
    """The argument nodes a call may write: the ``rebinds`` of the builtin
    its callee is named after (``randf(s)`` advances s), given positionally
    or by their names in ``params``. By name, before names are resolved: a
    name counted that the call does not write just rides along."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    builtin = B.lookup(name)
    if builtin is None:
        return []
    written = [call.args[i] for i in builtin.rebinds if i < len(call.args)]
    names = {builtin.params[i] for i in builtin.rebinds if i < len(builtin.params)}
    return written + [k.value for k in call.keywords if k.arg in names]


def always_returns(stmts) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    if isinstance(last, ast.If):
        return always_returns(last.body) and always_returns(last.orelse)
    return False


def _may_return(stmt) -> bool:
    return any(isinstance(n, ast.Return) for n in ast.walk(stmt))


class ZeroValue(ast.expr):
    """The zero of ``value_type`` (a scalar, vector or matrix type): what a
    device function that falls off its end returns (see ``falls_off``)."""

    _fields = ()

    def __init__(self, value_type, **kwargs):
        super().__init__(**kwargs)
        self.value_type = value_type


def falls_off(stmts: list[ast.stmt], value_type) -> list[ast.stmt]:
    """``stmts`` of a device function that returns a value on some path,
    with ``return <zero of value_type>`` at the end when a path may fall off
    it: as Warp, whose functions return a value-initialized result there."""
    if always_returns(stmts):
        return stmts
    end = stmts[-1]
    ret = ast.Return(value=ZeroValue(value_type, lineno=end.lineno, col_offset=end.col_offset),
                     lineno=getattr(end, "end_lineno", end.lineno) or end.lineno, col_offset=end.col_offset)
    return [*stmts, ret]


def normalize_returns(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """Rewrites early returns in branches into structured if/else.

    An ``if`` that returns on some path, followed by ``rest``, becomes
    ``if c: body; rest  else: orelse; rest`` (``rest`` is dropped after a
    return), recursively. Then every return is in tail position and maps onto
    scf.if results, and a path that falls off the end of a branch falls off
    the end of the function.
    """
    out: list[ast.stmt] = []
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, ast.Return):
            out.append(stmt)
            return out  # the rest is unreachable
        if isinstance(stmt, ast.If) and _may_return(stmt):
            rest = stmts[i + 1:]
            body = normalize_returns(stmt.body + rest)
            orelse = normalize_returns(stmt.orelse + rest)
            out.append(ast.If(stmt.test, body, orelse, lineno=stmt.lineno, col_offset=stmt.col_offset))
            return out
        out.append(stmt)
    return out


def has_jump(stmts) -> bool:
    """Whether a loop body has a break/continue of its own (not of a nested loop)."""
    def visit(node) -> bool:
        if isinstance(node, (ast.Break, ast.Continue)):
            return True
        if isinstance(node, (ast.For, ast.While, ast.FunctionDef, ast.Lambda)):
            return False
        return any(visit(child) for child in ast.iter_child_nodes(node))
    return any(visit(s) for s in stmts)


def _guard_jumps(stmts, brk: str, cont: str) -> list[ast.stmt]:
    """Replaces break/continue by flag assignments and guards what follows them.

    After a statement that may jump, the rest of the block runs under
    ``if not (brk or cont)``, so every path ends at the block's end and the
    loop maps onto scf.while with the flags as loop-carried state.
    """
    out: list[ast.stmt] = []
    for idx, stmt in enumerate(stmts):
        if isinstance(stmt, (ast.Break, ast.Continue)):
            flag = brk if isinstance(stmt, ast.Break) else cont
            out.append(ast.copy_location(ast.Assign([ast.Name(flag, ast.Store())], ast.Constant(True)), stmt))
            return out  # the rest of this block is unreachable
        if isinstance(stmt, ast.If) and has_jump([stmt]):
            out.append(ast.copy_location(ast.If(stmt.test, _guard_jumps(stmt.body, brk, cont),
                                                _guard_jumps(stmt.orelse, brk, cont)), stmt))
            rest = _guard_jumps(stmts[idx + 1:], brk, cont)
            if rest:
                neither = ast.UnaryOp(ast.Not(), ast.BoolOp(ast.Or(), [ast.Name(brk, ast.Load()),
                                                                      ast.Name(cont, ast.Load())]))
                out.append(ast.copy_location(ast.If(neither, rest, []), stmts[idx + 1]))
            return out
        out.append(stmt)
    return out


def lower_loop_jumps(loop: ast.For | ast.While, uid: int) -> list[ast.stmt]:
    """Rewrites a loop with break/continue into flag-guarded while-loop statements.

    ``for i in range(a, b, s)`` becomes a while loop over a hidden counter
    (range bounds are evaluated once, as in Python); a break stops the loop
    through the loop condition, a continue skips the rest of the body.
    """
    brk, cont = f"_adjit_break{uid}", f"_adjit_continue{uid}"

    def name(n, store=False):
        return ast.Name(n, ast.Store() if store else ast.Load())

    def assign(n, value):
        return ast.Assign([name(n, True)], value)

    pre = [assign(brk, ast.Constant(False)), assign(cont, ast.Constant(False))]
    body = [assign(cont, ast.Constant(False))]
    not_broken = ast.UnaryOp(ast.Not(), name(brk))
    if isinstance(loop, ast.While) and assigned_names([ast.Expr(loop.test)]):
        # The test writes locals (a call taking them by reference): as in
        # Python it runs only while the loop does, never after a break.
        test = not_broken
        body.append(ast.If(loop.test, _guard_jumps(loop.body, brk, cont), [assign(brk, ast.Constant(True))]))
    elif isinstance(loop, ast.While):
        test = ast.BoolOp(ast.And(), [loop.test, not_broken])
        body += _guard_jumps(loop.body, brk, cont)
    else:
        args = loop.iter.args
        start, stop, step = (ast.Constant(0), args[0], None) if len(args) == 1 else (
            args[0], args[1], args[2] if len(args) == 3 else None)
        k, stop_n, step_n = f"_adjit_k{uid}", f"_adjit_stop{uid}", f"_adjit_step{uid}"
        pre += [assign(k, start), assign(stop_n, stop), assign(step_n, step or ast.Constant(1))]
        literal_step = None
        if step is None:
            literal_step = 1
        elif isinstance(step, ast.Constant):
            literal_step = step.value
        elif isinstance(step, ast.UnaryOp) and isinstance(step.op, ast.USub) and isinstance(step.operand, ast.Constant):
            literal_step = -step.operand.value
        up = ast.Compare(name(k), [ast.Lt()], [name(stop_n)])
        down = ast.Compare(name(k), [ast.Gt()], [name(stop_n)])
        if literal_step is not None:
            in_range = up if literal_step > 0 else down
        else:
            zero = ast.Constant(0)
            in_range = ast.BoolOp(ast.Or(), [
                ast.BoolOp(ast.And(), [ast.Compare(name(step_n), [ast.Gt()], [zero]), up]),
                ast.BoolOp(ast.And(), [ast.Compare(name(step_n), [ast.Lt()], [zero]), down])])
        test = ast.BoolOp(ast.And(), [in_range, not_broken])
        body.append(ast.Assign([ast.Name(loop.target.id, ast.Store())], name(k)))
        body += _guard_jumps(loop.body, brk, cont)
        body.append(ast.If(not_broken, [assign(k, ast.BinOp(name(k), ast.Add(), name(step_n)))], []))
    new_loop = ast.While(test, body, [])
    stmts = pre + [new_loop]
    for s in stmts:
        ast.copy_location(s, loop)
    ast.fix_missing_locations(ast.Module(stmts, []))
    for node in ast.walk(ast.Module(stmts, [])):
        if not hasattr(node, "lineno") or node.lineno is None:
            ast.copy_location(node, loop)
    return stmts


def unrolled_jumps(loop: ast.For, uid: int) -> tuple[list[ast.stmt], list[ast.stmt]]:
    """For a loop over ``range(static(n))`` with break/continue: the
    statements to run before its copies (``brk = False``) and one copy of
    its body, ``cont = False; if not brk: <body, jumps guarded>``."""
    brk, cont = f"_adjit_break{uid}", f"_adjit_continue{uid}"

    def assign(n, value):
        return ast.Assign([ast.Name(n, ast.Store())], ast.Constant(value))

    before = [assign(brk, False)]
    body = [assign(cont, False),
            ast.If(ast.UnaryOp(ast.Not(), ast.Name(brk, ast.Load())), _guard_jumps(loop.body, brk, cont), [])]
    for s in before + body:
        ast.copy_location(s, loop)
    for node in ast.walk(ast.Module(before + body, [])):
        if not hasattr(node, "lineno") or node.lineno is None:
            ast.copy_location(node, loop)
    return before, body


def _returns_inside(loop, valued: bool | None = False) -> bool:
    """Whether ``loop`` holds a ``return`` (not in a nested def): a bare one
    (``valued=False``), one with a value (``True``) or either (``None``)."""
    def visit(node) -> bool:
        if isinstance(node, ast.Return):
            return valued is None or (node.value is not None) == valued
        if isinstance(node, (ast.FunctionDef, ast.Lambda)):
            return False
        return any(visit(child) for child in ast.iter_child_nodes(node))
    return any(visit(s) for s in loop.body)


class LoopResult:
    """What the nodes of one loop that returns a value share: the result's
    locals (``_adjit_result<k>_<j>``, one per returned value), their types
    (known once the frontend has probed the loop) and, while it probes, the
    returns it has met."""

    def __init__(self, uid: int):
        self.key = f"_adjit_result{uid}"
        self.types = None  # list of kernel types, set by build_returning_loop
        self.is_tuple = False
        self.probing = False
        self.seen: list = []  # (return node, values) met while probing

    @property
    def names(self) -> list[str]:
        return [f"{self.key}_{j}" for j in range(len(self.types or ()))]


class ReturningLoop(ast.stmt):
    """``flag = False; <loop>`` of an outermost loop with a ``return value``
    inside: the frontend first builds ``body`` into a throwaway op to learn
    the returned types, binds the result locals to zeros of them, then
    builds ``body`` for real (``build_returning_loop``)."""
    _fields = ("body",)


class LoopReturn(ast.stmt):
    """``return value`` inside a loop, as an assignment of the loop's result
    locals (``build_loop_return``); a flag and ``break``s follow it."""
    _fields = ("value",)


class LoopResultValue(ast.expr):
    """The loop's result locals, as the value of the ``return`` after the loop."""
    _fields = ()


def _result_of(node) -> LoopResult:
    return node.adjit_result


def lower_loop_returns(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """Rewrites a ``return`` inside loops into a flag and ``break``s: each
    enclosing loop breaks when the flag is set, and after the outermost one
    ``if flag: return``. The statements are copied, never changed in place.

    A ``return value`` also assigns the loop's result locals (``LoopReturn``),
    the outermost loop is wrapped in a ``ReturningLoop`` (which types and
    binds them before the loop) and the return after it returns them
    (``LoopResultValue``)::

        for i in range(n):             ReturningLoop: r = 0 (typed by a probe); f = False
            if c(i):                     for i in range(n):
                return g(i)                  if c(i): r = g(i); f = True; break
        return h()                     if f: return r
                                       return h()

    After ``while True`` without a ``break`` of its own, only a return leaves
    the loop: the return after it is unconditional.
    """
    counter = iter(range(1 << 30))

    def at(node, like):
        ast.copy_location(node, like)
        for child in ast.walk(node):
            if not hasattr(child, "lineno"):
                ast.copy_location(child, like)
        return node

    def flag_set(flag, value, like):
        return at(ast.Assign([ast.Name(flag, ast.Store())], ast.Constant(value)), like)

    def in_loop(body, flag, result):
        out = []
        for stmt in body:
            if isinstance(stmt, ast.Return):
                if stmt.value is not None:
                    set_result = LoopReturn(value=stmt.value)
                    set_result.adjit_result = result
                    out.append(at(set_result, stmt))
                out += [flag_set(flag, True, stmt), at(ast.Break(), stmt)]
                return out  # the rest is unreachable
            if isinstance(stmt, ast.If):
                out.append(at(ast.If(stmt.test, in_loop(stmt.body, flag, result),
                                     in_loop(stmt.orelse, flag, result)), stmt))
            elif isinstance(stmt, (ast.For, ast.While)) and _returns_inside(stmt, None):
                out.append(loop_copy(stmt, flag, result))
                out.append(at(ast.If(ast.Name(flag, ast.Load()), [at(ast.Break(), stmt)], []), stmt))
            else:
                out.append(stmt)
        return out

    def loop_copy(loop, flag, result):
        new = copy.copy(loop)
        new.body = in_loop(loop.body, flag, result)
        return new

    def block(body):
        out = []
        for stmt in body:
            if isinstance(stmt, (ast.For, ast.While)) and _returns_inside(stmt, None):
                uid = next(counter)
                flag = f"_adjit_returned{uid}"
                if not _returns_inside(stmt, True):
                    out += [flag_set(flag, False, stmt), loop_copy(stmt, flag, None),
                            at(ast.If(ast.Name(flag, ast.Load()), [at(ast.Return(None), stmt)], []), stmt)]
                    continue
                result = LoopResult(uid)
                wrapped = ReturningLoop(body=[flag_set(flag, False, stmt), loop_copy(stmt, flag, result)])
                wrapped.adjit_result = result
                value = LoopResultValue()
                value.adjit_result = result
                ret = at(ast.Return(value), stmt)
                endless = (isinstance(stmt, ast.While) and isinstance(stmt.test, ast.Constant)
                           and stmt.test.value is True and not has_jump(stmt.body))
                out += [at(wrapped, stmt),
                        ret if endless else at(ast.If(ast.Name(flag, ast.Load()), [ret], []), stmt)]
                if endless:
                    return out  # the rest is unreachable
            elif isinstance(stmt, ast.If):
                out.append(at(ast.If(stmt.test, block(stmt.body), block(stmt.orelse)), stmt))
            else:
                out.append(stmt)
        return out

    return block(stmts)


# --- frontend hooks for the nodes above --------------------------------------------------------
# They build IR through the frontend ``fe`` (a FunctionBuilder): the only
# place this module does; the types of a loop's returns are known only by
# building the loop.

def build_returning_loop(fe, stmt: ReturningLoop) -> None:
    """Builds ``stmt.body`` into a throwaway ``scf.if`` to learn what its
    returns give (their types must agree; a literal takes the others' type),
    binds the result locals to zeros of those types, then builds the body."""
    result = _result_of(stmt)
    before = dict(fe.env)
    result.probing, result.seen, result.types = True, [], None
    cond = arith.ConstantOp(ir.IntegerType.get_signless(1), 1)
    probe = scf.IfOp(cond.result, [], has_else=False)
    try:
        with ir.InsertionPoint(probe.then_block):
            fe.visit_block(stmt.body)
    finally:
        result.probing = False
        probe.operation.erase()
        cond.operation.erase()
        fe.env = before

    if not result.seen:
        raise fe.error("the return inside this loop is never reached", stmt)
    first_node, first = result.seen[0]
    types = []
    for j in range(len(first)):
        typed = [(node, vals[j]) for node, vals in result.seen if j < len(vals) and not vals[j].is_literal]
        types.append(typed[0][1].type if typed else first[j].type)
    where = f"{fe.src.filename}:{fe.src.line_of(first_node)}"
    for node, vals in result.seen:
        if len(vals) != len(first):
            raise fe.error(f"this return gives {len(vals)} value(s), the return at {where} gives "
                           f"{len(first)}", node)
        for v, t in zip(vals, types):
            if not v.is_literal and v.type != t:
                raise fe.error(f"the returns inside this loop give different types: {v.type} here, "
                               f"{t} at {where}", node)
            fe.coerce(v, t, node)  # a literal must fit the type
    for node, t in zip([first_node] * len(types), types):
        if not isinstance(t, (T.ScalarType, T.VectorType, T.MatrixType)):
            raise fe.error(f"returning a {t} from inside a loop is not supported", node)
    result.types = types
    for name, t in zip(result.names, types):
        fe.env[name] = Val(t, constant(t, 0))
    if fe.visit_block(stmt.body) is not None:
        raise fe.error("return inside a loop is not supported", stmt)


def build_loop_return(fe, stmt: LoopReturn) -> None:
    """``return value`` inside a loop: while probing, notes the values; else
    assigns them to the loop's result locals."""
    result = _result_of(stmt)
    value = fe.expr(stmt.value)
    items = list(value) if isinstance(value, tuple) else [value]
    if any(isinstance(v, StructRef) for v in items):
        raise fe.error("returning a struct from a function is not supported yet (return its fields, "
                       "or pass the struct in and read it)", stmt)
    for v in items:
        if not isinstance(v, Val):
            raise fe.error(f"cannot return {fe.describe(v)}", stmt.value)
    if result.probing:
        result.seen.append((stmt, items))
        result.is_tuple = isinstance(value, tuple)
        return
    for name, t, v in zip(result.names, result.types, items):
        fe.env[name] = fe.concrete(fe.coerce(v, t, stmt.value))


def loop_result_value(fe, node: LoopResultValue):
    """The loop's result locals, as the value the return after it returns."""
    result = _result_of(node)
    values = tuple(fe.env[name] for name in result.names)
    return values if result.is_tuple else values[0]
