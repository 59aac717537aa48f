// RUN: kiln-opt %s --kiln-convert-kiln-to-linalg | FileCheck %s

// Symbolic (dynamic) sizes of convolutions, pooling and concatenations
// (docs/shapes.md): each result size is computed from the input's at run
// time, as an affine function of it (so that the arena can bound it).

// A stride-2 convolution: the output rows and columns are
// (n + 2 - 3) floordiv 2 + 1, never below 0; the padded input is the
// input's size plus the pads.
// CHECK-DAG: #[[OUT:.+]] = affine_map<()[s0] -> ((s0 - 1) floordiv 2 + 1)>
// CHECK-DAG: #[[CEIL:.+]] = affine_map<()[s0] -> ((s0 - 3) ceildiv 2 + 1, s0 ceildiv 2)>
// CHECK-DAG: #[[UP:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1 floordiv 2, d2 floordiv 3, d3)>
// CHECK-LABEL: func.func @conv
// CHECK: %[[N:.+]] = tensor.dim %arg0, %c0
// CHECK: %[[H:.+]] = tensor.dim %arg0, %c2
// CHECK: %[[OH:.+]] = affine.min #[[OUT]]()[%[[H]]]
// CHECK: %[[OH0:.+]] = arith.maxsi %[[OH]], %{{.+}} : index
// CHECK: %[[W:.+]] = tensor.dim %arg0, %c3
// CHECK: %[[OW:.+]] = affine.min #[[OUT]]()[%[[W]]]
// CHECK: %[[OW0:.+]] = arith.maxsi %[[OW]], %{{.+}} : index
// CHECK: %[[PH:.+]] = arith.addi %{{.+}}, %c2{{.*}} : index
// CHECK: %[[PW:.+]] = arith.addi %{{.+}}, %c2{{.*}} : index
// CHECK: tensor.empty(%{{.+}}, %[[PH]], %[[PW]]) : tensor<?x?x?x3xf32>
// CHECK: tensor.empty(%[[N]], %[[OH0]], %[[OW0]]) : tensor<?x?x?x8xf32>
// CHECK: linalg.conv_2d_nhwc_hwcf
// CHECK-SAME: outs(%{{.+}} : tensor<?x?x?x8xf32>)
// CHECK: tensor.empty(%[[N]], %[[OH0]], %[[OW0]]) : tensor<?x8x?x?xf32>
func.func @conv(%x: tensor<?x3x?x?xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<?x8x?x?xf32> {
  %y = kiln.conv2d %x, %w, %b {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<?x8x?x?xf32>
  return %y : tensor<?x8x?x?xf32>
}

// ceil_mode: the rounded-up count, but no window starting past the input;
// the input is padded by stride - 1 rows more than it needs at most. An
// NCHW pooling of symbolic size pools in NHWC between two transposes (tiled
// NCHW, its window rows would be subviews that bufferization cannot tell
// from the batch).
// CHECK-LABEL: func.func @max_pool_ceil
// CHECK: %[[T:.+]] = linalg.transpose ins(%arg0 : tensor<1x4x?x8xf32>) {{.+}} permutation = [0, 2, 3, 1]
// CHECK: %[[H:.+]] = tensor.dim %[[T]], %c1
// CHECK: %[[OH:.+]] = affine.min #[[CEIL]]()[%[[H]]]
// CHECK: %[[OH0:.+]] = arith.maxsi %[[OH]]
// CHECK: %[[PH:.+]] = arith.addi %{{.+}}, %c1{{.*}} : index
// CHECK: tensor.empty(%[[PH]]) : tensor<1x?x9x4xf32>
// CHECK: tensor.empty(%[[OH0]]) : tensor<1x?x4x4xf32>
// CHECK: %[[P:.+]] = linalg.pooling_nhwc_max
// CHECK: linalg.transpose ins(%[[P]] : tensor<1x?x4x4xf32>) {{.+}} permutation = [0, 3, 1, 2]
func.func @max_pool_ceil(%x: tensor<1x4x?x8xf32>) -> tensor<1x4x?x4xf32> {
  %y = kiln.max_pool2d %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, ceil_mode = true} : tensor<1x4x?x8xf32> -> tensor<1x4x?x4xf32>
  return %y : tensor<1x4x?x4xf32>
}

// An average that does not count the padding divides each window's sum by
// the taps inside the input, counted per output position from its index.
// CHECK-LABEL: func.func @avg_pool
// CHECK: linalg.pooling_nhwc_sum
// CHECK: linalg.generic
// CHECK: linalg.index 1
// CHECK: arith.cmpi slt
// CHECK: arith.maxsi
// CHECK: linalg.index 2
// CHECK: arith.sitofp
// CHECK: arith.divf
// CHECK: linalg.transpose
func.func @avg_pool(%x: tensor<1x4x?x8xf32>) -> tensor<1x4x?x4xf32> {
  %y = kiln.avg_pool2d %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x4x?x8xf32> -> tensor<1x4x?x4xf32>
  return %y : tensor<1x4x?x4xf32>
}

// A concatenation beside a symbolic dimension: each part's rows are its own.
// CHECK-LABEL: func.func @concat
// CHECK: %[[N:.+]] = tensor.dim %arg0, %c0
// CHECK: %[[DEST:.+]] = tensor.empty(%[[N]]) : tensor<?x5xf32>
// CHECK: %[[A:.+]] = tensor.dim %arg0
// CHECK: tensor.insert_slice %{{.+}} into %[[DEST]][0, 0] [%[[A]], 2]
// CHECK: %[[B:.+]] = tensor.dim %arg1
// CHECK: tensor.insert_slice %{{.+}}[0, 2] [%[[B]], 3]
func.func @concat(%a: tensor<?x2xf32>, %b: tensor<?x3xf32>) -> tensor<?x5xf32> {
  %y = kiln.concat %a, %b {axis = 1 : i64} : (tensor<?x2xf32>, tensor<?x3xf32>) -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}

// Along a symbolic axis: the size is the sum of the parts', and each part
// starts where the one before ends.
// CHECK-LABEL: func.func @concat_symbolic_axis
// CHECK: %[[N:.+]] = tensor.dim %arg0, %c0
// CHECK: %[[TOTAL:.+]] = arith.addi %[[N]], %c3
// CHECK: %[[DEST:.+]] = tensor.empty(%[[TOTAL]]) : tensor<?x2xf32>
// CHECK: %[[A:.+]] = tensor.dim %arg0
// CHECK: %[[FIRST:.+]] = tensor.insert_slice %{{.+}} into %[[DEST]][0, 0] [%[[A]], 2]
// CHECK: tensor.insert_slice %{{.+}} into %[[FIRST]][%[[A]], 0] [3, 2]
func.func @concat_symbolic_axis(%a: tensor<?x2xf32>, %b: tensor<3x2xf32>) -> tensor<?x2xf32> {
  %y = kiln.concat %a, %b {axis = 0 : i64} : (tensor<?x2xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// A constant pad of a symbolic size: the padded size is the size plus the
// pads, the input copied into the interior.
// CHECK-LABEL: func.func @pad
// CHECK: %[[H:.+]] = tensor.dim %arg0, %c0
// CHECK: %[[PH:.+]] = arith.addi %[[H]], %c3
// CHECK: %[[E:.+]] = tensor.empty(%[[PH]]) : tensor<?x5xf32>
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[E]]
// CHECK: tensor.insert_slice %{{.+}}[1, 1] [%[[H]], 3] [1, 1]
func.func @pad(%x: tensor<?x3xf32>) -> tensor<?x5xf32> {
  %y = kiln.pad %x {pads = array<i64: 1, 1, 2, 1>, value = 1.5 : f32} : tensor<?x3xf32> -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}

// A nearest upsampling reads input element (i floordiv scale); a symbolic
// size is the input's times the scale.
// CHECK-LABEL: func.func @upsample
// CHECK: %[[H:.+]] = tensor.dim %arg0, %c1
// CHECK: %[[H2:.+]] = arith.muli %[[H]], %c2
// CHECK: %[[W:.+]] = tensor.dim %arg0, %c2
// CHECK: %[[W3:.+]] = arith.muli %[[W]], %c3
// CHECK: tensor.empty(%[[H2]], %[[W3]]) : tensor<1x?x?x8xf32>
// CHECK: linalg.generic {indexing_maps = [#[[UP]], #{{.+}}]
func.func @upsample(%x: tensor<1x?x?x8xf32>) -> tensor<1x?x?x8xf32> {
  %y = kiln.upsample_nearest %x {scales = array<i64: 1, 2, 3, 1>} : tensor<1x?x?x8xf32> -> tensor<1x?x?x8xf32>
  return %y : tensor<1x?x?x8xf32>
}

// A grouped convolution: the loop over the groups slices the padded input
// and the result with their run-time rows (tensor.dim), the result sized
// by the window's output size.
// CHECK-LABEL: func.func @grouped_conv
// CHECK: tensor.empty() : tensor<3x3x2x4xf32>
// CHECK: %[[OUT:.+]] = tensor.empty(%{{.+}}) : tensor<1x?x8x4xf32>
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[OUT]]) -> (tensor<1x?x8x4xf32>)
// CHECK: %[[ROWS:.+]] = tensor.dim %{{.+}}, %{{.+}} : tensor<1x?x10x4xf32>
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 0, %{{.+}}] [1, %[[ROWS]], 10, 2] [1, 1, 1, 1] : tensor<1x?x10x4xf32> to tensor<1x?x10x2xf32>
// CHECK: linalg.conv_2d_nhwc_hwcf
// CHECK: tensor.insert_slice %{{.+}} into %[[ACC]]
func.func @grouped_conv(%x: tensor<1x4x?x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x?x8xf32> {
  %y = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : (tensor<1x4x?x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x?x8xf32>
  return %y : tensor<1x4x?x8xf32>
}

// Gather on a symbolic axis (x[:, -1], the last token of a run-time
// sequence) wraps a negative index by the axis's run-time size and clamps
// to it, not to a static size.
// CHECK-LABEL: func.func @gather_symbolic_axis
// CHECK: %[[N:.*]] = tensor.dim %arg0, %c1{{.*}} : tensor<2x?x8xf32>
// CHECK: linalg.generic
// CHECK: %[[I:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: %[[LAST:.*]] = arith.subi %[[N]], %{{.*}} : index
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[I]], %{{.*}} : index
// CHECK: %[[WRAP:.*]] = arith.addi %[[I]], %[[N]] : index
// CHECK: %[[SEL:.*]] = arith.select %[[NEG]], %[[WRAP]], %[[I]] : index
// CHECK: %[[LOW:.*]] = arith.maxsi %[[SEL]], %{{.*}} : index
// CHECK: %[[AT:.*]] = arith.minsi %[[LOW]], %[[LAST]] : index
// CHECK: tensor.extract %arg0[%{{.*}}, %[[AT]], %{{.*}}] : tensor<2x?x8xf32>
func.func @gather_symbolic_axis(%x: tensor<2x?x8xf32>) -> tensor<2x8xf32> {
  %i = kiln.constant dense<-1> : tensor<i64>
  %r = kiln.gather %x, %i {axis = 1 : i64} : (tensor<2x?x8xf32>, tensor<i64>) -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}
