"""print(), printf() and the expect_eq / expect_neq / expect_near checks."""
from __future__ import annotations

import ast
import logging
import math
import re

from mlir import ir
from mlir.dialects import arith, scf, vector as vector_d
from mlir.dialects import math as math_d

from ... import types as T
from ...dialects import adjit as adjit_d
from ...errors import KernelSyntaxError, KernelTypeError
from ..values import Val, literal, splat
from .helpers import all_components


#: printf conversions of print()'s values, by scalar type.
_PRINTF_SPEC = {"float32": "%g", "float64": "%g", "int32": "%d", "int64": "%lld", "uint32": "%u", "uint64": "%llu",
                "bool": "%d"}


def _printf_scalar(t: T.ScalarType, v) -> tuple[str, ir.Value]:
    """(printf conversion, value) of one scalar: floats narrower than 32 bits
    widened to float32, integers narrower than 32 bits (and bools, printed as
    1 and 0) extended to int32 by their signedness, as C promotes them."""
    if t.is_float and t.bits < 32:
        return "%g", arith.ExtFOp(T.float32.mlir(), v).result
    if t.bits < 32:
        signed = t.is_int and t.signed
        extend = arith.ExtSIOp if signed else arith.ExtUIOp
        return ("%d" if signed or t.is_bool else "%u"), extend(T.int32.mlir(), v).result
    return _PRINTF_SPEC[t.name], v


def _tile_print_parts(v: ir.Value, t: T.TileType) -> tuple[str, list]:
    """A tile as Warp's CPU prints it: [a b c] (rows of a 2-d tile on lines
    of their own, indented by one; higher dimensions' blocks separated by a
    blank line), floats as %g, then `` = tile(shape=(M,N), storage=...)``."""
    flat = vector_d.ShapeCastOp(ir.VectorType.get([t.size], t.dtype.mlir()), v).result
    specs, vals = [], []
    for k in range(t.size):
        spec, x = _printf_scalar(t.dtype, vector_d.ExtractOp(flat, [], [k]).result)
        specs.append(spec)
        vals.append(x)

    def block(level: int, first: int) -> str:
        n = t.shape[level]
        inner = math.prod(t.shape[level + 1:])
        if level == t.ndim - 1:
            return "[" + " ".join(specs[first:first + n]) + "]"
        sep = "\n" + " " * (t.ndim - 1) if level == t.ndim - 2 else "\n\n" + " " * (level + 1)
        return "[" + sep.join(block(level + 1, first + i * inner) for i in range(n)) + "]"

    shape = ",".join(map(str, t.shape))
    return block(0, 0) + f" = tile(shape=({shape}), storage={t.storage})", vals


#: A printf conversion: flags, width and precision (no *), an ignored length
#: modifier, the conversion (or %%).
_PRINTF_CONVERSION = re.compile(r"%(?P<flags>[-+ #0]*\d*(?:\.\d+)?)(?:hh|h|ll|l|j|z|t|L)?(?P<conv>[diuxXocfFeEgGaA%])"
                                r"|%(?P<bad>.)")


log = logging.getLogger("adjit.compile")

#: The (file, line) of the breakpoint() calls warned about, once each per process.
_BREAKPOINTS_WARNED: set = set()


class Printing:
    """FunctionBuilder's print, printf, breakpoint and expect calls."""

    def emit_breakpoint(self, node):
        """``breakpoint()`` / ``wp.breakpoint()``: Warp stops there in an
        attached debugger (on the CPU a SIGTRAP, which ends the process when
        no debugger is attached; cuda-gdb on a GPU). adjit compiles kernels
        through MLIR, with no debugger stop to give: the call does nothing,
        and compiling it warns once per call site (logger ``adjit.compile``)."""
        if node.args or node.keywords:
            raise self.error("breakpoint() takes no arguments", node, KernelSyntaxError)
        site = (self.src.filename, self.src.line_of(node))
        if site not in _BREAKPOINTS_WARNED:
            _BREAKPOINTS_WARNED.add(site)
            log.warning("%s:%d: breakpoint() in '%s' does nothing in adjit (Warp stops there in an attached "
                        "debugger): use print() or printf() to look at values, or adjit.config.mode = 'debug' "
                        "for checked asserts", site[0], site[1], self.src.qualname)
        return None

    def print_parts(self, value: Val, node) -> tuple[str, list]:
        """(printf format, scalar values) of one value: numbers, vectors as
        [x y z], matrices as [[a b] [c d]] (bools print as 1 and 0)."""
        t = value.type
        if isinstance(t, T.ScalarType):
            spec, v = _printf_scalar(t, self.materialize(value, t))
            return spec, [v]
        if isinstance(t, (T.VectorType, T.MatrixType)):
            v = self.materialize(value, t)
            if isinstance(t, T.VectorType):
                comps = [_printf_scalar(t.dtype, vector_d.ExtractOp(v, [], [k]).result) for k in range(t.length)]
                return "[" + " ".join(s for s, _ in comps) + "]", [c for _, c in comps]
            comps = [_printf_scalar(t.dtype, vector_d.ExtractOp(v, [], [r, c]).result)
                     for r in range(t.rows) for c in range(t.cols)]
            rows = ["[" + " ".join(s for s, _ in comps[r * t.cols:(r + 1) * t.cols]) + "]" for r in range(t.rows)]
            return "[" + " ".join(rows) + "]", [c for _, c in comps]
        if isinstance(t, T.TileType):
            if t.composite:
                raise self.error(f"print() of a tile of {t.dtype} is not supported yet (print its elements)", node)
            return _tile_print_parts(self.materialize(value, t), t)
        raise self.error(f"print() takes numbers, vectors and matrices (and tiles), got {t}", node)

    def emit_print(self, node):
        """Python's print(*args, sep=" ", end="\\n"): string literals and values."""
        options = {"sep": " ", "end": "\n"}
        for kw in node.keywords:
            if kw.arg not in options or not (isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str)):
                raise self.error("print() takes sep= and end= string literals only", kw, KernelSyntaxError)
            options[kw.arg] = kw.value.value
        pieces, values = [], []
        for arg in node.args:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                pieces.append(arg.value.replace("%", "%%"))
                continue
            fmt, vals = self.print_parts(self.expr(arg), arg)
            pieces.append(fmt)
            values.extend(vals)
        fmt = options["sep"].replace("%", "%%").join(pieces) + options["end"].replace("%", "%%")
        adjit_d.PrintOp(fmt, values)
        return Val(T.int32, arith.ConstantOp(T.int32.mlir(), 0).result)

    def emit_printf(self, node):
        """printf(format, *args): the format's conversions checked against the
        arguments (integers take d i u x X o c, floats f F e E g G a A; the
        length modifier is set from the argument's type)."""
        if node.keywords or not node.args or not (isinstance(node.args[0], ast.Constant)
                                                  and isinstance(node.args[0].value, str)):
            raise self.error("printf() takes a format string literal, then the values", node, KernelSyntaxError)
        fmt = node.args[0].value
        values = [self.expr(a) for a in node.args[1:]]
        specs = list(_PRINTF_CONVERSION.finditer(fmt))
        for m in specs:
            if m.group("conv") is None:
                raise self.error(f"printf() conversion '{m.group(0)}' is not supported (integers: d i u x X o c; "
                                 "floats: f F e E g G a A; %% for %)", node, KernelTypeError)
        if fmt.count("%") != sum(2 if m.group("conv") == "%" else 1 for m in specs):
            raise self.error("printf() format ends in a lone '%'", node, KernelTypeError)
        conversions = [m for m in specs if m.group("conv") != "%"]
        if len(conversions) != len(values):
            raise self.error(f"printf() format has {len(conversions)} conversion(s) for {len(values)} value(s)",
                             node, KernelTypeError)
        out, last, scalars = [], 0, []
        it = iter(values)
        for m in specs:
            out.append(fmt[last:m.start()])
            last = m.end()
            if m.group("conv") == "%":
                out.append("%%")
                continue
            value = next(it)
            t = value.type
            conv = m.group("conv")
            if not isinstance(t, T.ScalarType):
                raise self.error(f"printf() conversion %{conv} cannot print a {t} (print scalars; "
                                 "print() also takes vectors and matrices)", node, KernelTypeError)
            if conv in "fFeEgGaA" and not t.is_float or conv in "diuxXoc" and t.is_float:
                raise self.error(f"printf() conversion %{conv} does not match a {t} value", node, KernelTypeError)
            length = "ll" if t.name == "int64" else ""
            out.append("%" + m.group("flags") + length + conv)
            v = self.materialize(value, t)
            scalars.append(arith.ExtUIOp(T.int32.mlir(), v).result if t.is_bool else v)
        out.append(fmt[last:])
        adjit_d.PrintOp("".join(out), scalars)
        return Val(T.int32, arith.ConstantOp(T.int32.mlir(), 0).result)

    def emit_expect(self, name: str, node):
        """expect_eq(a, b) / expect_neq(a, b) / expect_near(a, b, tolerance):
        when the check fails, prints "file:line: expect_eq(a, b) failed: a = ..,
        b = .." (the launch goes on, as in Warp)."""
        params = ("a", "b", "tolerance") if name == "expect_near" else ("a", "b")
        usage = f"{name}() takes {'a, b[, tolerance]' if name == 'expect_near' else 'a, b'}"
        if len(node.args) > len(params) or any(k.arg not in params[len(node.args):] for k in node.keywords):
            raise self.error(usage, node, KernelSyntaxError)
        given = dict(zip(params, node.args)) | {k.arg: k.value for k in node.keywords}  # Warp's names
        if "a" not in given or "b" not in given:
            raise self.error(usage, node, KernelSyntaxError)
        a, b = self.unify(self.expr(given["a"]), self.expr(given["b"]), node)
        t = a.type
        if not isinstance(t, (T.ScalarType, T.VectorType, T.MatrixType)):
            raise self.error(f"{name}() compares numbers, vectors and matrices, got {t}", node)
        if name == "expect_near":
            if not T.scalar_of(t).is_float:
                raise self.error(f"expect_near() compares float values, got {t}", node)
            tol = self.expr(given["tolerance"]) if "tolerance" in given else literal(1.0e-6)
            tol = self.materialize(self.coerce(tol, T.scalar_of(t), node), T.scalar_of(t))
            diff = math_d.AbsFOp(arith.SubFOp(self.materialize(a, t), self.materialize(b, t)).result).result
            limit = splat(t, tol) if t != T.scalar_of(t) else tol
            within = arith.CmpFOp(arith.CmpFPredicate.OLE, diff, limit).result
            if t != T.scalar_of(t):
                within = all_components(within, t)
            failed = arith.XOrIOp(within, arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result).result
        else:
            if isinstance(t, T.ScalarType):
                equal = self.expr_Compare(ast.copy_location(
                    ast.Compare(given["a"], [ast.Eq()], [given["b"]]), node)).value
            else:
                equal = self.components_equal(a, b, negate=False)
            failed = equal if name == "expect_neq" else arith.XOrIOp(
                equal, arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result).result
        check = scf.IfOp(failed, [], has_else=False)
        with ir.InsertionPoint(check.then_block):
            fa, va = self.print_parts(a, node)
            fb, vb = self.print_parts(b, node)
            where = f"{self.src.filename}:{self.src.line_of(node)}".replace("%", "%%")
            text = ast.unparse(node).replace("%", "%%")
            adjit_d.PrintOp(f"{where}: {text} failed: {fa} vs {fb}\n", va + vb)
            scf.YieldOp([])
        return Val(T.int32, arith.ConstantOp(T.int32.mlir(), 0).result)
