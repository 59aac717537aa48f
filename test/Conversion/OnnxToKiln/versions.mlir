// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln -verify-diagnostics
//
// A node is converted only by a converter written for the version of its op
// that the model's opset means in ONNX 1.23 (OnnxVersions.inc), never by an
// older version's converter. Upsample-10 is deprecated: opset 10 and later
// do not have Upsample.

module attributes {onnx.opset_import = {ai.onnx = 10 : i64}} {
  func.func @upsample_deprecated(%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'up' (Upsample, opset 10): opset 10 means Upsample-10, which ONNX deprecated (removed); use Resize, or re-export the model with an opset below 10}}
    %y = "onnx.Upsample"(%x, %s) : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<*xf32> loc("up")
    return %y : tensor<*xf32>
  }
}

// -----

// Types-only versions are listed beside the version they repeat: Relu-14
// (opset 14 to 28) converts with Relu-14's row.
module attributes {onnx.opset_import = {ai.onnx = 28 : i64}} {
  func.func @relu28(%x: tensor<4xf32>) -> tensor<*xf32> {
    %y = "onnx.Relu"(%x) : (tensor<4xf32>) -> tensor<*xf32> loc("relu")
    return %y : tensor<*xf32>
  }
}

// -----

// Opset 21's blocked quantization: a scale that does not cover x in blocks
// is refused, not quantized per axis.
module attributes {onnx.opset_import = {ai.onnx = 21 : i64}} {
  func.func @blocked(%x: tensor<4x6xf32>, %s: tensor<4x2xf32>) -> tensor<*xi8> {
    // expected-error@unknown {{node 'q' (QuantizeLinear, opset 21): y_scale of shape 'tensor<4x2xf32>' does not match 'tensor<4x6xf32>' in blocks of 2 along axis 1 (expected ceil(6 / 2) elements there and x's size elsewhere)}}
    %y = "onnx.QuantizeLinear"(%x, %s) {axis = 1 : si64, block_size = 2 : si64, output_dtype = 3 : si64} : (tensor<4x6xf32>, tensor<4x2xf32>) -> tensor<*xi8> loc("q")
    return %y : tensor<*xi8>
  }
}

// -----

// Opset 21's output_dtype and 23's precision: values Kiln does not compute
// are refused, never replaced by a default.
module attributes {onnx.opset_import = {ai.onnx = 23 : i64}} {
  func.func @q_output_dtype(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<*xi8> {
    // expected-error@unknown {{node 'q' (QuantizeLinear, opset 23): output_dtype 1 (FLOAT) is not a type QuantizeLinear makes}}
    %y = "onnx.QuantizeLinear"(%x, %s) {output_dtype = 1 : si64} : (tensor<4xf32>, tensor<f32>) -> tensor<*xi8> loc("q")
    return %y : tensor<*xi8>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 23 : i64}} {
  func.func @q_precision(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<*xi8> {
    // expected-error@unknown {{node 'q' (QuantizeLinear, opset 23): precision 10 is not supported; Kiln divides by the scale in the scale's own type (precision 0, or 1 for a float32 scale)}}
    %y = "onnx.QuantizeLinear"(%x, %s) {precision = 10 : si64} : (tensor<4xf32>, tensor<f32>) -> tensor<*xi8> loc("q")
    return %y : tensor<*xi8>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 23 : i64}} {
  func.func @dq_output_dtype(%x: tensor<4xi8>, %s: tensor<f32>) -> tensor<*xf16> {
    // expected-error@unknown {{node 'dq' (DequantizeLinear, opset 23): output_dtype 10 differs from the scale's type 'f32', which is not supported; Kiln returns the scale's type}}
    %y = "onnx.DequantizeLinear"(%x, %s) {output_dtype = 10 : si64} : (tensor<4xi8>, tensor<f32>) -> tensor<*xf16> loc("dq")
    return %y : tensor<*xf16>
  }
}
