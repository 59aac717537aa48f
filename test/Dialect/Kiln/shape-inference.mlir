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
  // The dilated 3x3 kernel spans 5. H: (9 + 1 + 1 - 5) / 2 + 1 = 4;
  // W: (9 - 5) / 2 + 1 = 3.
  %0 = kiln.conv2d %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 0>, group = 1 : i64} : (tensor<1x3x9x9xf32>, tensor<8x3x3x3xf32>) -> tensor<?x?x?x?xf32>
  // H: ceil((4 - 3) / 2) + 1 = 2; W: ceil((3 - 2) / 2) + 1 = 2 (floor: 1 and 1).
  %1 = kiln.avg_pool2d %0 {kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, ceil_mode = true} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  return %1 : tensor<?x?x?x?xf32>
}

// -----

// CHECK-LABEL: func.func @layout_and_linear_algebra
// CHECK-SAME: -> (tensor<4x2x3xf32>, tensor<5x2x8x4xf32>, tensor<16x16xf32>)
// CHECK: kiln.transpose {{.+}} -> tensor<4x2x3xf32>
// CHECK: kiln.matmul {{.+}} -> tensor<5x2x8x4xf32>
// CHECK: kiln.gemm {{.+}} -> tensor<16x16xf32>
func.func @layout_and_linear_algebra(%x: tensor<2x3x4xf32>, %a: tensor<2x8x16xf32>, %b: tensor<5x1x16x4xf32>, %w: tensor<10x16xf32>, %c: tensor<16xf32>) -> (tensor<?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?xf32>) {
  %t = kiln.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<?x?x?xf32>
  // Batch dimensions broadcast: [2] with [5, 1] gives [5, 2].
  %m = kiln.matmul %a, %b : (tensor<2x8x16xf32>, tensor<5x1x16x4xf32>) -> tensor<?x?x?x?xf32>
  // With trans_a, A = [10, 16] is read as [K, M]: w^T w is [16, 16].
  %g = kiln.gemm %w, %w, %c {trans_a = true} : (tensor<10x16xf32>, tensor<10x16xf32>, tensor<16xf32>) -> tensor<?x?xf32>
  return %t, %m, %g : tensor<?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @data_movement_and_reductions
// CHECK-SAME: -> (tensor<1x5xf32>, tensor<3x7xf32>, tensor<1x8xf32>, tensor<1x8x1x1xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>)
// CHECK: kiln.concat {{.+}} -> tensor<1x5xf32>
// CHECK: kiln.pad {{.+}} -> tensor<3x7xf32>
// CHECK: kiln.reduce_mean {{.+}} -> tensor<1x8xf32>
// CHECK: kiln.global_avg_pool {{.+}} -> tensor<1x8x1x1xf32>
// CHECK: kiln.batch_norm {{.+}} -> tensor<1x8x4x4xf32>
// CHECK: kiln.softmax {{.+}} : tensor<1x8x4x4xf32>
func.func @data_movement_and_reductions(%a: tensor<1x2xf32>, %b: tensor<1x3xf32>, %x: tensor<1x8x4x4xf32>, %p: tensor<8xf32>)
    -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) {
  %0 = kiln.concat %a, %b {axis = 1 : i64} : (tensor<1x2xf32>, tensor<1x3xf32>) -> tensor<?x?xf32>
  %1 = kiln.pad %0 {pads = array<i64: 1, 0, 1, 2>} : tensor<?x?xf32> -> tensor<?x?xf32>
  %2 = kiln.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = false} : tensor<1x8x4x4xf32> -> tensor<?x?xf32>
  %3 = kiln.global_avg_pool %x : tensor<1x8x4x4xf32> -> tensor<?x?x?x?xf32>
  %4 = kiln.batch_norm %x, %p, %p, %p, %p {epsilon = 1.0e-05 : f32} : (tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x?x?xf32>
  %5 = kiln.softmax %4 {axis = 1 : i64} : tensor<?x?x?x?xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
}

// -----

// A dynamic input dimension stays dynamic; static ones are still refined.
// CHECK-LABEL: func.func @dynamic_input
// CHECK-SAME: (%{{.+}}: tensor<?x3xf32>, %{{.+}}: tensor<3xf32>) -> tensor<?x3xf32>
// CHECK: kiln.add {{.+}} -> tensor<?x3xf32>
func.func @dynamic_input(%a: tensor<?x3xf32>, %b: tensor<3xf32>) -> tensor<?x?xf32> {
  %0 = kiln.add %a, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// A result already more static than what can be inferred keeps its type.
// CHECK-LABEL: func.func @never_less_static
// CHECK-SAME: -> tensor<4x3xf32>
// CHECK: kiln.add {{.+}} -> tensor<4x3xf32>
func.func @never_less_static(%a: tensor<?x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.add %a, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// A reshape's result type is its target shape: nothing to infer.
// CHECK-LABEL: func.func @reshape_keeps_target
// CHECK: kiln.reshape {{.+}} : tensor<2x?xf32> to tensor<?x2xf32>
func.func @reshape_keeps_target(%a: tensor<2x?xf32>) -> tensor<?x2xf32> {
  %0 = kiln.reshape %a : tensor<2x?xf32> to tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}
