// RUN: kiln-opt %s --mlir-disable-threading --kiln-cpu-tile-and-vectorize | FileCheck %s

// The sum over the empty last piece of a Split of run-time rows: the slice
// at offset 128 of a dimension of 128 keeps its size 0 as %c0 (the
// canonicalizer folds no offset at the end of a dimension into the type), so
// the loop's extent is a run-time 0. The sum does nothing and stays whole;
// tiling it divided by 0 (fuzz seed 46206). The sum over the full piece
// beside it is tiled as usual.
// CHECK-LABEL: func.func @sum_of_empty_piece
// CHECK: %[[EMPTY:.+]] = tensor.extract_slice %{{.+}}[0, 0, 0, %c128] [3, %{{.+}}, 128, %c0]
// CHECK: scf.forall
// CHECK: vector.multi_reduction
// CHECK: linalg.generic {{.+}} ins(%[[EMPTY]] : tensor<3x?x128x?xf32>)
#in = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @sum_of_empty_piece(%x: tensor<3x?x128x128xf32>) -> (tensor<3x?x128xf32>, tensor<3x?x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c1 : tensor<3x?x128x128xf32>
  %cast = tensor.cast %x : tensor<3x?x128x128xf32> to tensor<3x?x?x128xf32>
  %full = tensor.extract_slice %cast[0, 0, 0, 0] [3, %n, 128, %c128] [1, 1, 1, 1] : tensor<3x?x?x128xf32> to tensor<3x?x128x?xf32>
  %empty = tensor.extract_slice %cast[0, 0, 0, %c128] [3, %n, 128, %c0] [1, 1, 1, 1] : tensor<3x?x?x128xf32> to tensor<3x?x128x?xf32>
  %e = tensor.empty(%n) : tensor<3x?x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x?x128xf32>) -> tensor<3x?x128xf32>
  %e2 = tensor.empty(%n) : tensor<3x?x128xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<3x?x128xf32>) -> tensor<3x?x128xf32>
  %s0 = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%full : tensor<3x?x128x?xf32>) outs(%f : tensor<3x?x128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<3x?x128xf32>
  %s1 = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%empty : tensor<3x?x128x?xf32>) outs(%f2 : tensor<3x?x128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<3x?x128xf32>
  return %s0, %s1 : tensor<3x?x128xf32>, tensor<3x?x128xf32>
}
