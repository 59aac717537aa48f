// RUN: kiln-opt %s --split-input-file --kiln-cpu-conv-lane-partials | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cpu-conv-lane-partials --kiln-cpu-tile-and-vectorize | FileCheck %s --check-prefix=TILED

// One output channel, 32 input channels: lane l of each pixel's partial
// sums adds channels l and 16 + l (input viewed as [.., 2, 16], filter as
// [3, 3, 2, 16, 1]); the second generic adds the 16 lanes into the
// convolution's initial value (a bias fill here).
// CHECK-LABEL: func.func @one_channel
// CHECK-DAG: %[[X:.+]] = tensor.expand_shape %{{.+}} {{\[\[}}0], [1], [2], [3, 4]] output_shape [1, 10, 10, 2, 16]
// CHECK-DAG: %[[W:.+]] = tensor.expand_shape %{{.+}} {{\[\[}}0], [1], [2, 3], [4]] output_shape [3, 3, 2, 16, 1]
// CHECK: %[[P:.+]] = linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[X]], %[[W]] : {{.+}}) outs(%{{.+}} : tensor<1x8x8x1x16xf32>) attrs = {kiln.lane_partials}
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[Y:.+]] = linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[P]] : tensor<1x8x8x1x16xf32>) outs(%[[B:.+]] : tensor<1x8x8x1xf32>)
// CHECK-NOT: linalg.conv_2d
// CHECK: return %[[Y]]
// The tiles: 8 pixels x 16 lanes, one tap and channel block per step, one
// contractible multiply-add per pixel.
// TILED-LABEL: func.func @one_channel
// TILED: vector.transfer_read {{.+}} : tensor<1x10x10x2x16xf32>, vector<8x16xf32>
// TILED: arith.mulf {{.+}} fastmath<contract> : vector<8x16xf32>
// TILED: arith.addf {{.+}} fastmath<contract> : vector<8x16xf32>
// TILED-NOT: linalg.generic
// TILED: return
func.func @one_channel(%x: tensor<1x10x10x32xf32>) -> tensor<1x8x8x1xf32> {
  %w = arith.constant dense<0.5> : tensor<3x3x32x1xf32>
  %b = arith.constant 0.25 : f32
  %e = tensor.empty() : tensor<1x8x8x1xf32>
  %f = linalg.fill ins(%b : f32) outs(%e : tensor<1x8x8x1xf32>) -> tensor<1x8x8x1xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x10x10x32xf32>, tensor<3x3x32x1xf32>) outs(%f : tensor<1x8x8x1xf32>) -> tensor<1x8x8x1xf32>
  return %y : tensor<1x8x8x1xf32>
}

// -----

// Strides and dilations go into the input's indexing: (oh * 2 + kh * 2).
// CHECK: #[[STRIDED:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 2 + d5 * 2, d2 * 2 + d6 * 2, d7, d4)>
// CHECK-LABEL: func.func @strided_rgb
// CHECK: linalg.generic {indexing_maps = [#[[STRIDED]], {{.+}} outs(%{{.+}} : tensor<1x3x3x3x16xf32>) attrs = {kiln.lane_partials}
func.func @strided_rgb(%x: tensor<1x9x9x16xf32>, %w: tensor<3x3x16x3xf32>) -> tensor<1x3x3x3xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x3x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x9x9x16xf32>, tensor<3x3x16x3xf32>) outs(%f : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  return %y : tensor<1x3x3x3xf32>
}

// -----

// Not rewritten: 8 output channels (half a register holds them), and input
// channels that are not a multiple of the register.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: kiln.lane_partials
// CHECK: linalg.conv_2d_nhwc_hwcf
// CHECK: linalg.conv_2d_nhwc_hwcf
// CHECK-NOT: kiln.lane_partials
func.func @kept(%x: tensor<1x10x10x32xf32>, %w8: tensor<3x3x32x8xf32>, %x24: tensor<1x10x10x24xf32>, %w1: tensor<3x3x24x1xf32>) -> (tensor<1x8x8x8xf32>, tensor<1x8x8x1xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w8 : tensor<1x10x10x32xf32>, tensor<3x3x32x8xf32>) outs(%f : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %e1 = tensor.empty() : tensor<1x8x8x1xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<1x8x8x1xf32>) -> tensor<1x8x8x1xf32>
  %y1 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x24, %w1 : tensor<1x10x10x24xf32>, tensor<3x3x24x1xf32>) outs(%f1 : tensor<1x8x8x1xf32>) -> tensor<1x8x8x1xf32>
  return %y, %y1 : tensor<1x8x8x8xf32>, tensor<1x8x8x1xf32>
}

// -----

// A saliency head over an image of run-time size: the input's view and the
// partial sums keep the run-time height and width (sized from the
// convolution's), the channels split as for a static image.
// CHECK-LABEL: func.func @one_channel_run_time
// CHECK-DAG: %[[X:.+]] = tensor.expand_shape %{{.+}} {{\[\[}}0], [1], [2], [3, 4]] output_shape [1, %{{.+}}, %{{.+}}, 2, 16] : tensor<1x?x?x32xf32> into tensor<1x?x?x2x16xf32>
// CHECK-DAG: %[[E:.+]] = tensor.empty(%{{.+}}, %{{.+}}) : tensor<1x?x?x1x16xf32>
// CHECK: %[[P:.+]] = linalg.generic {{.+}} ins(%[[X]], %{{.+}} : {{.+}}) outs(%{{.+}} : tensor<1x?x?x1x16xf32>) attrs = {kiln.lane_partials}
// CHECK: %[[Y:.+]] = linalg.generic {{.+}} ins(%[[P]] : tensor<1x?x?x1x16xf32>) outs(%{{.+}} : tensor<1x?x?x1xf32>)
// CHECK-NOT: linalg.conv_2d
// CHECK: return %[[Y]]
// TILED-LABEL: func.func @one_channel_run_time
// TILED: vector.transfer_read {{.+}} : tensor<1x?x?x2x16xf32>, vector<{{[0-9]+}}x16xf32>
// TILED: arith.mulf {{.+}} fastmath<contract> : vector<{{[0-9]+}}x16xf32>
// TILED: return
func.func @one_channel_run_time(%x: tensor<1x?x?x32xf32>) -> tensor<1x?x?x1xf32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %h = tensor.dim %x, %c1 : tensor<1x?x?x32xf32>
  %w0 = tensor.dim %x, %c2 : tensor<1x?x?x32xf32>
  %oh = arith.subi %h, %c2 : index
  %ow = arith.subi %w0, %c2 : index
  %w = arith.constant dense<0.5> : tensor<3x3x32x1xf32>
  %b = arith.constant 0.25 : f32
  %e = tensor.empty(%oh, %ow) : tensor<1x?x?x1xf32>
  %f = linalg.fill ins(%b : f32) outs(%e : tensor<1x?x?x1xf32>) -> tensor<1x?x?x1xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x?x?x32xf32>, tensor<3x3x32x1xf32>) outs(%f : tensor<1x?x?x1xf32>) -> tensor<1x?x?x1xf32>
  return %y : tensor<1x?x?x1xf32>
}
