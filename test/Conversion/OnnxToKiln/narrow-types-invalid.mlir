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
