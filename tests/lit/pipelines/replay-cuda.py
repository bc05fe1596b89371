# The CUDA stages the Python frontend dumps (ADJIT_DUMP_DIR) replay with
# adjit-opt and the command written in each dump's header. No GPU is needed:
# the last stage only generates PTX.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: env ADJIT_DUMP_DIR=%t ADJIT_CACHE=0 %python %s | FileCheck %s --check-prefix=COMPILED
#
# RUN: FileCheck %s --check-prefix=HEAD1 --input-file=%t/saxpy.1-optimized.mlir
# RUN: FileCheck %s --check-prefix=HEAD2 --input-file=%t/saxpy.2-checked.mlir
# RUN: FileCheck %s --check-prefix=HEAD3 --input-file=%t/saxpy.3-gpu.mlir
# RUN: FileCheck %s --check-prefix=HEAD4 --input-file=%t/saxpy.4-ptx.mlir
# RUN: FileCheck %s --check-prefix=LOC --input-file=%t/saxpy.3-gpu.mlir
#
# adjit -> optimized replays exactly.
# RUN: adjit-opt %t/saxpy.0-adjit.mlir --adjit-optimize --mlir-print-debuginfo > %t/replay1.mlir
# RUN: adjit-opt %t/saxpy.1-optimized.mlir --mlir-print-debuginfo > %t/dump1.mlir
# RUN: diff %t/replay1.mlir %t/dump1.mlir
# optimized -> checked -> gpu replay too (compared without locations).
# RUN: adjit-opt %t/saxpy.1-optimized.mlir --adjit-check > %t/replay2.mlir
# RUN: adjit-opt %t/saxpy.2-checked.mlir > %t/dump2.mlir
# RUN: diff %t/replay2.mlir %t/dump2.mlir
# RUN: adjit-opt %t/saxpy.2-checked.mlir --adjit-lower-gpu > %t/replay3.mlir
# RUN: adjit-opt %t/saxpy.3-gpu.mlir > %t/dump3.mlir
# RUN: diff %t/replay3.mlir %t/dump3.mlir
# The launch condition is evaluated by each GPU thread (no versions).
# RUN: FileCheck %s --check-prefix=GPU --input-file=%t/dump3.mlir
# gpu -> ptx replays with the header's command and yields the kernel's PTX.
# RUN: adjit-opt --pass-pipeline='builtin.module(adjit-gpu-to-ptx{chip=sm_80})' %t/saxpy.3-gpu.mlir | FileCheck %s --check-prefix=PTX
# RUN: adjit-opt %t/saxpy.3-gpu.mlir '--adjit-gpu-to-ptx=chip=sm_80' | FileCheck %s --check-prefix=PTX

# COMPILED: .target sm_80
# COMPILED: .entry saxpy(

# HEAD1: // adjit stage 'optimized' of kernel 'saxpy'
# HEAD1-NEXT: // next stage: adjit-opt --pass-pipeline='builtin.module(adjit-check)' <this file>
# HEAD2: // adjit stage 'checked' of kernel 'saxpy'
# HEAD2-NEXT: // next stage: adjit-opt --pass-pipeline='builtin.module(adjit-lower-gpu)' <this file>
# HEAD3: // adjit stage 'gpu' of kernel 'saxpy'
# HEAD3-NEXT: // next stage: adjit-opt --pass-pipeline='builtin.module(adjit-gpu-to-ptx{chip=sm_80})' <this file>
# HEAD3: gpu.module @saxpy_module
# HEAD4: // adjit stage 'ptx' of kernel 'saxpy'
# HEAD4-NOT: next stage
# HEAD4: gpu.binary @saxpy_module

# GPU-NOT: _checked
# GPU-NOT: launch_condition
# GPU: func.func private @saxpy_body(
# GPU: llvm.cmpxchg
# GPU: gpu.func @saxpy(
# GPU-SAME: !llvm.ptr) kernel

# PTX: module attributes {gpu.container_module}
# PTX-NOT: gpu.module
# PTX: gpu.binary @saxpy_module [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">, {{.*}}assembly = "{{.*}}.target sm_80{{.*}}.entry saxpy(
# PTX-NOT: gpu.module

import adjit


# LOC: loc("{{[^"]*}}replay-cuda.py":[[# @LINE + 2]]:1)
@adjit.kernel
def saxpy(a: float, x: adjit.array(dtype=float), y: adjit.array(dtype=float)):
    i = adjit.tid()
    y[i] = a * x[i] + y[i]


print(adjit.compile(saxpy, target="cuda", arch="sm_80"))
