// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// A real forward DFT of length 4 along axis 1 is two matmuls of the [rows, n]
// signal with constant cosine / negated sine matrices; real and imaginary
// parts are stacked last.

// CHECK-LABEL: func.func @dft_real
// CHECK-DAG: %[[COS:.+]] = kiln.constant dense<{{\[\[}}1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00]
// CHECK: kiln.matmul %{{.+}}, %[[COS]] : (tensor<3x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>
// CHECK: kiln.matmul {{.+}} -> tensor<3x4xf32>
// CHECK: kiln.concat {{.+}} {axis = 2 : i64} : {{.+}} -> tensor<3x4x2xf32>
module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
  func.func @dft_real(%x: tensor<3x4x1xf32>) -> tensor<*xf32> {
    %y = "onnx.DFT"(%x) {axis = 1 : si64} : (tensor<3x4x1xf32>) -> tensor<*xf32> loc("dft")
    return %y : tensor<*xf32>
  }
}

// -----

// onesided keeps n / 2 + 1 frequencies; a complex input needs four matmuls.

// CHECK-LABEL: func.func @dft_onesided
// CHECK: kiln.matmul {{.+}} -> tensor<2x5xf32>
// CHECK: -> tensor<2x5x2xf32>
// CHECK-LABEL: func.func @dft_complex_inverse
// CHECK-COUNT-4: kiln.matmul
// CHECK: -> tensor<2x6x2xf32>
module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
  func.func @dft_onesided(%x: tensor<2x8x1xf32>) -> tensor<*xf32> {
    %y = "onnx.DFT"(%x) {axis = 1 : si64, onesided = 1 : si64} : (tensor<2x8x1xf32>) -> tensor<*xf32> loc("dft")
    return %y : tensor<*xf32>
  }
  func.func @dft_complex_inverse(%x: tensor<2x6x2xf32>) -> tensor<*xf32> {
    %y = "onnx.DFT"(%x) {axis = 1 : si64, inverse = 1 : si64} : (tensor<2x6x2xf32>) -> tensor<*xf32> loc("dft")
    return %y : tensor<*xf32>
  }
}

// -----

// TfIdfVectorizer: bigrams with skips 0 and 1 compare shifted token windows
// with the pool, count over the starts and place the counts in the output
// columns with a constant matrix.

// CHECK-LABEL: func.func @tfidf
// CHECK: kiln.equal {{.+}} : (tensor<2x1x5xi64>, tensor<1x2x1xi64>) -> tensor<2x2x5xi1>
// CHECK: kiln.and
// CHECK: kiln.reduce_sum {{.+}} -> tensor<2x2xf32>
// CHECK: kiln.equal {{.+}} : (tensor<2x1x4xi64>, tensor<1x2x1xi64>) -> tensor<2x2x4xi1>
// CHECK: kiln.add
// CHECK: kiln.matmul {{.+}} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
module attributes {onnx.opset_import = {ai.onnx = 9 : i64}} {
  func.func @tfidf(%x: tensor<2x6xi64>) -> tensor<*xf32> {
    %y = "onnx.TfIdfVectorizer"(%x) {mode = "TF", min_gram_length = 1 : si64, max_gram_length = 2 : si64, max_skip_count = 1 : si64, ngram_counts = [0 : si64, 1 : si64], ngram_indexes = [2 : si64, 0 : si64, 1 : si64], pool_int64s = [7 : si64, 1 : si64, 2 : si64, 3 : si64, 4 : si64]} : (tensor<2x6xi64>) -> tensor<*xf32> loc("tfidf")
    return %y : tensor<*xf32>
  }
}

// -----

// DFT 20 takes the axis as an input, -2 (the last signal axis) by default; it
// never uses opset 17's attribute. Here the constant axis 2 and the default
// both transform the length-4 axis 2 of a [2, 3, 4, 1] signal (a matmul of
// [6, 4] rows), not axis 1.

// CHECK-LABEL: func.func @dft20_axis_input
// CHECK: kiln.matmul {{.+}} : (tensor<6x4xf32>, tensor<4x4xf32>) -> tensor<6x4xf32>
// CHECK: -> tensor<2x3x4x2xf32>
// CHECK-LABEL: func.func @dft20_default_axis
// CHECK: kiln.matmul {{.+}} : (tensor<6x4xf32>, tensor<4x4xf32>) -> tensor<6x4xf32>
// CHECK-LABEL: func.func @dft20_runtime_axis
// CHECK: kiln.guard {{.+}} {message = "node 'dft' (DFT, opset 20): input 2 must name the axis that gives the declared output shape
// CHECK-COUNT-2: kiln.matmul {{.+}} : (tensor<6x4xf32>, tensor<4x4xf32>)
// CHECK-COUNT-2: kiln.matmul {{.+}} : (tensor<8x3xf32>, tensor<3x3xf32>)
// CHECK: kiln.where
// CHECK-COUNT-2: kiln.matmul {{.+}} : (tensor<12x2xf32>, tensor<2x2xf32>)
// CHECK: kiln.where
module attributes {onnx.opset_import = {ai.onnx = 20 : i64}} {
  func.func @dft20_axis_input(%x: tensor<2x3x4x1xf32>) -> tensor<*xf32> {
    %none = "onnx.NoValue"() : () -> none
    %axis = "onnx.Constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
    %y = "onnx.DFT"(%x, %none, %axis) : (tensor<2x3x4x1xf32>, none, tensor<i64>) -> tensor<*xf32> loc("dft")
    return %y : tensor<*xf32>
  }
  func.func @dft20_default_axis(%x: tensor<2x3x4x1xf32>) -> tensor<*xf32> {
    %y = "onnx.DFT"(%x) {axis = 1 : si64} : (tensor<2x3x4x1xf32>) -> tensor<*xf32> loc("dft")
    return %y : tensor<*xf32>
  }
  // A run-time axis: a DFT keeps each length, so axes 0, 1 and 2 all give
  // the declared [2, 3, 4, 2]; the value selects one, and a guard refuses
  // any other.
  func.func @dft20_runtime_axis(%x: tensor<2x3x4x1xf32>, %axis: tensor<i64>) -> tensor<2x3x4x2xf32> {
    %none = "onnx.NoValue"() : () -> none
    %y = "onnx.DFT"(%x, %none, %axis) : (tensor<2x3x4x1xf32>, none, tensor<i64>) -> tensor<2x3x4x2xf32> loc("dft")
    return %y : tensor<2x3x4x2xf32>
  }
}
