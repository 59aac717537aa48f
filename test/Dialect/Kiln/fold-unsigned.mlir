// RUN: kiln-opt %s --split-input-file --canonicalize | FileCheck %s

// Casts of unsigned constants fold by their unsigned values (200 is not -56).
// CHECK-LABEL: func.func @fold_unsigned_cast
// CHECK-DAG: kiln.constant dense<[2.000000e+02, 2.550000e+02]> : tensor<2xf32>
// CHECK-DAG: kiln.constant dense<[200, 255]> : tensor<2xi32>
// CHECK-DAG: kiln.constant dense<[200, 3]> : tensor<2xui8>
// CHECK-NOT: kiln.cast
func.func @fold_unsigned_cast() -> (tensor<2xf32>, tensor<2xi32>, tensor<2xui8>) {
  %c = kiln.constant dense<[200, 255]> : tensor<2xui8>
  %f = kiln.cast %c to f32 : tensor<2xui8> -> tensor<2xf32>
  %i = kiln.cast %c to i32 : tensor<2xui8> -> tensor<2xi32>
  %g = kiln.constant dense<[200.5, 3.9]> : tensor<2xf32>
  %u = kiln.cast %g to ui8 : tensor<2xf32> -> tensor<2xui8>
  return %f, %i, %u : tensor<2xf32>, tensor<2xi32>, tensor<2xui8>
}

// -----

// Unsigned division and max/min are left to run time; add wraps like the
// signed fold.
// CHECK-LABEL: func.func @unsigned_binary
// CHECK-DAG: kiln.div
// CHECK-DAG: kiln.max
// CHECK-DAG: kiln.constant dense<[4, 0]> : tensor<2xui8>
func.func @unsigned_binary() -> (tensor<2xui8>, tensor<2xui8>, tensor<2xui8>) {
  %a = kiln.constant dense<[200, 255]> : tensor<2xui8>
  %b = kiln.constant dense<[60, 1]> : tensor<2xui8>
  %d = kiln.div %a, %b : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>
  %m = kiln.max %a, %b : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>
  %s = kiln.add %a, %b : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>
  return %d, %m, %s : tensor<2xui8>, tensor<2xui8>, tensor<2xui8>
}
