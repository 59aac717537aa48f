// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// AffineGrid (GridSample.cpp) as one matmul of constant positions with theta.

// Positions (x, y, 1) for H = 2, W = 3 without align_corners.
// CHECK-LABEL: func.func @affine_grid
// CHECK: %[[P:.+]] = kiln.constant dense<{{\[}}[-0.666666686, -5.000000e-01, 1.000000e+00], [0.000000e+00, -5.000000e-01, 1.000000e+00], [0.666666686, -5.000000e-01, 1.000000e+00], [-0.666666686, 5.000000e-01, 1.000000e+00], [0.000000e+00, 5.000000e-01, 1.000000e+00], [0.666666686, 5.000000e-01, 1.000000e+00]]> : tensor<6x3xf32>
// CHECK: %[[T:.+]] = kiln.transpose %{{.+}} {perm = array<i64: 0, 2, 1>}
// CHECK: %[[G:.+]] = kiln.matmul %[[P]], %[[T]] : (tensor<6x3xf32>, tensor<2x3x2xf32>) -> tensor<2x6x2xf32>
// CHECK: kiln.reshape %[[G]] : tensor<2x6x2xf32> to tensor<2x2x3x2xf32>
module attributes {onnx.opset_import = {ai.onnx = 20 : i64}} {
  func.func @affine_grid(%t: tensor<2x2x3xf32>) -> tensor<*xf32> {
    %s = onnx.Initializer "s" dense<[2, 1, 2, 3]> : tensor<4xi64> loc("s")
    %y = "onnx.AffineGrid"(%t, %s) : (tensor<2x2x3xf32>, tensor<4xi64>) -> tensor<*xf32> loc("a")
    return %y : tensor<*xf32>
  }
}

// -----

// A run-time size: the declared grid decides, a guard checks N, D, H, W.
// CHECK-LABEL: func.func @affine_grid_3d
// CHECK: kiln.guard {{.+}}must be [1, any, 2, 3, 4]: the grid size this model was compiled for
// CHECK: kiln.matmul %{{.+}}, %{{.+}} : (tensor<24x4xf32>, tensor<1x4x3xf32>) -> tensor<1x24x3xf32>
module attributes {onnx.opset_import = {ai.onnx = 20 : i64}} {
  func.func @affine_grid_3d(%t: tensor<1x3x4xf32>, %s: tensor<5xi64>) -> tensor<1x2x3x4x3xf32> {
    %y = "onnx.AffineGrid"(%t, %s) {align_corners = 1 : i64} : (tensor<1x3x4xf32>, tensor<5xi64>) -> tensor<1x2x3x4x3xf32> loc("a")
    return %y : tensor<1x2x3x4x3xf32>
  }
}
