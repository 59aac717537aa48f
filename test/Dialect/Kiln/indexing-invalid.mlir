// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Shape rules and verifiers of the scatter, gather_nd, scan and selection
// ops (lib/Dialect/Kiln/IR/KilnIndexingOps.cpp).

func.func @scatter_reduction(%d: tensor<1x5xf32>, %i: tensor<1x2xi64>, %u: tensor<1x2xf32>) -> tensor<1x5xf32> {
  // expected-error @+2 {{reduction 'sum' is not one of none, add, mul, max, min}}
  // expected-error @+1 {{'kiln.scatter_elements' op failed to infer returned types}}
  %y = kiln.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "sum"} : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32>
  return %y : tensor<1x5xf32>
}

// -----

func.func @scatter_updates_too_big(%d: tensor<2x5xf32>, %i: tensor<3x2xi64>, %u: tensor<3x2xf32>) -> tensor<2x5xf32> {
  // expected-error @+2 {{updates [3,2] do not fit in data [2,5] at dimension 0}}
  // expected-error @+1 {{'kiln.scatter_elements' op failed to infer returned types}}
  %y = kiln.scatter_elements %d, %i, %u {axis = 1 : i64} : (tensor<2x5xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

func.func @scatter_nd_updates_shape(%d: tensor<4x4x4xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4xf32>) -> tensor<4x4x4xf32> {
  // expected-error @+2 {{updates [2,4] must have shape [2,4,4] (indices.shape[:-1] + data.shape[q:])}}
  // expected-error @+1 {{'kiln.scatter_nd' op failed to infer returned types}}
  %y = kiln.scatter_nd %d, %i, %u : (tensor<4x4x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x4x4xf32>
  return %y : tensor<4x4x4xf32>
}

// -----

func.func @gather_nd_tuple_too_long(%d: tensor<2x2xf32>, %i: tensor<1x3xi64>) -> tensor<1xf32> {
  // expected-error @+2 {{indices [1,3] must end in a static dimension q with 1 <= q <= data rank - batch_dims (2)}}
  // expected-error @+1 {{'kiln.gather_nd' op failed to infer returned types}}
  %y = kiln.gather_nd %d, %i : (tensor<2x2xf32>, tensor<1x3xi64>) -> tensor<1xf32>
  return %y : tensor<1xf32>
}

// -----

func.func @cumsum_axis_elements(%x: tensor<4xf32>, %a: tensor<2xi64>) -> tensor<4xf32> {
  // expected-error @+2 {{axis must have one element, got shape [2]}}
  // expected-error @+1 {{'kiln.cumsum' op failed to infer returned types}}
  %y = kiln.cumsum %x, %a : (tensor<4xf32>, tensor<2xi64>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @top_k_too_many(%x: tensor<3x4xf32>) -> (tensor<3x5xf32>, tensor<3x5xi64>) {
  // expected-error @+2 {{k = 5 is not in [0, 4] (the size of axis 1)}}
  // expected-error @+1 {{'kiln.top_k' op failed to infer returned types}}
  %v, %i = kiln.top_k %x {k = 5 : i64, axis = 1 : i64} : tensor<3x4xf32> -> tensor<3x5xf32>, tensor<3x5xi64>
  return %v, %i : tensor<3x5xf32>, tensor<3x5xi64>
}

// -----

func.func @reverse_sequence_same_axes(%x: tensor<4x4xf32>, %l: tensor<4xi64>) -> tensor<4x4xf32> {
  // expected-error @+2 {{batch_axis 0 and time_axis 0 must be two different axes of rank 2}}
  // expected-error @+1 {{'kiln.reverse_sequence' op failed to infer returned types}}
  %y = kiln.reverse_sequence %x, %l {batch_axis = 0 : i64, time_axis = 0 : i64} : (tensor<4x4xf32>, tensor<4xi64>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

func.func @det_not_square(%x: tensor<2x3xf32>) -> tensor<f32> {
  // expected-error @+2 {{expects square matrices [..., M, M], got [2,3]}}
  // expected-error @+1 {{'kiln.det' op failed to infer returned types}}
  %y = kiln.det %x : tensor<2x3xf32> -> tensor<f32>
  return %y : tensor<f32>
}

// -----

func.func @compress_other_dims(%x: tensor<3x2xf32>, %c: tensor<3xi1>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.compress' op result [2,3] differs from the input [3,2] outside axis 0}}
  %y = kiln.compress %x, %c {axis = 0 : i64} : (tensor<3x2xf32>, tensor<3xi1>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @non_zero_rank(%x: tensor<2x2xf32>) -> tensor<3x3xi64> {
  // expected-error @+1 {{'kiln.non_zero' op result [3,3] must be [rank, count] with rank 2}}
  %y = kiln.non_zero %x : tensor<2x2xf32> -> tensor<3x3xi64>
  return %y : tensor<3x3xi64>
}

// -----

func.func @unique_inverse_shape(%x: tensor<6xf32>) -> (tensor<4xf32>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>) {
  // expected-error @+1 {{'kiln.unique' op expects indices and counts of shape [4] and inverse of shape [6]}}
  %y, %i, %v, %c = kiln.unique %x {axis = 0 : i64} : tensor<6xf32> -> tensor<4xf32>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>
  return %y, %i, %v, %c : tensor<4xf32>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>
}

// -----

func.func @random_distribution() -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.random' op distribution 'poisson' is not one of uniform, normal}}
  %y = kiln.random {distribution = "poisson", seed = 0 : i64, seeded = false} -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @random_symbolic() -> tensor<?xf32> {
  // expected-error @+1 {{'kiln.random' op result [?] has symbolic dimensions but no `like` operand to take them from}}
  %y = kiln.random {distribution = "uniform", seed = 0 : i64, seeded = false} -> tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

func.func @random_like_shape(%x: tensor<?x3xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'kiln.random' op result [?,4] must have the shape of `like`, [?,3]}}
  %y = kiln.random %x : tensor<?x3xf32> {distribution = "uniform", seed = 0 : i64, seeded = false} -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
