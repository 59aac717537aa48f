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
