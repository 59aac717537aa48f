// RUN: kiln-opt %s --kiln-convert-onnx-to-kiln | FileCheck %s

// Pad-18: the optional axes input says which dimensions the pads cover.

// CHECK-LABEL: func.func @pad_axes
// CHECK-SAME: -> tensor<8x7xf32>
// CHECK: kiln.pad %{{.+}} {pads = array<i64: 2, 1, 4, 3>} : tensor<2x3xf32> -> tensor<8x7xf32>
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @pad_axes(%x: tensor<2x3xf32>) -> tensor<8x7xf32> {
    %pads = onnx.Initializer "pads" dense<[1, 2, 3, 4]> : tensor<4xi64> loc("pads")
    %none = onnx.NoValue loc("pad")
    %axes = onnx.Initializer "axes" dense<[1, 0]> : tensor<2xi64> loc("axes")
    %y = "onnx.Pad"(%x, %pads, %none, %axes) : (tensor<2x3xf32>, tensor<4xi64>, none, tensor<2xi64>) -> tensor<8x7xf32> loc("pad")
    return %y : tensor<8x7xf32>
  }
}
