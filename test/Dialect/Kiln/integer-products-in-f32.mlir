// RUN: kiln-opt %s --split-input-file --kiln-integer-products-in-f32 | FileCheck %s

// ConvInteger as ONNX Runtime's dynamic quantization writes it: the i32
// result is only converted to float, so the product runs in f32, the
// constant filter (int8 minus its zero point) becomes an f32 constant, and
// the Cast to f32 disappears.

// CHECK-LABEL: func.func @conv_integer_dequantized
// CHECK-DAG: %[[W:.+]] = kiln.constant dense_resource<integer_weights_f32> : tensor<2x1x1x1xf32>
// CHECK-DAG: %[[XF:.+]] = kiln.cast %{{.+}} to f32 : tensor<1x1x4x4xi32> -> tensor<1x1x4x4xf32>
// CHECK: %[[Y:.+]] = kiln.conv2d %[[XF]], %[[W]] {{.*}} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NOT: kiln.cast %[[Y]]
// CHECK: %[[S:.+]] = kiln.mul %[[Y]], %{{.+}}
// CHECK: return %[[S]]
func.func @conv_integer_dequantized(%x: tensor<1x1x4x4xui8>, %zp: tensor<ui8>, %s: tensor<f32>) -> tensor<1x2x4x4xf32> {
  %w = kiln.constant dense<[[[[-127]]], [[[5]]]]> : tensor<2x1x1x1xi8>
  %wzp = kiln.constant dense<3> : tensor<i32>
  %x32 = kiln.cast %x to i32 : tensor<1x1x4x4xui8> -> tensor<1x1x4x4xi32>
  %zp32 = kiln.cast %zp to i32 : tensor<ui8> -> tensor<i32>
  %xc = kiln.sub %x32, %zp32 : (tensor<1x1x4x4xi32>, tensor<i32>) -> tensor<1x1x4x4xi32>
  %w32 = kiln.cast %w to i32 : tensor<2x1x1x1xi8> -> tensor<2x1x1x1xi32>
  %wc = kiln.sub %w32, %wzp : (tensor<2x1x1x1xi32>, tensor<i32>) -> tensor<2x1x1x1xi32>
  %acc = kiln.conv2d %xc, %wc {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xi32>, tensor<2x1x1x1xi32>) -> tensor<1x2x4x4xi32>
  %f = kiln.cast %acc to f32 : tensor<1x2x4x4xi32> -> tensor<1x2x4x4xf32>
  %y = kiln.mul %f, %s : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// QLinearMatMul-style: the i32 result is requantized, so it must be exact.
// K = 16, |a| <= 255 and the largest column sum of |w| is 16 * 127: every
// partial sum stays below 2^24, so the product runs in f32 and converts
// back to i32 for its user.

// CHECK-LABEL: func.func @exact_matmul
// CHECK: %[[Y:.+]] = kiln.matmul %{{.+}}, %{{.+}} : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[I:.+]] = kiln.cast %[[Y]] to i32 : tensor<4x8xf32> -> tensor<4x8xi32>
// CHECK: kiln.add %[[I]], %{{.+}} : (tensor<4x8xi32>, tensor<8xi32>)
func.func @exact_matmul(%a: tensor<4x16xui8>, %bias: tensor<8xi32>) -> tensor<4x8xi32> {
  %w = kiln.constant dense<-127> : tensor<16x8xi8>
  %a32 = kiln.cast %a to i32 : tensor<4x16xui8> -> tensor<4x16xi32>
  %w32 = kiln.cast %w to i32 : tensor<16x8xi8> -> tensor<16x8xi32>
  %acc = kiln.matmul %a32, %w32 : (tensor<4x16xi32>, tensor<16x8xi32>) -> tensor<4x8xi32>
  %y = kiln.add %acc, %bias : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
  return %y : tensor<4x8xi32>
}

// -----

// The same with K = 1024: 255 * 1024 * 127 passes 2^24, and the result
// feeds an integer op, so it stays an i32 product.

// CHECK-LABEL: func.func @inexact_matmul_stays_i32
// CHECK: kiln.matmul %{{.+}}, %{{.+}} : (tensor<4x1024xi32>, tensor<1024x8xi32>) -> tensor<4x8xi32>
// CHECK-NOT: f32
func.func @inexact_matmul_stays_i32(%a: tensor<4x1024xui8>, %bias: tensor<8xi32>) -> tensor<4x8xi32> {
  %w = kiln.constant dense<-127> : tensor<1024x8xi8>
  %a32 = kiln.cast %a to i32 : tensor<4x1024xui8> -> tensor<4x1024xi32>
  %w32 = kiln.cast %w to i32 : tensor<1024x8xi8> -> tensor<1024x8xi32>
  %acc = kiln.matmul %a32, %w32 : (tensor<4x1024xi32>, tensor<1024x8xi32>) -> tensor<4x8xi32>
  %y = kiln.add %acc, %bias : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
  return %y : tensor<4x8xi32>
}

// -----

// Operands of unknown size (an i32 graph input) are left alone even when
// the result is only dequantized: an i32 input may hold any value.

// CHECK-LABEL: func.func @unknown_operand
// CHECK: kiln.matmul %{{.+}}, %{{.+}} : (tensor<4x16xi32>, tensor<16x8xi32>) -> tensor<4x8xi32>
func.func @unknown_operand(%a: tensor<4x16xi32>, %b: tensor<16x8xi32>) -> tensor<4x8xf32> {
  %acc = kiln.matmul %a, %b : (tensor<4x16xi32>, tensor<16x8xi32>) -> tensor<4x8xi32>
  %f = kiln.cast %acc to f32 : tensor<4x8xi32> -> tensor<4x8xf32>
  return %f : tensor<4x8xf32>
}
