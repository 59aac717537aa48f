// RUN: kiln-opt %s --split-input-file --kiln-cpu-drop-amx-zero-fills | FileCheck %s

#rows = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc = affine_map<(m, p, c, k, j) -> (m, p, c)>

// A product the AMX kernel takes starts from zero tiles: it reads the empty
// tensor, not the zero fill.
// CHECK-LABEL: func.func @marked_product
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<16x1x16xf32>
// CHECK: linalg.generic {{.+}} outs(%[[EMPTY]] : tensor<16x1x16xf32>) attrs = {kiln.bf16_matmul}
func.func @marked_product(%x: tensor<16x16x2xbf16>, %w: tensor<1x16x16x2xbf16>) -> tensor<16x1x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x1x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x1x16xf32>) -> tensor<16x1x16xf32>
  %0 = linalg.generic {indexing_maps = [#rows, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : tensor<16x16x2xbf16>, tensor<1x16x16x2xbf16>) outs(%acc : tensor<16x1x16xf32>) attrs = {kiln.bf16_matmul} {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %b : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    %4 = arith.addf %o, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<16x1x16xf32>
  return %0 : tensor<16x1x16xf32>
}

// -----

// Any other reduction keeps its fill.
// CHECK-LABEL: func.func @plain_matmul
// CHECK: %[[FILL:.+]] = linalg.fill
// CHECK: linalg.matmul {{.+}} outs(%[[FILL]] : tensor<8x32xf32>)
func.func @plain_matmul(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %x = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %x : tensor<8x32xf32>
}
