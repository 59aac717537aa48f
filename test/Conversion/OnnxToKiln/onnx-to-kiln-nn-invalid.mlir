// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln -verify-diagnostics
// RUN: not kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln 2>&1 | FileCheck %s

// Limits of Resize, ConvTranspose, the recurrent cells and Einsum are
// reported against the node (see onnx-to-kiln-invalid.mlir for the layout).

// CHECK: error: loc("r"): node 'r' (Resize, opset 13): scales must be a compile-time constant when the output shape is not declared static
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @resize_runtime_scales_unknown_shape(%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>) -> tensor<*xf32> {
    %none = onnx.NoValue loc("none")
    // expected-error@unknown {{node 'r' (Resize, opset 13): scales must be a compile-time constant when the output shape is not declared static}}
    %y = "onnx.Resize"(%x, %none, %s) {mode = "linear"} : (tensor<1x1x2x2xf32>, none, tensor<4xf32>) -> tensor<*xf32> loc("r")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("ct"): node 'ct' (ConvTranspose, opset 11): only 1-D, 2-D and 3-D transposed convolutions are supported; the input has 4 spatial dimensions
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @conv_transpose_4d(%x: tensor<1x1x3x3x3x3xf32>, %w: tensor<1x2x2x2x2x2xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'ct' (ConvTranspose, opset 11): only 1-D, 2-D and 3-D transposed convolutions are supported}}
    %y = "onnx.ConvTranspose"(%x, %w) : (tensor<1x1x3x3x3x3xf32>, tensor<1x2x2x2x2x2xf32>) -> tensor<*xf32> loc("ct")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("e"): node 'e' (Einsum, opset 12): label 'j' has sizes 3 and 4; broadcasting in Einsum is not supported
module attributes {onnx.opset_import = {ai.onnx = 12 : i64}} {
  func.func @einsum_mismatch(%x: tensor<2x3xf32>, %y: tensor<4x5xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'e' (Einsum, opset 12): label 'j' has sizes 3 and 4; broadcasting in Einsum is not supported}}
    %z = "onnx.Einsum"(%x, %y) {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<*xf32> loc("e")
    return %z : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("ra"): node 'ra' (RoiAlign, opset 16): sampling_ratio 0 (adaptive, depends on the run-time boxes) is not supported; set a positive sampling_ratio
module attributes {onnx.opset_import = {ai.onnx = 16 : i64}} {
  func.func @roi_align_adaptive(%x: tensor<1x1x10x10xf32>, %rois: tensor<3x4xf32>, %b: tensor<3xi64>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'ra' (RoiAlign, opset 16): sampling_ratio 0 (adaptive, depends on the run-time boxes) is not supported; set a positive sampling_ratio}}
    %y = "onnx.RoiAlign"(%x, %rois, %b) {output_height = 5 : i64, output_width = 5 : i64} : (tensor<1x1x10x10xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<*xf32> loc("ra")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("r"): node 'r' (Resize, opset 18): axes lists -1, which is repeated for an input of rank 4
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @resize_repeated_axis(%x: tensor<1x1x4x4xf32>) -> tensor<*xf32> {
    %s = onnx.Initializer "s" dense<[0.5, 0.5]> : tensor<2xf32> loc("s")
    %none = onnx.NoValue loc("none")
    // expected-error@unknown {{node 'r' (Resize, opset 18): axes lists -1, which is repeated for an input of rank 4}}
    %y = "onnx.Resize"(%x, %none, %s) {mode = "linear", antialias = 1 : i64, axes = [3, -1]} : (tensor<1x1x4x4xf32>, none, tensor<2xf32>) -> tensor<*xf32> loc("r")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("r"): node 'r' (Resize, opset 18): keep_aspect_ratio_policy 'fit' is not supported; expected stretch, not_larger or not_smaller
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @resize_bad_policy(%x: tensor<1x1x4x4xf32>) -> tensor<*xf32> {
    %s = onnx.Initializer "s" dense<[2, 2]> : tensor<2xi64> loc("s")
    %none = onnx.NoValue loc("none")
    // expected-error@unknown {{node 'r' (Resize, opset 18): keep_aspect_ratio_policy 'fit' is not supported; expected stretch, not_larger or not_smaller}}
    %y = "onnx.Resize"(%x, %none, %none, %s) {axes = [2, 3], keep_aspect_ratio_policy = "fit"} : (tensor<1x1x4x4xf32>, none, none, tensor<2xi64>) -> tensor<*xf32> loc("r")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("r"): node 'r' (Resize, opset 18): scales has 4 values for axes listing 2 axes
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @resize_scales_for_axes(%x: tensor<1x1x4x4xf32>) -> tensor<*xf32> {
    %s = onnx.Initializer "s" dense<[1.0, 1.0, 0.5, 0.5]> : tensor<4xf32> loc("s")
    %none = onnx.NoValue loc("none")
    // expected-error@unknown {{node 'r' (Resize, opset 18): scales has 4 values for axes listing 2 axes}}
    %y = "onnx.Resize"(%x, %none, %s) {mode = "cubic", antialias = 1 : i64, axes = [2, 3]} : (tensor<1x1x4x4xf32>, none, tensor<4xf32>) -> tensor<*xf32> loc("r")
    return %y : tensor<*xf32>
  }
}

// -----

// CausalConvWithState's past_state must hold the k - 1 positions the
// kernel looks back.
// CHECK: error: loc("cc"): node 'cc' (CausalConvWithState, opset 27): past_state must be 'tensor<1x4x2xf32>', got 'tensor<1x4x3xf32>'
module attributes {onnx.opset_import = {ai.onnx = 27 : i64}} {
  func.func @causal_conv_bad_state(%x: tensor<1x4x5xf32>, %w: tensor<4x1x3xf32>, %s: tensor<1x4x3xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %none = onnx.NoValue loc("cc")
    // expected-error@unknown {{node 'cc' (CausalConvWithState, opset 27): past_state must be 'tensor<1x4x2xf32>', got 'tensor<1x4x3xf32>'}}
    %y, %p = "onnx.CausalConvWithState"(%x, %w, %none, %s) : (tensor<1x4x5xf32>, tensor<4x1x3xf32>, none, tensor<1x4x3xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("cc")
    return %y, %p : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Cubic sampling is 2-D only; a 3-D volume must use linear or nearest.
// CHECK: error: loc("gs"): node 'gs' (GridSample, opset 22): cubic sampling of 3-D inputs is not supported; use linear or nearest
module attributes {onnx.opset_import = {ai.onnx = 22 : i64}} {
  func.func @grid_sample_cubic_3d(%x: tensor<1x1x2x3x4xf32>, %g: tensor<1x2x2x2x3xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'gs' (GridSample, opset 22): cubic sampling of 3-D inputs is not supported; use linear or nearest}}
    %y = "onnx.GridSample"(%x, %g) {mode = "cubic"} : (tensor<1x1x2x3x4xf32>, tensor<1x2x2x2x3xf32>) -> tensor<*xf32> loc("gs")
    return %y : tensor<*xf32>
  }
}

// -----

// GridSample-16 is 2-D only; a grid whose last dimension is not the
// number of spatial axes is refused.
// CHECK: error: loc("gs16"): node 'gs16' (GridSample, opset 16): expects X [N, C, H, W] and grid [N, Ho, Wo, 2], got
// CHECK: error: loc("gsbad"): node 'gsbad' (GridSample, opset 22): expects X [N, C, H, W] and grid [N, Ho, Wo, 2], or X [N, C, D, H, W] and grid [N, Do, Ho, Wo, 3], got
module attributes {onnx.opset_import = {ai.onnx = 16 : i64}} {
  func.func @grid_sample_3d_at_16(%x: tensor<1x1x2x3x4xf32>, %g: tensor<1x2x2x2x3xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'gs16' (GridSample, opset 16): expects X [N, C, H, W] and grid [N, Ho, Wo, 2], got}}
    %y = "onnx.GridSample"(%x, %g) : (tensor<1x1x2x3x4xf32>, tensor<1x2x2x2x3xf32>) -> tensor<*xf32> loc("gs16")
    return %y : tensor<*xf32>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 22 : i64}} {
  func.func @grid_sample_wrong_grid(%x: tensor<1x1x2x3x4xf32>, %g: tensor<1x2x2x2x2xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'gsbad' (GridSample, opset 22): expects X [N, C, H, W] and grid [N, Ho, Wo, 2], or X [N, C, D, H, W] and grid [N, Do, Ho, Wo, 3], got}}
    %y = "onnx.GridSample"(%x, %g) : (tensor<1x1x2x3x4xf32>, tensor<1x2x2x2x2xf32>) -> tensor<*xf32> loc("gsbad")
    return %y : tensor<*xf32>
  }
}

// -----

// GlobalLpPool needs p >= 1 and an [N, C, spatial...] input.
// CHECK: error: loc("glp"): node 'glp' (GlobalLpPool, opset 22): p must be 1 or more, got 0
// CHECK: error: loc("glp2"): node 'glp2' (GlobalLpPool, opset 22): expects X [N, C, spatial...], got
module attributes {onnx.opset_import = {ai.onnx = 22 : i64}} {
  func.func @global_lp_pool_bad(%x: tensor<1x3x4x4xf32>, %v: tensor<3x4xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    // expected-error@unknown {{node 'glp' (GlobalLpPool, opset 22): p must be 1 or more, got 0}}
    %a = "onnx.GlobalLpPool"(%x) {p = 0 : si64} : (tensor<1x3x4x4xf32>) -> tensor<*xf32> loc("glp")
    // expected-error@unknown {{node 'glp2' (GlobalLpPool, opset 22): expects X [N, C, spatial...], got}}
    %b = "onnx.GlobalLpPool"(%v) : (tensor<3x4xf32>) -> tensor<*xf32> loc("glp2")
    return %a, %b : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// A window larger than its padded input (a stride that left one row, then a
// 2-row pool): no output position exists. Refused naming the axis, not
// computed as an empty output that ONNX's inference would call one row.
// CHECK: error: loc("pool"): node 'pool' (MaxPool, opset 13): the window (kernel 2, dilation 1: 2 elements) is larger than the padded input along axis 2 (1 + 0 + 0 = 1), so no output position exists; check the kernel, strides and pads of the layers before it
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @pool_window_past_input(%x: tensor<1x4x1x8xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'pool' (MaxPool, opset 13): the window (kernel 2, dilation 1: 2 elements) is larger than the padded input along axis 2}}
    %y = "onnx.MaxPool"(%x) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x4x1x8xf32>) -> tensor<*xf32> loc("pool")
    return %y : tensor<*xf32>
  }
}

// -----

// The same for a 1-D convolution whose dilated kernel (3 taps, dilation 4:
// 9 elements) passes its padded input (5 + 1 + 1).
// CHECK: error: loc("conv"): node 'conv' (Conv, opset 13): the window (kernel 3, dilation 4: 9 elements) is larger than the padded input along axis 2 (5 + 1 + 1 = 7)
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @conv_window_past_input(%x: tensor<1x2x5xf32>, %w: tensor<3x2x3xf32>) -> tensor<*xf32> {
    %none = onnx.NoValue loc("none")
    // expected-error@unknown {{node 'conv' (Conv, opset 13): the window (kernel 3, dilation 4: 9 elements) is larger than the padded input along axis 2 (5 + 1 + 1 = 7)}}
    %y = "onnx.Conv"(%x, %w, %none) {dilations = [4], pads = [1, 1]} : (tensor<1x2x5xf32>, tensor<3x2x3xf32>, none) -> tensor<*xf32> loc("conv")
    return %y : tensor<*xf32>
  }
}

// -----

// Gemm's transB is 0 or 1. ONNX's inference reads 2^62 as 0 (an int
// truncation), Kiln read any nonzero value as 1: refused instead.
// CHECK: error: loc("gemm"): node 'gemm' (Gemm, opset 13): transB must be 0 or 1, got 4611686018427387904
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @gemm_trans_not_a_flag(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> tensor<*xf32> {
    %none = onnx.NoValue loc("none")
    // expected-error@unknown {{node 'gemm' (Gemm, opset 13): transB must be 0 or 1, got 4611686018427387904}}
    %y = "onnx.Gemm"(%x, %w, %none) {transB = 4611686018427387904 : i64} : (tensor<2x8xf32>, tensor<4x8xf32>, none) -> tensor<*xf32> loc("gemm")
    return %y : tensor<*xf32>
  }
}
