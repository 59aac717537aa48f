// RUN: kiln-opt %s --split-input-file -verify-diagnostics

func.func @expand_mismatch(%x: tensor<3x2xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{input dimension 1 of size 2 does not broadcast to 4}}
  %y = kiln.expand %x : tensor<3x2xf32> to tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

func.func @expand_rank(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{cannot broadcast rank 2 to the smaller rank 1}}
  %y = kiln.expand %x : tensor<2x3xf32> to tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

func.func @guard_not_bool(%x: tensor<2xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 1-bit signless integer values}}
  kiln.guard %x {message = "m"} : tensor<2xf32>
  return
}
