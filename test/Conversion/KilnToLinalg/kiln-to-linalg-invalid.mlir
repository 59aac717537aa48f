// RUN: kiln-opt %s --split-input-file --kiln-convert-kiln-to-linalg -verify-diagnostics

// An op whose lowering does not size symbolic dimensions yet says how to
// give them sizes (docs/shapes.md lists the ops that do).
func.func @dynamic_result(%x: tensor<?x3x3xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'kiln.det' does not support symbolic dimensions yet (type 'tensor<?x3x3xf32>'); give the symbolic dimensions one size each (--dim SYMBOL=N or --input-shape)}}
  %y = kiln.det %x : tensor<?x3x3xf32> -> tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

// A result left dynamic by the import (shape inference not run) as well.
func.func @dynamic_after_static(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{result type 'tensor<?x?xf32>' has a symbolic dimension that no operand carries}}
  %y = kiln.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// ceil_mode with an end pad as large as the window: its output size is not
// the affine.min the lowering computes for a symbolic size.
func.func @ceil_large_end_pad(%x: tensor<1x4x?x8xf32>) -> tensor<1x4x?x4xf32> {
  // expected-error @+1 {{ceil_mode with an end pad (2) as large as the window does not support symbolic dimensions yet; give the symbolic dimensions one size each}}
  %y = kiln.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 2, 0>, ceil_mode = true} : tensor<1x4x?x8xf32> -> tensor<1x4x?x4xf32>
  return %y : tensor<1x4x?x4xf32>
}
