// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// LpPool (Pooling.cpp): an average pooling that counts the padding, of |x|^p.

// The padding-counting average of |x|^3 times the window size, to the 1/3.
// CHECK-LABEL: func.func @lp_pool
// CHECK: kiln.abs
// CHECK: kiln.pow
// CHECK: kiln.avg_pool2d {{.+}}count_include_pad = true
// CHECK: kiln.mul
// CHECK: kiln.pow
module attributes {onnx.opset_import = {ai.onnx = 22 : i64}} {
  func.func @lp_pool(%x: tensor<1x3x8x8xf32>) -> tensor<*xf32> {
    %y = "onnx.LpPool"(%x) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], p = 3 : i64} : (tensor<1x3x8x8xf32>) -> tensor<*xf32> loc("p")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK-LABEL: func.func @lp_pool_p2
// CHECK: kiln.mul
// CHECK: kiln.avg_pool2d
// CHECK: kiln.sqrt
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @lp_pool_p2(%x: tensor<1x3x8x8xf32>) -> tensor<*xf32> {
    %y = "onnx.LpPool"(%x) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x3x8x8xf32>) -> tensor<*xf32> loc("p")
    return %y : tensor<*xf32>
  }
}

// -----

// GlobalLpPool: x * x summed over the spatial axes, then its square root.
// CHECK-LABEL: func.func @global_lp_pool
// CHECK: kiln.mul
// CHECK: kiln.reduce_sum {{.+}} {axes = array<i64: 2, 3>} : tensor<1x3x5x7xf32> -> tensor<1x3x1x1xf32>
// CHECK: kiln.sqrt
module attributes {onnx.opset_import = {ai.onnx = 22 : i64}} {
  func.func @global_lp_pool(%x: tensor<1x3x5x7xf32>) -> tensor<*xf32> {
    %y = "onnx.GlobalLpPool"(%x) : (tensor<1x3x5x7xf32>) -> tensor<*xf32> loc("g")
    return %y : tensor<*xf32>
  }
}
