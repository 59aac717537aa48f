// RUN: kiln-opt %s --split-input-file --kiln-fold-constant-weights | FileCheck %s

// Weight-only quantization: int8 weights times a scale per row (a
// DequantizeLinear on axis 0 of MatMul weights, which the integer kernels
// cannot take) become one f32 constant: [[1, 2], [-3, 4]] * [[0.5], [2]].

// CHECK-LABEL: func.func @per_row_scales
// CHECK: %[[W:.+]] = kiln.constant dense_resource<folded_weights> : tensor<2x2xf32>
// CHECK: kiln.matmul %arg0, %[[W]]
// CHECK: folded_weights: "0x040000000000003F0000803F0000C0C000000041"
func.func @per_row_scales(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = kiln.constant dense<[[1, 2], [-3, 4]]> : tensor<2x2xi8>
  %s0 = kiln.constant dense<[5.000000e-01, 2.000000e+00]> : tensor<2xf32>
  %s = kiln.reshape %s0 : tensor<2xf32> to tensor<2x1xf32>
  %wf = kiln.cast %w to f32 : tensor<2x2xi8> -> tensor<2x2xf32>
  %wd = kiln.mul %wf, %s : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
  %y = kiln.matmul %x, %wd : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// Blocked quantization (opset 21): the scales of blocks of 2 rows repeated
// by a gather, a zero point subtracted, and the result transposed for the
// product: ((w - 1) * s[row / 2])^T.

// CHECK-LABEL: func.func @blocked_transposed
// CHECK: %[[W:.+]] = kiln.constant dense_resource<folded_weights> : tensor<2x4xf32>
// CHECK: kiln.matmul %arg0, %[[W]]
// CHECK-NOT: kiln.gather
// w - 1 = [[0, 2], [-2, 4], [1, 1], [3, -1]], scales 1 and 0.5 by pairs of
// rows, transposed: [[0, -2, 0.5, 1.5], [2, 4, 0.5, -0.5]].
// CHECK: folded_weights: "0x0400000000000000000000C00000003F0000C03F00000040000080400000003F000000BF"
func.func @blocked_transposed(%x: tensor<1x2xf32>) -> tensor<1x4xf32> {
  %w = kiln.constant dense<[[1, 3], [-1, 5], [2, 2], [4, 0]]> : tensor<4x2xi8>
  %zp = kiln.constant dense<1.000000e+00> : tensor<f32>
  %s = kiln.constant dense<[[1.000000e+00, 1.000000e+00], [5.000000e-01, 5.000000e-01]]> : tensor<2x2xf32>
  %rows = kiln.constant dense<[0, 0, 1, 1]> : tensor<4xi64>
  %sr = kiln.gather %s, %rows {axis = 0 : i64} : (tensor<2x2xf32>, tensor<4xi64>) -> tensor<4x2xf32>
  %wf = kiln.cast %w to f32 : tensor<4x2xi8> -> tensor<4x2xf32>
  %wc = kiln.sub %wf, %zp : (tensor<4x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  %wd = kiln.mul %wc, %sr : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %wt = kiln.transpose %wd {perm = array<i64: 1, 0>} : tensor<4x2xf32> -> tensor<2x4xf32>
  %y = kiln.matmul %x, %wt : (tensor<1x2xf32>, tensor<2x4xf32>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

// -----

// Left alone: weights that depend on an argument, and a scalar broadcast to
// a larger tensor (the .so would grow).

// CHECK-LABEL: func.func @not_constant
// CHECK-NOT: folded_weights
// CHECK: kiln.matmul %arg0, %{{.+}}
// CHECK: kiln.matmul %arg0, %{{.+}}
func.func @not_constant(%x: tensor<2x2xf32>, %s: tensor<f32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %w = kiln.constant dense<[[1, 2], [-3, 4]]> : tensor<2x2xi8>
  %wf = kiln.cast %w to f32 : tensor<2x2xi8> -> tensor<2x2xf32>
  %wd = kiln.mul %wf, %s : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %y = kiln.matmul %x, %wd : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %one = kiln.constant dense<1.000000e+00> : tensor<f32>
  %zero = kiln.constant dense<0.000000e+00> : tensor<2x1xf32>
  %b = kiln.add %zero, %one : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %wide = kiln.mul %b, %one : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %wb = kiln.reshape %wide : tensor<2x1xf32> to tensor<2x1xf32>
  %c = kiln.constant dense<1.000000e+00> : tensor<1x2xf32>
  %w2 = kiln.mul %wb, %c : (tensor<2x1xf32>, tensor<1x2xf32>) -> tensor<2x2xf32>
  %z = kiln.matmul %x, %w2 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %y, %z : tensor<2x2xf32>, tensor<2x2xf32>
}
