// RUN: adjit-opt %s --adjit-adjoint -split-input-file | FileCheck %s

/// Activity: a loop whose float values depend on the kernel's inputs only
/// through adjit.stop_gradient (a search) computes nothing that needs an
/// adjoint: the adjoint kernel replays it forward once and does not reverse
/// it (no second loop, no checkpoints). The value computed after it from
/// the input is differentiated as usual.
// CHECK-LABEL: func.func @search_adjoint(
// CHECK: scf.while
// CHECK-NOT: scf.while
// CHECK-NOT: memref.alloca
// CHECK: adjit.store %{{.*}}, %arg2[
func.func @search(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %p = adjit.stop_gradient %a : f32
  %one = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // halve p until it is below 1, counting the steps
  %r:2 = scf.while (%v = %p, %n = %c0) : (f32, i32) -> (f32, i32) {
    %big = arith.cmpf ogt, %v, %one : f32
    scf.condition(%big) %v, %n : f32, i32
  } do {
  ^bb0(%v: f32, %n: i32):
    %half = arith.constant 0.5 : f32
    %w = arith.mulf %v, %half : f32
    %m = arith.addi %n, %c1 : i32
    scf.yield %w, %m : f32, i32
  }
  %k = arith.sitofp %r#1 : i32 to f32
  %out = arith.mulf %a, %k : f32
  adjit.store %out, %y[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// The same loop on the input itself is reversed (a second loop reads the
/// checkpoints back).
// CHECK-LABEL: func.func @halving_adjoint(
// CHECK-COUNT-2: scf.while
func.func @halving(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %one = arith.constant 1.0 : f32
  %r = scf.while (%v = %a) : (f32) -> f32 {
    %big = arith.cmpf ogt, %v, %one : f32
    scf.condition(%big) %v : f32
  } do {
  ^bb0(%v: f32):
    %half = arith.constant 0.5 : f32
    %w = arith.mulf %v, %half : f32
    scf.yield %w : f32
  }
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}
