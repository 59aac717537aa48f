// RUN: kiln-opt %s --split-input-file --kiln-cpu-tiling-pipeline="vector-width=16 parallel-work=0" --mlir-print-elementsattrs-with-hex-if-larger=100000 | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cpu-tiling-pipeline="vector-width=8 parallel-work=0" | FileCheck %s --check-prefix=VW8

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
// With 8 lanes (AVX2) at most 12 of the 16 registers hold accumulators
// (the broadcast and the row of B need the others): 64 rows have no divisor
// 6, so the tile is 4 x 16.
// VW8-LABEL: func.func @matmul_64
// VW8: scf.for {{.+}} step %c4
// VW8: scf.for {{.+}} step %c16
// VW8: vector.contract {{.+}} : vector<4x1xf32>, vector<1x16xf32> into vector<4x16xf32>
func.func @matmul_64(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// A 3x3 convolution with 8 lanes (AVX2) steps one filter tap and 4 input
// channels at a time: with a whole kernel row per step each broadcast of an
// input pixel served three taps and was spilled between them. 6 pixels x 2
// registers of channels (12 accumulators).
// VW8-LABEL: func.func @conv3x3_per_tap
// VW8: scf.for {{.+}} = %c0 to %c12 step %c6
// VW8: scf.for {{.+}} = %c0 to %c3 step %c1
// VW8: scf.for {{.+}} = %c0 to %c3 step %c1
// VW8: scf.for {{.+}} = %c0 to %c32 step %c4
// VW8: vector.contract {{.+}} : vector<6x4xf32>, vector<4x16xf32> into vector<6x16xf32>
func.func @conv3x3_per_tap(%x: tensor<1x10x14x32xf32>, %w: tensor<3x3x32x16xf32>, %o: tensor<1x8x12x16xf32>) -> tensor<1x8x12x16xf32> {
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x10x14x32xf32>, tensor<3x3x32x16xf32>) outs(%o : tensor<1x8x12x16xf32>) -> tensor<1x8x12x16xf32>
  return %0 : tensor<1x8x12x16xf32>
}

// -----

// Every tile is static and needs no mask: M = 12 takes 6 rows at a time;
// N = 20 takes one register of 16 columns and a static last tile of 4, not
// a 20-lane vector that LLVM would widen and assemble from pieces.
// CHECK-LABEL: func.func @matmul_odd_sizes
// CHECK: scf.for {{.+}} step %c6
// CHECK: tensor.extract_slice {{.+}} [6, 16] [1, 1]
// CHECK: scf.for {{.+}} step %c1
// CHECK: vector.contract {{.+}} : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// CHECK: tensor.extract_slice {{.+}}[%{{.+}}, 16] [6, 4] [1, 1]
// CHECK: scf.for {{.+}} step %c1
// CHECK: vector.contract {{.+}} : vector<6x1xf32>, vector<1x4xf32> into vector<6x4xf32>
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
// CHECK: %[[TILE:.+]] = tensor.extract_slice {{.+}} : tensor<1x{{.+}}x32xf32> to tensor<1x8x32xf32>
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
// of two registers) take one register per tile, three tiles, not 32 + 16
// lanes, nor a 48-lane vector (which LLVM assembles from pieces).
// CHECK-LABEL: func.func @depthwise_three_registers
// CHECK: scf.for {{.+}} to %c48 step %c16
// CHECK-COUNT-3: vector.fma {{.+}} : vector<7x16xf32>
// CHECK-NOT: vector<{{[0-9x]*}}48xf32>
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

// A dynamic dimension (a symbolic size) is tiled as a long static one: 8-row
// tiles up to the last multiple of 8, each the static 8 x 32 register tile
// of a static model; the r rows left run as a 4-row tile when r holds 4,
// then one tile of exactly r mod 4 rows (3, 2 or 1: the copy of that size
// runs once, the others not at all; r = 7: 4 + 3). No tile has a size of
// run-time value.
// CHECK-LABEL: func.func @dynamic_matmul
// CHECK: %[[M:.*]] = tensor.dim
// CHECK: %[[TILES:.*]] = arith.divui %[[M]], %c8
// CHECK: %[[SPLIT:.*]] = arith.muli %[[TILES]], %c8
// CHECK: %[[FULL:.*]] = scf.for %{{.*}} = %c0 to %[[SPLIT]] step %c8
// CHECK: tensor.extract_slice {{.+}} [8, 32] [1, 1] : tensor<?x64xf32> to tensor<8x32xf32>
// CHECK: vector.contract {{.+}} into vector<8x32xf32>
// CHECK: %[[LEFT:.*]] = arith.subi %[[M]], %[[SPLIT]]
// CHECK: %[[BIT4:.*]] = arith.andi %[[LEFT]], %c4
// CHECK: %[[END4:.*]] = arith.addi %[[SPLIT]], %[[BIT4]]
// CHECK: %[[FOUR:.*]] = scf.for %{{.*}} = %[[SPLIT]] to %[[END4]] step %c4 iter_args(%{{.*}} = %[[FULL]])
// CHECK: vector.contract {{.+}} into vector<4x32xf32>
// CHECK: %[[LOW:.*]] = arith.andi %[[LEFT]], %c3
// CHECK: %[[IS3:.*]] = arith.cmpi eq, %[[LOW]], %c3
// CHECK: %[[PLUS3:.*]] = arith.addi %[[END4]], %c3
// CHECK: %[[END3:.*]] = arith.select %[[IS3]], %[[PLUS3]], %[[END4]]
// CHECK: %[[THREE:.*]] = scf.for %{{.*}} = %[[END4]] to %[[END3]] step %c3 iter_args(%{{.*}} = %[[FOUR]])
// CHECK: vector.contract {{.+}} into vector<3x32xf32>
// CHECK: %[[IS2:.*]] = arith.cmpi eq, %[[LOW]], %c2
// CHECK: %[[PLUS2:.*]] = arith.addi %[[END4]], %c2
// CHECK: %[[END2:.*]] = arith.select %[[IS2]], %[[PLUS2]], %[[END4]]
// CHECK: %[[TWO:.*]] = scf.for %{{.*}} = %[[END4]] to %[[END2]] step %c2 iter_args(%{{.*}} = %[[THREE]])
// CHECK: vector.contract {{.+}} into vector<2x32xf32>
// CHECK: %[[IS1:.*]] = arith.cmpi eq, %[[LOW]], %c1
// CHECK: %[[PLUS1:.*]] = arith.addi %[[END4]], %c1
// CHECK: %[[END1:.*]] = arith.select %[[IS1]], %[[PLUS1]], %[[END4]]
// CHECK: %[[ONE:.*]] = scf.for %{{.*}} = %[[END4]] to %[[END1]] step %c1 iter_args(%{{.*}} = %[[TWO]])
// CHECK: tensor.extract_slice {{.+}} [1, 32] [1, 1] : tensor<?x64xf32> to tensor<1x32xf32>
// CHECK: vector.contract {{.+}} into vector<32xf32>
// CHECK: return %[[ONE]]
// CHECK-NOT: linalg.matmul
// CHECK-NOT: affine.min
func.func @dynamic_matmul(%a: tensor<?x64xf32>, %b: tensor<64x64xf32>, %c: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<?x64xf32>, tensor<64x64xf32>) outs(%c : tensor<?x64xf32>) -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// -----

// A transpose whose output rows run along a run-time size and read the input
// across its rows (K^T of 8-wide heads: too narrow for the 16 x 16 register
// transpose): two registers per tile, not the four of an elementwise op.
// Each lane is one load; LLVM's SLP vectorizer took seconds on a 64-lane
// gather whose rows lie a run-time size apart.
// CHECK-LABEL: func.func @runtime_transpose
// CHECK: scf.for %{{.+}} = %c0 to %{{.+}} step %c32
// CHECK: vector.transfer_read {{.+}} : tensor<?x8x8xf32>, vector<32x1x1xf32>
// CHECK: vector.transfer_write {{.+}} : vector<32xf32>, tensor<1x1x32xf32>
// VW8-LABEL: func.func @runtime_transpose
// VW8: vector.transfer_read {{.+}} : tensor<?x8x8xf32>, vector<16x1x1xf32>
func.func @runtime_transpose(%x: tensor<?x8x8xf32>, %o: tensor<8x8x?xf32>) -> tensor<8x8x?xf32> {
  %t = linalg.transpose ins(%x : tensor<?x8x8xf32>) outs(%o : tensor<8x8x?xf32>) permutation = [1, 2, 0]
  return %t : tensor<8x8x?xf32>
}

// -----

// The same copy along a run-time size without a transpose keeps four
// registers per tile.
// CHECK-LABEL: func.func @runtime_copy
// CHECK: vector.transfer_read {{.+}} : tensor<8x?xf32>, vector<64xf32>
func.func @runtime_copy(%x: tensor<8x?xf32>, %o: tensor<8x?xf32>) -> tensor<8x?xf32> {
  %t = linalg.copy ins(%x : tensor<8x?xf32>) outs(%o : tensor<8x?xf32>) -> tensor<8x?xf32>
  return %t : tensor<8x?xf32>
}

// -----

// An op that computes (here an exp) over rows of run-time length: 64-lane
// tiles up to the last multiple of 64, then the columns left in whole
// registers of 16, then one at a time (a softmax over a short sequence ran
// every column of it as a scalar step).
// CHECK-LABEL: func.func @runtime_exp_rest
// CHECK: %[[N:.*]] = tensor.dim
// CHECK: %[[TILES:.*]] = arith.divui %[[N]], %c64
// CHECK: %[[SPLIT:.*]] = arith.muli %[[TILES]], %c64
// CHECK: %[[FULL:.*]] = scf.for %{{.*}} = %c0 to %[[SPLIT]] step %c64
// CHECK: vector.transfer_read {{.+}} vector<64xf32>
// CHECK: %[[LEFT:.*]] = arith.subi %[[N]], %[[SPLIT]]
// CHECK: %[[REGS:.*]] = arith.divui %[[LEFT]], %c16
// CHECK: %[[WHOLE:.*]] = arith.muli %[[REGS]], %c16
// CHECK: %[[MIDDLE:.*]] = arith.addi %[[SPLIT]], %[[WHOLE]]
// CHECK: %[[REG:.*]] = scf.for %{{.*}} = %[[SPLIT]] to %[[MIDDLE]] step %c16 iter_args(%{{.*}} = %[[FULL]])
// CHECK: vector.transfer_read {{.+}} vector<16xf32>
// CHECK: scf.for %{{.*}} = %[[MIDDLE]] to %[[N]] step %c1 iter_args(%{{.*}} = %[[REG]])
// CHECK: vector.transfer_read {{.+}} vector<1xf32>
#rest_id = affine_map<(d0, d1) -> (d0, d1)>
func.func @runtime_exp_rest(%x: tensor<8x?xf32>, %o: tensor<8x?xf32>) -> tensor<8x?xf32> {
  %0 = linalg.generic {indexing_maps = [#rest_id, #rest_id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x?xf32>) outs(%o : tensor<8x?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  } -> tensor<8x?xf32>
  return %0 : tensor<8x?xf32>
}

// -----

// A convolution over a run-time width keeps the columns left one at a time:
// tiles of powers of two are for products only, where they pay; elsewhere
// they would make three copies of each body instead of one (a dynamic U-Net
// compiled twice as slowly).
// CHECK-LABEL: func.func @dynamic_conv_width
// CHECK: %[[W:.*]] = tensor.dim
// CHECK: %[[TILES:.*]] = arith.divui %[[W]], %c8
// CHECK: %[[SPLIT:.*]] = arith.muli %[[TILES]], %c8
// CHECK: %[[FULL:.*]] = scf.for %{{.*}} = %c0 to %[[SPLIT]] step %c8
// CHECK: vector.contract {{.+}} into vector<8x32xf32>
// CHECK-NOT: arith.andi
// CHECK: scf.for %{{.*}} = %[[SPLIT]] to %[[W]] step %c1 iter_args(%{{.*}} = %[[FULL]])
// CHECK: vector.contract {{.+}} into vector<32xf32>
// CHECK-NOT: arith.andi
// CHECK: return
func.func @dynamic_conv_width(%x: tensor<1x4x?x16xf32>, %w: tensor<1x1x16x32xf32>, %o: tensor<1x4x?x32xf32>) -> tensor<1x4x?x32xf32> {
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x4x?x16xf32>, tensor<1x1x16x32xf32>) outs(%o : tensor<1x4x?x32xf32>) -> tensor<1x4x?x32xf32>
  return %0 : tensor<1x4x?x32xf32>
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

// 1000 columns of an unpacked right-hand side: tiles of two registers up
// to 992, then one static tile of the 8 left. Not 40 lanes (two and a half
// registers, which LLVM widens and assembles from pieces: 15x slower).
// CHECK-LABEL: func.func @matmul_1000
// CHECK: scf.for {{.+}} to %c992 step %c32
// CHECK: vector.contract {{.+}} into vector<8x32xf32>
// CHECK: tensor.extract_slice {{.+}}[0, 992] [8, 8] [1, 1]
// CHECK: vector.contract {{.+}} into vector<8x8xf32>
func.func @matmul_1000(%a: tensor<8x64xf32>, %b: tensor<64x1000xf32>, %c: tensor<8x1000xf32>) -> tensor<8x1000xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<8x64xf32>, tensor<64x1000xf32>) outs(%c : tensor<8x1000xf32>) -> tensor<8x1000xf32>
  return %0 : tensor<8x1000xf32>
}

// -----

// 49 rows (a 7x7 window's tokens, a 7x7 feature map) against 64-lane
// panels: no divisor of 49 near the 4 rows of a 4 x 64 tile, so 7 rows of
// 4 registers (28 accumulators) rather than one row per tile.
// CHECK-LABEL: func.func @matmul_49_rows
// CHECK: scf.for {{.+}} step %c7
// CHECK: vector.contract {{.+}} : vector<7x1xf32>, vector<1x1x64xf32> into vector<7x1x64xf32>
func.func @matmul_49_rows(%a: tensor<49x8xf32>) -> tensor<49x256xf32> {
  %b = arith.constant dense<1.0> : tensor<8x256xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<49x256xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<49x256xf32>) -> tensor<49x256xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<49x8xf32>, tensor<8x256xf32>) outs(%c : tensor<49x256xf32>) -> tensor<49x256xf32>
  return %0 : tensor<49x256xf32>
}

// -----

// A matrix-vector product with constant weights (a Gemm at batch 1): B is
// packed at compile time into panels [N / 64][K][64] (B[k][n] = 1000 k + n
// here, so panel 1 starts with 64.0 and its second row with 1064.0), and
// each tile streams one contiguous panel, 4 registers wide: 4 independent
// FMA chains for the single row. The output is written as [1][4][64], a
// view of [1][256].
// CHECK-LABEL: func.func @gemv_constant_rhs
// CHECK: %[[P:.+]] = arith.constant dense<{{\[\[\[}}0.000000e+00, 1.000000e+00, {{.+}}], [1.000000e+03, {{.+}}]], {{\[\[}}6.400000e+01, {{.+}}], [1.064000e+03, {{.+}}]]{{.*}}]> : tensor<4x2x64xf32>
// CHECK: scf.for %[[PANEL:.+]] = %{{.+}} to %{{.+}} step %{{.+}}
// CHECK: scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(
// CHECK: vector.transfer_read %[[P]][%[[PANEL]], %[[K]], %{{.+}}]{{.+}} : tensor<4x2x64xf32>, vector<64xf32>
// CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0], [1, 2]] : tensor<1x4x64xf32> into tensor<1x256xf32>
// CHECK-NOT: linalg.matmul
func.func @gemv_constant_rhs(%a: tensor<1x2xf32>) -> tensor<1x256xf32> {
  %b = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0, 96.0, 97.0, 98.0, 99.0, 100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0, 118.0, 119.0, 120.0, 121.0, 122.0, 123.0, 124.0, 125.0, 126.0, 127.0, 128.0, 129.0, 130.0, 131.0, 132.0, 133.0, 134.0, 135.0, 136.0, 137.0, 138.0, 139.0, 140.0, 141.0, 142.0, 143.0, 144.0, 145.0, 146.0, 147.0, 148.0, 149.0, 150.0, 151.0, 152.0, 153.0, 154.0, 155.0, 156.0, 157.0, 158.0, 159.0, 160.0, 161.0, 162.0, 163.0, 164.0, 165.0, 166.0, 167.0, 168.0, 169.0, 170.0, 171.0, 172.0, 173.0, 174.0, 175.0, 176.0, 177.0, 178.0, 179.0, 180.0, 181.0, 182.0, 183.0, 184.0, 185.0, 186.0, 187.0, 188.0, 189.0, 190.0, 191.0, 192.0, 193.0, 194.0, 195.0, 196.0, 197.0, 198.0, 199.0, 200.0, 201.0, 202.0, 203.0, 204.0, 205.0, 206.0, 207.0, 208.0, 209.0, 210.0, 211.0, 212.0, 213.0, 214.0, 215.0, 216.0, 217.0, 218.0, 219.0, 220.0, 221.0, 222.0, 223.0, 224.0, 225.0, 226.0, 227.0, 228.0, 229.0, 230.0, 231.0, 232.0, 233.0, 234.0, 235.0, 236.0, 237.0, 238.0, 239.0, 240.0, 241.0, 242.0, 243.0, 244.0, 245.0, 246.0, 247.0, 248.0, 249.0, 250.0, 251.0, 252.0, 253.0, 254.0, 255.0], [1000.0, 1001.0, 1002.0, 1003.0, 1004.0, 1005.0, 1006.0, 1007.0, 1008.0, 1009.0, 1010.0, 1011.0, 1012.0, 1013.0, 1014.0, 1015.0, 1016.0, 1017.0, 1018.0, 1019.0, 1020.0, 1021.0, 1022.0, 1023.0, 1024.0, 1025.0, 1026.0, 1027.0, 1028.0, 1029.0, 1030.0, 1031.0, 1032.0, 1033.0, 1034.0, 1035.0, 1036.0, 1037.0, 1038.0, 1039.0, 1040.0, 1041.0, 1042.0, 1043.0, 1044.0, 1045.0, 1046.0, 1047.0, 1048.0, 1049.0, 1050.0, 1051.0, 1052.0, 1053.0, 1054.0, 1055.0, 1056.0, 1057.0, 1058.0, 1059.0, 1060.0, 1061.0, 1062.0, 1063.0, 1064.0, 1065.0, 1066.0, 1067.0, 1068.0, 1069.0, 1070.0, 1071.0, 1072.0, 1073.0, 1074.0, 1075.0, 1076.0, 1077.0, 1078.0, 1079.0, 1080.0, 1081.0, 1082.0, 1083.0, 1084.0, 1085.0, 1086.0, 1087.0, 1088.0, 1089.0, 1090.0, 1091.0, 1092.0, 1093.0, 1094.0, 1095.0, 1096.0, 1097.0, 1098.0, 1099.0, 1100.0, 1101.0, 1102.0, 1103.0, 1104.0, 1105.0, 1106.0, 1107.0, 1108.0, 1109.0, 1110.0, 1111.0, 1112.0, 1113.0, 1114.0, 1115.0, 1116.0, 1117.0, 1118.0, 1119.0, 1120.0, 1121.0, 1122.0, 1123.0, 1124.0, 1125.0, 1126.0, 1127.0, 1128.0, 1129.0, 1130.0, 1131.0, 1132.0, 1133.0, 1134.0, 1135.0, 1136.0, 1137.0, 1138.0, 1139.0, 1140.0, 1141.0, 1142.0, 1143.0, 1144.0, 1145.0, 1146.0, 1147.0, 1148.0, 1149.0, 1150.0, 1151.0, 1152.0, 1153.0, 1154.0, 1155.0, 1156.0, 1157.0, 1158.0, 1159.0, 1160.0, 1161.0, 1162.0, 1163.0, 1164.0, 1165.0, 1166.0, 1167.0, 1168.0, 1169.0, 1170.0, 1171.0, 1172.0, 1173.0, 1174.0, 1175.0, 1176.0, 1177.0, 1178.0, 1179.0, 1180.0, 1181.0, 1182.0, 1183.0, 1184.0, 1185.0, 1186.0, 1187.0, 1188.0, 1189.0, 1190.0, 1191.0, 1192.0, 1193.0, 1194.0, 1195.0, 1196.0, 1197.0, 1198.0, 1199.0, 1200.0, 1201.0, 1202.0, 1203.0, 1204.0, 1205.0, 1206.0, 1207.0, 1208.0, 1209.0, 1210.0, 1211.0, 1212.0, 1213.0, 1214.0, 1215.0, 1216.0, 1217.0, 1218.0, 1219.0, 1220.0, 1221.0, 1222.0, 1223.0, 1224.0, 1225.0, 1226.0, 1227.0, 1228.0, 1229.0, 1230.0, 1231.0, 1232.0, 1233.0, 1234.0, 1235.0, 1236.0, 1237.0, 1238.0, 1239.0, 1240.0, 1241.0, 1242.0, 1243.0, 1244.0, 1245.0, 1246.0, 1247.0, 1248.0, 1249.0, 1250.0, 1251.0, 1252.0, 1253.0, 1254.0, 1255.0]]> : tensor<2x256xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x256xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<1x256xf32>) -> tensor<1x256xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<1x2xf32>, tensor<2x256xf32>) outs(%c : tensor<1x256xf32>) -> tensor<1x256xf32>
  return %0 : tensor<1x256xf32>
}

// -----

// A convolution's constant filter is stored as panels [F / 32][KH][KW][C][32]
// (here w[c][f] = 100 c + f: panel 0 holds rows 0.0... and 100.0..., panel
// 1 starts with 32.0 and 132.0), and each tile reads its panel, indexed by
// the output-channel offset / 32, as one contiguous block.
// CHECK-LABEL: func.func @conv_filter_panels
// CHECK: %[[P:.+]] = arith.constant dense<{{\[\[\[\[\[}}0.000000e+00, 1.000000e+00, {{.+}}], [1.000000e+02, {{.+}}]]]], {{\[\[\[\[}}3.200000e+01, {{.+}}], [1.320000e+02, {{.+}}]]]]]> : tensor<2x1x1x2x32xf32>
// CHECK: scf.for %[[F:.+]] = %{{.+}} to %c64 step %c32
// CHECK: %[[PANEL:.+]] = arith.divui %[[F]], %c32
// CHECK: vector.transfer_read %[[P]][%[[PANEL]], %c0, %c0, %c0, %c0]{{.+}} : tensor<2x1x1x2x32xf32>, vector<2x32xf32>
// CHECK-NOT: tensor<1x1x2x64xf32>
func.func @conv_filter_panels(%x: tensor<1x1x8x2xf32>) -> tensor<1x1x8x64xf32> {
  %w = arith.constant dense<[[[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0], [100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0, 118.0, 119.0, 120.0, 121.0, 122.0, 123.0, 124.0, 125.0, 126.0, 127.0, 128.0, 129.0, 130.0, 131.0, 132.0, 133.0, 134.0, 135.0, 136.0, 137.0, 138.0, 139.0, 140.0, 141.0, 142.0, 143.0, 144.0, 145.0, 146.0, 147.0, 148.0, 149.0, 150.0, 151.0, 152.0, 153.0, 154.0, 155.0, 156.0, 157.0, 158.0, 159.0, 160.0, 161.0, 162.0, 163.0]]]]> : tensor<1x1x2x64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x8x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x8x64xf32>) -> tensor<1x1x8x64xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x1x8x2xf32>, tensor<1x1x2x64xf32>) outs(%acc : tensor<1x1x8x64xf32>) -> tensor<1x1x8x64xf32>
  return %0 : tensor<1x1x8x64xf32>
}

// -----

// A filter much larger than its input (2.4 MB against 83 KB) is read once:
// tiles of 32 output channels go outermost, all output rows inside them.
// CHECK-LABEL: func.func @conv_channels_outermost
// CHECK: scf.for %{{.+}} = %{{.+}} to %c256 step %c32
// CHECK-NEXT: scf.for %{{.+}} = %{{.+}} to %c7 step %c1
func.func @conv_channels_outermost(%x: tensor<1x9x9x256xf32>) -> tensor<1x7x7x256xf32> {
  %w = arith.constant dense<0.5> : tensor<3x3x256x256xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7x7x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x7x7x256xf32>) -> tensor<1x7x7x256xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x9x9x256xf32>, tensor<3x3x256x256xf32>) outs(%acc : tensor<1x7x7x256xf32>) -> tensor<1x7x7x256xf32>
  return %0 : tensor<1x7x7x256xf32>
}

// -----

// A 1 MiB filter (ResNet-50's 14x14 1x1 layers) with an input that fits in
// L2 (784 KB) takes its channels outermost too; with an input that does not
// (batch 8, 6.4 MB) it keeps the pixel rows outermost.
// CHECK-LABEL: func.func @conv_1mib_filter
// CHECK: scf.for %{{.+}} = %{{.+}} to %c256 step %c32
// CHECK-NEXT: scf.for %{{.+}} = %{{.+}} to %c14 step %c1
// CHECK-LABEL: func.func @conv_1mib_filter_batch8
// CHECK: scf.for %{{.+}} = %{{.+}} to %c8 step %c1
// CHECK-NEXT: scf.for %{{.+}} = %{{.+}} to %c14 step %c1
func.func @conv_1mib_filter(%x: tensor<1x14x14x1024xf32>) -> tensor<1x14x14x256xf32> {
  %w = arith.constant dense<0.5> : tensor<1x1x1024x256xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x14x14x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x14x14x256xf32>) -> tensor<1x14x14x256xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x14x14x1024xf32>, tensor<1x1x1024x256xf32>) outs(%acc : tensor<1x14x14x256xf32>) -> tensor<1x14x14x256xf32>
  return %0 : tensor<1x14x14x256xf32>
}
func.func @conv_1mib_filter_batch8(%x: tensor<8x14x14x1024xf32>) -> tensor<8x14x14x256xf32> {
  %w = arith.constant dense<0.5> : tensor<1x1x1024x256xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x14x14x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x14x14x256xf32>) -> tensor<8x14x14x256xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<8x14x14x1024xf32>, tensor<1x1x1024x256xf32>) outs(%acc : tensor<8x14x14x256xf32>) -> tensor<8x14x14x256xf32>
  return %0 : tensor<8x14x14x256xf32>
}

// -----

// A 1x1 convolution with stride 2 reads a quarter of its input: 28x28x512
// (1.6 MB) is 401 KB read, which fits in L2, so its 2 MiB filter goes
// channels outermost (ResNet-50's layer3 downsample).
// CHECK-LABEL: func.func @conv_strided_1x1
// CHECK: scf.for %{{.+}} = %{{.+}} to %c1024 step %c32
// CHECK-NEXT: scf.for %{{.+}} = %{{.+}} to %c14 step %c1
func.func @conv_strided_1x1(%x: tensor<1x28x28x512xf32>) -> tensor<1x14x14x1024xf32> {
  %w = arith.constant dense<0.5> : tensor<1x1x512x1024xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x14x14x1024xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x14x14x1024xf32>) -> tensor<1x14x14x1024xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x28x28x512xf32>, tensor<1x1x512x1024xf32>) outs(%acc : tensor<1x14x14x1024xf32>) -> tensor<1x14x14x1024xf32>
  return %0 : tensor<1x14x14x1024xf32>
}

// -----

// Channel tiles of whole or half registers: 48 output channels are three
// tiles of 16 (not two of 24, which LLVM assembles from pieces), 24 are
// three tiles of 8.
// CHECK-LABEL: func.func @conv_whole_registers
// CHECK: vector.contract {{.+}} into vector<8x16xf32>
// CHECK: vector.contract {{.+}} into vector<16x8xf32>
// CHECK-NOT: vector<{{[0-9x]*}}24xf32>
func.func @conv_whole_registers(%x: tensor<1x1x16x4xf32>, %w48: tensor<1x1x4x48xf32>, %o48: tensor<1x1x16x48xf32>, %w24: tensor<1x1x4x24xf32>, %o24: tensor<1x1x16x24xf32>) -> (tensor<1x1x16x48xf32>, tensor<1x1x16x24xf32>) {
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w48 : tensor<1x1x16x4xf32>, tensor<1x1x4x48xf32>) outs(%o48 : tensor<1x1x16x48xf32>) -> tensor<1x1x16x48xf32>
  %1 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w24 : tensor<1x1x16x4xf32>, tensor<1x1x4x24xf32>) outs(%o24 : tensor<1x1x16x24xf32>) -> tensor<1x1x16x24xf32>
  return %0, %1 : tensor<1x1x16x48xf32>, tensor<1x1x16x24xf32>
}


// -----

// A convolution whose result only feeds an elementwise epilogue (bias, ReLU)
// is fused into the epilogue's tiles: each 8 x 32 accumulator tile is
// computed in the output tile itself (the fill writes the destination slice)
// and the epilogue is applied to it there: one loop nest instead of two
// passes over the output.
// CHECK-LABEL: func.func @conv_epilogue
// CHECK: %[[OUT:.+]] = scf.for %{{.+}} = %{{.+}} to %c16 step %c8 iter_args
// CHECK: scf.for %{{.+}} = %{{.+}} to %c64 step %c32 iter_args(%[[ACC:[^ ]+]] =
// CHECK: %[[DEST:.+]] = tensor.extract_slice %[[ACC]]
// CHECK: vector.transfer_write %{{.+}}, %[[DEST]]
// CHECK: vector.contract
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: vector.transfer_write %{{.+}}, %[[DEST]]
// CHECK-NOT: scf.for
// CHECK: return %[[OUT]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @conv_epilogue(%x: tensor<1x1x16x4xf32>, %w: tensor<1x1x4x64xf32>, %b: tensor<64xf32>) -> tensor<1x1x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x16x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x16x64xf32>) -> tensor<1x1x16x64xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x1x16x4xf32>, tensor<1x1x4x64xf32>) outs(%acc : tensor<1x1x16x64xf32>) -> tensor<1x1x16x64xf32>
  %e2 = tensor.empty() : tensor<1x1x16x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %b : tensor<1x1x16x64xf32>, tensor<64xf32>) outs(%e2 : tensor<1x1x16x64xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x1x16x64xf32>
  return %y : tensor<1x1x16x64xf32>
}

// -----

// 1000 columns of constant weights: panels half a register wide, five per
// tile (40 lanes as vector<5x8>, every vector a power-of-two length), not
// one 40-lane panel that LLVM would assemble from pieces.
// CHECK-LABEL: func.func @gemv_1000_classes
// CHECK: arith.constant dense<5.000000e-01> : tensor<5x1x8xf32>
// CHECK: scf.for %{{.+}} = %{{.+}} to %c125 step %c5
// CHECK: vector.contract {{.+}} into vector<5x8xf32>
// CHECK-NOT: x40xf32>
func.func @gemv_1000_classes(%a: tensor<1x4xf32>) -> tensor<1x1000xf32> {
  %b = arith.constant dense<0.5> : tensor<4x1000xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1000xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1000xf32>) -> tensor<1x1000xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<1x4xf32>, tensor<4x1000xf32>) outs(%c : tensor<1x1000xf32>) -> tensor<1x1000xf32>
  return %0 : tensor<1x1000xf32>
}

// -----

// A row of 27 pixels (no divisor near 8): 9 pixels against one register of
// channels (9 FMA chains), not 3 pixels against two registers (6 chains).
// CHECK-LABEL: func.func @conv_row27
// CHECK: scf.for {{.+}} to %c27 step %c9
// CHECK: vector.contract {{.+}} into vector<9x16xf32>
func.func @conv_row27(%x: tensor<1x1x27x8xf32>, %w: tensor<1x1x8x32xf32>, %o: tensor<1x1x27x32xf32>) -> tensor<1x1x27x32xf32> {
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x1x27x8xf32>, tensor<1x1x8x32xf32>) outs(%o : tensor<1x1x27x32xf32>) -> tensor<1x1x27x32xf32>
  return %0 : tensor<1x1x27x32xf32>
}

// -----

// Padding after an activation: the activation writes straight into the
// interior of the padded tensor (one fill, no copy), and the fill that CSE
// shares between the interior slice and the insert is not split in two. The
// fill is left whole, marked with the interior box: after bufferization
// only the border is filled (--kiln-cpu-fill-borders).
// CHECK-LABEL: func.func @pad_after_activation
// CHECK: %[[FILLED:.+]] = linalg.fill {kiln.distinct_fill = 0 : i64, kiln.fill_border = array<i64: 0, 1, 1, 0, 1, 4, 4, 16>} {{.+}} -> tensor<1x6x6x16xf32>
// CHECK: %[[INTERIOR:.+]] = tensor.extract_slice %[[FILLED]][0, 1, 1, 0] [1, 4, 4, 16]
// CHECK: %[[ACT:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[INTERIOR]])
// CHECK: arith.maximumf
// CHECK-NOT: scf.for
// CHECK: tensor.insert_slice %[[ACT]] into %[[FILLED]][0, 1, 1, 0] [1, 4, 4, 16]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @pad_after_activation(%x: tensor<1x4x4x16xf32>) -> tensor<1x6x6x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x4x16xf32>) outs(%e : tensor<1x4x4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x16xf32>
  %pe = tensor.empty() : tensor<1x6x6x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x6x6x16xf32>) -> tensor<1x6x6x16xf32>
  %s = tensor.extract_slice %f[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x6x6x16xf32> to tensor<1x4x4x16xf32>
  %c = linalg.copy ins(%r : tensor<1x4x4x16xf32>) outs(%s : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %p = tensor.insert_slice %c into %f[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x4x4x16xf32> into tensor<1x6x6x16xf32>
  return %p : tensor<1x6x6x16xf32>
}

// -----

// A named op in front of the pad: the transpose of an NCHW model input
// writes straight into the interior of the stem's padded input.
// CHECK-LABEL: func.func @pad_after_transpose
// CHECK: %[[PADDED:.+]] = linalg.fill {{.+}}kiln.fill_border = array<i64: 0, 1, 1, 0, 1, 4, 4, 3>} {{.+}} -> tensor<1x6x6x3xf32>
// CHECK: %[[INNER:.+]] = tensor.extract_slice %[[PADDED]][0, 1, 1, 0] [1, 4, 4, 3]
// CHECK: %[[T:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[INNER]])
// CHECK: vector.transfer_read %arg0
// CHECK-NOT: scf.for
// CHECK: tensor.insert_slice %[[T]] into %[[PADDED]][0, 1, 1, 0] [1, 4, 4, 3]
func.func @pad_after_transpose(%x: tensor<1x3x4x4xf32>) -> tensor<1x6x6x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x3xf32>
  %t = linalg.transpose ins(%x : tensor<1x3x4x4xf32>) outs(%e : tensor<1x4x4x3xf32>) permutation = [0, 2, 3, 1]
  %pe = tensor.empty() : tensor<1x6x6x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x6x6x3xf32>) -> tensor<1x6x6x3xf32>
  %s = tensor.extract_slice %f[0, 1, 1, 0] [1, 4, 4, 3] [1, 1, 1, 1] : tensor<1x6x6x3xf32> to tensor<1x4x4x3xf32>
  %c = linalg.copy ins(%t : tensor<1x4x4x3xf32>) outs(%s : tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %p = tensor.insert_slice %c into %f[0, 1, 1, 0] [1, 4, 4, 3] [1, 1, 1, 1] : tensor<1x4x4x3xf32> into tensor<1x6x6x3xf32>
  return %p : tensor<1x6x6x3xf32>
}

// -----

// Static int8 pads a 1x1 convolution's rows [pixels, C] to 64 channels and
// copies the NHWC activation in through an expand_shape of the interior
// slice. The activation writes into that view of the padded rows, and the
// fill is marked with the interior box, so that only the padding columns
// [32, 64) are filled; it keeps kiln.unread_padding, with which
// --kiln-cpu-fill-borders fills nothing.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @pad_channels_through_reshape
// CHECK: %[[ROWS:.+]] = linalg.fill {{.+}}kiln.fill_border = array<i64: 0, 0, 16, 32>, kiln.unread_padding} {{.+}} -> tensor<16x64xi8>
// CHECK: %[[LEFT:.+]] = tensor.extract_slice %[[ROWS]][0, 0] [16, 32]
// CHECK: %[[VIEW:.+]] = tensor.expand_shape %[[LEFT]] {{\[\[}}0, 1, 2], [3]] output_shape [1, 4, 4, 32]
// CHECK: %[[Q:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[VIEW]])
// CHECK: arith.trunci
// CHECK-NOT: scf.for
// CHECK: %[[BACK:.+]] = tensor.collapse_shape %[[Q]]
// CHECK: tensor.insert_slice %[[BACK]] into %[[ROWS]][0, 0] [16, 32]
func.func @pad_channels_through_reshape(%x: tensor<1x4x4x32xf32>) -> tensor<16x64xi8> {
  %zero = arith.constant 0 : i8
  %e = tensor.empty() : tensor<1x4x4x32xi8>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x4x32xf32>) outs(%e : tensor<1x4x4x32xi8>) {
  ^bb0(%in: f32, %out: i8):
    %i = arith.fptosi %in : f32 to i32
    %t = arith.trunci %i : i32 to i8
    linalg.yield %t : i8
  } -> tensor<1x4x4x32xi8>
  %pe = tensor.empty() : tensor<16x64xi8>
  %f = linalg.fill {kiln.unread_padding} ins(%zero : i8) outs(%pe : tensor<16x64xi8>) -> tensor<16x64xi8>
  %s = tensor.extract_slice %f[0, 0] [16, 32] [1, 1] : tensor<16x64xi8> to tensor<16x32xi8>
  %v = tensor.expand_shape %s [[0, 1, 2], [3]] output_shape [1, 4, 4, 32] : tensor<16x32xi8> into tensor<1x4x4x32xi8>
  %c = linalg.copy ins(%q : tensor<1x4x4x32xi8>) outs(%v : tensor<1x4x4x32xi8>) -> tensor<1x4x4x32xi8>
  %b = tensor.collapse_shape %c [[0, 1, 2], [3]] : tensor<1x4x4x32xi8> into tensor<16x32xi8>
  %p = tensor.insert_slice %b into %f[0, 0] [16, 32] [1, 1] : tensor<16x32xi8> into tensor<16x64xi8>
  return %p : tensor<16x64xi8>
}

// -----

// Static int8's unfolded 3x3 windows (im2col) go into the first K = 36
// columns of the [pixels, 64] rows. Canonicalization gives the unfolding an
// empty init of its own (its body never reads it); it writes into the view
// of the rows' slice again, the insert is then in place (no copy after
// bufferization), and the fill keeps only its padding columns.
#win = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 + d3, d2 * 4 + d4)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @unfold_into_padded_rows
// CHECK: %[[ROWS:.+]] = linalg.fill {{.+}}kiln.fill_border = array<i64: 0, 0, 16, 36>, kiln.unread_padding} {{.+}} -> tensor<16x64xi8>
// CHECK: %[[LEFT:.+]] = tensor.extract_slice %[[ROWS]][0, 0] [16, 36]
// CHECK: %[[VIEW:.+]] = tensor.expand_shape %[[LEFT]] {{\[\[}}0, 1, 2], [3, 4]] output_shape [1, 4, 4, 3, 12]
// CHECK: %[[U:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[VIEW]])
// CHECK: %[[BACK:.+]] = tensor.collapse_shape %[[U]]
// CHECK: tensor.insert_slice %[[BACK]] into %[[ROWS]][0, 0] [16, 36]
func.func @unfold_into_padded_rows(%x: tensor<1x6x24xi8>) -> tensor<16x64xi8> {
  %zero = arith.constant 0 : i8
  %e = tensor.empty() : tensor<1x4x4x3x12xi8>
  %u = linalg.generic {indexing_maps = [#win, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x6x24xi8>) outs(%e : tensor<1x4x4x3x12xi8>) {
  ^bb0(%in: i8, %out: i8):
    linalg.yield %in : i8
  } -> tensor<1x4x4x3x12xi8>
  %r = tensor.collapse_shape %u [[0, 1, 2], [3, 4]] : tensor<1x4x4x3x12xi8> into tensor<16x36xi8>
  %pe = tensor.empty() : tensor<16x64xi8>
  %f = linalg.fill {kiln.unread_padding} ins(%zero : i8) outs(%pe : tensor<16x64xi8>) -> tensor<16x64xi8>
  %p = tensor.insert_slice %r into %f[0, 0] [16, 36] [1, 1] : tensor<16x36xi8> into tensor<16x64xi8>
  return %p : tensor<16x64xi8>
}

// -----

// A row of 39 pixels (3 x 13: no divisor between 4 and 12, as the 111 of
// SqueezeNet's stem) against 64 channels: tiles of 3 pixels x 4 registers
// (12 FMA chains), one input channel per step, rather than 3 x 2.
// CHECK-LABEL: func.func @conv_three_pixel_rows
// CHECK: scf.for %{{.+}} = %c0 to %c39 step %c3
// CHECK: vector.transfer_write %{{.+}} : vector<3x64xf32>, tensor<1x1x3x64xf32>
// CHECK: scf.for %{{.+}} = %c0 to %c3 step %c1
// CHECK-COUNT-15: vector.contract {{.+}} into vector<64xf32>
// CHECK-NOT: vector.contract
// CHECK: scf.yield
func.func @conv_three_pixel_rows(%x: tensor<1x1x81x3xf32>) -> tensor<1x1x39x64xf32> {
  %w = arith.constant dense<0.25> : tensor<1x5x3x64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x39x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x39x64xf32>) -> tensor<1x1x39x64xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x1x81x3xf32>, tensor<1x5x3x64xf32>) outs(%acc : tensor<1x1x39x64xf32>) -> tensor<1x1x39x64xf32>
  return %0 : tensor<1x1x39x64xf32>
}

// -----

// An int8 kernel (a loop marked kiln.overwritten_outs: it writes all of the
// tensor it carries and reads none of it) in front of a padded tensor
// starts from the padded tensor's interior instead of its empty tensor: no
// copy, and only the border is filled.
// CHECK-LABEL: func.func @kernel_into_padded
// CHECK: %[[PADDED:.+]] = linalg.fill {{.+}}kiln.fill_border = array<i64: 0, 1, 1, 0, 1, 2, 4, 16>} {{.+}} -> tensor<1x4x6x16xi8>
// CHECK: %[[INNER:.+]] = tensor.extract_slice %[[PADDED]][0, 1, 1, 0] [1, 2, 4, 16]
// CHECK: %[[K:.+]] = scf.forall (%{{.+}}) in (2) shared_outs(%{{.+}} = %[[INNER]])
// CHECK: } {kiln.overwritten_outs}
// CHECK-NOT: linalg.copy
// CHECK: tensor.insert_slice %[[K]] into %[[PADDED]][0, 1, 1, 0] [1, 2, 4, 16]
func.func @kernel_into_padded(%x: tensor<1x2x4x16xi8>) -> tensor<1x4x6x16xi8> {
  %zero = arith.constant 0 : i8
  %e = tensor.empty() : tensor<1x2x4x16xi8>
  %k = scf.forall (%h) in (2) shared_outs(%o = %e) -> (tensor<1x2x4x16xi8>) {
    %in = tensor.extract_slice %x[0, %h, 0, 0] [1, 1, 4, 16] [1, 1, 1, 1] : tensor<1x2x4x16xi8> to tensor<1x1x4x16xi8>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %in into %o[0, %h, 0, 0] [1, 1, 4, 16] [1, 1, 1, 1] : tensor<1x1x4x16xi8> into tensor<1x2x4x16xi8>
    }
  } {kiln.overwritten_outs}
  %pe = tensor.empty() : tensor<1x4x6x16xi8>
  %f = linalg.fill ins(%zero : i8) outs(%pe : tensor<1x4x6x16xi8>) -> tensor<1x4x6x16xi8>
  %s = tensor.extract_slice %f[0, 1, 1, 0] [1, 2, 4, 16] [1, 1, 1, 1] : tensor<1x4x6x16xi8> to tensor<1x2x4x16xi8>
  %c = linalg.copy ins(%k : tensor<1x2x4x16xi8>) outs(%s : tensor<1x2x4x16xi8>) -> tensor<1x2x4x16xi8>
  %p = tensor.insert_slice %c into %f[0, 1, 1, 0] [1, 2, 4, 16] [1, 1, 1, 1] : tensor<1x2x4x16xi8> into tensor<1x4x6x16xi8>
  return %p : tensor<1x4x6x16xi8>
}

// -----

// 40 output channels (a multiple of half a register only): split into a
// convolution of 32 channels, on whole registers, and one of 8, each
// writing its part of the output.
// CHECK-LABEL: func.func @conv_split_channels
// CHECK: scf.for %{{.+}} = %{{.+}} to %c32 step %c16
// CHECK: vector.contract {{.+}} into vector<13x16xf32>
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0, 0] [1, 1, 13, 32]
// CHECK: vector.contract {{.+}} into vector<13x8xf32>
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0, 32] [1, 1, 13, 8]
// CHECK-NOT: vector<{{[0-9x]*}}40xf32>
func.func @conv_split_channels(%x: tensor<1x1x13x4xf32>) -> tensor<1x1x13x40xf32> {
  %w = arith.constant dense<0.25> : tensor<1x1x4x40xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x13x40xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x13x40xf32>) -> tensor<1x1x13x40xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x1x13x4xf32>, tensor<1x1x4x40xf32>) outs(%acc : tensor<1x1x13x40xf32>) -> tensor<1x1x13x40xf32>
  return %0 : tensor<1x1x13x40xf32>
}

// -----

// Constant weights of more than 1 MiB against an input that fits in L2 (a
// transformer's MLP at 14x14 tokens: 2.4 MB of weights, 301 KB of input) are
// read once: each packed 64-column panel goes outermost, all 4-row tiles
// inside it. With weights that fit (590 KB) the row tiles stay outermost.
// CHECK-LABEL: func.func @matmul_panels_outermost
// CHECK: scf.for %{{.+}} = %{{.+}} to %c24 step %c1
// CHECK-NEXT: scf.for %{{.+}} = %{{.+}} to %c196 step %c4
// CHECK-LABEL: func.func @matmul_weights_fit
// CHECK: scf.for %{{.+}} = %{{.+}} to %c196 step %c4
// CHECK-NEXT: scf.for %{{.+}} = %{{.+}} to %c6 step %c1
func.func @matmul_panels_outermost(%a: tensor<196x384xf32>) -> tensor<196x1536xf32> {
  %b = arith.constant dense<0.5> : tensor<384x1536xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<196x1536xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<196x1536xf32>) -> tensor<196x1536xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<196x384xf32>, tensor<384x1536xf32>) outs(%c : tensor<196x1536xf32>) -> tensor<196x1536xf32>
  return %0 : tensor<196x1536xf32>
}
func.func @matmul_weights_fit(%a: tensor<196x384xf32>) -> tensor<196x384xf32> {
  %b = arith.constant dense<0.5> : tensor<384x384xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<196x384xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<196x384xf32>) -> tensor<196x384xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<196x384xf32>, tensor<384x384xf32>) outs(%c : tensor<196x384xf32>) -> tensor<196x384xf32>
  return %0 : tensor<196x384xf32>
}

// -----

// A transpose that moves the innermost dimension (attention's K^T) is tiled
// in 16 x 16 squares: 16 rows of the input read, transposed in registers,
// 16 rows of the output written. A side that is not a multiple of 16 keeps
// the elementwise tiling (64 lanes along the output's rows).
// CHECK-LABEL: func.func @transpose_tiles
// CHECK: scf.for %{{.+}} = %c0 to %c64 step %c16
// CHECK: scf.for %{{.+}} = %c0 to %c128 step %c16
// CHECK: vector.transfer_read {{.+}} : tensor<4x128x64xf32>, vector<16x16xf32>
// CHECK: vector.transpose {{.+}} : vector<1x16x16xf32> to vector<1x16x16xf32>
// CHECK: vector.transfer_write {{.+}} : vector<16x16xf32>, tensor<1x16x16xf32>
// CHECK-LABEL: func.func @transpose_odd
// CHECK: scf.for %{{.+}} = %c0 to %c128 step %c64
// CHECK: vector.transfer_read {{.+}} : tensor<4x128x24xf32>, vector<64x1xf32>
func.func @transpose_tiles(%x: tensor<4x128x64xf32>) -> tensor<4x64x128xf32> {
  %e = tensor.empty() : tensor<4x64x128xf32>
  %0 = linalg.transpose ins(%x : tensor<4x128x64xf32>) outs(%e : tensor<4x64x128xf32>) permutation = [0, 2, 1]
  return %0 : tensor<4x64x128xf32>
}
func.func @transpose_odd(%x: tensor<4x128x24xf32>) -> tensor<4x24x128xf32> {
  %e = tensor.empty() : tensor<4x24x128xf32>
  %0 = linalg.transpose ins(%x : tensor<4x128x24xf32>) outs(%e : tensor<4x24x128xf32>) permutation = [0, 2, 1]
  return %0 : tensor<4x24x128xf32>
}
