// The CPU stages end to end, all at once and one stage at a time, each
// stage's output parsed again by the next adjit-opt.
// RUN: adjit-opt %s --adjit-optimize --adjit-lower-cpu --adjit-cpu-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: adjit-opt %s --adjit-optimize --adjit-lower-cpu --adjit-cpu-to-llvm | FileCheck %s --check-prefix=ONLYLLVM
// RUN: adjit-opt %s --adjit-optimize | adjit-opt | FileCheck %s --check-prefix=OPT
// RUN: adjit-opt %s --adjit-optimize | adjit-opt --adjit-lower-cpu | adjit-opt | FileCheck %s --check-prefix=CPU
// RUN: adjit-opt %s --adjit-optimize | adjit-opt --adjit-lower-cpu | FileCheck %s --check-prefix=NOADJIT
// RUN: adjit-opt %s --adjit-optimize | adjit-opt --adjit-lower-cpu | adjit-opt --adjit-cpu-to-llvm | adjit-opt | FileCheck %s --check-prefix=LLVM
// The stage pipelines compose like the passes they are made of.
// RUN: adjit-opt %s --pass-pipeline='builtin.module(adjit-optimize,adjit-lower-cpu,adjit-cpu-to-llvm)' | FileCheck %s --check-prefix=LLVM
// Without ordered atomics, float atomic adds stay inline.
// RUN: adjit-opt %s --pass-pipeline='builtin.module(adjit-optimize,adjit-lower-cpu,adjit-cpu-to-llvm{ordered-atomics=false})' | FileCheck %s --check-prefix=INLINE

/// Stage "optimized": still adjit, simplified (the dead load and the unused
/// dim are gone).
// OPT-LABEL: func.func @saxpy(
// OPT-SAME: attributes {adjit.arg_access = ["", "read, own element", "read-write, own element"], adjit.kernel}
// OPT: adjit.tid : index
// OPT-COUNT-2: adjit.load
// OPT-NOT: adjit.load
// OPT: adjit.store
// OPT-NOT: adjit.dim
// OPT: return
/// Device functions are inlined (only those with a custom adjoint stay).
// OPT-LABEL: func.func @vec(
// OPT-NOT: adjit.call
// OPT: arith.mulf
// OPT-NOT: func.func private @sq(

/// Stage "cpu": bodies and entries on memrefs, no adjit op or type left
/// anywhere (the entries keep adjit.atomic_order, which the runtime reads).
// NOADJIT-NOT: {{!adjit\.|adjit\.[a-z_]+ [^=]}}
// CPU-LABEL: func.func private @saxpy_body(
// CPU-SAME: memref<?xf32>
// CPU-LABEL: func.func @saxpy_cpu_entry(
// CPU-SAME: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: !llvm.ptr)
// CPU-SAME: attributes {adjit.atomic_order = "parallel"}
// CPU: scf.for
// CPU: func.call @saxpy_body(
// CPU-LABEL: func.func private @vec_body(
// CPU-SAME: vector<3x3xf32>, %{{[^:]*}}: memref<?x?x3xf32>, %{{[^:]*}}: memref<?x3x3xf32>
// CPU: memref.atomic_rmw addf
/// (vec also loads and stores the array it adds into: its launches run in
/// thread order on one core.)
// CPU-LABEL: func.func @vec_cpu_entry(
// CPU-SAME: attributes {adjit.atomic_order = "serial"}

/// Stage "llvm": only the LLVM dialect is left (anywhere in the output; the
/// entries' adjit.atomic_order is an attribute, not an op), with
/// one public entry per kernel in the packed calling convention.
// ONLYLLVM-NOT: {{(adjit|memref|scf|cf|func|arith|vector|math|builtin)\.[a-z_]+ [^=]|!adjit\.}}
// LLVM-DAG: llvm.func internal @saxpy_body(
// LLVM-DAG: llvm.func @saxpy_cpu_entry(%{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: !llvm.ptr)
// LLVM-DAG: llvm.func internal @vec_body(
// LLVM-DAG: llvm.func @vec_cpu_entry(%{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: !llvm.ptr)
// LLVM-DAG: llvm.call @adjit_rt_atomic_add_f32(
// LLVM-DAG: llvm.func @adjit_rt_atomic_add_f32(!llvm.ptr, !llvm.ptr, f32) attributes {memory_effects = #llvm.memory_effects<other = none, argMem = readwrite, inaccessibleMem = readwrite{{.*}}>, no_unwind, will_return}
// INLINE-NOT: adjit_rt_atomic_add
// INLINE: llvm.atomicrmw fadd
// INLINE-NOT: adjit_rt_atomic_add
// LLVM-DAG: llvm.call @saxpy_body(
// LLVM-DAG: llvm.call @vec_body(

func.func @saxpy(%a: f32, %x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %xi = adjit.load %x[%i] : !adjit.array<f32, 1>
  %yi = adjit.load %y[%i] : !adjit.array<f32, 1>
  %dead = adjit.load %x[%i] : !adjit.array<f32, 1>
  %n = adjit.dim %x, 0 : !adjit.array<f32, 1>
  %ax = arith.mulf %a, %xi : f32
  %r = arith.addf %ax, %yi : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

func.func @vec(%m: vector<3x3xf32>, %p: !adjit.array<vector<3xf32>, 2>, %q: !adjit.array<vector<3x3xf32>, 1>) attributes {adjit.kernel} {
  %i, %j = adjit.tid : index, index
  %v = adjit.load %p[%i, %j] : !adjit.array<vector<3xf32>, 2>
  %x = adjit.extract %v [0] : vector<3xf32> -> f32
  %w = adjit.insert %x, %v [2] : f32 into vector<3xf32>
  %c = adjit.call @sq(%x) : (f32) -> f32
  adjit.store_component %c, %p[%i, %j] [1] : f32, !adjit.array<vector<3xf32>, 2>
  %row = adjit.load_component %q[%i] [1] : !adjit.array<vector<3x3xf32>, 1> -> vector<3xf32>
  %old = adjit.atomic_add %w, %p[%i, %j] [] : vector<3xf32>, !adjit.array<vector<3xf32>, 2>
  %mm = adjit.load %q[%j] : !adjit.array<vector<3x3xf32>, 1>
  %s = arith.addf %mm, %m : vector<3x3xf32>
  adjit.store %s, %q[%i] : !adjit.array<vector<3x3xf32>, 1>
  return
}

func.func private @sq(%x: f32) -> f32 {
  %r = arith.mulf %x, %x : f32
  return %r : f32
}
