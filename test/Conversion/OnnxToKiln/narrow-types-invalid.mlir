// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln -verify-diagnostics

// Arithmetic on a narrow type is refused (its storage byte is not a number
// arith knows), with the way out: Cast to float first.
module attributes {onnx.opset_import = {ai.onnx = 25 : i64}} {
  func.func @add_f8(%x: tensor<4xf8E4M3FN>) -> tensor<*xf8E4M3FN> {
    // expected-error@unknown {{node 'add' (Add, opset 25): computing on 'f8E4M3FN' is not supported: Kiln casts, quantizes, dequantizes and moves ONNX's float8, float4, int4 and int2 tensors; Cast the input to float first}}
    %y = "onnx.Add"(%x, %x) : (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>) -> tensor<*xf8E4M3FN> loc("add")
    return %y : tensor<*xf8E4M3FN>
  }
}

// -----

// Types newer than the model's opset are refused.
module attributes {onnx.opset_import = {ai.onnx = 19 : i64}} {
  func.func @int4_at_19(%x: tensor<4xi4>, %s: tensor<f32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'dq' (DequantizeLinear, opset 19): 'i4' needs opset 21 of QuantizeLinear and DequantizeLinear; the model imports opset 19 (re-export it at a newer opset)}}
    %y = "onnx.DequantizeLinear"(%x, %s) : (tensor<4xi4>, tensor<f32>) -> tensor<*xf32> loc("dq")
    return %y : tensor<*xf32>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 25 : i64}} {
  func.func @round_mode(%x: tensor<4xf32>) -> tensor<*xf8E8M0FNU> {
    // expected-error@unknown {{node 'c' (Cast, opset 25): round_mode 'zero' is not one of 'up', 'down' and 'nearest'}}
    %y = "onnx.Cast"(%x) {to = 24 : si64, round_mode = "zero"} : (tensor<4xf32>) -> tensor<*xf8E8M0FNU> loc("c")
    return %y : tensor<*xf8E8M0FNU>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 21 : i64}} {
  func.func @negative_block(%x: tensor<2x4xf32>, %s: tensor<2x2xf32>) -> tensor<*xi8> {
    // expected-error@unknown {{node 'q' (QuantizeLinear, opset 21): block_size -2 must be positive}}
    %y = "onnx.QuantizeLinear"(%x, %s) {axis = 1 : si64, block_size = -2 : si64, output_dtype = 3 : si64} : (tensor<2x4xf32>, tensor<2x2xf32>) -> tensor<*xi8> loc("q")
    return %y : tensor<*xi8>
  }
}
