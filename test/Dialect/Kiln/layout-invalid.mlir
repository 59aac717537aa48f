// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// The layout attribute of convolution and pooling.

func.func @conv_layout_name(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{expects layout "NCHW" or "NHWC", got "NWHC"}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64, layout = "NWHC"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}

// -----

// An NHWC convolution reads channels from the last input dimension and the
// HWCF filter's third.
func.func @conv_nhwc_filter(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x4x8xf32>) -> tensor<1x6x6x8xf32> {
  // expected-error @+2 {{input channels 3, filter [3,3,4,8] and group 1 disagree (expects C = filter C * group)}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64, layout = "NHWC"} : (tensor<1x8x8x3xf32>, tensor<3x3x4x8xf32>) -> tensor<1x6x6x8xf32>
  return %y : tensor<1x6x6x8xf32>
}

// -----

// NHWC pooling keeps channels last.
func.func @pool_nhwc_result(%x: tensor<1x8x8x3xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.max_pool2d' op inferred type(s) 'tensor<1x4x4x3xf32>' are incompatible with return type(s) of operation 'tensor<1x3x4x4xf32>'}}
  %y = kiln.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, layout = "NHWC"} : tensor<1x8x8x3xf32> -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}
