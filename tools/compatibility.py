"""Writes docs/compatibility.md: Warp's public kernel builtins and host names,
each with adjit's status.

    python tools/compatibility.py     (needs warp-lang importable)

A kernel builtin counts as public when Warp registers it and exports it as
``warp.<name>``; the groups Warp's issue leaves out of scope (tiles,
volumes, textures) are listed apart; the geometry group, which Warp's kernels
call but its module does not export, is counted. adjit supports a builtin when
``adjit.<name>`` is callable inside kernels: a registry builtin (its
``differentiable`` flag is reported), a type constructor, or a language
function (``tid``). Host names are Warp's other public module attributes.
"""
from __future__ import annotations

import inspect
import sys
import types
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "compatibility.md"
OUT_OF_SCOPE = ("Tile Primitives", "Volumes", "Textures")
#: Groups whose builtins kernels call as ``warp.<name>`` although Warp does
#: not export them as module attributes (its code generator resolves them).
KERNEL_ONLY_GROUPS = ("Geometry",)


#: Why the in-scope builtins adjit leaves out are left out (the table's
#: last column; a name missing here is simply not done yet).
_INTERNAL = ("Warp's code generator's own undocumented builtin (what an index, element write, component "
             "reference or assignment compiles to); adjit's kernel language has the operators themselves")
LEFT_OUT = {
    **dict.fromkeys(("address", "view", "load", "store", "array_store", "index", "indexref", "copy"), _INTERNAL),
    "array": "builds an array from a raw pointer inside a kernel: unchecked memory, which adjit's bounds "
             "guarantee excludes",
    "mesh_get": "returns Warp's Mesh struct, whose fields are arrays (points, indices, velocities); a struct "
                "made in an adjit kernel cannot hold arrays. mesh_get_point, mesh_get_index and "
                "mesh_get_velocity read the same memory",
    **dict.fromkeys(("dense_gemm", "dense_gemm_batched", "dense_chol", "dense_chol_batched", "dense_solve",
                     "dense_solve_batched", "dense_subs"),
                    "undocumented or marked \"WIP\" in Warp 1.19; Warp's tile primitives (out of scope) do this work"),
}


#: Warp host names adjit does not provide, by reason (the host table's last
#: column); a name missing here is simply not done yet.
_CUDA = "CUDA-only runtime machinery (streams, events, graphs, memory pools, peer access); adjit runs on the CPU until the GPU runtime lands (issue 10)"
_GEOMETRY = "volumes and textures are not in adjit yet (issue 28)"
HOST_LEFT_OUT = {
    **dict.fromkeys((
        "Stream", "ScopedStream", "get_stream", "set_stream", "synchronize_stream", "wait_stream", "Event",
        "record_event", "wait_event", "synchronize_event", "get_event_elapsed_time", "event_from_ipc_handle",
        "from_ipc_handle", "Graph", "CaptureMode", "ScopedCapture", "capture_begin", "capture_end", "capture_launch",
        "capture_if", "capture_while", "capture_debug_dot_print", "capture_save", "capture_load",
        "capture_load_from_bytes", "is_conditional_graph_supported", "ScopedMempool", "ScopedMempoolAccess",
        "is_mempool_supported", "is_mempool_enabled", "set_mempool_enabled", "get_mempool_release_threshold",
        "set_mempool_release_threshold", "get_mempool_used_mem_current", "get_mempool_used_mem_high",
        "is_mempool_access_supported", "is_mempool_access_enabled", "set_mempool_access_enabled",
        "ScopedPeerAccess", "is_peer_access_supported", "is_peer_access_enabled", "set_peer_access_enabled",
        "get_cuda_device", "get_cuda_driver_version", "get_cuda_toolkit_version", "get_cuda_supported_archs",
        "get_cuda_kernel_properties", "get_cuda_max_cluster_dim", "map_cuda_device", "unmap_cuda_device",
        "set_cuda_allocator", "CudaManagedAllocator", "ScopedCudaProfiler", "cuda_profiler_start",
        "cuda_profiler_stop", "get_suggested_block_size", "stream_from_torch", "stream_to_torch",
        "stream_from_paddle", "launch_tiled", "BvhQueryTiled", "MeshQueryAABBTiled"), _CUDA),
    **dict.fromkeys((
        "Volume", "Texture", "Texture1D", "Texture2D", "Texture3D", "TextureAddressMode",
        "TextureFilterMode", "TextureResourceFlags", "GLTextureResource", "RegisteredGLBuffer"), _GEOMETRY),
    **dict.fromkeys(("fabricarray", "fabricarrayarray", "indexedfabricarray", "indexedfabricarrayarray"),
                    "Omniverse Fabric arrays: they need the Fabric runtime (USD), not a dependency of adjit"),
    **dict.fromkeys(("from_paddle", "to_paddle", "device_from_paddle", "device_to_paddle", "dtype_from_paddle",
                     "dtype_to_paddle"), "PaddlePaddle interop: not a dependency (torch, JAX and DLPack are)"),
    "ModuleBuildOptions": "options of Warp's C++/CUDA code generator (include folders, preambles, compiler "
                          "flags for its generated C++): adjit compiles through MLIR and has no C++ to configure",
    "func_native": "a kernel function written as a C++/CUDA snippet: unchecked native code, which adjit's "
                   "guarantees (bounds, gradients, located errors) cannot cover; declared (its module imports), "
                   "refused where it is called",
    "address_of": "returns a raw uint64 address of a local, array element or field for native snippets to "
                  "dereference: unchecked memory access that adjit's bounds checks and gradients cannot cover "
                  "(func_native is left out too); ref[T] lets a @func write the caller's storage instead",
    "handle": "Warp's name for the uint64 type of geometry handles; adjit's handles (Mesh.id, Bvh.id, "
              "HashGrid.id) are plain uint64, and the alias is not there yet",
}
#: Names adjit defines only to refuse them with a clear error where used (not
#: counted as present): func_native's functions are refused where called; the
#: volume and texture classes are names for annotations only
#: (adjit/warp/placeholders.py), constructing one raises.
HOST_REFUSED = ("func_native", "Texture2D", "Texture3D", "Volume")

#: The geometry queries are kernel-language @funcs (adjit/geometry/): what
#: their results are differentiable with respect to.
GEOMETRY_GRADIENTS = {
    **dict.fromkeys(("mesh_query_point", "mesh_query_point_no_sign", "mesh_query_point_sign_normal",
                     "mesh_query_ray"), "yes (the query point or ray; the mesh is constant)"),
    **dict.fromkeys(("mesh_eval_position", "mesh_eval_velocity"), "yes (the weights; the mesh is constant)"),
    "mesh_query_point_sign_winding_number": "yes (the query point or ray; the mesh is constant)",
    "mesh_query_point_sign_parity": "yes (the query point or ray; the mesh is constant)",
    "mesh_query_furthest_point_no_sign": "constant weights (the furthest point is a corner: distances to it "
                                         "are differentiable in the query point)",
    "closest_point_edge_edge": "yes (the endpoints)",
}


def adjit_status(name: str) -> tuple[str, str]:
    """(status, differentiable) of a Warp builtin in adjit."""
    import adjit
    from adjit import types as T
    registry = adjit.builtin_registry()
    if name in registry:
        entry = registry[name]
        return "supported", "yes" if entry.differentiable else "no (zero or none)"
    value = getattr(adjit, name, None)
    if isinstance(value, (T.ScalarType, T.VectorType, T.MatrixType, T.QuatType)):
        return "supported (type)", "yes" if T.scalar_of(value).is_float else "-"
    if value is not None and name in ("tid", "static", "printf", "expect_eq", "expect_neq", "expect_near"):
        return "supported (language)", "-"
    if name == "zeros":  # a fixed-size local array in kernels (adjit/compiler/local_arrays.py)
        return "supported (language)", "yes (its elements)"
    if isinstance(value, adjit.Function) and value.pyfunc.__module__.startswith("adjit.geometry"):
        return "supported (kernel-language @func)", GEOMETRY_GRADIENTS.get(name, "no (indices, counts, constants)")
    return "not yet", ""


def main() -> None:
    try:
        from warp._src import context
        import warp
    except ImportError as e:
        sys.exit(f"warp is not importable: {e}")
    builtins = {name: f for name, f in context.builtin_functions.items()
                if not name.startswith("_") and (hasattr(warp, name) or f.group in KERNEL_ONLY_GROUPS)}
    by_group: dict[str, list] = defaultdict(list)
    for name, f in sorted(builtins.items()):
        by_group[f.group].append((name, f))

    lines, counted, supported = [], 0, 0
    for group in sorted(by_group, key=lambda g: (g in OUT_OF_SCOPE, g)):
        in_scope = group not in OUT_OF_SCOPE
        lines += ["", f"### {group}" + ("" if in_scope else " (out of scope)"), "",
                  "| builtin | adjit | differentiable in adjit | differentiable in Warp | why left out |",
                  "|---|---|---|---|---|"]
        for name, f in by_group[group]:
            status, diff = adjit_status(name)
            warp_diff = "yes" if f.is_differentiable else "no"
            why = LEFT_OUT.get(name, "") if in_scope and status == "not yet" else ""
            lines.append(f"| `{name}` | {status} | {diff} | {warp_diff} | {why} |")
            if in_scope:
                counted += 1
                supported += status != "not yet"

    import adjit
    host = sorted(n for n, v in vars(warp).items()
                  if not n.startswith("_") and n not in builtins and not isinstance(v, types.ModuleType)
                  and (inspect.isfunction(v) or inspect.isclass(v)))
    host_lines = ["| name | adjit | why left out |", "|---|---|---|"]
    host_supported = 0
    for n in host:
        present = hasattr(adjit, n) and n not in HOST_REFUSED
        host_supported += present
        status = "present" if present else "refused" if n in HOST_REFUSED else "not yet"
        host_lines.append(f"| `{n}` | {status} | {'' if present else HOST_LEFT_OUT.get(n, '')} |")

    text = "\n".join([
        "# Warp compatibility",
        "",
        f"Generated by `python tools/compatibility.py` against Warp {warp.config.version}.",
        "",
        f"**Kernel builtins: adjit supports {supported} of Warp's {counted} public builtins outside the "
        f"{', '.join(OUT_OF_SCOPE[:-1]).lower()} and {OUT_OF_SCOPE[-1].lower()} groups.** "
        "\"Public\": registered by Warp and exported as `warp.<name>`, or in its geometry group (kernels "
        "call those as `warp.<name>`, although the module does not export them). Operators that Warp also exports "
        "as functions (`add`, `bit_and`, ...) work in adjit as operators (`a + b`, `a & b`); the table "
        "counts only the `warp.<name>(...)` call form. Differentiable: the registry's flag (smooth "
        "builtins are in adjit's gradient fuzzer, each against float64 finite differences). The in-scope "
        "builtins not supported are listed with the reason in the last column.",
        "",
        f"**Host names: {host_supported} of Warp's {len(host)} public functions and classes exist in adjit** "
        "(present means the name exists, not that every keyword of Warp's signature does). The names "
        "left out are listed with the reason in the last column; those without one are not done yet.",
        "",
        "## Kernel builtins",
        *lines,
        "",
        "## Host functions and classes",
        "",
        *host_lines,
        "",
    ])
    DOC.write_text(text)
    print(f"wrote {DOC.relative_to(ROOT)}: builtins {supported}/{counted}, host names {host_supported}/{len(host)}")


if __name__ == "__main__":
    main()
