// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln -verify-diagnostics
// RUN: not kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln 2>&1 | FileCheck %s

// What the random ops' conversions (Random.cpp) refuse (see
// onnx-to-kiln-invalid.mlir for how the two RUN lines work together).

// CHECK: error: loc("n"): node 'n' (RandomNormal, opset 13): dtype 6 (INT32) is not a float type; use FLOAT, FLOAT16, BFLOAT16 or DOUBLE
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @int_dtype() -> tensor<*xi32> {
    // expected-error@unknown {{node 'n' (RandomNormal, opset 13): dtype 6 (INT32) is not a float type}}
    %y = "onnx.RandomNormal"() {shape = [2], dtype = 6 : i64} : () -> tensor<*xi32> loc("n")
    return %y : tensor<*xi32>
  }
}

// -----

// CHECK: error: loc("u"): node 'u' (RandomUniform, opset 13): shape entry -2 is negative or makes the tensor larger than 2^40 elements
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @negative_shape() -> tensor<*xf32> {
    // expected-error@unknown {{node 'u' (RandomUniform, opset 13): shape entry -2 is negative}}
    %y = "onnx.RandomUniform"() {shape = [3, -2]} : () -> tensor<*xf32> loc("u")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("u"): node 'u' (RandomUniform, opset 13): shape entry 1099511627776 is negative or makes the tensor larger than 2^40 elements
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @huge_shape() -> tensor<*xf32> {
    // expected-error@unknown {{makes the tensor larger than 2^40 elements}}
    %y = "onnx.RandomUniform"() {shape = [2, 1099511627776]} : () -> tensor<*xf32> loc("u")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("l"): node 'l' (RandomNormalLike, opset 13): draws float16, bfloat16, float or double numbers, not 'i64'; set dtype to one of FLOAT, FLOAT16, BFLOAT16, DOUBLE
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @like_int(%x: tensor<4xi64>) -> tensor<*xi64> {
    // expected-error@unknown {{node 'l' (RandomNormalLike, opset 13): draws float16, bfloat16, float or double numbers, not 'i64'}}
    %y = "onnx.RandomNormalLike"(%x) : (tensor<4xi64>) -> tensor<*xi64> loc("l")
    return %y : tensor<*xi64>
  }
}

// -----

// CHECK: error: loc("b"): node 'b' (Bernoulli, opset 15): takes float16, bfloat16, float or double probabilities, not 'i32'
module attributes {onnx.opset_import = {ai.onnx = 15 : i64}} {
  func.func @bernoulli_int(%p: tensor<4xi32>) -> tensor<*xi32> {
    // expected-error@unknown {{node 'b' (Bernoulli, opset 15): takes float16, bfloat16, float or double probabilities}}
    %y = "onnx.Bernoulli"(%p) : (tensor<4xi32>) -> tensor<*xi32> loc("b")
    return %y : tensor<*xi32>
  }
}

// -----

// CHECK: error: loc("m"): node 'm' (Multinomial, opset 7): dtype 1 (FLOAT) is not INT32 or INT64
module attributes {onnx.opset_import = {ai.onnx = 7 : i64}} {
  func.func @multinomial_float(%x: tensor<2x3xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'm' (Multinomial, opset 7): dtype 1 (FLOAT) is not INT32 or INT64}}
    %y = "onnx.Multinomial"(%x) {dtype = 1 : i64} : (tensor<2x3xf32>) -> tensor<*xf32> loc("m")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("m"): node 'm' (Multinomial, opset 7): sample_size 0 with 3 classes and batch 2 is not supported
module attributes {onnx.opset_import = {ai.onnx = 7 : i64}} {
  func.func @multinomial_no_samples(%x: tensor<2x3xf32>) -> tensor<*xi32> {
    // expected-error@unknown {{node 'm' (Multinomial, opset 7): sample_size 0 with 3 classes and batch 2 is not supported}}
    %y = "onnx.Multinomial"(%x) {sample_size = 0 : i64} : (tensor<2x3xf32>) -> tensor<*xi32> loc("m")
    return %y : tensor<*xi32>
  }
}
