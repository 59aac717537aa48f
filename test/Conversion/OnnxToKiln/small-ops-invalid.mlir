// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln -verify-diagnostics
// RUN: not kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln 2>&1 | FileCheck %s

// What the conversions of ONNX's newer small ops (bitwise, BitCast,
// CenterCropPad, normalizations, poolings, activations, AffineGrid, Col2Im)
// refuse (see onnx-to-kiln-invalid.mlir for how the two RUN lines work
// together).

// CHECK: error: loc("and"): node 'and' (BitwiseAnd, opset 18): BitwiseAnd of 'f32' is not supported; it takes integer tensors (use Cast to an integer type first)
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @bitwise_float(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'and' (BitwiseAnd, opset 18): BitwiseAnd of 'f32' is not supported}}
    %0 = "onnx.BitwiseAnd"(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<*xf32> loc("and")
    return %0 : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("not"): node 'not' (BitwiseNot, opset 18): BitwiseNot of 'i1' is not supported; it takes integer tensors (use And, Or, Xor or Not for bools)
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @bitwise_bool(%a: tensor<3xi1>) -> tensor<*xi1> {
    // expected-error@unknown {{node 'not' (BitwiseNot, opset 18): BitwiseNot of 'i1' is not supported}}
    %0 = "onnx.BitwiseNot"(%a) : (tensor<3xi1>) -> tensor<*xi1> loc("not")
    return %0 : tensor<*xi1>
  }
}

// -----

// CHECK: error: loc("bc"): node 'bc' (BitCast, opset 26): cannot bitcast 'f32' (32 bits) to DOUBLE (64 bits); BitCast needs types of the same width (use Cast to convert values)
module attributes {onnx.opset_import = {ai.onnx = 26 : i64}} {
  func.func @bitcast_width(%x: tensor<3xf32>) -> tensor<*xf64> {
    // expected-error@unknown {{node 'bc' (BitCast, opset 26): cannot bitcast 'f32' (32 bits) to DOUBLE (64 bits)}}
    %0 = "onnx.BitCast"(%x) {to = 11 : i64} : (tensor<3xf32>) -> tensor<*xf64> loc("bc")
    return %0 : tensor<*xf64>
  }
}

// -----

// CHECK: error: loc("bc"): node 'bc' (BitCast, opset 26): bitcasting to COMPLEX64 is not supported; Kiln bitcasts between float, integer and bool types
module attributes {onnx.opset_import = {ai.onnx = 26 : i64}} {
  func.func @bitcast_complex(%x: tensor<3xf64>) -> tensor<*xf64> {
    // expected-error@unknown {{node 'bc' (BitCast, opset 26): bitcasting to COMPLEX64 is not supported}}
    %0 = "onnx.BitCast"(%x) {to = 14 : i64} : (tensor<3xf64>) -> tensor<*xf64> loc("bc")
    return %0 : tensor<*xf64>
  }
}

// -----

// CHECK: error: loc("c"): node 'c' (CenterCropPad, opset 18): shape must be a 1-D tensor with one size per axis (2)
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @center_crop_pad_sizes(%x: tensor<4x4xf32>) -> tensor<*xf32> {
    %s = onnx.Initializer "s" dense<[2, 2, 2]> : tensor<3xi64> loc("s")
    // expected-error@unknown {{node 'c' (CenterCropPad, opset 18): shape must be a 1-D tensor with one size per axis (2)}}
    %y = "onnx.CenterCropPad"(%x, %s) : (tensor<4x4xf32>, tensor<3xi64>) -> tensor<*xf32> loc("c")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("c"): node 'c' (CenterCropPad, opset 18): shape must be a compile-time constant, or the output shape must be declared static
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @center_crop_pad_runtime(%x: tensor<4x4xf32>, %s: tensor<2xi64>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'c' (CenterCropPad, opset 18): shape must be a compile-time constant}}
    %y = "onnx.CenterCropPad"(%x, %s) : (tensor<4x4xf32>, tensor<2xi64>) -> tensor<*xf32> loc("c")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("n"): node 'n' (LpNormalization, opset 22): p = 3 is not supported; LpNormalization takes p = 1 or 2
module attributes {onnx.opset_import = {ai.onnx = 22 : i64}} {
  func.func @lp_norm_p(%x: tensor<2x3xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'n' (LpNormalization, opset 22): p = 3 is not supported}}
    %y = "onnx.LpNormalization"(%x) {p = 3 : i64} : (tensor<2x3xf32>) -> tensor<*xf32> loc("n")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("g"): node 'g' (GroupNormalization, opset 21): num_groups must be a positive divisor of the 4 channels, got 3
module attributes {onnx.opset_import = {ai.onnx = 21 : i64}} {
  func.func @group_norm_groups(%x: tensor<2x4x3xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'g' (GroupNormalization, opset 21): num_groups must be a positive divisor of the 4 channels, got 3}}
    %y = "onnx.GroupNormalization"(%x, %s, %b) {num_groups = 3 : i64} : (tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<*xf32> loc("g")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("p"): node 'p' (LpPool, opset 22): ceil_mode = 1 is not supported for LpPool; pad the input (pads) to cover the last window instead
module attributes {onnx.opset_import = {ai.onnx = 22 : i64}} {
  func.func @lp_pool_ceil(%x: tensor<1x1x5x5xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'p' (LpPool, opset 22): ceil_mode = 1 is not supported for LpPool}}
    %y = "onnx.LpPool"(%x) {kernel_shape = [2, 2], strides = [2, 2], ceil_mode = 1 : i64} : (tensor<1x1x5x5xf32>) -> tensor<*xf32> loc("p")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("s"): node 's' (SwiGLU, opset 28): A ('tensor<2x3xf32>') and B ('tensor<3xf32>') must have the same shape and type; SwiGLU does not broadcast (Expand or Cast one of them first)
module attributes {onnx.opset_import = {ai.onnx = 28 : i64}} {
  func.func @swiglu_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 's' (SwiGLU, opset 28): A ('tensor<2x3xf32>') and B ('tensor<3xf32>') must have the same shape and type}}
    %y = "onnx.SwiGLU"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<*xf32> loc("s")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("a"): node 'a' (AffineGrid, opset 20): size must be a compile-time constant, or the output shape must be declared static
module attributes {onnx.opset_import = {ai.onnx = 20 : i64}} {
  func.func @affine_grid_size(%t: tensor<2x2x3xf32>, %s: tensor<4xi64>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'a' (AffineGrid, opset 20): size must be a compile-time constant}}
    %y = "onnx.AffineGrid"(%t, %s) : (tensor<2x2x3xf32>, tensor<4xi64>) -> tensor<*xf32> loc("a")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("c"): node 'c' (Col2Im, opset 18): the input has 4 blocks; the shapes give 9
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @col2im_blocks(%x: tensor<1x4x4xf32>) -> tensor<*xf32> {
    %i = onnx.Initializer "i" dense<[4, 4]> : tensor<2xi64> loc("i")
    %b = onnx.Initializer "b" dense<[2, 2]> : tensor<2xi64> loc("b")
    // expected-error@unknown {{node 'c' (Col2Im, opset 18): the input has 4 blocks; the shapes give 9}}
    %y = "onnx.Col2Im"(%x, %i, %b) : (tensor<1x4x4xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<*xf32> loc("c")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("g"): node 'g' (OptionalGetElement, opset 18): reads an optional that is empty (an Optional without input, or an omitted input); ONNX defines no result for it. Guard the read with OptionalHasElement and If
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @empty_optional_read() -> tensor<*xf32> {
    %none = "onnx.Optional"() {type = "<TYPE_PROTO attribute>"} : () -> tensor<*xf32> loc("o")
    // expected-error@unknown {{node 'g' (OptionalGetElement, opset 18): reads an optional that is empty}}
    %y = "onnx.OptionalGetElement"(%none) : (tensor<*xf32>) -> tensor<*xf32> loc("g")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("at"): node 'at' (SequenceAt, opset 13): position 2 is outside the sequence of 2 tensors
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @sequence_past_end(%a: tensor<2xf32>) -> tensor<*xf32> {
    %two = onnx.Initializer "two" dense<2> : tensor<i64> loc("two")
    %s = "onnx.SequenceConstruct"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<*xf32> loc("seq")
    // expected-error@unknown {{node 'at' (SequenceAt, opset 13): position 2 is outside the sequence of 2 tensors}}
    %y = "onnx.SequenceAt"(%s, %two) : (tensor<*xf32>, tensor<i64>) -> tensor<*xf32> loc("at")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("split"): node 'split' (SplitToSequence, opset 13): splits into 5000 tensors; more than 4096 is not supported (each is a tensor of its own while compiling); use Split or a Loop
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @split_too_many(%a: tensor<5000xf32>) -> tensor<*xi64> {
    // expected-error@unknown {{node 'split' (SplitToSequence, opset 13): splits into 5000 tensors; more than 4096 is not supported}}
    %s = "onnx.SplitToSequence"(%a) : (tensor<5000xf32>) -> tensor<*xf32> loc("split")
    %n = "onnx.SequenceLength"(%s) : (tensor<*xf32>) -> tensor<*xi64> loc("len")
    return %n : tensor<*xi64>
  }
}

// -----

// CHECK: error: loc("map"): node 'map' (SequenceMap, opset 17): its input sequences have different lengths (2 and 3)
module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
  func.func @sequence_map_lengths(%a: tensor<2xf32>) -> tensor<*xf32> {
    %s = "onnx.SequenceConstruct"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<*xf32> loc("s")
    %t = "onnx.SequenceConstruct"(%a, %a, %a) : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<*xf32> loc("t")
    // expected-error@unknown {{node 'map' (SequenceMap, opset 17): its input sequences have different lengths (2 and 3)}}
    %m = "onnx.SequenceMap"(%s, %t) ({
    ^bb0(%x: tensor<*xf32>, %y: tensor<*xf32>):
      %z = "onnx.Add"(%x, %y) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32> loc("add")
      "onnx.Yield"(%z) : (tensor<*xf32>) -> ()
    }) {onnx.regions = ["body"]} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32> loc("map")
    %n = "onnx.ConcatFromSequence"(%m) {axis = 0 : si64} : (tensor<*xf32>) -> tensor<*xf32> loc("cat")
    return %n : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("map"): node 'map' (SequenceMap, opset 17): input 0 is a sequence Kiln does not hold as a compile-time list
module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
  func.func @sequence_map_not_a_list(%a: tensor<2xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'map' (SequenceMap, opset 17): input 0 is a sequence Kiln does not hold as a compile-time list}}
    %m = "onnx.SequenceMap"(%a) ({
    ^bb0(%x: tensor<*xf32>):
      %z = "onnx.Relu"(%x) : (tensor<*xf32>) -> tensor<*xf32> loc("relu")
      "onnx.Yield"(%z) : (tensor<*xf32>) -> ()
    }) {onnx.regions = ["body"]} : (tensor<2xf32>) -> tensor<*xf32> loc("map")
    %n = "onnx.ConcatFromSequence"(%m) {axis = 0 : si64} : (tensor<*xf32>) -> tensor<*xf32> loc("cat")
    return %n : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("map"): node 'map' (SequenceMap, opset 17): its body takes 1 inputs and gives 1 outputs; the node has 2 inputs and 1 outputs
module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
  func.func @sequence_map_arity(%a: tensor<2xf32>) -> tensor<*xf32> {
    %s = "onnx.SequenceConstruct"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<*xf32> loc("s")
    // expected-error@unknown {{node 'map' (SequenceMap, opset 17): its body takes 1 inputs and gives 1 outputs; the node has 2 inputs and 1 outputs}}
    %m = "onnx.SequenceMap"(%s, %a) ({
    ^bb0(%x: tensor<*xf32>):
      %z = "onnx.Relu"(%x) : (tensor<*xf32>) -> tensor<*xf32> loc("relu")
      "onnx.Yield"(%z) : (tensor<*xf32>) -> ()
    }) {onnx.regions = ["body"]} : (tensor<*xf32>, tensor<2xf32>) -> tensor<*xf32> loc("map")
    %n = "onnx.ConcatFromSequence"(%m) {axis = 0 : si64} : (tensor<*xf32>) -> tensor<*xf32> loc("cat")
    return %n : tensor<*xf32>
  }
}

// -----

// CHECK: error: loc("map"): node 'map' (SequenceMap, opset 17): maps an empty sequence
module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
  func.func @sequence_map_empty(%a: tensor<4xf32>) -> tensor<*xf32> {
    %s = "onnx.SequenceEmpty"() {dtype = 1 : si64} : () -> tensor<*xf32> loc("empty")
    // expected-error@unknown {{node 'map' (SequenceMap, opset 17): maps an empty sequence}}
    %m = "onnx.SequenceMap"(%s) ({
    ^bb0(%x: tensor<*xf32>):
      %z = "onnx.Relu"(%x) : (tensor<*xf32>) -> tensor<*xf32> loc("relu")
      "onnx.Yield"(%z) : (tensor<*xf32>) -> ()
    }) {onnx.regions = ["body"]} : (tensor<*xf32>) -> tensor<*xf32> loc("map")
    %n = "onnx.ConcatFromSequence"(%m) {axis = 0 : si64} : (tensor<*xf32>) -> tensor<*xf32> loc("cat")
    return %n : tensor<*xf32>
  }
}
