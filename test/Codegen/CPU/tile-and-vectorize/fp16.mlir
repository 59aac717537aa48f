// RUN: kiln-opt %s --split-input-file --kiln-cpu-tiling-pipeline="vector-width=16 parallel-work=0" | FileCheck %s

// --precision=fp16 widens fp16 weights with an elementwise extf in front of
// each product. Matmuls and convolutions read the fp16 constant themselves
// and widen each vector of it in the kernel: no f32 copy of the weights.

// CHECK-LABEL: func.func @matmul
// CHECK-NOT: tensor<64x64xf32>
// CHECK: scf.for
// CHECK: vector.transfer_read %{{.+}} : tensor<1x32xf16>, vector<32xf16>
// CHECK: arith.extf %{{.+}} : vector<4x32x1xf16> to vector<4x32x1xf32>
// CHECK: vector.contract
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @matmul(%a: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %w16 = arith.constant dense<1.0> : tensor<64x64xf16>
  %e = tensor.empty() : tensor<64x64xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w16 : tensor<64x64xf16>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %x = arith.extf %in : f16 to f32
    linalg.yield %x : f32
  } -> tensor<64x64xf32>
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<4x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<4x64xf32>) -> tensor<4x64xf32>
  %r = linalg.matmul ins(%a, %w : tensor<4x64xf32>, tensor<64x64xf32>) outs(%f : tensor<4x64xf32>) -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}

// -----

// A depthwise filter is collapsed to [KH, KW, C] first: the reshape moves
// onto the fp16 constant.
// CHECK-LABEL: func.func @depthwise
// CHECK-NOT: tensor.collapse_shape {{.+}}xf32> into
// CHECK: vector.transfer_read %{{.+}} : tensor<3x32xf16>, vector<3x32xf16>
// CHECK: arith.extf %{{.+}} : vector<8x32xf16> to vector<8x32xf32>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @depthwise(%x: tensor<1x10x10x32xf32>) -> tensor<1x8x8x32xf32> {
  %w16 = arith.constant dense<1.0> : tensor<3x3x1x32xf16>
  %e = tensor.empty() : tensor<3x3x1x32xf32>
  %w = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w16 : tensor<3x3x1x32xf16>) outs(%e : tensor<3x3x1x32xf32>) {
  ^bb0(%in: f16, %out: f32):
    %v = arith.extf %in : f16 to f32
    linalg.yield %v : f32
  } -> tensor<3x3x1x32xf32>
  %c = tensor.collapse_shape %w [[0], [1], [2, 3]] : tensor<3x3x1x32xf32> into tensor<3x3x32xf32>
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<1x8x8x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32>
  %r = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %c : tensor<1x10x10x32xf32>, tensor<3x3x32xf32>) outs(%f : tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32>
  return %r : tensor<1x8x8x32xf32>
}

// -----

// CHECK-LABEL: func.func @conv
// CHECK-NOT: tensor<1x1x16x32xf32>
// CHECK: vector.transfer_read %{{.+}} : tensor<1x8x32xf16>, vector<8x32xf16>
// CHECK: arith.extf %{{.+}} : vector<8x32xf16> to vector<8x32xf32>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @conv(%x: tensor<1x8x8x16xf32>) -> tensor<1x8x8x32xf32> {
  %w16 = arith.constant dense<1.0> : tensor<1x1x16x32xf16>
  %e = tensor.empty() : tensor<1x1x16x32xf32>
  %w = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w16 : tensor<1x1x16x32xf16>) outs(%e : tensor<1x1x16x32xf32>) {
  ^bb0(%in: f16, %out: f32):
    %v = arith.extf %in : f16 to f32
    linalg.yield %v : f32
  } -> tensor<1x1x16x32xf32>
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<1x8x8x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x8x16xf32>, tensor<1x1x16x32xf32>) outs(%f : tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32>
  return %r : tensor<1x8x8x32xf32>
}
