// RUN: adjit-opt %s --adjit-adjoint | FileCheck %s --check-prefixes=RAW,PRIMAL
// RUN: adjit-opt %s --adjit-adjoint --canonicalize --cse | FileCheck %s --check-prefixes=CANON,PRIMAL

// adjit-adjoint: the derivative rules of the arith ops, on the raw adjoint
// (prefix RAW; the replayed primal, then the rules in reverse order) and
// after canonicalize,cse (prefix CANON; only what the gradient needs).
// Each kernel loads its operands from x (and y) at the thread's own element,
// applies one op and stores the result into z. The incoming adjoint G is the
// gradient slot of z, read and zeroed by the store rule; each operand's
// adjoint D is added into its gradient array by the load rule (load, addf,
// store: no atomics, as every access is to the thread's own element), the
// last load first. The primal kernels are kept (keep-primal defaults to
// true); their labels fence each adjoint's checks.

/// addf: both operands receive the incoming adjoint unchanged.
// PRIMAL-LABEL: func.func @addf(
// RAW-LABEL: func.func @addf_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <f32, 1>
// RAW-NEXT: arith.addf %[[A]], %[[B]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GZ]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[G]] : f32
// RAW-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[G]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @addf_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// CANON-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON-NEXT: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[G]] : f32
// CANON-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[G]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @addf(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = adjit.load %y[%i] : !adjit.array<f32, 1>
  %r = arith.addf %a, %b : f32
  adjit.store %r, %z[%i] : !adjit.array<f32, 1>
  return
}

/// subf: the lhs receives G, the rhs -G.
// PRIMAL-LABEL: func.func @subf(
// RAW-LABEL: func.func @subf_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW: arith.subf
// RAW: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// RAW: %[[NG:.*]] = arith.negf %[[G]] : f32
// RAW-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[NG]] : f32
// RAW-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[G]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @subf_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %{{.*}}, %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NG:.*]] = arith.negf %[[G]] : f32
// CANON-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[NG]] : f32
// CANON-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[G]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @subf(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = adjit.load %y[%i] : !adjit.array<f32, 1>
  %r = arith.subf %a, %b : f32
  adjit.store %r, %z[%i] : !adjit.array<f32, 1>
  return
}

/// mulf: the lhs receives G * (replayed rhs), the rhs G * (replayed lhs).
// PRIMAL-LABEL: func.func @mulf(
// RAW-LABEL: func.func @mulf_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <f32, 1>
// RAW-NEXT: arith.mulf %[[A]], %[[B]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// RAW: adjit.store %{{.*}}, %[[GZ]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[DA:.*]] = arith.mulf %[[G]], %[[B]] : f32
// RAW-NEXT: %[[DB:.*]] = arith.mulf %[[G]], %[[A]] : f32
// RAW-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[DB]] : f32
// RAW-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DA]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @mulf_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %{{.*}}, %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[DA:.*]] = arith.mulf %[[G]], %[[B]] : f32
// CANON-NEXT: %[[DB:.*]] = arith.mulf %[[G]], %[[A]] : f32
// CANON-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[DB]] : f32
// CANON-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DA]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @mulf(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = adjit.load %y[%i] : !adjit.array<f32, 1>
  %r = arith.mulf %a, %b : f32
  adjit.store %r, %z[%i] : !adjit.array<f32, 1>
  return
}

/// A value used twice accumulates both contributions: d(a*a) = G*a + G*a,
/// which cse turns into one product added to itself.
// PRIMAL-LABEL: func.func @mulf_square(
// RAW-LABEL: func.func @mulf_square_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// RAW: %[[D1:.*]] = arith.mulf %[[G]], %[[A]] : f32
// RAW-NEXT: %[[D2:.*]] = arith.mulf %[[G]], %[[A]] : f32
// RAW-NEXT: %[[SUM:.*]] = arith.addf %[[D1]], %[[D2]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[SUM]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @mulf_square_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %{{.*}}, %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[A]] : f32
// CANON-NEXT: %[[SUM:.*]] = arith.addf %[[D]], %[[D]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[SUM]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @mulf_square(%x: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = arith.mulf %a, %a : f32
  adjit.store %r, %z[%i] : !adjit.array<f32, 1>
  return
}

/// divf: q = a / b; the lhs receives G / b, the rhs -((G / b) * q), i.e.
/// -G a / b^2, reusing the replayed quotient.
// PRIMAL-LABEL: func.func @divf(
// RAW-LABEL: func.func @divf_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[Q:.*]] = arith.divf %[[A]], %[[B]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// RAW: adjit.store %{{.*}}, %[[GZ]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[DA:.*]] = arith.divf %[[G]], %[[B]] : f32
// RAW-NEXT: %[[T:.*]] = arith.mulf %[[DA]], %[[Q]] : f32
// RAW-NEXT: %[[DB:.*]] = arith.negf %[[T]] : f32
// RAW-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[DB]] : f32
// RAW-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DA]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @divf_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[Q:.*]] = arith.divf %[[A]], %[[B]] : f32
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %{{.*}}, %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[DA:.*]] = arith.divf %[[G]], %[[B]] : f32
// CANON-NEXT: %[[T:.*]] = arith.mulf %[[DA]], %[[Q]] : f32
// CANON-NEXT: %[[DB:.*]] = arith.negf %[[T]] : f32
// CANON-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[DB]] : f32
// CANON-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DA]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @divf(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = adjit.load %y[%i] : !adjit.array<f32, 1>
  %r = arith.divf %a, %b : f32
  adjit.store %r, %z[%i] : !adjit.array<f32, 1>
  return
}

/// remf (C's fmod, x - trunc(x / y) y): the lhs receives G, the rhs
/// G * -trunc(a / b), the quotient truncated towards zero.
// PRIMAL-LABEL: func.func @remf(
// RAW-LABEL: func.func @remf_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <f32, 1>
// RAW-NEXT: arith.remf %[[A]], %[[B]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// RAW: adjit.store %{{.*}}, %[[GZ]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[Q:.*]] = arith.divf %[[A]], %[[B]] : f32
// RAW-NEXT: %[[T:.*]] = math.trunc %[[Q]] : f32
// RAW-NEXT: %[[NT:.*]] = arith.negf %[[T]] : f32
// RAW-NEXT: %[[DB:.*]] = arith.mulf %[[G]], %[[NT]] : f32
// RAW-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[DB]] : f32
// RAW-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[G]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @remf_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %{{.*}}, %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[Q:.*]] = arith.divf %[[A]], %[[B]] : f32
// CANON-NEXT: %[[T:.*]] = math.trunc %[[Q]] : f32
// CANON-NEXT: %[[NT:.*]] = arith.negf %[[T]] : f32
// CANON-NEXT: %[[DB:.*]] = arith.mulf %[[G]], %[[NT]] : f32
// CANON-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[DB]] : f32
// CANON-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[G]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @remf(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = adjit.load %y[%i] : !adjit.array<f32, 1>
  %r = arith.remf %a, %b : f32
  adjit.store %r, %z[%i] : !adjit.array<f32, 1>
  return
}

/// negf: the operand receives -G.
// PRIMAL-LABEL: func.func @negf(
// RAW-LABEL: func.func @negf_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW: arith.negf
// RAW: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// RAW: adjit.store %{{.*}}, %[[GZ]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[D:.*]] = arith.negf %[[G]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @negf_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %{{.*}}, %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[D:.*]] = arith.negf %[[G]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @negf(%x: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = arith.negf %a : f32
  adjit.store %r, %z[%i] : !adjit.array<f32, 1>
  return
}

/// maximumf: G goes to the operand that was selected, the lhs on ties
/// (oge on the replayed operands); the other receives zero.
// PRIMAL-LABEL: func.func @maximumf(
// RAW-LABEL: func.func @maximumf_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <f32, 1>
// RAW-NEXT: arith.maximumf %[[A]], %[[B]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// RAW: adjit.store %{{.*}}, %[[GZ]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[PICK:.*]] = arith.cmpf oge, %[[A]], %[[B]] : f32
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: %[[DA:.*]] = arith.select %[[PICK]], %[[G]], %[[ZERO]] : f32
// RAW-NEXT: %[[DB:.*]] = arith.select %[[PICK]], %[[ZERO]], %[[G]] : f32
// RAW-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[DB]] : f32
// RAW-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DA]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @maximumf_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// CANON-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON-NEXT: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[PICK:.*]] = arith.cmpf oge, %[[A]], %[[B]] : f32
// CANON-NEXT: %[[DA:.*]] = arith.select %[[PICK]], %[[G]], %[[ZERO]] : f32
// CANON-NEXT: %[[DB:.*]] = arith.select %[[PICK]], %[[ZERO]], %[[G]] : f32
// CANON-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[DB]] : f32
// CANON-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DA]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @maximumf(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = adjit.load %y[%i] : !adjit.array<f32, 1>
  %r = arith.maximumf %a, %b : f32
  adjit.store %r, %z[%i] : !adjit.array<f32, 1>
  return
}

/// minimumf: as maximumf with ole; on vectors the mask and zero are vectors.
// PRIMAL-LABEL: func.func @minimumf(
// RAW-LABEL: func.func @minimumf_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<vector<3xf64>, 1>, %[[Y:[^:]*]]: !adjit.array<vector<3xf64>, 1>, %[[Z:[^:]*]]: !adjit.array<vector<3xf64>, 1>, %[[GX:[^:]*]]: !adjit.array<vector<3xf64>, 1>, %[[GY:[^:]*]]: !adjit.array<vector<3xf64>, 1>, %[[GZ:[^:]*]]: !adjit.array<vector<3xf64>, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <vector<3xf64>, 1>
// RAW-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <vector<3xf64>, 1>
// RAW-NEXT: arith.minimumf %[[A]], %[[B]] : vector<3xf64>
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <vector<3xf64>, 1>
// RAW: adjit.store %{{.*}}, %[[GZ]][%[[I]]] : <vector<3xf64>, 1>
// RAW-NEXT: %[[PICK:.*]] = arith.cmpf ole, %[[A]], %[[B]] : vector<3xf64>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<3xf64>
// RAW-NEXT: %[[DA:.*]] = arith.select %[[PICK]], %[[G]], %[[ZERO]] : vector<3xi1>, vector<3xf64>
// RAW-NEXT: %[[DB:.*]] = arith.select %[[PICK]], %[[ZERO]], %[[G]] : vector<3xi1>, vector<3xf64>
// RAW-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <vector<3xf64>, 1>
// RAW-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[DB]] : vector<3xf64>
// RAW-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <vector<3xf64>, 1>
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <vector<3xf64>, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DA]] : vector<3xf64>
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <vector<3xf64>, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @minimumf_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<vector<3xf64>, 1>, %[[Y:[^:]*]]: !adjit.array<vector<3xf64>, 1>, %[[Z:[^:]*]]: !adjit.array<vector<3xf64>, 1>, %[[GX:[^:]*]]: !adjit.array<vector<3xf64>, 1>, %[[GY:[^:]*]]: !adjit.array<vector<3xf64>, 1>, %[[GZ:[^:]*]]: !adjit.array<vector<3xf64>, 1>)
// CANON-NEXT: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<3xf64>
// CANON-NEXT: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <vector<3xf64>, 1>
// CANON-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <vector<3xf64>, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <vector<3xf64>, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GZ]][%[[I]]] : <vector<3xf64>, 1>
// CANON-NEXT: %[[PICK:.*]] = arith.cmpf ole, %[[A]], %[[B]] : vector<3xf64>
// CANON-NEXT: %[[DA:.*]] = arith.select %[[PICK]], %[[G]], %[[ZERO]] : vector<3xi1>, vector<3xf64>
// CANON-NEXT: %[[DB:.*]] = arith.select %[[PICK]], %[[ZERO]], %[[G]] : vector<3xi1>, vector<3xf64>
// CANON-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <vector<3xf64>, 1>
// CANON-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[DB]] : vector<3xf64>
// CANON-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <vector<3xf64>, 1>
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <vector<3xf64>, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DA]] : vector<3xf64>
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <vector<3xf64>, 1>
// CANON-NEXT: return
func.func @minimumf(%x: !adjit.array<vector<3xf64>, 1>, %y: !adjit.array<vector<3xf64>, 1>, %z: !adjit.array<vector<3xf64>, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<vector<3xf64>, 1>
  %b = adjit.load %y[%i] : !adjit.array<vector<3xf64>, 1>
  %r = arith.minimumf %a, %b : vector<3xf64>
  adjit.store %r, %z[%i] : !adjit.array<vector<3xf64>, 1>
  return
}

/// select: G goes to the chosen value, selected again on the replayed
/// condition; the other value receives zero.
// PRIMAL-LABEL: func.func @select(
// RAW-LABEL: func.func @select_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[C:.*]] = arith.cmpf olt, %[[A]], %[[B]] : f32
// RAW-NEXT: arith.select %[[C]], %[[B]], %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// RAW: adjit.store %{{.*}}, %[[GZ]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: %[[DB:.*]] = arith.select %[[C]], %[[G]], %[[ZERO]] : f32
// RAW-NEXT: %[[DA:.*]] = arith.select %[[C]], %[[ZERO]], %[[G]] : f32
// RAW-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[DB]] : f32
// RAW-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DA]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @select_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// CANON-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON-NEXT: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[C:.*]] = arith.cmpf olt, %[[A]], %[[B]] : f32
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[DB:.*]] = arith.select %[[C]], %[[G]], %[[ZERO]] : f32
// CANON-NEXT: %[[DA:.*]] = arith.select %[[C]], %[[ZERO]], %[[G]] : f32
// CANON-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[DB]] : f32
// CANON-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DA]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @select(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = adjit.load %y[%i] : !adjit.array<f32, 1>
  %c = arith.cmpf olt, %a, %b : f32
  %r = arith.select %c, %b, %a : f32
  adjit.store %r, %z[%i] : !adjit.array<f32, 1>
  return
}

/// extf: the f32 operand receives G (f64) truncated back to f32.
// PRIMAL-LABEL: func.func @extf(
// RAW-LABEL: func.func @extf_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f64, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f64, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW: arith.extf
// RAW: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f64, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// RAW-NEXT: adjit.store %[[ZERO]], %[[GZ]][%[[I]]] : <f64, 1>
// RAW-NEXT: %[[D:.*]] = arith.truncf %[[G]] : f64 to f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @extf_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f64, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f64, 1>)
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f64, 1>
// CANON-NEXT: adjit.store %{{.*}}, %[[GZ]][%[[I]]] : <f64, 1>
// CANON-NEXT: %[[D:.*]] = arith.truncf %[[G]] : f64 to f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @extf(%x: !adjit.array<f32, 1>, %z: !adjit.array<f64, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = arith.extf %a : f32 to f64
  adjit.store %r, %z[%i] : !adjit.array<f64, 1>
  return
}

/// truncf: the f64 operand receives G (f32) extended back to f64.
// PRIMAL-LABEL: func.func @truncf(
// RAW-LABEL: func.func @truncf_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f64, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f64, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW: arith.truncf
// RAW: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GZ]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[D:.*]] = arith.extf %[[G]] : f32 to f64
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f64, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f64
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f64, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @truncf_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f64, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f64, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %{{.*}}, %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[D:.*]] = arith.extf %[[G]] : f32 to f64
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f64, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f64
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f64, 1>
// CANON-NEXT: return
func.func @truncf(%x: !adjit.array<f64, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f64, 1>
  %r = arith.truncf %a : f64 to f32
  adjit.store %r, %z[%i] : !adjit.array<f32, 1>
  return
}
