// RUN: adjit-opt %s | adjit-opt | FileCheck %s
// RUN: adjit-opt %s --mlir-print-op-generic | adjit-opt | FileCheck %s

// Round trip of every adjit op and of !adjit.array, in both the custom and
// the generic form. atomic_add with a position is in atomic-add-position.mlir.

/// Every array scalar, vector and matrix element type and every rank parses.
// CHECK-LABEL: func.func private @array_types(
// CHECK-SAME: !adjit.array<f32, 1>, !adjit.array<f64, 2>, !adjit.array<i32, 3>, !adjit.array<i64, 4>,
// CHECK-SAME: !adjit.array<vector<2xf32>, 1>, !adjit.array<vector<3xf64>, 1>, !adjit.array<vector<4xi32>, 1>,
// CHECK-SAME: !adjit.array<vector<2x2xf32>, 1>, !adjit.array<vector<3x3xf64>, 2>, !adjit.array<vector<4x2xf32>, 1>)
func.func private @array_types(
    !adjit.array<f32, 1>, !adjit.array<f64, 2>, !adjit.array<i32, 3>, !adjit.array<i64, 4>,
    !adjit.array<vector<2xf32>, 1>, !adjit.array<vector<3xf64>, 1>, !adjit.array<vector<4xi32>, 1>,
    !adjit.array<vector<2x2xf32>, 1>, !adjit.array<vector<3x3xf64>, 2>, !adjit.array<vector<4x2xf32>, 1>)

/// tid yields one to four coordinates.
// CHECK-LABEL: func.func @tid(
// CHECK: %{{.*}} = adjit.tid : index
// CHECK: %{{.*}}:2 = adjit.tid : index, index
// CHECK: %{{.*}}:3 = adjit.tid : index, index, index
// CHECK: %{{.*}}:4 = adjit.tid : index, index, index, index
func.func @tid() attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a, %b = adjit.tid : index, index
  %c:3 = adjit.tid : index, index, index
  %d:4 = adjit.tid : index, index, index, index
  return
}

/// dim reads an extent of any dimension.
// CHECK-LABEL: func.func @dim(
// CHECK-SAME: %[[X:.*]]: !adjit.array<vector<3xf32>, 3>)
// CHECK: adjit.dim %[[X]], 0 : <vector<3xf32>, 3>
// CHECK: adjit.dim %[[X]], 2 : <vector<3xf32>, 3>
func.func @dim(%x: !adjit.array<vector<3xf32>, 3>) -> (index, index) {
  %n0 = adjit.dim %x, 0 : !adjit.array<vector<3xf32>, 3>
  %n2 = adjit.dim %x, 2 : !adjit.array<vector<3xf32>, 3>
  return %n0, %n2 : index, index
}

/// load/store of scalar elements, one index per dimension.
// CHECK-LABEL: func.func @load_store_scalar(
// CHECK-SAME: %[[X:.*]]: !adjit.array<f32, 1>, %[[Y:.*]]: !adjit.array<i64, 2>)
// CHECK: %[[I:.*]]:2 = adjit.tid : index, index
// CHECK: %[[V:.*]] = adjit.load %[[X]][%[[I]]#0] : <f32, 1>
// CHECK: %[[W:.*]] = adjit.load %[[Y]][%[[I]]#0, %[[I]]#1] : <i64, 2>
// CHECK: adjit.store %[[V]], %[[X]][%[[I]]#1] : <f32, 1>
// CHECK: adjit.store %[[W]], %[[Y]][%[[I]]#1, %[[I]]#0] : <i64, 2>
func.func @load_store_scalar(%x: !adjit.array<f32, 1>, %y: !adjit.array<i64, 2>) attributes {adjit.kernel} {
  %i, %j = adjit.tid : index, index
  %v = adjit.load %x[%i] : !adjit.array<f32, 1>
  %w = adjit.load %y[%i, %j] : !adjit.array<i64, 2>
  adjit.store %v, %x[%j] : !adjit.array<f32, 1>
  adjit.store %w, %y[%j, %i] : !adjit.array<i64, 2>
  return
}

/// load/store of whole vector and matrix elements yield vector values.
// CHECK-LABEL: func.func @load_store_aggregate(
// CHECK-SAME: %[[P:.*]]: !adjit.array<vector<3xf32>, 1>, %[[Q:.*]]: !adjit.array<vector<2x3xf64>, 1>, %[[I:.*]]: index)
// CHECK: %[[V:.*]] = adjit.load %[[P]][%[[I]]] : <vector<3xf32>, 1>
// CHECK: %[[M:.*]] = adjit.load %[[Q]][%[[I]]] : <vector<2x3xf64>, 1>
// CHECK: adjit.store %[[V]], %[[P]][%[[I]]] : <vector<3xf32>, 1>
// CHECK: adjit.store %[[M]], %[[Q]][%[[I]]] : <vector<2x3xf64>, 1>
// CHECK: return %[[V]], %[[M]] : vector<3xf32>, vector<2x3xf64>
func.func @load_store_aggregate(%p: !adjit.array<vector<3xf32>, 1>, %q: !adjit.array<vector<2x3xf64>, 1>, %i: index) -> (vector<3xf32>, vector<2x3xf64>) {
  %v = adjit.load %p[%i] : !adjit.array<vector<3xf32>, 1>
  %m = adjit.load %q[%i] : !adjit.array<vector<2x3xf64>, 1>
  adjit.store %v, %p[%i] : !adjit.array<vector<3xf32>, 1>
  adjit.store %m, %q[%i] : !adjit.array<vector<2x3xf64>, 1>
  return %v, %m : vector<3xf32>, vector<2x3xf64>
}

/// load_component reads a vector component, a matrix row or a matrix entry.
// CHECK-LABEL: func.func @load_component(
// CHECK-SAME: %[[P:.*]]: !adjit.array<vector<3xf32>, 2>, %[[Q:.*]]: !adjit.array<vector<3x4xf32>, 1>, %[[I:.*]]: index)
// CHECK: adjit.load_component %[[P]][%[[I]], %[[I]]] [2] : <vector<3xf32>, 2> -> f32
// CHECK: adjit.load_component %[[Q]][%[[I]]] [1] : <vector<3x4xf32>, 1> -> vector<4xf32>
// CHECK: adjit.load_component %[[Q]][%[[I]]] [2, 3] : <vector<3x4xf32>, 1> -> f32
func.func @load_component(%p: !adjit.array<vector<3xf32>, 2>, %q: !adjit.array<vector<3x4xf32>, 1>, %i: index) -> (f32, vector<4xf32>, f32) {
  %z = adjit.load_component %p[%i, %i] [2] : !adjit.array<vector<3xf32>, 2> -> f32
  %row = adjit.load_component %q[%i] [1] : !adjit.array<vector<3x4xf32>, 1> -> vector<4xf32>
  %e = adjit.load_component %q[%i] [2, 3] : !adjit.array<vector<3x4xf32>, 1> -> f32
  return %z, %row, %e : f32, vector<4xf32>, f32
}

/// store_component writes a vector component, a matrix row or a matrix entry.
// CHECK-LABEL: func.func @store_component(
// CHECK-SAME: %[[P:.*]]: !adjit.array<vector<2xi32>, 1>, %[[Q:.*]]: !adjit.array<vector<2x2xf64>, 1>, %[[I:.*]]: index, %[[S:.*]]: i32, %[[R:.*]]: vector<2xf64>, %[[E:.*]]: f64)
// CHECK: adjit.store_component %[[S]], %[[P]][%[[I]]] [1] : i32, <vector<2xi32>, 1>
// CHECK: adjit.store_component %[[R]], %[[Q]][%[[I]]] [0] : vector<2xf64>, <vector<2x2xf64>, 1>
// CHECK: adjit.store_component %[[E]], %[[Q]][%[[I]]] [1, 1] : f64, <vector<2x2xf64>, 1>
func.func @store_component(%p: !adjit.array<vector<2xi32>, 1>, %q: !adjit.array<vector<2x2xf64>, 1>, %i: index, %s: i32, %r: vector<2xf64>, %e: f64) {
  adjit.store_component %s, %p[%i] [1] : i32, !adjit.array<vector<2xi32>, 1>
  adjit.store_component %r, %q[%i] [0] : vector<2xf64>, !adjit.array<vector<2x2xf64>, 1>
  adjit.store_component %e, %q[%i] [1, 1] : f64, !adjit.array<vector<2x2xf64>, 1>
  return
}

/// atomic_add without a position adds a whole scalar, vector or matrix element.
// CHECK-LABEL: func.func @atomic_add(
// CHECK-SAME: %[[X:.*]]: !adjit.array<f32, 1>, %[[N:.*]]: !adjit.array<i32, 2>, %[[P:.*]]: !adjit.array<vector<3xf32>, 1>, %[[Q:.*]]: !adjit.array<vector<2x2xf64>, 1>, %[[I:.*]]: index, %[[S:.*]]: f32, %[[K:.*]]: i32, %[[V:.*]]: vector<3xf32>, %[[M:.*]]: vector<2x2xf64>)
// CHECK: %[[OS:.*]] = adjit.atomic_add %[[S]], %[[X]][%[[I]]] [] : f32, <f32, 1>
// CHECK: %[[OK:.*]] = adjit.atomic_add %[[K]], %[[N]][%[[I]], %[[I]]] [] : i32, <i32, 2>
// CHECK: %[[OV:.*]] = adjit.atomic_add %[[V]], %[[P]][%[[I]]] [] : vector<3xf32>, <vector<3xf32>, 1>
// CHECK: %[[OM:.*]] = adjit.atomic_add %[[M]], %[[Q]][%[[I]]] [] : vector<2x2xf64>, <vector<2x2xf64>, 1>
// CHECK: return %[[OS]], %[[OK]], %[[OV]], %[[OM]]
func.func @atomic_add(%x: !adjit.array<f32, 1>, %n: !adjit.array<i32, 2>, %p: !adjit.array<vector<3xf32>, 1>, %q: !adjit.array<vector<2x2xf64>, 1>,
                      %i: index, %s: f32, %k: i32, %v: vector<3xf32>, %m: vector<2x2xf64>) -> (f32, i32, vector<3xf32>, vector<2x2xf64>) {
  %os = adjit.atomic_add %s, %x[%i] [] : f32, !adjit.array<f32, 1>
  %ok = adjit.atomic_add %k, %n[%i, %i] [] : i32, !adjit.array<i32, 2>
  %ov = adjit.atomic_add %v, %p[%i] [] : vector<3xf32>, !adjit.array<vector<3xf32>, 1>
  %om = adjit.atomic_add %m, %q[%i] [] : vector<2x2xf64>, !adjit.array<vector<2x2xf64>, 1>
  return %os, %ok, %ov, %om : f32, i32, vector<3xf32>, vector<2x2xf64>
}

/// extract reads a vector component, a matrix row or a matrix entry.
// CHECK-LABEL: func.func @extract(
// CHECK-SAME: %[[V:.*]]: vector<4xf32>, %[[M:.*]]: vector<3x3xf64>)
// CHECK: %[[X:.*]] = adjit.extract %[[V]] [3] : vector<4xf32> -> f32
// CHECK: %[[R:.*]] = adjit.extract %[[M]] [1] : vector<3x3xf64> -> vector<3xf64>
// CHECK: %[[E:.*]] = adjit.extract %[[M]] [1, 2] : vector<3x3xf64> -> f64
// CHECK: return %[[X]], %[[R]], %[[E]]
func.func @extract(%v: vector<4xf32>, %m: vector<3x3xf64>) -> (f32, vector<3xf64>, f64) {
  %x = adjit.extract %v [3] : vector<4xf32> -> f32
  %r = adjit.extract %m [1] : vector<3x3xf64> -> vector<3xf64>
  %e = adjit.extract %m [1, 2] : vector<3x3xf64> -> f64
  return %x, %r, %e : f32, vector<3xf64>, f64
}

/// insert replaces a vector component, a matrix row or a matrix entry.
// CHECK-LABEL: func.func @insert(
// CHECK-SAME: %[[V:.*]]: vector<2xi64>, %[[M:.*]]: vector<2x3xf32>, %[[S:.*]]: i64, %[[R:.*]]: vector<3xf32>, %[[F:.*]]: f32)
// CHECK: %[[W:.*]] = adjit.insert %[[S]], %[[V]] [0] : i64 into vector<2xi64>
// CHECK: %[[M1:.*]] = adjit.insert %[[R]], %[[M]] [1] : vector<3xf32> into vector<2x3xf32>
// CHECK: %[[M2:.*]] = adjit.insert %[[F]], %[[M1]] [0, 2] : f32 into vector<2x3xf32>
// CHECK: return %[[W]], %[[M2]]
func.func @insert(%v: vector<2xi64>, %m: vector<2x3xf32>, %s: i64, %r: vector<3xf32>, %f: f32) -> (vector<2xi64>, vector<2x3xf32>) {
  %w = adjit.insert %s, %v [0] : i64 into vector<2xi64>
  %m1 = adjit.insert %r, %m [1] : vector<3xf32> into vector<2x3xf32>
  %m2 = adjit.insert %f, %m1 [0, 2] : f32 into vector<2x3xf32>
  return %w, %m2 : vector<2xi64>, vector<2x3xf32>
}

/// call reaches private device functions with zero, one or several results.
// CHECK-LABEL: func.func private @sq(
// CHECK-LABEL: func.func private @swap(
// CHECK-LABEL: func.func private @sink(
// CHECK-LABEL: func.func @call(
// CHECK-SAME: %[[X:.*]]: f32, %[[V:.*]]: vector<3xf32>)
// CHECK: %[[S:.*]] = adjit.call @sq(%[[X]]) : (f32) -> f32
// CHECK: %[[P:.*]]:2 = adjit.call @swap(%[[V]], %[[S]]) : (vector<3xf32>, f32) -> (f32, vector<3xf32>)
// CHECK: adjit.call @sink() : () -> ()
// CHECK: return %[[P]]#0, %[[P]]#1
func.func private @sq(%x: f32) -> f32 {
  %r = arith.mulf %x, %x : f32
  return %r : f32
}
func.func private @swap(%v: vector<3xf32>, %s: f32) -> (f32, vector<3xf32>) {
  return %s, %v : f32, vector<3xf32>
}
func.func private @sink()
func.func @call(%x: f32, %v: vector<3xf32>) -> (f32, vector<3xf32>) {
  %s = adjit.call @sq(%x) : (f32) -> f32
  %a, %b = adjit.call @swap(%v, %s) : (vector<3xf32>, f32) -> (f32, vector<3xf32>)
  adjit.call @sink() : () -> ()
  return %a, %b : f32, vector<3xf32>
}

/// The kernel marker is a unit attribute on func.func and survives the trip.
// CHECK-LABEL: func.func @kernel_attr(
// CHECK-SAME: attributes {adjit.kernel}
func.func @kernel_attr(%x: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  return
}
