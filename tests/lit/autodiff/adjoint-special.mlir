// RUN: adjit-opt %s --adjit-adjoint --canonicalize --cse | FileCheck %s

// adjit-adjoint: the derivative rules of cbrt, erf, erfc and roundeven.
// Each kernel is y[i] = f(x[i]) at the thread's own element; G is the
// output's gradient slot and D = G * f'(A) is added into grad_x.

/// cbrt: f'(x) = 1 / (3 R^2), in terms of the replayed result R.
// CHECK-LABEL: func.func @cbrt_adjoint(
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[THREE:.*]] = arith.constant 3.000000e+00 : f32
// CHECK: %[[A:.*]] = adjit.load
// CHECK-NEXT: %[[R:.*]] = math.cbrt %[[A]] : f32
// CHECK-NEXT: %[[G:.*]] = adjit.load
// CHECK: %[[RR:.*]] = arith.mulf %[[R]], %[[R]] : f32
// CHECK-NEXT: %[[DEN:.*]] = arith.mulf %[[RR]], %[[THREE]] : f32
// CHECK-NEXT: %[[DER:.*]] = arith.divf %[[ONE]], %[[DEN]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// CHECK: arith.addf %{{.*}}, %[[D]] : f32
func.func @cbrt(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.cbrt %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// erf: f'(x) = 2 / sqrt(pi) * exp(-A^2).
// CHECK-LABEL: func.func @erf_adjoint(
// CHECK-DAG: %[[C:.*]] = arith.constant 1.128379{{[0-9]*}} : f32
// CHECK: %[[A:.*]] = adjit.load
// CHECK: %[[G:.*]] = adjit.load
// CHECK: %[[SQ:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CHECK-NEXT: %[[NEGSQ:.*]] = arith.negf %[[SQ]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[NEGSQ]] : f32
// CHECK-NEXT: %[[DER:.*]] = arith.mulf %[[E]], %[[C]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// CHECK: arith.addf %{{.*}}, %[[D]] : f32
func.func @erf(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.erf %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// erfc: f'(x) = -(2 / sqrt(pi) * exp(-A^2)).
// CHECK-LABEL: func.func @erfc_adjoint(
// CHECK: %[[A:.*]] = adjit.load
// CHECK: %[[G:.*]] = adjit.load
// CHECK: %[[E:.*]] = math.exp
// CHECK-NEXT: %[[POS:.*]] = arith.mulf %[[E]], %{{.*}} : f32
// CHECK-NEXT: %[[DER:.*]] = arith.negf %[[POS]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// CHECK: arith.addf %{{.*}}, %[[D]] : f32
func.func @erfc(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.erfc %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// roundeven (rint): piecewise constant, no gradient flows to x.
// CHECK-LABEL: func.func @rint_adjoint(
// CHECK-NOT: math.roundeven
// CHECK-NOT: arith.addf
// CHECK: return
func.func @rint(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.roundeven %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}
