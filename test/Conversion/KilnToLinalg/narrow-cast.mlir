// RUN: kiln-opt %s --split-input-file --kiln-convert-kiln-to-linalg | FileCheck %s

// The narrow types are stored a byte each: their tensors become i8 and a
// cast computes the format with integer arithmetic on that byte.

// CHECK-LABEL: func.func @to_f8
// CHECK-SAME: (%{{.+}}: tensor<4xf32>) -> tensor<4xi8>
// CHECK: linalg.generic
// CHECK: arith.bitcast %{{.+}} : f32 to i32
// CHECK: math.roundeven
// CHECK: arith.trunci %{{.+}} : i32 to i8
// CHECK-NOT: f8E4M3FN
func.func @to_f8(%x: tensor<4xf32>) -> tensor<4xf8E4M3FN> {
  %y = kiln.cast %x to f8E4M3FN : tensor<4xf32> -> tensor<4xf8E4M3FN>
  return %y : tensor<4xf8E4M3FN>
}

// -----

// A signed 4-bit value is its low nibble: shifted up and arithmetically back.
// CHECK-LABEL: func.func @from_i4
// CHECK-SAME: (%{{.+}}: tensor<4xi8>) -> tensor<4xf32>
// CHECK: arith.shli
// CHECK: arith.shrsi
// CHECK: arith.sitofp %{{.+}} : i8 to f32
func.func @from_i4(%x: tensor<4xi4>) -> tensor<4xf32> {
  %y = kiln.cast %x to f32 : tensor<4xi4> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Constants of 4-bit types keep their bits, zero-extended to a byte.
// CHECK-LABEL: func.func @const_u4
// CHECK: arith.constant dense<[1, 15]> : tensor<2xi8>
func.func @const_u4() -> tensor<2xui4> {
  %c = kiln.constant dense<[1, 15]> : tensor<2xui4>
  return %c : tensor<2xui4>
}
