// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-fuse-elementwise))" | FileCheck %s

// A chain of elementwise ops becomes one generic.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic
// CHECK: math.erf
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @chain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = math.erf %i : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %r = arith.mulf %i, %j : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}

// -----

// Never into a reduction: the erf would run once per reduction step.
#id = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @not_into_a_matmul
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel"]
// CHECK: math.erf
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-NOT: math.erf
func.func @not_into_a_matmul(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %acc: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = math.erf %i : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %m = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%acc : tensor<4x16xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}

// -----

// A collapse_shape of run-time sizes before an elementwise op (a Conv1d's
// NHWC result [n, 1, w, c] viewed as [n, w, c], then Relu) moves after it,
// so the op meets its producer (the convolution's epilogue) as it does at
// static sizes. The consumer's init reads its sizes off the collapsed value;
// those reads move to the source rather than keep the reshape in place.
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @run_time_collapse
// CHECK-SAME: (%[[X:.+]]: tensor<?x1x?x64xf32>)
// CHECK: %[[R:.+]] = linalg.generic {{.+}} ins(%[[X]] : tensor<?x1x?x64xf32>)
// CHECK: arith.maximumf
// CHECK: tensor.collapse_shape %[[R]] {{\[}}[0], [1, 2], [3]]
func.func @run_time_collapse(%x: tensor<?x1x?x64xf32>) -> tensor<?x?x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %c = tensor.collapse_shape %x [[0], [1, 2], [3]] : tensor<?x1x?x64xf32> into tensor<?x?x64xf32>
  %n = tensor.dim %c, %c0 : tensor<?x?x64xf32>
  %w = tensor.dim %c, %c1 : tensor<?x?x64xf32>
  %e = tensor.empty(%n, %w) : tensor<?x?x64xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c : tensor<?x?x64xf32>) outs(%e : tensor<?x?x64xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.maximumf %i, %zero : f32
    linalg.yield %m : f32
  } -> tensor<?x?x64xf32>
  return %r : tensor<?x?x64xf32>
}
