// RUN: adjit-opt %s --adjit-lower-to-std --adjit-cpu-launch=noalias=true --canonicalize --adjit-vectorize-threads | FileCheck %s
// RUN: adjit-opt %s --adjit-lower-to-std --adjit-cpu-launch=noalias=true --canonicalize --adjit-vectorize-threads=width=4 | FileCheck %s --check-prefix=W4

// adjit-vectorize-threads: each kernel body gets a @<body>_simd running 8
// consecutive threads as vector lanes; the entry calls it for whole groups
// of 8 and the scalar body for the rest of its chunk.

/// Consecutive accesses of 1-D arrays: vector loads and stores; a loop
/// with uniform bounds carries vector<8xf32>.
// CHECK-LABEL: func.func private @saxpy_body(
// CHECK-SAME: adjit.simd = "vectorized: 8 threads in @saxpy_body_simd"
// CHECK-LABEL: func.func private @saxpy_body_simd(
// CHECK-SAME: %[[A:[^:]*]]: f32, %[[N32:[^:]*]]: i32, %[[X:[^:]*]]: memref<?xf32>, %[[Y:[^:]*]]: memref<?xf32>, %[[BASE:[^:]*]]: index
// CHECK: %[[N:.*]] = arith.index_cast %[[N32]] : i32 to index
// CHECK: %[[XV:.*]] = vector.load %[[X]][%[[BASE]]] : memref<?xf32>, vector<8xf32>
// CHECK: %[[YV:.*]] = vector.load %[[Y]][%[[BASE]]] : memref<?xf32>, vector<8xf32>
// CHECK: %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[YV]]) -> (vector<8xf32>) {
// CHECK: %[[AV:.*]] = vector.broadcast %[[A]] : f32 to vector<8xf32>
// CHECK: %[[M:.*]] = arith.mulf %[[AV]], %[[XV]] : vector<8xf32>
// CHECK: %[[S:.*]] = arith.addf %[[M]], %[[ACC]] : vector<8xf32>
// CHECK: scf.yield %[[S]] : vector<8xf32>
// CHECK: vector.store %[[R]], %[[Y]][%[[BASE]]] : memref<?xf32>, vector<8xf32>
// CHECK-LABEL: func.func @saxpy_cpu_entry(
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %[[BEGIN:[^:]*]]: i64, %[[END:[^:]*]]: i64
// CHECK: %[[LB:.*]] = arith.index_cast %[[BEGIN]] : i64 to index
// CHECK: %[[UB:.*]] = arith.index_cast %[[END]] : i64 to index
// CHECK: %[[W:.*]] = arith.constant 8 : index
// CHECK: %[[SPAN:.*]] = arith.subi %[[UB]], %[[LB]] : index
// CHECK: %[[REST:.*]] = arith.remui %[[SPAN]], %[[W]] : index
// CHECK: %[[MID:.*]] = arith.subi %[[UB]], %[[REST]] : index
// CHECK: scf.for %[[G:.*]] = %[[LB]] to %[[MID]] step %[[W]] {
// CHECK: func.call @saxpy_body_simd({{.*}}, %[[G]], {{.*}})
// CHECK: scf.for %[[T:.*]] = %[[MID]] to %[[UB]] step %{{.*}} {
// CHECK: func.call @saxpy_body({{.*}}, %[[T]], {{.*}})
// W4: vector.load %{{.*}}[%{{.*}}] : memref<?xf32>, vector<4xf32>
func.func @saxpy(%a: f32, %n32: i32, %x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %n = arith.index_cast %n32 : i32 to index
  %xi = adjit.load %x[%i] : !adjit.array<f32, 1>
  %yi = adjit.load %y[%i] : !adjit.array<f32, 1>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %yi) -> (f32) {
    %ax = arith.mulf %a, %xi : f32
    %s = arith.addf %ax, %acc : f32
    scf.yield %s : f32
  }
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

/// Straight-line bodies are left to LLVM's loop vectorizer.
// CHECK-LABEL: func.func private @axpy_body(
// CHECK-SAME: adjit.simd = "scalar: straight-line code (LLVM's loop vectorizer widens the thread loop)"
// CHECK-NOT: func.func private @axpy_body_simd
func.func @axpy(%a: f32, %x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %xi = adjit.load %x[%i] : !adjit.array<f32, 1>
  %ax = arith.mulf %a, %xi : f32
  adjit.store %ax, %y[%i] : !adjit.array<f32, 1>
  return
}

/// ... unless they call math functions, which LLVM does not widen (sqrt is
/// an instruction: it does).
// CHECK-LABEL: func.func private @waves_body_simd(
// CHECK: %[[V:.*]] = vector.load %{{.*}} : memref<?xf32>, vector<8xf32>
// CHECK: math.sin %[[V]] : vector<8xf32>
// CHECK-LABEL: func.func private @roots_body(
// CHECK-SAME: adjit.simd = "scalar: straight-line code (LLVM's loop vectorizer widens the thread loop)"
func.func @waves(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %xi = adjit.load %x[%i] : !adjit.array<f32, 1>
  %s = math.sin %xi : f32
  adjit.store %s, %y[%i] : !adjit.array<f32, 1>
  return
}

func.func @roots(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %xi = adjit.load %x[%i] : !adjit.array<f32, 1>
  %s = math.sqrt %xi : f32
  adjit.store %s, %y[%i] : !adjit.array<f32, 1>
  return
}

/// A vec3 array read per thread: a gather at 3 * thread; a loop with uniform
/// bounds carries vector<8xf32>; a branch on a varying condition runs both
/// sides and selects.
// CHECK-LABEL: func.func private @branchy_body_simd(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x3xf32>, %[[N:[^:]*]]: i32, %[[Y:[^:]*]]: memref<?xf32>, %[[BASE:[^:]*]]: index
// CHECK: %[[IOTA:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : vector<8xindex>
// CHECK: %[[B:.*]] = vector.broadcast %[[BASE]] : index to vector<8xindex>
// CHECK: %[[LANES:.*]] = arith.addi %[[B]], %[[IOTA]] : vector<8xindex>
// CHECK: %[[OFF:.*]] = arith.muli %[[LANES]], %{{.*}} : vector<8xindex>
// CHECK: %[[E:.*]] = vector.gather %[[X]][%{{.*}}, %{{.*}}] [%{{.*}}], %{{.*}}, %{{.*}} : memref<?x3xf32>, vector<8xindex>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK: %[[S:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<8xf32>) {
// CHECK: %[[C:.*]] = arith.cmpf ogt, %[[ACC]], %[[E]] : vector<8xf32>
// CHECK: %[[D:.*]] = arith.subf %[[ACC]], %[[E]] : vector<8xf32>
// CHECK: %[[Q:.*]] = arith.addf %[[ACC]], %[[E]] : vector<8xf32>
// CHECK: %[[R:.*]] = math.sqrt %[[Q]] : vector<8xf32>
// CHECK: %[[SEL:.*]] = arith.select %[[C]], %[[D]], %[[R]] : vector<8xi1>, vector<8xf32>
// CHECK: scf.yield %[[SEL]] : vector<8xf32>
// CHECK: vector.store %[[S]], %[[Y]][%[[BASE]]] : memref<?xf32>, vector<8xf32>
func.func @branchy(%x: !adjit.array<vector<3xf32>, 1>, %n: i32, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %v = adjit.load %x[%i] : !adjit.array<vector<3xf32>, 1>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n_idx = arith.index_cast %n : i32 to index
  %e = vector.extract %v[0] : f32 from vector<3xf32>
  %s = scf.for %k = %c0 to %n_idx step %c1 iter_args(%acc = %zero) -> (f32) {
    %pos = arith.cmpf ogt, %acc, %e : f32
    %next = scf.if %pos -> (f32) {
      %d = arith.subf %acc, %e : f32
      scf.yield %d : f32
    } else {
      %q = arith.addf %acc, %e : f32
      %r = math.sqrt %q : f32
      scf.yield %r : f32
    }
    scf.yield %next : f32
  }
  adjit.store %s, %y[%i] : !adjit.array<f32, 1>
  return
}

/// Under a varying branch, stores are masked and an integer division
/// divides the lanes that do not take it by one (no trap on their zero).
// CHECK-LABEL: func.func private @masked_body_simd(
// CHECK-SAME: %[[X:[^:]*]]: memref<?xi32>, %[[Y:[^:]*]]: memref<?xi32>, %[[BASE:[^:]*]]: index
// CHECK: %[[XV:.*]] = vector.load %[[X]][%[[BASE]]] : memref<?xi32>, vector<8xi32>
// CHECK: %[[NZ:.*]] = arith.cmpi ne, %[[XV]], %{{.*}} : vector<8xi32>
// CHECK: %[[ONES:.*]] = arith.constant dense<1> : vector<8xi32>
// CHECK: %[[DIVISOR:.*]] = arith.select %[[NZ]], %[[XV]], %[[ONES]] : vector<8xi1>, vector<8xi32>
// CHECK: %[[Q:.*]] = arith.divsi %{{.*}}, %[[DIVISOR]] : vector<8xi32>
// CHECK: vector.maskedstore %[[Y]][%[[BASE]]], %[[NZ]], %[[Q]] : memref<?xi32>, vector<8xi1>, vector<8xi32>
func.func @masked(%x: !adjit.array<i32, 1>, %y: !adjit.array<i32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %xi = adjit.load %x[%i] : !adjit.array<i32, 1>
  %c0 = arith.constant 0 : i32
  %c7 = arith.constant 7 : i32
  %nz = arith.cmpi ne, %xi, %c0 : i32
  scf.if %nz {
    %q = arith.divsi %c7, %xi : i32
    adjit.store %q, %y[%i] : !adjit.array<i32, 1>
  }
  return
}

/// A print of a varying value (expect_eq's report) keeps the body scalar;
/// its format string, a pointer, is not widened (that aborted).
// CHECK-LABEL: func.func private @prints_body(
// CHECK-SAME: adjit.simd = "scalar: an op with side effects on varying values (llvm.call)"
// CHECK-NOT: func.func private @prints_body_simd
func.func @prints(%x: !adjit.array<i32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %xi = adjit.load %x[%i] : !adjit.array<i32, 1>
  %c0 = arith.constant 0 : i32
  %ne = arith.cmpi ne, %xi, %c0 : i32
  scf.if %ne {
    adjit.print "%d vs %d\0A"(%xi, %c0 : i32, i32)
  }
  return
}

/// Threads that share elements of an array they write stay scalar: their
/// order decides the result.
// CHECK-LABEL: func.func private @shared_body(
// CHECK-SAME: adjit.simd = "scalar: an array written at elements other threads may access (memref.store)"
// CHECK-NOT: func.func private @shared_body_simd
// CHECK-LABEL: func.func @shared_cpu_entry(
// CHECK-NOT: step %c8
func.func @shared(%x: !adjit.array<f32, 1>, %flag: i1) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  scf.if %flag {
    %xi = adjit.load %x[%i] : !adjit.array<f32, 1>
    adjit.store %xi, %x[%c0] : !adjit.array<f32, 1>
  }
  return
}

/// Nor are atomics at an element threads share (at their own elements:
/// vectorize-threads-adjoint.mlir).
// CHECK-LABEL: func.func private @counts_body(
// CHECK-SAME: adjit.simd = "scalar: atomics at elements other threads may access (memref.atomic_rmw)"
func.func @counts(%x: !adjit.array<i32, 1>, %flag: i1) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c1 = arith.constant 1 : i32
  %c0 = arith.constant 0 : index
  scf.if %flag {
    %old = adjit.atomic_add %c1, %x[%c0] [] : i32, !adjit.array<i32, 1>
  }
  return
}

/// A 2-D kernel with a data-dependent while loop: it runs while any lane
/// runs; each lane keeps the values of the iteration it stopped at. Its
/// coordinates (linear / e1, linear % e1) differ between lanes, so it may
/// write out[i, j] (a scatter: rows may wrap within a group).
// CHECK-LABEL: func.func private @escape_body(
// CHECK-SAME: adjit.simd = "vectorized: 8 threads in @escape_body_simd"
// CHECK-LABEL: func.func private @escape_body_simd(
// CHECK: %[[X0:.*]] = vector.gather
// CHECK: %[[R:.*]]:5 = scf.while (%[[X:.*]] = %{{.*}}, %[[K:.*]] = %{{.*}}, %[[RX:.*]] = %{{.*}}, %[[RK:.*]] = %{{.*}}, %[[ACT:.*]] = %{{.*}}) : (vector<8xf32>, vector<8xi32>, vector<8xf32>, vector<8xi32>, vector<8xi1>) -> (vector<8xf32>, vector<8xi32>, vector<8xf32>, vector<8xi32>, vector<8xi1>) {
// CHECK: %[[GO:.*]] = arith.andi %[[ACT]], %{{.*}} : vector<8xi1>
// CHECK: %[[STOP:.*]] = arith.andi %[[ACT]], %{{.*}} : vector<8xi1>
// CHECK: %[[KEEPX:.*]] = arith.select %[[STOP]], %[[X]], %[[RX]] : vector<8xi1>, vector<8xf32>
// CHECK: %[[KEEPK:.*]] = arith.select %[[STOP]], %[[K]], %[[RK]] : vector<8xi1>, vector<8xi32>
// CHECK: %[[ANY:.*]] = vector.reduction <or>, %[[GO]] : vector<8xi1> into i1
// CHECK: scf.condition(%[[ANY]]) %[[X]], %[[K]], %[[KEEPX]], %[[KEEPK]], %[[GO]]
// CHECK: } do {
// CHECK: ^bb0(%[[BX:.*]]: vector<8xf32>, %[[BK:.*]]: vector<8xi32>, %[[BRX:.*]]: vector<8xf32>, %[[BRK:.*]]: vector<8xi32>, %[[BGO:.*]]: vector<8xi1>):
// CHECK: %[[NX:.*]] = arith.addf %{{.*}}, %[[X0]] : vector<8xf32>
// CHECK: scf.yield %[[NX]], %{{.*}}, %[[BRX]], %[[BRK]], %[[BGO]]
// CHECK: vector.scatter %{{.*}}[%{{.*}}, %{{.*}}] [%{{.*}}], %{{.*}}, %[[R]]#3 : memref<?x?xi32>, vector<8xindex>, vector<8xi1>, vector<8xi32>
func.func @escape(%c: !adjit.array<f32, 2>, %out: !adjit.array<i32, 2>) attributes {adjit.kernel} {
  %i, %j = adjit.tid : index, index
  %x0 = adjit.load %c[%i, %j] : !adjit.array<f32, 2>
  %zero = arith.constant 0.0 : f32
  %k0 = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %lim = arith.constant 4.0 : f32
  %max = arith.constant 64 : i32
  %r:2 = scf.while (%x = %zero, %k = %k0) : (f32, i32) -> (f32, i32) {
    %sq = arith.mulf %x, %x : f32
    %small = arith.cmpf olt, %sq, %lim : f32
    %more = arith.cmpi slt, %k, %max : i32
    %go = arith.andi %small, %more : i1
    scf.condition(%go) %x, %k : f32, i32
  } do {
  ^bb0(%x: f32, %k: i32):
    %sq = arith.mulf %x, %x : f32
    %nx = arith.addf %sq, %x0 : f32
    %nk = arith.addi %k, %one : i32
    scf.yield %nx, %nk : f32, i32
  }
  adjit.store %r#1, %out[%i, %j] : !adjit.array<i32, 2>
  return
}

/// A loop whose bounds differ between threads (a CSR row): it runs to the
/// largest trip count, each lane masked once past its own.
// CHECK-LABEL: func.func private @rows_body_simd(
// CHECK: %[[S:.*]] = arith.index_cast %{{.*}} : vector<8xi32> to vector<8xindex>
// CHECK: %[[E:.*]] = arith.index_cast %{{.*}} : vector<8xi32> to vector<8xindex>
// CHECK: %[[SPAN:.*]] = arith.subi %[[E]], %[[S]] : vector<8xindex>
// CHECK: %[[POS:.*]] = arith.maxsi %[[SPAN]], %{{.*}} : vector<8xindex>
// CHECK: %[[TRIPS:.*]] = arith.divsi %{{.*}}, %{{.*}} : vector<8xindex>
// CHECK: %[[MOST:.*]] = vector.reduction <maxsi>, %[[TRIPS]] : vector<8xindex> into index
// CHECK: %[[SUM:.*]] = scf.for %[[T:.*]] = %{{.*}} to %[[MOST]] step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<8xf32>) {
// CHECK: %[[TV:.*]] = vector.broadcast %[[T]] : index to vector<8xindex>
// CHECK: %[[ON:.*]] = arith.cmpi slt, %[[TV]], %[[TRIPS]] : vector<8xindex>
// CHECK: %[[J:.*]] = arith.addi %[[S]], %{{.*}} : vector<8xindex>
// CHECK: %[[V:.*]] = vector.gather %{{.*}}[%{{.*}}] [%[[J]]], %[[ON]], %{{.*}}
// CHECK: %[[N:.*]] = arith.addf %[[ACC]], %[[V]] : vector<8xf32>
// CHECK: %[[KEEP:.*]] = arith.select %[[ON]], %[[N]], %[[ACC]] : vector<8xi1>, vector<8xf32>
// CHECK: scf.yield %[[KEEP]] : vector<8xf32>
// CHECK: vector.store %[[SUM]]
func.func @rows(%start: !adjit.array<i32, 1>, %vals: !adjit.array<f32, 1>, %out: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c1 = arith.constant 1 : index
  %ip1 = arith.addi %i, %c1 : index
  %s32 = adjit.load %start[%i] : !adjit.array<i32, 1>
  %e32 = adjit.load %start[%ip1] : !adjit.array<i32, 1>
  %s = arith.index_cast %s32 : i32 to index
  %e = arith.index_cast %e32 : i32 to index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %j = %s to %e step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = adjit.load %vals[%j] : !adjit.array<f32, 1>
    %n = arith.addf %acc, %v : f32
    scf.yield %n : f32
  }
  adjit.store %sum, %out[%i] : !adjit.array<f32, 1>
  return
}
