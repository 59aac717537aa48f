// RUN: kiln-opt %s --pass-pipeline="builtin.module(kiln-cpu-tiling-pipeline,eliminate-empty-tensors,empty-tensor-to-alloc-tensor,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize,cse)" | FileCheck %s

// An elementwise op whose input dies at the op writes its result over that
// input: after tiling, vectorization and bufferization the two ops share one
// buffer, and the second reads and writes it in place, tile by tile.

#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[A:.+]]: memref<64x64xf32>, %[[B:.+]]: memref<64x64xf32>, %[[OUT:.+]]: memref<64x64xf32>)
// CHECK: %[[T:.+]] = memref.alloc() {{.+}} : memref<64x64xf32>
// CHECK-NOT: memref.alloc
// CHECK: scf.for
// CHECK: vector.transfer_read %[[A]]
// CHECK: vector.transfer_write {{.+}}, %{{.+}}
// CHECK: scf.for
// CHECK: %[[TILE:.+]] = memref.subview %[[T]]
// CHECK: vector.transfer_read %[[T]]
// CHECK: vector.transfer_write {{.+}}, %[[TILE]]
// CHECK-NOT: memref.alloc
// CHECK: return
func.func @chain(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %out: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %e0 = tensor.empty() : tensor<64x64xf32>
  %t = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e0 : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.mulf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %e1 = tensor.empty() : tensor<64x64xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%t, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e1 : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<64x64xf32>) outs(%out : tensor<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.negf %x : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}



// A function argument is the caller's: never written in place.
// CHECK-LABEL: func.func @argument_is_not_reused
// CHECK: memref.alloc
func.func @argument_is_not_reused(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %e = tensor.empty() : tensor<64x64xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.negf %x : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// Nor is a reshaped or sliced view of one: the result gets its own buffer,
// and the argument is only read.
// CHECK-LABEL: func.func @reshaped_argument_is_not_reused
// CHECK-SAME: (%[[A:.+]]: memref<64x64xf32>
// CHECK: memref.alloc
// CHECK-NOT: vector.transfer_write {{.+}}, %[[A]]
// CHECK-NOT: vector.transfer_write {{.+}}, %expand_shape
// CHECK: return
func.func @reshaped_argument_is_not_reused(%a: tensor<64x64xf32>) -> tensor<8x8x64xf32> {
  %v = tensor.expand_shape %a [[0, 1], [2]] output_shape [8, 8, 64] : tensor<64x64xf32> into tensor<8x8x64xf32>
  %e = tensor.empty() : tensor<8x8x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v : tensor<8x8x64xf32>) outs(%e : tensor<8x8x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.negf %x : f32
    linalg.yield %s : f32
  } -> tensor<8x8x64xf32>
  return %r : tensor<8x8x64xf32>
}
