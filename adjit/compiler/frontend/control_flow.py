"""Statements and control flow: blocks, if, for and while loops, and the expressions
that branch (``a if c else b``, ``and``/``or``).

Control flow becomes ``scf`` ops whose results carry the locals assigned
inside them; break, continue and returns in loops are first rewritten by
``desugar``."""
from __future__ import annotations

import ast

import numpy as np
from mlir import ir
from mlir.dialects import arith, scf

from ... import types as T
from ...dialects import adjit as adjit_d
from ...errors import KernelSyntaxError, KernelTypeError
from .. import branch_locals as BL
from .. import by_reference as BR
from .. import views as V
from ..desugar import (assigned_names, build_loop_return, build_returning_loop, has_jump, loop_result_value,
                       lower_loop_jumps, unrolled_jumps)
from ..values import StructRef, Val, constant, from_index, literal, to_index


class ControlFlow:
    """FunctionBuilder's statements, branches and loops."""

    def visit_block(self, stmts) -> list[Val] | None:
        """Emits statements; returns the returned values if the block returns."""
        for stmt in stmts:
            self.node = stmt
            with self.loc(stmt):
                if isinstance(stmt, ast.Return):
                    if stmt.value is None:
                        return BR.final_values(self)
                    value = self.expr(stmt.value)
                    return self.returned_values(value if isinstance(value, tuple) else (value,), stmt) + \
                        BR.final_values(self)
                if isinstance(stmt, ast.If):
                    returned = self.stmt_If(stmt)
                    if returned is not None:
                        return returned
                    continue
                method = getattr(self, "stmt_" + type(stmt).__name__, None)
                if method is None:
                    raise self.error(f"'{type(stmt).__name__}' statements are not supported in kernels",
                                     stmt, KernelSyntaxError)
                try:
                    method(stmt)
                except T.NotInKernelsError as e:  # a host-only vector or matrix type
                    raise self.error(str(e), stmt, KernelTypeError) from None
        return None

    # A return inside a loop, lowered by desugar.lower_loop_returns.
    stmt_ReturningLoop = build_returning_loop

    stmt_LoopReturn = build_loop_return

    expr_LoopResultValue = loop_result_value

    def stmt_Pass(self, stmt):
        pass

    def stmt_Assert(self, stmt):
        """``assert cond[, "message"]``: in debug mode a check that reports a
        false ``cond`` after the launch as a KernelAssertionError naming the
        line and the thread, as a failed bounds check is reported (the
        thread goes on); otherwise nothing (Warp checks asserts in debug mode
        only)."""
        what = f"assert {ast.unparse(stmt.test)}"
        if stmt.msg is not None:
            if not (isinstance(stmt.msg, ast.Constant) and isinstance(stmt.msg.value, str)):
                raise self.error("an assert's message in a kernel must be a string literal", stmt.msg,
                                 KernelSyntaxError)
            what += f", {stmt.msg.value!r}"
        if not self.mb.asserts:
            return
        holds = self.condition(stmt.test)
        index = ir.IndexType.get()
        zero, one = arith.ConstantOp(index, 0).result, arith.ConstantOp(index, 1).result
        # Index 1 of an extent of 1 while the condition is false: the check reports it.
        adjit_d.CheckIndexOp(arith.SelectOp(holds, zero, one).result, one, what)

    def stmt_Expr(self, stmt):
        if isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            return  # a docstring
        self.expr(stmt.value)

    def stmt_If(self, stmt):
        cond = self.condition(stmt.test)
        assigned = sorted(assigned_names(stmt.body) | assigned_names(stmt.orelse))
        before = dict(self.env)

        def run(branch_stmts, block):
            self.env = dict(before)
            with ir.InsertionPoint(block):
                returned = self.visit_block(branch_stmts)
            return returned, self.env

        # Emit both branches into a result-less scf.if first; once the merged
        # locals (and their types) are known, move them into the final op.
        probe = scf.IfOp(cond, [], has_else=True)
        then_ret, then_env = run(stmt.body, probe.then_block)
        else_ret, else_env = run(stmt.orelse, probe.else_block)
        if (then_ret is None) != (else_ret is None):
            # normalize_returns leaves an if that returns on one path in tail
            # position, so falling off the other path ends the function: a bare return.
            given_back = len(BR.out_types(self.ref_params))
            if len(then_ret if then_ret is not None else else_ret) > given_back:
                raise self.error("a function that returns a value must return it on every path",
                                 stmt, KernelSyntaxError)
            # Falling off the end gives back the by-reference parameters too.
            if then_ret is None:
                self.env = then_env
                with ir.InsertionPoint(probe.then_block):
                    then_ret = BR.final_values(self)
            if else_ret is None:
                self.env = else_env
                with ir.InsertionPoint(probe.else_block):
                    else_ret = BR.final_values(self)

        if then_ret is not None:
            if len(then_ret) != len(else_ret) or any(
                    a.type != b.type for a, b in zip(then_ret, else_ret)):
                raise self.error("the branches return values of different types: "
                                 f"{[v.type for v in then_ret]} vs {[v.type for v in else_ret]}", stmt)
            then_vals = [v.value for v in then_ret]
            else_vals = [v.value for v in else_ret]
            result_types = [v.type for v in then_ret]
            merged = []
        else:
            merged = []
            structs = []  # struct locals bound on both paths: their fields merge
            arrays = {}  # their array fields bound to the same array on both paths (a null array)
            views = {}  # row views bound on both paths: their leading indices merge
            expanded = []
            for name in assigned:
                t, e = then_env.get(name), else_env.get(name)
                if isinstance(t, StructRef) and isinstance(e, StructRef):
                    if t.type is not e.type:
                        raise self.error(f"'{name}' is a {t.type.name} in one branch and a {e.type.name} in "
                                         "the other", stmt)
                    structs.append(t)
                    expanded += [p for p, ft in t.type.leaves(name) if not isinstance(ft, T.ArrayType)]
                    arrays.update({p: then_env[p] for p, ft in t.type.leaves(name) if isinstance(ft, T.ArrayType)
                                   and then_env.get(p) is not None and then_env.get(p) is else_env.get(p)})
                elif V.is_view(t) or V.is_view(e):
                    if (t is None) != (e is None):  # a row on one path: not visible after (says why)
                        BL.merge_one_path(self, stmt, name, t, e, probe.then_block, probe.else_block)
                    expanded += V.merge(self, name, t, e, stmt, views)
                else:
                    expanded.append(name)
            for name in expanded:
                t, e = then_env.get(name), else_env.get(name)
                if (t is None) != (e is None):  # assigned on one path only: zero on the other if read after
                    t, e = BL.merge_one_path(self, stmt, name, t, e, probe.then_block, probe.else_block)
                    if t is not None:
                        then_env[name], else_env[name] = t, e
                if t is None or e is None or not isinstance(t, Val) or not isinstance(e, Val):
                    continue  # not visible after the if
                # A literal takes the type of the value on the other path (`a = 1.0` for a float64 a).
                if t.type != e.type and t.is_literal != e.is_literal:
                    if t.is_literal:
                        t = then_env[name] = self.coerce(t, e.type, stmt)
                    else:
                        e = else_env[name] = self.coerce(e, t.type, stmt)
                if t.type != e.type:
                    raise self.error(f"'{name}' is {t.type} in one branch and {e.type} in the other", stmt)
                if t is e:
                    continue
                merged.append(name)
            then_vals, else_vals = [], []
            result_types = []
            for name in merged:
                tv, ev = then_env[name], else_env[name]
                with ir.InsertionPoint(probe.then_block):
                    then_vals.append(self.materialize(tv, tv.type))
                with ir.InsertionPoint(probe.else_block):
                    else_vals.append(self.materialize(ev, ev.type))
                result_types.append(tv.type)

        final = _replace_probe(cond, probe, [t.mlir() for t in result_types], then_vals, else_vals)

        self.env = dict(before)
        if then_ret is not None:
            return [Val(t, r) for t, r in zip(result_types, final.results)]
        for name, t, r in zip(merged, result_types, final.results):
            self.env[name] = Val(t, r)
        for ref in structs:
            self.declare_struct(ref)
        self.env.update(arrays)
        self.env.update(views)
        return None

    def unrolled_loop(self, stmt):
        """``for i in range(static(n))``: the body once per value, with ``i``
        that constant (as Warp unrolls it)."""
        bounds = []
        for a in stmt.iter.args:
            v = self.eval_static(a) if self.is_static_call(a) else self.expr(a)
            if isinstance(v, Val) and v.is_literal:
                v = v.literal
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise self.error("a loop over range(static(...)) needs constant integer bounds", a,
                                 KernelTypeError)
            bounds.append(int(v))
        values = range(*bounds)
        if len(values) > 1024:
            raise self.error(f"range(static(...)) unrolls to {len(values)} copies of the body; at most 1024",
                             stmt.iter)
        body = stmt.body
        if has_jump(body):  # each copy runs while no break was met
            self.loops_lowered += 1
            before, body = unrolled_jumps(stmt, self.loops_lowered)
            self.visit_block(before)
        for value in values:
            self.env[stmt.target.id] = literal(value)
            if self.visit_block(body) is not None:
                raise self.error("return inside a loop is not supported", stmt, KernelSyntaxError)

    def stmt_For(self, stmt):
        if stmt.orelse:
            raise self.error("for/else is not supported", stmt, KernelSyntaxError)
        if not isinstance(stmt.target, ast.Name):
            raise self.error("the loop variable must be a plain name", stmt.target, KernelSyntaxError)
        it = stmt.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
                and not it.keywords and 1 <= len(it.args) <= 3):
            raise self.error("only 'for i in range(...)' loops are supported", it, KernelSyntaxError)
        if any(self.is_static_call(a) for a in it.args):
            return self.unrolled_loop(stmt)
        BL.bind_loop_locals(self, stmt)  # locals first assigned in the body and read after it
        if has_jump(stmt.body):
            return self.loop_with_jumps(stmt)
        bounds = [self.coerce(self.expr(a), T.int32, a) for a in it.args]
        if len(bounds) == 1:
            bounds = [literal(0)] + bounds
        start, stop = bounds[0], bounds[1]
        step = bounds[2] if len(bounds) == 3 else literal(1)
        if step.is_literal and step.literal == 0:
            raise self.error("range() step must not be zero", it)
        i32 = T.int32
        carried = self.carried_names(n for n in sorted(assigned_names(stmt.body)) if n != stmt.target.id)
        inits = [self.concrete(self.env[n]) for n in carried]

        if step.is_literal and step.literal > 0:
            lb = to_index(self.materialize(start, i32))
            ub = to_index(self.materialize(stop, i32))
            st = arith.ConstantOp(ir.IndexType.get(), step.literal).result
            loop = scf.ForOp(lb, ub, st, [v.value for v in inits])
            with ir.InsertionPoint(loop.body):
                induction = from_index(loop.induction_variable)
        else:
            # Any step: iterate k over the trip count, i = start + k*step.
            s, e, d = (self.materialize(v, i32) for v in (start, stop, step))
            zero = constant(i32, 0)
            trips = arith.MaxSIOp(_trip_count(s, e, d, zero), zero).result
            loop = scf.ForOp(arith.ConstantOp(ir.IndexType.get(), 0).result, to_index(trips),
                             arith.ConstantOp(ir.IndexType.get(), 1).result, [v.value for v in inits])
            with ir.InsertionPoint(loop.body):
                k = from_index(loop.induction_variable)
                induction = arith.AddIOp(s, arith.MulIOp(k, d).result).result

        before = dict(self.env)
        for name, arg, v in zip(carried, loop.inner_iter_args, inits):
            self.env[name] = Val(v.type, arg)
        self.env[stmt.target.id] = Val(i32, induction)
        with ir.InsertionPoint(loop.body):
            if self.visit_block(stmt.body) is not None:
                raise self.error("return inside a loop is not supported", stmt, KernelSyntaxError)
            self.yield_carried(carried, [v.type for v in inits], stmt)
        self.env = before
        for name, v, r in zip(carried, inits, loop.results):
            self.env[name] = Val(v.type, r)
        self.bind_loop_variable_after(stmt.target.id, start, stop, step)

    def bind_loop_variable_after(self, name, start: Val, stop: Val, step: Val):
        """After ``for name in range(start, stop, step)``, ``name`` holds its
        last value, as in Python; after a loop that ran no iteration, its value
        from before the loop (the range's start if it had none)."""
        i32 = T.int32
        s, e, d = (self.materialize(v, i32) for v in (start, stop, step))
        zero, one = constant(i32, 0), constant(i32, 1)
        trips = _trip_count(s, e, d, zero)
        last = arith.AddIOp(s, arith.MulIOp(arith.SubIOp(trips, one).result, d).result).result
        ran = arith.CmpIOp(arith.CmpIPredicate.sgt, trips, zero).result
        previous = self.env.get(name)
        if previous is not None and previous.type == i32:
            otherwise = self.materialize(previous, i32)
        else:
            otherwise = s
        self.env[name] = Val(i32, arith.SelectOp(ran, last, otherwise).result)

    def stmt_While(self, stmt):
        if stmt.orelse:
            raise self.error("while/else is not supported", stmt, KernelSyntaxError)
        BL.bind_loop_locals(self, stmt)  # locals first assigned in the body and read after it
        if has_jump(stmt.body):
            return self.loop_with_jumps(stmt)
        # The test may write locals too (a call taking them by reference:
        # ``while mesh_query_aabb_next(query, face):``), each time it runs.
        carried = self.carried_names(sorted(assigned_names(stmt.body) | assigned_names([ast.Expr(stmt.test)])))
        inits = [self.concrete(self.env[n]) for n in carried]
        types = [v.type for v in inits]
        loop = scf.WhileOp([t.mlir() for t in types], [v.value for v in inits])
        before_block = loop.before.blocks.append(*[t.mlir() for t in types])
        after_block = loop.after.blocks.append(*[t.mlir() for t in types])
        outer = dict(self.env)
        for name, t, arg in zip(carried, types, before_block.arguments):
            self.env[name] = Val(t, arg)
        with ir.InsertionPoint(before_block):
            cond = self.condition(stmt.test)
            scf.ConditionOp(cond, self.carried_values(carried, types, stmt))
        self.env = dict(outer)
        for name, t, arg in zip(carried, types, after_block.arguments):
            self.env[name] = Val(t, arg)
        with ir.InsertionPoint(after_block):
            if self.visit_block(stmt.body) is not None:
                raise self.error("return inside a loop is not supported", stmt, KernelSyntaxError)
            self.yield_carried(carried, types, stmt)
        self.env = outer
        for name, t, r in zip(carried, types, loop.results):
            self.env[name] = Val(t, r)

    def yield_carried(self, carried, types, stmt) -> None:
        """Ends a loop body: yields the carried locals."""
        scf.YieldOp(self.carried_values(carried, types, stmt))

    def carried_values(self, carried, types, stmt) -> list:
        """The values of the carried locals, each with its type from before
        the loop (a literal takes it)."""
        outs = []
        for name, t in zip(carried, types):
            now = self.env[name]
            if now.type != t and now.is_literal:
                now = self.coerce(now, t, stmt)
            if now.type != t:
                raise self.error(f"'{name}' changes type in the loop, from {t} to {now.type}", stmt)
            outs.append(self.materialize(now, t))
        return outs

    def loop_with_jumps(self, loop):
        """A loop with break/continue, as flag-guarded while-loop statements."""
        if isinstance(loop, ast.For) and loop.target.id not in self.env:
            # Bound before the loop, the loop variable is carried through it and
            # keeps its last value after it, as in Python (the range's start if
            # the loop ran no iteration).
            args = loop.iter.args
            start = args[0] if len(args) > 1 else ast.Constant(0)
            self.env[loop.target.id] = self.coerce(self.expr(start), T.int32, start)
        self.loops_lowered += 1
        if self.visit_block(lower_loop_jumps(loop, self.loops_lowered)) is not None:
            raise self.error("return inside a loop is not supported", loop, KernelSyntaxError)

    def expr_BoolOp(self, node):
        # Short-circuit, as in Python and Warp: `b` in `a and b` runs only
        # when `a` holds (its side effects, and its gradient).
        is_and = isinstance(node.op, ast.And)
        acc = self.to_bool(self.expr(node.values[0]), node.values[0])
        i1 = ir.IntegerType.get_signless(1)
        for value in node.values[1:]:
            branch = scf.IfOp(acc, [i1], has_else=True)
            evaluate, decided = (branch.then_block, branch.else_block) if is_and else \
                (branch.else_block, branch.then_block)
            with ir.InsertionPoint(evaluate):
                scf.YieldOp([self.to_bool(self.expr(value), value)])
            with ir.InsertionPoint(decided):
                scf.YieldOp([arith.ConstantOp(i1, 0 if is_and else 1).result])
            acc = branch.results[0]
        return Val(T.bool_, acc)

    def expr_IfExp(self, node):
        # Only the taken side runs, as in Python and Warp: the other side's
        # side effects do not happen and it passes no gradient (so
        # `sqrt(x) if x > 0.0 else 0.0` has gradient 0, not NaN, at x <= 0).
        # Both sides are emitted into a result-less scf.if first; once their
        # common type is known they move into the final op.
        cond = self.condition(node.test)
        probe = scf.IfOp(cond, [], has_else=True)
        with ir.InsertionPoint(probe.then_block):
            a = self.expr(node.body)
        with ir.InsertionPoint(probe.else_block):
            b = self.expr(node.orelse)
        a, b = self.unify(a, b, node)
        with ir.InsertionPoint(probe.then_block):
            then_value = self.materialize(a, a.type)
        with ir.InsertionPoint(probe.else_block):
            else_value = self.materialize(b, b.type)
        final = _replace_probe(cond, probe, [a.type.mlir()], [then_value], [else_value])
        return Val(a.type, final.results[0])


def _replace_probe(cond, probe, result_types, then_vals, else_vals):
    """The scf.if with ``result_types`` that takes over the ops of ``probe``
    (a result-less scf.if built first, to learn the types), its branches
    yielding ``then_vals`` and ``else_vals``; ``probe`` is erased."""
    final = scf.IfOp(cond, result_types, has_else=True)
    for src, dst, vals in ((probe.then_block, final.then_block, then_vals),
                           (probe.else_block, final.else_block, else_vals)):
        for op in list(src.operations):
            dst.append(op.operation)
        with ir.InsertionPoint(dst):
            scf.YieldOp(vals)
    probe.operation.erase()
    return final


def _trip_count(s, e, d, zero):
    """ceil((e - s) / d) for ``range(s, e, d)`` (int32 values; at most 0
    when the range is empty)."""
    pos = arith.CmpIOp(arith.CmpIPredicate.sgt, d, zero).result
    span = arith.SelectOp(pos, arith.SubIOp(e, s).result, arith.SubIOp(s, e).result).result
    mag = arith.SelectOp(pos, d, arith.SubIOp(zero, d).result).result
    return arith.CeilDivSIOp(span, mag).result
