// RUN: adjit-opt %s --adjit-adjoint | FileCheck %s --check-prefixes=RAW,PRIMAL
// RUN: adjit-opt %s --adjit-adjoint --canonicalize --cse | FileCheck %s --check-prefixes=CANON,PRIMAL

// adjit-adjoint: the derivative rules of the vector ops, on the raw adjoint
// (prefix RAW) and after canonicalize,cse (prefix CANON). Each kernel reads
// its inputs and writes its output at the thread's own element; G is the
// gradient slot of the output (read and zeroed by the store rule), and each
// input's adjoint is added into its gradient array (load, addf, store).

/// from_elements: element k receives component k (row-major) of G; a value
/// placed twice receives both components, and b = 2a passes its share on.
// PRIMAL-LABEL: func.func @from_elements(
// RAW-LABEL: func.func @from_elements_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<vector<2x2xf32>, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<vector<2x2xf32>, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// RAW-NEXT: %[[B:.*]] = arith.mulf %[[A]], %[[TWO]] : f32
// RAW-NEXT: vector.from_elements %[[A]], %[[B]], %[[B]], %[[A]] : vector<2x2xf32>
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <vector<2x2xf32>, 1>
// RAW-NEXT: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<2x2xf32>
// RAW-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <vector<2x2xf32>, 1>
// RAW-NEXT: %[[G00:.*]] = vector.extract %[[G]][0, 0] : f32 from vector<2x2xf32>
// RAW-NEXT: %[[G01:.*]] = vector.extract %[[G]][0, 1] : f32 from vector<2x2xf32>
// RAW-NEXT: %[[G10:.*]] = vector.extract %[[G]][1, 0] : f32 from vector<2x2xf32>
// RAW-NEXT: %[[DB:.*]] = arith.addf %[[G01]], %[[G10]] : f32
// RAW-NEXT: %[[G11:.*]] = vector.extract %[[G]][1, 1] : f32 from vector<2x2xf32>
// RAW-NEXT: %[[DA0:.*]] = arith.addf %[[G00]], %[[G11]] : f32
// RAW-NEXT: %[[DAB:.*]] = arith.mulf %[[DB]], %[[TWO]] : f32
// RAW-NEXT: %[[D:.*]] = arith.addf %[[DA0]], %[[DAB]] : f32
// RAW-NEXT: arith.mulf %[[DB]], %[[A]] : f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @from_elements_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<vector<2x2xf32>, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<vector<2x2xf32>, 1>)
// CANON-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<2x2xf32>
// CANON-DAG: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <vector<2x2xf32>, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <vector<2x2xf32>, 1>
// CANON-NEXT: %[[G00:.*]] = vector.extract %[[G]][0, 0] : f32 from vector<2x2xf32>
// CANON-NEXT: %[[G01:.*]] = vector.extract %[[G]][0, 1] : f32 from vector<2x2xf32>
// CANON-NEXT: %[[G10:.*]] = vector.extract %[[G]][1, 0] : f32 from vector<2x2xf32>
// CANON-NEXT: %[[DB:.*]] = arith.addf %[[G01]], %[[G10]] : f32
// CANON-NEXT: %[[G11:.*]] = vector.extract %[[G]][1, 1] : f32 from vector<2x2xf32>
// CANON-NEXT: %[[DA0:.*]] = arith.addf %[[G00]], %[[G11]] : f32
// CANON-NEXT: %[[DAB:.*]] = arith.mulf %[[DB]], %[[TWO]] : f32
// CANON-NEXT: %[[D:.*]] = arith.addf %[[DA0]], %[[DAB]] : f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @from_elements(%x: !adjit.array<f32, 1>, %y: !adjit.array<vector<2x2xf32>, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %c2 = arith.constant 2.0 : f32
  %b = arith.mulf %a, %c2 : f32
  %v = vector.from_elements %a, %b, %b, %a : vector<2x2xf32>
  adjit.store %v, %y[%i] : !adjit.array<vector<2x2xf32>, 1>
  return
}

/// extract: only the extracted component of the source's adjoint changes. The
/// first update inserts into a zero vector; a later one extracts that
/// component, adds, and inserts it back.
// PRIMAL-LABEL: func.func @extract(
// RAW-LABEL: func.func @extract_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[V:.*]] = adjit.load %[[X]][%[[I]]] : <vector<3xf32>, 1>
// RAW-NEXT: %[[E1:.*]] = vector.extract %[[V]][1] : f32 from vector<3xf32>
// RAW-NEXT: %[[E2:.*]] = vector.extract %[[V]][2] : f32 from vector<3xf32>
// RAW-NEXT: arith.mulf %[[E1]], %[[E2]] : f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW: adjit.store %{{.*}}, %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[D1:.*]] = arith.mulf %[[G]], %[[E2]] : f32
// RAW-NEXT: %[[D2:.*]] = arith.mulf %[[G]], %[[E1]] : f32
// RAW-NEXT: %[[Z3:.*]] = arith.constant dense<0.000000e+00> : vector<3xf32>
// RAW-NEXT: %[[V2:.*]] = vector.insert %[[D2]], %[[Z3]] [2] : f32 into vector<3xf32>
// RAW-NEXT: %[[OLD1:.*]] = vector.extract %[[V2]][1] : f32 from vector<3xf32>
// RAW-NEXT: %[[SUM1:.*]] = arith.addf %[[OLD1]], %[[D1]] : f32
// RAW-NEXT: %[[D:.*]] = vector.insert %[[SUM1]], %[[V2]] [1] : f32 into vector<3xf32>
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <vector<3xf32>, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : vector<3xf32>
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <vector<3xf32>, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @extract_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-DAG: %[[Z3:.*]] = arith.constant dense<0.000000e+00> : vector<3xf32>
// CANON-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[V:.*]] = adjit.load %[[X]][%[[I]]] : <vector<3xf32>, 1>
// CANON-NEXT: %[[E1:.*]] = vector.extract %[[V]][1] : f32 from vector<3xf32>
// CANON-NEXT: %[[E2:.*]] = vector.extract %[[V]][2] : f32 from vector<3xf32>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[D1:.*]] = arith.mulf %[[G]], %[[E2]] : f32
// CANON-NEXT: %[[D2:.*]] = arith.mulf %[[G]], %[[E1]] : f32
// CANON-NEXT: %[[V2:.*]] = vector.insert %[[D2]], %[[Z3]] [2] : f32 into vector<3xf32>
// CANON-NEXT: %[[SUM1:.*]] = arith.addf %[[D1]], %[[ZERO]] : f32
// CANON-NEXT: %[[D:.*]] = vector.insert %[[SUM1]], %[[V2]] [1] : f32 into vector<3xf32>
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <vector<3xf32>, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : vector<3xf32>
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <vector<3xf32>, 1>
// CANON-NEXT: return
func.func @extract(%x: !adjit.array<vector<3xf32>, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %v = adjit.load %x[%i] : !adjit.array<vector<3xf32>, 1>
  %e = vector.extract %v[1] : f32 from vector<3xf32>
  %f = vector.extract %v[2] : f32 from vector<3xf32>
  %r = arith.mulf %e, %f : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// insert: the inserted value receives component 2 of G; the destination
/// receives G with component 2 zeroed (it was overwritten).
// PRIMAL-LABEL: func.func @insert(
// RAW-LABEL: func.func @insert_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[S:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[GX:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[GS:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<vector<3xf32>, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[V:.*]] = adjit.load %[[X]][%[[I]]] : <vector<3xf32>, 1>
// RAW-NEXT: %[[A:.*]] = adjit.load %[[S]][%[[I]]] : <f32, 1>
// RAW-NEXT: vector.insert %[[A]], %[[V]] [2] : f32 into vector<3xf32>
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <vector<3xf32>, 1>
// RAW: adjit.store %{{.*}}, %[[GY]][%[[I]]] : <vector<3xf32>, 1>
// RAW-NEXT: %[[DA:.*]] = vector.extract %[[G]][2] : f32 from vector<3xf32>
// RAW-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// RAW-NEXT: %[[DV:.*]] = vector.insert %[[Z]], %[[G]] [2] : f32 into vector<3xf32>
// RAW-NEXT: %[[OLDS:.*]] = adjit.load %[[GS]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWS:.*]] = arith.addf %[[OLDS]], %[[DA]] : f32
// RAW-NEXT: adjit.store %[[NEWS]], %[[GS]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <vector<3xf32>, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DV]] : vector<3xf32>
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <vector<3xf32>, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @insert_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[S:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[GX:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[GS:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<vector<3xf32>, 1>)
// CANON-DAG: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CANON-DAG: %[[Z3:.*]] = arith.constant dense<0.000000e+00> : vector<3xf32>
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <vector<3xf32>, 1>
// CANON-NEXT: adjit.store %[[Z3]], %[[GY]][%[[I]]] : <vector<3xf32>, 1>
// CANON-NEXT: %[[DA:.*]] = vector.extract %[[G]][2] : f32 from vector<3xf32>
// CANON-NEXT: %[[DV:.*]] = vector.insert %[[Z]], %[[G]] [2] : f32 into vector<3xf32>
// CANON-NEXT: %[[OLDS:.*]] = adjit.load %[[GS]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWS:.*]] = arith.addf %[[OLDS]], %[[DA]] : f32
// CANON-NEXT: adjit.store %[[NEWS]], %[[GS]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <vector<3xf32>, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DV]] : vector<3xf32>
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <vector<3xf32>, 1>
// CANON-NEXT: return
func.func @insert(%x: !adjit.array<vector<3xf32>, 1>, %s: !adjit.array<f32, 1>, %y: !adjit.array<vector<3xf32>, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %v = adjit.load %x[%i] : !adjit.array<vector<3xf32>, 1>
  %a = adjit.load %s[%i] : !adjit.array<f32, 1>
  %w = vector.insert %a, %v[2] : f32 into vector<3xf32>
  adjit.store %w, %y[%i] : !adjit.array<vector<3xf32>, 1>
  return
}

/// broadcast of a scalar: the scalar receives the sum of all components of G
/// (shape_cast to 1-D, then an add reduction).
// PRIMAL-LABEL: func.func @broadcast(
// RAW-LABEL: func.func @broadcast_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<vector<2x3xf32>, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<vector<2x3xf32>, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: vector.broadcast %[[A]] : f32 to vector<2x3xf32>
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <vector<2x3xf32>, 1>
// RAW: adjit.store %{{.*}}, %[[GY]][%[[I]]] : <vector<2x3xf32>, 1>
// RAW-NEXT: %[[FLAT:.*]] = vector.shape_cast %[[G]] : vector<2x3xf32> to vector<6xf32>
// RAW-NEXT: %[[D:.*]] = vector.reduction <add>, %[[FLAT]] : vector<6xf32> into f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @broadcast_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<vector<2x3xf32>, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<vector<2x3xf32>, 1>)
// CANON-NEXT: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<2x3xf32>
// CANON-NEXT: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <vector<2x3xf32>, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <vector<2x3xf32>, 1>
// CANON-NEXT: %[[FLAT:.*]] = vector.shape_cast %[[G]] : vector<2x3xf32> to vector<6xf32>
// CANON-NEXT: %[[D:.*]] = vector.reduction <add>, %[[FLAT]] : vector<6xf32> into f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @broadcast(%x: !adjit.array<f32, 1>, %y: !adjit.array<vector<2x3xf32>, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %v = vector.broadcast %a : f32 to vector<2x3xf32>
  adjit.store %v, %y[%i] : !adjit.array<vector<2x3xf32>, 1>
  return
}

/// reduction <add> with an accumulator: every component of the vector
/// receives G (a broadcast), and so does the accumulator.
// PRIMAL-LABEL: func.func @reduction(
// RAW-LABEL: func.func @reduction_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<vector<4xf32>, 1>, %[[S:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<vector<4xf32>, 1>, %[[GS:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[V:.*]] = adjit.load %[[X]][%[[I]]] : <vector<4xf32>, 1>
// RAW-NEXT: %[[A:.*]] = adjit.load %[[S]][%[[I]]] : <f32, 1>
// RAW-NEXT: vector.reduction <add>, %[[V]], %[[A]] : vector<4xf32> into f32
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// RAW: adjit.store %{{.*}}, %[[GY]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[DV:.*]] = vector.broadcast %[[G]] : f32 to vector<4xf32>
// RAW-NEXT: %[[OLDS:.*]] = adjit.load %[[GS]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWS:.*]] = arith.addf %[[OLDS]], %[[G]] : f32
// RAW-NEXT: adjit.store %[[NEWS]], %[[GS]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <vector<4xf32>, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DV]] : vector<4xf32>
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <vector<4xf32>, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @reduction_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<vector<4xf32>, 1>, %[[S:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[GX:[^:]*]]: !adjit.array<vector<4xf32>, 1>, %[[GS:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<f32, 1>)
// CANON-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CANON-NEXT: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[DV:.*]] = vector.broadcast %[[G]] : f32 to vector<4xf32>
// CANON-NEXT: %[[OLDS:.*]] = adjit.load %[[GS]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWS:.*]] = arith.addf %[[OLDS]], %[[G]] : f32
// CANON-NEXT: adjit.store %[[NEWS]], %[[GS]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <vector<4xf32>, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DV]] : vector<4xf32>
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <vector<4xf32>, 1>
// CANON-NEXT: return
func.func @reduction(%x: !adjit.array<vector<4xf32>, 1>, %s: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %v = adjit.load %x[%i] : !adjit.array<vector<4xf32>, 1>
  %a = adjit.load %s[%i] : !adjit.array<f32, 1>
  %r = vector.reduction <add>, %v, %a : vector<4xf32> into f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// transpose: the source receives G transposed by the inverse permutation
/// ([1, 2, 0] -> [2, 0, 1]). Here G reaches the transpose through a partial
/// extract (row 1 of a 3-D vector: G inserted as that row of a zero vector),
/// and leaves through a 3-D broadcast (summed over 24 components).
// PRIMAL-LABEL: func.func @transpose(
// RAW-LABEL: func.func @transpose_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<vector<4x2xf32>, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<vector<4x2xf32>, 1>)
// RAW: %[[I:.*]] = adjit.tid : index
// RAW-NEXT: %[[A:.*]] = adjit.load %[[X]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[B:.*]] = vector.broadcast %[[A]] : f32 to vector<2x3x4xf32>
// RAW-NEXT: %[[T:.*]] = vector.transpose %[[B]], [1, 2, 0] : vector<2x3x4xf32> to vector<3x4x2xf32>
// RAW-NEXT: vector.extract %[[T]][1] : vector<4x2xf32> from vector<3x4x2xf32>
// RAW-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <vector<4x2xf32>, 1>
// RAW: adjit.store %{{.*}}, %[[GY]][%[[I]]] : <vector<4x2xf32>, 1>
// RAW-NEXT: %[[Z3D:.*]] = arith.constant dense<0.000000e+00> : vector<3x4x2xf32>
// RAW-NEXT: %[[DT:.*]] = vector.insert %[[G]], %[[Z3D]] [1] : vector<4x2xf32> into vector<3x4x2xf32>
// RAW-NEXT: %[[DB:.*]] = vector.transpose %[[DT]], [2, 0, 1] : vector<3x4x2xf32> to vector<2x3x4xf32>
// RAW-NEXT: %[[FLAT:.*]] = vector.shape_cast %[[DB]] : vector<2x3x4xf32> to vector<24xf32>
// RAW-NEXT: %[[D:.*]] = vector.reduction <add>, %[[FLAT]] : vector<24xf32> into f32
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @transpose_adjoint(
// CANON-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<vector<4x2xf32>, 1>, %[[GX:[^:]*]]: !adjit.array<f32, 1>, %[[GY:[^:]*]]: !adjit.array<vector<4x2xf32>, 1>)
// CANON-DAG: %[[Z3D:.*]] = arith.constant dense<0.000000e+00> : vector<3x4x2xf32>
// CANON-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<4x2xf32>
// CANON: %[[I:.*]] = adjit.tid : index
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]][%[[I]]] : <vector<4x2xf32>, 1>
// CANON-NEXT: adjit.store %[[ZERO]], %[[GY]][%[[I]]] : <vector<4x2xf32>, 1>
// CANON-NEXT: %[[DT:.*]] = vector.insert %[[G]], %[[Z3D]] [1] : vector<4x2xf32> into vector<3x4x2xf32>
// CANON-NEXT: %[[DB:.*]] = vector.transpose %[[DT]], [2, 0, 1] : vector<3x4x2xf32> to vector<2x3x4xf32>
// CANON-NEXT: %[[FLAT:.*]] = vector.shape_cast %[[DB]] : vector<2x3x4xf32> to vector<24xf32>
// CANON-NEXT: %[[D:.*]] = vector.reduction <add>, %[[FLAT]] : vector<24xf32> into f32
// CANON-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[D]] : f32
// CANON-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <f32, 1>
// CANON-NEXT: return
func.func @transpose(%x: !adjit.array<f32, 1>, %y: !adjit.array<vector<4x2xf32>, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %v = vector.broadcast %a : f32 to vector<2x3x4xf32>
  %t = vector.transpose %v, [1, 2, 0] : vector<2x3x4xf32> to vector<3x4x2xf32>
  %e = vector.extract %t[1] : vector<4x2xf32> from vector<3x4x2xf32>
  adjit.store %e, %y[%i] : !adjit.array<vector<4x2xf32>, 1>
  return
}

/// shape_cast: the source receives G cast back to the source's shape (here
/// a 2x2 matrix flattened to 4 components and stored as a vec4).
// PRIMAL-LABEL: func.func @shape_cast(
// RAW-LABEL: func.func @shape_cast_adjoint(
// RAW-SAME: %[[X:[^:]*]]: !adjit.array<vector<2x2xf32>, 1>, %[[Y:[^:]*]]: !adjit.array<vector<4xf32>, 1>, %[[GX:[^:]*]]: !adjit.array<vector<2x2xf32>, 1>, %[[GY:[^:]*]]: !adjit.array<vector<4xf32>, 1>)
// RAW: %[[G:.*]] = adjit.load %[[GY]][%[[I:.*]]] : <vector<4xf32>, 1>
// RAW: %[[DX:.*]] = vector.shape_cast %[[G]] : vector<4xf32> to vector<2x2xf32>
// RAW-NEXT: %[[OLDX:.*]] = adjit.load %[[GX]][%[[I]]] : <vector<2x2xf32>, 1>
// RAW-NEXT: %[[NEWX:.*]] = arith.addf %[[OLDX]], %[[DX]] : vector<2x2xf32>
// RAW-NEXT: adjit.store %[[NEWX]], %[[GX]][%[[I]]] : <vector<2x2xf32>, 1>
// RAW-NEXT: return
// CANON-LABEL: func.func @shape_cast_adjoint(
// CANON: %[[G:.*]] = adjit.load
// CANON: %[[DX:.*]] = vector.shape_cast %[[G]] : vector<4xf32> to vector<2x2xf32>
// CANON: arith.addf %{{.*}}, %[[DX]] : vector<2x2xf32>
func.func @shape_cast(%x: !adjit.array<vector<2x2xf32>, 1>, %y: !adjit.array<vector<4xf32>, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %m = adjit.load %x[%i] : !adjit.array<vector<2x2xf32>, 1>
  %f = vector.shape_cast %m : vector<2x2xf32> to vector<4xf32>
  adjit.store %f, %y[%i] : !adjit.array<vector<4xf32>, 1>
  return
}

/// contract, a matrix product (tile_matmul's form) C = A B + acc: dA = G B^T
/// and dB = A^T G are contractions with a transposed operand (their types
/// show it), dacc = G. After canonicalize the zero accumulators fold into
/// the gradient arrays' old values.
// PRIMAL-LABEL: func.func @matmul(
// CANON-LABEL: func.func @matmul_adjoint(
// CANON-SAME: %[[GA:[^:]*]]: !adjit.array<vector<2x3xf32>, 1>, %[[GB:[^:]*]]: !adjit.array<vector<3x4xf32>, 1>, %[[GC:[^:]*]]: !adjit.array<vector<2x4xf32>, 1>, %[[GY:[^:]*]]: !adjit.array<vector<2x4xf32>, 1>)
// CANON: %[[A:.*]] = adjit.load %{{.*}} : <vector<2x3xf32>, 1>
// CANON-NEXT: %[[B:.*]] = adjit.load %{{.*}} : <vector<3x4xf32>, 1>
// CANON-NEXT: %[[G:.*]] = adjit.load %[[GY]]
// CANON: %[[OLDC:.*]] = adjit.load %[[GC]]
// CANON-NEXT: %[[DC:.*]] = arith.addf %[[OLDC]], %[[G]] : vector<2x4xf32>
// CANON-NEXT: adjit.store %[[DC]], %[[GC]]
// CANON-NEXT: %[[OLDB:.*]] = adjit.load %[[GB]]
// CANON-NEXT: %[[DB:.*]] = vector.contract {{.*}} %[[A]], %[[G]], %[[OLDB]] : vector<2x3xf32>, vector<2x4xf32> into vector<3x4xf32>
// CANON-NEXT: adjit.store %[[DB]], %[[GB]]
// CANON-NEXT: %[[OLDA:.*]] = adjit.load %[[GA]]
// CANON-NEXT: %[[DA:.*]] = vector.contract {{.*}} %[[G]], %[[B]], %[[OLDA]] : vector<2x4xf32>, vector<3x4xf32> into vector<2x3xf32>
// CANON-NEXT: adjit.store %[[DA]], %[[GA]]
// CANON-NEXT: return
func.func @matmul(%a: !adjit.array<vector<2x3xf32>, 1>, %b: !adjit.array<vector<3x4xf32>, 1>, %c: !adjit.array<vector<2x4xf32>, 1>, %y: !adjit.array<vector<2x4xf32>, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %x = adjit.load %a[%i] : !adjit.array<vector<2x3xf32>, 1>
  %w = adjit.load %b[%i] : !adjit.array<vector<3x4xf32>, 1>
  %acc = adjit.load %c[%i] : !adjit.array<vector<2x4xf32>, 1>
  %p = vector.contract {indexing_maps = [affine_map<(i, j, r) -> (i, r)>, affine_map<(i, j, r) -> (r, j)>, affine_map<(i, j, r) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %x, %w, %acc : vector<2x3xf32>, vector<3x4xf32> into vector<2x4xf32>
  adjit.store %p, %y[%i] : !adjit.array<vector<2x4xf32>, 1>
  return
}
