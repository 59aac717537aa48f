// RUN: kiln-opt %s --kiln-convert-kiln-to-linalg | FileCheck %s

// Zero point 200 is the byte -56: the input is quantized once as rows of 16
// channels to uint8 ([0, 255]), padded with -56 (the zero point, an exact
// 0), and the product is the generic marked with the kernel height, which
// reads input row oh * 2 + 4 kq + t against packed weight [kq, kw, c, t].
// The dequantization takes off 200 * weight_sums[c] in i32, then scales by
// weight_scales[c] * 0.02 and adds the bias.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 * 2 + d4 * 4 + d6, d2 * 2 + d5, d3)>
// CHECK-DAG: #[[W:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d3, d6)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[CH:.+]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-DAG: #[[IN5:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4 * 4 + d6, d2 + d5, d3)>
// CHECK-LABEL: func.func @dw
// CHECK: linalg.generic {{.+}} ins(%{{.+}} : tensor<36x16xf32>) outs(%{{.+}} : tensor<36x16xi8>)
// CHECK:   arith.constant 5.000000e+01 : f32
// CHECK:   math.roundeven %{{.+}} {kiln.requant}
// CHECK:   arith.constant 2.000000e+02 : f32
// CHECK:   arith.constant 0.000000e+00 : f32
// CHECK:   arith.constant 2.550000e+02 : f32
// CHECK:   arith.trunci %{{.+}} : i32 to i8
// CHECK: %[[PADV:.+]] = arith.constant -56 : i8
// CHECK: %[[FILL:.+]] = linalg.fill ins(%[[PADV]] : i8) outs(%{{.+}} : tensor<1x8x8x16xi8>)
// CHECK: %[[XP:.+]] = tensor.insert_slice %{{.+}} into %[[FILL]][0, 1, 1, 0] [1, 6, 6, 16] [1, 1, 1, 1]
// CHECK: %[[ZERO:.+]] = linalg.fill ins(%{{.+}} : i32) outs(%{{.+}} : tensor<1x3x3x16xi32>)
// CHECK: %[[ACC:.+]] = linalg.generic {indexing_maps = [#[[IN]], #[[W]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[XP]], %arg1 : tensor<1x8x8x16xi8>, tensor<1x3x16x4xi8>) outs(%[[ZERO]] : tensor<1x3x3x16xi32>) attrs = {kiln.int8_depthwise = 3 : i64}
// CHECK:   arith.extui %{{.+}} : i8 to i32
// CHECK:   arith.extsi %{{.+}} : i8 to i32
// CHECK:   arith.muli
// CHECK:   arith.addi
// CHECK: %[[Y:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[CH]], #[[CH]], #[[CH]], #[[ID]]], {{.+}} ins(%[[ACC]], %arg2, %arg3, %arg4 : tensor<1x3x3x16xi32>, tensor<16xf32>, tensor<16xi32>, tensor<16xf32>)
// CHECK:   ^bb0(%[[A:.+]]: i32, %[[S:.+]]: f32, %[[SUM:.+]]: i32, %[[B:.+]]: f32, %{{.+}}: f32):
// CHECK:   %[[ZP:.+]] = arith.constant 200 : i32
// CHECK:   %[[SHARE:.+]] = arith.muli %[[ZP]], %[[SUM]]
// CHECK:   %[[C:.+]] = arith.subi %[[A]], %[[SHARE]]
// CHECK:   %[[F:.+]] = arith.sitofp %[[C]]
// CHECK:   %[[SC:.+]] = arith.mulf %[[S]], %{{.+}}
// CHECK:   %[[V:.+]] = arith.mulf %[[F]], %[[SC]]
// CHECK:   arith.addf %[[V]], %[[B]]
// CHECK: return %[[Y]]
func.func @dw(%x: tensor<1x6x6x16xf32>, %w: tensor<1x3x16x4xi8>, %s: tensor<16xf32>, %sum: tensor<16xi32>, %b: tensor<16xf32>) -> tensor<1x3x3x16xf32> {
  %0 = kiln.static_quant_depthwise_conv2d %x, %w, %s, %sum, %b {input_scale = 0.02 : f32, input_zero_point = 200 : i64, kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x6x6x16xf32>, tensor<1x3x16x4xi8>, tensor<16xf32>, tensor<16xi32>, tensor<16xf32>) -> tensor<1x3x3x16xf32>
  return %0 : tensor<1x3x3x16xf32>
}

// A 5x5 kernel takes two groups of 4 rows; the generic reads 8 rows per
// window, so the padding below grows from 2 to 5 rows (15 = 7 + 7 + 1
// rows for 8 output rows), and meets zero weights there.
// CHECK-LABEL: func.func @dw5
// CHECK: %[[F5:.+]] = linalg.fill ins(%{{.+}} : i8) outs(%{{.+}} : tensor<1x15x12x8xi8>)
// CHECK: %[[XP5:.+]] = tensor.insert_slice %{{.+}} into %[[F5]][0, 2, 2, 0] [1, 8, 8, 8] [1, 1, 1, 1]
// CHECK: linalg.generic {indexing_maps = [#[[IN5]], #[[W]], #[[OUT]]], {{.+}} ins(%[[XP5]], %arg1 : tensor<1x15x12x8xi8>, tensor<2x5x8x4xi8>) {{.+}} attrs = {kiln.int8_depthwise = 5 : i64}
func.func @dw5(%x: tensor<1x8x8x8xf32>, %w: tensor<2x5x8x4xi8>, %s: tensor<8xf32>, %sum: tensor<8xi32>) -> tensor<1x8x8x8xf32> {
  %0 = kiln.static_quant_depthwise_conv2d %x, %w, %s, %sum {input_scale = 0.5 : f32, input_zero_point = 0 : i64, kernel = array<i64: 5, 5>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 2, 2, 2, 2>} : (tensor<1x8x8x8xf32>, tensor<2x5x8x4xi8>, tensor<8xf32>, tensor<8xi32>) -> tensor<1x8x8x8xf32>
  return %0 : tensor<1x8x8x8xf32>
}

// kiln.integer_depthwise_conv2d (an imported depthwise ConvInteger / QDQ
// Conv): the uint8 input as it is, padded with its run-time zero point (the
// byte of the one i32 element), the same marked product, and the zero
// point's share taken off per channel, in i32.
// CHECK-LABEL: func.func @integer_dw
// CHECK: %[[Z:.+]] = tensor.extract %arg1[] : tensor<i32>
// CHECK: %[[ZB:.+]] = arith.trunci %[[Z]] : i32 to i8
// CHECK: %[[FZ:.+]] = linalg.fill ins(%[[ZB]] : i8) outs(%{{.+}} : tensor<1x8x8x16xi8>)
// CHECK: %[[XPZ:.+]] = tensor.insert_slice %{{.+}} into %[[FZ]][0, 1, 1, 0] [1, 6, 6, 16] [1, 1, 1, 1]
// CHECK: %[[ACCZ:.+]] = linalg.generic {indexing_maps = [#[[IN]], #[[W]], #[[OUT]]], {{.+}} ins(%[[XPZ]], %arg2 : tensor<1x8x8x16xi8>, tensor<1x3x16x4xi8>) {{.+}} attrs = {kiln.int8_depthwise = 3 : i64}
// CHECK: linalg.generic {{.+}} ins(%[[ACCZ]], %arg1, %arg3 : tensor<1x3x3x16xi32>, tensor<i32>, tensor<16xi32>)
// CHECK:   arith.muli
// CHECK:   arith.subi
func.func @integer_dw(%x: tensor<1x6x6x16xui8>, %zp: tensor<i32>, %w: tensor<1x3x16x4xi8>, %sum: tensor<16xi32>) -> tensor<1x3x3x16xi32> {
  %0 = kiln.integer_depthwise_conv2d %x, %zp, %w, %sum {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x6x6x16xui8>, tensor<i32>, tensor<1x3x16x4xi8>, tensor<16xi32>) -> tensor<1x3x3x16xi32>
  return %0 : tensor<1x3x3x16xi32>
}
