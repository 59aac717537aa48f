// RUN: kiln-opt %s --kiln-bind-symbolic-shapes | FileCheck %s

// The symbol (seq, 1..100) comes from the trailing dims argument, bounded by
// affine.min; the dynamic input and output become 800-byte buffers (2 x 100
// floats) viewed at the run-time size; the outputs' shapes are stored after
// the symbol; the static output is an output argument of its own type. A
// returned allocation becomes the output itself: no copy.
// CHECK: #[[MIN:.*]] = affine_map<()[s0] -> (s0, 100)>
// CHECK-LABEL: func.func @main_graph(
// CHECK-SAME: %[[X:.*]]: memref<800xi8> {onnx.name = "x"}, %[[Y:.*]]: memref<800xi8> {onnx.name = "y"}, %[[Z:.*]]: memref<3xf32> {onnx.name = "z"}, %[[D:.*]]: memref<4xi64> {kiln.dims})
// CHECK-SAME: kiln.output_bounds = array<i64: 2, 100, 3>, kiln.output_symbols = array<i64: -1, 0, -1>
// CHECK: %[[RAW:.*]] = memref.load %[[D]][%{{.*}}] : memref<4xi64>
// CHECK: %[[N:.*]] = arith.index_cast %[[RAW]]
// CHECK: %[[S:.*]] = affine.min #[[MIN]]()[%[[N]]]
// CHECK: %[[IN:.*]] = memref.view %[[X]][%{{.*}}][%[[S]]] : memref<800xi8> to memref<2x?xf32>
// CHECK: %[[OUT:.*]] = memref.view %[[Y]]
// CHECK: linalg.copy ins(%[[IN]] : memref<2x?xf32>) outs(%[[OUT]] : memref<2x?xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: memref.store %{{.*}}, %[[D]]
// CHECK: return
// CHECK-NOT: kiln.symbols
func.func @main_graph(%x: memref<2x?xf32> {kiln.symbols = array<i64: -1, 0>, onnx.name = "x"}) -> (memref<2x?xf32> {onnx.name = "y"}, memref<3xf32> {onnx.name = "z"}) attributes {kiln.symbol_bounds = array<i64: 1, 100>} {
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c1 : memref<2x?xf32>
  %y = memref.alloc(%n) : memref<2x?xf32>
  linalg.copy ins(%x : memref<2x?xf32>) outs(%y : memref<2x?xf32>)
  %z = memref.alloc() : memref<3xf32>
  return %y, %z : memref<2x?xf32>, memref<3xf32>
}

// A returned value that is not an allocation of the function (here the
// input itself) is copied into the output at its run-time sizes; an output
// whose size only bounds it (the slice is at most 50 long) is marked -2.
// CHECK-LABEL: func.func @forwarded(
// CHECK-SAME: %{{.*}}: memref<400xi8>, %[[Y:.*]]: memref<200xi8>, %{{.*}}: memref<2xi64> {kiln.dims})
// CHECK-SAME: kiln.output_bounds = array<i64: 50>, kiln.output_symbols = array<i64: -2>
// CHECK: %[[OUT:.*]] = memref.view %[[Y]]
// CHECK: memref.copy %{{.*}}, %[[OUT]]
func.func @forwarded(%x: memref<?xf32> {kiln.symbols = array<i64: 0>}) -> memref<?xf32> attributes {kiln.symbol_bounds = array<i64: 1, 100>} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %h = arith.divui %n, %c2 : index
  %s = memref.subview %x[0] [%h] [1] : memref<?xf32> to memref<?xf32, strided<[1]>>
  %c = memref.cast %s : memref<?xf32, strided<[1]>> to memref<?xf32>
  return %c : memref<?xf32>
}

// An output collapsed from its kernel's panels ([batch, 2, 32] -> [batch,
// 64], as an AVX2 matmul leaves it) keeps its batch symbol: a collapsed
// dimension made of one source dimension is that dimension. The other
// output merges two run-time dimensions: no one symbol, -2.
// CHECK-LABEL: func.func @collapsed_panels(
// CHECK-SAME: kiln.output_bounds = array<i64: 4, 64, 16>, kiln.output_symbols = array<i64: 0, -1, -2>
func.func @collapsed_panels(%x: memref<?x?xf32> {kiln.symbols = array<i64: 0, 0>}) -> (memref<?x64xf32>, memref<?xf32>) attributes {kiln.symbol_bounds = array<i64: 1, 4>} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %p = memref.alloc(%n) : memref<?x2x32xf32>
  %y = memref.collapse_shape %p [[0], [1, 2]] : memref<?x2x32xf32> into memref<?x64xf32>
  %q = memref.alloc(%n, %n) : memref<?x?xf32>
  %z = memref.collapse_shape %q [[0, 1]] : memref<?x?xf32> into memref<?xf32>
  return %y, %z : memref<?x64xf32>, memref<?xf32>
}

// A function without kiln.symbol_bounds is left as it is.
// CHECK-LABEL: func.func @static_graph(%{{.*}}: memref<3xf32>) -> memref<3xf32>
func.func @static_graph(%x: memref<3xf32>) -> memref<3xf32> {
  return %x : memref<3xf32>
}

// A size that subtracts another (a product minus a window's output, as the
// views of a 3-D pooling give) is bounded by interval arithmetic: at most
// 3 * 10 minus the least value of a dimension, 0 (it was "no upper bound").
// CHECK-LABEL: func.func @difference(
// CHECK-SAME: kiln.output_bounds = array<i64: 30>
func.func @difference(%x: memref<?x?xf32> {kiln.symbols = array<i64: 0, 1>}) -> memref<?xf32> attributes {kiln.symbol_bounds = array<i64: 1, 10, 2, 4>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  %d = affine.apply affine_map<()[s0, s1] -> (s0 * 3 - s1)>()[%n, %m]
  %y = memref.alloc(%d) : memref<?xf32>
  return %y : memref<?xf32>
}
