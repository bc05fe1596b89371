// RUN: adjit-opt %s --adjit-access-checks | adjit-opt '--adjit-lower-cpu=noalias=true simd-width=8' | FileCheck %s
// RUN: adjit-opt %s --adjit-access-checks | adjit-opt '--adjit-lower-cpu=noalias=true simd-width=8' | adjit-opt --adjit-cpu-to-llvm | FileCheck %s --check-prefix=LLVM

// A bounds check that must be made at run time (an index computed from a
// float): the SIMD body gathers under the in-range lanes' mask and, if any
// lane is out of range, reports lane by lane (in thread order) with that
// lane's thread and index, as the scalar body would.
// CHECK-LABEL: func.func private @lookup_body(
// CHECK-SAME: adjit.simd = "vectorized: 8 threads in @lookup_body_simd"
// CHECK-LABEL: func.func private @lookup_body_simd(
// CHECK-SAME: %[[X:[^:]*]]: memref<?xf32>, %[[Y:[^:]*]]: memref<?xf32>, %[[BASE:[^:]*]]: index, {{.*}}, %[[RECORD:[^:]*]]: !llvm.ptr)
// CHECK-SAME: adjit.simd_body
// CHECK: %[[LANES:.*]] = arith.addi %{{.*}}, %{{.*}} : vector<8xindex>
// CHECK: %[[XV:.*]] = vector.load %[[X]][%[[BASE]]] : memref<?xf32>, vector<8xf32>
// CHECK: %[[K:.*]] = arith.index_cast %{{.*}} : vector<8xi32> to vector<8xindex>
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[K]], %{{.*}} : vector<8xindex>
// CHECK: %[[OUT:.*]] = arith.xori %[[IN]], %{{.*}} : vector<8xi1>
// CHECK: %[[W:.*]] = vector.gather %[[X]][%{{.*}}] [%[[K]]], %[[IN]], %{{.*}} : memref<?xf32>, vector<8xindex>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK: %[[ANY:.*]] = vector.reduction <or>, %[[OUT]] : vector<8xi1> into i1
// CHECK: scf.if %[[ANY]] {
// CHECK: scf.for %[[L:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[ON:.*]] = vector.extract %[[OUT]][%[[L]]] : i1 from vector<8xi1>
// CHECK: scf.if %[[ON]] {
// CHECK-DAG: %[[T:.*]] = vector.extract %[[LANES]][%[[L]]] : index from vector<8xindex>
// CHECK-DAG: %[[KL:.*]] = vector.extract %[[K]][%[[L]]] : index from vector<8xindex>
// CHECK: llvm.cmpxchg %[[RECORD]]
// CHECK: arith.index_cast %[[T]] : index to i64
// CHECK: arith.index_cast %[[KL]] : index to i64
// CHECK: %[[R:.*]] = arith.select %[[IN]], %[[W]], %{{.*}} : vector<8xi1>, vector<8xf32>
// CHECK: vector.store %[[R]], %[[Y]][%[[BASE]]] : memref<?xf32>, vector<8xf32>

// The SIMD body stays out of the entry and is marked for the host pipeline.
// LLVM: llvm.func internal @lookup_body_simd(
// LLVM-SAME: passthrough = ["noinline", "adjit-simd"]
func.func @lookup(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel, adjit.arg_names = ["x", "y"]} {
  %i = adjit.tid : index
  %v = adjit.load %x[%i] : !adjit.array<f32, 1>
  %k = arith.fptosi %v : f32 to i32
  %ki = arith.index_cast %k : i32 to index
  %w = adjit.load %x[%ki] : !adjit.array<f32, 1>
  adjit.store %w, %y[%i] : !adjit.array<f32, 1>
  return
}
