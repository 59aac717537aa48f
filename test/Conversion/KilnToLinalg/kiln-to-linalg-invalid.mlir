// RUN: kiln-opt %s --split-input-file --kiln-convert-kiln-to-linalg -verify-diagnostics

// Linalg lowering needs static shapes; a dynamic result says how to get them.
func.func @dynamic_result(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{result type 'tensor<?x3xf32>' is not static; run --kiln-shape-inference first or give static input shapes}}
  %y = kiln.relu %x : tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

// -----

// A result left dynamic by the import (shape inference not run) as well.
func.func @dynamic_after_static(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{result type 'tensor<?x?xf32>' is not static}}
  %y = kiln.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}
