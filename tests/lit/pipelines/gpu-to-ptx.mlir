// The last CUDA stage (gpu -> ptx) from gpu-stage IR as --adjit-lower-gpu
// writes it, and the re-parse of its output.
// RUN: adjit-opt %s '--adjit-gpu-to-ptx=chip=sm_80' | FileCheck %s
// RUN: adjit-opt %s '--adjit-gpu-to-ptx=chip=sm_80' | adjit-opt | FileCheck %s
// RUN: adjit-opt %s '--adjit-gpu-to-ptx=chip=sm_90 features=+ptx80 opt-level=2' | FileCheck %s --check-prefix=SM90

/// Each gpu.module becomes a gpu.binary carrying PTX for the chip, with an
/// .entry per kernel; host functions are untouched.
// CHECK: module attributes {gpu.container_module}
// CHECK-NOT: gpu.module
// CHECK-LABEL: func.func private @sq(
// CHECK-NOT: gpu.module
// CHECK: gpu.binary @saxpy_module [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">, {{.*}}assembly = "{{.*}}.target sm_80{{.*}}.entry saxpy(
// CHECK-NOT: gpu.module
// CHECK: gpu.binary @vec_module [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">, {{.*}}assembly = "{{.*}}.entry vec({{.*}}atom.global.add.f32
// CHECK-NOT: gpu.module

// SM90: gpu.binary @saxpy_module [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">, properties = {{.*}}O = 2 : i32{{.*}}assembly = "{{.*}}.target sm_90{{.*}}.entry saxpy(

module attributes {gpu.container_module} {
  func.func private @sq(%x: f32) -> f32 {
    %r = arith.mulf %x, %x : f32
    return %r : f32
  }
  gpu.module @saxpy_module {
    func.func private @saxpy_body(%a: f32, %x: memref<?xf32>, %y: memref<?xf32>, %lin: index, %e1: index, %e2: index, %e3: index) attributes {llvm.linkage = #llvm.linkage<internal>} {
      %xi = memref.load %x[%lin] : memref<?xf32>
      %yi = memref.load %y[%lin] : memref<?xf32>
      %ax = arith.mulf %a, %xi : f32
      %r = arith.addf %ax, %yi : f32
      memref.store %r, %y[%lin] : memref<?xf32>
      return
    }
    gpu.func @saxpy(%a: f32, %x: memref<?xf32>, %y: memref<?xf32>, %total: i64, %s1: i64, %s2: i64, %s3: i64) kernel {
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %tid = gpu.thread_id x
      %base = arith.muli %bid, %bdim : index
      %lin = arith.addi %base, %tid : index
      %n = arith.index_cast %total : i64 to index
      %in = arith.cmpi ult, %lin, %n : index
      scf.if %in {
        %e1 = arith.index_cast %s1 : i64 to index
        %e2 = arith.index_cast %s2 : i64 to index
        %e3 = arith.index_cast %s3 : i64 to index
        func.call @saxpy_body(%a, %x, %y, %lin, %e1, %e2, %e3) : (f32, memref<?xf32>, memref<?xf32>, index, index, index, index) -> ()
      }
      gpu.return
    }
  }
  gpu.module @vec_module {
    func.func private @vec_body(%m: vector<2x2xf32>, %p: memref<?x?x2xf32>, %lin: index, %e1: index, %e2: index, %e3: index) attributes {llvm.linkage = #llvm.linkage<internal>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %j = arith.remui %lin, %e1 : index
      %i = arith.divui %lin, %e1 : index
      %v0 = memref.load %p[%i, %j, %c0] : memref<?x?x2xf32>
      %v1 = memref.load %p[%i, %j, %c1] : memref<?x?x2xf32>
      %v = vector.from_elements %v0, %v1 : vector<2xf32>
      %row = vector.extract %m[1] : vector<2xf32> from vector<2x2xf32>
      %w = arith.addf %v, %row : vector<2xf32>
      %w0 = vector.extract %w[0] : f32 from vector<2xf32>
      %s = func.call @sq(%w0) : (f32) -> f32
      %o0 = memref.atomic_rmw addf %s, %p[%i, %j, %c0] : (f32, memref<?x?x2xf32>) -> f32
      %w1 = vector.extract %w[1] : f32 from vector<2xf32>
      %o1 = memref.atomic_rmw addf %w1, %p[%i, %j, %c1] : (f32, memref<?x?x2xf32>) -> f32
      return
    }
    func.func private @sq(%x: f32) -> f32 {
      %r = arith.mulf %x, %x : f32
      return %r : f32
    }
    gpu.func @vec(%m: vector<2x2xf32>, %p: memref<?x?x2xf32>, %total: i64, %s1: i64, %s2: i64, %s3: i64) kernel {
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %tid = gpu.thread_id x
      %base = arith.muli %bid, %bdim : index
      %lin = arith.addi %base, %tid : index
      %n = arith.index_cast %total : i64 to index
      %in = arith.cmpi ult, %lin, %n : index
      scf.if %in {
        %e1 = arith.index_cast %s1 : i64 to index
        %e2 = arith.index_cast %s2 : i64 to index
        %e3 = arith.index_cast %s3 : i64 to index
        func.call @vec_body(%m, %p, %lin, %e1, %e2, %e3) : (vector<2x2xf32>, memref<?x?x2xf32>, index, index, index, index) -> ()
      }
      gpu.return
    }
  }
}
