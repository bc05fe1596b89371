// RUN: adjit-opt %s -split-input-file --adjit-lower-to-std --adjit-cpu-launch -verify-diagnostics

// Diagnostics of adjit-cpu-launch.

/// index has no fixed size in the packed argument buffer.
// expected-error @below {{'func.func' op kernel argument 0 of type 'index' cannot be passed to a CPU launch}}
func.func @index_arg(%n: index, %x: !adjit.array<f32, 1>) attributes {adjit.kernel} {
  return
}

// -----

/// A kernel must have a body to outline.
// expected-error @below {{'func.func' op kernel has no body}}
func.func private @declaration(%x: !adjit.array<f32, 1>) attributes {adjit.kernel}
