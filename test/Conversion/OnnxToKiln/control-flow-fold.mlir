// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// An If whose condition is computed from shapes (as ONNX functions and
// scripted exports compute "is the input 2-D?") is decided at compile time:
// the conversion reaches it after its condition folded to a constant, and
// inlines only the taken branch. The other branch would be invalid here (a
// Split of 5 values into 4 even parts), so converting it would fail.

// CHECK-LABEL: func.func @shape_condition
// CHECK-NOT: kiln.where
// CHECK: kiln.neg
// CHECK-NOT: kiln.slice
// CHECK: return
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @shape_condition(%x: tensor<5xf32>) -> tensor<*xf32> {
    %shape = "onnx.Shape"(%x) : (tensor<5xf32>) -> tensor<1xi64>
    %n = "onnx.Size"(%shape) : (tensor<1xi64>) -> tensor<i64>
    %four = "onnx.Constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %is4 = "onnx.Equal"(%n, %four) : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %y = "onnx.If"(%is4) ({
      %p:4 = "onnx.Split"(%x) {axis = 0 : si64} : (tensor<5xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
      "onnx.Yield"(%p#0) : (tensor<*xf32>) -> ()
    }, {
      %m = "onnx.Neg"(%x) : (tensor<5xf32>) -> tensor<*xf32>
      "onnx.Yield"(%m) : (tensor<*xf32>) -> ()
    }) {onnx.regions = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<*xf32> loc("if")
    return %y : tensor<*xf32>
  }
}

// -----

// Nested: the inner If sits in the taken branch and is decided the same way
// once the outer one is inlined.

// CHECK-LABEL: func.func @nested
// CHECK-NOT: kiln.where
// CHECK: kiln.relu
// CHECK-NOT: kiln.neg
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @nested(%x: tensor<5xf32>) -> tensor<*xf32> {
    %t = "onnx.Constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
    %y = "onnx.If"(%t) ({
      %shape = "onnx.Shape"(%x) : (tensor<5xf32>) -> tensor<1xi64>
      %n = "onnx.Size"(%shape) : (tensor<1xi64>) -> tensor<i64>
      %one = "onnx.Constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
      %is1 = "onnx.Equal"(%n, %one) : (tensor<i64>, tensor<i64>) -> tensor<i1>
      %z = "onnx.If"(%is1) ({
        %r = "onnx.Relu"(%x) : (tensor<5xf32>) -> tensor<*xf32>
        "onnx.Yield"(%r) : (tensor<*xf32>) -> ()
      }, {
        %m = "onnx.Neg"(%x) : (tensor<5xf32>) -> tensor<*xf32>
        "onnx.Yield"(%m) : (tensor<*xf32>) -> ()
      }) {onnx.regions = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<*xf32> loc("inner")
      "onnx.Yield"(%z) : (tensor<*xf32>) -> ()
    }, {
      %m = "onnx.Neg"(%x) : (tensor<5xf32>) -> tensor<*xf32>
      "onnx.Yield"(%m) : (tensor<*xf32>) -> ()
    }) {onnx.regions = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<*xf32> loc("outer")
    return %y : tensor<*xf32>
  }
}
