// RUN: kiln-opt %s --kiln-shape-inference | FileCheck %s

// Function declarations are left alone.

// CHECK-LABEL: func.func private @external(tensor<4xf32>) -> tensor<4xf32>
// CHECK-LABEL: func.func @refined
// CHECK-SAME: -> tensor<4xf32>
// CHECK: kiln.add {{.+}} -> tensor<4xf32>
func.func private @external(tensor<4xf32>) -> tensor<4xf32>
func.func @refined(%x: tensor<4xf32>) -> tensor<?xf32> {
  %y = kiln.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}
