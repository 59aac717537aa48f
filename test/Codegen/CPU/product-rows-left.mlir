// RUN: kiln-opt %s --kiln-cpu-pack-constant-rhs="vector-width=16" --kiln-cpu-tiling-pipeline="vector-width=16 parallel-work=0" | FileCheck %s

// 13 rows (a prime batch; 197 tokens are the same case) against packed
// panels 4 registers wide: no divisor near the 4 rows that fit beside them,
// so full 4-row tiles up to row 12 and one static tile of the row left,
// rather than 13 tiles of one row that stream the whole panel each
// (197 x 384 x 384 ran at 53 GFLOP/s that way, 200 now, Zen 5).
// CHECK-LABEL: func.func @matmul_13_rows
// CHECK: %[[FULL:.*]] = scf.for %{{.*}} = %c0 to %c12 step %c4
// CHECK: tensor.extract_slice {{.+}} [4, 1, 64] [1, 1, 1] : tensor<13x2x64xf32> to tensor<4x1x64xf32>
// CHECK: vector.contract {{.+}} into vector<4x1x64xf32>
// CHECK: scf.for {{.+}} iter_args(%{{.*}} = %[[FULL]])
// CHECK: tensor.extract_slice %{{.+}}[12, %{{.+}}, 0] [1, 1, 64] [1, 1, 1]
// CHECK-NOT: scf.for {{.+}} to %c13 step %c1
func.func @matmul_13_rows(%a: tensor<13x8xf32>) -> tensor<13x128xf32> {
  %b = arith.constant dense<0.5> : tensor<8x128xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<13x128xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<13x128xf32>) -> tensor<13x128xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<13x8xf32>, tensor<8x128xf32>) outs(%c : tensor<13x128xf32>) -> tensor<13x128xf32>
  return %0 : tensor<13x128xf32>
}
