// RUN: kiln-opt %s --kiln-convert-kiln-to-linalg | FileCheck %s

// XFAIL: *
// Bug: lowerConv (lib/Conversion/KilnToLinalg/LowerNN.cpp) slices a grouped
// convolution's constant filter with tensor.extract_slice and then calls
// transposed() on the slice, which is no longer an arith.constant; each group's
// filter is therefore transposed by a linalg.transpose at run time (and no
// later canonicalization folds it), unlike group == 1 and depthwise filters.
// Weights should be sliced and transposed at compile time.

// CHECK-LABEL: func.func @grouped_constant_filter
// CHECK: linalg.transpose {{.+}} permutation = [0, 2, 3, 1]
// CHECK-NOT: linalg.transpose
// CHECK: %[[W0:.+]] = arith.constant {{.+}} : tensor<1x1x2x2xf32>
// CHECK: linalg.conv_2d_nhwc_hwcf {{.+}} ins(%{{.+}}, %[[W0]] :
// CHECK: %[[W1:.+]] = arith.constant {{.+}} : tensor<1x1x2x2xf32>
// CHECK: linalg.conv_2d_nhwc_hwcf {{.+}} ins(%{{.+}}, %[[W1]] :
// CHECK-NOT: linalg.transpose
func.func @grouped_constant_filter(%x: tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> {
  %w = kiln.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]], [[[5.0]], [[6.0]]], [[[7.0]], [[8.0]]]]> : tensor<4x2x1x1xf32>
  %y = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x5x5xf32>
  return %y : tensor<1x4x5x5xf32>
}
