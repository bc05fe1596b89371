// RUN: adjit-opt %s --adjit-adjoint | FileCheck %s --check-prefixes=RAW,PRIMAL
// RUN: adjit-opt %s --adjit-adjoint --canonicalize --cse | FileCheck %s --check-prefixes=CANON,PRIMAL
// RUN: adjit-opt %s --adjit-differentiate | FileCheck %s --check-prefix=PIPE

// adjit-adjoint: the rules of adjit.stop_gradient (no gradient passes) and
// of adjit.call to a device function with a hand-written adjoint
// (`adjit.custom_adjoint = @f_grad`: f_grad takes f's arguments, then the
// adjoints of f's results, and returns the adjoints of f's float arguments
// in order).

// The device functions are kept as they are, and adjit-differentiate does
// not inline the no_inline function.
// PRIMAL-LABEL: func.func private @f(
// PRIMAL-SAME: attributes {adjit.custom_adjoint = @f_grad, no_inline}
// PRIMAL-LABEL: func.func private @f_grad(
// PIPE-LABEL: func.func private @f(
// PIPE-LABEL: func.func private @f_grad(
func.func private @f(%v: f32, %k: i32, %s: f32) -> f32 attributes {adjit.custom_adjoint = @f_grad, no_inline} {
  %r = arith.mulf %v, %s : f32
  return %r : f32
}
func.func private @f_grad(%v: f32, %k: i32, %s: f32, %dr: f32) -> (f32, f32) {
  %dv = arith.mulf %dr, %s : f32
  %ds = arith.mulf %dr, %v : f32
  return %dv, %ds : f32, f32
}

/// t = f(a, 7, b) * stop_gradient(b): the call's adjoint G * sg(b) goes to
/// @f_grad with the replayed arguments; its two results are the adjoints of
/// the float arguments a and b (the i32 gets none), and nothing flows back
/// through stop_gradient into b.
// PRIMAL-LABEL: func.func @k(
// RAW-LABEL: func.func @k_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[SEVEN:.*]] = arith.constant 7 : i32
// RAW-NEXT: %[[R:.*]] = adjit.call @f(%[[A]], %[[SEVEN]], %[[B]]) : (f32, i32, f32) -> f32
// RAW-NEXT: %[[SG:.*]] = adjit.stop_gradient %[[B]] : f32
// RAW-NEXT: arith.mulf %[[R]], %[[SG]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GZ]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[DR:.*]] = arith.mulf %[[G]], %[[SG]] : f32
// RAW-NEXT: arith.mulf %[[G]], %[[R]] : f32
// RAW-NEXT: %[[D:.*]]:2 = adjit.call @f_grad(%[[A]], %[[SEVEN]], %[[B]], %[[DR]]) : (f32, i32, f32, f32) -> (f32, f32)
// RAW-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[D]]#1 : f32
// RAW-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]]#0 : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @k_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON-DAG: %[[SEVEN:.*]] = arith.constant 7 : i32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.call @f(%[[A]], %[[SEVEN]], %[[B]])
// CANON-NEXT: %[[SG:.*]] = adjit.stop_gradient %[[B]] : f32
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[DR:.*]] = arith.mulf %[[G]], %[[SG]] : f32
// CANON-NEXT: %[[D:.*]]:2 = adjit.call @f_grad(%[[A]], %[[SEVEN]], %[[B]], %[[DR]]) : (f32, i32, f32, f32) -> (f32, f32)
// CANON-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[D]]#1 : f32
// CANON-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]]#0 : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
// PIPE-LABEL: func.func @k_adjoint(
// PIPE: adjit.call @f_grad(
func.func @k(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = adjit.load %y[%i] : !adjit.array<f32, 1>
  %c = arith.constant 7 : i32
  %r = adjit.call @f(%a, %c, %b) : (f32, i32, f32) -> f32
  %sg = adjit.stop_gradient %b : f32
  %t = arith.mulf %r, %sg : f32
  adjit.store %t, %z[%i] : !adjit.array<f32, 1>
  return
}
