// RUN: kiln-opt %s --kiln-convert-kiln-to-linalg | FileCheck %s

// Zero point 100 becomes -28 in int8 (uint8 minus 128): the input is
// quantized once as rows of 16 channels, clamped to [-128, 127], padded
// with -28 (an exact 0), widened by the depthwise convolution against the
// f32 filter, and the zero point's share, -28 * weight_sums[c], comes off
// before the bias is added.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[CH:.+]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-LABEL: func.func @dw
// CHECK: %[[Q:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<36x16xf32>) outs(%{{.+}} : tensor<36x16xi8>)
// CHECK:   arith.constant 5.000000e+01 : f32
// CHECK:   math.roundeven
// CHECK:   arith.constant -2.800000e+01 : f32
// CHECK:   arith.constant -1.280000e+02 : f32
// CHECK:   arith.constant 1.270000e+02 : f32
// CHECK:   arith.trunci %{{.+}} : i32 to i8
// CHECK: %[[PADV:.+]] = arith.constant -28 : i8
// CHECK: %[[FILL:.+]] = linalg.fill ins(%[[PADV]] : i8) outs(%{{.+}} : tensor<1x8x8x16xi8>)
// CHECK: %[[XP:.+]] = tensor.insert_slice %{{.+}} into %[[FILL]][0, 1, 1, 0] [1, 6, 6, 16] [1, 1, 1, 1]
// CHECK: %[[ACC:.+]] = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[XP]], %arg1 : tensor<1x8x8x16xi8>, tensor<3x3x16xf32>) outs(%{{.+}} : tensor<1x3x3x16xf32>)
// CHECK: %[[Y:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[CH]], #[[CH]], #[[ID]]], {{.+}} ins(%[[ACC]], %arg2, %arg3 : tensor<1x3x3x16xf32>, tensor<16xf32>, tensor<16xf32>)
// CHECK:   ^bb0(%[[A:.+]]: f32, %[[S:.+]]: f32, %[[B:.+]]: f32, %{{.+}}: f32):
// CHECK:   %[[Z:.+]] = arith.constant -2.800000e+01 : f32
// CHECK:   %[[SHARE:.+]] = arith.mulf %[[S]], %[[Z]]
// CHECK:   %[[C:.+]] = arith.subf %[[A]], %[[SHARE]]
// CHECK:   arith.addf %[[C]], %[[B]]
// CHECK: return %[[Y]]
func.func @dw(%x: tensor<1x6x6x16xf32>, %w: tensor<3x3x16xf32>, %s: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<1x3x3x16xf32> {
  %0 = kiln.static_quant_depthwise_conv2d %x, %w, %s, %b {input_scale = 0.02 : f32, input_zero_point = 100 : i64, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x6x6x16xf32>, tensor<3x3x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x3x3x16xf32>
  return %0 : tensor<1x3x3x16xf32>
}
