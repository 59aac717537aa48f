// RUN: kiln-opt %s --split-input-file --kiln-convert-kiln-to-linalg | FileCheck %s

// What --kiln-layout produces lowers without transposes: an NHWC convolution
// reads its input and HWCF filter as they are and adds the bias along the
// last dimension.
// CHECK-DAG: #[[ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[LAST:.+]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-LABEL: func.func @conv2d_nhwc
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x4x3xf32>, %[[W:.+]]: tensor<3x3x3x8xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[XP:.+]] = tensor.insert_slice %{{.+}} into %{{.+}}[0, 1, 1, 0] [1, 4, 4, 3] [1, 1, 1, 1] : tensor<1x4x4x3xf32> into tensor<1x6x6x3xf32>
// CHECK: %[[Y:.+]] = linalg.conv_2d_nhwc_hwcf
// CHECK-SAME: ins(%[[XP]], %[[W]] : tensor<1x6x6x3xf32>, tensor<3x3x3x8xf32>) outs(%{{.+}} : tensor<1x4x4x8xf32>)
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[ID4]], #[[LAST]], #[[ID4]]]
// CHECK-SAME: ins(%[[Y]], %[[B]] : tensor<1x4x4x8xf32>, tensor<8xf32>) outs(%{{.+}} : tensor<1x4x4x8xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return %[[R]]
func.func @conv2d_nhwc(%x: tensor<1x4x4x3xf32>, %w: tensor<3x3x3x8xf32>, %b: tensor<8xf32>) -> tensor<1x4x4x8xf32> {
  %y = kiln.conv2d %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64, layout = "NHWC"} : (tensor<1x4x4x3xf32>, tensor<3x3x3x8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  return %y : tensor<1x4x4x8xf32>
}

// -----

// Depthwise: the HWCF filter [KH, KW, 1, C] is read as [KH, KW, C]; without a
// bias the convolution's result is returned as it is.
// CHECK-LABEL: func.func @depthwise_nhwc
// CHECK-NOT: linalg.transpose
// CHECK: %[[W:.+]] = tensor.expand_shape {{.+}} into tensor<3x3x4xf32>
// CHECK: %[[Y:.+]] = linalg.depthwise_conv_2d_nhwc_hwc
// CHECK-SAME: ins(%{{.+}}, %[[W]] : tensor<1x4x4x4xf32>, tensor<3x3x4xf32>) outs(%{{.+}} : tensor<1x2x2x4xf32>)
// CHECK-NEXT: return %[[Y]]
func.func @depthwise_nhwc(%x: tensor<1x4x4x4xf32>, %w: tensor<3x3x1x4xf32>) -> tensor<1x2x2x4xf32> {
  %y = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 4 : i64, layout = "NHWC"} : (tensor<1x4x4x4xf32>, tensor<3x3x1x4xf32>) -> tensor<1x2x2x4xf32>
  return %y : tensor<1x2x2x4xf32>
}

// -----

// NHWC max pooling pads the spatial dimensions (1 and 2) with -inf, with
// ceil_mode's extra bottom/right row and column.
// CHECK-LABEL: func.func @max_pool_nhwc
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<1x8x8x4xf32>)
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0, 0] [1, 7, 7, 4] [1, 1, 1, 1] : tensor<1x7x7x4xf32> into tensor<1x8x8x4xf32>
// CHECK: linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK-SAME: outs(%{{.+}} : tensor<1x4x4x4xf32>)
func.func @max_pool_nhwc(%x: tensor<1x7x7x4xf32>) -> tensor<1x4x4x4xf32> {
  %y = kiln.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, ceil_mode = true, layout = "NHWC"} : tensor<1x7x7x4xf32> -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// -----

// NHWC average pooling divides by a per-position count indexed by (h, w) =
// (d1, d2): corners see 4 cells, edges 6, the middle 9.
// CHECK-DAG: #[[HW:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d2)>
// CHECK-LABEL: func.func @avg_pool_nhwc
// CHECK: %[[S:.+]] = linalg.pooling_nhwc_sum
// CHECK-SAME: outs(%{{.+}} : tensor<1x3x3x2xf32>)
// CHECK: %[[N:.+]] = arith.constant dense<{{\[\[}}4.000000e+00, 6.000000e+00, 4.000000e+00], [6.000000e+00, 9.000000e+00, 6.000000e+00], [4.000000e+00, 6.000000e+00, 4.000000e+00]]> : tensor<3x3xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[HW]], #{{.+}}]
// CHECK-SAME: ins(%[[S]], %[[N]] : tensor<1x3x3x2xf32>, tensor<3x3xf32>)
// CHECK: arith.divf
func.func @avg_pool_nhwc(%x: tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32> {
  %y = kiln.avg_pool2d %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, layout = "NHWC"} : tensor<1x3x3x2xf32> -> tensor<1x3x3x2xf32>
  return %y : tensor<1x3x3x2xf32>
}

// -----

// A depthwise convolution marked kiln.bf16_input (--precision=bf16) reads
// the bf16 tensor its input was widened from: padded in bf16, widened by
// the convolution itself against the f32 filter. Without the mark, the
// widened f32 tensor is read.
// CHECK-LABEL: func.func @bf16_depthwise
// CHECK: %[[H:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<1x6x6x16xbf16>)
// CHECK: linalg.fill ins(%{{.+}} : bf16) outs(%{{.+}} : tensor<1x8x8x16xbf16>)
// CHECK: %[[C:.+]] = linalg.copy ins(%[[H]] : tensor<1x6x6x16xbf16>)
// CHECK: %[[P:.+]] = tensor.insert_slice %[[C]] into
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {{.+}} ins(%[[P]], %{{.+}} : tensor<1x8x8x16xbf16>, tensor<3x3x16xf32>)
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {{.+}} ins(%{{.+}}, %{{.+}} : tensor<1x8x8x16xf32>, tensor<3x3x16xf32>)
func.func @bf16_depthwise(%x: tensor<1x6x6x16xf32>, %w: tensor<3x3x1x16xf32>) -> (tensor<1x6x6x16xf32>, tensor<1x6x6x16xf32>) {
  %h = kiln.cast %x to bf16 : tensor<1x6x6x16xf32> -> tensor<1x6x6x16xbf16>
  %f = kiln.cast %h to f32 : tensor<1x6x6x16xbf16> -> tensor<1x6x6x16xf32>
  %0 = kiln.conv2d %f, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 16 : i64, layout = "NHWC", kiln.bf16_input} : (tensor<1x6x6x16xf32>, tensor<3x3x1x16xf32>) -> tensor<1x6x6x16xf32>
  %1 = kiln.conv2d %f, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 16 : i64, layout = "NHWC"} : (tensor<1x6x6x16xf32>, tensor<3x3x1x16xf32>) -> tensor<1x6x6x16xf32>
  return %0, %1 : tensor<1x6x6x16xf32>, tensor<1x6x6x16xf32>
}
