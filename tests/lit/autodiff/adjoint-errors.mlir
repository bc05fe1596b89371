// RUN: adjit-opt %s --adjit-adjoint -split-input-file -verify-diagnostics

// Diagnostics of adjit-adjoint: what it cannot differentiate exactly is
// rejected at the offending op, never differentiated wrongly.

/// A device function call left for the adjoint pass (not inlined, no custom
/// adjoint) is rejected.
func.func private @square(%x: f32) -> f32 {
  %r = arith.mulf %x, %x : f32
  return %r : f32
}
func.func @call_not_inlined(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  // expected-error @below {{'adjit.call' op device function calls must be inlined before adjit-adjoint (run the 'inline' pass first)}}
  %r = adjit.call @square(%a) : (f32) -> f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// A while loop over active values whose condition region writes memory
/// and forwards something other than its carried values cannot be put back
/// into the canonical form the reversal needs (that would repeat the write).
func.func @while_not_canonical(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %limit = arith.constant 10.0 : f32
  // expected-error @below {{'scf.while' op writes memory in its condition region and forwards values other than its loop-carried ones to its body; such a loop is not differentiable}}
  %r = scf.while (%v = %a) : (f32) -> f32 {
    %sq = arith.mulf %v, %v : f32
    adjit.store %sq, %y[%i] : !adjit.array<f32, 1>
    %go = arith.cmpf olt, %sq, %limit : f32
    scf.condition(%go) %sq : f32
  } do {
  ^bb0(%w: f32):
    scf.yield %w : f32
  }
  return
}

// -----

/// An in-place update that reads a neighbour's element (another thread may
/// already have overwritten it) is rejected at the write, with a note at the
/// read; the message names the argument.
func.func @in_place_shared(%x: !adjit.array<f32, 1>) attributes {adjit.kernel, adjit.arg_names = ["x"]} {
  %i = adjit.tid : index
  %c1 = arith.constant 1 : index
  %j = arith.addi %i, %c1 : index
  // expected-note @below {{the array is read here}}
  %a = adjit.load %x[%j] : !adjit.array<f32, 1>
  %b = arith.mulf %a, %a : f32
  // expected-error @below {{'adjit.store' op writes kernel argument 'x', which the kernel also reads at elements other threads may write; the values read then depend on the order the threads run in (a data race in the forward launch too), so no gradient is defined: write the results to a separate array}}
  adjit.store %b, %x[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// An own-element in-place update that a loop cannot carry as a value (here
/// a while loop whose condition region writes the element) reads, in later
/// iterations, what earlier ones wrote: rejected (without arg_names the
/// argument is named by number).
func.func @in_place_loop(%x: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %one = arith.constant 1.0 : f32
  scf.while : () -> () {
    // expected-note @below {{the array is read here}}
    %a = adjit.load %x[%i] : !adjit.array<f32, 1>
    %b = arith.mulf %a, %a : f32
    // expected-error @below {{'adjit.store' op writes kernel argument #0, which the kernel also reads after writing it in a way the compiler cannot forward (e.g. in a while loop's condition); the gradient needs the overwritten values, which are not saved for this pattern}}
    adjit.store %b, %x[%i] : !adjit.array<f32, 1>
    %c = arith.cmpf olt, %b, %one : f32
    scf.condition(%c)
  } do {
    scf.yield
  }
  return
}

// -----

/// A float atomic min whose old value the kernel uses: the old value depends
/// on the order the threads ran in (a race, reported as such).
func.func @atomic_min_old_value(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %c0 = arith.constant 0 : index
  // expected-error @below {{'adjit.atomic_min' op writes kernel argument #1, which the kernel also reads at elements other threads may write}}
  // expected-note @below {{the array is read here}}
  %old = adjit.atomic_min %a, %y[%c0] [] : f32, !adjit.array<f32, 1>
  %s = arith.mulf %old, %a : f32
  adjit.store %s, %z[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// Integer atomic min/max carry no gradient: the float store beside them is
/// differentiated as usual (no diagnostic).
func.func @atomic_minmax_int(%k: !adjit.array<i32, 1>, %x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %lo = adjit.atomic_min %one, %k[%c0] [] : i32, !adjit.array<i32, 1>
  %hi = adjit.atomic_max %one, %k[%c0] [] : i32, !adjit.array<i32, 1>
  adjit.store %a, %y[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// An op with no derivative rule on the gradient's path is rejected.
func.func @no_rule(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  // expected-error @below {{'math.log1p' op has no derivative rule, so the kernel cannot be differentiated}}
  %r = math.log1p %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// A rule-less op is fine off the gradient's path: log1p feeds only a
/// comparison, so only the select's rule runs.
func.func @no_rule_inactive(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %c2 = arith.constant 2.0 : f32
  %m = math.log1p %a : f32
  %odd = arith.cmpf ogt, %m, %c2 : f32
  %r = arith.select %odd, %a, %c2 : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// A load from an array that is not a kernel argument has no gradient array.
func.func @not_an_argument(%x: !adjit.array<f32, 1>, %z: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>, %c: i1) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %arr = arith.select %c, %x, %z : !adjit.array<f32, 1>
  // expected-error @below {{'adjit.load' op accesses an array that is not a kernel argument}}
  %a = adjit.load %arr[%i] : !adjit.array<f32, 1>
  adjit.store %a, %y[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// vector.extract at a dynamic position has no rule.
func.func @extract_dynamic(%x: !adjit.array<vector<3xf32>, 1>, %y: !adjit.array<f32, 1>, %k: index) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %v = adjit.load %x[%i] : !adjit.array<vector<3xf32>, 1>
  // expected-error @below {{'vector.extract' op has no derivative rule for dynamic positions}}
  %e = vector.extract %v[%k] : f32 from vector<3xf32>
  adjit.store %e, %y[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// Nor has vector.insert at a dynamic position.
func.func @insert_dynamic(%x: !adjit.array<vector<3xf32>, 1>, %y: !adjit.array<vector<3xf32>, 1>, %k: index) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %v = adjit.load %x[%i] : !adjit.array<vector<3xf32>, 1>
  %c = arith.constant 1.0 : f32
  // expected-error @below {{'vector.insert' op has no derivative rule for dynamic positions}}
  %w = vector.insert %c, %v[%k] : f32 into vector<3xf32>
  adjit.store %w, %y[%i] : !adjit.array<vector<3xf32>, 1>
  return
}

// -----

/// vector.broadcast has a rule for scalar sources only.
func.func @broadcast_vector(%x: !adjit.array<vector<3xf32>, 1>, %y: !adjit.array<vector<2x3xf32>, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %v = adjit.load %x[%i] : !adjit.array<vector<3xf32>, 1>
  // expected-error @below {{'vector.broadcast' op has no derivative rule for a vector source}}
  %w = vector.broadcast %v : vector<3xf32> to vector<2x3xf32>
  adjit.store %w, %y[%i] : !adjit.array<vector<2x3xf32>, 1>
  return
}

// -----

/// vector.reduction has a rule for the add kind only.
func.func @reduction_mul(%x: !adjit.array<vector<3xf32>, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %v = adjit.load %x[%i] : !adjit.array<vector<3xf32>, 1>
  // expected-error @below {{'vector.reduction' op has a derivative rule only for the add kind}}
  %r = vector.reduction <mul>, %v : vector<3xf32> into f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// A custom adjoint that does not exist.
func.func private @custom_missing(%v: f32) -> f32 attributes {adjit.custom_adjoint = @missing, no_inline} {
  %r = arith.mulf %v, %v : f32
  return %r : f32
}
func.func @custom_adjoint_missing(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  // expected-error @below {{'adjit.call' op custom adjoint @missing not found}}
  %r = adjit.call @custom_missing(%a) : (f32) -> f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// A custom adjoint must return one adjoint per float argument of the call.
func.func private @custom_short(%v: f32, %s: f32) -> f32 attributes {adjit.custom_adjoint = @custom_short_grad, no_inline} {
  %r = arith.mulf %v, %s : f32
  return %r : f32
}
func.func private @custom_short_grad(%v: f32, %s: f32, %dr: f32) -> f32 {
  return %dr : f32
}
func.func @custom_adjoint_short(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  // expected-error @below {{'adjit.call' op custom adjoint @custom_short_grad returns fewer adjoints than the call has float arguments}}
  %r = adjit.call @custom_short(%a, %a) : (f32, f32) -> f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// adjit.custom_adjoint must name the adjoint function: a unit attribute
/// gets the call past the inlining check, but the rule finds no adjoint.
func.func private @custom_unnamed(%v: f32) -> f32 attributes {adjit.custom_adjoint, no_inline} {
  %r = arith.mulf %v, %v : f32
  return %r : f32
}
func.func @custom_adjoint_unnamed(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  // expected-error @below {{'adjit.call' op calls a device function without a custom adjoint; calls must be inlined before adjit-adjoint}}
  %r = adjit.call @custom_unnamed(%a) : (f32) -> f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// A kernel declared without a body is an error, not a crash.
// expected-error @below {{'func.func' op kernel has no body to differentiate}}
func.func private @declaration(%x: !adjit.array<f32, 1>) attributes {adjit.kernel}

// -----

/// A float atomic_exch or atomic_cas has no adjoint: the value it leaves
/// (and the old value it returns) depends on the threads' order; so even
/// when its old value is unused.
func.func @atomic_exch(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %c0 = arith.constant 0 : index
  // expected-error @below {{'adjit.atomic_exch' op atomic_exch of float values has no adjoint: the value it leaves in the element (and the old value it returns) depends on the order the threads run in, not only on the inputs, so no gradient is defined; launch it outside the tape (or exchange integer indices and differentiate a kernel that reads the values they select)}}
  %old = adjit.atomic_exch %a, %y[%c0] [] : f32, !adjit.array<f32, 1>
  return
}

// -----

func.func @atomic_cas(%x: !adjit.array<f64, 1>, %y: !adjit.array<f64, 1>, %z: !adjit.array<f64, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f64, 1>
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f64
  // expected-error @below {{'adjit.atomic_cas' op atomic_cas of float values has no adjoint: the value it leaves in the element}}
  %old = adjit.atomic_cas %zero, %a, %y[%c0] [] : f64, !adjit.array<f64, 1>
  adjit.store %old, %z[%i] : !adjit.array<f64, 1>
  return
}

// -----

/// Memory at an address has no gradient array: writing a float into it is
/// rejected (its readers' gradients would be lost).
func.func @store_at_address(%addr: i64, %x: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %out = adjit.array_at_address %addr[%i] {name = "out"} : !adjit.array<f32, 1>
  // expected-error @below {{'adjit.store' op writes into an array at an address (a geometry object's memory), which is constant for differentiation: it has no gradient array}}
  adjit.store %a, %out[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// A contraction other than a matrix product (here a dot product, every
/// dimension reduced) has no derivative rule.
func.func @dot_contraction(%x: !adjit.array<vector<3xf32>, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<vector<3xf32>, 1>
  %z = arith.constant 0.0 : f32
  // expected-error @below {{'vector.contract' op has no derivative rule: only matrix products (tile_matmul's form) are differentiated}}
  %d = vector.contract {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> (k)>, affine_map<(k) -> ()>], iterator_types = ["reduction"], kind = #vector.kind<add>} %a, %a, %z : vector<3xf32>, vector<3xf32> into f32
  adjit.store %d, %y[%i] : !adjit.array<f32, 1>
  return
}
