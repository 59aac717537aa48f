// RUN: kiln-opt %s --kiln-convert-kiln-to-linalg | FileCheck %s

// [2, 3, 8] rows of K = 8 (padded to 32 with zeros) rounded to bf16, the
// marked product into f32 [6, 1, 16] from a zero fill, then the bias, folded
// back to [2, 3, 16].
// CHECK-DAG: #[[ROWS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4)>
// CHECK-DAG: #[[W:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d2, d4)>
// CHECK-DAG: #[[ACC:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @bf16_matmul
// CHECK: %[[PAD:.+]] = tensor.insert_slice %{{.+}} into %{{.+}}[0, 0] [6, 8] [1, 1] : tensor<6x8xf32> into tensor<6x32xf32>
// CHECK: %[[XB:.+]] = linalg.generic {{.+}} ins(%[[PAD]] : tensor<6x32xf32>) outs(%{{.+}} : tensor<6x32xbf16>)
// CHECK:   arith.truncf %{{.+}} : f32 to bf16
// CHECK: %[[ZERO:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<6x1x16xf32>)
// CHECK: %[[X3:.+]] = tensor.expand_shape %[[XB]] {{\[}}[0], [1, 2]] output_shape [6, 16, 2]
// CHECK: %[[W4:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1], [2, 3]] output_shape [1, 16, 16, 2]
// CHECK: %[[P:.+]] = linalg.generic {indexing_maps = [#[[ROWS]], #[[W]], #[[ACC]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[X3]], %[[W4]] : tensor<6x16x2xbf16>, tensor<1x16x16x2xbf16>) outs(%[[ZERO]] : tensor<6x1x16xf32>) attrs = {kiln.bf16_matmul}
// CHECK:   arith.extf
// CHECK:   arith.extf
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: %[[Y:.+]] = linalg.generic {{.+}} ins(%[[P]], %{{.+}} : tensor<6x1x16xf32>, tensor<1x16xf32>)
// CHECK:   arith.addf
// CHECK: tensor.expand_shape {{.+}} output_shape [2, 3, 16]
func.func @bf16_matmul(%x: tensor<2x3x8xf32>, %w: tensor<1x16x32xbf16>) -> tensor<2x3x16xf32> {
  %b = kiln.constant dense<0.25> : tensor<16xf32>
  %0 = kiln.bf16_matmul %x, %w, %b : (tensor<2x3x8xf32>, tensor<1x16x32xbf16>, tensor<16xf32>) -> tensor<2x3x16xf32>
  return %0 : tensor<2x3x16xf32>
}
