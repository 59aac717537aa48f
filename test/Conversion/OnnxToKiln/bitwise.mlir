// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// BitwiseAnd/Or/Xor/Not use the kiln ops of the logical And/Or/Xor/Not,
// which are bitwise on integers; BitCast is kiln.bitcast.

// CHECK-LABEL: func.func @bitwise
// CHECK: %[[A:.+]] = kiln.and %{{.+}}, %{{.+}} : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK: %[[O:.+]] = kiln.or %[[A]], %{{.+}} : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK: %[[X:.+]] = kiln.xor %[[O]], %{{.+}} : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK: kiln.not %[[X]] : tensor<2x3xi32>
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @bitwise(%a: tensor<2x3xi32>, %b: tensor<3xi32>) -> tensor<*xi32> {
    %0 = "onnx.BitwiseAnd"(%a, %b) : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<*xi32> loc("and")
    %1 = "onnx.BitwiseOr"(%0, %b) : (tensor<*xi32>, tensor<3xi32>) -> tensor<*xi32> loc("or")
    %2 = "onnx.BitwiseXor"(%1, %b) : (tensor<*xi32>, tensor<3xi32>) -> tensor<*xi32> loc("xor")
    %3 = "onnx.BitwiseNot"(%2) : (tensor<*xi32>) -> tensor<*xi32> loc("not")
    return %3 : tensor<*xi32>
  }
}

// -----

// CHECK-LABEL: func.func @bitwise_unsigned
// CHECK: kiln.and %{{.+}}, %{{.+}} : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
// CHECK: kiln.not %{{.+}} : tensor<4xui8>
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @bitwise_unsigned(%a: tensor<4xui8>, %b: tensor<4xui8>) -> tensor<*xui8> {
    %0 = "onnx.BitwiseAnd"(%a, %b) : (tensor<4xui8>, tensor<4xui8>) -> tensor<*xui8> loc("and")
    %1 = "onnx.BitwiseNot"(%0) : (tensor<*xui8>) -> tensor<*xui8> loc("not")
    return %1 : tensor<*xui8>
  }
}

// -----

// CHECK-LABEL: func.func @bitcast
// CHECK: kiln.bitcast %{{.+}} to i32 : tensor<2x3xf32> -> tensor<2x3xi32>
// CHECK: kiln.bitcast %{{.+}} to ui8 : tensor<4xi1> -> tensor<4xui8>
// CHECK: kiln.bitcast %{{.+}} to f16 : tensor<5xui16> -> tensor<5xf16>
module attributes {onnx.opset_import = {ai.onnx = 26 : i64}} {
  func.func @bitcast(%x: tensor<2x3xf32>, %b: tensor<4xi1>, %h: tensor<5xui16>) -> (tensor<*xi32>, tensor<*xui8>, tensor<*xf16>) {
    %0 = "onnx.BitCast"(%x) {to = 6 : i64} : (tensor<2x3xf32>) -> tensor<*xi32> loc("f2i")
    %1 = "onnx.BitCast"(%b) {to = 2 : i64} : (tensor<4xi1>) -> tensor<*xui8> loc("b2u")
    %2 = "onnx.BitCast"(%h) {to = 10 : i64} : (tensor<5xui16>) -> tensor<*xf16> loc("u2h")
    return %0, %1, %2 : tensor<*xi32>, tensor<*xui8>, tensor<*xf16>
  }
}
