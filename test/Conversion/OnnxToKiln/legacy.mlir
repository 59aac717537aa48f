// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln -verify-diagnostics | FileCheck %s

// Opset 6 broadcasting: B matches A's dimensions from `axis` on; it is
// reshaped so that numpy broadcasting means the same thing.

// CHECK-LABEL: func.func @add_axis
// CHECK: %[[B:.+]] = kiln.reshape %arg1 : tensor<3xf32> to tensor<1x3x1xf32>
// CHECK: kiln.add %arg0, %[[B]] : (tensor<2x3x4xf32>, tensor<1x3x1xf32>) -> tensor<2x3x4xf32>
// CHECK-LABEL: func.func @mul_trailing
// CHECK: kiln.mul %arg0, %arg1 : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-LABEL: func.func @prelu_per_channel
// CHECK: %[[S:.+]] = kiln.reshape %arg1 : tensor<3xf32> to tensor<3x1x1xf32>
// CHECK: kiln.prelu %arg0, %[[S]]
// CHECK-LABEL: func.func @sum_same_shape
// CHECK-COUNT-2: kiln.add
module attributes {onnx.opset_import = {ai.onnx = 6 : i64}} {
  func.func @add_axis(%a: tensor<2x3x4xf32>, %b: tensor<3xf32>) -> tensor<*xf32> {
    %y = "onnx.Add"(%a, %b) {broadcast = 1 : si64, axis = 1 : si64} : (tensor<2x3x4xf32>, tensor<3xf32>) -> tensor<*xf32> loc("add")
    return %y : tensor<*xf32>
  }
  func.func @mul_trailing(%a: tensor<2x3x4xf32>, %b: tensor<3x4xf32>) -> tensor<*xf32> {
    %y = "onnx.Mul"(%a, %b) {broadcast = 1 : si64} : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<*xf32> loc("mul")
    return %y : tensor<*xf32>
  }
  func.func @prelu_per_channel(%x: tensor<2x3x4x5xf32>, %s: tensor<3xf32>) -> tensor<*xf32> {
    %y = "onnx.PRelu"(%x, %s) : (tensor<2x3x4x5xf32>, tensor<3xf32>) -> tensor<*xf32> loc("prelu")
    return %y : tensor<*xf32>
  }
  func.func @sum_same_shape(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>) -> tensor<*xf32> {
    %y = "onnx.Sum"(%a, %b, %c) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<*xf32> loc("sum")
    return %y : tensor<*xf32>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 6 : i64}} {
  func.func @no_broadcast_attr(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'add' (Add, opset 6): without broadcast = 1, opset 6 requires both inputs to have the same shape}}
    %y = "onnx.Add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<*xf32> loc("add")
    return %y : tensor<*xf32>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 6 : i64}} {
  func.func @bad_axis(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'add' (Add, opset 6): cannot broadcast 'tensor<2xf32>' to 'tensor<2x3xf32>' at axis 1}}
    %y = "onnx.Add"(%a, %b) {broadcast = 1 : si64} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<*xf32> loc("add")
    return %y : tensor<*xf32>
  }
}
