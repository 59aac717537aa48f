// RUN: kiln-opt %s --split-input-file --kiln-convert-kiln-to-linalg | FileCheck %s

// Scatters, scans and selection become scalar scf.for loops over tensors
// carried as iter_args (one buffer each after bufferization); gathers become
// linalg.generic ops that extract from their input
// (lib/Conversion/KilnToLinalg/LowerIndexing.cpp).

// The data is copied once; each update wraps its index, clamps it, and
// writes the combined value, or the old one when the index was out of range.
// CHECK-LABEL: func.func @scatter_elements_add
// CHECK-SAME: (%[[D:.+]]: tensor<1x5xf32>, %[[I:.+]]: tensor<1x2xi64>, %[[U:.+]]: tensor<1x2xf32>)
// CHECK: %[[COPY:.+]] = linalg.copy ins(%[[D]] : tensor<1x5xf32>)
// CHECK: scf.for %[[A:.+]] = {{.+}} iter_args(%[[T0:.+]] = %[[COPY]])
// CHECK: scf.for %[[B:.+]] = {{.+}} iter_args(%[[T:.+]] = %[[T0]])
// CHECK: %[[IDX:.+]] = tensor.extract %[[I]][%[[A]], %[[B]]]
// CHECK: arith.index_cast %[[IDX]]
// CHECK: %[[UPD:.+]] = tensor.extract %[[U]][%[[A]], %[[B]]]
// CHECK: %[[OLD:.+]] = tensor.extract %[[T]][%[[A]], %[[POS:.+]]]
// CHECK: %[[SUM:.+]] = arith.addf %[[OLD]], %[[UPD]]
// CHECK: %[[NEW:.+]] = arith.select %{{.+}}, %[[SUM]], %[[OLD]]
// CHECK: tensor.insert %[[NEW]] into %[[T]][%[[A]], %[[POS]]]
func.func @scatter_elements_add(%d: tensor<1x5xf32>, %i: tensor<1x2xi64>, %u: tensor<1x2xf32>) -> tensor<1x5xf32> {
  %y = kiln.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "add"} : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32>
  return %y : tensor<1x5xf32>
}

// -----

// Run-time sizes: the loops run over the updates' run-time sizes, the
// copy of the data is sized at run time, and a position outside a run-time
// data dimension is clamped and writes nothing; data with a run-time size
// of 0 is returned as it is (scf.if).
// CHECK-LABEL: func.func @scatter_elements_run_time
// CHECK: %[[COPY:.+]] = linalg.copy ins(%{{.+}} : tensor<?x5xf32>) outs(%{{.+}} : tensor<?x5xf32>)
// CHECK: scf.if
// CHECK: scf.for {{.+}} iter_args(%{{.+}} = %[[COPY]])
// CHECK: arith.minsi
// CHECK: tensor.insert
// CHECK: } else {
// CHECK: scf.yield %[[COPY]]
func.func @scatter_elements_run_time(%d: tensor<?x5xf32>, %i: tensor<?x2xi64>, %u: tensor<?x2xf32>) -> tensor<?x5xf32> {
  %y = kiln.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "none"} : (tensor<?x5xf32>, tensor<?x2xi64>, tensor<?x2xf32>) -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}

// -----

// Data with no element (a static 0 outside the axis): nothing is written,
// whatever the run-time size of the updates; no loop is built.
// CHECK-LABEL: func.func @scatter_elements_empty_data
// CHECK: %[[COPY:.+]] = linalg.copy
// CHECK-NOT: scf.for
// CHECK: return %[[COPY]]
func.func @scatter_elements_empty_data(%d: tensor<0x4xf32>, %i: tensor<?x4xi64>, %u: tensor<?x4xf32>) -> tensor<0x4xf32> {
  %y = kiln.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "none"} : (tensor<0x4xf32>, tensor<?x4xi64>, tensor<?x4xf32>) -> tensor<0x4xf32>
  return %y : tensor<0x4xf32>
}

// -----

// One index tuple per outer iteration, then a loop over the slice.
// CHECK-LABEL: func.func @scatter_nd
// CHECK: linalg.copy
// CHECK: scf.for
// CHECK: tensor.extract %{{.+}}[%{{.+}}, %{{.+}}] : tensor<2x1xi64>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: tensor.insert
func.func @scatter_nd(%d: tensor<4x4x4xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4x4xf32>) -> tensor<4x4x4xf32> {
  %y = kiln.scatter_nd %d, %i, %u {reduction = "mul"} : (tensor<4x4x4xf32>, tensor<2x1xi64>, tensor<2x4x4xf32>) -> tensor<4x4x4xf32>
  return %y : tensor<4x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @gather_nd
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.+}} : tensor<2x2xi32>)
// CHECK: %[[P:.+]] = linalg.index 0 : index
// CHECK: tensor.extract %{{.+}}[%[[P]], %{{.+}}] : tensor<2x1xi64>
// CHECK: arith.minsi
// CHECK: tensor.extract %{{.+}} : tensor<2x2x2xi32>
func.func @gather_nd(%d: tensor<2x2x2xi32>, %i: tensor<2x1xi64>) -> tensor<2x2xi32> {
  %y = kiln.gather_nd %d, %i {batch_dims = 1 : i64} : (tensor<2x2x2xi32>, tensor<2x1xi64>) -> tensor<2x2xi32>
  return %y : tensor<2x2xi32>
}

// -----

// The axis is read from its tensor; the scan walks the flattened input.
// CHECK-LABEL: func.func @cumsum
// CHECK: tensor.extract %{{.+}}[] : tensor<i32>
// CHECK: tensor.collapse_shape
// CHECK: scf.for {{.+}} iter_args
// CHECK: arith.divui
// CHECK: arith.remui
// CHECK: arith.addf
// CHECK: tensor.insert
// CHECK: tensor.expand_shape
func.func @cumsum(%x: tensor<2x3xf64>, %a: tensor<i32>) -> tensor<2x3xf64> {
  %y = kiln.cumsum %x, %a : (tensor<2x3xf64>, tensor<i32>) -> tensor<2x3xf64>
  return %y : tensor<2x3xf64>
}

// -----

// Symbolic sizes: the count, the strides and the axis's size are read with
// tensor.dim; the reversed scan starts at the run-time last element.
// CHECK-LABEL: func.func @cumsum_symbolic
// CHECK-DAG: %[[D0:.+]] = tensor.dim %arg0, %c0 : tensor<?x?xi64>
// CHECK-DAG: %[[D1:.+]] = tensor.dim %arg0, %c1 : tensor<?x?xi64>
// CHECK: %[[TOTAL:.+]] = arith.muli %{{.+}}, %[[D0]] : index
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<?x?xi64> into tensor<?xi64>
// CHECK: tensor.empty(%[[TOTAL]]) : tensor<?xi64>
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %[[TOTAL]]
// CHECK: %[[LAST:.+]] = arith.subi %[[TOTAL]], %{{.+}} : index
// CHECK: arith.subi %[[LAST]], %[[I]] : index
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0, 1]] output_shape [%{{.+}}, %{{.+}}] : tensor<?xi64> into tensor<?x?xi64>
func.func @cumsum_symbolic(%x: tensor<?x?xi64>, %a: tensor<i64>) -> tensor<?x?xi64> {
  %y = kiln.cumsum %x, %a {reverse = true} : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
  return %y : tensor<?x?xi64>
}

// -----

// CumProd multiplies; an exclusive product starts at 1.
// CHECK-LABEL: func.func @cumprod
// CHECK: %[[ONE:.+]] = arith.constant 1 : i32
// CHECK: scf.for {{.+}} iter_args
// CHECK: arith.muli
// CHECK: arith.select %{{.+}}, %[[ONE]], %{{.+}} : i32
func.func @cumprod(%x: tensor<2x3xi32>, %a: tensor<i32>) -> tensor<2x3xi32> {
  %y = kiln.cumprod %x, %a {exclusive = true} : (tensor<2x3xi32>, tensor<i32>) -> tensor<2x3xi32>
  return %y : tensor<2x3xi32>
}

// -----

// Both results come from one loop nest.
// CHECK-LABEL: func.func @top_k
// CHECK: %[[R:.+]]:2 = scf.for
// CHECK: arith.cmpf olt
// CHECK: return %{{.+}}, %{{.+}} : tensor<3x2xf32>, tensor<3x2xi64>
func.func @top_k(%x: tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %v, %i = kiln.top_k %x {k = 2 : i64, axis = 1 : i64, largest = false} : tensor<3x4xf32> -> tensor<3x2xf32>, tensor<3x2xi64>
  return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>
}

// -----

// CHECK-LABEL: func.func @reverse_sequence
// CHECK: linalg.generic
// CHECK: tensor.extract %{{.+}} : tensor<4xi64>
// CHECK: arith.cmpi slt
// CHECK: arith.select
// CHECK: tensor.extract %{{.+}} : tensor<4x4xf32>
func.func @reverse_sequence(%x: tensor<4x4xf32>, %l: tensor<4xi64>) -> tensor<4x4xf32> {
  %y = kiln.reverse_sequence %x, %l {batch_axis = 0 : i64, time_axis = 1 : i64} : (tensor<4x4xf32>, tensor<4xi64>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// Time and batch of run-time size: the generic takes the input's sizes and
// clamps each length to the run-time number of steps.
// CHECK-LABEL: func.func @reverse_sequence_run_time
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x4xf32>, %[[L:.+]]: tensor<?xi64>)
// CHECK: %[[STEPS:.+]] = tensor.dim %[[X]], %c0
// CHECK: %[[T:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<?x?x4xf32>
// CHECK: %[[B:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<?x?x4xf32>
// CHECK: tensor.empty(%[[T]], %[[B]]) : tensor<?x?x4xf32>
// CHECK: linalg.generic
// CHECK: %[[LEN:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK: %[[POS:.+]] = arith.maxsi %[[LEN]], %{{.+}} : index
// CHECK: arith.minsi %[[POS]], %[[STEPS]] : index
func.func @reverse_sequence_run_time(%x: tensor<?x?x4xf32>, %l: tensor<?xi64>) -> tensor<?x?x4xf32> {
  %y = kiln.reverse_sequence %x, %l {batch_axis = 1 : i64, time_axis = 0 : i64} : (tensor<?x?x4xf32>, tensor<?xi64>) -> tensor<?x?x4xf32>
  return %y : tensor<?x?x4xf32>
}

// -----

// CHECK-LABEL: func.func @det
// CHECK: linalg.copy
// CHECK: scf.for
// CHECK: math.absf
// CHECK: arith.negf
// CHECK: arith.divf
// CHECK: arith.subf
func.func @det(%x: tensor<3x2x2xf32>) -> tensor<3xf32> {
  %y = kiln.det %x : tensor<3x2x2xf32> -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @compress
// CHECK: linalg.fill
// CHECK: scf.for {{.+}} iter_args
// CHECK: tensor.extract %{{.+}} : tensor<3xi1>
// CHECK: tensor.insert
func.func @compress(%x: tensor<3x2xf32>, %c: tensor<3xi1>) -> tensor<2x2xf32> {
  %y = kiln.compress %x, %c {axis = 0 : i64} : (tensor<3x2xf32>, tensor<3xi1>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// CHECK-LABEL: func.func @non_zero
// CHECK: scf.for {{.+}} iter_args
// CHECK: arith.cmpi ne
// CHECK: tensor.insert
func.func @non_zero(%x: tensor<2x2xi1>) -> tensor<2x3xi64> {
  %y = kiln.non_zero %x : tensor<2x2xi1> -> tensor<2x3xi64>
  return %y : tensor<2x3xi64>
}

// -----

// Slices compare in a loop nest; all four results come from one loop.
// CHECK-LABEL: func.func @unique
// CHECK: scf.for
// CHECK: arith.cmpf olt
// CHECK: %{{.+}}:4 = scf.for
// CHECK: return %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<4xf32>, tensor<4xi64>, tensor<6xi64>, tensor<4xi64>
func.func @unique(%x: tensor<6xf32>) -> (tensor<4xf32>, tensor<4xi64>, tensor<6xi64>, tensor<4xi64>) {
  %y, %i, %v, %c = kiln.unique %x {axis = 0 : i64, sorted = false} : tensor<6xf32> -> tensor<4xf32>, tensor<4xi64>, tensor<6xi64>, tensor<4xi64>
  return %y, %i, %v, %c : tensor<4xf32>, tensor<4xi64>, tensor<6xi64>, tensor<4xi64>
}

// -----

// A count known only at run time: one loop nest counts, the result is that
// long (clamped to the element count, which bounds it for the arena), and a
// second nest writes each non-zero element's coordinates.
// CHECK-LABEL: func.func @non_zero_counted
// CHECK: %[[N:.+]] = tensor.dim %{{.+}}, %{{.+}} : tensor<?x3xf32>
// CHECK: %[[TOTAL:.+]] = arith.muli %{{.+}}, %c3 : index
// CHECK: %[[COUNT:.+]] = scf.for %{{.+}} = %{{.+}} to %[[N]]
// CHECK: arith.cmpf une
// CHECK: %[[CLAMPED:.+]] = arith.minui %[[COUNT]], %[[TOTAL]] : index
// CHECK: tensor.empty(%[[CLAMPED]]) : tensor<2x?xi64>
// CHECK: scf.if
// CHECK-COUNT-2: tensor.insert
func.func @non_zero_counted(%x: tensor<?x3xf32>) -> tensor<2x?xi64> {
  %y = kiln.non_zero %x : tensor<?x3xf32> -> tensor<2x?xi64>
  return %y : tensor<2x?xi64>
}

// -----

// CHECK-LABEL: func.func @compress_counted
// CHECK: %[[LEN:.+]] = tensor.dim %{{.+}}, %{{.+}} : tensor<?xi1>
// CHECK: %[[STEPS:.+]] = arith.minui %{{.+}}, %[[LEN]] : index
// CHECK: %[[COUNT:.+]] = scf.for
// CHECK: %[[CLAMPED:.+]] = arith.minui %[[COUNT]], %[[STEPS]] : index
// CHECK: tensor.empty(%[[CLAMPED]]) : tensor<?x2xf32>
// CHECK: scf.if
func.func @compress_counted(%x: tensor<3x2xf32>, %c: tensor<?xi1>) -> tensor<?x2xf32> {
  %y = kiln.compress %x, %c {axis = 0 : i64} : (tensor<3x2xf32>, tensor<?xi1>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// Rows of indices known at run time: the result is as long as the indices.
// CHECK-LABEL: func.func @gather_nd_counted
// CHECK: %[[ROWS:.+]] = tensor.dim %{{.+}}, %{{.+}} : tensor<?x2xi64>
// CHECK: tensor.empty(%[[ROWS]]) : tensor<?xf32>
// CHECK: linalg.generic
func.func @gather_nd_counted(%x: tensor<4x6xf32>, %i: tensor<?x2xi64>) -> tensor<?xf32> {
  %y = kiln.gather_nd %x, %i {batch_dims = 0 : i64} : (tensor<4x6xf32>, tensor<?x2xi64>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

// A run-time k: the lists are k long (clamped to the axis, which bounds
// them), and a k of 0 visits no element.
// CHECK-LABEL: func.func @top_k_size
// CHECK: %[[K:.+]] = arith.minui %{{.+}}, %c10 : index
// CHECK: tensor.empty(%[[K]]) : tensor<3x?x1xf32>
// CHECK: tensor.empty(%[[K]]) : tensor<3x?x1xi64>
// CHECK: arith.cmpi eq, %[[K]]
// CHECK: return %{{.+}}, %{{.+}} : tensor<3x?xf32>, tensor<3x?xi64>
func.func @top_k_size(%x: tensor<3x10xf32>, %k: index) -> (tensor<3x?xf32>, tensor<3x?xi64>) {
  %v, %i = kiln.top_k %x size %k {axis = 1 : i64, k = 0 : i64} : tensor<3x10xf32> -> tensor<3x?xf32>, tensor<3x?xi64>
  return %v, %i : tensor<3x?xf32>, tensor<3x?xi64>
}

// -----

// A run-time number of distinct values: lists with room for every slice,
// cut to the count of slices that are their own first occurrence.
// CHECK-LABEL: func.func @unique_counted
// CHECK: tensor.empty() : tensor<1x6x1xf32>
// CHECK: %[[M:.+]] = arith.minui %{{.+}}, %{{.+}} : index
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 0] [1, %[[M]], 1] [1, 1, 1] : tensor<1x6x1xf32> to tensor<1x?x1xf32>
// CHECK: tensor.extract_slice %{{.+}}[0] [%[[M]]] [1] : tensor<6xi64> to tensor<?xi64>
func.func @unique_counted(%x: tensor<6xf32>) -> (tensor<?xf32>, tensor<?xi64>) {
  %values, %indices, %inverse, %counts = kiln.unique %x {axis = 0 : i64} : tensor<6xf32> -> tensor<?xf32>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>
  return %values, %counts : tensor<?xf32>, tensor<?xi64>
}

// -----

// Non-maximum suppression: the rows go to a tensor at the op's bound
// (2 batches * 3 classes * min(50 boxes, max 10) = 60); per class a heap of
// the boxes passing the score threshold (built and taken from with
// scf.while sift-downs) gives them best first; the result is the first
// `count` rows, the count clamped to the bound.
// CHECK-LABEL: func.func @non_max_suppression
// CHECK: %[[STEPS:.+]] = arith.minui %{{.+}}, %c50 : index
// CHECK: tensor.empty() : tensor<60x3xi64>
// CHECK: tensor.empty() : tensor<50xi64>
// The kept boxes' extents and areas, a row each, read contiguously by the
// comparison with every kept box and written once a box is taken.
// CHECK: tensor.empty() : tensor<5x50xf32>
// CHECK: scf.for
// CHECK: arith.cmpf ogt
// CHECK: scf.while
// CHECK: scf.while
// CHECK: arith.cmpi ult, %{{.+}}, %[[STEPS]] : index
// CHECK: scf.for
// CHECK-COUNT-5: tensor.extract %{{.+}}[%{{.+}}, %{{.+}}] : tensor<5x50xf32>
// CHECK: scf.yield
// CHECK-COUNT-5: tensor.insert %{{.+}} into %{{.+}}[%{{.+}}, %{{.+}}] : tensor<5x50xf32>
// CHECK: %[[COUNT:.+]] = arith.minui %{{.+}}, %c60 : index
// CHECK: tensor.extract_slice %{{.+}}[0, 0] [%[[COUNT]], 3] [1, 1] : tensor<60x3xi64> to tensor<?x3xi64>
func.func @non_max_suppression(%b: tensor<2x50x4xf32>, %s: tensor<2x3x50xf32>, %t: tensor<f32>) -> tensor<?x3xi64> {
  %m = kiln.constant dense<10> : tensor<1xi64>
  %iou = kiln.constant dense<0.5> : tensor<f32>
  %y, %n = kiln.non_max_suppression %b, %s, %m, %iou score %t {center_point_box = true} : (tensor<2x50x4xf32>, tensor<2x3x50xf32>, tensor<1xi64>, tensor<f32>, tensor<f32>) -> (tensor<?x3xi64>, tensor<i64>)
  return %y : tensor<?x3xi64>
}

// -----

// Constant indices (a Resize's source rows) are read in the body at the
// loop index of the gathered axis, not passed as an operand: a tile of one
// row then reads one index and the row as vectors.
// CHECK-LABEL: func.func @gather_constant_indices
// CHECK: %[[IDX:.+]] = arith.constant dense<[0, 0, 1, 2]> : tensor<4xi64>
// CHECK: linalg.generic {indexing_maps = [#{{[a-z0-9]+}}], iterator_types = [{{.+}}]} outs(%{{.+}} : tensor<1x4x3x16xf32>)
// CHECK: %[[H:.+]] = linalg.index 1 : index
// CHECK: %[[I:.+]] = tensor.extract %[[IDX]][%[[H]]] : tensor<4xi64>
// CHECK: arith.index_cast %[[I]]
// CHECK: arith.minsi
// CHECK: tensor.extract %{{.+}} : tensor<1x3x3x16xf32>
func.func @gather_constant_indices(%x: tensor<1x3x3x16xf32>) -> tensor<1x4x3x16xf32> {
  %i = kiln.constant dense<[0, 0, 1, 2]> : tensor<4xi64>
  %y = kiln.gather %x, %i {axis = 1 : i64} : (tensor<1x3x3x16xf32>, tensor<4xi64>) -> tensor<1x4x3x16xf32>
  return %y : tensor<1x4x3x16xf32>
}
