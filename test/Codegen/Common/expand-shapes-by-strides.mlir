// RUN: kiln-opt %s --kiln-expand-shapes-by-strides --expand-strided-metadata | FileCheck %s

// A dimension split into two of run-time size (a matmul over a symbolic
// batch and sequence writes [b * t, 64] and reads it as [b, t, 64]) is a
// reinterpret_cast with the strides computed: t * 64, 64, 1.
// expand-strided-metadata alone crashes on the expand_shape.
// CHECK-LABEL: func.func @split
// CHECK: %[[BASE:.+]], %{{.+}}, %{{.+}}:2, %{{.+}}:2 = memref.extract_strided_metadata %arg0
// CHECK: %[[S:.+]] = arith.muli %arg2, %c64 : index
// CHECK: memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%arg1, %arg2, 64], strides: [%[[S]], 64, 1] : memref<f32> to memref<?x?x64xf32>
func.func @split(%m: memref<?x64xf32>, %b: index, %t: index) -> memref<?x?x64xf32> {
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [%b, %t, 64] : memref<?x64xf32> into memref<?x?x64xf32>
  return %e : memref<?x?x64xf32>
}

// An expand with one run-time size per group is left to
// expand-strided-metadata as before.
// CHECK-LABEL: func.func @one_per_group
// CHECK-NOT: arith.muli
// CHECK: memref.reinterpret_cast
func.func @one_per_group(%m: memref<?x64xf32>, %b: index) -> memref<?x4x16xf32> {
  %e = memref.expand_shape %m [[0], [1, 2]] output_shape [%b, 4, 16] : memref<?x64xf32> into memref<?x4x16xf32>
  return %e : memref<?x4x16xf32>
}

// A row of x[:, ::2] of a [2, 2, 128, 16] tensor (a pooling's tile): the
// step makes the second dimension's stride 4096 in the view, the first's
// too. MLIR matches the source's strides (4096, 2048, 16, 1) against the
// view's (4096, 4096, 1) to find the dropped dimension, fails, and
// expand-strided-metadata crashed. Split into a view that keeps every
// dimension and a rank-reducing one of unit strides, it is one cast whose
// strides are the stepped ones with the row's 16 dropped.
// CHECK-LABEL: func.func @stepped_row
// CHECK: memref.reinterpret_cast %{{.+}} to offset: [%{{.+}}], sizes: [1, 1, 6], strides: [4096, 4096, 1] : memref<f32> to memref<1x1x6xf32, strided<[4096, 4096, 1], offset: ?>>
func.func @stepped_row(%x: memref<2x2x128x16xf32>, %b: index, %r: index, %c: index) -> memref<1x1x6xf32, strided<[4096, 4096, 1], offset: ?>> {
  %v = memref.subview %x[%b, 0, %r, %c] [1, 1, 1, 6] [1, 2, 1, 1] : memref<2x2x128x16xf32> to memref<1x1x6xf32, strided<[4096, 4096, 1], offset: ?>>
  return %v : memref<1x1x6xf32, strided<[4096, 4096, 1], offset: ?>>
}
