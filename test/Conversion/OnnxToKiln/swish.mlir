// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// Swish and SwiGLU (Swish.cpp) as elementwise ops.

// CHECK-LABEL: func.func @swish
// CHECK: %[[A:.+]] = kiln.mul %[[X:.+]], %{{.+}} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK: %[[S:.+]] = kiln.sigmoid %[[A]] : tensor<4xf32>
// CHECK: kiln.mul %[[X]], %[[S]]
module attributes {onnx.opset_import = {ai.onnx = 24 : i64}} {
  func.func @swish(%x: tensor<4xf32>) -> tensor<*xf32> {
    %y = "onnx.Swish"(%x) {alpha = 2.0 : f32} : (tensor<4xf32>) -> tensor<*xf32> loc("s")
    return %y : tensor<*xf32>
  }
}

// -----

// alpha 1 needs no product.
// CHECK-LABEL: func.func @swiglu
// CHECK-SAME: (%[[A:.+]]: tensor<2x4xf16>, %[[B:.+]]: tensor<2x4xf16>)
// CHECK: %[[S:.+]] = kiln.sigmoid %[[A]] : tensor<2x4xf16>
// CHECK: %[[G:.+]] = kiln.mul %[[A]], %[[S]]
// CHECK: kiln.mul %[[G]], %[[B]]
module attributes {onnx.opset_import = {ai.onnx = 28 : i64}} {
  func.func @swiglu(%a: tensor<2x4xf16>, %b: tensor<2x4xf16>) -> tensor<*xf16> {
    %y = "onnx.SwiGLU"(%a, %b) : (tensor<2x4xf16>, tensor<2x4xf16>) -> tensor<*xf16> loc("s")
    return %y : tensor<*xf16>
  }
}
