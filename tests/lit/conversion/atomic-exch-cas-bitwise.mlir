// RUN: adjit-opt %s --adjit-lower-to-std | FileCheck %s --check-prefix=STD
// RUN: adjit-opt %s --adjit-lower-cpu --adjit-cpu-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: adjit-opt %s --adjit-lower-gpu '--adjit-gpu-to-ptx=chip=sm_80' | FileCheck %s --check-prefix=PTX

/// atomic_exch/and/or/xor become memref.atomic_rmw (assign, andi, ori, xori;
/// vectors component by component); atomic_cas becomes an llvm.cmpxchg on
/// the element's bits at its address (floats bitcast to integers).
// STD-LABEL: func.func @atomics(
// STD: memref.atomic_rmw assign %{{.*}}, %{{.*}}[%{{.*}}] : (f32, memref<?xf32>) -> f32
// STD: memref.atomic_rmw andi %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : (i32, memref<?x2xi32>) -> i32
// STD: memref.atomic_rmw andi %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : (i32, memref<?x2xi32>) -> i32
// STD: vector.from_elements
// STD: %[[C1:.*]] = arith.constant 1 : index
// STD: memref.atomic_rmw ori %{{.*}}, %{{.*}}[%{{.*}}, %[[C1]]] : (i32, memref<?x2xi32>) -> i32
// STD: memref.atomic_rmw xori %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : (i64, memref<?x?xi64>) -> i64
// STD: llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i64
// STD: llvm.cmpxchg %{{.*}}, %{{.*}}, %{{.*}} acq_rel acquire : !llvm.ptr, i64
// STD: %[[CMP:.*]] = arith.bitcast %arg8 : f64 to i64
// STD: %[[NEW:.*]] = arith.bitcast %arg9 : f64 to i64
// STD: %[[PAIR:.*]] = llvm.cmpxchg %{{.*}}, %[[CMP]], %[[NEW]] acq_rel acquire : !llvm.ptr, i64
// STD: %[[BITS:.*]] = llvm.extractvalue %[[PAIR]][0] : !llvm.struct<(i64, i1)>
// STD: arith.bitcast %[[BITS]] : i64 to f64
// STD: llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i32
// STD: llvm.cmpxchg %{{.*}}, %{{.*}}, %{{.*}} acq_rel acquire : !llvm.ptr, i32
// STD: memref.atomic_rmw assign %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : (i64, memref<?x?xi64>) -> i64
// STD-NOT: adjit.atomic
// LLVM-LABEL: llvm.func internal @atomics_body(
// LLVM: llvm.atomicrmw xchg %{{.*}}, %{{.*}} acq_rel : !llvm.ptr, f32
// LLVM: llvm.atomicrmw _and %{{.*}}, %{{.*}} acq_rel : !llvm.ptr, i32
// LLVM: llvm.atomicrmw _and %{{.*}}, %{{.*}} acq_rel : !llvm.ptr, i32
// LLVM: llvm.atomicrmw _or %{{.*}}, %{{.*}} acq_rel : !llvm.ptr, i32
// LLVM: llvm.atomicrmw _xor %{{.*}}, %{{.*}} acq_rel : !llvm.ptr, i64
// LLVM: llvm.cmpxchg %{{.*}}, %{{.*}}, %{{.*}} acq_rel acquire : !llvm.ptr, i64
// LLVM: llvm.cmpxchg %{{.*}}, %{{.*}}, %{{.*}} acq_rel acquire : !llvm.ptr, i64
// LLVM: llvm.cmpxchg %{{.*}}, %{{.*}}, %{{.*}} acq_rel acquire : !llvm.ptr, i32
// LLVM: llvm.atomicrmw xchg %{{.*}}, %{{.*}} acq_rel : !llvm.ptr, i64
// PTX-DAG: atom.global.exch.b32
// PTX-DAG: atom.global.and.b32
// PTX-DAG: atom.global.or.b32
// PTX-DAG: atom.global.xor.b64
// PTX-DAG: cas.b64
// PTX-DAG: cas.b32
// PTX-DAG: atom.global.exch.b64
func.func @atomics(%x: !adjit.array<f32, 1>, %n: !adjit.array<vector<2xi32>, 1>, %u: !adjit.array<i64, 2>,
                   %d: !adjit.array<f64, 1>, %v: f32, %k: i32, %w: vector<2xi32>, %l: i64, %e: f64, %v64: f64,
                   %out: !adjit.array<f64, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.atomic_exch %v, %x[%i] [] : f32, !adjit.array<f32, 1>
  %b = adjit.atomic_and %w, %n[%i] [] : vector<2xi32>, !adjit.array<vector<2xi32>, 1>
  %c = "adjit.atomic_or"(%k, %n, %i) <{position = array<i64: 1>}> : (i32, !adjit.array<vector<2xi32>, 1>, index) -> i32
  %f = adjit.atomic_xor %l, %u[%i, %i] [] : i64, !adjit.array<i64, 2>
  %g = adjit.atomic_cas %l, %l, %u[%i, %i] [] : i64, !adjit.array<i64, 2>
  %h = adjit.atomic_cas %e, %v64, %d[%i] [] : f64, !adjit.array<f64, 1>
  %m = "adjit.atomic_cas"(%k, %k, %n, %i) <{position = array<i64: 0>}> : (i32, i32, !adjit.array<vector<2xi32>, 1>, index) -> i32
  %o = adjit.atomic_exch %l, %u[%i, %i] [] : i64, !adjit.array<i64, 2>
  adjit.store %h, %out[%i] : !adjit.array<f64, 1>
  return
}
