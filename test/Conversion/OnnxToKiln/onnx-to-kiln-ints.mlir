// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// Unsigned tensors, integer ops and quantization. Unsigned element types
// (ui8..ui64) stay on the kiln ops, which compute unsigned on them.

// CHECK-LABEL: func.func @unsigned_arith
// CHECK-SAME: (%[[A:.+]]: tensor<3xui8>, %[[B:.+]]: tensor<3xui8>)
// CHECK: %[[D:.+]] = kiln.div %[[A]], %[[B]] : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
// CHECK: %[[M:.+]] = kiln.max %[[D]], %[[B]] : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
// CHECK: %[[R:.+]] = kiln.mod %[[M]], %[[B]] : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
// CHECK: %[[F:.+]] = kiln.cast %[[R]] to f32 : tensor<3xui8> -> tensor<3xf32>
// CHECK: %[[U:.+]] = kiln.cast %[[F]] to ui16 : tensor<3xf32> -> tensor<3xui16>
// CHECK: return %[[U]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @unsigned_arith(%a: tensor<3xui8>, %b: tensor<3xui8>) -> tensor<*xui16> {
    %d = "onnx.Div"(%a, %b) : (tensor<3xui8>, tensor<3xui8>) -> tensor<*xui8> loc("div")
    %m = "onnx.Max"(%d, %b) : (tensor<*xui8>, tensor<3xui8>) -> tensor<*xui8> loc("max")
    %r = "onnx.Mod"(%m, %b) : (tensor<*xui8>, tensor<3xui8>) -> tensor<*xui8> loc("mod")
    %f = "onnx.Cast"(%r) {to = 1 : i64} : (tensor<*xui8>) -> tensor<*xf32> loc("to_float")
    %u = "onnx.Cast"(%f) {to = 4 : i64} : (tensor<*xf32>) -> tensor<*xui16> loc("to_uint16")
    return %u : tensor<*xui16>
  }
}

// -----

// CHECK-LABEL: func.func @bitshift
// CHECK: kiln.bitshift %{{.+}}, %{{.+}} {left = true} : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
// CHECK: kiln.bitshift %{{.+}}, %{{.+}} {left = false} : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @bitshift(%a: tensor<3xui32>, %b: tensor<3xui32>) -> (tensor<*xui32>, tensor<*xui32>) {
    %l = "onnx.BitShift"(%a, %b) {direction = "LEFT"} : (tensor<3xui32>, tensor<3xui32>) -> tensor<*xui32> loc("left")
    %r = "onnx.BitShift"(%a, %b) {direction = "RIGHT"} : (tensor<3xui32>, tensor<3xui32>) -> tensor<*xui32> loc("right")
    return %l, %r : tensor<*xui32>, tensor<*xui32>
  }
}

// -----

// Integer Pow goes through float64 and rounds back.
// CHECK-LABEL: func.func @pow_int
// CHECK: %[[A:.+]] = kiln.cast %{{.+}} to f64 : tensor<3xi32> -> tensor<3xf64>
// CHECK: %[[B:.+]] = kiln.cast %{{.+}} to f64 : tensor<3xi32> -> tensor<3xf64>
// CHECK: %[[P:.+]] = kiln.pow %[[A]], %[[B]]
// CHECK: %[[R:.+]] = kiln.round %[[P]] : tensor<3xf64>
// CHECK: kiln.cast %[[R]] to i32 : tensor<3xf64> -> tensor<3xi32>
module attributes {onnx.opset_import = {ai.onnx = 15 : i64}} {
  func.func @pow_int(%a: tensor<3xi32>, %b: tensor<3xi32>) -> tensor<*xi32> {
    %p = "onnx.Pow"(%a, %b) : (tensor<3xi32>, tensor<3xi32>) -> tensor<*xi32> loc("pow")
    return %p : tensor<*xi32>
  }
}

// -----

// CHECK-LABEL: func.func @isnan_isinf
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[EQ:.+]] = kiln.equal %[[X]], %[[X]]
// CHECK: kiln.not %[[EQ]] : tensor<4xi1>
// CHECK-DAG: %[[PINF:.+]] = kiln.constant dense<0x7F800000> : tensor<f32>
// CHECK-DAG: %[[NINF:.+]] = kiln.constant dense<0xFF800000> : tensor<f32>
// CHECK-DAG: %[[P:.+]] = kiln.equal %[[X]], %[[PINF]]
// CHECK-DAG: %[[N:.+]] = kiln.equal %[[X]], %[[NINF]]
// CHECK: kiln.or %[[P]], %[[N]]
// CHECK: kiln.constant dense<false> : tensor<4xi1>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @isnan_isinf(%x: tensor<4xf32>) -> (tensor<*xi1>, tensor<*xi1>, tensor<*xi1>) {
    %a = "onnx.IsNaN"(%x) : (tensor<4xf32>) -> tensor<*xi1> loc("nan")
    %b = "onnx.IsInf"(%x) : (tensor<4xf32>) -> tensor<*xi1> loc("inf")
    %c = "onnx.IsInf"(%x) {detect_negative = 0 : i64, detect_positive = 0 : i64} : (tensor<4xf32>) -> tensor<*xi1> loc("none")
    return %a, %b, %c : tensor<*xi1>, tensor<*xi1>, tensor<*xi1>
  }
}

// -----

// CHECK-LABEL: func.func @mean_shrink
// CHECK: %[[S:.+]] = kiln.add
// CHECK: %[[S2:.+]] = kiln.add %[[S]]
// CHECK: %[[THREE:.+]] = kiln.constant dense<3.000000e+00> : tensor<f32>
// CHECK: kiln.div %[[S2]], %[[THREE]]
// CHECK: kiln.less
// CHECK: kiln.greater
// CHECK: kiln.where
// CHECK: kiln.where
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @mean_shrink(%a: tensor<3xf32>, %b: tensor<3xf32>, %c: tensor<1xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %m = "onnx.Mean"(%a, %b, %c) : (tensor<3xf32>, tensor<3xf32>, tensor<1xf32>) -> tensor<*xf32> loc("mean")
    %s = "onnx.Shrink"(%a) {lambd = 1.5 : f32, bias = 1.5 : f32} : (tensor<3xf32>) -> tensor<*xf32> loc("shrink")
    return %m, %s : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Trilu's k is a run-time input here: the column - row table is a constant
// compared with k in the graph.
// CHECK-LABEL: func.func @trilu_runtime_k
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xi64>, %[[K:.+]]: tensor<i64>)
// CHECK-DAG: %[[D:.+]] = kiln.constant dense<{{\[\[}}0, 1, 2, 3], [-1, 0, 1, 2], [-2, -1, 0, 1]]> : tensor<3x4xi64>
// CHECK: %[[KEEP:.+]] = kiln.less_equal %[[D]], %[[K]] : (tensor<3x4xi64>, tensor<i64>) -> tensor<3x4xi1>
// CHECK: kiln.where %[[KEEP]], %[[X]], %{{.+}} : (tensor<3x4xi1>, tensor<2x3x4xi64>, tensor<i64>) -> tensor<2x3x4xi64>
module attributes {onnx.opset_import = {ai.onnx = 14 : i64}} {
  func.func @trilu_runtime_k(%x: tensor<2x3x4xi64>, %k: tensor<i64>) -> tensor<*xi64> {
    %y = "onnx.Trilu"(%x, %k) {upper = 0 : i64} : (tensor<2x3x4xi64>, tensor<i64>) -> tensor<*xi64> loc("tril")
    return %y : tensor<*xi64>
  }
}

// -----

// Per-axis QuantizeLinear: the scale and zero point of axis 1 broadcast as
// [3, 1]; x / scale is rounded half to even, offset and saturated.
// CHECK-LABEL: func.func @quantize_axis
// CHECK: %[[Q:.+]] = kiln.div %{{.+}}, %{{.+}} : (tensor<2x3x2xf32>, tensor<3x1xf32>) -> tensor<2x3x2xf32>
// CHECK: %[[R:.+]] = kiln.round %[[Q]]
// CHECK: %[[Z:.+]] = kiln.cast %{{.+}} to f32 : tensor<3x1xui8> -> tensor<3x1xf32>
// CHECK: %[[A:.+]] = kiln.add %[[R]], %[[Z]]
// CHECK: %[[C:.+]] = kiln.clip %[[A]] {max = 2.550000e+02 : f32, min = 0.000000e+00 : f32}
// CHECK: kiln.cast %[[C]] to ui8 : tensor<2x3x2xf32> -> tensor<2x3x2xui8>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @quantize_axis(%x: tensor<2x3x2xf32>, %s: tensor<3xf32>, %z: tensor<3xui8>) -> tensor<*xui8> {
    %y = "onnx.QuantizeLinear"(%x, %s, %z) {axis = 1 : i64} : (tensor<2x3x2xf32>, tensor<3xf32>, tensor<3xui8>) -> tensor<*xui8> loc("q")
    return %y : tensor<*xui8>
  }
}

// -----

// CHECK-LABEL: func.func @dequantize
// CHECK: %[[X:.+]] = kiln.cast %{{.+}} to f32 : tensor<4xi8> -> tensor<4xf32>
// CHECK: %[[Z:.+]] = kiln.cast %{{.+}} to f32 : tensor<i8> -> tensor<f32>
// CHECK: %[[D:.+]] = kiln.sub %[[X]], %[[Z]]
// CHECK: kiln.mul %[[D]], %{{.+}} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @dequantize(%x: tensor<4xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<*xf32> {
    %y = "onnx.DequantizeLinear"(%x, %s, %z) : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<*xf32> loc("dq")
    return %y : tensor<*xf32>
  }
}

// -----

// MatMulInteger: both operands widen to i32 and lose their zero points (A's
// per row, as [M, 1]) before an i32 kiln.matmul.
// CHECK-LABEL: func.func @matmul_integer
// CHECK-DAG: %[[A:.+]] = kiln.cast %{{.+}} to i32 : tensor<4x3xui8> -> tensor<4x3xi32>
// CHECK-DAG: %[[AZ:.+]] = kiln.cast %{{.+}} to i32 : tensor<4x1xui8> -> tensor<4x1xi32>
// CHECK-DAG: %[[A2:.+]] = kiln.sub %[[A]], %[[AZ]]
// CHECK-DAG: %[[B:.+]] = kiln.cast %{{.+}} to i32 : tensor<3x2xi8> -> tensor<3x2xi32>
// CHECK: kiln.matmul %[[A2]], %[[B]] : (tensor<4x3xi32>, tensor<3x2xi32>) -> tensor<4x2xi32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @matmul_integer(%a: tensor<4x3xui8>, %b: tensor<3x2xi8>, %az: tensor<4xui8>) -> tensor<*xi32> {
    %y = "onnx.MatMulInteger"(%a, %b, %az) : (tensor<4x3xui8>, tensor<3x2xi8>, tensor<4xui8>) -> tensor<*xi32> loc("mmi")
    return %y : tensor<*xi32>
  }
}

// -----

// QLinearConv: an i32 convolution, the bias, then the f32 multiplier
// x_scale * w_scale / y_scale per output channel.
// CHECK-LABEL: func.func @qlinear_conv
// CHECK: %[[ACC:.+]] = kiln.conv2d %{{.+}}, %{{.+}} {{.+}} : (tensor<1x2x4x4xi32>, tensor<3x2x1x1xi32>) -> tensor<1x3x4x4xi32>
// CHECK: %[[B:.+]] = kiln.add %[[ACC]], %{{.+}} : (tensor<1x3x4x4xi32>, tensor<3x1x1xi32>) -> tensor<1x3x4x4xi32>
// CHECK: %[[F:.+]] = kiln.cast %[[B]] to f32
// CHECK: kiln.mul %[[F]], %{{.+}} : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
// CHECK: kiln.round
// CHECK: kiln.clip
// CHECK: kiln.cast %{{.+}} to ui8
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @qlinear_conv(%x: tensor<1x2x4x4xui8>, %xs: tensor<f32>, %xz: tensor<ui8>, %w: tensor<3x2x1x1xi8>, %ws: tensor<3xf32>, %wz: tensor<3xi8>, %ys: tensor<f32>, %yz: tensor<ui8>, %b: tensor<3xi32>) -> tensor<*xui8> {
    %y = "onnx.QLinearConv"(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %b) : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<3x2x1x1xi8>, tensor<3xf32>, tensor<3xi8>, tensor<f32>, tensor<ui8>, tensor<3xi32>) -> tensor<*xui8> loc("qconv")
    return %y : tensor<*xui8>
  }
}

// -----

// CHECK-LABEL: func.func @dynamic_quantize
// CHECK-SAME: -> (tensor<2x3xui8>, tensor<f32>, tensor<ui8>)
// CHECK: kiln.reduce_min %{{.+}} {axes = array<i64: 0, 1>, keepdims = false}
// CHECK: kiln.reduce_max %{{.+}} {axes = array<i64: 0, 1>, keepdims = false}
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @dynamic_quantize(%x: tensor<2x3xf32>) -> (tensor<*xui8>, tensor<*xf32>, tensor<*xui8>) {
    %y, %s, %z = "onnx.DynamicQuantizeLinear"(%x) : (tensor<2x3xf32>) -> (tensor<*xui8>, tensor<*xf32>, tensor<*xui8>) loc("dql")
    return %y, %s, %z : tensor<*xui8>, tensor<*xf32>, tensor<*xui8>
  }
}
