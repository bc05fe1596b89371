// RUN: adjit-opt %s --adjit-adjoint | FileCheck %s --check-prefixes=RAW,PRIMAL
// RUN: adjit-opt %s --adjit-adjoint --canonicalize --cse | FileCheck %s --check-prefixes=CANON,PRIMAL
// RUN: adjit-opt %s --adjit-adjoint=keep-primal=false | FileCheck %s --check-prefix=DROP
// RUN: adjit-opt %s --adjit-adjoint | adjit-opt | FileCheck %s --check-prefix=PRIMAL

// adjit-adjoint: the contract of the generated kernels. The derivative rules
// are checked one op at a time in adjoint-{arith,math,vector,memory}.mlir,
// control flow in adjoint-control.mlir and the diagnostics in
// adjoint-errors.mlir.

/// Non-kernel functions are left alone, and so is the primal kernel, which
/// is kept by default; keep-primal=false drops it but not the device
/// function.
// PRIMAL-LABEL: func.func private @helper(
// PRIMAL-NOT: func.func @helper_adjoint
// PRIMAL-LABEL: func.func @mixed(
// PRIMAL-SAME: attributes {adjit.arg_names = ["x", "n", "s", "y"], adjit.kernel}
// PRIMAL-NEXT: adjit.tid
// PRIMAL-NEXT: adjit.load
// PRIMAL-NEXT: arith.mulf
// PRIMAL-NEXT: arith.extf
// PRIMAL-NEXT: vector.broadcast
// PRIMAL-NEXT: adjit.store
// PRIMAL-NEXT: return
// DROP-LABEL: func.func private @helper(
// DROP-NOT: func.func @mixed(
// DROP: func.func @mixed_adjoint(

/// @k_adjoint takes k's arguments, then one gradient array per array
/// argument in order (none for index or f32 scalars); it is a kernel, points
/// back at @k and names the gradients adj_<name>. The 2-D launch reads x[i]
/// from every thread (i, j), so x's gradient is accumulated atomically; the
/// vector<2xf64> slot of y flows back through the broadcast (sum), the extf
/// (truncf) and the mulf (times the scalar s).
// RAW-LABEL: func.func @mixed_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[N:[^:]*]]: index, %[[S:[^:]*]]: f32, %[[Y:[^:]*]]: !adjit.array<vector<2xf64>, 2>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<vector<2xf64>, 2>)
// RAW-SAME: attributes {adjit.adjoint_of = @mixed, adjit.arg_names = ["x", "n", "s", "y", "adj_x", "adj_y"], adjit.kernel}
// RAW-NEXT: %[[T:.*]]:2 = adjit.tid : index, index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[T]]#0] : <f32, 1>
// RAW-NEXT: arith.mulf %[[A]], %[[S]] : f32
// RAW-NEXT: arith.extf
// RAW-NEXT: vector.broadcast
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[T]]#0, %[[T]]#1] : <vector<2xf64>, 2>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<2xf64>
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[T]]#0, %[[T]]#1] : <vector<2xf64>, 2>
// RAW-NEXT: %[[FLAT:.*]] = vector.shape_cast %[[G]] : vector<2xf64> to vector<2xf64>
// RAW-NEXT: %[[SUM:.*]] = vector.reduction <add>, %[[FLAT]] : vector<2xf64> into f64
// RAW-NEXT: %[[DB:.*]] = arith.truncf %[[SUM]] : f64 to f32
// RAW-NEXT: %[[DA:.*]] = arith.mulf %[[DB]], %[[S]] : f32
// RAW-NEXT: arith.mulf %[[DB]], %[[A]] : f32
// RAW-NEXT: adjit.atomic_add %[[DA]], %[[GX]][%[[T]]#0] [] : f32, <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @mixed_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[N:[^:]*]]: index, %[[S:[^:]*]]: f32, %[[Y:[^:]*]]: !adjit.array<vector<2xf64>, 2>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<vector<2xf64>, 2>)
// CANON-NEXT: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<2xf64>
// CANON-NEXT: %[[T:.*]]:2 = adjit.tid : index, index
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[T]]#0, %[[T]]#1] : <vector<2xf64>, 2>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[T]]#0, %[[T]]#1] : <vector<2xf64>, 2>
// CANON-NEXT: %[[SUM:.*]] = vector.reduction <add>, %[[G]] : vector<2xf64> into f64
// CANON-NEXT: %[[DB:.*]] = arith.truncf %[[SUM]] : f64 to f32
// CANON-NEXT: %[[DA:.*]] = arith.mulf %[[DB]], %[[S]] : f32
// CANON-NEXT: adjit.atomic_add %[[DA]], %[[GX]][%[[T]]#0] [] : f32, <f32, 1>
// CANON-NEXT: return
// DROP-SAME: attributes {adjit.arg_names = ["x", "n", "s", "y", "adj_x", "adj_y"], adjit.kernel}
func.func private @helper(%v: f32) -> f32 {
  %r = arith.negf %v : f32
  return %r : f32
}
func.func @mixed(%x: !adjit.array<f32, 1>, %n: index, %s: f32, %y: !adjit.array<vector<2xf64>, 2>) attributes {adjit.kernel, adjit.arg_names = ["x", "n", "s", "y"]} {
  %i, %j = adjit.tid : index, index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = arith.mulf %a, %s : f32
  %d = arith.extf %b : f32 to f64
  %v = vector.broadcast %d : f64 to vector<2xf64>
  adjit.store %v, %y[%i, %j] : !adjit.array<vector<2xf64>, 2>
  return
}
