// RUN: adjit-opt %s --adjit-lower-to-std --adjit-cpu-launch=noalias=true --canonicalize --adjit-vectorize-threads | FileCheck %s
// RUN: adjit-opt %s --adjit-lower-to-std --adjit-cpu-launch=noalias=true --canonicalize --adjit-vectorize-threads | adjit-opt --adjit-cpu-to-llvm | FileCheck %s --check-prefix=LLVM

// adjit-vectorize-threads on what adjoint kernels contain: gradient
// accumulation (atomics at the thread's own elements) and the loop
// reversal's checkpoint stacks (local arrays).

/// An atomic add at the thread index, under a varying condition: the lanes'
/// read, add (old + value, as the scalar atomic) and write, masked.
// CHECK-LABEL: func.func private @accum_body(
// CHECK-SAME: adjit.simd = "vectorized: 8 threads in @accum_body_simd"
// CHECK-LABEL: func.func private @accum_body_simd(
// CHECK: scf.for
// CHECK: %[[ON:.*]] = arith.cmpf ogt, %{{.*}} : vector<8xf32>
// CHECK: %[[OLD:.*]] = vector.maskedload %[[OUT:[a-z0-9_]+]][%[[BASE:[a-z0-9_]+]]], %[[ON]], %{{.*}} : memref<?xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %{{.*}} : vector<8xf32>
// CHECK: vector.maskedstore %[[OUT]][%[[BASE]]], %[[ON]], %[[NEW]] : memref<?xf32>, vector<8xi1>, vector<8xf32>
// CHECK-NOT: atomic_rmw
// CHECK: return
func.func @accum(%x: !adjit.array<f32, 1>, %n: i32, %out: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %ni = arith.index_cast %n : i32 to index
  %xi = adjit.load %x[%i] : !adjit.array<f32, 1>
  scf.for %k = %c0 to %ni step %c1 {
    %pos = arith.cmpf ogt, %xi, %zero : f32
    scf.if %pos {
      %old = adjit.atomic_add %xi, %out[%i] [] : f32, !adjit.array<f32, 1>
    }
  }
  return
}

/// An atomic on a vec3 array at the thread index: a gather, add, scatter.
// CHECK-LABEL: func.func private @accum3_body(
// CHECK-SAME: adjit.simd = "vectorized: 8 threads in @accum3_body_simd"
// CHECK-LABEL: func.func private @accum3_body_simd(
// CHECK: %[[OLD:.*]] = vector.gather %[[G:[a-z0-9_]+]][%{{.*}}, %{{.*}}] [%{{.*}}], %{{.*}}, %{{.*}} : memref<?x?xf32>, vector<8xindex>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %{{.*}} : vector<8xf32>
// CHECK: vector.scatter %[[G]][%{{.*}}, %{{.*}}] [%{{.*}}], %{{.*}}, %[[NEW]] : memref<?x?xf32>, vector<8xindex>, vector<8xi1>, vector<8xf32>
func.func @accum3(%x: !adjit.array<f32, 1>, %n: i32, %g: !adjit.array<f32, 2>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ni = arith.index_cast %n : i32 to index
  %xi = adjit.load %x[%i] : !adjit.array<f32, 1>
  scf.for %k = %c0 to %ni step %c1 {
    %old = adjit.atomic_add %xi, %g[%i, %c1] [] : f32, !adjit.array<f32, 2>
  }
  return
}

/// Atomics at an element every thread may add to keep the body scalar.
// CHECK-LABEL: func.func private @total_body(
// CHECK-SAME: adjit.simd = "scalar: atomics at elements other threads may access (memref.atomic_rmw)"
// CHECK-NOT: func.func private @total_body_simd
func.func @total(%x: !adjit.array<f32, 1>, %n: i32, %out: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ni = arith.index_cast %n : i32 to index
  %xi = adjit.load %x[%i] : !adjit.array<f32, 1>
  scf.for %k = %c0 to %ni step %c1 {
    %old = adjit.atomic_add %xi, %out[%c0] [] : f32, !adjit.array<f32, 1>
  }
  return
}

/// A float add whose result is unused may be logged and applied after an
/// ordered launch: an array that takes one and is also read (here another
/// thread's element) stays scalar.
// CHECK-LABEL: func.func private @neighbor_body(
// CHECK-SAME: adjit.simd = "scalar: an array added to atomically and also read or written (memref.load)"
func.func @neighbor(%x: !adjit.array<f32, 1>, %n: i32, %out: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ni = arith.index_cast %n : i32 to index
  %ip1 = arith.addi %i, %c1 : index
  %xi = adjit.load %x[%i] : !adjit.array<f32, 1>
  scf.for %k = %c0 to %ni step %c1 {
    %o = adjit.load %out[%ip1] : !adjit.array<f32, 1>
    %old = adjit.atomic_add %o, %out[%i] [] : f32, !adjit.array<f32, 1>
  }
  return
}

/// An integer atomic at the thread index whose old value the thread uses
/// (atomics of other kinds are done in place, never logged).
// CHECK-LABEL: func.func private @ticket_body_simd(
// CHECK: %[[OLD:.*]] = vector.load %[[T:[a-z0-9_]+]][%[[BASE:[a-z0-9_]+]]] : memref<?xi32>, vector<8xi32>
// CHECK: %[[NEW:.*]] = arith.addi %[[OLD]], %{{.*}} : vector<8xi32>
// CHECK: vector.store %[[NEW]], %[[T]][%[[BASE]]] : memref<?xi32>, vector<8xi32>
// CHECK: arith.addi %{{.*}}, %[[OLD]] : vector<8xi32>
func.func @ticket(%t: !adjit.array<i32, 1>, %n: i32, %out: !adjit.array<i32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  %zero = arith.constant 0 : i32
  %ni = arith.index_cast %n : i32 to index
  %sum = scf.for %k = %c0 to %ni step %c1 iter_args(%s = %zero) -> (i32) {
    %old = adjit.atomic_add %one, %t[%i] [] : i32, !adjit.array<i32, 1>
    %ns = arith.addi %s, %old : i32
    scf.yield %ns : i32
  }
  adjit.store %sum, %out[%i] : !adjit.array<i32, 1>
  return
}

/// A checkpoint stack (as the loop reversal makes): one array per group,
/// each element the 8 lanes' copies (the lanes innermost), so a push or a
/// pop is one vector store or load; the stack save and restore stay.
// CHECK-LABEL: func.func private @stack_body(
// CHECK-SAME: adjit.simd = "vectorized: 8 threads in @stack_body_simd"
// CHECK-LABEL: func.func private @stack_body_simd(
// CHECK: %[[SP:.*]] = llvm.intr.stacksave : !llvm.ptr
// CHECK: %[[S:.*]] = memref.alloca(%[[N:.*]]) : memref<?xvector<8xf32>>
// CHECK: %[[V:.*]] = memref.alloca(%[[N]]) : memref<?xvector<3x8xf32>>
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %[[N]]
// CHECK: memref.store %{{.*}}, %[[S]][%[[K]]] : memref<?xvector<8xf32>>
// CHECK: memref.store %{{.*}}, %[[V]][%[[K]]] : memref<?xvector<3x8xf32>>
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %[[N]]
// CHECK: %[[POP:.*]] = memref.load %[[S]][%{{.*}}] : memref<?xvector<8xf32>>
// CHECK: %[[POP3:.*]] = memref.load %[[V]][%{{.*}}] : memref<?xvector<3x8xf32>>
// CHECK: %[[E1:.*]] = vector.extract %[[POP3]][1] : vector<8xf32> from vector<3x8xf32>
// CHECK: arith.addf %{{.*}}, %[[E1]] : vector<8xf32>
// CHECK: llvm.intr.stackrestore %[[SP]] : !llvm.ptr
// LLVM-LABEL: llvm.func internal @stack_body_simd(
// LLVM: llvm.alloca %{{.*}} x vector<8xf32> : (i64) -> !llvm.ptr
// LLVM: llvm.alloca %{{.*}} x !llvm.array<3 x vector<8xf32>> : (i64) -> !llvm.ptr
func.func @stack(%x: !adjit.array<f32, 1>, %n: i32, %out: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ni = arith.index_cast %n : i32 to index
  %xi = adjit.load %x[%i] : !adjit.array<f32, 1>
  %sp = llvm.intr.stacksave : !llvm.ptr
  %s = memref.alloca(%ni) : memref<?xf32>
  %v = memref.alloca(%ni) : memref<?xvector<3xf32>>
  %last = scf.for %k = %c0 to %ni step %c1 iter_args(%a = %xi) -> (f32) {
    memref.store %a, %s[%k] : memref<?xf32>
    %a3 = vector.broadcast %a : f32 to vector<3xf32>
    memref.store %a3, %v[%k] : memref<?xvector<3xf32>>
    %na = arith.mulf %a, %a : f32
    scf.yield %na : f32
  }
  %acc = scf.for %r = %c0 to %ni step %c1 iter_args(%g = %last) -> (f32) {
    %top = arith.subi %ni, %c1 : index
    %k = arith.subi %top, %r : index
    %a = memref.load %s[%k] : memref<?xf32>
    %a3 = memref.load %v[%k] : memref<?xvector<3xf32>>
    %e:3 = vector.to_elements %a3 : vector<3xf32>
    %p = arith.mulf %g, %a : f32
    %q = arith.addf %p, %e#1 : f32
    scf.yield %q : f32
  }
  llvm.intr.stackrestore %sp : !llvm.ptr
  adjit.store %acc, %out[%i] : !adjit.array<f32, 1>
  return
}

/// Under a varying condition, a push writes the lanes that push and keeps
/// the others' elements (if any lane pushes: read, select, write); a pop
/// reads if any lane pops.
// CHECK-LABEL: func.func private @masked_stack_body_simd(
// CHECK: %[[S:.*]] = memref.alloca(%{{.*}}) : memref<?xvector<8xf32>>
// CHECK: %[[ANY:.*]] = vector.reduction <or>, %[[ON:.*]] : vector<8xi1> into i1
// CHECK: scf.if %[[ANY]] {
// CHECK: %[[OLD:.*]] = memref.load %[[S]][%[[K:.*]]] : memref<?xvector<8xf32>>
// CHECK: %[[MERGED:.*]] = arith.select %[[ON]], %{{.*}}, %[[OLD]] : vector<8xi1>, vector<8xf32>
// CHECK: memref.store %[[MERGED]], %[[S]][%[[K]]] : memref<?xvector<8xf32>>
// CHECK: %[[ANY2:.*]] = vector.reduction <or>, %{{.*}} : vector<8xi1> into i1
// CHECK: scf.if %[[ANY2]] -> (vector<8xf32>) {
// CHECK: memref.load %[[S]][%{{.*}}] : memref<?xvector<8xf32>>
func.func @masked_stack(%x: !adjit.array<f32, 1>, %n: i32, %out: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %ni = arith.index_cast %n : i32 to index
  %xi = adjit.load %x[%i] : !adjit.array<f32, 1>
  %s = memref.alloca(%ni) : memref<?xf32>
  %pos = arith.cmpf ogt, %xi, %zero : f32
  scf.for %k = %c0 to %ni step %c1 {
    scf.if %pos {
      memref.store %xi, %s[%k] : memref<?xf32>
    }
  }
  %acc = scf.for %k = %c0 to %ni step %c1 iter_args(%g = %zero) -> (f32) {
    %r = scf.if %pos -> (f32) {
      %a = memref.load %s[%k] : memref<?xf32>
      scf.yield %a : f32
    } else {
      scf.yield %zero : f32
    }
    %q = arith.addf %g, %r : f32
    scf.yield %q : f32
  }
  adjit.store %acc, %out[%i] : !adjit.array<f32, 1>
  return
}

/// A local array at an index that differs between threads stays scalar.
// CHECK-LABEL: func.func private @lane_index_body(
// CHECK-SAME: adjit.simd = "scalar: a local array at an index that differs between threads (memref.store)"
// CHECK-NOT: func.func private @lane_index_body_simd
func.func @lane_index(%x: !adjit.array<f32, 1>, %n: i32, %out: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %ni = arith.index_cast %n : i32 to index
  %xi = adjit.load %x[%i] : !adjit.array<f32, 1>
  %s = memref.alloca() : memref<8xf32>
  %lane = arith.remui %i, %c8 : index
  scf.for %k = %c0 to %ni step %c1 {
    memref.store %xi, %s[%lane] : memref<8xf32>
  }
  %a = memref.load %s[%c0] : memref<8xf32>
  adjit.store %a, %out[%i] : !adjit.array<f32, 1>
  return
}

/// So does a local array whose size differs between threads.
// CHECK-LABEL: func.func private @lane_size_body(
// CHECK-SAME: adjit.simd = "scalar: a local array whose size differs between threads (memref.alloca)"
func.func @lane_size(%x: !adjit.array<f32, 1>, %m: !adjit.array<i32, 1>, %out: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %mi = adjit.load %m[%i] : !adjit.array<i32, 1>
  %ni = arith.index_cast %mi : i32 to index
  %xi = adjit.load %x[%i] : !adjit.array<f32, 1>
  %s = memref.alloca(%ni) : memref<?xf32>
  scf.for %k = %c0 to %ni step %c1 {
    memref.store %xi, %s[%k] : memref<?xf32>
  }
  %a = memref.load %s[%c0] : memref<?xf32>
  adjit.store %a, %out[%i] : !adjit.array<f32, 1>
  return
}
