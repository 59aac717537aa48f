// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln -verify-diagnostics
// RUN: not kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln 2>&1 | FileCheck %s

// What the scatter, gather_nd, scan and selection conversions refuse (see
// onnx-to-kiln-invalid.mlir for how the two RUN lines work together).

// CHECK: error: loc("s"): node 's' (ScatterElements, opset 16): index 5 is out of range for a dimension of size 5
module attributes {onnx.opset_import = {ai.onnx = 16 : i64}} {
  func.func @scatter_constant_index(%d: tensor<1x5xf32>, %u: tensor<1x2xf32>) -> tensor<1x5xf32> {
    %i = onnx.Initializer "i" dense<[[1, 5]]> : tensor<1x2xi64> loc("i")
    // expected-error@unknown {{node 's' (ScatterElements, opset 16): index 5 is out of range for a dimension of size 5}}
    %y = "onnx.ScatterElements"(%d, %i, %u) {axis = 1 : i64} : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32> loc("s")
    return %y : tensor<1x5xf32>
  }
}

// -----

// CHECK: error: loc("s"): node 's' (ScatterND, opset 16): reduction 'avg' is not supported; expected none, add, mul, max or min
module attributes {onnx.opset_import = {ai.onnx = 16 : i64}} {
  func.func @scatter_nd_reduction(%d: tensor<4xf32>, %i: tensor<1x1xi64>, %u: tensor<1xf32>) -> tensor<4xf32> {
    // expected-error@unknown {{node 's' (ScatterND, opset 16): reduction 'avg' is not supported}}
    %y = "onnx.ScatterND"(%d, %i, %u) {reduction = "avg"} : (tensor<4xf32>, tensor<1x1xi64>, tensor<1xf32>) -> tensor<4xf32> loc("s")
    return %y : tensor<4xf32>
  }
}

// -----

// CHECK: error: loc("c"): node 'c' (CumSum, opset 14): axis 2 is out of range for rank 2
module attributes {onnx.opset_import = {ai.onnx = 14 : i64}} {
  func.func @cumsum_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %a = onnx.Initializer "a" dense<2> : tensor<i64> loc("a")
    // expected-error@unknown {{node 'c' (CumSum, opset 14): axis 2 is out of range for rank 2}}
    %y = "onnx.CumSum"(%x, %a) : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32> loc("c")
    return %y : tensor<2x3xf32>
  }
}

// -----

// CHECK: error: loc("c"): node 'c' (CumProd, opset 26): axis must have one element, got 2
module attributes {onnx.opset_import = {ai.onnx = 26 : i64}} {
  func.func @cumprod_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %a = onnx.Initializer "a" dense<[0, 1]> : tensor<2xi64> loc("a")
    // expected-error@unknown {{node 'c' (CumProd, opset 26): axis must have one element, got 2}}
    %y = "onnx.CumProd"(%x, %a) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32> loc("c")
    return %y : tensor<2x3xf32>
  }
}

// -----

// A run-time k must be one int64 element (a model that gives two is refused
// by name, not read past its first).
// CHECK: error: loc("t"): node 't' (TopK, opset 11): k must be one int64 element
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @top_k_two_ks(%x: tensor<3x4xf32>, %k: tensor<2xi64>) -> (tensor<*xf32>, tensor<*xi64>) {
    // expected-error@unknown {{node 't' (TopK, opset 11): k must be one int64 element}}
    %v, %i = "onnx.TopK"(%x, %k) : (tensor<3x4xf32>, tensor<2xi64>) -> (tensor<*xf32>, tensor<*xi64>) loc("t")
    return %v, %i : tensor<*xf32>, tensor<*xi64>
  }
}

// -----

// TensorScatter's axis cannot be the batch dimension.
// CHECK: error: loc("kv"): node 'kv' (TensorScatter, opset 24): axis cannot be 0 (the batch dimension)
module attributes {onnx.opset_import = {ai.onnx = 24 : i64}} {
  func.func @tensor_scatter_axis0(%past: tensor<8x4xf32>, %u: tensor<3x4xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'kv' (TensorScatter, opset 24): axis cannot be 0 (the batch dimension)}}
    %y = "onnx.TensorScatter"(%past, %u) {axis = 0 : si64} : (tensor<8x4xf32>, tensor<3x4xf32>) -> tensor<*xf32> loc("kv")
    return %y : tensor<*xf32>
  }
}
