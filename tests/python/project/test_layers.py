"""The package's layers: imports point one way, the builtins reach MLIR
only through ``deferred_import``, ``import adjit`` loads no MLIR (nor the
compiler), and the C++/Python contracts agree."""
import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import adjit
from adjit.runtime.access import Access

PACKAGE = Path(adjit.__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


#: The modules that need MLIR: its bindings, and adjit's compiler and dialect.
MLIR_MODULES = ("mlir", "adjit.compiler", "adjit.dialects", "adjit._adjit")


def _needs_mlir(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in MLIR_MODULES)


def _import_targets(path: Path, modules: set[str]) -> set[tuple[str, bool]]:
    """(module, deferred) for every import in ``path``: at the top, inside
    functions, relative or absolute, and through ``deferred_import("...")``
    (deferred). ``modules`` are adjit's; others are named as written."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        targets, deferred = [], False
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # `from . import types` imports the module adjit.types; a name
            # that is not a module comes from the package's __init__.
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                       for a in node.names]
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "deferred_import":
            targets, deferred = [node.args[0].value], True
        found.update((t, deferred) for t in targets if t != name)
    return found


def _imports(path: Path, modules: set[str]) -> set[str]:
    """Every adjit module ``path`` imports, deferred imports included."""
    return {t for t, _ in _import_targets(path, modules) if t in modules}


def _package_modules() -> tuple[list[Path], set[str]]:
    """The package's Python files, and the names of all its modules."""
    files = [p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts]
    # Native modules (adjit._runtime, adjit._adjit) import nothing of adjit's.
    native = {f"adjit.{name}" for name in ("_runtime", "_adjit")
              if importlib.util.find_spec(f"adjit.{name}") is not None}
    return files, {_module_name(p) for p in files} | native


def _import_graph() -> dict[str, set[str]]:
    files, modules = _package_modules()
    return {_module_name(p): _imports(p, modules) for p in files}


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module):
        state[module] = 1
        path.append(module)
        for dep in sorted(graph.get(module, ())):
            if state.get(dep) == 1:
                return path[path.index(dep):] + [dep]
            if dep not in state:
                cycle = visit(dep)
                if cycle:
                    return cycle
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module)
            if cycle:
                return cycle
    return None


def test_no_import_cycle_in_the_package():
    graph = _import_graph()
    # The walker sees the edges that matter (a broken walker finds no cycle).
    assert "adjit.compiler.driver" in graph["adjit.loader"]  # inside a function
    assert "adjit.compiler.values" in graph["adjit.builtins.math"]  # deferred
    assert "adjit.runtime.recording" in graph["adjit.runtime.array"]
    cycle = _find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_cycles():
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": set()}) is None


def test_layers_below_the_compiler_never_import_it():
    graph = _import_graph()
    below = [m for m in graph if m.startswith("adjit.runtime") or m in (
        "adjit.types", "adjit.errors", "adjit.source", "adjit.language", "adjit.cache",
        "adjit.interop", "adjit.variant", "adjit.backends.base")]
    for module in below:
        assert not any(d.startswith("adjit.compiler.") for d in graph[module]), (module, graph[module])


def test_the_builtins_import_mlir_only_through_deferred_import():
    # The builtins belong to the language (adjit.sin is an entry) and are
    # imported with it; their emitters bind the modules that need MLIR
    # (adjit.compiler.values among them) with deferred_import, which imports
    # them when a kernel is compiled.
    files, modules = _package_modules()
    rooms = [p for p in files if _module_name(p).startswith("adjit.builtins")]
    assert len(rooms) > 10 and ("adjit.compiler.values", True) in _import_targets(
        PACKAGE / "builtins" / "math.py", modules)  # (the walker sees them)
    for path in rooms:
        eager = {t for t, deferred in _import_targets(path, modules) if not deferred}
        assert not any(_needs_mlir(t) for t in eager), (_module_name(path), sorted(eager))


def test_launches_reach_a_device_only_through_a_backend():
    graph = _import_graph()
    # the device-independent launch calls no runtime; a backend does
    assert "adjit._runtime" not in graph["adjit.launch"]
    assert "adjit._runtime" in graph["adjit.backends.cpu"]
    # the interface a backend implements depends on nothing of adjit's but its errors
    assert graph["adjit.backends.base"] <= {"adjit.errors"}
    assert graph["adjit.variant"] <= {"adjit.config"}


def test_import_adjit_loads_no_mlir():
    # ... nor anything of the compiler: compiler/ holds what needs MLIR.
    code = ("import sys, adjit\n"
            f"print(sorted(m for m in sys.modules if any(m == p or m.startswith(p + '.') for p in {MLIR_MODULES!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_access_flags_are_the_compilers():
    from adjit import _adjit
    assert _adjit.ACCESS_FLAGS == {"READ": Access.READ, "WRITE": Access.WRITE,
                                   "OWN_ELEMENT": Access.OWN_ELEMENT, "FLOAT_MIN_MAX": Access.FLOAT_MIN_MAX}


def test_the_error_record_words_are_the_headers():
    """cpp/runtime/ErrorRecord.h numbers the words of a launch's error record
    for the runtime and the passes; Python reads them from the runtime."""
    import re
    from adjit import _runtime
    header = (Path(__file__).resolve().parents[3] / "cpp" / "runtime" / "ErrorRecord.h").read_text()
    words = dict(re.findall(r"\b(Adjit\w+)\s*=\s*(-?\d+)", header))
    assert {k: int(v) for k, v in words.items() if k.startswith("AdjitRecord")} == {
        "AdjitRecord" + "".join(part.title() for part in name.split("_")): value
        for name, value in _runtime.ERROR_RECORD.items()}
    assert int(words["AdjitLaunchUnproven"]) == _runtime.LAUNCH_UNPROVEN
    record = _runtime.ERROR_RECORD
    assert record["words"] == record["add_log"] + 1 == record["ranges"] + 2 * record["max_ranged"] + 1
