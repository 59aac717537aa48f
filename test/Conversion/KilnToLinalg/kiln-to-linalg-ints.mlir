// RUN: kiln-opt %s --split-input-file --kiln-convert-kiln-to-linalg | FileCheck %s

// Unsigned kiln ops compute on signless integers with unsigned arith ops; the
// function signature and every value end up signless.

// CHECK-LABEL: func.func @unsigned_ops
// CHECK-SAME: (%[[A:.+]]: tensor<4xi8>, %[[B:.+]]: tensor<4xi8>) -> (tensor<4xi8>, tensor<4xi1>, tensor<4xf32>)
// CHECK: arith.divui
// CHECK: arith.maxui
// CHECK: arith.remui
// CHECK: arith.cmpi ult
// CHECK: arith.uitofp
// CHECK-NOT: ui8
// CHECK-NOT: unrealized_conversion_cast
func.func @unsigned_ops(%a: tensor<4xui8>, %b: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xi1>, tensor<4xf32>) {
  %0 = kiln.div %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = kiln.max %0, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %2 = kiln.mod %1, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %3 = kiln.less %2, %a : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %4 = kiln.cast %2 to f32 : tensor<4xui8> -> tensor<4xf32>
  return %2, %3, %4 : tensor<4xui8>, tensor<4xi1>, tensor<4xf32>
}

// -----

// Float to unsigned converts with fptoui; unsigned widening zero-extends.
// CHECK-LABEL: func.func @unsigned_casts
// CHECK-SAME: -> (tensor<4xi16>, tensor<4xi64>)
// CHECK: arith.fptoui %{{.+}} : f32 to i16
// CHECK: arith.extui %{{.+}} : i16 to i64
func.func @unsigned_casts(%x: tensor<4xf32>) -> (tensor<4xui16>, tensor<4xi64>) {
  %0 = kiln.cast %x to ui16 : tensor<4xf32> -> tensor<4xui16>
  %1 = kiln.cast %0 to i64 : tensor<4xui16> -> tensor<4xi64>
  return %0, %1 : tensor<4xui16>, tensor<4xi64>
}

// -----

// Unsigned constants and data movement keep their bytes.
// CHECK-LABEL: func.func @unsigned_constant
// CHECK: arith.constant dense<[1, 2, -1, 4]> : tensor<4xi8>
// CHECK: tensor.expand_shape {{.+}} : tensor<4xi8> into tensor<2x2xi8>
func.func @unsigned_constant() -> tensor<2x2xui8> {
  %c = kiln.constant dense<[1, 2, 255, 4]> : tensor<4xui8>
  %r = kiln.reshape %c : tensor<4xui8> to tensor<2x2xui8>
  return %r : tensor<2x2xui8>
}

// -----

// Shifts by the bit width or more give 0 instead of poison.
// CHECK-LABEL: func.func @bitshift
// CHECK: %[[W:.+]] = arith.constant 32 : i32
// CHECK: %[[FAR:.+]] = arith.cmpi uge, %{{.+}}, %[[W]] : i32
// CHECK: %[[S:.+]] = arith.shli
// CHECK: arith.select %[[FAR]], %{{.+}}, %[[S]]
// CHECK: arith.shrui
func.func @bitshift(%a: tensor<3xui32>, %b: tensor<3xui32>) -> (tensor<3xui32>, tensor<3xui32>) {
  %0 = kiln.bitshift %a, %b {left = true} : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
  %1 = kiln.bitshift %a, %b {left = false} : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
  return %0, %1 : tensor<3xui32>, tensor<3xui32>
}

// -----

// i32 matmuls accumulate in i32 from a zero fill.
// CHECK-LABEL: func.func @matmul_i32
// CHECK: %[[Z:.+]] = arith.constant 0 : i32
// CHECK: %[[ACC:.+]] = linalg.fill ins(%[[Z]] : i32)
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<4x3xi32>, tensor<3x2xi32>) outs(%[[ACC]] : tensor<4x2xi32>)
func.func @matmul_i32(%a: tensor<4x3xi32>, %b: tensor<3x2xi32>) -> tensor<4x2xi32> {
  %0 = kiln.matmul %a, %b : (tensor<4x3xi32>, tensor<3x2xi32>) -> tensor<4x2xi32>
  return %0 : tensor<4x2xi32>
}

// -----

// Integer division never traps: a zero divisor gives 0, a divisor of -1
// negates (INT_MIN / -1 faults on x86).
// CHECK-LABEL: func.func @safe_div
// CHECK: %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK: %[[IS0:.+]] = arith.cmpi eq, %[[D:.+]], %[[ZERO]] : i32
// CHECK: %[[ISM1:.+]] = arith.cmpi eq, %[[D]], %{{.+}} : i32
// CHECK: %[[SP:.+]] = arith.ori %[[IS0]], %[[ISM1]] : i1
// CHECK: %[[SAFE:.+]] = arith.select %[[SP]], %{{.+}}, %[[D]] : i32
// CHECK: %[[Q:.+]] = arith.divsi %[[X:.+]], %[[SAFE]] : i32
// CHECK: %[[NEG:.+]] = arith.subi %[[ZERO]], %[[X]] : i32
// CHECK: %[[Q2:.+]] = arith.select %[[ISM1]], %[[NEG]], %[[Q]] : i32
// CHECK: arith.select %[[IS0]], %[[ZERO]], %[[Q2]] : i32
func.func @safe_div(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = kiln.div %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// On integers and/or/xor are bitwise and not flips every bit.
// CHECK-LABEL: func.func @bitwise
// CHECK: arith.andi %{{.+}}, %{{.+}} : i16
// CHECK: arith.ori %{{.+}}, %{{.+}} : i16
// CHECK: arith.xori %{{.+}}, %{{.+}} : i16
// CHECK: %[[ONES:.+]] = arith.constant -1 : i16
// CHECK: arith.xori %{{.+}}, %[[ONES]] : i16
func.func @bitwise(%a: tensor<4xui16>, %b: tensor<4xui16>) -> tensor<4xui16> {
  %0 = kiln.and %a, %b : (tensor<4xui16>, tensor<4xui16>) -> tensor<4xui16>
  %1 = kiln.or %0, %b : (tensor<4xui16>, tensor<4xui16>) -> tensor<4xui16>
  %2 = kiln.xor %1, %b : (tensor<4xui16>, tensor<4xui16>) -> tensor<4xui16>
  %3 = kiln.not %2 : tensor<4xui16>
  return %3 : tensor<4xui16>
}

// -----

// Same-width types keep their bits; a bool is the byte 0 or 1.
// CHECK-LABEL: func.func @bitcast
// CHECK: arith.bitcast %{{.+}} : f32 to i32
// CHECK: arith.extui %{{.+}} : i1 to i8
// CHECK: arith.cmpi ne, %{{.+}}, %{{.+}} : i8
func.func @bitcast(%x: tensor<4xf32>, %b: tensor<4xi1>, %u: tensor<4xui8>) -> (tensor<4xi32>, tensor<4xui8>, tensor<4xi1>) {
  %0 = kiln.bitcast %x to i32 : tensor<4xf32> -> tensor<4xi32>
  %1 = kiln.bitcast %b to ui8 : tensor<4xi1> -> tensor<4xui8>
  %2 = kiln.bitcast %u to i1 : tensor<4xui8> -> tensor<4xi1>
  return %0, %1, %2 : tensor<4xi32>, tensor<4xui8>, tensor<4xi1>
}
