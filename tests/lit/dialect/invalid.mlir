// RUN: adjit-opt %s -split-input-file -verify-diagnostics

// One case per verifier error path of the adjit ops and the array type.

//===----------------------------------------------------------------------===//
// !adjit.array
//===----------------------------------------------------------------------===//

/// Rank 0 is not an array.
// expected-error @below {{array rank must be 1 to 4, got 0}}
func.func private @rank_zero(!adjit.array<f32, 0>)

// -----

/// Rank 5 is past the 4-D launch limit.
// expected-error @below {{array rank must be 1 to 4, got 5}}
func.func private @rank_five(!adjit.array<f32, 5>)

// -----

/// Negative ranks are rejected (the message shows the rank as unsigned today).
// expected-error @below {{array rank must be 1 to 4, got}}
func.func private @rank_negative(!adjit.array<f32, -1>)

// -----

/// The rank is not optional.
// expected-error @below {{expected ','}}
func.func private @rank_missing(!adjit.array<f32>)

// -----

/// f8 is not an array scalar (f16 and bf16 are).
// expected-error @below {{array element must be f16, bf16, f32, f64, i8, i16, i32, i64, or a vector<N x T> / matrix vector<R x C x T> of them with extents of at least 2 and at most 64 scalars, got 'f8E4M3FN'}}
func.func private @elem_f8(!adjit.array<f8E4M3FN, 1>)

// -----

/// Neither is index.
// expected-error @below {{array element must be f16, bf16, f32, f64, i8, i16, i32, i64, or a vector<N x T> / matrix vector<R x C x T> of them with extents of at least 2 and at most 64 scalars, got 'index'}}
func.func private @elem_index(!adjit.array<index, 1>)

// -----

/// A 65-scalar element is more than a kernel value holds (an 8x8 matrix is the most).
// expected-error @below {{at most 64 scalars, got 'vector<5x13xf32>'}}
func.func private @elem_too_big(!adjit.array<vector<5x13xf32>, 1>)

// -----

/// A 10x3 matrix is (30 scalars).
func.func private @elem_mat10x3(!adjit.array<vector<10x3xf32>, 1>)

// -----

/// Nor i1 (bool arrays are not supported).
// expected-error @below {{got 'i1'}}
func.func private @elem_i1(!adjit.array<i1, 1>)

// -----

/// A vector of one component is too short.
// expected-error @below {{got 'vector<1xf32>'}}
func.func private @elem_vec1(!adjit.array<vector<1xf32>, 1>)

// -----

/// A vector of 65 components is too long (64 fit).
// expected-error @below {{got 'vector<65xf32>'}}
func.func private @elem_vec65(!adjit.array<vector<65xf32>, 1>)

// -----

/// A 9x8 matrix holds too many scalars (72).
// expected-error @below {{got 'vector<9x8xf64>'}}
func.func private @elem_mat98(!adjit.array<vector<9x8xf64>, 2>)

// -----

/// A rank-3 vector is neither a vector nor a matrix.
// expected-error @below {{got 'vector<2x2x2xf32>'}}
func.func private @elem_rank3(!adjit.array<vector<2x2x2xf32>, 1>)

// -----

/// Scalable vectors have no static component count.
// expected-error @below {{got 'vector<[4]xf32>'}}
func.func private @elem_scalable(!adjit.array<vector<[4]xf32>, 1>)

// -----

/// Vector components must be array scalars too.
// expected-error @below {{got 'vector<3xf8E5M2>'}}
func.func private @elem_vec_f8(!adjit.array<vector<3xf8E5M2>, 1>)

// -----

/// An array of arrays is not an array.
// expected-error @below {{got '!adjit.array<f32, 1>'}}
func.func private @elem_array(!adjit.array<!adjit.array<f32, 1>, 1>)

//===----------------------------------------------------------------------===//
// adjit.tid
//===----------------------------------------------------------------------===//

// -----

/// tid has at least one coordinate.
func.func @tid_zero() {
  // expected-error @below {{'adjit.tid' op expects 1 to 4 results, got 0}}
  "adjit.tid"() : () -> ()
  return
}

// -----

/// tid has at most four coordinates.
func.func @tid_five() {
  // expected-error @below {{'adjit.tid' op expects 1 to 4 results, got 5}}
  %i:5 = adjit.tid : index, index, index, index, index
  return
}

// -----

/// Coordinates are index values.
func.func @tid_i32() {
  // expected-error @below {{'adjit.tid' op result #0 must be variadic of index, but got 'i32'}}
  %i = "adjit.tid"() : () -> i32
  return
}

//===----------------------------------------------------------------------===//
// adjit.dim
//===----------------------------------------------------------------------===//

// -----

/// The dimension must be below the rank.
func.func @dim_too_large(%x: !adjit.array<f32, 2>) {
  // expected-error @below {{'adjit.dim' op dimension 2 is out of range for '!adjit.array<f32, 2>'}}
  %n = adjit.dim %x, 2 : !adjit.array<f32, 2>
  return
}

// -----

/// Negative dimensions are out of range (the message prints the dimension
/// as unsigned today, so only its tail is checked).
func.func @dim_negative(%x: !adjit.array<f32, 2>) {
  // expected-error @below {{is out of range for '!adjit.array<f32, 2>'}}
  %n = adjit.dim %x, -1 : !adjit.array<f32, 2>
  return
}

//===----------------------------------------------------------------------===//
// adjit.load / adjit.store
//===----------------------------------------------------------------------===//

// -----

/// load takes one index per dimension: too few.
func.func @load_too_few_indices(%x: !adjit.array<f32, 2>, %i: index) {
  // expected-error @below {{'adjit.load' op expects 2 indices for '!adjit.array<f32, 2>', got 1}}
  %v = adjit.load %x[%i] : !adjit.array<f32, 2>
  return
}

// -----

/// load takes one index per dimension: too many.
func.func @load_too_many_indices(%x: !adjit.array<f32, 1>, %i: index) {
  // expected-error @below {{'adjit.load' op expects 1 indices for '!adjit.array<f32, 1>', got 2}}
  %v = adjit.load %x[%i, %i] : !adjit.array<f32, 1>
  return
}

// -----

/// load yields the whole element.
func.func @load_result_type(%x: !adjit.array<vector<3xf32>, 1>, %i: index) {
  // expected-error @below {{'adjit.load' op failed to verify that result is the array's element type}}
  %v = "adjit.load"(%x, %i) : (!adjit.array<vector<3xf32>, 1>, index) -> f32
  return
}

// -----

/// store takes one index per dimension.
func.func @store_wrong_indices(%x: !adjit.array<f32, 3>, %v: f32, %i: index) {
  // expected-error @below {{'adjit.store' op expects 3 indices for '!adjit.array<f32, 3>', got 2}}
  adjit.store %v, %x[%i, %i] : !adjit.array<f32, 3>
  return
}

// -----

/// store writes the whole element.
func.func @store_value_type(%x: !adjit.array<vector<3xf32>, 1>, %v: f32, %i: index) {
  // expected-error @below {{'adjit.store' op failed to verify that value is the array's element type}}
  "adjit.store"(%v, %x, %i) : (f32, !adjit.array<vector<3xf32>, 1>, index) -> ()
  return
}

//===----------------------------------------------------------------------===//
// adjit.load_component
//===----------------------------------------------------------------------===//

// -----

/// load_component takes one index per dimension.
func.func @load_component_indices(%x: !adjit.array<vector<3xf32>, 2>, %i: index) {
  // expected-error @below {{'adjit.load_component' op expects 2 indices for '!adjit.array<vector<3xf32>, 2>', got 1}}
  %c = adjit.load_component %x[%i] [0] : !adjit.array<vector<3xf32>, 2> -> f32
  return
}

// -----

/// An empty position is a whole-element load.
func.func @load_component_empty(%x: !adjit.array<vector<3xf32>, 1>, %i: index) {
  // expected-error @below {{'adjit.load_component' op expects a non-empty position (use adjit.load for the whole element)}}
  %c = adjit.load_component %x[%i] [] : !adjit.array<vector<3xf32>, 1> -> vector<3xf32>
  return
}

// -----

/// The position must lie inside the element.
func.func @load_component_out_of_range(%x: !adjit.array<vector<3xf32>, 1>, %i: index) {
  // expected-error @below {{'adjit.load_component' op position [3] does not address a component of 'vector<3xf32>'}}
  %c = adjit.load_component %x[%i] [3] : !adjit.array<vector<3xf32>, 1> -> f32
  return
}

// -----

/// Negative positions are out of range.
func.func @load_component_negative(%x: !adjit.array<vector<3xf32>, 1>, %i: index) {
  // expected-error @below {{'adjit.load_component' op position [-1] does not address a component of 'vector<3xf32>'}}
  %c = adjit.load_component %x[%i] [-1] : !adjit.array<vector<3xf32>, 1> -> f32
  return
}

// -----

/// A scalar element has no components.
func.func @load_component_of_scalar(%x: !adjit.array<f32, 1>, %i: index) {
  // expected-error @below {{'adjit.load_component' op position [0] does not address a component of 'f32'}}
  %c = adjit.load_component %x[%i] [0] : !adjit.array<f32, 1> -> f32
  return
}

// -----

/// A position deeper than the matrix is out of range.
func.func @load_component_too_deep(%x: !adjit.array<vector<3x3xf32>, 1>, %i: index) {
  // expected-error @below {{'adjit.load_component' op position [0, 0, 0] does not address a component of 'vector<3x3xf32>'}}
  %c = adjit.load_component %x[%i] [0, 0, 0] : !adjit.array<vector<3x3xf32>, 1> -> f32
  return
}

// -----

/// The result is the component's type: a matrix row, not a scalar.
func.func @load_component_type(%x: !adjit.array<vector<3x3xf32>, 1>, %i: index) {
  // expected-error @below {{'adjit.load_component' op result type 'f32' does not match the component type 'vector<3xf32>' at [1]}}
  %c = adjit.load_component %x[%i] [1] : !adjit.array<vector<3x3xf32>, 1> -> f32
  return
}

//===----------------------------------------------------------------------===//
// adjit.store_component
//===----------------------------------------------------------------------===//

// -----

/// store_component takes one index per dimension.
func.func @store_component_indices(%x: !adjit.array<vector<3xf32>, 1>, %v: f32, %i: index) {
  // expected-error @below {{'adjit.store_component' op expects 1 indices for '!adjit.array<vector<3xf32>, 1>', got 0}}
  adjit.store_component %v, %x[] [0] : f32, !adjit.array<vector<3xf32>, 1>
  return
}

// -----

/// An empty position is a whole-element store.
func.func @store_component_empty(%x: !adjit.array<vector<3xf32>, 1>, %v: vector<3xf32>, %i: index) {
  // expected-error @below {{'adjit.store_component' op expects a non-empty position (use adjit.store for the whole element)}}
  adjit.store_component %v, %x[%i] [] : vector<3xf32>, !adjit.array<vector<3xf32>, 1>
  return
}

// -----

/// The position must lie inside the element.
func.func @store_component_out_of_range(%x: !adjit.array<vector<2x2xf64>, 1>, %v: f64, %i: index) {
  // expected-error @below {{'adjit.store_component' op position [0, 2] does not address a component of 'vector<2x2xf64>'}}
  adjit.store_component %v, %x[%i] [0, 2] : f64, !adjit.array<vector<2x2xf64>, 1>
  return
}

// -----

/// The value is the component's type.
func.func @store_component_type(%x: !adjit.array<vector<3xf32>, 1>, %v: f64, %i: index) {
  // expected-error @below {{'adjit.store_component' op value type 'f64' does not match the component type 'f32' at [0]}}
  adjit.store_component %v, %x[%i] [0] : f64, !adjit.array<vector<3xf32>, 1>
  return
}

//===----------------------------------------------------------------------===//
// adjit.atomic_add
//===----------------------------------------------------------------------===//

// -----

/// atomic_add takes one index per dimension.
func.func @atomic_add_indices(%x: !adjit.array<f32, 2>, %v: f32, %i: index) {
  // expected-error @below {{'adjit.atomic_add' op expects 2 indices for '!adjit.array<f32, 2>', got 1}}
  %o = adjit.atomic_add %v, %x[%i] [] : f32, !adjit.array<f32, 2>
  return
}

// -----

/// Without a position the value is the whole element.
func.func @atomic_add_element_type(%x: !adjit.array<vector<3xf32>, 1>, %v: f32, %i: index) {
  // expected-error @below {{'adjit.atomic_add' op value type 'f32' does not match the component type 'vector<3xf32>' at []}}
  %o = adjit.atomic_add %v, %x[%i] [] : f32, !adjit.array<vector<3xf32>, 1>
  return
}

// -----

/// With a position the value is that component.
func.func @atomic_add_component_type(%x: !adjit.array<vector<3x3xf32>, 1>, %v: f32, %i: index) {
  // expected-error @below {{'adjit.atomic_add' op value type 'f32' does not match the component type 'vector<3xf32>' at [2]}}
  %o = "adjit.atomic_add"(%v, %x, %i) <{position = array<i64: 2>}> : (f32, !adjit.array<vector<3x3xf32>, 1>, index) -> f32
  return
}

// -----

/// The position must lie inside the element.
func.func @atomic_add_out_of_range(%x: !adjit.array<vector<4xi32>, 1>, %v: i32, %i: index) {
  // expected-error @below {{'adjit.atomic_add' op position [4] does not address a component of 'vector<4xi32>'}}
  %o = "adjit.atomic_add"(%v, %x, %i) <{position = array<i64: 4>}> : (i32, !adjit.array<vector<4xi32>, 1>, index) -> i32
  return
}

// -----

/// A scalar element has no components.
func.func @atomic_add_scalar_position(%x: !adjit.array<f32, 1>, %v: f32, %i: index) {
  // expected-error @below {{'adjit.atomic_add' op position [0] does not address a component of 'f32'}}
  %o = "adjit.atomic_add"(%v, %x, %i) <{position = array<i64: 0>}> : (f32, !adjit.array<f32, 1>, index) -> f32
  return
}

// -----

/// The result (the old value) has the value's type.
func.func @atomic_add_result_type(%x: !adjit.array<f32, 1>, %v: f32, %i: index) {
  // expected-error @below {{'adjit.atomic_add' op failed to verify that all of {value, result} have same type}}
  %o = "adjit.atomic_add"(%v, %x, %i) <{position = array<i64>}> : (f32, !adjit.array<f32, 1>, index) -> f64
  return
}

//===----------------------------------------------------------------------===//
// adjit.extract / adjit.insert
//===----------------------------------------------------------------------===//

// -----

/// extract needs a position.
func.func @extract_empty(%v: vector<3xf32>) {
  // expected-error @below {{'adjit.extract' op expects a non-empty position}}
  %x = adjit.extract %v [] : vector<3xf32> -> vector<3xf32>
  return
}

// -----

/// The position must lie inside the vector.
func.func @extract_out_of_range(%v: vector<3xf32>) {
  // expected-error @below {{'adjit.extract' op position [3] does not address a component of 'vector<3xf32>'}}
  %x = adjit.extract %v [3] : vector<3xf32> -> f32
  return
}

// -----

/// A position deeper than the vector is out of range.
func.func @extract_too_deep(%v: vector<3xf32>) {
  // expected-error @below {{'adjit.extract' op position [0, 0] does not address a component of 'vector<3xf32>'}}
  %x = adjit.extract %v [0, 0] : vector<3xf32> -> f32
  return
}

// -----

/// The result is the component's type.
func.func @extract_type(%m: vector<3x3xf32>) {
  // expected-error @below {{'adjit.extract' op result type 'f32' does not match the component type 'vector<3xf32>' at [0]}}
  %x = adjit.extract %m [0] : vector<3x3xf32> -> f32
  return
}

// -----

/// extract reads vectors and matrices, not scalars.
func.func @extract_scalar(%s: f32) {
  // expected-error @below {{'adjit.extract' op operand #0 must be vector of any type values, but got 'f32'}}
  %x = "adjit.extract"(%s) <{position = array<i64: 0>}> : (f32) -> f32
  return
}

// -----

/// insert needs a position.
func.func @insert_empty(%v: vector<3xf32>, %w: vector<3xf32>) {
  // expected-error @below {{'adjit.insert' op expects a non-empty position}}
  %r = adjit.insert %w, %v [] : vector<3xf32> into vector<3xf32>
  return
}

// -----

/// The position must lie inside the destination.
func.func @insert_out_of_range(%v: vector<2x2xf32>, %s: f32) {
  // expected-error @below {{'adjit.insert' op position [2, 0] does not address a component of 'vector<2x2xf32>'}}
  %r = adjit.insert %s, %v [2, 0] : f32 into vector<2x2xf32>
  return
}

// -----

/// The inserted value is the component's type.
func.func @insert_type(%v: vector<3xf32>, %s: f64) {
  // expected-error @below {{'adjit.insert' op value type 'f64' does not match the component type 'f32' at [1]}}
  %r = adjit.insert %s, %v [1] : f64 into vector<3xf32>
  return
}

// -----

/// A matrix row is inserted as a vector.
func.func @insert_row_type(%m: vector<3x3xf32>, %s: f32) {
  // expected-error @below {{'adjit.insert' op value type 'f32' does not match the component type 'vector<3xf32>' at [1]}}
  %r = adjit.insert %s, %m [1] : f32 into vector<3x3xf32>
  return
}

// -----

/// The result has the destination's type.
func.func @insert_result_type(%v: vector<3xf32>, %s: f32) {
  // expected-error @below {{'adjit.insert' op failed to verify that all of {dest, result} have same type}}
  %r = "adjit.insert"(%s, %v) <{position = array<i64: 0>}> : (f32, vector<3xf32>) -> vector<4xf32>
  return
}

//===----------------------------------------------------------------------===//
// adjit.call
//===----------------------------------------------------------------------===//

// -----

/// The callee must exist.
func.func @call_missing(%x: f32) -> f32 {
  // expected-error @below {{'adjit.call' op 'missing' does not reference a func.func in this module}}
  %r = adjit.call @missing(%x) : (f32) -> f32
  return %r : f32
}

// -----

/// The callee must be a func.func.
llvm.func @not_a_func(f32) -> f32
func.func @call_llvm_func(%x: f32) -> f32 {
  // expected-error @below {{'adjit.call' op 'not_a_func' does not reference a func.func in this module}}
  %r = adjit.call @not_a_func(%x) : (f32) -> f32
  return %r : f32
}

// -----

/// Operand types must match the callee's inputs.
func.func private @sq(%x: f32) -> f32
func.func @call_operand_type(%x: f64) -> f32 {
  // expected-error @below {{'adjit.call' op call type '(f64) -> f32' does not match callee type '(f32) -> f32'}}
  %r = adjit.call @sq(%x) : (f64) -> f32
  return %r : f32
}

// -----

/// Result types must match the callee's results.
func.func private @sq(%x: f32) -> f32
func.func @call_result_type(%x: f32) -> f64 {
  // expected-error @below {{'adjit.call' op call type '(f32) -> f64' does not match callee type '(f32) -> f32'}}
  %r = adjit.call @sq(%x) : (f32) -> f64
  return %r : f64
}

// -----

/// The operand count must match too.
func.func private @sq(%x: f32) -> f32
func.func @call_arity(%x: f32) -> f32 {
  // expected-error @below {{'adjit.call' op call type '(f32, f32) -> f32' does not match callee type '(f32) -> f32'}}
  %r = adjit.call @sq(%x, %x) : (f32, f32) -> f32
  return %r : f32
}

// -----

/// Kernels are launched, never called.
func.func @k(%x: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  return
}
func.func @call_kernel(%x: !adjit.array<f32, 1>) {
  // expected-error @below {{'adjit.call' op cannot call kernel 'k'; kernels are launched, not called}}
  adjit.call @k(%x) : (!adjit.array<f32, 1>) -> ()
  return
}

// -----

/// atomic_max shares the atomic verifier: the value must match the component.
func.func @atomic_max_component_type(%x: !adjit.array<vector<3xf32>, 1>, %v: f64, %i: index) {
  // expected-error @below {{'adjit.atomic_max' op value type 'f64' does not match the component type 'f32' at [0]}}
  %o = adjit.atomic_max %v, %x[%i] [0] : f64, !adjit.array<vector<3xf32>, 1>
  return
}

//===----------------------------------------------------------------------===//
// adjit.atomic_exch / atomic_cas / atomic_and / atomic_or / atomic_xor
//===----------------------------------------------------------------------===//

// -----

/// atomic_and/or/xor take integers.
func.func @atomic_and_float(%x: !adjit.array<f32, 1>, %v: f32, %i: index) {
  // expected-error @below {{'adjit.atomic_and' op takes integer values, got 'f32'}}
  %o = adjit.atomic_and %v, %x[%i] [] : f32, !adjit.array<f32, 1>
  return
}

// -----

func.func @atomic_xor_float_vector(%x: !adjit.array<vector<3xf32>, 1>, %v: vector<3xf32>, %i: index) {
  // expected-error @below {{'adjit.atomic_xor' op takes integer values, got 'vector<3xf32>'}}
  %o = adjit.atomic_xor %v, %x[%i] [] : vector<3xf32>, !adjit.array<vector<3xf32>, 1>
  return
}

// -----

/// atomic_exch takes a scalar: a whole vector element is rejected.
func.func @atomic_exch_vector(%x: !adjit.array<vector<2xi32>, 1>, %v: vector<2xi32>, %i: index) {
  // expected-error @below {{'adjit.atomic_exch' op takes a scalar integer or float value, got 'vector<2xi32>'}}
  %o = adjit.atomic_exch %v, %x[%i] [] : vector<2xi32>, !adjit.array<vector<2xi32>, 1>
  return
}

// -----

/// The element (or component) addressing is checked as for the other atomics.
func.func @atomic_or_element_type(%x: !adjit.array<i64, 1>, %v: i32, %i: index) {
  // expected-error @below {{'adjit.atomic_or' op value type 'i32' does not match the component type 'i64' at []}}
  %o = adjit.atomic_or %v, %x[%i] [] : i32, !adjit.array<i64, 1>
  return
}

// -----

func.func @atomic_cas_indices(%x: !adjit.array<i32, 2>, %v: i32, %i: index) {
  // expected-error @below {{'adjit.atomic_cas' op expects 2 indices for '!adjit.array<i32, 2>', got 1}}
  %o = adjit.atomic_cas %v, %v, %x[%i] [] : i32, !adjit.array<i32, 2>
  return
}

// -----

func.func @atomic_cas_vector(%x: !adjit.array<vector<3xf32>, 1>, %v: vector<3xf32>, %i: index) {
  // expected-error @below {{'adjit.atomic_cas' op takes a scalar integer or float value, got 'vector<3xf32>'}}
  %o = adjit.atomic_cas %v, %v, %x[%i] [] : vector<3xf32>, !adjit.array<vector<3xf32>, 1>
  return
}

// -----

func.func @atomic_cas_position(%x: !adjit.array<vector<4xi32>, 1>, %v: i32, %i: index) {
  // expected-error @below {{'adjit.atomic_cas' op position [4] does not address a component of 'vector<4xi32>'}}
  %o = "adjit.atomic_cas"(%v, %v, %x, %i) <{position = array<i64: 4>}> : (i32, i32, !adjit.array<vector<4xi32>, 1>, index) -> i32
  return
}

// -----

/// compare, value and the result (the old value) have one type.
func.func @atomic_cas_compare_type(%x: !adjit.array<i32, 1>, %c: i64, %v: i32, %i: index) {
  // expected-error @below {{'adjit.atomic_cas' op failed to verify that all of {compare, value, result} have same type}}
  %o = "adjit.atomic_cas"(%c, %v, %x, %i) <{position = array<i64>}> : (i64, i32, !adjit.array<i32, 1>, index) -> i32
  return
}
