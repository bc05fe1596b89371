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
    `func`. `adjit.tid` is left for the launch passes. Reductions of vectors of
    at most 16 elements (`dot`, `length`) become chains of scalar ops in
    element order: the CPU's loop vectorizer widens scalar ops across thread
    indices, but not `vector.reduce` intrinsics.

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

    With `strided-arrays`, the array dimensions' strides are dynamic
    (`memref<?x3xf32, strided<[?, 1]>>`): the kernel takes views whose
    elements are not contiguous (`a[:, 1]`, a transpose; the launch passes
    each dimension's stride in elements). Without it, the innermost array
    dimension is contiguous (stride 1, or the element's size), which the
    vectorizer relies on; the launch picks the variant.
  }];
  let options = [
    Option<"stridedArrays", "strided-arrays", "bool", /*default=*/"false",
           "Arrays may have any element strides (views)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"];
}

def AdjitCpuLaunch : Pass<"adjit-cpu-launch", "::mlir::ModuleOp"> {
  let summary = "Wrap each kernel in a packed CPU entry looping over thread indices";
  let description = [{
    For each kernel `@k` (lowered to memrefs), makes the body a private
    function of its thread coordinates and adds the public entry
    `@k_cpu_entry(%args: !llvm.ptr, %shape: !llvm.ptr, %begin: i64, %end: i64,
    %record: !llvm.ptr)`. `args[i]` points at argument i (a scalar, or a
    memref descriptor); `shape` points at the 4 launch extents; `record` is
    the launch's error record (see `adjit.access_error`). The entry loops
    over linear indices [begin, end) and calls the body, which LLVM inlines
    so the loop can be vectorized. The runtime calls the entry on chunks,
    one per worker.

    A kernel with an `adjit.launch_condition` (from adjit-access-checks) is
    compiled for the condition true: the entry evaluates it first and, if it
    does not hold, runs no thread and writes -1 (unproven) into the site
    word of the record (cpp/runtime/ErrorRecord.h); the runtime then
    relaunches the variant compiled with `all-checked`, where the condition
    is false (every check kept).
    Rationale: launches that fit their arrays are the rule, so the common
    variant holds one copy of the kernel (compile time), and the other is
    compiled only if a launch needs it.

    With `noalias`, the body's array arguments are promised not to overlap
    (marked for `adjit-apply-noalias` after the LLVM conversion), so LLVM can
    vectorize without runtime overlap checks. Rationale: the runtime checks
    the arrays of each launch and uses the variant without the promise when
    two of them overlap.
  }];
  let options = [
    Option<"noalias", "noalias", "bool", /*default=*/"false",
           "Promise that the kernel's array arguments do not overlap">,
    Option<"allChecked", "all-checked", "bool", /*default=*/"false",
           "Compile for launch conditions that do not hold (every check kept)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect", "::mlir::scf::SCFDialect"];
}

def AdjitVectorizeThreads : Pass<"adjit-vectorize-threads", "::mlir::ModuleOp"> {
  let summary = "Run kernel bodies as SIMD programs over groups of threads";
  let description = [{
    Runs after adjit-cpu-launch{noalias=true}. For each outlined kernel body
    `@k_body`, makes `@k_body_simd`, which runs `width` consecutive threads
    at once: each varying value gets an innermost dimension of `width` lanes
    (f32 -> vector<8xf32>, vector<3xf32> -> vector<3x8xf32>); loops with
    uniform bounds carry widened values; branches on varying conditions run
    both sides under lane masks and select; while loops run while any lane
    runs, under the running lanes' mask; loads and stores become vector
    loads/stores (consecutive, 1-D) or masked gathers/scatters; a failed
    run-time bounds check reports lane by lane, in thread order. The entry
    calls it for whole groups and the scalar body for the rest of a chunk.
    Atomics at elements of the lane's own (indexed like a written array:
    the thread index or its coordinates) become the lanes' read, op and
    write; local arrays (the loop reversal's checkpoints) get a copy per
    lane, the lanes innermost (memref<?xvector<3xf32>> ->
    memref<?xvector<3x8xf32>>), read and written at indices all lanes use.
    Results are bitwise those of the scalar body. Straight-line bodies are
    left to LLVM's loop vectorizer (which widens the thread loop and handles
    strided vec3 accesses better). A body the pass cannot
    vectorize (atomics at elements threads may share, calls, local arrays
    at indices or of sizes that differ between threads, f16/bf16,
    arrays written where threads may share elements, ...) stays scalar.
    Each body records the outcome in `adjit.simd` ("vectorized: ..." or
    "scalar: <reason>").
    Rationale: LLVM's loop vectorizer widens the thread loop only when the
    body is straight-line code; kernels with loops and branches then ran one
    thread at a time.
  }];
  let options = [
    Option<"width", "width", "unsigned", /*default=*/"8",
           "Threads per SIMD group (0 or 1: leave bodies scalar)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def AdjitApproximateMath : Pass<"adjit-approximate-math", "::mlir::ModuleOp"> {
  let summary = "Replace f32 transcendental math by inline polynomial code";
  let description = [{
    Rewrites the listed f32 math ops (scalars and vectors) into arithmetic:
    range reduction and polynomial approximations (MLIR's math
    approximations, with subnormal inputs of log/log2 and subnormal results
    of exp handled by rescaling); sin, cos and tan are adjit's own: a
    reduction by pi/2 and polynomials in f64, rounded once to f32, with
    libm's result for |x| > 2^20 behind a branch; atan, atan2, asin and acos
    too: f64 reductions and a polynomial, rounded once, without a branch.
    By default exp, log, log2, tanh, erf, sin, cos, tan, atan, atan2, asin
    and acos: the ones within a few ulp over the whole f32 domain. Each
    (function, type) is computed in one private function the ops call
    (`@adjit_sin_v8f32`, marked `adjit.simd_body`: not inlined, kept wide),
    so the code is compiled once per module, not at every use. The code vectorizes (SIMD bodies stay SIMD instead of
    calling libm once per lane) and gives the same bits on every machine,
    whatever its libm. The error bounds of each function, measured against
    correctly rounded float64 references, are in docs/simd.md and checked
    by tests/python/builtin_functions/test_fast_math.py. Run before the math-to-LLVM and
    math-to-libm conversions; f16 and bf16 math, already extended to f32,
    is rewritten too. f64 math is left to libm.
  }];
  let options = [
    ListOption<"functions", "functions", "std::string",
               "The math ops to rewrite (mnemonics: sin, cos, exp, ...); "
               "empty: adjit's default set">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def AdjitApplyNoAlias : Pass<"adjit-apply-noalias", "::mlir::ModuleOp"> {
  let summary = "Turn adjit.noalias_args markers into llvm.noalias argument attributes";
  let description = [{
    Runs after the conversion to the LLVM dialect (which expands each memref
    argument into its descriptor fields and drops argument attributes on
    memrefs): every `llvm.func` with `adjit.noalias_args = array<i64: ...>`
    gets `llvm.noalias` on those argument positions (the aligned pointers of
    its array arguments), and loses the marker. A function marked
    `adjit.simd_body` (adjit-vectorize-threads) gets the passthrough
    attributes `noinline` and "adjit-simd" (which the host pipeline's
    scalarizer skips) instead of the marker.
  }];
}

def AdjitAtomicOrder : Pass<"adjit-atomic-order", "::mlir::ModuleOp"> {
  let summary = "Decide how a CPU launch keeps each kernel's atomics deterministic";
  let description = [{
    Float addition is not associative, so float atomic adds that threads
    run in any order leave results that change from run to run. This pass
    records on each kernel `adjit.atomic_order`, how the CPU runtime runs it
    so that results are bitwise the same on every run and thread count:

    - "parallel": no float `atomic_add`, and no atomic whose old value is
      used. Integer adds and float min/max leave the same result in any
      order, so the launch runs as before, on every core.
    - "ordered": float `atomic_add`s whose old values are unused, into array
      arguments that the kernel accesses only that way. The launch runs on
      every core; each chunk of threads logs its adds (through the calls
      adjit-defer-float-atomics makes), and after the chunks the adds are
      applied in thread order (in parallel over disjoint parts of memory).
      The kernel cannot observe the deferral, since it never reads those
      arrays, so the result is that of running the threads one after
      another in index order.
    - "serial": anything else with atomics: an atomic whose old value is used
      (a counter handing out slots, a checked atomic_add under verify_fp), a
      float add into an array the kernel also loads or stores, or a call to a
      device function that was not inlined and contains atomics. The launch
      runs its threads in index order on one core.

    The runtime also runs "ordered" kernels serially when two arrays of a
    launch overlap. Rationale: one attribute per kernel keeps the decision in
    the compiler, where the accesses are known; the runtime only follows it.
  }];
}

def AdjitDeferFloatAtomics : Pass<"adjit-defer-float-atomics", "::mlir::ModuleOp"> {
  let summary = "Route float atomic adds through the runtime, which orders them";
  let description = [{
    Runs on the LLVM dialect of the CPU pipeline. Replaces each
    `llvm.atomicrmw fadd` of f32 or f64 whose result is unused by a call to
    the runtime's `adjit_rt_atomic_add_f32` / `_f64` (record, pointer,
    value), where the record is the last argument of a kernel body (marked
    `adjit.kernel_body` by adjit-cpu-launch) and null elsewhere. In an
    "ordered" launch (see adjit-atomic-order) each chunk's record points at
    the chunk's log, where the runtime appends the add for the thread-ordered
    pass after the chunks; otherwise it adds atomically. Rationale: the
    record reaches the runtime as an argument, with no thread-local lookup
    per add.
    The callee is declared `nounwind willreturn` and touching only its
    argument's memory and memory the kernel cannot reach.
  }];
}

def AdjitGpuLaunch : Pass<"adjit-gpu-launch", "::mlir::ModuleOp"> {
  let summary = "Wrap each kernel in a gpu.module kernel, one GPU thread per index";
  let description = [{
    For each kernel `@k` (lowered to memrefs), moves the body into
    `gpu.module @k_module` and adds `gpu.func @k(args..., %total: i64,
    %s1: i64, %s2: i64, %s3: i64) kernel`, which computes the linear thread
    index from the block and thread ids, returns when it is past `total`, and
    calls the body with the delinearized coordinates.

    With `noalias`, the kernel's array arguments are promised not to overlap
    (marked for `adjit-apply-noalias` after the NVVM conversion), so LLVM may
    reorder and batch their loads and stores. As on the CPU, a launcher must
    check the arrays of each launch and use the variant without the promise
    when two of them overlap.
  }];
  let options = [
    Option<"noalias", "noalias", "bool", /*default=*/"false",
           "Promise that the kernel's array arguments do not overlap">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect"];
}

def AdjitGpuLoopBuffers : Pass<"adjit-gpu-loop-buffers", "::mlir::ModuleOp"> {
  let summary = "Give the loop reversal's buffers GPU memory that never overflows";
  let description = [{
    The loop reversal of `adjit-adjoint` keeps a runtime loop's checkpoints in
    dynamically sized buffers (`memref.alloca(%n)`, merged per run by
    `adjit-merge-stack-buffers`). On the GPU a dynamic alloca lives on the
    thread's stack, whose size the driver cannot know: a long loop overran
    the default 1 KiB and faulted (docs/gpu.md), which poisons the context.
    In every launch body (the functions `adjit-gpu-launch` outlines, which
    receive the error record), this pass gives each such buffer of `bytes`
    bytes either a static buffer of `stack-bytes` bytes (the thread's frame:
    ptxas sizes it and the driver provides it) when it fits, or a block of the
    device heap (`malloc`, released with `free` where the buffer's stack scope
    ends). A thread whose `malloc` fails records `AdjitHeapExhausted` with the
    bytes it asked for in the launch's error record and exits (PTX `exit`):
    the launch then raises a clear error naming the kernel, never a fault.

    ```mlir
    %s = llvm.intr.stacksave : !llvm.ptr
    %b = memref.alloca(%bytes) : memref<?xi8>
    ...
    llvm.intr.stackrestore %s : !llvm.ptr
    ```
    becomes (with the static `memref<2048xi8>` alloca at the function's top)
    ```mlir
    %fits = arith.cmpi ule, %bytes, %c2048 : index
    %b = scf.if %fits -> memref<?xi8> {
      scf.yield %static_as_dynamic
    } else {
      %h = memref.alloc(%bytes) : memref<?xi8>   // null: record, nvvm.exit
      scf.yield %h
    }
    ...
    scf.if %fits {} else { memref.dealloc %b }
    llvm.intr.stackrestore %s : !llvm.ptr
    ```
    Rationale: a static frame is free when it fits and the heap has no
    per-thread limit; `stack-bytes` trades local memory per resident thread
    against `malloc` calls. Buffers in functions without the error record
    (device functions not inlined), or without a stack scope that ends them,
    stay on the stack. Part of `adjit-lower-gpu`.
  }];
  let options = [
    Option<"stackBytes", "stack-bytes", "int64_t", /*default=*/"2048",
           "Bytes of the static per-site buffer used when a buffer fits">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect", "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

def AdjitMergeStackBuffers : Pass<"adjit-merge-stack-buffers", "::mlir::ModuleOp"> {
  let summary = "Replace each run of adjacent dynamic 1-D allocas by views of one buffer";
  let description = [{
    The loop reversal of `adjit-adjoint` keeps checkpoints and a segment's
    states in dynamically sized stack buffers created next to each other. On
    the GPU these become PTX `alloca`s, and two of them in one function were
    seen to come back at the same address (an H100, driver 580 / CUDA 13;
    docs/gpu.md). This pass replaces each run of adjacent `memref.alloca`s of
    rank 1 with a dynamic size and identity layout by one `memref.alloca` of
    bytes and a `memref.view` per buffer, at offsets aligned for the run's
    strictest element type (its ABI alignment from the data layout). Part of
    `adjit-lower-gpu`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect"];
}

def AdjitArrayAccess : Pass<"adjit-array-access", "::mlir::ModuleOp"> {
  let summary = "Run the array access (alias) analysis and record it on kernels";
  let description = [{
    For each kernel, records in `adjit.arg_access` how each array argument is
    accessed: "read", "write", "read-write" or "none", with ", own element"
    when every access is to the calling thread's own element (its indices are
    exactly the thread's coordinates), i.e. no two threads share an element.
    With `remarks`, also reports it as one remark per array argument (the
    printer used by the lit tests). The Python runtime reads the attribute to
    know which arrays a launch writes; the adjoint pass uses the analysis.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Report the analysis as remarks">,
  ];
}

def AdjitAccessChecks : Pass<"adjit-access-checks", "::mlir::ModuleOp"> {
  let summary = "Check array accesses at run time: indices in range (proved once per launch where possible), and optionally the values stored finite";
  let description = [{
    With `bounds` (the default), wraps each `adjit.load`, `store`,
    `load_component`, `store_component` and atomic in `scf.if` on its indices
    being in range (unsigned, so negative indices fail). The other branch
    skips the access (a load or an atomic yields zero) and records the
    failure with `adjit.access_error`, which the runtime turns into an
    `IndexError` naming the site after the launch. Each site is described in
    the kernel's `adjit.check_sites` (file, line, array, access, rank).

    Checks are dropped where they are proved:
    - statically: the induction variable of an `scf.for` from a constant
      `lb >= 0` to `adjit.dim` of the same array and dimension;
    - once per launch: an index that is a thread coordinate plus a constant
      `c >= 0` (through `index_cast`, `extsi` and `addi`), or a constant, into
      an array argument of the kernel. The conditions (`bound + c <= size`,
      with `adjit.tid_bounds`, and `bound + c <= 2^31` where the sum is an
      i32) are combined into one `adjit.launch_condition`; such an access is
      guarded by `proven || in_range`. The CPU launch pass compiles the
      kernel for the condition true and tests it once per launch (a launch
      where it fails runs the `all-checked` variant), so a launch that fits
      its arrays runs the code without those checks.

    With `finite`, every store and atomic of a float value (each component
    of a vector or matrix) also reports the first value that is NaN or
    infinite (access "write of NaN or infinity", ...; for atomic_add also the
    element it leaves); the store still happens.

    Device functions that still contain checks get two trailing arguments,
    the error record and the thread index, passed by every call.
    Rationale: the checks run after the adjoint pass, so forward and adjoint
    kernels are checked alike and the adjoint never sees them.
  }];
  let options = [
    Option<"bounds", "bounds", "bool", /*default=*/"true",
           "Check that every array index is in range">,
    Option<"finite", "finite", "bool", /*default=*/"false",
           "Report the first NaN or infinity stored into an array">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def AdjitAdjoint : Pass<"adjit-adjoint", "::mlir::ModuleOp"> {
  let summary = "Generate the reverse-mode adjoint kernel of each kernel";
  let description = [{
    For each kernel `@k(args...)`, adds `@k_adjoint(args..., grads...)`, one
    gradient array per array argument, in order. The adjoint kernel replays
    the primal computation of its thread (without its stores), then walks it
    backwards, applying each op's rule (AdjointOpInterface):

    - a load `x[i]` adds the value's adjoint into `grad_x[i]` (atomically);
    - a store `y[i] = v` (and `y[i].c = v`) reads the gradient slot
      `grad_y[i]` (component), adds it into `v`'s adjoint and zeroes the slot;
      this one rule serves every store;
    - vector components are updated component by component: the adjoint of
      `extract(v, c)` touches only component `c` of `v`'s adjoint.

    Locals are SSA values, so `b = a` needs no rule. `scf.if` is reversed
    into an `scf.if` on the replayed condition that recomputes the branch and
    yields the updated adjoints. `scf.for` loops with small constant trip
    counts are unrolled; other `scf.for` and `scf.while` loops are reversed by
    two-level checkpointing (a while loop whose condition forwards values
    other than its carried ones, as canonicalize can make, is first rewritten
    so that it forwards them and its body recomputes the rest; a while loop is
    first replayed once to count its trips n). With L = ceil(sqrt(n)), a
    sweep keeps the carried state at every L-th iteration; the segments are
    then reversed last to first, each replayed from its checkpoint keeping
    its states, and its iterations reversed from those. Per thread: O(n)
    time (each iteration replayed at most three times) and 2 * ceil(sqrt(n))
    copies of the carried state, on the stack in an alloca scope released
    when the loop's reversal ends (1000 steps of a vec3 position and
    velocity: 64 copies of 24 bytes). With `checkpoint-bytes=B` (B > 0),
    the replay of the segment being reversed also keeps, per iteration, the
    float values the reversal reads (arithmetic results computed from the
    state; not constants, extracts, broadcasts, selects or comparisons,
    cheaper to redo), so a reversed iteration applies the rules without
    recomputing its primal values; and segments grow up to B bytes of
    states and kept values (one segment when all n fit: each iteration
    replayed once beyond the forward launch), for at most
    max(B, ceil(sqrt(n)) iterations' worth) + ceil(sqrt(n)) state copies.
    The CPU pipeline gives 256 KiB (a CPU worker runs its threads one after
    another, so this is per core: the springs benchmark keeps 24 bytes of
    state and 60 bytes of values per iteration, 3120 iterations per
    segment); the GPU pipeline 0 (sqrt segments, nothing kept: local memory
    traffic costs a GPU thread more than recomputing). The replays are the
    primal ops on the same inputs, so results are bitwise those of
    recomputing every state from the start, with or without kept values.
    Rationale: O(n) time, O(sqrt(n)) memory, with no runtime buffer, so it
    works unchanged on the GPU (local memory). Device functions must be
    inlined before this pass.

    In-place updates. A kernel that reads and writes an array, each thread at
    its own element only, is differentiated when the replayed loads can see
    the values the forward launch read: a load after a store in the same
    block gets the stored value (store-to-load forwarding); a loop that reads
    and writes the element (`for k: y[i] = y[i] * x[i]`, also through
    component stores, `+=` and branches inside the loop) carries it as a
    loop-carried value, loaded before the loop and stored after it, so its
    reversal recomputes each iteration's value; and the remaining loads, all
    before any write, read a snapshot of the array the runtime takes before
    the forward launch.

    Rationale for the errors: in-place patterns outside these forms (a
    neighbour's element written in the same launch, whose value depends on
    thread order) and ops without a rule are rejected with a diagnostic at
    the offending op, never differentiated wrongly.

    Atomics. `atomic_add` (and `atomic_sub`) adds the slot's gradient into
    the value's adjoint and keeps the slot. A float `atomic_min`/`atomic_max`
    (integer ones carry no gradient): its gradient belongs to the value(s)
    equal to the element's final value, so the adjoint kernel takes, after
    the gradient arrays, each array a float min/max writes as the launch left
    it (`final_<name>`: the tape keeps a copy after the launch; comparing
    against the array at backward time, as Warp does, could use values
    written since and be silently wrong), and a value's adjoint is the
    element's gradient where it equals the final value (ties: each tied
    value). The element's old value keeps its gradient only where no thread
    changed the element, which the launcher applies after the adjoint kernel
    (a thread zeroing the slot would race with threads still reading it).

    Batched seeds: with `lanes=K`, every float value carries K adjoints
    (seeds) beside one replay of the primal, the gradient arrays are repeated
    once per lane (`adj0_x, adj0_y, adj1_x, ...`), each rule runs once per
    lane, branches yield and loops carry every lane's adjoints; the loop
    reversal's checkpoints and kept values are shared. One launch gives K rows
    of the Jacobian.
  }];
  let options = [
    Option<"keepPrimal", "keep-primal", "bool", /*default=*/"true",
           "Keep the primal kernels next to the adjoints">,
    Option<"maxUnroll", "max-unroll", "int64_t", /*default=*/"64",
           "Largest constant trip count of an scf.for that is unrolled">,
    Option<"lanes", "lanes", "unsigned", /*default=*/"1",
           "Adjoints carried per float value (seeds sharing one replay of "
           "the primal): the gradient arrays repeat once per lane">,
    Option<"checkpointBytes", "checkpoint-bytes", "int64_t", /*default=*/"0",
           "Bytes of loop states per thread a loop reversal may keep beyond "
           "its 2 ceil(sqrt n) checkpoints: segments grow up to what fits, "
           "so fewer iterations are replayed, and reversed iterations read "
           "their primal values kept by the segment's replay (0: sqrt "
           "segments only, values recomputed)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"];
}

def AdjitExpandGradCalls : Pass<"adjit-expand-grad-calls", "::mlir::ModuleOp"> {
  let summary = "Replace each adjit.grad_call by the derivative of its callee";
  let description = [{
    `adjit.grad_call @f(%x, %v)` (`wp.grad(f)(x, v)`) becomes a copy of f's
    body, with f's arguments bound to the call's, differentiated in forward
    mode by the tangent rules (adjit-tangent's) with one lane per argument
    component seeded with a unit tangent: lane k's tangent of f's result is
    the derivative along component k, and the lanes of each argument are
    gathered into its gradient. The result is made of ordinary ops, which
    the adjoint and tangent passes differentiate again (second order in a
    kernel). f's body must not call other device functions (run `inline`
    first); an op of it without a tangent rule is an error at the op.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"];
}

def AdjitTangent : Pass<"adjit-tangent", "::mlir::ModuleOp"> {
  let summary = "Generate the forward-mode (JVP) tangent kernel of each kernel";
  let description = [{
    For each kernel `@k(args...)`, adds `@k_tangent(args..., tangents...)`:
    after k's arguments, one tangent per float argument, in order (a tangent
    array of the same type for each array of floats or float vectors and
    matrices, a value of the same type for each float scalar, vector or
    matrix; integer arguments get none). The tangent kernel computes what k
    computes and, next to every float value, its tangent (the directional
    derivative along the given input tangents), copying the kernel forwards
    once and applying each op's rule (TangentOpInterface) right after the op:

    - a load `x[i]` reads its tangent from `t_x[i]`;
    - a store `y[i] = v` (and `y[i].c = v`) also stores `v`'s tangent into
      `t_y[i]`; an atomic add `y[i] += v` also adds `v`'s tangent into
      `t_y[i]` (atomically), so launches that accumulate into an output
      accumulate its tangent the same way;
    - zero tangents are not materialized: an op none of whose operands has
      a tangent emits no tangent code.

    Control flow is direct, with O(1) extra memory: an `scf.if` yields the
    tangents of its float results after its results; `scf.for` and
    `scf.while` loops carry the tangent of each float loop-carried value as
    one more loop-carried value (tangent arrays too, for arrays carried
    through loops). Loops are neither unrolled nor checkpointed, and in-place
    updates need no snapshot: the tangent kernel runs the primal's memory
    traffic itself, and the tangent traffic in the same order.

    Before:
    ```mlir
    %a = adjit.load %x[%i] : !adjit.array<f32, 1>
    %r = math.sin %a : f32
    adjit.store %r, %y[%i] : !adjit.array<f32, 1>
    ```
    After (in `@k_tangent(%x, %y, %tan_x, %tan_y)`):
    ```mlir
    %a = adjit.load %x[%i] : !adjit.array<f32, 1>
    %ta = adjit.load %tan_x[%i] : !adjit.array<f32, 1>
    %r = math.sin %a : f32
    %c = math.cos %a : f32
    %tr = arith.mulf %ta, %c : f32
    adjit.store %r, %y[%i] : !adjit.array<f32, 1>
    adjit.store %tr, %tan_y[%i] : !adjit.array<f32, 1>
    ```

    Stack buffers (`memref.alloca` of floats, as adjit-adjoint's loop
    reversal makes) get tangent buffers the same way: a store also stores the
    tangent, a load also loads it, so the tangent of an adjoint kernel (the
    Hessian-vector product) is exact through checkpoints and kept values;
    `memref.alloca_scope` returns its results' tangents after them.

    Batched seeds: with `lanes=K`, every float value carries K tangents, the
    derivatives along K directions, from one copy of the primal; the tangent
    arguments are repeated once per lane (`tan0_x, tan0_y, tan1_x, ...`). One
    launch gives K columns of the Jacobian.

    Rationale: forward mode needs neither the replay nor the loop reversal of
    adjit-adjoint, so it accepts every loop and in-place pattern the primal
    runs; one launch gives the derivative of every output along one input
    direction. An op that computes a float value from operands with tangents,
    or writes a float array, and has no tangent rule is an error at the op,
    never a silent zero; so is a call to a device function with a custom
    adjoint (`@f_grad`), which has no forward-mode counterpart yet, and any
    other call (device functions must be inlined first).
  }];
  let options = [
    Option<"keepPrimal", "keep-primal", "bool", /*default=*/"true",
           "Keep the primal kernels next to the tangent kernels">,
    Option<"lanes", "lanes", "unsigned", /*default=*/"1",
           "Tangents carried per float value (seed directions sharing one "
           "primal): the tangent arguments repeat once per lane">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"];
}

#endif // ADJIT_PASSES_TD
