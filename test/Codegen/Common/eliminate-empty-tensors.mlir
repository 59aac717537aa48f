// RUN: kiln-opt %s --split-input-file --kiln-eliminate-empty-tensors | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-eliminate-empty-tensors="max-divisions=8" | FileCheck %s --check-prefix=HIGH

// A run-time size with one floor division: the fill is computed into the
// slice of %a it is inserted into.
// CHECK-LABEL: func.func @simple_size
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %arg0
// CHECK: linalg.fill {{.*}} outs(%[[SLICE]]
// HIGH-LABEL: func.func @simple_size
// HIGH: %[[SLICE:.*]] = tensor.extract_slice %arg0
// HIGH: linalg.fill {{.*}} outs(%[[SLICE]]
#half = affine_map<()[s0] -> (s0 floordiv 2)>
func.func @simple_size(%a: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %c = arith.constant 1.0 : f32
  %s = affine.apply #half()[%n]
  %e = tensor.empty(%s) : tensor<?xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %r = tensor.insert_slice %f into %a[0] [%s] [1]
      : tensor<?xf32> into tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// Swin's padded window count: more divisions in one size than the
// default limit of 6, so the pass leaves the module alone (the fill stays
// in its own empty tensor, copied in); with a limit of 8 it eliminates.
// CHECK-LABEL: func.func @nested_size
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[EMPTY:.*]] = tensor.empty
// CHECK: linalg.fill {{.*}} outs(%[[EMPTY]]
// HIGH-LABEL: func.func @nested_size
// HIGH: %[[SLICE:.*]] = tensor.extract_slice %arg0
// HIGH: linalg.fill {{.*}} outs(%[[SLICE]]
#windows = affine_map<()[s0] -> (s0 floordiv 4 - ((s0 floordiv 4) * 6 + (s0 floordiv 4 + (s0 floordiv 4 + (s0 floordiv 4) floordiv 2) floordiv 2) floordiv 2) floordiv 7)>
func.func @nested_size(%a: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %c = arith.constant 1.0 : f32
  %s = affine.apply #windows()[%n]
  %e = tensor.empty(%s) : tensor<?xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %r = tensor.insert_slice %f into %a[0] [%s] [1]
      : tensor<?xf32> into tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// A static module takes the upstream pass whatever its maps hold.
// CHECK-LABEL: func.func @static_module
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %arg0
// CHECK: linalg.fill {{.*}} outs(%[[SLICE]]
#deep = affine_map<(d0) -> ((((((((d0 floordiv 2) floordiv 2) floordiv 2) floordiv 2) floordiv 2) floordiv 2) floordiv 2) mod 3)>
func.func @static_module(%a: tensor<64xf32>) -> tensor<64xf32> {
  %c = arith.constant 1.0 : f32
  %c5 = arith.constant 5 : index
  %i = affine.apply #deep(%c5)
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %r = tensor.insert_slice %f into %a[%i] [8] [1]
      : tensor<8xf32> into tensor<64xf32>
  return %r : tensor<64xf32>
}
