// RUN: adjit-opt %s --adjit-adjoint="keep-primal=false lanes=2" --canonicalize --cse | FileCheck %s

// adjit-adjoint with lanes=2 (batched seeds): one replay of the primal, two
// adjoints beside every float value, two gradient arrays per array argument
// (lane after lane). Branches yield, and loops carry, every lane's adjoints.

// CHECK-LABEL: func.func @lanes_adjoint(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[N:[^:]*]]: index, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[G0X:[^:]*]]: !adjit.array<f32, 1>, %[[G0Y:[^:]*]]: !adjit.array<f32, 1>, %[[G1X:[^:]*]]: !adjit.array<f32, 1>, %[[G1Y:[^:]*]]: !adjit.array<f32, 1>)
// CHECK-SAME: adjit.arg_names = ["x", "n", "y", "adj0_x", "adj0_y", "adj1_x", "adj1_y"]
// Each lane's seed is read (and consumed) from its own gradient of y.
// CHECK: %[[A:.*]] = adjit.load %[[X]]
// CHECK-NEXT: %[[S0:.*]] = adjit.load %[[G0Y]]
// CHECK-NEXT: adjit.store %{{.*}}, %[[G0Y]]
// CHECK-NEXT: %[[S1:.*]] = adjit.load %[[G1Y]]
// CHECK-NEXT: adjit.store %{{.*}}, %[[G1Y]]
// The checkpointed reversal runs once and carries one adjoint per lane; the
// derivative (cos) is computed once and scales both.
// CHECK: memref.alloca_scope -> (f32, f32, f32, f32)
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[S0]], %{{.*}} = %[[S1]]) -> (f32, f32)
// CHECK: scf.for {{.*}} iter_args(%[[L0:.*]] = %{{.*}}, %[[L1:.*]] = %{{.*}}) -> (f32, f32)
// CHECK: %[[COS:.*]] = math.cos
// CHECK-NEXT: %[[D0:.*]] = arith.mulf %[[L0]], %[[COS]] : f32
// CHECK-NEXT: %[[D1:.*]] = arith.mulf %[[L1]], %[[COS]] : f32
// CHECK-NEXT: scf.yield %[[D0]], %[[D1]] : f32, f32
// CHECK-NOT: math.cos
// CHECK: adjit.store {{.*}}, %[[G0X]]
// CHECK: adjit.store {{.*}}, %[[G1X]]
func.func @lanes(%x: !adjit.array<f32, 1>, %n: index, %y: !adjit.array<f32, 1>)
    attributes {adjit.kernel, adjit.arg_names = ["x", "n", "y"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %a) -> (f32) {
    %s = math.sin %acc : f32
    scf.yield %s : f32
  }
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}
