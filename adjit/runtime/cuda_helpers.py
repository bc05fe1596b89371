"""Small device kernels the CUDA runtime needs beside the user's: written in
PTX here, so that the runtime-only install (no compiler) has them and no
data moves to the host for them.

- ``index_range``: (min, max) of an int32 index array, reduced on the device
  into a launch's error record (the launch condition of gathers reads it).
- ``add_into``: ``dst += src`` for float32/float64 arrays (the adjoints of
  clone, copy and assign).
- ``fill``: every element of a contiguous array set to one element's bytes.

Each is loaded once per device (``load_module``; the PTX's target is the
device's architecture) and launched on the given stream.
"""
from __future__ import annotations

import struct

import numpy as np

from .. import _runtime

_cuda = _runtime.cuda

#: Threads per block, and most blocks, of a helper launch (grid-stride loops).
_BLOCK = 256
_MAX_BLOCKS = 1024

_PROLOGUE = """
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mul.wide.u32 %rd20, %r1, %r2;
    cvt.u64.u32 %rd21, %r3;
    add.u64 %rd22, %rd20, %rd21;
    mov.u32 %r4, %nctaid.x;
    mul.wide.u32 %rd23, %r4, %r2;
"""

# %r5, %r6 := the min and max of the warp's %r5, %r6 (lane 0 has them)
_WARP_MIN_MAX = "".join(f"""    shfl.sync.down.b32 %r8, %r5, {d}, 31, -1;
    min.s32 %r5, %r5, %r8;
    shfl.sync.down.b32 %r8, %r6, {d}, 31, -1;
    max.s32 %r6, %r6, %r8;
""" for d in (16, 8, 4, 2, 1))

# (min, max) of n int32 values at idx, combined into out[0], out[1] (int64)
# with atomics: each thread reduces its grid-stride share, each warp with
# shuffles, lane 0 adds the warp's to out.
_INDEX_RANGE = """
.visible .entry adjit_index_range_i32(.param .u64 idx, .param .u64 n, .param .u64 out)
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<32>;
    ld.param.u64 %rd1, [idx];
    ld.param.u64 %rd2, [n];
    ld.param.u64 %rd3, [out];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd3, %rd3;
""" + _PROLOGUE + """
    mov.b32 %r5, 2147483647;
    mov.b32 %r6, -2147483648;
RANGE_LOOP:
    setp.ge.u64 %p1, %rd22, %rd2;
    @%p1 bra RANGE_WARP;
    shl.b64 %rd24, %rd22, 2;
    add.u64 %rd25, %rd1, %rd24;
    ld.global.s32 %r7, [%rd25];
    min.s32 %r5, %r5, %r7;
    max.s32 %r6, %r6, %r7;
    add.u64 %rd22, %rd22, %rd23;
    bra RANGE_LOOP;
RANGE_WARP:
""" + _WARP_MIN_MAX + """    and.b32 %r9, %r3, 31;
    setp.ne.u32 %p2, %r9, 0;
    @%p2 bra RANGE_DONE;
    cvt.s64.s32 %rd26, %r5;
    cvt.s64.s32 %rd27, %r6;
    atom.global.min.s64 %rd28, [%rd3], %rd26;
    atom.global.max.s64 %rd29, [%rd3+8], %rd27;
RANGE_DONE:
    ret;
}
"""


def _add(kind: str, size: int) -> str:
    """dst[i] += src[i] for i < n, elements of PTX type ``kind`` (``size`` bytes)."""
    shift = {4: 2, 8: 3}[size]
    return f"""
.visible .entry adjit_add_{kind}(.param .u64 dst, .param .u64 src, .param .u64 n)
{{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .{kind} %v<4>;
    .reg .b64 %rd<32>;
    ld.param.u64 %rd1, [dst];
    ld.param.u64 %rd2, [src];
    ld.param.u64 %rd3, [n];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
""" + _PROLOGUE + f"""
ADD_{kind}_LOOP:
    setp.ge.u64 %p1, %rd22, %rd3;
    @%p1 bra ADD_{kind}_DONE;
    shl.b64 %rd24, %rd22, {shift};
    add.u64 %rd25, %rd1, %rd24;
    add.u64 %rd26, %rd2, %rd24;
    ld.global.{kind} %v1, [%rd25];
    ld.global.{kind} %v2, [%rd26];
    add.{kind} %v3, %v1, %v2;
    st.global.{kind} [%rd25], %v3;
    add.u64 %rd22, %rd22, %rd23;
    bra ADD_{kind}_LOOP;
ADD_{kind}_DONE:
    ret;
}}
"""


# dst[i] = pattern[i % k] for the n bytes at dst (k: an element's bytes, the
# pattern in device memory)
_FILL = """
.visible .entry adjit_fill_pattern(.param .u64 dst, .param .u64 pattern, .param .u64 k, .param .u64 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b16 %h<2>;
    .reg .b64 %rd<32>;
    ld.param.u64 %rd1, [dst];
    ld.param.u64 %rd2, [pattern];
    ld.param.u64 %rd3, [k];
    ld.param.u64 %rd4, [n];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
""" + _PROLOGUE + """
FILL_LOOP:
    setp.ge.u64 %p1, %rd22, %rd4;
    @%p1 bra FILL_DONE;
    rem.u64 %rd24, %rd22, %rd3;
    add.u64 %rd25, %rd2, %rd24;
    ld.global.u8 %h1, [%rd25];
    add.u64 %rd26, %rd1, %rd22;
    st.global.u8 [%rd26], %h1;
    add.u64 %rd22, %rd22, %rd23;
    bra FILL_LOOP;
FILL_DONE:
    ret;
}
"""


def ptx(arch: int) -> str:
    """The helpers' PTX module for ``sm_<arch>``."""
    version = "8.7" if arch >= 120 else "8.6" if arch >= 100 else "7.8" if arch >= 90 else "7.0"
    return (f".version {version}\n.target sm_{arch}\n.address_size 64\n" + _INDEX_RANGE + _add("f32", 4)
            + _add("f64", 8) + _FILL)


def _function(ordinal: int, name: str):
    from . import cuda
    device = cuda.get_device(f"cuda:{ordinal}")
    return cuda.load_module(device, ("adjit-helpers",), ptx(device.arch), "adjit's runtime helpers").function(name)


def _launch(ordinal: int, name: str, words: tuple, count: int, stream: int) -> None:
    grid = max(1, min(_MAX_BLOCKS, -(-count // _BLOCK)))
    data = struct.pack(f"<{len(words)}Q", *words)
    _function(ordinal, name).launch((grid, 1, 1), (_BLOCK, 1, 1), data, [8 * i for i in range(len(words))],
                                    stream, 0, f"adjit's runtime helper '{name}'")


def index_range(memory, out_ptr: int, stream: int) -> bool:
    """Reduces the (min, max) of the int32 index array ``memory`` (device
    memory, contiguous) into the two int64 words at ``out_ptr``, which must
    hold (INT64_MAX, INT64_MIN) before. False (nothing launched) for other
    arrays."""
    if memory.dtype != np.int32 or not memory.is_c_contiguous or not memory.size:
        return False
    _launch(memory.ordinal, "adjit_index_range_i32", (memory.ptr, memory.size, out_ptr), memory.size, stream)
    return True


def add_into(dst, src, stream: int) -> bool:
    """``dst += src`` on the device (contiguous float32/float64 memory of one
    shape on one device); False (nothing launched) for other memory."""
    kind = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}.get(dst.dtype)
    if kind is None or src.dtype != dst.dtype or src.shape != dst.shape or src.ordinal != dst.ordinal \
            or not dst.is_c_contiguous or not src.is_c_contiguous:
        return False
    if dst.size:
        _launch(dst.ordinal, f"adjit_add_{kind}", (dst.ptr, src.ptr, dst.size), dst.size, stream)
    return True


def fill(dst, element: bytes, stream: int) -> bool:
    """Every element of the contiguous device memory ``dst`` set to the bytes
    ``element`` (one element's, of any size up to 256); False for other memory."""
    if not dst.is_c_contiguous or not 0 < len(element) <= 256 or dst.nbytes % len(element):
        return False
    if dst.nbytes:
        from . import capture
        from .cuda import has_memory_pools, stage
        if capture._open and capture.native_capture(dst.ordinal) is not None:
            # (in a CUDA graph capture: staged now, kept by the graph)
            pattern = stage(dst.ordinal, np.frombuffer(element, np.uint8).copy())
        else:
            # (freed in stream order after the fill where the device has
            # pools; else cuMemFree waits for the device)
            pattern = _cuda.DeviceAllocation(dst.ordinal, len(element), stream, has_memory_pools(dst.ordinal))
            pattern.copy_from_host(np.frombuffer(element, np.uint8).copy(), 0, stream, True)
        _launch(dst.ordinal, "adjit_fill_pattern", (dst.ptr, pattern.ptr, len(element), dst.nbytes), dst.nbytes,
                stream)
    return True
