// RUN: kiln-opt %s --split-input-file --kiln-quantize-dynamic --verify-diagnostics | FileCheck %s

// A MatMul with constant weights and the constant bias its only user adds:
// one kiln.dynamic_quant_matmul. A splat 0.5 quantizes to 127 in every
// byte with scale 0.5 / 127; each column sums to 8 * 127.
// CHECK-LABEL: func.func @matmul_bias
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x8xf32>)
// CHECK-DAG: %[[W:.+]] = kiln.constant dense_resource<[[BLOB:int8_weights[_0-9]*]]> : tensor<1x2x64xi8>
// CHECK-DAG: %[[S:.+]] = kiln.constant dense<0.00393700786> : tensor<16xf32>
// CHECK-DAG: %[[SUM:.+]] = kiln.constant dense<1016> : tensor<16xi32>
// CHECK-DAG: %[[B:.+]] = kiln.constant dense<2.500000e-01> : tensor<16xf32>
// CHECK: %[[Y:.+]] = kiln.dynamic_quant_matmul %[[X]], %[[W]], %[[S]], %[[SUM]], %[[B]] : (tensor<2x3x8xf32>, tensor<1x2x64xi8>, tensor<16xf32>, tensor<16xi32>, tensor<16xf32>) -> tensor<2x3x16xf32>
// CHECK-NOT: kiln.matmul
// CHECK-NOT: kiln.add
// CHECK: return %[[Y]]
// CHECK: [[BLOB]]: "0x080000007F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F"
// expected-remark @below {{dynamic int8: 1 of 1 MatMul/Gemm nodes quantized}}
func.func @matmul_bias(%x: tensor<2x3x8xf32>) -> tensor<2x3x16xf32> {
  %w = kiln.constant dense<0.5> : tensor<8x16xf32>
  %b = kiln.constant dense<0.25> : tensor<16xf32>
  %0 = kiln.matmul %x, %w : (tensor<2x3x8xf32>, tensor<8x16xf32>) -> tensor<2x3x16xf32>
  %1 = kiln.add %b, %0 : (tensor<16xf32>, tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  return %1 : tensor<2x3x16xf32>
}

// -----

// Gemm with transB: column n of W is row n of B. K = 5 pads to two groups
// of 4: lane n holds k = 0..3 in the first group and k = 4 then zeros in the
// second. alpha = 2 folds into the scales, beta * C into the bias.
// CHECK-LABEL: func.func @gemm_trans_b
// CHECK-DAG: %[[W:.+]] = kiln.constant dense_resource<[[BLOB:int8_weights[_0-9]*]]> : tensor<1x2x64xi8>
// CHECK-DAG: %[[S:.+]] = kiln.constant dense<[0.0157480314, 0.0314960629, {{.+}}]> : tensor<16xf32>
// CHECK-DAG: %[[SUM:.+]] = kiln.constant dense<0> : tensor<16xi32>
// CHECK-DAG: %[[B:.+]] = kiln.constant dense<5.000000e-01> : tensor<16xf32>
// CHECK: kiln.dynamic_quant_matmul %{{.+}}, %[[W]], %[[S]], %[[SUM]], %[[B]] : (tensor<4x5xf32>, tensor<1x2x64xi8>, tensor<16xf32>, tensor<16xi32>, tensor<16xf32>) -> tensor<4x16xf32>
// CHECK-NOT: kiln.gemm
// CHECK: [[BLOB]]: "0x080000007F0000007F0000007F0000007F0000007F0000007F0000007F0000007F0000007F0000007F0000007F0000007F0000007F0000007F0000007F0000007F00000081000000810000008100000081000000810000008100000081000000810000008100000081000000810000008100000081000000810000008100000081000000"
// expected-remark @below {{dynamic int8: 1 of 1 MatMul/Gemm nodes quantized}}
func.func @gemm_trans_b(%x: tensor<4x5xf32>) -> tensor<4x16xf32> {
  %w = kiln.constant dense<[[1.0, 0.0, 0.0, 0.0, -1.0], [2.0, 0.0, 0.0, 0.0, -2.0], [3.0, 0.0, 0.0, 0.0, -3.0], [4.0, 0.0, 0.0, 0.0, -4.0], [5.0, 0.0, 0.0, 0.0, -5.0], [6.0, 0.0, 0.0, 0.0, -6.0], [7.0, 0.0, 0.0, 0.0, -7.0], [8.0, 0.0, 0.0, 0.0, -8.0], [9.0, 0.0, 0.0, 0.0, -9.0], [10.0, 0.0, 0.0, 0.0, -10.0], [11.0, 0.0, 0.0, 0.0, -11.0], [12.0, 0.0, 0.0, 0.0, -12.0], [13.0, 0.0, 0.0, 0.0, -13.0], [14.0, 0.0, 0.0, 0.0, -14.0], [15.0, 0.0, 0.0, 0.0, -15.0], [16.0, 0.0, 0.0, 0.0, -16.0]]> : tensor<16x5xf32>
  %c = kiln.constant dense<1.0> : tensor<16xf32>
  %0 = kiln.gemm %x, %w, %c {alpha = 2.0 : f32, beta = 0.5 : f32, trans_b = true} : (tensor<4x5xf32>, tensor<16x5xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// Nothing qualifies: both operands computed at run time, and 10 output
// columns (not a multiple of 16). The function is unchanged, and the remark
// names the nodes and says why.
// CHECK-LABEL: func.func @nothing_to_quantize
// CHECK: kiln.matmul
// CHECK: kiln.matmul
// CHECK-NOT: kiln.dynamic_quant_matmul
// expected-remark @below {{dynamic int8: 0 of 2 MatMul/Gemm nodes quantized; the model is compiled in f32 unchanged; 1 kept in f32 (N = 10 output columns, not a multiple of 16): 'narrow'; 1 kept in f32 (weights computed at run time): 'attention'}}
func.func @nothing_to_quantize(%x: tensor<4x8xf32>, %y: tensor<8x4xf32>) -> (tensor<4x4xf32>, tensor<4x10xf32>) {
  %w = kiln.constant dense<1.0> : tensor<8x10xf32>
  %0 = kiln.matmul %x, %y : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32> loc("attention")
  %1 = kiln.matmul %x, %w : (tensor<4x8xf32>, tensor<8x10xf32>) -> tensor<4x10xf32> loc("narrow")
  return %0, %1 : tensor<4x4xf32>, tensor<4x10xf32>
}

// -----

// A bias add with another user stays an add; the matmul is quantized alone.
// CHECK-LABEL: func.func @bias_add_not_fused
// CHECK: %[[Y:.+]] = kiln.dynamic_quant_matmul %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}} : (tensor<4x8xf32>, tensor<1x2x128xi8>, tensor<32xf32>, tensor<32xi32>) -> tensor<4x32xf32>
// CHECK: kiln.add %{{.+}}, %[[Y]]
// expected-remark @below {{dynamic int8: 1 of 1 MatMul/Gemm nodes quantized}}
func.func @bias_add_not_fused(%x: tensor<4x8xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %w = kiln.constant dense<1.0> : tensor<8x32xf32>
  %b = kiln.constant dense<1.0> : tensor<32xf32>
  %0 = kiln.matmul %x, %w : (tensor<4x8xf32>, tensor<8x32xf32>) -> tensor<4x32xf32>
  %1 = kiln.add %b, %0 : (tensor<32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  return %0, %1 : tensor<4x32xf32>, tensor<4x32xf32>
}
