// RUN: kiln-opt %s --split-input-file --kiln-cpu-split-conv-channels="vector-width=16" --mlir-print-elementsattrs-with-hex-if-larger=100000 | FileCheck %s

// 40 output channels (a multiple of half a register only): a convolution of
// 32 channels, on whole registers, and one of 8, each writing its part of
// the one output, with its part of the filter (w[c][f] = f).
// CHECK-LABEL: func.func @conv_split_channels
// CHECK: %[[W32:.+]] = arith.constant dense<{{\[\[\[\[}}0.000000e+00, {{.+}}, 3.100000e+01], {{.+}}> : tensor<1x1x4x32xf32>
// CHECK: %[[A:.+]] = linalg.conv_2d_nhwc_hwcf {{.+}} ins(%arg0, %[[W32]] : {{.+}}) outs(%{{.+}} : tensor<1x1x13x32xf32>)
// CHECK: %[[IA:.+]] = tensor.insert_slice %[[A]] into %{{.+}}[0, 0, 0, 0] [1, 1, 13, 32]
// CHECK: %[[W8:.+]] = arith.constant dense<{{\[\[\[\[}}3.200000e+01, {{.+}}, 3.900000e+01], {{.+}}> : tensor<1x1x4x8xf32>
// CHECK: %[[B:.+]] = linalg.conv_2d_nhwc_hwcf {{.+}} ins(%arg0, %[[W8]] : {{.+}}) outs(%{{.+}} : tensor<1x1x13x8xf32>)
// CHECK: tensor.insert_slice %[[B]] into %[[IA]][0, 0, 0, 32] [1, 1, 13, 8]
func.func @conv_split_channels(%x: tensor<1x1x13x4xf32>) -> tensor<1x1x13x40xf32> {
  %w = arith.constant dense<[[[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0]]]]> : tensor<1x1x4x40xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x13x40xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x13x40xf32>) -> tensor<1x1x13x40xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x1x13x4xf32>, tensor<1x1x4x40xf32>) outs(%acc : tensor<1x1x13x40xf32>) -> tensor<1x1x13x40xf32>
  return %0 : tensor<1x1x13x40xf32>
}

// -----

// Channels on whole registers already: one convolution.
// CHECK-LABEL: func.func @whole_registers
// CHECK-COUNT-1: linalg.conv_2d_nhwc_hwcf
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
func.func @whole_registers(%x: tensor<1x1x13x4xf32>) -> tensor<1x1x13x32xf32> {
  %w = arith.constant dense<0.25> : tensor<1x1x4x32xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x13x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x13x32xf32>) -> tensor<1x1x13x32xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x1x13x4xf32>, tensor<1x1x4x32xf32>) outs(%acc : tensor<1x1x13x32xf32>) -> tensor<1x1x13x32xf32>
  return %0 : tensor<1x1x13x32xf32>
}
