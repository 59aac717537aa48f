// RUN: kiln-opt %s --split-input-file --kiln-fold-requantization --canonicalize | FileCheck %s

#id = affine_map<(n, c) -> (n, c)>
#ch = affine_map<(n, c) -> (c)>

// An int8 product's epilogue fused with ReLU6 and the next layer's marked
// quantization (inverse scale 4, zero point -100 after the shift to int8):
// y = f * (w * 0.5) + b, clamped to [0, 6], becomes
// fma(f, w * 0.5 * 4, fma(b, 4, -100)), clamped to [0 * 4 - 100, 6 * 4 - 100]
// = [-100, -76] (inside [-128, 127]), rounded once; no multiply, add or
// clamp is left after the rounding.
// CHECK-LABEL: func.func @requant
// CHECK-DAG: %[[HI:.+]] = arith.constant -7.600000e+01 : f32
// CHECK-DAG: %[[ZP:.+]] = arith.constant -1.000000e+02 : f32
// CHECK-DAG: %[[INV:.+]] = arith.constant 4.000000e+00 : f32
// CHECK-DAG: %[[S:.+]] = arith.constant 5.000000e-01 : f32
// CHECK: ^bb0(%[[A:.+]]: i32, %[[W:.+]]: f32, %[[SUM:.+]]: i32, %[[B:.+]]: f32, %{{.+}}: i8):
// CHECK: %[[F:.+]] = arith.sitofp
// CHECK: %[[WS:.+]] = arith.mulf %[[W]], %[[S]]
// CHECK: %[[SCALE:.+]] = arith.mulf %[[WS]], %[[INV]]
// CHECK: %[[OFF:.+]] = math.fma %[[B]], %[[INV]], %[[ZP]]
// CHECK: %[[Y:.+]] = math.fma %[[F]], %[[SCALE]], %[[OFF]]
// CHECK: %[[L:.+]] = arith.maxnumf %[[Y]], %[[ZP]]
// CHECK: %[[H:.+]] = arith.minnumf %[[L]], %[[HI]]
// CHECK: %[[R:.+]] = math.roundeven %[[H]]
// CHECK-NEXT: arith.fptosi %[[R]]
// CHECK-NEXT: arith.trunci
func.func @requant(%acc: tensor<8x32xi32>, %ws: tensor<32xf32>, %sums: tensor<32xi32>, %bias: tensor<32xf32>) -> tensor<8x32xi8> {
  %e = tensor.empty() : tensor<8x32xi8>
  %zpi = arith.constant 130 : i32
  %scale = arith.constant 0.5 : f32
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %inv = arith.constant 4.0 : f32
  %zp = arith.constant -100.0 : f32
  %lo = arith.constant -128.0 : f32
  %hi = arith.constant 127.0 : f32
  %0 = linalg.generic {indexing_maps = [#id, #ch, #ch, #ch, #id], iterator_types = ["parallel", "parallel"]} ins(%acc, %ws, %sums, %bias : tensor<8x32xi32>, tensor<32xf32>, tensor<32xi32>, tensor<32xf32>) outs(%e : tensor<8x32xi8>) {
  ^bb0(%a: i32, %w: f32, %s: i32, %b: f32, %o: i8):
    %1 = arith.muli %s, %zpi : i32
    %2 = arith.subi %a, %1 : i32
    %3 = arith.sitofp %2 : i32 to f32
    %4 = arith.mulf %w, %scale : f32
    %5 = arith.mulf %3, %4 : f32
    %6 = arith.addf %5, %b : f32
    %7 = arith.maximumf %6, %zero : f32
    %8 = arith.minimumf %7, %six : f32
    %9 = arith.mulf %8, %inv : f32
    %10 = math.roundeven %9 {kiln.requant} : f32
    %11 = arith.addf %10, %zp : f32
    %12 = arith.maximumf %11, %lo : f32
    %13 = arith.minimumf %12, %hi : f32
    %14 = arith.fptosi %13 : f32 to i32
    %15 = arith.trunci %14 : i32 to i8
    linalg.yield %15 : i8
  } -> tensor<8x32xi8>
  return %0 : tensor<8x32xi8>
}

// -----

#id = affine_map<(n, c) -> (n, c)>
#ch = affine_map<(n, c) -> (c)>

// A depthwise convolution's epilogue, (acc - s * 28) + b, with no
// activation: the offset is (-(s * 28) + b) * 2 + 3 and the only bounds are
// the integer range [0, 255].
// CHECK-LABEL: func.func @depthwise
// CHECK: ^bb0(%[[A:.+]]: f32, %[[S:.+]]: f32, %[[B:.+]]: f32, %{{.+}}: i8):
// CHECK: %[[K:.+]] = arith.mulf %[[S]], %{{.+}}
// CHECK: %[[N:.+]] = arith.negf %[[K]]
// CHECK: %[[C:.+]] = arith.addf %[[N]], %[[B]]
// CHECK: %[[OFF:.+]] = math.fma %[[C]], %{{.+}}, %{{.+}}
// CHECK: %[[Y:.+]] = math.fma %[[A]], %{{.+}}, %[[OFF]]
// CHECK: arith.maxnumf %[[Y]]
// CHECK: arith.minnumf
// CHECK: math.roundeven
// CHECK-NEXT: arith.fptosi
func.func @depthwise(%acc: tensor<8x32xf32>, %sums: tensor<32xf32>, %bias: tensor<32xf32>) -> tensor<8x32xi8> {
  %e = tensor.empty() : tensor<8x32xi8>
  %shift = arith.constant 28.0 : f32
  %inv = arith.constant 2.0 : f32
  %zp = arith.constant 3.0 : f32
  %lo = arith.constant 0.0 : f32
  %hi = arith.constant 255.0 : f32
  %0 = linalg.generic {indexing_maps = [#id, #ch, #ch, #id], iterator_types = ["parallel", "parallel"]} ins(%acc, %sums, %bias : tensor<8x32xf32>, tensor<32xf32>, tensor<32xf32>) outs(%e : tensor<8x32xi8>) {
  ^bb0(%a: f32, %s: f32, %b: f32, %o: i8):
    %1 = arith.mulf %s, %shift : f32
    %2 = arith.subf %a, %1 : f32
    %3 = arith.addf %2, %b : f32
    %4 = arith.mulf %3, %inv : f32
    %5 = math.roundeven %4 {kiln.requant} : f32
    %6 = arith.addf %5, %zp : f32
    %7 = arith.maximumf %6, %lo : f32
    %8 = arith.minimumf %7, %hi : f32
    %9 = arith.fptosi %8 : f32 to i32
    %10 = arith.trunci %9 : i32 to i8
    linalg.yield %10 : i8
  } -> tensor<8x32xi8>
  return %0 : tensor<8x32xi8>
}

// -----

#id = affine_map<(n, c) -> (n, c)>

// Without the mark (a QuantizeLinear, which must round as ONNX does), or
// with a negative scale (the clamps would swap), nothing changes.
// CHECK-LABEL: func.func @untouched
// CHECK-COUNT-2: arith.mulf
// CHECK-NOT: math.fma
func.func @untouched(%x: tensor<8x32xf32>) -> (tensor<8x32xi8>, tensor<8x32xi8>) {
  %e = tensor.empty() : tensor<8x32xi8>
  %inv = arith.constant 4.0 : f32
  %neg = arith.constant -4.0 : f32
  %zp = arith.constant 3.0 : f32
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x32xf32>) outs(%e : tensor<8x32xi8>) {
  ^bb0(%a: f32, %o: i8):
    %1 = arith.mulf %a, %inv : f32
    %2 = math.roundeven %1 : f32
    %3 = arith.addf %2, %zp : f32
    %4 = arith.fptosi %3 : f32 to i32
    %5 = arith.trunci %4 : i32 to i8
    linalg.yield %5 : i8
  } -> tensor<8x32xi8>
  %6 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x32xf32>) outs(%e : tensor<8x32xi8>) {
  ^bb0(%a: f32, %o: i8):
    %7 = arith.mulf %a, %neg : f32
    %8 = math.roundeven %7 {kiln.requant} : f32
    %9 = arith.addf %8, %zp : f32
    %10 = arith.fptosi %9 : f32 to i32
    %11 = arith.trunci %10 : i32 to i8
    linalg.yield %11 : i8
  } -> tensor<8x32xi8>
  return %0, %6 : tensor<8x32xi8>, tensor<8x32xi8>
}
