// RUN: adjit-opt %s --adjit-adjoint | FileCheck %s --check-prefixes=RAW,PRIMAL
// RUN: adjit-opt %s --adjit-adjoint --canonicalize --cse | FileCheck %s --check-prefixes=CANON,PRIMAL

// adjit-adjoint: the derivative rules of the math ops, on the raw adjoint
// (prefix RAW) and after canonicalize,cse (prefix CANON). Each kernel is
// y[i] = f(x[i]) (binary ops: z[i] = f(x[i], y[i])) at the thread's own
// element; G is the gradient slot of the output (read and zeroed by the
// store rule), and the operand's adjoint D = G * f'(x) is added into grad_x
// (load, addf, store: own-element gradients need no atomics). Derivatives
// are in terms of the replayed operand A and the replayed result R. Where a
// rule builds two operands of one op (a constant and a product), their raw
// order depends on the C++ compiler's argument evaluation order, so RAW
// checks them with RAW-DAG; CANON checks the exact constants, which
// canonicalize hoists to the function entry.

/// sqrt: f'(x) = 0.5 / R.
// PRIMAL-LABEL: func.func @sqrt(
// RAW-LABEL: func.func @sqrt_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[R:.*]] = math.sqrt %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// RAW-NEXT: %[[DER:.*]] = arith.divf %[[HALF]], %[[R]] : f32
// RAW-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @sqrt_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[R:.*]] = math.sqrt %[[A]] : f32
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[DER:.*]] = arith.divf %[[HALF]], %[[R]] : f32
// CANON-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @sqrt(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.sqrt %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// exp: f'(x) = R, the replayed result itself.
// PRIMAL-LABEL: func.func @exp(
// RAW-LABEL: func.func @exp_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[R:.*]] = math.exp %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[R]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @exp_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[R:.*]] = math.exp %[[A]] : f32
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[R]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @exp(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.exp %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// log: f'(x) = 1 / A.
// PRIMAL-LABEL: func.func @log(
// RAW-LABEL: func.func @log_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[R:.*]] = math.log %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[C:.*]] = arith.constant 1.000000e+00 : f32
// RAW-NEXT: %[[DER:.*]] = arith.divf %[[C]], %[[A]] : f32
// RAW-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @log_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[C:.*]] = arith.constant 1.000000e+00 : f32
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[DER:.*]] = arith.divf %[[C]], %[[A]] : f32
// CANON-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @log(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.log %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// log2: f'(x) = (1 / ln 2) / A.
// PRIMAL-LABEL: func.func @log2(
// RAW-LABEL: func.func @log2_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[R:.*]] = math.log2 %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[C:.*]] = arith.constant 1.44269502 : f32
// RAW-NEXT: %[[DER:.*]] = arith.divf %[[C]], %[[A]] : f32
// RAW-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @log2_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[C:.*]] = arith.constant 1.44269502 : f32
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[DER:.*]] = arith.divf %[[C]], %[[A]] : f32
// CANON-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @log2(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.log2 %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// log10: f'(x) = (1 / ln 10) / A.
// PRIMAL-LABEL: func.func @log10(
// RAW-LABEL: func.func @log10_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[R:.*]] = math.log10 %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[C:.*]] = arith.constant 0.434294492 : f32
// RAW-NEXT: %[[DER:.*]] = arith.divf %[[C]], %[[A]] : f32
// RAW-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @log10_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[C:.*]] = arith.constant 0.434294492 : f32
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[DER:.*]] = arith.divf %[[C]], %[[A]] : f32
// CANON-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @log10(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.log10 %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// sin: f'(x) = cos(A).
// PRIMAL-LABEL: func.func @sin(
// RAW-LABEL: func.func @sin_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[R:.*]] = math.sin %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[DER:.*]] = math.cos %[[A]] : f32
// RAW-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @sin_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[DER:.*]] = math.cos %[[A]] : f32
// CANON-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @sin(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.sin %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// sinh: f'(x) = cosh(A).
// PRIMAL-LABEL: func.func @sinh(
// RAW-LABEL: func.func @sinh_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[R:.*]] = math.sinh %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[DER:.*]] = math.cosh %[[A]] : f32
// RAW-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @sinh_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[DER:.*]] = math.cosh %[[A]] : f32
// CANON-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @sinh(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.sinh %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// cosh: f'(x) = sinh(A).
// PRIMAL-LABEL: func.func @cosh(
// RAW-LABEL: func.func @cosh_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[R:.*]] = math.cosh %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[DER:.*]] = math.sinh %[[A]] : f32
// RAW-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @cosh_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[DER:.*]] = math.sinh %[[A]] : f32
// CANON-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @cosh(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.cosh %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// cos: f'(x) = -sin(A).
// PRIMAL-LABEL: func.func @cos(
// RAW-LABEL: func.func @cos_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[R:.*]] = math.cos %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[S:.*]] = math.sin %[[A]] : f32
// RAW-NEXT: %[[DER:.*]] = arith.negf %[[S]] : f32
// RAW-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @cos_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[S:.*]] = math.sin %[[A]] : f32
// CANON-NEXT: %[[DER:.*]] = arith.negf %[[S]] : f32
// CANON-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @cos(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.cos %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// tan: f'(x) = 1 + R * R.
// PRIMAL-LABEL: func.func @tan(
// RAW-LABEL: func.func @tan_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[R:.*]] = math.tan %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-DAG: %[[RR:.*]] = arith.mulf %[[R]], %[[R]] : f32
// RAW-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// RAW: %[[DER:.*]] = arith.addf %[[ONE]], %[[RR]] : f32
// RAW-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @tan_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[R:.*]] = math.tan %[[A]] : f32
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[RR:.*]] = arith.mulf %[[R]], %[[R]] : f32
// CANON-NEXT: %[[DER:.*]] = arith.addf %[[RR]], %[[ONE]] : f32
// CANON-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @tan(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.tan %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// asin: f'(x) = 1 / sqrt(1 - A * A).
// PRIMAL-LABEL: func.func @asin(
// RAW-LABEL: func.func @asin_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[R:.*]] = math.asin %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-DAG: %[[AA:.*]] = arith.mulf %[[A]], %[[A]] : f32
// RAW-DAG: arith.constant 1.000000e+00 : f32
// RAW: %[[OMS:.*]] = arith.subf %{{.*}}, %[[AA]] : f32
// RAW-NEXT: %[[SQ:.*]] = math.sqrt %[[OMS]] : f32
// RAW: %[[INV:.*]] = arith.divf %{{.*}}, %[[SQ]] : f32
// RAW-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[INV]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @asin_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[AA:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CANON-NEXT: %[[OMS:.*]] = arith.subf %[[ONE]], %[[AA]] : f32
// CANON-NEXT: %[[SQ:.*]] = math.sqrt %[[OMS]] : f32
// CANON-NEXT: %[[INV:.*]] = arith.divf %[[ONE]], %[[SQ]] : f32
// CANON-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[INV]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @asin(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.asin %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// acos: f'(x) = -1 / sqrt(1 - A * A).
// PRIMAL-LABEL: func.func @acos(
// RAW-LABEL: func.func @acos_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[R:.*]] = math.acos %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-DAG: %[[AA:.*]] = arith.mulf %[[A]], %[[A]] : f32
// RAW-DAG: arith.constant 1.000000e+00 : f32
// RAW: %[[OMS:.*]] = arith.subf %{{.*}}, %[[AA]] : f32
// RAW-NEXT: %[[SQ:.*]] = math.sqrt %[[OMS]] : f32
// RAW: %[[INV:.*]] = arith.divf %{{.*}}, %[[SQ]] : f32
// RAW-NEXT: %[[DER:.*]] = arith.negf %[[INV]] : f32
// RAW-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @acos_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[AA:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CANON-NEXT: %[[OMS:.*]] = arith.subf %[[ONE]], %[[AA]] : f32
// CANON-NEXT: %[[SQ:.*]] = math.sqrt %[[OMS]] : f32
// CANON-NEXT: %[[INV:.*]] = arith.divf %[[ONE]], %[[SQ]] : f32
// CANON-NEXT: %[[DER:.*]] = arith.negf %[[INV]] : f32
// CANON-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @acos(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.acos %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// atan: f'(x) = 1 / (1 + A * A).
// PRIMAL-LABEL: func.func @atan(
// RAW-LABEL: func.func @atan_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[R:.*]] = math.atan %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-DAG: %[[AA:.*]] = arith.mulf %[[A]], %[[A]] : f32
// RAW-DAG: arith.constant 1.000000e+00 : f32
// RAW: %[[DEN:.*]] = arith.addf %{{.*}}, %[[AA]] : f32
// RAW: %[[DER:.*]] = arith.divf %{{.*}}, %[[DEN]] : f32
// RAW-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @atan_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[AA:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CANON-NEXT: %[[DEN:.*]] = arith.addf %[[AA]], %[[ONE]] : f32
// CANON-NEXT: %[[DER:.*]] = arith.divf %[[ONE]], %[[DEN]] : f32
// CANON-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @atan(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.atan %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// tanh: f'(x) = 1 - R * R.
// PRIMAL-LABEL: func.func @tanh(
// RAW-LABEL: func.func @tanh_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[R:.*]] = math.tanh %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-DAG: %[[RR:.*]] = arith.mulf %[[R]], %[[R]] : f32
// RAW-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// RAW: %[[DER:.*]] = arith.subf %[[ONE]], %[[RR]] : f32
// RAW-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @tanh_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[R:.*]] = math.tanh %[[A]] : f32
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[RR:.*]] = arith.mulf %[[R]], %[[R]] : f32
// CANON-NEXT: %[[DER:.*]] = arith.subf %[[ONE]], %[[RR]] : f32
// CANON-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @tanh(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.tanh %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// absf: f'(x) = A < 0 ? -1 : 1 (the sign, +1 at zero).
// PRIMAL-LABEL: func.func @absf(
// RAW-LABEL: func.func @absf_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[R:.*]] = math.absf %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[Z0:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: %[[NEG:.*]] = arith.cmpf olt, %[[A]], %[[Z0]] : f32
// RAW-DAG: %[[PLUS:.*]] = arith.constant 1.000000e+00 : f32
// RAW-DAG: %[[MINUS:.*]] = arith.constant -1.000000e+00 : f32
// RAW: %[[DER:.*]] = arith.select %[[NEG]], %[[MINUS]], %[[PLUS]] : f32
// RAW-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @absf_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[MINUS:.*]] = arith.constant -1.000000e+00 : f32
// CANON-DAG: %[[PLUS:.*]] = arith.constant 1.000000e+00 : f32
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEG:.*]] = arith.cmpf olt, %[[A]], %[[ZERO]] : f32
// CANON-NEXT: %[[DER:.*]] = arith.select %[[NEG]], %[[MINUS]], %[[PLUS]] : f32
// CANON-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @absf(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.absf %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// floor is piecewise constant: x gets no gradient (grad_x is untouched), the
/// slot of y is still zeroed.
// PRIMAL-LABEL: func.func @floor(
// RAW-LABEL: func.func @floor_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[R:.*]] = math.floor %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @floor_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON-NEXT: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @floor(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.floor %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// ceil is piecewise constant: x gets no gradient (grad_x is untouched), the
/// slot of y is still zeroed.
// PRIMAL-LABEL: func.func @ceil(
// RAW-LABEL: func.func @ceil_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[R:.*]] = math.ceil %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @ceil_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON-NEXT: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @ceil(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.ceil %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// round is piecewise constant: x gets no gradient (grad_x is untouched), the
/// slot of y is still zeroed.
// PRIMAL-LABEL: func.func @round(
// RAW-LABEL: func.func @round_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[R:.*]] = math.round %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @round_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON-NEXT: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @round(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = math.round %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// The rules are elementwise on vectors: sqrt of a vector<2xf64> divides a
/// splat 0.5 by R.
// PRIMAL-LABEL: func.func @sqrt_vector(
// RAW-LABEL: func.func @sqrt_vector_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<vector<2xf64>, 1>, %[[Y:[^:]*]]: !adjit.array<vector<2xf64>, 1>, %[[GX:[^:]*]]: !adjit.array<vector<2xf64>, 1>, %[[GY:[^:]*]]: !adjit.array<vector<2xf64>, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <vector<2xf64>, 1>
// RAW-NEXT: %[[R:.*]] = math.sqrt %[[A]] : vector<2xf64>
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <vector<2xf64>, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<2xf64>
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <vector<2xf64>, 1>
// RAW-NEXT: %[[HALF:.*]] = arith.constant dense<5.000000e-01> : vector<2xf64>
// RAW-NEXT: %[[DER:.*]] = arith.divf %[[HALF]], %[[R]] : vector<2xf64>
// RAW-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : vector<2xf64>
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <vector<2xf64>, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : vector<2xf64>
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <vector<2xf64>, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @sqrt_vector_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<vector<2xf64>, 1>, %[[Y:[^:]*]]: !adjit.array<vector<2xf64>, 1>, %[[GX:[^:]*]]: !adjit.array<vector<2xf64>, 1>, %[[GY:[^:]*]]: !adjit.array<vector<2xf64>, 1>)
// CANON-DAG: %[[HALF:.*]] = arith.constant dense<5.000000e-01> : vector<2xf64>
// CANON-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<2xf64>
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <vector<2xf64>, 1>
// CANON-NEXT: %[[R:.*]] = math.sqrt %[[A]] : vector<2xf64>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <vector<2xf64>, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <vector<2xf64>, 1>
// CANON-NEXT: %[[DER:.*]] = arith.divf %[[HALF]], %[[R]] : vector<2xf64>
// CANON-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[DER]] : vector<2xf64>
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <vector<2xf64>, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : vector<2xf64>
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <vector<2xf64>, 1>
// CANON-NEXT: return
func.func @sqrt_vector(%x: !adjit.array<vector<2xf64>, 1>, %y: !adjit.array<vector<2xf64>, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<vector<2xf64>, 1>
  %r = math.sqrt %a : vector<2xf64>
  adjit.store %r, %y[%i] : !adjit.array<vector<2xf64>, 1>
  return
}

/// powf: r = a^b; a receives G * b * a^(b - 1), b receives G * R * log(a).
// PRIMAL-LABEL: func.func @powf(
// RAW-LABEL: func.func @powf_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[R:.*]] = math.powf %[[A]], %[[B]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GZ]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// RAW-NEXT: %[[YM1:.*]] = arith.subf %[[B]], %[[ONE]] : f32
// RAW-NEXT: %[[P:.*]] = math.powf %[[A]], %[[YM1]] : f32
// RAW-NEXT: %[[YP:.*]] = arith.mulf %[[B]], %[[P]] : f32
// RAW-NEXT: %[[DA:.*]] = arith.mulf %[[G]], %[[YP]] : f32
// RAW-NEXT: %[[LOG:.*]] = math.log %[[A]] : f32
// RAW-NEXT: %[[RL:.*]] = arith.mulf %[[R]], %[[LOG]] : f32
// RAW-NEXT: %[[DB:.*]] = arith.mulf %[[G]], %[[RL]] : f32
// RAW-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[DB]] : f32
// RAW-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DA]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @powf_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[R:.*]] = math.powf %[[A]], %[[B]] : f32
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[YM1:.*]] = arith.subf %[[B]], %[[ONE]] : f32
// CANON-NEXT: %[[P:.*]] = math.powf %[[A]], %[[YM1]] : f32
// CANON-NEXT: %[[YP:.*]] = arith.mulf %[[B]], %[[P]] : f32
// CANON-NEXT: %[[DA:.*]] = arith.mulf %[[G]], %[[YP]] : f32
// CANON-NEXT: %[[LOG:.*]] = math.log %[[A]] : f32
// CANON-NEXT: %[[RL:.*]] = arith.mulf %[[R]], %[[LOG]] : f32
// CANON-NEXT: %[[DB:.*]] = arith.mulf %[[G]], %[[RL]] : f32
// CANON-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[DB]] : f32
// CANON-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DA]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @powf(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = adjit.load %y[%i] : !adjit.array<f32, 1>
  %r = math.powf %a, %b : f32
  adjit.store %r, %z[%i] : !adjit.array<f32, 1>
  return
}

/// atan2: r = atan2(a, b) (a the y coordinate, b the x one); with
/// s = G / (b*b + a*a), a receives s * b and b receives -(s * a).
// PRIMAL-LABEL: func.func @atan2(
// RAW-LABEL: func.func @atan2_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[R:.*]] = math.atan2 %[[A]], %[[B]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GZ]][%[[I]]] : <f32, 1>
// RAW-DAG: %[[BB:.*]] = arith.mulf %[[B]], %[[B]] : f32
// RAW-DAG: %[[AA:.*]] = arith.mulf %[[A]], %[[A]] : f32
// RAW: %[[R2:.*]] = arith.addf %[[BB]], %[[AA]] : f32
// RAW-NEXT: %[[S:.*]] = arith.divf %[[G]], %[[R2]] : f32
// RAW-NEXT: %[[DA:.*]] = arith.mulf %[[S]], %[[B]] : f32
// RAW-NEXT: %[[T:.*]] = arith.mulf %[[S]], %[[A]] : f32
// RAW-NEXT: %[[DB:.*]] = arith.negf %[[T]] : f32
// RAW-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[DB]] : f32
// RAW-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DA]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @atan2_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GZ]][%[[I]]] : <f32, 1>
// CANON-DAG: %[[BB:.*]] = arith.mulf %[[B]], %[[B]] : f32
// CANON-DAG: %[[AA:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CANON: %[[R2:.*]] = arith.addf %[[BB]], %[[AA]] : f32
// CANON-NEXT: %[[S:.*]] = arith.divf %[[G]], %[[R2]] : f32
// CANON-NEXT: %[[DA:.*]] = arith.mulf %[[S]], %[[B]] : f32
// CANON-NEXT: %[[T:.*]] = arith.mulf %[[S]], %[[A]] : f32
// CANON-NEXT: %[[DB:.*]] = arith.negf %[[T]] : f32
// CANON-NEXT: %[[OLDY:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWY:.*]] = arith.addf %[[OLDY]], %[[DB]] : f32
// CANON-NEXT: adjit.store %[[NEWY]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DA]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @atan2(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = adjit.load %y[%i] : !adjit.array<f32, 1>
  %r = math.atan2 %a, %b : f32
  adjit.store %r, %z[%i] : !adjit.array<f32, 1>
  return
}

/// copysign: r = copysign(a, b) = |a| sign(b); a receives
/// G * (copysign(1, a) * copysign(1, b)) and b nothing (its gradient array is
/// never touched).
// PRIMAL-LABEL: func.func @copysign(
// RAW-LABEL: func.func @copysign_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// RAW-NEXT: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <f32, 1>
// RAW-NEXT: math.copysign %[[A]], %[[B]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GZ]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// RAW-NEXT: %[[SA:.*]] = math.copysign %[[ONE]], %[[A]] : f32
// RAW-NEXT: %[[SB:.*]] = math.copysign %[[ONE]], %[[B]] : f32
// RAW-NEXT: %[[S:.*]] = arith.mulf %[[SA]], %[[SB]] : f32
// RAW-NEXT: %[[DA:.*]] = arith.mulf %[[G]], %[[S]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DA]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @copysign_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GZ:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GZ]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[SA:.*]] = math.copysign %[[ONE]], %[[A]] : f32
// CANON-NEXT: %[[SB:.*]] = math.copysign %[[ONE]], %[[B]] : f32
// CANON-NEXT: %[[S:.*]] = arith.mulf %[[SA]], %[[SB]] : f32
// CANON-NEXT: %[[DA:.*]] = arith.mulf %[[G]], %[[S]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DA]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @copysign(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = adjit.load %y[%i] : !adjit.array<f32, 1>
  %r = math.copysign %a, %b : f32
  adjit.store %r, %z[%i] : !adjit.array<f32, 1>
  return
}
