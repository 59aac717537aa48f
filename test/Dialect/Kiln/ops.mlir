// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// Every kiln op survives a print/parse round trip with its attributes.

// CHECK-LABEL: func.func @constant_identity
func.func @constant_identity() -> tensor<4xf32> {
  // CHECK: %[[C:.+]] = kiln.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
  %c = kiln.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  // CHECK: kiln.identity %[[C]] : tensor<4xf32>
  %y = kiln.identity %c : tensor<4xf32>
  return %y : tensor<4xf32>
}

// CHECK-LABEL: func.func @integer_constant
func.func @integer_constant() -> tensor<2xi64> {
  // CHECK: kiln.constant dense<[1, -1]> : tensor<2xi64>
  %c = kiln.constant dense<[1, -1]> : tensor<2xi64>
  return %c : tensor<2xi64>
}

// CHECK-LABEL: func.func @reshape
func.func @reshape(%x: tensor<1x64x1x1xf32>) -> tensor<1x64xf32> {
  // CHECK: kiln.reshape %{{.+}} : tensor<1x64x1x1xf32> to tensor<1x64xf32>
  %y = kiln.reshape %x : tensor<1x64x1x1xf32> to tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}

// CHECK-LABEL: func.func @transpose
func.func @transpose(%x: tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf32> {
  // CHECK: kiln.transpose %{{.+}} {perm = array<i64: 0, 2, 3, 1>} : tensor<1x3x4x5xf32> -> tensor<1x4x5x3xf32>
  %y = kiln.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<1x3x4x5xf32> -> tensor<1x4x5x3xf32>
  return %y : tensor<1x4x5x3xf32>
}

// CHECK-LABEL: func.func @concat
func.func @concat(%a: tensor<1x2xf32>, %b: tensor<1x3xf32>) -> tensor<1x5xf32> {
  // CHECK: kiln.concat %{{.+}}, %{{.+}} {axis = 1 : i64} : (tensor<1x2xf32>, tensor<1x3xf32>) -> tensor<1x5xf32>
  %y = kiln.concat %a, %b {axis = 1 : i64} : (tensor<1x2xf32>, tensor<1x3xf32>) -> tensor<1x5xf32>
  return %y : tensor<1x5xf32>
}

// CHECK-LABEL: func.func @pad
func.func @pad(%x: tensor<1x3x4x4xf32>) -> (tensor<1x3x6x6xf32>, tensor<1x3x5x5xf32>) {
  // CHECK: kiln.pad %{{.+}} {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = -1.000000e+00 : f32} : tensor<1x3x4x4xf32> -> tensor<1x3x6x6xf32>
  %y = kiln.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = -1.0 : f32} : tensor<1x3x4x4xf32> -> tensor<1x3x6x6xf32>
  // The value defaults to zero and is then not printed.
  // CHECK: kiln.pad %{{.+}} {pads = array<i64: 0, 0, 1, 1, 0, 0, 0, 0>} : tensor<1x3x4x4xf32> -> tensor<1x3x5x5xf32>
  %z = kiln.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 0, 0>} : tensor<1x3x4x4xf32> -> tensor<1x3x5x5xf32>
  return %y, %z : tensor<1x3x6x6xf32>, tensor<1x3x5x5xf32>
}

// CHECK-LABEL: func.func @gather
func.func @gather(%table: tensor<8000x256xf32>, %ids: tensor<1x128xi64>, %shape: tensor<3xi64>, %i: tensor<i32>) -> (tensor<1x128x256xf32>, tensor<i64>) {
  // CHECK: kiln.gather %{{.+}}, %{{.+}} {axis = 0 : i64} : (tensor<8000x256xf32>, tensor<1x128xi64>) -> tensor<1x128x256xf32>
  %y = kiln.gather %table, %ids {axis = 0 : i64} : (tensor<8000x256xf32>, tensor<1x128xi64>) -> tensor<1x128x256xf32>
  // A scalar index removes the axis; indices may be i32.
  // CHECK: kiln.gather %{{.+}}, %{{.+}} {axis = 0 : i64} : (tensor<3xi64>, tensor<i32>) -> tensor<i64>
  %d = kiln.gather %shape, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<i32>) -> tensor<i64>
  return %y, %d : tensor<1x128x256xf32>, tensor<i64>
}

// CHECK-LABEL: func.func @slice
func.func @slice(%x: tensor<128x768xf32>) -> tensor<128x128xf32> {
  // CHECK: kiln.slice %{{.+}} {offsets = array<i64: 0, 256>, sizes = array<i64: 128, 128>, strides = array<i64: 1, 2>} : tensor<128x768xf32> -> tensor<128x128xf32>
  %y = kiln.slice %x {offsets = array<i64: 0, 256>, sizes = array<i64: 128, 128>, strides = array<i64: 1, 2>} : tensor<128x768xf32> -> tensor<128x128xf32>
  return %y : tensor<128x128xf32>
}

// CHECK-LABEL: func.func @cast
func.func @cast(%x: tensor<1x128xi64>, %f: tensor<4xf32>) -> (tensor<1x128xf32>, tensor<4xi1>, tensor<4xf16>) {
  // CHECK: kiln.cast %{{.+}} to f32 : tensor<1x128xi64> -> tensor<1x128xf32>
  %a = kiln.cast %x to f32 : tensor<1x128xi64> -> tensor<1x128xf32>
  // CHECK: kiln.cast %{{.+}} to i1 : tensor<4xf32> -> tensor<4xi1>
  %b = kiln.cast %f to i1 : tensor<4xf32> -> tensor<4xi1>
  // CHECK: kiln.cast %{{.+}} to f16 : tensor<4xf32> -> tensor<4xf16>
  %c = kiln.cast %f to f16 : tensor<4xf32> -> tensor<4xf16>
  return %a, %b, %c : tensor<1x128xf32>, tensor<4xi1>, tensor<4xf16>
}

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[A:.+]] = kiln.relu %{{.+}} : tensor<4xf32>
  // CHECK: %[[B:.+]] = kiln.sigmoid %[[A]] : tensor<4xf32>
  // CHECK: %[[C:.+]] = kiln.tanh %[[B]] : tensor<4xf32>
  // CHECK: %[[D:.+]] = kiln.exp %[[C]] : tensor<4xf32>
  // CHECK: %[[E:.+]] = kiln.log %[[D]] : tensor<4xf32>
  // CHECK: %[[F:.+]] = kiln.sqrt %[[E]] : tensor<4xf32>
  // CHECK: %[[G:.+]] = kiln.neg %[[F]] : tensor<4xf32>
  // CHECK: %[[H:.+]] = kiln.abs %[[G]] : tensor<4xf32>
  // CHECK: kiln.erf %[[H]] : tensor<4xf32>
  %a = kiln.relu %x : tensor<4xf32>
  %b = kiln.sigmoid %a : tensor<4xf32>
  %c = kiln.tanh %b : tensor<4xf32>
  %d = kiln.exp %c : tensor<4xf32>
  %e = kiln.log %d : tensor<4xf32>
  %f = kiln.sqrt %e : tensor<4xf32>
  %g = kiln.neg %f : tensor<4xf32>
  %h = kiln.abs %g : tensor<4xf32>
  %i = kiln.erf %h : tensor<4xf32>
  return %i : tensor<4xf32>
}

// CHECK-LABEL: func.func @clip
func.func @clip(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: kiln.clip %{{.+}} {max = 6.000000e+00 : f32, min = 0.000000e+00 : f32} : tensor<4xf32>
  %y = kiln.clip %x {min = 0.0 : f32, max = 6.0 : f32} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK: %[[ADD:.+]] = kiln.add %{{.+}}, %{{.+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[SUB:.+]] = kiln.sub %[[ADD]], %{{.+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[MUL:.+]] = kiln.mul %{{.+}}, %[[SUB]] : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[DIV:.+]] = kiln.div %[[MUL]], %[[MUL]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[POW:.+]] = kiln.pow %[[DIV]], %{{.+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[MAX:.+]] = kiln.max %[[POW]], %{{.+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: kiln.min %[[MAX]], %{{.+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = kiln.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = kiln.sub %0, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %2 = kiln.mul %b, %1 : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = kiln.div %2, %2 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = kiln.pow %3, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %5 = kiln.max %4, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %6 = kiln.min %5, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %6 : tensor<2x3xf32>
}

// Binary arithmetic (but pow) also takes signless integers: shape arithmetic
// and masks.
// CHECK-LABEL: func.func @integer_binary
func.func @integer_binary(%a: tensor<3xi64>, %b: tensor<i64>) -> tensor<3xi64> {
  // CHECK: %[[ADD:.+]] = kiln.add %{{.+}}, %{{.+}} : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  // CHECK: %[[DIV:.+]] = kiln.div %[[ADD]], %{{.+}} : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  // CHECK: kiln.max %[[DIV]], %{{.+}} : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %0 = kiln.add %a, %b : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %1 = kiln.div %0, %b : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %2 = kiln.max %1, %a : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %2 : tensor<3xi64>
}

// A result may be less static than the inferred type until shape inference
// refines it.
// CHECK-LABEL: func.func @dynamic_result
func.func @dynamic_result(%a: tensor<2x3xf32>, %b: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // CHECK: kiln.add %{{.+}}, %{{.+}} : (tensor<2x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %0 = kiln.add %a, %b : (tensor<2x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// CHECK-LABEL: func.func @matmul
func.func @matmul(%a: tensor<2x8x16xf32>, %b: tensor<16x4xf32>, %v: tensor<16xf32>) -> (tensor<2x8x4xf32>, tensor<2x8xf32>) {
  // CHECK: kiln.matmul %{{.+}}, %{{.+}} : (tensor<2x8x16xf32>, tensor<16x4xf32>) -> tensor<2x8x4xf32>
  %y = kiln.matmul %a, %b : (tensor<2x8x16xf32>, tensor<16x4xf32>) -> tensor<2x8x4xf32>
  // A 1-D right operand is a vector: its dimension disappears.
  // CHECK: kiln.matmul %{{.+}}, %{{.+}} : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8xf32>
  %z = kiln.matmul %a, %v : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8xf32>
  return %y, %z : tensor<2x8x4xf32>, tensor<2x8xf32>
}

// CHECK-LABEL: func.func @gemm
func.func @gemm(%a: tensor<1x64xf32>, %b: tensor<10x64xf32>, %c: tensor<10xf32>) -> (tensor<1x10xf32>, tensor<64x64xf32>) {
  // CHECK: kiln.gemm %{{.+}}, %{{.+}}, %{{.+}} {alpha = 5.000000e-01 : f32, trans_b = true} : (tensor<1x64xf32>, tensor<10x64xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  %y = kiln.gemm %a, %b, %c {alpha = 0.5 : f32, trans_b = true} : (tensor<1x64xf32>, tensor<10x64xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  // C is optional.
  // CHECK: kiln.gemm %{{.+}}, %{{.+}} {trans_a = true} : (tensor<1x64xf32>, tensor<1x64xf32>) -> tensor<64x64xf32>
  %z = kiln.gemm %a, %a {trans_a = true} : (tensor<1x64xf32>, tensor<1x64xf32>) -> tensor<64x64xf32>
  return %y, %z : tensor<1x10xf32>, tensor<64x64xf32>
}

// CHECK-LABEL: func.func @conv2d
func.func @conv2d(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %dw: tensor<3x1x3x3xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x3x4x4xf32>) {
  // CHECK: kiln.conv2d %{{.+}}, %{{.+}}, %{{.+}} {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
  // CHECK-SAME: : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %y = kiln.conv2d %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  // Depthwise, strided and dilated, without bias.
  // CHECK: kiln.conv2d %{{.+}}, %{{.+}} {dilations = array<i64: 2, 2>, group = 3 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
  // CHECK-SAME: : (tensor<1x3x8x8xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x4x4xf32>
  %z = kiln.conv2d %x, %dw {strides = array<i64: 1, 1>, dilations = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, group = 3 : i64} : (tensor<1x3x8x8xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x4x4xf32>
  return %y, %z : tensor<1x4x8x8xf32>, tensor<1x3x4x4xf32>
}

// CHECK-LABEL: func.func @pools
func.func @pools(%x: tensor<1x4x7x7xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x3x3xf32>, tensor<1x4x1x1xf32>) {
  // CHECK: kiln.max_pool2d %{{.+}} {ceil_mode = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<1x4x7x7xf32> -> tensor<1x4x4x4xf32>
  %m = kiln.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, ceil_mode = true} : tensor<1x4x7x7xf32> -> tensor<1x4x4x4xf32>
  // CHECK: kiln.avg_pool2d %{{.+}} {count_include_pad = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 3, 3>} : tensor<1x4x7x7xf32> -> tensor<1x4x3x3xf32>
  %a = kiln.avg_pool2d %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 3, 3>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = true} : tensor<1x4x7x7xf32> -> tensor<1x4x3x3xf32>
  // CHECK: kiln.global_avg_pool %{{.+}} : tensor<1x4x7x7xf32> -> tensor<1x4x1x1xf32>
  %g = kiln.global_avg_pool %x : tensor<1x4x7x7xf32> -> tensor<1x4x1x1xf32>
  return %m, %a, %g : tensor<1x4x4x4xf32>, tensor<1x4x3x3xf32>, tensor<1x4x1x1xf32>
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<1x8x4x4xf32>) -> (tensor<1x8xf32>, tensor<1x8x1x1xf32>, tensor<1x4x4xf32>, tensor<f32>) {
  // CHECK: kiln.reduce_mean %{{.+}} {axes = array<i64: 2, 3>, keepdims = false} : tensor<1x8x4x4xf32> -> tensor<1x8xf32>
  %0 = kiln.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = false} : tensor<1x8x4x4xf32> -> tensor<1x8xf32>
  // keepdims defaults to true.
  // CHECK: kiln.reduce_sum %{{.+}} {axes = array<i64: 2, 3>} : tensor<1x8x4x4xf32> -> tensor<1x8x1x1xf32>
  %1 = kiln.reduce_sum %x {axes = array<i64: 2, 3>} : tensor<1x8x4x4xf32> -> tensor<1x8x1x1xf32>
  // CHECK: kiln.reduce_max %{{.+}} {axes = array<i64: 1>, keepdims = false} : tensor<1x8x4x4xf32> -> tensor<1x4x4xf32>
  %2 = kiln.reduce_max %x {axes = array<i64: 1>, keepdims = false} : tensor<1x8x4x4xf32> -> tensor<1x4x4xf32>
  // CHECK: kiln.reduce_min %{{.+}} {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : tensor<1x8x4x4xf32> -> tensor<f32>
  %3 = kiln.reduce_min %x {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : tensor<1x8x4x4xf32> -> tensor<f32>
  return %0, %1, %2, %3 : tensor<1x8xf32>, tensor<1x8x1x1xf32>, tensor<1x4x4xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @reduce_prod
func.func @reduce_prod(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // CHECK: kiln.reduce_prod %{{.+}} {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2x1xf32>
  %0 = kiln.reduce_prod %x {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// CHECK-LABEL: func.func @batch_norm
func.func @batch_norm(%x: tensor<1x4x8x8xf32>, %p: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  // CHECK: kiln.batch_norm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {epsilon = 9.99999974E-6 : f32}
  // CHECK-SAME: : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %y = kiln.batch_norm %x, %p, %p, %p, %p {epsilon = 1.0e-05 : f32} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// CHECK-LABEL: func.func @layer_norm
func.func @layer_norm(%x: tensor<1x128x256xf32>, %s: tensor<256xf32>, %b: tensor<256xf32>, %s2: tensor<128x1xf32>) -> (tensor<1x128x256xf32>, tensor<1x128x256xf32>) {
  // CHECK: kiln.layer_norm %{{.+}}, %{{.+}}, %{{.+}} {axis = 2 : i64, epsilon = 9.99999974E-6 : f32}
  // CHECK-SAME: : (tensor<1x128x256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<1x128x256xf32>
  %y = kiln.layer_norm %x, %s, %b {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<1x128x256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<1x128x256xf32>
  // The bias is optional; the scale broadcasts to the normalized [128, 256].
  // CHECK: kiln.layer_norm %{{.+}}, %{{.+}} {axis = 1 : i64, epsilon = 1.000000e-03 : f32}
  // CHECK-SAME: : (tensor<1x128x256xf32>, tensor<128x1xf32>) -> tensor<1x128x256xf32>
  %z = kiln.layer_norm %x, %s2 {axis = 1 : i64, epsilon = 1.0e-03 : f32} : (tensor<1x128x256xf32>, tensor<128x1xf32>) -> tensor<1x128x256xf32>
  return %y, %z : tensor<1x128x256xf32>, tensor<1x128x256xf32>
}

// CHECK-LABEL: func.func @softmax
func.func @softmax(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  // CHECK: kiln.softmax %{{.+}} {axis = 1 : i64} : tensor<2x10xf32>
  %y = kiln.softmax %x {axis = 1 : i64} : tensor<2x10xf32>
  return %y : tensor<2x10xf32>
}

// CHECK-LABEL: func.func @more_unary
func.func @more_unary(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[A:.+]] = kiln.reciprocal %{{.+}} : tensor<4xf32>
  // CHECK: %[[B:.+]] = kiln.round %[[A]] : tensor<4xf32>
  // CHECK: %[[C:.+]] = kiln.leaky_relu %[[B]] {alpha = 1.000000e-01 : f32} : tensor<4xf32>
  // CHECK: kiln.selu %[[C]] {alpha = 2.000000e+00 : f32, beta = 3.000000e+00 : f32} : tensor<4xf32>
  %0 = kiln.reciprocal %x : tensor<4xf32>
  %1 = kiln.round %0 : tensor<4xf32>
  %2 = kiln.leaky_relu %1 {alpha = 0.1 : f32} : tensor<4xf32>
  %3 = kiln.selu %2 {alpha = 2.0 : f32, beta = 3.0 : f32} : tensor<4xf32>
  return %3 : tensor<4xf32>
}

// CHECK-LABEL: func.func @compare_logic_where
func.func @compare_logic_where(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK: %[[L:.+]] = kiln.less %{{.+}}, %{{.+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: %[[E:.+]] = kiln.equal
  // CHECK: %[[O:.+]] = kiln.or %[[L]], %[[E]] : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK: %[[N:.+]] = kiln.not %[[O]] : tensor<2x3xi1>
  // CHECK: kiln.where %[[N]], %{{.+}}, %{{.+}} : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %l = kiln.less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %e = kiln.equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %o = kiln.or %l, %e : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %n = kiln.not %o : tensor<2x3xi1>
  %y = kiln.where %n, %a, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @prelu_mod
func.func @prelu_mod(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %i: tensor<4xi32>) -> (tensor<2x3xf32>, tensor<4xi32>) {
  // CHECK: kiln.prelu %{{.+}}, %{{.+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = kiln.prelu %x, %s : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: kiln.mod %{{.+}}, %{{.+}} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = kiln.mod %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0, %1 : tensor<2x3xf32>, tensor<4xi32>
}

// CHECK-LABEL: func.func @arg_reduce
func.func @arg_reduce(%x: tensor<2x5xf32>) -> (tensor<2x1xi64>, tensor<5xi64>) {
  // CHECK: kiln.arg_max %{{.+}} {axis = 1 : i64, select_last_index = true} : tensor<2x5xf32> -> tensor<2x1xi64>
  %0 = kiln.arg_max %x {axis = 1 : i64, select_last_index = true} : tensor<2x5xf32> -> tensor<2x1xi64>
  // CHECK: kiln.arg_min %{{.+}} {axis = 0 : i64, keepdims = false} : tensor<2x5xf32> -> tensor<5xi64>
  %1 = kiln.arg_min %x {axis = 0 : i64, keepdims = false} : tensor<2x5xf32> -> tensor<5xi64>
  return %0, %1 : tensor<2x1xi64>, tensor<5xi64>
}

// CHECK-LABEL: func.func @trig
func.func @trig(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: kiln.tan
  // CHECK: kiln.acosh
  // CHECK: kiln.celu %{{.+}} {alpha = 2.000000e+00 : f32} : tensor<4xf32>
  %0 = kiln.tan %x : tensor<4xf32>
  %1 = kiln.acosh %0 : tensor<4xf32>
  %2 = kiln.celu %1 {alpha = 2.0 : f32} : tensor<4xf32>
  return %2 : tensor<4xf32>
}
