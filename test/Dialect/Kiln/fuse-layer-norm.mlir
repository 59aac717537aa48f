// RUN: kiln-opt %s --split-input-file --kiln-fuse-layer-norm | FileCheck %s

// LayerNorm as Paddle2ONNX and pre-opset-17 exporters write it becomes one
// kiln.layer_norm with gamma, beta and epsilon taken from the chain.

// CHECK-LABEL: func.func @written_out
// CHECK-SAME: (%[[X:.+]]: tensor<2x8x16xf32>, %[[G:.+]]: tensor<16xf32>, %[[B:.+]]: tensor<16xf32>)
// CHECK: %[[Y:.+]] = kiln.layer_norm %[[X]], %[[G]], %[[B]] {axis = 2 : i64, epsilon = 9.99999974E-6 : f32}
// CHECK-NOT: kiln.reduce_mean
// CHECK-NOT: kiln.sqrt
// CHECK: return %[[Y]]
func.func @written_out(%x: tensor<2x8x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x8x16xf32> {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-5> : tensor<f32>
  %m = kiln.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : tensor<2x8x16xf32> -> tensor<2x8x1xf32>
  %d = kiln.sub %x, %m : (tensor<2x8x16xf32>, tensor<2x8x1xf32>) -> tensor<2x8x16xf32>
  %sq = kiln.pow %d, %two : (tensor<2x8x16xf32>, tensor<f32>) -> tensor<2x8x16xf32>
  %v = kiln.reduce_mean %sq {axes = array<i64: 2>, keepdims = true} : tensor<2x8x16xf32> -> tensor<2x8x1xf32>
  %ve = kiln.add %v, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %s = kiln.sqrt %ve : tensor<2x8x1xf32>
  %n = kiln.div %d, %s : (tensor<2x8x16xf32>, tensor<2x8x1xf32>) -> tensor<2x8x16xf32>
  %y0 = kiln.mul %n, %g : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  %y = kiln.add %y0, %b : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}

// -----

// d*d for the square, Pow 0.5 for the root, epsilon on the left, and no
// affine part: gamma becomes a constant of ones.

// CHECK-LABEL: func.func @variants
// CHECK: %[[ONES:.+]] = kiln.constant dense<1.000000e+00> : tensor<4x6xf32>
// CHECK: kiln.layer_norm %arg0, %[[ONES]] {axis = 1 : i64, epsilon = 1.000000e-03 : f32}
// CHECK-NOT: kiln.div
func.func @variants(%x: tensor<3x4x6xf32>) -> tensor<3x4x6xf32> {
  %half = kiln.constant dense<0.5> : tensor<f32>
  %eps = kiln.constant dense<1.0e-3> : tensor<1xf32>
  %m = kiln.reduce_mean %x {axes = array<i64: 1, 2>, keepdims = true} : tensor<3x4x6xf32> -> tensor<3x1x1xf32>
  %d = kiln.sub %x, %m : (tensor<3x4x6xf32>, tensor<3x1x1xf32>) -> tensor<3x4x6xf32>
  %sq = kiln.mul %d, %d : (tensor<3x4x6xf32>, tensor<3x4x6xf32>) -> tensor<3x4x6xf32>
  %v = kiln.reduce_mean %sq {axes = array<i64: 1, 2>, keepdims = true} : tensor<3x4x6xf32> -> tensor<3x1x1xf32>
  %ve = kiln.add %eps, %v : (tensor<1xf32>, tensor<3x1x1xf32>) -> tensor<3x1x1xf32>
  %s = kiln.pow %ve, %half : (tensor<3x1x1xf32>, tensor<f32>) -> tensor<3x1x1xf32>
  %n = kiln.div %d, %s : (tensor<3x4x6xf32>, tensor<3x1x1xf32>) -> tensor<3x4x6xf32>
  return %n : tensor<3x4x6xf32>
}

// -----

// A gamma of ones folds away before this pass (x * 1 is x) but beta stays
// (x + 0 is not x for -0), as in fp16-converted models: + beta right after
// the division is still the affine part.

// CHECK-LABEL: func.func @beta_without_gamma
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK: %[[ONES:.+]] = kiln.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK: %[[Y:.+]] = kiln.layer_norm %[[X]], %[[ONES]], %[[B]] {axis = 1 : i64
// CHECK-NOT: kiln.add
// CHECK: return %[[Y]]
func.func @beta_without_gamma(%x: tensor<2x8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-5> : tensor<f32>
  %m = kiln.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<2x8xf32> -> tensor<2x1xf32>
  %d = kiln.sub %x, %m : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %sq = kiln.pow %d, %two : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %v = kiln.reduce_mean %sq {axes = array<i64: 1>, keepdims = true} : tensor<2x8xf32> -> tensor<2x1xf32>
  %ve = kiln.add %v, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %s = kiln.sqrt %ve : tensor<2x1xf32>
  %n = kiln.div %d, %s : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %y = kiln.add %n, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// The centred value is also an output: rewriting would compute it twice,
// so the chain stays as it is.

// CHECK-LABEL: func.func @not_fused
// CHECK-NOT: kiln.layer_norm
// CHECK: return
func.func @not_fused(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %eps = kiln.constant dense<1.0e-5> : tensor<f32>
  %m = kiln.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<2x8xf32> -> tensor<2x1xf32>
  %d = kiln.sub %x, %m : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %sq = kiln.mul %d, %d : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %v = kiln.reduce_mean %sq {axes = array<i64: 1>, keepdims = true} : tensor<2x8xf32> -> tensor<2x1xf32>
  %ve = kiln.add %v, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %s = kiln.sqrt %ve : tensor<2x1xf32>
  %n = kiln.div %d, %s : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  return %n, %d : tensor<2x8xf32>, tensor<2x8xf32>
}
