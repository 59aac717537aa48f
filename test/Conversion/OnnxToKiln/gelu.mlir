// RUN: kiln-opt %s --kiln-convert-onnx-to-kiln | FileCheck %s

// Gelu 20: 0.5 x (1 + erf(x / sqrt 2)) as elementwise kiln ops.
// CHECK-LABEL: func.func @gelu
// CHECK-DAG: %[[R:.+]] = kiln.constant dense<0.707106769> : tensor<f32>
// CHECK: %[[S:.+]] = kiln.mul %arg0, %[[R]]
// CHECK: %[[E:.+]] = kiln.erf %[[S]]
// CHECK: kiln.add %[[E]]
// CHECK: kiln.mul
// CHECK: kiln.mul
// CHECK-LABEL: func.func @gelu_tanh
// CHECK-DAG: kiln.constant dense<4.471500e-02> : tensor<f32>
// CHECK-DAG: kiln.constant dense<0.797884583> : tensor<f32>
// CHECK: kiln.tanh
module attributes {onnx.opset_import = {ai.onnx = 20 : i64}} {
  func.func @gelu(%x: tensor<2x3xf32>) -> tensor<*xf32> {
    %y = "onnx.Gelu"(%x) : (tensor<2x3xf32>) -> tensor<*xf32> loc("g")
    return %y : tensor<*xf32>
  }
  func.func @gelu_tanh(%x: tensor<2x3xf32>) -> tensor<*xf32> {
    %y = "onnx.Gelu"(%x) {approximate = "tanh"} : (tensor<2x3xf32>) -> tensor<*xf32> loc("g")
    return %y : tensor<*xf32>
  }
}

