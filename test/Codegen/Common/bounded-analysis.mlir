// RUN: kiln-opt %s --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s

// Kiln's ValueBounds models of scf.for and scf.if and subset models of tensor
// slices (BoundedAnalysis.cpp) answer bufferization's questions in bounded
// time. They must still prove what tiled code needs: the same slice spelled
// two ways, and a loop that writes into its iter_arg keeping its size, are
// written in place; slices that differ are not.

// CHECK-LABEL: func.func @equal_offsets
// CHECK-NOT: memref.alloc
// Same slice, offsets spelled differently: proven equal, written in place.
func.func @equal_offsets(%t: tensor<64xf32>, %i: index, %f: f32) -> tensor<64xf32> {
  %o = affine.apply affine_map<(d0) -> (d0 * 8)>(%i)
  %o2 = affine.apply affine_map<(d0) -> (d0 * 4 + d0 * 4)>(%i)
  %s = tensor.extract_slice %t[%o] [8] [1] : tensor<64xf32> to tensor<8xf32>
  %w = linalg.fill ins(%f : f32) outs(%s : tensor<8xf32>) -> tensor<8xf32>
  %u = tensor.insert_slice %w into %t[%o2] [8] [1] : tensor<8xf32> into tensor<64xf32>
  return %u : tensor<64xf32>
}
// CHECK-LABEL: func.func @after_loop
// CHECK-NOT: memref.alloc
// A loop whose iter_arg is the destination keeps its size: the slice of the
// loop's result and the slice written after it are the same.
func.func @after_loop(%t: tensor<?xf32>, %n: index, %f: f32) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %t) -> tensor<?xf32> {
    %u = tensor.insert %f into %a[%i] : tensor<?xf32>
    scf.yield %u : tensor<?xf32>
  }
  %d = tensor.dim %t, %c0 : tensor<?xf32>
  %d2 = tensor.dim %r, %c0 : tensor<?xf32>
  %s = tensor.extract_slice %r[0] [%d] [1] : tensor<?xf32> to tensor<?xf32>
  %w = linalg.fill ins(%f : f32) outs(%s : tensor<?xf32>) -> tensor<?xf32>
  %v = tensor.insert_slice %w into %r[0] [%d2] [1] : tensor<?xf32> into tensor<?xf32>
  return %v : tensor<?xf32>
}
// CHECK-LABEL: func.func @other_offsets
// CHECK: memref.alloc
// Different offsets: not the same slice, so the fill needs its own buffer.
func.func @other_offsets(%t: tensor<64xf32>, %i: index, %f: f32) -> (tensor<64xf32>, tensor<8xf32>) {
  %o = affine.apply affine_map<(d0) -> (d0 * 8)>(%i)
  %o2 = affine.apply affine_map<(d0) -> (d0 * 8 + 1)>(%i)
  %s = tensor.extract_slice %t[%o] [8] [1] : tensor<64xf32> to tensor<8xf32>
  %w = linalg.fill ins(%f : f32) outs(%s : tensor<8xf32>) -> tensor<8xf32>
  %u = tensor.insert_slice %w into %t[%o2] [8] [1] : tensor<8xf32> into tensor<64xf32>
  return %u, %s : tensor<64xf32>, tensor<8xf32>
}
