// RUN: adjit-opt %s --adjit-tangent=keep-primal=false | FileCheck %s

// adjit-tangent: control flow is direct. An scf.if yields the tangent of
// each float result after its results (a zero where a branch yields a
// constant); scf.for and scf.while carry the tangent of each float
// loop-carried value as one more carried value, after the others (integers
// get none). Nothing is unrolled, replayed or stored.

/// scf.if: one more result for the float one; a branch without results
/// that stores keeps its store and stores the tangent next to it.
// CHECK-LABEL: func.func @branch_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TY:[^:]*]]: !adjit.array<f32, 1>)
// CHECK: %[[A:.*]] = adjit.load %[[X]]
// CHECK-NEXT: %[[TA:.*]] = adjit.load %[[TX]]
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[P:.*]] = arith.cmpf ogt, %[[A]], %[[C0]] : f32
// CHECK-NEXT: %[[R:.*]]:2 = scf.if %[[P]] -> (f32, f32) {
// CHECK-NEXT: %[[S:.*]] = math.sin %[[A]] : f32
// CHECK-NEXT: %[[COS:.*]] = math.cos %[[A]] : f32
// CHECK-NEXT: %[[TS:.*]] = arith.mulf %[[TA]], %[[COS]] : f32
// CHECK-NEXT: scf.yield %[[S]], %[[TS]] : f32, f32
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: scf.yield %[[C0]], %[[Z]] : f32, f32
// CHECK-NEXT: }
// CHECK-NEXT: scf.if %[[P]] {
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[R]]#0, %[[A]] : f32
// CHECK-NEXT: %[[F1:.*]] = arith.mulf %[[R]]#1, %[[A]] : f32
// CHECK-NEXT: %[[F2:.*]] = arith.mulf %[[TA]], %[[R]]#0 : f32
// CHECK-NEXT: %[[TD:.*]] = arith.addf %[[F1]], %[[F2]] : f32
// CHECK-NEXT: adjit.store %[[D]], %[[Y]]
// CHECK-NEXT: adjit.store %[[TD]], %[[TY]]
// CHECK-NEXT: } else {
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @branch(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %c0 = arith.constant 0.0 : f32
  %p = arith.cmpf ogt, %a, %c0 : f32
  %r = scf.if %p -> f32 {
    %s = math.sin %a : f32
    scf.yield %s : f32
  } else {
    scf.yield %c0 : f32
  }
  scf.if %p {
    %d = arith.mulf %r, %a : f32
    adjit.store %d, %y[%i] : !adjit.array<f32, 1>
  }
  return
}

/// scf.for with a runtime trip count: the float carried value's tangent is
/// carried after the integer counter, which gets none; its init is the
/// zero tangent of the constant 1.0.
// CHECK-LABEL: func.func @for_loop_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[N:[^:]*]]: i32, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TY:[^:]*]]: !adjit.array<f32, 1>)
// CHECK: %[[A:.*]] = adjit.load %[[X]]
// CHECK-NEXT: %[[TA:.*]] = adjit.load %[[TX]]
// CHECK: %[[UB:.*]] = arith.index_cast %[[N]] : i32 to index
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[R:.*]]:3 = scf.for %{{.*}} = %{{.*}} to %[[UB]] step %{{.*}} iter_args(%[[V:.*]] = %[[ONE]], %[[CNT:.*]] = %[[N]], %[[TV:.*]] = %[[ZERO]]) -> (f32, i32, f32) {
// CHECK-NEXT: %[[W:.*]] = arith.mulf %[[V]], %[[A]] : f32
// CHECK-NEXT: %[[F1:.*]] = arith.mulf %[[TV]], %[[A]] : f32
// CHECK-NEXT: %[[F2:.*]] = arith.mulf %[[TA]], %[[V]] : f32
// CHECK-NEXT: %[[TW:.*]] = arith.addf %[[F1]], %[[F2]] : f32
// CHECK-NEXT: arith.constant 1 : i32
// CHECK-NEXT: %[[CNT2:.*]] = arith.addi %[[CNT]]
// CHECK-NEXT: scf.yield %[[W]], %[[CNT2]], %[[TW]] : f32, i32, f32
// CHECK-NEXT: }
// CHECK-NEXT: adjit.store %[[R]]#0, %[[Y]]
// CHECK-NEXT: adjit.store %[[R]]#2, %[[TY]]
func.func @for_loop(%x: !adjit.array<f32, 1>, %n: i32, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %lb = arith.constant 0 : index
  %st = arith.constant 1 : index
  %ub = arith.index_cast %n : i32 to index
  %one = arith.constant 1.0 : f32
  %r:2 = scf.for %k = %lb to %ub step %st iter_args(%v = %one, %cnt = %n) -> (f32, i32) {
    %w = arith.mulf %v, %a : f32
    %c1 = arith.constant 1 : i32
    %cnt2 = arith.addi %cnt, %c1 : i32
    scf.yield %w, %cnt2 : f32, i32
  }
  adjit.store %r#0, %y[%i] : !adjit.array<f32, 1>
  return
}

/// scf.while: the tangent travels through the before region (the condition
/// forwards it) and the after region (which yields it).
// CHECK-LABEL: func.func @while_loop_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TY:[^:]*]]: !adjit.array<f32, 1>)
// CHECK: %[[A:.*]] = adjit.load %[[X]]
// CHECK-NEXT: %[[TA:.*]] = adjit.load %[[TX]]
// CHECK-NEXT: %[[LIMIT:.*]] = arith.constant 1.000000e+01 : f32
// CHECK-NEXT: %[[K0:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[R:.*]]:3 = scf.while (%[[V:.*]] = %[[A]], %[[K:.*]] = %[[K0]], %[[TV:.*]] = %[[TA]]) : (f32, i32, f32) -> (f32, i32, f32) {
// CHECK-NEXT: %[[GO:.*]] = arith.cmpf olt, %[[V]], %[[LIMIT]] : f32
// CHECK-NEXT: scf.condition(%[[GO]]) %[[V]], %[[K]], %[[TV]] : f32, i32, f32
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[W:.*]]: f32, %[[J:.*]]: i32, %[[TW:.*]]: f32):
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[W]], %[[W]] : f32
// CHECK-NEXT: %[[F1:.*]] = arith.mulf %[[TW]], %[[W]] : f32
// CHECK-NEXT: %[[F2:.*]] = arith.mulf %[[TW]], %[[W]] : f32
// CHECK-NEXT: %[[TSQ:.*]] = arith.addf %[[F1]], %[[F2]] : f32
// CHECK-NEXT: arith.constant 1 : i32
// CHECK-NEXT: %[[J2:.*]] = arith.addi %[[J]]
// CHECK-NEXT: scf.yield %[[SQ]], %[[J2]], %[[TSQ]] : f32, i32, f32
// CHECK-NEXT: }
// CHECK-NEXT: adjit.store %[[R]]#0, %[[Y]]
// CHECK-NEXT: adjit.store %[[R]]#2, %[[TY]]
func.func @while_loop(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %limit = arith.constant 10.0 : f32
  %k0 = arith.constant 0 : i32
  %r:2 = scf.while (%v = %a, %k = %k0) : (f32, i32) -> (f32, i32) {
    %go = arith.cmpf olt, %v, %limit : f32
    scf.condition(%go) %v, %k : f32, i32
  } do {
  ^bb0(%w: f32, %j: i32):
    %sq = arith.mulf %w, %w : f32
    %c1 = arith.constant 1 : i32
    %j2 = arith.addi %j, %c1 : i32
    scf.yield %sq, %j2 : f32, i32
  }
  adjit.store %r#0, %y[%i] : !adjit.array<f32, 1>
  return
}

/// An in-place update in a loop (y[i] = y[i] * x[i], n times), which the
/// adjoint must carry as a value: forward mode runs the primal's reads and
/// writes, each followed by the same access to the tangent array, so the
/// loop stays as it is.
// CHECK-LABEL: func.func @in_place_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[N:[^:]*]]: index, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TY:[^:]*]]: !adjit.array<f32, 1>)
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} {
// CHECK-NEXT: %[[U:.*]] = adjit.load %[[Y]]
// CHECK-NEXT: %[[TU:.*]] = adjit.load %[[TY]]
// CHECK-NEXT: %[[A:.*]] = adjit.load %[[X]]
// CHECK-NEXT: %[[TA:.*]] = adjit.load %[[TX]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[U]], %[[A]] : f32
// CHECK-NEXT: %[[F1:.*]] = arith.mulf %[[TU]], %[[A]] : f32
// CHECK-NEXT: %[[F2:.*]] = arith.mulf %[[TA]], %[[U]] : f32
// CHECK-NEXT: %[[TP:.*]] = arith.addf %[[F1]], %[[F2]] : f32
// CHECK-NEXT: adjit.store %[[P]], %[[Y]]
// CHECK-NEXT: adjit.store %[[TP]], %[[TY]]
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @in_place(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %n: index) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %lb = arith.constant 0 : index
  %st = arith.constant 1 : index
  scf.for %k = %lb to %n step %st {
    %u = adjit.load %y[%i] : !adjit.array<f32, 1>
    %a = adjit.load %x[%i] : !adjit.array<f32, 1>
    %p = arith.mulf %u, %a : f32
    adjit.store %p, %y[%i] : !adjit.array<f32, 1>
  }
  return
}
