"""What the compiler and the compile cache read of a kernel's Python source.

``SourceInfo``: the parsed source and its location, for IR locations and
errors. ``Scope``: the one resolver of the names a kernel or device function
uses from outside its body; the frontend compiles what it resolves and the
cache key is made of what it resolves, so the two cannot disagree.
``parameter_types``: the kernel-language types of the annotations.
"""
from __future__ import annotations

import ast
import functools
import inspect
import textwrap
import typing
import weakref
from dataclasses import dataclass

from . import types as T
from .errors import KernelError, KernelTypeError


@dataclass
class SourceInfo:
    """Where a Python function's source lives, for locations and errors."""

    filename: str
    first_line: int
    lines: list[str]
    tree: ast.FunctionDef
    qualname: str
    #: The code object the source was read for (a redefinition re-reads).
    code: object = None

    @classmethod
    def of(cls, pyfunc) -> "SourceInfo":
        """The (memoized) source of ``pyfunc``: read and parsed once per process."""
        info = _SOURCE_INFOS.get(pyfunc)
        if info is None or info.code is not pyfunc.__code__:
            info = cls._read(pyfunc)
            info.code = pyfunc.__code__
            _SOURCE_INFOS[pyfunc] = info
        return info

    @classmethod
    def _read(cls, pyfunc) -> "SourceInfo":
        try:
            lines, first_line = inspect.getsourcelines(pyfunc)
        except (OSError, TypeError) as e:
            raise KernelError(f"cannot read the source of {pyfunc.__qualname__}: {e}") from None
        filename = inspect.getsourcefile(pyfunc) or "<unknown>"
        tree = ast.parse(textwrap.dedent("".join(lines)))
        fn = tree.body[0]
        if not isinstance(fn, ast.FunctionDef):
            raise KernelError(f"{pyfunc.__qualname__} is not a plain function definition")
        return cls(filename, first_line, lines, fn, pyfunc.__qualname__)

    @functools.cached_property
    def local_names(self) -> frozenset:
        """``local_names(self.tree)``, worked out once (kernel digests are
        remade at every variant load and backward check)."""
        return local_names(self.tree)

    def line_of(self, node) -> int:
        return self.first_line + getattr(node, "lineno", 1) - 1

    def col_of(self, node) -> int:
        # Dedenting removed the common indent; add it back for the true column.
        indent = len(self.lines[0]) - len(self.lines[0].lstrip())
        return getattr(node, "col_offset", 0) + indent

    def source_line(self, node) -> str:
        idx = getattr(node, "lineno", 1) - 1
        return self.lines[idx] if 0 <= idx < len(self.lines) else ""

    def error(self, cls, message: str, node) -> KernelError:
        """A ``cls`` error located at ``node``."""
        return cls(message, self.filename, self.line_of(node), self.col_of(node),
                   self.source_line(node), self.qualname)


_SOURCE_INFOS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

#: Python's names that mean kernel types wherever a kernel uses them.
_TYPE_NAMES = {"float": float, "int": int, "bool": bool}


#: The user @func a binary operator calls where no builtin rule takes its
#: operands (Warp's operator overloading by function name; the frontend
#: calls it, the cache keys its source).
OPERATOR_FUNCS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floordiv",
                  ast.Mod: "mod", ast.BitAnd: "bit_and", ast.BitOr: "bit_or", ast.BitXor: "bit_xor",
                  ast.LShift: "lshift", ast.RShift: "rshift"}

class Unresolved(Exception):
    """A name or attribute that ``Scope.resolve`` could not find; ``node`` is
    the part of the expression that failed."""

    def __init__(self, node: ast.expr):
        super().__init__(ast.unparse(node))
        self.node = node


class Scope:
    """The names a function sees outside its body, in Python's order: its
    closure, its module's globals, then ``float``/``int``/``bool``."""

    def __init__(self, pyfunc):
        cells = pyfunc.__closure__ or ()
        closure = {name: cell.cell_contents
                   for name, cell in zip(pyfunc.__code__.co_freevars, cells) if _cell_is_set(cell)}
        self._layers = (closure, pyfunc.__globals__, _TYPE_NAMES)

    def namespace(self) -> dict:
        """Every name the function sees outside its body, innermost last
        (for evaluating ``static(...)`` expressions)."""
        merged = dict(_TYPE_NAMES)
        merged.update(self._layers[1])
        merged.update(self._layers[0])
        return merged

    def lookup(self, name: str):
        """The value ``name`` refers to; raises KeyError if it is not defined."""
        for layer in self._layers:
            if name in layer:
                return layer[name]
        raise KeyError(name)

    def resolve(self, node: ast.expr):
        """The object a name or a chain of attributes of a name (``wp.types.vec3``)
        refers to; raises ``Unresolved`` naming the part that is missing."""
        if isinstance(node, ast.Name):
            try:
                return self.lookup(node.id)
            except KeyError:
                raise Unresolved(node) from None
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            try:
                return getattr(base, node.attr)
            except AttributeError:
                raise Unresolved(node) from None
        raise Unresolved(node)

    def references(self, tree: ast.AST, local: frozenset = frozenset()):
        """(path, value) for every outside name or attribute chain ``tree`` uses
        that resolves, outermost chains only (``wp.vec3``, not also ``wp``),
        except those rooted at a name in ``local`` (``local_names``)."""
        inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Name, ast.Attribute)) and id(node) not in inner:
                root = node
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name) and root.id in local:
                    continue
                try:
                    yield ast.unparse(node), self.resolve(node)
                except Unresolved:
                    continue


def local_names(fn: ast.FunctionDef) -> frozenset:
    """Names that are the function's own wherever it reads them: its
    parameters, and names assigned by a statement of its body's top level
    (which always runs) that nothing before the statement's end reads. (A
    global of such a name is not something the function depends on; other
    locals may be read as globals before their first assignment, and stay
    counted.)"""
    arguments = fn.args
    names = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    names |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
    first_read: dict[str, tuple[int, int]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            position = (node.lineno, node.col_offset)
            first_read[node.id] = min(first_read.get(node.id, position), position)
    for statement in fn.body:
        if isinstance(statement, ast.Assign) or (isinstance(statement, ast.AnnAssign) and statement.value):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            end = (statement.end_lineno, statement.end_col_offset)
            for target in targets:
                for node in ast.walk(target):
                    if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
                            and first_read.get(node.id, end) >= end):
                        names.add(node.id)
    return frozenset(names)


def _cell_is_set(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:  # a closure variable not assigned yet
        return False
    return True


def parameter_types(pyfunc, source: SourceInfo, what: str, patterns: dict | None = None) -> list[T.Type | None]:
    """The annotated types of ``pyfunc``'s parameters (None where unannotated
    or generic: ``typing.Any`` or a ``T.TypePattern``, which ``patterns``
    gets by parameter name)."""
    result = []
    hints = getattr(pyfunc, "__annotations__", {})
    for arg in source.tree.args.args:
        ann = hints.get(arg.arg)
        if ann is None:
            result.append(None)
            continue
        if isinstance(ann, str):  # (from __future__ import annotations)
            closure = {name: cell.cell_contents for name, cell in
                       zip(pyfunc.__code__.co_freevars, pyfunc.__closure__ or ()) if _cell_is_set(cell)}
            try:
                ann = eval(ann, pyfunc.__globals__, closure)
            except Exception as e:
                why = str(e).splitlines()[0] if str(e) else type(e).__name__
                raise source.error(KernelTypeError, f"cannot resolve the annotation '{ann}' of "
                                   f"'{arg.arg}': {why}", arg) from None
        ann = T.without_none(ann)  # Optional[wp.array(...)], wp.array(...) | None: a launch may pass None
        if ann is typing.Any:  # generic: each call's argument type (as Warp)
            result.append(None)
            continue
        if isinstance(ann, T.TypePattern):  # generic within a family (vector(length=Any, ...), Int, ...)
            if patterns is not None:
                patterns[arg.arg] = ann
            result.append(None)
            continue
        if isinstance(ann, (T.Reference, T.LocalArrayType)):
            result.append(_by_reference_annotation(ann, arg, source, what))
            continue
        if isinstance(ann, T.TileType):
            if what == "kernel":
                raise source.error(KernelTypeError, f"kernel parameter '{arg.arg}': tiles are made in kernels, "
                                   "not passed to them (pass an array and tile_load it)", arg)
            result.append(ann)
            continue
        if isinstance(ann, T.IndexedArrayType) and what != "kernel":
            raise source.error(KernelTypeError, f"{what} parameter '{arg.arg}': indexed arrays are kernel "
                               "parameters only (pass the data array and the index arrays)", arg)
        try:
            result.append(ann if isinstance(ann, (T.ArrayType, T.StructType, T.IndexedArrayType))
                          else T.value_type_of(ann))
        except TypeError:
            raise source.error(KernelTypeError, f"the annotation {ann!r} of {what} parameter "
                               f"'{arg.arg}' is not a kernel type", arg) from None
    return result


def _by_reference_annotation(ann, arg, source: SourceInfo, what: str):
    """A ``ref[T]`` (its value type resolved) or ``fixedarray(...)``
    annotation: @func parameters only, as in Warp."""
    kind = "ref[T]" if isinstance(ann, T.Reference) else "fixedarray"
    if what != "device function":
        raise source.error(KernelTypeError, f"{what} parameter '{arg.arg}': {kind} is not allowed here (it "
                           "annotates @func parameters; pass the value to a helper @func)", arg)
    if isinstance(ann, T.LocalArrayType):
        return ann
    t = ann.value_type
    if not isinstance(t, T.StructType):
        try:
            t = T.value_type_of(t)
        except TypeError:
            raise source.error(KernelTypeError, f"the annotation ref[{t!r}] of {what} parameter '{arg.arg}': "
                               "a reference is to a scalar, vector, matrix or struct type", arg) from None
    return T.Reference(t)
