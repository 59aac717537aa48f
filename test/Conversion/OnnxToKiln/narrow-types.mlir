// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// ONNX's narrow types (float8, float4, int4, int2) are cast, quantized and
// moved. Cast 19's saturate=0 reaches kiln.cast for the float8 targets only;
// 25's round_mode for f8E8M0 only.

// CHECK-LABEL: func.func @casts
// CHECK: kiln.cast %{{.+}} to f8E4M3FN : tensor<4xf32> -> tensor<4xf8E4M3FN>
// CHECK: kiln.cast %{{.+}} to f8E5M2FNUZ {no_saturate} : tensor<4xf32> -> tensor<4xf8E5M2FNUZ>
// CHECK: kiln.cast %{{.+}} to f4E2M1FN : tensor<4xf32> -> tensor<4xf4E2M1FN>
// CHECK: kiln.cast %{{.+}} to f8E8M0FNU {round_mode = "nearest"} : tensor<4xf32> -> tensor<4xf8E8M0FNU>
// CHECK: kiln.cast %{{.+}} to i4 : tensor<4xf32> -> tensor<4xi4>
// CHECK: kiln.cast %{{.+}} to f32 : tensor<4xui2> -> tensor<4xf32>
module attributes {onnx.opset_import = {ai.onnx = 25 : i64}} {
  func.func @casts(%x: tensor<4xf32>, %u: tensor<4xui2>) -> (tensor<*xf8E4M3FN>, tensor<*xf8E5M2FNUZ>, tensor<*xf4E2M1FN>, tensor<*xf8E8M0FNU>, tensor<*xi4>, tensor<*xf32>) {
    %a = "onnx.Cast"(%x) {to = 17 : si64} : (tensor<4xf32>) -> tensor<*xf8E4M3FN> loc("a")
    %b = "onnx.Cast"(%x) {to = 20 : si64, saturate = 0 : si64} : (tensor<4xf32>) -> tensor<*xf8E5M2FNUZ> loc("b")
    %c = "onnx.Cast"(%x) {to = 23 : si64, saturate = 0 : si64} : (tensor<4xf32>) -> tensor<*xf4E2M1FN> loc("c")
    %d = "onnx.Cast"(%x) {to = 24 : si64, round_mode = "nearest"} : (tensor<4xf32>) -> tensor<*xf8E8M0FNU> loc("d")
    %e = "onnx.Cast"(%x) {to = 22 : si64} : (tensor<4xf32>) -> tensor<*xi4> loc("e")
    %f = "onnx.Cast"(%u) {to = 1 : si64} : (tensor<4xui2>) -> tensor<*xf32> loc("f")
    return %a, %b, %c, %d, %e, %f : tensor<*xf8E4M3FN>, tensor<*xf8E5M2FNUZ>, tensor<*xf4E2M1FN>, tensor<*xf8E8M0FNU>, tensor<*xi4>, tensor<*xf32>
  }
}

// -----

// Blocked quantization (block_size 2 along axis 1): the scale and zero point
// are gathered to x's shape (indices i / 2), then quantized to int4 with
// int4's range.
// CHECK-LABEL: func.func @blocked_int4
// CHECK: %[[I:.+]] = kiln.constant dense<[0, 0, 1, 1, 2]> : tensor<5xi64>
// CHECK: kiln.gather %{{.+}}, %[[I]] {axis = 1 : i64} : (tensor<2x3xf32>, tensor<5xi64>) -> tensor<2x5xf32>
// CHECK: kiln.clip %{{.+}} {max = 7.000000e+00 : f32, min = -8.000000e+00 : f32}
// CHECK: kiln.cast %{{.+}} to i4 : tensor<2x5xf32> -> tensor<2x5xi4>
module attributes {onnx.opset_import = {ai.onnx = 21 : i64}} {
  func.func @blocked_int4(%x: tensor<2x5xf32>, %s: tensor<2x3xf32>, %z: tensor<2x3xi4>) -> tensor<*xi4> {
    %y = "onnx.QuantizeLinear"(%x, %s, %z) {axis = 1 : si64, block_size = 2 : si64} : (tensor<2x5xf32>, tensor<2x3xf32>, tensor<2x3xi4>) -> tensor<*xi4> loc("q")
    return %y : tensor<*xi4>
  }
}

// -----

// Dequantizing float8: its cast to the scale's type, then the product.
// CHECK-LABEL: func.func @dequant_f8
// CHECK: kiln.cast %{{.+}} to f32 : tensor<4xf8E4M3FN> -> tensor<4xf32>
// CHECK: kiln.mul
module attributes {onnx.opset_import = {ai.onnx = 19 : i64}} {
  func.func @dequant_f8(%x: tensor<4xf8E4M3FN>, %s: tensor<f32>) -> tensor<*xf32> {
    %y = "onnx.DequantizeLinear"(%x, %s) : (tensor<4xf8E4M3FN>, tensor<f32>) -> tensor<*xf32> loc("dq")
    return %y : tensor<*xf32>
  }
}
