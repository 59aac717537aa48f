// RUN: kiln-opt %s --canonicalize --split-input-file | FileCheck %s

// An op whose results hold no elements computes nothing: it becomes an empty
// constant, whatever its operands (here a graph input).
// CHECK-LABEL: func.func @elementwise_of_empty
// CHECK-NEXT: %[[E:.+]] = kiln.constant dense<0.000000e+00> : tensor<2x0x4xf32>
// CHECK-NEXT: return %[[E]]
func.func @elementwise_of_empty(%x: tensor<2x0x4xf32>) -> tensor<2x0x4xf32> {
  %0 = kiln.abs %x : tensor<2x0x4xf32>
  %1 = kiln.exp %0 : tensor<2x0x4xf32>
  return %1 : tensor<2x0x4xf32>
}

// -----

// A reduction over no values is its identity at every position, as ONNX
// defines it: sum 0, product 1, max -inf, min +inf, mean NaN.
// CHECK-LABEL: func.func @reductions_of_empty
// CHECK-DAG: kiln.constant dense<0.000000e+00> : tensor<2x1x4xf32>
// CHECK-DAG: kiln.constant dense<1.000000e+00> : tensor<2x4xf32>
// CHECK-DAG: kiln.constant dense<0xFF800000> : tensor<2x4xf32>
// CHECK-DAG: kiln.constant dense<0x7F800000> : tensor<2x4xf32>
// CHECK-DAG: kiln.constant dense<0x7FC00000> : tensor<2x4xf32>
// CHECK-NOT: kiln.reduce
func.func @reductions_of_empty(%x: tensor<2x0x4xf32>) -> (tensor<2x1x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %s = kiln.reduce_sum %x {axes = array<i64: 1>} : tensor<2x0x4xf32> -> tensor<2x1x4xf32>
  %p = kiln.reduce_prod %x {axes = array<i64: 1>, keepdims = false} : tensor<2x0x4xf32> -> tensor<2x4xf32>
  %mx = kiln.reduce_max %x {axes = array<i64: 1>, keepdims = false} : tensor<2x0x4xf32> -> tensor<2x4xf32>
  %mn = kiln.reduce_min %x {axes = array<i64: 1>, keepdims = false} : tensor<2x0x4xf32> -> tensor<2x4xf32>
  %me = kiln.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : tensor<2x0x4xf32> -> tensor<2x4xf32>
  return %s, %p, %mx, %mn, %me : tensor<2x1x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Non-empty ops stay, and so does a guard (it has an effect).
// CHECK-LABEL: func.func @not_empty
// CHECK: kiln.abs
// CHECK: kiln.guard
func.func @not_empty(%x: tensor<3xf32>, %c: tensor<i1>) -> tensor<3xf32> {
  %0 = kiln.abs %x : tensor<3xf32>
  kiln.guard %c {message = "m"} : tensor<i1>
  return %0 : tensor<3xf32>
}

// -----

// Empty parts of a concatenation drop out (an empty Split piece concatenated
// back, as ONNX's RotaryEmbedding function does); one part left is the result.
// CHECK-LABEL: func.func @concat_empty_parts
// CHECK-SAME: (%[[A:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<2x0xf32>, %[[C:.+]]: tensor<2x2xf32>)
// CHECK: %[[R:.+]] = kiln.concat %[[A]], %[[C]] {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<2x5xf32>
// CHECK: return %[[R]], %[[A]]
func.func @concat_empty_parts(%a: tensor<2x3xf32>, %b: tensor<2x0xf32>, %c: tensor<2x2xf32>) -> (tensor<2x5xf32>, tensor<2x3xf32>) {
  %0 = kiln.concat %a, %b, %c {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x0xf32>, tensor<2x2xf32>) -> tensor<2x5xf32>
  %1 = kiln.concat %b, %a {axis = 1 : i64} : (tensor<2x0xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x5xf32>, tensor<2x3xf32>
}
