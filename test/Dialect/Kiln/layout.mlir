// RUN: kiln-opt %s --split-input-file --kiln-layout --canonicalize | FileCheck %s

// A residual block: the block input goes NHWC once, both convolutions and
// the add and relus between them run NHWC, and the global pool's transpose
// only moves unit dimensions, so it becomes a reshape. No transpose is left
// after the first.
// CHECK-LABEL: func.func @residual_block
// CHECK-SAME: (%[[X:.+]]: tensor<1x8x6x6xf32>
// CHECK: %[[T:.+]] = kiln.transpose %[[X]] {perm = array<i64: 0, 2, 3, 1>} : tensor<1x8x6x6xf32> -> tensor<1x6x6x8xf32>
// CHECK-NOT: kiln.transpose
// CHECK: %[[C1:.+]] = kiln.conv2d %[[T]], %{{.+}}, %{{.+}} {{{.*}}layout = "NHWC"{{.*}}} : (tensor<1x6x6x8xf32>, tensor<3x3x8x8xf32>, tensor<8xf32>) -> tensor<1x6x6x8xf32>
// CHECK: %[[R1:.+]] = kiln.relu %[[C1]] : tensor<1x6x6x8xf32>
// CHECK: %[[C2:.+]] = kiln.conv2d %[[R1]], %{{.+}} {{{.*}}layout = "NHWC"{{.*}}} : (tensor<1x6x6x8xf32>, tensor<3x3x8x8xf32>) -> tensor<1x6x6x8xf32>
// CHECK: %[[A:.+]] = kiln.add %[[C2]], %[[T]] : (tensor<1x6x6x8xf32>, tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
// CHECK: %[[R2:.+]] = kiln.relu %[[A]] : tensor<1x6x6x8xf32>
// CHECK: %[[M:.+]] = kiln.reduce_mean %[[R2]] {axes = array<i64: 1, 2>} : tensor<1x6x6x8xf32> -> tensor<1x1x1x8xf32>
// CHECK: %[[F:.+]] = kiln.reshape %[[M]] : tensor<1x1x1x8xf32> to tensor<1x8xf32>
// CHECK-NOT: kiln.transpose
// CHECK: return %[[F]]
func.func @residual_block(%x: tensor<1x8x6x6xf32>) -> tensor<1x8xf32> {
  %w1 = kiln.constant dense<0.01> : tensor<8x8x3x3xf32>
  %b1 = kiln.constant dense<0.5> : tensor<8xf32>
  %w2 = kiln.constant dense<0.02> : tensor<8x8x3x3xf32>
  %0 = kiln.conv2d %x, %w1, %b1 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  %1 = kiln.relu %0 : tensor<1x8x6x6xf32>
  %2 = kiln.conv2d %1, %w2 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %3 = kiln.add %2, %x : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %4 = kiln.relu %3 : tensor<1x8x6x6xf32>
  %5 = kiln.global_avg_pool %4 : tensor<1x8x6x6xf32> -> tensor<1x8x1x1xf32>
  %6 = kiln.reshape %5 : tensor<1x8x1x1xf32> to tensor<1x8xf32>
  return %6 : tensor<1x8xf32>
}

// -----

// The filter becomes an HWCF constant at compile time: FCHW [f][c] = f*2+c+1
// reads back as [0][0][c][f].
// CHECK-LABEL: func.func @filter_folded
// CHECK: %[[W:.+]] = kiln.constant dense<{{\[\[\[\[}}1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]]]> : tensor<1x1x2x2xf32>
// CHECK: kiln.conv2d %{{.+}}, %[[W]] {{{.*}}layout = "NHWC"{{.*}}} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK: kiln.transpose %{{.+}} {perm = array<i64: 0, 3, 1, 2>}
func.func @filter_folded(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = kiln.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %0 = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// A per-channel constant [C, 1, 1] broadcast against a convolution's result
// is permuted to [1, 1, 1, C]; a per-channel runtime vector is reshaped.
// A slice moves its box to NHWC. Squeezenet's fire module: two convolutions
// concatenated on channels concat on dimension 3; max pooling after them runs
// NHWC.
// CHECK-LABEL: func.func @broadcast_concat_pool
// CHECK-DAG: %[[S:.+]] = kiln.constant dense<2.000000e+00> : tensor<1x1x1x4xf32>
// CHECK: %[[C1:.+]] = kiln.conv2d {{.+}} -> tensor<1x4x4x4xf32>
// CHECK: %[[M:.+]] = kiln.mul %[[C1]], %[[S]] : (tensor<1x4x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x4x4x4xf32>
// CHECK: %[[C2:.+]] = kiln.conv2d {{.+}} -> tensor<1x6x6x4xf32>
// CHECK: %[[SL:.+]] = kiln.slice %[[C2]] {offsets = array<i64: 0, 1, 1, 0>, sizes = array<i64: 1, 4, 4, 4>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x6x6x4xf32> -> tensor<1x4x4x4xf32>
// CHECK: %[[V:.+]] = kiln.reshape %{{.+}} : tensor<1x4x1x1xf32> to tensor<1x1x1x4xf32>
// CHECK: %[[A:.+]] = kiln.add %[[SL]], %[[V]] : (tensor<1x4x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x4x4x4xf32>
// CHECK: %[[C:.+]] = kiln.concat %[[M]], %[[A]] {axis = 3 : i64} : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x8xf32>
// CHECK: %[[P:.+]] = kiln.max_pool2d %[[C]] {{{.*}}layout = "NHWC"{{.*}}} : tensor<1x4x4x8xf32> -> tensor<1x2x2x8xf32>
// CHECK: %[[R:.+]] = kiln.transpose %[[P]] {perm = array<i64: 0, 3, 1, 2>} : tensor<1x2x2x8xf32> -> tensor<1x8x2x2xf32>
// CHECK: return %[[R]]
func.func @broadcast_concat_pool(%x: tensor<1x2x4x4xf32>, %v: tensor<1x4x1x1xf32>) -> tensor<1x8x2x2xf32> {
  %w = kiln.constant dense<1.0> : tensor<4x2x1x1xf32>
  %s = kiln.constant dense<2.0> : tensor<4x1x1xf32>
  %0 = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x4x4xf32>
  %1 = kiln.mul %0, %s : (tensor<1x4x4x4xf32>, tensor<4x1x1xf32>) -> tensor<1x4x4x4xf32>
  %2 = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x6x6xf32>
  %3 = kiln.slice %2 {offsets = array<i64: 0, 0, 1, 1>, sizes = array<i64: 1, 4, 4, 4>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x4x6x6xf32> -> tensor<1x4x4x4xf32>
  %4 = kiln.add %3, %v : (tensor<1x4x4x4xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x4x4xf32>
  %5 = kiln.concat %1, %4 {axis = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x8x4x4xf32>
  %6 = kiln.max_pool2d %5 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : tensor<1x8x4x4xf32> -> tensor<1x8x2x2xf32>
  return %6 : tensor<1x8x2x2xf32>
}

// -----

// Where transposes must stay: an add with a full NCHW runtime tensor (moving
// the transpose would only move the copy), a softmax over channels, and a
// pooling whose input is NCHW to begin with.
// CHECK-LABEL: func.func @must_not_sink
// CHECK: %[[C:.+]] = kiln.conv2d {{.+}}layout = "NHWC"{{.+}} -> tensor<1x4x4x4xf32>
// CHECK: %[[T:.+]] = kiln.transpose %[[C]] {perm = array<i64: 0, 3, 1, 2>} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
// CHECK: %[[A:.+]] = kiln.add %[[T]], %{{.+}} : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
// CHECK: kiln.softmax %[[T]] {axis = 1 : i64}
// CHECK: kiln.max_pool2d %{{.+}} {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<1x4x4x4xf32> -> tensor<1x4x2x2xf32>
func.func @must_not_sink(%x: tensor<1x2x4x4xf32>, %y: tensor<1x4x4x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x2x2xf32>) {
  %w = kiln.constant dense<1.0> : tensor<4x2x1x1xf32>
  %0 = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x4x4xf32>
  %1 = kiln.add %0, %y : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %2 = kiln.softmax %0 {axis = 1 : i64} : tensor<1x4x4x4xf32>
  %3 = kiln.max_pool2d %y {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : tensor<1x4x4x4xf32> -> tensor<1x4x2x2xf32>
  return %1, %2, %3 : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x2x2xf32>
}

// -----

// Batch normalization after a convolution becomes a per-channel multiply and
// add on the NHWC value; pads move to the NHWC dimensions.
// CHECK-LABEL: func.func @batch_norm_pad
// CHECK: %[[C:.+]] = kiln.conv2d {{.+}} -> tensor<1x4x4x4xf32>
// CHECK: %[[M:.+]] = kiln.mul %[[C]], %{{.+}} : (tensor<1x4x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x4x4x4xf32>
// CHECK: %[[A:.+]] = kiln.add %[[M]], %{{.+}} : (tensor<1x4x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x4x4x4xf32>
// CHECK: %[[P:.+]] = kiln.pad %[[A]] {pads = array<i64: 0, 1, 2, 0, 0, 3, 4, 0>{{.*}}} : tensor<1x4x4x4xf32> -> tensor<1x8x10x4xf32>
// CHECK: kiln.transpose %[[P]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NOT: kiln.batch_norm
func.func @batch_norm_pad(%x: tensor<1x2x4x4xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<1x4x8x10xf32> {
  %w = kiln.constant dense<1.0> : tensor<4x2x1x1xf32>
  %0 = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x4x4xf32>
  %1 = kiln.batch_norm %0, %s, %b, %m, %v {epsilon = 1.0e-05 : f32} : (tensor<1x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %2 = kiln.pad %1 {pads = array<i64: 0, 0, 1, 2, 0, 0, 3, 4>} : tensor<1x4x4x4xf32> -> tensor<1x4x8x10xf32>
  return %2 : tensor<1x4x8x10xf32>
}

// -----

// A nearest upsampling between two convolutions runs NHWC (its scales
// permuted), so no transpose is left between them.
// CHECK-LABEL: func.func @upsample_between_convs
// CHECK: kiln.conv2d {{.+}}layout = "NHWC"
// CHECK-NOT: kiln.transpose
// CHECK: kiln.upsample_nearest %{{.+}} {scales = array<i64: 1, 2, 2, 1>} : tensor<1x4x4x8xf32> -> tensor<1x8x8x8xf32>
// CHECK-NOT: kiln.transpose
// CHECK: kiln.conv2d {{.+}}layout = "NHWC"
func.func @upsample_between_convs(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x8x8xf32> {
  %w = kiln.constant dense<0.01> : tensor<8x8x3x3xf32>
  %0 = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32>
  %1 = kiln.upsample_nearest %0 {scales = array<i64: 1, 1, 2, 2>} : tensor<1x8x4x4xf32> -> tensor<1x8x8x8xf32>
  %2 = kiln.conv2d %1, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  return %2 : tensor<1x8x8x8xf32>
}

// -----

// A linear Resize between two convolutions gathers along H and W: both
// gathers (and the weighting around them) run NHWC, their axes permuted, so
// no transpose is left between the convolutions.
// CHECK-LABEL: func.func @resize_gathers_between_convs
// CHECK: kiln.conv2d {{.+}}layout = "NHWC"
// CHECK-NOT: kiln.transpose
// CHECK: kiln.gather %{{.+}}, %{{.+}} {axis = 1 : i64} : (tensor<1x4x4x8xf32>, tensor<8xi64>) -> tensor<1x8x4x8xf32>
// CHECK-NOT: kiln.transpose
// CHECK: kiln.gather %{{.+}}, %{{.+}} {axis = 2 : i64} : (tensor<1x8x4x8xf32>, tensor<8xi64>) -> tensor<1x8x8x8xf32>
// CHECK-NOT: kiln.transpose
// CHECK: kiln.conv2d {{.+}}layout = "NHWC"
func.func @resize_gathers_between_convs(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x8x8xf32> {
  %w = kiln.constant dense<0.01> : tensor<8x8x3x3xf32>
  %i = kiln.constant dense<[0, 0, 1, 1, 2, 2, 3, 3]> : tensor<8xi64>
  %wh = kiln.constant dense<0.5> : tensor<8x1xf32>
  %0 = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32>
  %1 = kiln.gather %0, %i {axis = 2 : i64} : (tensor<1x8x4x4xf32>, tensor<8xi64>) -> tensor<1x8x8x4xf32>
  %2 = kiln.mul %1, %wh : (tensor<1x8x8x4xf32>, tensor<8x1xf32>) -> tensor<1x8x8x4xf32>
  %3 = kiln.gather %2, %i {axis = 3 : i64} : (tensor<1x8x8x4xf32>, tensor<8xi64>) -> tensor<1x8x8x8xf32>
  %4 = kiln.conv2d %3, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  return %4 : tensor<1x8x8x8xf32>
}

// -----

// Gathers with indices of rank other than 1 change the rank; they stay put.
// CHECK-LABEL: func.func @gather_2d_indices_stays
// CHECK: kiln.transpose
// CHECK: kiln.gather %{{.+}}, %{{.+}} {axis = 3 : i64} : (tensor<1x8x4x4xf32>, tensor<2x2xi64>)
func.func @gather_2d_indices_stays(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x2x2xf32> {
  %w = kiln.constant dense<0.01> : tensor<8x8x3x3xf32>
  %i = kiln.constant dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>
  %0 = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32>
  %1 = kiln.gather %0, %i {axis = 3 : i64} : (tensor<1x8x4x4xf32>, tensor<2x2xi64>) -> tensor<1x8x4x2x2xf32>
  return %1 : tensor<1x8x4x2x2xf32>
}

// -----

// The same Resize over run-time sizes: its weights are computed at run time
// ([?, 1], one dimension that may be above 1), so they cannot be permuted
// now; a reshape puts them in the NHWC frame and both gathers still run
// between the convolutions with no transpose.
// CHECK-LABEL: func.func @resize_run_time_weights
// CHECK: kiln.conv2d {{.+}}layout = "NHWC"
// CHECK-NOT: kiln.transpose
// CHECK: kiln.gather %{{.+}}, %{{.+}} {axis = 1 : i64} : (tensor<1x?x?x8xf32>, tensor<?xi64>) -> tensor<1x?x?x8xf32>
// CHECK: kiln.reshape %{{.+}} : tensor<?x1xf32> to tensor<1x?x1x1xf32>
// CHECK-NOT: kiln.transpose
// CHECK: kiln.gather %{{.+}}, %{{.+}} {axis = 2 : i64} : (tensor<1x?x?x8xf32>, tensor<?xi64>) -> tensor<1x?x?x8xf32>
// CHECK: kiln.reshape %{{.+}} : tensor<?xf32> to tensor<1x1x?x1xf32>
// CHECK-NOT: kiln.transpose
// CHECK: kiln.conv2d {{.+}}layout = "NHWC"
func.func @resize_run_time_weights(%x: tensor<1x8x?x?xf32>, %ih: tensor<?xi64>, %wh: tensor<?x1xf32>,
                                   %iw: tensor<?xi64>, %ww: tensor<?xf32>) -> tensor<1x8x?x?xf32> {
  %w = kiln.constant dense<0.01> : tensor<8x8x3x3xf32>
  %0 = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : (tensor<1x8x?x?xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x?x?xf32>
  %1 = kiln.gather %0, %ih {axis = 2 : i64} : (tensor<1x8x?x?xf32>, tensor<?xi64>) -> tensor<1x8x?x?xf32>
  %2 = kiln.mul %1, %wh : (tensor<1x8x?x?xf32>, tensor<?x1xf32>) -> tensor<1x8x?x?xf32>
  %3 = kiln.gather %2, %iw {axis = 3 : i64} : (tensor<1x8x?x?xf32>, tensor<?xi64>) -> tensor<1x8x?x?xf32>
  %4 = kiln.mul %3, %ww : (tensor<1x8x?x?xf32>, tensor<?xf32>) -> tensor<1x8x?x?xf32>
  %5 = kiln.conv2d %4, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : (tensor<1x8x?x?xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x?x?xf32>
  return %5 : tensor<1x8x?x?xf32>
}

// -----

// A Conv1d block at batch 1 (Conv, Relu, ReduceMean over the length): the
// [1, c, 1, w] to [1, c, w] reshape after the NHWC convolution moves above
// the transpose back, which then sinks through the Relu and the mean and
// is gone: only the input's transpose into NHWC is left. The reshape's 1
// leads ([1, w, c], not [w, c, 1]), so the Relu and the mean still have c
// innermost.
// CHECK-LABEL: func.func @conv1d_batch1
// CHECK: kiln.transpose %{{.+}} : tensor<1x8x1x32xf32> -> tensor<1x1x32x8xf32>
// CHECK-NEXT: kiln.conv2d {{.+}}layout = "NHWC"{{.+}} -> tensor<1x1x32x16xf32>
// CHECK-NEXT: kiln.reshape %{{.+}} : tensor<1x1x32x16xf32> to tensor<1x32x16xf32>
// CHECK-NEXT: kiln.relu %{{.+}} : tensor<1x32x16xf32>
// CHECK-NEXT: kiln.reduce_mean %{{.+}} {axes = array<i64: 1>{{.*}}} : tensor<1x32x16xf32> -> tensor<1x16xf32>
// CHECK-NOT: kiln.transpose
func.func @conv1d_batch1(%x: tensor<1x8x1x32xf32>) -> tensor<1x16xf32> {
  %w = kiln.constant dense<0.01> : tensor<16x8x1x3xf32>
  %0 = kiln.conv2d %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 1, 0, 1>, group = 1 : i64} : (tensor<1x8x1x32xf32>, tensor<16x8x1x3xf32>) -> tensor<1x16x1x32xf32>
  %1 = kiln.reshape %0 : tensor<1x16x1x32xf32> to tensor<1x16x32xf32>
  %2 = kiln.relu %1 : tensor<1x16x32xf32>
  %3 = kiln.reduce_mean %2 {axes = array<i64: 2>, keepdims = false} : tensor<1x16x32xf32> -> tensor<1x16xf32>
  return %3 : tensor<1x16xf32>
}
