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
