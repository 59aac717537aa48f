// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// Scatter, gather_nd, scans and selection (Scatter.cpp, Gather.cpp, Reduce.cpp,
// Select.cpp and Slice.cpp in lib/Conversion/OnnxToKiln/).

// CHECK-LABEL: func.func @scatter_elements
// CHECK-SAME: (%[[D:.+]]: tensor<1x5xf32>, %[[I:.+]]: tensor<1x2xi64>, %[[U:.+]]: tensor<1x2xf32>)
// CHECK: %[[Y:.+]] = kiln.scatter_elements %[[D]], %[[I]], %[[U]] {axis = 1 : i64, reduction = "add"}
// CHECK: return %[[Y]] : tensor<1x5xf32>
module attributes {onnx.opset_import = {ai.onnx = 16 : i64}} {
  func.func @scatter_elements(%d: tensor<1x5xf32>, %i: tensor<1x2xi64>, %u: tensor<1x2xf32>) -> tensor<1x5xf32> {
    %y = "onnx.ScatterElements"(%d, %i, %u) {axis = -1 : i64, reduction = "add"} : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32> loc("s")
    return %y : tensor<1x5xf32>
  }
}

// -----

// The deprecated Scatter is ScatterElements without reduction.
// CHECK-LABEL: func.func @scatter_opset10
// CHECK: kiln.scatter_elements %{{.+}}, %{{.+}}, %{{.+}} {axis = 0 : i64} :
module attributes {onnx.opset_import = {ai.onnx = 10 : i64}} {
  func.func @scatter_opset10(%d: tensor<3x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2x3xf32>) -> tensor<3x3xf32> {
    %y = "onnx.Scatter"(%d, %i, %u) : (tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x3xf32> loc("s")
    return %y : tensor<3x3xf32>
  }
}

// -----

// CHECK-LABEL: func.func @scatter_nd
// CHECK: kiln.scatter_nd %{{.+}}, %{{.+}}, %{{.+}} {reduction = "mul"} : (tensor<4x4x4xf32>, tensor<2x1xi64>, tensor<2x4x4xf32>) -> tensor<4x4x4xf32>
module attributes {onnx.opset_import = {ai.onnx = 16 : i64}} {
  func.func @scatter_nd(%d: tensor<4x4x4xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4x4xf32>) -> tensor<4x4x4xf32> {
    %y = "onnx.ScatterND"(%d, %i, %u) {reduction = "mul"} : (tensor<4x4x4xf32>, tensor<2x1xi64>, tensor<2x4x4xf32>) -> tensor<4x4x4xf32> loc("s")
    return %y : tensor<4x4x4xf32>
  }
}

// -----

// CHECK-LABEL: func.func @gather_nd_batch
// CHECK: kiln.gather_nd %{{.+}}, %{{.+}} {batch_dims = 1 : i64} : (tensor<2x2x2xi32>, tensor<2x1xi64>) -> tensor<2x2xi32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @gather_nd_batch(%d: tensor<2x2x2xi32>, %i: tensor<2x1xi64>) -> tensor<2x2xi32> {
    %y = "onnx.GatherND"(%d, %i) {batch_dims = 1 : i64} : (tensor<2x2x2xi32>, tensor<2x1xi64>) -> tensor<2x2xi32> loc("g")
    return %y : tensor<2x2xi32>
  }
}

// -----

// The axis stays an operand, constant or not.
// CHECK-LABEL: func.func @cumsum
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf64>, %[[A:.+]]: tensor<i32>)
// CHECK: kiln.cumsum %[[X]], %[[A]] {exclusive = true, reverse = true} : (tensor<2x3xf64>, tensor<i32>) -> tensor<2x3xf64>
module attributes {onnx.opset_import = {ai.onnx = 14 : i64}} {
  func.func @cumsum(%x: tensor<2x3xf64>, %a: tensor<i32>) -> tensor<2x3xf64> {
    %y = "onnx.CumSum"(%x, %a) {exclusive = 1 : i64, reverse = 1 : i64} : (tensor<2x3xf64>, tensor<i32>) -> tensor<2x3xf64> loc("c")
    return %y : tensor<2x3xf64>
  }
}

// -----

// CumProd is CumSum's scan with a product.
// CHECK-LABEL: func.func @cumprod
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xi32>)
// CHECK: %[[A:.+]] = kiln.constant dense<-1> : tensor<i64>
// CHECK: kiln.cumprod %[[X]], %[[A]] {exclusive = true} : (tensor<2x3xi32>, tensor<i64>) -> tensor<2x3xi32>
module attributes {onnx.opset_import = {ai.onnx = 26 : i64}} {
  func.func @cumprod(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
    %a = onnx.Initializer "a" dense<-1> : tensor<i64> loc("a")
    %y = "onnx.CumProd"(%x, %a) {exclusive = 1 : i64} : (tensor<2x3xi32>, tensor<i64>) -> tensor<2x3xi32> loc("c")
    return %y : tensor<2x3xi32>
  }
}

// -----

// A constant k; smallest; the negative axis is normalized.
// CHECK-LABEL: func.func @top_k_constant
// CHECK: %[[V:.+]], %[[I:.+]] = kiln.top_k %{{.+}} {axis = 1 : i64, k = 2 : i64, largest = false} : tensor<3x4xf32> -> tensor<3x2xf32>, tensor<3x2xi64>
// CHECK: return %[[V]], %[[I]]
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @top_k_constant(%x: tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
    %k = onnx.Initializer "k" dense<2> : tensor<1xi64> loc("k")
    %v, %i = "onnx.TopK"(%x, %k) {axis = -1 : i64, largest = 0 : i64} : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<3x2xf32>, tensor<3x2xi64>) loc("t")
    return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>
  }
}

// -----

// A run-time k: the declared output shape says k = 3, and a guard checks it.
// CHECK-LABEL: func.func @top_k_declared
// CHECK: kiln.guard %{{.+}} {message = "node 't' (TopK, opset 11): input {{.+}} must be [3]: the k this model was compiled for"}
// CHECK: kiln.top_k %{{.+}} {axis = 1 : i64, k = 3 : i64} :
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @top_k_declared(%x: tensor<3x4xf32>, %k: tensor<1xi64>) -> (tensor<3x3xf32>, tensor<3x3xi64>) {
    %v, %i = "onnx.TopK"(%x, %k) {axis = 1 : i64} : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<3x3xf32>, tensor<3x3xi64>) loc("t")
    return %v, %i : tensor<3x3xf32>, tensor<3x3xi64>
  }
}

// -----

// Hardmax 13: equal(argmax, iota) as the input type.
// CHECK-LABEL: func.func @hardmax13
// CHECK-DAG: %[[IOTA:.+]] = kiln.constant dense<[{{\[}}[0], [1], [2], [3]]]> : tensor<1x4x1xi64>
// CHECK-DAG: %[[AM:.+]] = kiln.arg_max %{{.+}} {axis = 1 : i64} : tensor<3x4x5xf32> -> tensor<3x1x5xi64>
// CHECK: %[[EQ:.+]] = kiln.equal %[[AM]], %[[IOTA]] : (tensor<3x1x5xi64>, tensor<1x4x1xi64>) -> tensor<3x4x5xi1>
// CHECK: kiln.cast %[[EQ]] to f32 : tensor<3x4x5xi1> -> tensor<3x4x5xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @hardmax13(%x: tensor<3x4x5xf32>) -> tensor<3x4x5xf32> {
    %y = "onnx.Hardmax"(%x) {axis = 1 : i64} : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32> loc("h")
    return %y : tensor<3x4x5xf32>
  }
}

// -----

// Hardmax 11 coerces to 2-D at the axis first.
// CHECK-LABEL: func.func @hardmax11
// CHECK: kiln.reshape %{{.+}} : tensor<3x4x5xf32> to tensor<3x20xf32>
// CHECK: kiln.arg_max %{{.+}} {axis = 1 : i64
// CHECK: kiln.reshape %{{.+}} : tensor<3x20xf32> to tensor<3x4x5xf32>
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @hardmax11(%x: tensor<3x4x5xf32>) -> tensor<3x4x5xf32> {
    %y = "onnx.Hardmax"(%x) : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32> loc("h")
    return %y : tensor<3x4x5xf32>
  }
}

// -----

// CHECK-LABEL: func.func @reverse_sequence
// CHECK: kiln.reverse_sequence %{{.+}}, %{{.+}} {batch_axis = 1 : i64, time_axis = 0 : i64}
module attributes {onnx.opset_import = {ai.onnx = 10 : i64}} {
  func.func @reverse_sequence(%x: tensor<4x4xf32>, %l: tensor<4xi64>) -> tensor<4x4xf32> {
    %y = "onnx.ReverseSequence"(%x, %l) {batch_axis = 1 : i64, time_axis = 0 : i64} : (tensor<4x4xf32>, tensor<4xi64>) -> tensor<4x4xf32> loc("r")
    return %y : tensor<4x4xf32>
  }
}

// -----

// CHECK-LABEL: func.func @det
// CHECK: kiln.det %{{.+}} : tensor<3x2x2xf32> -> tensor<3xf32>
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @det(%x: tensor<3x2x2xf32>) -> tensor<3xf32> {
    %y = "onnx.Det"(%x) : (tensor<3x2x2xf32>) -> tensor<3xf32> loc("d")
    return %y : tensor<3xf32>
  }
}

// -----

// A constant condition is a gather of the selected rows; entries past the
// axis are ignored.
// CHECK-LABEL: func.func @compress_constant
// CHECK: %[[IDX:.+]] = kiln.constant dense<[0, 2]> : tensor<2xi64>
// CHECK: kiln.gather %{{.+}}, %[[IDX]] {axis = 0 : i64} : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @compress_constant(%x: tensor<3x2xf32>) -> tensor<2x2xf32> {
    %c = onnx.Initializer "c" dense<[true, false, true, true]> : tensor<4xi1> loc("c")
    %y = "onnx.Compress"(%x, %c) {axis = 0 : i64} : (tensor<3x2xf32>, tensor<4xi1>) -> tensor<2x2xf32> loc("k")
    return %y : tensor<2x2xf32>
  }
}

// -----

// A run-time condition takes the declared shape and guards that it selects
// that many slices; without an axis the input is flattened.
// CHECK-LABEL: func.func @compress_runtime
// CHECK: %[[F:.+]] = kiln.reshape %{{.+}} : tensor<3x2xf32> to tensor<6xf32>
// CHECK: kiln.reduce_sum
// CHECK: kiln.guard %{{.+}} {message = "node 'k' (Compress, opset 11): input {{.+}} must give exactly 2 selected slices: the output shape this model was compiled for"}
// CHECK: kiln.compress %[[F]], %{{.+}} {axis = 0 : i64} : (tensor<6xf32>, tensor<5xi1>) -> tensor<2xf32>
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @compress_runtime(%x: tensor<3x2xf32>, %c: tensor<5xi1>) -> tensor<2xf32> {
    %y = "onnx.Compress"(%x, %c) : (tensor<3x2xf32>, tensor<5xi1>) -> tensor<2xf32> loc("k")
    return %y : tensor<2xf32>
  }
}

// -----

// CHECK-LABEL: func.func @nonzero_constant
// CHECK: kiln.constant dense<{{\[}}[0, 1, 1], [0, 0, 1]]> : tensor<2x3xi64>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @nonzero_constant() -> tensor<2x3xi64> {
    %x = onnx.Initializer "x" dense<[[1.0, 0.0], [2.0, 3.0]]> : tensor<2x2xf32> loc("x")
    %y = "onnx.NonZero"(%x) : (tensor<2x2xf32>) -> tensor<2x3xi64> loc("n")
    return %y : tensor<2x3xi64>
  }
}

// -----

// CHECK-LABEL: func.func @nonzero_runtime
// CHECK: kiln.guard %{{.+}} {message = "node 'n' (NonZero, opset 13): input {{.+}} must give exactly 3 non-zero elements: the output shape this model was compiled for"}
// CHECK: kiln.non_zero %{{.+}} : tensor<2x2xi1> -> tensor<2x3xi64>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @nonzero_runtime(%x: tensor<2x2xi1>) -> tensor<2x3xi64> {
    %y = "onnx.NonZero"(%x) : (tensor<2x2xi1>) -> tensor<2x3xi64> loc("n")
    return %y : tensor<2x3xi64>
  }
}

// -----

// Without a declared shape the count is known at run time: a dynamic
// dimension, bounded by the input's element count (docs/shapes.md).
// CHECK-LABEL: func.func @nonzero_counted
// CHECK-NOT: kiln.guard
// CHECK: kiln.non_zero %{{.+}} : tensor<2x3xf32> -> tensor<2x?xi64>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @nonzero_counted(%x: tensor<2x3xf32>) -> tensor<2x?xi64> {
    %y = "onnx.NonZero"(%x) : (tensor<2x3xf32>) -> tensor<2x?xi64> loc("n")
    return %y : tensor<2x?xi64>
  }
}

// -----

// CHECK-LABEL: func.func @compress_counted
// CHECK-NOT: kiln.guard
// CHECK: kiln.compress %{{.+}}, %{{.+}} {axis = 1 : i64} : (tensor<3x2xf32>, tensor<5xi1>) -> tensor<3x?xf32>
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @compress_counted(%x: tensor<3x2xf32>, %c: tensor<5xi1>) -> tensor<*xf32> {
    %y = "onnx.Compress"(%x, %c) {axis = 1 : i64} : (tensor<3x2xf32>, tensor<5xi1>) -> tensor<*xf32> loc("k")
    return %y : tensor<*xf32>
  }
}

// -----

// A k read from the data: a run-time size, checked against the axis.
// CHECK-LABEL: func.func @top_k_runtime
// CHECK: %[[RAW:.+]] = tensor.extract %{{.+}}[%{{.+}}] : tensor<1xi64>
// CHECK: %[[K:.+]] = arith.index_cast %[[RAW]] : i64 to index
// CHECK: arith.cmpi sge, %[[K]]
// CHECK: arith.cmpi sle, %[[K]]
// CHECK: kiln.guard %{{.+}} {message = "node 't' (TopK, opset 11): input 1 must be in [0, 4] (the size of axis 1)"} : tensor<i1>
// CHECK: kiln.top_k %{{.+}} size %[[K]] {axis = 1 : i64, k = 0 : i64} : tensor<3x4xf32> -> tensor<3x?xf32>, tensor<3x?xi64>
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @top_k_runtime(%x: tensor<3x4xf32>, %k: tensor<1xi64>) -> (tensor<*xf32>, tensor<*xi64>) {
    %v, %i = "onnx.TopK"(%x, %k) : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<*xf32>, tensor<*xi64>) loc("t")
    return %v, %i : tensor<*xf32>, tensor<*xi64>
  }
}

// -----

// The number of distinct values is a run-time size (at most the input's).
// CHECK-LABEL: func.func @unique_counted
// CHECK: kiln.unique %{{.+}} {axis = 0 : i64} : tensor<6xf32> -> tensor<?xf32>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @unique_counted(%x: tensor<6xf32>) -> tensor<*xf32> {
    %y:4 = "onnx.Unique"(%x) : (tensor<6xf32>) -> (tensor<*xf32>, tensor<*xi64>, tensor<*xi64>, tensor<*xi64>) loc("u")
    return %y#0 : tensor<*xf32>
  }
}

// -----

// Unique of a constant: computed at compile time (sorted by default); the
// gather of the unique values folds.
// CHECK-LABEL: func.func @unique_constant
// CHECK-DAG: %[[Y:.+]] = kiln.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-DAG: %[[FIRST:.+]] = kiln.constant dense<[2, 0, 1]> : tensor<3xi64>
// CHECK-DAG: %[[INV:.+]] = kiln.constant dense<[1, 2, 0, 1]> : tensor<4xi64>
// CHECK-DAG: %[[COUNTS:.+]] = kiln.constant dense<[1, 2, 1]> : tensor<3xi64>
// CHECK: return %[[Y]], %[[FIRST]], %[[INV]], %[[COUNTS]] : tensor<3xf32>, tensor<3xi64>, tensor<4xi64>, tensor<3xi64>
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @unique_constant() -> (tensor<*xf32>, tensor<*xi64>, tensor<*xi64>, tensor<*xi64>) {
    %x = onnx.Initializer "x" dense<[2.0, 3.0, 1.0, 2.0]> : tensor<4xf32> loc("x")
    %y:4 = "onnx.Unique"(%x) : (tensor<4xf32>) -> (tensor<*xf32>, tensor<*xi64>, tensor<*xi64>, tensor<*xi64>) loc("u")
    return %y#0, %y#1, %y#2, %y#3 : tensor<*xf32>, tensor<*xi64>, tensor<*xi64>, tensor<*xi64>
  }
}

// -----

// A run-time input: the declared shapes give the number of distinct slices;
// a guard counts the repeated slices (4 - 3 = 1) at run time.
// CHECK-LABEL: func.func @unique_runtime_axis
// CHECK: kiln.guard %{{.+}} {message = "node 'u' (Unique, opset 11): input {{.+}} must give exactly 1 repeated slices: the output shape this model was compiled for"}
// CHECK: kiln.unique %{{.+}} {axis = 1 : i64} : tensor<2x4x2xf32> -> tensor<2x3x2xf32>, tensor<3xi64>, tensor<4xi64>, tensor<3xi64>
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @unique_runtime_axis(%x: tensor<2x4x2xf32>) -> (tensor<2x3x2xf32>, tensor<3xi64>, tensor<4xi64>, tensor<3xi64>) {
    %y:4 = "onnx.Unique"(%x) {axis = -2 : i64, sorted = 1 : i64} : (tensor<2x4x2xf32>) -> (tensor<2x3x2xf32>, tensor<3xi64>, tensor<4xi64>, tensor<3xi64>) loc("u")
    return %y#0, %y#1, %y#2, %y#3 : tensor<2x3x2xf32>, tensor<3xi64>, tensor<4xi64>, tensor<3xi64>
  }
}

// -----

// NonMaxSuppression keeps as many rows as the data gives: a dynamic count.
// CHECK-LABEL: func.func @nms_counted
// CHECK-NOT: kiln.guard
// CHECK: kiln.non_max_suppression %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} score %{{.+}} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> (tensor<?x3xi64>, tensor<i64>)
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @nms_counted(%b: tensor<1x6x4xf32>, %s: tensor<1x2x6xf32>, %m: tensor<1xi64>, %i: tensor<1xf32>, %t: tensor<1xf32>) -> tensor<*xi64> {
    %y = "onnx.NonMaxSuppression"(%b, %s, %m, %i, %t) : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> tensor<*xi64> loc("nms")
    return %y : tensor<*xi64>
  }
}

// -----

// A declared [3, 3] keeps its shape; a guard checks the count. No IoU
// threshold means 0, and no score threshold keeps every score.
// CHECK-LABEL: func.func @nms_declared
// CHECK: %[[Y:.+]], %[[N:.+]] = kiln.non_max_suppression %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : (tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<1xi64>, tensor<f32>) -> (tensor<3x3xi64>, tensor<i64>)
// CHECK: kiln.guard %{{.+}} {message = "node 'nms' (NonMaxSuppression, opset 11): the boxes and scores must keep exactly 3 boxes: the output shape this model was compiled for"}
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @nms_declared(%b: tensor<1x6x4xf32>, %s: tensor<1x1x6xf32>, %m: tensor<1xi64>) -> tensor<3x3xi64> {
    %y = "onnx.NonMaxSuppression"(%b, %s, %m) : (tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<1xi64>) -> tensor<3x3xi64> loc("nms")
    return %y : tensor<3x3xi64>
  }
}

// -----

// Without max_output_boxes_per_class (0 boxes a class) nothing is kept.
// CHECK-LABEL: func.func @nms_no_max
// CHECK-NOT: kiln.non_max_suppression
// CHECK: kiln.constant dense<> : tensor<0x3xi64>
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @nms_no_max(%b: tensor<1x6x4xf32>, %s: tensor<1x1x6xf32>) -> tensor<*xi64> {
    %y = "onnx.NonMaxSuppression"(%b, %s) : (tensor<1x6x4xf32>, tensor<1x1x6xf32>) -> tensor<*xi64> loc("nms")
    return %y : tensor<*xi64>
  }
}

// -----

// TensorScatter-24 (a KV-cache update): present position j of batch b reads
// update position j - w[b] through gather_elements where that is in range
// and the past cache elsewhere; linear mode guards the write indices.
// CHECK-LABEL: func.func @tensor_scatter
// CHECK: kiln.guard {{.+}} {message = "node 'kv' (TensorScatter, opset 24): graph input 'w' (input 2) must be in [0, 5]
// CHECK: kiln.expand {{.+}} : tensor<2x1x8x1xi64> to tensor<2x2x8x4xi64>
// CHECK: kiln.gather_elements {{.+}} {axis = 2 : i64} : (tensor<2x2x3x4xf32>, tensor<2x2x8x4xi64>) -> tensor<2x2x8x4xf32>
// CHECK: kiln.where {{.+}} : (tensor<2x1x8x1xi1>, tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x8x4xf32>
module attributes {onnx.opset_import = {ai.onnx = 24 : i64}} {
  func.func @tensor_scatter(%past: tensor<2x2x8x4xf32> {onnx.name = "past"}, %u: tensor<2x2x3x4xf32> {onnx.name = "u"}, %w: tensor<2xi64> {onnx.name = "w"}) -> tensor<2x2x8x4xf32> {
    %y = "onnx.TensorScatter"(%past, %u, %w) : (tensor<2x2x8x4xf32>, tensor<2x2x3x4xf32>, tensor<2xi64>) -> tensor<2x2x8x4xf32> loc("kv")
    return %y : tensor<2x2x8x4xf32>
  }
}

// -----

// A compress keeps the run-time sizes of its other axes: the rows it kept
// join the input's rows with no run-time check that their lengths agree
// (the result's length is the input's, T, not a size of its own).
// CHECK-LABEL: func.func @compress_keeps_run_time_sizes
// CHECK: %[[K:.+]] = kiln.compress %{{.+}}, %{{.+}} {axis = 0 : i64} : (tensor<?x?xf32>, tensor<?xi1>) -> tensor<?x?xf32>
// CHECK-NOT: kiln.guard
// CHECK: kiln.concat %[[K]], %{{.+}} {axis = 0 : i64}
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @compress_keeps_run_time_sizes(%x: tensor<?x?xf32> {kiln.symbols = array<i64: 0, 1>, onnx.dim_params = ["B", "T"]}, %c: tensor<?xi1> {kiln.symbols = array<i64: 0>, onnx.dim_params = ["B"]}) -> tensor<*xf32> attributes {kiln.symbol_bounds = array<i64: 1, 8, 1, 64>} {
    %k = "onnx.Compress"(%x, %c) {axis = 0 : i64} : (tensor<?x?xf32>, tensor<?xi1>) -> tensor<?x?xf32> loc("k")
    %y = "onnx.Concat"(%k, %x) {axis = 0 : i64} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<*xf32> loc("j")
    return %y : tensor<*xf32>
  }
}
