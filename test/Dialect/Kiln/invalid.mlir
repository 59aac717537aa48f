// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// One case per verifier and shape-inference error of the kiln dialect. Shape
// errors come from inferReturnTypes, which reports the reason and then the
// generic "failed to infer returned types".

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

func.func @reshape_element_count(%x: tensor<2x3xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'kiln.reshape' op cannot reshape 6 elements [2,3] into 8 [4,2]}}
  %y = kiln.reshape %x : tensor<2x3xf32> to tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

func.func @reshape_element_type(%x: tensor<2x3xf32>) -> tensor<6xf16> {
  // expected-error @+1 {{'kiln.reshape' op cannot change the element type from 'f32' to 'f16'}}
  %y = kiln.reshape %x : tensor<2x3xf32> to tensor<6xf16>
  return %y : tensor<6xf16>
}

// -----

func.func @transpose_perm_size(%x: tensor<2x3x4xf32>) -> tensor<3x2xf32> {
  // expected-error @+2 {{expects perm of size 3, got 2}}
  // expected-error @+1 {{'kiln.transpose' op failed to infer returned types}}
  %y = kiln.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3x4xf32> -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

func.func @transpose_not_a_permutation(%x: tensor<2x3x4xf32>) -> tensor<3x3x4xf32> {
  // expected-error @+2 {{perm [1,1,2] is not a permutation of 0..2}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.transpose %x {perm = array<i64: 1, 1, 2>} : tensor<2x3x4xf32> -> tensor<3x3x4xf32>
  return %y : tensor<3x3x4xf32>
}

// -----

func.func @transpose_perm_out_of_range(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+2 {{perm [1,2] is not a permutation of 0..1}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.transpose %x {perm = array<i64: 1, 2>} : tensor<2x3xf32> -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

func.func @transpose_wrong_result(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{'kiln.transpose' op inferred type(s) 'tensor<3x2xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @concat_axis(%a: tensor<1x2xf32>) -> tensor<1x4xf32> {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.concat %a, %a {axis = 2 : i64} : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

// -----

func.func @concat_shapes(%a: tensor<1x2xf32>, %b: tensor<2x3xf32>) -> tensor<1x5xf32> {
  // expected-error @+2 {{input shapes [1,2] and [2,3] differ outside axis 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.concat %a, %b {axis = 1 : i64} : (tensor<1x2xf32>, tensor<2x3xf32>) -> tensor<1x5xf32>
  return %y : tensor<1x5xf32>
}

// -----

func.func @concat_ranks(%a: tensor<1x2xf32>, %b: tensor<2xf32>) -> tensor<1x4xf32> {
  // expected-error @+2 {{expects inputs of one rank and element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.concat %a, %b {axis = 1 : i64} : (tensor<1x2xf32>, tensor<2xf32>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

// -----

func.func @concat_no_inputs() -> tensor<1xf32> {
  // expected-error @+2 {{expects at least one input}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.concat {axis = 0 : i64} : () -> tensor<1xf32>
  return %y : tensor<1xf32>
}

// -----

func.func @pad_count(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x6x6xf32> {
  // expected-error @+2 {{expects 8 pads for rank 4, got 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.pad %x {pads = array<i64: 1, 1, 1, 1>} : tensor<1x3x4x4xf32> -> tensor<1x3x6x6xf32>
  return %y : tensor<1x3x6x6xf32>
}

// -----

func.func @pad_negative(%x: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{expects non-negative pads, got [-1,0]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.pad %x {pads = array<i64: -1, 0>} : tensor<4xf32> -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

func.func @gather_axis(%x: tensor<4x3xf32>, %i: tensor<2xi64>) -> tensor<4x2xf32> {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.gather %x, %i {axis = 2 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

func.func @gather_index_type(%x: tensor<4x3xf32>, %i: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.gather' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %y = kiln.gather %x, %i {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Clamping needs at least one element to clamp into.
func.func @gather_empty_axis(%x: tensor<0x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf32> {
  // expected-error @+2 {{cannot gather from axis 0 of size 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.gather %x, %i {axis = 0 : i64} : (tensor<0x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @gather_wrong_result(%x: tensor<4x3xf32>, %i: tensor<2xi64>) -> tensor<4x2xf32> {
  // expected-error @+2 {{'kiln.gather' op inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<4x2xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.gather %x, %i {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

func.func @slice_counts(%x: tensor<4x6xf32>) -> tensor<4x3xf32> {
  // expected-error @+2 {{expects 2 offsets, sizes and strides for rank 2, got 1, 2 and 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.slice %x {offsets = array<i64: 0>, sizes = array<i64: 4, 3>, strides = array<i64: 1, 1>} : tensor<4x6xf32> -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// Negative steps are resolved (or rejected) on import; the op has none.
func.func @slice_negative_stride(%x: tensor<6xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{expects non-negative offsets and sizes and positive strides, got offsets [5], sizes [3], strides [-2]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.slice %x {offsets = array<i64: 5>, sizes = array<i64: 3>, strides = array<i64: -2>} : tensor<6xf32> -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// Positions 2, 4, 6: the last one is past the end of a dimension of 6.
func.func @slice_out_of_bounds(%x: tensor<4x6xf32>) -> tensor<4x3xf32> {
  // expected-error @+2 {{dimension 1 of size 6 has no room for 3 elements from offset 2 with stride 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.slice %x {offsets = array<i64: 0, 2>, sizes = array<i64: 4, 3>, strides = array<i64: 1, 2>} : tensor<4x6xf32> -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

func.func @cast_signed(%x: tensor<4xf32>) -> tensor<4xsi8> {
  // expected-error @+1 {{'kiln.cast' op attribute 'to' failed to satisfy constraint: type attribute of floating-point or signless integer or unsigned integer}}
  %y = kiln.cast %x to si8 : tensor<4xf32> -> tensor<4xsi8>
  return %y : tensor<4xsi8>
}

// -----

func.func @cast_wrong_result(%x: tensor<4xi64>) -> tensor<4xf16> {
  // expected-error @+2 {{'kiln.cast' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<4xf16>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.cast %x to f32 : tensor<4xi64> -> tensor<4xf16>
  return %y : tensor<4xf16>
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// -----

func.func @clip_min_above_max(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.clip' op min 6.000000e+00 exceeds max 0.000000e+00}}
  %y = kiln.clip %x {min = 6.0 : f32, max = 0.0 : f32} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @unary_integer(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'kiln.relu' op operand #0 must be ranked tensor of floating-point values}}
  %y = kiln.relu %x : tensor<4xi32>
  return %y : tensor<4xi32>
}

// -----

func.func @pow_integer(%x: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{'kiln.pow' op operand #0 must be ranked tensor of floating-point values}}
  %y = kiln.pow %x, %x : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %y : tensor<4xi64>
}

// -----

func.func @add_integer_and_float(%a: tensor<3xi64>, %b: tensor<3xf32>) -> tensor<3xi64> {
  // expected-error @+2 {{operand element types 'i64' and 'f32' differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.add %a, %b : (tensor<3xi64>, tensor<3xf32>) -> tensor<3xi64>
  return %y : tensor<3xi64>
}

// -----

func.func @bad_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{shapes [2,3] and [4] do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @element_types_differ(%a: tensor<3xf32>, %b: tensor<3xf16>) -> tensor<3xf32> {
  // expected-error @+2 {{operand element types 'f32' and 'f16' differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.mul %a, %b : (tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

func.func @broadcast_wrong_result(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{'kiln.sub' op inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

//===----------------------------------------------------------------------===//
// Linear algebra and convolution
//===----------------------------------------------------------------------===//

// -----

func.func @matmul_contracting(%a: tensor<2x8xf32>, %b: tensor<4x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{contracting dimensions differ: [2,8] x [4,3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.matmul %a, %b : (tensor<2x8xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x4xf32>) -> tensor<2x4x4xf32> {
  // expected-error @+2 {{batch dimensions of [2,4,8] and [3,8,4] do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.matmul %a, %b : (tensor<2x4x8xf32>, tensor<3x8x4xf32>) -> tensor<2x4x4xf32>
  return %y : tensor<2x4x4xf32>
}

// -----

func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{expects operands of rank 1 or more}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.matmul %a, %b : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @gemm_rank(%a: tensor<4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+2 {{expects 2-D A and B, got [4] and [4,4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.gemm %a, %b : (tensor<4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// With trans_b, B is [N, K]: 10x32 does not contract with K = 64.
func.func @gemm_contracting(%a: tensor<1x64xf32>, %b: tensor<10x32xf32>) -> tensor<1x10xf32> {
  // expected-error @+2 {{contracting dimensions differ: 64 vs 32}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.gemm %a, %b {trans_b = true} : (tensor<1x64xf32>, tensor<10x32xf32>) -> tensor<1x10xf32>
  return %y : tensor<1x10xf32>
}

// -----

func.func @gemm_c(%a: tensor<1x64xf32>, %b: tensor<64x10xf32>, %c: tensor<5xf32>) -> tensor<1x10xf32> {
  // expected-error @+2 {{C of shape [5] does not broadcast to [1,10]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.gemm %a, %b, %c : (tensor<1x64xf32>, tensor<64x10xf32>, tensor<5xf32>) -> tensor<1x10xf32>
  return %y : tensor<1x10xf32>
}

// -----

// C may broadcast to the result but must not grow it.
func.func @gemm_c_grows_result(%a: tensor<1x64xf32>, %b: tensor<64x10xf32>, %c: tensor<4x10xf32>) -> tensor<1x10xf32> {
  // expected-error @+2 {{C of shape [4,10] does not broadcast to [1,10]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.gemm %a, %b, %c : (tensor<1x64xf32>, tensor<64x10xf32>, tensor<4x10xf32>) -> tensor<1x10xf32>
  return %y : tensor<1x10xf32>
}

// -----

func.func @conv_rank(%x: tensor<1x3x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x4x6xf32> {
  // expected-error @+2 {{expects 4-D input and filter, got [1,3,8] and [4,3,3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : (tensor<1x3x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x6xf32>
  return %y : tensor<1x4x6xf32>
}

// -----

func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{input channels 3, filter [4,2,3,3] and group 1 disagree (expects C = filter C * group)}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}

// -----

// 4 output channels do not split into 8 groups.
func.func @conv_group(%x: tensor<1x8x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{input channels 8, filter [4,1,3,3] and group 8 disagree}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 8 : i64} : (tensor<1x8x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_group_zero(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{and group 0 disagree}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 0 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_pads_count(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+2 {{conv2d expects 2 strides, 2 dilations and 4 pads, got 2, 2 and 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

func.func @conv_zero_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{conv2d expects positive strides and dilations and non-negative pads}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.conv2d %x, %w {strides = array<i64: 0, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{bias of shape [3] does not match 4 output channels}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.conv2d %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}

// -----

// Without padding a 3x3 window over 8x8 gives 6x6, not 8x8.
func.func @conv_wrong_result(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+2 {{inferred type(s) 'tensor<1x4x6x6xf32>' are incompatible with return type(s) of operation 'tensor<1x4x8x8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

//===----------------------------------------------------------------------===//
// Pooling and reductions
//===----------------------------------------------------------------------===//

// -----

func.func @pool_rank(%x: tensor<1x4x8xf32>) -> tensor<1x4x4xf32> {
  // expected-error @+2 {{expects a 4-D NCHW input, got [1,4,8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : tensor<1x4x8xf32> -> tensor<1x4x4xf32>
  return %y : tensor<1x4x4xf32>
}

// -----

func.func @pool_kernel(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
  // expected-error @+2 {{expects a 2-D positive kernel_shape}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.avg_pool2d %x {kernel_shape = array<i64: 2, 0>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// -----

func.func @pool_pads_count(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
  // expected-error @+2 {{pooling expects 2 strides, 2 dilations and 4 pads, got 2, 2 and 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0>} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// -----

func.func @global_pool_rank(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{expects rank 3 or more, got [4,8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.global_avg_pool %x : tensor<4x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @reduce_axes_unsorted(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x1x1xf32> {
  // expected-error @+2 {{axes [3,2] must be sorted, unique and in [0, 4)}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.reduce_mean %x {axes = array<i64: 3, 2>} : tensor<1x8x4x4xf32> -> tensor<1x8x1x1xf32>
  return %y : tensor<1x8x1x1xf32>
}

// -----

func.func @reduce_axes_repeated(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x1xf32> {
  // expected-error @+2 {{axes [3,3] must be sorted, unique and in [0, 4)}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.reduce_sum %x {axes = array<i64: 3, 3>} : tensor<1x8x4x4xf32> -> tensor<1x8x4x1xf32>
  return %y : tensor<1x8x4x1xf32>
}

// -----

// Axes are normalized on import: a negative axis is an error here.
func.func @reduce_axes_negative(%x: tensor<1x8xf32>) -> tensor<1x1xf32> {
  // expected-error @+2 {{axes [-1] must be sorted, unique and in [0, 2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.reduce_max %x {axes = array<i64: -1>} : tensor<1x8xf32> -> tensor<1x1xf32>
  return %y : tensor<1x1xf32>
}

// -----

func.func @reduce_keepdims_result(%x: tensor<1x8x4x4xf32>) -> tensor<1x8xf32> {
  // expected-error @+2 {{'kiln.reduce_min' op inferred type(s) 'tensor<1x8x1x1xf32>' are incompatible with return type(s) of operation 'tensor<1x8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.reduce_min %x {axes = array<i64: 2, 3>} : tensor<1x8x4x4xf32> -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

// -----

func.func @batch_norm_params(%x: tensor<1x4x8x8xf32>, %s: tensor<4xf32>, %m: tensor<3xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+2 {{expects per-channel parameters of shape [4], got [3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.batch_norm %x, %s, %s, %m, %s {epsilon = 1.0e-05 : f32} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

func.func @batch_norm_rank(%x: tensor<4xf32>, %s: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{expects rank 2 or more, got [4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.batch_norm %x, %s, %s, %s, %s {epsilon = 1.0e-05 : f32} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @layer_norm_axis(%x: tensor<2x8xf32>, %s: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.layer_norm %x, %s {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

func.func @layer_norm_scale_shape(%x: tensor<2x8xf32>, %s: tensor<4xf32>) -> tensor<2x8xf32> {
  // expected-error @+2 {{scale and bias must broadcast to the normalized shape [8], got [4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8xf32>, tensor<4xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// A bias over the leading dimensions too is not a per-feature parameter.
func.func @layer_norm_bias_rank(%x: tensor<2x8xf32>, %s: tensor<8xf32>, %b: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+2 {{scale and bias must broadcast to the normalized shape [8], got [2,8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.layer_norm %x, %s, %b {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8xf32>, tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

func.func @layer_norm_element_type(%x: tensor<2x8xf32>, %s: tensor<8xf16>) -> tensor<2x8xf32> {
  // expected-error @+2 {{scale and bias must have the input's element type 'f32', got 'f16'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8xf32>, tensor<8xf16>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

func.func @rms_norm_bias(%x: tensor<2x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @+2 {{an rms normalization takes no bias}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.layer_norm %x, %s, %b {axis = 1 : i64, epsilon = 1.0e-05 : f32, rms} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

func.func @softmax_axis(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  // expected-error @+1 {{'kiln.softmax' op axis 2 is out of range for rank 2}}
  %y = kiln.softmax %x {axis = 2 : i64} : tensor<2x10xf32>
  return %y : tensor<2x10xf32>
}

// -----

// Axes are normalized on import: softmax takes no negative axis either.
func.func @softmax_negative_axis(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  // expected-error @+1 {{'kiln.softmax' op axis -1 is out of range for rank 2}}
  %y = kiln.softmax %x {axis = -1 : i64} : tensor<2x10xf32>
  return %y : tensor<2x10xf32>
}

// -----

func.func @compare_element_types(%a: tensor<3xf32>, %b: tensor<3xi64>) -> tensor<3xi1> {
  // expected-error @+2 {{operand element types 'f32' and 'i64' differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.less %a, %b : (tensor<3xf32>, tensor<3xi64>) -> tensor<3xi1>
  return %y : tensor<3xi1>
}

// -----

func.func @compare_result_bool(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'kiln.equal' op result #0 must be ranked tensor of 1-bit signless integer values}}
  %y = kiln.equal %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

func.func @where_condition_broadcast(%c: tensor<4xi1>, %a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{condition shape [4] does not broadcast with [2,3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.where %c, %a, %a : (tensor<4xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// kiln.not flips the bits of bools and integers, not floats.
func.func @not_float(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'kiln.not' op operand #0 must be ranked tensor of signless integer or unsigned integer values}}
  %y = kiln.not %a : tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

func.func @mod_float_needs_fmod(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'kiln.mod' op on floats requires fmod = true}}
  %y = kiln.mod %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

func.func @arg_max_axis(%x: tensor<2x5xf32>) -> tensor<2xi64> {
  // expected-error @+2 {{axis 2 is out of range [0, 2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.arg_max %x {axis = 2 : i64} : tensor<2x5xf32> -> tensor<2xi64>
  return %y : tensor<2xi64>
}

// -----

func.func @dynamic_quant_matmul_k_groups(%x: tensor<4x8xf32>, %w: tensor<1x3x64xi8>, %s: tensor<16xf32>, %sums: tensor<16xi32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{expects 2 groups of 4 along K = 8 in the packed weights, got 3}}
  %0 = kiln.dynamic_quant_matmul %x, %w, %s, %sums : (tensor<4x8xf32>, tensor<1x3x64xi8>, tensor<16xf32>, tensor<16xi32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @dynamic_quant_matmul_scales(%x: tensor<4x8xf32>, %w: tensor<1x2x64xi8>, %s: tensor<32xf32>, %sums: tensor<16xi32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{expects weight_scales of shape [16], got 'tensor<32xf32>'}}
  %0 = kiln.dynamic_quant_matmul %x, %w, %s, %sums : (tensor<4x8xf32>, tensor<1x2x64xi8>, tensor<32xf32>, tensor<16xi32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @bf16_matmul_k_pairs(%x: tensor<4x40xf32>, %w: tensor<1x20x32xbf16>) -> tensor<4x16xf32> {
  // expected-error @+1 {{expects packed weights [1, 32, 32] for K = 40 and N = 16, got 'tensor<1x20x32xbf16>'}}
  %0 = kiln.bf16_matmul %x, %w : (tensor<4x40xf32>, tensor<1x20x32xbf16>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @bf16_matmul_bias(%x: tensor<4x8xf32>, %w: tensor<2x4x32xbf16>, %b: tensor<16xf32>) -> tensor<4x32xf32> {
  // expected-error @+1 {{expects bias of shape [32], got 'tensor<16xf32>'}}
  %0 = kiln.bf16_matmul %x, %w, %b : (tensor<4x8xf32>, tensor<2x4x32xbf16>, tensor<16xf32>) -> tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}

// -----

func.func @bf16_matmul_result(%x: tensor<4x8xf32>, %w: tensor<2x16x32xbf16>) -> tensor<5x32xf32> {
  // expected-error @+1 {{expects the result to keep the input's leading dimensions, got 'tensor<5x32xf32>'}}
  %0 = kiln.bf16_matmul %x, %w : (tensor<4x8xf32>, tensor<2x16x32xbf16>) -> tensor<5x32xf32>
  return %0 : tensor<5x32xf32>
}

// -----

func.func @bf16_matmul_panels(%x: tensor<4x8xf32>, %w: tensor<2x16x32xbf16>) -> tensor<4x10xf32> {
  // expected-error @+1 {{expects packed weights [1, 4, 32] for K = 8 and N = 10, got 'tensor<2x16x32xbf16>'}}
  %0 = kiln.bf16_matmul %x, %w : (tensor<4x8xf32>, tensor<2x16x32xbf16>) -> tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// -----

func.func @bf16_conv2d_result(%x: tensor<1x8x8x4xf32>, %w: tensor<1x32x32xbf16>) -> tensor<1x8x8x16xf32> {
  // expected-error @+1 {{expects result [1, 6, 6, F], got 'tensor<1x8x8x16xf32>'}}
  %0 = kiln.bf16_conv2d %x, %w {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x8x8x4xf32>, tensor<1x32x32xbf16>) -> tensor<1x8x8x16xf32>
  return %0 : tensor<1x8x8x16xf32>
}

// -----

func.func @static_quant_depthwise_channels(%x: tensor<1x8x8x16xf32>, %w: tensor<1x3x8x4xi8>, %s: tensor<16xf32>, %sum: tensor<16xi32>) -> tensor<1x8x8x16xf32> {
  // expected-error @+1 {{expects weights [1, 3, 16, 4] (kernel rows in groups of 4) and 16 result channels, got 'tensor<1x3x8x4xi8>' -> 'tensor<1x8x8x16xf32>'}}
  %0 = kiln.static_quant_depthwise_conv2d %x, %w, %s, %sum {input_scale = 0.02 : f32, input_zero_point = 0 : i64, kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x16xf32>, tensor<1x3x8x4xi8>, tensor<16xf32>, tensor<16xi32>) -> tensor<1x8x8x16xf32>
  return %0 : tensor<1x8x8x16xf32>
}

// -----

func.func @static_quant_depthwise_rows(%x: tensor<1x8x8x16xf32>, %w: tensor<1x5x16x4xi8>, %s: tensor<16xf32>, %sum: tensor<16xi32>) -> tensor<1x8x8x16xf32> {
  // expected-error @+1 {{expects weights [2, 5, 16, 4] (kernel rows in groups of 4) and 16 result channels, got 'tensor<1x5x16x4xi8>' -> 'tensor<1x8x8x16xf32>'}}
  %0 = kiln.static_quant_depthwise_conv2d %x, %w, %s, %sum {input_scale = 0.02 : f32, input_zero_point = 0 : i64, kernel = array<i64: 5, 5>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 2, 2, 2, 2>} : (tensor<1x8x8x16xf32>, tensor<1x5x16x4xi8>, tensor<16xf32>, tensor<16xi32>) -> tensor<1x8x8x16xf32>
  return %0 : tensor<1x8x8x16xf32>
}

// -----

func.func @static_quant_depthwise_zero_point(%x: tensor<1x8x8x16xf32>, %w: tensor<1x3x16x4xi8>, %s: tensor<16xf32>, %sum: tensor<16xi32>) -> tensor<1x8x8x16xf32> {
  // expected-error @+1 {{expects a positive input scale and a zero point in [0, 255], got 2.000000e-02 and 300}}
  %0 = kiln.static_quant_depthwise_conv2d %x, %w, %s, %sum {input_scale = 0.02 : f32, input_zero_point = 300 : i64, kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x16xf32>, tensor<1x3x16x4xi8>, tensor<16xf32>, tensor<16xi32>) -> tensor<1x8x8x16xf32>
  return %0 : tensor<1x8x8x16xf32>
}

// -----

// K = 72: 32 rows of 16 lanes (AMX tile rows, Kp = 128) or 18 (whole lanes,
// the VNNI kernel); 20 is neither.
func.func @static_quant_matmul_k_padding(%x: tensor<2x72xf32>, %w: tensor<1x20x64xi8>, %s: tensor<16xf32>, %sum: tensor<16xi32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{expects packed weights [1, 32 or 18, 64] for K = 72 and N = 16, got 'tensor<1x20x64xi8>'}}
  %0 = kiln.static_quant_matmul %x, %w, %s, %sum {input_scale = 0.02 : f32, input_zero_point = 0 : i64} : (tensor<2x72xf32>, tensor<1x20x64xi8>, tensor<16xf32>, tensor<16xi32>) -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

// The same K in whole lanes verifies.
func.func @static_quant_matmul_lane_k(%x: tensor<2x72xf32>, %w: tensor<1x18x64xi8>, %s: tensor<16xf32>, %sum: tensor<16xi32>) -> tensor<2x16xf32> {
  %0 = kiln.static_quant_matmul %x, %w, %s, %sum {input_scale = 0.02 : f32, input_zero_point = 0 : i64} : (tensor<2x72xf32>, tensor<1x18x64xi8>, tensor<16xf32>, tensor<16xi32>) -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

func.func @bitcast_width(%a: tensor<3xf32>) -> tensor<3xf64> {
  // expected-error @+2 {{cannot bitcast 'f32' to 'f64': the widths differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.bitcast %a to f64 : tensor<3xf32> -> tensor<3xf64>
  return %y : tensor<3xf64>
}

// -----

func.func @upsample_scales(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32> {
  // expected-error @+2 {{expects scales from 1 to 65536, got [1,1,2,0]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.upsample_nearest %x {scales = array<i64: 1, 1, 2, 0>} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  return %y : tensor<1x3x8x8xf32>
}

// -----

func.func @loop_carried_type(%m: tensor<i64>, %h: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'kiln.loop' op loop-carried value 0 must keep its type 'tensor<2xf32>' in the body argument, yield and result}}
  %r = "kiln.loop"(%m, %h) <{scan_bound = 0 : i64}> ({
  ^bb0(%i: tensor<i64>, %v: tensor<2xf32>):
    kiln.yield %v : tensor<2xf32>
  }) : (tensor<i64>, tensor<2xf32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

func.func @loop_scan_shape(%m: tensor<i64>, %h: tensor<2xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{'kiln.loop' op scan output 0 'tensor<?x3xf32>' is not the yielded slices 'tensor<2xf32>' stacked on a new axis 0}}
  %r = "kiln.loop"(%m) <{scan_bound = 4 : i64}> ({
  ^bb0(%i: tensor<i64>):
    kiln.yield %h : tensor<2xf32>
  }) : (tensor<i64>) -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}

// -----

func.func @loop_negative_bound(%m: tensor<i64>, %h: tensor<2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'kiln.loop' op scan outputs need a non-negative scan_bound}}
  %r = "kiln.loop"(%m) <{scan_bound = -1 : i64}> ({
  ^bb0(%i: tensor<i64>):
    kiln.yield %h : tensor<2xf32>
  }) : (tensor<i64>) -> tensor<?x2xf32>
  return %r : tensor<?x2xf32>
}

// -----

// kiln.integer_matmul: K = 10 is 3 lanes of 4, not 2.
func.func @integer_matmul_packing(%x: tensor<4x10xui8>, %zp: tensor<i32>, %w: tensor<2x2x64xi8>, %s: tensor<20xi32>) -> tensor<4x20xi32> {
  // expected-error @+1 {{expects packed weights [2, 3, 64] for K = 10 and N = 20, got 'tensor<2x2x64xi8>'}}
  %0 = kiln.integer_matmul %x, %zp, %w, %s : (tensor<4x10xui8>, tensor<i32>, tensor<2x2x64xi8>, tensor<20xi32>) -> tensor<4x20xi32>
  return %0 : tensor<4x20xi32>
}

// -----

func.func @integer_matmul_zero_point(%x: tensor<4x10xui8>, %zp: tensor<2xi32>, %w: tensor<2x3x64xi8>, %s: tensor<20xi32>) -> tensor<4x20xi32> {
  // expected-error @+1 {{expects a one-element zero point, got 'tensor<2xi32>'}}
  %0 = kiln.integer_matmul %x, %zp, %w, %s : (tensor<4x10xui8>, tensor<2xi32>, tensor<2x3x64xi8>, tensor<20xi32>) -> tensor<4x20xi32>
  return %0 : tensor<4x20xi32>
}

// -----

func.func @integer_matmul_sums(%x: tensor<4x10xui8>, %zp: tensor<i32>, %w: tensor<2x3x64xi8>, %s: tensor<16xi32>) -> tensor<4x20xi32> {
  // expected-error @+1 {{expects weight sums of shape [20], got 'tensor<16xi32>'}}
  %0 = kiln.integer_matmul %x, %zp, %w, %s : (tensor<4x10xui8>, tensor<i32>, tensor<2x3x64xi8>, tensor<16xi32>) -> tensor<4x20xi32>
  return %0 : tensor<4x20xi32>
}

// -----

// kiln.integer_conv2d: a 3x3 window with pads 1 keeps 5x5, not 3x3.
func.func @integer_conv2d_result(%x: tensor<1x5x5x4xui8>, %zp: tensor<i32>, %w: tensor<1x9x64xi8>, %s: tensor<2xi32>) -> tensor<1x3x3x2xi32> {
  // expected-error @+1 {{expects result [1, 5, 5, F], got 'tensor<1x3x3x2xi32>'}}
  %0 = kiln.integer_conv2d %x, %zp, %w, %s {dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x5x5x4xui8>, tensor<i32>, tensor<1x9x64xi8>, tensor<2xi32>) -> tensor<1x3x3x2xi32>
  return %0 : tensor<1x3x3x2xi32>
}

// -----

// kiln.integer_depthwise_conv2d: the weights hold 4 kernel rows of each of
// the input's channels per lane.
func.func @integer_depthwise_weights(%x: tensor<1x8x8x16xui8>, %zp: tensor<i32>, %w: tensor<1x3x8x4xi8>, %s: tensor<16xi32>) -> tensor<1x8x8x16xi32> {
  // expected-error @+1 {{expects weights [1, 3, 16, 4] (kernel rows in groups of 4) and 16 result channels, got 'tensor<1x3x8x4xi8>' -> 'tensor<1x8x8x16xi32>'}}
  %0 = kiln.integer_depthwise_conv2d %x, %zp, %w, %s {dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x8x16xui8>, tensor<i32>, tensor<1x3x8x4xi8>, tensor<16xi32>) -> tensor<1x8x8x16xi32>
  return %0 : tensor<1x8x8x16xi32>
}

// -----

func.func @integer_depthwise_zero_point(%x: tensor<1x8x8x16xui8>, %zp: tensor<2xi32>, %w: tensor<1x3x16x4xi8>, %s: tensor<16xi32>) -> tensor<1x8x8x16xi32> {
  // expected-error @+1 {{expects a one-element zero point, got 'tensor<2xi32>'}}
  %0 = kiln.integer_depthwise_conv2d %x, %zp, %w, %s {dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x8x16xui8>, tensor<2xi32>, tensor<1x3x16x4xi8>, tensor<16xi32>) -> tensor<1x8x8x16xi32>
  return %0 : tensor<1x8x8x16xi32>
}

// -----

// A stride of 0 is refused before the output size is computed (it would
// divide by it).
func.func @integer_depthwise_stride(%x: tensor<1x8x8x16xui8>, %zp: tensor<i32>, %w: tensor<1x3x16x4xi8>, %s: tensor<16xi32>) -> tensor<1x8x8x16xi32> {
  // expected-error @+1 {{expects a kernel, strides and dilations of at least 1 and pads of at least 0}}
  %0 = kiln.integer_depthwise_conv2d %x, %zp, %w, %s {dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 0, 1>} : (tensor<1x8x8x16xui8>, tensor<i32>, tensor<1x3x16x4xi8>, tensor<16xi32>) -> tensor<1x8x8x16xi32>
  return %0 : tensor<1x8x8x16xi32>
}
