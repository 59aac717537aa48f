// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

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

// -----

// Run-time pads over run-time axes (ONNX 1.23's test_constant_pad_axes):
// each dimension takes the pads of the axis that names it, selected at run
// time; the guard checks the axes' range and the declared output shape, and
// the input is gathered at j - pad_before and masked to the value outside.
// CHECK-LABEL: func.func @pad_runtime_axes
// CHECK: kiln.where
// CHECK: kiln.guard
// CHECK-SAME: must pad the input to the declared output shape
// CHECK: kiln.gather {{.+}} {axis = 1 : i64}
// CHECK: kiln.gather {{.+}} {axis = 3 : i64}
// CHECK: kiln.where
module attributes {onnx.opset_import = {ai.onnx = 25 : i64}} {
  func.func @pad_runtime_axes(%x: tensor<1x3x4x5xf32>, %pads: tensor<4xi64>, %v: tensor<f32>, %axes: tensor<2xi64>) -> tensor<1x3x4x12xf32> {
    %y = "onnx.Pad"(%x, %pads, %v, %axes) {mode = "constant"} : (tensor<1x3x4x5xf32>, tensor<4xi64>, tensor<f32>, tensor<2xi64>) -> tensor<1x3x4x12xf32> loc("pad")
    return %y : tensor<1x3x4x12xf32>
  }
}
