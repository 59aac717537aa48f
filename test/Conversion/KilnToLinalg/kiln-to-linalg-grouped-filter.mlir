// RUN: kiln-opt %s --kiln-convert-kiln-to-linalg | FileCheck %s

// A grouped convolution's constant filter is transposed to HWCF once, at
// compile time; each group reads a slice of that constant (a view after
// bufferization), so nothing is transposed at run time but the input.

// CHECK-LABEL: func.func @grouped_constant_filter
// CHECK: linalg.transpose {{.+}} permutation = [0, 2, 3, 1]
// CHECK: %[[W:.+]] = arith.constant {{.+}} : tensor<1x1x2x4xf32>
// CHECK-NOT: linalg.transpose
// CHECK: scf.for %[[G:[^ ]+]] =
// CHECK: %[[XOFF:.+]] = arith.muli %[[G]]
// CHECK: %[[OFF:.+]] = arith.muli %[[G]]
// CHECK: %[[WG:.+]] = tensor.extract_slice %[[W]][0, 0, 0, %[[OFF]]] [1, 1, 2, 2] [1, 1, 1, 1]
// CHECK: linalg.conv_2d_nhwc_hwcf {{.+}} ins(%{{.+}}, %[[WG]] :
// CHECK-NOT: linalg.transpose
func.func @grouped_constant_filter(%x: tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> {
  %w = kiln.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]], [[[5.0]], [[6.0]]], [[[7.0]], [[8.0]]]]> : tensor<4x2x1x1xf32>
  %y = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x5x5xf32>
  return %y : tensor<1x4x5x5xf32>
}
