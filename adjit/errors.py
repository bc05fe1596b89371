"""adjit's exception hierarchy.

Every error about a user's kernel names the kernel's file and line and shows
the offending source line, so it can be acted on without reading IR.
"""
from __future__ import annotations


class AdjitError(Exception):
    """Base class of every error adjit raises."""


class KernelError(AdjitError):
    """An error in a kernel or device function's source.

    Attributes: ``filename``, ``lineno``, ``col`` (1-based line, 0-based
    column), ``source_line`` and ``reason`` (the message without location).
    """

    def __init__(self, reason: str, filename: str | None = None, lineno: int | None = None,
                 col: int | None = None, source_line: str | None = None,
                 function: str | None = None):
        self.reason = reason
        self.filename = filename
        self.lineno = lineno
        self.col = col
        self.source_line = source_line
        self.function = function
        super().__init__(self._format())

    def _format(self) -> str:
        where = ""
        if self.filename is not None:
            where = f"{self.filename}:{self.lineno}: "
        text = f"{where}{self.reason}"
        if self.function:
            text += f"\n  in {self.function}"
        if self.source_line is not None:
            # The line keeps its indentation, so the caret goes at the column itself.
            text += f"\n    {self.source_line.rstrip()}"
            if self.col is not None:
                text += "\n    " + " " * max(self.col, 0) + "^"
        return text


class KernelSyntaxError(KernelError):
    """A Python construct that the kernel language does not support."""


class KernelNameError(KernelError):
    """A name used in a kernel that is not defined there."""


class KernelTypeError(KernelError, TypeError):
    """Operands or arguments of the wrong type in a kernel (a TypeError too,
    as Warp's WarpCodegenTypeError is)."""


#: Warp's names for its code generator's errors: adjit's located kernel
#: errors are instances of them, so ``except wp.WarpCodegenError`` in Warp
#: code catches adjit's (an unknown name or attribute is a
#: WarpCodegenAttributeError, as Warp reports an unknown ``wp.<name>``).
WarpCodegenError = KernelError
WarpCodegenTypeError = KernelTypeError
WarpCodegenAttributeError = KernelNameError


class WarpCodegenValueError(KernelError, ValueError):
    """Warp's name; adjit reports bad values in kernels as KernelTypeError."""


class KernelValueError(KernelTypeError, WarpCodegenValueError):
    """A compile-time value out of its domain in a kernel (a slice bound that
    is not a constant, a zero step): a KernelTypeError, as adjit reports bad
    values in kernels, and the WarpCodegenValueError Warp raises for it."""


class WarpCodegenKeyError(KernelError, KeyError):
    """Warp's name; adjit reports unknown names as KernelNameError."""


class WarpCodegenIndexError(KernelError, IndexError):
    """Warp's name; adjit reports bad constant indices as KernelTypeError."""


class LaunchError(AdjitError):
    """A launch whose arguments do not match the kernel's signature.

    When the error is about a kernel's parameters, ``filename``, ``lineno``
    and ``source_line`` point at the kernel's signature.
    """

    def __init__(self, reason: str, filename: str | None = None, lineno: int | None = None,
                 source_line: str | None = None):
        self.reason = reason
        self.filename = filename
        self.lineno = lineno
        self.source_line = source_line
        text = reason if filename is None else f"{filename}:{lineno}: {reason}"
        if source_line is not None:
            text += f"\n    {source_line.rstrip()}"
        super().__init__(text)


class CompileError(AdjitError):
    """A compile stage failed on IR that passed the frontend's checks (a bug in adjit)."""


class DeviceHeapError(AdjitError, MemoryError):
    """A GPU thread found no device heap left for the checkpoints of a
    runtime loop's adjoint (they live in the thread's frame when they fit,
    else on the device heap: ``adjit.config.cuda_heap_bytes``). The thread
    stopped; the launch's results are incomplete."""

    def __init__(self, kernel: str, filename: str, lineno: int, thread: tuple, asked: int, heap: int):
        self.kernel, self.filename, self.lineno = kernel, filename, lineno
        self.thread, self.asked, self.heap = thread, asked, heap
        super().__init__(
            f"{filename}:{lineno}: kernel '{kernel}', thread {thread}: no device heap left for the "
            f"checkpoints of a runtime loop ({asked} bytes asked for; the heap has {heap} bytes in all, "
            f"shared by the threads running at once). Set adjit.config.cuda_heap_bytes higher before the "
            f"device's first such kernel is loaded, or launch fewer threads at a time.")


class GradientError(AdjitError):
    """A kernel or a recorded launch whose gradient adjit cannot compute exactly.

    adjit raises this instead of returning a gradient that might be wrong.
    """


def _keep_access_fields(error, kernel, filename, lineno, array, access, index, shape, thread,
                        source_line):
    """Store an array-access failure's attributes on ``error``; return its
    message's "file:line: " prefix and the index and thread as shown."""
    error.kernel, error.filename, error.lineno = kernel, filename, lineno
    error.array, error.access, error.index, error.shape = array, access, index, shape
    error.thread, error.source_line = thread, source_line
    where = f"{filename}:{lineno}: " if filename else ""
    shown = index[0] if len(index) == 1 else index
    who = thread[0] if len(thread) == 1 else thread
    return where, shown, who


class OutOfBoundsError(AdjitError, IndexError):
    """A kernel accessed an array element outside the array (checked accesses,
    ``adjit.config.bounds_check``). The access was skipped (a read gave zero)
    and the launch finished; this reports its first failure.

    Attributes: ``kernel``, ``filename``, ``lineno``, ``array`` (the
    parameter's name), ``access`` ("read", "write", "atomic_add", ...),
    ``index`` and ``shape`` (tuples), ``thread`` (the thread's ``tid()``
    coordinates) and ``source_line``.
    """

    def __init__(self, kernel: str, filename: str, lineno: int, array: str, access: str,
                 index: tuple, shape: tuple, thread: tuple, source_line: str | None = None):
        where, shown, who = _keep_access_fields(self, kernel, filename, lineno, array, access,
                                                index, shape, thread, source_line)
        if access == "component index":  # a runtime index into a vector or matrix value
            text = (f"{where}kernel '{kernel}': component index {shown} is out of range for {array} "
                    f"(0 to {shape[0] - 1}; thread {who}); the kernel went on (a read there gives a vector's "
                    "component 0, and 0 from a local array or a tile; a write there is dropped)")
        else:
            text = (f"{where}kernel '{kernel}': index {shown} is out of range for array {array} of shape "
                    f"{shape} ({access} in thread {who}); the access was skipped")
        if any(i < 0 for i in index):
            text += " (adjit arrays have no negative indices: -1 does not wrap to the last element)"
        if source_line:
            text += f"\n    {source_line.strip()}"
        super().__init__(text)


class NonFiniteError(AdjitError, FloatingPointError):
    """A kernel stored NaN or an infinity into an array while
    ``adjit.config.verify_fp`` (or ``mode = "debug"``) was on. The launch
    finished (the value was stored); this reports its first such store.

    Attributes as ``OutOfBoundsError``'s (``index`` is where the value went).
    """

    def __init__(self, kernel: str, filename: str, lineno: int, array: str, access: str,
                 index: tuple, shape: tuple, thread: tuple, source_line: str | None = None):
        where, shown, who = _keep_access_fields(self, kernel, filename, lineno, array, access,
                                                index, shape, thread, source_line)
        text = f"{where}kernel '{kernel}': {access} in array {array} at index {shown} (thread {who})"
        if source_line:
            text += f"\n    {source_line.strip()}"
        super().__init__(text)


class KernelAssertionError(AdjitError, AssertionError):
    """An ``assert`` in a kernel did not hold (asserts are checked in debug
    mode, ``adjit.config.mode = "debug"``, or with ``verify_fp``, and with
    bounds checks on). The thread went on; this reports the first failure.

    Attributes: ``kernel``, ``filename``, ``lineno``, ``assertion`` (the
    statement, with its message), ``thread`` (the thread's ``tid()``
    coordinates) and ``source_line``.
    """

    def __init__(self, kernel: str, filename: str, lineno: int, assertion: str, thread: tuple,
                 source_line: str | None = None):
        self.kernel = kernel
        self.filename = filename
        self.lineno = lineno
        self.assertion = assertion
        self.thread = thread
        self.source_line = source_line
        where = f"{filename}:{lineno}: " if filename else ""
        who = thread[0] if len(thread) == 1 else thread
        text = f"{where}kernel '{kernel}': {assertion} failed (thread {who})"
        if source_line:
            text += f"\n    {source_line.strip()}"
        super().__init__(text)


class NotInAdjitError(AdjitError, AttributeError):
    """A name asked of adjit (or of ``warp``, when adjit stands in for it:
    ``adjit.alias_warp``) that adjit does not have yet. An AttributeError, so
    ``hasattr`` and ``getattr(wp, name, default)`` behave as usual."""


class NotInAdjitImportError(AdjitError, ModuleNotFoundError):
    """An import of something adjit does not have yet, with adjit standing
    in for warp: a ``warp.<submodule>`` (``warp.fem``, ``warp.sim``, ...) or
    ``from warp import <name>``. A ModuleNotFoundError (an ImportError), as
    Python raises for a missing module."""


def _where(module: str) -> str:
    """``module`` as the program spells it: ``warp...`` where adjit stands in for warp."""
    import sys
    if sys.modules.get("warp") is not None and sys.modules.get("warp") is sys.modules.get("adjit"):
        return "warp" + module[len("adjit"):] if module.startswith("adjit") else module
    return module


def _is_import_from(frame) -> bool:
    """Whether ``frame`` is running ``from m import name`` (whose AttributeError
    Python would turn into a bare "cannot import name")."""
    if frame is None:
        return False
    import dis
    code = frame.f_code.co_code
    return 0 <= frame.f_lasti < len(code) and dis.opname[code[frame.f_lasti]] == "IMPORT_FROM"


def missing_name(module: str, name: str, frame=None) -> AdjitError:
    """The error for ``<module>.<name>`` missing (``module`` is adjit's name
    of the module; ``frame``, the caller of the module's ``__getattr__``).
    Says ``warp.`` where adjit stands in for warp. A NotInAdjitError (an
    AttributeError) for attribute access, a NotInAdjitImportError for
    ``from <module> import <name>``."""
    where = _where(module)
    if where.startswith("warp"):
        text = (f"{where}.{name} is not in adjit yet: adjit, standing in for warp (adjit.alias_warp), has no "
                f"{module}.{name} (docs/warp_alias.md says what it covers)")
    else:
        text = (f"module {module!r} has no attribute {name!r}: if {name!r} is Warp's, it is not in adjit yet "
                "(docs/compatibility.md lists Warp's names and adjit's status)")
    if _is_import_from(frame):
        return NotInAdjitImportError(text, name=f"{module}.{name}")
    return NotInAdjitError(text, name=name)
