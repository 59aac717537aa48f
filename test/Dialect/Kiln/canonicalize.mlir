// RUN: kiln-opt %s --split-input-file --canonicalize | FileCheck %s

// CHECK-LABEL: func.func @identity_folds
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK-NOT: kiln.identity
// CHECK: return %[[X]]
func.func @identity_folds(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kiln.identity %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_to_same_type
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: kiln.reshape
// CHECK: return %[[X]]
func.func @reshape_to_same_type(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = kiln.reshape %x : tensor<2x3xf32> to tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_of_reshape
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[R:.+]] = kiln.reshape %[[X]] : tensor<2x3x4xf32> to tensor<4x6xf32>
// CHECK-NOT: kiln.reshape
// CHECK: return %[[R]]
func.func @reshape_of_reshape(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %a = kiln.reshape %x : tensor<2x3x4xf32> to tensor<24xf32>
  %b = kiln.reshape %a : tensor<24xf32> to tensor<4x6xf32>
  return %b : tensor<4x6xf32>
}

// -----

// A reshape back to the original shape disappears altogether.
// CHECK-LABEL: func.func @reshape_round_trip
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: kiln.reshape
// CHECK: return %[[X]]
func.func @reshape_round_trip(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = kiln.reshape %x : tensor<2x3xf32> to tensor<6xf32>
  %b = kiln.reshape %a : tensor<6xf32> to tensor<2x3xf32>
  return %b : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_of_constant
// CHECK: %[[C:.+]] = kiln.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NOT: kiln.reshape
// CHECK: return %[[C]]
func.func @reshape_of_constant() -> tensor<2x2xf32> {
  %c = kiln.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %y = kiln.reshape %c : tensor<4xf32> to tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// CHECK-LABEL: func.func @identity_transpose
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: kiln.transpose
// CHECK: return %[[X]]
func.func @identity_transpose(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = kiln.transpose %x {perm = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Two transposes compose into one: result dim i is x's dim inner[outer[i]].
// CHECK-LABEL: func.func @transpose_of_transpose
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[T:.+]] = kiln.transpose %[[X]] {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NOT: kiln.transpose
// CHECK: return %[[T]]
func.func @transpose_of_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %a = kiln.transpose %x {perm = array<i64: 1, 0, 2>} : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %b = kiln.transpose %a {perm = array<i64: 2, 1, 0>} : tensor<3x2x4xf32> -> tensor<4x2x3xf32>
  return %b : tensor<4x2x3xf32>
}

// -----

// NCHW -> NHWC -> NCHW composes to the identity, which then folds away.
// CHECK-LABEL: func.func @transposes_cancel
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x4x5xf32>)
// CHECK-NOT: kiln.transpose
// CHECK: return %[[X]]
func.func @transposes_cancel(%x: tensor<1x3x4x5xf32>) -> tensor<1x3x4x5xf32> {
  %a = kiln.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<1x3x4x5xf32> -> tensor<1x4x5x3xf32>
  %b = kiln.transpose %a {perm = array<i64: 0, 3, 1, 2>} : tensor<1x4x5x3xf32> -> tensor<1x3x4x5xf32>
  return %b : tensor<1x3x4x5xf32>
}

// -----

// CHECK-LABEL: func.func @clip_zero_inf_is_relu
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[R:.+]] = kiln.relu %[[X]] : tensor<4xf32>
// CHECK-NOT: kiln.clip
// CHECK: return %[[R]]
func.func @clip_zero_inf_is_relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kiln.clip %x {min = 0.0 : f32, max = 0x7F800000 : f32} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// ReLU6 is not a ReLU.
// CHECK-LABEL: func.func @clip_relu6_stays
// CHECK: kiln.clip %{{.+}} {max = 6.000000e+00 : f32, min = 0.000000e+00 : f32}
// CHECK-NOT: kiln.relu
func.func @clip_relu6_stays(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kiln.clip %x {min = 0.0 : f32, max = 6.0 : f32} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @global_avg_pool_is_reduce_mean
// CHECK-SAME: (%[[X:.+]]: tensor<1x64x7x7xf32>)
// CHECK: %[[R:.+]] = kiln.reduce_mean %[[X]] {axes = array<i64: 2, 3>} : tensor<1x64x7x7xf32> -> tensor<1x64x1x1xf32>
// CHECK-NOT: kiln.global_avg_pool
// CHECK: return %[[R]]
func.func @global_avg_pool_is_reduce_mean(%x: tensor<1x64x7x7xf32>) -> tensor<1x64x1x1xf32> {
  %y = kiln.global_avg_pool %x : tensor<1x64x7x7xf32> -> tensor<1x64x1x1xf32>
  return %y : tensor<1x64x1x1xf32>
}

// -----

// A 1-D global pool (N, C, W) reduces dimension 2 only.
// CHECK-LABEL: func.func @global_avg_pool_1d
// CHECK: kiln.reduce_mean %{{.+}} {axes = array<i64: 2>} : tensor<1x8x5xf32> -> tensor<1x8x1xf32>
func.func @global_avg_pool_1d(%x: tensor<1x8x5xf32>) -> tensor<1x8x1xf32> {
  %y = kiln.global_avg_pool %x : tensor<1x8x5xf32> -> tensor<1x8x1xf32>
  return %y : tensor<1x8x1xf32>
}

// -----

// CHECK-LABEL: func.func @pad_with_zero_pads
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x4x4xf32>)
// CHECK-NOT: kiln.pad
// CHECK: return %[[X]]
func.func @pad_with_zero_pads(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %y = kiln.pad %x {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 0>, value = 1.0 : f32} : tensor<1x3x4x4xf32> -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @pad_with_nonzero_pads
// CHECK: kiln.pad
func.func @pad_with_nonzero_pads(%x: tensor<4xf32>) -> tensor<5xf32> {
  %y = kiln.pad %x {pads = array<i64: 0, 1>} : tensor<4xf32> -> tensor<5xf32>
  return %y : tensor<5xf32>
}

// -----

// CHECK-LABEL: func.func @concat_of_one
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: kiln.concat
// CHECK: return %[[X]]
func.func @concat_of_one(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = kiln.concat %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @fold_add_constants
// CHECK: %[[C:.+]] = kiln.constant dense<[1.100000e+01, 2.200000e+01, 3.300000e+01]> : tensor<3xf32>
// CHECK-NOT: kiln.add
// CHECK: return %[[C]]
func.func @fold_add_constants() -> tensor<3xf32> {
  %a = kiln.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %b = kiln.constant dense<[10.0, 20.0, 30.0]> : tensor<3xf32>
  %y = kiln.add %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// A splat operand folds against a dense one of the result's shape.
// CHECK-LABEL: func.func @fold_mul_splat
// CHECK: %[[C:.+]] = kiln.constant dense<[2.000000e+00, 4.000000e+00, 6.000000e+00]> : tensor<3xf32>
// CHECK-NOT: kiln.mul
// CHECK: return %[[C]]
func.func @fold_mul_splat() -> tensor<3xf32> {
  %a = kiln.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %b = kiln.constant dense<2.0> : tensor<3xf32>
  %y = kiln.mul %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// Two splats fold into a splat of the broadcast result type.
// CHECK-LABEL: func.func @fold_splats_broadcast
// CHECK: %[[C:.+]] = kiln.constant dense<1.500000e+00> : tensor<2x3xf32>
// CHECK-NOT: kiln.sub
// CHECK: return %[[C]]
func.func @fold_splats_broadcast() -> tensor<2x3xf32> {
  %a = kiln.constant dense<2.0> : tensor<2x3xf32>
  %b = kiln.constant dense<0.5> : tensor<3xf32>
  %y = kiln.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @fold_div_max_min
// CHECK: %[[C:.+]] = kiln.constant dense<[2.000000e+00, 5.000000e-01]> : tensor<2xf32>
// CHECK-NOT: kiln.div
// CHECK-NOT: kiln.max
// CHECK-NOT: kiln.min
// CHECK: return %[[C]]
func.func @fold_div_max_min() -> tensor<2xf32> {
  %a = kiln.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %b = kiln.constant dense<[2.0, 2.0]> : tensor<2xf32>
  %d = kiln.div %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %lo = kiln.constant dense<0.5> : tensor<2xf32>
  %hi = kiln.constant dense<[3.0, 3.0]> : tensor<2xf32>
  %m = kiln.max %d, %lo : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %n = kiln.min %m, %hi : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %n : tensor<2xf32>
}

// -----

// Dense operands of different shapes fold with ONNX broadcasting: the row
// [10, 20] is added to each row.
// CHECK-LABEL: func.func @fold_dense_broadcast
// CHECK: %[[C:.+]] = kiln.constant dense<{{\[}}[1.100000e+01, 2.200000e+01], [1.300000e+01, 2.400000e+01]]> : tensor<2x2xf32>
// CHECK-NOT: kiln.add
// CHECK: return %[[C]]
func.func @fold_dense_broadcast() -> tensor<2x2xf32> {
  %a = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = kiln.constant dense<[10.0, 20.0]> : tensor<2xf32>
  %y = kiln.add %a, %b : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// x + (-0.0) is x for every x, including -0.0.
// CHECK-LABEL: func.func @add_negative_zero
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: kiln.add
// CHECK: return %[[X]]
func.func @add_negative_zero(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %z = kiln.constant dense<-0.0> : tensor<3xf32>
  %y = kiln.add %x, %z : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// x + 0.0 is not x when x is -0.0 (IEEE gives +0.0), so it stays.
// CHECK-LABEL: func.func @add_positive_zero
// CHECK: kiln.add
func.func @add_positive_zero(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %z = kiln.constant dense<0.0> : tensor<3xf32>
  %y = kiln.add %x, %z : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @mul_one_div_one_sub_zero_pow_one
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK-NOT: kiln.
// CHECK: return %[[X]]
func.func @mul_one_div_one_sub_zero_pow_one(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = kiln.constant dense<1.0> : tensor<4xf32>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %a = kiln.mul %x, %one : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = kiln.div %a, %one : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = kiln.sub %b, %zero : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %d = kiln.pow %c, %one : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

// x + 0 where the zero broadcasts x to a larger shape is not x.
// CHECK-LABEL: func.func @add_zero_that_broadcasts
// CHECK: kiln.add
func.func @add_zero_that_broadcasts(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %z = kiln.constant dense<0.0> : tensor<2x3xf32>
  %y = kiln.add %x, %z : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Unused pure ops are erased.
// CHECK-LABEL: func.func @dead_ops
// CHECK-NOT: kiln.
// CHECK: return
func.func @dead_ops(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %a = kiln.relu %x : tensor<1x4x8x8xf32>
  %b = kiln.reduce_sum %a {axes = array<i64: 1>} : tensor<1x4x8x8xf32> -> tensor<1x1x8x8xf32>
  return %x : tensor<1x4x8x8xf32>
}

//===----------------------------------------------------------------------===//
// Data movement and casts of small constants (shape computations)
//===----------------------------------------------------------------------===//

// -----

// Gather wraps negative indices: -1 is the last dimension, 0 the first.
// CHECK-LABEL: func.func @fold_gather
// CHECK: %[[C:.+]] = kiln.constant dense<[768, 128]> : tensor<2xi64>
// CHECK-NOT: kiln.gather
// CHECK: return %[[C]]
func.func @fold_gather() -> tensor<2xi64> {
  %shape = kiln.constant dense<[128, 1, 768]> : tensor<3xi64>
  %i = kiln.constant dense<[-1, 0]> : tensor<2xi64>
  %y = kiln.gather %shape, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %y : tensor<2xi64>
}

// -----

// Along an inner axis, with a scalar index: column 1 of each row. Indices
// past the end clamp, as in the lowering.
// CHECK-LABEL: func.func @fold_gather_axis1
// CHECK-DAG: %[[COL:.+]] = kiln.constant dense<[2.000000e+00, 5.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[LAST:.+]] = kiln.constant dense<[3.000000e+00, 6.000000e+00]> : tensor<2xf32>
// CHECK: return %[[COL]], %[[LAST]]
func.func @fold_gather_axis1() -> (tensor<2xf32>, tensor<2xf32>) {
  %x = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %i = kiln.constant dense<1> : tensor<i32>
  %y = kiln.gather %x, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<i32>) -> tensor<2xf32>
  %big = kiln.constant dense<7> : tensor<i64>
  %z = kiln.gather %x, %big {axis = 1 : i64} : (tensor<2x3xf32>, tensor<i64>) -> tensor<2xf32>
  return %y, %z : tensor<2xf32>, tensor<2xf32>
}

// -----

// A gather from a run-time tensor stays.
// CHECK-LABEL: func.func @no_fold_gather
// CHECK: kiln.gather
func.func @no_fold_gather(%x: tensor<4x3xf32>) -> tensor<3xf32> {
  %i = kiln.constant dense<2> : tensor<i64>
  %y = kiln.gather %x, %i {axis = 0 : i64} : (tensor<4x3xf32>, tensor<i64>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// Strided slice of a constant: rows 0..1, columns 1 and 3.
// CHECK-LABEL: func.func @fold_slice
// CHECK: %[[C:.+]] = kiln.constant dense<{{\[}}[1, 3], [5, 7]]> : tensor<2x2xi32>
// CHECK-NOT: kiln.slice
// CHECK: return %[[C]]
func.func @fold_slice() -> tensor<2x2xi32> {
  %x = kiln.constant dense<[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]> : tensor<3x4xi32>
  %y = kiln.slice %x {offsets = array<i64: 0, 1>, sizes = array<i64: 2, 2>, strides = array<i64: 1, 2>} : tensor<3x4xi32> -> tensor<2x2xi32>
  return %y : tensor<2x2xi32>
}

// -----

// A slice of everything is its input; any real slice of a run-time tensor
// stays.
// CHECK-LABEL: func.func @slice_whole
// CHECK-SAME: (%[[X:.+]]: tensor<3x4xf32>)
// CHECK: %[[S:.+]] = kiln.slice %[[X]] {offsets = array<i64: 1, 0>
// CHECK-NOT: kiln.slice
// CHECK: return %[[X]], %[[S]]
func.func @slice_whole(%x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<2x4xf32>) {
  %y = kiln.slice %x {offsets = array<i64: 0, 0>, sizes = array<i64: 3, 4>, strides = array<i64: 1, 1>} : tensor<3x4xf32> -> tensor<3x4xf32>
  %z = kiln.slice %x {offsets = array<i64: 1, 0>, sizes = array<i64: 2, 4>, strides = array<i64: 1, 1>} : tensor<3x4xf32> -> tensor<2x4xf32>
  return %y, %z : tensor<3x4xf32>, tensor<2x4xf32>
}

// -----

// Concat of constants, along the last and along a leading axis.
// CHECK-LABEL: func.func @fold_concat
// CHECK-DAG: %[[A:.+]] = kiln.constant dense<[1, 128, 4, 64]> : tensor<4xi64>
// CHECK-DAG: %[[B:.+]] = kiln.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 5.000000e+00], [3.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-NOT: kiln.concat
// CHECK: return %[[A]], %[[B]]
func.func @fold_concat() -> (tensor<4xi64>, tensor<2x3xf32>) {
  %a = kiln.constant dense<[1, 128]> : tensor<2xi64>
  %b = kiln.constant dense<4> : tensor<1xi64>
  %c = kiln.constant dense<64> : tensor<1xi64>
  %s = kiln.concat %a, %b, %c {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %x = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %y = kiln.constant dense<[[5.0], [6.0]]> : tensor<2x1xf32>
  %z = kiln.concat %x, %y {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  return %s, %z : tensor<4xi64>, tensor<2x3xf32>
}

// -----

// Casts: integers to float, floats to integer toward zero, anything to bool
// as "not zero", bool to integer as 0 or 1.
// CHECK-LABEL: func.func @fold_cast
// CHECK-DAG: %[[F:.+]] = kiln.constant dense<[-3.000000e+00, 0.000000e+00, 7.000000e+00]> : tensor<3xf32>
// CHECK-DAG: %[[I:.+]] = kiln.constant dense<[-2, 0, 2]> : tensor<3xi32>
// CHECK-DAG: %[[B:.+]] = kiln.constant dense<[true, false, true]> : tensor<3xi1>
// CHECK-DAG: %[[E:.+]] = kiln.constant dense<[1, 0, 1]> : tensor<3xi64>
// CHECK-NOT: kiln.cast
// CHECK: return %[[F]], %[[I]], %[[B]], %[[E]]
func.func @fold_cast() -> (tensor<3xf32>, tensor<3xi32>, tensor<3xi1>, tensor<3xi64>) {
  %i = kiln.constant dense<[-3, 0, 7]> : tensor<3xi64>
  %f = kiln.cast %i to f32 : tensor<3xi64> -> tensor<3xf32>
  %x = kiln.constant dense<[-2.7, 0.5, 2.9]> : tensor<3xf32>
  %t = kiln.cast %x to i32 : tensor<3xf32> -> tensor<3xi32>
  %b = kiln.cast %i to i1 : tensor<3xi64> -> tensor<3xi1>
  %e = kiln.cast %b to i64 : tensor<3xi1> -> tensor<3xi64>
  return %f, %t, %b, %e : tensor<3xf32>, tensor<3xi32>, tensor<3xi1>, tensor<3xi64>
}

// -----

// A cast to the element type it has is no cast; a NaN to integer is
// undefined and is left to run time.
// CHECK-LABEL: func.func @cast_identity_and_nan
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[N:.+]] = kiln.cast %{{.+}} to i32
// CHECK: return %[[X]], %[[N]]
func.func @cast_identity_and_nan(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2xi32>) {
  %y = kiln.cast %x to f32 : tensor<4xf32> -> tensor<4xf32>
  %nan = kiln.constant dense<0x7FC00000> : tensor<2xf32>
  %n = kiln.cast %nan to i32 : tensor<2xf32> -> tensor<2xi32>
  return %y, %n : tensor<4xf32>, tensor<2xi32>
}

//===----------------------------------------------------------------------===//
// Integer arithmetic
//===----------------------------------------------------------------------===//

// -----

// The transformer's head-size arithmetic: (768 + 2) / 3 * 2, with a
// broadcast scalar. Integer division truncates: (-9 + 2) / 3 is -2.
// CHECK-LABEL: func.func @fold_integer_arithmetic
// CHECK: %[[C:.+]] = kiln.constant dense<[512, -4]> : tensor<2xi64>
// CHECK-NOT: kiln.add
// CHECK-NOT: kiln.div
// CHECK-NOT: kiln.mul
// CHECK: return %[[C]]
func.func @fold_integer_arithmetic() -> tensor<2xi64> {
  %d = kiln.constant dense<[768, -9]> : tensor<2xi64>
  %two = kiln.constant dense<2> : tensor<i64>
  %three = kiln.constant dense<3> : tensor<1xi64>
  %0 = kiln.add %d, %two : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  %1 = kiln.div %0, %three : (tensor<2xi64>, tensor<1xi64>) -> tensor<2xi64>
  %2 = kiln.mul %1, %two : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  return %2 : tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @fold_integer_sub_max_min
// CHECK: %[[C:.+]] = kiln.constant dense<[0, 3]> : tensor<2xi32>
// CHECK: return %[[C]]
func.func @fold_integer_sub_max_min() -> tensor<2xi32> {
  %a = kiln.constant dense<[1, 9]> : tensor<2xi32>
  %b = kiln.constant dense<[4, 2]> : tensor<2xi32>
  %s = kiln.sub %a, %b : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %zero = kiln.constant dense<0> : tensor<2xi32>
  %three = kiln.constant dense<3> : tensor<2xi32>
  %m = kiln.max %s, %zero : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %n = kiln.min %m, %three : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %n : tensor<2xi32>
}

// -----

// Integer division by zero traps at run time; it is not folded.
// CHECK-LABEL: func.func @no_fold_integer_div_by_zero
// CHECK: kiln.div
func.func @no_fold_integer_div_by_zero() -> tensor<2xi64> {
  %a = kiln.constant dense<[4, 6]> : tensor<2xi64>
  %b = kiln.constant dense<[2, 0]> : tensor<2xi64>
  %y = kiln.div %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %y : tensor<2xi64>
}

// -----

// x + 0 and x * 1 on integers are x.
// CHECK-LABEL: func.func @integer_identities
// CHECK-SAME: (%[[X:.+]]: tensor<3xi64>)
// CHECK-NOT: kiln.
// CHECK: return %[[X]]
func.func @integer_identities(%x: tensor<3xi64>) -> tensor<3xi64> {
  %zero = kiln.constant dense<0> : tensor<i64>
  %one = kiln.constant dense<1> : tensor<3xi64>
  %a = kiln.add %x, %zero : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %b = kiln.mul %a, %one : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %b : tensor<3xi64>
}

// -----

// Logic on constant bools folds, broadcasting the smaller operand.
// CHECK-LABEL: func.func @fold_logic
// CHECK-DAG: %[[AND:.+]] = kiln.constant dense<[true, false]> : tensor<2xi1>
// CHECK-DAG: %[[OR:.+]] = kiln.constant dense<true> : tensor<2xi1>
// CHECK-DAG: %[[XOR:.+]] = kiln.constant dense<[false, true]> : tensor<2xi1>
// CHECK: return %[[AND]], %[[OR]], %[[XOR]]
func.func @fold_logic() -> (tensor<2xi1>, tensor<2xi1>, tensor<2xi1>) {
  %a = kiln.constant dense<[true, false]> : tensor<2xi1>
  %t = kiln.constant dense<true> : tensor<1xi1>
  %0 = kiln.and %a, %t : (tensor<2xi1>, tensor<1xi1>) -> tensor<2xi1>
  %1 = kiln.or %a, %t : (tensor<2xi1>, tensor<1xi1>) -> tensor<2xi1>
  %2 = kiln.xor %a, %t : (tensor<2xi1>, tensor<1xi1>) -> tensor<2xi1>
  return %0, %1, %2 : tensor<2xi1>, tensor<2xi1>, tensor<2xi1>
}

// -----

// PRelu of constants folds: only negative inputs are scaled.
// CHECK-LABEL: func.func @fold_prelu
// CHECK: %[[C:.+]] = kiln.constant dense<[-1.000000e+00, 3.000000e+00]> : tensor<2xf32>
// CHECK: return %[[C]]
func.func @fold_prelu() -> tensor<2xf32> {
  %x = kiln.constant dense<[-2.0, 3.0]> : tensor<2xf32>
  %s = kiln.constant dense<0.5> : tensor<1xf32>
  %y = kiln.prelu %x, %s : (tensor<2xf32>, tensor<1xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}
