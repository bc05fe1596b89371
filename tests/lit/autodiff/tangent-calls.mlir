// RUN: adjit-opt %s --adjit-tangent=keep-primal=false | FileCheck %s
// RUN: adjit-opt %s --adjit-tangent="keep-primal=false lanes=2" | FileCheck %s --check-prefix=LANES

// adjit-tangent on a call to a device function with a hand-written tangent
// rule (func_jvp: adjit.custom_tangent = @f_jvp): the primal call stays and
// the rule is called with the call's arguments and the tangents of its float
// arguments (a zero for one without); it returns the float results' tangents.

func.func private @f(%v: f32, %k: f32, %n: i32) -> f32
    attributes {adjit.custom_tangent = @f_jvp, no_inline} {
  %r = arith.mulf %v, %k : f32
  return %r : f32
}
func.func private @f_jvp(%v: f32, %k: f32, %n: i32, %dv: f32, %dk: f32) -> f32 {
  %a = arith.mulf %dv, %k : f32
  %b = arith.mulf %v, %dk : f32
  %t = arith.addf %a, %b : f32
  return %t : f32
}

// CHECK-LABEL: func.func @custom_tangent(
// CHECK-SAME: %[[X:[^:]*]]: !adjit.array<f32, 1>, %[[N:[^:]*]]: i32, %[[Y:[^:]*]]: !adjit.array<f32, 1>, %[[TX:[^:]*]]: !adjit.array<f32, 1>, %[[TY:[^:]*]]: !adjit.array<f32, 1>)
// CHECK: %[[A:.*]] = adjit.load %[[X]]
// CHECK-NEXT: %[[TA:.*]] = adjit.load %[[TX]]
// CHECK-NEXT: %[[R:.*]] = adjit.call @f(%[[A]], %[[C:.*]], %[[N]])
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[TR:.*]] = adjit.call @f_jvp(%[[A]], %[[C]], %[[N]], %[[TA]], %[[ZERO]])
// CHECK-NEXT: adjit.store %[[R]], %[[Y]]
// CHECK-NEXT: adjit.store %[[TR]], %[[TY]]

// One primal call, one rule call per lane.
// LANES-LABEL: func.func @custom_tangent(
// LANES-COUNT-1: adjit.call @f(
// LANES-COUNT-2: adjit.call @f_jvp(
// LANES-NOT: adjit.call
func.func @custom(%x: !adjit.array<f32, 1>, %n: i32, %y: !adjit.array<f32, 1>)
    attributes {adjit.kernel, adjit.arg_names = ["x", "n", "y"]} {
  %i = adjit.tid : index
  %c = arith.constant 2.5 : f32
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %r = adjit.call @f(%a, %c, %n) : (f32, f32, i32) -> f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}
