// RUN: adjit-opt %s --adjit-lower-to-std --adjit-gpu-launch | FileCheck %s
// RUN: adjit-opt %s --adjit-lower-to-std --adjit-gpu-launch | adjit-opt | FileCheck %s --check-prefix=REPARSE
// RUN: adjit-opt %s --adjit-lower-to-std --adjit-gpu-launch | FileCheck %s --check-prefix=NOADJIT


// adjit-gpu-launch: each kernel @k moves into gpu.module @k_module as the
// private @k_body (with its transitive callees cloned next to it), behind a
// gpu.func @k kernel that computes the linear thread index, returns past
// `total` and calls the body with the delinearized coordinates.

// The module becomes a GPU container module, nothing of adjit remains, and
// the output parses again.
// NOADJIT-NOT: adjit.
// CHECK: module attributes {gpu.container_module}
// REPARSE: module attributes {gpu.container_module}
// REPARSE: gpu.module @saxpy_module
// REPARSE: gpu.func @saxpy(
// REPARSE-SAME: kernel

/// Host copies of device functions stay; @unused is never cloned.
// CHECK-LABEL: func.func private @sq(
// CHECK-LABEL: func.func private @twice(
// CHECK-LABEL: func.func private @unused(
func.func private @sq(%x: f32) -> f32 {
  %r = arith.mulf %x, %x : f32
  %s = adjit.call @twice(%r) : (f32) -> f32
  return %s : f32
}
func.func private @twice(%x: f32) -> f32 {
  %r = arith.addf %x, %x : f32
  return %r : f32
}
func.func private @unused(%x: f32) -> f32 {
  return %x : f32
}

/// A 2-D kernel calling a device function that calls another one.
// CHECK-LABEL: gpu.module @saxpy_module {
// CHECK: func.func private @saxpy_body(
// CHECK-SAME: %[[A:[^:]*]]: f32, %[[X:[^:]*]]: memref<?xf32>, %[[Y:[^:]*]]: memref<?x?x3xf32>,
// CHECK-SAME: %[[LIN:[^:]*]]: index, %{{[^:]*}}: index, %[[E1:[^:]*]]: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: !llvm.ptr)
// CHECK-NEXT: %[[J:.*]] = arith.remui %[[LIN]], %[[E1]] : index
// CHECK-NEXT: %[[I:.*]] = arith.divui %[[LIN]], %[[E1]] : index
// CHECK-NEXT: %[[XI:.*]] = memref.load %[[X]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: %[[S:.*]] = call @sq(%[[XI]]) : (f32) -> f32
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: memref.store %[[S]], %[[Y]][%[[I]], %[[J]], %[[C1]]] : memref<?x?x3xf32>
// CHECK-NEXT: return
// CHECK-DAG: func.func private @sq(
// CHECK-DAG: func.func private @twice(
// CHECK-NOT: @unused
// CHECK: gpu.func @saxpy(
// CHECK-SAME: %[[GA:[^:]*]]: f32, %[[GX:[^:]*]]: memref<?xf32>, %[[GY:[^:]*]]: memref<?x?x3xf32>,
// CHECK-SAME: %[[TOTAL:[^:]*]]: i64, %[[S1:[^:]*]]: i64, %[[S2:[^:]*]]: i64, %[[S3:[^:]*]]: i64, %[[RECORD:[^:]*]]: !llvm.ptr) kernel {
// CHECK-NEXT: %[[BID:.*]] = gpu.block_id x
// CHECK-NEXT: %[[BDIM:.*]] = gpu.block_dim x
// CHECK-NEXT: %[[TID:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[BASE:.*]] = arith.muli %[[BID]], %[[BDIM]] : index
// CHECK-NEXT: %[[L:.*]] = arith.addi %[[BASE]], %[[TID]] : index
// CHECK-NEXT: %[[N:.*]] = arith.index_cast %[[TOTAL]] : i64 to index
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[L]], %[[N]] : index
// CHECK-NEXT: scf.if %[[IN]] {
// CHECK-NEXT: %[[X1:.*]] = arith.index_cast %[[S1]] : i64 to index
// CHECK-NEXT: %[[X2:.*]] = arith.index_cast %[[S2]] : i64 to index
// CHECK-NEXT: %[[X3:.*]] = arith.index_cast %[[S3]] : i64 to index
// CHECK-NEXT: func.call @saxpy_body(%[[GA]], %[[GX]], %[[GY]], %[[L]], %[[N]], %[[X1]], %[[X2]], %[[X3]], %[[RECORD]]) : (f32, memref<?xf32>, memref<?x?x3xf32>, index, index, index, index, index, !llvm.ptr) -> ()
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return
// CHECK-NEXT: }
// CHECK-NEXT: }
func.func @saxpy(%a: f32, %x: !adjit.array<f32, 1>, %y: !adjit.array<vector<3xf32>, 2>) attributes {adjit.kernel} {
  %i, %j = adjit.tid : index, index
  %xi = adjit.load %x[%i] : !adjit.array<f32, 1>
  %s = adjit.call @sq(%xi) : (f32) -> f32
  adjit.store_component %s, %y[%i, %j] [1] : f32, !adjit.array<vector<3xf32>, 2>
  return
}

/// Each kernel gets its own gpu.module, with only its own callees.
// CHECK-LABEL: gpu.module @plain_module {
// CHECK: func.func private @plain_body(
// CHECK-NOT: func.func private @sq(
// CHECK: gpu.func @plain(
// CHECK-SAME: %{{[^:]*}}: memref<?xi64>, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: !llvm.ptr) kernel
func.func @plain(%x: !adjit.array<i64, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c = arith.constant 3 : i64
  %o = adjit.atomic_add %c, %x[%i] [] : i64, !adjit.array<i64, 1>
  return
}

/// A bool vector argument travels as one byte per component (the CPU
/// entry's packing; NVPTX would size an i1-vector parameter in bits but load
/// it a byte per component): the kernel takes vector<3xi8> and truncates.
// CHECK-LABEL: gpu.module @bool_mask_module
// CHECK: gpu.func @bool_mask(%[[M:[^:]*]]: vector<3xi8>, %{{[^:]*}}: memref<?xf32>,
// CHECK: %[[BITS:.*]] = arith.trunci %[[M]] : vector<3xi8> to vector<3xi1>
// CHECK: func.call @bool_mask_body(%[[BITS]],
func.func @bool_mask(%m: vector<3xi1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %b = vector.extract %m[1] : i1 from vector<3xi1>
  %f = arith.uitofp %b : i1 to f32
  adjit.store %f, %y[%i] : !adjit.array<f32, 1>
  return
}
