// RUN: kiln-opt %s --split-input-file --kiln-write-concat-in-place | FileCheck %s

// A concatenation of two elementwise results along channels: each producer
// writes straight into its slice of a fresh result tensor, and the copies go.
// CHECK-LABEL: func.func @concat_two
// CHECK: %[[E:.+]] = tensor.empty() : tensor<1x4x4x32xf32>
// CHECK: %[[S0:.+]] = tensor.extract_slice %[[E]][0, 0, 0, 0] [1, 4, 4, 16]
// CHECK: %[[A:.+]] = linalg.generic {{.+}} outs(%[[S0]] : tensor<1x4x4x16xf32>)
// CHECK: %[[D0:.+]] = tensor.insert_slice %[[A]] into %[[E]][0, 0, 0, 0] [1, 4, 4, 16]
// CHECK: %[[S1:.+]] = tensor.extract_slice %[[D0]][0, 0, 0, 16] [1, 4, 4, 16]
// CHECK: %[[B:.+]] = linalg.generic {{.+}} outs(%[[S1]] : tensor<1x4x4x16xf32>)
// CHECK: %[[D1:.+]] = tensor.insert_slice %[[B]] into %[[D0]][0, 0, 0, 16] [1, 4, 4, 16]
// CHECK-NOT: linalg.copy
// CHECK: return %[[D1]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @concat_two(%x: tensor<1x4x4x16xf32>, %y: tensor<1x4x4x16xf32>) -> tensor<1x4x4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %ea = tensor.empty() : tensor<1x4x4x16xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x4x16xf32>) outs(%ea : tensor<1x4x4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x16xf32>
  %eb = tensor.empty() : tensor<1x4x4x16xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y : tensor<1x4x4x16xf32>) outs(%eb : tensor<1x4x4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.minimumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x16xf32>
  %e = tensor.empty() : tensor<1x4x4x32xf32>
  %s0 = tensor.extract_slice %e[0, 0, 0, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x4x4x32xf32> to tensor<1x4x4x16xf32>
  %c0 = linalg.copy ins(%a : tensor<1x4x4x16xf32>) outs(%s0 : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %d0 = tensor.insert_slice %c0 into %e[0, 0, 0, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x4x4x16xf32> into tensor<1x4x4x32xf32>
  %s1 = tensor.extract_slice %d0[0, 0, 0, 16] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x4x4x32xf32> to tensor<1x4x4x16xf32>
  %c1 = linalg.copy ins(%b : tensor<1x4x4x16xf32>) outs(%s1 : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %d1 = tensor.insert_slice %c1 into %d0[0, 0, 0, 16] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x4x4x16xf32> into tensor<1x4x4x32xf32>
  return %d1 : tensor<1x4x4x32xf32>
}

// -----

// A part that is a function argument has no producer to redirect: the copies
// stay.
// CHECK-LABEL: func.func @concat_argument
// CHECK: linalg.copy
func.func @concat_argument(%x: tensor<1x4x4x16xf32>, %y: tensor<1x4x4x16xf32>) -> tensor<1x4x4x32xf32> {
  %e = tensor.empty() : tensor<1x4x4x32xf32>
  %s0 = tensor.extract_slice %e[0, 0, 0, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x4x4x32xf32> to tensor<1x4x4x16xf32>
  %c0 = linalg.copy ins(%x : tensor<1x4x4x16xf32>) outs(%s0 : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %d0 = tensor.insert_slice %c0 into %e[0, 0, 0, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x4x4x16xf32> into tensor<1x4x4x32xf32>
  %s1 = tensor.extract_slice %d0[0, 0, 0, 16] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x4x4x32xf32> to tensor<1x4x4x16xf32>
  %c1 = linalg.copy ins(%y : tensor<1x4x4x16xf32>) outs(%s1 : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %d1 = tensor.insert_slice %c1 into %d0[0, 0, 0, 16] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x4x4x16xf32> into tensor<1x4x4x32xf32>
  return %d1 : tensor<1x4x4x32xf32>
}
