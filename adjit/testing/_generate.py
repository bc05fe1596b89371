"""The Hypothesis strategy that writes programs (see ``_program``).

Every decision is one Hypothesis draw, and every list of alternatives is
ordered simplest first, so shrinking a failing example yields a small
program: fewer statements, shallower expressions, plain reads and literals.

Well-conditioned by construction:

- every argument of a builtin with a ``domain`` is a literal or an input
  drawn inside a safe sub-interval of it, or an arbitrary expression mapped
  smoothly into that sub-interval (``c + r * 2h / (1 + h*h)`` for scalars,
  ``c + (2r / (1 + |h|^2)) h`` for vectors and quaternions, the Frobenius
  norm for matrices), never clamped;
- denominators are mapped into [0.5, 2.5] or [-2.5, -0.5];
- ``inverse`` gets a diagonally dominant matrix (``2.5 I + S``, |S_ij| < 0.6).

Kinks (min/max/abs/sign/clamp, comparisons in branches, loops, ``where``)
are not avoided by construction: the numpy evaluator measures how close
each came to switching and the oracle discards examples closer than its
margin.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

from . import _program as P
from . import _reference as R
from ._reference import BOOL, F, M, Q, S, V, X


@dataclass(frozen=True)
class GenConfig:
    """Sizes of generated programs (the defaults suit a CI budget)."""

    min_kernels: int = 1
    max_kernels: int = 3
    max_funcs: int = 2
    max_dim: int = 3
    max_runtime_trips: int = 3
    max_top_statements: int = 6
    max_block_statements: int = 3
    max_depth: int = 3
    max_loop_nesting: int = 2
    max_inputs: int = 4
    #: where generic inputs and literals are drawn
    value_range: float = 1.5
    #: builtins to draw from (None: every differentiable builtin of the registry)
    builtins: tuple | None = None
    #: the fuzzed value types (a subset of float64, vec3d, mat33d, quatd,
    #: spatial_vectord, transformd)
    types: tuple = (F, V, M, Q, S, X)
    #: ``y[i] += v`` stores (atomic adds)
    atomic_stores: bool = True
    #: reads of the thread's own element of an array the kernel writes
    #: (in-place updates: before or after the kernel's stores, in branches
    #: and loops)
    in_place_reads: bool = True
    #: a builtin name: the first kernel also stores that builtin applied to
    #: input reads, so its derivative rule is always on a differentiated path
    focus: str | None = None
    # Switches that keep the fuzzer away from a bug while it is open (turn one
    # off, with an xfail reproducer in tests/python/autodiff/test_fuzz_regressions.py,
    # and back on when the bug is fixed). All the bugs below are fixed:
    #: loops reversed by recomputation (``range(n)``, or any loop with
    #: break/continue: a while loop) nested in an if/else branch or in
    #: another such loop, directly or in a called device function; off while
    #: the adjoint pass aborts or emits invalid IR for them
    nested_dynamic_loops: bool = True
    #: ``wp.mat33d(<9 scalars>)`` and ``wp.mat33d(<3 rows>)``; off while a
    #: matrix with a constant row has no derivative rule (vector.to_elements)
    constructed_matrices: bool = True
    #: array stores inside if/else branches (and inside loops with
    #: break/continue, whose bodies the frontend guards with ifs); off while
    #: the adjoint pass builds an invalid scf.if for a branch that stores a
    #: value computed from a load made in that branch
    stores_in_branches: bool = True


#: The part of a builtin's domain the generator draws from: the domain cut to
#: [-CLIP, CLIP] (extreme arguments give ill-conditioned values), less 5% of
#: its width at each end.
CLIP = 2.5


def safe_interval(domain) -> tuple[float, float]:
    lo, hi = max(domain[0], -CLIP), min(domain[1], CLIP)
    w = hi - lo
    return (lo + 0.05 * w, hi - 0.05 * w)


DENOMINATORS = ((0.5, 2.5), (-2.5, -0.5))
INVERSE_OFF_DIAGONAL = (-0.6, 0.6)

_BIN = {
    F: [("+", F, F), ("-", F, F), ("*", F, F), ("/", F, F)],
    V: [("+", V, V), ("-", V, V), ("*", F, V), ("*", V, F), ("*", M, V), ("*", V, M), ("/", V, F)],
    M: [("+", M, M), ("-", M, M), ("*", F, M), ("*", M, F), ("*", M, M), ("/", M, F)],
    Q: [("+", Q, Q), ("-", Q, Q), ("*", F, Q), ("*", Q, F), ("*", Q, Q), ("/", Q, F)],
    S: [("+", S, S), ("-", S, S), ("*", F, S), ("*", S, F), ("/", S, F)],
    X: [("+", X, X), ("-", X, X), ("*", F, X), ("*", X, F), ("*", X, X), ("/", X, F)],
}

#: The composite types (components to read and write).
COMPOSITES = (V, M, Q, S, X)


def _positions(t):
    if t == V:
        return [(k,) for k in range(3)]
    if t in (Q, S, X):
        return [(k,) for k in range(int(R.SHAPE[t][0]))]
    if t == M:
        return [(r, c) for r in range(3) for c in range(3)] + [(r,) for r in range(3)]
    return []


def _walk(stmts):
    for s in stmts:
        yield s
        for child in ("body", "orelse"):
            yield from _walk(getattr(s, child, []))


def _has_dynamic_loop(stmts) -> bool:
    """Whether a loop there is reversed by recomputation (a runtime trip
    count, or a break/continue that makes it a while loop)."""
    return any(isinstance(s, P.For) and (not isinstance(s.count, int)
                                         or any(isinstance(b, (P.Break, P.Continue)) for b in _walk(s.body)))
               for s in _walk(stmts))


def _called(stmts) -> set:
    """Names of the device functions a block calls (textually)."""
    import re
    text = "\n".join(P.block_lines(stmts, ""))
    return set(re.findall(r"\b(f\d+)\(", text))


@dataclass
class _KernelState:
    reads: list = field(default_factory=list)
    writes: list = field(default_factory=list)
    uses_n: bool = False
    stored: set = field(default_factory=set)


class Generator:
    def __init__(self, draw, config: GenConfig):
        self.draw = draw
        self.cfg = config
        self.types = tuple(t for t in (F,) + COMPOSITES if t in config.types)
        self.sigs = [s for s in R.signatures(config.builtins)
                     if s.result in self.types and all(a in self.types or a == BOOL for a in s.args)]
        self.helpers = {s.name + "/" + ",".join(s.args): s for s in R.signatures(("length_sq", "trace",
                                                                                  "transpose"))}
        self.counter = 0
        self.arrays: dict = {}
        self.funcs: list = []
        self.kernels: list = []
        self.dim = 1
        self.scopes: list[dict] = []
        self.loop_vars: list[str] = []
        self.pending: list = []
        self.kernel: _KernelState | None = None
        self.in_func: P.FuncDef | None = None
        self.loop_depth = 0
        self.branch_depth = 0
        self.dynamic_depth = 0  # enclosing loops that may be reversed by recomputation
        self.store_blockers = 0  # enclosing branches and loops with break/continue

    # --- draws -------------------------------------------------------------------------

    def index(self, n: int) -> int:
        return self.draw(st.integers(0, n - 1)) if n > 1 else 0

    def pick(self, options):
        return options[self.index(len(options))]

    def flag(self) -> bool:
        return self.draw(st.booleans())

    def between(self, lo, hi) -> int:
        return self.draw(st.integers(lo, hi))

    def real(self, lo, hi) -> float:
        x = self.draw(st.floats(lo, hi, allow_nan=False, allow_infinity=False))
        return float(min(max(round(x, 3), lo), hi))

    def fresh(self, prefix) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    # --- scopes ------------------------------------------------------------------------

    @contextmanager
    def block_scope(self):
        self.scopes.append({})
        try:
            yield
        finally:
            self.scopes.pop()

    def variables(self, types=None) -> list[tuple[str, str]]:
        seen = {}
        for scope in self.scopes:
            seen.update(scope)
        return [(n, t) for n, t in seen.items() if types is None or t in types]

    def declare(self, name, t):
        self.scopes[-1][name] = t

    def hoist(self, expr: P.Expr) -> P.Expr:
        """``expr`` as a name (a temporary assigned just before the statement)."""
        if isinstance(expr, (P.Name, P.Read, P.Lit)):
            return expr
        name = self.fresh("h")
        self.pending.append(P.Assign(name, expr))
        self.declare(name, expr.t)
        return P.Name(expr.t, name)

    # --- arrays -------------------------------------------------------------------------

    def new_input(self, t, interval) -> P.ArrayDecl | None:
        if sum(a.role == "input" for a in self.arrays.values()) >= self.cfg.max_inputs:
            return None
        name = f"x{len(self.arrays)}"
        values = np.array([[self.real(*interval) for _ in range(int(np.prod(R.SHAPE[t])))]
                           for _ in range(self.dim)]).reshape((self.dim,) + R.SHAPE[t])
        decl = P.ArrayDecl(name, t, "input", values, interval)
        self.arrays[name] = decl
        return decl

    def readable(self, t, interval=None) -> list[P.ArrayDecl]:
        out = []
        for a in self.arrays.values():
            if a.t != t:
                continue
            if a.name in self.kernel.writes:
                if self.cfg.in_place_reads and interval is None:
                    out.append(a)  # read at the thread's own element only (see read)
                continue
            if interval is not None and (a.role != "input" or a.interval[0] < interval[0]
                                         or a.interval[1] > interval[1]):
                continue
            if a.role == "output" and not any(a.name in k.writes for k in self.kernels):
                continue  # written by this kernel only (not launched yet)
            out.append(a)
        return out

    def array_to_read(self, t, interval=None, avoid=()) -> P.ArrayDecl | None:
        existing = [a for a in self.readable(t, interval) if a.name not in avoid]
        default = (-self.cfg.value_range, self.cfg.value_range)
        if existing and (self.flag() or sum(a.role == "input" for a in self.arrays.values())
                         >= self.cfg.max_inputs):
            decl = self.pick(existing)
        else:
            decl = self.new_input(t, interval or default)
            if decl is None:
                return None
        if decl.name not in self.kernel.reads and decl.name not in self.kernel.writes:
            self.kernel.reads.append(decl.name)
        return decl

    def read(self, t, interval=None, avoid=()) -> P.Expr | None:
        decl = self.array_to_read(t, interval, avoid)
        if decl is None:
            return None
        index = self.pick(P.INDEX_KINDS) if self.dim > 1 and decl.name not in self.kernel.writes else "own"
        return P.Read(t, decl.name, t, index, (), "index", self.dim)

    def read_component(self, t) -> P.Expr | None:
        bases = [b for b in self.types if b != F and any(P.component_type(b, p) == t for p in _positions(b))]
        if not bases:
            return None
        base = self.pick(bases)
        decl = self.array_to_read(base)
        if decl is None:
            return None
        position = self.pick([p for p in _positions(base) if P.component_type(base, p) == t])
        style = self.pick(["index", "attr" if base in (V, Q) else "chain"])
        index = self.pick(P.INDEX_KINDS) if self.dim > 1 and decl.name not in self.kernel.writes else "own"
        return P.Read(t, decl.name, base, index, position, style, self.dim)

    # --- expressions --------------------------------------------------------------------

    def literal(self, t, interval=None) -> P.Lit:
        lo, hi = interval or (-self.cfg.value_range, self.cfg.value_range)
        if t == F:
            return P.Lit(F, self.real(lo, hi))
        return P.Lit(t, tuple(self.real(lo, hi) for _ in range(int(np.prod(R.SHAPE[t])))))

    def leaf(self, t) -> P.Expr:
        options = []
        if self.kernel is not None:
            options.append("read")
        if self.variables([t]):
            options.append("var")
        options.append("literal")
        if t == F and self.loop_vars:
            options.append("loop_index")
        if any(b in self.types for b in COMPOSITES) and (t == F or (t == V and M in self.types)):
            options.append("component")
        kind = self.pick(options)
        if kind == "read":
            e = self.read(t) if self.flag() or t == Q else self.read_component(t) or self.read(t)
            if e is not None:
                return e
        if kind == "var":
            name, _ = self.pick(self.variables([t]))
            return P.Name(t, name)
        if kind == "loop_index":
            return P.LoopIndex(self.pick(self.loop_vars))
        if kind == "component":
            bases = [(n, b) for n, b in self.variables(COMPOSITES)
                     if any(P.component_type(b, p) == t for p in _positions(b))]
            if bases:
                name, b = self.pick(bases)
                position = self.pick([p for p in _positions(b) if P.component_type(b, p) == t])
                style = self.pick(["index", "attr" if b in (V, Q) else "chain"])
                return P.Comp(t, P.Name(b, name), position, style)
        return self.literal(t)

    def expr(self, t, depth) -> P.Expr:
        if depth <= 0:
            return self.leaf(t)
        options = ["leaf", "binary", "call", "call"]
        if t == F and any(b in self.types for b in COMPOSITES):
            options.append("component")
        if t == V and M in self.types:
            options.append("component")
        options += ["negate", "if_expression"]
        if t != F:
            options.append("construct")
        if self.callable_funcs(t):
            options.append("function")
        kind = self.pick(options)
        if kind == "binary":
            return self.binary(t, depth)
        if kind == "call":
            e = self.call(t, depth)
            if e is not None:
                return e
        if kind == "component":
            bases = [b for b in COMPOSITES if b in self.types
                     and any(P.component_type(b, p) == t for p in _positions(b))]
            b = self.pick(bases)
            position = self.pick([p for p in _positions(b) if P.component_type(b, p) == t])
            style = self.pick(["index", "attr" if b in (V, Q) else "chain"])
            return P.Comp(t, self.expr(b, depth - 1), position, style)
        if kind == "negate":
            return P.Neg(t, self.expr(t, depth - 1))
        if kind == "if_expression":
            return P.IfExp(t, self.condition(depth - 1), self.expr(t, depth - 1), self.expr(t, depth - 1))
        if kind == "construct":
            return self.construct(t, depth)
        if kind == "function":
            fn = self.pick(self.callable_funcs(t))
            return P.FCall(t, fn.name, [self.expr(pt, depth - 1) for _, pt in fn.params])
        return self.leaf(t)

    def dynamic_ok(self) -> bool:
        """Whether a loop reversed by recomputation may go here."""
        return self.cfg.nested_dynamic_loops or (self.branch_depth == 0 and self.dynamic_depth == 0)

    def callable_funcs(self, t) -> list:
        ok = self.dynamic_ok()
        return [f for f in self.funcs if f.ret == t and (ok or not f.dynamic_loops)]

    def binary(self, t, depth) -> P.Expr:
        op, ta, tb = self.pick([o for o in _BIN[t] if o[1] in self.types and o[2] in self.types])
        a = self.expr(ta, depth - 1)
        if op == "/":
            b = self.safe(F, self.pick(DENOMINATORS), depth - 1)
        else:
            b = self.expr(tb, depth - 1)
        # A plain Python literal next to a typed operand takes its type.
        for lit, other in ((a, b), (b, a)):
            if isinstance(lit, P.Lit) and lit.t == F and not isinstance(other, P.Lit) and self.flag():
                lit.bare = True
        return P.Bin(t, op, a, b)

    def call(self, t, depth) -> P.Expr | None:
        sigs = [s for s in self.sigs if s.result == t]
        if not sigs:
            return None
        sig = self.pick(sigs)
        args = []
        for k, at in enumerate(sig.args):
            if at == BOOL:
                args.append(self.condition(depth - 1))
            elif sig.domain[k] is not None:
                args.append(self.safe(at, safe_interval(sig.domain[k]), depth - 1))
            elif R.SHAPED_ARGUMENTS.get(sig.name) == "diagonally_dominant" and at == M:
                diag = P.Bin(M, "*", P.Identity(), P.Lit(F, 2.5, bare=True))
                args.append(P.Bin(M, "+", diag, self.safe(M, INVERSE_OFF_DIAGONAL, depth - 1)))
            else:
                args.append(self.expr(at, depth - 1))
        style = "pow_operator" if sig.name == "pow" and sig.args == (F, F) and self.flag() else "call"
        return P.Call(t, sig, args, style)

    def focused_call(self, sig) -> P.Expr:
        """``sig`` applied to input reads (or, past ``max_inputs``, expressions).
        A builtin with kinks reads each argument from another array: one
        element passed twice (``clamp(x[i], x[i], ...)``) sits on a kink."""
        args = []
        avoid = set() if sig.name in R.KINKS else None
        for k, at in enumerate(sig.args):
            if at == BOOL:
                args.append(self.condition(1))
            elif sig.domain[k] is not None:
                interval = safe_interval(sig.domain[k])
                args.append(self.read(at, interval) or self.safe(at, interval, 1))
            elif R.SHAPED_ARGUMENTS.get(sig.name) == "diagonally_dominant" and at == M:
                diag = P.Bin(M, "*", P.Identity(), P.Lit(F, 2.5, bare=True))
                off = self.read(M, INVERSE_OFF_DIAGONAL) or self.safe(M, INVERSE_OFF_DIAGONAL, 1)
                args.append(P.Bin(M, "+", diag, off))
            else:
                arg = self.read(at, avoid=avoid or ()) or self.expr(at, 1)
                if avoid is not None and isinstance(arg, P.Read):
                    avoid.add(arg.array)
                args.append(arg)
        return P.Call(sig.result, sig, args)

    def construct(self, t, depth) -> P.Expr:
        if t == V:
            if self.flag():
                return P.Construct(V, [self.expr(F, depth - 1)])
            return P.Construct(V, [self.expr(F, depth - 1) for _ in range(3)])
        if t == Q:
            return P.Construct(Q, [self.expr(F, depth - 2) for _ in range(4)])
        if t == S:
            if V in self.types and self.flag():
                return P.Construct(S, [self.expr(V, depth - 1) for _ in range(2)])
            return P.Construct(S, [self.expr(F, depth - 2) for _ in range(6)])
        if t == X:
            if V in self.types and Q in self.types and self.flag():
                return P.Construct(X, [self.expr(V, depth - 1), self.expr(Q, depth - 1)])
            return P.Construct(X, [self.expr(F, depth - 2) for _ in range(7)])
        if not self.cfg.constructed_matrices:
            return self.leaf(M)
        if V in self.types and self.flag():
            return P.Construct(M, [self.expr(V, depth - 1) for _ in range(3)])
        return P.Construct(M, [self.expr(F, depth - 2) for _ in range(9)])

    def condition(self, depth) -> P.Cmp:
        return P.Cmp(self.expr(F, depth), self.pick(["<", ">", "<=", ">="]), self.expr(F, depth))

    def safe(self, t, interval, depth) -> P.Expr:
        """An expression whose every component lies in ``interval``, by construction."""
        options = ["literal", "squash"]
        if self.kernel is not None:
            options.insert(1, "read")
        kind = self.pick(options)
        if kind == "read":
            e = self.read(t, interval)
            if e is not None:
                return e
            kind = "squash"
        if kind == "literal":
            return self.literal(t, interval)
        lo, hi = interval
        c, r = (lo + hi) / 2, (hi - lo) / 2
        h = self.hoist(self.expr(t, depth))
        if t == F:
            unit = P.Bin(F, "/", P.Bin(F, "*", P.Lit(F, 2.0, bare=True), h),
                         P.Bin(F, "+", P.Lit(F, 1.0, bare=True), P.Bin(F, "*", h, h)))
            return P.Bin(F, "+", P.Lit(F, c, bare=True), P.Bin(F, "*", P.Lit(F, r, bare=True), unit))
        if t != M:
            norm_sq = P.Call(F, self.helpers[f"length_sq/{t}"], [h])
        else:
            hth = P.Bin(M, "*", P.Call(M, self.helpers["transpose/mat33d"], [h]), h)
            norm_sq = P.Call(F, self.helpers["trace/mat33d"], [hth])
        scale = P.Bin(F, "/", P.Lit(F, 2 * r, bare=True), P.Bin(F, "+", P.Lit(F, 1.0, bare=True), norm_sq))
        center = P.Lit(t, tuple([c] * int(np.prod(R.SHAPE[t]))))
        return P.Bin(t, "+", center, P.Bin(t, "*", scale, h))

    # --- statements ---------------------------------------------------------------------

    def depth(self) -> int:
        return self.between(0, self.cfg.max_depth)

    def value_type(self):
        return self.pick(list(self.types))

    def block(self, size, loop_body=False, returns=None) -> list:
        """A block of ``size`` statements in a new scope (hoisted temporaries
        go just before the statement that needs them)."""
        out = []
        with self.block_scope():
            for _ in range(size):
                saved, self.pending = self.pending, []
                stmts = self.statement(loop_body, returns)
                out += self.pending + stmts
                self.pending = saved
        return out

    def branch_block(self, size, loop_body, returns) -> list:
        self.branch_depth += 1
        self.store_blockers += 1
        try:
            return self.block(size, loop_body, returns)
        finally:
            self.branch_depth -= 1
            self.store_blockers -= 1

    def statement(self, loop_body, returns) -> list:
        options = ["assign", "reassign"]
        if self.variables(COMPOSITES):
            options += ["set_component", "alias"]
        if self.variables():
            options.append("augmented")
        if self.kernel is not None and (self.cfg.stores_in_branches or self.store_blockers == 0):
            options += ["store", "store"]
        options.append("if")
        if self.loop_depth < self.cfg.max_loop_nesting:
            options.append("for")
        if loop_body:
            options.append("jump")
        if returns is not None and self.loop_depth == 0:
            options.append("early_return")
        kind = self.pick(options)
        if kind == "assign" or (kind == "reassign" and not self.variables()):
            t = self.value_type()
            e = self.expr(t, self.depth())
            name = self.fresh("a")
            self.declare(name, t)
            return [P.Assign(name, e)]
        if kind == "reassign":
            name, t = self.pick(self.variables())
            return [P.Assign(name, self.expr(t, self.depth()))]
        if kind == "set_component":
            name, t = self.pick(self.variables(COMPOSITES))
            return [self.set_component(name, t)]
        if kind == "alias":
            name, t = self.pick(self.variables(COMPOSITES))
            alias = self.fresh("b")
            # (before the temporaries the mutation may hoist, which may read the alias)
            self.pending.append(P.Assign(alias, P.Name(t, name)))
            self.declare(alias, t)
            # Mutating one of the two must leave the other as it was.
            return [self.set_component(*((name, t) if self.flag() else (alias, t)))]
        if kind == "augmented":
            name, t = self.pick(self.variables())
            op = self.pick(["+", "-", "*"])
            if op == "*":
                other = self.pick([F, t]) if t in (M, Q, X) else F
                return [P.AugAssign(name, t, "*", self.expr(other, self.depth()))]
            return [P.AugAssign(name, t, op, self.expr(t, self.depth()))]
        if kind == "store":
            return [self.store()]
        if kind == "if":
            cond = self.condition(self.between(0, 2))
            body = self.branch_block(self.between(1, self.cfg.max_block_statements), loop_body, returns)
            orelse = self.branch_block(self.between(0, self.cfg.max_block_statements), loop_body, returns)
            return [P.If(cond, body, orelse)]
        if kind == "for":
            var = self.fresh("j")
            dynamic_ok = self.dynamic_ok()
            if self.kernel is not None and dynamic_ok and self.flag():
                count = "n"
                self.kernel.uses_n = True
            else:
                count = self.between(1, 3)
            jumps = dynamic_ok and self.flag()
            self.loop_vars.append(var)
            self.loop_depth += 1
            self.dynamic_depth += dynamic_ok
            self.store_blockers += jumps
            try:
                body = self.block(self.between(1, self.cfg.max_block_statements), jumps, returns)
            finally:
                self.loop_depth -= 1
                self.dynamic_depth -= dynamic_ok
                self.store_blockers -= jumps
                self.loop_vars.pop()
            return [P.For(var, count, body)]
        if kind == "jump":
            # (the condition may fold to a constant: a loop that always
            # breaks, see test_a_loop_that_always_breaks_is_differentiable)
            cond = self.condition(self.between(0, 2))
            if self.flag():
                cond.a = P.Bin(F, "+", P.LoopIndex(self.loop_vars[-1]), cond.a)
            body = self.branch_block(self.between(0, 2), True, returns)
            body.append(P.Break() if self.flag() else P.Continue())
            return [P.If(cond, body, [])]
        # early_return
        cond = self.condition(self.between(0, 2))
        body = self.branch_block(self.between(0, 2), False, returns)
        with self.block_scope():
            saved, self.pending = self.pending, []
            value = self.expr(returns, self.depth())
            body += self.pending + [P.Return(value)]
            self.pending = saved
        return [P.If(cond, body, [])]

    def set_component(self, name, t) -> P.Stmt:
        position = self.pick(_positions(t))
        ct = P.component_type(t, position)
        style = self.pick(["index", "attr" if t in (V, Q) else "chain"])
        op = self.pick(["", "+", "-", "*"])
        value_t = F if op == "*" else ct
        return P.SetComp(name, t, position, self.expr(value_t, self.depth()), style, op)

    def store(self) -> P.Stmt:
        name = self.pick(self.kernel.writes)
        t = self.arrays[name].t
        self.kernel.stored.add(name)
        op = self.pick(["", "+", "-"]) if self.cfg.atomic_stores else ""
        if t != F and self.flag():
            position = self.pick(_positions(t))
            style = self.pick(["index", "attr" if t in (V, Q) else "chain"])
            return P.Store(name, t, self.expr(P.component_type(t, position), self.depth()), position, style, op)
        return P.Store(name, t, self.expr(t, self.depth()), (), "index", op)

    # --- functions, kernels, programs ----------------------------------------------------

    def function(self) -> P.FuncDef:
        name = f"f{len(self.funcs)}"
        params = [(f"p{k}", self.value_type()) for k in range(self.between(1, 3))]
        ret = self.value_type()
        fn = P.FuncDef(name, params, ret, [])
        self.in_func = fn
        self.scopes = [dict(params)]
        body = self.block(self.between(0, self.cfg.max_block_statements), False, ret)
        with self.block_scope():
            self.pending = []
            value = self.expr(ret, self.depth())
            body += self.pending + [P.Return(value)]
        fn.body = body
        fn.dynamic_loops = _has_dynamic_loop(body) or any(
            f.dynamic_loops for f in self.funcs if f.name in _called(body))
        self.in_func = None
        self.scopes = []
        return fn

    def kernel_def(self) -> P.KernelDef:
        name = f"k{len(self.kernels)}"
        self.kernel = _KernelState()
        for _ in range(self.between(1, 2)):
            t = self.value_type()
            decl = P.ArrayDecl(f"y{len(self.arrays)}", t, "output",
                               self.literal_values(t))
            self.arrays[decl.name] = decl
            self.kernel.writes.append(decl.name)
        # A later launch may overwrite an earlier launch's output (not read by it).
        earlier = [a for a in self.arrays.values() if a.role == "output" and a.name not in self.kernel.writes]
        if earlier and self.flag() and self.flag():
            self.kernel.writes.append(self.pick(earlier).name)
        focused = None
        if self.cfg.focus and not self.kernels:
            focused = self.pick([s for s in self.sigs if s.name == self.cfg.focus])
            decl = P.ArrayDecl(f"y{len(self.arrays)}", focused.result, "output",
                               self.literal_values(focused.result))
            self.arrays[decl.name] = decl
            self.kernel.writes.append(decl.name)
        self.scopes = [{}]
        body = self.block(self.between(1, self.cfg.max_top_statements))
        if focused is not None:
            saved, self.pending = self.pending, []
            stmt = P.Store(decl.name, focused.result, self.focused_call(focused))
            self.kernel.stored.add(decl.name)
            body += self.pending + [stmt]
            self.pending = saved
        # Every output is stored at least once; sometimes overwritten at the end.
        for w in self.kernel.writes:
            if w not in self.kernel.stored or self.flag():
                saved, self.pending = self.pending, []
                t = self.arrays[w].t
                stmt = P.Store(w, t, self.expr(t, self.depth()))
                body += self.pending + [stmt]
                self.pending = saved
        k = P.KernelDef(name, list(self.kernel.reads), list(self.kernel.writes), self.kernel.uses_n, body)
        self.kernel = None
        self.scopes = []
        return k

    def literal_values(self, t) -> np.ndarray:
        """Initial values of an output array (kept where a launch does not store)."""
        size = self.dim * int(np.prod(R.SHAPE[t]))
        if self.flag():
            return np.zeros((self.dim,) + R.SHAPE[t])
        return np.array([self.real(-1.0, 1.0) for _ in range(size)]).reshape((self.dim,) + R.SHAPE[t])

    def program(self) -> P.Program:
        self.dim = self.between(1, self.cfg.max_dim)
        n = self.between(0, self.cfg.max_runtime_trips)
        for _ in range(self.between(0, self.cfg.max_funcs)):
            self.funcs.append(self.function())
        for _ in range(self.between(self.cfg.min_kernels, self.cfg.max_kernels)):
            self.kernels.append(self.kernel_def())
        return P.Program(self.dim, n, self.arrays, self.funcs, self.kernels)
