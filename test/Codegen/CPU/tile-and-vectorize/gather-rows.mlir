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

// The same pass over run-time sizes (a Resize whose tables are computed at
// run time, read in the body from tensors of run-time length): the rows
// are still read as contiguous channel vectors of the data, whose size is
// known only at run time.
// CHECK-LABEL: func.func @blend_rows_run_time
// CHECK: scf.for
// CHECK: vector.transfer_read %{{.+}} : tensor<?xi64>, vector<i64>
// CHECK: vector.transfer_read %{{.+}} : tensor<1x?x?x16xf32>, vector<16xf32>
// CHECK: vector.transfer_read %{{.+}} : tensor<?xi64>, vector<i64>
// CHECK: vector.transfer_read %{{.+}} : tensor<1x?x?x16xf32>, vector<16xf32>
// CHECK: arith.mulf {{.+}} : vector<16xf32>
// CHECK-NOT: vector.gather
// CHECK-NOT: tensor.extract %{{.+}} : tensor<1x?x?x16xf32>
// CHECK: return
func.func @blend_rows_run_time(%x: tensor<1x?x?x16xf32>, %lo: tensor<?xi64>, %hi: tensor<?xi64>,
                               %wlo: tensor<1x?x1x1xf32>, %whi: tensor<1x?x1x1xf32>) -> tensor<1x?x?x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %x, %c1 : tensor<1x?x?x16xf32>
  %last = arith.subi %n, %c1 : index
  %rows = tensor.dim %lo, %c0 : tensor<?xi64>
  %cols = tensor.dim %x, %c2 : tensor<1x?x?x16xf32>
  %e = tensor.empty(%rows, %cols) : tensor<1x?x?x16xf32>
  %y = linalg.generic {indexing_maps = [#row, #row, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%wlo, %whi : tensor<1x?x1x1xf32>, tensor<1x?x1x1xf32>) outs(%e : tensor<1x?x?x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %h = linalg.index 1 : index
    %w = linalg.index 2 : index
    %c = linalg.index 3 : index
    %i0 = tensor.extract %lo[%h] : tensor<?xi64>
    %j0 = arith.index_cast %i0 : i64 to index
    %k0 = arith.minsi %j0, %last : index
    %v0 = tensor.extract %x[%c0, %k0, %w, %c] : tensor<1x?x?x16xf32>
    %i1 = tensor.extract %hi[%h] : tensor<?xi64>
    %j1 = arith.index_cast %i1 : i64 to index
    %k1 = arith.minsi %j1, %last : index
    %v1 = tensor.extract %x[%c0, %k1, %w, %c] : tensor<1x?x?x16xf32>
    %p0 = arith.mulf %v0, %a : f32
    %p1 = arith.mulf %v1, %b : f32
    %s = arith.addf %p0, %p1 : f32
    linalg.yield %s : f32
  } -> tensor<1x?x?x16xf32>
  return %y : tensor<1x?x?x16xf32>
}

// A gather along the channels of data of run-time size would be a
// vector.gather, which does not lower for such data: it stays scalar.
// CHECK-LABEL: func.func @gather_channels_run_time
// CHECK-NOT: vector.gather
// CHECK: tensor.extract %{{.+}} : tensor<1x?x?x16xf32>
// CHECK: return
func.func @gather_channels_run_time(%x: tensor<1x?x?x16xf32>, %idx: tensor<16xi64>) -> tensor<1x?x?x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %rows = tensor.dim %x, %c1 : tensor<1x?x?x16xf32>
  %cols = tensor.dim %x, %c2 : tensor<1x?x?x16xf32>
  %e = tensor.empty(%rows, %cols) : tensor<1x?x?x16xf32>
  %y = linalg.generic {indexing_maps = [#out], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x?x?x16xf32>) {
  ^bb0(%o: f32):
    %h = linalg.index 1 : index
    %w = linalg.index 2 : index
    %c = linalg.index 3 : index
    %i = tensor.extract %idx[%c] : tensor<16xi64>
    %j = arith.index_cast %i : i64 to index
    %v = tensor.extract %x[%c0, %h, %w, %j] : tensor<1x?x?x16xf32>
    linalg.yield %v : f32
  } -> tensor<1x?x?x16xf32>
  return %y : tensor<1x?x?x16xf32>
}
