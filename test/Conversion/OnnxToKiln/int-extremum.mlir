// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// ReduceMax/Min of bools and MaxPool of uint8 through floats, which hold them
// exactly.

// CHECK-LABEL: func.func @reduce_max_bool
// CHECK: %[[W:.+]] = kiln.cast %{{.+}} to f64 : tensor<4x2xi1> -> tensor<4x2xf64>
// CHECK: %[[R:.+]] = kiln.reduce_max %[[W]] {axes = array<i64: 1>} : tensor<4x2xf64> -> tensor<4x1xf64>
// CHECK: kiln.cast %[[R]] to i1 : tensor<4x1xf64> -> tensor<4x1xi1>
module attributes {onnx.opset_import = {ai.onnx = 20 : i64}} {
  func.func @reduce_max_bool(%x: tensor<4x2xi1>) -> tensor<*xi1> {
    %a = onnx.Initializer "a" dense<[1]> : tensor<1xi64> loc("a")
    %y = "onnx.ReduceMax"(%x, %a) : (tensor<4x2xi1>, tensor<1xi64>) -> tensor<*xi1> loc("r")
    return %y : tensor<*xi1>
  }
}

// -----

// CHECK-LABEL: func.func @max_pool_uint8
// CHECK: kiln.cast %{{.+}} to f32 : tensor<1x1x5x5xui8> -> tensor<1x1x5x5xf32>
// CHECK: kiln.max_pool2d
// CHECK: kiln.cast %{{.+}} to ui8 : tensor<1x1x5x5xf32> -> tensor<1x1x5x5xui8>
module attributes {onnx.opset_import = {ai.onnx = 22 : i64}} {
  func.func @max_pool_uint8(%x: tensor<1x1x5x5xui8>) -> tensor<*xui8> {
    %y = "onnx.MaxPool"(%x) {kernel_shape = [5, 5], pads = [2, 2, 2, 2]} : (tensor<1x1x5x5xui8>) -> tensor<*xui8> loc("p")
    return %y : tensor<*xui8>
  }
}
