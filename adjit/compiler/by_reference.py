"""Arguments passed by reference to @func calls: ``ref[T]`` parameters,
local arrays (``zeros(shape, dtype)`` / ``fixedarray``) and tiles the callee
writes (``written_tiles``), as in Warp.

adjit's locals are SSA values and a call is a ``func.func`` inlined later,
so a reference is copy-in/copy-out: the callee gets the value, returns its
final value as an extra result (after its own results, on every return),
and the caller assigns it back to the argument expression, which must be
assignable (a local, an array element, a component, a struct field or a
ref parameter). Everything stays SSA, so gradients flow through the
write-back exactly as through any assignment.

Copy-in/copy-out equals Warp's pointer semantics as long as no two
arguments of one call reach the same storage; where they may (``f(x, x)``,
``f(a[i], a[j])``, ``f(a, a[i])``) the call is rejected. The indices of an
argument expression are evaluated once (``hoist_indices``): the write-back
goes to the element the call read, whatever the callee changed.
"""
from __future__ import annotations

import ast
import functools

from .. import types as T
from ..errors import KernelTypeError
from ..source import SourceInfo, parameter_types
from . import local_arrays as LA
from .values import StructRef, Val

#: A runtime index in an argument's path (it may equal any other).
_DYNAMIC = object()
_COMPONENT_NAMES = {"x": 0, "y": 1, "z": 2, "w": 3}


def declared_types(fn) -> list:
    return parameter_types(fn.pyfunc, SourceInfo.of(fn.pyfunc), "device function")


def takes_references(fn) -> bool:
    """Whether some overload of ``fn`` has a ``ref[T]`` parameter."""
    return any(isinstance(t, T.Reference) for o in fn.overloads for t in declared_types(o))


def is_by_reference(want, arg, fn=None, index: int | None = None) -> bool:
    """Whether argument ``arg`` (number ``index`` of a call of ``fn``) is
    passed by reference."""
    return isinstance(want, T.Reference) or LA.is_local_array(arg) or \
        (fn is not None and isinstance(arg, Val) and isinstance(arg.type, T.TileType)
         and _param_name(fn, index) in written_tiles(fn))


def _param_name(fn, index):
    names = [a.arg for a in SourceInfo.of(fn.pyfunc).tree.args.args]
    return names[index] if index is not None and index < len(names) else None


@functools.cache
def _written_names(pyfunc) -> frozenset[str]:
    """The parameters of ``pyfunc`` its body may write: assigned (``t += u``,
    ``t[i] = x``, ``t = ...``), given to a builtin that writes that argument
    (``tile_assign(t, ...)``, ``tile_matmul(a, b, t)``) or to an @func."""
    from .. import language
    from ..builtins.registry import Builtin
    tree = SourceInfo.of(pyfunc).tree
    params = {a.arg for a in tree.args.args}
    written = set()

    def root(node):
        while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
            node = node.value
        return node.id if isinstance(node, ast.Name) else None

    def resolve(node):
        path = []
        while isinstance(node, ast.Attribute):
            path.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id in params:
            return None
        obj = pyfunc.__globals__.get(node.id)
        if obj is None and pyfunc.__closure__:
            cells = dict(zip(pyfunc.__code__.co_freevars, pyfunc.__closure__))
            obj = cells[node.id].cell_contents if node.id in cells else None
        for attr in reversed(path):
            obj = getattr(obj, attr, None)
        return obj

    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, (ast.For, ast.comprehension)):
            targets = [node.target]
        elif isinstance(node, ast.Call):
            callee = resolve(node.func)
            if isinstance(callee, Builtin):
                positions = set(callee.rebinds)
                named = {callee.params[i] for i in positions if i < len(callee.params)}
                targets = [a for i, a in enumerate(node.args) if i in positions] + \
                    [k.value for k in node.keywords if k.arg in named]
            elif isinstance(callee, language.Function) or callee is None:
                targets = list(node.args) + [k.value for k in node.keywords]  # may write (conservatively)
        for target in targets:
            for leaf in (target.elts if isinstance(target, ast.Tuple) else [target]):
                if root(leaf) in params:
                    written.add(root(leaf))
    return frozenset(written)


def written_tiles(fn) -> frozenset[str]:
    """The parameters through which @func ``fn`` may write a tile argument:
    those are passed by reference (Warp passes every tile by reference, so
    the caller sees the callee's writes); tiles only read are passed by value.
    Not for a func with a hand-written func_grad or func_jvp."""
    if getattr(fn, "custom_grad", None) is not None or getattr(fn, "custom_jvp", None) is not None:
        return frozenset()
    return _written_names(fn.pyfunc)


def accepts_local_array(want, arg) -> bool:
    """Whether a parameter annotated ``want`` takes ``arg``, a local array:
    unannotated, a fixedarray of its shape and dtype (or generic), or an array
    of its dtype and ndim (as Warp matches array annotations)."""
    if not LA.is_local_array(arg):
        return False
    t = arg.type
    if want is None:
        return True
    if isinstance(want, T.fixedarray):
        return want.accepts(t)
    if isinstance(want, T.LocalArrayType):
        return want == t
    return isinstance(want, T.ArrayType) and not isinstance(want, (T.StructArrayType, T.IndexedArrayType)) and \
        want.dtype in (None, t.dtype) and want.ndim == t.ndim


def reference_params(fn, arg_types) -> list[tuple[str, object]]:
    """(name, type) of the parameters of ``fn`` passed by reference in a
    specialization to ``arg_types``, in parameter order."""
    names = [a.arg for a in SourceInfo.of(fn.pyfunc).tree.args.args]
    return [(n, t) for n, want, t in zip(names, declared_types(fn), arg_types)
            if isinstance(want, T.Reference) or isinstance(t, T.LocalArrayType)
            or (isinstance(t, T.TileType) and n in written_tiles(fn))]


def out_types(params) -> list:
    """The types of the extra results carrying ``params``' final values."""
    out = []
    for name, t in params:
        if isinstance(t, T.StructType):
            out += [ft for _, ft in t.leaves(name) if not isinstance(ft, T.ArrayType)]
        else:
            out.append(t)
    return out


def final_values(fe) -> list[Val]:
    """In the callee, where it returns: the values of its by-reference
    parameters, to be assigned back by the caller."""
    out = []
    for name, t in fe.ref_params:
        if isinstance(t, T.StructType):
            for path, ft in t.leaves(name):
                if not isinstance(ft, T.ArrayType):
                    out.append(fe.concrete(fe.env[path]))
            continue
        v = fe.env.get(name)
        if isinstance(v, Val) and v.is_literal and isinstance(t, T.ScalarType):
            v = fe.coerce(v, t, fe.node)
        if not isinstance(v, Val) or v.type != t:
            raise fe.error(f"'{name}' is passed by reference as {t}; here it holds {fe.describe(v)}, which "
                           "cannot be given back to the caller", fe.node, KernelTypeError)
        out.append(fe.concrete(v))
    return out


def check_assigned(fe, target: ast.Name, value: Val) -> Val:
    """``value`` as the new value of local ``target``: a ref parameter keeps
    its type (the caller's storage has it)."""
    t = next((t for name, t in fe.ref_params if name == target.id), None)
    if t is None or isinstance(t, (T.StructType, T.LocalArrayType)) or value.type == t and not value.is_literal:
        return value
    if value.is_literal and isinstance(t, T.ScalarType):
        return fe.coerce(value, t, target)
    raise fe.error(f"'{target.id}' is passed by reference as {t}: it cannot be assigned {fe.describe(value)}",
                   target, KernelTypeError)


def argument_nodes(fn, call: ast.Call) -> list:
    """The argument expression of each parameter of ``fn`` in ``call`` (None
    for a default, or a position after a ``*`` unpacking)."""
    code = fn.pyfunc.__code__
    names = list(code.co_varnames[:code.co_argcount])
    nodes = [None] * len(names)
    for k, a in enumerate(call.args):
        if isinstance(a, ast.Starred):
            break
        if k < len(nodes):
            nodes[k] = a
    for kw in call.keywords:
        if kw.arg in names:
            nodes[names.index(kw.arg)] = kw.value
    return nodes


def hoist_indices(fe, call: ast.Call) -> tuple[ast.Call, list[str]]:
    """``call`` with the runtime indices of its argument expressions
    (``a[i + 1]``, ``v[k]``) evaluated now into hidden locals, so that an
    argument passed by reference is read and written back at one place."""
    hoisted: list[str] = []

    def index(node):
        if isinstance(node, (ast.Constant, ast.Slice)):
            return node
        v = fe.expr(node)
        if isinstance(v, Val) and v.is_literal:
            return node
        if not isinstance(v, Val):
            return node  # reported where the argument is evaluated
        fe.refs_hoisted = getattr(fe, "refs_hoisted", 0) + 1
        name = f"%index{fe.refs_hoisted}"
        fe.env[name] = fe.concrete(v)
        hoisted.append(name)
        return ast.copy_location(ast.Name(name, ast.Load()), node)

    def visit(node):
        if isinstance(node, ast.Subscript):
            sl = node.slice
            sl = ast.copy_location(ast.Tuple([index(e) for e in sl.elts], ast.Load()), sl) \
                if isinstance(sl, ast.Tuple) else index(sl)
            return ast.copy_location(ast.Subscript(visit(node.value), sl, node.ctx), node)
        if isinstance(node, ast.Attribute):
            return ast.copy_location(ast.Attribute(visit(node.value), node.attr, node.ctx), node)
        return node

    new = ast.Call(call.func, [ast.copy_location(ast.Starred(visit(a.value), a.ctx), a)
                               if isinstance(a, ast.Starred) else visit(a) for a in call.args],
                   [ast.copy_location(ast.keyword(k.arg, visit(k.value)), k) for k in call.keywords])
    return ast.copy_location(new, call), hoisted


def _path(fe, node):
    """The storage an argument expression names, as [root, step, ...] (a step
    a field name, a constant index or _DYNAMIC); None if it names none."""
    steps = []
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute):
            steps.append(_COMPONENT_NAMES.get(node.attr, node.attr))
        else:
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            for item in reversed(items):
                literal = item.value if isinstance(item, ast.Constant) else None
                if isinstance(item, ast.Name) and isinstance(fe.env.get(item.id), Val) and \
                        fe.env[item.id].is_literal:
                    literal = fe.env[item.id].literal
                steps.append(literal if isinstance(literal, int) and not isinstance(literal, bool) else _DYNAMIC)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in fe.env:
        return None
    return [node.id] + steps[::-1]


def _may_overlap(p, q) -> bool:
    for a, b in zip(p, q):
        if a is _DYNAMIC or b is _DYNAMIC:
            return True
        if a != b:
            return False
    return True  # one contains the other


def _not_assignable(fe, node) -> str | None:
    """Why ``node`` cannot be passed by reference (None if it can)."""
    root = node
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        if isinstance(root, ast.Attribute) and root.attr == "shape":
            return "an array's shape cannot be written"
        root = root.value
    if isinstance(root, ast.Name) and root.id in fe.env:
        return None
    if isinstance(root, ast.Name):
        return f"'{root.id}' is not a local variable here (a global is a compile-time constant)"
    if isinstance(root, ast.Constant):
        return "a literal has no storage"
    if isinstance(root, ast.Call):
        return "the result of a call is a temporary"
    return "the value of an expression is a temporary"


def pass_argument(fe, fn, index: int, want, arg, arg_node, call):
    """The type and values of by-reference argument ``index``, checked."""
    fname = fn.pyfunc.__name__
    names = [a.arg for a in SourceInfo.of(fn.pyfunc).tree.args.args]
    label = f"argument {index + 1} ('{names[index]}') of {fname}()"
    if LA.is_local_array(arg):
        t = arg.type
        if not accepts_local_array(want, arg):
            raise fe.error(f"{label} must be {want}, got the local array {t}", call, KernelTypeError)
        return t, [arg.value]
    if isinstance(arg, Val) and isinstance(arg.type, T.TileType):  # a tile the callee writes
        if want is not None and want != arg.type:
            raise fe.error(f"{label} must be {want}, got {arg.type}", call, KernelTypeError)
        return arg.type, [fe.materialize(arg, arg.type)]
    t = want.value_type
    if arg_node is None:
        raise fe.error(f"{label} is passed by reference (ref[{t}]): write the argument out (not through * "
                       "unpacking, nor a default)", call, KernelTypeError)
    why = _not_assignable(fe, arg_node)
    if why is not None:
        raise fe.error(f"{label} is passed by reference (ref[{t}]), so it must be assignable (a local "
                       f"variable, an array element, a component, a struct field or a ref parameter); "
                       f"{ast.unparse(arg_node)}: {why}", arg_node, KernelTypeError)
    if isinstance(t, T.StructType):
        if not (isinstance(arg, StructRef) and arg.type is t):
            raise fe.error(f"{label} must be a {t.name} struct (ref[{t.name}]), got {fe.describe(arg)}",
                           arg_node, KernelTypeError)
        vals = []
        for path, ft in t.leaves(arg.prefix):
            if path not in fe.env:
                raise fe.error(f"{label}: its field '{path[len(arg.prefix) + 1:]}' has no array", call)
            vals.append(fe.materialize(fe.env[path], ft))
        return t, vals
    if not isinstance(arg, Val):
        raise fe.error(f"{label} must be a {t} value (ref[{t}]), got {fe.describe(arg)}", arg_node,
                       KernelTypeError)
    if arg.is_literal and arg.type != t:
        raise fe.error(f"{label} is passed by reference (ref[{t}]), but {ast.unparse(arg_node)} holds the "
                       f"literal {arg.literal!r}, of no fixed type; give it one where it is set "
                       f"(e.g. {ast.unparse(arg_node)} = {t}({arg.literal!r}))", arg_node, KernelTypeError)
    if arg.type != t:
        raise fe.error(f"{label} must be {t} (ref[{t}]), got {arg.type}", arg_node, KernelTypeError)
    return t, [fe.materialize(arg, t)]


def check_aliasing(fe, fn, declared, args, nodes, call) -> None:
    """Rejects a call where a copied-in-and-out argument (a reference, a local
    array) may share storage with another argument passed by reference (or an
    array the callee reads through memory)."""
    copied, shared = [], []
    for i, (want, a, n) in enumerate(zip(declared, args, nodes)):
        path = _path(fe, n) if n is not None else None
        if path is None:
            continue
        if is_by_reference(want, a, fn, i):
            copied.append((i, n, path))
        elif (isinstance(a, Val) and isinstance(a.type, T.ArrayType)) or \
                (isinstance(a, StructRef) and any(isinstance(ft, T.ArrayType) for _, ft in a.type.leaves(""))):
            shared.append((i, n, path))
    for k, (i, n, p) in enumerate(copied):
        for j, m, q in copied[k + 1:] + shared:
            if _may_overlap(p, q):
                (a, first), (b, second) = sorted([(i, n), (j, m)], key=lambda e: e[0])
                raise fe.error(f"arguments {a + 1} and {b + 1} of {fn.pyfunc.__name__}() ({ast.unparse(first)} "
                               f"and {ast.unparse(second)}) may be the same storage, and {ast.unparse(n)} is "
                               "passed by reference: adjit passes a reference as a copy given back after the "
                               "call, which would differ from Warp's here; pass distinct variables", call,
                               KernelTypeError)


def write_back(fe, refs, values, call) -> None:
    """Assigns the callee's final values of its by-reference parameters to
    the argument expressions (``refs``: (node or None, type) each)."""
    values = list(values)
    for node, t in refs:
        if isinstance(t, T.StructType):
            leaves = [(p, ft) for p, ft in t.leaves("") if not isinstance(ft, T.ArrayType)]
            got = [values.pop(0) for _ in leaves]
            if node is None:
                continue
            source = fe.expr(node)
            fe.refs_hoisted = getattr(fe, "refs_hoisted", 0) + 1
            temp = fe.copy_struct(source, f"%ref{fe.refs_hoisted}")
            for (p, ft), v in zip(leaves, got):
                fe.env[temp.prefix + p] = Val(ft, v)
            fe.assign(node, temp)
            continue
        v = values.pop(0)
        if node is not None:
            if isinstance(t, T.TileType) and isinstance(node, ast.Name):
                from . import tiles
                tiles.check_writable(fe, node.id, f"{ast.unparse(call.func)}() (it writes its tile parameter)",
                                     call)
            fe.assign(node, Val(t, v))
