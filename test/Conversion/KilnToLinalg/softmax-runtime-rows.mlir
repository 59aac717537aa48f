// RUN: kiln-opt %s --kiln-convert-kiln-to-linalg | FileCheck %s

// A softmax over a row of run-time length n: the max and the sum reduce the
// first 16 * (n floordiv 16) elements as [2, n floordiv 16, 16] (16 lanes
// side by side), the n mod 16 left (at most 15) alone, and combine the two.
// CHECK-DAG: #[[Q:.+]] = affine_map<()[s0] -> (s0 floordiv 16)>
// CHECK-DAG: #[[FULL:.+]] = affine_map<()[s0] -> ((s0 floordiv 16) * 16)>
// CHECK-DAG: #[[REST:.+]] = affine_map<()[s0] -> (s0 mod 16, 15)>
// CHECK-LABEL: func.func @softmax_rows
// CHECK: %[[N:.+]] = tensor.dim %arg0, %c1
// CHECK: %[[QV:.+]] = affine.apply #[[Q]]()[%[[N]]]
// CHECK: %[[FV:.+]] = affine.apply #[[FULL]]()[%[[N]]]
// CHECK: %[[RV:.+]] = affine.min #[[REST]]()[%[[N]]]
// CHECK: %[[HEAD:.+]] = tensor.extract_slice %arg0[0, 0] [2, %[[FV]]] [1, 1]
// CHECK: tensor.expand_shape %[[HEAD]] {{\[}}[0], [1, 2]] output_shape [2, %[[QV]], 16]
// CHECK: tensor.extract_slice %arg0[0, %[[FV]]] [2, %[[RV]]] [1, 1]
func.func @softmax_rows(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %y = kiln.softmax %x {axis = 1 : i64} : tensor<2x?xf32>
  return %y : tensor<2x?xf32>
}
