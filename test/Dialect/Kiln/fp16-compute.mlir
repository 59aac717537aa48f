// RUN: kiln-opt %s --split-input-file --kiln-fp16-compute=half-storage=0 --verify-diagnostics | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-fp16-compute --verify-diagnostics --mlir-elide-resource-strings-if-larger=64 | FileCheck %s --check-prefix=DEFAULT

// With half-storage=0 every constant weight is stored as fp16. By default
// (the last case) only large weights that meet few rows are.

// A MatMul with constant weights: the weights become an fp16 constant
// widened by a cast (0.1 rounds to fp16 0x2E66 = 0.0999755859375, stored
// little-endian after the blob's 4-byte alignment header), and the run-time
// input is rounded through f16 and back.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf32>)
// CHECK-DAG: %[[W16:.+]] = kiln.constant dense_resource<[[BLOB:fp16_weights[_0-9]*]]> : tensor<8x4xf16>
// CHECK-DAG: %[[W:.+]] = kiln.cast %[[W16]] to f32 : tensor<8x4xf16> -> tensor<8x4xf32>
// CHECK-DAG: %[[X16:.+]] = kiln.cast %[[X]] to f16 : tensor<2x8xf32> -> tensor<2x8xf16>
// CHECK-DAG: %[[XR:.+]] = kiln.cast %[[X16]] to f32 : tensor<2x8xf16> -> tensor<2x8xf32>
// CHECK: %[[Y:.+]] = kiln.matmul %[[XR]], %[[W]] {kiln.fp16} : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
// CHECK-NOT: tensor<8x4xf32> = kiln.constant
// CHECK: return %[[Y]]
// CHECK: [[BLOB]]: "0x02000000{{(662E){32}"}}
// expected-remark @below {{fp16: 1 of 1 MatMul/Gemm/Conv nodes in fp16}}
func.func @matmul(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w = kiln.constant dense<0.1> : tensor<8x4xf32>
  %0 = kiln.matmul %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Gemm with transB: the fp16 weights are stored [K, N] and transB cleared.
// B = [[1, 2, 3], [4, 5, 6]] (N = 2, K = 3) is stored as [[1, 4], [2, 5],
// [3, 6]]: fp16 1 = 0x3C00, 2 = 0x4000, 3 = 0x4200, 4 = 0x4400, 5 = 0x4500,
// 6 = 0x4600. The bias C stays f32.
// CHECK-LABEL: func.func @gemm_trans_b
// CHECK-DAG: %[[W16:.+]] = kiln.constant dense_resource<[[BLOB:fp16_weights[_0-9]*]]> : tensor<3x2xf16>
// CHECK-DAG: %[[W:.+]] = kiln.cast %[[W16]] to f32 : tensor<3x2xf16> -> tensor<3x2xf32>
// CHECK-DAG: %[[C:.+]] = kiln.constant dense<5.000000e-01> : tensor<2xf32>
// CHECK: kiln.gemm %{{.+}}, %[[W]], %[[C]] {alpha = 2.000000e+00 : f32, kiln.fp16} : (tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
// CHECK: [[BLOB]]: "0x02000000003C00440040004500420046"
// expected-remark @below {{fp16: 1 of 1 MatMul/Gemm/Conv nodes in fp16}}
func.func @gemm_trans_b(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %c = kiln.constant dense<0.5> : tensor<2xf32>
  %0 = kiln.gemm %x, %w, %c {alpha = 2.0 : f32, trans_b = true} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// Two convolutions (one depthwise) read the same input: it is rounded once.
// Values outside fp16's range saturate to infinity and tiny ones flush to
// zero, as fp16 does (70000 -> 0x7C00, 1e-9 -> 0). The bias stays f32.
// CHECK-LABEL: func.func @shared_input
// CHECK: %[[X16:.+]] = kiln.cast %arg0 to f16
// CHECK: %[[XR:.+]] = kiln.cast %[[X16]] to f32
// CHECK-NOT: kiln.cast %arg0
// CHECK-DAG: kiln.conv2d %[[XR]], %{{.+}}, %{{.+}} {{.*}}group = 1
// CHECK-DAG: kiln.conv2d %[[XR]], %{{.+}} {{.*}}group = 2
// CHECK-DAG: dense_resource<{{.+}}> : tensor<1x1x2x2xf16>
// CHECK-DAG: dense<1.000000e+00> : tensor<2xf32>
// CHECK-DAG: "0x02000000007C00000000003C"
// expected-remark @below {{fp16: 2 of 2 MatMul/Gemm/Conv nodes in fp16}}
func.func @shared_input(%x: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) {
  %w = kiln.constant dense<[[[[70000.0, 1.0e-9], [0.0, 1.0]]]]> : tensor<1x1x2x2xf32>
  %b = kiln.constant dense<1.0> : tensor<2xf32>
  %dw = kiln.constant dense<0.5> : tensor<3x3x1x2xf32>
  %0 = kiln.conv2d %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64, layout = "NHWC"} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %1 = kiln.conv2d %x, %dw {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64, layout = "NHWC"} : (tensor<1x4x4x2xf32>, tensor<3x3x1x2xf32>) -> tensor<1x4x4x2xf32>
  return %0, %1 : tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>
}

// -----

// --keep-fp32 leaves the named node in f32; integer products are not
// converted. A name that matches nothing gets a remark.
// CHECK-LABEL: func.func @keep
// CHECK: %[[W16:.+]] = kiln.constant dense_resource<{{.+}}> : tensor<8x16xf16>
// CHECK: %[[A:.+]] = kiln.matmul %{{.+}}, %{{.+}} : (tensor<4x8xf32>, tensor<8x16xf32>)
// CHECK: kiln.matmul %[[A]], %{{.+}} : (tensor<4x16xf32>, tensor<16x16xf32>)
// CHECK: kiln.matmul %{{.+}}, %{{.+}} : (tensor<4x8xi32>, tensor<8x8xi32>)
// expected-remark @below {{--keep-fp32 names '/typo', which is not a MatMul/Gemm/Conv node of the model that would have been converted (names are ONNX node names)}}
module attributes {kiln.keep_fp32 = ["/fc2/MatMul", "/typo"]} {
  // expected-remark @below {{fp16: 1 of 3 MatMul/Gemm/Conv nodes in fp16; 1 kept in f32 (--keep-fp32): '/fc2/MatMul'; 1 kept in f32 (not f32): '/int/MatMul'}}
  func.func @keep(%x: tensor<4x8xf32>, %i: tensor<4x8xi32>) -> (tensor<4x16xf32>, tensor<4x8xi32>) {
    %w1 = kiln.constant dense<1.0> : tensor<8x16xf32>
    %w2 = kiln.constant dense<1.0> : tensor<16x16xf32>
    %wi = kiln.constant dense<1> : tensor<8x8xi32>
    %0 = kiln.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> loc("/fc1/MatMul")
    %1 = kiln.matmul %0, %w2 : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32> loc("/fc2/MatMul")
    %2 = kiln.matmul %i, %wi : (tensor<4x8xi32>, tensor<8x8xi32>) -> tensor<4x8xi32> loc("/int/MatMul")
    return %1, %2 : tensor<4x16xf32>, tensor<4x8xi32>
  }
}

// -----

// By default, weights over 256 KiB that meet fewer than 64 rows are stored
// as fp16 (a matrix-vector product reading 266 KiB); those that meet 64 rows
// or more, like small ones, are f32 constants holding the rounded values
// (no cast, no conversion in the kernel).
// DEFAULT-LABEL: func.func @storage
// DEFAULT-DAG: %[[BIG16:.+]] = kiln.constant dense_resource<fp16_weights{{[_0-9]*}}> : tensor<256x260xf16>
// DEFAULT-DAG: %[[BIG:.+]] = kiln.cast %[[BIG16]] to f32
// DEFAULT-DAG: %[[TALL:.+]] = kiln.constant dense_resource<fp16_rounded_weights{{[_0-9]*}}> : tensor<256x260xf32>
// DEFAULT-DAG: %[[SMALL:.+]] = kiln.constant dense_resource<fp16_rounded_weights{{[_0-9]*}}> : tensor<8x4xf32>
// DEFAULT-DAG: kiln.matmul %{{.+}}, %[[BIG]] {kiln.fp16} : (tensor<1x256xf32>
// DEFAULT-DAG: kiln.matmul %{{.+}}, %[[TALL]] {kiln.fp16} : (tensor<64x256xf32>
// DEFAULT-DAG: kiln.matmul %{{.+}}, %[[SMALL]] {kiln.fp16} : (tensor<1x8xf32>
// expected-remark @below {{fp16: 3 of 3 MatMul/Gemm/Conv nodes in fp16}}
func.func @storage(%v: tensor<1x256xf32>, %m: tensor<64x256xf32>, %s: tensor<1x8xf32>) -> (tensor<1x260xf32>, tensor<64x260xf32>, tensor<1x4xf32>) {
  %big = kiln.constant dense<0.1> : tensor<256x260xf32>
  %tall = kiln.constant dense<0.2> : tensor<256x260xf32>
  %small = kiln.constant dense<0.1> : tensor<8x4xf32>
  %0 = kiln.matmul %v, %big : (tensor<1x256xf32>, tensor<256x260xf32>) -> tensor<1x260xf32>
  %1 = kiln.matmul %m, %tall : (tensor<64x256xf32>, tensor<256x260xf32>) -> tensor<64x260xf32>
  %2 = kiln.matmul %s, %small : (tensor<1x8xf32>, tensor<8x4xf32>) -> tensor<1x4xf32>
  return %0, %1, %2 : tensor<1x260xf32>, tensor<64x260xf32>, tensor<1x4xf32>
}
