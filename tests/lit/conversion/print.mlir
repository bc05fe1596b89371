// RUN: adjit-opt %s | adjit-opt | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: adjit-opt %s --adjit-lower-cpu | FileCheck %s --check-prefix=CPU
// RUN: adjit-opt %s --adjit-lower-gpu | FileCheck %s --check-prefix=GPU
// RUN: adjit-opt %s --adjit-adjoint | FileCheck %s --check-prefix=ADJOINT

/// adjit.print: C's printf on the CPU (floats promoted to double, i1 to
/// i32, index to i64; the format an internal global), gpu.printf on the GPU.
/// A kernel that prints runs serially (its lines in thread order), and the
/// adjoint's replay of the forward does not print again.
// ROUNDTRIP: adjit.print "%d %g %d %lld\0A"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : i32, f32, i1, index)
// ROUNDTRIP: adjit.print "no values\0A"

// CPU: %[[FMT:.*]] = llvm.mlir.addressof @adjit_print_format_1 : !llvm.ptr
// CPU: %[[D:.*]] = llvm.fpext %{{.*}} : f32 to f64
// CPU: %[[B:.*]] = arith.extui %{{.*}} : i1 to i32
// CPU: %[[I:.*]] = arith.index_cast %{{.*}} : index to i64
// CPU: llvm.call @printf(%[[FMT]], %{{.*}}, %[[D]], %[[B]], %[[I]]) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i32, f64, i32, i64) -> i32
// CPU-NOT: adjit.print
// CPU: func.func @show_cpu_entry({{.*}} attributes {adjit.atomic_order = "serial"}
// CPU-DAG: llvm.func @printf(!llvm.ptr, ...) -> i32
// CPU-DAG: llvm.mlir.global internal constant @adjit_print_format_1("%d %g %d %lld\0A\00")
// CPU-DAG: llvm.mlir.global internal constant @adjit_print_format_2("no values\0A\00")

// GPU: gpu.printf "%d %g %d %lld\0A", %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : i32, f32, i1, i64
// GPU: gpu.printf "no values\0A"
// GPU-NOT: adjit.print

// ADJOINT-LABEL: func.func @show_adjoint(
// ADJOINT-NOT: adjit.print
// ADJOINT: return
func.func @show(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %v = adjit.load %x[%i] : !adjit.array<f32, 1>
  %n = arith.index_cast %i : index to i32
  %one = arith.constant 1.0 : f32
  %big = arith.cmpf ogt, %v, %one : f32
  adjit.print "%d %g %d %lld\n" (%n, %v, %big, %i : i32, f32, i1, index)
  adjit.print "no values\n"
  %w = arith.mulf %v, %v : f32
  adjit.store %w, %y[%i] : !adjit.array<f32, 1>
  return
}
