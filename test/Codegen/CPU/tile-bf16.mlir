// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-cpu-tile-and-vectorize{vector-width=16 amx=true parallel-work=0}))" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-cpu-tile-and-vectorize{vector-width=16 parallel-work=0}))" | FileCheck %s --check-prefix=NOAMX

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
