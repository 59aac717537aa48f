// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-distinct-results))' | FileCheck %s

// Two outputs that CSE merged into one value: the repeat returns a copy, so
// that each result gets its own out-parameter buffer.
// CHECK-LABEL: func.func @twice
// CHECK: %[[R:.+]] = linalg.generic
// CHECK: %[[C1:.+]] = bufferization.alloc_tensor() copy(%[[R]])
// CHECK: %[[C2:.+]] = bufferization.alloc_tensor() copy(%[[R]])
// CHECK: return %[[R]], %[[C1]], %arg0, %[[C2]]
#id = affine_map<(d0) -> (d0)>
func.func @twice(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  return %r, %r, %x, %r : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
