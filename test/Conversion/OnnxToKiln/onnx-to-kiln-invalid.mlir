// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln -verify-diagnostics
// RUN: not kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln 2>&1 | FileCheck %s

// Every node that cannot be converted is reported against the node, naming
// it, its op type and opset, and saying why. Imported locations are bare node
// names without a file position, so -verify-diagnostics sees them as unknown
// locations: each expectation is written next to its node as @unknown, and
// the second RUN checks the messages in order as a user sees them, located at
// the node. (Without -verify-diagnostics, MLIR 22 still prints "expected error
// ... was not produced" for @unknown expectations; the CHECK lines anchor on
// `loc("<node>")` so that those lines cannot satisfy them.)

// CHECK: error: loc("x"): node 'x' (Frobnicate, opset 13): op type Frobnicate is not supported by Kiln yet; remove or replace it before compiling
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @unsupported_op(%x: tensor<4xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'x' (Frobnicate, opset 13): op type Frobnicate is not supported}}
    %y = "onnx.Frobnicate"(%x) : (tensor<4xf32>) -> tensor<*xf32> loc("x")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("celu"): node 'celu' (Celu, opset 6): Kiln supports Celu from opset 12; re-export the model with a newer opset
module attributes {onnx.opset_import = {ai.onnx = 6 : i64}} {
  func.func @below_first_version(%x: tensor<4xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'celu' (Celu, opset 6): Kiln supports Celu from opset 12; re-export the model with a newer opset}}
    %y = "onnx.Celu"(%x) : (tensor<4xf32>) -> tensor<*xf32> loc("celu")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("fused"): node 'fused' (FusedConv, opset 1): ONNX Runtime's contrib op FusedConv (domain com.microsoft) is not supported
module attributes {onnx.opset_import = {ai.onnx = 13 : i64, com.microsoft = 1 : i64}} {
  func.func @other_domain(%x: tensor<4xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'fused' (FusedConv, opset 1): ONNX Runtime's contrib op FusedConv (domain com.microsoft) is not supported; of that domain Kiln converts the transformer ops its optimizer writes and the QLinear ops of its QOperator quantization (docs/ops.md). Export or quantize the model with standard ONNX ops (for quantization, quant_format=QDQ)}}
    %y = "onnx.com.microsoft.FusedConv"(%x) : (tensor<4xf32>) -> tensor<*xf32> loc("fused")
    return %y : tensor<*xf32>
  }
}

// -----

// ONNX Runtime's QLinear contrib ops take scales per tensor only.
// CHECK: error: loc("qadd"): node 'qadd' (QLinearAdd, opset 1): A_scale must be one float32 value (per tensor), got 'tensor<2xf32>'
module attributes {onnx.opset_import = {ai.onnx = 13 : i64, com.microsoft = 1 : i64}} {
  func.func @qlinear_add_vector_scale(%a: tensor<2x2xui8>, %s: tensor<2xf32>, %z: tensor<ui8>, %t: tensor<f32>) -> tensor<*xui8> {
    // expected-error@unknown {{node 'qadd' (QLinearAdd, opset 1): A_scale must be one float32 value (per tensor), got 'tensor<2xf32>'}}
    %y = "onnx.com.microsoft.QLinearAdd"(%a, %s, %z, %a, %t, %z, %t, %z) : (tensor<2x2xui8>, tensor<2xf32>, tensor<ui8>, tensor<2x2xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<*xui8> loc("qadd")
    return %y : tensor<*xui8>
  }
}

// -----

// A zero point of another type than its tensor, a QLinearConcat without
// whole (tensor, scale, zero point) triples, a pool of a rank-2 tensor and a
// QGemm whose b_scale is neither per tensor nor per output column.
// CHECK: error: loc("qzp"): node 'qzp' (QLinearSigmoid, opset 1): X_zero_point's type 'i8' differs from X's 'ui8'
// CHECK: error: loc("qcat"): node 'qcat' (QLinearConcat, opset 1): expects Y_scale, Y_zero_point and a (tensor, scale, zero point) triple per input, got 4 inputs
// CHECK: error: loc("qgap"): node 'qgap' (QLinearGlobalAveragePool, opset 1): expects X of rank 3 or more, got 'tensor<2x2xui8>'
// CHECK: error: loc("qgemm"): node 'qgemm' (QGemm, opset 1): b_scale must be one float32 value or one per output column (4), got 'tensor<3xf32>'
module attributes {onnx.opset_import = {ai.onnx = 13 : i64, com.microsoft = 1 : i64}} {
  func.func @qlinear_malformed(%a: tensor<2x2xui8>, %s: tensor<f32>, %z: tensor<ui8>, %zi: tensor<i8>, %w: tensor<4x2xi8>, %s3: tensor<3xf32>, %wz: tensor<i8>) -> (tensor<*xui8>, tensor<*xui8>, tensor<*xui8>, tensor<*xf32>) {
    // expected-error@unknown {{node 'qzp' (QLinearSigmoid, opset 1): X_zero_point's type 'i8' differs from X's 'ui8'}}
    %y0 = "onnx.com.microsoft.QLinearSigmoid"(%a, %s, %zi, %s, %z) : (tensor<2x2xui8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<*xui8> loc("qzp")
    // expected-error@unknown {{node 'qcat' (QLinearConcat, opset 1): expects Y_scale, Y_zero_point and a (tensor, scale, zero point) triple per input, got 4 inputs}}
    %y1 = "onnx.com.microsoft.QLinearConcat"(%s, %z, %a, %s) {axis = 0 : si64} : (tensor<f32>, tensor<ui8>, tensor<2x2xui8>, tensor<f32>) -> tensor<*xui8> loc("qcat")
    // expected-error@unknown {{node 'qgap' (QLinearGlobalAveragePool, opset 1): expects X of rank 3 or more, got 'tensor<2x2xui8>'}}
    %y2 = "onnx.com.microsoft.QLinearGlobalAveragePool"(%a, %s, %z, %s, %z) : (tensor<2x2xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<*xui8> loc("qgap")
    // expected-error@unknown {{node 'qgemm' (QGemm, opset 1): b_scale must be one float32 value or one per output column (4), got 'tensor<3xf32>'}}
    %y3 = "onnx.com.microsoft.QGemm"(%a, %s, %z, %w, %s3, %wz) {transB = 1 : si64} : (tensor<2x2xui8>, tensor<f32>, tensor<ui8>, tensor<4x2xi8>, tensor<3xf32>, tensor<i8>) -> tensor<*xf32> loc("qgemm")
    return %y0, %y1, %y2, %y3 : tensor<*xui8>, tensor<*xui8>, tensor<*xui8>, tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("reshape"): node 'reshape' (Reshape, opset 13): the target shape must be a compile-time constant
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @reshape_dynamic_shape(%x: tensor<2x3xf32>, %shape: tensor<2xi64>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'reshape' (Reshape, opset 13): the target shape must be a compile-time constant}}
    %y = "onnx.Reshape"(%x, %shape) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32> loc("reshape")
    return %y : tensor<*xf32>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @reshape_bad_minus_one(%x: tensor<2x3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %s1 = onnx.Initializer "s1" dense<[4, -1]> : tensor<2xi64> loc("s1")
    %s2 = onnx.Initializer "s2" dense<[-1, -1]> : tensor<2xi64> loc("s2")
    %s3 = onnx.Initializer "s3" dense<[4, 2]> : tensor<2xi64> loc("s3")
    // expected-error@unknown {{node 'r1' (Reshape, opset 13): cannot infer the -1 dimension: 6 elements do not divide by 4}}
    %a = "onnx.Reshape"(%x, %s1) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32> loc("r1")
    // expected-error@unknown {{node 'r2' (Reshape, opset 13): shape has more than one -1}}
    %b = "onnx.Reshape"(%x, %s2) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32> loc("r2")
    // The kiln verifier's reason, without the kiln op's name.
    // expected-error@unknown {{node 'r3' (Reshape, opset 13): cannot reshape 6 elements [2,3] into 8 [4,2]}}
    %c = "onnx.Reshape"(%x, %s3) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32> loc("r3")
    return %a, %b, %c : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("bn"): node 'bn' (BatchNormalization, opset 15): scale, B, input_mean and input_var must have shape [4] (the channels of X), got 'tensor<3xf32>'
module attributes {onnx.opset_import = {ai.onnx = 15 : i64}} {
  func.func @batch_norm_training(%x: tensor<1x4x8x8xf32>, %p: tensor<4xf32>, %q: tensor<3xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'bn' (BatchNormalization, opset 15): scale, B, input_mean and input_var must have shape [4] (the channels of X), got 'tensor<3xf32>'}}
    %y = "onnx.BatchNormalization"(%x, %p, %p, %q, %p) {training_mode = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<*xf32> loc("bn")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("bn"): node 'bn' (BatchNormalization, opset 15): training_mode=1 needs an input of rank 2 or more with a static channel dimension, got 'tensor<4xf32>'
module attributes {onnx.opset_import = {ai.onnx = 15 : i64}} {
  func.func @batch_norm_training_rank(%x: tensor<4xf32>, %p: tensor<4xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{training_mode=1 needs an input of rank 2 or more}}
    %y = "onnx.BatchNormalization"(%x, %p, %p, %p, %p) {training_mode = 1 : i64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<*xf32> loc("bn")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("pool"): node 'pool' (MaxPool, opset 12): the Indices output is only supported for 2-D float pooling
module attributes {onnx.opset_import = {ai.onnx = 12 : i64}} {
  func.func @max_pool_indices_used(%x: tensor<1x4x8xf32>) -> (tensor<*xf32>, tensor<*xi64>) {
    // expected-error@unknown {{node 'pool' (MaxPool, opset 12): the Indices output is only supported for 2-D float pooling}}
    %y, %i = "onnx.MaxPool"(%x) {kernel_shape = [2], strides = [2]} : (tensor<1x4x8xf32>) -> (tensor<*xf32>, tensor<*xi64>) loc("pool")
    return %y, %i : tensor<*xf32>, tensor<*xi64>
  }
}

// -----

// Several bad nodes in one function are all reported, not only the first.
// CHECK: error: loc("bad1"): node 'bad1' (Frobnicate, opset 13)
// CHECK: error: loc("bad2"): node 'bad2' (Reshape, opset 13)
// CHECK: error: loc("bad3"): node 'bad3' (Softmax, opset 13)
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @all_errors_reported(%x: tensor<2x3xf32>, %s: tensor<2xi64>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    // expected-error@unknown {{node 'bad1' (Frobnicate, opset 13): op type Frobnicate is not supported}}
    %a = "onnx.Frobnicate"(%x) : (tensor<2x3xf32>) -> tensor<*xf32> loc("bad1")
    // expected-error@unknown {{node 'bad2' (Reshape, opset 13): the target shape must be a compile-time constant}}
    %b = "onnx.Reshape"(%x, %s) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32> loc("bad2")
    // expected-error@unknown {{node 'bad3' (Softmax, opset 13): axis 2 is out of range for rank 2}}
    %c = "onnx.Softmax"(%x) {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<*xf32> loc("bad3")
    return %a, %b, %c : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Nodes fed by a failed node are skipped: one error for the root cause, none
// for its consumers, while independent nodes still convert.
// CHECK: error: loc("root"): node 'root' (Frobnicate, opset 13)
// CHECK-NOT: node 'consumer
// CHECK-NOT: node 'independent'
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @reported_once(%x: tensor<2x3xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    // expected-error@unknown {{node 'root' (Frobnicate, opset 13)}}
    %a = "onnx.Frobnicate"(%x) : (tensor<2x3xf32>) -> tensor<*xf32> loc("root")
    %b = "onnx.Relu"(%a) : (tensor<*xf32>) -> tensor<*xf32> loc("consumer")
    %c = "onnx.Add"(%b, %a) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32> loc("consumer_of_consumer")
    %d = "onnx.Relu"(%x) : (tensor<2x3xf32>) -> tensor<*xf32> loc("independent")
    return %c, %d : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Kiln's own shape rules, reported against the ONNX node without the kiln
// op's name.
// CHECK: error: loc("add"): node 'add' (Add, opset 14): shapes [2,3] and [4] do not broadcast
// CHECK: error: loc("conv"): node 'conv' (Conv, opset 14): input channels 3, filter [4,2,3,3] and group 1 disagree
module attributes {onnx.opset_import = {ai.onnx = 14 : i64}} {
  func.func @kiln_shape_rules(%a: tensor<2x3xf32>, %b: tensor<4xf32>, %x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    // expected-error@unknown {{node 'add' (Add, opset 14): shapes [2,3] and [4] do not broadcast}}
    %y = "onnx.Add"(%a, %b) : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<*xf32> loc("add")
    // expected-error@unknown {{node 'conv' (Conv, opset 14): input channels 3, filter [4,2,3,3] and group 1 disagree (expects C = filter C * group)}}
    %z = "onnx.Conv"(%x, %w) : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<*xf32> loc("conv")
    return %y, %z : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @conv_attributes(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %x3: tensor<1x3x4x4x4x4xf32>, %w3: tensor<4x3x3x3x3x3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    // expected-error@unknown {{node 'c1' (Conv, opset 13): expects 4 pads for a 2-D window, got 2}}
    %a = "onnx.Conv"(%x, %w) {pads = [1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<*xf32> loc("c1")
    // expected-error@unknown {{node 'c2' (Conv, opset 13): unknown auto_pad 'SAME'; expected NOTSET, VALID, SAME_UPPER or SAME_LOWER}}
    %b = "onnx.Conv"(%x, %w) {auto_pad = "SAME"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<*xf32> loc("c2")
    // expected-error@unknown {{node 'c3' (Conv, opset 13): strides has 1 values; expected 2}}
    %c = "onnx.Conv"(%x, %w) {strides = [2]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<*xf32> loc("c3")
    // expected-error@unknown {{node 'c4' (Conv, opset 13): only 1-D, 2-D and 3-D windows are supported; the input has 4 spatial dimensions}}
    %d = "onnx.Conv"(%x3, %w3) : (tensor<1x3x4x4x4x4xf32>, tensor<4x3x3x3x3x3xf32>) -> tensor<*xf32> loc("c4")
    return %a, %b, %c, %d : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// SAME padding of a symbolic size is static only at stride 1.
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @same_symbolic(%x: tensor<1x3x?x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 's2' (Conv, opset 13): auto_pad SAME_UPPER with stride 2 pads by an amount that depends on the symbolic size of spatial axis 0; give that dimension one size, or export the model with explicit pads}}
    %a = "onnx.Conv"(%x, %w) {auto_pad = "SAME_UPPER", strides = [2, 2]} : (tensor<1x3x?x8xf32>, tensor<4x3x3x3xf32>) -> tensor<*xf32> loc("s2")
    return %a : tensor<*xf32>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @inputs(%x: tensor<1x?x8x8xf32>, %w: tensor<4x?x3x3xf32>, %u: tensor<*xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %none = onnx.NoValue loc("c2")
    // Symbolic batch and spatial sizes convert, and symbolic channels a
    // static filter fixes (pinned-dims.onnxtxt); a symbolic filter does not.
    // expected-error@unknown {{node 'c1' (Conv, opset 13): the input 'tensor<1x?x8x8xf32>' and filter 'tensor<4x?x3x3xf32>' have symbolic channels or filter sizes; a convolution needs them fixed}}
    %a = "onnx.Conv"(%x, %w) : (tensor<1x?x8x8xf32>, tensor<4x?x3x3xf32>) -> tensor<*xf32> loc("c1")
    // expected-error@unknown {{node 'c2' (Conv, opset 13): input 0 is required}}
    %b = "onnx.Conv"(%none, %w) : (none, tensor<4x?x3x3xf32>) -> tensor<*xf32> loc("c2")
    // expected-error@unknown {{node 'relu' (Relu, opset 13): input 0 has unknown rank ('tensor<*xf32>')}}
    %c = "onnx.Relu"(%u) : (tensor<*xf32>) -> tensor<*xf32> loc("relu")
    return %a, %b, %c : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @run_time_operands(%x: tensor<2x3xf32>, %lo: tensor<f32>, %axes: tensor<1xi64>, %pads: tensor<4xi64>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    // Run-time bounds only scale numbers: no error.
    %a = "onnx.Clip"(%x, %lo) : (tensor<2x3xf32>, tensor<f32>) -> tensor<*xf32> loc("clip")
    // expected-error@unknown {{node 'sum' (ReduceSum, opset 13): axes must be a compile-time constant}}
    %b = "onnx.ReduceSum"(%x, %axes) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<*xf32> loc("sum")
    // expected-error@unknown {{node 'pad' (Pad, opset 13): pads must be a compile-time constant}}
    %c = "onnx.Pad"(%x, %pads) : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<*xf32> loc("pad")
    return %a, %b, %c : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @unsupported_attributes(%x: tensor<1x3x4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %pads = onnx.Initializer "pads" dense<[0, 0, 1, 0, 0, 1]> : tensor<6xi64> loc("pads")
    // expected-error@unknown {{node 'mirror' (Pad, opset 13): mode 'mirror' is not supported}}
    %a = "onnx.Pad"(%x, %pads) {mode = "mirror"} : (tensor<1x3x4xf32>, tensor<6xi64>) -> tensor<*xf32> loc("mirror")
    // expected-error@unknown {{node 'wrap' (Pad, opset 13): mode 'wrap' is not supported}}
    %b = "onnx.Pad"(%x, %pads) {mode = "wrap"} : (tensor<1x3x4xf32>, tensor<6xi64>) -> tensor<*xf32> loc("wrap")
    // expected-error@unknown {{node 'pool' (MaxPool, opset 13): kernel_shape is required}}
    %c = "onnx.MaxPool"(%x) : (tensor<1x3x4xf32>) -> tensor<*xf32> loc("pool")
    %axes = onnx.Initializer "axes" dense<[1]> : tensor<1xi64> loc("axes")
    // expected-error@unknown {{node 'squeeze' (Squeeze, opset 13): cannot squeeze axis 1 of size 3}}
    %d = "onnx.Squeeze"(%x, %axes) : (tensor<1x3x4xf32>, tensor<1xi64>) -> tensor<*xf32> loc("squeeze")
    // expected-error@unknown {{node 'concat' (Concat, opset 13): axis 3 is out of range for rank 3}}
    %e = "onnx.Concat"(%x, %x) {axis = 3 : i64} : (tensor<1x3x4xf32>, tensor<1x3x4xf32>) -> tensor<*xf32> loc("concat")
    return %a, %b, %c, %d, %e : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @constant_and_outputs(%x: tensor<1x4x2x2xf32>, %p: tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    // expected-error@unknown {{node 'str' (Constant, opset 13): only tensor, float, int, floats and ints values are supported (sparse and string constants are not)}}
    %a = "onnx.Constant"() {value_string = "hello"} : () -> tensor<*xf32> loc("str")
    // expected-error@unknown {{node 'bn' (BatchNormalization, opset 13): output 1 (running statistics) is only computed with training_mode=1 (opset 14+); export the model in inference (eval) mode}}
    %y, %mean, %var = "onnx.BatchNormalization"(%x, %p, %p, %p, %p) : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) loc("bn")
    return %a, %y, %mean : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @slice_errors(%x: tensor<4x6xf32>, %s: tensor<1xi64>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %starts = onnx.Initializer "starts" dense<[-1]> : tensor<1xi64> loc("starts")
    %ends = onnx.Initializer "ends" dense<[-9223372036854775807]> : tensor<1xi64> loc("ends")
    %axes = onnx.Initializer "axes" dense<[0]> : tensor<1xi64> loc("axes")
    %back = onnx.Initializer "back" dense<[-1]> : tensor<1xi64> loc("back")
    // Negative steps gather in reverse: no error.
    %a = "onnx.Slice"(%x, %starts, %ends, %axes, %back) : (tensor<4x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xf32> loc("reverse")
    // A start read from the data slices to a run-time size; axes read from
    // the data could slice any axis and are refused.
    // expected-error@unknown {{node 'runtime' (Slice, opset 13): axes must be a constant when starts or ends are read from the data}}
    %b = "onnx.Slice"(%x, %s, %ends, %s) : (tensor<4x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xf32> loc("runtime")
    %twice = onnx.Initializer "twice" dense<[1, -1]> : tensor<2xi64> loc("twice")
    %s2 = onnx.Initializer "s2" dense<[0, 0]> : tensor<2xi64> loc("s2")
    // expected-error@unknown {{node 'twice' (Slice, opset 13): axis -1 is sliced twice}}
    %c = "onnx.Slice"(%x, %s2, %s2, %twice) : (tensor<4x6xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<*xf32> loc("twice")
    %zero = onnx.Initializer "zero" dense<[0]> : tensor<1xi64> loc("zero")
    // expected-error@unknown {{node 'zero_step' (Slice, opset 13): steps must not be 0}}
    %d = "onnx.Slice"(%x, %zero, %ends, %axes, %zero) : (tensor<4x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xf32> loc("zero_step")
    return %a, %b, %c, %d : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Starts read from the data with more values than the input has axes: a
// malformed model, refused before any of them is read.
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @slice_too_many_bounds(%x: tensor<4x6xf32>, %s: tensor<9xi64>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'many' (Slice, opset 13): starts has 9 values, more than the input's rank 2}}
    %y = "onnx.Slice"(%x, %s, %s) : (tensor<4x6xf32>, tensor<9xi64>, tensor<9xi64>) -> tensor<*xf32> loc("many")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("gather"): node 'gather' (Gather, opset 13): index 4 is out of range for axis 0 of size 4
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @gather_errors(%x: tensor<4x3xf32>, %f: tensor<2xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %i = onnx.Initializer "i" dense<[0, 4]> : tensor<2xi64> loc("i")
    // expected-error@unknown {{node 'gather' (Gather, opset 13): index 4 is out of range for axis 0 of size 4}}
    %a = "onnx.Gather"(%x, %i) : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<*xf32> loc("gather")
    // expected-error@unknown {{node 'float_index' (Gather, opset 13): element type f32 is not supported for Gather yet (operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
    %b = "onnx.Gather"(%x, %f) : (tensor<4x3xf32>, tensor<2xf32>) -> tensor<*xf32> loc("float_index")
    return %a, %b : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("split"): node 'split' (Split, opset 13): split sizes add up to 5 but axis 1 has 6 elements
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @split_errors(%x: tensor<2x6xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %sizes = onnx.Initializer "sizes" dense<[2, 3]> : tensor<2xi64> loc("sizes")
    // expected-error@unknown {{node 'split' (Split, opset 13): split sizes add up to 5 but axis 1 has 6 elements}}
    %a, %b = "onnx.Split"(%x, %sizes) {axis = 1 : i64} : (tensor<2x6xf32>, tensor<2xi64>) -> (tensor<*xf32>, tensor<*xf32>) loc("split")
    // expected-error@unknown {{node 'uneven' (Split, opset 13): cannot split 6 elements evenly into 4 outputs; give the split sizes}}
    %c:4 = "onnx.Split"(%x) {axis = 1 : i64} : (tensor<2x6xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) loc("uneven")
    // expected-error@unknown {{node 'count' (Split, opset 13): split has 2 sizes but the node has 1 outputs}}
    %d = "onnx.Split"(%x, %sizes) {axis = 1 : i64} : (tensor<2x6xf32>, tensor<2xi64>) -> tensor<*xf32> loc("count")
    return %a, %b, %c#0, %c#1, %c#2, %c#3, %d : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("to_string"): node 'to_string' (Cast, opset 15): casting from 'f32' to STRING is not supported; Kiln casts between float, integer and bool types (strings and complex numbers are unsupported)
module attributes {onnx.opset_import = {ai.onnx = 15 : i64}} {
  func.func @cast_errors(%x: tensor<4xf32>, %c64: tensor<4xcomplex<f32>>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    // expected-error@unknown {{node 'to_string' (Cast, opset 15): casting from 'f32' to STRING is not supported; Kiln casts between float, integer and bool types (strings and complex numbers are unsupported)}}
    %a = "onnx.Cast"(%x) {to = 8 : i64} : (tensor<4xf32>) -> tensor<*xf32> loc("to_string")
    // expected-error@unknown {{node 'like_complex' (CastLike, opset 15): casting from 'f32' to 'complex<f32>' is not supported}}
    %b = "onnx.CastLike"(%x, %c64) : (tensor<4xf32>, tensor<4xcomplex<f32>>) -> tensor<*xf32> loc("like_complex")
    // expected-error@unknown {{node 'no_to' (Cast, opset 15): the 'to' attribute is required}}
    %c = "onnx.Cast"(%x) : (tensor<4xf32>) -> tensor<*xf32> loc("no_to")
    return %a, %b, %c : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("ln"): node 'ln' (LayerNormalization, opset 17): stash_type 11 is not supported with the Mean or InvStdDev outputs; Kiln computes them in float32 (stash_type 1)
module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
  func.func @layer_norm_errors(%x: tensor<2x8xf32>, %s: tensor<8xf32>, %s4: tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    // expected-error@unknown {{node 'ln' (LayerNormalization, opset 17): stash_type 11 is not supported with the Mean or InvStdDev outputs}}
    %y, %mean = "onnx.LayerNormalization"(%x, %s) {stash_type = 11 : i64} : (tensor<2x8xf32>, tensor<8xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("ln")
    // expected-error@unknown {{node 'ln_scale' (LayerNormalization, opset 17): scale and bias must broadcast to the normalized shape [8], got [4]}}
    %z = "onnx.LayerNormalization"(%x, %s4) : (tensor<2x8xf32>, tensor<4xf32>) -> tensor<*xf32> loc("ln_scale")
    return %y, %mean, %z : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Gelu is new in opset 20 (ONNX Runtime's own Gelu is in com.microsoft).
// CHECK: error: loc("gelu16"): node 'gelu16' (Gelu, opset 16): Kiln supports Gelu from opset 20; re-export the model with a newer opset
module attributes {onnx.opset_import = {ai.onnx = 16 : i64}} {
  func.func @gelu_opset16(%x: tensor<2x8xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'gelu16' (Gelu, opset 16): Kiln supports Gelu from opset 20}}
    %y = "onnx.Gelu"(%x) : (tensor<2x8xf32>) -> tensor<*xf32> loc("gelu16")
    return %y : tensor<*xf32>
  }
}

// -----

// ONNX Runtime's contrib ops: the statistics outputs of the skip layer
// norms, and transposes of a rank-1 FusedMatMul operand.
module attributes {onnx.opset_import = {ai.onnx = 13 : i64, com.microsoft = 1 : i64}} {
  func.func @ort_contrib(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %v: tensor<8xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    // expected-error@unknown {{node 'sln' (SkipLayerNormalization, opset 1): output 1 (a normalization statistic, computed by ONNX Runtime for training) is not supported; use only the normalized output and the skip sum}}
    %y, %mean = "onnx.com.microsoft.SkipLayerNormalization"(%x, %x, %g) : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("sln")
    // expected-error@unknown {{node 'fmm' (FusedMatMul, opset 1): transA/transBatchA need an operand of rank 2 or more, got 'tensor<8xf32>'}}
    %z = "onnx.com.microsoft.FusedMatMul"(%v, %x) {transA = 1 : i64} : (tensor<8xf32>, tensor<2x8xf32>) -> tensor<*xf32> loc("fmm")
    return %y, %mean, %z : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// com.microsoft Attention and EmbedLayerNormalization: decoding state, sizes
// that do not add up, masks of another shape, ids that are not integers, a sequence
// longer than the position table.
module attributes {onnx.opset_import = {ai.onnx = 13 : i64, com.microsoft = 1 : i64}} {
  func.func @ort_attention(%x: tensor<2x6x16xf32>, %w: tensor<16x48xf32>, %past: tensor<2x2x2x4x8xf32>, %m: tensor<2x5xi32>, %fid: tensor<2x6xf32>, %tab: tensor<10x16xf32>, %g: tensor<16xf32>, %ids: tensor<2x6xi32>, %pos4: tensor<4x16xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %none = onnx.NoValue loc("none")
    // expected-error@unknown {{node 'past' (Attention, opset 1): input 4 (past) is not supported: Kiln compiles the encoder form (no past or present state)}}
    %a = "onnx.com.microsoft.Attention"(%x, %w, %none, %none, %past) {num_heads = 2 : i64} : (tensor<2x6x16xf32>, tensor<16x48xf32>, none, none, tensor<2x2x2x4x8xf32>) -> tensor<*xf32> loc("past")
    // expected-error@unknown {{node 'sizes' (Attention, opset 1): qkv_hidden_sizes must be three sizes (Q and K equal), each a multiple of num_heads 2, summing to the weights' 48 columns}}
    %b = "onnx.com.microsoft.Attention"(%x, %w) {num_heads = 2 : i64, qkv_hidden_sizes = [16, 16, 8]} : (tensor<2x6x16xf32>, tensor<16x48xf32>) -> tensor<*xf32> loc("sizes")
    // expected-error@unknown {{node 'mask' (Attention, opset 1): mask_index must be [2] or [4] key lengths, a raw mask [2, 6] or [2, 6, 6], got 'tensor<2x5xi32>' (4-D masks and past state are not supported)}}
    %c = "onnx.com.microsoft.Attention"(%x, %w, %none, %m) {num_heads = 2 : i64} : (tensor<2x6x16xf32>, tensor<16x48xf32>, none, tensor<2x5xi32>) -> tensor<*xf32> loc("mask")
    // expected-error@unknown {{node 'heads' (Attention, opset 1): expects input [batch, seq, input_hidden], weights [input_hidden, q + k + v hidden] and num_heads > 0, got 'tensor<2x6x16xf32>', 'tensor<16x48xf32>' and num_heads 0}}
    %d = "onnx.com.microsoft.Attention"(%x, %w) : (tensor<2x6x16xf32>, tensor<16x48xf32>) -> tensor<*xf32> loc("heads")
    // expected-error@unknown {{node 'emb' (EmbedLayerNormalization, opset 1): expects integer input_ids [batch, seq] and word and position embeddings [rows, hidden] of one hidden size, got 'tensor<2x6xf32>', 'tensor<10x16xf32>' and 'tensor<10x16xf32>'}}
    %e = "onnx.com.microsoft.EmbedLayerNormalization"(%fid, %none, %tab, %tab, %none, %g, %g) : (tensor<2x6xf32>, none, tensor<10x16xf32>, tensor<10x16xf32>, none, tensor<16xf32>, tensor<16xf32>) -> tensor<*xf32> loc("emb")
    // expected-error@unknown {{node 'pos' (EmbedLayerNormalization, opset 1): the sequence (6 tokens) is longer than position_embedding (4 rows): compile for a sequence of at most 4 tokens, or pass position_ids}}
    %f = "onnx.com.microsoft.EmbedLayerNormalization"(%ids, %none, %tab, %pos4, %none, %g, %g) : (tensor<2x6xi32>, none, tensor<10x16xf32>, tensor<4x16xf32>, none, tensor<16xf32>, tensor<16xf32>) -> tensor<*xf32> loc("pos")
    return %a, %b, %c, %d, %e, %f : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("l1"): node 'l1' (ReduceL1, opset 18): noop_with_empty_axes with empty axes is not supported for this reduction
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @composite_reduction_noop(%x: tensor<4xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'l1' (ReduceL1, opset 18): noop_with_empty_axes with empty axes is not supported}}
    %y = "onnx.ReduceL1"(%x) {noop_with_empty_axes = 1 : i64} : (tensor<4xf32>) -> tensor<*xf32> loc("l1")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("prelu"): node 'prelu' (PRelu, opset 16): the slope's shape must broadcast to the input's
module attributes {onnx.opset_import = {ai.onnx = 16 : i64}} {
  func.func @prelu_slope_too_big(%x: tensor<3xf32>, %s: tensor<2x3xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'prelu' (PRelu, opset 16): the slope's shape must broadcast to the input's}}
    %y = "onnx.PRelu"(%x, %s) : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<*xf32> loc("prelu")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("mod"): node 'mod' (Mod, opset 13): floating-point Mod requires fmod = 1 (ONNX)
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @float_mod_without_fmod(%x: tensor<3xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'mod' (Mod, opset 13): floating-point Mod requires fmod = 1 (ONNX)}}
    %y = "onnx.Mod"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<*xf32> loc("mod")
    return %y : tensor<*xf32>
  }
}

// -----

// A run-time shape argument with an undeclared output shape stays an error.
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @expand_undeclared(%x: tensor<3x1xf32>, %s: tensor<3xi64>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'e' (Expand, opset 13): shape must be a compile-time constant, or the output shape must be declared static: shape computed at run time with an undeclared output shape is not supported}}
    %y = "onnx.Expand"(%x, %s) : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<*xf32> loc("e")
    return %y : tensor<*xf32>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 20 : i64}} {
  func.func @gelu_bad(%x: tensor<2x3xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'g' (Gelu, opset 20): approximate 'erf' is not one of Gelu's: none, tanh}}
    %y = "onnx.Gelu"(%x) {approximate = "erf"} : (tensor<2x3xf32>) -> tensor<*xf32> loc("g")
    return %y : tensor<*xf32>
  }
}

// -----

// With symbolic sizes Resize runs in every mode on constant scales or on
// sizes computed from shapes; crop-and-resize, scales computed at run time
// and an aspect-ratio policy are refused, each naming what it needs, and so
// is a length without a range to size the output positions by.
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @resize_symbolic(%x: tensor<1x3x?x?xf32>, %r: tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %s = onnx.Initializer "s" dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32> loc("s")
    %roi = onnx.Initializer "roi" dense<[0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]> : tensor<8xf32> loc("roi")
    %n = onnx.Initializer "n" dense<[1, 3, 8, 8]> : tensor<4xi64> loc("n")
    %none = onnx.NoValue loc("none")
    // expected-error@unknown {{node 'crop' (Resize, opset 18): input shape 'tensor<1x3x?x?xf32>' is not static; with symbolic sizes Resize needs a coordinate_transformation_mode other than tf_crop_and_resize; give the symbolic dimensions one size each}}
    %a = "onnx.Resize"(%x, %roi, %s) {mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize"} : (tensor<1x3x?x?xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<*xf32> loc("crop")
    // expected-error@unknown {{node 'runtime' (Resize, opset 18): input shape 'tensor<1x3x?x?xf32>' is not static; with symbolic sizes Resize needs constant scales (these are computed at run time); give the symbolic dimensions one size each}}
    %b = "onnx.Resize"(%x, %none, %r) {mode = "linear"} : (tensor<1x3x?x?xf32>, none, tensor<4xf32>) -> tensor<*xf32> loc("runtime")
    // expected-error@unknown {{node 'aspect' (Resize, opset 18): input shape 'tensor<1x3x?x?xf32>' is not static; with symbolic sizes Resize needs keep_aspect_ratio_policy 'stretch', not 'not_larger'; give the symbolic dimensions one size each}}
    %c = "onnx.Resize"(%x, %none, %none, %n) {mode = "linear", keep_aspect_ratio_policy = "not_larger"} : (tensor<1x3x?x?xf32>, none, none, tensor<4xi64>) -> tensor<*xf32> loc("aspect")
    // expected-error@unknown {{node 'unbounded' (Resize, opset 18): axis 2 resizes to}}
    %d = "onnx.Resize"(%x, %none, %s) {mode = "linear"} : (tensor<1x3x?x?xf32>, none, tensor<4xf32>) -> tensor<*xf32> loc("unbounded")
    return %a, %b, %c, %d : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// A negative (or NaN) scale at symbolic sizes is refused by name, never
// turned into an output length.
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @resize_symbolic_negative(%x: tensor<1x3x?x?xf32>) -> tensor<*xf32> {
    %s = onnx.Initializer "s" dense<[1.0, 1.0, -2.0, 0x7FC00000]> : tensor<4xf32> loc("s")
    %none = onnx.NoValue loc("none")
    // expected-error@unknown {{node 'negative' (Resize, opset 13): input shape 'tensor<1x3x?x?xf32>' is not static; with symbolic sizes Resize needs positive scales, not -2.000000 on axis 2; give the symbolic dimensions one size each}}
    %a = "onnx.Resize"(%x, %none, %s) {mode = "linear"} : (tensor<1x3x?x?xf32>, none, tensor<4xf32>) -> tensor<*xf32> loc("negative")
    return %a : tensor<*xf32>
  }
}

// -----

// A graph input over the per-tensor limit (16 GiB by default) is refused at
// its first reader, before a converter builds anything from its sizes.
module attributes {onnx.opset_import = {ai.onnx = 24 : i64}} {
  func.func @huge_input(%past: tensor<2x2x2147483647x4xf32>, %u: tensor<2x2x3x4xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'kv' (TensorScatter, opset 24): its input 'tensor<2x2x2147483647x4xf32>' would hold 137438953408 bytes, over the limit of 17179869184 bytes per tensor}}
    %y = "onnx.TensorScatter"(%past, %u) : (tensor<2x2x2147483647x4xf32>, tensor<2x2x3x4xf32>) -> tensor<*xf32> loc("kv")
    return %y : tensor<*xf32>
  }
}

// -----

// Run-time Pad axes: more axes than the input has dimensions is refused
// before one selection per (dimension, axis) pair is built.
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @pad_too_many_axes(%x: tensor<2x3xf32>, %pads: tensor<6xi64>, %axes: tensor<3xi64>) -> tensor<4x5xf32> {
    %none = onnx.NoValue loc("pad")
    // expected-error@unknown {{node 'pad' (Pad, opset 18): axes has 3 values; the input has rank 2 and an axis may be named once}}
    %y = "onnx.Pad"(%x, %pads, %none, %axes) : (tensor<2x3xf32>, tensor<6xi64>, none, tensor<3xi64>) -> tensor<4x5xf32> loc("pad")
    return %y : tensor<4x5xf32>
  }
}

// -----

// MatMulNBits dequantizes its weights at compile time: they must be
// constants, of 2, 4 or 8 bits, without act-order.
module attributes {onnx.opset_import = {ai.onnx = 13 : i64, com.microsoft = 1 : i64}} {
  func.func @matmul_nbits(%a: tensor<2x64xf32>, %b: tensor<8x2x16xui8>, %s: tensor<16xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    // expected-error@unknown {{node 'nb3' (MatMulNBits, opset 1): needs K and N > 0 (at most 2^24), bits 2, 4 or 8 and a block_size that is a power of two of at least 16, got K 64, N 8, bits 3, block_size 32}}
    %x = "onnx.com.microsoft.MatMulNBits"(%a, %b, %s) {K = 64 : i64, N = 8 : i64, bits = 3 : i64, block_size = 32 : i64} : (tensor<2x64xf32>, tensor<8x2x16xui8>, tensor<16xf32>) -> tensor<*xf32> loc("nb3")
    // expected-error@unknown {{node 'nbk' (MatMulNBits, opset 1): A's last dimension must be K = 32, got 'tensor<2x64xf32>'}}
    %y = "onnx.com.microsoft.MatMulNBits"(%a, %b, %s) {K = 32 : i64, N = 8 : i64, block_size = 32 : i64} : (tensor<2x64xf32>, tensor<8x2x16xui8>, tensor<16xf32>) -> tensor<*xf32> loc("nbk")
    // expected-error@unknown {{node 'nbc' (MatMulNBits, opset 1): B and scales must be constants (initializers): Kiln dequantizes the weights at compile time}}
    %z = "onnx.com.microsoft.MatMulNBits"(%a, %b, %s) {K = 64 : i64, N = 8 : i64, block_size = 32 : i64} : (tensor<2x64xf32>, tensor<8x2x16xui8>, tensor<16xf32>) -> tensor<*xf32> loc("nbc")
    return %x, %y, %z : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// QAttention takes 8-bit input and weights, one input scale, and weight
// scales per tensor or per column.
module attributes {onnx.opset_import = {ai.onnx = 13 : i64, com.microsoft = 1 : i64}} {
  func.func @qattention(%x: tensor<2x6x16xui8>, %xf: tensor<2x6x16xf32>, %w: tensor<16x48xi8>, %b: tensor<48xf32>, %s: tensor<f32>, %s5: tensor<5xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    // expected-error@unknown {{node 'qf' (QAttention, opset 1): expects 8-bit input and weights with float scales, got 'tensor<2x6x16xf32>' scaled by 'tensor<f32>'}}
    %y = "onnx.com.microsoft.QAttention"(%xf, %w, %b, %s, %s) {num_heads = 2 : i64} : (tensor<2x6x16xf32>, tensor<16x48xi8>, tensor<48xf32>, tensor<f32>, tensor<f32>) -> tensor<*xf32> loc("qf")
    // expected-error@unknown {{node 'qs' (QAttention, opset 1): input_scale must hold one value and weight_scale one or one per weight column (48), got 'tensor<5xf32>'}}
    %z = "onnx.com.microsoft.QAttention"(%x, %w, %b, %s, %s5) {num_heads = 2 : i64} : (tensor<2x6x16xui8>, tensor<16x48xi8>, tensor<48xf32>, tensor<f32>, tensor<5xf32>) -> tensor<*xf32> loc("qs")
    return %y, %z : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Sizes scaled in float are followed only through whole, finite constants
// below 2^53: a model whose scale is NaN, infinite, fractional or too large
// to be a size gets the Resize's refusal, not a size made up from it.
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @hostile_float_scales(%x: tensor<1x1x?x?xf32> {kiln.symbols = array<i64: -1, -1, 0, 1>, onnx.dim_params = ["", "", "H", "W"]}) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) attributes {kiln.symbol_bounds = array<i64: 1, 64, 1, 64>} {
    %sh = "onnx.Shape"(%x) : (tensor<1x1x?x?xf32>) -> tensor<4xi64> loc("shape")
    %f = "onnx.Cast"(%sh) {to = 1 : si64} : (tensor<4xi64>) -> tensor<*xf32> loc("cast")
    %nan = "onnx.Constant"() {value = dense<0x7FC00000> : tensor<4xf32>} : () -> tensor<4xf32>
    %inf = "onnx.Constant"() {value = dense<0x7F800000> : tensor<4xf32>} : () -> tensor<4xf32>
    %half = "onnx.Constant"() {value = dense<0.5> : tensor<4xf32>} : () -> tensor<4xf32>
    %huge = "onnx.Constant"() {value = dense<3.0e38> : tensor<4xf32>} : () -> tensor<4xf32>
    %none = "onnx.NoValue"() : () -> none
    %m0 = "onnx.Mul"(%f, %nan) : (tensor<*xf32>, tensor<4xf32>) -> tensor<*xf32> loc("m0")
    %i0 = "onnx.Cast"(%m0) {to = 7 : si64} : (tensor<*xf32>) -> tensor<*xi64> loc("i0")
    // expected-error@unknown {{node 'nan' (Resize, opset 13): input shape 'tensor<1x1x?x?xf32>' is not static; with symbolic sizes Resize needs sizes that are constant or computed from the shapes}}
    %y0 = "onnx.Resize"(%x, %none, %none, %i0) {mode = "linear"} : (tensor<1x1x?x?xf32>, none, none, tensor<*xi64>) -> tensor<*xf32> loc("nan")
    %m1 = "onnx.Mul"(%f, %inf) : (tensor<*xf32>, tensor<4xf32>) -> tensor<*xf32> loc("m1")
    %i1 = "onnx.Cast"(%m1) {to = 7 : si64} : (tensor<*xf32>) -> tensor<*xi64> loc("i1")
    // expected-error@unknown {{node 'inf' (Resize, opset 13): input shape 'tensor<1x1x?x?xf32>' is not static; with symbolic sizes Resize needs sizes that are constant or computed from the shapes}}
    %y1 = "onnx.Resize"(%x, %none, %none, %i1) {mode = "linear"} : (tensor<1x1x?x?xf32>, none, none, tensor<*xi64>) -> tensor<*xf32> loc("inf")
    %m2 = "onnx.Mul"(%f, %half) : (tensor<*xf32>, tensor<4xf32>) -> tensor<*xf32> loc("m2")
    %i2 = "onnx.Cast"(%m2) {to = 7 : si64} : (tensor<*xf32>) -> tensor<*xi64> loc("i2")
    // expected-error@unknown {{node 'half' (Resize, opset 13): input shape 'tensor<1x1x?x?xf32>' is not static; with symbolic sizes Resize needs sizes that are constant or computed from the shapes}}
    %y2 = "onnx.Resize"(%x, %none, %none, %i2) {mode = "linear"} : (tensor<1x1x?x?xf32>, none, none, tensor<*xi64>) -> tensor<*xf32> loc("half")
    %m3 = "onnx.Mul"(%f, %huge) : (tensor<*xf32>, tensor<4xf32>) -> tensor<*xf32> loc("m3")
    %i3 = "onnx.Cast"(%m3) {to = 7 : si64} : (tensor<*xf32>) -> tensor<*xi64> loc("i3")
    // expected-error@unknown {{node 'huge' (Resize, opset 13): input shape 'tensor<1x1x?x?xf32>' is not static; with symbolic sizes Resize needs sizes that are constant or computed from the shapes}}
    %y3 = "onnx.Resize"(%x, %none, %none, %i3) {mode = "linear"} : (tensor<1x1x?x?xf32>, none, none, tensor<*xi64>) -> tensor<*xf32> loc("huge")
    return %y0, %y1, %y2, %y3 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}
