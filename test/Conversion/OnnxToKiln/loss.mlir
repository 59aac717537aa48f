// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln | FileCheck %s

// NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss and GatherElements,
// the LayerNormalization statistics, and Neg/Abs/Sign on integers.

// The log-probability of each target class is one gather_elements along the
// class axis; "none" returns its negation, "mean" without weights or
// ignore_index is a plain mean, "sum" with weights multiplies by the gathered
// weight first.
// CHECK-LABEL: func.func @nll
// CHECK-SAME: (%[[X:.+]]: tensor<3x5x2xf32>, %[[T:.+]]: tensor<3x2xi64>, %[[W:.+]]: tensor<5xf32>)
// CHECK-SAME: -> (tensor<3x2xf32>, tensor<f32>, tensor<f32>)
// CHECK: %[[I:.+]] = kiln.reshape %[[T]] : tensor<3x2xi64> to tensor<3x1x2xi64>
// CHECK: %[[G:.+]] = kiln.gather_elements %[[X]], %[[I]] {axis = 1 : i64} : (tensor<3x5x2xf32>, tensor<3x1x2xi64>) -> tensor<3x1x2xf32>
// CHECK: %[[P:.+]] = kiln.reshape %[[G]] : tensor<3x1x2xf32> to tensor<3x2xf32>
// CHECK: %[[NONE:.+]] = kiln.neg %[[P]] : tensor<3x2xf32>
// CHECK: %[[L:.+]] = kiln.neg
// CHECK: %[[MEAN:.+]] = kiln.reduce_mean %[[L]] {axes = array<i64: 0, 1>, keepdims = false} : tensor<3x2xf32> -> tensor<f32>
// CHECK: %[[L2:.+]] = kiln.neg
// CHECK: %[[WT:.+]] = kiln.gather %[[W]], %[[T]] {axis = 0 : i64} : (tensor<5xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
// CHECK: %[[LW:.+]] = kiln.mul %[[L2]], %[[WT]]
// CHECK: %[[SUM:.+]] = kiln.reduce_sum %[[LW]] {axes = array<i64: 0, 1>, keepdims = false} : tensor<3x2xf32> -> tensor<f32>
// CHECK: return %[[NONE]], %[[MEAN]], %[[SUM]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @nll(%x: tensor<3x5x2xf32>, %t: tensor<3x2xi64>, %w: tensor<5xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %a = "onnx.NegativeLogLikelihoodLoss"(%x, %t) {reduction = "none"} : (tensor<3x5x2xf32>, tensor<3x2xi64>) -> tensor<*xf32> loc("nll_none")
    %b = "onnx.NegativeLogLikelihoodLoss"(%x, %t) : (tensor<3x5x2xf32>, tensor<3x2xi64>) -> tensor<*xf32> loc("nll_mean")
    %c = "onnx.NegativeLogLikelihoodLoss"(%x, %t, %w) {reduction = "sum"} : (tensor<3x5x2xf32>, tensor<3x2xi64>, tensor<5xf32>) -> tensor<*xf32> loc("nll_sum_w")
    return %a, %b, %c : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// ignore_index (here negative, outside [0, C)): ignored targets give 0 and
// weigh 0, and "mean" divides by the sum of the remaining weights.
// CHECK-LABEL: func.func @nll_weight_ignore_index
// CHECK-SAME: (%[[X:.+]]: tensor<3x5x2xf32>, %[[T:.+]]: tensor<3x2xi64>, %[[W:.+]]: tensor<5xf32>)
// CHECK: %[[L:.+]] = kiln.neg
// CHECK: %[[WT:.+]] = kiln.gather %[[W]], %[[T]]
// CHECK: %[[LW:.+]] = kiln.mul %[[L]], %[[WT]]
// CHECK: %[[II:.+]] = kiln.constant dense<-1> : tensor<i64>
// CHECK: %[[IGN:.+]] = kiln.equal %[[T]], %[[II]] : (tensor<3x2xi64>, tensor<i64>) -> tensor<3x2xi1>
// CHECK: %[[ZERO:.+]] = kiln.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[LM:.+]] = kiln.where %[[IGN]], %[[ZERO]], %[[LW]]
// CHECK: %[[WM:.+]] = kiln.where %[[IGN]], %[[ZERO]], %[[WT]]
// CHECK: %[[NUM:.+]] = kiln.reduce_sum %[[LM]]
// CHECK: %[[DEN:.+]] = kiln.reduce_sum %[[WM]]
// CHECK: %[[R:.+]] = kiln.div %[[NUM]], %[[DEN]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK: return %[[R]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @nll_weight_ignore_index(%x: tensor<3x5x2xf32>, %t: tensor<3x2xi64>, %w: tensor<5xf32>) -> tensor<*xf32> {
    %d = "onnx.NegativeLogLikelihoodLoss"(%x, %t, %w) {ignore_index = -1 : i64} : (tensor<3x5x2xf32>, tensor<3x2xi64>, tensor<5xf32>) -> tensor<*xf32> loc("nll_mean_w_ii")
    return %d : tensor<*xf32>
  }
}

// -----

// SoftmaxCrossEntropyLoss is LogSoftmax over axis 1 (also the second output),
// computed as (x - max) - log(sum(exp(x - max))), and then the NLL; without
// weights, ignore_index counts the other targets.
// CHECK-LABEL: func.func @sce_log_prob
// CHECK-SAME: (%[[X:.+]]: tensor<3x5xf32>, %[[T:.+]]: tensor<3xi32>) -> (tensor<f32>, tensor<3x5xf32>)
// CHECK: %[[M:.+]] = kiln.reduce_max %[[X]] {axes = array<i64: 1>} : tensor<3x5xf32> -> tensor<3x1xf32>
// CHECK: %[[SH:.+]] = kiln.sub %[[X]], %[[M]]
// CHECK: %[[E:.+]] = kiln.exp %[[SH]] : tensor<3x5xf32>
// CHECK: %[[S:.+]] = kiln.reduce_sum %[[E]] {axes = array<i64: 1>} : tensor<3x5xf32> -> tensor<3x1xf32>
// CHECK: %[[LS:.+]] = kiln.log %[[S]] : tensor<3x1xf32>
// CHECK: %[[LP:.+]] = kiln.sub %[[SH]], %[[LS]] : (tensor<3x5xf32>, tensor<3x1xf32>) -> tensor<3x5xf32>
// CHECK: %[[I:.+]] = kiln.reshape %[[T]] : tensor<3xi32> to tensor<3x1xi32>
// CHECK: kiln.gather_elements %[[LP]], %[[I]] {axis = 1 : i64}
// CHECK: %[[II:.+]] = kiln.constant dense<2> : tensor<i32>
// CHECK: %[[IGN:.+]] = kiln.equal %[[T]], %[[II]]
// CHECK: %[[ZERO:.+]] = kiln.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[ONE:.+]] = kiln.constant dense<1.000000e+00> : tensor<f32>
// CHECK: kiln.where %[[IGN]], %[[ZERO]], %[[ONE]] : (tensor<3xi1>, tensor<f32>, tensor<f32>) -> tensor<3xf32>
// CHECK: %[[R:.+]] = kiln.div
// CHECK: return %[[R]], %[[LP]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @sce_log_prob(%x: tensor<3x5xf32>, %t: tensor<3xi32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %l, %p = "onnx.SoftmaxCrossEntropyLoss"(%x, %t) {ignore_index = 2 : i64} : (tensor<3x5xf32>, tensor<3xi32>) -> (tensor<*xf32>, tensor<*xf32>) loc("sce")
    return %l, %p : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// An ignore_index that an int32 target cannot hold never matches: no mask.
// CHECK-LABEL: func.func @sce_unrepresentable_ignore_index
// CHECK-NOT: kiln.equal
// CHECK-NOT: kiln.where
// CHECK: kiln.reduce_sum
// CHECK: return
module attributes {onnx.opset_import = {ai.onnx = 12 : i64}} {
  func.func @sce_unrepresentable_ignore_index(%x: tensor<3x5xf32>, %t: tensor<3xi32>) -> tensor<*xf32> {
    %l = "onnx.SoftmaxCrossEntropyLoss"(%x, %t) {ignore_index = 10000000000 : i64, reduction = "sum"} : (tensor<3x5xf32>, tensor<3xi32>) -> tensor<*xf32> loc("sce")
    return %l : tensor<*xf32>
  }
}

// -----

// GatherElements normalizes the axis; the result has the indices' shape.
// CHECK-LABEL: func.func @gather_elements
// CHECK-SAME: (%[[X:.+]]: tensor<3x3xf32>, %[[I:.+]]: tensor<2x3xi64>) -> tensor<2x3xf32>
// CHECK: %[[Y:.+]] = kiln.gather_elements %[[X]], %[[I]] {axis = 0 : i64} : (tensor<3x3xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
// CHECK: return %[[Y]]
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @gather_elements(%x: tensor<3x3xf32>, %i: tensor<2x3xi64>) -> tensor<*xf32> {
    %y = "onnx.GatherElements"(%x, %i) {axis = -2 : i64} : (tensor<3x3xf32>, tensor<2x3xi64>) -> tensor<*xf32> loc("ge")
    return %y : tensor<*xf32>
  }
}

// -----

// With Mean and InvStdDev used, LayerNormalization is decomposed; both
// statistics keep the normalized dimension with size 1.
// CHECK-LABEL: func.func @layer_norm_stats
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>, %[[S:.+]]: tensor<4xf32>, %[[B:.+]]: tensor<4xf32>)
// CHECK-SAME: -> (tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)
// CHECK-NOT: kiln.layer_norm
// CHECK: %[[M:.+]] = kiln.reduce_mean %[[X]] {axes = array<i64: 2>} : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
// CHECK: %[[D:.+]] = kiln.sub %[[X]], %[[M]]
// CHECK: %[[SQ:.+]] = kiln.mul %[[D]], %[[D]]
// CHECK: %[[V:.+]] = kiln.reduce_mean %[[SQ]] {axes = array<i64: 2>}
// CHECK: %[[EPS:.+]] = kiln.constant dense<1.000000e-03> : tensor<f32>
// CHECK: %[[VE:.+]] = kiln.add %[[V]], %[[EPS]]
// CHECK: %[[SD:.+]] = kiln.sqrt %[[VE]]
// CHECK: %[[INV:.+]] = kiln.reciprocal %[[SD]] : tensor<2x3x1xf32>
// CHECK: %[[N:.+]] = kiln.mul %[[D]], %[[INV]]
// CHECK: %[[SC:.+]] = kiln.mul %[[N]], %[[S]]
// CHECK: %[[Y:.+]] = kiln.add %[[SC]], %[[B]]
// CHECK: return %[[Y]], %[[M]], %[[INV]]
module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
  func.func @layer_norm_stats(%x: tensor<2x3x4xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %y, %m, %r = "onnx.LayerNormalization"(%x, %s, %b) {axis = -1 : i64, epsilon = 1.0e-03 : f32} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) loc("ln")
    return %y, %m, %r : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// A float16 input is normalized in float32 (stash_type 1) and cast back
// before scale and bias.
// CHECK-LABEL: func.func @layer_norm_stats_f16
// CHECK: %[[XS:.+]] = kiln.cast %{{.+}} to f32 : tensor<2x4xf16> -> tensor<2x4xf32>
// CHECK: %[[M:.+]] = kiln.reduce_mean %[[XS]] {axes = array<i64: 1>} : tensor<2x4xf32> -> tensor<2x1xf32>
// CHECK: %[[INV:.+]] = kiln.reciprocal
// CHECK: %[[N:.+]] = kiln.mul %{{.+}}, %[[INV]] : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
// CHECK: kiln.cast %[[N]] to f16 : tensor<2x4xf32> -> tensor<2x4xf16>
// CHECK: return {{.+}} : tensor<2x4xf16>, tensor<2x1xf32>
module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
  func.func @layer_norm_stats_f16(%x: tensor<2x4xf16>, %s: tensor<4xf16>) -> (tensor<*xf16>, tensor<*xf32>) {
    %y, %m = "onnx.LayerNormalization"(%x, %s) {axis = 1 : i64} : (tensor<2x4xf16>, tensor<4xf16>) -> (tensor<*xf16>, tensor<*xf32>) loc("ln")
    return %y, %m : tensor<*xf16>, tensor<*xf32>
  }
}

// -----

// Neg, Abs and Sign take signed integers.
// CHECK-LABEL: func.func @int_neg_abs_sign
// CHECK: kiln.neg %{{.+}} : tensor<4xi64>
// CHECK: kiln.abs %{{.+}} : tensor<4xi32>
// CHECK: kiln.sign %{{.+}} : tensor<4xi64>
module attributes {onnx.opset_import = {ai.onnx = 13 : i64}} {
  func.func @int_neg_abs_sign(%x: tensor<4xi64>, %y: tensor<4xi32>) -> (tensor<*xi64>, tensor<*xi32>, tensor<*xi64>) {
    %a = "onnx.Neg"(%x) : (tensor<4xi64>) -> tensor<*xi64> loc("neg")
    %b = "onnx.Abs"(%y) : (tensor<4xi32>) -> tensor<*xi32> loc("abs")
    %c = "onnx.Sign"(%x) : (tensor<4xi64>) -> tensor<*xi64> loc("sign")
    return %a, %b, %c : tensor<*xi64>, tensor<*xi32>, tensor<*xi64>
  }
}
