// RUN: adjit-opt %s --adjit-approximate-math | FileCheck %s
// RUN: adjit-opt %s "--adjit-approximate-math=functions=tanh" | FileCheck %s --check-prefix=TANH

// adjit-approximate-math: f32 exp, log, log2, tanh and erf (scalars and
// vectors) become polynomial code (MLIR's approximations); sin, cos and tan
// adjit's own reduction and polynomials in f64, with libm's result for
// |x| > 2^20 behind a branch; atan, atan2, asin and acos f64 arithmetic
// rounded once, with no branch; f64 math stays calls for libm.

// CHECK-LABEL: func.func @scalars(
// CHECK-NOT: math.exp
// CHECK-NOT: math.log
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK: %[[WIDE:.*]] = arith.extf %[[X:.*]] : f32 to f64
// CHECK: math.roundeven
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: %[[HUGE:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK-NEXT: %[[LIBM:.*]] = math.sin %[[X]] {adjit.libm} : f32
// CHECK-NEXT: %[[PICK:.*]] = arith.select %{{.*}}, %[[LIBM]], %{{.*}} : f32
// CHECK-NEXT: scf.yield %[[PICK]] : f32
// CHECK-NEXT: } else {
// CHECK-NOT: math.atan
// CHECK: math.copysign %{{.*}}, %{{.*}} : f64
// CHECK-NOT: math.atan
// CHECK: return
// TANH-LABEL: func.func @scalars(
// TANH: math.exp
// TANH: math.log
// TANH-NOT: math.tanh
// TANH: math.sin %{{.*}} : f32
// TANH: math.atan %{{.*}} : f32
// TANH: return
func.func @scalars(%x: f32) -> (f32, f32, f32, f32, f32, f32, f32) {
  %e = math.exp %x : f32
  %l = math.log %x : f32
  %l2 = math.log2 %x : f32
  %t = math.tanh %x : f32
  %r = math.erf %x : f32
  %s = math.sin %x : f32
  %a = math.atan %x : f32
  return %e, %l, %l2, %t, %r, %s, %a : f32, f32, f32, f32, f32, f32, f32
}

// tan takes sin and cos's reduction (libm's tan behind the branch); the
// inverse functions are f64 code without a branch; f64 math stays libm's.
// CHECK-LABEL: func.func @trigonometry(
// CHECK-SAME: %[[X:.*]]: f32, %[[Y:.*]]: f32, %[[D:.*]]: f64)
// CHECK: arith.divf %{{.*}}, %{{.*}} : f64
// CHECK: math.tan %[[X]] {adjit.libm} : f32
// CHECK-NOT: math.atan2
// CHECK-NOT: math.asin
// CHECK-NOT: math.acos
// CHECK-NOT: scf.if
// CHECK: math.sqrt %{{.*}} : f64
// CHECK-NOT: math.asin
// CHECK-NOT: math.acos
// CHECK-NOT: scf.if
// CHECK: math.atan %[[D]] : f64
// CHECK: return
func.func @trigonometry(%x: f32, %y: f32, %d: f64) -> (f32, f32, f32, f32, f64) {
  %t = math.tan %x : f32
  %a = math.atan2 %y, %x : f32
  %s = math.asin %x : f32
  %c = math.acos %x : f32
  %w = math.atan %d : f64
  return %t, %a, %s, %c, %w : f32, f32, f32, f32, f64
}

// Vectors (SIMD bodies) alike; the branch to libm's cos is taken when any
// lane is out of range (an or-reduction of the lanes' flags).
// CHECK-LABEL: func.func @lanes(
// CHECK-NOT: math.exp %
// CHECK: vector.reduction <or>, %{{.*}} : vector<8xi1> into i1
// CHECK: math.cos %{{.*}} {adjit.libm} : vector<8xf32>
// CHECK: return
func.func @lanes(%x: vector<8xf32>) -> (vector<8xf32>, vector<8xf32>) {
  %e = math.exp %x : vector<8xf32>
  %c = math.cos %x : vector<8xf32>
  return %e, %c : vector<8xf32>, vector<8xf32>
}

// Subnormal inputs of log are scaled by 2^24 first (the approximation reads
// the exponent from the bits), and 24 ln 2 taken from the result.
// CHECK-LABEL: func.func @log_subnormals(
// CHECK-SAME: %[[X:.*]]: f32)
// CHECK: %[[MIN:.*]] = arith.constant 1.17549435E-38 : f32
// CHECK: %[[ABS:.*]] = math.absf %[[X]]
// CHECK: %[[SUB:.*]] = arith.cmpf olt, %[[ABS]], %[[MIN]]
// CHECK: %[[SCALE:.*]] = arith.constant 0x4B800000 : f32
// CHECK: %[[SCALED:.*]] = arith.mulf %[[X]], %[[SCALE]]
// CHECK: arith.select %[[SUB]], %[[SCALED]], %[[X]]
// CHECK: %[[SHIFT:.*]] = arith.constant 16.63553{{[0-9]*}} : f32
// CHECK: arith.select %[[SUB]], %[[SHIFT]],
// CHECK: arith.subf
func.func @log_subnormals(%x: f32) -> f32 {
  %l = math.log %x : f32
  return %l : f32
}

// exp(x) = exp(x / 2)^2 below -87 (subnormal results, which the
// approximation would flush to zero); erf takes the sign of x.
// CHECK-LABEL: func.func @exp_and_erf_edges(
// CHECK-SAME: %[[X:.*]]: f32)
// CHECK: %[[LIMIT:.*]] = arith.constant -8.700000e+01 : f32
// CHECK: %[[TINY:.*]] = arith.cmpf olt, %[[X]], %[[LIMIT]]
// CHECK: %[[HALF:.*]] = arith.mulf %[[X]], %{{.*}} : f32
// CHECK: arith.select %[[TINY]], %[[HALF]], %[[X]]
// CHECK: arith.select %[[TINY]], %{{.*}}, %{{.*}} : f32
// CHECK: math.copysign %{{.*}}, %[[X]] : f32
func.func @exp_and_erf_edges(%x: f32) -> (f32, f32) {
  %e = math.exp %x : f32
  %r = math.erf %x : f32
  return %e, %r : f32, f32
}

// f64 stays libm's.
// CHECK-LABEL: func.func @doubles(
// CHECK: math.exp %{{.*}} : f64
// CHECK: math.log %{{.*}} : f64
func.func @doubles(%x: f64) -> (f64, f64) {
  %e = math.exp %x : f64
  %l = math.log %x : f64
  return %e, %l : f64, f64
}

// An op marked adjit.libm (erfinv's Newton step needs erf correctly
// rounded) stays a call; its unmarked neighbour does not.
// CHECK-LABEL: func.func @marked(
// CHECK: math.erf %{{.*}} {adjit.libm} : f32
// CHECK-NOT: math.erf
// CHECK: return
func.func @marked(%x: f32) -> (f32, f32) {
  %a = math.erf %x {adjit.libm} : f32
  %b = math.erf %x : f32
  return %a, %b : f32, f32
}

// A function used more than 4 times (per type) is computed in one private
// function the uses call, compiled once (not inlined, kept wide like a SIMD
// body); 4 uses or fewer stay inline.
// CHECK-LABEL: func.func @many(
// CHECK-COUNT-5: call @adjit_exp_v8f32(%{{.*}}) : (vector<8xf32>) -> vector<8xf32>
// CHECK-NOT: call @adjit_tanh
// CHECK: return
// CHECK: func.func private @adjit_exp_v8f32(%{{.*}}: vector<8xf32>) -> vector<8xf32> attributes {adjit.simd_body}
// CHECK-NOT: math.exp
// CHECK: return
func.func @many(%x: vector<8xf32>) -> vector<8xf32> {
  %a = math.exp %x : vector<8xf32>
  %b = math.exp %a : vector<8xf32>
  %c = math.exp %b : vector<8xf32>
  %d = math.exp %c : vector<8xf32>
  %e = math.exp %d : vector<8xf32>
  %t = math.tanh %e : vector<8xf32>
  return %t : vector<8xf32>
}
