"""The CUDA backend: which variant of a kernel a launch runs on a CUDA
device, how its parameters are laid out, and how a failed check is found.

``prepare`` chooses the variant (``VariantSpec`` with target "cuda": arrays
that overlap or not) and loads its PTX for the device's architecture
(``loader.load_cuda_variant``: from the disk cache, else compiled). ``run``
packs the parameters as the GPU lowering expects them (each array as MLIR's
memref descriptor expanded: allocated and aligned pointers, offset, sizes
and strides in elements; each value at its PTX parameter's size and
alignment; then the thread count, the three inner extents and the error
record) and queues the launch on the device's current stream (or the
launch's ``stream=``). Launches are asynchronous: a failed check is read
from the launch's error record at the next synchronize or copy to the host
(``runtime.cuda.check_pending_failures``), at once in debug mode.

The (min, max) of the index arrays whose gathers a kernel proves once per
launch are reduced on the device into the launch's record, before it
(``cuda_helpers.index_range``). Views with strides (slices with a step,
transposes) run the kernel's strided variant, which reads each array's
strides from its descriptor. Not yet here (docs/gpu.md): deterministic float
atomics (the GPU's atomics are native).
"""
from __future__ import annotations

import math
import struct
import warnings

import numpy as np

from .. import config, loader
from .. import types as T
from ..errors import DeviceHeapError, LaunchError
from ..runtime import cuda, cuda_helpers
from ..runtime.array import Array
from ..runtime.cuda_memory import CudaMemory
from ..variant import VariantSpec
from .base import Backend, PackedLaunch, check_failed, thread_coords

#: Variants whose non-deterministic float atomics were warned about.
_warned: set = set()

#: Threads per block of a launch that does not say (``block_dim=``).
DEFAULT_BLOCK_DIM = 256


class CudaBackend(Backend):
    """Runs launches on a CUDA device (``adjit._runtime.cuda``)."""

    target = "cuda"

    def prepare(self, launch: PackedLaunch) -> None:
        k, device, adjoint, tangent = launch.kernel, launch.device, launch.adjoint, launch.tangent
        buffers = [a for a in launch.args if a.__class__ is CudaMemory]
        strided = not all(a.is_c_contiguous for a in buffers)
        noalias = not _overlap(buffers) if (adjoint or tangent or k.array_args > 1) else True
        loader.prepared_variant(launch, (adjoint, tangent, noalias, strided, device.alias), self._choose)

    @staticmethod
    def _choose(launch: PackedLaunch, key: tuple) -> tuple:
        k, device = launch.kernel, launch.device
        adjoint, tangent, noalias, strided, _ = key
        spec = VariantSpec.of(k, adjoint, tangent, noalias, strided, target="cuda")
        variant = loader.load_cuda_variant(k, spec, device)
        if variant.float_atomics and config.deterministic and variant.name not in _warned:
            _warned.add(variant.name)
            warnings.warn(f"kernel '{k.__name__}' ({k.source.filename}:{k.source.first_line}) adds floats atomically"
                          f"{' in its adjoint' if adjoint else ''}: on a GPU these adds land in the "
                          "hardware's order, not yet in thread order as on the CPU, so the last bits of the sums "
                          "may differ between runs (set adjit.config.deterministic = False to silence this)",
                          RuntimeWarning, stacklevel=6)
        return spec, variant

    def run(self, launch: PackedLaunch) -> None:
        variant, device = launch.variant, launch.device
        plan = variant.plan
        if plan is None:
            plan = variant.plan = _Plan(launch, variant.layout)
        stream = launch.stream if launch.stream is not None else device.stream.cuda_stream
        args = launch.args
        if variant.ranged:
            ranged = [args[p] for p in variant.ranged]
            ranges = _unreduced_ranges(ranged, launch.spec.noalias)
        else:
            ranged = ranges = ()
        block = launch.block_dim or DEFAULT_BLOCK_DIM
        grid = -(-launch.total // block) or 1
        if grid > 0x7FFFFFFF:
            raise LaunchError(f"kernel '{launch.kernel.__name__}': {launch.total} threads in blocks of {block} "
                              "are more blocks than a CUDA launch can have")
        pool = cuda.record_pool(device.ordinal)
        with pool.lock:
            record = pool.take(ranges, lambda failure: _failure_error(launch, variant, failure), stream)
            for slot, (memory, words) in enumerate(zip(ranged, ranges)):
                if words == _REDUCE:  # (min, max) reduced on the device into the record
                    cuda_helpers.index_range(memory, record + 8 * (_RANGES_WORD + 2 * slot), stream)
            data = plan.pack(args, launch.total, launch.shape, record)
            variant.function.launch((grid, 1, 1), (block, 1, 1), data, plan.offsets, stream, 0, plan.label)
        if config.mode == "debug":
            cuda.check_pending_failures(device.ordinal)


def _failure_error(launch: PackedLaunch, variant, failure) -> Exception:
    """The error for a launch's first failure: a failed check, or a thread
    that found no device heap for a runtime loop's checkpoints."""
    if failure[0] != cuda.HEAP_EXHAUSTED:
        return check_failed(launch, variant, failure)
    k, thread, asked = launch.kernel, failure[1], failure[2][0]
    return DeviceHeapError(k.__name__, k.source.filename, k.source.first_line, thread_coords(launch, thread),
                           asked, cuda.heap_bytes(launch.device))


class _Plan:
    """Where each parameter of a variant's launches goes, worked out once
    (``pack_parameters``, on its first launch) into one ``struct.Struct``:
    packing a launch is then one ``pack`` call of the arrays' words, the
    values' bytes and the five trailing words."""

    def __init__(self, launch: PackedLaunch, layout: list[tuple[int, int]]):
        data, offsets = pack_parameters(launch, layout)
        _end(data, offsets, layout, 0, (1, 1, 1), 0)
        self.size, self.offsets = len(data), offsets
        #: Per argument: (position, None) for an array, else (position, the
        #: size and matrix types of a value whose rows need padding, or None).
        self.arguments = []
        fields, at, slot = ["<"], 0, 0

        def field(code: str, size: int) -> None:
            nonlocal at, slot
            fields.append(f"{offsets[slot] - at}x{code}")
            at, slot = offsets[slot] + size, slot + 1

        matrices = [t for t in launch.kernel.arg_types if isinstance(t, T.MatrixType)]
        for position, a in enumerate(launch.args):
            if isinstance(a, CudaMemory):
                for _ in range(3 + 2 * a.ndim):
                    field("q", 8)
                self.arguments.append((position, None))
            else:
                size, value = layout[slot][0], bytes(a)
                # (row padding needs _padded per launch; anything else fits the zeroed slot as it is)
                by_rows = _padded(value, size, matrices) != value.ljust(size, b"\0")
                self.arguments.append((position, (size, matrices) if by_rows else False))
                field(f"{size}s", size)
        for _ in range(5):
            field("Q", 8)
        self.struct = struct.Struct("".join(fields))
        if self.struct.size != self.size:
            raise LaunchError("the PTX parameters' packing does not add up (a bug in adjit)")
        k = launch.kernel
        self.label = f"{k.__name__} ({k.source.filename}:{k.source.first_line})"

    def pack(self, args: list, total: int, shape: tuple, record: int) -> bytes:
        fields = []
        for position, padding in self.arguments:
            a = args[position]
            if padding is None:  # an array: its memref descriptor's words
                ptr, itemsize = a.allocation.ptr + a.offset, a.dtype.itemsize
                fields += (ptr, ptr, 0, *a.shape, *[s // itemsize for s in a.strides])
            else:
                fields.append(_padded(a, *padding) if padding else a)
        return self.struct.pack(*fields, total, shape[1], shape[2], shape[3], record)


#: The backend of CUDA launches.
BACKEND = CudaBackend()

#: struct formats and Python types of the value parameters a launch plan packs.
_PLAN_VALUES = {"float32": (struct.Struct("<f"), float), "float64": (struct.Struct("<d"), float),
                "int32": (struct.Struct("<i"), int), "int64": (struct.Struct("<q"), int),
                "bool": (struct.Struct("<?"), bool)}


class LaunchPlan:
    """The fast path of a kernel's forward launches on one CUDA device
    (``adjit.launch``): a launch like the one it was made from (the same
    variant; C-contiguous arrays of the same dtypes and ranks on that
    device, not overlapping; float, int and bool values given as Python
    numbers of those types) is checked, packed and queued in one pass.
    ``run`` returns False, having done nothing, for a launch that does not
    fit: the general path takes it."""

    __slots__ = ("kernel", "device", "spec", "variant", "kinds", "written", "arrays")

    def __init__(self, launch: PackedLaunch, kinds: list, written: list):
        self.kernel, self.device, self.spec, self.variant = launch.kernel, launch.device, launch.spec, launch.variant
        #: Per argument: (True, dtype, ndim) for an array, (False, struct, Python type) for a value.
        self.kinds = kinds
        #: The positions of the arrays the kernel writes (their versions move at each launch).
        self.written = written
        self.arrays = sum(1 for kind in kinds if kind[0])

    def run(self, dim: int, args: list, block_dim: int) -> bool:
        """Queues the launch of ``dim`` threads (an int) on ``args``."""
        kinds = self.kinds
        if len(args) != len(kinds):
            return False
        ordinal = self.device.ordinal
        packed = []
        for a, (is_array, x, y) in zip(args, kinds):
            if is_array:
                if a.__class__ is not Array:
                    return False
                b = a._buffer
                if b.__class__ is not CudaMemory or (a.dtype is not x and a.dtype != x) or len(b.shape) != y \
                        or b.allocation.ordinal != ordinal or not b.is_c_contiguous:
                    return False
                packed.append(b)
            else:
                if a.__class__ is not y:
                    return False
                try:
                    packed.append(x.pack(a))
                except (struct.error, OverflowError):
                    return False  # out of the parameter's range: the general path reports it
        if self.arrays > 1 and _contiguous_overlap(packed):
            return False
        grid = -(-dim // block_dim) or 1
        if grid > 0x7FFFFFFF:
            return False
        for position in self.written:
            args[position]._version += 1
        variant, device = self.variant, self.device
        packing = variant.plan
        stream = device.stream.cuda_stream
        shape = (dim, 1, 1, 1)
        pool = cuda.record_pool(ordinal)
        with pool.lock:
            record = pool.take((), lambda failure: self._failure(dim, packed, args, failure), stream)
            data = packing.pack(packed, dim, shape, record)
            variant.function.launch((grid, 1, 1), (block_dim, 1, 1), data, packing.offsets, stream, 0,
                                    packing.label)
        if config.mode == "debug":
            cuda.check_pending_failures(ordinal)
        return True

    def _failure(self, dim: int, packed: list, args: list, failure) -> Exception:
        launch = PackedLaunch(self.kernel, dim, dim, (dim, 1, 1, 1), packed, args, device=self.device)
        launch.spec, launch.variant = self.spec, self.variant
        return _failure_error(launch, self.variant, failure)


def launch_plan(launch: PackedLaunch) -> LaunchPlan | None:
    """A ``LaunchPlan`` for later launches like ``launch`` (a forward launch
    that just ran here), or None where it would not be the general path's
    choice: adjoint and tangent launches, overlapping or strided arrays, a
    variant with index ranges to measure, other argument types."""
    k, spec, variant = launch.kernel, launch.spec, launch.variant
    if launch.adjoint or launch.tangent or not spec.noalias or spec.strided or spec.all_checked \
            or variant.ranged or variant.plan is None or len(k.arg_types) != len(launch.primal):
        return None
    kinds = []
    for t, value, packed in zip(k.arg_types, launch.primal, launch.args):
        if type(t) is T.ArrayType:
            if type(value) is not Array or packed is not value._buffer or packed.dtype.kind == "V":
                return None
            kinds.append((True, value.dtype, t.ndim))
        elif type(t) is T.ScalarType and t.name in _PLAN_VALUES:
            kinds.append((False, *_PLAN_VALUES[t.name]))
        else:
            return None
    if not any(kind[0] for kind in kinds):
        return None  # (the launch's device= chose the device, not its arrays)
    return LaunchPlan(launch, kinds, list(loader.written_arguments(k)))


def _contiguous_overlap(packed: list) -> bool:
    """Whether two of the C-contiguous device arrays among ``packed`` overlap."""
    spans = []
    for b in packed:
        if b.__class__ is CudaMemory:
            start = b.allocation.ptr + b.offset
            end = start + math.prod(b.shape) * b.dtype.itemsize
            if end > start:
                spans.append((start, end))
    return _spans_overlap(spans)


def _spans_overlap(spans: list) -> bool:
    """Whether two of the (start, end) byte ranges overlap."""
    spans.sort()
    return any(spans[i + 1][0] < spans[i][1] for i in range(len(spans) - 1))

#: A range slot's words before ``cuda_helpers.index_range`` reduces into it.
_REDUCE = (2**63 - 1, -2**63)
_RANGES_WORD = cuda._RECORD["ranges"]


def _unreduced_ranges(ranged: list, noalias: bool) -> list:
    """The initial words of the launch's index range slots: ready for the
    device's reduction for int32 index arrays; (-1, -1) (the launch
    condition fails, every check runs) where arrays overlap (a write could
    change an index during the launch) or for other index arrays; (0, -1)
    for an empty one, as the CPU measures it."""
    out = []
    for memory in ranged:
        if not noalias or memory.dtype != np.int32 or not memory.is_c_contiguous:
            out.append((-1, -1))
        elif not memory.size:
            out.append((0, -1))
        else:
            out.append(_REDUCE)
    return out


def _overlap(buffers: list) -> bool:
    """Whether two of the arrays' device memory ranges overlap."""
    return _spans_overlap([(b.ptr + b.span()[0] - b.offset, b.ptr + b.span()[1] - b.offset)
                           for b in buffers if b.size])


def pack_parameters(launch: PackedLaunch, layout: list[tuple[int, int]]) -> tuple[bytearray, list[int]]:
    """The kernel's own parameters (``launch.args``), laid out by ``layout``
    (``runtime.cuda.ptx_parameters``): the buffer and each parameter's offset. The
    launch's five trailing parameters are added by ``_end``."""
    data, offsets = bytearray(), []
    expected = sum(3 + 2 * a.ndim if isinstance(a, CudaMemory) else 1 for a in launch.args) + 5
    if expected != len(layout):
        raise LaunchError(f"kernel '{launch.kernel.__name__}': its PTX entry takes {len(layout)} parameters, the "
                          f"launch packs {expected} (a bug in adjit)")
    matrices = [t for t in launch.kernel.arg_types if isinstance(t, T.MatrixType)]
    for a in launch.args:
        if isinstance(a, CudaMemory):
            itemsize = a.itemsize
            words = (a.ptr, a.ptr, 0, *a.shape, *(s // itemsize for s in a.strides))
            for word in words:
                _put(data, offsets, layout, struct.pack("<q", word))
        else:
            size = layout[len(offsets)][0]
            _put(data, offsets, layout, _padded(bytes(a), size, matrices))
    return data, offsets


def _end(data: bytearray, offsets: list, layout, total: int, extents, record: int) -> None:
    for word in (total, *extents, record):
        _put(data, offsets, layout, struct.pack("<Q", word))


def _put(data: bytearray, offsets: list, layout, value: bytes) -> None:
    size, align = layout[len(offsets)]
    if len(value) > size:
        raise LaunchError(f"parameter {len(offsets)}: {len(value)} bytes for a {size}-byte PTX parameter "
                          "(a bug in adjit)")
    offset = -len(data) % align + len(data)
    data.extend(b"\0" * (offset - len(data)))
    offsets.append(offset)
    data.extend(value.ljust(size, b"\0"))


def _padded(value: bytes, size: int, matrices: list) -> bytes:
    """A vector or matrix value as its PTX parameter holds it: LLVM pads a
    vector to a power of two of bytes (a vec3 of float32: 16) and a matrix
    row by row (an array of row vectors)."""
    if len(value) >= size:
        return value
    for t in matrices:
        rows = t.rows
        row = len(value) // rows if len(value) % rows == 0 else 0
        scalar = T.scalar_of(t).np_dtype.itemsize
        if row and t.rows * t.cols * scalar == len(value) and size == rows * _vector_bytes(row):
            return b"".join(value[r * row:(r + 1) * row].ljust(size // rows, b"\0") for r in range(rows))
    return value


def _vector_bytes(nbytes: int) -> int:
    """The bytes LLVM allocates for a vector value of ``nbytes``: the next power of two."""
    return 1 << max(0, math.ceil(math.log2(nbytes)))
