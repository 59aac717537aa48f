// RUN: kiln-opt %s --split-input-file --kiln-cpu-tiling-pipeline="vector-width=8 parallel-work=0" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cpu-tiling-pipeline="vector-width=8 parallel-work=1" | FileCheck %s --check-prefix=THREADS
// RUN: kiln-opt %s --split-input-file --kiln-cpu-tiling-pipeline="vector-width=16 parallel-work=0" | FileCheck %s --check-prefix=VW16

// A product with packed weights (panels of 32 lanes, 4 AVX2 registers) and
// a bias epilogue, 15 rows. Tiles of a whole panel would have one row (15
// has no divisor 2, and 3 x 4 registers spill): with 8 lanes the tile is 6
// rows x half a panel (2 registers: 12 accumulators beside 2 weight vectors
// and a broadcast). Two full tiles over rows 0-11, then one static tile of
// the 3 rows left, each a static vector contraction with the epilogue
// fused; no tile size is left to run time.
// CHECK-LABEL: func.func @packed_rows_15
// CHECK: scf.for %{{.+}} = %c0 to %c12 step %c6
// CHECK: scf.for %{{.+}} = %c0 to %c2 step %c1
// CHECK: scf.for %{{.+}} = %c0 to %c32 step %c16
// CHECK: vector.contract {{.+}} : vector<6x1xf32>, vector<1x1x16xf32> into vector<6x1x16xf32>
// CHECK: arith.addf {{.+}} : vector<6x1x16xf32>
// CHECK: tensor.extract_slice %{{.+}}[12, %{{.+}}, %{{.+}}] [3, 1, 16] [1, 1, 1]
// CHECK: vector.contract {{.+}} : vector<3x1xf32>, vector<1x1x16xf32> into vector<3x1x16xf32>
// CHECK: arith.addf {{.+}} : vector<3x1x16xf32>
// CHECK-NOT: affine.min
// CHECK-NOT: linalg.generic
// Threads share the panels (a loop its tile divides), each task running
// the full row tiles and the last one.
// THREADS-LABEL: func.func @packed_rows_15
// THREADS: scf.forall (%{{.+}}) in (2)
// THREADS: scf.for %{{.+}} = %c0 to %c12 step %c6
// THREADS: vector<6x1x16xf32>
// THREADS: vector<3x1x16xf32>
// THREADS: scf.forall.in_parallel
// AVX-512 (32 registers) keeps whole panels and a row count dividing M.
// VW16-LABEL: func.func @packed_rows_15
// VW16: vector.contract {{.+}} : vector<5x1xf32>, vector<1x1x32xf32> into vector<5x1x32xf32>
// VW16-NOT: affine.min
#a = affine_map<(m, p, c, k) -> (m, k)>
#b = affine_map<(m, p, c, k) -> (p, k, c)>
#o = affine_map<(m, p, c, k) -> (m, p, c)>
#id = affine_map<(m, p, c) -> (m, p, c)>
#bias = affine_map<(m, p, c) -> (p, c)>
func.func @packed_rows_15(%a: tensor<15x8xf32>, %panels: tensor<2x8x32xf32>, %bias: tensor<2x32xf32>) -> tensor<15x2x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<15x2x32xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<15x2x32xf32>) -> tensor<15x2x32xf32>
  %p = linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %panels : tensor<15x8xf32>, tensor<2x8x32xf32>) outs(%fill : tensor<15x2x32xf32>) attrs = {kiln.packed_rhs} {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %m = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<15x2x32xf32>
  %e2 = tensor.empty() : tensor<15x2x32xf32>
  %r = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p, %bias : tensor<15x2x32xf32>, tensor<2x32xf32>) outs(%e2 : tensor<15x2x32xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<15x2x32xf32>
  return %r : tensor<15x2x32xf32>
}

// -----

// An even M keeps whole panels, 2 rows x 4 registers (8 accumulators): the
// half-panel tiles of 128 x 256 x 1024 were slower on two threads.
// CHECK-LABEL: func.func @packed_rows_2
// CHECK: vector.contract {{.+}} : vector<2x1xf32>, vector<1x1x32xf32> into vector<2x1x32xf32>
// CHECK-NOT: affine.min
#a = affine_map<(m, p, c, k) -> (m, k)>
#b = affine_map<(m, p, c, k) -> (p, k, c)>
#o = affine_map<(m, p, c, k) -> (m, p, c)>
func.func @packed_rows_2(%a: tensor<2x8xf32>, %panels: tensor<2x8x32xf32>) -> tensor<2x2x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2x32xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
  %p = linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %panels : tensor<2x8xf32>, tensor<2x8x32xf32>) outs(%fill : tensor<2x2x32xf32>) attrs = {kiln.packed_rhs} {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %m = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x2x32xf32>
  return %p : tensor<2x2x32xf32>
}

// -----

// Rows of a whole 4-register panel: at most 2, since a 3 x 4-register tile
// (12 accumulators, 4 weight vectors and a broadcast: 17 of 16 registers)
// spilled an accumulator on every step. 3 rows: one tile of 3 rows x half a
// panel.
// CHECK-LABEL: func.func @packed_rows_3
// CHECK-NOT: vector<3x1x32xf32>
// CHECK: vector.contract {{.+}} : vector<3x1xf32>, vector<1x1x16xf32> into vector<3x1x16xf32>
// CHECK-NOT: vector<3x1x32xf32>
// CHECK-NOT: affine.min
#a = affine_map<(m, p, c, k) -> (m, k)>
#b = affine_map<(m, p, c, k) -> (p, k, c)>
#o = affine_map<(m, p, c, k) -> (m, p, c)>
func.func @packed_rows_3(%a: tensor<3x8xf32>, %panels: tensor<2x8x32xf32>) -> tensor<3x2x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x2x32xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<3x2x32xf32>) -> tensor<3x2x32xf32>
  %p = linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %panels : tensor<3x8xf32>, tensor<2x8x32xf32>) outs(%fill : tensor<3x2x32xf32>) attrs = {kiln.packed_rhs} {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %m = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x2x32xf32>
  return %p : tensor<3x2x32xf32>
}

// -----

// A 3x3 convolution over rows of 14 pixels (ResNet's third stage) with 8
// lanes: 6 pixels x 2 registers of channels (12 accumulators), two full
// tiles and one static tile of the 2 pixels left, rather than 7 pixels x 1
// register (7 FMA chains).
// CHECK-LABEL: func.func @conv3x3_row_14
// CHECK: scf.for %{{.+}} = %c0 to %c12 step %c6
// CHECK: vector.contract {{.+}} : vector<6x4xf32>, vector<4x16xf32> into vector<6x16xf32>
// CHECK: vector.contract {{.+}} : vector<2x4xf32>, vector<4x16xf32> into vector<2x16xf32>
// CHECK-NOT: vector<7x
// CHECK-NOT: affine.min
func.func @conv3x3_row_14(%x: tensor<1x16x16x32xf32>, %w: tensor<3x3x32x16xf32>, %o: tensor<1x14x14x16xf32>) -> tensor<1x14x14x16xf32> {
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x16x16x32xf32>, tensor<3x3x32x16xf32>) outs(%o : tensor<1x14x14x16xf32>) -> tensor<1x14x14x16xf32>
  return %0 : tensor<1x14x14x16xf32>
}
