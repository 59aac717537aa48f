// RUN: kiln-opt %s --split-input-file --kiln-bf16-matmul --verify-diagnostics | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-bf16-matmul="run-time-products=false" 2>/dev/null | FileCheck %s --check-prefix=NORT

// A MatMul with constant weights and the constant bias its only user adds:
// one kiln.bf16_matmul. K = 8 fits in one tile row and is not padded: k
// pairs 0..3 of the one panel hold 0.5 (bf16 0x3F00) for each of the 16
// columns.
// CHECK-LABEL: func.func @matmul_bias
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x8xf32>)
// CHECK-DAG: %[[W:.+]] = kiln.constant dense_resource<[[BLOB:bf16_weights[_0-9]*]]> : tensor<1x4x32xbf16>
// CHECK-DAG: %[[B:.+]] = kiln.constant dense<2.500000e-01> : tensor<16xf32>
// CHECK: %[[Y:.+]] = kiln.bf16_matmul %[[X]], %[[W]], %[[B]] : (tensor<2x3x8xf32>, tensor<1x4x32xbf16>, tensor<16xf32>) -> tensor<2x3x16xf32>
// CHECK-NOT: kiln.matmul
// CHECK-NOT: kiln.add
// CHECK: return %[[Y]]
// CHECK: [[BLOB]]: "0x02000000{{(003F){128}"}}
// expected-remark @below {{bf16: 1 of 1 MatMul/Gemm nodes in bf16}}
func.func @matmul_bias(%x: tensor<2x3x8xf32>) -> tensor<2x3x16xf32> {
  %w = kiln.constant dense<0.5> : tensor<8x16xf32>
  %b = kiln.constant dense<0.25> : tensor<16xf32>
  %0 = kiln.matmul %x, %w : (tensor<2x3x8xf32>, tensor<8x16xf32>) -> tensor<2x3x16xf32>
  %1 = kiln.add %b, %0 : (tensor<16xf32>, tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  return %1 : tensor<2x3x16xf32>
}

// -----

// Gemm with transB: column n of W is row n of B, here (n + 1, 0, 0, 0,
// -(n + 1)); alpha = 2 scales the weights before rounding, beta * C is the
// bias. K = 5 pads to 6, three pairs: pair 0 of each column holds
// (2 (n + 1), 0), pair 1 zeros, pair 2 (-2 (n + 1), 0): 2 = 0x4000,
// 4 = 0x4080, ..., 32 = 0x4200.
// CHECK-LABEL: func.func @gemm_trans_b
// CHECK-DAG: %[[W:.+]] = kiln.constant dense_resource<[[BLOB:bf16_weights[_0-9]*]]> : tensor<1x3x32xbf16>
// CHECK-DAG: %[[B:.+]] = kiln.constant dense<5.000000e-01> : tensor<16xf32>
// CHECK: kiln.bf16_matmul %{{.+}}, %[[W]], %[[B]] : (tensor<4x5xf32>, tensor<1x3x32xbf16>, tensor<16xf32>) -> tensor<4x16xf32>
// CHECK-NOT: kiln.gemm
// CHECK: [[BLOB]]: "0x020000000040000080400000C0400000004100002041000040410000604100008041000090410000A0410000B0410000C0410000D0410000E0410000F041000000420000{{(0000){31}0000}}00C0000080C00000C0C0000000C1000020C1000040C1000060C1000080C1000090C10000A0C10000B0C10000C0C10000D0C10000E0C10000F0C1000000C20000"{{$}}
// expected-remark @below {{bf16: 1 of 1 MatMul/Gemm nodes in bf16}}
func.func @gemm_trans_b(%x: tensor<4x5xf32>) -> tensor<4x16xf32> {
  %w = kiln.constant dense<[[1.0, 0.0, 0.0, 0.0, -1.0], [2.0, 0.0, 0.0, 0.0, -2.0], [3.0, 0.0, 0.0, 0.0, -3.0], [4.0, 0.0, 0.0, 0.0, -4.0], [5.0, 0.0, 0.0, 0.0, -5.0], [6.0, 0.0, 0.0, 0.0, -6.0], [7.0, 0.0, 0.0, 0.0, -7.0], [8.0, 0.0, 0.0, 0.0, -8.0], [9.0, 0.0, 0.0, 0.0, -9.0], [10.0, 0.0, 0.0, 0.0, -10.0], [11.0, 0.0, 0.0, 0.0, -11.0], [12.0, 0.0, 0.0, 0.0, -12.0], [13.0, 0.0, 0.0, 0.0, -13.0], [14.0, 0.0, 0.0, 0.0, -14.0], [15.0, 0.0, 0.0, 0.0, -15.0], [16.0, 0.0, 0.0, 0.0, -16.0]]> : tensor<16x5xf32>
  %c = kiln.constant dense<1.0> : tensor<16xf32>
  %0 = kiln.gemm %x, %w, %c {alpha = 2.0 : f32, beta = 0.5 : f32, trans_b = true} : (tensor<4x5xf32>, tensor<16x5xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// Rounding to nearest even: 1 + 2^-8 is halfway between the bf16 neighbours
// 1 (0x3F80) and 1 + 2^-7 (0x3F81) and goes to the even one; 1 + 3 * 2^-9
// rounds up to 0x3F81.
// CHECK-LABEL: func.func @round_to_nearest_even
// CHECK: [[BLOB:bf16_weights[_0-9]*]]: "0x02000000803F813F{{(803F813F){15}"}}
// expected-remark @below {{bf16: 1 of 1 MatMul/Gemm nodes in bf16}}
func.func @round_to_nearest_even(%x: tensor<1x2xf32>) -> tensor<1x16xf32> {
  %w = kiln.constant dense<[[1.00390625, 1.00390625, 1.00390625, 1.00390625, 1.00390625, 1.00390625, 1.00390625, 1.00390625, 1.00390625, 1.00390625, 1.00390625, 1.00390625, 1.00390625, 1.00390625, 1.00390625, 1.00390625], [1.005859375, 1.005859375, 1.005859375, 1.005859375, 1.005859375, 1.005859375, 1.005859375, 1.005859375, 1.005859375, 1.005859375, 1.005859375, 1.005859375, 1.005859375, 1.005859375, 1.005859375, 1.005859375]]> : tensor<2x16xf32>
  %0 = kiln.matmul %x, %w : (tensor<1x2xf32>, tensor<2x16xf32>) -> tensor<1x16xf32>
  return %0 : tensor<1x16xf32>
}

// -----

// 10 output columns take one panel whose last 6 columns are zero weights. A
// product of two run-time tensors becomes kiln.bf16_batch_matmul on
// [1, M, K] x [1, K, N] views; a batched one keeps its batch, folded into
// one dimension; one with a broadcast batch stays f32.
// CHECK-LABEL: func.func @narrow_and_attention
// CHECK-DAG: %[[A:.+]] = kiln.reshape %arg0 : tensor<4x8xf32> to tensor<1x4x8xf32>
// CHECK-DAG: %[[B:.+]] = kiln.reshape %arg1 : tensor<8x4xf32> to tensor<1x8x4xf32>
// CHECK: %[[P:.+]] = kiln.bf16_batch_matmul %[[A]], %[[B]] : (tensor<1x4x8xf32>, tensor<1x8x4xf32>) -> tensor<1x4x4xf32>
// CHECK: kiln.reshape %[[P]] : tensor<1x4x4xf32> to tensor<4x4xf32>
// CHECK: kiln.bf16_matmul %arg0, %{{.+}} : (tensor<4x8xf32>, tensor<1x4x32xbf16>) -> tensor<4x10xf32>
// CHECK: kiln.bf16_batch_matmul %{{.+}}, %{{.+}} : (tensor<6x4x8xf32>, tensor<6x8x4xf32>) -> tensor<6x4x4xf32>
// CHECK: kiln.matmul %arg4, %arg5 : (tensor<2x4x8xf32>, tensor<1x8x4xf32>) -> tensor<2x4x4xf32>
// Without run-time products (a target without AMX: the vdpbf16ps kernel
// takes constant weights only) they all stay kiln.matmul.
// NORT-LABEL: func.func @narrow_and_attention
// NORT-NOT: kiln.bf16_batch_matmul
// NORT: kiln.matmul %arg0, %arg1 : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
// NORT: kiln.bf16_matmul %arg0, %{{.+}} : (tensor<4x8xf32>, tensor<1x4x32xbf16>) -> tensor<4x10xf32>
// NORT: kiln.matmul %arg2, %arg3
// NORT-NOT: kiln.bf16_batch_matmul
// NORT: return
// expected-remark @below {{bf16: 2 of 3 MatMul (two run-time operands) nodes in bf16; 1 kept in f32 (batch dimensions broadcast): 'broadcast'}}
// expected-remark @below {{bf16: 1 of 2 MatMul/Gemm nodes in bf16; 1 kept in f32 (weights computed at run time): 'broadcast'}}
func.func @narrow_and_attention(%x: tensor<4x8xf32>, %y: tensor<8x4xf32>, %q: tensor<2x3x4x8xf32>, %k: tensor<2x3x8x4xf32>, %bq: tensor<2x4x8xf32>, %bk: tensor<1x8x4xf32>) -> (tensor<4x4xf32>, tensor<4x10xf32>, tensor<2x3x4x4xf32>, tensor<2x4x4xf32>) {
  %w = kiln.constant dense<1.0> : tensor<8x10xf32>
  %0 = kiln.matmul %x, %y : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32> loc("attention")
  %1 = kiln.matmul %x, %w : (tensor<4x8xf32>, tensor<8x10xf32>) -> tensor<4x10xf32> loc("narrow")
  %2 = kiln.matmul %q, %k : (tensor<2x3x4x8xf32>, tensor<2x3x8x4xf32>) -> tensor<2x3x4x4xf32> loc("heads")
  %3 = kiln.matmul %bq, %bk : (tensor<2x4x8xf32>, tensor<1x8x4xf32>) -> tensor<2x4x4xf32> loc("broadcast")
  return %0, %1, %2, %3 : tensor<4x4xf32>, tensor<4x10xf32>, tensor<2x3x4x4xf32>, tensor<2x4x4xf32>
}

// -----

// Convolutions: an NHWC 3x3 one with a constant filter (K = 3 * 3 * 4 = 36,
// padded to 64; its bias stays an operand) becomes kiln.bf16_conv2d; a
// depthwise one keeps its f32 filter and reads its input rounded to bf16
// (a cast pair, marked kiln.bf16_input); a grouped one stays f32. The
// packed filter is HWCF read as [K, F]: every
// value 0.25 (0x3E80), so the first 18 pair rows of the one panel hold it
// and the last 14 are zeros.
// CHECK-LABEL: func.func @convs
// CHECK-DAG: %[[W:.+]] = kiln.constant dense_resource<[[BLOB:bf16_weights[_0-9]*]]> : tensor<1x32x32xbf16>
// CHECK: %[[Y:.+]] = kiln.bf16_conv2d %arg0, %[[W]], %arg1 {dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>, tensor<1x32x32xbf16>, tensor<16xf32>) -> tensor<1x4x4x16xf32>
// CHECK: %[[H:.+]] = kiln.cast %[[Y]] to bf16 : tensor<1x4x4x16xf32> -> tensor<1x4x4x16xbf16>
// CHECK: %[[F:.+]] = kiln.cast %[[H]] to f32 : tensor<1x4x4x16xbf16> -> tensor<1x4x4x16xf32>
// CHECK: %[[D:.+]] = kiln.conv2d %[[F]], {{.+}}group = 16 : i64, kiln.bf16_input
// CHECK: kiln.conv2d %[[D]], {{.+}}group = 2 : i64, layout
// CHECK: [[BLOB]]: "0x02000000{{((803E){192}){3}((0000){224}){2}"}}
// expected-remark @below {{bf16: 2 of 3 Conv nodes in bf16; 1 kept in f32 (grouped): 'grouped'}}
func.func @convs(%x: tensor<1x8x8x4xf32>, %b: tensor<16xf32>) -> tensor<1x4x4x16xf32> {
  %w = kiln.constant dense<0.25> : tensor<3x3x4x16xf32>
  %dw = kiln.constant dense<1.0> : tensor<3x3x1x16xf32>
  %gw = kiln.constant dense<1.0> : tensor<3x3x8x16xf32>
  %0 = kiln.conv2d %x, %w, %b {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64, layout = "NHWC"} : (tensor<1x8x8x4xf32>, tensor<3x3x4x16xf32>, tensor<16xf32>) -> tensor<1x4x4x16xf32>
  %1 = kiln.conv2d %0, %dw {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 16 : i64, layout = "NHWC"} : (tensor<1x4x4x16xf32>, tensor<3x3x1x16xf32>) -> tensor<1x4x4x16xf32> loc("dw")
  %2 = kiln.conv2d %1, %gw {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64, layout = "NHWC"} : (tensor<1x4x4x16xf32>, tensor<3x3x8x16xf32>) -> tensor<1x4x4x16xf32> loc("grouped")
  return %2 : tensor<1x4x4x16xf32>
}

// -----

// --keep-fp32 (the module attribute kiln.keep_fp32): the named node stays
// f32 and the remark says why; a name that matches no convertible node gets
// a remark of its own.
// CHECK-LABEL: func.func @keep
// CHECK: kiln.bf16_matmul %arg0, %{{.+}} : (tensor<4x8xf32>, tensor<1x4x32xbf16>) -> tensor<4x16xf32>
// CHECK: kiln.matmul %{{.+}}, %{{.+}} : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
// expected-remark @below {{--keep-fp32 names '/typo', which is not a MatMul/Gemm/Conv node of the model that would have been converted (names are ONNX node names)}}
module attributes {kiln.keep_fp32 = ["/fc2/MatMul", "/typo"]} {
  // expected-remark @below {{bf16: 1 of 2 MatMul/Gemm nodes in bf16; 1 kept in f32 (--keep-fp32): '/fc2/MatMul'}}
  func.func @keep(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
    %w1 = kiln.constant dense<1.0> : tensor<8x16xf32>
    %w2 = kiln.constant dense<1.0> : tensor<16x16xf32>
    %0 = kiln.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> loc("/fc1/MatMul")
    %1 = kiln.matmul %0, %w2 : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32> loc("/fc2/MatMul")
    return %1 : tensor<4x16xf32>
  }
}

// -----

// A 3x3 stem on RGB (K = 27, under one 32-value tile row) stays f32: its
// unfolding would copy 3 values at a time.
// CHECK-LABEL: func.func @rgb_stem
// CHECK: kiln.conv2d
// CHECK-NOT: kiln.bf16_conv2d
// expected-remark @below {{bf16: 0 of 1 Conv nodes in bf16; 1 kept in f32 (a window of K = KH * KW * C < 32 values, faster in f32): 'stem'}}
func.func @rgb_stem(%x: tensor<1x8x8x3xf32>) -> tensor<1x8x8x16xf32> {
  %w = kiln.constant dense<0.25> : tensor<3x3x3x16xf32>
  %0 = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64, layout = "NHWC"} : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) -> tensor<1x8x8x16xf32> loc("stem")
  return %0 : tensor<1x8x8x16xf32>
}
