// RUN: adjit-opt %s --adjit-adjoint | FileCheck %s --check-prefixes=RAW,PRIMAL
// RUN: adjit-opt %s --adjit-adjoint --canonicalize --cse | FileCheck %s --check-prefixes=CANON,PRIMAL
// RUN: adjit-opt %s --adjit-adjoint=checkpoint-bytes=4096 --canonicalize --cse | FileCheck %s --check-prefix=BUDGET

// adjit-adjoint on control flow, on the raw adjoint (prefix RAW) and after
// canonicalize,cse (prefix CANON). An scf.if is reversed into an scf.if on
// the replayed condition whose branches recompute their primal values, apply
// the rules, and yield the updated adjoints of the outer values they use.
// Loops with a small constant trip count are unrolled; other loops over
// active values are reversed by two-level checkpointing; inactive loops are
// replayed only.

/// if/else with a result: the reversed if yields the adjoints of the captured
/// outer values, in order of first use (x, then f); each branch recomputes
/// what its rules need (sin x in the then branch). x receives G f cos x or
/// 2 x G.
// PRIMAL-LABEL: func.func @if_else(
// RAW-LABEL: func.func @if_else_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[F:[^:]*]]: f32, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[Z0:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: %[[POS:.*]] = arith.cmpf ogt, %[[A]], %[[Z0]] : f32
// RAW-NEXT: scf.if %[[POS]] -> (f32) {
// RAW: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ADJ:.*]]:2 = scf.if %[[POS]] -> (f32, f32) {
// RAW-NEXT: %[[S:.*]] = math.sin %[[A]] : f32
// RAW-NEXT: arith.mulf %[[S]], %[[F]] : f32
// RAW-NEXT: %[[DS:.*]] = arith.mulf %[[G]], %[[F]] : f32
// RAW-NEXT: %[[DF:.*]] = arith.mulf %[[G]], %[[S]] : f32
// RAW-NEXT: %[[COS:.*]] = math.cos %[[A]] : f32
// RAW-NEXT: %[[DA:.*]] = arith.mulf %[[DS]], %[[COS]] : f32
// RAW-NEXT: scf.yield %[[DA]], %[[DF]] : f32, f32
// RAW-NEXT: } else {
// RAW-NEXT: arith.mulf %[[A]], %[[A]] : f32
// RAW-NEXT: %[[D1:.*]] = arith.mulf %[[G]], %[[A]] : f32
// RAW-NEXT: %[[D2:.*]] = arith.mulf %[[G]], %[[A]] : f32
// RAW-NEXT: %[[DA2:.*]] = arith.addf %[[D1]], %[[D2]] : f32
// RAW-NEXT: %[[NOF:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: scf.yield %[[DA2]], %[[NOF]] : f32, f32
// RAW-NEXT: }
// RAW-NEXT: %[[OLD:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEW:.*]] = arith.addf %[[OLD]], %[[ADJ]]#0 : f32
// RAW-NEXT: adjit.store %[[NEW]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @if_else_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[F:[^:]*]]: f32, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON-NEXT: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[POS:.*]] = arith.cmpf ogt, %[[A]], %[[ZERO]] : f32
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[ADJ:.*]] = scf.if %[[POS]] -> (f32) {
// CANON-NEXT: %[[DS:.*]] = arith.mulf %[[G]], %[[F]] : f32
// CANON-NEXT: %[[COS:.*]] = math.cos %[[A]] : f32
// CANON-NEXT: %[[DA:.*]] = arith.mulf %[[DS]], %[[COS]] : f32
// CANON-NEXT: scf.yield %[[DA]] : f32
// CANON-NEXT: } else {
// CANON-NEXT: %[[D1:.*]] = arith.mulf %[[G]], %[[A]] : f32
// CANON-NEXT: %[[DA2:.*]] = arith.addf %[[D1]], %[[D1]] : f32
// CANON-NEXT: scf.yield %[[DA2]] : f32
// CANON-NEXT: }
// CANON-NEXT: %[[OLD:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEW:.*]] = arith.addf %[[OLD]], %[[ADJ]] : f32
// CANON-NEXT: adjit.store %[[NEW]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @if_else(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %f: f32) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %xi = adjit.load %x[%i] : !adjit.array<f32, 1>
  %zero = arith.constant 0.0 : f32
  %pos = arith.cmpf ogt, %xi, %zero : f32
  %r = scf.if %pos -> f32 {
    %s = math.sin %xi : f32
    %t = arith.mulf %s, %f : f32
    scf.yield %t : f32
  } else {
    %n = arith.mulf %xi, %xi : f32
    scf.yield %n : f32
  }
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// An if without else around a store: the replay keeps the if without the
/// store; the reversed if applies the store rule inside the branch and
/// yields x's adjoint, zero when the branch was not taken.
// PRIMAL-LABEL: func.func @if_store(
// RAW-LABEL: func.func @if_store_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[Z0:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: %[[POS:.*]] = arith.cmpf ogt, %[[A]], %[[Z0]] : f32
// RAW-NEXT: scf.if %[[POS]] {
// RAW-NEXT: math.exp %[[A]] : f32
// RAW-NEXT: }
// RAW-NEXT: %[[ADJ:.*]] = scf.if %[[POS]] -> (f32) {
// RAW-NEXT: %[[E:.*]] = math.exp %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[DA:.*]] = arith.mulf %[[G]], %[[E]] : f32
// RAW-NEXT: scf.yield %[[DA]] : f32
// RAW-NEXT: } else {
// RAW-NEXT: %[[NONE:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: scf.yield %[[NONE]] : f32
// RAW-NEXT: }
// RAW-NEXT: %[[OLD:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEW:.*]] = arith.addf %[[OLD]], %[[ADJ]] : f32
// RAW-NEXT: adjit.store %[[NEW]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @if_store_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON-NEXT: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[POS:.*]] = arith.cmpf ogt, %[[A]], %[[ZERO]] : f32
// CANON-NEXT: %[[ADJ:.*]] = scf.if %[[POS]] -> (f32) {
// CANON-NEXT: %[[E:.*]] = math.exp %[[A]] : f32
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[DA:.*]] = arith.mulf %[[G]], %[[E]] : f32
// CANON-NEXT: scf.yield %[[DA]] : f32
// CANON-NEXT: } else {
// CANON-NEXT: scf.yield %[[ZERO]] : f32
// CANON-NEXT: }
// CANON-NEXT: %[[OLD:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEW:.*]] = arith.addf %[[OLD]], %[[ADJ]] : f32
// CANON-NEXT: adjit.store %[[NEW]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @if_store(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %zero = arith.constant 0.0 : f32
  %pos = arith.cmpf ogt, %a, %zero : f32
  scf.if %pos {
    %e = math.exp %a : f32
    adjit.store %e, %y[%i] : !adjit.array<f32, 1>
  }
  return
}

/// Nested ifs reverse into nested ifs: the inner reversed if sits in the
/// outer one's then branch, after that branch's replay of the inner if.
/// r = c ? (d ? a * a : a) : -a, so a receives 2 a G, G or -G.
// PRIMAL-LABEL: func.func @nested(
// RAW-LABEL: func.func @nested_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[C:[^:]*]]: i1, %[[D:[^:]*]]: i1, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW: %[[A:.*]] = adjit.load %[[X]][%{{.*}}] : <f32, 1>
// RAW: %[[G:.*]] = adjit.load %[[GY]]
// RAW: %[[ADJ:.*]] = scf.if %[[C]] -> (f32) {
// RAW-NEXT: scf.if %[[D]] -> (f32) {
// RAW: %[[INNER:.*]] = scf.if %[[D]] -> (f32) {
// RAW-NEXT: arith.mulf %[[A]], %[[A]] : f32
// RAW-NEXT: %[[D1:.*]] = arith.mulf %[[G]], %[[A]] : f32
// RAW-NEXT: %[[D2:.*]] = arith.mulf %[[G]], %[[A]] : f32
// RAW-NEXT: %[[SQ:.*]] = arith.addf %[[D1]], %[[D2]] : f32
// RAW-NEXT: scf.yield %[[SQ]] : f32
// RAW-NEXT: } else {
// RAW-NEXT: scf.yield %[[G]] : f32
// RAW-NEXT: }
// RAW-NEXT: scf.yield %[[INNER]] : f32
// RAW-NEXT: } else {
// RAW-NEXT: arith.negf %[[A]] : f32
// RAW-NEXT: %[[NEG:.*]] = arith.negf %[[G]] : f32
// RAW-NEXT: scf.yield %[[NEG]] : f32
// RAW-NEXT: }
// RAW-NEXT: %[[OLD:.*]] = adjit.load %[[GX]]
// RAW-NEXT: arith.addf %[[OLD]], %[[ADJ]] : f32
// CANON-LABEL: func.func @nested_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[C:[^:]*]]: i1, %[[D:[^:]*]]: i1, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON-NEXT: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[ADJ:.*]] = scf.if %[[C]] -> (f32) {
// CANON-NEXT: %[[INNER:.*]] = scf.if %[[D]] -> (f32) {
// CANON-NEXT: %[[D1:.*]] = arith.mulf %[[G]], %[[A]] : f32
// CANON-NEXT: %[[SQ:.*]] = arith.addf %[[D1]], %[[D1]] : f32
// CANON-NEXT: scf.yield %[[SQ]] : f32
// CANON-NEXT: } else {
// CANON-NEXT: scf.yield %[[G]] : f32
// CANON-NEXT: }
// CANON-NEXT: scf.yield %[[INNER]] : f32
// CANON-NEXT: } else {
// CANON-NEXT: %[[NEG:.*]] = arith.negf %[[G]] : f32
// CANON-NEXT: scf.yield %[[NEG]] : f32
// CANON-NEXT: }
// CANON-NEXT: %[[OLD:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEW:.*]] = arith.addf %[[OLD]], %[[ADJ]] : f32
// CANON-NEXT: adjit.store %[[NEW]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @nested(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %c: i1, %d: i1) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = scf.if %c -> f32 {
    %s = scf.if %d -> f32 {
      %m = arith.mulf %a, %a : f32
      scf.yield %m : f32
    } else {
      scf.yield %a : f32
    }
    scf.yield %s : f32
  } else {
    %n = arith.negf %a : f32
    scf.yield %n : f32
  }
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// A loop with a constant trip count of 3 is unrolled before
/// differentiation (no loop is left): p = a^3 and a receives
/// G a^2 + (G a) a + (G a a) 1.
// PRIMAL-LABEL: func.func @for_constant(
// RAW-LABEL: func.func @for_constant_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NOT: scf.for
// RAW: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// RAW-NOT: scf.for
// RAW: %[[P1:.*]] = arith.mulf %[[ONE]], %[[A]] : f32
// RAW-NEXT: %[[P2:.*]] = arith.mulf %[[P1]], %[[A]] : f32
// RAW-NEXT: arith.mulf %[[P2]], %[[A]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[DP2:.*]] = arith.mulf %[[G]], %[[A]] : f32
// RAW-NEXT: %[[E3:.*]] = arith.mulf %[[G]], %[[P2]] : f32
// RAW-NEXT: %[[DP1:.*]] = arith.mulf %[[DP2]], %[[A]] : f32
// RAW-NEXT: %[[E2:.*]] = arith.mulf %[[DP2]], %[[P1]] : f32
// RAW-NEXT: %[[S2:.*]] = arith.addf %[[E3]], %[[E2]] : f32
// RAW-NEXT: arith.mulf %[[DP1]], %[[A]] : f32
// RAW-NEXT: %[[E1:.*]] = arith.mulf %[[DP1]], %[[ONE]] : f32
// RAW-NEXT: %[[D:.*]] = arith.addf %[[S2]], %[[E1]] : f32
// RAW-NEXT: %[[OLD:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEW:.*]] = arith.addf %[[OLD]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEW]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @for_constant_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON-NEXT: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[P2:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[DP2:.*]] = arith.mulf %[[G]], %[[A]] : f32
// CANON-NEXT: %[[E3:.*]] = arith.mulf %[[G]], %[[P2]] : f32
// CANON-NEXT: %[[DP1:.*]] = arith.mulf %[[DP2]], %[[A]] : f32
// CANON-NEXT: %[[S2:.*]] = arith.addf %[[E3]], %[[DP1]] : f32
// CANON-NEXT: %[[D:.*]] = arith.addf %[[S2]], %[[DP1]] : f32
// CANON-NEXT: %[[OLD:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEW:.*]] = arith.addf %[[OLD]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEW]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @for_constant(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f32
  %p = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %one) -> f32 {
    %n = arith.mulf %acc, %a : f32
    scf.yield %n : f32
  }
  adjit.store %p, %y[%i] : !adjit.array<f32, 1>
  return
}

/// A loop with a runtime trip count is reversed by two-level checkpointing,
/// with L = ceil(sqrt(trips)) in an alloca scope: sweep 1 replays the loop
/// and keeps acc at every L-th iteration; sweep 2 takes the segments last to
/// first, replays each from its checkpoint keeping its states, then reverses
/// its iterations on those states with the mulf rule: the carried adjoint
/// becomes dacc * a and a receives dacc * acc_k (n G a^(n-1) in all).
/// With a checkpoint budget of 4096 bytes, f32 states: segments are
/// max(ceil(sqrt n), min(n, 1024)) long.
// BUDGET-LABEL: func.func @for_runtime_adjoint(
// BUDGET-DAG: %[[BUDGET:.*]] = arith.constant 1024 : index
// BUDGET: %[[TRIPS:.*]] = arith.maxsi
// BUDGET: %[[SQRT:.*]] = arith.index_cast %{{.*}} : i64 to index
// BUDGET-NEXT: %[[FIT:.*]] = arith.minsi %[[TRIPS]], %[[BUDGET]] : index
// BUDGET-NEXT: %[[LEN:.*]] = arith.maxsi %[[SQRT]], %[[FIT]] : index
// BUDGET-NEXT: arith.ceildivsi %[[TRIPS]], %[[LEN]] : index
// PRIMAL-LABEL: func.func @for_runtime(
// RAW-LABEL: func.func @for_runtime_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[N:[^:]*]]: index, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW: %[[A:.*]] = adjit.load %[[X]]
// RAW: %[[LB:.*]] = arith.constant 0 : index
// RAW-NEXT: %[[STEP:.*]] = arith.constant 1 : index
// RAW-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// RAW-NEXT: scf.for %{{.*}} = %[[LB]] to %[[N]] step %[[STEP]] iter_args(%{{.*}} = %[[ONE]]) -> (f32) {
// RAW: %[[G:.*]] = adjit.load %[[GY]]
// RAW: %[[SPAN:.*]] = arith.subi %[[N]], %[[LB]] : index
// RAW-NEXT: %[[NONNEG:.*]] = arith.maxsi %[[SPAN]], %{{.*}} : index
// RAW-NEXT: %[[TRIPS:.*]] = arith.ceildivsi %[[NONNEG]], %[[STEP]] : index
// RAW: %[[REV:.*]]:3 = memref.alloca_scope -> (f32, f32, f32) {
// RAW: math.sqrt
// RAW: %[[LEN:.*]] = arith.index_cast %{{.*}} : i64 to index
// RAW-NEXT: %[[SEGS:.*]] = arith.ceildivsi %[[TRIPS]], %[[LEN]] : index
// RAW-NEXT: %[[CKPT:.*]] = memref.alloca(%[[SEGS]]) : memref<?xf32>
// RAW-NEXT: %[[STATES:.*]] = memref.alloca(%[[LEN]]) : memref<?xf32>
// RAW: memref.store %{{.*}}, %[[CKPT]]
// RAW: scf.for %{{.*}} = %{{.*}} to %[[SEGS]] step %{{.*}} iter_args(%[[DACC0:[a-z0-9_]+]] = %[[G]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, f32, f32) {
// RAW: memref.load %[[CKPT]]
// RAW: memref.store %{{.*}}, %[[STATES]]
// RAW: scf.for %{{.*}} iter_args(%[[DACC:[a-z0-9_]+]] = %{{.*}}, %[[DA:[a-z0-9_]+]] = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, f32, f32) {
// RAW: %[[ACCK:.*]] = memref.load %[[STATES]]
// RAW: %[[DPREV:.*]] = arith.mulf %[[DACC]], %[[A]] : f32
// RAW-NEXT: %[[DAK:.*]] = arith.mulf %[[DACC]], %[[ACCK]] : f32
// RAW-NEXT: %[[DASUM:.*]] = arith.addf %[[DA]], %[[DAK]] : f32
// RAW-NEXT: scf.yield %[[DPREV]], %[[DASUM]], %{{.*}} : f32, f32, f32
// RAW: memref.alloca_scope.return
// RAW: %[[OLD:.*]] = adjit.load %[[GX]]
// RAW-NEXT: arith.addf %[[OLD]], %[[REV]]#1 : f32
// CANON-LABEL: func.func @for_runtime_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[N:[^:]*]]: index, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CANON-DAG: %[[C1:.*]] = arith.constant 1 : index
// CANON-DAG: %[[C0:.*]] = arith.constant 0 : index
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[TRIPS:.*]] = arith.maxsi %[[N]], %[[C0]] : index
// CANON-NEXT: %[[REV:.*]]:3 = memref.alloca_scope -> (f32, f32, f32) {
// CANON: %[[LEN:.*]] = arith.index_cast %{{.*}} : i64 to index
// CANON-NEXT: %[[SEGS:.*]] = arith.ceildivsi %[[TRIPS]], %[[LEN]] : index
// CANON-NEXT: %[[CKPT:.*]] = memref.alloca(%[[SEGS]]) : memref<?xf32>
// CANON-NEXT: %[[STATES:.*]] = memref.alloca(%[[LEN]]) : memref<?xf32>
/// Sweep 1: checkpoint, then replay the segment; the last segment needs
/// its checkpoint only.
// CANON-NEXT: %[[LASTSEG:.*]] = arith.subi %[[SEGS]], %[[C1]] : index
// CANON-NEXT: %[[FINAL:.*]] = scf.for %[[J:[a-z0-9_]+]] = %[[C0]] to %[[LASTSEG]] step %[[C1]] iter_args(%[[S:[a-z0-9_]+]] = %[[ONE]]) -> (f32) {
// CANON-NEXT: memref.store %[[S]], %[[CKPT]][%[[J]]] : memref<?xf32>
// CANON: scf.for %{{.*}} iter_args(%[[ACC1:[a-z0-9_]+]] = %[[S]]) -> (f32) {
// CANON-NEXT: %[[NEXT1:.*]] = arith.mulf %[[ACC1]], %[[A]] : f32
// CANON-NEXT: scf.yield %[[NEXT1]] : f32
// CANON: scf.if %{{.*}} {
// CANON-NEXT: memref.store %[[FINAL]], %[[CKPT]][%[[LASTSEG]]] : memref<?xf32>
/// Sweep 2: the segments last to first.
// CANON: %[[SEG:.*]]:2 = scf.for %{{.*}} = %[[C0]] to %[[SEGS]] step %[[C1]] iter_args(%[[DACC0:[a-z0-9_]+]] = %[[G]], %[[DA0:[a-z0-9_]+]] = %[[ZERO]]) -> (f32, f32) {
// CANON: %[[FIRST:.*]] = memref.load %[[CKPT]]
// CANON-NEXT: scf.for %{{.*}} iter_args(%[[ACC2:[a-z0-9_]+]] = %[[FIRST]]) -> (f32) {
// CANON: memref.store %[[ACC2]], %[[STATES]]
// CANON-NEXT: arith.mulf %[[ACC2]], %[[A]] : f32
// CANON: %[[INNER:.*]]:2 = scf.for %{{.*}} iter_args(%[[DACC:[a-z0-9_]+]] = %[[DACC0]], %[[DA:[a-z0-9_]+]] = %[[DA0]]) -> (f32, f32) {
// CANON: %[[ACCK:.*]] = memref.load %[[STATES]]
// CANON-NEXT: %[[DPREV:.*]] = arith.mulf %[[DACC]], %[[A]] : f32
// CANON-NEXT: %[[DAK:.*]] = arith.mulf %[[DACC]], %[[ACCK]] : f32
// CANON-NEXT: %[[DASUM:.*]] = arith.addf %[[DA]], %[[DAK]] : f32
// CANON-NEXT: scf.yield %[[DPREV]], %[[DASUM]] : f32, f32
// CANON-NEXT: }
// CANON-NEXT: scf.yield %[[INNER]]#0, %[[INNER]]#1 : f32, f32
// CANON-NEXT: }
// CANON-NEXT: memref.alloca_scope.return %[[SEG]]#0, %[[SEG]]#1, %[[ZERO]] : f32, f32, f32
// CANON-NEXT: }
// CANON-NEXT: %[[OLD:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEW:.*]] = arith.addf %[[OLD]], %[[REV]]#1 : f32
// CANON-NEXT: adjit.store %[[NEW]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @for_runtime(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %n: index) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %p = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %one) -> f32 {
    %m = arith.mulf %acc, %a : f32
    scf.yield %m : f32
  }
  adjit.store %p, %y[%i] : !adjit.array<f32, 1>
  return
}

/// With a budget, the replay of the segment being reversed also keeps the
/// values the reversal reads: here sin(acc_k), which the mulf rule needs for
/// a's adjoint; the reversed iteration loads it instead of recomputing it
/// (no math.sin there), and computes cos(acc_k) from the kept state. The
/// product itself is not read, so it is not kept. The budget counts state
/// and kept value: 4096 / (4 + 4) = 512 iterations per segment.
// BUDGET-LABEL: func.func @for_runtime_kept_adjoint(
// BUDGET-DAG: %[[BUDGET:.*]] = arith.constant 512 : index
// BUDGET-DAG: %[[A:.*]] = adjit.load %arg0
// BUDGET: arith.minsi %{{.*}}, %[[BUDGET]] : index
// BUDGET: %[[LEN:.*]] = arith.maxsi
// BUDGET: %[[STATES:.*]] = memref.alloca(%[[LEN]]) : memref<?xf32>
// BUDGET-NEXT: %[[KEPT:.*]] = memref.alloca(%[[LEN]]) : memref<?xf32>
// BUDGET-NOT: memref.alloca
// BUDGET: memref.store %[[ACC:[a-z0-9_]+]], %[[STATES]][%[[T:[a-z0-9_]+]]] : memref<?xf32>
// BUDGET-NEXT: %[[SIN:.*]] = math.sin %[[ACC]] : f32
// BUDGET-NEXT: arith.mulf %[[SIN]], %[[A]] : f32
// BUDGET-NEXT: memref.store %[[SIN]], %[[KEPT]][%[[T]]] : memref<?xf32>
// BUDGET: scf.for %{{.*}} iter_args(%[[DACC:[a-z0-9_]+]] = %{{.*}}, %[[DA:[a-z0-9_]+]] = %{{.*}}) -> (f32, f32) {
// BUDGET: %[[ACCK:.*]] = memref.load %[[STATES]]
// BUDGET-NEXT: %[[SINK:.*]] = memref.load %[[KEPT]]
// BUDGET-NOT: math.sin
// BUDGET: arith.mulf %[[DACC]], %[[SINK]] : f32
// BUDGET: math.cos %[[ACCK]] : f32
// BUDGET: scf.yield
func.func @for_runtime_kept(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %n: index) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %p = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %one) -> f32 {
    %s = math.sin %acc : f32
    %m = arith.mulf %s, %a : f32
    scf.yield %m : f32
  }
  adjit.store %p, %y[%i] : !adjit.array<f32, 1>
  return
}

/// A runtime loop over integers only is replayed (its result scales the
/// output) but not reversed: no gradient flows through it.
// PRIMAL-LABEL: func.func @for_inactive(
// RAW-LABEL: func.func @for_inactive_adjoint(
// RAW: %[[COUNT:.*]] = scf.for
// RAW: %[[A:.*]] = adjit.load
// RAW-NEXT: %[[S:.*]] = arith.sitofp %[[COUNT]] : i32 to f32
// RAW-NOT: scf.for
// RAW: %[[D:.*]] = arith.mulf %{{.*}}, %[[S]] : f32
// RAW-NOT: scf.for
// RAW: return
// CANON-LABEL: func.func @for_inactive_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[N:[^:]*]]: index, %[[CNT:[^:]*]]: !adjit.array<i32, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>, %[[GCNT:[^:]*]]: !adjit.array<i32, 1>)
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[COUNT:.*]] = scf.for %{{.*}} to %[[N]]
// CANON: %[[S:.*]] = arith.sitofp %[[COUNT]] : i32 to f32
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %{{.*}}, %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[D:.*]] = arith.mulf %[[G]], %[[S]] : f32
// CANON-NEXT: %[[OLD:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEW:.*]] = arith.addf %[[OLD]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEW]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @for_inactive(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %n: index, %cnt: !adjit.array<i32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i32
  %s = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %z) -> i32 {
    %one = arith.constant 1 : i32
    %t = arith.addi %acc, %one : i32
    scf.yield %t : i32
  }
  adjit.store %s, %cnt[%i] : !adjit.array<i32, 1>
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %f = arith.sitofp %s : i32 to f32
  %r = arith.mulf %a, %f : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// A while loop whose condition forwards something other than its carried
/// values (canonicalize makes such loops) is first put back into the
/// canonical form: the condition forwards the carried value, and the body
/// and the code after the loop recompute the square from it.
// PRIMAL-LABEL: func.func @while_not_canonical(
// CANON-LABEL: func.func @while_not_canonical_adjoint(
// CANON: %[[LIMIT:.*]] = arith.constant 1.000000e+01 : f32
// CANON: %[[A:.*]] = adjit.load
// CANON-NEXT: %[[V:.*]] = scf.while (%[[B:.*]] = %[[A]]) : (f32) -> f32 {
// CANON-NEXT: %[[SQ:.*]] = arith.mulf %[[B]], %[[B]] : f32
// CANON-NEXT: %[[GO:.*]] = arith.cmpf olt, %[[SQ]], %[[LIMIT]] : f32
// CANON-NEXT: scf.condition(%[[GO]]) %[[B]] : f32
// CANON-NEXT: } do {
// CANON-NEXT: ^bb0(%[[W:.*]]: f32):
// CANON-NEXT: %[[SQ2:.*]] = arith.mulf %[[W]], %[[W]] : f32
// CANON-NEXT: scf.yield %[[SQ2]] : f32
// CANON: %[[G:.*]] = adjit.load
// CANON: %[[GV:.*]] = arith.mulf %[[G]], %[[V]] : f32
// CANON-NEXT: arith.addf %[[GV]], %[[GV]] : f32
func.func @while_not_canonical(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %limit = arith.constant 10.0 : f32
  %r = scf.while (%v = %a) : (f32) -> f32 {
    %sq = arith.mulf %v, %v : f32
    %go = arith.cmpf olt, %sq, %limit : f32
    scf.condition(%go) %sq : f32
  } do {
  ^bb0(%w: f32):
    scf.yield %w : f32
  }
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}
