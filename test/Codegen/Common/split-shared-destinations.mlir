// RUN: kiln-opt %s --split-input-file --kiln-cpu-tiling-pipeline="vector-width=16 parallel-work=0" | FileCheck %s

// CSE leaves one zero-filled tensor (and one slice of it) for two ops of the
// same shape that each write into its first columns and insert the result
// back (int8 rows padded to a multiple of 64). The second insert gets a fill
// of its own, right before the op that writes its source, and that op a
// slice of it: otherwise bufferization copies the whole tensor for it.
// CHECK-LABEL: func.func @shared_fill
// CHECK: %[[F1:.+]] = linalg.fill {kiln.distinct_fill = 0 : i64, {{.+}} -> tensor<8x64xi8>
// CHECK: %[[S1:.+]] = tensor.extract_slice %[[F1]][0, 0] [8, 16]
// CHECK: %[[A:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[S1]])
// CHECK: arith.addi
// CHECK: tensor.insert_slice %[[A]] into %[[F1]][0, 0] [8, 16]
// CHECK: %[[F2:.+]] = linalg.fill {kiln.distinct_fill = 1 : i64, {{.+}} -> tensor<8x64xi8>
// CHECK: %[[S2:.+]] = tensor.extract_slice %[[F2]][0, 0] [8, 16]
// CHECK: %[[B:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[S2]])
// CHECK: arith.muli
// CHECK: tensor.insert_slice %[[B]] into %[[F2]][0, 0] [8, 16]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @shared_fill(%x: tensor<8x16xi8>, %y: tensor<8x16xi8>) -> (tensor<8x64xi8>, tensor<8x64xi8>) {
  %z = arith.constant 0 : i8
  %e = tensor.empty() : tensor<8x64xi8>
  %f = linalg.fill ins(%z : i8) outs(%e : tensor<8x64xi8>) -> tensor<8x64xi8>
  %s = tensor.extract_slice %f[0, 0] [8, 16] [1, 1] : tensor<8x64xi8> to tensor<8x16xi8>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xi8>) outs(%s : tensor<8x16xi8>) {
  ^bb0(%in: i8, %out: i8):
    %v = arith.addi %in, %in : i8
    linalg.yield %v : i8
  } -> tensor<8x16xi8>
  %ra = tensor.insert_slice %a into %f[0, 0] [8, 16] [1, 1] : tensor<8x16xi8> into tensor<8x64xi8>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<8x16xi8>) outs(%s : tensor<8x16xi8>) {
  ^bb0(%in: i8, %out: i8):
    %v = arith.muli %in, %in : i8
    linalg.yield %v : i8
  } -> tensor<8x16xi8>
  %rb = tensor.insert_slice %b into %f[0, 0] [8, 16] [1, 1] : tensor<8x16xi8> into tensor<8x64xi8>
  return %ra, %rb : tensor<8x64xi8>, tensor<8x64xi8>
}

// -----

// The same with an empty tensor (two concatenations of one shape whose
// first inputs are written in place): the second gets an empty tensor of
// its own, with an id that keeps CSE from merging the two again.
// CHECK-LABEL: func.func @shared_empty
// CHECK: %[[E1:.+]] = tensor.empty() : tensor<8x32xf32>
// CHECK: tensor.extract_slice %[[E1]][0, 0] [8, 16]
// CHECK: %[[E2:.+]] = tensor.empty() {kiln.distinct_empty = 0 : i64} : tensor<8x32xf32>
// CHECK: tensor.extract_slice %[[E2]][0, 0] [8, 16]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @shared_empty(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>) {
  %e = tensor.empty() : tensor<8x32xf32>
  %s = tensor.extract_slice %e[0, 0] [8, 16] [1, 1] : tensor<8x32xf32> to tensor<8x16xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%s : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %in : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %ra = tensor.insert_slice %a into %e[0, 0] [8, 16] [1, 1] : tensor<8x16xf32> into tensor<8x32xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<8x16xf32>) outs(%s : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %in : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %rb = tensor.insert_slice %b into %e[0, 0] [8, 16] [1, 1] : tensor<8x16xf32> into tensor<8x32xf32>
  return %ra, %rb : tensor<8x32xf32>, tensor<8x32xf32>
}
