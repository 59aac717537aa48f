// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-cpu-split-empty-tensors))" | FileCheck %s

// One tensor.empty shared by two fills (as CSE leaves it) becomes one empty
// per use, each right before the op that fills it.
// CHECK-LABEL: func.func @shared
// CHECK: %[[E1:.+]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: linalg.fill {{.+}} outs(%[[E1]]
// CHECK: %[[E2:.+]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: linalg.fill {{.+}} outs(%[[E2]]
func.func @shared(%a: f32, %b: f32) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %x = linalg.fill ins(%a : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %y = linalg.fill ins(%b : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %x, %y : tensor<8xf32>, tensor<8xf32>
}
