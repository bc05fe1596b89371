// RUN: adjit-opt %s | adjit-opt | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: adjit-opt %s --adjit-lower-to-std | FileCheck %s --check-prefix=STD
// RUN: adjit-opt %s --adjit-lower-cpu --adjit-cpu-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: adjit-opt %s --adjit-lower-gpu '--adjit-gpu-to-ptx=chip=sm_80' | FileCheck %s --check-prefix=PTX

/// atomic_min / atomic_max round trip, lower to memref.atomic_rmw with the
/// float (IEEE minimum/maximum) or signed-integer kind, and reach LLVM and PTX.
// ROUNDTRIP-LABEL: func.func @minmax(
// ROUNDTRIP: adjit.atomic_min %{{.*}}, %{{.*}}[%{{.*}}] [] : f32, <f32, 1>
// ROUNDTRIP: adjit.atomic_max %{{.*}}, %{{.*}}[%{{.*}}] [] : f32, <f32, 1>
// ROUNDTRIP: adjit.atomic_max %{{.*}}, %{{.*}}[%{{.*}}] [1] : i32, <vector<2xi32>, 1>
// ROUNDTRIP: adjit.atomic_min %{{.*}}, %{{.*}}[%{{.*}}] [] : vector<2xi32>, <vector<2xi32>, 1>
// STD-LABEL: func.func @minmax(
// STD: memref.atomic_rmw minimumf
// STD: memref.atomic_rmw maximumf
// STD: memref.atomic_rmw maxs
// STD: memref.atomic_rmw mins
// STD: memref.atomic_rmw mins
// STD-NOT: adjit.atomic
// LLVM: llvm.atomicrmw fminimum
// LLVM: llvm.atomicrmw fmaximum
// LLVM: llvm.atomicrmw max
// LLVM: llvm.atomicrmw min
// PTX: atom.max.s32
// PTX: atom.min.s32
func.func @minmax(%x: !adjit.array<f32, 1>, %n: !adjit.array<vector<2xi32>, 1>, %v: f32, %k: i32, %w: vector<2xi32>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.atomic_min %v, %x[%i] [] : f32, !adjit.array<f32, 1>
  %b = adjit.atomic_max %v, %x[%i] [] : f32, !adjit.array<f32, 1>
  %c = adjit.atomic_max %k, %n[%i] [1] : i32, !adjit.array<vector<2xi32>, 1>
  %d = adjit.atomic_min %w, %n[%i] [] : vector<2xi32>, !adjit.array<vector<2xi32>, 1>
  return
}
