// RUN: kiln-opt %s --split-input-file --kiln-integer-products-on-vnni | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-integer-products-in-f32=keep-vnni-products | FileCheck %s --check-prefix=KEEP
// On AVX2 targets (the int8 kernel's vpmaddwd form, no depthwise kernel):
// RUN: kiln-opt %s --split-input-file --kiln-integer-products-on-vnni=depthwise=false | FileCheck %s --check-prefix=AVX2
// RUN: kiln-opt %s --split-input-file --kiln-integer-products-in-f32="keep-vnni-products keep-depthwise=false" | FileCheck %s --check-prefix=AVX2F32

// ConvInteger after DynamicQuantizeLinear (NHWC after the layout pass): the
// uint8 input goes to the int8 kernel as it is, with its zero point, the
// filter packed [ceil(F / 16), ceil(K / 4), 64] with K = 3 * 3 * 4 = 36,
// and the column sums (each filter column sums 36 * -2 = -72).

// CHECK-LABEL: func.func @conv_integer
// CHECK-DAG: %[[W:.+]] = kiln.constant dense_resource<int8_weights> : tensor<1x9x64xi8>
// CHECK-DAG: %[[S:.+]] = kiln.constant dense<-72> : tensor<2xi32>
// CHECK-DAG: %[[ZP:.+]] = kiln.cast %arg1 to i32
// CHECK: %[[Y:.+]] = kiln.integer_conv2d %arg0, %[[ZP]], %[[W]], %[[S]] {dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x5x5x4xui8>, tensor<i32>, tensor<1x9x64xi8>, tensor<2xi32>) -> tensor<1x5x5x2xi32>
// CHECK-NOT: kiln.conv2d
// CHECK: kiln.cast %[[Y]] to f32

// KEEP-LABEL: func.func @conv_integer
// KEEP: kiln.conv2d {{.*}} -> tensor<1x5x5x2xi32>
// AVX2-LABEL: func.func @conv_integer
// AVX2: kiln.integer_conv2d
// AVX2F32-LABEL: func.func @conv_integer
// AVX2F32: kiln.conv2d {{.*}} -> tensor<1x5x5x2xi32>
func.func @conv_integer(%x: tensor<1x5x5x4xui8>, %zp: tensor<ui8>) -> tensor<1x5x5x2xf32> {
  %w = kiln.constant dense<-2> : tensor<3x3x4x2xi8>
  %x32 = kiln.cast %x to i32 : tensor<1x5x5x4xui8> -> tensor<1x5x5x4xi32>
  %zp32 = kiln.cast %zp to i32 : tensor<ui8> -> tensor<i32>
  %xc = kiln.sub %x32, %zp32 : (tensor<1x5x5x4xi32>, tensor<i32>) -> tensor<1x5x5x4xi32>
  %w32 = kiln.cast %w to i32 : tensor<3x3x4x2xi8> -> tensor<3x3x4x2xi32>
  %acc = kiln.conv2d %xc, %w32 {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "NHWC", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x5x5x4xi32>, tensor<3x3x4x2xi32>) -> tensor<1x5x5x2xi32>
  %f = kiln.cast %acc to f32 : tensor<1x5x5x2xi32> -> tensor<1x5x5x2xf32>
  return %f : tensor<1x5x5x2xf32>
}

// -----

// MatMulInteger without zero points (a uint8 input widened as it is): the
// zero point is a constant 0; a 3-D input keeps its leading dimensions.

// CHECK-LABEL: func.func @matmul_no_zero_point
// CHECK-DAG: %[[Z:.+]] = kiln.constant dense<0> : tensor<i32>
// CHECK-DAG: %[[W:.+]] = kiln.constant dense_resource<int8_weights> : tensor<2x3x64xi8>
// CHECK-DAG: %[[S:.+]] = kiln.constant dense<127> : tensor<20xi32>
// CHECK: kiln.integer_matmul %arg0, %[[Z]], %[[W]], %[[S]] : (tensor<2x4x10xui8>, tensor<i32>, tensor<2x3x64xi8>, tensor<20xi32>) -> tensor<2x4x20xi32>
func.func @matmul_no_zero_point(%a: tensor<2x4x10xui8>) -> tensor<2x4x20xi32> {
  %w = kiln.constant dense<[[127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                            [0, 127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                            [0, 0, 127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                            [0, 0, 0, 127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                            [0, 0, 0, 0, 127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                            [0, 0, 0, 0, 0, 127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                            [0, 0, 0, 0, 0, 0, 127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                            [0, 0, 0, 0, 0, 0, 0, 127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                            [0, 0, 0, 0, 0, 0, 0, 0, 127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                            [0, 0, 0, 0, 0, 0, 0, 0, 0, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127, 127]]> : tensor<10x20xi8>
  %a32 = kiln.cast %a to i32 : tensor<2x4x10xui8> -> tensor<2x4x10xi32>
  %w32 = kiln.cast %w to i32 : tensor<10x20xi8> -> tensor<10x20xi32>
  %acc = kiln.matmul %a32, %w32 : (tensor<2x4x10xi32>, tensor<10x20xi32>) -> tensor<2x4x20xi32>
  return %acc : tensor<2x4x20xi32>
}

// -----

// A transpose between the widening and the product (the layout pass's, when
// it did not cancel) moves onto the uint8 input; the i32 bias of a
// QLinearConv is added to the product.

// CHECK-LABEL: func.func @transposed_with_bias
// CHECK: %[[T:.+]] = kiln.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>} : tensor<1x4x3x3xui8> -> tensor<1x3x3x4xui8>
// CHECK: %[[Y:.+]] = kiln.integer_conv2d %[[T]]
// CHECK: kiln.add %[[Y]], %arg1 : (tensor<1x3x3x16xi32>, tensor<16xi32>) -> tensor<1x3x3x16xi32>
func.func @transposed_with_bias(%x: tensor<1x4x3x3xui8>, %b: tensor<16xi32>) -> tensor<1x3x3x16xi32> {
  %w = kiln.constant dense<1> : tensor<1x1x4x16xi8>
  %x32 = kiln.cast %x to i32 : tensor<1x4x3x3xui8> -> tensor<1x4x3x3xi32>
  %xt = kiln.transpose %x32 {perm = array<i64: 0, 2, 3, 1>} : tensor<1x4x3x3xi32> -> tensor<1x3x3x4xi32>
  %w32 = kiln.cast %w to i32 : tensor<1x1x4x16xi8> -> tensor<1x1x4x16xi32>
  %acc = kiln.conv2d %xt, %w32, %b {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "NHWC", pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x3x4xi32>, tensor<1x1x4x16xi32>, tensor<16xi32>) -> tensor<1x3x3x16xi32>
  return %acc : tensor<1x3x3x16xi32>
}

// -----

// A depthwise ConvInteger (one channel per group, 4 channels): the filter
// [3, 3, 1, 4] (tap (kh, kw) of channel c holds 3 kh + kw + 1 + 10 c) packed
// with 4 kernel rows of a channel per 32-bit lane, [1, 3, 4, 4], the fourth
// row zero; per-channel sums 45 + 90 c.

// CHECK-LABEL: func.func @depthwise
// CHECK-DAG: %[[W:.+]] = kiln.constant dense<{{\[\[\[\[}}1, 4, 7, 0], [11, 14, 17, 0], [21, 24, 27, 0], [31, 34, 37, 0]], {{\[\[}}2, 5, 8, 0], [12, 15, 18, 0], [22, 25, 28, 0], [32, 35, 38, 0]], {{\[\[}}3, 6, 9, 0], [13, 16, 19, 0], [23, 26, 29, 0], [33, 36, 39, 0]]]]> : tensor<1x3x4x4xi8>
// CHECK-DAG: %[[S:.+]] = kiln.constant dense<[45, 135, 225, 315]> : tensor<4xi32>
// CHECK-DAG: %[[ZP:.+]] = kiln.cast %arg1 to i32
// CHECK: kiln.integer_depthwise_conv2d %arg0, %[[ZP]], %[[W]], %[[S]] {dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x6x6x4xui8>, tensor<i32>, tensor<1x3x4x4xi8>, tensor<4xi32>) -> tensor<1x3x3x4xi32>
// CHECK-NOT: kiln.conv2d
// KEEP-LABEL: func.func @depthwise
// KEEP: kiln.conv2d {{.*}} -> tensor<1x3x3x4xi32>
// Without a depthwise kernel it stays an i32 convolution for the f32 pass,
// which runs it on f32 values with a constant f32 filter.
// AVX2-LABEL: func.func @depthwise
// AVX2-NOT: kiln.integer_depthwise_conv2d
// AVX2: kiln.conv2d {{.*}} -> tensor<1x3x3x4xi32>
// AVX2-NOT: kiln.integer_depthwise_conv2d
// AVX2F32-LABEL: func.func @depthwise
// AVX2F32: %[[F:.+]] = kiln.constant dense_resource<integer_weights_f32> : tensor<3x3x1x4xf32>
// AVX2F32: kiln.conv2d %{{.+}}, %[[F]] {{.*}} -> tensor<1x3x3x4xf32>
func.func @depthwise(%x: tensor<1x6x6x4xui8>, %zp: tensor<ui8>) -> tensor<1x3x3x4xf32> {
  %w = kiln.constant dense<[[[[1,11,21,31]],[[2,12,22,32]],[[3,13,23,33]]],[[[4,14,24,34]],[[5,15,25,35]],[[6,16,26,36]]],[[[7,17,27,37]],[[8,18,28,38]],[[9,19,29,39]]]]> : tensor<3x3x1x4xi8>
  %x32 = kiln.cast %x to i32 : tensor<1x6x6x4xui8> -> tensor<1x6x6x4xi32>
  %zp32 = kiln.cast %zp to i32 : tensor<ui8> -> tensor<i32>
  %xc = kiln.sub %x32, %zp32 : (tensor<1x6x6x4xi32>, tensor<i32>) -> tensor<1x6x6x4xi32>
  %w32 = kiln.cast %w to i32 : tensor<3x3x1x4xi8> -> tensor<3x3x1x4xi32>
  %acc = kiln.conv2d %xc, %w32 {dilations = array<i64: 1, 1>, group = 4 : i64, layout = "NHWC", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x6x6x4xi32>, tensor<3x3x1x4xi32>) -> tensor<1x3x3x4xi32>
  %f = kiln.cast %acc to f32 : tensor<1x3x3x4xi32> -> tensor<1x3x3x4xf32>
  return %f : tensor<1x3x3x4xf32>
}

// -----

// Left alone: a filter whose values after its zero point leave int8 (-127
// - 3), a depthwise convolution on 2 channels (the kernel's vectors take 4,
// 8 or 16), a grouped one (2 channels per group), and an activation that is
// not uint8.

// CHECK-LABEL: func.func @not_int8_weights
// CHECK: kiln.conv2d
// CHECK-NOT: kiln.integer_conv2d
// KEEP-LABEL: func.func @not_int8_weights
// KEEP: kiln.conv2d {{.*}} -> tensor<1x1x1x2xf32>
func.func @not_int8_weights(%x: tensor<1x1x1x1xui8>) -> tensor<1x1x1x2xf32> {
  %w = kiln.constant dense<[[[[-127, 5]]]]> : tensor<1x1x1x2xi8>
  %wzp = kiln.constant dense<3> : tensor<i32>
  %x32 = kiln.cast %x to i32 : tensor<1x1x1x1xui8> -> tensor<1x1x1x1xi32>
  %w32 = kiln.cast %w to i32 : tensor<1x1x1x2xi8> -> tensor<1x1x1x2xi32>
  %wc = kiln.sub %w32, %wzp : (tensor<1x1x1x2xi32>, tensor<i32>) -> tensor<1x1x1x2xi32>
  %acc = kiln.conv2d %x32, %wc {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "NHWC", pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x1x1xi32>, tensor<1x1x1x2xi32>) -> tensor<1x1x1x2xi32>
  %f = kiln.cast %acc to f32 : tensor<1x1x1x2xi32> -> tensor<1x1x1x2xf32>
  return %f : tensor<1x1x1x2xf32>
}

// CHECK-LABEL: func.func @depthwise_two_channels
// CHECK: kiln.conv2d
// CHECK-NOT: kiln.integer_
func.func @depthwise_two_channels(%x: tensor<1x2x2x2xui8>) -> tensor<1x2x2x2xi32> {
  %w = kiln.constant dense<1> : tensor<1x1x1x2xi8>
  %x32 = kiln.cast %x to i32 : tensor<1x2x2x2xui8> -> tensor<1x2x2x2xi32>
  %w32 = kiln.cast %w to i32 : tensor<1x1x1x2xi8> -> tensor<1x1x1x2xi32>
  %acc = kiln.conv2d %x32, %w32 {dilations = array<i64: 1, 1>, group = 2 : i64, layout = "NHWC", pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x2x2xi32>, tensor<1x1x1x2xi32>) -> tensor<1x2x2x2xi32>
  return %acc : tensor<1x2x2x2xi32>
}

// CHECK-LABEL: func.func @grouped
// CHECK: kiln.conv2d
// CHECK-NOT: kiln.integer_
func.func @grouped(%x: tensor<1x2x2x8xui8>) -> tensor<1x2x2x8xi32> {
  %w = kiln.constant dense<1> : tensor<1x1x2x8xi8>
  %x32 = kiln.cast %x to i32 : tensor<1x2x2x8xui8> -> tensor<1x2x2x8xi32>
  %w32 = kiln.cast %w to i32 : tensor<1x1x2x8xi8> -> tensor<1x1x2x8xi32>
  %acc = kiln.conv2d %x32, %w32 {dilations = array<i64: 1, 1>, group = 4 : i64, layout = "NHWC", pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x2x8xi32>, tensor<1x1x2x8xi32>) -> tensor<1x2x2x8xi32>
  return %acc : tensor<1x2x2x8xi32>
}

// CHECK-LABEL: func.func @signed_activation
// CHECK: kiln.matmul
// CHECK-NOT: kiln.integer_matmul
func.func @signed_activation(%a: tensor<4x16xi8>) -> tensor<4x8xi32> {
  %w = kiln.constant dense<1> : tensor<16x8xi8>
  %a32 = kiln.cast %a to i32 : tensor<4x16xi8> -> tensor<4x16xi32>
  %w32 = kiln.cast %w to i32 : tensor<16x8xi8> -> tensor<16x8xi32>
  %acc = kiln.matmul %a32, %w32 : (tensor<4x16xi32>, tensor<16x8xi32>) -> tensor<4x8xi32>
  return %acc : tensor<4x8xi32>
}
