// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// Sequences in straight-line code (Sequences.cpp) are lists of tensors known
// while converting: only slices, reshapes and concatenations remain.

// x.split([2, 1]) with one more tensor inserted at the front, then
// torch.cat; parts[-1] and len(parts).
// CHECK-LABEL: func.func @split_insert_concat
// CHECK-NOT: onnx.
// CHECK-DAG: %[[A:.+]] = kiln.slice %arg0 {offsets = array<i64: 0, 0>, sizes = array<i64: 2, 4>, strides = array<i64: 1, 1>}
// CHECK-DAG: %[[B:.+]] = kiln.slice %arg0 {offsets = array<i64: 2, 0>, sizes = array<i64: 1, 4>, strides = array<i64: 1, 1>}
// CHECK-NOT: kiln.slice
// CHECK: %[[C:.+]] = kiln.concat %arg1, %[[A]], %[[B]] {axis = 0 : i64}
// CHECK: %[[N:.+]] = kiln.constant dense<3> : tensor<i64>
// CHECK: return %[[C]], %[[B]], %[[N]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @split_insert_concat(%x: tensor<3x4xf32>, %z: tensor<1x4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xi64>) {
    %sizes = onnx.Initializer "sizes" dense<[2, 1]> : tensor<2xi64> loc("sizes")
    %zero = onnx.Initializer "zero" dense<0> : tensor<i64> loc("zero")
    %last = onnx.Initializer "last" dense<-1> : tensor<i64> loc("last")
    %s = "onnx.SplitToSequence"(%x, %sizes) {axis = 0 : si64} : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<*xf32> loc("split")
    %t = "onnx.SequenceInsert"(%s, %z, %zero) : (tensor<*xf32>, tensor<1x4xf32>, tensor<i64>) -> tensor<*xf32> loc("insert")
    %y = "onnx.ConcatFromSequence"(%t) {axis = 0 : si64} : (tensor<*xf32>) -> tensor<*xf32> loc("cat")
    %e = "onnx.SequenceAt"(%t, %last) : (tensor<*xf32>, tensor<i64>) -> tensor<*xf32> loc("at")
    %n = "onnx.SequenceLength"(%t) : (tensor<*xf32>) -> tensor<*xi64> loc("len")
    return %y, %e, %n : tensor<*xf32>, tensor<*xf32>, tensor<*xi64>
  }
}

// -----

// x.unbind(1) (pieces of one, keepdims = 0) then torch.stack(-1): each
// column reshaped to [3, 1] and concatenated.
// CHECK-LABEL: func.func @unbind_stack
// CHECK-COUNT-2: kiln.slice %arg0
// CHECK-NOT: kiln.slice
// CHECK: kiln.concat {{.+}} {axis = 1 : i64} : (tensor<3x1xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @unbind_stack(%x: tensor<3x2xf32>) -> tensor<*xf32> {
    %s = "onnx.SplitToSequence"(%x) {axis = 1 : si64, keepdims = 0 : si64} : (tensor<3x2xf32>) -> tensor<*xf32> loc("split")
    %y = "onnx.ConcatFromSequence"(%s) {axis = -1 : si64, new_axis = 1 : si64} : (tensor<*xf32>) -> tensor<*xf32> loc("stack")
    return %y : tensor<*xf32>
  }
}

// -----

// SequenceMap over two lists zipped, with a tensor every copy sees whole:
// one copy of the body per element, each at its element's shape ([1, 4]
// then [2, 4]), and the outputs as lists read by ConcatFromSequence.
// CHECK-LABEL: func.func @sequence_map
// CHECK-NOT: onnx.
// CHECK-DAG: %[[A0:.+]] = kiln.slice %arg0 {offsets = array<i64: 0, 0>, sizes = array<i64: 1, 4>
// CHECK-DAG: %[[A1:.+]] = kiln.slice %arg0 {offsets = array<i64: 1, 0>, sizes = array<i64: 2, 4>
// CHECK-DAG: %[[B0:.+]] = kiln.slice %arg1 {offsets = array<i64: 0, 0>, sizes = array<i64: 1, 4>
// CHECK-DAG: %[[B1:.+]] = kiln.slice %arg1 {offsets = array<i64: 1, 0>, sizes = array<i64: 2, 4>
// CHECK: %[[M0:.+]] = kiln.mul %[[A0]], %[[B0]] : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK: %[[S0:.+]] = kiln.add %[[M0]], %arg2 : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
// CHECK: %[[M1:.+]] = kiln.mul %[[A1]], %[[B1]] : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[S1:.+]] = kiln.add %[[M1]], %arg2 : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK: %[[Y:.+]] = kiln.concat %[[S0]], %[[S1]] {axis = 0 : i64}
// CHECK: return %[[Y]]
module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
  func.func @sequence_map(%x: tensor<3x4xf32>, %w: tensor<3x4xf32>, %c: tensor<4xf32>) -> tensor<*xf32> {
    %sizes = onnx.Initializer "sizes" dense<[1, 2]> : tensor<2xi64> loc("sizes")
    %s = "onnx.SplitToSequence"(%x, %sizes) {axis = 0 : si64} : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<*xf32> loc("split_x")
    %t = "onnx.SplitToSequence"(%w, %sizes) {axis = 0 : si64} : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<*xf32> loc("split_w")
    %m = "onnx.SequenceMap"(%s, %t, %c) ({
    ^bb0(%a: tensor<*xf32>, %b: tensor<*xf32>, %k: tensor<4xf32>):
      %p = "onnx.Mul"(%a, %b) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32> loc("mul")
      %q = "onnx.Add"(%p, %k) : (tensor<*xf32>, tensor<4xf32>) -> tensor<*xf32> loc("add")
      "onnx.Yield"(%q) : (tensor<*xf32>) -> ()
    }) {onnx.regions = ["body"]} : (tensor<*xf32>, tensor<*xf32>, tensor<4xf32>) -> tensor<*xf32> loc("map")
    %y = "onnx.ConcatFromSequence"(%m) {axis = 0 : si64} : (tensor<*xf32>) -> tensor<*xf32> loc("cat")
    return %y : tensor<*xf32>
  }
}
