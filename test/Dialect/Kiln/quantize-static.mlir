// RUN: kiln-opt %s --kiln-quantize-static --verify-diagnostics | FileCheck %s
// RUN: kiln-opt %s --kiln-quantize-static=lane-k=true 2>/dev/null | FileCheck %s --check-prefix=LANE
// RUN: kiln-opt %s --kiln-quantize-static="lane-k=true depthwise=false" 2>&1 | FileCheck %s --check-prefix=AVX2

// Static int8 with the ranges of nodes 0..3: node 0 ([-1, 3]) gets scale
// 4 / 255 and zero point round(1 / (4 / 255)) = 64; node 1 is kept in f32.
// The conv filter is 0.25 everywhere: per column scale 0.25 / 127, q = 127
// (0x7F) for the K = 72 k of each of the 16 columns (18 rows of 64 bytes),
// zeros up to Kp = 128; column sums 72 * 127 = 9144. The 2x2 conv (K = 32)
// stays f32: under 64 values per window to unfold. The depthwise conv
// (node 2, [0, 5.1]: scale 0.02, zero point 0) has per channel weights
// over its 9 taps: scale 1 / 127, q = 127, sums 9 * 127 = 1143, packed as
// 3 kernel rows and a zero per 32-bit lane (7F7F7F00) for 3 x 16 (kw, c);
// the grouped conv stays f32. The MatMul (node 3, [0.5, 2] widened to [0, 2]:
// scale 2 / 255, zero point 0) has weights 1: scale 1 / 127, 16 k of q =
// 127 (4 rows; a K of at most 64 is not padded), sums 2032.
// For the VNNI kernel (lane-k) K is padded to whole 4-byte lanes only:
// the conv's K = 72 is 18 rows of 64 bytes, without the 14 rows of zeros.
// On AVX2 without VNNI (depthwise=false) the depthwise conv stays f32 and
// says why; its range is still consumed: the MatMul keeps node 3's.
// AVX2: remark: static int8: 2 of 6 MatMul/Gemm/Conv nodes quantized; {{.*}}1 kept in f32 (depthwise, which has no int8 kernel on this target (AVX2 without AVX512-VNNI)): 'dw'
// AVX2-LABEL: func.func @block
// AVX2: kiln.static_quant_conv2d
// AVX2-NOT: kiln.static_quant_depthwise_conv2d
// AVX2: kiln.conv2d {{.+}}group = 16
// AVX2-NOT: kiln.static_quant_depthwise_conv2d
// AVX2: kiln.static_quant_matmul %arg1, {{.+}} {input_scale = 0.00784313772 : f32, input_zero_point = 0 : i64}
// CHECK-LABEL: func.func @block
// LANE-LABEL: func.func @block
// LANE: %[[W:.+]] = kiln.constant dense_resource<[[BLOB:int8_weights[_0-9]*]]> : tensor<1x18x64xi8>
// LANE: kiln.static_quant_conv2d %arg0, %[[W]]
// LANE: [[BLOB]]: "0x08000000{{((7F){64}){18}"}}
// CHECK-DAG: %[[W:.+]] = kiln.constant dense_resource<[[BLOB:int8_weights[_0-9]*]]> : tensor<1x32x64xi8>
// CHECK-DAG: %[[S:.+]] = kiln.constant dense<0.00196850393> : tensor<16xf32>
// CHECK-DAG: %[[SUM:.+]] = kiln.constant dense<9144> : tensor<16xi32>
// CHECK: kiln.static_quant_conv2d %arg0, %[[W]], %[[S]], %[[SUM]], %arg2 {dilations = array<i64: 1, 1>, input_scale = {{.+}} : f32, input_zero_point = 64 : i64, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
// CHECK: kiln.conv2d %arg0, {{.+}}group = 1
// CHECK: kiln.conv2d %arg0, {{.+}}group = 1
// CHECK-DAG: %[[DWSUM:.+]] = kiln.constant dense<1143> : tensor<16xi32>
// CHECK-DAG: %[[DWS:.+]] = kiln.constant dense<0.00787401571> : tensor<16xf32>
// CHECK-DAG: %[[DW:.+]] = kiln.constant dense<"0x{{(7F7F7F00){48}"}}> : tensor<1x3x16x4xi8>
// CHECK: kiln.static_quant_depthwise_conv2d %{{.+}}, %[[DW]], %[[DWS]], %[[DWSUM]] {dilations = array<i64: 1, 1>, input_scale = 2.000000e-02 : f32, input_zero_point = 0 : i64, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x4x16xf32>, tensor<1x3x16x4xi8>, tensor<16xf32>, tensor<16xi32>) -> tensor<1x4x4x16xf32>
// CHECK: kiln.conv2d {{.+}}group = 2
// CHECK-DAG: %[[G:.+]] = kiln.constant dense_resource<[[GBLOB:int8_weights[_0-9]*]]> : tensor<1x4x64xi8>
// CHECK-DAG: %[[GS:.+]] = kiln.constant dense<0.00787401571> : tensor<16xf32>
// CHECK-DAG: %[[GSUM:.+]] = kiln.constant dense<2032> : tensor<16xi32>
// CHECK: kiln.static_quant_matmul %arg1, %[[G]], %[[GS]], %[[GSUM]] {input_scale = {{.+}} : f32, input_zero_point = 0 : i64} : (tensor<2x16xf32>, tensor<1x4x64xi8>, tensor<16xf32>, tensor<16xi32>) -> tensor<2x16xf32>
// CHECK-DAG: [[BLOB]]: "0x08000000{{((7F){64}){18}((00){64}){14}"}}
// CHECK-DAG: [[GBLOB]]: "0x08000000{{((7F){64}){4}"}}
module attributes {kiln.activation_ranges = [array<f32: -1.0, 3.0>, array<f32: 0.0, 1.0>, array<f32: 0.0, 5.1>, array<f32: 0.5, 2.0>], kiln.keep_fp32 = ["kept"]} {
// expected-remark @below {{static int8: 3 of 6 MatMul/Gemm/Conv nodes quantized; 1 kept in f32 (--keep-fp32): 'kept'; 1 kept in f32 (a window of K = KH * KW * C < 64 values, faster in f32): 'small'; 1 kept in f32 (grouped): 'grouped'}}
func.func @block(%x: tensor<1x4x4x8xf32>, %y: tensor<2x16xf32>, %b: tensor<16xf32>) -> (tensor<1x4x4x16xf32>, tensor<2x16xf32>) {
  %w = kiln.constant dense<0.25> : tensor<3x3x8x16xf32>
  %w1 = kiln.constant dense<0.5> : tensor<3x3x8x16xf32>
  %p = kiln.constant dense<0.5> : tensor<2x2x8x16xf32>
  %dw = kiln.constant dense<1.0> : tensor<3x3x1x16xf32>
  %gw = kiln.constant dense<1.0> : tensor<3x3x8x16xf32>
  %g = kiln.constant dense<1.0> : tensor<16x16xf32>
  %0 = kiln.conv2d %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64, layout = "NHWC"} : (tensor<1x4x4x8xf32>, tensor<3x3x8x16xf32>, tensor<16xf32>) -> tensor<1x4x4x16xf32>
  %1 = kiln.conv2d %x, %w1 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64, layout = "NHWC"} : (tensor<1x4x4x8xf32>, tensor<3x3x8x16xf32>) -> tensor<1x4x4x16xf32> loc("kept")
  %small = kiln.conv2d %x, %p {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 1, 1>, group = 1 : i64, layout = "NHWC"} : (tensor<1x4x4x8xf32>, tensor<2x2x8x16xf32>) -> tensor<1x4x4x16xf32> loc("small")
  %2 = kiln.conv2d %0, %dw {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 16 : i64, layout = "NHWC"} : (tensor<1x4x4x16xf32>, tensor<3x3x1x16xf32>) -> tensor<1x4x4x16xf32> loc("dw")
  %g2 = kiln.conv2d %2, %gw {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64, layout = "NHWC"} : (tensor<1x4x4x16xf32>, tensor<3x3x8x16xf32>) -> tensor<1x4x4x16xf32> loc("grouped")
  %s = kiln.add %g2, %1 : (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %3 = kiln.add %s, %small : (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %4 = kiln.matmul %y, %g : (tensor<2x16xf32>, tensor<16x16xf32>) -> tensor<2x16xf32>
  return %3, %4 : tensor<1x4x4x16xf32>, tensor<2x16xf32>
}
}
