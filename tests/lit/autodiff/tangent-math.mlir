// RUN: adjit-opt %s --adjit-tangent=keep-primal=false | FileCheck %s

// adjit-tangent: the tangent rules of the math ops. The derivative d of a
// unary op is the one the adjoint rule uses (Derivatives.h), in terms of the
// operand A and the result R; the tangent is TA * d, emitted right after the
// op and stored next to R. Piecewise-constant ops (floor, ceil, round,
// roundeven) have a zero tangent: an explicit zero is stored.

/// Every unary op on one loaded value A with tangent TA; result k is stored
/// to z[i, k].
// CHECK-LABEL: func.func @unary_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 2>, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TZ:[^:]*]]: !adjit.array<f32, 2>)
// CHECK-NEXT: %[[I:.*]] = adjit.tid : index
// CHECK-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CHECK-NEXT: %[[TA:.*]] = adjit.load %[[TX]][%[[I]]] : <f32, 1>
// sqrt: d = 0.5 / r
// CHECK-NEXT: %[[C:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[R:.*]] = math.sqrt %[[A]] : f32
// CHECK-NEXT: %[[H:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[D:.*]] = arith.divf %[[H]], %[[R]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[TA]], %[[D]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: adjit.store %[[T]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// exp: d = r
// CHECK-NEXT: %[[C:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[R:.*]] = math.exp %[[A]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[TA]], %[[R]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: adjit.store %[[T]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// log: d = 1 / x
// CHECK-NEXT: %[[C:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[R:.*]] = math.log %[[A]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[D:.*]] = arith.divf %[[ONE]], %[[A]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[TA]], %[[D]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: adjit.store %[[T]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// log2: d = (1 / ln 2) / x
// CHECK-NEXT: %[[C:.*]] = arith.constant 3 : index
// CHECK-NEXT: %[[R:.*]] = math.log2 %[[A]] : f32
// CHECK-NEXT: %[[K:.*]] = arith.constant 1.44269502 : f32
// CHECK-NEXT: %[[D:.*]] = arith.divf %[[K]], %[[A]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[TA]], %[[D]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: adjit.store %[[T]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// log10: d = (1 / ln 10) / x
// CHECK-NEXT: %[[C:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[R:.*]] = math.log10 %[[A]] : f32
// CHECK-NEXT: %[[K:.*]] = arith.constant 0.434294492 : f32
// CHECK-NEXT: %[[D:.*]] = arith.divf %[[K]], %[[A]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[TA]], %[[D]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: adjit.store %[[T]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// sin: d = cos x
// CHECK-NEXT: %[[C:.*]] = arith.constant 5 : index
// CHECK-NEXT: %[[R:.*]] = math.sin %[[A]] : f32
// CHECK-NEXT: %[[D:.*]] = math.cos %[[A]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[TA]], %[[D]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: adjit.store %[[T]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// cos: d = -sin x
// CHECK-NEXT: %[[C:.*]] = arith.constant 6 : index
// CHECK-NEXT: %[[R:.*]] = math.cos %[[A]] : f32
// CHECK-NEXT: %[[S:.*]] = math.sin %[[A]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.negf %[[S]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[TA]], %[[D]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: adjit.store %[[T]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// tan: d = 1 + r^2
// CHECK-NEXT: %[[C:.*]] = arith.constant 7 : index
// CHECK-NEXT: %[[R:.*]] = math.tan %[[A]] : f32
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[R]], %[[R]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[ONE]], %[[SQ]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[TA]], %[[D]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: adjit.store %[[T]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// asin: d = 1 / sqrt(1 - x^2)
// CHECK-NEXT: %[[C:.*]] = arith.constant 8 : index
// CHECK-NEXT: %[[R:.*]] = math.asin %[[A]] : f32
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[OMS:.*]] = arith.subf %[[ONE]], %[[SQ]] : f32
// CHECK-NEXT: %[[RT:.*]] = math.sqrt %[[OMS]] : f32
// CHECK-NEXT: %[[ONE2:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[D:.*]] = arith.divf %[[ONE2]], %[[RT]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[TA]], %[[D]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: adjit.store %[[T]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// acos: d = -1 / sqrt(1 - x^2)
// CHECK-NEXT: %[[C:.*]] = arith.constant 9 : index
// CHECK-NEXT: %[[R:.*]] = math.acos %[[A]] : f32
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[OMS:.*]] = arith.subf %[[ONE]], %[[SQ]] : f32
// CHECK-NEXT: %[[RT:.*]] = math.sqrt %[[OMS]] : f32
// CHECK-NEXT: %[[ONE2:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[DS:.*]] = arith.divf %[[ONE2]], %[[RT]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.negf %[[DS]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[TA]], %[[D]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: adjit.store %[[T]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// atan: d = 1 / (1 + x^2)
// CHECK-NEXT: %[[C:.*]] = arith.constant 10 : index
// CHECK-NEXT: %[[R:.*]] = math.atan %[[A]] : f32
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[OPS:.*]] = arith.addf %[[ONE]], %[[SQ]] : f32
// CHECK-NEXT: %[[ONE2:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[D:.*]] = arith.divf %[[ONE2]], %[[OPS]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[TA]], %[[D]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: adjit.store %[[T]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// sinh: d = cosh x
// CHECK-NEXT: %[[C:.*]] = arith.constant 11 : index
// CHECK-NEXT: %[[R:.*]] = math.sinh %[[A]] : f32
// CHECK-NEXT: %[[D:.*]] = math.cosh %[[A]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[TA]], %[[D]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: adjit.store %[[T]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// cosh: d = sinh x
// CHECK-NEXT: %[[C:.*]] = arith.constant 12 : index
// CHECK-NEXT: %[[R:.*]] = math.cosh %[[A]] : f32
// CHECK-NEXT: %[[D:.*]] = math.sinh %[[A]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[TA]], %[[D]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: adjit.store %[[T]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// tanh: d = 1 - r^2
// CHECK-NEXT: %[[C:.*]] = arith.constant 13 : index
// CHECK-NEXT: %[[R:.*]] = math.tanh %[[A]] : f32
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[R]], %[[R]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[ONE]], %[[SQ]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[TA]], %[[D]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: adjit.store %[[T]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// absf: d = -1 below zero, else 1
// CHECK-NEXT: %[[C:.*]] = arith.constant 14 : index
// CHECK-NEXT: %[[R:.*]] = math.absf %[[A]] : f32
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[NEG:.*]] = arith.cmpf olt, %[[A]], %[[ZERO]] : f32
// CHECK-NEXT: %[[P1:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[M1:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT: %[[D:.*]] = arith.select %[[NEG]], %[[M1]], %[[P1]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[TA]], %[[D]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: adjit.store %[[T]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// cbrt: d = 1 / (3 r^2)
// CHECK-NEXT: %[[C:.*]] = arith.constant 15 : index
// CHECK-NEXT: %[[R:.*]] = math.cbrt %[[A]] : f32
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[R]], %[[R]] : f32
// CHECK-NEXT: %[[THREE:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT: %[[DEN:.*]] = arith.mulf %[[THREE]], %[[SQ]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[D:.*]] = arith.divf %[[ONE]], %[[DEN]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[TA]], %[[D]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: adjit.store %[[T]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// erf: d = 2 / sqrt(pi) exp(-x^2)
// CHECK-NEXT: %[[C:.*]] = arith.constant 16 : index
// CHECK-NEXT: %[[R:.*]] = math.erf %[[A]] : f32
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CHECK-NEXT: %[[NSQ:.*]] = arith.negf %[[SQ]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[NSQ]] : f32
// CHECK-NEXT: %[[K:.*]] = arith.constant 1.12837923 : f32
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[K]], %[[E]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[TA]], %[[D]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: adjit.store %[[T]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// erfc: d = -2 / sqrt(pi) exp(-x^2)
// CHECK-NEXT: %[[C:.*]] = arith.constant 17 : index
// CHECK-NEXT: %[[R:.*]] = math.erfc %[[A]] : f32
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CHECK-NEXT: %[[NSQ:.*]] = arith.negf %[[SQ]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[NSQ]] : f32
// CHECK-NEXT: %[[K:.*]] = arith.constant 1.12837923 : f32
// CHECK-NEXT: %[[DE:.*]] = arith.mulf %[[K]], %[[E]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.negf %[[DE]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[TA]], %[[D]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: adjit.store %[[T]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// floor: zero
// CHECK-NEXT: %[[C:.*]] = arith.constant 18 : index
// CHECK-NEXT: %[[R:.*]] = math.floor %[[A]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: adjit.store %[[ZERO]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// ceil: zero
// CHECK-NEXT: %[[C:.*]] = arith.constant 19 : index
// CHECK-NEXT: %[[R:.*]] = math.ceil %[[A]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: adjit.store %[[ZERO]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// round: zero
// CHECK-NEXT: %[[C:.*]] = arith.constant 20 : index
// CHECK-NEXT: %[[R:.*]] = math.round %[[A]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: adjit.store %[[ZERO]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// roundeven: zero
// CHECK-NEXT: %[[C:.*]] = arith.constant 21 : index
// CHECK-NEXT: %[[R:.*]] = math.roundeven %[[A]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Z]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: adjit.store %[[ZERO]], %[[TZ]][%[[I]], %[[C]]] : <f32, 2>
// CHECK-NEXT: return
func.func @unary(%x: !adjit.array<f32, 1>, %z: !adjit.array<f32, 2>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %c0 = arith.constant 0 : index
  %r0 = math.sqrt %a : f32
  adjit.store %r0, %z[%i, %c0] : !adjit.array<f32, 2>
  %c1 = arith.constant 1 : index
  %r1 = math.exp %a : f32
  adjit.store %r1, %z[%i, %c1] : !adjit.array<f32, 2>
  %c2 = arith.constant 2 : index
  %r2 = math.log %a : f32
  adjit.store %r2, %z[%i, %c2] : !adjit.array<f32, 2>
  %c3 = arith.constant 3 : index
  %r3 = math.log2 %a : f32
  adjit.store %r3, %z[%i, %c3] : !adjit.array<f32, 2>
  %c4 = arith.constant 4 : index
  %r4 = math.log10 %a : f32
  adjit.store %r4, %z[%i, %c4] : !adjit.array<f32, 2>
  %c5 = arith.constant 5 : index
  %r5 = math.sin %a : f32
  adjit.store %r5, %z[%i, %c5] : !adjit.array<f32, 2>
  %c6 = arith.constant 6 : index
  %r6 = math.cos %a : f32
  adjit.store %r6, %z[%i, %c6] : !adjit.array<f32, 2>
  %c7 = arith.constant 7 : index
  %r7 = math.tan %a : f32
  adjit.store %r7, %z[%i, %c7] : !adjit.array<f32, 2>
  %c8 = arith.constant 8 : index
  %r8 = math.asin %a : f32
  adjit.store %r8, %z[%i, %c8] : !adjit.array<f32, 2>
  %c9 = arith.constant 9 : index
  %r9 = math.acos %a : f32
  adjit.store %r9, %z[%i, %c9] : !adjit.array<f32, 2>
  %c10 = arith.constant 10 : index
  %r10 = math.atan %a : f32
  adjit.store %r10, %z[%i, %c10] : !adjit.array<f32, 2>
  %c11 = arith.constant 11 : index
  %r11 = math.sinh %a : f32
  adjit.store %r11, %z[%i, %c11] : !adjit.array<f32, 2>
  %c12 = arith.constant 12 : index
  %r12 = math.cosh %a : f32
  adjit.store %r12, %z[%i, %c12] : !adjit.array<f32, 2>
  %c13 = arith.constant 13 : index
  %r13 = math.tanh %a : f32
  adjit.store %r13, %z[%i, %c13] : !adjit.array<f32, 2>
  %c14 = arith.constant 14 : index
  %r14 = math.absf %a : f32
  adjit.store %r14, %z[%i, %c14] : !adjit.array<f32, 2>
  %c15 = arith.constant 15 : index
  %r15 = math.cbrt %a : f32
  adjit.store %r15, %z[%i, %c15] : !adjit.array<f32, 2>
  %c16 = arith.constant 16 : index
  %r16 = math.erf %a : f32
  adjit.store %r16, %z[%i, %c16] : !adjit.array<f32, 2>
  %c17 = arith.constant 17 : index
  %r17 = math.erfc %a : f32
  adjit.store %r17, %z[%i, %c17] : !adjit.array<f32, 2>
  %c18 = arith.constant 18 : index
  %r18 = math.floor %a : f32
  adjit.store %r18, %z[%i, %c18] : !adjit.array<f32, 2>
  %c19 = arith.constant 19 : index
  %r19 = math.ceil %a : f32
  adjit.store %r19, %z[%i, %c19] : !adjit.array<f32, 2>
  %c20 = arith.constant 20 : index
  %r20 = math.round %a : f32
  adjit.store %r20, %z[%i, %c20] : !adjit.array<f32, 2>
  %c21 = arith.constant 21 : index
  %r21 = math.roundeven %a : f32
  adjit.store %r21, %z[%i, %c21] : !adjit.array<f32, 2>
  return
}

/// powf: TA * (B * A^(B-1)) + TB * (R * log A); with a constant exponent
/// only the first term is emitted (no log of a possibly negative base).
// CHECK-LABEL: func.func @powf_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TY:[^:]*]]: !adjit.array<f32, 1>, %[[TZ:[^:]*]]: !adjit.array<f32, 1>)
// CHECK: %[[A:.*]] = adjit.load %[[X]]
// CHECK-NEXT: %[[TA:.*]] = adjit.load %[[TX]]
// CHECK-NEXT: %[[B:.*]] = adjit.load %[[Y]]
// CHECK-NEXT: %[[TB:.*]] = adjit.load %[[TY]]
// CHECK-NEXT: %[[R:.*]] = math.powf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[BM1:.*]] = arith.subf %[[B]], %[[ONE]] : f32
// CHECK-NEXT: %[[P:.*]] = math.powf %[[A]], %[[BM1]] : f32
// CHECK-NEXT: %[[DA:.*]] = arith.mulf %[[B]], %[[P]] : f32
// CHECK-NEXT: %[[FA:.*]] = arith.mulf %[[TA]], %[[DA]] : f32
// CHECK-NEXT: %[[LOG:.*]] = math.log %[[A]] : f32
// CHECK-NEXT: %[[DB:.*]] = arith.mulf %[[R]], %[[LOG]] : f32
// CHECK-NEXT: %[[FB:.*]] = arith.mulf %[[TB]], %[[DB]] : f32
// CHECK-NEXT: %[[TR:.*]] = arith.addf %[[FA]], %[[FB]] : f32
// CHECK-NEXT: %[[THREE:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT: %[[Q:.*]] = math.powf %[[R]], %[[THREE]] : f32
// CHECK-NEXT: %[[ONE2:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[EM1:.*]] = arith.subf %[[THREE]], %[[ONE2]] : f32
// CHECK-NEXT: %[[P2:.*]] = math.powf %[[R]], %[[EM1]] : f32
// CHECK-NEXT: %[[DQ:.*]] = arith.mulf %[[THREE]], %[[P2]] : f32
// CHECK-NEXT: %[[TQ:.*]] = arith.mulf %[[TR]], %[[DQ]] : f32
// CHECK-NOT: math.log
// CHECK-NEXT: adjit.store %[[Q]], %[[Z]]
// CHECK-NEXT: adjit.store %[[TQ]], %[[TZ]]

/// atan2(A, B): (TA * B - TB * A) / (B^2 + A^2); with a constant first
/// operand c: -(T * c) / (R^2 + c^2).
// CHECK-LABEL: func.func @atan2_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TY:[^:]*]]: !adjit.array<f32, 1>, %[[TZ:[^:]*]]: !adjit.array<f32, 1>)
// CHECK: %[[A:.*]] = adjit.load %[[X]]
// CHECK-NEXT: %[[TA:.*]] = adjit.load %[[TX]]
// CHECK-NEXT: %[[B:.*]] = adjit.load %[[Y]]
// CHECK-NEXT: %[[TB:.*]] = adjit.load %[[TY]]
// CHECK-NEXT: %[[R:.*]] = math.atan2 %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[FA:.*]] = arith.mulf %[[TA]], %[[B]] : f32
// CHECK-NEXT: %[[FB:.*]] = arith.mulf %[[TB]], %[[A]] : f32
// CHECK-NEXT: %[[NUM:.*]] = arith.subf %[[FA]], %[[FB]] : f32
// CHECK-NEXT: %[[AA:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CHECK-NEXT: %[[BB:.*]] = arith.mulf %[[B]], %[[B]] : f32
// CHECK-NEXT: %[[N2:.*]] = arith.addf %[[BB]], %[[AA]] : f32
// CHECK-NEXT: %[[TR:.*]] = arith.divf %[[NUM]], %[[N2]] : f32
// CHECK-NEXT: %[[C:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT: %[[Q:.*]] = math.atan2 %[[C]], %[[R]] : f32
// CHECK-NEXT: %[[F:.*]] = arith.mulf %[[TR]], %[[C]] : f32
// CHECK-NEXT: %[[NF:.*]] = arith.negf %[[F]] : f32
// CHECK-NEXT: %[[CC:.*]] = arith.mulf %[[C]], %[[C]] : f32
// CHECK-NEXT: %[[RR:.*]] = arith.mulf %[[R]], %[[R]] : f32
// CHECK-NEXT: %[[M2:.*]] = arith.addf %[[RR]], %[[CC]] : f32
// CHECK-NEXT: %[[TQ:.*]] = arith.divf %[[NF]], %[[M2]] : f32
// CHECK-NEXT: adjit.store %[[Q]], %[[Z]]
// CHECK-NEXT: adjit.store %[[TQ]], %[[TZ]]

/// copysign(A, B): TA * (copysign(1, A) * copysign(1, B)); the sign
/// operand's tangent TB is never used, so copysign(c, R) with a constant
/// magnitude c has no tangent and the sum's tangent is R's.
// CHECK-LABEL: func.func @copysign_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[Z:[^:]*]]: !adjit.array<f32, 1>, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TY:[^:]*]]: !adjit.array<f32, 1>, %[[TZ:[^:]*]]: !adjit.array<f32, 1>)
// CHECK: %[[A:.*]] = adjit.load %[[X]]
// CHECK-NEXT: %[[TA:.*]] = adjit.load %[[TX]]
// CHECK-NEXT: %[[B:.*]] = adjit.load %[[Y]]
// CHECK-NEXT: %[[TB:.*]] = adjit.load %[[TY]]
// CHECK-NEXT: %[[R:.*]] = math.copysign %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[SA:.*]] = math.copysign %[[ONE]], %[[A]] : f32
// CHECK-NEXT: %[[SB:.*]] = math.copysign %[[ONE]], %[[B]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.mulf %[[SA]], %[[SB]] : f32
// CHECK-NEXT: %[[TR:.*]] = arith.mulf %[[TA]], %[[S]] : f32
// CHECK-NEXT: %[[C:.*]] = arith.constant -3.000000e+00 : f32
// CHECK-NEXT: %[[Q:.*]] = math.copysign %[[C]], %[[R]] : f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[R]], %[[Q]] : f32
// CHECK-NEXT: adjit.store %[[SUM]], %[[Z]]
// CHECK-NEXT: adjit.store %[[TR]], %[[TZ]]
// CHECK-NOT: %[[TB]]

func.func @powf(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = adjit.load %y[%i] : !adjit.array<f32, 1>
  %r = math.powf %a, %b : f32
  %c = arith.constant 3.0 : f32
  %q = math.powf %r, %c : f32
  adjit.store %q, %z[%i] : !adjit.array<f32, 1>
  return
}
func.func @atan2(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = adjit.load %y[%i] : !adjit.array<f32, 1>
  %r = math.atan2 %a, %b : f32
  %c = arith.constant 3.0 : f32
  %q = math.atan2 %c, %r : f32
  adjit.store %q, %z[%i] : !adjit.array<f32, 1>
  return
}
func.func @copysign(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = adjit.load %y[%i] : !adjit.array<f32, 1>
  %r = math.copysign %a, %b : f32
  %c = arith.constant -3.0 : f32
  %q = math.copysign %c, %r : f32
  %s = arith.addf %r, %q : f32
  adjit.store %s, %z[%i] : !adjit.array<f32, 1>
  return
}
