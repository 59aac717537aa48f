// RUN: kiln-opt %s --split-input-file --kiln-convert-kiln-to-linalg -verify-diagnostics

// An op whose lowering does not size symbolic dimensions yet says how to
// give them sizes (docs/shapes.md lists the ops that do).
func.func @dynamic_result(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{'kiln.concat' does not support symbolic dimensions yet (type 'tensor<?x3xf32>'); give the symbolic dimensions one size each (--dim SYMBOL=N or --input-shape)}}
  %y = kiln.concat %x {axis = 1 : i64} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

// -----

// A result left dynamic by the import (shape inference not run) as well.
func.func @dynamic_after_static(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{result type 'tensor<?x?xf32>' has a symbolic dimension that no operand carries}}
  %y = kiln.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}
