// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln -verify-diagnostics
// RUN: not kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln 2>&1 | FileCheck %s

// Integer and quantization nodes Kiln reports (see onnx-to-kiln-invalid.mlir
// for how the two RUN lines work together).

// CHECK: error: loc("shift"): node 'shift' (BitShift, opset 11): direction must be "LEFT" or "RIGHT", got "UP"
// CHECK: error: loc("float_shift"): node 'float_shift' (BitShift, opset 11): BitShift of 'f32' is not supported; it takes integer tensors
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @bitshift_errors(%a: tensor<3xui8>, %f: tensor<3xf32>) -> (tensor<*xui8>, tensor<*xf32>) {
    // expected-error@unknown {{node 'shift' (BitShift, opset 11): direction must be "LEFT" or "RIGHT", got "UP"}}
    %y = "onnx.BitShift"(%a, %a) {direction = "UP"} : (tensor<3xui8>, tensor<3xui8>) -> tensor<*xui8> loc("shift")
    // expected-error@unknown {{node 'float_shift' (BitShift, opset 11): BitShift of 'f32' is not supported; it takes integer tensors}}
    %z = "onnx.BitShift"(%f, %f) {direction = "LEFT"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<*xf32> loc("float_shift")
    return %y, %z : tensor<*xui8>, tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("q16"): node 'q16' (QuantizeLinear, opset 13): 'i16' needs opset 21 of QuantizeLinear and DequantizeLinear; the model imports opset 13 (re-export it at a newer opset)
// CHECK: error: loc("qaxis"): node 'qaxis' (QuantizeLinear, opset 13): y_scale of shape 'tensor<2xf32>' must be a scalar or a 1-D tensor of 3 elements (the size of axis 1)
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @quantize_errors(%x: tensor<2x3xf32>, %s: tensor<f32>, %z16: tensor<i16>, %s2: tensor<2xf32>) -> (tensor<*xi16>, tensor<*xui8>) {
    // expected-error@unknown {{node 'q16' (QuantizeLinear, opset 13): 'i16' needs opset 21 of QuantizeLinear and DequantizeLinear; the model imports opset 13 (re-export it at a newer opset)}}
    %a = "onnx.QuantizeLinear"(%x, %s, %z16) : (tensor<2x3xf32>, tensor<f32>, tensor<i16>) -> tensor<*xi16> loc("q16")
    // expected-error@unknown {{node 'qaxis' (QuantizeLinear, opset 13): y_scale of shape 'tensor<2xf32>' must be a scalar or a 1-D tensor of 3 elements (the size of axis 1)}}
    %b = "onnx.QuantizeLinear"(%x, %s2) : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<*xui8> loc("qaxis")
    return %a, %b : tensor<*xi16>, tensor<*xui8>
  }
}

// -----

// CHECK: error: loc("mmi"): node 'mmi' (MatMulInteger, opset 14): A of type 'i32' is not supported; Kiln takes int8 and uint8
// CHECK: error: loc("tril"): node 'tril' (Trilu, opset 14): k must be a single int64, got 'tensor<2xi64>'
module attributes {onnx.opset_import = {ai.onnx = 14 : i64}} {
  func.func @integer_errors(%a: tensor<2x2xi32>, %x: tensor<3x3xf32>, %k: tensor<2xi64>) -> (tensor<*xi32>, tensor<*xf32>) {
    // expected-error@unknown {{node 'mmi' (MatMulInteger, opset 14): A of type 'i32' is not supported; Kiln takes int8 and uint8}}
    %y = "onnx.MatMulInteger"(%a, %a) : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<*xi32> loc("mmi")
    // expected-error@unknown {{node 'tril' (Trilu, opset 14): k must be a single int64, got 'tensor<2xi64>'}}
    %t = "onnx.Trilu"(%x, %k) {upper = 0 : i64} : (tensor<3x3xf32>, tensor<2xi64>) -> tensor<*xf32> loc("tril")
    return %y, %t : tensor<*xi32>, tensor<*xf32>
  }
}

// -----

// A zero point of another type than the data it dequantizes (a float8 zero
// point for int8 weights): ONNX types them alike, so the model is refused.
// CHECK: error: loc("dq_mixed"): node 'dq_mixed' (DequantizeLinear, opset 19): x_zero_point is 'f8E4M3FN' but x is 'i8'; ONNX requires them to be of one type: check the converter that wrote the model
module attributes {onnx.opset_import = {ai.onnx = 19 : i64}} {
  func.func @dequantize_mixed(%x: tensor<2x3xi8>, %s: tensor<f32>, %z: tensor<f8E4M3FN>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'dq_mixed' (DequantizeLinear, opset 19): x_zero_point is 'f8E4M3FN' but x is 'i8'; ONNX requires them to be of one type: check the converter that wrote the model}}
    %y = "onnx.DequantizeLinear"(%x, %s, %z) : (tensor<2x3xi8>, tensor<f32>, tensor<f8E4M3FN>) -> tensor<*xf32> loc("dq_mixed")
    return %y : tensor<*xf32>
  }
}
