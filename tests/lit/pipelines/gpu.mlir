// The CUDA stages end to end, all at once and one stage at a time, each
// stage's output parsed again by the next adjit-opt.
// RUN: adjit-opt %s --adjit-optimize --adjit-lower-gpu '--adjit-gpu-to-ptx=chip=sm_80' | FileCheck %s --check-prefix=PTX
// RUN: adjit-opt %s --adjit-optimize | adjit-opt --adjit-lower-gpu | adjit-opt | FileCheck %s --check-prefix=GPU
// RUN: adjit-opt %s --adjit-optimize | adjit-opt --adjit-lower-gpu | FileCheck %s --check-prefix=NOADJIT
// RUN: adjit-opt %s --adjit-optimize | adjit-opt --adjit-lower-gpu | adjit-opt '--adjit-gpu-to-ptx=chip=sm_80' | adjit-opt | FileCheck %s --check-prefix=PTX
// The chip option reaches the target and the PTX.
// RUN: adjit-opt %s --adjit-optimize --adjit-lower-gpu '--adjit-gpu-to-ptx=chip=sm_90' | FileCheck %s --check-prefix=SM90


/// Stage "gpu": one gpu.module per kernel holding body, callees and kernel.
// NOADJIT-NOT: adjit.
// GPU: module attributes {gpu.container_module}
// GPU-LABEL: gpu.module @saxpy_module {
// GPU: func.func private @saxpy_body(
// GPU: gpu.func @saxpy(
// GPU-SAME: kernel
// GPU-LABEL: gpu.module @vec_module {
// GPU-DAG: func.func private @vec_body(
// GPU-DAG: gpu.func @vec(

/// Stage "ptx": each gpu.module is a gpu.binary whose PTX has an .entry for
/// its kernel.
// PTX-NOT: gpu.module
// PTX-DAG: gpu.binary @saxpy_module {{.*}}#nvvm.target<{{.*}}chip = "sm_80"{{.*}}assembly = "{{.*}}.target sm_80{{.*}}.entry saxpy(
// PTX-DAG: gpu.binary @vec_module {{.*}}#nvvm.target<{{.*}}chip = "sm_80"{{.*}}assembly = "{{.*}}.target sm_80{{.*}}.entry vec(
// PTX-NOT: gpu.module

// SM90: gpu.binary @saxpy_module {{.*}}chip = "sm_90"{{.*}}.target sm_90{{.*}}.entry saxpy(

func.func @saxpy(%a: f32, %x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %xi = adjit.load %x[%i] : !adjit.array<f32, 1>
  %yi = adjit.load %y[%i] : !adjit.array<f32, 1>
  %ax = arith.mulf %a, %xi : f32
  %r = arith.addf %ax, %yi : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

func.func @vec(%m: vector<3x3xf32>, %p: !adjit.array<vector<3xf32>, 2>, %q: !adjit.array<vector<3x3xf32>, 1>) attributes {adjit.kernel} {
  %i, %j = adjit.tid : index, index
  %v = adjit.load %p[%i, %j] : !adjit.array<vector<3xf32>, 2>
  %x = adjit.extract %v [0] : vector<3xf32> -> f32
  %w = adjit.insert %x, %v [2] : f32 into vector<3xf32>
  %c = adjit.call @sq(%x) : (f32) -> f32
  adjit.store_component %c, %p[%i, %j] [1] : f32, !adjit.array<vector<3xf32>, 2>
  %old = adjit.atomic_add %w, %p[%i, %j] [] : vector<3xf32>, !adjit.array<vector<3xf32>, 2>
  %mm = adjit.load %q[%j] : !adjit.array<vector<3x3xf32>, 1>
  %s = arith.addf %mm, %m : vector<3x3xf32>
  adjit.store %s, %q[%i] : !adjit.array<vector<3x3xf32>, 1>
  return
}

func.func private @sq(%x: f32) -> f32 {
  %r = arith.mulf %x, %x : f32
  return %r : f32
}
