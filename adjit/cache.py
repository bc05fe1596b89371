"""The on-disk compile cache of CPU kernel objects.

An entry is the host object file of one kernel, keyed by a hash of
everything that determines it: the kernel's source, the source of every
device function it reaches, the global constants it reads (all found by the
same ``Scope`` the frontend compiles with), its argument types, the compile
options and the host CPU. The entry records the compiler that produced it
(the fingerprint of its sources and native module): where the compiler is
installed, an entry from another compiler is rebuilt; where only the runtime
is, any entry for this CPU is used (that is how precompiled kernels run).

Entries are written to a temporary file and renamed into place, so two
processes compiling the same kernel at once never leave a torn entry; each
entry carries a SHA-256 of its payload, so a corrupted or truncated one is
detected, reported and rebuilt. The reason for every compile is logged on
the ``adjit.cache`` logger ("first compile", "source changed", ...).

Location: ``$ADJIT_CACHE_DIR``, else ``adjit.config.cache_dir``, else
``$XDG_CACHE_HOME/adjit`` (``~/.cache/adjit``). ``ADJIT_CACHE=0`` (or
``adjit.config.cache = False``) turns the cache off.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import json
import logging
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import _runtime, config
from . import types as T
from .builtins import Builtin
from .language import Function, GradWrapper
from .language import static as language_static
from .source import OPERATOR_FUNCS as _OPERATOR_FUNCS, Scope, SourceInfo, Unresolved

log = logging.getLogger("adjit.cache")

#: Bumped whenever the entry layout or the CPU entry ABI changes.
CACHE_FORMAT = 3
_MAGIC = b"ADJITOBJ3\n"


def cache_dir() -> Path:
    env = os.environ.get("ADJIT_CACHE_DIR")
    if env:
        return Path(env)
    if config.cache_dir:
        return Path(config.cache_dir)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "adjit"


def enabled() -> bool:
    return config.cache and os.environ.get("ADJIT_CACHE", "1") not in ("0", "false", "off")


@functools.cache
def compiler_fingerprint() -> str | None:
    """Hash of the compiler's sources (the builtins' emitters included) and
    native module, or None where the compiler is not installed (a
    runtime-only install)."""
    try:
        spec = importlib.util.find_spec("adjit._adjit")
    except (ImportError, ValueError):
        spec = None
    if spec is None or spec.origin is None:
        return None
    pkg = Path(__file__).resolve().parent
    h = hashlib.sha256(f"format={CACHE_FORMAT}".encode())
    # File identities (size, mtime), not contents: this runs on every warm
    # start, and an edited file always gets a new mtime.
    files = sorted(pkg.glob("compiler/**/*.py")) + sorted(pkg.glob("builtins/*.py")) + [
        pkg / "types.py", pkg / "source.py", Path(spec.origin)]
    for path in files:
        stat = path.stat()
        h.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return h.hexdigest()


@functools.cache
def target_id() -> str:
    """This machine's CPU, as the runtime sees it (entries are per CPU)."""
    return _runtime.host_id()


def _static_key(value) -> str | None:
    """How a referenced global enters the key: numbers, kernel types, builtins
    and device functions change the code generated for the same source text."""
    if T.constant_type_of(value) is not None:  # numpy scalars and vector/matrix/quat values
        return f"value:{T.constant_type_of(value)!r}:{value.tolist()!r}"
    if isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, T.Type):
        return f"type:{value!r}"
    if isinstance(value, Builtin):
        return f"builtin:{value.name}"
    if isinstance(value, Function):
        return f"func:differentiable={value.differentiable}"
    if isinstance(value, GradWrapper):
        return f"grad:{_static_key(value.func)}"
    if value is float or value is int or value is bool:
        return f"pytype:{value.__name__}"
    return None


def _dependencies(pyfunc, seen: dict) -> None:
    """Collects the source and referenced constants of ``pyfunc`` and of every
    device function it reaches."""
    if pyfunc in seen:
        return
    info = SourceInfo.of(pyfunc)  # parsed once per process, shared with the frontend
    constants = {}
    seen[pyfunc] = ("".join(info.lines), constants)
    funcs = []
    scope = Scope(pyfunc)
    for path, value in scope.references(info.tree, info.local_names):
        key = _static_key(value)
        if key is not None:
            constants[path] = key
        if isinstance(value, GradWrapper):  # grad(f) named at module level: f's sources are keyed
            value = value.func
        if isinstance(value, Function):
            for overload in value.overloads:
                funcs.append(overload.pyfunc)
                if overload.custom_grad is not None:
                    funcs.append(overload.custom_grad)
                if overload.custom_jvp is not None:
                    funcs.append(overload.custom_jvp)
    # Operators call user funcs named add, mul, ... where no builtin takes
    # the operands (frontend.user_operator): their sources are keyed too.
    operators = {type(n.op) for n in ast.walk(info.tree) if isinstance(n, (ast.BinOp, ast.AugAssign))}
    for name in sorted({_OPERATOR_FUNCS[o] for o in operators if o in _OPERATOR_FUNCS}):
        try:
            value = scope.lookup(name)
        except KeyError:
            continue
        if isinstance(value, Function):
            constants[f"operator:{name}"] = _static_key(value)
            for overload in value.overloads:
                funcs.append(overload.pyfunc)
                if overload.custom_grad is not None:
                    funcs.append(overload.custom_grad)
    # What static(...) expressions read is compiled in whatever its type (a
    # list of funcs, a dict of constants): the key holds all of it.
    for node in ast.walk(info.tree):
        if isinstance(node, ast.Call) and node.args and _is_static_call(scope, node):
            for path, value in scope.references(node.args[0]):
                constants[path] = "static:" + _static_repr(value, funcs)
    for f in funcs:
        _dependencies(f, seen)


def _is_static_call(scope: Scope, node: ast.Call) -> bool:
    try:
        return scope.resolve(node.func) is language_static
    except Unresolved:
        return False


def _static_repr(value, funcs: list) -> str:
    """A key of a value a static() expression reads; the functions it holds
    join ``funcs`` (their sources are keyed too)."""
    if isinstance(value, Function):
        for overload in value.overloads:
            funcs.append(overload.pyfunc)
        return f"func:{value.__qualname__}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_static_repr(v, funcs) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k!r}:{_static_repr(v, funcs)}" for k, v in sorted(value.items(), key=repr)) + "}"
    key = _static_key(value)
    return key if key is not None else repr(value)


@dataclass
class KeyParts:
    """What a cache key is made of, hashed part by part to explain misses."""

    source: str
    functions: str
    options: str
    target: str
    #: Which compiled variant of the kernel (not part of the key): misses are
    #: explained against the last compile of the same variant.
    variant: str = ""

    def key(self) -> str:
        h = hashlib.sha256(f"format={CACHE_FORMAT}".encode())
        for part in (self.source, self.functions, self.options, self.target):
            h.update(part.encode())
        return h.hexdigest()[:40]


@dataclass(frozen=True)
class KernelDigest:
    """The option-independent part of a kernel's keys: its source with the
    constants it reads and argument types, and the device functions it reaches."""

    source: str
    functions: str
    #: What the hashes were made of, by function ("module.qualname": (source,
    #: {name: constant key})), the kernel first: for describe_change.
    parts: dict = field(default_factory=dict, compare=False, repr=False, hash=False)


def kernel_digest(pyfunc, arg_types) -> KernelDigest:
    seen: dict = {}
    _dependencies(pyfunc, seen)
    parts = {_function_name(f): (src, c) for f, (src, c) in seen.items()}
    own_source, own_constants = seen.pop(pyfunc)
    functions = hashlib.sha256(json.dumps(sorted(
        (_function_name(f), src, sorted(c.items())) for f, (src, c) in seen.items()
    )).encode()).hexdigest()
    source = hashlib.sha256((own_source + json.dumps(sorted(own_constants.items()))
                             + repr([str(t) for t in arg_types])).encode()).hexdigest()
    return KernelDigest(source, functions, parts)


def _function_name(f) -> str:
    return f"{f.__module__}.{f.__qualname__}"  # (__module__ is None for code made by exec)


def describe_change(old: KernelDigest, new: KernelDigest) -> str:
    """What differs between two digests of one kernel, in words: the
    constants whose values changed, the functions whose source changed."""
    changes = []
    for name in list(old.parts) + [n for n in new.parts if n not in old.parts]:
        short = name.rsplit(".", 1)[-1]
        if name not in new.parts:
            changes.append(f"it no longer calls '{short}'")
            continue
        if name not in old.parts:
            changes.append(f"it now calls '{short}'")
            continue
        (old_src, old_consts), (new_src, new_consts) = old.parts[name], new.parts[name]
        if old_src != new_src:
            changes.append(f"the source of '{short}' changed")
        changed = sorted(k for k in set(old_consts) | set(new_consts) if old_consts.get(k) != new_consts.get(k))
        changes += [f"the global '{k}' read by '{short}' changed" for k in changed]
    return "; ".join(changes) or "its argument types or the functions it calls changed"


def key_parts(digest: KernelDigest, options: dict) -> KeyParts:
    """The key of one compiled variant (``options``) of a kernel."""
    opts = hashlib.sha256(json.dumps(options, sort_keys=True).encode()).hexdigest()
    variant = "-".join([str(options.get("target", ""))] + [flag for flag in ("adjoint", "noalias")
                                                           if options.get(flag)])
    # PTX is for a GPU architecture, whatever the host: an entry compiled here
    # runs on a GPU machine with another CPU.
    target = f"cuda-{options['arch']}" if options.get("target") == "cuda" else target_id()
    return KeyParts(digest.source, digest.functions, opts, target, variant)


def _identity(pyfunc, parts: KeyParts) -> str:
    ident = f"{pyfunc.__code__.co_filename}:{pyfunc.__qualname__}:{parts.variant}"
    return hashlib.sha256(ident.encode()).hexdigest()[:24]


def _kernel_name(pyfunc) -> str:
    return f"{getattr(pyfunc, '__module__', None) or '__main__'}.{pyfunc.__qualname__}"


def entry_path(parts: KeyParts, directory: Path | None = None) -> Path:
    """Where the entry for these key parts lives."""
    return (directory or cache_dir()) / f"{parts.key()}.adjitobj"


def discard(parts: KeyParts) -> None:
    """Deletes the entry for these key parts (a damaged one), if it is there."""
    try:
        entry_path(parts).unlink()
    except OSError:
        pass


def clear() -> int:
    """Deletes every compiled kernel in the cache folder (only adjit's
    ``*.adjitobj`` entries); returns how many. Kernels already loaded in this
    process keep running; the next process compiles again."""
    removed = 0
    for entry in cache_dir().glob("*.adjitobj"):
        try:
            entry.unlink()
            removed += 1
        except OSError:
            pass
    return removed


def load(pyfunc, parts: KeyParts) -> tuple[bytes, dict] | None:
    """The cached (object, metadata) for these key parts, or None (logging
    why it must compile)."""
    if not enabled():
        log.info("compiling %s: the cache is disabled", pyfunc.__qualname__)
        return None
    directory = cache_dir()
    path = entry_path(parts, directory)
    try:
        blob = path.read_bytes()
    except OSError:
        log.info("compiling %s: %s", pyfunc.__qualname__, _miss_reason(directory, pyfunc, parts))
        return None
    payload = _verified_payload(blob)
    if payload is None:
        log.warning("compiling %s: the cache entry %s is corrupted or truncated; rebuilding it",
                    pyfunc.__qualname__, path)
        return None
    compiler = compiler_fingerprint()
    if compiler is not None and payload[1].get("compiler") != compiler:
        log.info("compiling %s: the compiler changed", pyfunc.__qualname__)
        return None
    stored_key = payload[1].get("key")
    if stored_key is not None and stored_key != parts.key():
        # A file renamed or copied over another entry: its code is another
        # kernel's (or another variant's). Never run it under this key.
        log.warning("refusing the cache entry %s for kernel %s in %s: it was written for %s (key %s), not "
                    "for this key; compiling instead (delete the entry, or re-export the folder)",
                    path.name, _kernel_name(pyfunc), directory, payload[1].get("kernel", "another kernel"),
                    stored_key)
        return None
    return payload


def store(pyfunc, parts: KeyParts, payload: bytes, metadata: dict | None = None,
          directory: Path | None = None) -> None:
    """Writes an entry (object + JSON metadata) atomically (temporary file +
    rename), into the cache or into ``directory`` (an export)."""
    exporting = directory is not None
    if not exporting:
        if not enabled():
            return
        directory = cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        meta = json.dumps({**(metadata or {}), "compiler": compiler_fingerprint(), "key": parts.key(),
                           "kernel": f"{_kernel_name(pyfunc)} ({parts.variant or 'kernel'})"}).encode()
        body = len(meta).to_bytes(8, "little") + meta + payload
        blob = _MAGIC + hashlib.sha256(body).hexdigest().encode() + b"\n" + body
        _atomic_write(entry_path(parts, directory), blob)
        record = json.dumps(parts.__dict__).encode()
        _atomic_write(directory / f"{_identity(pyfunc, parts)}.last.json", record)
    except OSError as e:  # a read-only or full disk must not break launches
        if exporting:
            raise
        log.warning("cannot write the compile cache in %s: %s", directory, e)


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _verified_payload(blob: bytes) -> tuple[bytes, dict] | None:
    if not blob.startswith(_MAGIC):
        return None
    rest = blob[len(_MAGIC):]
    digest, sep, body = rest.partition(b"\n")
    if not sep or hashlib.sha256(body).hexdigest().encode() != digest or len(body) < 8:
        return None
    size = int.from_bytes(body[:8], "little")
    try:
        metadata = json.loads(body[8:8 + size])
    except ValueError:
        return None
    if not isinstance(metadata, dict):
        return None
    return body[8 + size:], metadata


def _miss_reason(directory: Path, pyfunc, parts: KeyParts) -> str:
    try:
        last = json.loads((directory / f"{_identity(pyfunc, parts)}.last.json").read_text())
    except (OSError, ValueError):
        return "first compile"
    for field, what in (("target", "the CPU changed"), ("source", "source changed"),
                        ("functions", "a device function changed"), ("options", "options changed")):
        if last.get(field) != getattr(parts, field):
            return what
    return "entry missing from the cache"


def get_cpu_kernel_cache_key(*, cpu_compiler_flags: str | None = None) -> str:
    """A name for this machine's CPU kernel cache (Warp's
    ``wp.get_cpu_kernel_cache_key``): adjit's version, the OS, the machine
    architecture and a hash of what every cache entry's key holds for the
    target (the entry format and the CPU as the runtime identifies it:
    vendor, model and instruction-set features). Entries in folders of equal
    keys are interchangeable; do not parse it. adjit always compiles for the
    host CPU, so ``cpu_compiler_flags`` may be None or ``"-march=native"``
    (the same target); another value (``""``, Warp's generic target) is a
    ValueError. Compiles nothing."""
    if cpu_compiler_flags is not None:
        if not isinstance(cpu_compiler_flags, str):
            raise TypeError(f"get_cpu_kernel_cache_key: cpu_compiler_flags must be a str or None, got "
                            f"{cpu_compiler_flags!r}")
        if cpu_compiler_flags.split() != ["-march=native"]:
            raise ValueError(f"get_cpu_kernel_cache_key: adjit compiles kernels for this machine's CPU only "
                             f"(as '-march=native'); cpu_compiler_flags={cpu_compiler_flags!r} names another "
                             "target, which adjit has no compiler for")
    import platform
    from importlib import metadata
    try:
        version = metadata.version("adjit")
    except metadata.PackageNotFoundError:
        version = "unknown"
    target = hashlib.sha256(f"format={CACHE_FORMAT}:{target_id()}".encode()).hexdigest()[:8]
    return f"{version}-{platform.system()}-{platform.machine()}-{target}"


def clear_lto_cache() -> None:
    """Clears the cache of link-time-optimized device code (Warp's, for the
    MathDx CUDA libraries): adjit has none (CPU kernels are whole LLVM
    modules), so this does nothing; the kernel cache is untouched."""
