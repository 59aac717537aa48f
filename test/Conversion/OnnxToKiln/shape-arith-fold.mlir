// RUN: kiln-opt %s --kiln-convert-onnx-to-kiln | FileCheck %s

// Shape arithmetic on small integer constants is computed while converting,
// so that the nodes which need constants (Pad's pads, Expand's shape,
// ConstantOfShape's shape) get them: integer Neg, Mod (both fmod modes),
// Equal, Where, and Transpose of a constant (torch reverses pads with one).

// CHECK-LABEL: func.func @shape_math
// CHECK-DAG: kiln.constant dense<[1, -2]> : tensor<2xi64>
// CHECK-DAG: kiln.constant dense<[1, 2, 2, 1]> : tensor<4xi64>
// CHECK-DAG: kiln.constant dense<[1, 2, -1, -2]> : tensor<4xi64>
// CHECK-DAG: kiln.constant dense<false> : tensor<2xi1>
// CHECK-DAG: kiln.constant dense<[7, 5]> : tensor<2xi64>
// CHECK-DAG: kiln.constant dense<{{\[\[}}1, 3], [2, 4]]> : tensor<2x2xi64>
// CHECK-NOT: kiln.neg
// CHECK-NOT: kiln.mod
// CHECK-NOT: kiln.equal
// CHECK-NOT: kiln.where
// CHECK-NOT: kiln.transpose
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @shape_math() -> (tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xi1>, tensor<*xi64>, tensor<*xi64>) {
    %a = "onnx.Constant"() {value = dense<[-1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
    %neg = "onnx.Neg"(%a) : (tensor<2xi64>) -> tensor<*xi64> loc("neg")
    %x = "onnx.Constant"() {value = dense<[7, 8, -7, -8]> : tensor<4xi64>} : () -> tensor<4xi64>
    %d = "onnx.Constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %m0 = "onnx.Mod"(%x, %d) : (tensor<4xi64>, tensor<i64>) -> tensor<*xi64> loc("mod")
    %m1 = "onnx.Mod"(%x, %d) {fmod = 1 : si64} : (tensor<4xi64>, tensor<i64>) -> tensor<*xi64> loc("fmod")
    %e = "onnx.Equal"(%a, %neg) : (tensor<2xi64>, tensor<*xi64>) -> tensor<*xi1> loc("eq")
    %b = "onnx.Constant"() {value = dense<[7, 9]> : tensor<2xi64>} : () -> tensor<2xi64>
    %c = "onnx.Constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
    %cond = "onnx.Constant"() {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>
    %w = "onnx.Where"(%cond, %b, %c) : (tensor<2xi1>, tensor<2xi64>, tensor<i64>) -> tensor<*xi64> loc("where")
    %p = "onnx.Constant"() {value = dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>} : () -> tensor<2x2xi64>
    %t = "onnx.Transpose"(%p) {perm = [1, 0]} : (tensor<2x2xi64>) -> tensor<*xi64> loc("t")
    return %neg, %m0, %m1, %e, %w, %t : tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xi1>, tensor<*xi64>, tensor<*xi64>
  }

  // Sizes a graph scales in float (Shape, Cast to float, Mul by a whole 2.0,
  // Floor, Cast back: a scale of 2 as older exporters and Paddle2ONNX write
  // it) are sizes: a float constant of whole numbers is its integers, and
  // rounding a whole number keeps it. The Resize they size converts with
  // run-time sizes (it was refused as "sizes that are constant or computed
  // from the shapes").
  // CHECK-LABEL: func.func @float_scaled_sizes
  // CHECK: return {{.+}} : tensor<1x1x?x?xf32>
  func.func @float_scaled_sizes(%x: tensor<1x1x?x?xf32> {kiln.symbols = array<i64: -1, -1, 0, 1>, onnx.dim_params = ["", "", "H", "W"]}) -> tensor<*xf32> attributes {kiln.symbol_bounds = array<i64: 1, 64, 1, 64>} {
    %sh = "onnx.Shape"(%x) : (tensor<1x1x?x?xf32>) -> tensor<4xi64> loc("shape")
    %s2 = "onnx.Constant"() {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
    %s4 = "onnx.Constant"() {value = dense<4> : tensor<1xi64>} : () -> tensor<1xi64>
    %hw = "onnx.Slice"(%sh, %s2, %s4) : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xi64> loc("hw")
    %f = "onnx.Cast"(%hw) {to = 1 : si64} : (tensor<*xi64>) -> tensor<*xf32> loc("cast")
    %two = "onnx.Constant"() {value = dense<2.0> : tensor<2xf32>} : () -> tensor<2xf32>
    %m = "onnx.Mul"(%f, %two) : (tensor<*xf32>, tensor<2xf32>) -> tensor<*xf32> loc("mul")
    %fl = "onnx.Floor"(%m) : (tensor<*xf32>) -> tensor<*xf32> loc("floor")
    %i = "onnx.Cast"(%fl) {to = 7 : si64} : (tensor<*xf32>) -> tensor<*xi64> loc("back")
    %nc = "onnx.Constant"() {value = dense<1> : tensor<2xi64>} : () -> tensor<2xi64>
    %sizes = "onnx.Concat"(%nc, %i) {axis = 0 : si64} : (tensor<2xi64>, tensor<*xi64>) -> tensor<*xi64> loc("sizes")
    %none = "onnx.NoValue"() : () -> none
    %y = "onnx.Resize"(%x, %none, %none, %sizes) {mode = "linear"} : (tensor<1x1x?x?xf32>, none, none, tensor<*xi64>) -> tensor<*xf32> loc("resize")
    return %y : tensor<*xf32>
  }

}
