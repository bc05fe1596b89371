// RUN: adjit-opt %s --adjit-differentiate-forward | FileCheck %s
// RUN: adjit-opt %s --pass-pipeline='builtin.module(adjit-differentiate-forward)' | FileCheck %s
// RUN: adjit-opt %s --adjit-differentiate-forward --adjit-lower-cpu --adjit-cpu-to-llvm | FileCheck %s --check-prefix=LLVM

// The registered stage pipeline adjit-differentiate-forward: inline device
// functions, replace each kernel by its tangent kernel (keep-primal=false),
// then canonicalize and cse; the result lowers through the CPU stages like
// any kernel.

/// The device function is inlined and removed, the primal kernel dropped.
/// y = sin(3 x) gets the tangent cos(3 x) * (3 T); a runtime loop over a
/// vec3 carries its tangent; the branch (a select after canonicalize) selects
/// the tangent or the zero tangent of the constant.
// CHECK-NOT: func.func private @scale
// CHECK-NOT: func.func @k(
// CHECK-LABEL: func.func @k_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[V:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[N:[^:]*]]: i32, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TV:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[TY:[^:]*]]: !adjit.array<f32, 1>)
// CHECK-SAME: attributes {adjit.arg_names = ["x", "v", "n", "y", "tan_x", "tan_v", "tan_y"], adjit.kernel}
// CHECK: %[[UB:.*]] = arith.index_cast %[[N]] : i32 to index
// CHECK-NEXT: %[[A:.*]] = adjit.load %[[X]]
// CHECK-NEXT: %[[TA:.*]] = adjit.load %[[TX]]
// CHECK-NEXT: %[[ARG:.*]] = arith.mulf %[[A]], %[[THREE:.*]] : f32
// CHECK-NEXT: %[[TARG:.*]] = arith.mulf %[[TA]], %[[THREE]] : f32
// CHECK-NEXT: %[[S:.*]] = math.sin %[[ARG]] : f32
// CHECK-NEXT: %[[COS:.*]] = math.cos %[[ARG]] : f32
// CHECK-NEXT: %[[TS:.*]] = arith.mulf %[[TARG]], %[[COS]] : f32
// CHECK-NEXT: %[[W:.*]] = adjit.load %[[V]]
// CHECK-NEXT: %[[TW:.*]] = adjit.load %[[TV]]
// CHECK-NEXT: %[[L:.*]]:2 = scf.for %{{.*}} = %{{.*}} to %[[UB]] step %{{.*}} iter_args(%[[U:.*]] = %[[W]], %[[TU:.*]] = %[[TW]]) -> (vector<3xf32>, vector<3xf32>)
// CHECK-NEXT: %[[SB:.*]] = vector.broadcast %[[S]] : f32 to vector<3xf32>
// CHECK-NEXT: %[[TSB:.*]] = vector.broadcast %[[TS]] : f32 to vector<3xf32>
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[U]], %[[SB]] : vector<3xf32>
// CHECK-NEXT: %[[F1:.*]] = arith.mulf %[[TU]], %[[SB]] : vector<3xf32>
// CHECK-NEXT: %[[F2:.*]] = arith.mulf %[[TSB]], %[[U]] : vector<3xf32>
// CHECK-NEXT: %[[TM:.*]] = arith.addf %[[F1]], %[[F2]] : vector<3xf32>
// CHECK-NEXT: scf.yield %[[M]], %[[TM]] : vector<3xf32>, vector<3xf32>
// CHECK: %[[R:.*]] = vector.reduction <add>, %[[L]]#0 : vector<3xf32> into f32
// CHECK-NEXT: %[[TR:.*]] = vector.reduction <add>, %[[L]]#1 : vector<3xf32> into f32
// CHECK-NEXT: %[[P:.*]] = arith.cmpf ogt, %[[R]], %[[ZERO:.*]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.select %[[P]], %[[R]], %[[ZERO]] : f32
// CHECK-NEXT: %[[TQ:.*]] = arith.select %[[P]], %[[TR]], %[[ZERO]] : f32
// CHECK-NEXT: adjit.store %[[Q]], %[[Y]]
// CHECK-NEXT: adjit.store %[[TQ]], %[[TY]]
// LLVM: llvm.func @k_tangent_cpu_entry(
func.func private @scale(%a: f32) -> f32 {
  %c3 = arith.constant 3.0 : f32
  %r = arith.mulf %a, %c3 : f32
  return %r : f32
}
func.func @k(%x: !adjit.array<f32, 1>, %v: !adjit.array<vector<3xf32>, 1>, %n: i32, %y: !adjit.array<f32, 1>) attributes {adjit.kernel, adjit.arg_names = ["x", "v", "n", "y"]} {
  %i = adjit.tid : index
  %ub = arith.index_cast %n : i32 to index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = adjit.call @scale(%a) : (f32) -> f32
  %s = math.sin %b : f32
  %w = adjit.load %v[%i] : !adjit.array<vector<3xf32>, 1>
  %lb = arith.constant 0 : index
  %st = arith.constant 1 : index
  %acc = scf.for %k = %lb to %ub step %st iter_args(%u = %w) -> vector<3xf32> {
    %sb = vector.broadcast %s : f32 to vector<3xf32>
    %m = arith.mulf %u, %sb : vector<3xf32>
    scf.yield %m : vector<3xf32>
  }
  %r = vector.reduction <add>, %acc : vector<3xf32> into f32
  %zero = arith.constant 0.0 : f32
  %p = arith.cmpf ogt, %r, %zero : f32
  %q = scf.if %p -> f32 {
    scf.yield %r : f32
  } else {
    scf.yield %zero : f32
  }
  adjit.store %q, %y[%i] : !adjit.array<f32, 1>
  return
}
