// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(kiln-cpu-tiling-pipeline{vector-width=16 amx=true parallel-work=0 amx-epilogue-bytes=0})" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(kiln-cpu-tiling-pipeline{vector-width=16 amx=true parallel-work=0})" | FileCheck %s --check-prefix=SMALL
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(kiln-cpu-tiling-pipeline{vector-width=16 parallel-work=0})" | FileCheck %s --check-prefix=NOAMX

#rows = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc = affine_map<(m, p, c, k, j) -> (m, p, c)>

// A product marked kiln.bf16_matmul is left whole for the AMX kernel, even
// when it is small enough to vectorize; with amx=true its zero fill goes
// (the kernel starts from zero tiles), without it the fill stays.
// CHECK-LABEL: func.func @marked_product
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<16x1x16xf32>
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic {{.+}} outs(%[[EMPTY]] : tensor<16x1x16xf32>) attrs = {kiln.bf16_matmul}
// CHECK-NOT: vector.contract
// NOAMX-LABEL: func.func @marked_product
// NOAMX: linalg.generic {{.+}} attrs = {kiln.bf16_matmul}
// NOAMX-NOT: vector.contract
func.func @marked_product(%x: tensor<16x16x2xbf16>, %w: tensor<1x16x16x2xbf16>) -> tensor<16x1x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x1x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x1x16xf32>) -> tensor<16x1x16xf32>
  %0 = linalg.generic {indexing_maps = [#rows, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : tensor<16x16x2xbf16>, tensor<1x16x16x2xbf16>) outs(%acc : tensor<16x1x16xf32>) attrs = {kiln.bf16_matmul} {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %b : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    %4 = arith.addf %o, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<16x1x16xf32>
  return %0 : tensor<16x1x16xf32>
}

// -----

#rows = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc = affine_map<(m, p, c, k, j) -> (m, p, c)>
#id = affine_map<(n, h, w, c) -> (n, h, w, c)>
#ch = affine_map<(n, h, w, c) -> (c)>

// With amx=true (and no size threshold), the elementwise generic that alone reads a product's
// accumulators (through reshapes) is marked kiln.amx_epilogue and left
// whole, and the product with its reshapes moves right before it, past
// the unrelated generic between them. Without AMX the epilogue is tiled.
// CHECK-LABEL: func.func @epilogue
// CHECK: vector.transfer_read %arg2
// CHECK: %[[P:.+]] = linalg.generic {{.+}} attrs = {kiln.bf16_matmul}
// CHECK-NEXT: ^bb0
// CHECK-COUNT-4: arith.
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: } -> tensor<32x2x16xf32>
// CHECK-NEXT: %[[R:.+]] = tensor.collapse_shape %[[P]]
// CHECK-NEXT: %[[E:.+]] = tensor.expand_shape %[[R]]
// CHECK-NEXT: linalg.generic {{.+}} ins(%[[E]], %arg3 : tensor<1x4x8x32xf32>, tensor<32xf32>) {{.+}} attrs = {kiln.amx_epilogue}
// CHECK-NOT: vector.transfer_write {{.+}} tensor<1x4x8x32xbf16>
// CHECK: return
// NOAMX-LABEL: func.func @epilogue
// NOAMX-NOT: kiln.amx_epilogue
// With the default amx-epilogue-bytes (1 MiB), these 4 KiB of accumulators
// keep their epilogue as a tiled pass of its own.
// SMALL-LABEL: func.func @epilogue
// SMALL-NOT: kiln.amx_epilogue
// SMALL: arith.truncf {{.+}} : vector<32xf32> to vector<32xbf16>
// SMALL: vector.transfer_write {{.+}} tensor<1x1x1x32xbf16>
func.func @epilogue(%x: tensor<32x16x2xbf16>, %w: tensor<2x16x16x2xbf16>, %v: tensor<256xf32>, %b: tensor<32xf32>) -> (tensor<1x4x8x32xbf16>, tensor<256xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x2x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<32x2x16xf32>) -> tensor<32x2x16xf32>
  %0 = linalg.generic {indexing_maps = [#rows, #w, #acc], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : tensor<32x16x2xbf16>, tensor<2x16x16x2xbf16>) outs(%acc : tensor<32x2x16xf32>) attrs = {kiln.bf16_matmul} {
  ^bb0(%a: bf16, %bb: bf16, %o: f32):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %bb : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    %4 = arith.addf %o, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<32x2x16xf32>
  %flat = tensor.collapse_shape %0 [[0, 1, 2]] : tensor<32x2x16xf32> into tensor<1024xf32>
  %nhwc = tensor.expand_shape %flat [[0, 1, 2, 3]] output_shape [1, 4, 8, 32] : tensor<1024xf32> into tensor<1x4x8x32xf32>
  %ev = tensor.empty() : tensor<256xf32>
  %twice = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%v : tensor<256xf32>) outs(%ev : tensor<256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %1 = arith.addf %a, %a : f32
    linalg.yield %1 : f32
  } -> tensor<256xf32>
  %eo = tensor.empty() : tensor<1x4x8x32xbf16>
  %y = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%nhwc, %b : tensor<1x4x8x32xf32>, tensor<32xf32>) outs(%eo : tensor<1x4x8x32xbf16>) {
  ^bb0(%a: f32, %c: f32, %o: bf16):
    %1 = arith.addf %a, %c : f32
    %2 = arith.maximumf %1, %zero : f32
    %3 = arith.truncf %2 : f32 to bf16
    linalg.yield %3 : bf16
  } -> tensor<1x4x8x32xbf16>
  return %y, %twice : tensor<1x4x8x32xbf16>, tensor<256xf32>
}

// -----

// The unfolding of a 3x3 stride-2 window (im2col) reads through a map that
// is not a projected permutation; its tiles drop their unit dimensions and
// become plain vector copies of the channels.
// CHECK-LABEL: func.func @im2col
// CHECK: vector.transfer_read %arg0[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<1x18x18x32xbf16>, vector<32xbf16>
// CHECK: vector.transfer_write
// CHECK-NOT: linalg.generic
#window = affine_map<(n, oh, ow, kh, kw, c) -> (n, oh * 2 + kh, ow * 2 + kw, c)>
#id6 = affine_map<(n, oh, ow, kh, kw, c) -> (n, oh, ow, kh, kw, c)>
func.func @im2col(%x: tensor<1x18x18x32xbf16>) -> tensor<1x8x8x3x3x32xbf16> {
  %e = tensor.empty() : tensor<1x8x8x3x3x32xbf16>
  %0 = linalg.generic {indexing_maps = [#window, #id6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x18x18x32xbf16>) outs(%e : tensor<1x8x8x3x3x32xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    linalg.yield %in : bf16
  } -> tensor<1x8x8x3x3x32xbf16>
  return %0 : tensor<1x8x8x3x3x32xbf16>
}

// -----

// An int8 product takes its epilogue at any size, with the default
// amx-epilogue-bytes too: its 4 KiB of i32 accumulators are dequantized
// block by block and never written.
#rows4 = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w4 = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc4 = affine_map<(m, p, c, k, j) -> (m, p, c)>
#id4 = affine_map<(n, h, w, c) -> (n, h, w, c)>
#ch4 = affine_map<(n, h, w, c) -> (c)>
// CHECK-LABEL: func.func @int8_epilogue
// CHECK: linalg.generic {{.+}} attrs = {kiln.amx_int8_matmul}
// CHECK: linalg.generic {{.+}} attrs = {kiln.amx_epilogue}
// SMALL-LABEL: func.func @int8_epilogue
// SMALL: linalg.generic {{.+}} attrs = {kiln.amx_int8_matmul}
// SMALL: linalg.generic {{.+}} attrs = {kiln.amx_epilogue}
// NOAMX-LABEL: func.func @int8_epilogue
// NOAMX-NOT: kiln.amx_epilogue
func.func @int8_epilogue(%x: tensor<32x16x4xi8>, %w: tensor<2x16x16x4xi8>, %s: tensor<32xf32>) -> tensor<1x4x8x32xf32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<32x2x16xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%e : tensor<32x2x16xi32>) -> tensor<32x2x16xi32>
  %0 = linalg.generic {indexing_maps = [#rows4, #w4, #acc4], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : tensor<32x16x4xi8>, tensor<2x16x16x4xi8>) outs(%acc : tensor<32x2x16xi32>) attrs = {kiln.amx_int8_matmul} {
  ^bb0(%a: i8, %b: i8, %o: i32):
    %1 = arith.extui %a : i8 to i32
    %2 = arith.extsi %b : i8 to i32
    %3 = arith.muli %1, %2 : i32
    %4 = arith.addi %o, %3 : i32
    linalg.yield %4 : i32
  } -> tensor<32x2x16xi32>
  %flat = tensor.collapse_shape %0 [[0, 1, 2]] : tensor<32x2x16xi32> into tensor<1024xi32>
  %nhwc = tensor.expand_shape %flat [[0, 1, 2, 3]] output_shape [1, 4, 8, 32] : tensor<1024xi32> into tensor<1x4x8x32xi32>
  %eo = tensor.empty() : tensor<1x4x8x32xf32>
  %y = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%nhwc, %s : tensor<1x4x8x32xi32>, tensor<32xf32>) outs(%eo : tensor<1x4x8x32xf32>) {
  ^bb0(%a: i32, %c: f32, %o: f32):
    %1 = arith.sitofp %a : i32 to f32
    %2 = arith.mulf %1, %c : f32
    linalg.yield %2 : f32
  } -> tensor<1x4x8x32xf32>
  return %y : tensor<1x4x8x32xf32>
}
