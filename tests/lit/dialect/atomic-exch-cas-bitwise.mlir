// RUN: adjit-opt %s | adjit-opt | FileCheck %s
// RUN: adjit-opt %s --mlir-print-op-generic | adjit-opt --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

/// atomic_exch and atomic_cas take scalar integers or floats; atomic_and/or/xor
/// integers, whole elements (vectors component by component) or one component.
// CHECK-LABEL: func.func @atomics(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[N:[^:]*]]: !adjit.array<vector<2xi32>, 1>, %[[U:[^:]*]]: !adjit.array<i64, 2>, %[[I:[^:]*]]: index, %[[V:[^:]*]]: f32, %[[C:[^:]*]]: f32, %[[K:[^:]*]]: i32, %[[W:[^:]*]]: vector<2xi32>, %[[L:[^:]*]]: i64)
// CHECK: %[[A:.*]] = adjit.atomic_exch %[[V]], %[[X]][%[[I]]] [] : f32, <f32, 1>
// CHECK: %[[B:.*]] = adjit.atomic_and %[[W]], %[[N]][%[[I]]] [] : vector<2xi32>, <vector<2xi32>, 1>
// CHECK: %[[O:.*]] = adjit.atomic_or %[[L]], %[[U]][%[[I]], %[[I]]] [] : i64, <i64, 2>
// CHECK: %[[Y:.*]] = adjit.atomic_xor %[[W]], %[[N]][%[[I]]] [] : vector<2xi32>, <vector<2xi32>, 1>
// CHECK: %[[S:.*]] = adjit.atomic_cas %[[C]], %[[V]], %[[X]][%[[I]]] [] : f32, <f32, 1>
// CHECK: %[[T:.*]] = adjit.atomic_cas %[[L]], %[[L]], %[[U]][%[[I]], %[[I]]] [] : i64, <i64, 2>
// CHECK: return %[[A]], %[[B]], %[[O]], %[[Y]], %[[S]], %[[T]]
// GENERIC-LABEL: sym_name = "atomics"
// GENERIC: "adjit.atomic_exch"(%{{.*}}, %{{.*}}, %{{.*}}) <{position = array<i64>}> : (f32, !adjit.array<f32, 1>, index) -> f32
// GENERIC: "adjit.atomic_cas"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{position = array<i64>}> : (f32, f32, !adjit.array<f32, 1>, index) -> f32
func.func @atomics(%x: !adjit.array<f32, 1>, %n: !adjit.array<vector<2xi32>, 1>, %u: !adjit.array<i64, 2>, %i: index,
                   %v: f32, %c: f32, %k: i32, %w: vector<2xi32>, %l: i64) -> (f32, vector<2xi32>, i64, vector<2xi32>, f32, i64) {
  %a = adjit.atomic_exch %v, %x[%i] [] : f32, !adjit.array<f32, 1>
  %b = adjit.atomic_and %w, %n[%i] [] : vector<2xi32>, !adjit.array<vector<2xi32>, 1>
  %o = adjit.atomic_or %l, %u[%i, %i] [] : i64, !adjit.array<i64, 2>
  %y = adjit.atomic_xor %w, %n[%i] [] : vector<2xi32>, !adjit.array<vector<2xi32>, 1>
  %s = adjit.atomic_cas %c, %v, %x[%i] [] : f32, !adjit.array<f32, 1>
  %t = adjit.atomic_cas %l, %l, %u[%i, %i] [] : i64, !adjit.array<i64, 2>
  return %a, %b, %o, %y, %s, %t : f32, vector<2xi32>, i64, vector<2xi32>, f32, i64
}

/// One component of a vector element (the generic form: see atomic-add-position.mlir).
// GENERIC-LABEL: sym_name = "components"
// GENERIC: "adjit.atomic_or"(%{{.*}}, %{{.*}}, %{{.*}}) <{position = array<i64: 1>}> : (i32, !adjit.array<vector<2xi32>, 1>, index) -> i32
// GENERIC: "adjit.atomic_cas"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{position = array<i64: 0>}> : (i32, i32, !adjit.array<vector<2xi32>, 1>, index) -> i32
// GENERIC: "adjit.atomic_exch"(%{{.*}}, %{{.*}}, %{{.*}}) <{position = array<i64: 1, 0>}> : (f64, !adjit.array<vector<2x2xf64>, 1>, index) -> f64
func.func @components(%n: !adjit.array<vector<2xi32>, 1>, %m: !adjit.array<vector<2x2xf64>, 1>, %i: index, %k: i32, %e: f64) {
  %a = "adjit.atomic_or"(%k, %n, %i) <{position = array<i64: 1>}> : (i32, !adjit.array<vector<2xi32>, 1>, index) -> i32
  %b = "adjit.atomic_cas"(%k, %k, %n, %i) <{position = array<i64: 0>}> : (i32, i32, !adjit.array<vector<2xi32>, 1>, index) -> i32
  %c = "adjit.atomic_exch"(%e, %m, %i) <{position = array<i64: 1, 0>}> : (f64, !adjit.array<vector<2x2xf64>, 1>, index) -> f64
  return
}
