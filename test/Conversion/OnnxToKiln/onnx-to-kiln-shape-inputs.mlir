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

// The same ReduceSum with an undeclared result that reaches the declared
// output through Log and CastLike (ReduceLogSumExp's function body): the
// output's shape is used. CastLike's second operand gives only the type.
// CHECK-LABEL: func.func @reduce_sum_runtime_axes_through_castlike
// CHECK: kiln.guard
// CHECK-DAG: kiln.reduce_sum %{{.+}} {axes = array<i64: 1>, keepdims = false} : tensor<3x3xf64> -> tensor<3xf64>
// CHECK-DAG: kiln.reduce_sum %{{.+}} {axes = array<i64: 0>, keepdims = false} : tensor<3x3xf64> -> tensor<3xf64>
// CHECK: kiln.where
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @reduce_sum_runtime_axes_through_castlike(%x: tensor<3x3xf32>, %axes: tensor<1xi64>) -> tensor<3xf32> {
    %d = "onnx.Cast"(%x) {to = 11 : i64} : (tensor<3x3xf32>) -> tensor<3x3xf64> loc("cast")
    %s = "onnx.ReduceSum"(%d, %axes) {keepdims = 0 : i64} : (tensor<3x3xf64>, tensor<1xi64>) -> tensor<?xf64> loc("sum")
    %l = "onnx.Log"(%s) : (tensor<?xf64>) -> tensor<?xf64> loc("log")
    %y = "onnx.CastLike"(%l, %x) : (tensor<?xf64>, tensor<3x3xf32>) -> tensor<3xf32> loc("castlike")
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

// -----

// Unsqueeze with run-time axes: one reshape, guarded by the axes that give
// the declared shape ({0, 2} or {1, 2}... here only {0, 2}).
// CHECK-LABEL: func.func @unsqueeze_runtime_axes
// CHECK: kiln.guard {{.+}}must name axes that turn 3x4 into the declared output shape
// CHECK: kiln.reshape %{{.+}} : tensor<3x4xf32> to tensor<1x3x1x4xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @unsqueeze_runtime_axes(%x: tensor<3x4xf32>, %axes: tensor<2xi64>) -> tensor<1x3x1x4xf32> {
    %y = "onnx.Unsqueeze"(%x, %axes) : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<1x3x1x4xf32> loc("unsqueeze")
    return %y : tensor<1x3x1x4xf32>
  }
}

// -----

// Edge padding with constant pads gathers at clamped constant indices; a
// constant negative step gathers in reverse. No guards: all is constant.
// CHECK-LABEL: func.func @edge_pad_and_reverse
// CHECK-NOT: kiln.guard
// CHECK-DAG: %[[R:.+]] = kiln.constant dense<[2, 1, 0]> : tensor<3xi64>
// CHECK-DAG: %[[I:.+]] = kiln.constant dense<[0, 0, 1, 2, 2, 2]> : tensor<6xi64>
// CHECK: kiln.gather %{{.+}}, %[[I]] {axis = 1 : i64} : (tensor<2x3xf32>, tensor<6xi64>) -> tensor<2x6xf32>
// CHECK: kiln.gather %{{.+}}, %[[R]] {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<2x3xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @edge_pad_and_reverse(%x: tensor<2x3xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %pads = onnx.Initializer "pads" dense<[0, 1, 0, 2]> : tensor<4xi64> loc("pads")
    %p = "onnx.Pad"(%x, %pads) {mode = "edge"} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<*xf32> loc("pad")
    %s = onnx.Initializer "s" dense<[-1]> : tensor<1xi64> loc("s")
    %e = onnx.Initializer "e" dense<[-9223372036854775807]> : tensor<1xi64> loc("e")
    %a = onnx.Initializer "a" dense<[1]> : tensor<1xi64> loc("a")
    %st = onnx.Initializer "st" dense<[-1]> : tensor<1xi64> loc("st")
    %r = "onnx.Slice"(%x, %s, %e, %a, %st) : (tensor<2x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xf32> loc("reverse")
    return %p, %r : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// OneHot with a run-time depth: guarded; indices compared with an iota.
// CHECK-LABEL: func.func @one_hot
// CHECK: kiln.guard {{.+}}must be [5]: the depth this model was compiled for
// CHECK: kiln.equal %{{.+}}, %{{.+}} : (tensor<3x1xi64>, tensor<1x5xi64>) -> tensor<3x5xi1>
// CHECK: kiln.where
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @one_hot(%i: tensor<3xi64>, %d: tensor<i64>, %v: tensor<2xf32>) -> tensor<3x5xf32> {
    %y = "onnx.OneHot"(%i, %d, %v) : (tensor<3xi64>, tensor<i64>, tensor<2xf32>) -> tensor<3x5xf32> loc("onehot")
    return %y : tensor<3x5xf32>
  }
}

// -----

// A Range whose own type is unknown takes its length from the declared graph
// output it flows into through shape-preserving elementwise ops (a scalar
// Mul, a Cos): still guarded at run time.
// CHECK-LABEL: func.func @range_length_from_uses
// CHECK: kiln.guard {{.+}}must give 8 elements
// CHECK: kiln.cos %{{.+}} : tensor<8xf32>
module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
  func.func @range_length_from_uses(%n: tensor<f32>, %k: tensor<f32>) -> tensor<8xf32> {
    %zero = onnx.Initializer "zero" dense<0.0> : tensor<f32> loc("zero")
    %one = onnx.Initializer "one" dense<1.0> : tensor<f32> loc("one")
    %r = "onnx.Range"(%zero, %n, %one) : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32> loc("range")
    %m = "onnx.Mul"(%r, %k) : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32> loc("mul")
    %c = "onnx.Cos"(%m) : (tensor<?xf32>) -> tensor<8xf32> loc("cos")
    return %c : tensor<8xf32>
  }
}
