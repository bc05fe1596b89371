// RUN: adjit-opt %s --adjit-tangent -split-input-file -verify-diagnostics

// Diagnostics of adjit-tangent: what it cannot differentiate is rejected at
// the offending op, never given a silent zero tangent.

/// A call to a device function with a custom adjoint: forward mode has no
/// counterpart of @f_grad, so the call is an error naming both.
func.func private @f(%v: f32) -> f32 attributes {adjit.custom_adjoint = @f_grad, no_inline} {
  %r = arith.mulf %v, %v : f32
  return %r : f32
}
func.func private @f_grad(%v: f32, %dr: f32) -> f32 {
  %d = arith.mulf %dr, %v : f32
  return %d : f32
}
func.func @custom(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  // expected-error @below {{'adjit.call' op calls @f, which has a custom adjoint (@f_grad) but no forward-mode rule (give it one with @func_jvp); forward mode cannot differentiate through it}}
  %r = adjit.call @f(%a) : (f32) -> f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// A device function call left for the tangent pass (not inlined).
func.func private @square(%x: f32) -> f32 {
  %r = arith.mulf %x, %x : f32
  return %r : f32
}
func.func @call_not_inlined(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  // expected-error @below {{'adjit.call' op calls @square, which must be inlined before adjit-tangent (run the 'inline' pass first)}}
  %r = adjit.call @square(%a) : (f32) -> f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// A float op without a tangent rule, on an operand with a tangent.
func.func @no_rule(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  // expected-error @below {{'math.log1p' op has no tangent rule, so the kernel cannot be differentiated in forward mode}}
  %r = math.log1p %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// The same op on constants (no tangent flows in) needs no rule.
func.func @no_rule_inactive(%y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = arith.constant 7.0 : f32
  %r = math.log1p %a : f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// An atomic max into a float array: the element's tangent is the winner's,
/// known only once every thread ran (reverse mode compares with the array
/// the launch left).
func.func @atomic_max(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %c0 = arith.constant 0 : index
  // expected-error @below {{'adjit.atomic_max' op atomic_max of float values has no tangent: the element's tangent is the tangent of the value that ends up there, which is known only once every thread has run; differentiate it in reverse mode (Tape), which compares with the array the launch left}}
  %old = adjit.atomic_max %a, %y[%c0] [] : f32, !adjit.array<f32, 1>
  return
}

// -----

/// An atomic max into an integer array is fine: nothing to differentiate.
func.func @atomic_max_int(%k: !adjit.array<i32, 1>, %x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %old = adjit.atomic_max %one, %k[%c0] [] : i32, !adjit.array<i32, 1>
  adjit.store %a, %y[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// A multiplicative reduction has no tangent rule.
func.func @reduce_mul(%x: !adjit.array<vector<3xf32>, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %v = adjit.load %x[%i] : !adjit.array<vector<3xf32>, 1>
  // expected-error @below {{'vector.reduction' op has a tangent rule only for the add kind}}
  %r = vector.reduction <mul>, %v : vector<3xf32> into f32
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// Region ops other than scf.if, scf.for, scf.while and memref.alloca_scope are
/// they compute float values.
func.func @execute_region(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  // expected-error @below {{'scf.execute_region' op has regions the tangent pass cannot differentiate (only scf.if, scf.for, scf.while and memref.alloca_scope are)}}
  %r = scf.execute_region -> f32 {
    %s = arith.mulf %a, %a : f32
    scf.yield %s : f32
  }
  adjit.store %r, %y[%i] : !adjit.array<f32, 1>
  return
}

// -----

/// A kernel without a body.
// expected-error @below {{'func.func' op kernel has no body to differentiate}}
func.func private @external(%x: !adjit.array<f32, 1>) attributes {adjit.kernel}

// -----

/// A float atomic_exch or atomic_cas has no tangent (the value it leaves
/// depends on the threads' order).
func.func @atomic_exch(%x: !adjit.array<f32, 1>, %y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f32, 1>
  %c0 = arith.constant 0 : index
  // expected-error @below {{'adjit.atomic_exch' op atomic_exch of float values has no tangent: the value it leaves in the element (and the old value it returns) depends on the order the threads run in, not only on the inputs, so no derivative is defined}}
  %old = adjit.atomic_exch %a, %y[%c0] [] : f32, !adjit.array<f32, 1>
  return
}

// -----

func.func @atomic_cas(%x: !adjit.array<f64, 1>, %y: !adjit.array<f64, 1>) attributes {adjit.kernel} {
  %i = adjit.tid : index
  %a = adjit.load %x[%i] : !adjit.array<f64, 1>
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f64
  // expected-error @below {{'adjit.atomic_cas' op atomic_cas of float values has no tangent}}
  %old = adjit.atomic_cas %zero, %a, %y[%c0] [] : f64, !adjit.array<f64, 1>
  return
}

// -----

/// A float buffer without a tangent buffer (memref.alloc has no rule: the
/// adjoint pass allocates on the stack only) is an error at its use, never a
/// zero tangent.
func.func @heap_buffer(%y: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  %c0 = arith.constant 0 : index
  %i = adjit.tid : index
  %buf = memref.alloc() : memref<4xf32>
  // expected-error @below {{'memref.load' op accesses a float buffer whose tangent buffer is unknown (not allocated in the kernel)}}
  %l = memref.load %buf[%c0] : memref<4xf32>
  adjit.store %l, %y[%i] : !adjit.array<f32, 1>
  return
}
