// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln --canonicalize | FileCheck %s

// Shape arguments that are graph inputs: the declared output shape is
// compiled, with a kiln.guard that the run-time values give it.

// CHECK-LABEL: func.func @reshape_runtime_shape
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3x4xf32> {onnx.name = "x"}, %[[S:[^:]+]]: tensor<3xi64> {onnx.name = "shape"})
// CHECK-DAG: %[[WANT:.+]] = kiln.constant dense<[4, 3, 2]> : tensor<3xi64>
// CHECK-DAG: kiln.equal %[[S]], %[[WANT]]
// CHECK: kiln.guard %{{.+}} {message = "node 'r' (Reshape, opset 14): graph input 'shape' (input 1) must resolve to the shape 4x3x2 this model was compiled for"} : tensor<i1>
// CHECK: %[[Y:.+]] = kiln.reshape %[[X]] : tensor<2x3x4xf32> to tensor<4x3x2xf32>
// CHECK: return %[[Y]]
module attributes {onnx.opset_import = {ai.onnx = 14 : i64}} {
  func.func @reshape_runtime_shape(%x: tensor<2x3x4xf32> {onnx.name = "x"}, %s: tensor<3xi64> {onnx.name = "shape"}) -> tensor<4x3x2xf32> {
    %y = "onnx.Reshape"(%x, %s) : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<4x3x2xf32> loc("r")
    return %y : tensor<4x3x2xf32>
  }
}

// -----

// Split sizes from the declared outputs, guarded equal to the input.
// CHECK-LABEL: func.func @split_runtime_sizes
// CHECK: kiln.constant dense<[2, 4]> : tensor<2xi64>
// CHECK: kiln.guard {{.+}}must be [2, 4]: the split sizes this model was compiled for
// CHECK: kiln.slice %{{.+}} {offsets = array<i64: 0, 0>, sizes = array<i64: 3, 2>
// CHECK: kiln.slice %{{.+}} {offsets = array<i64: 0, 2>, sizes = array<i64: 3, 4>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @split_runtime_sizes(%x: tensor<3x6xf32>, %s: tensor<2xi64>) -> (tensor<3x2xf32>, tensor<3x4xf32>) {
    %a, %b = "onnx.Split"(%x, %s) {axis = 1 : i64} : (tensor<3x6xf32>, tensor<2xi64>) -> (tensor<3x2xf32>, tensor<3x4xf32>) loc("split")
    return %a, %b : tensor<3x2xf32>, tensor<3x4xf32>
  }
}

// -----

// ReduceSum without keepdims over one of two equal dimensions: both
// candidates are computed and the run-time axes pick one.
// CHECK-LABEL: func.func @reduce_sum_runtime_axes
// CHECK: kiln.guard
// CHECK-DAG: %[[R1:.+]] = kiln.reduce_sum %{{.+}} {axes = array<i64: 1>, keepdims = false} : tensor<3x3xf32> -> tensor<3xf32>
// CHECK-DAG: %[[R0:.+]] = kiln.reduce_sum %{{.+}} {axes = array<i64: 0>, keepdims = false} : tensor<3x3xf32> -> tensor<3xf32>
// CHECK: kiln.where %{{.+}}, %[[R0]], %[[R1]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @reduce_sum_runtime_axes(%x: tensor<3x3xf32>, %axes: tensor<1xi64>) -> tensor<3xf32> {
    %y = "onnx.ReduceSum"(%x, %axes) {keepdims = 0 : i64} : (tensor<3x3xf32>, tensor<1xi64>) -> tensor<3xf32> loc("sum")
    return %y : tensor<3xf32>
  }
}

// -----

// Expand and Tile to declared shapes; ConstantOfShape and Range with
// run-time arguments.
// CHECK-LABEL: func.func @expand_tile
// CHECK: kiln.guard
// CHECK: kiln.expand %{{.+}} : tensor<3x1xf32> to tensor<2x3x4xf32>
// CHECK: kiln.guard
// CHECK: kiln.expand %{{.+}} : tensor<1x3x1x1xf32> to tensor<2x3x1x1xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @expand_tile(%x: tensor<3x1xf32>, %s: tensor<3xi64>, %r: tensor<2xi64>) -> (tensor<2x3x4xf32>, tensor<6x1xf32>) {
    %y = "onnx.Expand"(%x, %s) : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<2x3x4xf32> loc("expand")
    %t = "onnx.Tile"(%x, %r) : (tensor<3x1xf32>, tensor<2xi64>) -> tensor<6x1xf32> loc("tile")
    return %y, %t : tensor<2x3x4xf32>, tensor<6x1xf32>
  }
}

// -----

// CHECK-LABEL: func.func @constant_of_shape_and_range
// CHECK-DAG: kiln.constant dense<7> : tensor<2x3xi32>
// CHECK-DAG: kiln.guard {{.+}}must be [2, 3]: the output shape this model was compiled for
// CHECK: kiln.guard {{.+}}must give 4 elements
// CHECK: kiln.mul
// CHECK: kiln.add
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @constant_of_shape_and_range(%s: tensor<2xi64>, %a: tensor<f32>, %b: tensor<f32>, %d: tensor<f32>) -> (tensor<2x3xi32>, tensor<4xf32>) {
    %c = "onnx.ConstantOfShape"(%s) {value = dense<7> : tensor<1xi32>} : (tensor<2xi64>) -> tensor<2x3xi32> loc("cos")
    %r = "onnx.Range"(%a, %b, %d) : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<4xf32> loc("range")
    return %c, %r : tensor<2x3xi32>, tensor<4xf32>
  }
}

// -----

// Clip with run-time bounds is a max and a min; no guard.
// CHECK-LABEL: func.func @clip_runtime
// CHECK-NOT: kiln.guard
// CHECK: %[[A:.+]] = kiln.max %{{.+}}, %{{.+}} : (tensor<4xi8>, tensor<i8>) -> tensor<4xi8>
// CHECK: kiln.min %[[A]], %{{.+}} : (tensor<4xi8>, tensor<i8>) -> tensor<4xi8>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @clip_runtime(%x: tensor<4xi8>, %lo: tensor<i8>, %hi: tensor<i8>) -> tensor<4xi8> {
    %y = "onnx.Clip"(%x, %lo, %hi) : (tensor<4xi8>, tensor<i8>, tensor<i8>) -> tensor<4xi8> loc("clip")
    return %y : tensor<4xi8>
  }
}
