// RUN: adjit-opt %s --adjit-lower-to-std | FileCheck %s
// RUN: adjit-opt %s --adjit-lower-to-std | adjit-opt | FileCheck %s --check-prefix=NOADJIT

// adjit-lower-to-std: arrays become memref<?x..x COMPONENTS x scalar>, each
// element or component access becomes one memref access per scalar, extract
// and insert become vector ops, call becomes func.call, dim becomes
// memref.dim, and adjit.tid is left for the launch passes.

// Nothing of adjit but tid survives, and the output parses again.
// NOADJIT-NOT: !adjit.array
// NOADJIT-NOT: adjit.{{load|store|atomic_add|extract|insert|call|dim}}

/// Array types convert in signatures, including declarations and results.
// CHECK-LABEL: func.func private @types(
// CHECK-SAME: memref<?xf32>, memref<?x?xf64>, memref<?x?x?x?xi64>, memref<?x3xf32>, memref<?x?x2x3xf64>) -> memref<?x?x?xi32>
func.func private @types(!adjit.array<f32, 1>, !adjit.array<f64, 2>, !adjit.array<i64, 4>,
                         !adjit.array<vector<3xf32>, 1>, !adjit.array<vector<2x3xf64>, 2>) -> !adjit.array<i32, 3>

/// Scalar elements are one memref access with the same indices.
// CHECK-LABEL: func.func @load_store_scalar(
// CHECK-SAME: %[[X:.*]]: memref<?x?xf32>, %[[I:.*]]: index, %[[J:.*]]: index)
// CHECK-NEXT: %[[V:.*]] = memref.load %[[X]][%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK-NEXT: memref.store %[[V]], %[[X]][%[[J]], %[[I]]] : memref<?x?xf32>
// CHECK-NEXT: return
func.func @load_store_scalar(%x: !adjit.array<f32, 2>, %i: index, %j: index) {
  %v = adjit.load %x[%i, %j] : !adjit.array<f32, 2>
  adjit.store %v, %x[%j, %i] : !adjit.array<f32, 2>
  return
}

/// A vector element is loaded component by component and assembled.
// CHECK-LABEL: func.func @load_vector(
// CHECK-SAME: %[[P:.*]]: memref<?x3xf32>, %[[I:.*]]: index) -> vector<3xf32>
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[E0:.*]] = memref.load %[[P]][%[[I]], %[[C0]]] : memref<?x3xf32>
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[E1:.*]] = memref.load %[[P]][%[[I]], %[[C1]]] : memref<?x3xf32>
// CHECK-NEXT: %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[E2:.*]] = memref.load %[[P]][%[[I]], %[[C2]]] : memref<?x3xf32>
// CHECK-NEXT: %[[V:.*]] = vector.from_elements %[[E0]], %[[E1]], %[[E2]] : vector<3xf32>
// CHECK-NEXT: return %[[V]] : vector<3xf32>
func.func @load_vector(%p: !adjit.array<vector<3xf32>, 1>, %i: index) -> vector<3xf32> {
  %v = adjit.load %p[%i] : !adjit.array<vector<3xf32>, 1>
  return %v : vector<3xf32>
}

/// A vector element is stored component by component.
// CHECK-LABEL: func.func @store_vector(
// CHECK-SAME: %[[P:.*]]: memref<?x2xi32>, %[[I:.*]]: index, %[[V:.*]]: vector<2xi32>)
// CHECK-NEXT: %[[E0:.*]] = vector.extract %[[V]][0] : i32 from vector<2xi32>
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: memref.store %[[E0]], %[[P]][%[[I]], %[[C0]]] : memref<?x2xi32>
// CHECK-NEXT: %[[E1:.*]] = vector.extract %[[V]][1] : i32 from vector<2xi32>
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: memref.store %[[E1]], %[[P]][%[[I]], %[[C1]]] : memref<?x2xi32>
// CHECK-NEXT: return
func.func @store_vector(%p: !adjit.array<vector<2xi32>, 1>, %i: index, %v: vector<2xi32>) {
  adjit.store %v, %p[%i] : !adjit.array<vector<2xi32>, 1>
  return
}

/// A matrix element is loaded row by row into a zero matrix.
// CHECK-LABEL: func.func @load_matrix(
// CHECK-SAME: %[[Q:.*]]: memref<?x2x2xf64>, %[[I:.*]]: index) -> vector<2x2xf64>
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : vector<2x2xf64>
// CHECK: %[[A00:.*]] = memref.load %[[Q]][%[[I]], %{{.*}}, %{{.*}}] : memref<?x2x2xf64>
// CHECK: %[[A01:.*]] = memref.load %[[Q]][%[[I]], %{{.*}}, %{{.*}}] : memref<?x2x2xf64>
// CHECK: %[[ROW0:.*]] = vector.from_elements %[[A00]], %[[A01]] : vector<2xf64>
// CHECK: %[[M0:.*]] = vector.insert %[[ROW0]], %[[Z]] [0] : vector<2xf64> into vector<2x2xf64>
// CHECK: %[[A10:.*]] = memref.load %[[Q]][%[[I]], %{{.*}}, %{{.*}}] : memref<?x2x2xf64>
// CHECK: %[[A11:.*]] = memref.load %[[Q]][%[[I]], %{{.*}}, %{{.*}}] : memref<?x2x2xf64>
// CHECK: %[[ROW1:.*]] = vector.from_elements %[[A10]], %[[A11]] : vector<2xf64>
// CHECK: %[[M1:.*]] = vector.insert %[[ROW1]], %[[M0]] [1] : vector<2xf64> into vector<2x2xf64>
// CHECK: return %[[M1]] : vector<2x2xf64>
func.func @load_matrix(%q: !adjit.array<vector<2x2xf64>, 1>, %i: index) -> vector<2x2xf64> {
  %m = adjit.load %q[%i] : !adjit.array<vector<2x2xf64>, 1>
  return %m : vector<2x2xf64>
}

/// A matrix element is stored entry by entry, row-major, addressing
/// (row, column) in the trailing memref dimensions.
// CHECK-LABEL: func.func @store_matrix(
// CHECK-SAME: %[[Q:.*]]: memref<?x2x2xf64>, %[[I:.*]]: index, %[[M:.*]]: vector<2x2xf64>)
// CHECK-NEXT: %[[E00:.*]] = vector.extract %[[M]][0, 0] : f64 from vector<2x2xf64>
// CHECK-NEXT: %[[R:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[C:.*]] = arith.constant 0 : index
// CHECK-NEXT: memref.store %[[E00]], %[[Q]][%[[I]], %[[R]], %[[C]]] : memref<?x2x2xf64>
// CHECK-NEXT: %[[E01:.*]] = vector.extract %[[M]][0, 1] : f64 from vector<2x2xf64>
// CHECK-NEXT: %[[R:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[C:.*]] = arith.constant 1 : index
// CHECK-NEXT: memref.store %[[E01]], %[[Q]][%[[I]], %[[R]], %[[C]]] : memref<?x2x2xf64>
// CHECK-NEXT: %[[E10:.*]] = vector.extract %[[M]][1, 0] : f64 from vector<2x2xf64>
// CHECK-NEXT: %[[R:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[C:.*]] = arith.constant 0 : index
// CHECK-NEXT: memref.store %[[E10]], %[[Q]][%[[I]], %[[R]], %[[C]]] : memref<?x2x2xf64>
// CHECK-NEXT: %[[E11:.*]] = vector.extract %[[M]][1, 1] : f64 from vector<2x2xf64>
// CHECK-NEXT: %[[R:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[C:.*]] = arith.constant 1 : index
// CHECK-NEXT: memref.store %[[E11]], %[[Q]][%[[I]], %[[R]], %[[C]]] : memref<?x2x2xf64>
// CHECK-NEXT: return
func.func @store_matrix(%q: !adjit.array<vector<2x2xf64>, 1>, %i: index, %m: vector<2x2xf64>) {
  adjit.store %m, %q[%i] : !adjit.array<vector<2x2xf64>, 1>
  return
}

/// load_component of a vector component is a single scalar load.
// CHECK-LABEL: func.func @load_component_vector(
// CHECK-SAME: %[[P:.*]]: memref<?x?x3xf32>, %[[I:.*]]: index, %[[J:.*]]: index) -> f32
// CHECK-NEXT: %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[V:.*]] = memref.load %[[P]][%[[I]], %[[J]], %[[C2]]] : memref<?x?x3xf32>
// CHECK-NEXT: return %[[V]] : f32
func.func @load_component_vector(%p: !adjit.array<vector<3xf32>, 2>, %i: index, %j: index) -> f32 {
  %z = adjit.load_component %p[%i, %j] [2] : !adjit.array<vector<3xf32>, 2> -> f32
  return %z : f32
}

/// load_component of a matrix row loads only that row.
// CHECK-LABEL: func.func @load_component_row(
// CHECK-SAME: %[[Q:.*]]: memref<?x2x3xf32>, %[[I:.*]]: index) -> vector<3xf32>
// CHECK-NEXT: %[[R:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[C:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[E0:.*]] = memref.load %[[Q]][%[[I]], %[[R]], %[[C]]] : memref<?x2x3xf32>
// CHECK-NEXT: %[[R:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[C:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[E1:.*]] = memref.load %[[Q]][%[[I]], %[[R]], %[[C]]] : memref<?x2x3xf32>
// CHECK-NEXT: %[[R:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[C:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[E2:.*]] = memref.load %[[Q]][%[[I]], %[[R]], %[[C]]] : memref<?x2x3xf32>
// CHECK-NEXT: %[[ROW:.*]] = vector.from_elements %[[E0]], %[[E1]], %[[E2]] : vector<3xf32>
// CHECK-NEXT: return %[[ROW]] : vector<3xf32>
func.func @load_component_row(%q: !adjit.array<vector<2x3xf32>, 1>, %i: index) -> vector<3xf32> {
  %row = adjit.load_component %q[%i] [1] : !adjit.array<vector<2x3xf32>, 1> -> vector<3xf32>
  return %row : vector<3xf32>
}

/// store_component of a matrix entry is a single scalar store; nothing else
/// of the element is read or written.
// CHECK-LABEL: func.func @store_component_entry(
// CHECK-SAME: %[[Q:.*]]: memref<?x3x3xf32>, %[[I:.*]]: index, %[[S:.*]]: f32)
// CHECK-NEXT: %[[R:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[C:.*]] = arith.constant 1 : index
// CHECK-NEXT: memref.store %[[S]], %[[Q]][%[[I]], %[[R]], %[[C]]] : memref<?x3x3xf32>
// CHECK-NEXT: return
func.func @store_component_entry(%q: !adjit.array<vector<3x3xf32>, 1>, %i: index, %s: f32) {
  adjit.store_component %s, %q[%i] [2, 1] : f32, !adjit.array<vector<3x3xf32>, 1>
  return
}

/// store_component of a vector component: a single scalar store.
// CHECK-LABEL: func.func @store_component_vector(
// CHECK-SAME: %[[P:.*]]: memref<?x4xi64>, %[[I:.*]]: index, %[[S:.*]]: i64)
// CHECK-NEXT: %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT: memref.store %[[S]], %[[P]][%[[I]], %[[C3]]] : memref<?x4xi64>
// CHECK-NEXT: return
func.func @store_component_vector(%p: !adjit.array<vector<4xi64>, 1>, %i: index, %s: i64) {
  adjit.store_component %s, %p[%i] [3] : i64, !adjit.array<vector<4xi64>, 1>
  return
}

/// Scalar atomic_add is one atomic_rmw: addf for floats, addi for integers.
// CHECK-LABEL: func.func @atomic_add_scalar(
// CHECK-SAME: %[[X:.*]]: memref<?xf64>, %[[N:.*]]: memref<?x?xi32>, %[[I:.*]]: index, %[[S:.*]]: f64, %[[K:.*]]: i32)
// CHECK-NEXT: %[[OS:.*]] = memref.atomic_rmw addf %[[S]], %[[X]][%[[I]]] : (f64, memref<?xf64>) -> f64
// CHECK-NEXT: %[[OK:.*]] = memref.atomic_rmw addi %[[K]], %[[N]][%[[I]], %[[I]]] : (i32, memref<?x?xi32>) -> i32
// CHECK-NEXT: return %[[OS]], %[[OK]] : f64, i32
func.func @atomic_add_scalar(%x: !adjit.array<f64, 1>, %n: !adjit.array<i32, 2>, %i: index, %s: f64, %k: i32) -> (f64, i32) {
  %os = adjit.atomic_add %s, %x[%i] [] : f64, !adjit.array<f64, 1>
  %ok = adjit.atomic_add %k, %n[%i, %i] [] : i32, !adjit.array<i32, 2>
  return %os, %ok : f64, i32
}

/// A vector atomic_add is one atomic per component; the old values are
/// reassembled into the result.
// CHECK-LABEL: func.func @atomic_add_vector(
// CHECK-SAME: %[[P:.*]]: memref<?x2xf32>, %[[I:.*]]: index, %[[V:.*]]: vector<2xf32>) -> vector<2xf32>
// CHECK-NEXT: %[[E0:.*]] = vector.extract %[[V]][0] : f32 from vector<2xf32>
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[O0:.*]] = memref.atomic_rmw addf %[[E0]], %[[P]][%[[I]], %[[C0]]] : (f32, memref<?x2xf32>) -> f32
// CHECK-NEXT: %[[E1:.*]] = vector.extract %[[V]][1] : f32 from vector<2xf32>
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[O1:.*]] = memref.atomic_rmw addf %[[E1]], %[[P]][%[[I]], %[[C1]]] : (f32, memref<?x2xf32>) -> f32
// CHECK-NEXT: %[[OLD:.*]] = vector.from_elements %[[O0]], %[[O1]] : vector<2xf32>
// CHECK-NEXT: return %[[OLD]] : vector<2xf32>
func.func @atomic_add_vector(%p: !adjit.array<vector<2xf32>, 1>, %i: index, %v: vector<2xf32>) -> vector<2xf32> {
  %o = adjit.atomic_add %v, %p[%i] [] : vector<2xf32>, !adjit.array<vector<2xf32>, 1>
  return %o : vector<2xf32>
}

/// With a position, atomic_add touches only that component (here a matrix
/// row). The generic form is used because the custom form does not parse.
// CHECK-LABEL: func.func @atomic_add_row(
// CHECK-SAME: %[[Q:.*]]: memref<?x3x2xi64>, %[[I:.*]]: index, %[[R:.*]]: vector<2xi64>) -> vector<2xi64>
// CHECK-NEXT: %[[E0:.*]] = vector.extract %[[R]][0] : i64 from vector<2xi64>
// CHECK-NEXT: %[[ROW:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[COL:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[O0:.*]] = memref.atomic_rmw addi %[[E0]], %[[Q]][%[[I]], %[[ROW]], %[[COL]]] : (i64, memref<?x3x2xi64>) -> i64
// CHECK-NEXT: %[[E1:.*]] = vector.extract %[[R]][1] : i64 from vector<2xi64>
// CHECK-NEXT: %[[ROW:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[COL:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[O1:.*]] = memref.atomic_rmw addi %[[E1]], %[[Q]][%[[I]], %[[ROW]], %[[COL]]] : (i64, memref<?x3x2xi64>) -> i64
// CHECK-NEXT: %[[OLD:.*]] = vector.from_elements %[[O0]], %[[O1]] : vector<2xi64>
// CHECK-NEXT: return %[[OLD]] : vector<2xi64>
func.func @atomic_add_row(%q: !adjit.array<vector<3x2xi64>, 1>, %i: index, %r: vector<2xi64>) -> vector<2xi64> {
  %o = "adjit.atomic_add"(%r, %q, %i) <{position = array<i64: 2>}> : (vector<2xi64>, !adjit.array<vector<3x2xi64>, 1>, index) -> vector<2xi64>
  return %o : vector<2xi64>
}

/// With a full position, atomic_add is a single scalar atomic.
// CHECK-LABEL: func.func @atomic_add_component(
// CHECK-SAME: %[[P:.*]]: memref<?x3xf32>, %[[I:.*]]: index, %[[S:.*]]: f32) -> f32
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[O:.*]] = memref.atomic_rmw addf %[[S]], %[[P]][%[[I]], %[[C1]]] : (f32, memref<?x3xf32>) -> f32
// CHECK-NEXT: return %[[O]] : f32
func.func @atomic_add_component(%p: !adjit.array<vector<3xf32>, 1>, %i: index, %s: f32) -> f32 {
  %o = "adjit.atomic_add"(%s, %p, %i) <{position = array<i64: 1>}> : (f32, !adjit.array<vector<3xf32>, 1>, index) -> f32
  return %o : f32
}

/// extract and insert map 1:1 onto vector.extract and vector.insert.
// CHECK-LABEL: func.func @extract_insert(
// CHECK-SAME: %[[V:.*]]: vector<3xf32>, %[[M:.*]]: vector<2x2xf64>, %[[S:.*]]: f32, %[[R:.*]]: vector<2xf64>)
// CHECK-NEXT: %[[X:.*]] = vector.extract %[[V]][1] : f32 from vector<3xf32>
// CHECK-NEXT: %[[ROW:.*]] = vector.extract %[[M]][0] : vector<2xf64> from vector<2x2xf64>
// CHECK-NEXT: %[[E:.*]] = vector.extract %[[M]][1, 0] : f64 from vector<2x2xf64>
// CHECK-NEXT: %[[W:.*]] = vector.insert %[[S]], %[[V]] [2] : f32 into vector<3xf32>
// CHECK-NEXT: %[[M1:.*]] = vector.insert %[[R]], %[[M]] [1] : vector<2xf64> into vector<2x2xf64>
// CHECK-NEXT: %[[M2:.*]] = vector.insert %[[E]], %[[M1]] [0, 1] : f64 into vector<2x2xf64>
// CHECK-NEXT: return %[[X]], %[[ROW]], %[[W]], %[[M2]]
func.func @extract_insert(%v: vector<3xf32>, %m: vector<2x2xf64>, %s: f32, %r: vector<2xf64>)
    -> (f32, vector<2xf64>, vector<3xf32>, vector<2x2xf64>) {
  %x = adjit.extract %v [1] : vector<3xf32> -> f32
  %row = adjit.extract %m [0] : vector<2x2xf64> -> vector<2xf64>
  %e = adjit.extract %m [1, 0] : vector<2x2xf64> -> f64
  %w = adjit.insert %s, %v [2] : f32 into vector<3xf32>
  %m1 = adjit.insert %r, %m [1] : vector<2xf64> into vector<2x2xf64>
  %m2 = adjit.insert %e, %m1 [0, 1] : f64 into vector<2x2xf64>
  return %x, %row, %w, %m2 : f32, vector<2xf64>, vector<3xf32>, vector<2x2xf64>
}

/// call becomes func.call; the callee's signature converts with the caller's.
// CHECK-LABEL: func.func private @scale(
// CHECK-SAME: %{{.*}}: memref<?x3xf32>, %{{.*}}: index, %{{.*}}: f32) -> vector<3xf32>
// CHECK: memref.load
// CHECK-LABEL: func.func @call(
// CHECK-SAME: %[[P:.*]]: memref<?x3xf32>, %[[I:.*]]: index, %[[S:.*]]: f32) -> vector<3xf32>
// CHECK-NEXT: %[[R:.*]] = call @scale(%[[P]], %[[I]], %[[S]]) : (memref<?x3xf32>, index, f32) -> vector<3xf32>
// CHECK-NEXT: call @sink() : () -> ()
// CHECK-NEXT: return %[[R]] : vector<3xf32>
func.func private @scale(%p: !adjit.array<vector<3xf32>, 1>, %i: index, %s: f32) -> vector<3xf32> {
  %v = adjit.load %p[%i] : !adjit.array<vector<3xf32>, 1>
  %b = vector.broadcast %s : f32 to vector<3xf32>
  %r = arith.mulf %v, %b : vector<3xf32>
  return %r : vector<3xf32>
}
func.func private @sink()
func.func @call(%p: !adjit.array<vector<3xf32>, 1>, %i: index, %s: f32) -> vector<3xf32> {
  %r = adjit.call @scale(%p, %i, %s) : (!adjit.array<vector<3xf32>, 1>, index, f32) -> vector<3xf32>
  adjit.call @sink() : () -> ()
  return %r : vector<3xf32>
}

/// dim becomes memref.dim of the same (array) dimension; the component
/// dimensions come after the array's.
// CHECK-LABEL: func.func @dim(
// CHECK-SAME: %[[P:.*]]: memref<?x?x3xf32>) -> (index, index)
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[D0:.*]] = memref.dim %[[P]], %[[C0]] : memref<?x?x3xf32>
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[D1:.*]] = memref.dim %[[P]], %[[C1]] : memref<?x?x3xf32>
// CHECK-NEXT: return %[[D0]], %[[D1]] : index, index
func.func @dim(%p: !adjit.array<vector<3xf32>, 2>) -> (index, index) {
  %n0 = adjit.dim %p, 0 : !adjit.array<vector<3xf32>, 2>
  %n1 = adjit.dim %p, 1 : !adjit.array<vector<3xf32>, 2>
  return %n0, %n1 : index, index
}

/// Kernels convert like any function: tid and the kernel marker stay for the
/// launch passes.
// CHECK-LABEL: func.func @saxpy(
// CHECK-SAME: %[[A:.*]]: f32, %[[X:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?xf32>) attributes {adjit.kernel}
// CHECK-NEXT: %[[I:.*]] = adjit.tid : index
// CHECK-NEXT: %[[XI:.*]] = memref.load %[[X]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: %[[YI:.*]] = memref.load %[[Y]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: %[[AX:.*]] = arith.mulf %[[A]], %[[XI]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[AX]], %[[YI]] : f32
// CHECK-NEXT: memref.store %[[R]], %[[Y]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: return
func.func @saxpy(%a: f32, %x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %xi = adjit.load %x[%i] : !adjit.array<f32, 1>
  %yi = adjit.load %y[%i] : !adjit.array<f32, 1>
  %ax = arith.mulf %a, %xi : f32
  %r = arith.addf %ax, %yi : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// Reductions of small vectors become scalar ops in element order (the loop
/// vectorizer widens those across threads); an accumulator comes first, and
/// larger vectors keep their reduction.
// CHECK-LABEL: func.func @small_reductions(
// CHECK-SAME: %[[V:.*]]: vector<3xf32>, %[[A:.*]]: f32, %[[W:.*]]: vector<4xi32>, %[[L:.*]]: vector<32xf32>)
// CHECK-NEXT: %[[V0:.*]] = vector.extract %[[V]][0] : f32 from vector<3xf32>
// CHECK-NEXT: %[[V1:.*]] = vector.extract %[[V]][1] : f32 from vector<3xf32>
// CHECK-NEXT: %[[S1:.*]] = arith.addf %[[V0]], %[[V1]] : f32
// CHECK-NEXT: %[[V2:.*]] = vector.extract %[[V]][2] : f32 from vector<3xf32>
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[S1]], %[[V2]] : f32
// CHECK-NEXT: %[[M0:.*]] = vector.extract %[[V]][0] : f32 from vector<3xf32>
// CHECK-NEXT: %[[P0:.*]] = arith.mulf %[[A]], %[[M0]] : f32
// CHECK: arith.maxnumf
// CHECK: arith.maxnumf
// CHECK: arith.minsi
// CHECK: arith.minsi
// CHECK: arith.minsi
// CHECK-NOT: arith.minsi
// CHECK: vector.reduction <add>, %[[L]] : vector<32xf32> into f32
func.func @small_reductions(%v: vector<3xf32>, %a: f32, %w: vector<4xi32>, %l: vector<32xf32>)
    -> (f32, f32, f32, i32, f32) {
  %s = vector.reduction <add>, %v : vector<3xf32> into f32
  %p = vector.reduction <mul>, %v, %a : vector<3xf32> into f32
  %m = vector.reduction <maxnumf>, %v : vector<3xf32> into f32
  %i = vector.reduction <minsi>, %w : vector<4xi32> into i32
  %big = vector.reduction <add>, %l : vector<32xf32> into f32
  return %s, %p, %m, %i, %big : f32, f32, f32, i32, f32
}
