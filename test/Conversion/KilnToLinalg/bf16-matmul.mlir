// RUN: kiln-opt %s --split-input-file --kiln-convert-kiln-to-linalg | FileCheck %s

// [2, 3, 8] rows of K = 8 rounded to bf16 (a K that fits in one 64-byte
// tile row is not padded), the marked product into f32 [6, 1, 16] from a
// zero fill, folded back to [2, 3, 16], where the bias is added (so that
// what follows fuses with it).
// CHECK-DAG: #[[ROWS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4)>
// CHECK-DAG: #[[W:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d2, d4)>
// CHECK-DAG: #[[ACC:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @bf16_matmul
// CHECK-NOT: tensor.insert_slice
// CHECK: %[[XB:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<6x8xf32>) outs(%{{.+}} : tensor<6x8xbf16>)
// CHECK:   arith.truncf %{{.+}} : f32 to bf16
// CHECK: %[[ZERO:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<6x1x16xf32>)
// CHECK: %[[X3:.+]] = tensor.expand_shape %[[XB]] {{\[}}[0], [1, 2]] output_shape [6, 4, 2]
// CHECK: %[[W4:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1], [2, 3]] output_shape [1, 4, 16, 2]
// CHECK: %[[P:.+]] = linalg.generic {indexing_maps = [#[[ROWS]], #[[W]], #[[ACC]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[X3]], %[[W4]] : tensor<6x4x2xbf16>, tensor<1x4x16x2xbf16>) outs(%[[ZERO]] : tensor<6x1x16xf32>) attrs = {kiln.bf16_matmul}
// CHECK:   arith.extf
// CHECK:   arith.extf
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: %[[P3:.+]] = tensor.expand_shape {{.+}} output_shape [2, 3, 16]
// CHECK: %[[Y:.+]] = linalg.generic {{.+}} ins(%[[P3]], %{{.+}} : tensor<2x3x16xf32>, tensor<16xf32>)
// CHECK:   arith.addf
// CHECK: return %[[Y]]
func.func @bf16_matmul(%x: tensor<2x3x8xf32>, %w: tensor<1x4x32xbf16>) -> tensor<2x3x16xf32> {
  %b = kiln.constant dense<0.25> : tensor<16xf32>
  %0 = kiln.bf16_matmul %x, %w, %b : (tensor<2x3x8xf32>, tensor<1x4x32xbf16>, tensor<16xf32>) -> tensor<2x3x16xf32>
  return %0 : tensor<2x3x16xf32>
}

// -----

// 3x3, stride 2, pad 1, 16 input and 10 output channels: the input rounded
// once, padded in bf16, unfolded through the window map with (kw, c) as one
// run of 3 * 16 values of the [1, 10, 160] view, straight into the first
// K = 144 columns of the zero-filled [16, 160] rows; the product into one
// 16-column panel, of which the first 10 columns, as [1, 4, 4, 10], get the
// bias.
// CHECK-DAG: #[[WINDOW:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 * 2 + d3, d2 * 32 + d4)>
// CHECK-LABEL: func.func @conv3x3
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : tensor<64x16xbf16>)
// CHECK:   arith.truncf
// CHECK: %[[XP:.+]] = tensor.insert_slice %{{.+}} into %{{.+}}[0, 1, 1, 0] [1, 8, 8, 16] [1, 1, 1, 1] : tensor<1x8x8x16xbf16> into tensor<1x10x10x16xbf16>
// CHECK: %[[ROWVIEW:.+]] = tensor.expand_shape %{{.+}} output_shape [1, 10, 160] : tensor<1600xbf16> into tensor<1x10x160xbf16>
// CHECK: %[[ROWS:.+]] = linalg.fill ins(%{{.+}} : bf16) outs(%{{.+}} : tensor<16x160xbf16>)
// CHECK: %[[K:.+]] = tensor.extract_slice %[[ROWS]][0, 0] [16, 144] [1, 1] : tensor<16x160xbf16> to tensor<16x144xbf16>
// CHECK: %[[INIT:.+]] = tensor.expand_shape %[[K]] {{\[}}[0, 1, 2], [3, 4]] output_shape [1, 4, 4, 3, 48] : tensor<16x144xbf16> into tensor<1x4x4x3x48xbf16>
// CHECK: %[[COLS:.+]] = linalg.generic {indexing_maps = [#[[WINDOW]], #{{.+}}], {{.+}} ins(%[[ROWVIEW]] : tensor<1x10x160xbf16>) outs(%[[INIT]] : tensor<1x4x4x3x48xbf16>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: bf16, %{{.+}}: bf16):
// CHECK-NEXT:   linalg.yield %[[IN]] : bf16
// CHECK: %[[C2:.+]] = tensor.collapse_shape %[[COLS]] {{\[}}[0, 1, 2], [3, 4]] : tensor<1x4x4x3x48xbf16> into tensor<16x144xbf16>
// CHECK: tensor.insert_slice %[[C2]] into %[[ROWS]][0, 0] [16, 144] [1, 1] : tensor<16x144xbf16> into tensor<16x160xbf16>
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : tensor<16x1x16xf32>) attrs = {kiln.bf16_matmul}
// CHECK: %[[SLICE:.+]] = tensor.extract_slice %{{.+}}[0, 0] [16, 10] [1, 1] : tensor<16x16xf32> to tensor<16x10xf32>
// CHECK: tensor.expand_shape {{.+}} output_shape [1, 4, 4, 10]
// CHECK: %[[Y:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %arg2 : tensor<1x4x4x10xf32>, tensor<10xf32>)
// CHECK: return %[[Y]]
func.func @conv3x3(%x: tensor<1x8x8x16xf32>, %w: tensor<1x80x32xbf16>, %b: tensor<10xf32>) -> tensor<1x4x4x10xf32> {
  %0 = kiln.bf16_conv2d %x, %w, %b {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x16xf32>, tensor<1x80x32xbf16>, tensor<10xf32>) -> tensor<1x4x4x10xf32>
  return %0 : tensor<1x4x4x10xf32>
}

// -----

// 4 input channels (not a multiple of 16): rounded as one flat run, and
// (kw, c) stay two dimensions of the unfolding (LLVM 22 aborts on some
// odd-length bf16 vectors).
// CHECK-DAG: #[[WINDOW6:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d3, d2 * 2 + d4, d5)>
// CHECK-LABEL: func.func @conv3x3_rgb
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %arg0 {{\[}}[0, 1, 2, 3]] : tensor<1x8x8x4xf32> into tensor<256xf32>
// CHECK: linalg.generic {{.+}} ins(%[[FLAT]] : tensor<256xf32>) outs(%{{.+}} : tensor<256xbf16>)
// CHECK: %[[INIT:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0, 1, 2], [3, 4, 5]] output_shape [1, 4, 4, 3, 3, 4] : tensor<16x36xbf16> into tensor<1x4x4x3x3x4xbf16>
// CHECK: linalg.generic {indexing_maps = [#[[WINDOW6]], #{{.+}}], {{.+}} ins(%{{.+}} : tensor<1x10x10x4xbf16>) outs(%[[INIT]] : tensor<1x4x4x3x3x4xbf16>)
func.func @conv3x3_rgb(%x: tensor<1x8x8x4xf32>, %w: tensor<1x32x32xbf16>) -> tensor<1x4x4x16xf32> {
  %0 = kiln.bf16_conv2d %x, %w {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x4xf32>, tensor<1x32x32xbf16>) -> tensor<1x4x4x16xf32>
  return %0 : tensor<1x4x4x16xf32>
}

// -----

// A 1x1 convolution with stride 1 and no padding: its rows are the rounded
// pixels themselves, no unfolding.
// CHECK-LABEL: func.func @pointwise
// CHECK: %[[XB:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<64x32xbf16>)
// CHECK: %[[ROWS:.+]] = tensor.expand_shape %{{.+}} output_shape [64, 32] : tensor<2048xbf16> into tensor<64x32xbf16>
// CHECK: tensor.expand_shape %[[ROWS]] {{\[}}[0], [1, 2]] output_shape [64, 16, 2]
// CHECK: linalg.generic {{.+}} attrs = {kiln.bf16_matmul}
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @pointwise(%x: tensor<1x8x8x32xf32>, %w: tensor<2x16x32xbf16>) -> tensor<1x8x8x32xf32> {
  %0 = kiln.bf16_conv2d %x, %w {kernel = array<i64: 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x8x8x32xf32>, tensor<2x16x32xbf16>) -> tensor<1x8x8x32xf32>
  return %0 : tensor<1x8x8x32xf32>
}

// -----

// Two run-time operands, 2 batches of [4, 40] x [40, 20]: lhs padded to
// K = 64 and rounded; rhs padded to [64, 32] and gathered into 2 panels of
// [32 pairs, 16, 2] per batch (k = 2 k2 + j, n = 16 p + c); the product has
// a leading batch loop; the 12 padded columns are dropped.
// CHECK-DAG: #[[GATHER:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2 * 2 + d4, d1 * 16 + d3)>
// CHECK-DAG: #[[BROWS:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>
// CHECK-DAG: #[[BW:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d4, d3, d5)>
// CHECK-DAG: #[[BACC:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @batch
// CHECK: %[[ROWS:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<2x4x64xbf16>)
// CHECK: %[[BP:.+]] = tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0] [2, 40, 20] [1, 1, 1] : tensor<2x40x20xf32> into tensor<2x64x32xf32>
// CHECK: %[[PACKED:.+]] = linalg.generic {indexing_maps = [#[[GATHER]], #{{.+}}], {{.+}} ins(%[[BP]] : tensor<2x64x32xf32>) outs(%{{.+}} : tensor<2x2x32x16x2xbf16>)
// CHECK:   arith.truncf
// CHECK: %[[R4:.+]] = tensor.expand_shape %[[ROWS]] {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 32, 2]
// CHECK: linalg.generic {indexing_maps = [#[[BROWS]], #[[BW]], #[[BACC]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[R4]], %[[PACKED]] : tensor<2x4x32x2xbf16>, tensor<2x2x32x16x2xbf16>) outs(%{{.+}} : tensor<2x4x2x16xf32>) attrs = {kiln.bf16_matmul}
// CHECK: %[[Y:.+]] = tensor.extract_slice %{{.+}}[0, 0, 0] [2, 4, 20] [1, 1, 1] : tensor<2x4x32xf32> to tensor<2x4x20xf32>
// CHECK: return %[[Y]]
func.func @batch(%a: tensor<2x4x40xf32>, %b: tensor<2x40x20xf32>) -> tensor<2x4x20xf32> {
  %0 = kiln.bf16_batch_matmul %a, %b : (tensor<2x4x40xf32>, tensor<2x40x20xf32>) -> tensor<2x4x20xf32>
  return %0 : tensor<2x4x20xf32>
}
