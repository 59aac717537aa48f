// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln -verify-diagnostics | FileCheck %s

// Optimizer steps of the ai.onnx.preview.training domain are elementwise
// formulas with the run-time step count cast to float.

// CHECK-LABEL: func.func @adagrad
// CHECK: kiln.cast %arg1 to f32
// CHECK: kiln.sqrt
// CHECK: return {{.+}} : tensor<3xf32>, tensor<3xf32>
// CHECK-LABEL: func.func @momentum_nesterov
// CHECK: kiln.greater
// CHECK: kiln.where
// CHECK: return {{.+}} : tensor<3xf32>, tensor<3xf32>
// CHECK-LABEL: func.func @adam
// CHECK: kiln.pow
// CHECK: return {{.+}} : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
module attributes {onnx.opset_import = {ai.onnx = 12 : i64, ai.onnx.preview.training = 1 : i64}} {
  func.func @adagrad(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<3xf32>, %g: tensor<3xf32>, %h: tensor<3xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %x1, %h1 = "onnx.ai.onnx.preview.training.Adagrad"(%r, %t, %x, %g, %h) {decay_factor = 1.000000e-01 : f32, epsilon = 9.99999974E-6 : f32, norm_coefficient = 1.000000e-03 : f32} : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("adagrad")
    return %x1, %h1 : tensor<*xf32>, tensor<*xf32>
  }
  func.func @momentum_nesterov(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<3xf32>, %g: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %x1, %v1 = "onnx.ai.onnx.preview.training.Momentum"(%r, %t, %x, %g, %v) {alpha = 0.949999988 : f32, beta = 1.000000e-01 : f32, mode = "nesterov", norm_coefficient = 0.00999999977 : f32} : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("momentum")
    return %x1, %v1 : tensor<*xf32>, tensor<*xf32>
  }
  func.func @adam(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<3xf32>, %g: tensor<3xf32>, %v: tensor<3xf32>, %h: tensor<3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %x1, %v1, %h1 = "onnx.ai.onnx.preview.training.Adam"(%r, %t, %x, %g, %v, %h) {alpha = 0.949999988 : f32, beta = 1.000000e-01 : f32} : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) loc("adam")
    return %x1, %v1, %h1 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 12 : i64, ai.onnx.preview.training = 1 : i64}} {
  func.func @bad_groups(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<3xf32>, %g: tensor<3xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'adagrad' (Adagrad, opset 1): expects R, T and 3 groups of equally many tensors; got 4 inputs}}
    %x1 = "onnx.ai.onnx.preview.training.Adagrad"(%r, %t, %x, %g) : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>) -> tensor<*xf32> loc("adagrad")
    return %x1 : tensor<*xf32>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 12 : i64, ai.onnx.preview.training = 1 : i64}} {
  func.func @unknown_training_op(%x: tensor<3xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'g' (Gradient, opset 1): the operator domain 'ai.onnx.preview.training' is not supported}}
    %y = "onnx.ai.onnx.preview.training.Gradient"(%x) : (tensor<3xf32>) -> tensor<*xf32> loc("g")
    return %y : tensor<*xf32>
  }
}
