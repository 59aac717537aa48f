// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// Col2Im (Col2Im.cpp): a scatter-add of the columns into the zero padded
// image at compile-time positions, then a slice without the padding.

// Block 2x2 with strides 2 on a 3x3 image padded by 1 at the end: 2x2
// blocks of 4 values, which do not overlap.
// CHECK-LABEL: func.func @col2im
// CHECK: %[[I:.+]] = kiln.constant dense<{{\[\[\[}}0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15]]]> : tensor<1x1x16xi64>
// CHECK: kiln.scatter_elements %{{.+}}, %[[I]], %{{.+}} {axis = 2 : i64, reduction = "add"} : (tensor<1x1x16xf32>, tensor<1x1x16xi64>, tensor<1x1x16xf32>) -> tensor<1x1x16xf32>
// CHECK: kiln.reshape %{{.+}} : tensor<1x1x16xf32> to tensor<1x1x4x4xf32>
// CHECK: kiln.slice %{{.+}} {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 1, 1>}
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @col2im(%x: tensor<1x4x4xf32>) -> tensor<*xf32> {
    %i = onnx.Initializer "i" dense<[3, 3]> : tensor<2xi64> loc("i")
    %b = onnx.Initializer "b" dense<[2, 2]> : tensor<2xi64> loc("b")
    %y = "onnx.Col2Im"(%x, %i, %b) {pads = [0, 0, 1, 1], strides = [2, 2]} : (tensor<1x4x4xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<*xf32> loc("c")
    return %y : tensor<*xf32>
  }
}

// -----

// Run-time shapes: 1x5 and 5x1 blocks both fit a 5x5 image with 5 blocks of
// 5 values; both are computed and the block_shape values choose.
// CHECK-LABEL: func.func @col2im_runtime
// CHECK: kiln.guard {{.+}}must be [5, 5]: the image shape this model was compiled for
// CHECK-COUNT-2: kiln.scatter_elements
// CHECK: kiln.where
// CHECK: kiln.guard {{.+}}input 2 must be a block shape that fits
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @col2im_runtime(%x: tensor<1x5x5xf32>, %i: tensor<2xi64>, %b: tensor<2xi64>) -> tensor<1x1x5x5xf32> {
    %y = "onnx.Col2Im"(%x, %i, %b) : (tensor<1x5x5xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x1x5x5xf32> loc("c")
    return %y : tensor<1x1x5x5xf32>
  }
}
