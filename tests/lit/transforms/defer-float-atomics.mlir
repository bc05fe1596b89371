// RUN: adjit-opt %s --adjit-defer-float-atomics | FileCheck %s

/// Float atomic adds whose old value is unused become calls of the runtime,
/// declared once per type, with the error record: a kernel body's last
/// argument, else null; the rest stay atomics. In a kernel body, a launch on
/// one thread (record word 18 == 1) adds inline instead.
// CHECK-LABEL: llvm.func @adds(
// CHECK: %[[NONE:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: llvm.call @adjit_rt_atomic_add_f32(%[[NONE]], %arg0, %arg2) : (!llvm.ptr, !llvm.ptr, f32) -> ()
// CHECK: llvm.call @adjit_rt_atomic_add_f32({{.*}}, %arg0, %arg2) : (!llvm.ptr, !llvm.ptr, f32) -> ()
// CHECK: llvm.call @adjit_rt_atomic_add_f64({{.*}}, %arg1, %arg3) : (!llvm.ptr, !llvm.ptr, f64) -> ()
/// An old value that is used, a half float and an integer add stay atomic.
// CHECK-NEXT: %[[OLD:.*]] = llvm.atomicrmw fadd %arg0, %arg2 acq_rel : !llvm.ptr, f32
// CHECK-NEXT: llvm.atomicrmw fadd %arg0, %arg4 acq_rel : !llvm.ptr, f16
// CHECK-NEXT: llvm.atomicrmw add %arg0, %arg5 acq_rel : !llvm.ptr, i32
// CHECK-NEXT: llvm.return %[[OLD]]
// CHECK-LABEL: llvm.func @body(
// CHECK: %[[SLOT:.*]] = llvm.getelementptr %arg2[18] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[LOG:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[DIRECT:.*]] = llvm.icmp "eq" %[[LOG]], %[[ONE]] : i64
// CHECK-NEXT: llvm.cond_br %[[DIRECT]], ^[[ADD:.*]], ^[[CALL:.*]]
// CHECK: ^[[ADD]]:
// CHECK-NEXT: %[[OLD:.*]] = llvm.load %arg0 : !llvm.ptr -> f32
// CHECK-NEXT: %[[SUM:.*]] = llvm.fadd %[[OLD]], %arg1 : f32
// CHECK-NEXT: llvm.store %[[SUM]], %arg0 : f32, !llvm.ptr
// CHECK-NEXT: llvm.br ^[[DONE:.*]]
// CHECK: ^[[CALL]]:
// CHECK-NEXT: llvm.call @adjit_rt_atomic_add_f32(%arg2, %arg0, %arg1) : (!llvm.ptr, !llvm.ptr, f32) -> ()
// CHECK-NEXT: llvm.br ^[[DONE]]
// CHECK: ^[[DONE]]:
// CHECK-NEXT: llvm.return
// CHECK-DAG: llvm.func @adjit_rt_atomic_add_f32(!llvm.ptr, !llvm.ptr, f32) attributes {memory_effects = #llvm.memory_effects<other = none, argMem = readwrite, inaccessibleMem = readwrite, errnoMem = none, targetMem0 = none, targetMem1 = none>, no_unwind, will_return}
// CHECK-DAG: llvm.func @adjit_rt_atomic_add_f64(!llvm.ptr, !llvm.ptr, f64)
// CHECK-NOT: llvm.func @adjit_rt_atomic_add
llvm.func @adds(%p: !llvm.ptr, %q: !llvm.ptr, %a: f32, %b: f64, %h: f16, %n: i32) -> f32 {
  %0 = llvm.atomicrmw fadd %p, %a acq_rel : !llvm.ptr, f32
  %1 = llvm.atomicrmw fadd %p, %a acq_rel : !llvm.ptr, f32
  %2 = llvm.atomicrmw fadd %q, %b acq_rel : !llvm.ptr, f64
  %3 = llvm.atomicrmw fadd %p, %a acq_rel : !llvm.ptr, f32
  %4 = llvm.atomicrmw fadd %p, %h acq_rel : !llvm.ptr, f16
  %5 = llvm.atomicrmw add %p, %n acq_rel : !llvm.ptr, i32
  llvm.return %3 : f32
}

llvm.func @body(%p: !llvm.ptr, %a: f32, %record: !llvm.ptr) attributes {adjit.kernel_body} {
  %0 = llvm.atomicrmw fadd %p, %a acq_rel : !llvm.ptr, f32
  llvm.return
}
