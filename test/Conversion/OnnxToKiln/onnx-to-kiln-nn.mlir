// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// Resize, ConvTranspose, recurrent cells and the small neural-network ops
// that decompose into existing kiln ops.

// Nearest upsampling by 2 with constant scales: one gather per resized axis
// with a constant index table; N and C are left alone.
// CHECK-LABEL: func.func @resize_nearest_constant
// CHECK-DAG: %[[I:.+]] = kiln.constant dense<[0, 0, 1, 1]> : tensor<4xi64>
// CHECK: %[[H:.+]] = kiln.gather %{{.+}}, %[[I]] {axis = 2 : i64}
// CHECK: %[[W:.+]] = kiln.gather %[[H]], %{{.+}} {axis = 3 : i64}
// CHECK-NOT: kiln.gather
// CHECK: return %[[W]] : tensor<1x3x4x4xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @resize_nearest_constant(%x: tensor<1x3x2x2xf32>) -> tensor<*xf32> {
    %s = onnx.Initializer "s" dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32> loc("s")
    %none = onnx.NoValue loc("none")
    %y = "onnx.Resize"(%x, %none, %s) {mode = "nearest", coordinate_transformation_mode = "asymmetric"} : (tensor<1x3x2x2xf32>, none, tensor<4xf32>) -> tensor<*xf32> loc("r")
    return %y : tensor<*xf32>
  }
}

// -----

// A nearest Resize with whole scales of an input with symbolic height and
// width (docs/shapes.md): kiln.upsample_nearest, its sizes the input's times
// the scales; torch's export (asymmetric, floor) and the half-pixel default.
// CHECK-LABEL: func.func @resize_nearest_symbolic
// CHECK: kiln.upsample_nearest %arg0 {scales = array<i64: 1, 1, 2, 3>} : tensor<1x3x?x?xf32> -> tensor<1x3x?x?xf32>
// CHECK: kiln.upsample_nearest %arg0 {scales = array<i64: 1, 1, 2, 3>} : tensor<1x3x?x?xf32> -> tensor<1x3x?x?xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @resize_nearest_symbolic(%x: tensor<1x3x?x?xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %s = onnx.Initializer "s" dense<[1.0, 1.0, 2.0, 3.0]> : tensor<4xf32> loc("s")
    %none = onnx.NoValue loc("none")
    %y = "onnx.Resize"(%x, %none, %s) {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : (tensor<1x3x?x?xf32>, none, tensor<4xf32>) -> tensor<*xf32> loc("r")
    %z = "onnx.Resize"(%x, %none, %s) {mode = "nearest"} : (tensor<1x3x?x?xf32>, none, tensor<4xf32>) -> tensor<*xf32> loc("r2")
    return %y, %z : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Linear with sizes: two gathers per axis blended by constant weights of
// shape [out, 1] (they broadcast over the trailing axis).
// CHECK-LABEL: func.func @resize_linear_sizes
// CHECK: kiln.gather {{.+}} {axis = 2 : i64}
// CHECK: kiln.mul {{.+}} tensor<4x1xf32>
// CHECK: kiln.gather {{.+}} {axis = 2 : i64}
// CHECK: kiln.mul
// CHECK: kiln.add {{.+}} -> tensor<1x1x4x2xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @resize_linear_sizes(%x: tensor<1x1x2x2xf32>) -> tensor<*xf32> {
    %s = onnx.Initializer "s" dense<[1, 1, 4, 2]> : tensor<4xi64> loc("s")
    %none = onnx.NoValue loc("none")
    %y = "onnx.Resize"(%x, %none, %none, %s) {mode = "linear"} : (tensor<1x1x2x2xf32>, none, none, tensor<4xi64>) -> tensor<*xf32> loc("r")
    return %y : tensor<*xf32>
  }
}

// -----

// Scales fed at run time with a declared output shape: the source positions
// are computed at run time from the scale (f64), then cast to indices.
// CHECK-LABEL: func.func @resize_runtime_scales
// CHECK: kiln.gather %{{.+}}, %{{.+}} {axis = 0 : i64} : (tensor<4xf32>, tensor<1xi64>) -> tensor<1xf32>
// CHECK: kiln.cast {{.+}} to f64
// CHECK: kiln.div {{.+}} -> tensor<4xf64>
// CHECK: kiln.floor
// CHECK: kiln.cast {{.+}} to i64
// CHECK: kiln.gather {{.+}} {axis = 3 : i64} : (tensor<1x1x2x2xf32>, tensor<4xi64>) -> tensor<1x1x2x4xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @resize_runtime_scales(%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>) -> tensor<1x1x2x4xf32> {
    %none = onnx.NoValue loc("none")
    %y = "onnx.Resize"(%x, %none, %s) {mode = "linear"} : (tensor<1x1x2x2xf32>, none, tensor<4xf32>) -> tensor<1x1x2x4xf32> loc("r")
    return %y : tensor<1x1x2x4xf32>
  }
}

// -----

// Stride 2 without dilation, by output phase: each of the 2x2 phases is a
// stride-1 convolution of the input with its subset of the (flipped,
// channel-swapped) taps, and the phases interleave by concat + reshape.
// CHECK-LABEL: func.func @conv_transpose_stride
// CHECK: %[[W00:.+]] = kiln.constant dense<{{\[\[\[\[}}9.000000e+00, 7.000000e+00], [3.000000e+00, 1.000000e+00]]], {{.+}} : tensor<2x1x2x2xf32>
// CHECK: kiln.conv2d %{{.+}}, %[[W00]] {{.+}}pads = array<i64: 1, 1, 1, 1>{{.+}} -> tensor<1x2x4x4xf32>
// CHECK: kiln.conv2d {{.+}} : (tensor<1x1x3x3xf32>, tensor<2x1x2x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK: kiln.concat {{.+}} {axis = 5 : i64}
// CHECK: kiln.conv2d {{.+}} : (tensor<1x1x3x3xf32>, tensor<2x1x1x2xf32>) -> tensor<1x2x4x4xf32>
// CHECK: kiln.conv2d {{.+}} : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK: kiln.concat {{.+}} {axis = 3 : i64}
// CHECK: kiln.reshape {{.+}} : tensor<1x2x4x2x4x2xf32> to tensor<1x2x8x8xf32>
// CHECK: kiln.slice {{.+}} -> tensor<1x2x7x7xf32>
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @conv_transpose_stride(%x: tensor<1x1x3x3xf32>) -> tensor<*xf32> {
    %w = onnx.Initializer "w" dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]]]> : tensor<1x2x3x3xf32> loc("w")
    %y = "onnx.ConvTranspose"(%x, %w) {strides = [2, 2]} : (tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<*xf32> loc("ct")
    return %y : tensor<*xf32>
  }
}

// -----

// With dilation, strides insert zeros (reshape/pad/reshape) before one
// stride-1 convolution padded by dilation * (kernel - 1) - pad (the
// stride's trailing zeros come off the end padding).
// CHECK-LABEL: func.func @conv_transpose_dilated_stride
// CHECK: kiln.reshape %{{.+}} : tensor<1x1x3x3xf32> to tensor<1x1x3x1x3x1xf32>
// CHECK: kiln.pad {{.+}} -> tensor<1x1x3x2x3x2xf32>
// CHECK: kiln.reshape {{.+}} to tensor<1x1x6x6xf32>
// CHECK: kiln.conv2d
// CHECK-SAME: dilations = array<i64: 2, 2>{{.+}}pads = array<i64: 4, 4, 3, 3>, strides = array<i64: 1, 1>
// CHECK-SAME: -> tensor<1x1x9x9xf32>
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @conv_transpose_dilated_stride(%x: tensor<1x1x3x3xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<*xf32> {
    %y = "onnx.ConvTranspose"(%x, %w) {strides = [2, 2], dilations = [2, 2]} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<*xf32> loc("ct")
    return %y : tensor<*xf32>
  }
}

// -----

// The filter is flipped at compile time: element [0, 0, 0, 0] moves to
// [0, 0, 2, 2].
// CHECK-LABEL: func.func @conv_transpose_flip
// CHECK: kiln.constant dense<{{\[\[\[\[}}9.000000e+00, 8.000000e+00, 7.000000e+00], [6.000000e+00, 5.000000e+00, 4.000000e+00], [3.000000e+00, 2.000000e+00, 1.000000e+00]]]]> : tensor<1x1x3x3xf32>
// CHECK: kiln.conv2d
// CHECK-SAME: pads = array<i64: 1, 1, 1, 1>
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @conv_transpose_flip(%x: tensor<1x1x3x3xf32>) -> tensor<*xf32> {
    %w = onnx.Initializer "w" dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32> loc("w")
    %y = "onnx.ConvTranspose"(%x, %w) {pads = [1, 1, 1, 1]} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<*xf32> loc("ct")
    return %y : tensor<*xf32>
  }
}

// -----

// An RNN over two steps: one gemm projects the whole sequence, then one
// gemm with R per step.
// CHECK-LABEL: func.func @rnn_unrolled
// CHECK: kiln.gemm {{.+}} {trans_b = true} : (tensor<6x2xf32>, tensor<4x2xf32>) -> tensor<6x4xf32>
// CHECK: kiln.gemm {{.+}} {trans_b = true} : (tensor<3x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>
// CHECK: kiln.tanh
// CHECK: kiln.gemm {{.+}} {trans_b = true} : (tensor<3x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>
// CHECK: kiln.tanh
// CHECK-NOT: kiln.gemm
// CHECK: return
module attributes {onnx.opset_import = {ai.onnx = 14 : i64}} {
  func.func @rnn_unrolled(%x: tensor<2x3x2xf32>, %w: tensor<1x4x2xf32>, %r: tensor<1x4x4xf32>) -> tensor<*xf32> {
    %none = onnx.NoValue loc("none")
    %y, %h = "onnx.RNN"(%x, %w, %r) {hidden_size = 4 : i64} : (tensor<2x3x2xf32>, tensor<1x4x2xf32>, tensor<1x4x4xf32>) -> (none, tensor<*xf32>) loc("rnn")
    return %h : tensor<*xf32>
  }
}

// -----

// CHECK-LABEL: func.func @instance_norm
// CHECK: kiln.reduce_mean {{.+}}axes = array<i64: 2, 3>
// CHECK: kiln.sqrt
// CHECK: kiln.reshape {{.+}} : tensor<3xf32> to tensor<3x1x1xf32>
module attributes {onnx.opset_import = {ai.onnx = 6 : i64}} {
  func.func @instance_norm(%x: tensor<2x3x4x5xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<*xf32> {
    %y = "onnx.InstanceNormalization"(%x, %s, %b) {epsilon = 1.0e-2 : f32} : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<*xf32> loc("in")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK-LABEL: func.func @depth_to_space_crd
// CHECK: kiln.reshape {{.+}} to tensor<1x2x2x2x2x3xf32>
// CHECK: kiln.transpose {{.+}}perm = array<i64: 0, 1, 4, 2, 5, 3>
// CHECK: kiln.reshape {{.+}} to tensor<1x2x4x6xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @depth_to_space_crd(%x: tensor<1x8x2x3xf32>) -> tensor<*xf32> {
    %y = "onnx.DepthToSpace"(%x) {blocksize = 2 : i64, mode = "CRD"} : (tensor<1x8x2x3xf32>) -> tensor<*xf32> loc("d2s")
    return %y : tensor<*xf32>
  }
}

// -----

// A batched matmul written as Einsum.
// CHECK-LABEL: func.func @einsum_batch_matmul
// CHECK: kiln.matmul {{.+}} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
module attributes {onnx.opset_import = {ai.onnx = 12 : i64}} {
  func.func @einsum_batch_matmul(%x: tensor<5x2x3xf32>, %y: tensor<5x3x4xf32>) -> tensor<*xf32> {
    %z = "onnx.Einsum"(%x, %y) {equation = "bij, bjk -> bik"} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<*xf32> loc("e")
    return %z : tensor<*xf32>
  }
}

// -----

// A batch diagonal: the repeated label's axes merge and every (n+1)-th
// element is gathered.
// CHECK-LABEL: func.func @einsum_diagonal
// CHECK: kiln.reshape {{.+}} : tensor<3x5x5xf32> to tensor<3x25xf32>
// CHECK: kiln.constant dense<[0, 6, 12, 18, 24]> : tensor<5xi64>
// CHECK: kiln.gather {{.+}} {axis = 1 : i64} : (tensor<3x25xf32>, tensor<5xi64>) -> tensor<3x5xf32>
module attributes {onnx.opset_import = {ai.onnx = 12 : i64}} {
  func.func @einsum_diagonal(%x: tensor<3x5x5xf32>) -> tensor<*xf32> {
    %z = "onnx.Einsum"(%x) {equation = "...ii ->...i"} : (tensor<3x5x5xf32>) -> tensor<*xf32> loc("e")
    return %z : tensor<*xf32>
  }
}

// -----

// 3-D max pooling as a 2-D pooling over (H, W) and one over D.
// CHECK-LABEL: func.func @max_pool_3d
// CHECK: kiln.max_pool2d {{.+}} : tensor<1x12x4x4xf32> -> tensor<1x12x3x3xf32>
// CHECK: kiln.max_pool2d {{.+}}kernel_shape = array<i64: 2, 1>{{.+}} : tensor<3x1x4x9xf32> -> tensor<3x1x3x9xf32>
// CHECK: kiln.reshape {{.+}} to tensor<1x3x3x3x3xf32>
module attributes {onnx.opset_import = {ai.onnx = 12 : i64}} {
  func.func @max_pool_3d(%x: tensor<1x3x4x4x4xf32>) -> tensor<*xf32> {
    %y = "onnx.MaxPool"(%x) {kernel_shape = [2, 2, 2]} : (tensor<1x3x4x4x4xf32>) -> tensor<*xf32> loc("p")
    return %y : tensor<*xf32>
  }
}

// -----

// Bilinear grid sampling: four taps, each one gather of C-wide rows of the
// input viewed as [N * H * W, C] with run-time row indices.
// CHECK-LABEL: func.func @grid_sample_bilinear
// CHECK: kiln.transpose {{.+}}perm = array<i64: 0, 2, 3, 1>
// CHECK: kiln.reshape {{.+}} to tensor<6x1xf32>
// CHECK-COUNT-4: kiln.gather {{.+}} {axis = 0 : i64} : (tensor<6x1xf32>, tensor<1x2x4xi64>) -> tensor<1x2x4x1xf32>
// CHECK: kiln.transpose {{.+}}perm = array<i64: 0, 3, 1, 2>{{.+}} -> tensor<1x1x2x4xf32>
module attributes {onnx.opset_import = {ai.onnx = 16 : i64}} {
  func.func @grid_sample_bilinear(%x: tensor<1x1x3x2xf32>, %g: tensor<1x2x4x2xf32>) -> tensor<*xf32> {
    %y = "onnx.GridSample"(%x, %g) {mode = "bilinear"} : (tensor<1x1x3x2xf32>, tensor<1x2x4x2xf32>) -> tensor<*xf32> loc("gs")
    return %y : tensor<*xf32>
  }
}

// -----

// Trilinear sampling of a volume (GridSample-20 "linear" on 3-D): eight
// taps over the input viewed as [N * D * H * W, C], flat index
// ((z * H + y) * W + x) + n * D * H * W.
// CHECK-LABEL: func.func @grid_sample_volumetric
// CHECK: kiln.transpose {{.+}}perm = array<i64: 0, 2, 3, 4, 1>
// CHECK: kiln.reshape {{.+}} to tensor<48x3xf32>
// CHECK-COUNT-8: kiln.gather {{.+}} {axis = 0 : i64} : (tensor<48x3xf32>, tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x3xf32>
// CHECK: kiln.transpose {{.+}}perm = array<i64: 0, 4, 1, 2, 3>{{.+}} -> tensor<2x3x2x3x2xf32>
module attributes {onnx.opset_import = {ai.onnx = 22 : i64}} {
  func.func @grid_sample_volumetric(%x: tensor<2x3x2x3x4xf32>, %g: tensor<2x2x3x2x3xf32>) -> tensor<*xf32> {
    %y = "onnx.GridSample"(%x, %g) : (tensor<2x3x2x3x4xf32>, tensor<2x2x3x2x3xf32>) -> tensor<*xf32> loc("gs")
    return %y : tensor<*xf32>
  }
}

// -----

// RoiAlign with 2x2 samples per bin: 4 bilinear taps over [R, 5*2, 5*2]
// sample positions, then a sum over each bin's samples.
// CHECK-LABEL: func.func @roi_align
// CHECK-COUNT-4: kiln.gather {{.+}} : (tensor<100x1xf32>, tensor<3x10x10xi64>) -> tensor<3x10x10x1xf32>
// CHECK: kiln.reshape {{.+}} to tensor<3x5x2x5x2x1xf32>
// CHECK: kiln.reduce_sum {{.+}}axes = array<i64: 2, 4>
// CHECK: kiln.transpose {{.+}} -> tensor<3x1x5x5xf32>
module attributes {onnx.opset_import = {ai.onnx = 16 : i64}} {
  func.func @roi_align(%x: tensor<1x1x10x10xf32>, %rois: tensor<3x4xf32>, %b: tensor<3xi64>) -> tensor<*xf32> {
    %y = "onnx.RoiAlign"(%x, %rois, %b) {output_height = 5 : i64, output_width = 5 : i64, sampling_ratio = 2 : i64} : (tensor<1x1x10x10xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<*xf32> loc("ra")
    return %y : tensor<*xf32>
  }
}

// -----

// Upsample-7 takes its scales as an attribute; nearest resizing gathers, so
// integers resize too.
// CHECK-LABEL: func.func @upsample7
// CHECK: kiln.constant dense<[0, 0, 1, 1]> : tensor<4xi64>
// CHECK: kiln.gather {{.+}} {axis = 2 : i64} : (tensor<1x1x2x3xi64>, tensor<4xi64>) -> tensor<1x1x4x3xi64>
// CHECK: kiln.constant dense<[0, 0, 0, 1, 1, 1, 2, 2, 2]> : tensor<9xi64>
// CHECK: kiln.gather {{.+}} {axis = 3 : i64}
// CHECK-SAME: -> tensor<1x1x4x9xi64>
module attributes {onnx.opset_import = {ai.onnx = 7 : i64}} {
  func.func @upsample7(%x: tensor<1x1x2x3xi64>) -> tensor<*xi64> {
    %y = "onnx.Upsample"(%x) {mode = "nearest", scales = [1.0 : f32, 1.0 : f32, 2.0 : f32, 3.0 : f32]} : (tensor<1x1x2x3xi64>) -> tensor<*xi64> loc("up")
    return %y : tensor<*xi64>
  }
}

// -----

// A bidirectional GRU with linear_before_reset keeps R's h-gate bias inside
// the reset product: per direction, the input projection, then per step one
// gemm for the z and r gates and one for h (with that bias as C).
// CHECK-LABEL: func.func @gru_bidirectional
// CHECK: kiln.gemm {{.+}} : (tensor<2x3xf32>, tensor<9x3xf32>, tensor<9xf32>) -> tensor<2x9xf32>
// CHECK: kiln.gemm {{.+}} : (tensor<2x3xf32>, tensor<6x3xf32>) -> tensor<2x6xf32>
// CHECK: kiln.gemm {{.+}} : (tensor<2x3xf32>, tensor<3x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: kiln.gemm {{.+}} : (tensor<2x3xf32>, tensor<9x3xf32>, tensor<9xf32>) -> tensor<2x9xf32>
// CHECK: kiln.concat {{.+}} {axis = 0 : i64} : (tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<2x2x3xf32>
module attributes {onnx.opset_import = {ai.onnx = 14 : i64}} {
  func.func @gru_bidirectional(%x: tensor<1x2x3xf32>, %w: tensor<2x9x3xf32>, %r: tensor<2x9x3xf32>, %b: tensor<2x18xf32>) -> tensor<*xf32> {
    %y, %h = "onnx.GRU"(%x, %w, %r, %b) {hidden_size = 3 : i64, direction = "bidirectional", linear_before_reset = 1 : i64} : (tensor<1x2x3xf32>, tensor<2x9x3xf32>, tensor<2x9x3xf32>, tensor<2x18xf32>) -> (none, tensor<*xf32>) loc("gru")
    return %h : tensor<*xf32>
  }
}

// -----

// 3-D by depth: the depth slices go through one 2-D transposed convolution
// per depth tap (batched as N * D = 3), and the taps' results are shifted
// into place along depth and added.
// CHECK-LABEL: func.func @conv_transpose_3d
// CHECK: kiln.reshape {{.+}} to tensor<3x1x4x5xf32>
// CHECK: kiln.conv2d {{.+}} -> tensor<3x2x6x7xf32>
// CHECK: kiln.conv2d {{.+}} -> tensor<3x2x6x7xf32>
// CHECK: kiln.conv2d {{.+}} -> tensor<3x2x6x7xf32>
// CHECK: kiln.transpose {{.+}} -> tensor<1x2x5x6x7xf32>
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @conv_transpose_3d(%x: tensor<1x1x3x4x5xf32>, %w: tensor<1x2x3x3x3xf32>) -> tensor<*xf32> {
    %y = "onnx.ConvTranspose"(%x, %w) : (tensor<1x1x3x4x5xf32>, tensor<1x2x3x3x3xf32>) -> tensor<*xf32> loc("ct")
    return %y : tensor<*xf32>
  }
}

// -----

// A 3-D convolution: per depth tap, the strided depth slices (batched as
// N * OD) through one 2-D convolution with that tap's filter plane; the bias
// goes with the first tap.
// CHECK-LABEL: func.func @conv_3d
// CHECK: kiln.slice {{.+}}strides = array<i64: 1, 1, 2, 1, 1>{{.+}} -> tensor<1x2x2x6x6xf32>
// CHECK: kiln.conv2d {{.+}} : (tensor<2x2x6x6xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
// CHECK: kiln.conv2d {{.+}} : (tensor<2x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<2x4x6x6xf32>
// CHECK: kiln.conv2d {{.+}} : (tensor<2x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<2x4x6x6xf32>
// CHECK: kiln.transpose {{.+}} -> tensor<1x4x2x6x6xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @conv_3d(%x: tensor<1x2x5x6x6xf32>, %b: tensor<4xf32>) -> tensor<*xf32> {
    %w = onnx.Initializer "w" dense<0.5> : tensor<4x2x3x3x3xf32> loc("w")
    %y = "onnx.Conv"(%x, %w, %b) {strides = [2, 1, 1], pads = [0, 1, 1, 0, 1, 1]} : (tensor<1x2x5x6x6xf32>, tensor<4x2x3x3x3xf32>, tensor<4xf32>) -> tensor<*xf32> loc("c3")
    return %y : tensor<*xf32>
  }
}

// -----

// CausalConvWithState-27: the past state joined before the input, one
// depthwise convolution (group = channels) without padding, SiLU, and the
// last k - 1 joined positions as the present state.
// CHECK-LABEL: func.func @causal_conv_with_state
// CHECK: %[[J:.+]] = kiln.concat %arg3, %arg0 {axis = 2 : i64} : (tensor<2x4x2xf32>, tensor<2x4x5xf32>) -> tensor<2x4x7xf32>
// CHECK: kiln.conv2d {{.+}}group = 4 : i64{{.+}} -> tensor<2x4x1x5xf32>
// CHECK: kiln.sigmoid
// CHECK: kiln.mul
// CHECK: kiln.slice %[[J]] {offsets = array<i64: 0, 0, 5>, sizes = array<i64: 2, 4, 2>
module attributes {onnx.opset_import = {ai.onnx = 27 : i64}} {
  func.func @causal_conv_with_state(%x: tensor<2x4x5xf32>, %w: tensor<4x1x3xf32>, %b: tensor<4xf32>, %s: tensor<2x4x2xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %y, %p = "onnx.CausalConvWithState"(%x, %w, %b, %s) {activation = "silu"} : (tensor<2x4x5xf32>, tensor<4x1x3xf32>, tensor<4xf32>, tensor<2x4x2xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("cc")
    return %y, %p : tensor<*xf32>, tensor<*xf32>
  }
}
