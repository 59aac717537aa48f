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

// -----

// CHECK: error: loc("attn_vtype"): node 'attn_vtype' (Attention, opset 23): Q, K and V must have one element type, got 'f32', 'f32' and 'f16'; cast V to Q's type before the node
module attributes {onnx.opset_import = {ai.onnx = 23 : i64}} {
  func.func @attn_vtype(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf16>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'attn_vtype' (Attention, opset 23): Q, K and V must have one element type}}
    %y = "onnx.Attention"(%q, %k, %v) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf16>) -> tensor<*xf32> loc("attn_vtype")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("attn_mode"): node 'attn_mode' (Attention, opset 23): qk_matmul_output_mode 4 is not defined; use 0 to 3
module attributes {onnx.opset_import = {ai.onnx = 23 : i64}} {
  func.func @attn_mode(%q: tensor<1x2x4x8xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    // expected-error@unknown {{node 'attn_mode' (Attention, opset 23): qk_matmul_output_mode 4 is not defined}}
    %y:4 = "onnx.Attention"(%q, %q, %q) {qk_matmul_output_mode = 4 : si64} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) loc("attn_mode")
    return %y#0, %y#1, %y#2, %y#3 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("attn_heads"): node 'attn_heads' (Attention, opset 23): 3-D Q, K and V need q_num_heads and kv_num_heads attributes that divide their hidden sizes
module attributes {onnx.opset_import = {ai.onnx = 23 : i64}} {
  func.func @attn_heads(%q: tensor<1x4x24xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'attn_heads' (Attention, opset 23): 3-D Q, K and V need q_num_heads and kv_num_heads}}
    %y = "onnx.Attention"(%q, %q, %q) : (tensor<1x4x24xf32>, tensor<1x4x24xf32>, tensor<1x4x24xf32>) -> tensor<*xf32> loc("attn_heads")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("attn_gqa"): node 'attn_gqa' (Attention, opset 23): q_num_heads 3 must be a multiple of kv_num_heads 2
module attributes {onnx.opset_import = {ai.onnx = 23 : i64}} {
  func.func @attn_gqa(%q: tensor<1x3x4x8xf32>, %k: tensor<1x2x4x8xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'attn_gqa' (Attention, opset 23): q_num_heads 3 must be a multiple of kv_num_heads 2}}
    %y = "onnx.Attention"(%q, %k, %k) : (tensor<1x3x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<*xf32> loc("attn_gqa")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("attn_past"): node 'attn_past' (Attention, opset 23): past_key and past_value must be given together
module attributes {onnx.opset_import = {ai.onnx = 23 : i64}} {
  func.func @attn_past(%q: tensor<1x2x4x8xf32>, %pk: tensor<1x2x3x8xf32>) -> tensor<*xf32> {
    %none = onnx.NoValue
    // expected-error@unknown {{node 'attn_past' (Attention, opset 23): past_key and past_value must be given together}}
    %y = "onnx.Attention"(%q, %q, %q, %none, %pk) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, none, tensor<1x2x3x8xf32>) -> tensor<*xf32> loc("attn_past")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("attn_nonpad_past"): node 'attn_nonpad_past' (Attention, opset 24): nonpad_kv_seqlen cannot be used with past_key and past_value; give either the whole cache with nonpad_kv_seqlen or the past with the new keys
module attributes {onnx.opset_import = {ai.onnx = 24 : i64}} {
  func.func @attn_nonpad_past(%q: tensor<1x2x4x8xf32>, %pk: tensor<1x2x3x8xf32>, %n: tensor<1xi64>) -> tensor<*xf32> {
    %none = onnx.NoValue
    // expected-error@unknown {{node 'attn_nonpad_past' (Attention, opset 24): nonpad_kv_seqlen cannot be used with past_key and past_value}}
    %y = "onnx.Attention"(%q, %q, %q, %none, %pk, %pk, %n) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, none, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1xi64>) -> tensor<*xf32> loc("attn_nonpad_past")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("attn_mask_keys"): node 'attn_mask_keys' (Attention, opset 23): attn_mask must have rank 1 to 4 and at most 4 keys in its last dimension, got 'tensor<4x6xi1>'
module attributes {onnx.opset_import = {ai.onnx = 23 : i64}} {
  func.func @attn_mask_keys(%q: tensor<1x2x4x8xf32>, %m: tensor<4x6xi1>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'attn_mask_keys' (Attention, opset 23): attn_mask must have rank 1 to 4 and at most 4 keys}}
    %y = "onnx.Attention"(%q, %q, %q, %m) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<4x6xi1>) -> tensor<*xf32> loc("attn_mask_keys")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("attn_precision"): node 'attn_precision' (Attention, opset 23): softmax_precision 7 is not a floating-point type; use 1 (float), 10 (float16), 11 (double) or 16 (bfloat16)
module attributes {onnx.opset_import = {ai.onnx = 23 : i64}} {
  func.func @attn_precision(%q: tensor<1x2x4x8xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'attn_precision' (Attention, opset 23): softmax_precision 7 is not a floating-point type}}
    %y = "onnx.Attention"(%q, %q, %q) {softmax_precision = 7 : si64} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<*xf32> loc("attn_precision")
    return %y : tensor<*xf32>
  }
}

// -----

// LinearAttention's gated rules need the decay input.
// CHECK: error: loc("la"): node 'la' (LinearAttention, opset 27): update_rule 'gated' needs the decay input
module attributes {onnx.opset_import = {ai.onnx = 27 : i64}} {
  func.func @linear_attention_no_decay(%q: tensor<1x2x8xf32>, %k: tensor<1x2x8xf32>, %v: tensor<1x2x8xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    // expected-error@unknown {{node 'la' (LinearAttention, opset 27): update_rule 'gated' needs the decay input}}
    %o, %s = "onnx.LinearAttention"(%q, %k, %v) {q_num_heads = 2 : si64, kv_num_heads = 2 : si64, update_rule = "gated"} : (tensor<1x2x8xf32>, tensor<1x2x8xf32>, tensor<1x2x8xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("la")
    return %o, %s : tensor<*xf32>, tensor<*xf32>
  }
}
