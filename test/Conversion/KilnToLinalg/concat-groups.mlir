// RUN: kiln-opt %s --kiln-convert-kiln-to-linalg | FileCheck %s

// A concatenation of more than 16 parts is built in groups of 16 (then the
// groups): bufferizing one chain of n inserts costs about n^3.4, and 16 keeps
// every chain short (lib/Conversion/KilnToLinalg/LowerTensor.cpp). 20 parts:
// a 16-part group, a 4-part group, and the 2-part concatenation of the groups.
// CHECK-LABEL: func.func @concat20
// CHECK: tensor.empty() : tensor<16x4xf32>
// CHECK-COUNT-16: tensor.insert_slice {{.+}} into tensor<16x4xf32>
// CHECK: tensor.empty() : tensor<4x4xf32>
// CHECK-COUNT-4: tensor.insert_slice {{.+}} into tensor<4x4xf32>
// CHECK: tensor.empty() : tensor<20x4xf32>
// CHECK-COUNT-2: tensor.insert_slice {{.+}} into tensor<20x4xf32>
// CHECK-NOT: tensor.insert_slice
func.func @concat20(%a0: tensor<1x4xf32>, %a1: tensor<1x4xf32>, %a2: tensor<1x4xf32>, %a3: tensor<1x4xf32>, %a4: tensor<1x4xf32>, %a5: tensor<1x4xf32>, %a6: tensor<1x4xf32>, %a7: tensor<1x4xf32>, %a8: tensor<1x4xf32>, %a9: tensor<1x4xf32>, %a10: tensor<1x4xf32>, %a11: tensor<1x4xf32>, %a12: tensor<1x4xf32>, %a13: tensor<1x4xf32>, %a14: tensor<1x4xf32>, %a15: tensor<1x4xf32>, %a16: tensor<1x4xf32>, %a17: tensor<1x4xf32>, %a18: tensor<1x4xf32>, %a19: tensor<1x4xf32>) -> tensor<20x4xf32> {
  %0 = kiln.concat %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7, %a8, %a9, %a10, %a11, %a12, %a13, %a14, %a15, %a16, %a17, %a18, %a19 {axis = 0 : i64} : (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<20x4xf32>
  return %0 : tensor<20x4xf32>
}
