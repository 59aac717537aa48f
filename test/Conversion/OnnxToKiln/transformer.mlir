// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// The transformer ops of opsets 23 and 24: RMSNormalization, RotaryEmbedding
// and Attention.

// RMSNormalization is one kiln.layer_norm with `rms`; float16 is normalized
// in float32 (stash_type 1) and cast back.
// CHECK-LABEL: func.func @rms
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>, %[[S:.+]]: tensor<4xf32>, %[[H:.+]]: tensor<2x3x4xf16>, %[[SH:.+]]: tensor<3x4xf16>)
// CHECK: %[[Y:.+]] = kiln.layer_norm %[[X]], %[[S]] {axis = 2 : i64, epsilon = 1.000000e-03 : f32, rms} : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
// CHECK: %[[HW:.+]] = kiln.cast %[[H]] to f32
// CHECK: %[[SW:.+]] = kiln.cast %[[SH]] to f32
// CHECK: %[[Z:.+]] = kiln.layer_norm %[[HW]], %[[SW]] {axis = 1 : i64, epsilon = 9.99999974E-6 : f32, rms} : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: %[[ZN:.+]] = kiln.cast %[[Z]] to f16
// CHECK: return %[[Y]], %[[ZN]]
module attributes {onnx.opset_import = {ai.onnx = 23 : i64}} {
  func.func @rms(%x: tensor<2x3x4xf32>, %s: tensor<4xf32>, %h: tensor<2x3x4xf16>, %sh: tensor<3x4xf16>) -> (tensor<*xf32>, tensor<*xf16>) {
    %y = "onnx.RMSNormalization"(%x, %s) {epsilon = 1.0e-03 : f32} : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<*xf32> loc("rms")
    %z = "onnx.RMSNormalization"(%h, %sh) {axis = -2 : si64} : (tensor<2x3x4xf16>, tensor<3x4xf16>) -> tensor<*xf16> loc("rms_f16")
    return %y, %z : tensor<*xf32>, tensor<*xf16>
  }
}

// -----

// RotaryEmbedding, 4-D, partial rotation (4 of 8 channels): the caches are
// gathered at position_ids and broadcast over the heads; the halves rotate
// and the last 4 channels pass through.
// CHECK-LABEL: func.func @rotary
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x3x8xf32>, %[[C:.+]]: tensor<50x2xf32>, %[[S:.+]]: tensor<50x2xf32>, %[[P:.+]]: tensor<2x3xi64>)
// CHECK: %[[CG:.+]] = kiln.gather %[[C]], %[[P]] {axis = 0 : i64} : (tensor<50x2xf32>, tensor<2x3xi64>) -> tensor<2x3x2xf32>
// CHECK: %[[COS:.+]] = kiln.reshape %[[CG]] : tensor<2x3x2xf32> to tensor<2x1x3x2xf32>
// CHECK: %[[SG:.+]] = kiln.gather %[[S]], %[[P]] {axis = 0 : i64}
// CHECK: %[[SIN:.+]] = kiln.reshape %[[SG]]
// CHECK: %[[X1:.+]] = kiln.slice %[[X]] {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 2, 4, 3, 2>, strides = array<i64: 1, 1, 1, 1>}
// CHECK: %[[X2:.+]] = kiln.slice %[[X]] {offsets = array<i64: 0, 0, 0, 2>, sizes = array<i64: 2, 4, 3, 2>, strides = array<i64: 1, 1, 1, 1>}
// CHECK: %[[CX1:.+]] = kiln.mul %[[COS]], %[[X1]]
// CHECK: %[[SX2:.+]] = kiln.mul %[[SIN]], %[[X2]]
// CHECK: %[[SX1:.+]] = kiln.mul %[[SIN]], %[[X1]]
// CHECK: %[[CX2:.+]] = kiln.mul %[[COS]], %[[X2]]
// CHECK: %[[RE:.+]] = kiln.sub %[[CX1]], %[[SX2]]
// CHECK: %[[IM:.+]] = kiln.add %[[SX1]], %[[CX2]]
// CHECK: %[[ROT:.+]] = kiln.concat %[[RE]], %[[IM]] {axis = 3 : i64} : (tensor<2x4x3x2xf32>, tensor<2x4x3x2xf32>) -> tensor<2x4x3x4xf32>
// CHECK: %[[REST:.+]] = kiln.slice %[[X]] {offsets = array<i64: 0, 0, 0, 4>, sizes = array<i64: 2, 4, 3, 4>
// CHECK: %[[Y:.+]] = kiln.concat %[[ROT]], %[[REST]] {axis = 3 : i64}
// CHECK: return %[[Y]] : tensor<2x4x3x8xf32>
module attributes {onnx.opset_import = {ai.onnx = 23 : i64}} {
  func.func @rotary(%x: tensor<2x4x3x8xf32>, %c: tensor<50x2xf32>, %s: tensor<50x2xf32>, %p: tensor<2x3xi64>) -> tensor<*xf32> {
    %y = "onnx.RotaryEmbedding"(%x, %c, %s, %p) {rotary_embedding_dim = 4 : si64} : (tensor<2x4x3x8xf32>, tensor<50x2xf32>, tensor<50x2xf32>, tensor<2x3xi64>) -> tensor<*xf32> loc("rope")
    return %y : tensor<*xf32>
  }
}

// -----

// RotaryEmbedding, 3-D with num_heads and interleaved pairs, caches given
// per token: X is viewed as [B, S, H, D] (no transpose), the even and odd
// channels rotate and are zipped back as [..., D/2, 2].
// CHECK-LABEL: func.func @rotary_3d_interleaved
// CHECK: %[[COS:.+]] = kiln.reshape %{{.+}} : tensor<2x3x4xf32> to tensor<2x3x1x4xf32>
// CHECK: %[[XV:.+]] = kiln.reshape %{{.+}} : tensor<2x3x32xf32> to tensor<2x3x4x8xf32>
// CHECK: kiln.slice %[[XV]] {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 2, 3, 4, 4>, strides = array<i64: 1, 1, 1, 2>}
// CHECK: kiln.slice %[[XV]] {offsets = array<i64: 0, 0, 0, 1>, sizes = array<i64: 2, 3, 4, 4>, strides = array<i64: 1, 1, 1, 2>}
// CHECK: %[[PAIRS:.+]] = kiln.concat %{{.+}}, %{{.+}} {axis = 4 : i64} : (tensor<2x3x4x4x1xf32>, tensor<2x3x4x4x1xf32>) -> tensor<2x3x4x4x2xf32>
// CHECK: %[[ROT:.+]] = kiln.reshape %[[PAIRS]] : tensor<2x3x4x4x2xf32> to tensor<2x3x4x8xf32>
// CHECK: %[[Y:.+]] = kiln.reshape %[[ROT]] : tensor<2x3x4x8xf32> to tensor<2x3x32xf32>
// CHECK-NOT: kiln.transpose
// CHECK: return %[[Y]]
module attributes {onnx.opset_import = {ai.onnx = 23 : i64}} {
  func.func @rotary_3d_interleaved(%x: tensor<2x3x32xf32>, %c: tensor<2x3x4xf32>, %s: tensor<2x3x4xf32>) -> tensor<*xf32> {
    %y = "onnx.RotaryEmbedding"(%x, %c, %s) {interleaved = 1 : si64, num_heads = 4 : si64} : (tensor<2x3x32xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<*xf32> loc("rope3d")
    return %y : tensor<*xf32>
  }
}

// -----

// Attention, 3-D grouped-query (9 query heads over 3 key/value heads),
// causal: Q is scaled by 1/sqrt(8) and viewed as [B, 3, 3 * 4, 8] so that one
// batched matmul per key/value head covers its three query heads; the causal
// bias is a constant; rows whose bias is -inf everywhere are zeroed.
// CHECK-LABEL: func.func @attention_gqa
// CHECK: %[[Q:.+]] = kiln.transpose %{{.+}} {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x9x8xf32> -> tensor<2x9x4x8xf32>
// CHECK: %[[K:.+]] = kiln.transpose %{{.+}} {perm = array<i64: 0, 2, 1, 3>} : tensor<2x6x3x8xf32> -> tensor<2x3x6x8xf32>
// CHECK: %[[V:.+]] = kiln.transpose %{{.+}} {perm = array<i64: 0, 2, 1, 3>} : tensor<2x6x3x8xf32> -> tensor<2x3x6x8xf32>
// CHECK: %[[SCALE:.+]] = kiln.constant dense<0.353553385> : tensor<f32>
// CHECK: %[[QS:.+]] = kiln.mul %[[Q]], %[[SCALE]]
// CHECK: %[[KT:.+]] = kiln.transpose %[[K]] {perm = array<i64: 0, 1, 3, 2>} : tensor<2x3x6x8xf32> -> tensor<2x3x8x6xf32>
// CHECK: %[[QG:.+]] = kiln.reshape %[[QS]] : tensor<2x9x4x8xf32> to tensor<2x3x12x8xf32>
// CHECK: %[[QK:.+]] = kiln.matmul %[[QG]], %[[KT]] : (tensor<2x3x12x8xf32>, tensor<2x3x8x6xf32>) -> tensor<2x3x12x6xf32>
// CHECK: %[[SC:.+]] = kiln.reshape %[[QK]] : tensor<2x3x12x6xf32> to tensor<2x9x4x6xf32>
// CHECK: %[[TRI:.+]] = kiln.constant dense<{{\[}}[true, false, false, false, false, false], [true, true, false, false, false, false], [true, true, true, false, false, false], [true, true, true, true, false, false]]> : tensor<4x6xi1>
// CHECK: %[[BIAS:.+]] = kiln.where %[[TRI]], %{{.+}}, %{{.+}} : (tensor<4x6xi1>, tensor<f32>, tensor<f32>) -> tensor<4x6xf32>
// CHECK: %[[MASKED:.+]] = kiln.add %[[SC]], %[[BIAS]]
// CHECK: %[[P:.+]] = kiln.softmax %[[MASKED]] {axis = 3 : i64} : tensor<2x9x4x6xf32>
// CHECK: %[[ROWMAX:.+]] = kiln.reduce_max %[[BIAS]] {axes = array<i64: 1>}
// CHECK: %[[EMPTY:.+]] = kiln.equal %[[ROWMAX]], %{{.+}} : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xi1>
// CHECK: %[[PS:.+]] = kiln.where %[[EMPTY]], %{{.+}}, %[[P]]
// CHECK: %[[PG:.+]] = kiln.reshape %[[PS]] : tensor<2x9x4x6xf32> to tensor<2x3x12x6xf32>
// CHECK: %[[O:.+]] = kiln.matmul %[[PG]], %[[V]] : (tensor<2x3x12x6xf32>, tensor<2x3x6x8xf32>) -> tensor<2x3x12x8xf32>
// CHECK: %[[OH:.+]] = kiln.reshape %[[O]] : tensor<2x3x12x8xf32> to tensor<2x9x4x8xf32>
// CHECK: %[[OT:.+]] = kiln.transpose %[[OH]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK: %[[Y:.+]] = kiln.reshape %[[OT]] : tensor<2x4x9x8xf32> to tensor<2x4x72xf32>
// CHECK: return %[[Y]]
module attributes {onnx.opset_import = {ai.onnx = 23 : i64}} {
  func.func @attention_gqa(%q: tensor<2x4x72xf32>, %k: tensor<2x6x24xf32>, %v: tensor<2x6x24xf32>) -> tensor<*xf32> {
    %y = "onnx.Attention"(%q, %k, %v) {q_num_heads = 9 : si64, kv_num_heads = 3 : si64, is_causal = 1 : si64} : (tensor<2x4x72xf32>, tensor<2x6x24xf32>, tensor<2x6x24xf32>) -> tensor<*xf32> loc("attn")
    return %y : tensor<*xf32>
  }
}

// -----

// Attention with a past cache, a bool mask shorter than the 18 keys (padded
// with -inf), softcap, an explicit scale and qk_matmul_output_mode 3 (the
// guarded probabilities): present_key/present_value are the concatenations.
// CHECK-LABEL: func.func @attention_past
// CHECK-SAME: (%[[Q:.+]]: tensor<2x3x4x8xf32>, %[[K:.+]]: tensor<2x3x6x8xf32>, %[[V:.+]]: tensor<2x3x6x8xf32>, %[[M:.+]]: tensor<4x16xi1>, %[[PK:.+]]: tensor<2x3x12x8xf32>, %[[PV:.+]]: tensor<2x3x12x8xf32>)
// CHECK: %[[KA:.+]] = kiln.concat %[[PK]], %[[K]] {axis = 2 : i64} : (tensor<2x3x12x8xf32>, tensor<2x3x6x8xf32>) -> tensor<2x3x18x8xf32>
// CHECK: %[[VA:.+]] = kiln.concat %[[PV]], %[[V]] {axis = 2 : i64}
// CHECK: kiln.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[QK:.+]] = kiln.matmul %{{.+}}, %{{.+}} : (tensor<2x3x4x8xf32>, tensor<2x3x8x18xf32>) -> tensor<2x3x4x18xf32>
// CHECK: %[[CAP:.+]] = kiln.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[D:.+]] = kiln.div %[[QK]], %[[CAP]]
// CHECK: %[[T:.+]] = kiln.tanh %[[D]]
// CHECK: %[[SC:.+]] = kiln.mul %[[T]], %[[CAP]]
// CHECK: %[[MB:.+]] = kiln.where %[[M]], %{{.+}}, %{{.+}} : (tensor<4x16xi1>, tensor<f32>, tensor<f32>) -> tensor<4x16xf32>
// CHECK: %[[BIAS:.+]] = kiln.pad %[[MB]] {pads = array<i64: 0, 0, 0, 2>, value = 0xFF800000 : f32} : tensor<4x16xf32> -> tensor<4x18xf32>
// CHECK: %[[MASKED:.+]] = kiln.add %[[SC]], %[[BIAS]]
// CHECK: %[[P:.+]] = kiln.softmax %[[MASKED]]
// CHECK: %[[PS:.+]] = kiln.where %{{.+}}, %{{.+}}, %[[P]]
// CHECK: %[[Y:.+]] = kiln.matmul %[[PS]], %[[VA]] : (tensor<2x3x4x18xf32>, tensor<2x3x18x8xf32>) -> tensor<2x3x4x8xf32>
// CHECK: return %[[Y]], %[[KA]], %[[VA]], %[[PS]]
module attributes {onnx.opset_import = {ai.onnx = 23 : i64}} {
  func.func @attention_past(%q: tensor<2x3x4x8xf32>, %k: tensor<2x3x6x8xf32>, %v: tensor<2x3x6x8xf32>, %m: tensor<4x16xi1>, %pk: tensor<2x3x12x8xf32>, %pv: tensor<2x3x12x8xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %y:4 = "onnx.Attention"(%q, %k, %v, %m, %pk, %pv) {qk_matmul_output_mode = 3 : si64, softcap = 2.0 : f32, scale = 0.5 : f32} : (tensor<2x3x4x8xf32>, tensor<2x3x6x8xf32>, tensor<2x3x6x8xf32>, tensor<4x16xi1>, tensor<2x3x12x8xf32>, tensor<2x3x12x8xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) loc("attn_past")
    return %y#0, %y#1, %y#2, %y#3 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Attention 24 with nonpad_kv_seqlen, causal, float16: computed in float32
// and rounded once. The causal frontier of batch b is S_q - i + j <=
// nonpad[b] (a constant table against the run-time lengths); keys at or past
// nonpad[b] are masked too.
// CHECK-LABEL: func.func @attention_nonpad
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x1x8xf16>, %[[K:.+]]: tensor<2x2x8x8xf16>, %[[V:.+]]: tensor<2x2x8x8xf16>, %[[N:.+]]: tensor<2xi64>)
// CHECK: kiln.cast %[[Q]] to f32
// CHECK: kiln.cast %[[K]] to f32
// CHECK: kiln.cast %[[V]] to f32
// CHECK: kiln.matmul %{{.+}}, %{{.+}} : (tensor<2x2x2x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x2x2x8xf32>
// CHECK: %[[LEN:.+]] = kiln.reshape %[[N]] : tensor<2xi64> to tensor<2x1x1x1xi64>
// CHECK: %[[FRONT:.+]] = kiln.constant dense<{{\[\[\[}}[1, 2, 3, 4, 5, 6, 7, 8]]]]> : tensor<1x1x1x8xi64>
// CHECK: kiln.less_equal %[[FRONT]], %[[LEN]] : (tensor<1x1x1x8xi64>, tensor<2x1x1x1xi64>) -> tensor<2x1x1x8xi1>
// CHECK: %[[KEYS:.+]] = kiln.constant dense<{{\[\[\[}}[0, 1, 2, 3, 4, 5, 6, 7]]]]> : tensor<1x1x1x8xi64>
// CHECK: kiln.less %[[KEYS]], %[[LEN]]
// CHECK: %[[BIAS:.+]] = kiln.add %{{.+}}, %{{.+}} : (tensor<2x1x1x8xf32>, tensor<2x1x1x8xf32>) -> tensor<2x1x1x8xf32>
// CHECK: kiln.softmax %{{.+}} {axis = 3 : i64} : tensor<2x4x1x8xf32>
// CHECK: kiln.reduce_max %[[BIAS]] {axes = array<i64: 3>}
// CHECK: %[[O:.+]] = kiln.reshape %{{.+}} : tensor<2x2x2x8xf32> to tensor<2x4x1x8xf32>
// CHECK: %[[Y:.+]] = kiln.cast %[[O]] to f16
// CHECK: return %[[Y]] : tensor<2x4x1x8xf16>
module attributes {onnx.opset_import = {ai.onnx = 24 : i64}} {
  func.func @attention_nonpad(%q: tensor<2x4x1x8xf16>, %k: tensor<2x2x8x8xf16>, %v: tensor<2x2x8x8xf16>, %n: tensor<2xi64>) -> tensor<*xf16> {
    %none = onnx.NoValue
    %y = "onnx.Attention"(%q, %k, %v, %none, %none, %none, %n) {is_causal = 1 : si64, softmax_precision = 1 : si64} : (tensor<2x4x1x8xf16>, tensor<2x2x8x8xf16>, tensor<2x2x8x8xf16>, none, none, none, tensor<2xi64>) -> tensor<*xf16> loc("attn_nonpad")
    return %y : tensor<*xf16>
  }
}

// -----

// LinearAttention-27 (gated delta rule, two query heads per KV head),
// unrolled over its two tokens: per token the state decays (exp of the
// per-head decay), S^T k is a reduction over d_k, the beta-scaled outer
// product is added, and q^T S is one batched matmul per KV head group.
// CHECK-LABEL: func.func @linear_attention
// CHECK: kiln.exp
// CHECK-COUNT-2: kiln.reduce_sum {{.+}} {axes = array<i64: 2>} : tensor<1x2x4x4xf32> -> tensor<1x2x1x4xf32>
// CHECK: kiln.matmul {{.+}} : (tensor<1x2x2x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x2x4xf32>
// CHECK: kiln.concat {{.+}} {axis = 1 : i64}{{.+}} -> tensor<1x2x16xf32>
module attributes {onnx.opset_import = {ai.onnx = 27 : i64}} {
  func.func @linear_attention(%q: tensor<1x2x16xf32>, %k: tensor<1x2x8xf32>, %v: tensor<1x2x8xf32>, %g: tensor<1x2x2xf32>, %b: tensor<1x2x2xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %none = onnx.NoValue loc("la")
    %o, %s = "onnx.LinearAttention"(%q, %k, %v, %none, %g, %b) {q_num_heads = 4 : si64, kv_num_heads = 2 : si64} : (tensor<1x2x16xf32>, tensor<1x2x8xf32>, tensor<1x2x8xf32>, none, tensor<1x2x2xf32>, tensor<1x2x2xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("la")
    return %o, %s : tensor<*xf32>, tensor<*xf32>
  }
}
