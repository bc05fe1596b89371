// RUN: adjit-opt %s --adjit-atomic-order | FileCheck %s
// RUN: adjit-opt %s --adjit-lower-cpu | FileCheck %s --check-prefix=ENTRY

/// How each kernel's CPU launches keep their atomics deterministic.

/// No atomics, an integer add, a float min: the same result in any order.
// CHECK-LABEL: func.func @no_float_adds(
// CHECK-SAME: adjit.atomic_order = "parallel"
func.func @no_float_adds(%x: !adjit.array<f32, 1>, %n: !adjit.array<i32, 1>, %m: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %v = adjit.load %x[%i] : !adjit.array<f32, 1>
  %a = adjit.atomic_add %one, %n[%c0] [] : i32, !adjit.array<i32, 1>
  %b = adjit.atomic_min %v, %m[%c0] [] : f32, !adjit.array<f32, 1>
  return
}

/// Float adds (scalar and vector) into arrays that are only added into (and
/// measured): deferred and applied in thread order.
// CHECK-LABEL: func.func @reduce(
// CHECK-SAME: adjit.atomic_order = "ordered"
func.func @reduce(%x: !adjit.array<vector<3xf32>, 1>, %sum: !adjit.array<vector<3xf32>, 1>, %loss: !adjit.array<f64, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  %v = adjit.load %x[%i] : !adjit.array<vector<3xf32>, 1>
  %n = adjit.dim %sum, 0 : !adjit.array<vector<3xf32>, 1>
  %a = adjit.atomic_add %v, %sum[%c0] [] : vector<3xf32>, !adjit.array<vector<3xf32>, 1>
  %x0 = adjit.extract %v [0] : vector<3xf32> -> f32
  %s = arith.extf %x0 : f32 to f64
  %b = adjit.atomic_add %s, %loss[%c0] [] : f64, !adjit.array<f64, 1>
  return
}

/// Half-precision adds: the runtime's log takes f32 and f64 only, so the
/// launch runs on one thread (in thread order).
// CHECK-LABEL: func.func @half_adds(
// CHECK-SAME: adjit.atomic_order = "serial"
func.func @half_adds(%x: !adjit.array<f16, 1>, %sum: !adjit.array<f16, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  %v = adjit.load %x[%i] : !adjit.array<f16, 1>
  %a = adjit.atomic_add %v, %sum[%c0] [] : f16, !adjit.array<f16, 1>
  return
}

/// An old value used: it depends on the order the threads ran in.
// CHECK-LABEL: func.func @old_value_used(
// CHECK-SAME: adjit.atomic_order = "serial"
func.func @old_value_used(%count: !adjit.array<i32, 1>, %slots: !adjit.array<i32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %slot = adjit.atomic_add %one, %count[%c0] [] : i32, !adjit.array<i32, 1>
  %at = arith.index_cast %slot : i32 to index
  adjit.store %one, %slots[%at] : !adjit.array<i32, 1>
  return
}

/// Integer and/or/xor whose old values are unused: the bits are the same in
/// any order.
// CHECK-LABEL: func.func @bitwise_unused(
// CHECK-SAME: adjit.atomic_order = "parallel"
func.func @bitwise_unused(%flags: !adjit.array<i32, 1>, %mask: !adjit.array<i64, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  %bit = arith.constant 4 : i32
  %m = arith.constant 6 : i64
  %a = adjit.atomic_or %bit, %flags[%c0] [] : i32, !adjit.array<i32, 1>
  %b = adjit.atomic_and %m, %mask[%c0] [] : i64, !adjit.array<i64, 1>
  %c = adjit.atomic_xor %bit, %flags[%i] [] : i32, !adjit.array<i32, 1>
  return
}

/// ... and with an old value used: which thread saw which bits depends on
/// the order.
// CHECK-LABEL: func.func @bitwise_used(
// CHECK-SAME: adjit.atomic_order = "serial"
func.func @bitwise_used(%flags: !adjit.array<i32, 1>, %seen: !adjit.array<i32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  %bit = arith.constant 4 : i32
  %old = adjit.atomic_or %bit, %flags[%c0] [] : i32, !adjit.array<i32, 1>
  adjit.store %old, %seen[%i] : !adjit.array<i32, 1>
  return
}

/// An exchange or compare-and-swap leaves the value of whichever thread ran
/// last (or first): serial even when its old value is unused.
// CHECK-LABEL: func.func @exch_unused(
// CHECK-SAME: adjit.atomic_order = "serial"
func.func @exch_unused(%x: !adjit.array<f32, 1>, %last: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  %v = adjit.load %x[%i] : !adjit.array<f32, 1>
  %a = adjit.atomic_exch %v, %last[%c0] [] : f32, !adjit.array<f32, 1>
  return
}
// CHECK-LABEL: func.func @cas_unused(
// CHECK-SAME: adjit.atomic_order = "serial"
func.func @cas_unused(%owner: !adjit.array<i32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  %free = arith.constant -1 : i32
  %me = arith.index_cast %i : index to i32
  %a = adjit.atomic_cas %free, %me, %owner[%c0] [] : i32, !adjit.array<i32, 1>
  return
}

/// The kernel also reads the array it adds into: deferring the adds would
/// change what it reads.
// CHECK-LABEL: func.func @adds_and_loads(
// CHECK-SAME: adjit.atomic_order = "serial"
func.func @adds_and_loads(%y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %one = arith.constant 1.0 : f32
  %a = adjit.atomic_add %one, %y[%i] [] : f32, !adjit.array<f32, 1>
  %v = adjit.load %y[%i] : !adjit.array<f32, 1>
  adjit.store %v, %z[%i] : !adjit.array<f32, 1>
  return
}

/// ... or overwrites it.
// CHECK-LABEL: func.func @adds_and_stores(
// CHECK-SAME: adjit.atomic_order = "serial"
func.func @adds_and_stores(%y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %one = arith.constant 1.0 : f32
  %a = adjit.atomic_add %one, %y[%i] [] : f32, !adjit.array<f32, 1>
  adjit.store %one, %y[%i] : !adjit.array<f32, 1>
  return
}

/// Float adds mixed with a float max on the same array.
// CHECK-LABEL: func.func @adds_and_max(
// CHECK-SAME: adjit.atomic_order = "serial"
func.func @adds_and_max(%y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %one = arith.constant 1.0 : f32
  %a = adjit.atomic_add %one, %y[%i] [] : f32, !adjit.array<f32, 1>
  %b = adjit.atomic_max %one, %y[%i] [] : f32, !adjit.array<f32, 1>
  return
}

/// A call the analysis does not see into that contains atomics.
// CHECK-LABEL: func.func @calls_atomics(
// CHECK-SAME: adjit.atomic_order = "serial"
func.func @calls_atomics(%y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %one = arith.constant 1.0 : f32
  adjit.call @add_one(%y, %i) : (!adjit.array<f32, 1>, index) -> ()
  return
}
func.func private @add_one(%y: !adjit.array<f32, 1>, %i: index) attributes {adjit.custom_adjoint = @add_one_grad} {
  %one = arith.constant 1.0 : f32
  %a = adjit.atomic_add %one, %y[%i] [] : f32, !adjit.array<f32, 1>
  return
}
func.func private @add_one_grad(%y: !adjit.array<f32, 1>, %i: index) {
  return
}

/// The CPU entries carry the decision to the runtime.
// ENTRY-DAG: func.func @no_float_adds_cpu_entry({{.*}} attributes {adjit.atomic_order = "parallel"}
// ENTRY-DAG: func.func @reduce_cpu_entry({{.*}} attributes {adjit.atomic_order = "ordered"}
// ENTRY-DAG: func.func @old_value_used_cpu_entry({{.*}} attributes {adjit.atomic_order = "serial"}
// ENTRY-DAG: func.func @bitwise_unused_cpu_entry({{.*}} attributes {adjit.atomic_order = "parallel"}
// ENTRY-DAG: func.func @cas_unused_cpu_entry({{.*}} attributes {adjit.atomic_order = "serial"}
