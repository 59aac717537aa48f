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

// The folder combines dense operands element by element; operands of
// different shapes (a broadcast) must not be folded that way.
// CHECK-LABEL: func.func @no_fold_dense_broadcast
// CHECK: kiln.add
func.func @no_fold_dense_broadcast() -> tensor<2x2xf32> {
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
