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
}
