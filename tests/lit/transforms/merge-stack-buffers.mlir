// RUN: adjit-opt %s --adjit-merge-stack-buffers | FileCheck %s

// adjit-merge-stack-buffers: adjacent dynamic 1-D allocas (the loop
// reversal's checkpoints and replayed states) become views of one byte
// buffer, each at an offset rounded up to the run's strictest alignment
// (vector<3xf32>: 16 bytes, its ABI alignment). Two dynamic allocas in one
// PTX function were seen to share an address (docs/gpu.md).

// CHECK-LABEL: func.func @run_of_three(
// CHECK-SAME: %[[N:[^:]*]]: index, %[[M:[^:]*]]: index)
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[B0:.*]] = arith.muli %[[N]], %{{.*}} : index
// CHECK: %[[END0:.*]] = arith.addi %[[C0]], %{{.*}} : index
// CHECK: %[[B1:.*]] = arith.muli %[[M]], %{{.*}} : index
// CHECK: %[[END1:.*]] = arith.addi %[[END0]], %{{.*}} : index
// CHECK: %[[TOTAL:.*]] = arith.addi %[[END1]], %{{.*}} : index
// CHECK: %[[BUF:.*]] = memref.alloca(%[[TOTAL]]) {alignment = 16 : i64} : memref<?xi8>
// CHECK-NEXT: %[[A:.*]] = memref.view %[[BUF]][%[[C0]]][%[[N]]] : memref<?xi8> to memref<?xf64>
// CHECK-NEXT: %[[B:.*]] = memref.view %[[BUF]][%[[END0]]][%[[M]]] : memref<?xi8> to memref<?xvector<3xf32>>
// CHECK-NEXT: %[[C:.*]] = memref.view %[[BUF]][%[[END1]]][%[[N]]] : memref<?xi8> to memref<?xi8>
// CHECK-NOT: memref.alloca
// CHECK: memref.store %{{.*}}, %[[A]]
// CHECK: memref.store %{{.*}}, %[[B]]
// CHECK: memref.store %{{.*}}, %[[C]]
func.func @run_of_three(%n: index, %m: index) {
  %a = memref.alloca(%n) : memref<?xf64>
  %b = memref.alloca(%m) : memref<?xvector<3xf32>>
  %c = memref.alloca(%n) : memref<?xi8>
  %i = arith.constant 0 : index
  %x = arith.constant 1.0 : f64
  %v = arith.constant dense<1.0> : vector<3xf32>
  %k = arith.constant 1 : i8
  memref.store %x, %a[%i] : memref<?xf64>
  memref.store %v, %b[%i] : memref<?xvector<3xf32>>
  memref.store %k, %c[%i] : memref<?xi8>
  return
}

// A single dynamic alloca, static allocas and allocas that are not adjacent
// stay as they are.
// CHECK-LABEL: func.func @left_alone(
// CHECK: memref.alloca(%{{.*}}) : memref<?xf64>
// CHECK-NEXT: memref.alloca() : memref<4xf64>
// CHECK-NEXT: memref.alloca(%{{.*}}) : memref<?xf64>
// CHECK-NOT: memref.view
func.func @left_alone(%n: index) {
  %a = memref.alloca(%n) : memref<?xf64>
  %s = memref.alloca() : memref<4xf64>
  %b = memref.alloca(%n) : memref<?xf64>
  return
}
