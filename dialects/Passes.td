//===- Passes.td - adjit passes -----------------------------*- tablegen -*-===//

#ifndef ADJIT_PASSES_TD
#define ADJIT_PASSES_TD

include "mlir/Pass/PassBase.td"

def AdjitLowerToStd : Pass<"adjit-lower-to-std", "::mlir::ModuleOp"> {
  let summary = "Lower adjit arrays, components and calls to memref, vector and func";
  let description = [{
    Converts every `!adjit.array<T, N>` to a row-major `memref` of scalars whose
    trailing static dimensions are the element's components
    (`!adjit.array<vector<3xf32>, 1>` becomes `memref<?x3xf32>`), and rewrites
    the array, component and call ops in terms of `memref`, `vector` and
    `func`. `adjit.tid` is left for the launch passes.

    Before:
    ```mlir
    %v = adjit.load %x[%i] : !adjit.array<vector<3xf32>, 1>
    ```
    After:
    ```mlir
    %c0 = memref.load %x[%i, %c0_idx] : memref<?x3xf32>
    ...
    %v = vector.from_elements %c0, %c1, %c2 : vector<3xf32>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::vector::VectorDialect"];
}

def AdjitCpuLaunch : Pass<"adjit-cpu-launch", "::mlir::ModuleOp"> {
  let summary = "Wrap each kernel in a packed CPU entry looping over thread indices";
  let description = [{
    For each kernel `@k` (lowered to memrefs), makes the body a private
    function of its thread coordinates and adds the public entry
    `@k_cpu_entry(%args: !llvm.ptr, %shape: !llvm.ptr, %begin: i64, %end: i64)`.
    `args[i]` points at argument i (a scalar, or a memref descriptor);
    `shape` points at the 4 launch extents. The entry loops over linear
    indices [begin, end) and calls the body, which LLVM inlines so the loop
    can be vectorized. The runtime calls the entry on chunks, one per worker.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect", "::mlir::scf::SCFDialect"];
}

def AdjitGpuLaunch : Pass<"adjit-gpu-launch", "::mlir::ModuleOp"> {
  let summary = "Wrap each kernel in a gpu.module kernel, one GPU thread per index";
  let description = [{
    For each kernel `@k` (lowered to memrefs), moves the body into
    `gpu.module @k_module` and adds `gpu.func @k(args..., %total: i64,
    %s1: i64, %s2: i64, %s3: i64) kernel`, which computes the linear thread
    index from the block and thread ids, returns when it is past `total`, and
    calls the body with the delinearized coordinates.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect"];
}

#endif // ADJIT_PASSES_TD
