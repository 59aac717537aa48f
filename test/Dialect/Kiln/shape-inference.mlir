// RUN: kiln-opt %s --split-input-file --kiln-shape-inference | FileCheck %s

// Results written with `?` become static, and users see the refined types.
// CHECK-LABEL: func.func @elementwise_chain
// CHECK-SAME: -> tensor<2x3xf32>
// CHECK: %[[A:.+]] = kiln.add %{{.+}}, %{{.+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: %[[R:.+]] = kiln.relu %[[A]] : tensor<2x3xf32>
// CHECK: return %[[R]] : tensor<2x3xf32>
func.func @elementwise_chain(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<?x?xf32> {
  %0 = kiln.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<?x?xf32>
  %1 = kiln.relu %0 : tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}

// -----

// A conv stack: each result is refined before its users are visited.
// CHECK-LABEL: func.func @conv_pool_chain
// CHECK-SAME: -> tensor<1x4x4x4xf32>
// CHECK: kiln.conv2d {{.+}} -> tensor<1x4x8x8xf32>
// CHECK: kiln.max_pool2d {{.+}} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
// CHECK: return %{{.+}} : tensor<1x4x4x4xf32>
func.func @conv_pool_chain(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32> {
  %0 = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x?x?x?xf32>
  %1 = kiln.max_pool2d %0 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : tensor<?x?x?x?xf32> -> tensor<1x4x?x?xf32>
  return %1 : tensor<1x4x?x?xf32>
}

// -----

// Strided, padded and dilated windows; ceil_mode rounds the pool output up.
// CHECK-LABEL: func.func @window_arithmetic
// CHECK: kiln.conv2d {{.+}} -> tensor<1x8x4x3xf32>
// CHECK: kiln.avg_pool2d {{.+}} : tensor<1x8x4x3xf32> -> tensor<1x8x2x2xf32>
func.func @window_arithmetic(%x: tensor<1x3x9x9xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<?x?x?x?xf32> {
  // H: (9 + 1 + 1 - 3) / 2 + 1 = 5 with stride 2... dilation 2 spans 5: (9 + 2 - 5) / 2 + 1 = 4.
  // W: (9 + 0 + 0 - 5) / 2 + 1 = 3.
  %0 = kiln.conv2d %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 0>, group = 1 : i64} : (tensor<1x3x9x9xf32>, tensor<8x3x3x3xf32>) -> tensor<?x?x?x?xf32>
  // H: ceil((4 - 3) / 2) + 1 = 2; W: ceil((3 - 3) / 2) + 1 = 1... with ceil over (3 - 2) = 2.
  %1 = kiln.avg_pool2d %0 {kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, ceil_mode = true} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  return %1 : tensor<?x?x?x?xf32>
}
