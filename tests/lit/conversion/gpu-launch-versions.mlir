// RUN: adjit-opt %s --adjit-access-checks --adjit-lower-to-std --adjit-gpu-launch --canonicalize --cse | FileCheck %s
// RUN: adjit-opt %s --adjit-access-checks --adjit-lower-to-std '--adjit-gpu-launch=noalias=true' | FileCheck %s --check-prefix=NOALIAS
// RUN: adjit-opt %s --adjit-access-checks --adjit-lower-to-std '--adjit-gpu-launch=noalias=true' \
// RUN:   | adjit-opt --pass-pipeline='builtin.module(gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm),reconcile-unrealized-casts,adjit-apply-noalias)' \
// RUN:   | FileCheck %s --check-prefix=LLVM

// adjit-gpu-launch with a launch condition (adjit-access-checks): the body
// comes in two versions, compiled for the condition holding (no checks
// left) and with every check (the condition false); the kernel evaluates
// the condition, uniform across threads, and calls one.

// CHECK-LABEL: gpu.module @thread_indexed_module
// CHECK: func.func private @thread_indexed_body(%[[X:[^:]*]]: memref<?xf32>, %[[Y:[^:]*]]: memref<?xf32>, %[[I:[^:]*]]: index,
// CHECK-NEXT: %[[V:.*]] = memref.load %[[X]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: memref.store %[[V]], %[[Y]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: return
// CHECK: func.func private @thread_indexed_body_launch_condition(
// CHECK-SAME: -> i1
// CHECK: func.func private @thread_indexed_body_checked(
// CHECK: scf.if
// CHECK: memref.load
// CHECK: } else {
// CHECK: llvm.cmpxchg
// CHECK: gpu.func @thread_indexed(
// CHECK-NOT: adjit.noalias_args
// CHECK: %[[PROVEN:.*]] = func.call @thread_indexed_body_launch_condition(
// CHECK-NEXT: scf.if %[[PROVEN]] {
// CHECK-NEXT: func.call @thread_indexed_body(
// CHECK-NEXT: } else {
// CHECK-NEXT: func.call @thread_indexed_body_checked(
// CHECK-NEXT: }

// With noalias: the positions of the arrays' aligned pointers once the NVVM
// conversion expands each memref (allocated, aligned, offset, size, stride),
// then llvm.noalias on exactly those.
// NOALIAS: gpu.func @thread_indexed({{.*}}) kernel attributes {adjit.noalias_args = array<i64: 1, 6>}
// LLVM: llvm.func @thread_indexed(%{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr {llvm.noalias}, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr {llvm.noalias}, %{{[^:]*}}: i64,
// LLVM-SAME: %{{[^:]*}}: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel}
// LLVM-NOT: adjit.noalias_args
func.func @thread_indexed(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel, adjit.arg_names = ["x", "y"]} {
  %i = adjit.tid : index
  %v = adjit.load %x[%i] : !adjit.array<f32, 1>
  adjit.store %v, %y[%i] : !adjit.array<f32, 1>
  return
}

// A kernel without a launch condition (no array accesses) keeps one body.
// CHECK-LABEL: gpu.module @no_arrays_module
// CHECK-NOT: _checked
// CHECK-NOT: _launch_condition
// CHECK: gpu.func @no_arrays(
// CHECK: func.call @no_arrays_body(
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return
func.func @no_arrays(%a: f32) attributes {adjit.kernel, adjit.arg_names = ["a"]} {
  %i = adjit.tid : index
  return
}
