// RUN: kiln-opt %s --split-input-file --kiln-convert-kiln-to-linalg | FileCheck %s

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// Broadcasting is in the indexing maps: a missing leading dimension is
// dropped from the map, a size-1 dimension reads index 0.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @binary_broadcast
// CHECK-SAME: (%[[A:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<3xf32>, %[[C:.+]]: tensor<2x1xf32>)
// CHECK: %[[ADD:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<2x3xf32>, tensor<3xf32>)
// CHECK: arith.addf
// CHECK: %[[MUL:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[ID]]]
// CHECK-SAME: ins(%[[ADD]], %[[C]] : tensor<2x3xf32>, tensor<2x1xf32>)
// CHECK: arith.mulf
// CHECK: return %[[MUL]]
func.func @binary_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2x1xf32>) -> tensor<2x3xf32> {
  %0 = kiln.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = kiln.mul %0, %c : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// Both operands may broadcast: [2, 1] with [3] gives [2, 3].
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @both_broadcast
// CHECK: linalg.generic {indexing_maps = [#[[COL]], #[[ROW]], #[[ID]]]
// CHECK-SAME: outs(%{{.+}} : tensor<2x3xf32>)
// CHECK: arith.subf
func.func @both_broadcast(%a: tensor<2x1xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.sub %a, %b : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @unary
// CHECK: linalg.generic
// CHECK: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[R:.+]] = arith.maximumf %[[IN]], %[[ZERO]] : f32
// CHECK: linalg.yield %[[R]]
// Sigmoid is 1 / (1 + exp(-x)).
// CHECK: linalg.generic
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: linalg.generic
// CHECK: math.tanh
func.func @unary(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.relu %x : tensor<4xf32>
  %1 = kiln.sigmoid %0 : tensor<4xf32>
  %2 = kiln.tanh %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// Clip clamps with maximumf/minimumf; an infinite bound is no bound.
// CHECK-LABEL: func.func @clip
// CHECK: linalg.generic
// CHECK: %[[LO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[M:.+]] = arith.maximumf %{{.+}}, %[[LO]] : f32
// CHECK: %[[HI:.+]] = arith.constant 6.000000e+00 : f32
// CHECK: arith.minimumf %[[M]], %[[HI]] : f32
// CHECK: linalg.generic
// CHECK-NOT: arith.maximumf
// CHECK: arith.minimumf
// CHECK-NOT: arith.maximumf
// CHECK: linalg.yield
func.func @clip(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.clip %x {min = 0.0 : f32, max = 6.0 : f32} : tensor<4xf32>
  %1 = kiln.clip %0 {min = 0xFF800000 : f32, max = 1.0 : f32} : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Constants become arith constants; identity disappears.
// CHECK-LABEL: func.func @constant_identity
// CHECK: %[[C:.+]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NOT: kiln.
// CHECK: return %[[C]]
func.func @constant_identity() -> tensor<2xf32> {
  %c = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = kiln.identity %c : tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// Integer elementwise ops use the signed integer arith ops.
// CHECK-LABEL: func.func @integer_binary
// CHECK: linalg.generic
// CHECK: arith.addi %{{.+}}, %{{.+}} : i64
// CHECK: linalg.generic
// CHECK: arith.divsi %{{.+}}, %{{.+}} : i64
// CHECK: linalg.generic
// CHECK: arith.maxsi %{{.+}}, %{{.+}} : i64
// CHECK: linalg.generic
// CHECK: arith.minsi %{{.+}}, %{{.+}} : i64
func.func @integer_binary(%a: tensor<4xi64>, %b: tensor<i64>) -> tensor<4xi64> {
  %0 = kiln.add %a, %b : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
  %1 = kiln.div %0, %b : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
  %2 = kiln.max %1, %a : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %3 = kiln.min %2, %a : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %3 : tensor<4xi64>
}

// -----

// Cast picks its arith op by source and target: signed integers, bool as 0
// or 1 (unsigned), "not zero" for bool targets (une: NaN is true).
// CHECK-LABEL: func.func @cast
// CHECK: arith.sitofp %{{.+}} : i64 to f32
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: arith.cmpf une, %{{.+}}, %[[ZERO]] : f32
// CHECK: arith.extui %{{.+}} : i1 to i32
// CHECK: arith.uitofp %{{.+}} : i1 to f32
// CHECK: arith.fptosi %{{.+}} : f32 to i32
// CHECK: %[[IZERO:.+]] = arith.constant 0 : i64
// CHECK: arith.cmpi ne, %{{.+}}, %[[IZERO]] : i64
// CHECK: arith.trunci %{{.+}} : i64 to i8
// CHECK: arith.extsi %{{.+}} : i8 to i64
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @cast(%x: tensor<4xi64>, %f: tensor<4xf32>, %b: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xi1>, tensor<4xi32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi1>, tensor<4xi64>, tensor<4xf16>) {
  %0 = kiln.cast %x to f32 : tensor<4xi64> -> tensor<4xf32>
  %1 = kiln.cast %f to i1 : tensor<4xf32> -> tensor<4xi1>
  %2 = kiln.cast %b to i32 : tensor<4xi1> -> tensor<4xi32>
  %3 = kiln.cast %b to f32 : tensor<4xi1> -> tensor<4xf32>
  %4 = kiln.cast %f to i32 : tensor<4xf32> -> tensor<4xi32>
  %5 = kiln.cast %x to i1 : tensor<4xi64> -> tensor<4xi1>
  %6 = kiln.cast %x to i8 : tensor<4xi64> -> tensor<4xi8>
  %7 = kiln.cast %6 to i64 : tensor<4xi8> -> tensor<4xi64>
  %8 = kiln.cast %f to f16 : tensor<4xf32> -> tensor<4xf16>
  return %0, %1, %2, %3, %4, %5, %7, %8 : tensor<4xf32>, tensor<4xi1>, tensor<4xi32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi1>, tensor<4xi64>, tensor<4xf16>
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

// -----

// Gather is a generic over the result that reads the index, wraps a negative
// one (i + 5), clamps it to [0, 4] and extracts from the input.
// CHECK-DAG: #[[IDX:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[X:.+]]: tensor<5x3xf32>, %[[I:.+]]: tensor<2xi64>)
// CHECK: %[[Y:.+]] = linalg.generic {indexing_maps = [#[[IDX]], #[[OUT]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[I]] : tensor<2xi64>) outs(%{{.+}} : tensor<2x3xf32>)
// CHECK: ^bb0(%[[IN:.+]]: i64, %{{.+}}: f32):
// CHECK-DAG: %[[RAW:.+]] = arith.index_cast %[[IN]] : i64 to index
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C5:.+]] = arith.constant 5 : index
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[RAW]], %[[C0]] : index
// CHECK: %[[WRAPPED:.+]] = arith.addi %[[RAW]], %[[C5]] : index
// CHECK: %[[SEL:.+]] = arith.select %[[NEG]], %[[WRAPPED]], %[[RAW]] : index
// CHECK: %[[LO:.+]] = arith.maxsi %[[SEL]], %[[C0]] : index
// CHECK: %[[ROW:.+]] = arith.minsi %[[LO]], %[[C4]] : index
// CHECK: %[[COL:.+]] = linalg.index 1 : index
// CHECK: %[[E:.+]] = tensor.extract %[[X]][%[[ROW]], %[[COL]]] : tensor<5x3xf32>
// CHECK: linalg.yield %[[E]] : f32
// CHECK: return %[[Y]]
func.func @gather(%x: tensor<5x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf32> {
  %y = kiln.gather %x, %i {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Along an inner axis with a 2-D index: result (i, j, k) reads x[i, idx[j, k]].
// CHECK-DAG: #[[IDX:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @gather_inner_axis
// CHECK-SAME: (%[[X:.+]]: tensor<3x5xf32>, %[[I:.+]]: tensor<2x2xi32>)
// CHECK: linalg.generic {indexing_maps = [#[[IDX]], #{{.+}}]
// CHECK: arith.index_cast %{{.+}} : i32 to index
// CHECK: %[[COL:.+]] = arith.minsi
// CHECK: %[[ROW:.+]] = linalg.index 0 : index
// CHECK: tensor.extract %[[X]][%[[ROW]], %[[COL]]] : tensor<3x5xf32>
func.func @gather_inner_axis(%x: tensor<3x5xf32>, %i: tensor<2x2xi32>) -> tensor<3x2x2xf32> {
  %y = kiln.gather %x, %i {axis = 1 : i64} : (tensor<3x5xf32>, tensor<2x2xi32>) -> tensor<3x2x2xf32>
  return %y : tensor<3x2x2xf32>
}

// -----

// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[X:.+]]: tensor<4x6xf32>)
// CHECK: %[[S:.+]] = tensor.extract_slice %[[X]][1, 1] [2, 3] [1, 2] : tensor<4x6xf32> to tensor<2x3xf32>
// CHECK: return %[[S]]
func.func @slice(%x: tensor<4x6xf32>) -> tensor<2x3xf32> {
  %y = kiln.slice %x {offsets = array<i64: 1, 1>, sizes = array<i64: 2, 3>, strides = array<i64: 1, 2>} : tensor<4x6xf32> -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

// -----

// NCHW conv2d runs as NHWC x HWCF: the input is transposed and padded at run
// time, the constant filter is transposed at compile time, and the bias add
// writes NCHW back.
// CHECK-DAG: #[[NHWC_TO_NCHW:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>
// CHECK-DAG: #[[CHANNEL:.+]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-DAG: #[[ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @conv2d
// CHECK-SAME: (%[[X:.+]]: tensor<1x1x4x4xf32>, %[[B:.+]]: tensor<2xf32>)
// CHECK: %[[XT:.+]] = linalg.transpose ins(%[[X]] : tensor<1x1x4x4xf32>) outs(%{{.+}} : tensor<1x4x4x1xf32>) permutation = [0, 2, 3, 1]
// Padding: a zero-filled 1x4x6x1 with the input inserted at column 1.
// CHECK: %[[ZERO:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<1x4x6x1xf32>)
// CHECK: %[[COPY:.+]] = linalg.copy ins(%[[XT]] : tensor<1x4x4x1xf32>)
// CHECK: %[[XP:.+]] = tensor.insert_slice %[[COPY]] into %[[ZERO]][0, 0, 1, 0] [1, 4, 4, 1] [1, 1, 1, 1]
// CHECK-NOT: linalg.transpose
// CHECK: %[[W:.+]] = arith.constant dense_resource<[[BLOB:.+]]> : tensor<1x2x1x2xf32>
// CHECK-NOT: linalg.transpose
// CHECK: %[[ACC:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<1x4x5x2xf32>)
// CHECK: %[[Y:.+]] = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
// CHECK-SAME: ins(%[[XP]], %[[W]] : tensor<1x4x6x1xf32>, tensor<1x2x1x2xf32>) outs(%[[ACC]] : tensor<1x4x5x2xf32>)
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[NHWC_TO_NCHW]], #[[CHANNEL]], #[[ID4]]]
// CHECK-SAME: ins(%[[Y]], %[[B]] : tensor<1x4x5x2xf32>, tensor<2xf32>) outs(%{{.+}} : tensor<1x2x4x5xf32>)
// CHECK: arith.addf
// CHECK: return %[[R]]
// The filter [F=2][C=1][KH=1][KW=2] = [[1, 2]], [[3, 4]] laid out as
// [KH][KW][C][F]: 1, 3, 2, 4 (after the 4-byte alignment prefix).
// CHECK: [[BLOB]]: "0x080000000000803F000040400000004000008040"
func.func @conv2d(%x: tensor<1x1x4x4xf32>, %b: tensor<2xf32>) -> tensor<1x2x4x5xf32> {
  %w = kiln.constant dense<[[[[1.0, 2.0]]], [[[3.0, 4.0]]]]> : tensor<2x1x1x2xf32>
  %y = kiln.conv2d %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 1, 0, 1>, group = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x4x5xf32>
  return %y : tensor<1x2x4x5xf32>
}

// -----

// Without pads there is no padding copy; strides and dilations carry over.
// A filter that is not a constant is transposed at run time.
// CHECK-LABEL: func.func @conv2d_unpadded_strided
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x9x9xf32>, %[[W:.+]]: tensor<4x3x3x3xf32>)
// CHECK: %[[XT:.+]] = linalg.transpose ins(%[[X]] : tensor<1x3x9x9xf32>) {{.+}} permutation = [0, 2, 3, 1]
// CHECK-NOT: tensor.insert_slice
// CHECK: %[[WT:.+]] = linalg.transpose ins(%[[W]] : tensor<4x3x3x3xf32>) outs(%{{.+}} : tensor<3x3x3x4xf32>) permutation = [2, 3, 1, 0]
// CHECK: linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK-SAME: ins(%[[XT]], %[[WT]] : tensor<1x9x9x3xf32>, tensor<3x3x3x4xf32>) outs(%{{.+}} : tensor<1x3x3x4xf32>)
// Without bias the last generic only permutes.
// CHECK: linalg.generic
// CHECK-NOT: arith.addf
// CHECK: linalg.yield
func.func @conv2d_unpadded_strided(%x: tensor<1x3x9x9xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %y = kiln.conv2d %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : (tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32>
  return %y : tensor<1x4x3x3xf32>
}

// -----

// group == C == F is a depthwise convolution with an HWC filter, also
// rearranged at compile time.
// CHECK-LABEL: func.func @depthwise
// CHECK: %[[XT:.+]] = linalg.transpose {{.+}} permutation = [0, 2, 3, 1]
// CHECK-NOT: linalg.transpose
// CHECK: %[[W:.+]] = arith.constant dense_resource<[[BLOB:.+]]> : tensor<1x2x1x3xf32>
// CHECK: %[[WF:.+]] = tensor.collapse_shape %[[W]]
// CHECK: %[[WHWC:.+]] = tensor.expand_shape %[[WF]] {{.+}} into tensor<1x2x3xf32>
// CHECK-NOT: linalg.transpose
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
// CHECK-SAME: ins(%{{.+}}, %[[WHWC]] : tensor<1x5x5x3xf32>, tensor<1x2x3xf32>) outs(%{{.+}} : tensor<1x5x4x3xf32>)
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
// Filter [C][1][1][KW] = [1, 2], [3, 4], [5, 6] as [KH][KW][C]: 1, 3, 5, 2, 4, 6.
// CHECK: [[BLOB]]: "0x080000000000803F000040400000A04000000040000080400000C040"
func.func @depthwise(%x: tensor<1x3x5x5xf32>) -> tensor<1x3x5x4xf32> {
  %w = kiln.constant dense<[[[[1.0, 2.0]]], [[[3.0, 4.0]]], [[[5.0, 6.0]]]]> : tensor<3x1x1x2xf32>
  %y = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 3 : i64} : (tensor<1x3x5x5xf32>, tensor<3x1x1x2xf32>) -> tensor<1x3x5x4xf32>
  return %y : tensor<1x3x5x4xf32>
}

// -----

// Other groupings run one NHWC convolution kernel in a loop over the groups:
// each iteration convolves a channel slice of the input with a slice of the
// filter (transposed to HWCF once) into a zeroed slice of the loop-carried
// output.
// CHECK-LABEL: func.func @grouped
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x5x5xf32>, %[[W:.+]]: tensor<6x2x1x1xf32>)
// CHECK: %[[XT:.+]] = linalg.transpose ins(%[[X]]
// CHECK: %[[WT:.+]] = linalg.transpose ins(%[[W]] {{.+}} permutation = [2, 3, 1, 0]
// CHECK: %[[OUT:.+]] = tensor.empty() : tensor<1x5x5x6xf32>
// CHECK: %[[Y:.+]] = scf.for %[[G:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[OUT]])
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG: %[[XOFF:.+]] = arith.muli %[[G]], %[[C2]]
// CHECK-DAG: %[[FOFF:.+]] = arith.muli %[[G]], %[[C3]]
// CHECK: %[[XG:.+]] = tensor.extract_slice %[[XT]][0, 0, 0, %[[XOFF]]] [1, 5, 5, 2] [1, 1, 1, 1]
// CHECK: %[[WG:.+]] = tensor.extract_slice %[[WT]][0, 0, 0, %[[FOFF]]] [1, 1, 2, 3] [1, 1, 1, 1]
// CHECK: %[[YG:.+]] = tensor.extract_slice %[[ACC]][0, 0, 0, %[[FOFF]]] [1, 5, 5, 3] [1, 1, 1, 1]
// CHECK: %[[Z:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[YG]] : tensor<1x5x5x3xf32>)
// CHECK: %[[CONV:.+]] = linalg.conv_2d_nhwc_hwcf {{.+}} ins(%[[XG]], %[[WG]] : tensor<1x5x5x2xf32>, tensor<1x1x2x3xf32>) outs(%[[Z]] : tensor<1x5x5x3xf32>)
// CHECK: %[[NEXT:.+]] = tensor.insert_slice %[[CONV]] into %[[ACC]][0, 0, 0, %[[FOFF]]] [1, 5, 5, 3] [1, 1, 1, 1]
// CHECK: scf.yield %[[NEXT]]
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
// CHECK: linalg.generic {{.+}} ins(%[[Y]] : tensor<1x5x5x6xf32>) outs(%{{.+}} : tensor<1x6x5x5xf32>)
func.func @grouped(%x: tensor<1x4x5x5xf32>, %w: tensor<6x2x1x1xf32>) -> tensor<1x6x5x5xf32> {
  %y = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<6x2x1x1xf32>) -> tensor<1x6x5x5xf32>
  return %y : tensor<1x6x5x5xf32>
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

// -----

// Max pooling pads with -inf; ceil_mode adds a bottom/right row and column so
// that the last window fits (7 + 1 = 8 = 4 windows of 2).
// CHECK-LABEL: func.func @max_pool_ceil_mode
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x7x7xf32>)
// CHECK: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[PAD:.+]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.+}} : tensor<1x4x8x8xf32>)
// CHECK: %[[XP:.+]] = tensor.insert_slice %{{.+}} into %[[PAD]][0, 0, 0, 0] [1, 4, 7, 7] [1, 1, 1, 1]
// CHECK: %[[WIN:.+]] = tensor.empty() : tensor<2x2xf32>
// CHECK: %[[ACC:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<1x4x4x4xf32>)
// CHECK: %[[Y:.+]] = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK-SAME: ins(%[[XP]], %[[WIN]] : tensor<1x4x8x8xf32>, tensor<2x2xf32>) outs(%[[ACC]] : tensor<1x4x4x4xf32>)
// CHECK: return %[[Y]]
func.func @max_pool_ceil_mode(%x: tensor<1x4x7x7xf32>) -> tensor<1x4x4x4xf32> {
  %y = kiln.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, ceil_mode = true} : tensor<1x4x7x7xf32> -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// -----

// Average pooling sums over the zero-padded input and divides by the number
// of window cells inside the input: 4 in corners, 6 on edges, 9 inside.
// CHECK-DAG: #[[ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[HW:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @avg_pool_excludes_pad
// CHECK: %[[PAD:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<1x2x5x5xf32>)
// CHECK: %[[XP:.+]] = tensor.insert_slice %{{.+}} into %[[PAD]][0, 0, 1, 1] [1, 2, 3, 3] [1, 1, 1, 1]
// CHECK: %[[SUM:.+]] = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
// CHECK-SAME: ins(%[[XP]], %{{.+}} : tensor<1x2x5x5xf32>, tensor<3x3xf32>)
// CHECK: %[[COUNT:.+]] = arith.constant dense<{{\[}}[4.000000e+00, 6.000000e+00, 4.000000e+00], [6.000000e+00, 9.000000e+00, 6.000000e+00], [4.000000e+00, 6.000000e+00, 4.000000e+00]]> : tensor<3x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID4]], #[[HW]], #[[ID4]]]
// CHECK-SAME: ins(%[[SUM]], %[[COUNT]] : tensor<1x2x3x3xf32>, tensor<3x3xf32>)
// CHECK: arith.divf
func.func @avg_pool_excludes_pad(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %y = kiln.avg_pool2d %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x2x3x3xf32> -> tensor<1x2x3x3xf32>
  return %y : tensor<1x2x3x3xf32>
}

// -----

// With count_include_pad every window counts all of its 9 cells.
// CHECK-LABEL: func.func @avg_pool_includes_pad
// CHECK: linalg.pooling_nchw_sum
// CHECK: arith.constant dense<9.000000e+00> : tensor<3x3xf32>
// CHECK: arith.divf
func.func @avg_pool_includes_pad(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %y = kiln.avg_pool2d %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = true} : tensor<1x2x3x3xf32> -> tensor<1x2x3x3xf32>
  return %y : tensor<1x2x3x3xf32>
}

// -----

// CHECK-DAG: #[[ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[NC:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-LABEL: func.func @global_avg_pool
// CHECK: %[[S:.+]] = linalg.generic {indexing_maps = [#[[ID4]], #[[NC]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK: %[[NINE:.+]] = arith.constant 9.000000e+00 : f32
// CHECK: arith.divf %{{.+}}, %[[NINE]]
// CHECK: tensor.expand_shape {{.+}} into tensor<1x2x1x1xf32>
func.func @global_avg_pool(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x1x1xf32> {
  %y = kiln.global_avg_pool %x : tensor<1x2x3x3xf32> -> tensor<1x2x1x1xf32>
  return %y : tensor<1x2x1x1xf32>
}

// -----

// Symbolic sizes (what --check converts, before canonicalization makes it
// a reduce_mean): the count is the run-time H * W times the static 5.
// CHECK-LABEL: func.func @global_avg_pool_symbolic
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x?x?x5xf32>)
// CHECK: %[[S:.+]] = linalg.generic
// CHECK-DAG: %[[H:.+]] = tensor.dim %[[X]], %c2
// CHECK-DAG: %[[W:.+]] = tensor.dim %[[X]], %c3
// CHECK: %[[HW:.+]] = arith.muli %[[H]], %[[W]]
// CHECK: %[[I:.+]] = arith.index_cast %[[HW]] : index to i64
// CHECK: %[[F:.+]] = arith.sitofp %[[I]] : i64 to f32
// CHECK: %[[N:.+]] = arith.mulf %[[F]], %{{.+}} : f32
// CHECK: arith.divf %{{.+}}, %[[N]]
// CHECK: tensor<?x?x1x1x1xf32>
func.func @global_avg_pool_symbolic(%x: tensor<?x?x?x?x5xf32>) -> tensor<?x?x1x1x1xf32> {
  %y = kiln.global_avg_pool %x : tensor<?x?x?x?x5xf32> -> tensor<?x?x1x1x1xf32>
  return %y : tensor<?x?x1x1x1xf32>
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

// -----

// alpha * A B^T + C: a matmul on a zero-filled accumulator, then one
// epilogue generic that scales and adds the broadcast C.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @gemm_epilogue
// CHECK-SAME: (%[[A:.+]]: tensor<2x8xf32>, %[[B:.+]]: tensor<4x8xf32>, %[[C:.+]]: tensor<4xf32>)
// CHECK: %[[BT:.+]] = linalg.transpose ins(%[[B]] : tensor<4x8xf32>) {{.+}} permutation = [1, 0]
// CHECK: %[[ACC:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<2x4xf32>)
// CHECK: %[[MM:.+]] = linalg.matmul ins(%[[A]], %[[BT]] : tensor<2x8xf32>, tensor<8x4xf32>) outs(%[[ACC]] : tensor<2x4xf32>)
// CHECK: %[[Y:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]]
// CHECK-SAME: ins(%[[MM]], %[[C]] : tensor<2x4xf32>, tensor<4xf32>)
// CHECK: ^bb0(%[[ACCV:.+]]: f32, %[[CV:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[ALPHA:.+]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[SCALED:.+]] = arith.mulf %[[ACCV]], %[[ALPHA]]
// CHECK: arith.addf %[[SCALED]], %[[CV]]
// CHECK: return %[[Y]]
func.func @gemm_epilogue(%a: tensor<2x8xf32>, %b: tensor<4x8xf32>, %c: tensor<4xf32>) -> tensor<2x4xf32> {
  %y = kiln.gemm %a, %b, %c {alpha = 0.5 : f32, trans_b = true} : (tensor<2x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Without alpha, beta or C the matmul is the result. A constant B^T is
// transposed at compile time.
// CHECK-LABEL: func.func @gemm_plain
// CHECK-NOT: linalg.transpose
// CHECK: %[[BT:.+]] = arith.constant dense_resource<{{.+}}> : tensor<3x2xf32>
// CHECK: %[[MM:.+]] = linalg.matmul ins(%{{.+}}, %[[BT]] : tensor<1x3xf32>, tensor<3x2xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[MM]]
func.func @gemm_plain(%a: tensor<1x3xf32>) -> tensor<1x2xf32> {
  %b = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %y = kiln.gemm %a, %b {trans_b = true} : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

// -----

// A batched lhs against a 2-D rhs folds the batch into M: one 6x8 x 8x4
// matmul between reshapes.
// CHECK-LABEL: func.func @matmul_batch_folded
// CHECK-SAME: (%[[A:.+]]: tensor<2x3x8xf32>, %[[B:.+]]: tensor<8x4xf32>)
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[A]]
// CHECK: %[[A2:.+]] = tensor.expand_shape %[[FLAT]] {{.+}} into tensor<6x8xf32>
// CHECK: %[[MM:.+]] = linalg.matmul ins(%[[A2]], %[[B]] : tensor<6x8xf32>, tensor<8x4xf32>) outs(%{{.+}} : tensor<6x4xf32>)
// CHECK: %[[MF:.+]] = tensor.collapse_shape %[[MM]]
// CHECK: %[[Y:.+]] = tensor.expand_shape %[[MF]] {{.+}} into tensor<2x3x4xf32>
// CHECK: return %[[Y]]
func.func @matmul_batch_folded(%a: tensor<2x3x8xf32>, %b: tensor<8x4xf32>) -> tensor<2x3x4xf32> {
  %y = kiln.matmul %a, %b : (tensor<2x3x8xf32>, tensor<8x4xf32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// A batched rhs needs a contraction generic; its size-1 batch broadcasts.
// CHECK-DAG: #[[LHS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[RHS:.+]] = affine_map<(d0, d1, d2, d3) -> (0, d3, d2)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @matmul_batched
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<2x3x8xf32>, tensor<1x8x4xf32>) outs(%{{.+}} : tensor<2x3x4xf32>)
// CHECK: ^bb0(%[[L:.+]]: f32, %[[R:.+]]: f32, %[[O:.+]]: f32):
// CHECK: %[[P:.+]] = arith.mulf %[[L]], %[[R]]
// CHECK: arith.addf %[[O]], %[[P]]
func.func @matmul_batched(%a: tensor<2x3x8xf32>, %b: tensor<1x8x4xf32>) -> tensor<2x3x4xf32> {
  %y = kiln.matmul %a, %b : (tensor<2x3x8xf32>, tensor<1x8x4xf32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

//===----------------------------------------------------------------------===//
// Reductions and normalization
//===----------------------------------------------------------------------===//

// -----

// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[RED:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @reduce_mean_keepdims
// CHECK: %[[INIT:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<2x4xf32>)
// CHECK: %[[S:.+]] = linalg.generic {indexing_maps = [#[[IN]], #[[RED]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: outs(%[[INIT]] : tensor<2x4xf32>)
// CHECK: arith.addf
// CHECK: %[[THREE:.+]] = arith.constant 3.000000e+00 : f32
// CHECK: arith.divf %{{.+}}, %[[THREE]]
// keepdims: the reduced dimension comes back as size 1.
// CHECK: tensor.expand_shape {{.+}} into tensor<2x1x4xf32>
func.func @reduce_mean_keepdims(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %y = kiln.reduce_mean %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  return %y : tensor<2x1x4xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_max
// CHECK: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.+}} : tensor<2xf32>)
// CHECK: %[[Y:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction", "reduction"]
// CHECK-SAME: outs(%[[INIT]] : tensor<2xf32>)
// CHECK: arith.maximumf
// CHECK-NOT: tensor.expand_shape
// CHECK: return %[[Y]]
func.func @reduce_max(%x: tensor<2x3x4xf32>) -> tensor<2xf32> {
  %y = kiln.reduce_max %x {axes = array<i64: 1, 2>, keepdims = false} : tensor<2x3x4xf32> -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// A reduction of every element (DynamicQuantizeLinear's range): 13,120
// values as 8 blocks of 25 rows of 64 lanes reduced over their rows, the
// 8 x 64 partial results to one value, then the 320 left over.
// CHECK-DAG: #[[BLOCKS:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[LANES:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @reduce_min_everything
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0, 1, 2, 3]] : tensor<1x8x40x41xf32> into tensor<13120xf32>
// CHECK: %[[MAIN:.+]] = tensor.extract_slice %[[FLAT]][0] [12800] [1]
// CHECK: %[[B:.+]] = tensor.expand_shape %[[MAIN]] {{.+}} into tensor<8x25x64xf32>
// CHECK: %[[P:.+]] = linalg.generic {indexing_maps = [#[[BLOCKS]], #[[LANES]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[B]] : tensor<8x25x64xf32>)
// CHECK: arith.minimumf
// CHECK: %[[A:.+]] = linalg.generic {{.+}} iterator_types = ["reduction", "reduction"]} ins(%[[P]] : tensor<8x64xf32>)
// CHECK: %[[TAIL:.+]] = tensor.extract_slice %[[FLAT]][12800] [320] [1]
// CHECK: linalg.generic {{.+}} iterator_types = ["reduction"]} ins(%[[TAIL]] : tensor<320xf32>) outs(%[[A]] : tensor<f32>)
func.func @reduce_min_everything(%x: tensor<1x8x40x41xf32>) -> tensor<f32> {
  %y = kiln.reduce_min %x {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : tensor<1x8x40x41xf32> -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// The minimum and the maximum of one tensor (DynamicQuantizeLinear's pair)
// in one pass: each block row's lanes keep max(x) and max(-x) (side 0 and
// 1 of a [8, 2, 64] accumulator), those reduce to [2], the tail joins them,
// and the minimum is -max(-x). No second reduction reads the input.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[ACC:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @reduce_min_max_pair
// CHECK: %[[P:.+]] = linalg.generic {indexing_maps = [#[[IN]], #[[ACC]]], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%{{.+}} : tensor<8x25x64xf32>) outs(%{{.+}} : tensor<8x2x64xf32>)
// CHECK: linalg.index 2
// CHECK: arith.negf
// CHECK: arith.select
// CHECK: arith.maximumf
// CHECK: %[[A:.+]] = linalg.generic {{.+}} iterator_types = ["reduction", "parallel", "reduction"]} ins(%[[P]] : tensor<8x2x64xf32>)
// CHECK: %[[T:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%{{.+}} : tensor<320xf32>) outs(%[[A]] : tensor<2xf32>)
// CHECK: tensor.extract_slice %[[T]][0] [1] [1]
// CHECK: tensor.extract_slice %[[T]][1] [1] [1]
// CHECK: arith.negf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @reduce_min_max_pair(%x: tensor<1x8x40x41xf32>) -> (tensor<f32>, tensor<f32>) {
  %lo = kiln.reduce_min %x {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : tensor<1x8x40x41xf32> -> tensor<f32>
  %hi = kiln.reduce_max %x {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : tensor<1x8x40x41xf32> -> tensor<f32>
  return %lo, %hi : tensor<f32>, tensor<f32>
}

// -----

// Softmax: max, exp(x - max), sum, divide; the reductions drop the axis.
// The maximum skips NaNs (maxnumf): a NaN still makes its row NaN through
// its own exp.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROWS:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.+]]: tensor<2x10xf32>)
// CHECK: %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROWS]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]]
// CHECK: arith.maxnumf
// CHECK: %[[E:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROWS]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[MAX]]
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROWS]]], iterator_types = ["parallel", "reduction"]} ins(%[[E]]
// CHECK: arith.addf
// CHECK: %[[Y:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROWS]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[E]], %[[SUM]]
// CHECK: arith.divf
// CHECK: return %[[Y]]
func.func @softmax(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  %y = kiln.softmax %x {axis = 1 : i64} : tensor<2x10xf32>
  return %y : tensor<2x10xf32>
}

// -----

// Rows of 64 along the innermost axis: [2, 4, 16] is reduced over the 4
// (16 lanes side by side), then over the 16 lanes, for the max and the sum.
// CHECK-LABEL: func.func @softmax_lanes
// CHECK: %[[X3:.+]] = tensor.expand_shape %{{.+}} output_shape [2, 4, 16] : tensor<128xf32> into tensor<2x4x16xf32>
// CHECK: %[[LANES:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X3]] : tensor<2x4x16xf32>) outs(%{{.+}} : tensor<2x16xf32>)
// CHECK: arith.maxnumf
// CHECK: %[[MAX:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%[[LANES]] : tensor<2x16xf32>) outs(%{{.+}} : tensor<2xf32>)
// CHECK: arith.maxnumf
// CHECK: math.exp
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%{{.+}} : tensor<2x4x16xf32>) outs(%{{.+}} : tensor<2x16xf32>)
// CHECK: arith.addf
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%{{.+}} : tensor<2x16xf32>) outs(%{{.+}} : tensor<2xf32>)
// CHECK: arith.addf
// CHECK: arith.divf
func.func @softmax_lanes(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %y = kiln.softmax %x {axis = 1 : i64} : tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// -----

// Batch norm folds its parameters per channel first (s = scale / sqrt(var +
// eps), t = bias - mean * s), then computes x * s + t.
// CHECK-DAG: #[[ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[CH:.+]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @batch_norm
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x3x3xf32>, %[[SCALE:.+]]: tensor<2xf32>, %[[BIAS:.+]]: tensor<2xf32>, %[[MEAN:.+]]: tensor<2xf32>, %[[VAR:.+]]: tensor<2xf32>)
// CHECK: %[[S:.+]] = linalg.generic {{.+}} ins(%[[SCALE]], %[[VAR]] : tensor<2xf32>, tensor<2xf32>)
// CHECK: math.sqrt
// CHECK: %[[T:.+]] = linalg.generic {{.+}} ins(%[[BIAS]], %[[MEAN]], %[[S]] : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK: %[[Y:.+]] = linalg.generic {indexing_maps = [#[[ID4]], #[[CH]], #[[CH]], #[[ID4]]]
// CHECK-SAME: ins(%[[X]], %[[S]], %[[T]] :
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: return %[[Y]]
func.func @batch_norm(%x: tensor<1x2x3x3xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  %y = kiln.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  return %y : tensor<1x2x3x3xf32>
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @reshape
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[F:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK: %[[Y:.+]] = tensor.expand_shape %[[F]] {{\[}}[0, 1]] output_shape [6, 4] : tensor<24xf32> into tensor<6x4xf32>
// CHECK: return %[[Y]]
func.func @reshape(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %y = kiln.reshape %x : tensor<2x3x4xf32> to tensor<6x4xf32>
  return %y : tensor<6x4xf32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[Y:.+]] = linalg.transpose ins(%[[X]] : tensor<2x3x4xf32>) outs(%{{.+}} : tensor<4x2x3xf32>) permutation = [2, 0, 1]
// A constant is transposed at compile time.
// CHECK: %[[C:.+]] = arith.constant dense_resource<[[BLOB:.+]]> : tensor<3x2xf32>
// CHECK-NOT: linalg.transpose
// CHECK: return %[[Y]], %[[C]]
// [[1, 2, 3], [4, 5, 6]]^T = [[1, 4], [2, 5], [3, 6]]
// CHECK: [[BLOB]]: "0x080000000000803F00008040000000400000A040000040400000C040"
func.func @transpose(%x: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<3x2xf32>) {
  %y = kiln.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %c = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %t = kiln.transpose %c {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  return %y, %t : tensor<4x2x3xf32>, tensor<3x2xf32>
}

// -----

// Each input is copied into its slice of the result along the axis.
// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.+]]: tensor<1x2xf32>, %[[B:.+]]: tensor<1x3xf32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<1x5xf32>
// CHECK: %[[SA:.+]] = tensor.extract_slice %[[E]][0, 0] [1, 2] [1, 1]
// CHECK: %[[CA:.+]] = linalg.copy ins(%[[A]] : tensor<1x2xf32>) outs(%[[SA]] : tensor<1x2xf32>)
// CHECK: %[[R1:.+]] = tensor.insert_slice %[[CA]] into %[[E]][0, 0] [1, 2] [1, 1]
// CHECK: %[[SB:.+]] = tensor.extract_slice %[[R1]][0, 2] [1, 3] [1, 1]
// CHECK: %[[CB:.+]] = linalg.copy ins(%[[B]] : tensor<1x3xf32>) outs(%[[SB]] : tensor<1x3xf32>)
// CHECK: %[[R2:.+]] = tensor.insert_slice %[[CB]] into %[[R1]][0, 2] [1, 3] [1, 1]
// CHECK: return %[[R2]]
func.func @concat(%a: tensor<1x2xf32>, %b: tensor<1x3xf32>) -> tensor<1x5xf32> {
  %y = kiln.concat %a, %b {axis = 1 : i64} : (tensor<1x2xf32>, tensor<1x3xf32>) -> tensor<1x5xf32>
  return %y : tensor<1x5xf32>
}

// -----

// pads = [0, 1, 2, 3]: before = [0, 1], after = [2, 3].
// CHECK-LABEL: func.func @pad
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK: %[[V:.+]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[F:.+]] = linalg.fill ins(%[[V]] : f32) outs(%{{.+}} : tensor<4x7xf32>)
// CHECK: %[[S:.+]] = tensor.extract_slice %[[F]][0, 1] [2, 3] [1, 1]
// CHECK: %[[C:.+]] = linalg.copy ins(%[[X]] : tensor<2x3xf32>) outs(%[[S]] : tensor<2x3xf32>)
// CHECK: %[[Y:.+]] = tensor.insert_slice %[[C]] into %[[F]][0, 1] [2, 3] [1, 1]
// CHECK: return %[[Y]]
func.func @pad(%x: tensor<2x3xf32>) -> tensor<4x7xf32> {
  %y = kiln.pad %x {pads = array<i64: 0, 1, 2, 3>, value = 0.5 : f32} : tensor<2x3xf32> -> tensor<4x7xf32>
  return %y : tensor<4x7xf32>
}

// -----

// Layer norm: sum and mean over the trailing dimension, the variance as the
// mean of squared centered values, rsqrt(var + eps), then one generic that
// normalizes, scales and shifts.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROWS:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[FEAT:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>, %[[S:.+]]: tensor<4xf32>, %[[B:.+]]: tensor<4xf32>)
// CHECK: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROWS]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]]
// CHECK: arith.addf
// CHECK: %[[MEAN:.+]] = linalg.generic {{.+}} ins(%[[SUM]] : tensor<2x3xf32>)
// CHECK: %[[FOUR:.+]] = arith.constant 4.000000e+00 : f32
// CHECK: arith.divf %{{.+}}, %[[FOUR]]
// CHECK: %[[SQ:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROWS]], #[[ROWS]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[MEAN]] : tensor<2x3x4xf32>, tensor<2x3xf32>)
// CHECK: ^bb0(%[[XV:.+]]: f32, %[[MV:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK: %[[D:.+]] = arith.subf %[[XV]], %[[MV]]
// CHECK: %[[D2:.+]] = arith.mulf %[[D]], %[[D]]
// CHECK: arith.addf %[[ACC]], %[[D2]]
// CHECK: %[[INV:.+]] = linalg.generic {{.+}} ins(%[[SQ]] : tensor<2x3xf32>)
// CHECK: arith.divf
// CHECK: %[[EPS:.+]] = arith.constant 9.99999974E-6 : f32
// CHECK: %[[VE:.+]] = arith.addf %{{.+}}, %[[EPS]]
// CHECK: math.rsqrt %[[VE]]
// CHECK: %[[Y:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROWS]], #[[ROWS]], #[[FEAT]], #[[FEAT]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[MEAN]], %[[INV]], %[[S]], %[[B]] :
// CHECK: ^bb0(%[[XV2:.+]]: f32, %[[MV2:.+]]: f32, %[[IV:.+]]: f32, %[[SV:.+]]: f32, %[[BV:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[C:.+]] = arith.subf %[[XV2]], %[[MV2]]
// CHECK: %[[N:.+]] = arith.mulf %[[C]], %[[IV]]
// CHECK: %[[SC:.+]] = arith.mulf %[[N]], %[[SV]]
// CHECK: arith.addf %[[SC]], %[[BV]]
// CHECK: return %[[Y]]
func.func @layer_norm(%x: tensor<2x3x4xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %y = kiln.layer_norm %x, %s, %b {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// Normalizing from axis 1 reduces two dimensions (12 values); without bias
// the last generic only scales. The scale broadcasts its size-1 dimension.
// CHECK-DAG: #[[LEAD:.+]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-DAG: #[[SCALE:.+]] = affine_map<(d0, d1, d2) -> (d1, 0)>
// CHECK-LABEL: func.func @layer_norm_axis1
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[LEAD]]], iterator_types = ["parallel", "reduction", "reduction"]}
// CHECK: arith.constant 1.200000e+01 : f32
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[LEAD]], #[[LEAD]], #[[SCALE]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK-NOT: arith.addf
// CHECK: linalg.yield
func.func @layer_norm_axis1(%x: tensor<2x3x4xf32>, %s: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %y = kiln.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// RMS normalization (the `rms` form): no mean pass; one reduction sums the
// squares of x itself, then x * rsqrt(sum / n + eps) * scale.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROWS:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[FEAT:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>, %[[S:.+]]: tensor<4xf32>)
// CHECK: %[[SQ:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROWS]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<2x3x4xf32>)
// CHECK: ^bb0(%[[XV:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK: %[[X2:.+]] = arith.mulf %[[XV]], %[[XV]]
// CHECK: arith.addf %[[ACC]], %[[X2]]
// CHECK: %[[INV:.+]] = linalg.generic {{.+}} ins(%[[SQ]] : tensor<2x3xf32>)
// CHECK: arith.constant 4.000000e+00 : f32
// CHECK: math.rsqrt
// CHECK: %[[Y:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROWS]], #[[FEAT]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[INV]], %[[S]] :
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK-NOT: arith.subf
// CHECK: return %[[Y]]
func.func @rms_norm(%x: tensor<2x3x4xf32>, %s: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %y = kiln.layer_norm %x, %s {axis = 2 : i64, epsilon = 1.0e-05 : f32, rms} : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// Axis 0 normalizes the whole tensor: the statistics are rank-0 tensors
// read through the map with no results (this used to crash).
// CHECK-DAG: #[[ALL:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @layer_norm_axis0
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[ALL]]], iterator_types = ["reduction", "reduction"]}
// CHECK: arith.constant 1.200000e+01 : f32
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[ALL]], #[[ALL]], #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel"]}
func.func @layer_norm_axis0(%x: tensor<3x4xf32>, %s: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %y = kiln.layer_norm %x, %s {axis = 0 : i64, epsilon = 1.0e-05 : f32} : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// Round is half to even; sign passes zeros and NaN through; Selu scales
// expm1 by alpha below zero, then everything by gamma (beta); softplus is
// max(x, 0) + log1p(exp(-|x|)), which does not overflow.
// CHECK-LABEL: func.func @activations
// CHECK: math.roundeven
// CHECK: linalg.generic
// CHECK: %[[NEG:.+]] = arith.cmpf olt, %[[IN:.+]], %{{.+}} : f32
// CHECK: %[[POS:.+]] = arith.cmpf ogt, %[[IN]], %{{.+}} : f32
// CHECK: %[[M:.+]] = arith.select %[[NEG]], %{{.+}}, %[[IN]] : f32
// CHECK: arith.select %[[POS]], %{{.+}}, %[[M]] : f32
// CHECK: linalg.generic
// CHECK: %[[SX:.+]] = math.expm1 %{{.+}} : f32
// CHECK: %[[ALPHA:.+]] = arith.constant 2.000000e+00 : f32
// CHECK: arith.mulf %[[SX]], %[[ALPHA]] : f32
// CHECK: %[[GAMMA:.+]] = arith.constant 3.000000e+00 : f32
// CHECK: arith.mulf %{{.+}}, %[[GAMMA]] : f32
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK: math.absf
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: math.log1p
// CHECK: arith.addf
func.func @activations(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.round %x : tensor<4xf32>
  %1 = kiln.sign %0 : tensor<4xf32>
  %2 = kiln.selu %1 {alpha = 2.0 : f32, beta = 3.0 : f32} : tensor<4xf32>
  %3 = kiln.softplus %2 : tensor<4xf32>
  return %3 : tensor<4xf32>
}

// -----

// Integers compare signed; the condition of where broadcasts like its values.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @compare_where
// CHECK: %[[L:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<2x3xi64>, tensor<3xi64>) outs(%{{.+}} : tensor<2x3xi1>)
// CHECK: arith.cmpi slt
// CHECK: %[[X:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[ID]]]
// CHECK: arith.xori
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ROW]], #[[ID]]]
// CHECK-SAME: ins(%[[X]], %{{.+}}, %{{.+}} : tensor<2x3xi1>, tensor<2x3xi64>, tensor<3xi64>)
// CHECK: arith.select %{{.+}}, %{{.+}}, %{{.+}} : i64
func.func @compare_where(%a: tensor<2x3xi64>, %b: tensor<3xi64>, %c: tensor<2x1xi1>) -> tensor<2x3xi64> {
  %l = kiln.less %a, %b : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi1>
  %x = kiln.xor %l, %c : (tensor<2x3xi1>, tensor<2x1xi1>) -> tensor<2x3xi1>
  %y = kiln.where %x, %a, %b : (tensor<2x3xi1>, tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  return %y : tensor<2x3xi64>
}

// -----

// Float comparisons are ordered (false with NaN); not is xor with true.
// CHECK-LABEL: func.func @compare_float_not
// CHECK: arith.cmpf oge
// CHECK: %[[T:.+]] = arith.constant true
// CHECK: arith.xori %{{.+}}, %[[T]] : i1
func.func @compare_float_not(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xi1> {
  %g = kiln.greater_equal %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %n = kiln.not %g : tensor<3xi1>
  return %n : tensor<3xi1>
}

// -----

// CHECK-LABEL: func.func @reduce_prod
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ONE]] : f32) outs(%{{.+}} : tensor<2xf32>)
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]
// CHECK-SAME: outs(%[[INIT]] : tensor<2xf32>)
// CHECK: arith.mulf
func.func @reduce_prod(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %y = kiln.reduce_prod %x {axes = array<i64: 1>, keepdims = false} : tensor<2x3xf32> -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// Integer Mod without fmod takes the divisor's sign: a non-zero remainder
// of the other sign gets the divisor added. With fmod it is remsi/remf.
// Divisors 0 and -1 (which trap) are replaced by 1; x % 0 gives 0.
// CHECK-LABEL: func.func @mod
// CHECK: linalg.generic
// CHECK: ^bb0(%[[A:.+]]: i32, %[[B:.+]]: i32, %{{.+}}: i32):
// CHECK: %[[SAFE:.+]] = arith.select %{{.+}}, %{{.+}}, %[[B]] : i32
// CHECK: %[[REM:.+]] = arith.remsi %[[A]], %[[SAFE]] : i32
// CHECK: %[[R:.+]] = arith.select %{{.+}}, %{{.+}}, %[[REM]] : i32
// CHECK: %[[FIX:.+]] = arith.andi
// CHECK: %[[ADJ:.+]] = arith.addi %[[R]], %[[B]] : i32
// CHECK: arith.select %[[FIX]], %[[ADJ]], %[[R]] : i32
// CHECK: linalg.generic
// CHECK: arith.remf
// CHECK: linalg.generic
// CHECK: %[[NEG:.+]] = arith.cmpf olt
// CHECK: %[[SC:.+]] = arith.mulf
// CHECK: arith.select %[[NEG]], %[[SC]], %{{.+}} : f32
func.func @mod(%a: tensor<4xi32>, %b: tensor<4xi32>, %x: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = kiln.mod %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = kiln.mod %x, %x {fmod = true} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = kiln.prelu %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xi32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// ArgMax carries the best value and its index through one reduction; with
// select_last_index an equal value also replaces them (oge, not ogt).
// CHECK-LABEL: func.func @arg_max
// CHECK: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[V0:.+]] = linalg.fill ins(%[[NEG_INF]] : f32)
// CHECK: %[[I0:.+]] = linalg.fill ins(%{{.+}} : i64)
// CHECK: %[[R:.+]]:2 = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]
// CHECK-SAME: outs(%[[V0]], %[[I0]] : tensor<2xf32>, tensor<2xi64>)
// CHECK: ^bb0(%[[IN:.+]]: f32, %[[V:.+]]: f32, %[[I:.+]]: i64):
// CHECK: %[[K:.+]] = linalg.index 1 : index
// CHECK: %[[K64:.+]] = arith.index_cast %[[K]] : index to i64
// CHECK: %[[TAKE:.+]] = arith.cmpf oge, %[[IN]], %[[V]] : f32
// CHECK: arith.select %[[TAKE]], %[[K64]], %[[I]] : i64
// CHECK: tensor.expand_shape %[[R]]#1 {{.+}} : tensor<2xi64> into tensor<2x1xi64>
func.func @arg_max(%x: tensor<2x5xf32>) -> tensor<2x1xi64> {
  %i = kiln.arg_max %x {axis = 1 : i64, select_last_index = true} : tensor<2x5xf32> -> tensor<2x1xi64>
  return %i : tensor<2x1xi64>
}

// -----

// CHECK-LABEL: func.func @arg_min
// CHECK: arith.constant 0x7F800000 : f32
// CHECK: iterator_types = ["reduction", "parallel"]
// CHECK: arith.cmpf olt
func.func @arg_min(%x: tensor<2x5xf32>) -> tensor<5xi64> {
  %i = kiln.arg_min %x {axis = 0 : i64, keepdims = false} : tensor<2x5xf32> -> tensor<5xi64>
  return %i : tensor<5xi64>
}

// -----

// Asinh is built from log and sqrt with the sign copied back; atanh from
// log1p; celu is max(0, x) + min(0, alpha * expm1(x / alpha)).
// CHECK-LABEL: func.func @inverse_hyperbolic_celu
// CHECK: linalg.generic
// CHECK: %[[AX:.+]] = math.absf %[[IN:.+]] : f32
// CHECK: math.sqrt
// CHECK: %[[LOG:.+]] = math.log
// CHECK: math.copysign %[[LOG]], %[[IN]] : f32
// CHECK: linalg.generic
// CHECK: math.log1p
// CHECK: arith.negf
// CHECK: math.log1p
// CHECK: linalg.generic
// CHECK: %[[ALPHA:.+]] = arith.constant 2.000000e+00 : f32
// CHECK: arith.divf %{{.+}}, %[[ALPHA]] : f32
// CHECK: math.expm1
// CHECK: arith.maximumf
// CHECK: arith.minimumf
func.func @inverse_hyperbolic_celu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.asinh %x : tensor<4xf32>
  %1 = kiln.atanh %0 : tensor<4xf32>
  %2 = kiln.celu %1 {alpha = 2.0 : f32} : tensor<4xf32>
  return %2 : tensor<4xf32>
}
