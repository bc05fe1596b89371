// RUN: adjit-opt %s --adjit-gpu-loop-buffers=stack-bytes=256 --split-input-file | FileCheck %s

// adjit-gpu-loop-buffers: a launch body's dynamic buffer (a runtime loop's
// checkpoints, in a stack scope) gets a static per-site buffer when it fits
// `stack-bytes`, else a block of the device heap, freed where the scope
// ends; a thread whose malloc fails records AdjitHeapExhausted (-2) with the
// bytes asked for, and exits.

// CHECK-LABEL: func.func private @body(
// CHECK-SAME: %[[N:[^:]*]]: index, %[[LINEAR:[^:]*]]: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %[[RECORD:[^:]*]]: !llvm.ptr)
// CHECK: %[[STATIC:.*]] = memref.alloca() {alignment = 16 : i64} : memref<256xi8>
// CHECK: %[[SAVE:.*]] = llvm.intr.stacksave
// CHECK: %[[BYTES:.*]] = arith.muli %[[N]], %{{.*}} : index
// CHECK: %[[FITS:.*]] = arith.cmpi ule, %[[BYTES]], %{{.*}} : index
// CHECK: %[[BUF:.*]] = scf.if %[[FITS]] -> (memref<?xi8>) {
// CHECK:   %[[CAST:.*]] = memref.cast %[[STATIC]] : memref<256xi8> to memref<?xi8>
// CHECK:   scf.yield %[[CAST]]
// CHECK: } else {
// CHECK:   %[[HEAP:.*]] = memref.alloc(%[[BYTES]]) {alignment = 16 : i64} : memref<?xi8>
// CHECK:   %[[ADDRESS:.*]] = memref.extract_aligned_pointer_as_index %[[HEAP]]
// CHECK:   %[[NULL:.*]] = arith.cmpi eq, %[[ADDRESS]], %{{.*}} : index
// CHECK:   scf.if %[[NULL]] {
// CHECK:     %[[TAG:.*]] = llvm.mlir.constant(-2 : i64) : i64
// CHECK:     llvm.cmpxchg %[[RECORD]], %{{.*}}, %[[TAG]] monotonic monotonic
// CHECK:     arith.index_cast %[[LINEAR]]
// CHECK:     arith.index_cast %[[BYTES]]
// CHECK:     nvvm.exit
// CHECK:   scf.yield %[[HEAP]]
// CHECK: %[[VIEW:.*]] = memref.view %[[BUF]][%{{.*}}][%[[N]]] : memref<?xi8> to memref<?xf64>
// CHECK-NOT: memref.alloca(
// CHECK: memref.store %{{.*}}, %[[VIEW]]
// CHECK: scf.if %[[FITS]] {
// CHECK-NEXT: } else {
// CHECK-NEXT:   memref.dealloc %[[BUF]] : memref<?xi8>
// CHECK: llvm.intr.stackrestore %[[SAVE]]
gpu.module @k_module {
  func.func private @body(%n: index, %linear: index, %total: index, %e1: index, %e2: index, %e3: index, %record: !llvm.ptr) {
    %save = llvm.intr.stacksave : !llvm.ptr
    %buffer = memref.alloca(%n) : memref<?xf64>
    %c0 = arith.constant 0 : index
    %x = arith.constant 1.0 : f64
    memref.store %x, %buffer[%c0] : memref<?xf64>
    llvm.intr.stackrestore %save : !llvm.ptr
    return
  }
}

// -----

/// Outside a launch body (no error record to report to), or with no stack
/// scope that ends it, a dynamic buffer stays on the stack.
// CHECK-LABEL: func.func private @device_function(
// CHECK: memref.alloca(%{{.*}}) : memref<?xf64>
// CHECK-NOT: memref.alloc(
// CHECK-LABEL: func.func private @no_scope(
// CHECK: memref.alloca(%{{.*}}) : memref<?xf64>
// CHECK-NOT: memref.alloc(
gpu.module @k_module {
  func.func private @device_function(%n: index) {
    %save = llvm.intr.stacksave : !llvm.ptr
    %buffer = memref.alloca(%n) : memref<?xf64>
    llvm.intr.stackrestore %save : !llvm.ptr
    return
  }
  func.func private @no_scope(%n: index, %linear: index, %total: index, %e1: index, %e2: index, %e3: index, %record: !llvm.ptr) {
    %buffer = memref.alloca(%n) : memref<?xf64>
    return
  }
}
