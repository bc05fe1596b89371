// RUN: adjit-opt %s --mlir-print-op-generic | adjit-opt --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: adjit-opt %s | FileCheck %s

// atomic_add with a position. The input is in the generic form and only the
// generic form is round-tripped: the custom form the printer emits
// (`%y[%i] [0]`) does not parse back today (the optional `$position` group
// parses a builtin ArrayAttr instead of a DenseI64ArrayAttr). Once it does,
// move these cases into ops.mlir.

/// A scalar added into one vector component, a row into a matrix row and a
/// scalar into a matrix entry.
// GENERIC-LABEL: "func.func"
// GENERIC-SAME: sym_name = "atomic_add_position"
// GENERIC: "adjit.atomic_add"(%{{.*}}, %{{.*}}, %{{.*}}) <{position = array<i64: 0>}> : (f32, !adjit.array<vector<3xf32>, 1>, index) -> f32
// GENERIC: "adjit.atomic_add"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{position = array<i64: 1>}> : (vector<3xf64>, !adjit.array<vector<2x3xf64>, 2>, index, index) -> vector<3xf64>
// GENERIC: "adjit.atomic_add"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{position = array<i64: 1, 2>}> : (f64, !adjit.array<vector<2x3xf64>, 2>, index, index) -> f64

// CHECK-LABEL: func.func @atomic_add_position(
// CHECK-SAME: %[[P:[^:]*]]: !adjit.array<vector<3xf32>, 1>, %[[Q:[^:]*]]: !adjit.array<vector<2x3xf64>, 2>, %[[I:[^:]*]]: index, %[[S:[^:]*]]: f32, %[[R:[^:]*]]: vector<3xf64>, %[[E:[^:]*]]: f64)
// CHECK: %[[O1:.*]] = adjit.atomic_add %[[S]], %[[P]][%[[I]]] [0] : f32, <vector<3xf32>, 1>
// CHECK: %[[O2:.*]] = adjit.atomic_add %[[R]], %[[Q]][%[[I]], %[[I]]] [1] : vector<3xf64>, <vector<2x3xf64>, 2>
// CHECK: %[[O3:.*]] = adjit.atomic_add %[[E]], %[[Q]][%[[I]], %[[I]]] [1, 2] : f64, <vector<2x3xf64>, 2>
// CHECK: return %[[O1]], %[[O2]], %[[O3]]
func.func @atomic_add_position(%p: !adjit.array<vector<3xf32>, 1>, %q: !adjit.array<vector<2x3xf64>, 2>,
                               %i: index, %s: f32, %r: vector<3xf64>, %e: f64) -> (f32, vector<3xf64>, f64) {
  %o1 = "adjit.atomic_add"(%s, %p, %i) <{position = array<i64: 0>}> : (f32, !adjit.array<vector<3xf32>, 1>, index) -> f32
  %o2 = "adjit.atomic_add"(%r, %q, %i, %i) <{position = array<i64: 1>}> : (vector<3xf64>, !adjit.array<vector<2x3xf64>, 2>, index, index) -> vector<3xf64>
  %o3 = "adjit.atomic_add"(%e, %q, %i, %i) <{position = array<i64: 1, 2>}> : (f64, !adjit.array<vector<2x3xf64>, 2>, index, index) -> f64
  return %o1, %o2, %o3 : f32, vector<3xf64>, f64
}

/// An explicit empty position is the whole element and prints as [].
// GENERIC-LABEL: "func.func"
// GENERIC-SAME: sym_name = "atomic_add_empty_position"
// GENERIC: "adjit.atomic_add"(%{{.*}}, %{{.*}}, %{{.*}}) <{position = array<i64>}> : (vector<3xf32>, !adjit.array<vector<3xf32>, 1>, index) -> vector<3xf32>
// CHECK-LABEL: func.func @atomic_add_empty_position(
// CHECK: adjit.atomic_add %{{.*}}, %{{.*}}[%{{.*}}] [] : vector<3xf32>, <vector<3xf32>, 1>
func.func @atomic_add_empty_position(%p: !adjit.array<vector<3xf32>, 1>, %i: index, %v: vector<3xf32>) -> vector<3xf32> {
  %o = "adjit.atomic_add"(%v, %p, %i) <{position = array<i64>}> : (vector<3xf32>, !adjit.array<vector<3xf32>, 1>, index) -> vector<3xf32>
  return %o : vector<3xf32>
}
