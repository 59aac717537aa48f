// RUN: kiln-opt %s --kiln-convert-onnx-to-kiln | FileCheck %s

// Function declarations are left alone.

// CHECK-LABEL: func.func private @external(tensor<4xf32>) -> tensor<4xf32>
// CHECK-LABEL: func.func @converted
// CHECK: kiln.relu %{{.+}} : tensor<4xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func private @external(tensor<4xf32>) -> tensor<4xf32>
  func.func @converted(%x: tensor<4xf32>) -> tensor<*xf32> {
    %y = "onnx.Relu"(%x) : (tensor<4xf32>) -> tensor<*xf32> loc("relu")
    return %y : tensor<*xf32>
  }
}
