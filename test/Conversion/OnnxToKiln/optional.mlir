// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// Optionals inside a graph (Optional.cpp): a tensor or an absent value, so
// `if state is None` is decided at compile time.

// An empty optional: OptionalHasElement is false and the If takes its else
// branch, which is the only one converted.
// CHECK-LABEL: func.func @empty_state
// CHECK-NOT: kiln.neg
// CHECK: %[[R:.+]] = kiln.relu %arg0
// CHECK: return %[[R]]
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @empty_state(%x: tensor<4xf32>) -> tensor<*xf32> {
    %none = "onnx.Optional"() {type = "<TYPE_PROTO attribute>"} : () -> tensor<*xf32> loc("o")
    %has = "onnx.OptionalHasElement"(%none) : (tensor<*xf32>) -> tensor<i1> loc("h")
    %y = "onnx.If"(%has) ({
      %s = "onnx.OptionalGetElement"(%none) : (tensor<*xf32>) -> tensor<*xf32> loc("g")
      %m = "onnx.Neg"(%s) : (tensor<*xf32>) -> tensor<*xf32>
      "onnx.Yield"(%m) : (tensor<*xf32>) -> ()
    }, {
      %r = "onnx.Relu"(%x) : (tensor<4xf32>) -> tensor<*xf32>
      "onnx.Yield"(%r) : (tensor<*xf32>) -> ()
    }) {onnx.regions = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<*xf32> loc("if")
    return %y : tensor<*xf32>
  }
}

// -----

// An optional holding a tensor: the then branch, reading the tensor itself.
// CHECK-LABEL: func.func @given_state
// CHECK-NOT: kiln.relu
// CHECK: %[[N:.+]] = kiln.neg %arg0
// CHECK: return %[[N]]
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @given_state(%x: tensor<4xf32>) -> tensor<*xf32> {
    %opt = "onnx.Optional"(%x) : (tensor<4xf32>) -> tensor<*xf32> loc("o")
    %has = "onnx.OptionalHasElement"(%opt) : (tensor<*xf32>) -> tensor<i1> loc("h")
    %y = "onnx.If"(%has) ({
      %s = "onnx.OptionalGetElement"(%opt) : (tensor<*xf32>) -> tensor<*xf32> loc("g")
      %m = "onnx.Neg"(%s) : (tensor<*xf32>) -> tensor<*xf32>
      "onnx.Yield"(%m) : (tensor<*xf32>) -> ()
    }, {
      %r = "onnx.Relu"(%x) : (tensor<4xf32>) -> tensor<*xf32>
      "onnx.Yield"(%r) : (tensor<*xf32>) -> ()
    }) {onnx.regions = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<*xf32> loc("if")
    return %y : tensor<*xf32>
  }
}

// -----

// OptionalHasElement of a plain tensor (opset 18) is true.
// CHECK-LABEL: func.func @tensor_has
// CHECK: %[[T:.+]] = kiln.constant dense<true> : tensor<i1>
// CHECK: return %[[T]]
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @tensor_has(%x: tensor<4xf32>) -> tensor<*xi1> {
    %has = "onnx.OptionalHasElement"(%x) : (tensor<4xf32>) -> tensor<*xi1> loc("h")
    return %has : tensor<*xi1>
  }
}
