// RUN: kiln-opt %s --kiln-bind-symbolic-shapes | FileCheck %s

// The symbol (seq, 1..100) comes from the trailing dims argument, bounded by
// affine.min; the dynamic input and output become 800-byte buffers (2 x 100
// floats) viewed at the run-time size; the outputs' shapes are stored after
// the symbol; the static output is an output argument of its own type.
// CHECK: #[[MIN:.*]] = affine_map<()[s0] -> (s0, 100)>
// CHECK-LABEL: func.func @main_graph(
// CHECK-SAME: %[[X:.*]]: memref<800xi8> {onnx.name = "x"}, %[[Y:.*]]: memref<800xi8> {onnx.name = "y"}, %[[Z:.*]]: memref<3xf32> {onnx.name = "z"}, %[[D:.*]]: memref<4xi64> {kiln.dims})
// CHECK-SAME: kiln.output_bounds = array<i64: 2, 100, 3>, kiln.output_symbols = array<i64: -1, 0, -1>
// CHECK: %[[RAW:.*]] = memref.load %[[D]][%{{.*}}] : memref<4xi64>
// CHECK: %[[N:.*]] = arith.index_cast %[[RAW]]
// CHECK: %[[S:.*]] = affine.min #[[MIN]]()[%[[N]]]
// CHECK: memref.view %[[X]][%{{.*}}][%[[S]]] : memref<800xi8> to memref<2x?xf32>
// CHECK: %[[OUT:.*]] = memref.view %[[Y]]
// CHECK: memref.copy %{{.*}}, %[[OUT]]
// CHECK: memref.store %{{.*}}, %[[D]]
// CHECK: memref.copy %{{.*}}, %[[Z]] : memref<3xf32> to memref<3xf32>
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

// A function without kiln.symbol_bounds is left as it is.
// CHECK-LABEL: func.func @static_graph(%{{.*}}: memref<3xf32>) -> memref<3xf32>
func.func @static_graph(%x: memref<3xf32>) -> memref<3xf32> {
  return %x : memref<3xf32>
}
