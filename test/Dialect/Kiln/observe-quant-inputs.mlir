// RUN: kiln-opt %s --kiln-observe-quant-inputs | FileCheck %s

// Calibration: the input of each node --kiln-quantize-static would convert
// becomes a result, once per distinct tensor: both group-1 convs read %x
// (nodes 0 and 1), the depthwise conv reads the first conv's result (node
// 2), the MatMul reads %y (node 3); the 2x2 conv on 8 channels (K = 32 <
// 64) and the grouped conv are not converted and not observed.
// CHECK-LABEL: func.func @block
// CHECK-SAME: -> (tensor<1x4x4x16xf32>, tensor<2x16xf32>, tensor<1x4x4x8xf32> {onnx.name = "kiln.observe:0,1"}, tensor<1x4x4x16xf32> {onnx.name = "kiln.observe:2"}, tensor<2x16xf32> {onnx.name = "kiln.observe:3"})
// CHECK: %[[C0:.+]] = kiln.conv2d %arg0
// CHECK: return %{{.+}}, %{{.+}}, %arg0, %[[C0]], %arg1 :
func.func @block(%x: tensor<1x4x4x8xf32>, %y: tensor<2x16xf32>, %b: tensor<16xf32>) -> (tensor<1x4x4x16xf32>, tensor<2x16xf32>) {
  %w = kiln.constant dense<0.25> : tensor<3x3x8x16xf32>
  %w1 = kiln.constant dense<0.5> : tensor<3x3x8x16xf32>
  %p = kiln.constant dense<0.5> : tensor<2x2x8x16xf32>
  %dw = kiln.constant dense<1.0> : tensor<3x3x1x16xf32>
  %gw = kiln.constant dense<1.0> : tensor<3x3x8x16xf32>
  %g = kiln.constant dense<1.0> : tensor<16x16xf32>
  %0 = kiln.conv2d %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64, layout = "NHWC"} : (tensor<1x4x4x8xf32>, tensor<3x3x8x16xf32>, tensor<16xf32>) -> tensor<1x4x4x16xf32>
  %1 = kiln.conv2d %x, %w1 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64, layout = "NHWC"} : (tensor<1x4x4x8xf32>, tensor<3x3x8x16xf32>) -> tensor<1x4x4x16xf32> loc("kept")
  %small = kiln.conv2d %x, %p {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 1, 1>, group = 1 : i64, layout = "NHWC"} : (tensor<1x4x4x8xf32>, tensor<2x2x8x16xf32>) -> tensor<1x4x4x16xf32> loc("small")
  %2 = kiln.conv2d %0, %dw {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 16 : i64, layout = "NHWC"} : (tensor<1x4x4x16xf32>, tensor<3x3x1x16xf32>) -> tensor<1x4x4x16xf32> loc("dw")
  %g2 = kiln.conv2d %2, %gw {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64, layout = "NHWC"} : (tensor<1x4x4x16xf32>, tensor<3x3x8x16xf32>) -> tensor<1x4x4x16xf32> loc("grouped")
  %s = kiln.add %g2, %1 : (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %3 = kiln.add %s, %small : (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %4 = kiln.matmul %y, %g : (tensor<2x16xf32>, tensor<16x16xf32>) -> tensor<2x16xf32>
  return %3, %4 : tensor<1x4x4x16xf32>, tensor<2x16xf32>
}
