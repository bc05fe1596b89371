// RUN: adjit-opt %s --adjit-tangent=keep-primal=false | FileCheck %s

// adjit-tangent: the tangent rules of the vector ops and of adjit's
// component, memory and stop_gradient ops. These ops are linear, so each
// tangent is the same op applied to the tangents (zeros where an operand has
// none), emitted right after the op; array accesses mirror themselves on the
// tangent array.

/// from_elements: the tangents of the elements, a zero for each constant;
/// to_elements: the elements of the tangent.
// CHECK-LABEL: func.func @elements_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[Y:[^:]*]]: !adjit.array<vector<2x2xf32>, 1>, %[[N:[^:]*]]: !adjit.array<f32, 1>, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TY:[^:]*]]: !adjit.array<vector<2x2xf32>, 1>, %[[TN:[^:]*]]: !adjit.array<f32, 1>)
// CHECK: %[[A:.*]] = adjit.load %[[X]]
// CHECK-NEXT: %[[TA:.*]] = adjit.load %[[TX]]
// CHECK-NEXT: %[[C2:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[V:.*]] = vector.from_elements %[[A]], %[[C2]], %[[C2]], %[[A]] : vector<2x2xf32>
// CHECK-NEXT: %[[Z0:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[Z1:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[TV:.*]] = vector.from_elements %[[TA]], %[[Z0]], %[[Z1]], %[[TA]] : vector<2x2xf32>
// CHECK-NEXT: adjit.store %[[V]], %[[Y]]
// CHECK-NEXT: adjit.store %[[TV]], %[[TY]]
// CHECK-NEXT: %[[E:.*]]:4 = vector.to_elements %[[V]] : vector<2x2xf32>
// CHECK-NEXT: %[[TE:.*]]:4 = vector.to_elements %[[TV]] : vector<2x2xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[E]]#0, %[[E]]#1 : f32
// CHECK-NEXT: %[[TS:.*]] = arith.addf %[[TE]]#0, %[[TE]]#1 : f32
// CHECK-NEXT: adjit.store %[[S]], %[[N]]
// CHECK-NEXT: adjit.store %[[TS]], %[[TN]]
func.func @elements(%x: !adjit.array<f32, 1>, %y: !adjit.array<vector<2x2xf32>, 1>, %n: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %c2 = arith.constant 2.0 : f32
  %v = vector.from_elements %a, %c2, %c2, %a : vector<2x2xf32>
  adjit.store %v, %y[%i] : !adjit.array<vector<2x2xf32>, 1>
  %e:4 = vector.to_elements %v : vector<2x2xf32>
  %s = arith.addf %e#0, %e#1 : f32
  adjit.store %s, %n[%i] : !adjit.array<f32, 1>
  return
}

/// vector.extract / vector.insert, at static and at dynamic positions (the
/// tangent uses the same position value): a constant inserted has a zero
/// tangent component.
// CHECK-LABEL: func.func @extract_insert_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[K:[^:]*]]: !adjit.array<i32, 1>, %[[Y:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[TX:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[TY:[^:]*]]: !adjit.array<vector<3xf32>, 1>)
// CHECK: %[[V:.*]] = adjit.load %[[X]]
// CHECK-NEXT: %[[TV:.*]] = adjit.load %[[TX]]
// CHECK-NEXT: %[[E:.*]] = vector.extract %[[V]][1] : f32 from vector<3xf32>
// CHECK-NEXT: %[[TE:.*]] = vector.extract %[[TV]][1] : f32 from vector<3xf32>
// CHECK-NEXT: %[[KK:.*]] = adjit.load %[[K]]
// CHECK-NEXT: %[[J:.*]] = arith.index_cast %[[KK]] : i32 to index
// CHECK-NEXT: %[[D:.*]] = vector.extract %[[V]][%[[J]]] : f32 from vector<3xf32>
// CHECK-NEXT: %[[TD:.*]] = vector.extract %[[TV]][%[[J]]] : f32 from vector<3xf32>
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[E]], %[[D]] : f32
// CHECK-NEXT: %[[F1:.*]] = arith.mulf %[[TE]], %[[D]] : f32
// CHECK-NEXT: %[[F2:.*]] = arith.mulf %[[TD]], %[[E]] : f32
// CHECK-NEXT: %[[TP:.*]] = arith.addf %[[F1]], %[[F2]] : f32
// CHECK-NEXT: %[[W:.*]] = vector.insert %[[P]], %[[V]] [0] : f32 into vector<3xf32>
// CHECK-NEXT: %[[TW:.*]] = vector.insert %[[TP]], %[[TV]] [0] : f32 into vector<3xf32>
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[U:.*]] = vector.insert %[[C0]], %[[W]] [%[[J]]] : f32 into vector<3xf32>
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[TU:.*]] = vector.insert %[[Z]], %[[TW]] [%[[J]]] : f32 into vector<3xf32>
// CHECK-NEXT: adjit.store %[[U]], %[[Y]]
// CHECK-NEXT: adjit.store %[[TU]], %[[TY]]
func.func @extract_insert(%x: !adjit.array<vector<3xf32>, 1>, %k: !adjit.array<i32, 1>, %y: !adjit.array<vector<3xf32>, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %v = adjit.load %x[%i] : !adjit.array<vector<3xf32>, 1>
  %e = vector.extract %v[1] : f32 from vector<3xf32>
  %kk = adjit.load %k[%i] : !adjit.array<i32, 1>
  %j = arith.index_cast %kk : i32 to index
  %d = vector.extract %v[%j] : f32 from vector<3xf32>
  %p = arith.mulf %e, %d : f32
  %w = vector.insert %p, %v[0] : f32 into vector<3xf32>
  %c0 = arith.constant 0.0 : f32
  %u = vector.insert %c0, %w[%j] : f32 into vector<3xf32>
  adjit.store %u, %y[%i] : !adjit.array<vector<3xf32>, 1>
  return
}

/// broadcast (of a scalar and of a vector), transpose and shape_cast apply
/// to the tangent as to the value; reduction <add> sums the tangent, with the
/// accumulator's tangent as its accumulator (none for a constant one).
// CHECK-LABEL: func.func @broadcast_reduce_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[M:[^:]*]]: !adjit.array<vector<2x3xf32>, 1>, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[T:[^:]*]]: !adjit.array<vector<3x2xf32>, 1>, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TM:[^:]*]]: !adjit.array<vector<2x3xf32>, 1>, %[[TY:[^:]*]]: !adjit.array<f32, 1>, %[[TT:[^:]*]]: !adjit.array<vector<3x2xf32>, 1>)
// CHECK: %[[A:.*]] = adjit.load %[[X]]
// CHECK-NEXT: %[[TA:.*]] = adjit.load %[[TX]]
// CHECK-NEXT: %[[B:.*]] = vector.broadcast %[[A]] : f32 to vector<3xf32>
// CHECK-NEXT: %[[TB:.*]] = vector.broadcast %[[TA]] : f32 to vector<3xf32>
// CHECK-NEXT: %[[BM:.*]] = vector.broadcast %[[B]] : vector<3xf32> to vector<2x3xf32>
// CHECK-NEXT: %[[TBM:.*]] = vector.broadcast %[[TB]] : vector<3xf32> to vector<2x3xf32>
// CHECK-NEXT: %[[MM:.*]] = adjit.load %[[M]]
// CHECK-NEXT: %[[TMM:.*]] = adjit.load %[[TM]]
// CHECK-NEXT: %[[PM:.*]] = arith.mulf %[[BM]], %[[MM]] : vector<2x3xf32>
// CHECK-NEXT: %[[F1:.*]] = arith.mulf %[[TBM]], %[[MM]] : vector<2x3xf32>
// CHECK-NEXT: %[[F2:.*]] = arith.mulf %[[TMM]], %[[BM]] : vector<2x3xf32>
// CHECK-NEXT: %[[TPM:.*]] = arith.addf %[[F1]], %[[F2]] : vector<2x3xf32>
// CHECK-NEXT: %[[TR:.*]] = vector.transpose %[[PM]], [1, 0] : vector<2x3xf32> to vector<3x2xf32>
// CHECK-NEXT: %[[TTR:.*]] = vector.transpose %[[TPM]], [1, 0] : vector<2x3xf32> to vector<3x2xf32>
// CHECK-NEXT: adjit.store %[[TR]], %[[T]]
// CHECK-NEXT: adjit.store %[[TTR]], %[[TT]]
// CHECK-NEXT: %[[FL:.*]] = vector.shape_cast %[[PM]] : vector<2x3xf32> to vector<6xf32>
// CHECK-NEXT: %[[TFL:.*]] = vector.shape_cast %[[TPM]] : vector<2x3xf32> to vector<6xf32>
// CHECK-NEXT: %[[S:.*]] = vector.reduction <add>, %[[FL]], %[[A]] : vector<6xf32> into f32
// CHECK-NEXT: %[[TS:.*]] = vector.reduction <add>, %[[TFL]], %[[TA]] : vector<6xf32> into f32
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[S2:.*]] = vector.reduction <add>, %[[B]], %[[C1]] : vector<3xf32> into f32
// CHECK-NEXT: %[[TS2:.*]] = vector.reduction <add>, %[[TB]] : vector<3xf32> into f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[S]], %[[S2]] : f32
// CHECK-NEXT: %[[TRR:.*]] = arith.addf %[[TS]], %[[TS2]] : f32
// CHECK-NEXT: adjit.store %[[R]], %[[Y]]
// CHECK-NEXT: adjit.store %[[TRR]], %[[TY]]
func.func @broadcast_reduce(%x: !adjit.array<f32, 1>, %m: !adjit.array<vector<2x3xf32>, 1>, %y: !adjit.array<f32, 1>, %t: !adjit.array<vector<3x2xf32>, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %b = vector.broadcast %a : f32 to vector<3xf32>
  %bm = vector.broadcast %b : vector<3xf32> to vector<2x3xf32>
  %mm = adjit.load %m[%i] : !adjit.array<vector<2x3xf32>, 1>
  %pm = arith.mulf %bm, %mm : vector<2x3xf32>
  %tr = vector.transpose %pm, [1, 0] : vector<2x3xf32> to vector<3x2xf32>
  adjit.store %tr, %t[%i] : !adjit.array<vector<3x2xf32>, 1>
  %flat = vector.shape_cast %pm : vector<2x3xf32> to vector<6xf32>
  %s = vector.reduction <add>, %flat, %a : vector<6xf32> into f32
  %c1 = arith.constant 1.0 : f32
  %s2 = vector.reduction <add>, %b, %c1 : vector<3xf32> into f32
  %r = arith.addf %s, %s2 : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// load_component / store_component read and write the same component of
/// the tangent array; adjit.extract / adjit.insert act on the tangent; the
/// tangent of stop_gradient is zero (an explicit zero is stored); an atomic
/// add adds the tangent into the tangent array, atomically.
// CHECK-LABEL: func.func @components_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[Y:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[ACC:[^:]*]]: !adjit.array<f32, 1>, %[[TX:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[TY:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[TACC:[^:]*]]: !adjit.array<f32, 1>)
// CHECK-NEXT: %[[I:.*]] = adjit.tid : index
// CHECK-NEXT: %[[C:.*]] = adjit.load_component %[[X]][%[[I]]] [2] : <vector<3xf32>, 1> -> f32
// CHECK-NEXT: %[[TC:.*]] = adjit.load_component %[[TX]][%[[I]]] [2] : <vector<3xf32>, 1> -> f32
// CHECK-NEXT: %[[V:.*]] = adjit.load %[[X]][%[[I]]]
// CHECK-NEXT: %[[TV:.*]] = adjit.load %[[TX]][%[[I]]]
// CHECK-NEXT: %[[E:.*]] = adjit.extract %[[V]] [0] : vector<3xf32> -> f32
// CHECK-NEXT: %[[TE:.*]] = adjit.extract %[[TV]] [0] : vector<3xf32> -> f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[C]], %[[E]] : f32
// CHECK-NEXT: %[[F1:.*]] = arith.mulf %[[TC]], %[[E]] : f32
// CHECK-NEXT: %[[F2:.*]] = arith.mulf %[[TE]], %[[C]] : f32
// CHECK-NEXT: %[[TP:.*]] = arith.addf %[[F1]], %[[F2]] : f32
// CHECK-NEXT: %[[W:.*]] = adjit.insert %[[P]], %[[V]] [1] : f32 into vector<3xf32>
// CHECK-NEXT: %[[TW:.*]] = adjit.insert %[[TP]], %[[TV]] [1] : f32 into vector<3xf32>
// CHECK-NEXT: adjit.store %[[W]], %[[Y]][%[[I]]]
// CHECK-NEXT: adjit.store %[[TW]], %[[TY]][%[[I]]]
// CHECK-NEXT: %[[SG:.*]] = adjit.stop_gradient %[[P]] : f32
// CHECK-NEXT: adjit.store_component %[[SG]], %[[Y]][%[[I]]] [0] : f32, <vector<3xf32>, 1>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: adjit.store_component %[[ZERO]], %[[TY]][%[[I]]] [0] : f32, <vector<3xf32>, 1>
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: adjit.atomic_add %[[P]], %[[ACC]][%[[C0]]] [] : f32, <f32, 1>
// CHECK-NEXT: adjit.atomic_add %[[TP]], %[[TACC]][%[[C0]]] [] : f32, <f32, 1>
// CHECK-NEXT: return
func.func @components(%x: !adjit.array<vector<3xf32>, 1>, %y: !adjit.array<vector<3xf32>, 1>, %acc: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c = adjit.load_component %x[%i] [2] : !adjit.array<vector<3xf32>, 1> -> f32
  %v = adjit.load %x[%i] : !adjit.array<vector<3xf32>, 1>
  %e = adjit.extract %v [0] : vector<3xf32> -> f32
  %p = arith.mulf %c, %e : f32
  %w = adjit.insert %p, %v [1] : f32 into vector<3xf32>
  adjit.store %w, %y[%i] : !adjit.array<vector<3xf32>, 1>
  %sg = adjit.stop_gradient %p : f32
  adjit.store_component %sg, %y[%i] [0] : f32, !adjit.array<vector<3xf32>, 1>
  %c0 = arith.constant 0 : index
  %old = adjit.atomic_add %p, %acc[%c0] [] : f32, !adjit.array<f32, 1>
  return
}

/// contract, a matrix product (tile_matmul's form): d(A B + acc) = dA B +
/// A dB + dacc, as two contractions accumulating into dacc.
// CHECK-LABEL: func.func @matmul_tangent(
// CHECK: %[[A:.*]] = adjit.load %arg0
// CHECK-NEXT: %[[TA:.*]] = adjit.load %arg4
// CHECK-NEXT: %[[B:.*]] = adjit.load %arg1
// CHECK-NEXT: %[[TB:.*]] = adjit.load %arg5
// CHECK-NEXT: %[[C:.*]] = adjit.load %arg2
// CHECK-NEXT: %[[TC:.*]] = adjit.load %arg6
// CHECK-NEXT: %[[P:.*]] = vector.contract {{.*}} %[[A]], %[[B]], %[[C]] : vector<2x3xf32>, vector<3x4xf32> into vector<2x4xf32>
// CHECK-NEXT: %[[T1:.*]] = vector.contract {{.*}} %[[TA]], %[[B]], %[[TC]] : vector<2x3xf32>, vector<3x4xf32> into vector<2x4xf32>
// CHECK-NEXT: %[[T2:.*]] = vector.contract {{.*}} %[[A]], %[[TB]], %[[T1]] : vector<2x3xf32>, vector<3x4xf32> into vector<2x4xf32>
// CHECK-NEXT: adjit.store %[[P]], %arg3
// CHECK-NEXT: adjit.store %[[T2]], %arg7
func.func @matmul(%a: !adjit.array<vector<2x3xf32>, 1>, %b: !adjit.array<vector<3x4xf32>, 1>, %c: !adjit.array<vector<2x4xf32>, 1>, %y: !adjit.array<vector<2x4xf32>, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %x = adjit.load %a[%i] : !adjit.array<vector<2x3xf32>, 1>
  %w = adjit.load %b[%i] : !adjit.array<vector<3x4xf32>, 1>
  %acc = adjit.load %c[%i] : !adjit.array<vector<2x4xf32>, 1>
  %p = vector.contract {indexing_maps = [affine_map<(i, j, r) -> (i, r)>, affine_map<(i, j, r) -> (r, j)>, affine_map<(i, j, r) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %x, %w, %acc : vector<2x3xf32>, vector<3x4xf32> into vector<2x4xf32>
  adjit.store %p, %y[%i] : !adjit.array<vector<2x4xf32>, 1>
  return
}
