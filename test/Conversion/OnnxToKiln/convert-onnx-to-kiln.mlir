// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// Inputs are written the way the importer produces them: one generic op per
// ONNX node, attributes verbatim, the node name as location, the opset on the
// module. Each case checks the kiln ops and their normalized attributes.

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

// The kiln ops keep the node's name as their location.
// LOC-LABEL: func.func @conv_explicit_pads
// LOC: kiln.conv2d {{.+}} loc(#[[CONV1:loc[0-9]*]])
// LOC: #[[CONV1]] = loc("conv1")

// CHECK-LABEL: func.func @conv_explicit_pads
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-DAG: %[[W:.+]] = kiln.constant dense<{{.+}}> : tensor<4x3x3x3xf32>
// CHECK-DAG: %[[B:.+]] = kiln.constant dense<{{.+}}> : tensor<4xf32>
// CHECK: %[[Y:.+]] = kiln.conv2d %[[X]], %[[W]], %[[B]]
// CHECK-SAME: dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>
// CHECK-SAME: -> tensor<1x4x8x8xf32>
// CHECK-NOT: onnx.
// CHECK: return %[[Y]] : tensor<1x4x8x8xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @conv_explicit_pads(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
    %w = onnx.Initializer "w" dense<0.5> : tensor<4x3x3x3xf32> loc("w")
    %b = onnx.Initializer "b" dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> loc("b")
    %y = "onnx.Conv"(%x, %w, %b) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32> loc("conv1")
    return %y : tensor<1x4x8x8xf32>
  }
}

// -----

// SAME_UPPER puts the odd padding at the end: a 4x4 kernel over 7x7 at
// stride 1 needs 3 rows, 1 before and 2 after. The ONNX result type is
// unknown (*); kiln infers it and the signature follows.
// CHECK-LABEL: func.func @conv_same_upper
// CHECK-SAME: -> tensor<1x2x7x7xf32>
// CHECK: kiln.conv2d
// CHECK-SAME: pads = array<i64: 1, 1, 2, 2>
// CHECK-SAME: (tensor<1x3x7x7xf32>, tensor<2x3x4x4xf32>) -> tensor<1x2x7x7xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @conv_same_upper(%x: tensor<1x3x7x7xf32>, %w: tensor<2x3x4x4xf32>) -> tensor<*xf32> {
    %y = "onnx.Conv"(%x, %w) {auto_pad = "SAME_UPPER"} : (tensor<1x3x7x7xf32>, tensor<2x3x4x4xf32>) -> tensor<*xf32> loc("conv_same")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK-LABEL: func.func @conv_same_lower
// CHECK: kiln.conv2d
// CHECK-SAME: pads = array<i64: 2, 2, 1, 1>
// CHECK-SAME: -> tensor<1x2x7x7xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @conv_same_lower(%x: tensor<1x3x7x7xf32>, %w: tensor<2x3x4x4xf32>) -> tensor<*xf32> {
    %y = "onnx.Conv"(%x, %w) {auto_pad = "SAME_LOWER"} : (tensor<1x3x7x7xf32>, tensor<2x3x4x4xf32>) -> tensor<*xf32> loc("conv_same")
    return %y : tensor<*xf32>
  }
}

// -----

// SAME with stride 2: the output is ceil(7 / 2) = 4 and 1 + 1 rows of padding.
// CHECK-LABEL: func.func @conv_same_strided
// CHECK: kiln.conv2d
// CHECK-SAME: pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>
// CHECK-SAME: -> tensor<1x2x4x4xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @conv_same_strided(%x: tensor<1x3x7x7xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<*xf32> {
    %y = "onnx.Conv"(%x, %w) {auto_pad = "SAME_UPPER", strides = [2, 2]} : (tensor<1x3x7x7xf32>, tensor<2x3x3x3xf32>) -> tensor<*xf32> loc("conv_same")
    return %y : tensor<*xf32>
  }
}

// -----

// VALID ignores any pads attribute.
// CHECK-LABEL: func.func @conv_valid
// CHECK: kiln.conv2d
// CHECK-SAME: pads = array<i64: 0, 0, 0, 0>
// CHECK-SAME: -> tensor<1x2x4x4xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @conv_valid(%x: tensor<1x3x7x7xf32>, %w: tensor<2x3x4x4xf32>) -> tensor<*xf32> {
    %y = "onnx.Conv"(%x, %w) {auto_pad = "VALID"} : (tensor<1x3x7x7xf32>, tensor<2x3x4x4xf32>) -> tensor<*xf32> loc("conv_valid")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK-LABEL: func.func @conv_grouped
// CHECK: kiln.conv2d
// CHECK-SAME: dilations = array<i64: 2, 2>, group = 2 : i64
// CHECK-SAME: (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x4x4xf32>
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @conv_grouped(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<*xf32> {
    %y = "onnx.Conv"(%x, %w) {group = 2 : i64, dilations = [2, 2]} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<*xf32> loc("conv_group")
    return %y : tensor<*xf32>
  }
}

// -----

// A 1-D convolution runs as a 2-D one of height 1: [N, C, W] becomes
// [N, C, 1, W], ONNX's [begin, end] pads become [0, begin, 0, end].
// CHECK-LABEL: func.func @conv_1d
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x10xf32>, %[[W:.+]]: tensor<4x3x3xf32>) -> tensor<1x4x5xf32>
// CHECK: %[[X2:.+]] = kiln.reshape %[[X]] : tensor<1x3x10xf32> to tensor<1x3x1x10xf32>
// CHECK: %[[W2:.+]] = kiln.reshape %[[W]] : tensor<4x3x3xf32> to tensor<4x3x1x3xf32>
// CHECK: %[[Y:.+]] = kiln.conv2d %[[X2]], %[[W2]]
// CHECK-SAME: pads = array<i64: 0, 1, 0, 1>, strides = array<i64: 1, 2>
// CHECK-SAME: -> tensor<1x4x1x5xf32>
// CHECK: %[[R:.+]] = kiln.reshape %[[Y]] : tensor<1x4x1x5xf32> to tensor<1x4x5xf32>
// CHECK: return %[[R]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @conv_1d(%x: tensor<1x3x10xf32>, %w: tensor<4x3x3xf32>) -> tensor<*xf32> {
    %y = "onnx.Conv"(%x, %w) {pads = [1, 1], strides = [2]} : (tensor<1x3x10xf32>, tensor<4x3x3xf32>) -> tensor<*xf32> loc("conv1d")
    return %y : tensor<*xf32>
  }
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

// -----

// ceil_mode rounds the output up: 7x7 with a 2x2 window at stride 2 gives 4x4.
// The unused Indices output is fine.
// CHECK-LABEL: func.func @max_pool_ceil_mode
// CHECK: %[[Y:.+]] = kiln.max_pool2d %{{.+}} {ceil_mode = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
// CHECK-SAME: : tensor<1x4x7x7xf32> -> tensor<1x4x4x4xf32>
// CHECK: return %[[Y]]
module attributes {onnx.opset_import = {ai.onnx = 12 : i64}} {
  func.func @max_pool_ceil_mode(%x: tensor<1x4x7x7xf32>) -> tensor<*xf32> {
    %y, %i = "onnx.MaxPool"(%x) {kernel_shape = [2, 2], strides = [2, 2], ceil_mode = 1 : i64} : (tensor<1x4x7x7xf32>) -> (tensor<*xf32>, tensor<*xi64>) loc("pool")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK-LABEL: func.func @max_pool_floor
// CHECK: kiln.max_pool2d
// CHECK-NOT: ceil_mode
// CHECK-SAME: : tensor<1x4x7x7xf32> -> tensor<1x4x3x3xf32>
module attributes {onnx.opset_import = {ai.onnx = 12 : i64}} {
  func.func @max_pool_floor(%x: tensor<1x4x7x7xf32>) -> tensor<*xf32> {
    %y = "onnx.MaxPool"(%x) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x4x7x7xf32>) -> tensor<*xf32> loc("pool")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK-LABEL: func.func @average_pool_count_include_pad
// CHECK: kiln.avg_pool2d %{{.+}} {count_include_pad = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
// CHECK-SAME: : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
// CHECK: kiln.avg_pool2d
// CHECK-NOT: count_include_pad
// CHECK-SAME: pads = array<i64: 1, 1, 1, 1>
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @average_pool_count_include_pad(%x: tensor<1x4x8x8xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %y = "onnx.AveragePool"(%x) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], count_include_pad = 1 : i64} : (tensor<1x4x8x8xf32>) -> tensor<*xf32> loc("avg_incl")
    %z = "onnx.AveragePool"(%x) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x4x8x8xf32>) -> tensor<*xf32> loc("avg_excl")
    return %y, %z : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// CHECK-LABEL: func.func @global_pools
// CHECK: kiln.global_avg_pool %{{.+}} : tensor<1x8x5x5xf32> -> tensor<1x8x1x1xf32>
// CHECK: kiln.reduce_max %{{.+}} {axes = array<i64: 2, 3>} : tensor<1x8x5x5xf32> -> tensor<1x8x1x1xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @global_pools(%x: tensor<1x8x5x5xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %a = "onnx.GlobalAveragePool"(%x) : (tensor<1x8x5x5xf32>) -> tensor<*xf32> loc("gap")
    %m = "onnx.GlobalMaxPool"(%x) : (tensor<1x8x5x5xf32>) -> tensor<*xf32> loc("gmp")
    return %a, %m : tensor<*xf32>, tensor<*xf32>
  }
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @gemm_trans_b_alpha_beta
// CHECK-SAME: (%[[A:.+]]: tensor<2x64xf32>, %[[B:.+]]: tensor<10x64xf32>, %[[C:.+]]: tensor<10xf32>)
// CHECK: kiln.gemm %[[A]], %[[B]], %[[C]] {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32, trans_b = true}
// CHECK-SAME: : (tensor<2x64xf32>, tensor<10x64xf32>, tensor<10xf32>) -> tensor<2x10xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @gemm_trans_b_alpha_beta(%a: tensor<2x64xf32>, %b: tensor<10x64xf32>, %c: tensor<10xf32>) -> tensor<*xf32> {
    %y = "onnx.Gemm"(%a, %b, %c) {alpha = 0.5 : f32, beta = 2.0 : f32, transB = 1 : i64} : (tensor<2x64xf32>, tensor<10x64xf32>, tensor<10xf32>) -> tensor<*xf32> loc("fc")
    return %y : tensor<*xf32>
  }
}

// -----

// C is optional from opset 11: an omitted C gives a gemm without it.
// CHECK-LABEL: func.func @gemm_no_c
// CHECK: kiln.gemm %{{[^,]+}}, %{{[^,]+}} {trans_a = true} : (tensor<64x2xf32>, tensor<64x10xf32>) -> tensor<2x10xf32>
// CHECK-NOT: onnx.NoValue
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @gemm_no_c(%a: tensor<64x2xf32>, %b: tensor<64x10xf32>) -> tensor<*xf32> {
    %none = onnx.NoValue loc("fc")
    %y = "onnx.Gemm"(%a, %b, %none) {transA = 1 : i64} : (tensor<64x2xf32>, tensor<64x10xf32>, none) -> tensor<*xf32> loc("fc")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK-LABEL: func.func @matmul
// CHECK: kiln.matmul %{{.+}}, %{{.+}} : (tensor<3x2x8xf32>, tensor<8x4xf32>) -> tensor<3x2x4xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @matmul(%a: tensor<3x2x8xf32>, %b: tensor<8x4xf32>) -> tensor<*xf32> {
    %y = "onnx.MatMul"(%a, %b) : (tensor<3x2x8xf32>, tensor<8x4xf32>) -> tensor<*xf32> loc("mm")
    return %y : tensor<*xf32>
  }
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @activations
// CHECK: %[[R:.+]] = kiln.relu %{{.+}} : tensor<2x3xf32>
// CHECK: %[[S:.+]] = kiln.sigmoid %[[R]] : tensor<2x3xf32>
// CHECK: %[[T:.+]] = kiln.tanh %[[S]] : tensor<2x3xf32>
// CHECK: return %[[T]]
module attributes {onnx.opset_import = {ai.onnx = 14 : i64}} {
  func.func @activations(%x: tensor<2x3xf32>) -> tensor<*xf32> {
    %r = "onnx.Relu"(%x) : (tensor<2x3xf32>) -> tensor<*xf32> loc("relu")
    %s = "onnx.Sigmoid"(%r) : (tensor<*xf32>) -> tensor<*xf32> loc("sigmoid")
    %t = "onnx.Tanh"(%s) : (tensor<*xf32>) -> tensor<*xf32> loc("tanh")
    return %t : tensor<*xf32>
  }
}

// -----

// CHECK-LABEL: func.func @binary_broadcast
// CHECK: %[[A:.+]] = kiln.add %{{.+}}, %{{.+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: %[[M:.+]] = kiln.mul %[[A]], %{{.+}} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
// CHECK: %[[S:.+]] = kiln.sub %[[M]], %{{.+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: kiln.div %[[S]], %{{.+}} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
module attributes {onnx.opset_import = {ai.onnx = 14 : i64}} {
  func.func @binary_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2x1xf32>) -> tensor<*xf32> {
    %0 = "onnx.Add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<*xf32> loc("add")
    %1 = "onnx.Mul"(%0, %c) : (tensor<*xf32>, tensor<2x1xf32>) -> tensor<*xf32> loc("mul")
    %2 = "onnx.Sub"(%1, %b) : (tensor<*xf32>, tensor<3xf32>) -> tensor<*xf32> loc("sub")
    %3 = "onnx.Div"(%2, %c) : (tensor<*xf32>, tensor<2x1xf32>) -> tensor<*xf32> loc("div")
    return %3 : tensor<*xf32>
  }
}

// -----

// Variadic Sum and Max fold left into binary ops.
// CHECK-LABEL: func.func @variadic
// CHECK-SAME: (%[[A:.+]]: tensor<3xf32>, %[[B:.+]]: tensor<3xf32>, %[[C:.+]]: tensor<3xf32>)
// CHECK: %[[S0:.+]] = kiln.add %[[A]], %[[B]]
// CHECK: %[[S1:.+]] = kiln.add %[[S0]], %[[C]]
// CHECK: %[[M0:.+]] = kiln.max %[[A]], %[[B]]
// CHECK: %[[M1:.+]] = kiln.max %[[M0]], %[[C]]
// CHECK: return %[[S1]], %[[M1]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @variadic(%a: tensor<3xf32>, %b: tensor<3xf32>, %c: tensor<3xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %s = "onnx.Sum"(%a, %b, %c) : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<*xf32> loc("sum")
    %m = "onnx.Max"(%a, %b, %c) : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<*xf32> loc("max")
    return %s, %m : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Clip 6 takes its bounds as attributes.
// CHECK-LABEL: func.func @clip_opset6
// CHECK: kiln.clip %{{.+}} {max = 6.000000e+00 : f32, min = 0.000000e+00 : f32} : tensor<4xf32>
module attributes {onnx.opset_import = {ai.onnx = 6 : i64}} {
  func.func @clip_opset6(%x: tensor<4xf32>) -> tensor<*xf32> {
    %y = "onnx.Clip"(%x) {min = 0.0 : f32, max = 6.0 : f32} : (tensor<4xf32>) -> tensor<*xf32> loc("relu6")
    return %y : tensor<*xf32>
  }
}

// -----

// Clip 11+ takes them as optional constant inputs; attributes are ignored.
// CHECK-LABEL: func.func @clip_opset13
// CHECK: kiln.clip %{{.+}} {max = 6.000000e+00 : f32, min = 0.000000e+00 : f32} : tensor<4xf32>
// An omitted bound is infinite.
// CHECK: kiln.clip %{{.+}} {max = 6.000000e+00 : f32, min = 0xFF800000 : f32} : tensor<4xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @clip_opset13(%x: tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %lo = onnx.Initializer "lo" dense<0.0> : tensor<f32> loc("lo")
    %hi = onnx.Initializer "hi" dense<6.0> : tensor<f32> loc("hi")
    %none = onnx.NoValue loc("clip_max")
    %y = "onnx.Clip"(%x, %lo, %hi) {min = -1.0 : f32, max = 1.0 : f32} : (tensor<4xf32>, tensor<f32>, tensor<f32>) -> tensor<*xf32> loc("relu6")
    %z = "onnx.Clip"(%x, %none, %hi) : (tensor<4xf32>, none, tensor<f32>) -> tensor<*xf32> loc("clip_max")
    return %y, %z : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Identity and inference-mode Dropout pass their input through.
// CHECK-LABEL: func.func @identity_dropout
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK-NOT: kiln.
// CHECK: return %[[X]], %[[X]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @identity_dropout(%x: tensor<2x3xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %i = "onnx.Identity"(%x) : (tensor<2x3xf32>) -> tensor<*xf32> loc("id")
    %d, %mask = "onnx.Dropout"(%x) : (tensor<2x3xf32>) -> (tensor<*xf32>, tensor<*xi1>) loc("drop")
    return %i, %d : tensor<*xf32>, tensor<*xf32>
  }
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

// -----

// Before opset 13 Softmax coerces its input to 2-D at `axis` and normalizes
// over the whole trailing block.
// CHECK-LABEL: func.func @softmax_opset11
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[F:.+]] = kiln.reshape %[[X]] : tensor<2x3x4xf32> to tensor<2x12xf32>
// CHECK: %[[S:.+]] = kiln.softmax %[[F]] {axis = 1 : i64} : tensor<2x12xf32>
// CHECK: %[[R:.+]] = kiln.reshape %[[S]] : tensor<2x12xf32> to tensor<2x3x4xf32>
// CHECK: return %[[R]]
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @softmax_opset11(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
    %y = "onnx.Softmax"(%x) {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("softmax")
    return %y : tensor<*xf32>
  }
}

// -----

// The same node at opset 13 normalizes along the one axis.
// CHECK-LABEL: func.func @softmax_opset13
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK-NOT: kiln.reshape
// CHECK: %[[S:.+]] = kiln.softmax %[[X]] {axis = 1 : i64} : tensor<2x3x4xf32>
// CHECK-NOT: kiln.reshape
// CHECK: return %[[S]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @softmax_opset13(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
    %y = "onnx.Softmax"(%x) {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("softmax")
    return %y : tensor<*xf32>
  }
}

// -----

// The default axis is -1 from opset 13 (1 before), normalized to rank - 1.
// CHECK-LABEL: func.func @softmax_default_axis
// CHECK: kiln.softmax %{{.+}} {axis = 2 : i64} : tensor<2x3x4xf32>
// LogSoftmax is (x - max) - log(sum(exp(x - max))): finite where
// log(softmax(x)) would underflow to -inf.
// CHECK: %[[M:.+]] = kiln.reduce_max %{{.+}} {axes = array<i64: 2>} : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
// CHECK: %[[D:.+]] = kiln.sub %{{.+}}, %[[M]]
// CHECK: %[[E:.+]] = kiln.exp %[[D]]
// CHECK: %[[S:.+]] = kiln.reduce_sum %[[E]] {axes = array<i64: 2>}
// CHECK: %[[L:.+]] = kiln.log %[[S]]
// CHECK: kiln.sub %[[D]], %[[L]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @softmax_default_axis(%x: tensor<2x3x4xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %y = "onnx.Softmax"(%x) : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("softmax")
    %z = "onnx.LogSoftmax"(%x) : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("log_softmax")
    return %y, %z : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// CHECK-LABEL: func.func @batch_norm
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x8x8xf32>, %[[S:.+]]: tensor<4xf32>, %[[B:.+]]: tensor<4xf32>, %[[M:.+]]: tensor<4xf32>, %[[V:.+]]: tensor<4xf32>)
// CHECK: kiln.batch_norm %[[X]], %[[S]], %[[B]], %[[M]], %[[V]] {epsilon = 1.000000e-03 : f32}
// CHECK-SAME: -> tensor<1x4x8x8xf32>
module attributes {onnx.opset_import = {ai.onnx = 15 : i64}} {
  func.func @batch_norm(%x: tensor<1x4x8x8xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<*xf32> {
    %y = "onnx.BatchNormalization"(%x, %s, %b, %m, %v) {epsilon = 1.0e-03 : f32, momentum = 0.9 : f32} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<*xf32> loc("bn")
    return %y : tensor<*xf32>
  }
}

// -----

// training_mode=1: Y from the batch's statistics over (N, H, W); the running
// statistics are input * momentum + batch * (1 - momentum).
// CHECK-LABEL: func.func @batch_norm_training
// CHECK: %[[MEAN:.+]] = kiln.reduce_mean %{{.+}} {axes = array<i64: 0, 2, 3>} : tensor<2x4x3x3xf32> -> tensor<1x4x1x1xf32>
// CHECK: %[[C:.+]] = kiln.sub
// CHECK: %[[SQ:.+]] = kiln.mul %[[C]], %[[C]]
// CHECK: %[[VAR:.+]] = kiln.reduce_mean %[[SQ]] {axes = array<i64: 0, 2, 3>}
// CHECK-NOT: kiln.batch_norm
// CHECK: kiln.reshape %[[MEAN]] : tensor<1x4x1x1xf32> to tensor<4xf32>
// CHECK: kiln.constant dense<8.000000e-01>
// CHECK: kiln.mul
// CHECK: kiln.mul
// CHECK: kiln.add
// CHECK: kiln.reshape %[[VAR]] : tensor<1x4x1x1xf32> to tensor<4xf32>
module attributes {onnx.opset_import = {ai.onnx = 15 : i64}} {
  func.func @batch_norm_training(%x: tensor<2x4x3x3xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %y, %rm, %rv = "onnx.BatchNormalization"(%x, %s, %b, %m, %v) {momentum = 0.8 : f32, training_mode = 1 : i64} : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) loc("bn")
    return %y, %rm, %rv : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// ONNX Runtime's LayerNormalization and SimplifiedLayerNormalization, which
// it registers in the default domain, in an opset-13 model (ONNX defines
// LayerNormalization from 17): converted as ORT's version 1.
// CHECK-LABEL: func.func @ort_layer_norms
// CHECK: kiln.layer_norm %{{.+}}, %{{.+}}, %{{.+}} {axis = 1 : i64, epsilon = 9.99999974E-6 : f32}
// CHECK: kiln.layer_norm %{{.+}}, %{{.+}} {axis = 1 : i64, epsilon = 9.99999997E-7 : f32, rms}
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @ort_layer_norms(%x: tensor<2x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %y = "onnx.LayerNormalization"(%x, %s, %b) : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<*xf32> loc("ln")
    %z = "onnx.SimplifiedLayerNormalization"(%x, %s) {epsilon = 1.0e-06 : f32} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<*xf32> loc("sln")
    return %y, %z : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// com.microsoft's transformer ops become the ops they fuse.
// CHECK-LABEL: func.func @ort_contrib
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x8xf32>, %[[SK:.+]]: tensor<2x3x8xf32>, %[[G:.+]]: tensor<8xf32>, %[[W:.+]]: tensor<3x2x8xf32>)
// CHECK: %[[SUM:.+]] = kiln.add %[[X]], %[[SK]]
// CHECK: %[[LN:.+]] = kiln.layer_norm %[[SUM]], %[[G]], %[[G]] {axis = 2 : i64, epsilon = 9.99999996E-13 : f32}
// CHECK: kiln.erf
// CHECK: %[[WT:.+]] = kiln.transpose %[[W]] {perm = array<i64: 1, 2, 0>} : tensor<3x2x8xf32> -> tensor<2x8x3xf32>
// CHECK: %[[MM:.+]] = kiln.matmul %[[LN]], %[[WT]] : (tensor<2x3x8xf32>, tensor<2x8x3xf32>) -> tensor<2x3x3xf32>
// CHECK: kiln.mul %[[MM]], %{{.+}} : (tensor<2x3x3xf32>, tensor<f32>)
// CHECK: return %[[LN]], %{{.+}}, %[[SUM]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64, com.microsoft = 1 : i64}} {
  func.func @ort_contrib(%x: tensor<2x3x8xf32>, %skip: tensor<2x3x8xf32>, %g: tensor<8xf32>, %w: tensor<3x2x8xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %y, %m, %v, %sum = "onnx.com.microsoft.SkipLayerNormalization"(%x, %skip, %g, %g) : (tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) loc("sln")
    %a = "onnx.com.microsoft.BiasGelu"(%y, %g) : (tensor<*xf32>, tensor<8xf32>) -> tensor<*xf32> loc("bg")
    %p = "onnx.com.microsoft.FusedMatMul"(%y, %w) {alpha = 0.125 : f32, transB = 1 : i64, transBatchB = 1 : i64} : (tensor<*xf32>, tensor<3x2x8xf32>) -> tensor<*xf32> loc("fmm")
    return %y, %a, %p, %sum : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// LayerNormalization 17: the default axis -1 is the last dimension; the
// unused Mean and InvStdDev outputs are fine. B is optional.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.+]]: tensor<1x8x16xf32>, %[[S:.+]]: tensor<16xf32>, %[[B:.+]]: tensor<16xf32>, %[[S2:.+]]: tensor<8x16xf32>)
// CHECK: kiln.layer_norm %[[X]], %[[S]], %[[B]] {axis = 2 : i64, epsilon = 9.99999974E-6 : f32}
// CHECK-SAME: -> tensor<1x8x16xf32>
// CHECK: kiln.layer_norm %[[X]], %[[S2]] {axis = 1 : i64, epsilon = 1.000000e-03 : f32}
// CHECK-SAME: : (tensor<1x8x16xf32>, tensor<8x16xf32>) -> tensor<1x8x16xf32>
module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
  func.func @layer_norm(%x: tensor<1x8x16xf32>, %s: tensor<16xf32>, %b: tensor<16xf32>, %s2: tensor<8x16xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %y, %mean, %inv = "onnx.LayerNormalization"(%x, %s, %b) {axis = -1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<1x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) loc("ln")
    %z = "onnx.LayerNormalization"(%x, %s2) {axis = 1 : i64, epsilon = 1.0e-03 : f32} : (tensor<1x8x16xf32>, tensor<8x16xf32>) -> tensor<*xf32> loc("ln_axis1")
    return %y, %z : tensor<*xf32>, tensor<*xf32>
  }
}

//===----------------------------------------------------------------------===//
// Shapes and layout
//===----------------------------------------------------------------------===//

// -----

// 0 copies the input dimension, -1 takes what is left.
// CHECK-LABEL: func.func @reshape_zero_and_minus_one
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>) -> tensor<2x12xf32>
// CHECK: %[[R:.+]] = kiln.reshape %[[X]] : tensor<2x3x4xf32> to tensor<2x12xf32>
// CHECK: return %[[R]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @reshape_zero_and_minus_one(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
    %shape = onnx.Initializer "shape" dense<[0, -1]> : tensor<2xi64> loc("shape")
    %y = "onnx.Reshape"(%x, %shape) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<*xf32> loc("reshape")
    return %y : tensor<*xf32>
  }
}

// -----

// The shape may come from a Constant node.
// CHECK-LABEL: func.func @reshape_from_constant_node
// CHECK: kiln.reshape %{{.+}} : tensor<2x3x4xf32> to tensor<4x1x6xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @reshape_from_constant_node(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
    %shape = "onnx.Constant"() {value = dense<[4, 1, -1]> : tensor<3xi64>} : () -> tensor<3xi64> loc("shape")
    %y = "onnx.Reshape"(%x, %shape) : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<*xf32> loc("reshape")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK-LABEL: func.func @flatten
// CHECK: kiln.reshape %{{.+}} : tensor<2x3x4xf32> to tensor<2x12xf32>
// CHECK: kiln.reshape %{{.+}} : tensor<2x3x4xf32> to tensor<1x24xf32>
// CHECK: kiln.reshape %{{.+}} : tensor<2x3x4xf32> to tensor<6x4xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @flatten(%x: tensor<2x3x4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %a = "onnx.Flatten"(%x) : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("flatten_default")
    %b = "onnx.Flatten"(%x) {axis = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("flatten_0")
    %c = "onnx.Flatten"(%x) {axis = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("flatten_neg")
    return %a, %b, %c : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Without perm, Transpose reverses the dimensions.
// CHECK-LABEL: func.func @transpose
// CHECK: kiln.transpose %{{.+}} {perm = array<i64: 2, 1, 0>} : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
// CHECK: kiln.transpose %{{.+}} {perm = array<i64: 0, 2, 1>} : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @transpose(%x: tensor<2x3x4xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %a = "onnx.Transpose"(%x) : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("transpose_default")
    %b = "onnx.Transpose"(%x) {perm = [0, 2, 1]} : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("transpose")
    return %a, %b : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// CHECK-LABEL: func.func @concat_negative_axis
// CHECK: kiln.concat %{{.+}}, %{{.+}} {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @concat_negative_axis(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<*xf32> {
    %y = "onnx.Concat"(%a, %b) {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<*xf32> loc("concat")
    return %y : tensor<*xf32>
  }
}

// -----

// Squeeze and Unsqueeze 11 take axes as an attribute.
// CHECK-LABEL: func.func @squeeze_unsqueeze_opset11
// CHECK: kiln.reshape %{{.+}} : tensor<1x3x1x4xf32> to tensor<3x1x4xf32>
// CHECK: kiln.reshape %{{.+}} : tensor<1x3x1x4xf32> to tensor<3x4xf32>
// CHECK: kiln.reshape %{{.+}} : tensor<1x3x1x4xf32> to tensor<1x3x1x4x1x1xf32>
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @squeeze_unsqueeze_opset11(%x: tensor<1x3x1x4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %a = "onnx.Squeeze"(%x) {axes = [0]} : (tensor<1x3x1x4xf32>) -> tensor<*xf32> loc("squeeze_0")
    %b = "onnx.Squeeze"(%x) : (tensor<1x3x1x4xf32>) -> tensor<*xf32> loc("squeeze_all")
    %c = "onnx.Unsqueeze"(%x) {axes = [-1, 4]} : (tensor<1x3x1x4xf32>) -> tensor<*xf32> loc("unsqueeze")
    return %a, %b, %c : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// From opset 13 the axes are a constant input; an attribute is ignored.
// CHECK-LABEL: func.func @squeeze_unsqueeze_opset13
// CHECK: kiln.reshape %{{.+}} : tensor<1x3x1x4xf32> to tensor<1x3x4xf32>
// CHECK: kiln.reshape %{{.+}} : tensor<1x3x1x4xf32> to tensor<1x1x3x1x4xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @squeeze_unsqueeze_opset13(%x: tensor<1x3x1x4xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %axes = onnx.Initializer "axes" dense<[2]> : tensor<1xi64> loc("axes")
    %a = "onnx.Squeeze"(%x, %axes) {axes = [0]} : (tensor<1x3x1x4xf32>, tensor<1xi64>) -> tensor<*xf32> loc("squeeze")
    %u = onnx.Initializer "uaxes" dense<[1]> : tensor<1xi64> loc("uaxes")
    %b = "onnx.Unsqueeze"(%x, %u) : (tensor<1x3x1x4xf32>, tensor<1xi64>) -> tensor<*xf32> loc("unsqueeze")
    return %a, %b : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Shape of a static tensor is a constant; start and end (opset 15) slice it.
// CHECK-LABEL: func.func @shape_is_constant
// CHECK-DAG: %[[ALL:.+]] = kiln.constant dense<[2, 3, 4]> : tensor<3xi64>
// CHECK-DAG: %[[TAIL:.+]] = kiln.constant dense<[3, 4]> : tensor<2xi64>
// CHECK: return %[[ALL]], %[[TAIL]]
module attributes {onnx.opset_import = {ai.onnx = 15 : i64}} {
  func.func @shape_is_constant(%x: tensor<2x3x4xf32>) -> (tensor<*xi64>, tensor<*xi64>) {
    %a = "onnx.Shape"(%x) : (tensor<2x3x4xf32>) -> tensor<*xi64> loc("shape")
    %b = "onnx.Shape"(%x) {start = -2 : i64} : (tensor<2x3x4xf32>) -> tensor<*xi64> loc("shape_tail")
    return %a, %b : tensor<*xi64>, tensor<*xi64>
  }
}

// -----

// Pad 11+ reads pads and the value from constant inputs.
// CHECK-LABEL: func.func @pad_opset13
// CHECK: kiln.pad %{{.+}} {pads = array<i64: 0, 1, 2, 3>, value = 5.000000e-01 : f32} : tensor<2x3xf32> -> tensor<4x7xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @pad_opset13(%x: tensor<2x3xf32>) -> tensor<*xf32> {
    %pads = onnx.Initializer "pads" dense<[0, 1, 2, 3]> : tensor<4xi64> loc("pads")
    %v = onnx.Initializer "value" dense<0.5> : tensor<f32> loc("value")
    %y = "onnx.Pad"(%x, %pads, %v) {mode = "constant"} : (tensor<2x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<*xf32> loc("pad")
    return %y : tensor<*xf32>
  }
}

// -----

// Before opset 11 (the Pad-2 entry) pads and value are attributes.
// CHECK-LABEL: func.func @pad_opset10
// CHECK: kiln.pad %{{.+}} {pads = array<i64: 1, 0, 1, 0>, value = -1.000000e+00 : f32} : tensor<2x3xf32> -> tensor<4x3xf32>
module attributes {onnx.opset_import = {ai.onnx = 10 : i64}} {
  func.func @pad_opset10(%x: tensor<2x3xf32>) -> tensor<*xf32> {
    %y = "onnx.Pad"(%x) {pads = [1, 0, 1, 0], value = -1.0 : f32} : (tensor<2x3xf32>) -> tensor<*xf32> loc("pad")
    return %y : tensor<*xf32>
  }
}

// -----

// CHECK-LABEL: func.func @constants
// CHECK-DAG: kiln.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG: kiln.constant dense<2.500000e+00> : tensor<f32>
// CHECK-DAG: kiln.constant dense<[3, 4]> : tensor<2xi64>
// CHECK-DAG: kiln.constant dense<7> : tensor<i64>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @constants() -> (tensor<*xf32>, tensor<*xf32>, tensor<*xi64>, tensor<*xi64>) {
    %a = "onnx.Constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<*xf32> loc("c_tensor")
    %b = "onnx.Constant"() {value_float = 2.5 : f32} : () -> tensor<*xf32> loc("c_float")
    %c = "onnx.Constant"() {value_ints = [3, 4]} : () -> tensor<*xi64> loc("c_ints")
    %d = "onnx.Constant"() {value_int = 7 : i64} : () -> tensor<*xi64> loc("c_int")
    return %a, %b, %c, %d : tensor<*xf32>, tensor<*xf32>, tensor<*xi64>, tensor<*xi64>
  }
}

// -----

// Gather keeps negative indices (kiln.gather wraps them) and normalizes the
// axis; a scalar index drops the axis.
// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[X:.+]]: tensor<4x3xf32>, %[[I:.+]]: tensor<2x2xi64>)
// CHECK: kiln.gather %[[X]], %[[I]] {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2x2xi64>) -> tensor<2x2x3xf32>
// CHECK: %[[J:.+]] = kiln.constant dense<-1> : tensor<i32>
// CHECK: kiln.gather %[[X]], %[[J]] {axis = 1 : i64} : (tensor<4x3xf32>, tensor<i32>) -> tensor<4xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @gather(%x: tensor<4x3xf32>, %i: tensor<2x2xi64>) -> (tensor<*xf32>, tensor<*xf32>) {
    %a = "onnx.Gather"(%x, %i) : (tensor<4x3xf32>, tensor<2x2xi64>) -> tensor<*xf32> loc("gather")
    %j = onnx.Initializer "j" dense<-1> : tensor<i32> loc("j")
    %b = "onnx.Gather"(%x, %j) {axis = -1 : i64} : (tensor<4x3xf32>, tensor<i32>) -> tensor<*xf32> loc("gather_col")
    return %a, %b : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Shape arithmetic folds while the graph is converted: Shape -> Gather ->
// Unsqueeze -> Concat becomes one constant, and Reshape gets it as its
// target shape. (The head size 64 is computed as dim / 4.)
// CHECK-LABEL: func.func @shape_chain_folds
// CHECK-SAME: (%[[X:.+]]: tensor<2x8x256xf32>)
// CHECK-NOT: kiln.gather
// CHECK-NOT: kiln.concat
// CHECK-NOT: kiln.div
// CHECK: %[[R:.+]] = kiln.reshape %[[X]] : tensor<2x8x256xf32> to tensor<2x8x4x64xf32>
// CHECK: return %[[R]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @shape_chain_folds(%x: tensor<2x8x256xf32>) -> tensor<*xf32> {
    %shape = "onnx.Shape"(%x) : (tensor<2x8x256xf32>) -> tensor<*xi64> loc("shape")
    %i0 = onnx.Initializer "i0" dense<0> : tensor<i64> loc("i0")
    %i1 = onnx.Initializer "i1" dense<1> : tensor<i64> loc("i1")
    %i2 = onnx.Initializer "i2" dense<2> : tensor<i64> loc("i2")
    %b = "onnx.Gather"(%shape, %i0) {axis = 0 : i64} : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64> loc("g0")
    %s = "onnx.Gather"(%shape, %i1) {axis = 0 : i64} : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64> loc("g1")
    %d = "onnx.Gather"(%shape, %i2) {axis = 0 : i64} : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64> loc("g2")
    %four = onnx.Initializer "four" dense<4> : tensor<i64> loc("four")
    %hd = "onnx.Div"(%d, %four) : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64> loc("head_dim")
    %ax = onnx.Initializer "ax" dense<[0]> : tensor<1xi64> loc("ax")
    %ub = "onnx.Unsqueeze"(%b, %ax) : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64> loc("u0")
    %us = "onnx.Unsqueeze"(%s, %ax) : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64> loc("u1")
    %uh = "onnx.Unsqueeze"(%hd, %ax) : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64> loc("u2")
    %heads = onnx.Initializer "heads" dense<[4]> : tensor<1xi64> loc("heads")
    %target = "onnx.Concat"(%ub, %us, %heads, %uh) {axis = 0 : i64} : (tensor<*xi64>, tensor<*xi64>, tensor<1xi64>, tensor<*xi64>) -> tensor<*xi64> loc("concat")
    %y = "onnx.Reshape"(%x, %target) : (tensor<2x8x256xf32>, tensor<*xi64>) -> tensor<*xf32> loc("reshape")
    return %y : tensor<*xf32>
  }
}

// -----

// Integer arithmetic on run-time tensors stays (masks, positions).
// CHECK-LABEL: func.func @integer_add
// CHECK: kiln.add %{{.+}}, %{{.+}} : (tensor<1x8xi64>, tensor<i64>) -> tensor<1x8xi64>
module attributes {onnx.opset_import = {ai.onnx = 14 : i64}} {
  func.func @integer_add(%x: tensor<1x8xi64>) -> tensor<*xi64> {
    %one = onnx.Initializer "one" dense<1> : tensor<i64> loc("one")
    %y = "onnx.Add"(%x, %one) : (tensor<1x8xi64>, tensor<i64>) -> tensor<*xi64> loc("add")
    return %y : tensor<*xi64>
  }
}

// -----

// Slice 13: negative starts count from the end, INT64_MAX ends clamp to the
// dimension, axes may be negative, steps stride.
// CHECK-LABEL: func.func @slice_opset13
// CHECK: kiln.slice %{{.+}} {offsets = array<i64: 0, 2, 1>, sizes = array<i64: 2, 2, 3>, strides = array<i64: 1, 1, 2>} : tensor<2x4x6xf32> -> tensor<2x2x3xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @slice_opset13(%x: tensor<2x4x6xf32>) -> tensor<*xf32> {
    %starts = onnx.Initializer "starts" dense<[-2, 1]> : tensor<2xi64> loc("starts")
    %ends = onnx.Initializer "ends" dense<[9223372036854775807, 9223372036854775807]> : tensor<2xi64> loc("ends")
    %axes = onnx.Initializer "axes" dense<[1, -1]> : tensor<2xi64> loc("axes")
    %steps = onnx.Initializer "steps" dense<[1, 2]> : tensor<2xi64> loc("steps")
    %y = "onnx.Slice"(%x, %starts, %ends, %axes, %steps) : (tensor<2x4x6xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<*xf32> loc("slice")
    return %y : tensor<*xf32>
  }
}

// -----

// Without axes and steps, starts and ends cover the leading dimensions; an
// end before the start gives an empty slice, a start past the end clamps.
// CHECK-LABEL: func.func @slice_defaults
// CHECK: kiln.slice %{{.+}} {offsets = array<i64: 1, 4>, sizes = array<i64: 0, 0>, strides = array<i64: 1, 1>} : tensor<4x4xf32> -> tensor<0x0xf32>
module attributes {onnx.opset_import = {ai.onnx = 10 : i64}} {
  func.func @slice_defaults(%x: tensor<4x4xf32>) -> tensor<*xf32> {
    %starts = onnx.Initializer "starts" dense<[1, 10]> : tensor<2xi32> loc("starts")
    %ends = onnx.Initializer "ends" dense<[-4, 20]> : tensor<2xi32> loc("ends")
    %y = "onnx.Slice"(%x, %starts, %ends) : (tensor<4x4xf32>, tensor<2xi32>, tensor<2xi32>) -> tensor<*xf32> loc("slice")
    return %y : tensor<*xf32>
  }
}

// -----

// Slice 1 takes its bounds as attributes.
// CHECK-LABEL: func.func @slice_opset1
// CHECK: kiln.slice %{{.+}} {offsets = array<i64: 0, 1>, sizes = array<i64: 4, 2>, strides = array<i64: 1, 1>} : tensor<4x4xf32> -> tensor<4x2xf32>
module attributes {onnx.opset_import = {ai.onnx = 9 : i64}} {
  func.func @slice_opset1(%x: tensor<4x4xf32>) -> tensor<*xf32> {
    %y = "onnx.Slice"(%x) {starts = [1], ends = [-1], axes = [1]} : (tensor<4x4xf32>) -> tensor<*xf32> loc("slice")
    return %y : tensor<*xf32>
  }
}

// -----

// The transformer pattern: bounds computed from the input's shape fold to
// constants before the Slice is converted.
// CHECK-LABEL: func.func @slice_computed_bounds
// CHECK-SAME: (%[[X:.+]]: tensor<8x768xf32>)
// CHECK: kiln.slice %[[X]] {offsets = array<i64: 0, 256>, sizes = array<i64: 8, 256>, strides = array<i64: 1, 1>}
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @slice_computed_bounds(%x: tensor<8x768xf32>) -> tensor<*xf32> {
    %shape = "onnx.Shape"(%x) : (tensor<8x768xf32>) -> tensor<*xi64> loc("shape")
    %last = "onnx.Constant"() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<*xi64> loc("last")
    %dim = "onnx.Gather"(%shape, %last) {axis = 0 : i64} : (tensor<*xi64>, tensor<*xi64>) -> tensor<*xi64> loc("dim")
    %two = "onnx.Constant"() {value = dense<[2]> : tensor<1xi64>} : () -> tensor<*xi64> loc("two")
    %three = "onnx.Constant"() {value = dense<[3]> : tensor<1xi64>} : () -> tensor<*xi64> loc("three")
    %one = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<*xi64> loc("one")
    %sum = "onnx.Add"(%dim, %two) : (tensor<*xi64>, tensor<*xi64>) -> tensor<*xi64> loc("add")
    %part = "onnx.Div"(%sum, %three) : (tensor<*xi64>, tensor<*xi64>) -> tensor<*xi64> loc("div")
    %start = "onnx.Mul"(%part, %one) : (tensor<*xi64>, tensor<*xi64>) -> tensor<*xi64> loc("mul1")
    %end = "onnx.Mul"(%part, %two) : (tensor<*xi64>, tensor<*xi64>) -> tensor<*xi64> loc("mul2")
    %y = "onnx.Slice"(%x, %start, %end, %last) : (tensor<8x768xf32>, tensor<*xi64>, tensor<*xi64>, tensor<*xi64>) -> tensor<*xf32> loc("slice")
    return %y : tensor<*xf32>
  }
}

// -----

// Split 13 with a split input: one slice per output along the axis.
// CHECK-LABEL: func.func @split_opset13
// CHECK-SAME: (%[[X:.+]]: tensor<2x6xf32>)
// CHECK: %[[A:.+]] = kiln.slice %[[X]] {offsets = array<i64: 0, 0>, sizes = array<i64: 2, 2>, strides = array<i64: 1, 1>} : tensor<2x6xf32> -> tensor<2x2xf32>
// CHECK: %[[B:.+]] = kiln.slice %[[X]] {offsets = array<i64: 0, 2>, sizes = array<i64: 2, 4>, strides = array<i64: 1, 1>} : tensor<2x6xf32> -> tensor<2x4xf32>
// CHECK: return %[[A]], %[[B]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @split_opset13(%x: tensor<2x6xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %split = onnx.Initializer "split" dense<[2, 4]> : tensor<2xi64> loc("split")
    %a, %b = "onnx.Split"(%x, %split) {axis = -1 : i64} : (tensor<2x6xf32>, tensor<2xi64>) -> (tensor<*xf32>, tensor<*xf32>) loc("split")
    return %a, %b : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Split 11 reads split from an attribute; without it the outputs are equal.
// An unused output gets no slice.
// CHECK-LABEL: func.func @split_opset11
// CHECK: kiln.slice %{{.+}} {offsets = array<i64: 0, 0>, sizes = array<i64: 1, 6>, strides = array<i64: 1, 1>}
// CHECK: kiln.slice %{{.+}} {offsets = array<i64: 0, 0>, sizes = array<i64: 2, 3>, strides = array<i64: 1, 1>}
// CHECK-NOT: kiln.slice
// CHECK: return
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @split_opset11(%x: tensor<2x6xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %a, %b = "onnx.Split"(%x) {split = [1, 1]} : (tensor<2x6xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("split_rows")
    %c, %d = "onnx.Split"(%x) {axis = 1 : i64} : (tensor<2x6xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("split_cols")
    return %a, %c : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Split 18 with num_outputs: chunks of ceil(7 / 3) = 3, the last smaller.
// CHECK-LABEL: func.func @split_opset18
// CHECK: kiln.slice %{{.+}} {offsets = array<i64: 0>, sizes = array<i64: 3>, strides = array<i64: 1>}
// CHECK: kiln.slice %{{.+}} {offsets = array<i64: 3>, sizes = array<i64: 3>, strides = array<i64: 1>}
// CHECK: kiln.slice %{{.+}} {offsets = array<i64: 6>, sizes = array<i64: 1>, strides = array<i64: 1>} : tensor<7xf32> -> tensor<1xf32>
module attributes {onnx.opset_import = {ai.onnx = 18 : i64}} {
  func.func @split_opset18(%x: tensor<7xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %a, %b, %c = "onnx.Split"(%x) {num_outputs = 3 : i64} : (tensor<7xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) loc("split")
    return %a, %b, %c : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Cast's `to` is an ONNX data type: 1 is FLOAT, 9 BOOL, 6 INT32.
// CHECK-LABEL: func.func @cast
// CHECK: %[[F:.+]] = kiln.cast %{{.+}} to f32 : tensor<1x8xi64> -> tensor<1x8xf32>
// CHECK: %[[B:.+]] = kiln.cast %[[F]] to i1 : tensor<1x8xf32> -> tensor<1x8xi1>
// CHECK: kiln.cast %[[B]] to i32 : tensor<1x8xi1> -> tensor<1x8xi32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @cast(%x: tensor<1x8xi64>) -> tensor<*xi32> {
    %f = "onnx.Cast"(%x) {to = 1 : i64} : (tensor<1x8xi64>) -> tensor<*xf32> loc("to_float")
    %b = "onnx.Cast"(%f) {to = 9 : i64} : (tensor<*xf32>) -> tensor<*xi1> loc("to_bool")
    %i = "onnx.Cast"(%b) {to = 6 : i64} : (tensor<*xi1>) -> tensor<*xi32> loc("to_int")
    return %i : tensor<*xi32>
  }
}

// -----

// A cast of a constant is a constant; a cast to the same type is no op.
// CHECK-LABEL: func.func @cast_folds
// CHECK-SAME: (%[[X:.+]]: tensor<2xf32>)
// CHECK: %[[C:.+]] = kiln.constant dense<[1.000000e+00, -2.000000e+00]> : tensor<2xf32>
// CHECK-NOT: kiln.cast
// CHECK: return %[[C]], %[[X]]
module attributes {onnx.opset_import = {ai.onnx = 9 : i64}} {
  func.func @cast_folds(%x: tensor<2xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %c = onnx.Initializer "c" dense<[1, -2]> : tensor<2xi64> loc("c")
    %a = "onnx.Cast"(%c) {to = 1 : i64} : (tensor<2xi64>) -> tensor<*xf32> loc("cast_const")
    %b = "onnx.Cast"(%x) {to = 1 : i64} : (tensor<2xf32>) -> tensor<*xf32> loc("cast_same")
    return %a, %b : tensor<*xf32>, tensor<*xf32>
  }
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @reduce_mean
// CHECK: kiln.reduce_mean %{{.+}} {axes = array<i64: 1, 2>, keepdims = false} : tensor<2x3x4xf32> -> tensor<2xf32>
// keepdims defaults to 1, and no axes means every axis.
// CHECK: kiln.reduce_mean %{{.+}} {axes = array<i64: 0, 1, 2>} : tensor<2x3x4xf32> -> tensor<1x1x1xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @reduce_mean(%x: tensor<2x3x4xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %a = "onnx.ReduceMean"(%x) {axes = [-1, 1], keepdims = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("mean")
    %b = "onnx.ReduceMean"(%x) : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("mean_all")
    return %a, %b : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// ReduceSum 13 takes axes as an optional input.
// CHECK-LABEL: func.func @reduce_sum_opset13
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[S:.+]] = kiln.reduce_sum %[[X]] {axes = array<i64: 2>} : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
// Without axes and with noop_with_empty_axes the node is the identity.
// CHECK-NOT: kiln.reduce_sum
// CHECK: return %[[S]], %[[X]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @reduce_sum_opset13(%x: tensor<2x3x4xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %axes = onnx.Initializer "axes" dense<[-1]> : tensor<1xi64> loc("axes")
    %a = "onnx.ReduceSum"(%x, %axes) : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<*xf32> loc("sum")
    %b = "onnx.ReduceSum"(%x) {noop_with_empty_axes = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("sum_noop")
    return %a, %b : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// The same node at opset 11 reads the axes attribute.
// CHECK-LABEL: func.func @reduce_sum_opset11
// CHECK: kiln.reduce_sum %{{.+}} {axes = array<i64: 0>, keepdims = false} : tensor<2x3x4xf32> -> tensor<3x4xf32>
module attributes {onnx.opset_import = {ai.onnx = 11 : i64}} {
  func.func @reduce_sum_opset11(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
    %a = "onnx.ReduceSum"(%x) {axes = [0], keepdims = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("sum")
    return %a : tensor<*xf32>
  }
}

//===----------------------------------------------------------------------===//
// A small network
//===----------------------------------------------------------------------===//

// -----

// Conv -> Relu -> MaxPool -> Flatten -> Gemm, as a PyTorch export at opset 13.
// CHECK-LABEL: func.func @small_cnn
// CHECK-SAME: (%[[X:.+]]: tensor<1x1x8x8xf32>) -> tensor<1x10xf32>
// CHECK: %[[C:.+]] = kiln.conv2d %[[X]], {{.+}} -> tensor<1x4x8x8xf32>
// CHECK: %[[R:.+]] = kiln.relu %[[C]] : tensor<1x4x8x8xf32>
// CHECK: %[[P:.+]] = kiln.max_pool2d %[[R]] {{.+}} -> tensor<1x4x4x4xf32>
// CHECK: %[[F:.+]] = kiln.reshape %[[P]] : tensor<1x4x4x4xf32> to tensor<1x64xf32>
// CHECK: %[[G:.+]] = kiln.gemm %[[F]], {{.+}} {trans_b = true} : (tensor<1x64xf32>, tensor<10x64xf32>, tensor<10xf32>) -> tensor<1x10xf32>
// CHECK: return %[[G]] : tensor<1x10xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @small_cnn(%x: tensor<1x1x8x8xf32>) -> tensor<1x10xf32> {
    %w1 = onnx.Initializer "conv.weight" dense<0.1> : tensor<4x1x3x3xf32> loc("conv.weight")
    %b1 = onnx.Initializer "conv.bias" dense<0.0> : tensor<4xf32> loc("conv.bias")
    %w2 = onnx.Initializer "fc.weight" dense<0.01> : tensor<10x64xf32> loc("fc.weight")
    %b2 = onnx.Initializer "fc.bias" dense<0.0> : tensor<10xf32> loc("fc.bias")
    %0 = "onnx.Conv"(%x, %w1, %b1) {dilations = [1, 1], group = 1 : i64, kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [1, 1]} : (tensor<1x1x8x8xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32> loc("/conv/Conv")
    %1 = "onnx.Relu"(%0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("/relu/Relu")
    %2 = "onnx.MaxPool"(%1) {ceil_mode = 0 : i64, kernel_shape = [2, 2], pads = [0, 0, 0, 0], strides = [2, 2]} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> loc("/pool/MaxPool")
    %3 = "onnx.Flatten"(%2) {axis = 1 : i64} : (tensor<1x4x4x4xf32>) -> tensor<1x64xf32> loc("/Flatten")
    %4 = "onnx.Gemm"(%3, %w2, %b2) {alpha = 1.0 : f32, beta = 1.0 : f32, transB = 1 : i64} : (tensor<1x64xf32>, tensor<10x64xf32>, tensor<10xf32>) -> tensor<1x10xf32> loc("/fc/Gemm")
    return %4 : tensor<1x10xf32>
  }
}

// -----

// Activations with parameters take ONNX's defaults when the attribute is
// absent (LeakyRelu alpha 0.01, Selu alpha/gamma, HardSigmoid 0.2/0.5);
// Selu's gamma becomes beta.
// CHECK-LABEL: func.func @param_activations
// CHECK: %[[A:.+]] = kiln.leaky_relu %{{.+}} {alpha = 0.00999999977 : f32} : tensor<4xf32>
// CHECK: %[[B:.+]] = kiln.elu %[[A]] {alpha = 5.000000e-01 : f32} : tensor<4xf32>
// CHECK: %[[C:.+]] = kiln.selu %[[B]] {alpha = 1.67326319 : f32, beta = 1.05070102 : f32} : tensor<4xf32>
// CHECK: %[[D:.+]] = kiln.hard_sigmoid %[[C]] {alpha = 2.000000e-01 : f32, beta = 5.000000e-01 : f32} : tensor<4xf32>
// CHECK: %[[E:.+]] = kiln.thresholded_relu %[[D]] {alpha = 2.000000e+00 : f32} : tensor<4xf32>
// CHECK: %[[F:.+]] = kiln.round %[[E]] : tensor<4xf32>
// CHECK: %[[G:.+]] = kiln.hard_swish %[[F]] : tensor<4xf32>
// CHECK: return %[[G]]
module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
  func.func @param_activations(%x: tensor<4xf32>) -> tensor<*xf32> {
    %a = "onnx.LeakyRelu"(%x) : (tensor<4xf32>) -> tensor<*xf32> loc("a")
    %b = "onnx.Elu"(%a) {alpha = 0.5 : f32} : (tensor<*xf32>) -> tensor<*xf32> loc("b")
    %c = "onnx.Selu"(%b) : (tensor<*xf32>) -> tensor<*xf32> loc("c")
    %d = "onnx.HardSigmoid"(%c) : (tensor<*xf32>) -> tensor<*xf32> loc("d")
    %e = "onnx.ThresholdedRelu"(%d) {alpha = 2.0 : f32} : (tensor<*xf32>) -> tensor<*xf32> loc("e")
    %f = "onnx.Round"(%e) : (tensor<*xf32>) -> tensor<*xf32> loc("f")
    %g = "onnx.HardSwish"(%f) : (tensor<*xf32>) -> tensor<*xf32> loc("g")
    return %g : tensor<*xf32>
  }
}

// -----

// ReduceL2 is sqrt(sum(x * x)); ReduceLogSumExp subtracts the maximum before
// exp and adds it back after log; ReduceProd is its own op. Negative axes
// normalize, and no axes reduce everything.
// CHECK-LABEL: func.func @composite_reductions
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<1x1xf32>)
// CHECK: %[[SQ:.+]] = kiln.mul %[[X]], %[[X]]
// CHECK: %[[S:.+]] = kiln.reduce_sum %[[SQ]] {axes = array<i64: 1>, keepdims = false}
// CHECK: %[[L2:.+]] = kiln.sqrt %[[S]] : tensor<2xf32>
// CHECK: %[[M:.+]] = kiln.reduce_max %[[X]] {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2x1xf32>
// CHECK: %[[D:.+]] = kiln.sub %[[X]], %[[M]]
// CHECK: %[[E:.+]] = kiln.exp %[[D]]
// CHECK: %[[ES:.+]] = kiln.reduce_sum %[[E]] {axes = array<i64: 1>, keepdims = false}
// CHECK: %[[LOG:.+]] = kiln.log %[[ES]]
// CHECK: %[[MR:.+]] = kiln.reshape %[[M]] : tensor<2x1xf32> to tensor<2xf32>
// CHECK: %[[LSE:.+]] = kiln.add %[[LOG]], %[[MR]]
// CHECK: %[[P:.+]] = kiln.reduce_prod %[[X]] {axes = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<1x1xf32>
// CHECK: return %[[L2]], %[[LSE]], %[[P]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @composite_reductions(%x: tensor<2x3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %a = "onnx.ReduceL2"(%x) {axes = [1], keepdims = 0 : i64} : (tensor<2x3xf32>) -> tensor<*xf32> loc("l2")
    %b = "onnx.ReduceLogSumExp"(%x) {axes = [-1], keepdims = 0 : i64} : (tensor<2x3xf32>) -> tensor<*xf32> loc("lse")
    %c = "onnx.ReduceProd"(%x) : (tensor<2x3xf32>) -> tensor<*xf32> loc("prod")
    return %a, %b, %c : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// CHECK-LABEL: func.func @prelu_mod
// CHECK: kiln.prelu %{{.+}}, %{{.+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: kiln.mod %{{.+}}, %{{.+}} {fmod = true} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: kiln.mod %{{.+}}, %{{.+}} : (tensor<4xi64>, tensor<1xi64>) -> tensor<4xi64>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @prelu_mod(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %i: tensor<4xi64>, %j: tensor<1xi64>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xi64>) {
    %p = "onnx.PRelu"(%x, %s) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<*xf32> loc("p")
    %m = "onnx.Mod"(%p, %p) {fmod = 1 : i64} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32> loc("m")
    %k = "onnx.Mod"(%i, %j) : (tensor<4xi64>, tensor<1xi64>) -> tensor<*xi64> loc("k")
    return %p, %m, %k : tensor<*xf32>, tensor<*xf32>, tensor<*xi64>
  }
}

// -----

// ArgMax's negative axis normalizes; keepdims defaults to 1.
// CHECK-LABEL: func.func @arg_max
// CHECK: kiln.arg_max %{{.+}} {axis = 1 : i64, select_last_index = true} : tensor<2x5xf32> -> tensor<2x1xi64>
// CHECK: kiln.arg_min %{{.+}} {axis = 0 : i64, keepdims = false} : tensor<2x5xf32> -> tensor<5xi64>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @arg_max(%x: tensor<2x5xf32>) -> (tensor<*xi64>, tensor<*xi64>) {
    %a = "onnx.ArgMax"(%x) {axis = -1 : i64, select_last_index = 1 : i64} : (tensor<2x5xf32>) -> tensor<*xi64> loc("a")
    %b = "onnx.ArgMin"(%x) {keepdims = 0 : i64} : (tensor<2x5xf32>) -> tensor<*xi64> loc("b")
    return %a, %b : tensor<*xi64>, tensor<*xi64>
  }
}

// -----

// Size of a static input is a constant int64 scalar.
// CHECK-LABEL: func.func @size
// CHECK: %[[C:.+]] = kiln.constant dense<60> : tensor<i64>
// CHECK: return %[[C]] : tensor<i64>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @size(%x: tensor<3x4x5xf32>) -> tensor<*xi64> {
    %n = "onnx.Size"(%x) : (tensor<3x4x5xf32>) -> tensor<*xi64> loc("n")
    return %n : tensor<*xi64>
  }
}

// -----

// CHECK-LABEL: func.func @trig_celu
// CHECK: %[[S:.+]] = kiln.sinh %{{.+}} : tensor<4xf32>
// CHECK: %[[A:.+]] = kiln.atan %[[S]] : tensor<4xf32>
// CHECK: kiln.celu %[[A]] {alpha = 1.000000e+00 : f32} : tensor<4xf32>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @trig_celu(%x: tensor<4xf32>) -> tensor<*xf32> {
    %s = "onnx.Sinh"(%x) : (tensor<4xf32>) -> tensor<*xf32> loc("s")
    %a = "onnx.Atan"(%s) : (tensor<*xf32>) -> tensor<*xf32> loc("a")
    %c = "onnx.Celu"(%a) : (tensor<*xf32>) -> tensor<*xf32> loc("c")
    return %c : tensor<*xf32>
  }
}
