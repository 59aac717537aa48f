// RUN: kiln-opt %s --split-input-file --kiln-convert-kiln-to-linalg | FileCheck %s

// Ops whose run-time sizes are operands (docs/shapes.md, "Shapes the graph
// computes"). A reshape that splits or merges groups of dimensions with one
// run-time size each is one expand_shape or collapse_shape by those groups
// (never through a 1-D view, which would split one dimension into two of
// run-time size).
// CHECK-LABEL: func.func @heads
// CHECK: tensor.expand_shape %arg0 {{\[}}[0], [1], [2, 3]] output_shape [%arg1, %arg2, 4, 16] : tensor<?x?x64xf32> into tensor<?x?x4x16xf32>
func.func @heads(%x: tensor<?x?x64xf32>, %b: index, %t: index) -> tensor<?x?x4x16xf32> {
  %y = kiln.sized_reshape %x [%b, %t] : tensor<?x?x64xf32> to tensor<?x?x4x16xf32>
  return %y : tensor<?x?x4x16xf32>
}

// -----

// CHECK-LABEL: func.func @merge
// CHECK: tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<?x?x4x16xf32> into tensor<?x?x64xf32>
func.func @merge(%x: tensor<?x?x4x16xf32>, %b: index, %t: index) -> tensor<?x?x64xf32> {
  %y = kiln.sized_reshape %x [%b, %t] : tensor<?x?x4x16xf32> to tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Broadcast of a static-1 dimension to a run-time size: the generic's
// result is sized by the operand.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @expand
// CHECK: tensor.empty(%arg1, %arg2) : tensor<?x?xi64>
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #{{.+}}]
func.func @expand(%x: tensor<1x?xi64>, %b: index, %t: index) -> tensor<?x?xi64> {
  %y = kiln.sized_expand %x [%b, %t] : tensor<1x?xi64> to tensor<?x?xi64>
  return %y : tensor<?x?xi64>
}

// -----

// A slice with run-time offsets and sizes; the static result dimension
// keeps its constant size.
// CHECK-LABEL: func.func @slice
// CHECK: tensor.extract_slice %arg0[0, %arg1] [1, %arg2] [1, 1] : tensor<1x512xi64> to tensor<1x?xi64>
func.func @slice(%x: tensor<1x512xi64>, %o: index, %n: index) -> tensor<1x?xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %y = kiln.sized_slice %x offsets(%c0, %o) sizes(%c1, %n) {strides = array<i64: 1, 1>} : tensor<1x512xi64> -> tensor<1x?xi64>
  return %y : tensor<1x?xi64>
}

// -----

// Shape of a tensor with a symbolic dimension, as data.
// CHECK-LABEL: func.func @shape_of
// CHECK: %[[D:.+]] = tensor.dim %arg0, %c1 : tensor<2x?x8xf32>
// CHECK: %[[I:.+]] = arith.index_cast %[[D]] : index to i64
// CHECK: tensor.from_elements %{{.+}}, %[[I]] : tensor<2xi64>
func.func @shape_of(%x: tensor<2x?x8xf32>) -> tensor<2xi64> {
  %s = kiln.shape_of %x {start = 0 : i64, end = 2 : i64} : tensor<2x?x8xf32> -> tensor<2xi64>
  return %s : tensor<2xi64>
}

// -----

// A reversed slice (negative stride) reads offset + i * stride in a generic;
// tensor.extract_slice takes positive strides only.
// CHECK-LABEL: func.func @reversed
// CHECK: tensor.empty(%arg2) : tensor<2x?xf32>
// CHECK: linalg.generic
// CHECK: %[[I:.+]] = linalg.index 1 : index
// CHECK: %[[STEP:.+]] = arith.muli %[[I]], %c-2 : index
// CHECK: %[[AT:.+]] = arith.addi %arg1, %[[STEP]] : index
// CHECK: tensor.extract %arg0[%{{.+}}, %[[AT]]] : tensor<2x?xf32>
func.func @reversed(%x: tensor<2x?xf32>, %start: index, %n: index) -> tensor<2x?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %y = kiln.sized_slice %x offsets(%c0, %start) sizes(%c2, %n) {strides = array<i64: 1, -2>} : tensor<2x?xf32> -> tensor<2x?xf32>
  return %y : tensor<2x?xf32>
}
