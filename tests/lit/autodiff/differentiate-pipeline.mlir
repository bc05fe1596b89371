// RUN: adjit-opt %s --adjit-differentiate | FileCheck %s
// RUN: adjit-opt %s --adjit-differentiate | adjit-opt | FileCheck %s
// RUN: adjit-opt %s --pass-pipeline='builtin.module(adjit-differentiate)' | FileCheck %s

// The registered stage pipeline adjit-differentiate: inline device
// functions, replace each kernel by its adjoint (keep-primal=false), then
// canonicalize and cse.

/// The call to the private device function is inlined (and the function,
/// now dead, removed) before differentiation; the primal kernel is dropped.
/// y = sin(3 x) gives x the gradient G * cos(3 x) * 3, accumulated at the
/// thread's own element.
// CHECK-NOT: func.func private @scale
// CHECK-NOT: func.func @k(
// CHECK-LABEL: func.func @k_adjoint(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CHECK-SAME: attributes {adjit.arg_names = ["x", "y", "adj_x", "adj_y"], adjit.kernel}
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[THREE:.*]] = arith.constant 3.000000e+00 : f32
// CHECK: %[[I:.*]] = adjit.tid : index
// CHECK-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CHECK-NEXT: %[[ARG:.*]] = arith.mulf %[[A]], %[[THREE]] : f32
// CHECK-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CHECK-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CHECK-NEXT: %[[COS:.*]] = math.cos %[[ARG]] : f32
// CHECK-NEXT: %[[DARG:.*]] = arith.mulf %[[G]], %[[COS]] : f32
// CHECK-NEXT: %[[DA:.*]] = arith.mulf %[[DARG]], %[[THREE]] : f32
// CHECK-NEXT: %[[OLD:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CHECK-NEXT: %[[NEW:.*]] = arith.addf %[[OLD]], %[[DA]] : f32
// CHECK-NEXT: adjit.store %[[NEW]], %[[GX]][%[[I]]] : <f32, 1>
// CHECK-NEXT: return
// CHECK-NOT: adjit.call
// CHECK-NOT: func.func
func.func private @scale(%v: f32, %s: f32) -> f32 {
  %r = arith.mulf %v, %s : f32
  %t = math.sin %r : f32
  return %t : f32
}
func.func @k(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel, adjit.arg_names = ["x", "y"]} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %c3 = arith.constant 3.0 : f32
  %r = adjit.call @scale(%a, %c3) : (f32, f32) -> f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}
