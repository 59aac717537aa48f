// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln -verify-diagnostics
// RUN: not kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln 2>&1 | FileCheck %s

// What the conversions of the transformer ops of opsets 23 and 24
// (RMSNormalization, RotaryEmbedding, Attention) refuse, reported against the
// node (see onnx-to-kiln-invalid.mlir for the @unknown convention).

// CHECK: error: loc("rms_stash"): node 'rms_stash' (RMSNormalization, opset 23): stash_type 10 is not supported; Kiln computes RMSNormalization in float32 (stash_type 1): remove the attribute or set it to 1
module attributes {onnx.opset_import = {ai.onnx = 23 : i64}} {
  func.func @rms_stash(%x: tensor<2x4xf16>, %s: tensor<4xf16>) -> tensor<*xf16> {
    // expected-error@unknown {{node 'rms_stash' (RMSNormalization, opset 23): stash_type 10 is not supported}}
    %y = "onnx.RMSNormalization"(%x, %s) {stash_type = 10 : si64} : (tensor<2x4xf16>, tensor<4xf16>) -> tensor<*xf16> loc("rms_stash")
    return %y : tensor<*xf16>
  }
}
