// RUN: kiln-opt %s --split-input-file --kiln-split-shared-fills | FileCheck %s

// Two matmuls that start from one zero fill (CSE merged theirs): the second
// gets a fill of its own, on an empty tensor of its own, right before it.
// CHECK-LABEL: func.func @two_matmuls
// CHECK: %[[E1:.+]] = tensor.empty() : tensor<8x32xf32>
// CHECK: %[[F1:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E1]] : tensor<8x32xf32>)
// CHECK: %[[E2:.+]] = tensor.empty() : tensor<8x32xf32>
// CHECK: %[[F2:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E2]] : tensor<8x32xf32>)
// CHECK: linalg.matmul ins(%arg0, %arg1 : {{.+}}) outs(%[[F2]] : tensor<8x32xf32>)
// CHECK: linalg.matmul ins(%arg0, %arg2 : {{.+}}) outs(%[[F1]] : tensor<8x32xf32>)
func.func @two_matmuls(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %c: tensor<16x32xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %x = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f : tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = linalg.matmul ins(%a, %c : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %x, %y : tensor<8x32xf32>, tensor<8x32xf32>
}

// -----

// A padded tensor (filled, its interior written through a slice and
// inserted back) stays one tensor.
// CHECK-LABEL: func.func @padded
// CHECK-COUNT-1: linalg.fill
// CHECK-NOT: linalg.fill
func.func @padded(%x: tensor<1x4x4x16xf32>) -> tensor<1x6x6x16xf32> {
  %zero = arith.constant 0.0 : f32
  %pe = tensor.empty() : tensor<1x6x6x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x6x6x16xf32>) -> tensor<1x6x6x16xf32>
  %s = tensor.extract_slice %f[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x6x6x16xf32> to tensor<1x4x4x16xf32>
  %c = linalg.copy ins(%x : tensor<1x4x4x16xf32>) outs(%s : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %p = tensor.insert_slice %c into %f[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x4x4x16xf32> into tensor<1x6x6x16xf32>
  return %p : tensor<1x6x6x16xf32>
}
