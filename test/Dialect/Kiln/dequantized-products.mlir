// RUN: kiln-opt %s --split-input-file --kiln-dequantized-products | FileCheck %s --check-prefixes=CHECK,VNNI
// RUN: kiln-opt %s --split-input-file --kiln-dequantized-products=any-group=true | FileCheck %s --check-prefixes=CHECK,ANY

// A QDQ convolution as it imports: a uint8 activation dequantized with zero
// point 3 and scale 0.5, int8 weights with one scale per output channel, a
// bias. It becomes the i32 convolution of (q - 3) and the weights,
// scaled per channel by 0.5 * sw[f] ([1, F, 1, 1]), plus the bias.

// CHECK-LABEL: func.func @qdq_conv
// CHECK: %[[W:.+]] = kiln.constant dense<{{.+}}> : tensor<2x1x1x1xi8>
// CHECK: %[[Q:.+]] = kiln.cast %arg0 to i32 : tensor<1x1x4x4xui8> -> tensor<1x1x4x4xi32>
// CHECK: %[[ZP:.+]] = kiln.constant dense<3> : tensor<i32>
// CHECK: %[[A:.+]] = kiln.sub %[[Q]], %[[ZP]]
// CHECK: %[[WI:.+]] = kiln.cast %[[W]] to i32
// CHECK: %[[ACC:.+]] = kiln.conv2d %[[A]], %[[WI]] {{.+}} : (tensor<1x1x4x4xi32>, tensor<2x1x1x1xi32>) -> tensor<1x2x4x4xi32>
// CHECK: %[[F:.+]] = kiln.cast %[[ACC]] to f32
// CHECK: %[[S:.+]] = kiln.constant dense<{{\[\[\[\[}}5.000000e-02]], {{\[\[}}2.500000e-01]]]]> : tensor<1x2x1x1xf32>
// CHECK: %[[Y:.+]] = kiln.mul %[[F]], %[[S]]
// CHECK: %[[B:.+]] = kiln.reshape %{{.+}} : tensor<2xf32> to tensor<1x2x1x1xf32>
// CHECK: %[[R:.+]] = kiln.add %[[Y]], %[[B]]
// CHECK: return %[[R]]
func.func @qdq_conv(%q: tensor<1x1x4x4xui8>) -> tensor<1x2x4x4xf32> {
  %xs = kiln.constant dense<5.000000e-01> : tensor<f32>
  %xzp = kiln.constant dense<3.000000e+00> : tensor<f32>
  %w = kiln.constant dense<[[[[7]]], [[[-9]]]]> : tensor<2x1x1x1xi8>
  %ws = kiln.constant dense<[[[[1.000000e-01]]], [[[5.000000e-01]]]]> : tensor<2x1x1x1xf32>
  %b = kiln.constant dense<[1.000000e+00, -2.000000e+00]> : tensor<2xf32>
  %qf = kiln.cast %q to f32 : tensor<1x1x4x4xui8> -> tensor<1x1x4x4xf32>
  %c = kiln.sub %qf, %xzp : (tensor<1x1x4x4xf32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %x = kiln.mul %c, %xs : (tensor<1x1x4x4xf32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %wf = kiln.cast %w to f32 : tensor<2x1x1x1xi8> -> tensor<2x1x1x1xf32>
  %wd = kiln.mul %wf, %ws : (tensor<2x1x1x1xf32>, tensor<2x1x1x1xf32>) -> tensor<2x1x1x1xf32>
  %y = kiln.conv2d %x, %wd, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// An int8 activation (ONNX Runtime's default QDQ) moves to uint8: q + 128
// with zero point -5 + 128 = 123; a per-tensor weight scale.

// CHECK-LABEL: func.func @qdq_matmul_int8_activation
// CHECK: %[[W:.+]] = kiln.cast %arg0 to i32 : tensor<4x16xi8> -> tensor<4x16xi32>
// CHECK: %[[S:.+]] = kiln.add %[[W]], %{{.+}} : (tensor<4x16xi32>, tensor<i32>) -> tensor<4x16xi32>
// CHECK: %[[U:.+]] = kiln.cast %[[S]] to ui8 : tensor<4x16xi32> -> tensor<4x16xui8>
// CHECK: %[[UI:.+]] = kiln.cast %[[U]] to i32
// CHECK: %[[ZP:.+]] = kiln.constant dense<123> : tensor<i32>
// CHECK: %[[A:.+]] = kiln.sub %[[UI]], %[[ZP]]
// CHECK: %[[ACC:.+]] = kiln.matmul %[[A]], %{{.+}} : (tensor<4x16xi32>, tensor<16x8xi32>) -> tensor<4x8xi32>
// CHECK: kiln.cast %[[ACC]] to f32
// CHECK: kiln.constant dense<2.500000e-01> : tensor<8xf32>
func.func @qdq_matmul_int8_activation(%q: tensor<4x16xi8>) -> tensor<4x8xf32> {
  %xs = kiln.constant dense<5.000000e-01> : tensor<f32>
  %xzp = kiln.constant dense<-5.000000e+00> : tensor<f32>
  %w = kiln.constant dense<3> : tensor<16x8xi8>
  %ws = kiln.constant dense<5.000000e-01> : tensor<f32>
  %qf = kiln.cast %q to f32 : tensor<4x16xi8> -> tensor<4x16xf32>
  %c = kiln.sub %qf, %xzp : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %x = kiln.mul %c, %xs : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %wf = kiln.cast %w to f32 : tensor<16x8xi8> -> tensor<16x8xf32>
  %wd = kiln.mul %wf, %ws : (tensor<16x8xf32>, tensor<f32>) -> tensor<16x8xf32>
  %y = kiln.matmul %x, %wd : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A depthwise QDQ convolution (MobileNet's; one group per channel, 4
// channels) becomes the i32 depthwise convolution with the same group; one
// on 2 channels, which the int8 depthwise kernel cannot take, stays f32,
// unless the target has no int8 kernels (any-group: the f32 kernels run the
// integer product on a constant filter). So does a convolution of 2 groups
// of 2 channels.

// CHECK-LABEL: func.func @qdq_depthwise
// CHECK: %[[ACC:.+]] = kiln.conv2d %{{.+}}, %{{.+}} {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x5x5xi32>, tensor<4x1x3x3xi32>) -> tensor<1x4x5x5xi32>
// CHECK: kiln.cast %[[ACC]] to f32
// CHECK: kiln.constant dense<2.500000e-01> : tensor<1x4x1x1xf32>
// CHECK-LABEL: func.func @qdq_depthwise_two_channels
// VNNI-NOT: i32
// ANY: %[[ACC:.+]] = kiln.conv2d %{{.+}}, %{{.+}} {{.*}}group = 2 : i64{{.*}} : (tensor<1x2x5x5xi32>, tensor<2x1x3x3xi32>) -> tensor<1x2x5x5xi32>
// ANY: kiln.cast %[[ACC]] to f32
// CHECK-LABEL: func.func @qdq_grouped
// VNNI-NOT: i32
// ANY: %[[ACC:.+]] = kiln.conv2d %{{.+}}, %{{.+}} {{.*}}group = 2 : i64{{.*}} : (tensor<1x4x5x5xi32>, tensor<4x2x3x3xi32>) -> tensor<1x4x5x5xi32>
// ANY: %[[F:.+]] = kiln.cast %[[ACC]] to f32
// ANY: kiln.mul %[[F]], %{{.+}} : (tensor<1x4x5x5xf32>, tensor<1x4x1x1xf32>)
func.func @qdq_depthwise(%q: tensor<1x4x5x5xui8>) -> tensor<1x4x5x5xf32> {
  %xs = kiln.constant dense<5.000000e-01> : tensor<f32>
  %xzp = kiln.constant dense<3.000000e+00> : tensor<f32>
  %w = kiln.constant dense<2> : tensor<4x1x3x3xi8>
  %ws = kiln.constant dense<5.000000e-01> : tensor<f32>
  %qf = kiln.cast %q to f32 : tensor<1x4x5x5xui8> -> tensor<1x4x5x5xf32>
  %c = kiln.sub %qf, %xzp : (tensor<1x4x5x5xf32>, tensor<f32>) -> tensor<1x4x5x5xf32>
  %x = kiln.mul %c, %xs : (tensor<1x4x5x5xf32>, tensor<f32>) -> tensor<1x4x5x5xf32>
  %wf = kiln.cast %w to f32 : tensor<4x1x3x3xi8> -> tensor<4x1x3x3xf32>
  %wd = kiln.mul %wf, %ws : (tensor<4x1x3x3xf32>, tensor<f32>) -> tensor<4x1x3x3xf32>
  %y = kiln.conv2d %x, %wd {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x5x5xf32>
  return %y : tensor<1x4x5x5xf32>
}
func.func @qdq_depthwise_two_channels(%q: tensor<1x2x5x5xui8>) -> tensor<1x2x5x5xf32> {
  %xs = kiln.constant dense<5.000000e-01> : tensor<f32>
  %w = kiln.constant dense<2> : tensor<2x1x3x3xi8>
  %ws = kiln.constant dense<5.000000e-01> : tensor<f32>
  %qf = kiln.cast %q to f32 : tensor<1x2x5x5xui8> -> tensor<1x2x5x5xf32>
  %x = kiln.mul %qf, %xs : (tensor<1x2x5x5xf32>, tensor<f32>) -> tensor<1x2x5x5xf32>
  %wf = kiln.cast %w to f32 : tensor<2x1x3x3xi8> -> tensor<2x1x3x3xf32>
  %wd = kiln.mul %wf, %ws : (tensor<2x1x3x3xf32>, tensor<f32>) -> tensor<2x1x3x3xf32>
  %y = kiln.conv2d %x, %wd {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x5x5xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x5x5xf32>
  return %y : tensor<1x2x5x5xf32>
}
func.func @qdq_grouped(%q: tensor<1x4x5x5xui8>) -> tensor<1x4x5x5xf32> {
  %xs = kiln.constant dense<5.000000e-01> : tensor<f32>
  %w = kiln.constant dense<-3> : tensor<4x2x3x3xi8>
  %ws = kiln.constant dense<[[[[0.25]]], [[[0.5]]], [[[1.0]]], [[[2.0]]]]> : tensor<4x1x1x1xf32>
  %qf = kiln.cast %q to f32 : tensor<1x4x5x5xui8> -> tensor<1x4x5x5xf32>
  %x = kiln.mul %qf, %xs : (tensor<1x4x5x5xf32>, tensor<f32>) -> tensor<1x4x5x5xf32>
  %wf = kiln.cast %w to f32 : tensor<4x2x3x3xi8> -> tensor<4x2x3x3xf32>
  %wd = kiln.mul %wf, %ws : (tensor<4x2x3x3xf32>, tensor<4x1x1x1xf32>) -> tensor<4x2x3x3xf32>
  %y = kiln.conv2d %x, %wd {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x5x5xf32>
  return %y : tensor<1x4x5x5xf32>
}

// -----

// Weights with a zero point per tensor: the integers w - zp become the
// constant (3 - 1 = 2; uint8 weights with zero point 128, ONNX Runtime's
// QUInt8 weights, come out as int8 values).

// CHECK-LABEL: func.func @weight_zero_point
// CHECK: %[[W:.+]] = kiln.constant dense<2> : tensor<1x1x1x1xi32>
// CHECK: kiln.conv2d %{{.+}}, %[[W]] {{.*}} -> tensor<1x1x2x2xi32>
// CHECK: %[[U:.+]] = kiln.constant dense<{{\[}}[-128], [127]]> : tensor<2x1xi32>
// CHECK: kiln.matmul %{{.+}}, %[[U]] : {{.*}} -> tensor<3x1xi32>
func.func @weight_zero_point(%q: tensor<1x1x2x2xui8>, %q2: tensor<3x2xui8>) -> (tensor<1x1x2x2xf32>, tensor<3x1xf32>) {
  %s = kiln.constant dense<5.000000e-01> : tensor<f32>
  %w = kiln.constant dense<3> : tensor<1x1x1x1xi8>
  %wzp = kiln.constant dense<1.000000e+00> : tensor<f32>
  %qf = kiln.cast %q to f32 : tensor<1x1x2x2xui8> -> tensor<1x1x2x2xf32>
  %xd = kiln.mul %qf, %s : (tensor<1x1x2x2xf32>, tensor<f32>) -> tensor<1x1x2x2xf32>
  %wf = kiln.cast %w to f32 : tensor<1x1x1x1xi8> -> tensor<1x1x1x1xf32>
  %wc = kiln.sub %wf, %wzp : (tensor<1x1x1x1xf32>, tensor<f32>) -> tensor<1x1x1x1xf32>
  %wd = kiln.mul %wc, %s : (tensor<1x1x1x1xf32>, tensor<f32>) -> tensor<1x1x1x1xf32>
  %y = kiln.conv2d %xd, %wd {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32>
  %q2f = kiln.cast %q2 to f32 : tensor<3x2xui8> -> tensor<3x2xf32>
  %x2 = kiln.mul %q2f, %s : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  %u = kiln.constant dense<[[0], [255]]> : tensor<2x1xui8>
  %uzp = kiln.constant dense<1.280000e+02> : tensor<f32>
  %uf = kiln.cast %u to f32 : tensor<2x1xui8> -> tensor<2x1xf32>
  %uc = kiln.sub %uf, %uzp : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %ud = kiln.mul %uc, %s : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %z = kiln.matmul %x2, %ud : (tensor<3x2xf32>, tensor<2x1xf32>) -> tensor<3x1xf32>
  return %y, %z : tensor<1x1x2x2xf32>, tensor<3x1xf32>
}

// -----

// Weights with a zero point per output channel (ONNX Runtime's asymmetric
// per-channel QUInt8 weights): the zero points are folded into the constant
// per channel (3 - 1 = 2, 3 - 2 = 1). The scales and zero points are read
// through the reshape to [F, 1, 1, 1] and the cast of the uint8 zero points
// that DequantizeLinear with an axis imports as (folded for small
// constants, not for the resources of 64 or more values).

// CHECK-LABEL: func.func @weight_zero_point_per_channel
// CHECK: %[[W:.+]] = kiln.constant dense<{{\[\[\[\[}}2]]], {{\[\[\[}}1]]]]> : tensor<2x1x1x1xi32>
// CHECK: kiln.conv2d %{{.+}}, %[[W]] {{.*}} -> tensor<1x2x2x2xi32>
// CHECK: kiln.constant dense<{{\[\[\[\[}}5.000000e-02]], {{\[\[}}1.000000e-01]]]]> : tensor<1x2x1x1xf32>
func.func @weight_zero_point_per_channel(%q: tensor<1x1x2x2xui8>) -> tensor<1x2x2x2xf32> {
  %s = kiln.constant dense<5.000000e-01> : tensor<f32>
  %w = kiln.constant dense<3> : tensor<2x1x1x1xui8>
  %ws0 = kiln.constant dense<[1.000000e-01, 2.000000e-01]> : tensor<2xf32>
  %ws = kiln.reshape %ws0 : tensor<2xf32> to tensor<2x1x1x1xf32>
  %wzp0 = kiln.constant dense<[1, 2]> : tensor<2xui8>
  %wzp1 = kiln.reshape %wzp0 : tensor<2xui8> to tensor<2x1x1x1xui8>
  %wzp = kiln.cast %wzp1 to f32 : tensor<2x1x1x1xui8> -> tensor<2x1x1x1xf32>
  %qf = kiln.cast %q to f32 : tensor<1x1x2x2xui8> -> tensor<1x1x2x2xf32>
  %xd = kiln.mul %qf, %s : (tensor<1x1x2x2xf32>, tensor<f32>) -> tensor<1x1x2x2xf32>
  %wf = kiln.cast %w to f32 : tensor<2x1x1x1xui8> -> tensor<2x1x1x1xf32>
  %wc = kiln.sub %wf, %wzp : (tensor<2x1x1x1xf32>, tensor<2x1x1x1xf32>) -> tensor<2x1x1x1xf32>
  %wd = kiln.mul %wc, %ws : (tensor<2x1x1x1xf32>, tensor<2x1x1x1xf32>) -> tensor<2x1x1x1xf32>
  %y = kiln.conv2d %xd, %wd {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// -----

// Left alone: an activation with a zero point per element (the int8
// kernels take one per tensor), a weight zero point that is not an integer,
// and an f32 activation that was never quantized.

// CHECK-LABEL: func.func @not_qdq
// CHECK-NOT: i32
// CHECK: kiln.matmul {{.*}} -> tensor<2x2xf32>
// CHECK-NOT: i32
// CHECK: kiln.matmul {{.*}} -> tensor<2x2xf32>
// CHECK-NOT: i32
// CHECK: kiln.matmul {{.*}} -> tensor<2x2xf32>
func.func @not_qdq(%q: tensor<2x2xui8>, %x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %s = kiln.constant dense<5.000000e-01> : tensor<f32>
  %xzp = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %qf = kiln.cast %q to f32 : tensor<2x2xui8> -> tensor<2x2xf32>
  %qc = kiln.sub %qf, %xzp : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %xd = kiln.mul %qc, %s : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %w = kiln.constant dense<3> : tensor<2x2xi8>
  %wf = kiln.cast %w to f32 : tensor<2x2xi8> -> tensor<2x2xf32>
  %wd = kiln.mul %wf, %s : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %y = kiln.matmul %xd, %wd : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %half = kiln.constant dense<5.000000e-01> : tensor<f32>
  %wc = kiln.sub %wf, %half : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %wh = kiln.mul %wc, %s : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %qd = kiln.mul %qf, %s : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %z = kiln.matmul %qd, %wh : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %v = kiln.matmul %x, %wd : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %y, %z, %v : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// A model whose dequantization scale is 0, negative or NaN is not rewritten
// (the integer form would scale by it); it stays the f32 graph it wrote.

// CHECK-LABEL: func.func @bad_scales
// CHECK-NOT: i32
// CHECK: kiln.matmul {{.*}} -> tensor<2x2xf32>
// CHECK-NOT: i32
// CHECK: kiln.matmul {{.*}} -> tensor<2x2xf32>
// CHECK-NOT: i32
// CHECK: kiln.matmul {{.*}} -> tensor<2x2xf32>
func.func @bad_scales(%q: tensor<2x2xui8>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %zero = kiln.constant dense<0.000000e+00> : tensor<f32>
  %neg = kiln.constant dense<-5.000000e-01> : tensor<f32>
  %nan = kiln.constant dense<0x7FC00000> : tensor<f32>
  %s = kiln.constant dense<5.000000e-01> : tensor<f32>
  %w = kiln.constant dense<3> : tensor<2x2xi8>
  %qf = kiln.cast %q to f32 : tensor<2x2xui8> -> tensor<2x2xf32>
  %wf = kiln.cast %w to f32 : tensor<2x2xi8> -> tensor<2x2xf32>
  %wd = kiln.mul %wf, %s : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %x0 = kiln.mul %qf, %zero : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %y0 = kiln.matmul %x0, %wd : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %x1 = kiln.mul %qf, %neg : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %y1 = kiln.matmul %x1, %wd : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %x2 = kiln.mul %qf, %nan : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %y2 = kiln.matmul %x2, %wd : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %y0, %y1, %y2 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// A Gemm with transB (torchvision's Linear): the [N, K] integer weights are
// transposed to [K, N] for the i32 matmul; alpha joins the scales per
// output (0.5 * 0.1 * 0.5, 0.5 * 0.2 * 0.5) and beta * C is added after.

// CHECK-LABEL: func.func @qdq_gemm_trans_b
// CHECK: %[[WI:.+]] = kiln.cast %{{.+}} to i32 : tensor<2x3xi8> -> tensor<2x3xi32>
// CHECK: %[[WT:.+]] = kiln.transpose %[[WI]] {perm = array<i64: 1, 0>} : tensor<2x3xi32> -> tensor<3x2xi32>
// CHECK: %[[ACC:.+]] = kiln.matmul %{{.+}}, %[[WT]] : (tensor<4x3xi32>, tensor<3x2xi32>) -> tensor<4x2xi32>
// CHECK: %[[F:.+]] = kiln.cast %[[ACC]] to f32
// CHECK: %[[S:.+]] = kiln.constant dense<[2.500000e-02, 5.000000e-02]> : tensor<2xf32>
// CHECK: %[[Y:.+]] = kiln.mul %[[F]], %[[S]]
// CHECK: %[[BC:.+]] = kiln.mul %{{.+}}, %{{.+}} : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK: %[[R:.+]] = kiln.add %[[Y]], %[[BC]]
// CHECK-NOT: kiln.gemm
// CHECK: return %[[R]]
func.func @qdq_gemm_trans_b(%q: tensor<4x3xui8>) -> tensor<4x2xf32> {
  %xs = kiln.constant dense<5.000000e-01> : tensor<f32>
  %w = kiln.constant dense<[[1, 2, 3], [-4, 5, -6]]> : tensor<2x3xi8>
  %ws0 = kiln.constant dense<[1.000000e-01, 2.000000e-01]> : tensor<2xf32>
  %ws = kiln.reshape %ws0 : tensor<2xf32> to tensor<2x1xf32>
  %c = kiln.constant dense<[1.000000e+00, -1.000000e+00]> : tensor<2xf32>
  %qf = kiln.cast %q to f32 : tensor<4x3xui8> -> tensor<4x3xf32>
  %x = kiln.mul %qf, %xs : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %wf = kiln.cast %w to f32 : tensor<2x3xi8> -> tensor<2x3xf32>
  %wd = kiln.mul %wf, %ws : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %y = kiln.gemm %x, %wd, %c {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32, trans_b = true} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
