// RUN: adjit-opt %s --adjit-tangent | FileCheck %s --check-prefixes=CHECK,PRIMAL
// RUN: adjit-opt %s --adjit-tangent=keep-primal=false | FileCheck %s --check-prefixes=CHECK,NOPRIMAL

// adjit-tangent: the tangent rules of the arith ops. Each kernel loads its
// operands from x (and y) at the thread's own element, applies one op and
// stores the result into z; the tangent kernel loads each operand's tangent
// TA (TB) from its tangent array right after the load, applies the rule
// right after the op, and stores the tangent into z's tangent array after
// the store. With keep-primal=false only the tangent kernels remain.

/// addf: TA + TB. Tangent arrays follow the arguments, one per float array.
// PRIMAL-LABEL: func.func @addf(
// NOPRIMAL-NOT: func.func @addf(
// CHECK-LABEL: func.func @addf_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TY:[^:]*]]: !adjit.array<f32, 1>, %[[TZ:[^:]*]]: !adjit.array<f32, 1>)
// CHECK-SAME: adjit.arg_names = ["x", "y", "z", "tan_x", "tan_y", "tan_z"]
// CHECK-NEXT: %[[I:.*]] = adjit.tid : index
// CHECK-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CHECK-NEXT: %[[TA:.*]] = adjit.load %[[TX]][%[[I]]] : <f32, 1>
// CHECK-NEXT: %[[B:.*]] = adjit.load %[[Y]][%[[I]]] : <f32, 1>
// CHECK-NEXT: %[[TB:.*]] = adjit.load %[[TY]][%[[I]]] : <f32, 1>
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[TR:.*]] = arith.addf %[[TA]], %[[TB]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]]] : <f32, 1>
// CHECK-NEXT: adjit.store %[[TR]], %[[TZ]][%[[I]]] : <f32, 1>
// CHECK-NEXT: return
func.func @addf(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel, adjit.arg_names = ["x", "y", "z"]} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = adjit.load %y[%i] : !adjit.array<f32, 1>
  %r = arith.addf %a, %b : f32
  adjit.store %r, %z[%i] : !adjit.array<f32, 1>
  return
}

/// subf: TA - TS; a constant minuend (zero tangent) gives -T. A float scalar
/// argument gets a scalar tangent; an integer argument gets none.
// CHECK-LABEL: func.func @subf_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[S:[^:]*]]: f32, %[[N:[^:]*]]: i32, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TS:[^:]*]]: f32, %[[TZ:[^:]*]]: !adjit.array<f32, 1>)
// CHECK-NEXT: %[[I:.*]] = adjit.tid : index
// CHECK-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CHECK-NEXT: %[[TA:.*]] = adjit.load %[[TX]][%[[I]]] : <f32, 1>
// CHECK-NEXT: %[[R:.*]] = arith.subf %[[A]], %[[S]] : f32
// CHECK-NEXT: %[[TR:.*]] = arith.subf %[[TA]], %[[TS]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[Q:.*]] = arith.subf %[[ONE]], %[[R]] : f32
// CHECK-NEXT: %[[TQ:.*]] = arith.negf %[[TR]] : f32
// CHECK-NEXT: adjit.store %[[Q]], %[[Z]][%[[I]]] : <f32, 1>
// CHECK-NEXT: adjit.store %[[TQ]], %[[TZ]][%[[I]]] : <f32, 1>
// CHECK-NEXT: return
func.func @subf(%x: !adjit.array<f32, 1>, %s: f32, %n: i32, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = arith.subf %a, %s : f32
  %c = arith.constant 1.0 : f32
  %q = arith.subf %c, %r : f32
  adjit.store %q, %z[%i] : !adjit.array<f32, 1>
  return
}

/// mulf: TA * B + TB * A (the product rule); times a constant: T * c only.
// CHECK-LABEL: func.func @mulf_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TY:[^:]*]]: !adjit.array<f32, 1>, %[[TZ:[^:]*]]: !adjit.array<f32, 1>)
// CHECK: %[[A:.*]] = adjit.load %[[X]]
// CHECK-NEXT: %[[TA:.*]] = adjit.load %[[TX]]
// CHECK-NEXT: %[[B:.*]] = adjit.load %[[Y]]
// CHECK-NEXT: %[[TB:.*]] = adjit.load %[[TY]]
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[DA:.*]] = arith.mulf %[[TA]], %[[B]] : f32
// CHECK-NEXT: %[[DB:.*]] = arith.mulf %[[TB]], %[[A]] : f32
// CHECK-NEXT: %[[TR:.*]] = arith.addf %[[DA]], %[[DB]] : f32
// CHECK-NEXT: %[[C:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT: %[[Q:.*]] = arith.mulf %[[C]], %[[R]] : f32
// CHECK-NEXT: %[[TQ:.*]] = arith.mulf %[[TR]], %[[C]] : f32
// CHECK-NEXT: adjit.store %[[Q]], %[[Z]]
// CHECK-NEXT: adjit.store %[[TQ]], %[[TZ]]
func.func @mulf(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = adjit.load %y[%i] : !adjit.array<f32, 1>
  %r = arith.mulf %a, %b : f32
  %c = arith.constant 3.0 : f32
  %q = arith.mulf %c, %r : f32
  adjit.store %q, %z[%i] : !adjit.array<f32, 1>
  return
}

/// divf: (TA - (A/B) TB) / B; with a constant numerator: -(R TB) / B; with a
/// constant denominator: TA / B.
// CHECK-LABEL: func.func @divf_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TY:[^:]*]]: !adjit.array<f32, 1>, %[[TZ:[^:]*]]: !adjit.array<f32, 1>)
// CHECK: %[[A:.*]] = adjit.load %[[X]]
// CHECK-NEXT: %[[TA:.*]] = adjit.load %[[TX]]
// CHECK-NEXT: %[[B:.*]] = adjit.load %[[Y]]
// CHECK-NEXT: %[[TB:.*]] = adjit.load %[[TY]]
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[RTB:.*]] = arith.mulf %[[R]], %[[TB]] : f32
// CHECK-NEXT: %[[NUM:.*]] = arith.subf %[[TA]], %[[RTB]] : f32
// CHECK-NEXT: %[[TR:.*]] = arith.divf %[[NUM]], %[[B]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[INV:.*]] = arith.divf %[[ONE]], %[[B]] : f32
// CHECK-NEXT: %[[ITB:.*]] = arith.mulf %[[INV]], %[[TB]] : f32
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[ITB]] : f32
// CHECK-NEXT: %[[TINV:.*]] = arith.divf %[[NEG]], %[[B]] : f32
// CHECK-NEXT: %[[HALF:.*]] = arith.divf %[[R]], %[[ONE]] : f32
// CHECK-NEXT: %[[THALF:.*]] = arith.divf %[[TR]], %[[ONE]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[INV]], %[[HALF]] : f32
// CHECK-NEXT: %[[TS:.*]] = arith.addf %[[TINV]], %[[THALF]] : f32
// CHECK-NEXT: adjit.store %[[S]], %[[Z]]
// CHECK-NEXT: adjit.store %[[TS]], %[[TZ]]
func.func @divf(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = adjit.load %y[%i] : !adjit.array<f32, 1>
  %r = arith.divf %a, %b : f32
  %one = arith.constant 1.0 : f32
  %inv = arith.divf %one, %b : f32
  %half = arith.divf %r, %one : f32
  %s = arith.addf %inv, %half : f32
  adjit.store %s, %z[%i] : !adjit.array<f32, 1>
  return
}

/// remf (C's fmod): TA - trunc(A / B) TB; with a constant divisor the
/// tangent is TA itself (no trunc is emitted); with a constant dividend only
/// the divisor's term remains.
// CHECK-LABEL: func.func @remf_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TY:[^:]*]]: !adjit.array<f32, 1>, %[[TZ:[^:]*]]: !adjit.array<f32, 1>)
// CHECK: %[[A:.*]] = adjit.load %[[X]]
// CHECK-NEXT: %[[TA:.*]] = adjit.load %[[TX]]
// CHECK-NEXT: %[[B:.*]] = adjit.load %[[Y]]
// CHECK-NEXT: %[[TB:.*]] = adjit.load %[[TY]]
// CHECK-NEXT: %[[R:.*]] = arith.remf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[T:.*]] = math.trunc %[[Q]] : f32
// CHECK-NEXT: %[[NT:.*]] = arith.negf %[[T]] : f32
// CHECK-NEXT: %[[FB:.*]] = arith.mulf %[[TB]], %[[NT]] : f32
// CHECK-NEXT: %[[TR:.*]] = arith.addf %[[TA]], %[[FB]] : f32
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[R2:.*]] = arith.remf %[[R]], %[[TWO]] : f32
// CHECK-NEXT: %[[R3:.*]] = arith.remf %[[TWO]], %[[B]] : f32
// CHECK-NEXT: %[[Q3:.*]] = arith.divf %[[TWO]], %[[B]] : f32
// CHECK-NEXT: %[[T3:.*]] = math.trunc %[[Q3]] : f32
// CHECK-NEXT: %[[NT3:.*]] = arith.negf %[[T3]] : f32
// CHECK-NEXT: %[[TR3:.*]] = arith.mulf %[[TB]], %[[NT3]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[R2]], %[[R3]] : f32
// CHECK-NEXT: %[[TS:.*]] = arith.addf %[[TR]], %[[TR3]] : f32
// CHECK-NEXT: adjit.store %[[S]], %[[Z]]
// CHECK-NEXT: adjit.store %[[TS]], %[[TZ]]
func.func @remf(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = adjit.load %y[%i] : !adjit.array<f32, 1>
  %r = arith.remf %a, %b : f32
  %two = arith.constant 2.0 : f32
  %r2 = arith.remf %r, %two : f32
  %r3 = arith.remf %two, %b : f32
  %s = arith.addf %r2, %r3 : f32
  adjit.store %s, %z[%i] : !adjit.array<f32, 1>
  return
}

/// negf: -TA. Constants and values computed from integers (sitofp) have no
/// tangent, so adding one passes the other's tangent through unchanged.
// CHECK-LABEL: func.func @negf_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TZ:[^:]*]]: !adjit.array<f32, 1>)
// CHECK: %[[TA:.*]] = adjit.load %[[TX]]
// CHECK-NEXT: %[[R:.*]] = arith.negf
// CHECK-NEXT: %[[TR:.*]] = arith.negf %[[TA]] : f32
// CHECK-NEXT: %[[II:.*]] = arith.index_cast
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[II]] : i32 to f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[F]], %[[R]] : f32
// CHECK-NEXT: adjit.store %[[S]], %[[Z]]
// CHECK-NEXT: adjit.store %[[TR]], %[[TZ]]
func.func @negf(%x: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = arith.negf %a : f32
  %ii = arith.index_cast %i : index to i32
  %f = arith.sitofp %ii : i32 to f32
  %s = arith.addf %f, %r : f32
  adjit.store %s, %z[%i] : !adjit.array<f32, 1>
  return
}

/// maximumf / minimumf: the tangent of the operand selected, the lhs on
/// ties (A >= B for max, A <= B for min), as the adjoint rule picks; a
/// constant operand contributes a zero tangent.
// CHECK-LABEL: func.func @minmax_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TY:[^:]*]]: !adjit.array<f32, 1>, %[[TZ:[^:]*]]: !adjit.array<f32, 1>)
// CHECK: %[[A:.*]] = adjit.load %[[X]]
// CHECK-NEXT: %[[TA:.*]] = adjit.load %[[TX]]
// CHECK-NEXT: %[[B:.*]] = adjit.load %[[Y]]
// CHECK-NEXT: %[[TB:.*]] = adjit.load %[[TY]]
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[PICK:.*]] = arith.cmpf oge, %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[TM:.*]] = arith.select %[[PICK]], %[[TA]], %[[TB]] : f32
// CHECK-NEXT: %[[C:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[N:.*]] = arith.minimumf %[[M]], %[[C]] : f32
// CHECK-NEXT: %[[PICK2:.*]] = arith.cmpf ole, %[[M]], %[[C]] : f32
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[TN:.*]] = arith.select %[[PICK2]], %[[TM]], %[[ZERO]] : f32
// CHECK-NEXT: adjit.store %[[N]], %[[Z]]
// CHECK-NEXT: adjit.store %[[TN]], %[[TZ]]
func.func @minmax(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = adjit.load %y[%i] : !adjit.array<f32, 1>
  %m = arith.maximumf %a, %b : f32
  %c = arith.constant 2.0 : f32
  %n = arith.minimumf %m, %c : f32
  adjit.store %n, %z[%i] : !adjit.array<f32, 1>
  return
}

/// select: the same select of the tangents (a zero for a constant branch);
/// the comparison feeding it has no tangent and needs no rule.
// CHECK-LABEL: func.func @select_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TY:[^:]*]]: !adjit.array<f32, 1>, %[[TZ:[^:]*]]: !adjit.array<f32, 1>)
// CHECK: %[[A:.*]] = adjit.load %[[X]]
// CHECK-NEXT: %[[TA:.*]] = adjit.load %[[TX]]
// CHECK-NEXT: %[[B:.*]] = adjit.load %[[Y]]
// CHECK-NEXT: %[[TB:.*]] = adjit.load %[[TY]]
// CHECK-NEXT: %[[P:.*]] = arith.cmpf olt, %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.select %[[P]], %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[TS:.*]] = arith.select %[[P]], %[[TA]], %[[TB]] : f32
// CHECK-NEXT: %[[C:.*]] = arith.constant 5.000000e+00 : f32
// CHECK-NEXT: %[[Q:.*]] = arith.select %[[P]], %[[C]], %[[S]] : f32
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[TQ:.*]] = arith.select %[[P]], %[[ZERO]], %[[TS]] : f32
// CHECK-NEXT: adjit.store %[[Q]], %[[Z]]
// CHECK-NEXT: adjit.store %[[TQ]], %[[TZ]]
func.func @select(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = adjit.load %y[%i] : !adjit.array<f32, 1>
  %p = arith.cmpf olt, %a, %b : f32
  %s = arith.select %p, %a, %b : f32
  %c = arith.constant 5.0 : f32
  %q = arith.select %p, %c, %s : f32
  adjit.store %q, %z[%i] : !adjit.array<f32, 1>
  return
}

/// extf / truncf: the tangent converted the same way.
// CHECK-LABEL: func.func @extf_truncf_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TZ:[^:]*]]: !adjit.array<f32, 1>)
// CHECK: %[[TA:.*]] = adjit.load %[[TX]]
// CHECK-NEXT: %[[W:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK-NEXT: %[[TW:.*]] = arith.extf %[[TA]] : f32 to f64
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[W]], %[[W]] : f64
// CHECK-NEXT: %[[D1:.*]] = arith.mulf %[[TW]], %[[W]] : f64
// CHECK-NEXT: %[[D2:.*]] = arith.mulf %[[TW]], %[[W]] : f64
// CHECK-NEXT: %[[TSQ:.*]] = arith.addf %[[D1]], %[[D2]] : f64
// CHECK-NEXT: %[[N:.*]] = arith.truncf %[[SQ]] : f64 to f32
// CHECK-NEXT: %[[TN:.*]] = arith.truncf %[[TSQ]] : f64 to f32
// CHECK-NEXT: adjit.store %[[N]], %[[Z]]
// CHECK-NEXT: adjit.store %[[TN]], %[[TZ]]
func.func @extf_truncf(%x: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %w = arith.extf %a : f32 to f64
  %sq = arith.mulf %w, %w : f64
  %n = arith.truncf %sq : f64 to f32
  adjit.store %n, %z[%i] : !adjit.array<f32, 1>
  return
}

/// Integer arrays get no tangent array, and integer arithmetic no tangent;
/// a float value stored with a zero tangent stores an explicit zero.
// CHECK-LABEL: func.func @inactive_tangent(
// CHECK-SAME: %[[K:[^:]*]]: !adjit.array<i32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[TZ:[^:]*]]: !adjit.array<f32, 1>)
// CHECK-NEXT: %[[I:.*]] = adjit.tid : index
// CHECK-NEXT: %[[N:.*]] = adjit.load %[[K]][%[[I]]] : <i32, 1>
// CHECK-NEXT: %[[M:.*]] = arith.muli %[[N]], %[[N]] : i32
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[M]] : i32 to f32
// CHECK-NEXT: adjit.store %[[F]], %[[Z]][%[[I]]] : <f32, 1>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: adjit.store %[[ZERO]], %[[TZ]][%[[I]]] : <f32, 1>
// CHECK-NEXT: return
func.func @inactive(%k: !adjit.array<i32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %n = adjit.load %k[%i] : !adjit.array<i32, 1>
  %m = arith.muli %n, %n : i32
  %f = arith.sitofp %m : i32 to f32
  adjit.store %f, %z[%i] : !adjit.array<f32, 1>
  return
}
