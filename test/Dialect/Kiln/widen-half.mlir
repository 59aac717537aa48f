// RUN: kiln-opt %s --split-input-file --kiln-widen-half | FileCheck %s

// An fp16 model computes in f32: the argument is widened at entry, the fp16
// weights become f32 constants (the same values), the result is narrowed
// before the return, and the signature stays fp16.

// CHECK-LABEL: func.func @matmul_relu(%arg0: tensor<2x3xf16>) -> tensor<2x2xf16>
// CHECK: %[[X:.+]] = kiln.cast %arg0 to f32 : tensor<2x3xf16> -> tensor<2x3xf32>
// CHECK: %[[W:.+]] = kiln.constant dense<{{\[}}[1.500000e+00, -2.000000e+00], [6.550400e+04, 9.765625E-4], [0.000000e+00, -1.000000e+00]]> : tensor<3x2xf32>
// CHECK: %[[C:.+]] = kiln.matmul %[[X]], %[[W]] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
// CHECK: %[[R:.+]] = kiln.relu %[[C]] : tensor<2x2xf32>
// CHECK: %[[Y:.+]] = kiln.cast %[[R]] to f16 : tensor<2x2xf32> -> tensor<2x2xf16>
// CHECK: return %[[Y]]
func.func @matmul_relu(%x: tensor<2x3xf16>) -> tensor<2x2xf16> {
  %w = kiln.constant dense<[[1.5, -2.0], [65504.0, 0.0009765625], [0.0, -1.0]]> : tensor<3x2xf16>
  %c = kiln.matmul %x, %w : (tensor<2x3xf16>, tensor<3x2xf16>) -> tensor<2x2xf16>
  %r = kiln.relu %c : tensor<2x2xf16>
  return %r : tensor<2x2xf16>
}

// -----

// The model's own Casts keep their meaning: a cast to f16 still rounds (to
// f16 and back to f32), a cast from f16 reads the widened value.

// CHECK-LABEL: func.func @io_casts(%arg0: tensor<8xf32>) -> tensor<8xf32>
// CHECK: %[[H:.+]] = kiln.cast %arg0 to f16 : tensor<8xf32> -> tensor<8xf16>
// CHECK: %[[W:.+]] = kiln.cast %[[H]] to f32 : tensor<8xf16> -> tensor<8xf32>
// CHECK: %[[S:.+]] = kiln.add %[[W]], %[[W]] : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// CHECK: %[[O:.+]] = kiln.cast %[[S]] to f32 : tensor<8xf32> -> tensor<8xf32>
// CHECK: return %[[O]]
func.func @io_casts(%x: tensor<8xf32>) -> tensor<8xf32> {
  %h = kiln.cast %x to f16 : tensor<8xf32> -> tensor<8xf16>
  %s = kiln.add %h, %h : (tensor<8xf16>, tensor<8xf16>) -> tensor<8xf16>
  %o = kiln.cast %s to f32 : tensor<8xf16> -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Reinterpreting fp16 bits needs fp16 storage: the function stays as it is.

// CHECK-LABEL: func.func @punned
// CHECK: kiln.add %arg0, %arg0 : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
// CHECK: kiln.bitcast
func.func @punned(%x: tensor<4xf16>) -> tensor<4xi16> {
  %s = kiln.add %x, %x : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  %b = kiln.bitcast %s to i16 : tensor<4xf16> -> tensor<4xi16>
  return %b : tensor<4xi16>
}
