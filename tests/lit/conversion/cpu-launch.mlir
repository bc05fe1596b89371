// RUN: adjit-opt %s --adjit-lower-to-std --adjit-cpu-launch | FileCheck %s
// RUN: adjit-opt %s --adjit-lower-to-std --adjit-cpu-launch | adjit-opt | FileCheck %s --check-prefix=NOTID

// adjit-cpu-launch: each kernel @k becomes a private @k_body taking its
// arguments and (%linear, %total, %e1, %e2, %e3, %record), with adjit.tid
// delinearized over the extents; the public
// @k_cpu_entry(args, shape, begin, end, record) unpacks the packed arguments
// and loops over [begin, end) calling the body.

// No tid survives, nor a kernel marker, and the output parses again.
// NOTID-NOT: adjit.tid
// NOTID-NOT: {{adjit.kernel[^_]}}

/// A 1-D kernel: tid is the linear index itself; the entry unpacks a scalar
/// and two memref descriptors, reads the 4 extents of the shape and
/// multiplies them into the total.
// CHECK-LABEL: func.func private @saxpy_body(
// CHECK-SAME: %[[A:[^:]*]]: f32, %[[X:[^:]*]]: memref<?xf32>, %[[Y:[^:]*]]: memref<?xf32>,
// CHECK-SAME: %[[LIN:[^:]*]]: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: !llvm.ptr)
// CHECK-SAME: attributes {adjit.kernel_body, llvm.linkage = #llvm.linkage<internal>}
// CHECK-NOT: adjit.tid
// CHECK: %[[XI:.*]] = memref.load %[[X]][%[[LIN]]] : memref<?xf32>
// CHECK: %[[YI:.*]] = memref.load %[[Y]][%[[LIN]]] : memref<?xf32>
// CHECK: memref.store %{{.*}}, %[[Y]][%[[LIN]]] : memref<?xf32>
// CHECK: return

// CHECK-LABEL: func.func @saxpy_cpu_entry(
// CHECK-SAME: %[[ARGS:[^:]*]]: !llvm.ptr, %[[SHAPE:[^:]*]]: !llvm.ptr, %[[BEGIN:[^:]*]]: i64, %[[END:[^:]*]]: i64, %[[RECORD:[^:]*]]: !llvm.ptr)
// CHECK: %[[SLOT0:.*]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P0:.*]] = llvm.load %[[SLOT0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[AV:.*]] = llvm.load %[[P0]] : !llvm.ptr -> f32
// CHECK: %[[SLOT1:.*]] = llvm.getelementptr %[[ARGS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P1:.*]] = llvm.load %[[SLOT1]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[D1:.*]] = llvm.load %[[P1]] : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK: %[[XV:.*]] = builtin.unrealized_conversion_cast %[[D1]] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<?xf32>
// CHECK: %[[SLOT2:.*]] = llvm.getelementptr %[[ARGS]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[YV:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<?xf32>
// CHECK: %[[S0P:.*]] = llvm.getelementptr %[[SHAPE]][0] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK: %[[S1P:.*]] = llvm.getelementptr %[[SHAPE]][1] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK: %[[S1:.*]] = llvm.load %[[S1P]] : !llvm.ptr -> i64
// CHECK: %[[E1:.*]] = arith.index_cast %[[S1]] : i64 to index
// CHECK: %[[S2P:.*]] = llvm.getelementptr %[[SHAPE]][2] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK: %[[E2:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: %[[S3P:.*]] = llvm.getelementptr %[[SHAPE]][3] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK: %[[E3:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: %[[TOTAL:.*]] = arith.muli %{{.*}}, %[[E3]] : index
// CHECK: %[[LB:.*]] = arith.index_cast %[[BEGIN]] : i64 to index
// CHECK: %[[UB:.*]] = arith.index_cast %[[END]] : i64 to index
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: scf.for %[[IV:.*]] = %[[LB]] to %[[UB]] step %[[ONE]] {
// CHECK-NEXT: func.call @saxpy_body(%[[AV]], %[[XV]], %[[YV]], %[[IV]], %[[TOTAL]], %[[E1]], %[[E2]], %[[E3]], %[[RECORD]]) : (f32, memref<?xf32>, memref<?xf32>, index, index, index, index, index, !llvm.ptr) -> ()
// CHECK-NEXT: }
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

/// A 2-D tid: j = linear % e1, i = linear / e1.
// CHECK-LABEL: func.func private @grid2_body(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x?xf64>, %[[LIN:[^:]*]]: index, %{{[^:]*}}: index, %[[E1:[^:]*]]: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: !llvm.ptr)
// CHECK-NEXT: %[[J:.*]] = arith.remui %[[LIN]], %[[E1]] : index
// CHECK-NEXT: %[[I:.*]] = arith.divui %[[LIN]], %[[E1]] : index
// CHECK: memref.store %{{.*}}, %[[X]][%[[I]], %[[J]]] : memref<?x?xf64>
// CHECK-LABEL: func.func @grid2_cpu_entry(
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: !llvm.ptr)
// CHECK: !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<?x?xf64>
// CHECK: scf.for
// CHECK-NEXT: func.call @grid2_body(
func.func @grid2(%x: !adjit.array<f64, 2>) attributes {adjit.kernel} {
  %i, %j = adjit.tid : index, index
  %c = arith.constant 1.0 : f64
  adjit.store %c, %x[%i, %j] : !adjit.array<f64, 2>
  return
}

/// A 4-D tid, slowest coordinate first: l = lin % e3, k = (lin / e3) % e2,
/// j = (lin / e3 / e2) % e1, i = lin / e3 / e2 / e1.
// CHECK-LABEL: func.func private @grid4_body(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x?x?x?xi32>, %[[LIN:[^:]*]]: index, %{{[^:]*}}: index, %[[E1:[^:]*]]: index, %[[E2:[^:]*]]: index, %[[E3:[^:]*]]: index, %{{[^:]*}}: !llvm.ptr)
// CHECK-NEXT: %[[L:.*]] = arith.remui %[[LIN]], %[[E3]] : index
// CHECK-NEXT: %[[R3:.*]] = arith.divui %[[LIN]], %[[E3]] : index
// CHECK-NEXT: %[[K:.*]] = arith.remui %[[R3]], %[[E2]] : index
// CHECK-NEXT: %[[R2:.*]] = arith.divui %[[R3]], %[[E2]] : index
// CHECK-NEXT: %[[J:.*]] = arith.remui %[[R2]], %[[E1]] : index
// CHECK-NEXT: %[[I:.*]] = arith.divui %[[R2]], %[[E1]] : index
// CHECK: memref.store %{{.*}}, %[[X]][%[[I]], %[[J]], %[[K]], %[[L]]] : memref<?x?x?x?xi32>
func.func @grid4(%x: !adjit.array<i32, 4>) attributes {adjit.kernel} {
  %i, %j, %k, %l = adjit.tid : index, index, index, index
  %c = arith.constant 7 : i32
  adjit.store %c, %x[%i, %j, %k, %l] : !adjit.array<i32, 4>
  return
}

/// Vector and matrix arguments are read from their packed components
/// (row-major, no padding) and reassembled before the loop.
// CHECK-LABEL: func.func private @values_body(
// CHECK-SAME: %{{[^:]*}}: vector<3xf32>, %{{[^:]*}}: vector<2x2xf64>, %{{[^:]*}}: i64, %{{[^:]*}}: memref<?x3xf32>
// CHECK-LABEL: func.func @values_cpu_entry(
// CHECK-SAME: %[[ARGS:[^:]*]]: !llvm.ptr,
// CHECK: %[[VP:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: %[[G0:.*]] = llvm.getelementptr %[[VP]][0] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK: %[[V0:.*]] = llvm.load %[[G0]] : !llvm.ptr -> f32
// CHECK: %[[G1:.*]] = llvm.getelementptr %[[VP]][1] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK: %[[V1:.*]] = llvm.load %[[G1]] : !llvm.ptr -> f32
// CHECK: %[[G2:.*]] = llvm.getelementptr %[[VP]][2] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK: %[[V2:.*]] = llvm.load %[[G2]] : !llvm.ptr -> f32
// CHECK: %[[VEC:.*]] = vector.from_elements %[[V0]], %[[V1]], %[[V2]] : vector<3xf32>
// CHECK: %[[MP:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : vector<2x2xf64>
// CHECK: llvm.getelementptr %[[MP]][0] : (!llvm.ptr) -> !llvm.ptr, f64
// CHECK: llvm.getelementptr %[[MP]][1] : (!llvm.ptr) -> !llvm.ptr, f64
// CHECK: %[[ROW0:.*]] = vector.from_elements %{{.*}}, %{{.*}} : vector<2xf64>
// CHECK: %[[M0:.*]] = vector.insert %[[ROW0]], %[[Z]] [0] : vector<2xf64> into vector<2x2xf64>
// CHECK: llvm.getelementptr %[[MP]][2] : (!llvm.ptr) -> !llvm.ptr, f64
// CHECK: llvm.getelementptr %[[MP]][3] : (!llvm.ptr) -> !llvm.ptr, f64
// CHECK: %[[ROW1:.*]] = vector.from_elements %{{.*}}, %{{.*}} : vector<2xf64>
// CHECK: %[[MAT:.*]] = vector.insert %[[ROW1]], %[[M0]] [1] : vector<2xf64> into vector<2x2xf64>
// CHECK: %[[NP:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: %[[N:.*]] = llvm.load %[[NP]] : !llvm.ptr -> i64
// CHECK: !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<?x3xf32>
// CHECK: scf.for %[[IV:[^ ]*]] =
// CHECK-NEXT: func.call @values_body(%[[VEC]], %[[MAT]], %[[N]], %{{.*}}, %[[IV]],
func.func @values(%v: vector<3xf32>, %m: vector<2x2xf64>, %n: i64, %p: !adjit.array<vector<3xf32>, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  adjit.store %v, %p[%i] : !adjit.array<vector<3xf32>, 1>
  return
}

/// Device functions are left alone and stay callable from the body.
// CHECK-LABEL: func.func private @sq(
// CHECK-SAME: %{{.*}}: f32) -> f32
// CHECK-LABEL: func.func private @calls_body(
// CHECK: call @sq(%{{.*}}) : (f32) -> f32
// CHECK-LABEL: func.func @calls_cpu_entry(
func.func private @sq(%x: f32) -> f32 {
  %r = arith.mulf %x, %x : f32
  return %r : f32
}
func.func @calls(%x: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %v = adjit.load %x[%i] : !adjit.array<f32, 1>
  %s = adjit.call @sq(%v) : (f32) -> f32
  adjit.store %s, %x[%i] : !adjit.array<f32, 1>
  return
}
