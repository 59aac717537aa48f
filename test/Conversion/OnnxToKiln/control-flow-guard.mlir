// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// A run-time trip count: the scan output's declared length (3) fixes the
// unrolling, and a guard checks at run time that M is 3 and cond is true.

// CHECK-LABEL: func.func @runtime_trips
// CHECK: %[[EQ:.+]] = kiln.equal %arg0, %{{.+}} : (tensor<i64>, tensor<i64>) -> tensor<i1>
// CHECK: %[[OK:.+]] = kiln.and %[[EQ]], %arg1
// CHECK: kiln.guard %[[OK]] {message = "node 'loop' (Loop, opset 13): the trip count M must be 3 and the condition true: the scan length this model was compiled for"}
// CHECK-COUNT-3: kiln.add
// CHECK: kiln.concat {{.+}} -> tensor<3x2xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @runtime_trips(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
    %r:2 = "onnx.Loop"(%m, %c, %x) ({
    ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %v: tensor<2xf32>):
      %co = "onnx.Identity"(%ci) : (tensor<i1>) -> tensor<i1>
      %n = "onnx.Add"(%v, %v) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      "onnx.Yield"(%co, %n, %n) : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> ()
    }) {onnx.regions = ["body"]} : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) loc("loop")
    return %r#0, %r#1 : tensor<2xf32>, tensor<3x2xf32>
  }
}

// -----

// The same with the scan output untyped: its length comes from the graph
// output it reaches through a Cast (the expanded Range's Loop).

// CHECK-LABEL: func.func @runtime_trips_through_cast
// CHECK: kiln.guard {{.+}} {message = "node 'loop' (Loop, opset 13): the trip count M must be 3 and the condition true: the scan length this model was compiled for"}
// CHECK-COUNT-3: kiln.add
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @runtime_trips_through_cast(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<2xf32>) -> tensor<3x2xf16> {
    %r:2 = "onnx.Loop"(%m, %c, %x) ({
    ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %v: tensor<2xf32>):
      %co = "onnx.Identity"(%ci) : (tensor<i1>) -> tensor<i1>
      %n = "onnx.Add"(%v, %v) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      "onnx.Yield"(%co, %n, %n) : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> ()
    }) {onnx.regions = ["body"]} : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<*xf32>) loc("loop")
    %h = "onnx.Cast"(%r#1) {to = 10 : i64} : (tensor<*xf32>) -> tensor<3x2xf16> loc("cast")
    return %h : tensor<3x2xf16>
  }
}

// -----

// A loop that can end early runs to its bound M = 3; each iteration's state
// is kept only while the running condition (cond && every earlier body
// condition) holds.

// CHECK-LABEL: func.func @early_exit
// CHECK-NOT: kiln.guard
// CHECK-COUNT-3: kiln.where
// CHECK-NOT: kiln.where
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @early_exit(%c: tensor<i1>, %x: tensor<2xf32>, %lim: tensor<f32>) -> tensor<2xf32> {
    %m = "onnx.Constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %r = "onnx.Loop"(%m, %c, %x) ({
    ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %v: tensor<2xf32>):
      %n = "onnx.Add"(%v, %v) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      %top = "onnx.ReduceMax"(%n) {keepdims = 0 : i64} : (tensor<2xf32>) -> tensor<f32>
      %go = "onnx.Less"(%top, %lim) : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "onnx.Yield"(%go, %n) : (tensor<i1>, tensor<2xf32>) -> ()
    }) {onnx.regions = ["body"]} : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<2xf32> loc("loop")
    return %r : tensor<2xf32>
  }
}
