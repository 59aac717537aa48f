// RUN: kiln-opt %s --split-input-file --kiln-convert-kiln-to-linalg | FileCheck %s

// The zero point's share of an integer product, zp * sums[n], is one
// constant when both are (a QDQ model's activation zero point): the
// correction subtracts it, with no multiply left for the epilogue.
// CHECK-LABEL: func.func @constant_zero_point
// CHECK-DAG: %[[SHARES:.+]] = arith.constant dense<[-30, 0, 60, 381]> : tensor<4xi32>
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %[[SHARES]] : tensor<2x4xi32>, tensor<4xi32>)
// CHECK-NEXT: ^bb0(%[[ACC:.+]]: i32, %[[S:.+]]: i32, %{{.+}}: i32):
// CHECK-NEXT: %[[D:.+]] = arith.subi %[[ACC]], %[[S]] : i32
// CHECK-NEXT: linalg.yield %[[D]]
func.func @constant_zero_point(%a: tensor<2x4xui8>) -> tensor<2x4xi32> {
  %zp = kiln.constant dense<3> : tensor<i32>
  %w = kiln.constant dense<1> : tensor<1x1x64xi8>
  %sums = kiln.constant dense<[-10, 0, 20, 127]> : tensor<4xi32>
  %y = kiln.integer_matmul %a, %zp, %w, %sums : (tensor<2x4xui8>, tensor<i32>, tensor<1x1x64xi8>, tensor<4xi32>) -> tensor<2x4xi32>
  return %y : tensor<2x4xi32>
}

// -----

// A zero point known at run time (DynamicQuantizeLinear's) is multiplied in
// the correction.
// CHECK-LABEL: func.func @runtime_zero_point
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %arg1, %{{.+}} : tensor<2x4xi32>, tensor<i32>, tensor<4xi32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.muli
// CHECK-NEXT: arith.subi
func.func @runtime_zero_point(%a: tensor<2x4xui8>, %zp: tensor<i32>) -> tensor<2x4xi32> {
  %w = kiln.constant dense<1> : tensor<1x1x64xi8>
  %sums = kiln.constant dense<[-10, 0, 20, 127]> : tensor<4xi32>
  %y = kiln.integer_matmul %a, %zp, %w, %sums : (tensor<2x4xui8>, tensor<i32>, tensor<1x1x64xi8>, tensor<4xi32>) -> tensor<2x4xi32>
  return %y : tensor<2x4xi32>
}

// -----

// Weight sums stored as a resource (large models) are multiplied into a new
// resource.
// CHECK-LABEL: func.func @resource_sums
// CHECK: %[[SHARES:.+]] = arith.constant dense_resource<kiln_scaled_i32> : tensor<4xi32>
// CHECK: ins(%{{.+}}, %[[SHARES]] : tensor<2x4xi32>, tensor<4xi32>)
// CHECK: kiln_scaled_i32: "0x08000000E2FFFFFF000000003C0000007D010000"
func.func @resource_sums(%a: tensor<2x4xui8>) -> tensor<2x4xi32> {
  %zp = kiln.constant dense<3> : tensor<i32>
  %w = kiln.constant dense<1> : tensor<1x1x64xi8>
  %sums = kiln.constant dense_resource<sums> : tensor<4xi32>
  %y = kiln.integer_matmul %a, %zp, %w, %sums : (tensor<2x4xui8>, tensor<i32>, tensor<1x1x64xi8>, tensor<4xi32>) -> tensor<2x4xi32>
  return %y : tensor<2x4xi32>
}

{-#
  dialect_resources: {
    builtin: {
      sums: "0x04000000F6FFFFFF00000000140000007F000000"
    }
  }
#-}
