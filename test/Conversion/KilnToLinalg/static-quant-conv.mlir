// RUN: kiln-opt %s --kiln-convert-kiln-to-linalg | FileCheck %s

// Static int8 rows longer than 64 bytes are padded along K to a multiple of
// 64 bytes for the product; the padded columns meet zero weights, and an
// integer product adds exactly 0 for them whatever they hold, so the zero
// fill under them is marked kiln.unread_padding (tile-and-vectorize and
// fill-borders then drop it once the interior is known to be overwritten).

// A 1x1 conv on 72 channels: the pixels are the rows, [16, 72] padded to
// [16, 128].
// CHECK-LABEL: func.func @pointwise
// CHECK: %[[F:.+]] = linalg.fill {kiln.unread_padding} ins(%{{.+}} : i8) outs(%{{.+}} : tensor<16x128xi8>)
// CHECK: tensor.insert_slice %{{.+}} into %[[F]][0, 0] [16, 72] [1, 1]
// CHECK-NOT: kiln.unread_padding
// CHECK: return
func.func @pointwise(%x: tensor<1x4x4x72xf32>, %w: tensor<1x32x64xi8>, %s: tensor<16xf32>, %sum: tensor<16xi32>) -> tensor<1x4x4x16xf32> {
  %0 = kiln.static_quant_conv2d %x, %w, %s, %sum {input_scale = 0.02 : f32, input_zero_point = 10 : i64, kernel = array<i64: 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x72xf32>, tensor<1x32x64xi8>, tensor<16xf32>, tensor<16xi32>) -> tensor<1x4x4x16xf32>
  return %0 : tensor<1x4x4x16xf32>
}

// A K of at most 64 bytes is one narrower step of the AMX kernel and is not
// padded: a 1x1 conv on 16 channels quantizes its [16, 16] rows in place.
// CHECK-LABEL: func.func @narrow
// CHECK-NOT: linalg.fill {{.+}} : i8)
// CHECK-NOT: tensor.insert_slice
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : tensor<16x16xi8>)
// CHECK: attrs = {kiln.int8_matmul}
// CHECK: return
func.func @narrow(%x: tensor<1x4x4x16xf32>, %w: tensor<1x4x64xi8>, %s: tensor<16xf32>, %sum: tensor<16xi32>) -> tensor<1x4x4x16xf32> {
  %0 = kiln.static_quant_conv2d %x, %w, %s, %sum {input_scale = 0.02 : f32, input_zero_point = 10 : i64, kernel = array<i64: 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x16xf32>, tensor<1x4x64xi8>, tensor<16xf32>, tensor<16xi32>) -> tensor<1x4x4x16xf32>
  return %0 : tensor<1x4x4x16xf32>
}

// A 3x3 conv on 8 channels: the window's 72 values are unfolded into the
// first 72 of 128 columns. The spatial padding holds the zero point (an
// exact 0 that the product does read) and keeps its plain fill.
// CHECK-LABEL: func.func @window
// CHECK: linalg.fill ins(%{{.+}} : i8) outs(%{{.+}} : tensor<1x6x6x8xi8>)
// CHECK: %[[FW:.+]] = linalg.fill {kiln.unread_padding} ins(%{{.+}} : i8) outs(%{{.+}} : tensor<16x128xi8>)
// CHECK: tensor.insert_slice %{{.+}} into %[[FW]][0, 0] [16, 72] [1, 1]
// CHECK: return
func.func @window(%x: tensor<1x4x4x8xf32>, %w: tensor<1x32x64xi8>, %s: tensor<16xf32>, %sum: tensor<16xi32>) -> tensor<1x4x4x16xf32> {
  %0 = kiln.static_quant_conv2d %x, %w, %s, %sum {input_scale = 0.02 : f32, input_zero_point = 10 : i64, kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x8xf32>, tensor<1x32x64xi8>, tensor<16xf32>, tensor<16xi32>) -> tensor<1x4x4x16xf32>
  return %0 : tensor<1x4x4x16xf32>
}

// bf16's padding must stay zero: an Inf or NaN left there times a zero
// weight is NaN.
// CHECK-LABEL: func.func @bf16
// CHECK-NOT: kiln.unread_padding
// CHECK: return
func.func @bf16(%x: tensor<1x4x4x8xf32>, %w: tensor<1x48x32xbf16>) -> tensor<1x4x4x16xf32> {
  %0 = kiln.bf16_conv2d %x, %w {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x8xf32>, tensor<1x48x32xbf16>) -> tensor<1x4x4x16xf32>
  return %0 : tensor<1x4x4x16xf32>
}
