// RUN: adjit-opt %s --adjit-access-checks --split-input-file | FileCheck %s
// RUN: adjit-opt %s --adjit-access-checks --split-input-file | adjit-opt --split-input-file --adjit-lower-cpu | FileCheck %s --check-prefix=CPU
// RUN: adjit-opt %s --adjit-access-checks --split-input-file | adjit-opt --split-input-file '--adjit-lower-cpu=all-checked=true' | FileCheck %s --check-prefix=EVERY

// adjit-access-checks: every access is guarded; indices that are a thread
// coordinate plus a constant >= 0, or constants, are proved once per launch.

// A thread-indexed access: one launch fact (bound + 0 <= size), and the
// access guarded by `proven || i < size`; the else branch reports site 0.
// CHECK-LABEL: func.func @thread_indexed(
// CHECK-SAME: adjit.check_sites = [{access = "read", array = "x", file = "access-checks.mlir", line = 40 : i64, rank = 1 : i64}, {access = "write", array = "y", {{.*}}}]
// CHECK: %[[NX:.*]] = adjit.dim %arg0, 0
// CHECK: %[[BOUND:.*]] = adjit.tid_bounds : index
// CHECK: %[[FX:.*]] = arith.cmpi ule, %[[BOUND]], %[[NX]] : index
// CHECK: %[[NY:.*]] = adjit.dim %arg1, 0
// CHECK: %[[FY:.*]] = arith.cmpi ule, %[[BOUND]], %[[NY]] : index
// CHECK: %[[ALL:.*]] = arith.andi %[[FX]], %[[FY]] : i1
// CHECK: %[[PROVEN:.*]] = adjit.launch_condition %[[ALL]] : i1
// CHECK: %[[I:.*]] = adjit.tid : index
// CHECK: %[[RECORD:.*]] = adjit.error_record : !llvm.ptr
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[I]], %{{.*}} : index
// CHECK: %[[OK:.*]] = arith.ori %[[PROVEN]], %[[IN]] : i1
// CHECK: %[[V:.*]] = scf.if %[[OK]] -> (f32) {
// CHECK-NEXT: adjit.load %arg0[%[[I]]]
// CHECK: } else {
// CHECK-NEXT: adjit.access_error %[[RECORD]], %[[I]] site 0[%[[I]]] of[%{{.*}}]
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: scf.yield %[[ZERO]] : f32
func.func @thread_indexed(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel, adjit.arg_names = ["x", "y"]} {
  %i = adjit.tid : index
  %v = adjit.load %x[%i] : !adjit.array<f32, 1> loc("access-checks.mlir":40:3)
  adjit.store %v, %y[%i] : !adjit.array<f32, 1>
  return
}

// The CPU entry runs the body compiled without the proved checks when the
// launch condition holds; otherwise it runs nothing and writes -1
// (unproven) into the record, and the runtime relaunches the variant
// compiled with all-checked, where every check stays.
// CPU-LABEL: func.func private @thread_indexed_body(
// CPU-NOT: llvm.cmpxchg
// CPU: return
// CPU-LABEL: func.func private @thread_indexed_body_launch_condition(
// CPU-SAME: -> i1
// CPU-LABEL: func.func @thread_indexed_cpu_entry(
// CPU-SAME: %[[RECORD:[^:]*]]: !llvm.ptr)
// CPU: %[[UNPROVEN:.*]] = llvm.mlir.constant(-1 : i64) : i64
// CPU: %[[COND:[0-9a-z_]+]] = call @thread_indexed_body_launch_condition(
// CPU: scf.if %[[COND]] {
// CPU: call @thread_indexed_body(
// CPU: } else {
// CPU-NEXT: llvm.store %[[UNPROVEN]], %[[RECORD]] : i64, !llvm.ptr
// EVERY-LABEL: func.func private @thread_indexed_body(
// EVERY: llvm.cmpxchg
// EVERY-NOT: launch_condition
// EVERY-LABEL: func.func @thread_indexed_cpu_entry(
// EVERY-NOT: scf.if
// EVERY: call @thread_indexed_body(

// -----

// i + 1 through an i32 (as the frontend writes it): the fact also keeps the
// i32 sum below 2^31; a negative offset (i - 1), a gathered index (proved
// per launch from the index array's value range) and a 2-D tid's
// coordinates.
// CHECK-LABEL: func.func @offsets(
// CHECK-SAME: adjit.ranged_args = array<i64: 1>
// CHECK: %[[B:.*]]:2 = adjit.tid_bounds : index, index
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[LAST:.*]] = arith.addi %[[B]]#0, %[[ONE]] : index
// CHECK: arith.cmpi ule, %[[LAST]], %{{.*}} : index
// CHECK: %[[TWO31:.*]] = arith.constant 2147483648 : index
// CHECK: arith.cmpi ule, %[[LAST]], %[[TWO31]] : index
// CHECK: %[[LO:.*]], %[[HI:.*]] = adjit.index_range 0 : index, index
// CHECK: arith.cmpi slt, %[[HI]], %{{.*}} : index
// CHECK: arith.cmpi sge, %[[LO]], %{{.*}} : index
// CHECK: %[[PROVEN:.*]] = adjit.launch_condition
// The i - 1 read is checked on every launch (no `ori` with the condition).
// CHECK: %[[PREVSUM:.*]] = arith.addi %{{.*}}, %c-1_i32 : i32
// CHECK: %[[PREV:.*]] = arith.index_cast %[[PREVSUM]] : i32 to index
// CHECK: %[[INPREV:.*]] = arith.cmpi ult, %[[PREV]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[INPREV]] -> (f32)
// The gathered index: `proven || in_range`, proven including idx's range.
// CHECK: %[[GATHERED:.*]] = scf.if %{{.*}} -> (i32)
// CHECK: %[[G:.*]] = arith.index_cast %[[GATHERED]] : i32 to index
// CHECK: %[[ING:.*]] = arith.cmpi ult, %[[G]], %{{.*}} : index
// CHECK-NEXT: %[[OKG:.*]] = arith.ori %[[PROVEN]], %[[ING]] : i1
// CHECK-NEXT: scf.if %[[OKG]] -> (f32)
func.func @offsets(%x: !adjit.array<f32, 1>, %idx: !adjit.array<i32, 2>) attributes {adjit.kernel, adjit.arg_names = ["x", "idx"]} {
  %i, %j = adjit.tid : index, index
  %c1 = arith.constant 1 : i32
  %m1 = arith.constant -1 : i32
  %i32 = arith.index_cast %i : index to i32
  %next = arith.addi %i32, %c1 : i32
  %nexti = arith.index_cast %next : i32 to index
  %a = adjit.load %x[%nexti] : !adjit.array<f32, 1>
  %prev = arith.addi %i32, %m1 : i32
  %previ = arith.index_cast %prev : i32 to index
  %b = adjit.load %x[%previ] : !adjit.array<f32, 1>
  %g = adjit.load %idx[%i, %j] : !adjit.array<i32, 2>
  %gi = arith.index_cast %g : i32 to index
  %c = adjit.load %x[%gi] : !adjit.array<f32, 1>
  return
}

// -----

// A loop over the array's own extent needs no check at all; constant
// indices are launch facts (0 < size); atomics are guarded and yield zero.
// CHECK-LABEL: func.func @loops_and_constants(
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: arith.cmpi ult, %[[C0]], %{{.*}} : index
// CHECK: adjit.launch_condition
// CHECK: scf.for
// CHECK-NOT: scf.if
// CHECK: adjit.load %arg0[%{{.*}}]
// CHECK: scf.yield
// CHECK: scf.if %{{.*}} -> (f32)
// CHECK-NEXT: adjit.atomic_add
// CHECK: adjit.access_error
func.func @loops_and_constants(%x: !adjit.array<f32, 1>, %out: !adjit.array<f32, 1>) attributes {adjit.kernel, adjit.arg_names = ["x", "out"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = adjit.dim %x, 0 : !adjit.array<f32, 1>
  %sum = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = adjit.load %x[%k] : !adjit.array<f32, 1>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  %old = adjit.atomic_add %sum, %out[%c0] [] : f32, !adjit.array<f32, 1>
  return
}

// -----

// A device function that was not inlined gets the record and the thread
// index as trailing arguments; its call passes the kernel's.
// CHECK-LABEL: func.func @caller(
// CHECK: %[[T:.*]] = adjit.tid : index
// CHECK: %[[RECORD:.*]] = adjit.error_record : !llvm.ptr
// CHECK: adjit.call @reads(%arg0, %{{.*}}, %[[RECORD]], %[[T]]) : (!adjit.array<f32, 1>, index, !llvm.ptr, index) -> f32
// CHECK-LABEL: func.func private @reads(
// CHECK-SAME: %[[REC:[^:]*]]: !llvm.ptr, %[[THREAD:[^:]*]]: index) -> f32
// CHECK: adjit.access_error %[[REC]], %[[THREAD]] site 0
func.func @caller(%x: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %v = adjit.call @reads(%x, %i) : (!adjit.array<f32, 1>, index) -> f32
  return
}
func.func private @reads(%x: !adjit.array<f32, 1>, %i: index) -> f32 attributes {no_inline} {
  %v = adjit.load %x[%i] : !adjit.array<f32, 1>
  return %v : f32
}

// -----

// RUN: adjit-opt %s --split-input-file '--adjit-access-checks=bounds=false finite=true' | FileCheck %s --check-prefix=FINITE
// With finite (and bounds off): each float store is followed by nothing
// new but preceded by |v| <= largest over its components; atomic_add also
// checks the element it leaves. Integer stores are not checked.
// FINITE-LABEL: func.func @stores(
// FINITE-SAME: adjit.check_sites = [{access = "write of NaN or infinity", array = "v"{{.*}}}, {access = "atomic_add of NaN or infinity", array = "s"{{.*}}}, {access = "atomic_add result NaN or infinity", array = "s"{{.*}}}]
// FINITE: %[[ABS:.*]] = math.absf %{{.*}} : vector<3xf32>
// FINITE: %[[LE:.*]] = arith.cmpf ole, %[[ABS]], %{{.*}} : vector<3xf32>
// FINITE: %[[ALL:.*]] = vector.reduction <and>, %[[LE]] : vector<3xi1> into i1
// FINITE: %[[BAD:.*]] = arith.xori %[[ALL]], %{{.*}} : i1
// FINITE: scf.if %[[BAD]] {
// FINITE: adjit.access_error %{{.*}} site 0
// FINITE: adjit.store
// FINITE: scf.if
// FINITE: adjit.access_error %{{.*}} site 1
// FINITE: %[[OLD:.*]] = adjit.atomic_add
// FINITE: %[[NEW:.*]] = arith.addf %[[OLD]], %{{.*}} : f32
// FINITE: math.absf %[[NEW]] : f32
// FINITE: adjit.access_error %{{.*}} site 2
// FINITE-NOT: adjit.access_error
// FINITE: return
func.func @stores(%v: !adjit.array<vector<3xf32>, 1>, %s: !adjit.array<f32, 1>, %n: !adjit.array<i32, 1>) attributes {adjit.kernel, adjit.arg_names = ["v", "s", "n"]} {
  %i = adjit.tid : index
  %x = adjit.load %v[%i] : !adjit.array<vector<3xf32>, 1>
  adjit.store %x, %v[%i] : !adjit.array<vector<3xf32>, 1>
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %old = adjit.atomic_add %one, %s[%c0] [] : f32, !adjit.array<f32, 1>
  %k = arith.constant 7 : i32
  adjit.store %k, %n[%i] : !adjit.array<i32, 1>
  return
}

// -----

// A runtime component index (the frontend's marker for `v[k]`) becomes a
// check reporting an index outside [0, size) as site "component index".
// CHECK-LABEL: func.func @component_index(
// CHECK-SAME: adjit.check_sites = [{access = "component index", array = "v (vec3)", {{.*}}rank = 1 : i64}
// CHECK: %[[K:.*]] = arith.index_cast %arg0
// CHECK: %[[BAD:.*]] = arith.cmpi uge, %[[K]], %[[THREE:.*]] : index
// CHECK: scf.if %[[BAD]] {
// CHECK-NEXT: adjit.access_error %{{.*}}, %{{.*}} site 0[%[[K]]] of[%[[THREE]]]
// CHECK-NOT: adjit.check_index
func.func @component_index(%k32: i32) attributes {adjit.kernel} {
  %c3 = arith.constant 3 : index
  %k = arith.index_cast %k32 : i32 to index
  adjit.check_index %k, %c3 {what = "v (vec3)"}
  return
}

// -----

// A tile's element index clamped into an extent, max(min(x, n - 1), 0) in
// either order, is in [0, n) whenever n >= 1: with n the accessed array's
// own extent, one launch fact `0 < n`; with another kernel argument's (an
// adjoint kernel's gradient array accessed at the primal's indices), also
// `n <= size`. A clamp that misses a side is checked per access.
// CHECK-LABEL: func.func @clamped(
// CHECK: %[[N:.*]] = adjit.dim %arg0, 0
// CHECK: arith.cmpi ult, %{{.*}}, %[[N]] : index
// CHECK: %[[M:.*]] = adjit.dim %arg1, 0
// CHECK: %[[POS:.*]] = arith.cmpi ult, %{{.*}}, %[[M]] : index
// CHECK: %[[FITS:.*]] = arith.cmpi ule, %[[M]], %{{.*}} : index
// CHECK: arith.andi %[[POS]], %[[FITS]] : i1
// CHECK: %[[PROVEN:.*]] = adjit.launch_condition
// CHECK: %[[OK1:.*]] = arith.ori %[[PROVEN]], %{{.*}} : i1
// CHECK: scf.if %[[OK1]] -> (f32)
// CHECK: %[[OK2:.*]] = arith.ori %[[PROVEN]], %{{.*}} : i1
// CHECK: scf.if %[[OK2]] -> (f32)
// CHECK: %[[OK3:.*]] = arith.ori %[[PROVEN]], %{{.*}} : i1
// CHECK: scf.if %[[OK3]] -> (f32)
// The one-sided clamp: checked on every launch.
// CHECK-NOT: arith.ori %[[PROVEN]]
// CHECK: site 3
func.func @clamped(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %k32: i32) attributes {adjit.kernel, adjit.arg_names = ["x", "y"]} {
  %k = arith.index_cast %k32 : i32 to index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = adjit.dim %x, 0 : !adjit.array<f32, 1>
  %last = arith.subi %n, %c1 : index
  %lo = arith.minsi %k, %last : index
  %i = arith.maxsi %lo, %c0 : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %hi = arith.maxsi %c0, %k : index
  %j = arith.minsi %last, %hi : index
  %b = adjit.load %x[%j] : !adjit.array<f32, 1>
  %m = adjit.dim %y, 0 : !adjit.array<f32, 1>
  %other = arith.subi %m, %c1 : index
  %lo2 = arith.minsi %k, %other : index
  %wrong = arith.maxsi %lo2, %c0 : index
  %c = adjit.load %x[%wrong] : !adjit.array<f32, 1>
  %half = arith.minsi %k, %last : index
  %d = adjit.load %x[%half] : !adjit.array<f32, 1>
  %s = arith.addf %a, %b : f32
  %t = arith.addf %c, %d : f32
  %u = arith.addf %s, %t : f32
  adjit.store %u, %y[%c0] : !adjit.array<f32, 1>
  return
}
