// RUN: kiln-opt %s --split-input-file --kiln-cpu-mark-amx-epilogues="min-bytes=0" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cpu-mark-amx-epilogues | FileCheck %s --check-prefix=SMALL

// The elementwise generic that alone reads a bf16 AMX product's accumulators
// (through reshapes) is marked kiln.amx_epilogue, and the product with its
// reshapes moves right before it, past the unrelated generic between them.
// With the default min-bytes (1 MiB), these 4 KiB of accumulators stay in
// L2: the epilogue stays a pass of its own.
// CHECK-LABEL: func.func @epilogue
// CHECK: linalg.generic {{.+}} ins(%arg2 : tensor<256xf32>)
// CHECK: %[[P:.+]] = linalg.generic {{.+}} attrs = {kiln.bf16_matmul}
// CHECK: %[[R:.+]] = tensor.collapse_shape %[[P]]
// CHECK-NEXT: %[[E:.+]] = tensor.expand_shape %[[R]]
// CHECK-NEXT: linalg.generic {{.+}} ins(%[[E]], %arg3 : tensor<1x4x8x32xf32>, tensor<32xf32>) {{.+}} attrs = {kiln.amx_epilogue}
// SMALL-LABEL: func.func @epilogue
// SMALL-NOT: kiln.amx_epilogue
#rows = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc = affine_map<(m, p, c, k, j) -> (m, p, c)>
#id = affine_map<(n, h, w, c) -> (n, h, w, c)>
#ch = affine_map<(n, h, w, c) -> (c)>

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

// An epilogue whose body takes something that is not one instruction on a
// vector (a division of integers here stands for any such op) is left
// unmarked: the AMX kernel could not apply it to its registers.
// CHECK-LABEL: func.func @not_an_epilogue
// CHECK-NOT: kiln.amx_epilogue
#rows = affine_map<(m, p, c, k, j) -> (m, k, j)>
#w = affine_map<(m, p, c, k, j) -> (p, k, c, j)>
#acc = affine_map<(m, p, c, k, j) -> (m, p, c)>
#id3 = affine_map<(m, p, c) -> (m, p, c)>
func.func @not_an_epilogue(%x: tensor<32x16x2xbf16>, %w: tensor<2x16x16x2xbf16>) -> tensor<32x2x16xi32> {
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
  %eo = tensor.empty() : tensor<32x2x16xi32>
  %y = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%0 : tensor<32x2x16xf32>) outs(%eo : tensor<32x2x16xi32>) {
  ^bb0(%a: f32, %o: i32):
    %1 = arith.fptosi %a : f32 to i32
    %c3 = arith.constant 3 : i32
    %2 = arith.divsi %1, %c3 : i32
    linalg.yield %2 : i32
  } -> tensor<32x2x16xi32>
  return %y : tensor<32x2x16xi32>
}
