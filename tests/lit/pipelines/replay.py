# Every stage the Python frontend dumps (ADJIT_DUMP_DIR) replays with
# adjit-opt and the next stage's registered pipeline, reproducing the next dump.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: env ADJIT_DUMP_DIR=%t ADJIT_CACHE=0 %python %s | FileCheck %s --check-prefix=COMPILED
#
# One dump per CPU stage, in order, each naming the pipeline that continues it.
# RUN: FileCheck %s --check-prefix=HEAD0 --input-file=%t/saxpy.0-adjit.mlir
# RUN: FileCheck %s --check-prefix=HEAD1 --input-file=%t/saxpy.1-optimized.mlir
# RUN: FileCheck %s --check-prefix=HEAD2 --input-file=%t/saxpy.2-checked.mlir
# RUN: FileCheck %s --check-prefix=HEAD3 --input-file=%t/saxpy.3-cpu.mlir
# RUN: FileCheck %s --check-prefix=HEAD4 --input-file=%t/saxpy.4-llvm.mlir
#
# The dumps carry file locations pointing at this script (the tid call's own
# location is gone once tid is lowered).
# RUN: FileCheck %s --check-prefixes=LOC,TIDLOC --input-file=%t/saxpy.0-adjit.mlir
# RUN: FileCheck %s --check-prefix=LOC --input-file=%t/saxpy.4-llvm.mlir
#
# Replaying each stage gives the next dumped stage, locations included.
# RUN: adjit-opt %t/saxpy.0-adjit.mlir --adjit-optimize --mlir-print-debuginfo > %t/replay1.mlir
# RUN: adjit-opt %t/saxpy.1-optimized.mlir --mlir-print-debuginfo > %t/dump1.mlir
# RUN: diff %t/replay1.mlir %t/dump1.mlir
# RUN: adjit-opt %t/saxpy.1-optimized.mlir --adjit-check --mlir-print-debuginfo > %t/replay2.mlir
# RUN: adjit-opt %t/saxpy.2-checked.mlir --mlir-print-debuginfo > %t/dump2.mlir
# RUN: diff %t/replay2.mlir %t/dump2.mlir
# RUN: adjit-opt %t/saxpy.2-checked.mlir --adjit-lower-cpu --mlir-print-debuginfo > %t/replay3.mlir
# RUN: adjit-opt %t/saxpy.3-cpu.mlir --mlir-print-debuginfo > %t/dump3.mlir
# RUN: diff %t/replay3.mlir %t/dump3.mlir
# (scf.for does not print its induction variable's location, so the last
# step is compared without locations.)
# RUN: adjit-opt %t/saxpy.3-cpu.mlir --adjit-cpu-to-llvm > %t/replay4.mlir
# RUN: adjit-opt %t/saxpy.4-llvm.mlir > %t/dump4.mlir
# RUN: diff %t/replay4.mlir %t/dump4.mlir
#
# And each replay is what the stage should be.
# RUN: adjit-opt %t/saxpy.0-adjit.mlir --adjit-optimize | FileCheck %s --check-prefix=OPT
# RUN: adjit-opt %t/saxpy.1-optimized.mlir --adjit-check | FileCheck %s --check-prefix=CHECKED
# RUN: adjit-opt %t/saxpy.2-checked.mlir --adjit-lower-cpu | FileCheck %s --check-prefix=CPU
# RUN: adjit-opt %t/saxpy.3-cpu.mlir --adjit-cpu-to-llvm | FileCheck %s --check-prefix=LLVM
# RUN: adjit-opt %t/saxpy.2-checked.mlir --adjit-lower-cpu | FileCheck %s --check-prefix=NOADJIT
# RUN: adjit-opt %t/saxpy.3-cpu.mlir --adjit-cpu-to-llvm | FileCheck %s --check-prefix=NOADJIT
# The command in each dump's header works as written.
# RUN: adjit-opt --pass-pipeline='builtin.module(adjit-cpu-to-llvm)' %t/saxpy.3-cpu.mlir | FileCheck %s --check-prefix=LLVM

# COMPILED: llvm.func @saxpy_cpu_entry(

# HEAD0: // adjit stage 'adjit' of kernel 'saxpy'
# HEAD0-NEXT: // next stage: adjit-opt --pass-pipeline='builtin.module(adjit-optimize)' <this file>
# HEAD1: // adjit stage 'optimized' of kernel 'saxpy'
# HEAD1-NEXT: // next stage: adjit-opt --pass-pipeline='builtin.module(adjit-check)' <this file>
# HEAD2: // adjit stage 'checked' of kernel 'saxpy'
# HEAD2-NEXT: // next stage: adjit-opt --pass-pipeline='builtin.module(adjit-lower-cpu{noalias=false})' <this file>
# HEAD3: // adjit stage 'cpu' of kernel 'saxpy'
# HEAD3-NEXT: // next stage: adjit-opt --pass-pipeline='builtin.module(adjit-cpu-to-llvm{ordered-atomics=true fast-math=true})' <this file>
# HEAD4: // adjit stage 'llvm' of kernel 'saxpy'
# HEAD4-NOT: next stage

# OPT-LABEL: func.func @saxpy(
# OPT-SAME: attributes {adjit.arg_access = ["", "read, own element", "read-write, own element"], adjit.arg_names = ["a", "x", "y"], adjit.kernel}
# OPT: adjit.tid : index
# OPT-COUNT-2: adjit.load
# OPT: adjit.store

# Every access is indexed by the thread: proved by one launch condition (the
# read and the write of y[i] share their check).
# CHECKED-LABEL: func.func @saxpy(
# CHECKED-SAME: adjit.check_sites = [{access = "read", array = "x", {{.*}}}, {access = "read", array = "y", {{.*}}}, {access = "write", array = "y", {{.*}}}]
# CHECKED: %[[PROVEN:.*]] = adjit.launch_condition
# CHECKED: %[[XOK:.*]] = arith.ori %[[PROVEN]],
# CHECKED: scf.if %[[XOK]]
# CHECKED: %[[YOK:.*]] = arith.ori %[[PROVEN]],
# CHECKED: scf.if %[[YOK]]
# CHECKED: scf.if %[[YOK]]
# CHECKED-NEXT: adjit.store

# NOADJIT-NOT: {{!adjit\.|adjit\.[a-z_]+ [^=]}}

# The body is compiled for the launch condition true; the entry tests it.
# CPU: func.func private @saxpy_body(
# CPU: func.func private @saxpy_body_launch_condition(
# CPU: func.func @saxpy_cpu_entry(
# CPU: %[[PROVEN:[0-9a-z_]+]] = call @saxpy_body_launch_condition(
# CPU: scf.if %[[PROVEN]]
# CPU: scf.for
# CPU: func.call @saxpy_body(
# CPU: else
# CPU: llvm.store

# LLVM: llvm.func internal @saxpy_body(
# LLVM: llvm.func @saxpy_cpu_entry(%{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: !llvm.ptr)
# LLVM: llvm.call @saxpy_body(

import adjit


# LOC-DAG: loc("{{[^"]*}}replay.py":[[# @LINE + 2]]:1)
@adjit.kernel
def saxpy(a: float, x: adjit.array(dtype=float), y: adjit.array(dtype=float)):
    # TIDLOC-DAG: loc("{{[^"]*}}replay.py":[[# @LINE + 1]]:{{[0-9]+}})
    i = adjit.tid()
    # LOC-DAG: loc("{{[^"]*}}replay.py":[[# @LINE + 1]]:{{[0-9]+}})
    y[i] = a * x[i] + y[i]


print(adjit.compile(saxpy, target="cpu"))
