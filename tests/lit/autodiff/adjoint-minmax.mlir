// RUN: adjit-opt %s --adjit-adjoint=keep-primal=false --canonicalize --cse | FileCheck %s

// adjit-adjoint on a float atomic min/max: the adjoint kernel takes, after
// the gradient arrays, each array a float atomic min/max writes as the launch
// left it (final_<name>); a value's adjoint is the element's gradient where
// the value equals the element's final value, else 0. (The element's old
// value keeps its gradient only where no thread changed it: the launcher
// applies that after the adjoint kernel.) A vector min compares per component.

// CHECK-LABEL: func.func @bounds_adjoint(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[LO:[^:]*]]: !adjit.array<f32, 1>, %[[HI:[^:]*]]: !adjit.array<vector<2xf32>, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GLO:[^:]*]]: !adjit.array<f32, 1>, %[[GHI:[^:]*]]: !adjit.array<vector<2xf32>, 1>, %[[FLO:[^:]*]]: !adjit.array<f32, 1>, %[[FHI:[^:]*]]: !adjit.array<vector<2xf32>, 1>)
// CHECK-SAME: adjit.arg_names = ["x", "lo", "hi", "adj_x", "adj_lo", "adj_hi", "final_lo", "final_hi"]
// CHECK: %[[A:.*]] = adjit.load %[[X]][%[[I:.*]]]
// CHECK-DAG: %[[SQ:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CHECK-DAG: %[[V:.*]] = vector.from_elements %[[SQ]], %[[A]] : vector<2xf32>
// CHECK-DAG: %[[FV:.*]] = adjit.load %[[FHI]][%[[C0:.*]]] : <vector<2xf32>, 1>
// CHECK-DAG: %[[WONV:.*]] = arith.cmpf oeq, %[[V]], %[[FV]] : vector<2xf32>
// CHECK-DAG: %[[GV:.*]] = adjit.load %[[GHI]][%[[C0]]] : <vector<2xf32>, 1>
// CHECK-DAG: arith.select %[[WONV]], %[[GV]], %{{.*}} : vector<2xi1>, vector<2xf32>
// CHECK-DAG: %[[F:.*]] = adjit.load %[[FLO]][%[[C0]]] : <f32, 1>
// CHECK-DAG: %[[WON:.*]] = arith.cmpf oeq, %[[SQ]], %[[F]] : f32
// CHECK-DAG: %[[G:.*]] = adjit.load %[[GLO]][%[[C0]]] : <f32, 1>
// CHECK-DAG: arith.select %[[WON]], %[[G]], %{{.*}} : f32
// CHECK-NOT: adjit.store {{.*}}%[[GLO]]
// CHECK: adjit.store {{.*}}, %[[GX]][%[[I]]]
func.func @bounds(%x: !adjit.array<f32, 1>, %lo: !adjit.array<f32, 1>, %hi: !adjit.array<vector<2xf32>, 1>)
    attributes {adjit.kernel, adjit.arg_names = ["x", "lo", "hi"]} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %sq = arith.mulf %a, %a : f32
  %old = adjit.atomic_min %sq, %lo[%c0] [] : f32, !adjit.array<f32, 1>
  %v = vector.from_elements %sq, %a : vector<2xf32>
  %oldv = adjit.atomic_max %v, %hi[%c0] [] : vector<2xf32>, !adjit.array<vector<2xf32>, 1>
  return
}
