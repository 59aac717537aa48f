// RUN: kiln-opt %s --split-input-file --canonicalize | FileCheck %s

// torchvision's detection transform pads the image to
// ceil(max(h, w) / 32) * 32 - h: a ReduceMax of the image's sides, casts, a
// Div and a Ceil. With the input's size known it is one constant.
// CHECK-LABEL: func.func @padded_side
// CHECK: kiln.constant dense<[0, 18]> : tensor<2xi64>
// CHECK-NOT: kiln.reduce_max
// CHECK-NOT: kiln.ceil
func.func @padded_side() -> tensor<2xi64> {
  %sides = kiln.constant dense<[320.0, 302.0]> : tensor<2xf32>
  %largest = kiln.reduce_max %sides {axes = array<i64: 0>, keepdims = false} : tensor<2xf32> -> tensor<f32>
  %stride = kiln.constant dense<32.0> : tensor<f32>
  %blocks = kiln.div %largest, %stride : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %up = kiln.ceil %blocks : tensor<f32>
  %side = kiln.mul %up, %stride : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %padded = kiln.cast %side to i64 : tensor<f32> -> tensor<i64>
  %hw = kiln.cast %sides to i64 : tensor<2xf32> -> tensor<2xi64>
  %pad = kiln.sub %padded, %hw : (tensor<i64>, tensor<2xi64>) -> tensor<2xi64>
  return %pad : tensor<2xi64>
}

// -----

// torchvision's Faster R-CNN transform resizes the image by
// min(min_size / min(h, w), max_size / max(h, w)), exported with Reciprocal,
// and Resize needs the sizes it gives as constants: [240, 320] with
// min_size 320 and max_size 640 scales by 4/3 to [320, 426].
// CHECK-LABEL: func.func @resized_sides
// CHECK: kiln.constant dense<[320, 426]> : tensor<2xi64>
// CHECK-NOT: kiln.reciprocal
func.func @resized_sides() -> tensor<2xi64> {
  %sides = kiln.constant dense<[240.0, 320.0]> : tensor<2xf32>
  %small = kiln.reduce_min %sides {axes = array<i64: 0>, keepdims = false} : tensor<2xf32> -> tensor<f32>
  %large = kiln.reduce_max %sides {axes = array<i64: 0>, keepdims = false} : tensor<2xf32> -> tensor<f32>
  %rs = kiln.reciprocal %small : tensor<f32>
  %rl = kiln.reciprocal %large : tensor<f32>
  %minsize = kiln.constant dense<320.0> : tensor<f32>
  %maxsize = kiln.constant dense<640.0> : tensor<f32>
  %a = kiln.mul %rs, %minsize : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %b = kiln.mul %rl, %maxsize : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %scale = kiln.min %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %scaled = kiln.mul %sides, %scale : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %down = kiln.floor %scaled : tensor<2xf32>
  %size = kiln.cast %down to i64 : tensor<2xf32> -> tensor<2xi64>
  return %size : tensor<2xi64>
}

// -----

// Reciprocal rounds 1 / x to nearest, as the lowering's division does: zeros
// give infinities of their sign.
// CHECK-LABEL: func.func @reciprocal
// CHECK: kiln.constant dense<[0.333333343, 0x7F800000, 0xFF800000, -4.000000e+00]> : tensor<4xf32>
// CHECK-NOT: kiln.reciprocal
func.func @reciprocal() -> tensor<4xf32> {
  %x = kiln.constant dense<[3.0, 0.0, -0.0, -0.25]> : tensor<4xf32>
  %r = kiln.reciprocal %x : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// The roundings by their own rules: floor and ceil toward their infinities,
// round halves to even; neg and abs on floats and signed integers (the
// minimum integer stays itself).
// CHECK-LABEL: func.func @unary
// CHECK-DAG: kiln.constant dense<[-3.000000e+00, 2.000000e+00, 2.000000e+00, -0.000000e+00]> : tensor<4xf32>
// CHECK-DAG: kiln.constant dense<[-2.000000e+00, 3.000000e+00, 2.000000e+00, -0.000000e+00]> : tensor<4xf32>
// CHECK-DAG: kiln.constant dense<[-2.000000e+00, 2.000000e+00, 2.000000e+00, -0.000000e+00]> : tensor<4xf32>
// CHECK-DAG: kiln.constant dense<[2.500000e+00, -2.500000e+00, -2.000000e+00, 0.000000e+00]> : tensor<4xf32>
// CHECK-DAG: kiln.constant dense<[-5, -9223372036854775808, 7]> : tensor<3xi64>
// CHECK-DAG: kiln.constant dense<[5, -9223372036854775808, 7]> : tensor<3xi64>
// CHECK-NOT: kiln.floor
// CHECK-NOT: kiln.ceil
// CHECK-NOT: kiln.round
// CHECK-NOT: kiln.neg
// CHECK-NOT: kiln.abs
func.func @unary() -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xi64>, tensor<3xi64>) {
  %x = kiln.constant dense<[-2.5, 2.5, 2.0, -0.0]> : tensor<4xf32>
  %f = kiln.floor %x : tensor<4xf32>
  %c = kiln.ceil %x : tensor<4xf32>
  %r = kiln.round %x : tensor<4xf32>
  %n = kiln.neg %x : tensor<4xf32>
  %i = kiln.constant dense<[5, -9223372036854775808, -7]> : tensor<3xi64>
  %ni = kiln.neg %i : tensor<3xi64>
  %ai = kiln.abs %i : tensor<3xi64>
  return %f, %c, %r, %n, %ni, %ai : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xi64>, tensor<3xi64>
}

// -----

// Reductions over some axes, with and without kept dimensions: integer sums
// and products, float and integer maxima and minima.
// CHECK-LABEL: func.func @reductions
// CHECK-DAG: kiln.constant dense<[5, 7, 9]> : tensor<3xi64>
// CHECK-DAG: kiln.constant dense<{{\[}}[6], [120]]> : tensor<2x1xi64>
// CHECK-DAG: kiln.constant dense<{{\[}}[4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<1x3xf32>
// CHECK-DAG: kiln.constant dense<1> : tensor<i64>
// CHECK-NOT: kiln.reduce_
func.func @reductions() -> (tensor<3xi64>, tensor<2x1xi64>, tensor<1x3xf32>, tensor<i64>) {
  %i = kiln.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %s = kiln.reduce_sum %i {axes = array<i64: 0>, keepdims = false} : tensor<2x3xi64> -> tensor<3xi64>
  %p = kiln.reduce_prod %i {axes = array<i64: 1>, keepdims = true} : tensor<2x3xi64> -> tensor<2x1xi64>
  %f = kiln.constant dense<[[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]]> : tensor<2x3xf32>
  %m = kiln.reduce_max %f {axes = array<i64: 0>, keepdims = true} : tensor<2x3xf32> -> tensor<1x3xf32>
  %n = kiln.reduce_min %i {axes = array<i64: 0, 1>, keepdims = false} : tensor<2x3xi64> -> tensor<i64>
  return %s, %p, %m, %n : tensor<3xi64>, tensor<2x1xi64>, tensor<1x3xf32>, tensor<i64>
}

// -----

// Left to run time: float sums (run time adds in another order) and a NaN in
// a maximum. An empty reduction is its identity: for integers the type's
// extreme values, 1 for a product.
// CHECK-LABEL: func.func @not_folded
// CHECK-DAG: kiln.constant dense<9223372036854775807> : tensor<2xi64>
// CHECK-DAG: kiln.constant dense<-128> : tensor<3xi8>
// CHECK-DAG: kiln.constant dense<1> : tensor<2xi32>
// CHECK-DAG: kiln.reduce_sum
// CHECK-DAG: kiln.reduce_max
func.func @not_folded() -> (tensor<f32>, tensor<f32>, tensor<2xi64>, tensor<3xi8>, tensor<2xi32>) {
  %f = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %s = kiln.reduce_sum %f {axes = array<i64: 0>, keepdims = false} : tensor<2xf32> -> tensor<f32>
  %nan = kiln.constant dense<[1.0, 0x7FC00000]> : tensor<2xf32>
  %m = kiln.reduce_max %nan {axes = array<i64: 0>, keepdims = false} : tensor<2xf32> -> tensor<f32>
  %e = kiln.constant dense<> : tensor<0x2xi64>
  %em = kiln.reduce_min %e {axes = array<i64: 0>, keepdims = false} : tensor<0x2xi64> -> tensor<2xi64>
  %e8 = kiln.constant dense<> : tensor<3x0xi8>
  %emax = kiln.reduce_max %e8 {axes = array<i64: 1>, keepdims = false} : tensor<3x0xi8> -> tensor<3xi8>
  %e32 = kiln.constant dense<> : tensor<0x2xi32>
  %eprod = kiln.reduce_prod %e32 {axes = array<i64: 0>, keepdims = false} : tensor<0x2xi32> -> tensor<2xi32>
  return %s, %m, %em, %emax, %eprod : tensor<f32>, tensor<f32>, tensor<2xi64>, tensor<3xi8>, tensor<2xi32>
}
