// RUN: kiln-opt %s --split-input-file --kiln-cpu-tile-and-vectorize="vector-width=16 parallel-work=0" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cpu-tile-and-vectorize="vector-width=8 parallel-work=0" | FileCheck %s --check-prefix=VW8

// With 16 f32 lanes (AVX-512) a matmul gets an 8 x 32 register tile (two
// registers wide) and one reduction step per iteration: an outer product of
// an 8x1 column of A and a 1x32 row of B accumulated into 8x32.
// CHECK-LABEL: func.func @matmul_64
// CHECK-SAME: (%[[A:.+]]: tensor<64x64xf32>, %[[B:.+]]: tensor<64x64xf32>, %[[C:.+]]: tensor<64x64xf32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK: scf.for %[[I:.+]] = %[[C0]] to %[[C64]] step %[[C8]]
// CHECK: scf.for %[[J:.+]] = %[[C0]] to %[[C64]] step %[[C32]]
// The reduction loop carries the 8x32 accumulator tile, not the whole
// result, so that the tile's vector read and write can leave the loop.
// CHECK: %[[TILE:.+]] = tensor.extract_slice %{{.+}}[%[[I]], %[[J]]] [8, 32] [1, 1]
// CHECK: scf.for %[[K:.+]] = %[[C0]] to %[[C64]] step %[[C1]] iter_args(%[[ACC:.+]] = %[[TILE]])
// CHECK: %[[LHS:.+]] = vector.transfer_read %[[A]][%[[I]], %[[K]]]{{.+}} : tensor<64x64xf32>, vector<8x1xf32>
// CHECK: %[[ROW:.+]] = vector.transfer_read %[[B]][%[[K]], %[[J]]]{{.+}} : tensor<64x64xf32>, vector<32xf32>
// CHECK: %[[RHS:.+]] = vector.broadcast %[[ROW]] : vector<32xf32> to vector<1x32xf32>
// CHECK: %[[OUT:.+]] = vector.transfer_read %[[ACC]][%[[C0]], %[[C0]]]{{.+}} : tensor<8x32xf32>, vector<8x32xf32>
// CHECK: %[[R:.+]] = vector.contract {{.+}} %[[LHS]], %[[RHS]], %[[OUT]] : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK: vector.transfer_write %[[R]], %[[ACC]][%[[C0]], %[[C0]]]{{.+}} : vector<8x32xf32>, tensor<8x32xf32>
// CHECK-NOT: linalg.matmul
// With 8 lanes (AVX2) the tile is 8 x 16.
// VW8-LABEL: func.func @matmul_64
// VW8: scf.for {{.+}} step %c8
// VW8: scf.for {{.+}} step %c16
// VW8: vector.contract {{.+}} : vector<8x1xf32>, vector<1x16xf32> into vector<8x16xf32>
func.func @matmul_64(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// Tile sizes divide their loops, so every tile is static and needs no mask:
// M = 12 takes 6 rows at a time, N = 20 fits in one tile and is not tiled.
// CHECK-LABEL: func.func @matmul_odd_sizes
// CHECK: scf.for {{.+}} step %c6
// CHECK: scf.for {{.+}} step %c1
// CHECK-NOT: scf.for
// CHECK: vector.contract {{.+}} : vector<6x1xf32>, vector<1x20xf32> into vector<6x20xf32>
// CHECK-NOT: vector.create_mask
// CHECK-NOT: vector.mask
func.func @matmul_odd_sizes(%a: tensor<12x5xf32>, %b: tensor<5x20xf32>, %c: tensor<12x20xf32>) -> tensor<12x20xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<12x5xf32>, tensor<5x20xf32>) outs(%c : tensor<12x20xf32>) -> tensor<12x20xf32>
  return %0 : tensor<12x20xf32>
}

// -----

// Elementwise: four registers (64 lanes) along the innermost dimension, one
// row at a time; the scalar body becomes the same ops on vectors.
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[A:.+]]: tensor<4x128xf32>, %[[B:.+]]: tensor<128xf32>)
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<64xf32>
// CHECK: scf.for %[[I:.+]] = {{.+}} step %c1
// CHECK: scf.for %[[J:.+]] = {{.+}} step %c64
// CHECK: %[[VA:.+]] = vector.transfer_read %[[A]][%[[I]], %[[J]]]{{.+}} : tensor<4x128xf32>, vector<64xf32>
// CHECK: %[[VB:.+]] = vector.transfer_read %[[B]][%[[J]]]{{.+}} : tensor<128xf32>, vector<64xf32>
// CHECK: %[[S:.+]] = arith.addf %[[VA]], %[[VB]] : vector<64xf32>
// CHECK: %[[R:.+]] = arith.maximumf %[[S]], %[[ZERO]] : vector<64xf32>
// CHECK: vector.transfer_write %[[R]]
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @elementwise(%a: tensor<4x128xf32>, %b: tensor<128xf32>) -> tensor<4x128xf32> {
  %e = tensor.empty() : tensor<4x128xf32>
  %0 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<4x128xf32>, tensor<128xf32>) outs(%e : tensor<4x128xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %s, %z : f32
    linalg.yield %r : f32
  } -> tensor<4x128xf32>
  return %0 : tensor<4x128xf32>
}

// -----

// A row reduction: 64 lanes of the reduced dimension per step.
// CHECK-LABEL: func.func @row_sum
// CHECK: scf.for {{.+}} step %c1
// CHECK: scf.for {{.+}} step %c64
// CHECK: vector.transfer_read {{.+}} : tensor<8x256xf32>, vector<64xf32>
// CHECK: vector.multi_reduction <add>, %{{.+}}, %{{.+}} [1] : vector<1x64xf32> to vector<1xf32>
// CHECK-NOT: linalg.generic
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
func.func @row_sum(%x: tensor<8x256xf32>, %acc: tensor<8xf32>) -> tensor<8xf32> {
  %0 = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x256xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// An NHWC convolution is tiled to one output row, one kernel row and two
// input channels at a time, which decomposes into a 1-D convolution and
// vectorizes: one input row (8 + 2 pixels x 2 channels), the kernel row
// (3 x 2 x 32), and per kernel column a contraction of 8 pixels x 2 channels
// with 2 x 32 filter taps into the 8 x 32 accumulator. Both reduction loops
// carry the accumulator row (sliced once, outside them), so that its vector
// read and write can leave the loops and the tile stays in registers.
// CHECK-LABEL: func.func @conv_nhwc
// CHECK-SAME: (%[[X:.+]]: tensor<1x10x10x8xf32>, %[[W:.+]]: tensor<3x3x8x32xf32>,
// CHECK: scf.for %[[OH:.+]] = %{{.+}} to %c8 step %c1
// CHECK: %[[TILE:.+]] = tensor.extract_slice {{.+}} : tensor<1x1x8x32xf32> to tensor<1x8x32xf32>
// CHECK: scf.for %[[KH:.+]] = %{{.+}} to %c3 step %c1 iter_args(%[[ACCH:.+]] = %[[TILE]])
// CHECK: scf.for %[[C:.+]] = %{{.+}} to %c8 step %c2 iter_args(%[[ACC:.+]] = %[[ACCH]])
// CHECK: %[[ROW:.+]] = vector.transfer_read %[[X]]{{.+}} : tensor<1x10x10x8xf32>, vector<10x2xf32>
// CHECK: %[[TAPS:.+]] = vector.transfer_read %[[W]][%[[KH]], %{{.+}}, %[[C]], {{.+}} : tensor<3x3x8x32xf32>, vector<3x2x32xf32>
// CHECK: %[[OUT:.+]] = vector.transfer_read %[[ACC]]{{.+}} : tensor<1x8x32xf32>, vector<8x32xf32>
// CHECK-COUNT-3: vector.extract_strided_slice %[[ROW]] {{.+}} : vector<10x2xf32> to vector<8x2xf32>
// CHECK: %[[P0:.+]] = vector.contract {{.+}} %{{.+}}, %{{.+}}, %[[OUT]] : vector<8x2xf32>, vector<2x32xf32> into vector<8x32xf32>
// CHECK: %[[P1:.+]] = vector.contract {{.+}} %{{.+}}, %{{.+}}, %[[P0]] : vector<8x2xf32>, vector<2x32xf32> into vector<8x32xf32>
// CHECK: %[[P2:.+]] = vector.contract {{.+}} %{{.+}}, %{{.+}}, %[[P1]] : vector<8x2xf32>, vector<2x32xf32> into vector<8x32xf32>
// CHECK: vector.transfer_write %[[P2]]
// CHECK-NOT: linalg.conv
func.func @conv_nhwc(%x: tensor<1x10x10x8xf32>, %w: tensor<3x3x8x32xf32>, %acc: tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32> {
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x10x10x8xf32>, tensor<3x3x8x32xf32>) outs(%acc : tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32>
  return %0 : tensor<1x8x8x32xf32>
}

// -----

// With fewer output channels than a register (one group of a grouped
// convolution) the tile takes 16 output pixels instead of 8.
// CHECK-LABEL: func.func @conv_narrow_filters
// CHECK: scf.for {{.+}} to %c32 step %c16
// CHECK: vector.contract {{.+}} : vector<16x2xf32>, vector<2x8xf32> into vector<16x8xf32>
// CHECK-NOT: linalg.conv
func.func @conv_narrow_filters(%x: tensor<1x34x34x8xf32>, %w: tensor<3x3x8x8xf32>, %acc: tensor<1x32x32x8xf32>) -> tensor<1x32x32x8xf32> {
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x34x34x8xf32>, tensor<3x3x8x8xf32>) outs(%acc : tensor<1x32x32x8xf32>) -> tensor<1x32x32x8xf32>
  return %0 : tensor<1x32x32x8xf32>
}

// -----

// Depthwise: the same 1-D decomposition, with channel-wise FMAs.
// CHECK-LABEL: func.func @depthwise_nhwc
// CHECK: scf.for {{.+}} to %c8 step %c1
// CHECK: scf.for {{.+}} to %c3 step %c1
// CHECK-COUNT-3: vector.fma {{.+}} : vector<8x16xf32>
// CHECK-NOT: linalg.depthwise
func.func @depthwise_nhwc(%x: tensor<1x10x10x16xf32>, %w: tensor<3x3x16xf32>, %acc: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %0 = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x10x10x16xf32>, tensor<3x3x16xf32>) outs(%acc : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  return %0 : tensor<1x8x8x16xf32>
}

// -----

// Depthwise channel tiles are whole registers: 48 channels (not a multiple
// of two registers) take three registers per pixel, not 32 + 16 lanes in
// two tiles, with 7 pixels to leave room for the filter taps.
// CHECK-LABEL: func.func @depthwise_three_registers
// CHECK-NOT: scf.for {{.+}} step %c32
// CHECK-COUNT-3: vector.fma {{.+}} : vector<7x48xf32>
// CHECK-NOT: linalg.depthwise
func.func @depthwise_three_registers(%x: tensor<1x9x16x48xf32>, %w: tensor<3x3x48xf32>, %acc: tensor<1x7x14x48xf32>) -> tensor<1x7x14x48xf32> {
  %0 = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x9x16x48xf32>, tensor<3x3x48xf32>) outs(%acc : tensor<1x7x14x48xf32>) -> tensor<1x7x14x48xf32>
  return %0 : tensor<1x7x14x48xf32>
}

// -----

// NCHW max pooling vectorizes across channels: 16 channels per register.
// CHECK-LABEL: func.func @max_pool_nchw
// CHECK: scf.for {{.+}} to %c4 step %c1
// CHECK: scf.for {{.+}} to %c2 step %c1
// CHECK-COUNT-8: arith.maximumf {{.+}} : vector<16xf32>
// CHECK-NOT: linalg.pooling
func.func @max_pool_nchw(%x: tensor<1x16x8x8xf32>, %acc: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %win = tensor.empty() : tensor<2x2xf32>
  %0 = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %win : tensor<1x16x8x8xf32>, tensor<2x2xf32>) outs(%acc : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  return %0 : tensor<1x16x4x4xf32>
}

// -----

// A dynamic dimension is left whole; the op is tiled on the static loops
// but stays a linalg op (it becomes scalar loops later).
// CHECK-LABEL: func.func @dynamic_matmul
// CHECK: scf.for
// CHECK: linalg.matmul {{.+}} -> tensor<?x32xf32>
// CHECK-NOT: vector.contract
func.func @dynamic_matmul(%a: tensor<?x64xf32>, %b: tensor<64x64xf32>, %c: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<?x64xf32>, tensor<64x64xf32>) outs(%c : tensor<?x64xf32>) -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// -----

// A 13-pixel row has no divisor near 8: the tile takes the whole row against
// half a register of the 1000 channels (13 independent accumulators), not one
// pixel against 40 lanes.
// CHECK-LABEL: func.func @conv_row13
// CHECK: scf.for {{.+}} to %c13 step %c1
// CHECK: scf.for {{.+}} to %c1000 step %c8
// CHECK: scf.for {{.+}} -> (tensor<1x13x8xf32>)
// CHECK: vector.contract
func.func @conv_row13(%x: tensor<1x13x13x64xf32>, %w: tensor<1x1x64x1000xf32>, %o: tensor<1x13x13x1000xf32>) -> tensor<1x13x13x1000xf32> {
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x13x13x64xf32>, tensor<1x1x64x1000xf32>) outs(%o : tensor<1x13x13x1000xf32>) -> tensor<1x13x13x1000xf32>
  return %0 : tensor<1x13x13x1000xf32>
}

// -----

// 1000 columns: 40 lanes (two and a half registers) per tile, not 25.
// CHECK-LABEL: func.func @matmul_1000
// CHECK: scf.for {{.+}} to %c1000 step %c40
// CHECK: vector.contract {{.+}} into vector<8x40xf32>
func.func @matmul_1000(%a: tensor<8x64xf32>, %b: tensor<64x1000xf32>, %c: tensor<8x1000xf32>) -> tensor<8x1000xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<8x64xf32>, tensor<64x1000xf32>) outs(%c : tensor<8x1000xf32>) -> tensor<8x1000xf32>
  return %0 : tensor<8x1000xf32>
}
