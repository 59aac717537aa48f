// RUN: kiln-opt %s --kiln-cpu-tiling-pipeline | FileCheck %s

// One pass of a linear Resize in NHWC: each output row blends two input
// rows picked by constant index tables read in the body. A tile spans only
// channels, so each index is one scalar per tile and the rows are read as
// contiguous vectors (no vector.gather, no scalar element loop).

#out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>
// CHECK-LABEL: func.func @blend_rows
// CHECK: scf.for
// CHECK: vector.transfer_read %{{.+}} : tensor<20xi64>, vector<i64>
// CHECK: vector.transfer_read %{{.+}} : tensor<1x10x10x16xf32>, vector<16xf32>
// CHECK: vector.transfer_read %{{.+}} : tensor<20xi64>, vector<i64>
// CHECK: vector.transfer_read %{{.+}} : tensor<1x10x10x16xf32>, vector<16xf32>
// CHECK: arith.mulf {{.+}} : vector<16xf32>
// CHECK-NOT: vector.gather
// CHECK-NOT: tensor.extract %{{.+}} : tensor<1x10x10x16xf32>
// CHECK: return
func.func @blend_rows(%x: tensor<1x10x10x16xf32>) -> tensor<1x20x10x16xf32> {
  %c0 = arith.constant 0 : index
  %c9 = arith.constant 9 : index
  %lo = arith.constant dense<[0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9]> : tensor<20xi64>
  %hi = arith.constant dense<[0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 9]> : tensor<20xi64>
  %wlo = arith.constant dense<0.75> : tensor<1x20x1x1xf32>
  %whi = arith.constant dense<0.25> : tensor<1x20x1x1xf32>
  %e = tensor.empty() : tensor<1x20x10x16xf32>
  %y = linalg.generic {indexing_maps = [#row, #row, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%wlo, %whi : tensor<1x20x1x1xf32>, tensor<1x20x1x1xf32>) outs(%e : tensor<1x20x10x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %h = linalg.index 1 : index
    %w = linalg.index 2 : index
    %c = linalg.index 3 : index
    %i0 = tensor.extract %lo[%h] : tensor<20xi64>
    %j0 = arith.index_cast %i0 : i64 to index
    %k0 = arith.minsi %j0, %c9 : index
    %v0 = tensor.extract %x[%c0, %k0, %w, %c] : tensor<1x10x10x16xf32>
    %i1 = tensor.extract %hi[%h] : tensor<20xi64>
    %j1 = arith.index_cast %i1 : i64 to index
    %k1 = arith.minsi %j1, %c9 : index
    %v1 = tensor.extract %x[%c0, %k1, %w, %c] : tensor<1x10x10x16xf32>
    %p0 = arith.mulf %v0, %a : f32
    %p1 = arith.mulf %v1, %b : f32
    %s = arith.addf %p0, %p1 : f32
    linalg.yield %s : f32
  } -> tensor<1x20x10x16xf32>
  return %y : tensor<1x20x10x16xf32>
}
