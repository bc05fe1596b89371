// RUN: adjit-opt %s | adjit-opt | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: adjit-opt %s --adjit-lower-to-std | FileCheck %s --check-prefix=STD
// RUN: adjit-opt %s --adjit-lower-cpu --adjit-cpu-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: adjit-opt %s --adjit-lower-gpu '--adjit-gpu-to-ptx=chip=sm_80' | FileCheck %s --check-prefix=PTX
// RUN: adjit-opt %s --adjit-adjoint | FileCheck %s --check-prefix=ADJ
// RUN: adjit-opt %s --adjit-tangent | FileCheck %s --check-prefix=TAN

/// An array at an address lowers to a row-major memref descriptor built in
/// the LLVM dialect (sizes: the extents, then the component shape; strides
/// from the back) and cast to the memref, a cast that cancels in the LLVM
/// conversion. Differentiation treats its memory as constant: the read gets
/// no gradient (adjoint) and no tangent.
// ROUNDTRIP-LABEL: func.func @gather_points(
// ROUNDTRIP: adjit.array_at_address %{{.*}}[%{{.*}}] {name = "mesh points"} : <vector<3xf32>, 1>
// STD-LABEL: func.func @gather_points(
// STD: %[[P:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// STD: llvm.insertvalue %[[P]], %{{.*}}[0]
// STD: llvm.insertvalue %[[P]], %{{.*}}[1]
// STD: llvm.insertvalue %{{.*}}, %{{.*}}[3, 0]
// STD: llvm.insertvalue %{{.*}}, %{{.*}}[4, 1]
// STD: %[[M:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<?x3xf32>
// STD: memref.load %[[M]]
// STD-NOT: adjit.array_at_address
// LLVM: llvm.inttoptr
// LLVM-NOT: unrealized_conversion_cast
// PTX: .visible .entry gather_points(
// ADJ-LABEL: func.func @gather_points_adjoint(
// ADJ: %[[PTS:.*]] = adjit.array_at_address
// ADJ-NOT: adjit.atomic_add
// ADJ-NOT: adjit.store %{{.*}}, %[[PTS]]
// ADJ: adjit.store %{{.*}}, %arg4[
// ADJ-NOT: adjit.atomic_add
// TAN-LABEL: func.func @gather_points_tangent(
// TAN: adjit.array_at_address
// TAN-NOT: adjit.load %arg5
// TAN: adjit.load %arg4[
// TAN-NOT: adjit.load %arg5
func.func @gather_points(%addr: i64, %count: i32, %s: !adjit.array<f32, 1>, %y: !adjit.array<vector<3xf32>, 1>) attributes {adjit.kernel, adjit.arg_names = ["addr", "n", "s", "y"]} {
  %i = adjit.tid : index
  %n = arith.index_cast %count : i32 to index
  %pts = adjit.array_at_address %addr[%n] {name = "mesh points"} : !adjit.array<vector<3xf32>, 1>
  %p = adjit.load %pts[%i] : !adjit.array<vector<3xf32>, 1>
  %a = adjit.load %s[%i] : !adjit.array<f32, 1>
  %v = vector.broadcast %a : f32 to vector<3xf32>
  %r = arith.mulf %p, %v : vector<3xf32>
  adjit.store %r, %y[%i] : !adjit.array<vector<3xf32>, 1>
  return
}
