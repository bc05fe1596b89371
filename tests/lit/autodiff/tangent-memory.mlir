// RUN: adjit-opt %s --adjit-tangent=keep-primal=false | FileCheck %s
// RUN: adjit-opt %s --adjit-tangent="keep-primal=false lanes=2" | FileCheck %s --check-prefix=LANES

// adjit-tangent on stack buffers, as adjit-adjoint's loop reversal leaves
// them in an adjoint kernel: a float buffer gets a tangent buffer, a store
// stores the tangent beside the value and a load loads it, so the tangent of
// an adjoint kernel (a Hessian-vector product) sees through checkpoints.
// memref.alloca_scope returns its results' tangents after them.

// CHECK-LABEL: func.func @buffer_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TY:[^:]*]]: !adjit.array<f32, 1>)
// CHECK: %[[R:.*]]:2 = memref.alloca_scope -> (f32, f32) {
// CHECK: %[[B:.*]] = memref.alloca(%{{.*}}) : memref<?xf32>
// CHECK-NEXT: %[[TB:.*]] = memref.alloca(%{{.*}}) : memref<?xf32>
// CHECK: %[[A:.*]] = adjit.load %[[X]]
// CHECK-NEXT: %[[TA:.*]] = adjit.load %[[TX]]
// CHECK: memref.store %[[A]], %[[B]][%{{.*}}] : memref<?xf32>
// CHECK-NEXT: memref.store %[[TA]], %[[TB]][%{{.*}}] : memref<?xf32>
// CHECK: %[[L:.*]] = memref.load %[[B]][%{{.*}}] : memref<?xf32>
// CHECK-NEXT: %[[TL:.*]] = memref.load %[[TB]][%{{.*}}] : memref<?xf32>
// CHECK: %[[S:.*]] = math.sin %[[L]] : f32
// CHECK-NEXT: %[[COS:.*]] = math.cos %[[L]] : f32
// CHECK-NEXT: %[[TS:.*]] = arith.mulf %[[TL]], %[[COS]] : f32
// CHECK-NEXT: memref.alloca_scope.return %[[S]], %[[TS]] : f32, f32
// CHECK: adjit.store %[[R]]#0, %[[Y]]
// CHECK-NEXT: adjit.store %[[R]]#1, %[[TY]]

// Two lanes: one primal, two tangent buffers, two tangents per result.
// LANES-LABEL: func.func @buffer_tangent(
// LANES-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[T0X:[^:]*]]: !adjit.array<f32, 1>, %[[T0Y:[^:]*]]: !adjit.array<f32, 1>, %[[T1X:[^:]*]]: !adjit.array<f32, 1>, %[[T1Y:[^:]*]]: !adjit.array<f32, 1>)
// LANES-SAME: adjit.arg_names = ["x", "y", "tan0_x", "tan0_y", "tan1_x", "tan1_y"]
// LANES: %[[R:.*]]:3 = memref.alloca_scope -> (f32, f32, f32) {
// LANES-COUNT-3: memref.alloca
// LANES: math.sin
// LANES-NOT: math.sin
// LANES: memref.alloca_scope.return
// LANES: adjit.store %[[R]]#0, %[[Y]]
// LANES-NEXT: adjit.store %[[R]]#1, %[[T0Y]]
// LANES-NEXT: adjit.store %[[R]]#2, %[[T1Y]]
func.func @buffer(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>)
    attributes {adjit.kernel, adjit.arg_names = ["x", "y"]} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %i = adjit.tid : index
  %r = memref.alloca_scope -> (f32) {
    %buf = memref.alloca(%c4) : memref<?xf32>
    %a = adjit.load %x[%i] : !adjit.array<f32, 1>
    memref.store %a, %buf[%c0] : memref<?xf32>
    %l = memref.load %buf[%c0] : memref<?xf32>
    %s = math.sin %l : f32
    memref.alloca_scope.return %s : f32
  }
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}
