// RUN: kiln-opt %s --split-input-file --kiln-hoist-requantization --canonicalize | FileCheck %s

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

// Static int8's quantization of a max pooling's result, seen as rows
// [pixels, C]: it moves to the pooling's input (at its own shape), the
// pooling takes the bytes with unsigned max from a 0 fill, and the rows
// are the pooled bytes reshaped. The body is copied as it was.
// CHECK-LABEL: func.func @after_pool
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x4x16xf32>)
// CHECK: %[[Q:.+]] = linalg.generic {{.+}} ins(%[[X]] : tensor<1x4x4x16xf32>) outs(%{{.+}} : tensor<1x4x4x16xi8>)
// CHECK:   arith.mulf
// CHECK:   math.roundeven %{{.+}} {kiln.requant}
// CHECK: %[[ZERO:.+]] = linalg.fill ins(%{{.+}} : i8) outs(%{{.+}} : tensor<1x2x2x16xi8>)
// CHECK: %[[P:.+]] = linalg.pooling_nhwc_max_unsigned {{.+}} ins(%[[Q]], %{{.+}} : tensor<1x4x4x16xi8>, tensor<2x2xf32>) outs(%[[ZERO]] : tensor<1x2x2x16xi8>)
// CHECK: %[[R:.+]] = tensor.collapse_shape %[[P]] {{\[\[}}0, 1, 2], [3]] : tensor<1x2x2x16xi8> into tensor<4x16xi8>
// CHECK-NOT: linalg.pooling_nhwc_max {
// CHECK: return %[[R]]
func.func @after_pool(%x: tensor<1x4x4x16xf32>) -> tensor<4x16xi8> {
  %ninf = arith.constant 0xFF800000 : f32
  %w = tensor.empty() : tensor<2x2xf32>
  %e = tensor.empty() : tensor<1x2x2x16xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x2x2x16xf32>) -> tensor<1x2x2x16xf32>
  %p = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x4x4x16xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2x2x16xf32>) -> tensor<1x2x2x16xf32>
  %rows = tensor.collapse_shape %p [[0, 1, 2], [3]] : tensor<1x2x2x16xf32> into tensor<4x16xf32>
  %eq = tensor.empty() : tensor<4x16xi8>
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%rows : tensor<4x16xf32>) outs(%eq : tensor<4x16xi8>) {
  ^bb0(%in: f32, %out: i8):
    %inv = arith.constant 5.0 : f32
    %zp = arith.constant 12.0 : f32
    %lo = arith.constant 0.0 : f32
    %hi = arith.constant 255.0 : f32
    %0 = arith.mulf %in, %inv : f32
    %1 = math.roundeven %0 {kiln.requant} : f32
    %2 = arith.addf %1, %zp : f32
    %3 = arith.maximumf %2, %lo : f32
    %4 = arith.minimumf %3, %hi : f32
    %5 = arith.fptosi %4 : f32 to i32
    %6 = arith.trunci %5 : i32 to i8
    linalg.yield %6 : i8
  } -> tensor<4x16xi8>
  return %q : tensor<4x16xi8>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// A concatenation (the lowering's chain of copies into slices) whose
// padded result (-inf) is max pooled: the quantization moves above the
// pooling, the padding becomes a 0 fill of bytes, and then above the
// concatenation: each piece is quantized and the bytes concatenated.
// CHECK-LABEL: func.func @concat_pool
// CHECK-SAME: (%[[A:.+]]: tensor<1x4x4x8xf32>, %[[B:.+]]: tensor<1x4x4x8xf32>)
// CHECK: %[[PAD:.+]] = linalg.fill ins(%{{.+}} : i8) outs(%{{.+}} : tensor<1x6x6x16xi8>)
// CHECK-DAG: %[[QA:.+]] = linalg.generic {{.+}} ins(%[[A]] : tensor<1x4x4x8xf32>) outs(%{{.+}} : tensor<1x4x4x8xi8>)
// CHECK-DAG: %[[QB:.+]] = linalg.generic {{.+}} ins(%[[B]] : tensor<1x4x4x8xf32>) outs(%{{.+}} : tensor<1x4x4x8xi8>)
// CHECK: linalg.copy ins(%[[QA]] : tensor<1x4x4x8xi8>)
// CHECK: linalg.copy ins(%[[QB]] : tensor<1x4x4x8xi8>)
// CHECK: tensor.insert_slice %{{.+}} into %[[PAD]][0, 1, 1, 0] [1, 4, 4, 16]
// CHECK: linalg.pooling_nhwc_max_unsigned {{.+}} ins(%{{.+}}, %{{.+}} : tensor<1x6x6x16xi8>, tensor<3x3xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @concat_pool(%a: tensor<1x4x4x8xf32>, %b: tensor<1x4x4x8xf32>) -> tensor<1x2x2x16xi8> {
  %ninf = arith.constant 0xFF800000 : f32
  %c = tensor.empty() : tensor<1x4x4x16xf32>
  %s0 = tensor.extract_slice %c[0, 0, 0, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x4x4x16xf32> to tensor<1x4x4x8xf32>
  %k0 = linalg.copy ins(%a : tensor<1x4x4x8xf32>) outs(%s0 : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %c0 = tensor.insert_slice %k0 into %c[0, 0, 0, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x4x4x8xf32> into tensor<1x4x4x16xf32>
  %s1 = tensor.extract_slice %c0[0, 0, 0, 8] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x4x4x16xf32> to tensor<1x4x4x8xf32>
  %k1 = linalg.copy ins(%b : tensor<1x4x4x8xf32>) outs(%s1 : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %cat = tensor.insert_slice %k1 into %c0[0, 0, 0, 8] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x4x4x8xf32> into tensor<1x4x4x16xf32>
  %pe = tensor.empty() : tensor<1x6x6x16xf32>
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : tensor<1x6x6x16xf32>) -> tensor<1x6x6x16xf32>
  %ps = tensor.extract_slice %pf[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x6x6x16xf32> to tensor<1x4x4x16xf32>
  %pc = linalg.copy ins(%cat : tensor<1x4x4x16xf32>) outs(%ps : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %padded = tensor.insert_slice %pc into %pf[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x4x4x16xf32> into tensor<1x6x6x16xf32>
  %w = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<1x2x2x16xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x2x2x16xf32>) -> tensor<1x2x2x16xf32>
  %p = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%padded, %w : tensor<1x6x6x16xf32>, tensor<3x3xf32>) outs(%init : tensor<1x2x2x16xf32>) -> tensor<1x2x2x16xf32>
  %eq = tensor.empty() : tensor<1x2x2x16xi8>
  %q = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p : tensor<1x2x2x16xf32>) outs(%eq : tensor<1x2x2x16xi8>) {
  ^bb0(%in: f32, %out: i8):
    %s = arith.constant 0.5 : f32
    %zp = arith.constant 3.0 : f32
    %lo = arith.constant 0.0 : f32
    %hi = arith.constant 255.0 : f32
    %0 = math.fma %in, %s, %zp : f32
    %1 = arith.maxnumf %0, %lo : f32
    %2 = arith.minnumf %1, %hi : f32
    %3 = math.roundeven %2 {kiln.requant} : f32
    %4 = arith.fptosi %3 : f32 to i32
    %5 = arith.trunci %4 : i32 to i8
    linalg.yield %5 : i8
  } -> tensor<1x2x2x16xi8>
  return %q : tensor<1x2x2x16xi8>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// Left alone: a quantization that decreases with its input (a negative
// scale) does not commute with max pooling; one whose values may leave
// [0, 255] (no clamp below) would compare wrongly as unsigned bytes; an
// unmarked one (QDQ's exact rounding) is not static int8's.
// CHECK-LABEL: func.func @not_moved
// CHECK-COUNT-3: linalg.pooling_nhwc_max {
// CHECK-NOT: unsigned
func.func @not_moved(%x: tensor<1x4x4x16xf32>) -> (tensor<1x2x2x16xi8>, tensor<1x2x2x16xi8>, tensor<1x2x2x16xi8>) {
  %ninf = arith.constant 0xFF800000 : f32
  %w = tensor.empty() : tensor<2x2xf32>
  %e = tensor.empty() : tensor<1x2x2x16xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x2x2x16xf32>) -> tensor<1x2x2x16xf32>
  %p0 = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x4x4x16xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2x2x16xf32>) -> tensor<1x2x2x16xf32>
  %p1 = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x4x4x16xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2x2x16xf32>) -> tensor<1x2x2x16xf32>
  %p2 = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x4x4x16xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2x2x16xf32>) -> tensor<1x2x2x16xf32>
  %eq = tensor.empty() : tensor<1x2x2x16xi8>
  %q0 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p0 : tensor<1x2x2x16xf32>) outs(%eq : tensor<1x2x2x16xi8>) {
  ^bb0(%in: f32, %out: i8):
    %s = arith.constant -0.5 : f32
    %lo = arith.constant 0.0 : f32
    %hi = arith.constant 255.0 : f32
    %0 = arith.mulf %in, %s : f32
    %1 = arith.maxnumf %0, %lo : f32
    %2 = arith.minnumf %1, %hi : f32
    %3 = math.roundeven %2 {kiln.requant} : f32
    %4 = arith.fptosi %3 : f32 to i32
    %5 = arith.trunci %4 : i32 to i8
    linalg.yield %5 : i8
  } -> tensor<1x2x2x16xi8>
  %q1 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p1 : tensor<1x2x2x16xf32>) outs(%eq : tensor<1x2x2x16xi8>) {
  ^bb0(%in: f32, %out: i8):
    %s = arith.constant 0.5 : f32
    %hi = arith.constant 255.0 : f32
    %0 = arith.mulf %in, %s : f32
    %2 = arith.minnumf %0, %hi : f32
    %3 = math.roundeven %2 {kiln.requant} : f32
    %4 = arith.fptosi %3 : f32 to i32
    %5 = arith.trunci %4 : i32 to i8
    linalg.yield %5 : i8
  } -> tensor<1x2x2x16xi8>
  %q2 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p2 : tensor<1x2x2x16xf32>) outs(%eq : tensor<1x2x2x16xi8>) {
  ^bb0(%in: f32, %out: i8):
    %s = arith.constant 0.5 : f32
    %lo = arith.constant 0.0 : f32
    %hi = arith.constant 255.0 : f32
    %0 = arith.mulf %in, %s : f32
    %1 = arith.maxnumf %0, %lo : f32
    %2 = arith.minnumf %1, %hi : f32
    %3 = math.roundeven %2 : f32
    %4 = arith.fptosi %3 : f32 to i32
    %5 = arith.trunci %4 : i32 to i8
    linalg.yield %5 : i8
  } -> tensor<1x2x2x16xi8>
  return %q0, %q1, %q2 : tensor<1x2x2x16xi8>, tensor<1x2x2x16xi8>, tensor<1x2x2x16xi8>
}
