// RUN: kiln-opt %s --split-input-file --kiln-convert-kiln-to-linalg | FileCheck %s

// [2, 3, 6] rows of K = 6 (padded to 8) times packed weights for N = 32:
// row ranges, per-row parameters, uint8 rows, the marked integer product
// and the f32 epilogue, folded back to [2, 3, 32].
// CHECK-LABEL: func.func @dynamic_quant_matmul
// CHECK: %[[X:.+]] = tensor.expand_shape {{.+}} into tensor<6x6xf32>
// CHECK: linalg.copy ins(%[[X]] : tensor<6x6xf32>)
// CHECK: %[[XP:.+]] = tensor.insert_slice %{{.+}} into %{{.+}}[0, 0] [6, 6] [1, 1] : tensor<6x6xf32> into tensor<6x8xf32>
// The range: [6, 2, 4] reduced over the middle dimension, then the 8 lanes.
// CHECK: %[[X3:.+]] = tensor.expand_shape {{.+}} into tensor<6x1x8xf32>
// CHECK: %[[LO4:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X3]] : tensor<6x1x8xf32>) outs(%{{.+}} : tensor<6x8xf32>)
// CHECK: arith.minnumf
// CHECK: %[[LO:.+]] = linalg.generic {{.+}} ins(%[[LO4]] : tensor<6x8xf32>) outs(%{{.+}} : tensor<6xf32>)
// CHECK: arith.minnumf
// CHECK: %[[HI4:.+]] = linalg.generic {{.+}} ins(%[[X3]] : tensor<6x1x8xf32>)
// CHECK: arith.maxnumf
// CHECK: %[[HI:.+]] = linalg.generic {{.+}} ins(%[[HI4]] : tensor<6x8xf32>)
// CHECK: arith.maxnumf
// CHECK: %[[P:.+]]:4 = linalg.generic {{.+}} ins(%[[LO]], %[[HI]] : tensor<6xf32>, tensor<6xf32>)
// CHECK: math.roundeven
// CHECK: %[[QA:.+]] = linalg.generic {{.+}} ins(%[[XP]], %[[P]]#1, %[[P]]#2 : tensor<6x8xf32>, tensor<6xf32>, tensor<6xf32>) outs(%{{.+}} : tensor<6x8xi8>)
// CHECK: %[[ACC:.+]] = linalg.fill ins(%{{.+}} : i32) outs(%{{.+}} : tensor<6x1x32xi32>)
// CHECK: %[[QA3:.+]] = tensor.expand_shape %[[QA]] {{\[\[}}0], [1, 2]] output_shape [6, 2, 4]
// CHECK: %[[W4:.+]] = tensor.expand_shape %{{.+}} {{\[\[}}0], [1], [2, 3]] output_shape [1, 2, 32, 4]
// CHECK: %[[I:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[QA3]], %[[W4]] : tensor<6x2x4xi8>, tensor<1x2x32x4xi8>) outs(%[[ACC]] : tensor<6x1x32xi32>) attrs = {kiln.int8_matmul}
// CHECK: arith.extui
// CHECK: arith.extsi
// CHECK: arith.muli
// CHECK: arith.addi
// CHECK: %[[Y:.+]] = linalg.generic {{.+}} ins(%[[I]], %[[P]]#0, %[[P]]#3, {{.+}} : tensor<6x1x32xi32>, tensor<6xf32>, tensor<6xi32>, tensor<1x32xf32>, tensor<1x32xi32>, tensor<1x32xf32>)
// CHECK: arith.subi
// CHECK: arith.sitofp
// CHECK: tensor.expand_shape {{.+}} into tensor<2x3x32xf32>
func.func @dynamic_quant_matmul(%x: tensor<2x3x6xf32>, %w: tensor<1x2x128xi8>, %s: tensor<32xf32>, %sums: tensor<32xi32>, %b: tensor<32xf32>) -> tensor<2x3x32xf32> {
  %0 = kiln.dynamic_quant_matmul %x, %w, %s, %sums, %b : (tensor<2x3x6xf32>, tensor<1x2x128xi8>, tensor<32xf32>, tensor<32xi32>, tensor<32xf32>) -> tensor<2x3x32xf32>
  return %0 : tensor<2x3x32xf32>
}
