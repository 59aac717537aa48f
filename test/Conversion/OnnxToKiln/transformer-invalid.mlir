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

// -----

// CHECK: error: loc("rope_heads"): node 'rope_heads' (RotaryEmbedding, opset 23): a 3-D X needs a num_heads attribute that divides its hidden size 32
module attributes {onnx.opset_import = {ai.onnx = 23 : i64}} {
  func.func @rope_heads(%x: tensor<2x3x32xf32>, %c: tensor<50x4xf32>, %p: tensor<2x3xi64>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'rope_heads' (RotaryEmbedding, opset 23): a 3-D X needs a num_heads attribute}}
    %y = "onnx.RotaryEmbedding"(%x, %c, %c, %p) : (tensor<2x3x32xf32>, tensor<50x4xf32>, tensor<50x4xf32>, tensor<2x3xi64>) -> tensor<*xf32> loc("rope_heads")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("rope_dim"): node 'rope_dim' (RotaryEmbedding, opset 23): rotary_embedding_dim 5 must be even and at most the head size 8
module attributes {onnx.opset_import = {ai.onnx = 23 : i64}} {
  func.func @rope_dim(%x: tensor<2x4x3x8xf32>, %c: tensor<50x2xf32>, %p: tensor<2x3xi64>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'rope_dim' (RotaryEmbedding, opset 23): rotary_embedding_dim 5 must be even}}
    %y = "onnx.RotaryEmbedding"(%x, %c, %c, %p) {rotary_embedding_dim = 5 : si64} : (tensor<2x4x3x8xf32>, tensor<50x2xf32>, tensor<50x2xf32>, tensor<2x3xi64>) -> tensor<*xf32> loc("rope_dim")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("rope_cache"): node 'rope_cache' (RotaryEmbedding, opset 23): with position_ids, cos_cache and sin_cache must be [max_position, 4], got 'tensor<50x2xf32>'
module attributes {onnx.opset_import = {ai.onnx = 23 : i64}} {
  func.func @rope_cache(%x: tensor<2x4x3x8xf32>, %c: tensor<50x2xf32>, %p: tensor<2x3xi64>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'rope_cache' (RotaryEmbedding, opset 23): with position_ids, cos_cache and sin_cache must be [max_position, 4]}}
    %y = "onnx.RotaryEmbedding"(%x, %c, %c, %p) : (tensor<2x4x3x8xf32>, tensor<50x2xf32>, tensor<50x2xf32>, tensor<2x3xi64>) -> tensor<*xf32> loc("rope_cache")
    return %y : tensor<*xf32>
  }
}
