"""Runs Newton (the physics engine built on Warp) on adjit; writes docs/newton.md.

    python tools/newton.py                        (download if needed, measure all, write the doc)
    python tools/newton.py --no-doc               (print the summary only)
    python tools/newton.py --modules newton._src.sim --no-doc   (the kernels of some modules only)

Run by hand (CI never downloads Newton). The tool

1. fetches Newton's wheel once with ``pip download --no-deps newton==1.8.0``
   into a cache folder outside the repository (``~/.cache/adjit-newton``;
   ``--cache`` or ``ADJIT_NEWTON_CACHE`` for another) and unpacks it there;
2. runs ``import newton`` in a fresh interpreter with ``warp`` resolved to
   adjit (``adjit.alias_warp()``, as ``python -m adjit.warp`` does) and
   reports whether it succeeds, or the first failure with the module and line
   of Newton's code where it happened;
3. counts Newton's module-level kernels (each top-level ``def`` decorated
   ``@wp.kernel`` in its modules, tests and examples left out, found by
   reading the source) and compiles each on adjit's CPU backend (its forward
   variant, ``adjit.loader.cpu_variant``: what a first launch compiles). A
   generic kernel (``typing.Any`` parameters) counts as compiling when each
   instance Newton declares at import (``wp.overload``) compiles; one with no
   declared instance is listed apart (Warp makes an instance per launch's
   argument types), outside the share. A kernel whose module does not import
   fails with that import error. Compiles run in worker interpreters (a crash
   or a hang costs only the kernel in flight), on ``--jobs`` workers;
   adjit's disk cache makes a rerun quick;
4. groups the failures by reason (the error's first line, locations removed)
   and by kind (who has the work: adjit's host names and alias shims, the
   kernel frontend/compiler, what is out of scope, Newton's optional
   dependencies), and writes docs/newton.md with the date, the adjit commit
   and the command;
5. runs five of Newton's examples headless on the CPU (``--num-frames``
   frames, 2 unless told) with warp resolved to adjit and, given an
   interpreter with Warp (``--warp-python``, or ``$ADJIT_WARP_PYTHON``),
   on Warp's CPU too, and compares the final states (``compare_states``:
   the tolerance and why it is what it is are beside COMPARE_ATOL). Warp's
   results are kept in the cache folder (they do not change with adjit).
   ``--examples-only`` reruns only this step, keeping the last run's kernel
   results: the doc then names the commit each part comes from.
"""
from __future__ import annotations

import argparse
import ast
import datetime
import importlib.util
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
import traceback
import zipfile
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "newton.md"
TOOL = Path(__file__).resolve()
NEWTON_VERSION = "1.8.0"
DEFAULT_CACHE = Path(os.environ.get("ADJIT_NEWTON_CACHE", "~/.cache/adjit-newton")).expanduser()
#: Seconds one worker may spend on one module import or one kernel compile.
STEP_TIMEOUT = 600

# --------------------------------------------------------------------------
# Fetching Newton
# --------------------------------------------------------------------------


def fetch_newton(cache: Path, version: str = NEWTON_VERSION) -> Path:
    """The folder holding Newton's unpacked wheel (``<folder>/newton``),
    downloading and unpacking it into ``cache`` the first time."""
    target = cache / f"newton-{version}"
    if (target / "newton" / "__init__.py").is_file():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    wheels = sorted(cache.glob(f"newton-{version}-*.whl"))
    if not wheels:
        print(f"downloading newton=={version} into {cache} ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", f"newton=={version}",
                        "-d", str(cache)], check=True)
        wheels = sorted(cache.glob(f"newton-{version}-*.whl"))
        if not wheels:
            raise SystemExit(f"pip download left no newton-{version} wheel in {cache}")
    with zipfile.ZipFile(wheels[0]) as z:
        z.extractall(target)
    return target


# --------------------------------------------------------------------------
# Finding Newton's module-level kernels (from the source, without importing)
# --------------------------------------------------------------------------

#: Newton's folders left out (at any depth): its tests and examples are not the engine.
LEFT_OUT_DIRS = ("tests", "examples")


def _is_kernel_decorator(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return ast.unparse(target) in ("wp.kernel", "warp.kernel", "kernel")


def scan_kernels(src: Path) -> dict[str, list[tuple[str, int]]]:
    """Newton's module-level kernels by module name: (function name, line
    of its ``def``), in source order."""
    out: dict[str, list[tuple[str, int]]] = {}
    for path in sorted((src / "newton").rglob("*.py")):
        if any(part in LEFT_OUT_DIRS for part in path.relative_to(src).parts[:-1]):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except SyntaxError:
            continue
        kernels = [(n.name, n.lineno) for n in tree.body
                   if isinstance(n, ast.FunctionDef) and any(_is_kernel_decorator(d) for d in n.decorator_list)]
        if kernels:
            parts = path.relative_to(src).with_suffix("").parts
            module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[module] = kernels
    return out


# --------------------------------------------------------------------------
# Workers (run in fresh interpreters, with warp resolved to adjit)
# --------------------------------------------------------------------------

def _setup_worker(src: str) -> None:
    global _SRC
    _SRC = os.path.abspath(src)
    # (this file's folder leaves sys.path: its name would shadow Newton's package)
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != TOOL.parent]
    # The installed adjit (a wheel or an editable install); the checkout only
    # where none is installed (its source tree has no compiled modules
    # unless it was built in place).
    if importlib.util.find_spec("adjit") is None:
        sys.path.insert(0, str(ROOT))
    import adjit
    adjit.alias_warp()
    sys.path.insert(0, src)


#: Where Newton's source is, in a worker (its frames are Newton's code).
_SRC = ""


def _newton_file(filename: str) -> str | None:
    """``newton/...py`` for a file of Newton's source, else None."""
    path = os.path.abspath(filename)
    return Path(path).relative_to(_SRC).as_posix() if _SRC and path.startswith(_SRC + os.sep) else None


def describe(e: BaseException) -> dict:
    """An exception as the report shows it: type, first line, and the
    innermost frame in Newton's code (module path, line, source line)."""
    message = str(e).strip()
    first = message.splitlines()[0] if message else ""
    where = None
    for frame in traceback.extract_tb(e.__traceback__):
        rel = _newton_file(frame.filename)
        if rel:
            where = {"file": rel, "line": frame.lineno, "code": (frame.line or "").strip()}
    # adjit's kernel errors carry the kernel source location in the message
    m = re.match(r"^(\S+\.py):(\d+): ", first)
    if m and _newton_file(m.group(1)):
        where = {"file": _newton_file(m.group(1)), "line": int(m.group(2)), "code": ""}
    return {"type": type(e).__name__, "message": first, "where": where,
            "missing_module": getattr(e, "name", None) if isinstance(e, ModuleNotFoundError) else None}


def worker_import(src: str) -> None:
    """``import newton``: prints one JSON line, ``{"ok": true}`` or the failure."""
    _setup_worker(src)
    try:
        t0 = time.time()
        import newton  # noqa: F401
        print(json.dumps({"ok": True, "seconds": time.time() - t0}))
    except BaseException as e:  # noqa: BLE001
        print(json.dumps({"ok": False, **describe(e)}))


def _find_kernel(module: str, name: str, line: int):
    from adjit import language
    found = [k for k in list(language._kernels)
             if k.pyfunc.__module__ == module and k.pyfunc.__name__ == name and "<locals>" not in k.pyfunc.__qualname__]
    if not found:
        return None
    return min(found, key=lambda k: abs(k.pyfunc.__code__.co_firstlineno - line))


def _compile(kernel) -> dict:
    from adjit import loader
    if kernel.is_generic:
        instances = kernel.overloads
        if not instances:
            return {"status": "generic"}
        for inst in instances:
            loader.cpu_variant(inst, adjoint=0)
        return {"status": "ok", "instances": len(instances)}
    loader.cpu_variant(kernel, adjoint=0)
    return {"status": "ok"}


def worker_kernels(src: str) -> None:
    """Reads requests (one JSON line each: module, its kernels, kernels to
    skip) from stdin; for each, imports the module and compiles its kernels,
    printing a JSON line when a step starts and one per result."""
    _setup_worker(src)
    import importlib
    try:
        import newton  # noqa: F401  (first, as programs do: some modules import in no other order)
    except BaseException:  # noqa: BLE001  (reported by the import check)
        pass

    def emit(obj):
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    for request in sys.stdin:
        req = json.loads(request)
        module, skip = req["module"], set(req.get("skip", ()))
        emit({"start": "import", "module": module})
        try:
            importlib.import_module(module)
        except BaseException as e:  # noqa: BLE001
            emit({"module": module, "import_error": describe(e)})
            emit({"done": module})
            continue
        for name, line in req["kernels"]:
            if name in skip:
                continue
            emit({"start": name, "module": module})
            t0 = time.time()
            kernel = _find_kernel(module, name, line)
            if kernel is None:
                result = {"status": "fail", "error": {"type": "NotFound", "message": "no @wp.kernel of this name "
                                                      "was made when the module was imported", "where": None}}
            else:
                try:
                    result = _compile(kernel)
                except BaseException as e:  # noqa: BLE001
                    result = {"status": "fail", "error": describe(e)}
            emit({"module": module, "kernel": name, "line": line, "seconds": round(time.time() - t0, 3), **result})
        emit({"done": module})


# --------------------------------------------------------------------------
# The parent: workers over the modules, with crash and hang recovery
# --------------------------------------------------------------------------

#: Live worker processes (killed if the parent is interrupted).
_WORKERS: set = set()


class _Worker:
    def __init__(self, src: Path):
        env = dict(os.environ)
        env.setdefault("ADJIT_COMPILE_THREADS", "1")
        self.proc = subprocess.Popen([sys.executable, str(TOOL), "--worker-kernels", str(src)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                                     cwd=str(ROOT))
        self.lines: queue.Queue = queue.Queue()
        _WORKERS.add(self)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, obj) -> None:
        self.proc.stdin.write(json.dumps(obj) + "\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()
        _WORKERS.discard(self)


def compile_all(src: Path, modules: dict[str, list], jobs: int, progress: bool = True) -> list[dict]:
    """Results, one per kernel (and one per module that does not import)."""
    todo: queue.Queue = queue.Queue()
    for module in modules:
        todo.put(module)
    results: list[dict] = []
    lock = threading.Lock()
    total = sum(len(k) for k in modules.values())

    def record(obj):
        with lock:
            results.append(obj)
            if progress and "kernel" in obj:
                n = sum(1 for r in results if "kernel" in r)
                if n % 50 == 0 or n == total:
                    print(f"  {n}/{total} kernels", file=sys.stderr, flush=True)

    def slot():
        worker = None
        while True:
            try:
                module = todo.get_nowait()
            except queue.Empty:
                break
            done: set[str] = set()
            while True:
                if worker is None:
                    worker = _Worker(src)
                worker.send({"module": module, "kernels": modules[module], "skip": sorted(done)})
                in_flight, finished = None, False
                while True:
                    try:
                        line = worker.lines.get(timeout=STEP_TIMEOUT)
                    except queue.Empty:
                        line = "TIMEOUT"
                    if line is None or line == "TIMEOUT":
                        worker.kill()
                        worker = None
                        what = "timed out" if line == "TIMEOUT" else "crashed (the worker interpreter died)"
                        if in_flight in (None, "import"):
                            record({"module": module, "import_error": {
                                "type": "Crash", "message": f"importing the module {what}", "where": None}})
                            finished = True
                        else:
                            line_no = dict(modules[module]).get(in_flight)
                            record({"module": module, "kernel": in_flight, "line": line_no, "status": "fail",
                                    "error": {"type": "Crash", "message": f"compiling the kernel {what}",
                                              "where": None}})
                            done.add(in_flight)
                        break
                    obj = json.loads(line)
                    if "start" in obj:
                        in_flight = obj["start"]
                    elif "done" in obj:
                        finished = True
                        break
                    else:
                        if "kernel" in obj:
                            done.add(obj["kernel"])
                        record(obj)
                if finished or len(done) == len(modules[module]):
                    break
        if worker is not None:
            worker.proc.stdin.close()
            worker.proc.wait()
            _WORKERS.discard(worker)

    threads = [threading.Thread(target=slot, daemon=True) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(1.0)
    except BaseException:
        for w in list(_WORKERS):
            w.kill()
        raise
    return results


# --------------------------------------------------------------------------
# Reasons and kinds
# --------------------------------------------------------------------------

def reason_of(error: dict) -> str:
    """A failure's reason: its type and first line, locations and Newton's
    paths removed, so kernels failing alike group together."""
    msg = error.get("message", "")
    msg = re.sub(r"^\S+\.py:\d+: ", "", msg)
    msg = re.sub(r"\s*\((?:/\S+/)?\S+\.py:\d+\)", "", msg)
    msg = re.sub(r"/\S*/(newton/\S+\.py)", r"\1", msg)
    msg = re.sub(r"@func_native '\w+'", "@func_native '...'", msg)  # one reason for all native snippets
    if error.get("type") == "ModuleNotFoundError" and error.get("missing_module"):
        msg = f"No module named '{error['missing_module']}'"
    return f"{error.get('type')}: {msg}"


#: Newton's optional dependencies (a module needing one does not import
#: without it: not adjit's).
OPTIONAL_DEPENDENCIES = ("mujoco", "mujoco_warp", "pxr", "torch", "scipy", "trimesh", "usd", "onnx", "warp_nn",
                         "open3d", "pyglet", "imgui_bundle", "networkx", "matplotlib", "meshio", "coacd",
                         "alphashape", "fast_simplification", "newton_usd_schemas", "viser", "rerun", "yaml",
                         "cbor2", "PIL", "requests", "gitpython", "git", "ovrtx", "ovstage", "pyfqmr", "jax")

#: Kinds of reasons, first match wins: (kind, who has the work, regex on the reason).
KINDS = [
    ("Newton's optional dependency not installed", "none (not adjit's)",
     r"^ModuleNotFoundError: No module named '(" + "|".join(OPTIONAL_DEPENDENCIES) + r")(\.|')"),
    ("tile primitives (out of scope, issue 12)", "out of scope",
     r"'wp\.tile\w*'|\btile_\w+|\bTile\b|tile primitives"),
    ("geometry adjit lacks yet, volumes, textures (issue 28)", "out of scope",
     r"wp\.(mesh|bvh|volume|hash_grid|texture|closest_point|intersect|triangle_closest)\w*|"
     r"\b(Mesh|Bvh|Volume|HashGrid|Texture[23]D)\b|geometry, volumes and textures|volumes and textures are not"),
    ("native C++/CUDA snippets (@func_native)", "none (refused by design)", r"func_native"),
    ("Warp libraries adjit lacks (warp.fem, warp.sparse)", "host (Warp libraries, not started)",
     r"\bwarp\.(fem|sparse)\b"),
    ("kernel language: arrays of structs inside structs and locals", "frontend / compiler",
     r"cannot be a struct field|arrays of structs|array of \w+ structs"),
    ("host names adjit lacks", "host (alias shims / names)", r"NotInAdjitError: warp\.|NotInAdjitImportError"),
    ("kernel builtins or names adjit lacks", "frontend / builtins", r"is not defined"),
    ("kernel language: types and overloads", "frontend / compiler", r"KernelTypeError"),
    ("kernel language: syntax", "frontend / compiler", r"KernelSyntaxError"),
    ("compiler crash or internal error", "frontend / compiler / C++", r"Crash|CompileError|RuntimeError|MLIR"),
]


def kind_of(reason: str) -> tuple[str, str]:
    for kind, who, pattern in KINDS:
        if re.search(pattern, reason):
            return kind, who
    return "other", "to triage"


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------

#: Earlier measurements (date, adjit commit, what it gave), before the run the doc reports.
HISTORY = [
    ("2026-11-27", "77c3a8f", "`import newton` fails at newton/config.py:20 (`from warp._src.thirdparty.appdirs "
     "import user_cache_dir`: adjit had no `warp._src`); every Newton module imports the `newton` package "
     "first, so none imports: 0 of 1530 kernels compile"),
    ("2026-11-27", "3dfccd4", "1239 of 1509 kernels compile (82.1%); 0 of 5 examples run"),
    ("2026-11-27", "62b9a38", "1281 of 1509 kernels compile (84.9%); 0 of 5 examples run"),
]

def git_commit() -> str:
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", "adjit", "cpp",
                                "dialects"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        return sha + (" (with uncommitted changes to adjit)" if dirty else "")
    except Exception:  # noqa: BLE001
        return "unknown"


def summarize(modules: dict[str, list], results: list[dict]) -> dict:
    """Per kernel: status and reason (a module that does not import fails
    each of its kernels with its import error)."""
    import_errors = {r["module"]: r["import_error"] for r in results if "import_error" in r}
    by_kernel = {(r["module"], r["kernel"]): r for r in results if "kernel" in r}
    rows = []
    for module, kernels in modules.items():
        for name, line in kernels:
            r = by_kernel.get((module, name))
            if module in import_errors and r is None:
                error = import_errors[module]
                rows.append({"module": module, "kernel": name, "line": line, "status": "fail", "error": error,
                             "import": True})
            elif r is None:
                rows.append({"module": module, "kernel": name, "line": line, "status": "fail",
                             "error": {"type": "NotRun", "message": "no result (the worker never reached it)"}})
            else:
                rows.append(r)
    for r in rows:
        if r["status"] == "fail":
            r["reason"] = reason_of(r["error"])
            r["kind"], r["who"] = kind_of(r["reason"])
    return {"rows": rows, "import_errors": import_errors}


def _fmt_where(error: dict | None) -> str:
    where = (error or {}).get("where")
    if not where:
        return ""
    return f"{where['file']}:{where['line']}"


def render(summary: dict, imp: dict, examples: list[dict], command: str, seconds: float, jobs: int,
           commit: str | None = None, date: str | None = None, frames: int | None = None,
           kernels_commit: str | None = None, examples_command: str | None = None) -> str:
    frames = frames or EXAMPLE_FRAMES
    rows = summary["rows"]
    total = len(rows)
    ok = [r for r in rows if r["status"] == "ok"]
    generic = [r for r in rows if r["status"] == "generic"]
    failed = [r for r in rows if r["status"] == "fail"]
    counted = total - len(generic)
    optional = [r for r in failed if r["who"] == "none (not adjit's)"]
    share = 100.0 * len(ok) / counted if counted else 0.0
    share_deps = 100.0 * len(ok) / (counted - len(optional)) if counted - len(optional) else 0.0
    modules = sorted({r["module"] for r in rows})
    not_importing = sorted(summary["import_errors"])

    if imp.get("ok"):
        import_line = f"**`import newton` succeeds** ({imp.get('seconds', 0):.1f} s)."
    else:
        w = imp.get("where") or {}
        import_line = (f"**`import newton` fails**: `{imp.get('type')}: {imp.get('message')}` at "
                       f"`{w.get('file')}:{w.get('line')}` (`{w.get('code', '')}`).")

    lines = [
        "# Newton on adjit",
        "",
        "Generated by `tools/newton.py`; do not edit by hand.",
        "",
        f"- date: {date or datetime.date.today().isoformat()}",
        f"- adjit commit: {commit or git_commit()}"
        + (f" (examples; the kernels, import and their tables below are from {kernels_commit})"
           if kernels_commit and kernels_commit != commit else ""),
        f"- Newton: {NEWTON_VERSION} (its PyPI wheel, unchanged, with `warp` resolved to adjit)",
        f"- command: `{command}` ({jobs} worker(s), {seconds / 60:.1f} min)"
        + (f"; examples rerun with `{examples_command}`" if examples_command else ""),
        "",
        "[Newton](https://github.com/newton-physics/newton) is the physics engine built on Warp. The tool fetches",
        "its wheel once (outside the repository; CI never does), runs `import newton` with `warp` resolved to",
        "adjit (`adjit.alias_warp()`, see [warp_alias.md](warp_alias.md)), and compiles each of Newton's",
        "module-level kernels (top-level `def`s decorated `@wp.kernel`, its tests and examples left out) on",
        "adjit's CPU backend: the forward variant a first launch compiles. A generic kernel counts when every",
        "instance Newton declares at import (`wp.overload`) compiles; generic kernels with no declared",
        "instance (Warp instantiates them per launch) are listed apart and left out of the share. A kernel",
        "whose module does not import fails with that import error.",
        "",
        "## Summary",
        "",
        import_line,
        "",
        f"**Kernels: {len(ok)} of {counted} compile on adjit's CPU backend ({share:.1f}%).**"
        + (f" Without the {len(optional)} kernels whose modules need Newton's optional dependencies (not "
           f"installed here): {len(ok)} of {counted - len(optional)} ({share_deps:.1f}%)." if optional else ""),
        "",
        "| | kernels |",
        "|---|---|",
        f"| module-level kernels in Newton's modules | {total} (in {len(modules)} modules) |",
        f"| compile | {len(ok)} |",
        f"| fail | {len(failed)} |",
        f"| generic, no instance declared at import (not counted) | {len(generic)} |",
        f"| in modules that do not import | {sum(1 for r in failed if r.get('import'))} "
        f"({len(not_importing)} modules) |",
        "",
    ]

    lines += ["## History", "", "| date | adjit commit | result |", "|---|---|---|"]
    lines += [f"| {d} | {c} | {what} |" for d, c, what in HISTORY]
    n_examples = f"; {sum(e['ok'] for e in examples)} of {len(examples)} examples run" if examples else ""
    if any("warp" in e for e in examples):
        n_examples += f", {sum(e.get('warp', {}).get('agree', False) for e in examples)} agree with Warp's CPU"
    lines += [f"| {date or datetime.date.today().isoformat()} | {kernels_commit or commit or git_commit()} | "
              f"this report: {len(ok)} of {counted} kernels compile ({share:.1f}%)"
              + (n_examples if not kernels_commit or kernels_commit == commit else "") + " |"]
    if kernels_commit and kernels_commit != commit:
        lines.append(f"| {date or datetime.date.today().isoformat()} | {commit} | this report's examples"
                     f"{n_examples} |")
    lines.append("")

    if examples:
        n_ok = sum(e["ok"] for e in examples)
        compared = any("warp" in e for e in examples)
        lines += ["## Examples", "",
                  f"{n_ok} of {len(examples)} of Newton's examples run headless on the CPU "
                  f"(`python -m adjit.warp -m newton.examples NAME --viewer null --num-frames {frames} "
                  "--device cpu`); for each that does not, its first failure and where in Newton it happened."]
        if compared:
            n_agree = sum(e.get("warp", {}).get("agree", False) for e in examples)
            lines += ["", f"{n_agree} of {len(examples)} agree with Warp 1.19's CPU after the same {frames} frames: "
                      f"the final state's {', '.join(STATE_FIELDS)} (the first and last states for examples that "
                      "keep them all, and the loss) agree when every component is within "
                      f"{COMPARE_ATOL:g} + {COMPARE_RTOL:g} x |Warp's| (both run float32; the two compilers order "
                      "and contract float operations differently, which leaves rounding differences of about "
                      "1e-6 after a few frames: the tolerance leaves an order of magnitude for them and still "
                      "catches a real difference)."]
        lines += ["", "| example | result | where |" + (" agrees with Warp's CPU |" if compared else ""),
                  "|---|---|---|" + ("---|" if compared else "")]
        for e in examples:
            result = "runs" if e["ok"] else f"`{e['error'][:200].replace('|', chr(92) + '|')}`"
            row = f"| {e['name']} | {result} | {e.get('where', '')} |"
            if compared:
                w = e.get("warp")
                row += (" |" if w is None else
                        f" {'yes' if w['agree'] else 'no'}: {w['detail'].replace('|', chr(92) + '|')} |")
            lines.append(row)
        lines.append("")

    by_kind = defaultdict(list)
    for r in failed:
        by_kind[(r["kind"], r["who"])].append(r)
    lines += ["## Failures by kind", "",
              "Who has the work: *host* is adjit's host names and `warp` alias shims (adjit/warp, adjit's",
              "modules); *frontend / compiler* is the kernel language (adjit/compiler, adjit/builtins, C++);",
              "*out of scope* is what issue 12 leaves out.", "",
              "| kind | who has the work | kernels |", "|---|---|---|"]
    for (kind, who), rs in sorted(by_kind.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"| {kind} | {who} | {len(rs)} |")

    reasons = Counter(r["reason"] for r in failed)
    lines += ["", "## Failures by reason", "",
              "The error's first line, locations removed. An example kernel is named for each.", "",
              "| kernels | reason | kind | example |", "|---|---|---|---|"]
    example = {}
    for r in failed:
        example.setdefault(r["reason"], r)
    for reason, n in reasons.most_common():
        r = example[reason]
        text = reason.replace("|", "\\|")
        if len(text) > 300:
            text = text[:297] + "..."
        lines.append(f"| {n} | `{text}` | {r['kind']} | `{r['module']}.{r['kernel']}` |")

    frontend = Counter(r["reason"] for r in failed if r["who"].startswith("frontend"))
    if frontend:
        lines += ["", "## For the frontend and compiler", "",
                  f"The {sum(frontend.values())} kernels that fail on the kernel language itself (adjit/compiler, "
                  "adjit/builtins, the dialect), by reason, most kernels first; each names a kernel to start from.", ""]
        for reason, n in frontend.most_common():
            r = example[reason]
            text = reason if len(reason) <= 200 else reason[:197] + "..."
            lines.append(f"- {n} × `{text}` (`{r['module']}.{r['kernel']}`, {_fmt_where(r.get('error')) or 'line ' + str(r['line'])})")

    if not_importing:
        lines += ["", "## Modules that do not import", "", "| module | kernels | error | where |", "|---|---|---|---|"]
        counts = Counter(r["module"] for r in failed if r.get("import"))
        for m in not_importing:
            e = summary["import_errors"][m]
            lines.append(f"| `{m}` | {counts[m]} | `{reason_of(e)[:200]}` | {_fmt_where(e)} |")

    if generic:
        lines += ["", "## Generic kernels with no declared instance", "",
                  ", ".join(f"`{r['module']}.{r['kernel']}`" for r in generic)]

    lines += ["", "## Each failing kernel", "", "| kernel | line | reason | where |", "|---|---|---|---|"]
    for r in sorted(failed, key=lambda r: (r["module"], r["line"] or 0)):
        text = r["reason"].replace("|", "\\|")
        if len(text) > 200:
            text = text[:197] + "..."
        lines.append(f"| `{r['module']}.{r['kernel']}` | {r['line']} | `{text}` | {_fmt_where(r.get('error'))} |")
    return "\n".join(lines) + "\n"


#: Newton examples run headless on the CPU (``--viewer null``), a few frames
#: each, on adjit and (with ``--warp-python``) on Warp's CPU, comparing the
#: final states.
EXAMPLES = ("basic_pendulum", "basic_joints", "cloth_hanging", "softbody_hanging", "diffsim_ball")
EXAMPLE_FRAMES = 2
#: The arrays of an example's State compared between adjit and Warp.
STATE_FIELDS = ("body_q", "body_qd", "particle_q", "particle_qd", "joint_q", "joint_qd")
#: adjit agrees with Warp when every compared component satisfies
#: ``|adjit - warp| <= ATOL + RTOL * |warp|``. Both run the same float32
#: program, but two compilers (adjit's MLIR/LLVM, Warp's clang) order and
#: contract (FMA) float operations differently: results differ by float32
#: rounding (~6e-8 relative per operation), which a few frames of tens of
#: substeps each grow to around 1e-6..1e-5 in Newton's metre / second units.
#: 1e-4 leaves an order of magnitude for that and still catches any real
#: difference (a wrong builtin, a missed substep or contact: 1e-3 and up).
COMPARE_ATOL = 1e-4
COMPARE_RTOL = 1e-4


def _final_states(example) -> dict:
    """``{"final": State}`` (and ``"initial"`` for examples that keep every
    state, as the differentiable ones do: its velocities are what they
    optimize)."""
    if isinstance(getattr(example, "states", None), list) and example.states:
        return {"initial": example.states[0], "final": example.states[-1]}
    state = getattr(example, "state_0", None)
    return {"final": state} if state is not None else {}


def worker_example(src: str, name: str, frames: int, backend: str, out: str) -> None:
    """Runs Newton's example ``name`` headless for ``frames`` frames on
    ``backend`` ("adjit": warp resolved to adjit; "warp": the interpreter's
    own Warp) and saves its final state arrays (and loss, if any) to ``out``
    (.npz)."""
    if backend == "adjit":
        _setup_worker(src)
    else:
        sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != TOOL.parent]
        sys.path.insert(0, src)
    import numpy as np
    import newton.examples

    captured = {}
    run = newton.examples.run

    def capturing_run(example, args):
        captured["example"] = example
        return run(example, args)

    newton.examples.run = capturing_run
    sys.argv = ["newton.examples", name, "--viewer", "null", "--num-frames", str(frames), "--device", "cpu"]
    newton.examples.main()
    example = captured.get("example")
    if example is None:
        raise SystemExit(f"example {name} never called newton.examples.run")
    arrays = {}
    for prefix, state in _final_states(example).items():
        for field in STATE_FIELDS:
            value = getattr(state, field, None)
            if value is not None and hasattr(value, "numpy"):
                arrays[f"{prefix}.{field}"] = value.numpy()
    loss = getattr(example, "loss", None)
    if loss is not None and hasattr(loss, "numpy"):
        arrays["loss"] = loss.numpy()
    np.savez(out, **arrays)


def compare_states(ours: dict, theirs: dict) -> dict:
    """adjit's final state against Warp's: agree (same arrays, shapes, and
    every component within COMPARE_ATOL + COMPARE_RTOL * |warp|), the
    largest difference, and where it is."""
    import numpy as np
    if sorted(ours) != sorted(theirs):
        return {"agree": False, "detail": f"different state arrays: adjit {sorted(ours)}, Warp {sorted(theirs)}"}
    if not ours:
        return {"agree": False, "detail": "no state arrays to compare"}
    worst, where = 0.0, ""
    agree = True
    for key in sorted(ours):
        a, w = np.asarray(ours[key], np.float64), np.asarray(theirs[key], np.float64)
        if a.shape != w.shape:
            return {"agree": False, "detail": f"{key}: shape {a.shape} on adjit, {w.shape} on Warp"}
        if a.size == 0:
            continue
        diff = np.abs(a - w)
        bad = ~(diff <= COMPARE_ATOL + COMPARE_RTOL * np.abs(w))  # (NaN anywhere disagrees)
        agree &= not bad.any()
        d = float("nan") if np.isnan(diff).any() else float(diff.max())
        if not np.isnan(worst) and not d <= worst:  # (the first NaN stays the worst)
            worst, where = d, key
    return {"agree": bool(agree), "max_abs_diff": worst, "where": where,
            "detail": f"largest difference {worst:.3g} ({where})"}


def _example_subprocess(python: str, src: Path, name: str, frames: int, backend: str, out: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(src)
    cmd = [python, str(TOOL), "--worker-example", str(src), "--example", name, "--num-frames", str(frames),
           "--backend", backend, "--out", str(out)]
    t0 = time.time()
    try:
        proc = subprocess.run(cmd, cwd=str(src), env=env, capture_output=True, text=True, timeout=EXAMPLE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timed out after {EXAMPLE_TIMEOUT} s", "where": ""}
    seconds = time.time() - t0
    if proc.returncode == 0 and out.is_file():
        return {"ok": True, "seconds": seconds}
    lines = proc.stderr.strip().splitlines()
    error = next((ln for ln in reversed(lines) if re.match(r"^[\w.]+(Error|Exception|Warning)\b", ln)),
                 lines[-1] if lines else f"exit status {proc.returncode}")
    frames_ = re.findall(r'File "([^"]+)", line (\d+)', proc.stderr)
    where = ""
    for filename, line in frames_:
        path = os.path.abspath(filename)
        if path.startswith(str(src) + os.sep):
            where = f"{Path(path).relative_to(src).as_posix()}:{line}"
    return {"ok": False, "error": error, "where": where, "seconds": seconds}


#: Seconds one example may run on one backend (compiling its kernels included).
EXAMPLE_TIMEOUT = 1800


def run_example(src: Path, name: str, frames: int = EXAMPLE_FRAMES, warp_python: str | None = None,
                workdir: Path | None = None) -> dict:
    """Runs Newton's example ``name`` headless on adjit (and on Warp's CPU
    with ``warp_python``, an interpreter with Warp installed) for ``frames``
    frames; ok, or the first failure (innermost frame in Newton); with
    Warp, whether the final states agree."""
    import numpy as np
    workdir = workdir or (src.parent / "example-states")
    workdir.mkdir(parents=True, exist_ok=True)
    ours = workdir / f"{name}-adjit.npz"
    ours.unlink(missing_ok=True)
    result = {"name": name, **_example_subprocess(sys.executable, src, name, frames, "adjit", ours)}
    if warp_python and result["ok"]:
        theirs = workdir / f"{name}-warp-{frames}.npz"
        if not theirs.is_file():  # (Warp's results do not change with adjit's: kept)
            ref = _example_subprocess(warp_python, src, name, frames, "warp", theirs)
            if not ref["ok"]:
                result["warp"] = {"agree": False, "detail": f"on Warp: {ref['error']}"}
                return result
        with np.load(ours) as a, np.load(theirs) as w:
            result["warp"] = compare_states(dict(a), dict(w))
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where Newton's wheel is kept")
    parser.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1), help="worker interpreters")
    parser.add_argument("--modules", nargs="*", help="only modules with these name prefixes")
    parser.add_argument("--no-doc", action="store_true", help="print the summary, do not write docs/newton.md")
    parser.add_argument("--no-examples", action="store_true", help="do not run Newton's examples")
    parser.add_argument("--render-only", action="store_true",
                        help="write the doc from the last run's results (kept in the cache folder), compiling nothing")
    parser.add_argument("--examples-only", action="store_true",
                        help="rerun only the examples; the kernel results are the last run's (the doc says which "
                             "commit each comes from)")
    parser.add_argument("--num-frames", type=int, default=EXAMPLE_FRAMES, help="frames each example runs")
    parser.add_argument("--warp-python", default=os.environ.get("ADJIT_WARP_PYTHON"),
                        help="an interpreter with Warp installed: run each example on Warp's CPU too and compare "
                             "the final states (default: $ADJIT_WARP_PYTHON; none: no comparison)")
    parser.add_argument("--worker-import", metavar="SRC", help=argparse.SUPPRESS)
    parser.add_argument("--worker-kernels", metavar="SRC", help=argparse.SUPPRESS)
    parser.add_argument("--worker-example", metavar="SRC", help=argparse.SUPPRESS)
    parser.add_argument("--example", help=argparse.SUPPRESS)
    parser.add_argument("--backend", choices=("adjit", "warp"), help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker_import:
        return worker_import(args.worker_import)
    if args.worker_kernels:
        return worker_kernels(args.worker_kernels)
    if args.worker_example:
        return worker_example(args.worker_example, args.example, args.num_frames, args.backend, args.out)

    saved = args.cache / "last_run.json"
    if args.render_only:
        run = json.loads(saved.read_text())
        return _report(run, args.no_doc)
    t0 = time.time()
    src = fetch_newton(args.cache)
    if args.examples_only:
        run = json.loads(saved.read_text())
        run["kernels_commit"] = run.get("kernels_commit") or run["commit"]
        run["examples"] = _run_examples(src, args)
        run["examples_command"] = "python tools/newton.py --examples-only" + _example_flags(args)
        run.update(commit=git_commit(), date=datetime.date.today().isoformat(), frames=args.num_frames)
        saved.write_text(json.dumps(run))
        return _report(run, args.no_doc)
    proc = subprocess.run([sys.executable, str(TOOL), "--worker-import", str(src)], capture_output=True, text=True,
                          cwd=str(ROOT), timeout=STEP_TIMEOUT)
    try:
        imp = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        imp = {"ok": False, "type": "Crash", "message": (proc.stderr.strip().splitlines() or ["no output"])[-1],
               "where": None}
    print("import newton:", "ok" if imp["ok"] else f"{imp['type']}: {imp['message']} at {imp.get('where')}",
          file=sys.stderr)

    modules = scan_kernels(src)
    if args.modules:
        modules = {m: k for m, k in modules.items() if any(m == p or m.startswith(p + ".") for p in args.modules)}
    print(f"compiling {sum(map(len, modules.values()))} kernels of {len(modules)} modules on {args.jobs} worker(s)",
          file=sys.stderr)
    results = compile_all(src, modules, args.jobs)
    examples = [] if args.no_examples else _run_examples(src, args)
    command = ("python tools/newton.py" + (f" --modules {' '.join(args.modules)}" if args.modules else "")
               + ("" if args.no_examples else _example_flags(args)))
    run = {"import": imp, "modules": modules, "results": results, "examples": examples, "command": command,
           "seconds": time.time() - t0, "jobs": args.jobs, "commit": git_commit(),
           "date": datetime.date.today().isoformat(), "frames": args.num_frames}
    saved.write_text(json.dumps(run))
    _report(run, args.no_doc)


def _example_flags(args) -> str:
    return ((f" --num-frames {args.num_frames}" if args.num_frames != EXAMPLE_FRAMES else "")
            + (" --warp-python PYTHON" if args.warp_python else ""))


def _run_examples(src: Path, args) -> list[dict]:
    examples = []
    for name in EXAMPLES:
        e = run_example(src, name, args.num_frames, args.warp_python, args.cache / "example-states")
        examples.append(e)
        verdict = "runs" if e["ok"] else f"{e['error']} at {e['where']}"
        if "warp" in e:
            verdict += f"; {'agrees with' if e['warp']['agree'] else 'DISAGREES with'} Warp: {e['warp']['detail']}"
        print(f"example {name}: {verdict}", file=sys.stderr)
    return examples


def _report(run: dict, no_doc: bool) -> None:
    modules = {m: [tuple(k) for k in ks] for m, ks in run["modules"].items()}
    summary = summarize(modules, run["results"])
    text = render(summary, run["import"], run["examples"], run["command"], run["seconds"], run["jobs"],
                  run.get("commit"), run.get("date"), frames=run.get("frames", EXAMPLE_FRAMES),
                  kernels_commit=run.get("kernels_commit"), examples_command=run.get("examples_command"))
    if no_doc:
        print(text.split("## Each failing kernel")[0])
        return
    DOC.write_text(text)
    rows = summary["rows"]
    ok = sum(r["status"] == "ok" for r in rows)
    counted = sum(r["status"] != "generic" for r in rows)
    print(f"wrote {DOC.relative_to(ROOT)}: {ok}/{counted} kernels compile", file=sys.stderr)


if __name__ == "__main__":
    main()
