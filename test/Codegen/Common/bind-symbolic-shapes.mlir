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

// A size through a long chain of ops that share their operands, as a
// reshape in each of a network's blocks makes one (EfficientNet-B0's batch
// at its classifier went through 16 squeeze-excitation blocks and past the
// 64 ops a size was traced through): 40 levels of (s + s) / 2, 80 ops deep,
// each naming its operand twice. Each value's range is found once (the
// walk would otherwise take 2^40 steps), and the output is bounded by the
// batch's 4.
// CHECK-LABEL: func.func @long_size_chain(
// CHECK-SAME: kiln.output_bounds = array<i64: 4, 8>
func.func @long_size_chain(%x: memref<?x8xf32> {kiln.symbols = array<i64: 0, -1>}) -> memref<?x8xf32> attributes {kiln.symbol_bounds = array<i64: 1, 4>} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %s0 = memref.dim %x, %c0 : memref<?x8xf32>
  %t0 = arith.addi %s0, %s0 : index
  %s1 = arith.divui %t0, %c2 : index
  %t1 = arith.addi %s1, %s1 : index
  %s2 = arith.divui %t1, %c2 : index
  %t2 = arith.addi %s2, %s2 : index
  %s3 = arith.divui %t2, %c2 : index
  %t3 = arith.addi %s3, %s3 : index
  %s4 = arith.divui %t3, %c2 : index
  %t4 = arith.addi %s4, %s4 : index
  %s5 = arith.divui %t4, %c2 : index
  %t5 = arith.addi %s5, %s5 : index
  %s6 = arith.divui %t5, %c2 : index
  %t6 = arith.addi %s6, %s6 : index
  %s7 = arith.divui %t6, %c2 : index
  %t7 = arith.addi %s7, %s7 : index
  %s8 = arith.divui %t7, %c2 : index
  %t8 = arith.addi %s8, %s8 : index
  %s9 = arith.divui %t8, %c2 : index
  %t9 = arith.addi %s9, %s9 : index
  %s10 = arith.divui %t9, %c2 : index
  %t10 = arith.addi %s10, %s10 : index
  %s11 = arith.divui %t10, %c2 : index
  %t11 = arith.addi %s11, %s11 : index
  %s12 = arith.divui %t11, %c2 : index
  %t12 = arith.addi %s12, %s12 : index
  %s13 = arith.divui %t12, %c2 : index
  %t13 = arith.addi %s13, %s13 : index
  %s14 = arith.divui %t13, %c2 : index
  %t14 = arith.addi %s14, %s14 : index
  %s15 = arith.divui %t14, %c2 : index
  %t15 = arith.addi %s15, %s15 : index
  %s16 = arith.divui %t15, %c2 : index
  %t16 = arith.addi %s16, %s16 : index
  %s17 = arith.divui %t16, %c2 : index
  %t17 = arith.addi %s17, %s17 : index
  %s18 = arith.divui %t17, %c2 : index
  %t18 = arith.addi %s18, %s18 : index
  %s19 = arith.divui %t18, %c2 : index
  %t19 = arith.addi %s19, %s19 : index
  %s20 = arith.divui %t19, %c2 : index
  %t20 = arith.addi %s20, %s20 : index
  %s21 = arith.divui %t20, %c2 : index
  %t21 = arith.addi %s21, %s21 : index
  %s22 = arith.divui %t21, %c2 : index
  %t22 = arith.addi %s22, %s22 : index
  %s23 = arith.divui %t22, %c2 : index
  %t23 = arith.addi %s23, %s23 : index
  %s24 = arith.divui %t23, %c2 : index
  %t24 = arith.addi %s24, %s24 : index
  %s25 = arith.divui %t24, %c2 : index
  %t25 = arith.addi %s25, %s25 : index
  %s26 = arith.divui %t25, %c2 : index
  %t26 = arith.addi %s26, %s26 : index
  %s27 = arith.divui %t26, %c2 : index
  %t27 = arith.addi %s27, %s27 : index
  %s28 = arith.divui %t27, %c2 : index
  %t28 = arith.addi %s28, %s28 : index
  %s29 = arith.divui %t28, %c2 : index
  %t29 = arith.addi %s29, %s29 : index
  %s30 = arith.divui %t29, %c2 : index
  %t30 = arith.addi %s30, %s30 : index
  %s31 = arith.divui %t30, %c2 : index
  %t31 = arith.addi %s31, %s31 : index
  %s32 = arith.divui %t31, %c2 : index
  %t32 = arith.addi %s32, %s32 : index
  %s33 = arith.divui %t32, %c2 : index
  %t33 = arith.addi %s33, %s33 : index
  %s34 = arith.divui %t33, %c2 : index
  %t34 = arith.addi %s34, %s34 : index
  %s35 = arith.divui %t34, %c2 : index
  %t35 = arith.addi %s35, %s35 : index
  %s36 = arith.divui %t35, %c2 : index
  %t36 = arith.addi %s36, %s36 : index
  %s37 = arith.divui %t36, %c2 : index
  %t37 = arith.addi %s37, %s37 : index
  %s38 = arith.divui %t37, %c2 : index
  %t38 = arith.addi %s38, %s38 : index
  %s39 = arith.divui %t38, %c2 : index
  %t39 = arith.addi %s39, %s39 : index
  %s40 = arith.divui %t39, %c2 : index
  %y = memref.alloc(%s40) : memref<?x8xf32>
  linalg.copy ins(%x : memref<?x8xf32>) outs(%y : memref<?x8xf32>)
  return %y : memref<?x8xf32>
}
