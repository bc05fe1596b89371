// RUN: adjit-opt %s --adjit-expand-grad-calls -split-input-file -verify-diagnostics | FileCheck %s

// adjit-expand-grad-calls: `wp.grad(f)(x, v)` is f's body differentiated in
// forward mode, one tangent lane per argument component seeded with a unit
// tangent. f(x, v) = sin(x) * sum(v) * (x > 0 ? x : 1): lane 0 is d/dx,
// lanes 1..3 are d/dv_k, gathered into a vector gradient.

func.func private @f(%x: f32, %v: vector<3xf32>) -> f32 {
  %d = vector.reduction <add>, %v : vector<3xf32> into f32
  %s = math.sin %x : f32
  %m = arith.mulf %s, %d : f32
  %c0 = arith.constant 0.0 : f32
  %p = arith.cmpf ogt, %x, %c0 : f32
  %r = scf.if %p -> (f32) {
    %q = arith.mulf %m, %x : f32
    scf.yield %q : f32
  } else {
    scf.yield %m : f32
  }
  return %r : f32
}

// CHECK-LABEL: func.func @g(
// CHECK-SAME: %[[X:[^:]*]]: f32, %[[V:[^:]*]]: vector<3xf32>)
// CHECK-NOT: adjit.grad_call
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[E0:.*]] = arith.constant dense<[1.000000e+00, 0.000000e+00, 0.000000e+00]> : vector<3xf32>
// CHECK-DAG: %[[E1:.*]] = arith.constant dense<[0.000000e+00, 1.000000e+00, 0.000000e+00]> : vector<3xf32>
// CHECK-DAG: %[[E2:.*]] = arith.constant dense<[0.000000e+00, 0.000000e+00, 1.000000e+00]> : vector<3xf32>
// CHECK: %[[D:.*]] = vector.reduction <add>, %[[V]]
// CHECK-NEXT: %[[D0:.*]] = vector.reduction <add>, %[[E0]]
// CHECK-NEXT: %[[D1:.*]] = vector.reduction <add>, %[[E1]]
// CHECK-NEXT: %[[D2:.*]] = vector.reduction <add>, %[[E2]]
// CHECK-NEXT: %[[S:.*]] = math.sin %[[X]]
// CHECK-NEXT: %[[C:.*]] = math.cos %[[X]]
// CHECK-NEXT: %[[TS:.*]] = arith.mulf %[[ONE]], %[[C]]
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[S]], %[[D]]
// CHECK-NEXT: %[[TMX:.*]] = arith.mulf %[[TS]], %[[D]]
// CHECK-NEXT: %[[TM0:.*]] = arith.mulf %[[D0]], %[[S]]
// CHECK-NEXT: %[[TM1:.*]] = arith.mulf %[[D1]], %[[S]]
// CHECK-NEXT: %[[TM2:.*]] = arith.mulf %[[D2]], %[[S]]
// CHECK: %[[R:.*]]:5 = scf.if %{{.*}} -> (f32, f32, f32, f32, f32) {
// CHECK: %[[Q:.*]] = arith.mulf %[[M]], %[[X]]
// CHECK-NEXT: %[[A:.*]] = arith.mulf %[[TMX]], %[[X]]
// CHECK-NEXT: %[[B:.*]] = arith.mulf %[[ONE]], %[[M]]
// CHECK-NEXT: %[[TQX:.*]] = arith.addf %[[A]], %[[B]]
// CHECK-NEXT: %[[TQ0:.*]] = arith.mulf %[[TM0]], %[[X]]
// CHECK-NEXT: %[[TQ1:.*]] = arith.mulf %[[TM1]], %[[X]]
// CHECK-NEXT: %[[TQ2:.*]] = arith.mulf %[[TM2]], %[[X]]
// CHECK-NEXT: scf.yield %[[Q]], %[[TQX]], %[[TQ0]], %[[TQ1]], %[[TQ2]]
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[M]], %[[TMX]], %[[TM0]], %[[TM1]], %[[TM2]]
// CHECK: %[[GV:.*]] = vector.from_elements %[[R]]#2, %[[R]]#3, %[[R]]#4 : vector<3xf32>
// CHECK-NEXT: return %[[R]]#1, %[[GV]] : f32, vector<3xf32>
func.func @g(%x: f32, %v: vector<3xf32>) -> (f32, vector<3xf32>) {
  %a, %b = adjit.grad_call @f(%x, %v) : (f32, vector<3xf32>) -> (f32, vector<3xf32>)
  return %a, %b : f32, vector<3xf32>
}

// -----

// A result that does not depend on an argument has a zero gradient for it.
func.func private @h(%x: f32, %y: f32) -> f32 {
  %r = arith.mulf %x, %x : f32
  return %r : f32
}

// CHECK-LABEL: func.func @zero_lane(
// CHECK-NOT: adjit.grad_call
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: return %{{.*}}, %[[ZERO]] : f32, f32
func.func @zero_lane(%x: f32, %y: f32) -> (f32, f32) {
  %a, %b = adjit.grad_call @h(%x, %y) : (f32, f32) -> (f32, f32)
  return %a, %b : f32, f32
}

// -----

// A 3x3 matrix argument: nine lanes, gathered into a matrix gradient.
func.func private @trace(%m: vector<3x3xf32>) -> f32 {
  %r = vector.shape_cast %m : vector<3x3xf32> to vector<9xf32>
  %s = vector.reduction <add>, %r : vector<9xf32> into f32
  return %s : f32
}

// CHECK-LABEL: func.func @matrix(
// CHECK: %[[G:.*]] = vector.from_elements {{.*}} : vector<3x3xf32>
// CHECK-NEXT: return %[[G]]
func.func @matrix(%m: vector<3x3xf32>) -> vector<3x3xf32> {
  %g = adjit.grad_call @trace(%m) : (vector<3x3xf32>) -> vector<3x3xf32>
  return %g : vector<3x3xf32>
}

// -----

// Diagnostics: the op's types are checked before the pass runs.
func.func private @two(%x: f32) -> (f32, f32) {
  return %x, %x : f32, f32
}

func.func @bad_callee(%x: f32) -> f32 {
  // expected-error @below {{callee must return one float scalar}}
  %g = adjit.grad_call @two(%x) : (f32) -> f32
  return %g : f32
}

// -----

func.func private @k(%i: i32) -> f32 {
  %r = arith.sitofp %i : i32 to f32
  return %r : f32
}

func.func @int_argument(%i: i32) -> i32 {
  // expected-error @below {{differentiates float arguments only}}
  %g = adjit.grad_call @k(%i) : (i32) -> i32
  return %g : i32
}
