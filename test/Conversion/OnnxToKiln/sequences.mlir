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
