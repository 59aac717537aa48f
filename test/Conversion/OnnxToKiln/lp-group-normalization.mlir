// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// LpNormalization and GroupNormalization (Normalization.cpp) from reductions
// and elementwise ops.

// A zero norm is replaced by 1 (x is 0 there), so the result is 0.
// CHECK-LABEL: func.func @lp_norm
// CHECK: %[[SQ:.+]] = kiln.mul %[[X:.+]], %[[X]]
// CHECK: %[[S:.+]] = kiln.reduce_sum %[[SQ]] {axes = array<i64: 0>} : tensor<3x4xf32> -> tensor<1x4xf32>
// CHECK: %[[N:.+]] = kiln.sqrt %[[S]]
// CHECK: %[[Z:.+]] = kiln.equal %[[N]]
// CHECK: %[[SAFE:.+]] = kiln.where %[[Z]]
// CHECK: kiln.div %[[X]], %[[SAFE]]
module attributes {onnx.opset_import = {ai.onnx = 22 : i64}} {
  func.func @lp_norm(%x: tensor<3x4xf32>) -> tensor<*xf32> {
    %y = "onnx.LpNormalization"(%x) {axis = 0 : i64} : (tensor<3x4xf32>) -> tensor<*xf32> loc("n")
    return %y : tensor<*xf32>
  }
}

// -----

// Opset 21: per-channel scale and bias on [N, C, H * W].
// CHECK-LABEL: func.func @group_norm
// CHECK: kiln.reshape %{{.+}} : tensor<3x4x2x2xf32> to tensor<3x2x8xf32>
// CHECK: kiln.reduce_mean %{{.+}} {axes = array<i64: 2>} : tensor<3x2x8xf32> -> tensor<3x2x1xf32>
// CHECK: kiln.reshape %{{.+}} : tensor<3x2x8xf32> to tensor<3x4x4xf32>
// CHECK: kiln.mul %{{.+}}, %{{.+}} : (tensor<3x4x4xf32>, tensor<4x1xf32>) -> tensor<3x4x4xf32>
// CHECK: kiln.add %{{.+}}, %{{.+}} : (tensor<3x4x4xf32>, tensor<4x1xf32>) -> tensor<3x4x4xf32>
module attributes {onnx.opset_import = {ai.onnx = 21 : i64}} {
  func.func @group_norm(%x: tensor<3x4x2x2xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<*xf32> {
    %y = "onnx.GroupNormalization"(%x, %s, %b) {num_groups = 2 : i64} : (tensor<3x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<*xf32> loc("g")
    return %y : tensor<*xf32>
  }
}

// -----

// Opset 18: per-group scale and bias on [N, G, C / G * H * W].
// CHECK-LABEL: func.func @group_norm18
// CHECK: kiln.mul %{{.+}}, %{{.+}} : (tensor<3x2x8xf32>, tensor<2x1xf32>) -> tensor<3x2x8xf32>
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @group_norm18(%x: tensor<3x4x2x2xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<*xf32> {
    %y = "onnx.GroupNormalization"(%x, %s, %b) {num_groups = 2 : i64} : (tensor<3x4x2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<*xf32> loc("g")
    return %y : tensor<*xf32>
  }
}
