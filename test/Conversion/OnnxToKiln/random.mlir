// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// Random ops (Random.cpp) draw from one kiln.random, then scale, compare or
// count with ordinary kiln ops.

// RandomNormal: mean + scale z; the seed is the float32's bits (3.0).
// CHECK-LABEL: func.func @normal
// CHECK: %[[Z:.+]] = kiln.random {distribution = "normal", seed = 1077936128 : i64, seeded = true} -> tensor<2x3xf32>
// CHECK: %[[S:.+]] = kiln.mul %[[Z]], %{{.+}} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: kiln.add %[[S]], %{{.+}} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
module attributes {onnx.opset_import = {ai.onnx = 22 : i64}} {
  func.func @normal() -> tensor<*xf32> {
    %y = "onnx.RandomNormal"() {shape = [2, 3], mean = 1.0 : f32, scale = 2.0 : f32, seed = 3.0 : f32} : () -> tensor<*xf32> loc("n")
    return %y : tensor<*xf32>
  }
}

// -----

// RandomUniformLike of a symbolic input: its shape through `like`, drawn in
// f32 and rounded to its float16; no seed.
// CHECK-LABEL: func.func @uniform_like
// CHECK: %[[U:.+]] = kiln.random %arg0 : tensor<?x4xf16> {distribution = "uniform", seed = 0 : i64, seeded = false} -> tensor<?x4xf32>
// CHECK: %[[W:.+]] = kiln.mul %[[U]]
// CHECK: %[[L:.+]] = kiln.add %[[W]]
// CHECK: kiln.cast %[[L]] to f16 : tensor<?x4xf32> -> tensor<?x4xf16>
module attributes {onnx.opset_import = {ai.onnx = 22 : i64}} {
  func.func @uniform_like(%x: tensor<?x4xf16>) -> tensor<*xf16> {
    %y = "onnx.RandomUniformLike"(%x) {low = -1.0 : f32, high = 1.0 : f32} : (tensor<?x4xf16>) -> tensor<*xf16> loc("u")
    return %y : tensor<*xf16>
  }
}

// -----

// RandomUniform of doubles draws f64 (53 bits); low 0, high 1 need no
// scaling.
// CHECK-LABEL: func.func @uniform_double
// CHECK: %[[U:.+]] = kiln.random {distribution = "uniform", seed = 0 : i64, seeded = false} -> tensor<7xf64>
// CHECK-NEXT: return %[[U]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @uniform_double() -> tensor<*xf64> {
    %y = "onnx.RandomUniform"() {shape = [7], dtype = 11 : i64} : () -> tensor<*xf64> loc("u")
    return %y : tensor<*xf64>
  }
}

// -----

// Bernoulli to bool: a uniform draw of the probabilities' shape below p.
// CHECK-LABEL: func.func @bernoulli
// CHECK: %[[U:.+]] = kiln.random %arg0 : tensor<5xf64> {distribution = "uniform", {{.+}}} -> tensor<5xf64>
// CHECK: %[[B:.+]] = kiln.less %[[U]], %arg0 : (tensor<5xf64>, tensor<5xf64>) -> tensor<5xi1>
// CHECK: return %[[B]]
module attributes {onnx.opset_import = {ai.onnx = 15 : i64}} {
  func.func @bernoulli(%p: tensor<5xf64>) -> tensor<*xi1> {
    %y = "onnx.Bernoulli"(%p) {dtype = 9 : i64} : (tensor<5xf64>) -> tensor<*xi1> loc("b")
    return %y : tensor<*xi1>
  }
}

// -----

// Multinomial: the CDF of each row's softmax against one uniform draw per
// sample; the class is the count of CDF entries at or below it, at most
// classes - 1.
// CHECK-LABEL: func.func @multinomial
// CHECK: %[[P:.+]] = kiln.softmax %arg0 {axis = 1 : i64} : tensor<2x3xf32>
// CHECK: %[[C:.+]] = kiln.cumsum %[[P]]
// CHECK: %[[R:.+]] = kiln.reshape %[[C]] : tensor<2x3xf32> to tensor<2x1x3xf32>
// CHECK: %[[U:.+]] = kiln.random {distribution = "uniform", {{.+}}} -> tensor<2x4x1xf32>
// CHECK: %[[LE:.+]] = kiln.less_equal %[[R]], %[[U]] : (tensor<2x1x3xf32>, tensor<2x4x1xf32>) -> tensor<2x4x3xi1>
// CHECK: %[[F:.+]] = kiln.cast %[[LE]] to f32
// CHECK: %[[N:.+]] = kiln.reduce_sum %[[F]] {axes = array<i64: 2>, keepdims = false}
// CHECK: %[[TOP:.+]] = kiln.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[M:.+]] = kiln.min %[[N]], %[[TOP]]
// CHECK: kiln.cast %[[M]] to i64 : tensor<2x4xf32> -> tensor<2x4xi64>
module attributes {onnx.opset_import = {ai.onnx = 7 : i64}} {
  func.func @multinomial(%x: tensor<2x3xf32>) -> tensor<*xi64> {
    %y = "onnx.Multinomial"(%x) {dtype = 7 : i64, sample_size = 4 : i64} : (tensor<2x3xf32>) -> tensor<*xi64> loc("m")
    return %y : tensor<*xi64>
  }
}
