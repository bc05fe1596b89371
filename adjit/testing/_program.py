"""The generated programs: a small typed tree of kernels, device functions,
statements and expressions, from which both the kernel source text and a
plain-numpy float64 evaluator are derived (so the two always agree on what
the program means).

The evaluator also records, for the oracle's filters, how close every
comparison, kink and domain boundary came to switching, and the largest
magnitude of any intermediate value.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import _reference as R
from ._reference import BOOL, F, M, Q, S, SOURCE_TYPE, V, X

COMPONENTS = "xyzw"


# --- evaluation state --------------------------------------------------------------

class Trace:
    """What one evaluation came close to: the smallest distance of any
    comparison/kink to switching, and the largest intermediate magnitude."""

    def __init__(self):
        self.margin = np.inf
        self.magnitude = 0.0
        self.domain_violation: str | None = None

    def value(self, v):
        a = np.abs(v)
        m = float(np.max(a)) if np.ndim(a) else float(a)
        if not np.isfinite(m):
            m = np.inf
        if m > self.magnitude:
            self.magnitude = m
        return v

    def near(self, distance: float):
        if distance < self.margin:
            self.margin = float(distance)


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Return(Exception):
    def __init__(self, value):
        self.value = value


@dataclass
class Context:
    env: dict
    arrays: dict
    tid: int
    dim: int
    n: int
    funcs: dict
    trace: Trace


def _copy(v):
    return v.copy() if isinstance(v, np.ndarray) else v


# --- expressions ---------------------------------------------------------------------

def component_type(t: str, position: tuple) -> str:
    if t == M and len(position) == 1:
        return V
    return F


def component_src(t: str, position: tuple, style: str) -> str:
    if style == "attr" and t in (V, Q):
        return "." + COMPONENTS[position[0]]
    if style == "chain" and len(position) == 2:
        return f"[{position[0]}][{position[1]}]"
    return "[" + ", ".join(str(p) for p in position) + "]"


def _fmt(x: float) -> str:
    return repr(float(x))


class Expr:
    t: str

    def src(self) -> str:
        raise NotImplementedError

    def ev(self, ctx: Context):
        raise NotImplementedError


@dataclass
class Lit(Expr):
    t: str
    value: object  # a float or a tuple of floats (row-major)
    bare: bool = False  # a plain Python literal (takes the other operand's type)

    def src(self):
        if self.t == F:
            text = _fmt(self.value)
            if self.bare:
                return f"({text})" if self.value < 0 else text
            return f"wp.float64({text})"
        return f"{SOURCE_TYPE[self.t]}({', '.join(_fmt(v) for v in self.value)})"

    def ev(self, ctx):
        if self.t == F:
            return np.float64(self.value)
        return np.array(self.value, dtype=np.float64).reshape(R.SHAPE[self.t])


@dataclass
class Name(Expr):
    t: str
    name: str

    def src(self):
        return self.name

    def ev(self, ctx):
        return _copy(ctx.env[self.name])


INDEX_KINDS = ("own", "next", "first", "last_minus")


def index_src(kind: str, dim: int) -> str:
    return {"own": "i", "next": f"(i + 1) % {dim}", "first": "0",
            "last_minus": f"{dim - 1} - i"}[kind]


def index_value(kind: str, tid: int, dim: int) -> int:
    return {"own": tid, "next": (tid + 1) % dim, "first": 0, "last_minus": dim - 1 - tid}[kind]


@dataclass
class Read(Expr):
    """``x[i]``, ``x[(i + 1) % 3]``, ``p[i].y``, ``m[i][0, 2]``."""

    t: str
    array: str
    array_t: str
    index: str = "own"
    position: tuple = ()
    style: str = "index"
    dim: int = 1

    def src(self):
        comp = component_src(self.array_t, self.position, self.style) if self.position else ""
        return f"{self.array}[{index_src(self.index, self.dim)}]{comp}"

    def ev(self, ctx):
        v = ctx.arrays[self.array][index_value(self.index, ctx.tid, ctx.dim)]
        if self.position:
            v = v[tuple(self.position)]
        return ctx.trace.value(_copy(np.float64(v) if np.ndim(v) == 0 else np.array(v)))


@dataclass
class Comp(Expr):
    """``e.x``, ``e[1]``, ``e[0, 2]``, ``e[1]`` (a matrix row)."""

    t: str
    base: Expr
    position: tuple
    style: str = "index"

    def src(self):
        return f"{self.base.src()}{component_src(self.base.t, self.position, self.style)}"

    def ev(self, ctx):
        v = self.base.ev(ctx)[tuple(self.position)]
        return np.float64(v) if np.ndim(v) == 0 else np.array(v)


@dataclass
class Call(Expr):
    t: str
    sig: R.Signature
    args: list
    style: str = "call"  # "call" or "pow_operator" (a ** b)

    def src(self):
        if self.style == "pow_operator":
            return f"({self.args[0].src()} ** {self.args[1].src()})"
        return f"wp.{self.sig.name}({', '.join(a.src() for a in self.args)})"

    def ev(self, ctx):
        vals = [a.ev(ctx) for a in self.args]
        kink = R.KINKS.get(self.sig.name)
        if kink is not None:
            ctx.trace.near(kink(vals))
        for k, (dom, v) in enumerate(zip(self.sig.domain, vals)):
            if dom is not None and self.sig.args[k] != BOOL:
                lo, hi = dom
                if np.any(np.asarray(v) <= lo) or np.any(np.asarray(v) >= hi):
                    ctx.trace.domain_violation = f"{self.sig.name} argument {k} = {v} outside {dom}"
                ctx.trace.near(float(min(np.min(np.asarray(v) - lo), np.min(hi - np.asarray(v)))))
        return ctx.trace.value(R.evaluate(self.sig, vals))


@dataclass
class Bin(Expr):
    t: str
    op: str  # + - * /
    a: Expr
    b: Expr

    def src(self):
        return f"({self.a.src()} {self.op} {self.b.src()})"

    def ev(self, ctx):
        x, y = self.a.ev(ctx), self.b.ev(ctx)
        if self.op == "+":
            r = x + y
        elif self.op == "-":
            r = x - y
        elif self.op == "*":
            r = R.mul(x, y, self.a.t, self.b.t)
        else:
            ctx.trace.near(float(np.min(np.abs(y))))
            r = x / y
        return ctx.trace.value(np.float64(r) if np.ndim(r) == 0 else r)


@dataclass
class Neg(Expr):
    t: str
    a: Expr

    def src(self):
        return f"(-{self.a.src()})"

    def ev(self, ctx):
        return -self.a.ev(ctx)


@dataclass
class Cmp(Expr):
    a: Expr
    op: str
    b: Expr
    t: str = BOOL

    def src(self):
        return f"{self.a.src()} {self.op} {self.b.src()}"

    def ev(self, ctx):
        x, y = self.a.ev(ctx), self.b.ev(ctx)
        ctx.trace.near(abs(float(x) - float(y)))
        return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[self.op]


@dataclass
class IfExp(Expr):
    t: str
    cond: Cmp
    a: Expr
    b: Expr

    def src(self):
        return f"({self.a.src()} if {self.cond.src()} else {self.b.src()})"

    def ev(self, ctx):
        # The kernel evaluates both sides (a select); so does the reference,
        # so that their kinks and magnitudes are checked too.
        c, x, y = self.cond.ev(ctx), self.a.ev(ctx), self.b.ev(ctx)
        return x if c else y


@dataclass
class Construct(Expr):
    """``wp.vec3d(a, b, c)``, ``wp.vec3d(s)``, ``wp.mat33d(r0, r1, r2)``, ``wp.quatd(x, y, z, w)``,
    ``wp.spatial_vectord(w, v)``, ``wp.transformd(p, q)``."""

    t: str
    args: list

    def src(self):
        return f"{SOURCE_TYPE[self.t]}({', '.join(a.src() for a in self.args)})"

    def ev(self, ctx):
        vals = [a.ev(ctx) for a in self.args]
        shape = R.SHAPE[self.t]
        if len(vals) == 1:
            return np.full(shape, vals[0], dtype=np.float64)
        if self.t == M and len(vals) == 3:
            return np.array([np.asarray(v) for v in vals], dtype=np.float64)
        if self.t in (S, X) and len(vals) == 2:  # spatial_vectord(w, v), transformd(p, q)
            return np.concatenate([np.asarray(v, dtype=np.float64) for v in vals])
        return np.array(vals, dtype=np.float64).reshape(shape)


@dataclass
class Identity(Expr):
    """``wp.identity(n=3, dtype=wp.float64)`` (a constant)."""

    t: str = M

    def src(self):
        return "wp.identity(n=3, dtype=wp.float64)"

    def ev(self, ctx):
        return np.eye(3)


@dataclass
class FCall(Expr):
    t: str
    func: str
    args: list

    def src(self):
        return f"{self.func}({', '.join(a.src() for a in self.args)})"

    def ev(self, ctx):
        fn = ctx.funcs[self.func]
        vals = [a.ev(ctx) for a in self.args]
        inner = Context({p: _copy(v) for (p, _), v in zip(fn.params, vals)}, ctx.arrays, ctx.tid, ctx.dim,
                        ctx.n, ctx.funcs, ctx.trace)
        try:
            run_block(fn.body, inner)
        except _Return as r:
            return r.value
        raise AssertionError(f"device function {fn.name} fell off its end")


@dataclass
class LoopIndex(Expr):
    """``wp.float64(j)``: a loop counter as a float."""

    name: str
    t: str = F

    def src(self):
        return f"wp.float64({self.name})"

    def ev(self, ctx):
        return np.float64(ctx.env[self.name])


# --- statements ----------------------------------------------------------------------

class Stmt:
    def lines(self, indent: str) -> list[str]:
        raise NotImplementedError

    def run(self, ctx: Context) -> None:
        raise NotImplementedError


@dataclass
class Assign(Stmt):
    name: str
    expr: Expr

    def lines(self, indent):
        return [f"{indent}{self.name} = {self.expr.src()}"]

    def run(self, ctx):
        ctx.env[self.name] = self.expr.ev(ctx)


@dataclass
class SetComp(Stmt):
    """``v.x = e``, ``m[0, 2] = e``, ``m[1] = row``; ``op`` makes it ``v.y += e`` / ``v.z *= e``."""

    name: str
    t: str
    position: tuple
    expr: Expr
    style: str = "index"
    op: str = ""  # "", "+", "-", "*"

    def lines(self, indent):
        return [f"{indent}{self.name}{component_src(self.t, self.position, self.style)} {self.op}= "
                f"{self.expr.src()}"]

    def run(self, ctx):
        v = self.expr.ev(ctx)
        base = np.array(ctx.env[self.name], dtype=np.float64)  # a copy: values, not references
        pos = tuple(self.position)
        if self.op == "":
            base[pos] = v
        else:
            cur = base[pos]
            base[pos] = ctx.trace.value({"+": cur + v, "-": cur - v, "*": cur * v}[self.op])
        ctx.env[self.name] = base


@dataclass
class AugAssign(Stmt):
    """``s += e``, ``v -= w``, ``v *= s``, ``m *= s``."""

    name: str
    t: str
    op: str
    expr: Expr

    def lines(self, indent):
        return [f"{indent}{self.name} {self.op}= {self.expr.src()}"]

    def run(self, ctx):
        cur, v = ctx.env[self.name], self.expr.ev(ctx)
        if self.op == "+":
            r = cur + v
        elif self.op == "-":
            r = cur - v
        else:
            r = R.mul(cur, v, self.t, self.expr.t)
        ctx.env[self.name] = ctx.trace.value(np.float64(r) if np.ndim(r) == 0 else r)


@dataclass
class Store(Stmt):
    """``y[i] = e``, ``q[i].x = e``, ``mm[i][0, 2] = e``; ``y[i] += e`` (atomic)."""

    array: str
    array_t: str
    expr: Expr
    position: tuple = ()
    style: str = "index"
    op: str = ""  # "" or "+" or "-"

    def lines(self, indent):
        comp = component_src(self.array_t, self.position, self.style) if self.position else ""
        return [f"{indent}{self.array}[i]{comp} {self.op}= {self.expr.src()}"]

    def run(self, ctx):
        v = self.expr.ev(ctx)
        arr = ctx.arrays[self.array]
        key = (ctx.tid,) + tuple(self.position)
        if self.op == "":
            arr[key] = v
        elif self.op == "+":
            arr[key] = arr[key] + v
        else:
            arr[key] = arr[key] - v
        ctx.trace.value(arr[key])


@dataclass
class If(Stmt):
    cond: Cmp
    body: list
    orelse: list = field(default_factory=list)

    def lines(self, indent):
        out = [f"{indent}if {self.cond.src()}:"]
        out += block_lines(self.body, indent + "    ")
        if self.orelse:
            out.append(f"{indent}else:")
            out += block_lines(self.orelse, indent + "    ")
        return out

    def run(self, ctx):
        run_block(self.body if self.cond.ev(ctx) else self.orelse, ctx)


@dataclass
class For(Stmt):
    var: str
    count: object  # an int (constant trip count) or the name of the kernel's int argument
    body: list

    def lines(self, indent):
        return [f"{indent}for {self.var} in range({self.count}):"] + block_lines(self.body, indent + "    ")

    def run(self, ctx):
        count = self.count if isinstance(self.count, int) else ctx.n
        for j in range(count):
            ctx.env[self.var] = j
            try:
                run_block(self.body, ctx)
            except _Continue:
                continue
            except _Break:
                break


@dataclass
class Break(Stmt):
    def lines(self, indent):
        return [f"{indent}break"]

    def run(self, ctx):
        raise _Break()


@dataclass
class Continue(Stmt):
    def lines(self, indent):
        return [f"{indent}continue"]

    def run(self, ctx):
        raise _Continue()


@dataclass
class Return(Stmt):
    expr: Expr

    def lines(self, indent):
        return [f"{indent}return {self.expr.src()}"]

    def run(self, ctx):
        raise _Return(self.expr.ev(ctx))


def block_lines(stmts, indent) -> list[str]:
    if not stmts:
        return [f"{indent}pass"]
    out = []
    for s in stmts:
        out += s.lines(indent)
    return out


def run_block(stmts, ctx):
    for s in stmts:
        s.run(ctx)


# --- functions, kernels, programs -------------------------------------------------------

@dataclass
class FuncDef:
    name: str
    params: list  # [(name, type)]
    ret: str
    body: list
    #: whether a loop in it (or in a function it calls) is reversed by recomputation
    dynamic_loops: bool = False

    def source(self) -> str:
        params = ", ".join(f"{p}: {SOURCE_TYPE[t]}" for p, t in self.params)
        return "\n".join(["@wp.func", f"def {self.name}({params}):"] + block_lines(self.body, "    "))


@dataclass
class ArrayDecl:
    name: str
    t: str
    role: str  # "input" (a differentiated leaf) or "output" (written by a launch)
    values: np.ndarray  # initial values, shape (dim,) + component shape
    interval: tuple = (-1.0, 1.0)  # where an input's values were drawn

    def source(self, requires_grad=True) -> str:
        return (f"wp.array(np.array({self.values.tolist()!r}), dtype={SOURCE_TYPE[self.t]}, "
                f"requires_grad={requires_grad})")


@dataclass
class KernelDef:
    name: str
    reads: list  # array names read
    writes: list  # array names written
    uses_n: bool
    body: list

    def params(self) -> list[str]:
        return self.reads + (["n"] if self.uses_n else []) + self.writes

    def source(self, arrays: dict) -> str:
        params = [f"{a}: wp.array(dtype={SOURCE_TYPE[arrays[a].t]})" for a in self.reads]
        if self.uses_n:
            params.append("n: int")
        params += [f"{a}: wp.array(dtype={SOURCE_TYPE[arrays[a].t]})" for a in self.writes]
        head = [f"@wp.kernel", f"def {self.name}({', '.join(params)}):", "    i = wp.tid()"]
        return "\n".join(head + block_lines(self.body, "    "))


@dataclass
class Program:
    dim: int
    n: int
    arrays: dict  # name -> ArrayDecl, in creation order
    funcs: list
    kernels: list  # in launch order (each kernel is launched once)
    # filled by evaluate():
    expected: dict = field(default_factory=dict)
    trace: Trace | None = None

    @property
    def inputs(self) -> list[ArrayDecl]:
        return [a for a in self.arrays.values() if a.role == "input"]

    @property
    def outputs(self) -> list[ArrayDecl]:
        """Arrays written by some launch, in order of first write."""
        seen = []
        for k in self.kernels:
            for w in k.writes:
                if w not in seen:
                    seen.append(w)
        return [self.arrays[w] for w in seen]

    def evaluate(self) -> "Program":
        """Runs the program in numpy (float64): fills ``expected`` and ``trace``."""
        trace = Trace()
        arrays = {name: a.values.astype(np.float64).copy() for name, a in self.arrays.items()}
        funcs = {f.name: f for f in self.funcs}
        with np.errstate(all="ignore"):
            for k in self.kernels:
                for tid in range(self.dim):
                    ctx = Context({}, arrays, tid, self.dim, self.n, funcs, trace)
                    run_block(k.body, ctx)
        self.expected = {a.name: arrays[a.name] for a in self.outputs}
        self.trace = trace
        return self

    def _repr_pretty_(self, printer, cycle):  # Hypothesis' printer of falsifying examples
        printer.text(repr(self))

    def __repr__(self):
        return (f"<generated adjit program: {len(self.kernels)} kernel(s), {len(self.funcs)} device "
                f"function(s), dim={self.dim}; see the reproducer in the assertion message>")


# --- what a program exercises ---------------------------------------------------------

def _nodes(obj):
    """Every Expr and Stmt in a tree of them (depth first)."""
    if isinstance(obj, (Expr, Stmt)):
        yield obj
        for value in vars(obj).values():
            yield from _nodes(value)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _nodes(item)


def features(program: Program) -> set[str]:
    """Names of the language features and builtins a program uses (for
    coverage checks of the generator)."""
    out = set()
    bodies = [f.body for f in program.funcs] + [k.body for k in program.kernels]
    for body in bodies:
        for node in _nodes(body):
            if isinstance(node, Call):
                out.add(f"builtin:{node.sig.name}")
                if node.style == "pow_operator":
                    out.add("operator:**")
            elif isinstance(node, Bin):
                out.add(f"operator:{node.op}")
            elif isinstance(node, Read):
                out.add(f"read:{node.index}")
                if node.position:
                    out.add("read:component")
            elif isinstance(node, FCall):
                out.add("call:device_function")
            elif isinstance(node, IfExp):
                out.add("expression:if_else")
            elif isinstance(node, Construct):
                out.add(f"construct:{node.t}")
            elif isinstance(node, Comp):
                out.add("expression:component")
            elif isinstance(node, LoopIndex):
                out.add("expression:loop_index")
            elif isinstance(node, Assign):
                out.add("alias" if isinstance(node.expr, Name) and node.expr.t != F else "assign")
            elif isinstance(node, SetComp):
                out.add("component:set" if not node.op else f"component:{node.op}=")
            elif isinstance(node, AugAssign):
                out.add(f"augmented:{node.op}=")
            elif isinstance(node, Store):
                kind = "store:component" if node.position else "store:element"
                out.add(kind if not node.op else f"store:atomic{node.op}=")
            elif isinstance(node, If):
                out.add("if/else" if node.orelse else "if")
            elif isinstance(node, For):
                out.add("for:runtime" if isinstance(node.count, str) else "for:constant")
            elif isinstance(node, Break):
                out.add("break")
            elif isinstance(node, Continue):
                out.add("continue")
            if isinstance(node, If) and any(isinstance(n, Return) for n in _nodes(node.body)):
                out.add("return:early")
    for k in program.kernels:
        if any(isinstance(n, Read) and n.array in k.writes for n in _nodes(k.body)):
            out.add("read:in_place")
            if any(isinstance(loop, For) and any(isinstance(n, Read) and n.array in k.writes
                                                 for n in _nodes(loop.body))
                   for loop in _nodes(k.body)):
                out.add("read:in_place_in_loop")
    if len(program.kernels) > 1:
        out.add("launches:several")
        written = set()
        for k in program.kernels:
            if written & set(k.writes):
                out.add("launches:overwrite")
            if written & set(k.reads):
                out.add("launches:chained")
            written |= set(k.writes)
    return out
