// RUN: adjit-opt %s | adjit-opt | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: adjit-opt %s --adjit-lower-to-std | FileCheck %s --check-prefix=STD
// RUN: adjit-opt %s --adjit-lower-cpu --adjit-cpu-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: adjit-opt %s --adjit-lower-gpu '--adjit-gpu-to-ptx=chip=sm_80' | FileCheck %s --check-prefix=PTX

/// bf16 arrays: loads, arithmetic, conversions and atomics. On the CPU a
/// math op is done in f32 and each explicit f32 -> bf16 conversion becomes
/// integer ops rounding to nearest even (no fptrunc to bf16 reaches LLVM);
/// + - * / stay bfloat ops (the backend promotes each, rounding after it);
/// the atomics stay `atomicrmw` on bfloat, which LLVM expands into
/// compare-and-swap loops (on x86 and sm_80).
// ROUNDTRIP-LABEL: func.func @bf16(
// ROUNDTRIP: adjit.atomic_add %{{.*}}, %{{.*}}[%{{.*}}] [] : bf16, <bf16, 1>
// STD-LABEL: func.func @bf16(
// STD: memref.load %{{.*}} : memref<?xbf16
// STD: arith.mulf %{{.*}} : bf16
// STD: arith.truncf %{{.*}} : f32 to bf16
// STD: memref.atomic_rmw addf %{{.*}} : (bf16, memref<?xbf16
// STD: memref.atomic_rmw maximumf %{{.*}} : (bf16, memref<?xbf16
// STD-NOT: adjit.atomic
// LLVM-LABEL: llvm.func internal @bf16_body(
// LLVM: llvm.load %{{.*}} : !llvm.ptr -> bf16
// LLVM: llvm.fmul %{{.*}} : bf16
// LLVM-NOT: llvm.fptrunc {{.*}} to bf16
// LLVM: llvm.atomicrmw fadd %{{.*}} : !llvm.ptr, bf16
// LLVM: llvm.atomicrmw fmaximum %{{.*}} : !llvm.ptr, bf16
// PTX: atom.{{.*}}cas.b32
func.func @bf16(%x: !adjit.array<bf16, 1>, %s: bf16) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %v = adjit.load %x[%i] : !adjit.array<bf16, 1>
  %m = arith.mulf %v, %s : bf16
  %e = arith.extf %m : bf16 to f32
  %t = math.sin %e : f32
  %w = arith.truncf %t : f32 to bf16
  %a = adjit.atomic_add %w, %x[%i] [] : bf16, !adjit.array<bf16, 1>
  %b = adjit.atomic_max %w, %x[%i] [] : bf16, !adjit.array<bf16, 1>
  return
}
