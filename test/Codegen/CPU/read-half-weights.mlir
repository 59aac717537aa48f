// RUN: kiln-opt %s --split-input-file --kiln-cpu-read-half-weights | FileCheck %s

// --precision=fp16 widens fp16 weights with an elementwise extf in front of
// each product. The matmul reads the fp16 constant itself (linalg's named
// ops convert mixed operands in their bodies), and the widening goes.
// CHECK-LABEL: func.func @matmul
// CHECK: %[[W:.+]] = arith.constant dense<1.000000e+00> : tensor<64x64xf16>
// CHECK-NOT: linalg.generic
// CHECK: linalg.matmul ins(%arg0, %[[W]] : tensor<4x64xf32>, tensor<64x64xf16>)
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @matmul(%a: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %w16 = arith.constant dense<1.0> : tensor<64x64xf16>
  %e = tensor.empty() : tensor<64x64xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w16 : tensor<64x64xf16>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %x = arith.extf %in : f16 to f32
    linalg.yield %x : f32
  } -> tensor<64x64xf32>
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<4x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<4x64xf32>) -> tensor<4x64xf32>
  %r = linalg.matmul ins(%a, %w : tensor<4x64xf32>, tensor<64x64xf32>) outs(%f : tensor<4x64xf32>) -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}

// -----

// Weights that are not a widened fp16 constant stay as they are.
// CHECK-LABEL: func.func @f32_weights
// CHECK: linalg.matmul ins(%arg0, %{{.+}} : tensor<4x64xf32>, tensor<64x64xf32>)
func.func @f32_weights(%a: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %w = arith.constant dense<1.0> : tensor<64x64xf32>
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<4x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<4x64xf32>) -> tensor<4x64xf32>
  %r = linalg.matmul ins(%a, %w : tensor<4x64xf32>, tensor<64x64xf32>) outs(%f : tensor<4x64xf32>) -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}
