// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln -verify-diagnostics
// RUN: not kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln 2>&1 | FileCheck %s

// Errors of the loss and GatherElements conversions, reported against the
// node (see onnx-to-kiln-invalid.mlir for the @unknown convention).

// CHECK: error: loc("nll_reduction"): node 'nll_reduction' (NegativeLogLikelihoodLoss, opset 13): reduction 'avg' is not supported; expected none, sum or mean
// CHECK: error: loc("nll_target"): node 'nll_target' (NegativeLogLikelihoodLoss, opset 13): the target shape 'tensor<3x5xi64>' must be the input shape without dimension 1
// CHECK: error: loc("nll_weight"): node 'nll_weight' (NegativeLogLikelihoodLoss, opset 13): the weight 'tensor<4xf32>' must have shape [5] and type 'f32'
// CHECK: error: loc("nll_float_target"): node 'nll_float_target' (NegativeLogLikelihoodLoss, opset 13): target element type 'f32' is not supported; Kiln reads int32 and int64 targets
// CHECK: error: loc("sce_rank1"): node 'sce_rank1' (SoftmaxCrossEntropyLoss, opset 13): the scores must have shape [N, C] or [N, C, d1, ...], got 'tensor<5xf32>'
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @loss_errors(%x: tensor<3x5xf32>, %t: tensor<3xi64>, %t2: tensor<3x5xi64>, %w4: tensor<4xf32>, %tf: tensor<3xf32>, %v: tensor<5xf32>, %tv: tensor<1xi64>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    // expected-error@unknown {{node 'nll_reduction' (NegativeLogLikelihoodLoss, opset 13): reduction 'avg' is not supported}}
    %a = "onnx.NegativeLogLikelihoodLoss"(%x, %t) {reduction = "avg"} : (tensor<3x5xf32>, tensor<3xi64>) -> tensor<*xf32> loc("nll_reduction")
    // expected-error@unknown {{node 'nll_target' (NegativeLogLikelihoodLoss, opset 13): the target shape 'tensor<3x5xi64>' must be the input shape without dimension 1}}
    %b = "onnx.NegativeLogLikelihoodLoss"(%x, %t2) : (tensor<3x5xf32>, tensor<3x5xi64>) -> tensor<*xf32> loc("nll_target")
    // expected-error@unknown {{node 'nll_weight' (NegativeLogLikelihoodLoss, opset 13): the weight 'tensor<4xf32>' must have shape [5] and type 'f32'}}
    %c = "onnx.NegativeLogLikelihoodLoss"(%x, %t, %w4) : (tensor<3x5xf32>, tensor<3xi64>, tensor<4xf32>) -> tensor<*xf32> loc("nll_weight")
    // expected-error@unknown {{node 'nll_float_target' (NegativeLogLikelihoodLoss, opset 13): target element type 'f32' is not supported}}
    %d = "onnx.NegativeLogLikelihoodLoss"(%x, %tf) : (tensor<3x5xf32>, tensor<3xf32>) -> tensor<*xf32> loc("nll_float_target")
    // expected-error@unknown {{node 'sce_rank1' (SoftmaxCrossEntropyLoss, opset 13): the scores must have shape [N, C] or [N, C, d1, ...]}}
    %e = "onnx.SoftmaxCrossEntropyLoss"(%v, %tv) : (tensor<5xf32>, tensor<1xi64>) -> tensor<*xf32> loc("sce_rank1")
    return %a, %b, %c, %d, %e : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss are new in opset 12.
// CHECK: error: loc("nll11"): node 'nll11' (NegativeLogLikelihoodLoss, opset 11): Kiln supports NegativeLogLikelihoodLoss from opset 12; re-export the model with a newer opset
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @nll_opset11(%x: tensor<3x5xf32>, %t: tensor<3xi64>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'nll11' (NegativeLogLikelihoodLoss, opset 11): Kiln supports NegativeLogLikelihoodLoss from opset 12}}
    %y = "onnx.NegativeLogLikelihoodLoss"(%x, %t) : (tensor<3x5xf32>, tensor<3xi64>) -> tensor<*xf32> loc("nll11")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("ge_const"): node 'ge_const' (GatherElements, opset 13): index 3 is out of range for axis 1 of size 3
// CHECK: error: loc("ge_rank"): node 'ge_rank' (GatherElements, opset 13): indices of rank 1 must have the input's rank 2
// CHECK: error: loc("ge_shape"): node 'ge_shape' (GatherElements, opset 13): indices shape [4,1] exceeds the input shape [3,3] in dimension 0
// CHECK: error: loc("ge_float"): node 'ge_float' (GatherElements, opset 13): element type f32 is not supported for GatherElements yet
// CHECK: error: loc("ge_axis"): node 'ge_axis' (GatherElements, opset 13): axis 2 is out of range for rank 2
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @gather_elements_errors(%x: tensor<3x3xf32>, %i1: tensor<3xi64>, %i4: tensor<4x1xi64>, %f: tensor<3x3xf32>, %i: tensor<3x3xi64>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %c = onnx.Initializer "c" dense<[[0, 3]]> : tensor<1x2xi64> loc("c")
    // expected-error@unknown {{node 'ge_const' (GatherElements, opset 13): index 3 is out of range for axis 1 of size 3}}
    %a = "onnx.GatherElements"(%x, %c) {axis = 1 : i64} : (tensor<3x3xf32>, tensor<1x2xi64>) -> tensor<*xf32> loc("ge_const")
    // expected-error@unknown {{node 'ge_rank' (GatherElements, opset 13): indices of rank 1 must have the input's rank 2}}
    %b = "onnx.GatherElements"(%x, %i1) : (tensor<3x3xf32>, tensor<3xi64>) -> tensor<*xf32> loc("ge_rank")
    // expected-error@unknown {{node 'ge_shape' (GatherElements, opset 13): indices shape [4,1] exceeds the input shape [3,3] in dimension 0}}
    %d = "onnx.GatherElements"(%x, %i4) {axis = 1 : i64} : (tensor<3x3xf32>, tensor<4x1xi64>) -> tensor<*xf32> loc("ge_shape")
    // expected-error@unknown {{node 'ge_float' (GatherElements, opset 13): element type f32 is not supported for GatherElements yet}}
    %e = "onnx.GatherElements"(%x, %f) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<*xf32> loc("ge_float")
    // expected-error@unknown {{node 'ge_axis' (GatherElements, opset 13): axis 2 is out of range for rank 2}}
    %g = "onnx.GatherElements"(%x, %i) {axis = 2 : i64} : (tensor<3x3xf32>, tensor<3x3xi64>) -> tensor<*xf32> loc("ge_axis")
    return %a, %b, %d, %e, %g : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}
