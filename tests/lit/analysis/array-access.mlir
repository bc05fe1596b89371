// RUN: adjit-opt %s --adjit-array-access=remarks=true -split-input-file -verify-diagnostics | FileCheck %s

/// Reads and writes per array argument; own-element when every index is the
/// thread's coordinates (through the frontend's index casts). An atomic whose
/// old value is unused only writes.
// CHECK-LABEL: func.func @mixed(
// CHECK-SAME: adjit.arg_access = ["read", "write, own element", "read, own element", "write", ""]
// expected-remark @below {{argument #0 ("x"): read}}
// expected-remark @below {{argument #1 ("y"): write, own element}}
// expected-remark @below {{argument #2 ("z"): read, own element}}
// expected-remark @below {{argument #3 ("w"): write}}
func.func @mixed(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<vector<3xf32>, 2>,
                 %w: !adjit.array<f32, 1>, %s: f32) attributes {adjit.kernel, adjit.arg_names = ["x", "y", "z", "w", "s"]} {
  %i = adjit.tid : index
  %i32 = arith.index_cast %i : index to i32
  %ii = arith.index_cast %i32 : i32 to index
  %a = adjit.load %x[%ii] : !adjit.array<f32, 1>
  %c1 = arith.constant 1 : index
  %j = arith.addi %i, %c1 : index
  %b = adjit.load %x[%j] : !adjit.array<f32, 1>
  adjit.store %a, %y[%i] : !adjit.array<f32, 1>
  %p, %q = adjit.tid : index, index
  %v = adjit.load %z[%p, %q] : !adjit.array<vector<3xf32>, 2>
  %o = adjit.atomic_add %b, %w[%c1] [] : f32, !adjit.array<f32, 1>
  return
}

// -----

/// Swapped coordinates, or coordinates of a tid with more results than the
/// array has dimensions, are not the thread's own element.
// CHECK-LABEL: func.func @not_own(
// CHECK-SAME: adjit.arg_access = ["read", "read"]
// expected-remark @below {{argument #0: read}}
// expected-remark @below {{argument #1: read}}
func.func @not_own(%m: !adjit.array<f32, 2>, %n: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i, %j = adjit.tid : index, index
  %a = adjit.load %m[%j, %i] : !adjit.array<f32, 2>
  %b = adjit.load %n[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// An in-place own-element update and an unused array.
// CHECK-LABEL: func.func @in_place(
// CHECK-SAME: adjit.arg_access = ["read-write, own element", "none"]
// expected-remark @below {{argument #0: read-write, own element}}
// expected-remark @below {{argument #1: none}}
func.func @in_place(%x: !adjit.array<vector<3xf32>, 1>, %u: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c = adjit.load_component %x[%i] [0] : !adjit.array<vector<3xf32>, 1> -> f32
  %d = arith.mulf %c, %c : f32
  adjit.store_component %d, %x[%i] [0] : f32, !adjit.array<vector<3xf32>, 1>
  return
}

// -----

/// An atomic whose old value is used also reads.
// CHECK-LABEL: func.func @atomic_read(
// CHECK-SAME: adjit.arg_access = ["read-write", "write, own element"]
// expected-remark @below {{argument #0: read-write}}
// expected-remark @below {{argument #1: write, own element}}
func.func @atomic_read(%c: !adjit.array<i32, 1>, %o: !adjit.array<i32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %slot = adjit.atomic_add %one, %c[%c0] [] : i32, !adjit.array<i32, 1>
  adjit.store %slot, %o[%i] : !adjit.array<i32, 1>
  return
}
