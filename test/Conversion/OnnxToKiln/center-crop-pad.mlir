// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// CenterCropPad (Pad.cpp): a centered kiln.slice where the target is smaller,
// a centered kiln.pad (the odd element on the right) where it is larger.

// CHECK-LABEL: func.func @crop_and_pad
// CHECK: %[[S:.+]] = kiln.slice %{{.+}} {offsets = array<i64: 5, 0, 0>, sizes = array<i64: 10, 8, 3>, strides = array<i64: 1, 1, 1>} : tensor<20x8x3xf32> -> tensor<10x8x3xf32>
// CHECK: kiln.pad %[[S]] {pads = array<i64: 0, 1, 0, 0, 1, 0>} : tensor<10x8x3xf32> -> tensor<10x10x3xf32>
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @crop_and_pad(%x: tensor<20x8x3xf32>) -> tensor<*xf32> {
    %s = onnx.Initializer "s" dense<[10, 10, 3]> : tensor<3xi64> loc("s")
    %y = "onnx.CenterCropPad"(%x, %s) : (tensor<20x8x3xf32>, tensor<3xi64>) -> tensor<*xf32> loc("c")
    return %y : tensor<*xf32>
  }
}

// -----

// Negative axes; an odd crop starts half an element to the left.
// CHECK-LABEL: func.func @axes
// CHECK: kiln.slice %{{.+}} {offsets = array<i64: 5, 0, 0>, sizes = array<i64: 10, 7, 3>, strides = array<i64: 1, 1, 1>} : tensor<20x8x3xf32> -> tensor<10x7x3xf32>
// CHECK-NOT: kiln.pad
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @axes(%x: tensor<20x8x3xf32>) -> tensor<*xf32> {
    %s = onnx.Initializer "s" dense<[10, 7]> : tensor<2xi64> loc("s")
    %y = "onnx.CenterCropPad"(%x, %s) {axes = [-3, -2]} : (tensor<20x8x3xf32>, tensor<2xi64>) -> tensor<*xf32> loc("c")
    return %y : tensor<*xf32>
  }
}

// -----

// A run-time shape: the declared output decides, and a guard checks it.
// CHECK-LABEL: func.func @runtime_shape
// CHECK: kiln.guard {{.+}}node 'c' (CenterCropPad, opset 18)
// CHECK: kiln.slice %{{.+}} {offsets = array<i64: 0, 5, 0>, sizes = array<i64: 3, 10, 8>
// CHECK: kiln.pad %{{.+}} {pads = array<i64: 0, 0, 0, 0, 0, 1>
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @runtime_shape(%x: tensor<3x20x8xf32>, %s: tensor<2xi64>) -> tensor<3x10x9xf32> {
    %y = "onnx.CenterCropPad"(%x, %s) {axes = [1, 2]} : (tensor<3x20x8xf32>, tensor<2xi64>) -> tensor<3x10x9xf32> loc("c")
    return %y : tensor<3x10x9xf32>
  }
}

// -----

// Integers are padded by gathering, with zeros where the window is outside.
// CHECK-LABEL: func.func @pad_int
// CHECK: kiln.gather
// CHECK: kiln.where
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @pad_int(%x: tensor<2x3xi32>) -> tensor<*xi32> {
    %s = onnx.Initializer "s" dense<[4, 3]> : tensor<2xi64> loc("s")
    %y = "onnx.CenterCropPad"(%x, %s) : (tensor<2x3xi32>, tensor<2xi64>) -> tensor<*xi32> loc("c")
    return %y : tensor<*xi32>
  }
}
