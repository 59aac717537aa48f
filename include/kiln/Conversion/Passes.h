//===- Passes.h - Kiln conversion passes ------------------------*- C++ -*-===//
#ifndef KILN_CONVERSION_PASSES_H
#define KILN_CONVERSION_PASSES_H

#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kiln {
#define GEN_PASS_DECL
#include "kiln/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Conversion/Passes.h.inc"

/// Unit attribute on the linalg.generic that --kiln-convert-kiln-to-linalg
/// makes of kiln.dynamic_quant_matmul's integer product (u8 x packed s8 ->
/// i32); --kiln-cpu-vnni-matmul replaces it with a vpdpbusd micro-kernel.
inline constexpr const char *kInt8MatmulAttr = "kiln.int8_matmul";
/// Unit attribute on its epilogue, the generic that reads the i32 result
/// [M, P, R] with inputs (acc, scale [M] f32, zero point [M] i32, weight
/// scale [P, R] f32, weight sums [P, R] i32[, bias [P, R] f32]) and computes
/// f32(acc - zp * sums) * (scale * wscale) [+ bias]; the kernel applies it
/// to its registers when it is the product's only user.
inline constexpr const char *kInt8EpilogueAttr = "kiln.int8_epilogue";
/// The i64 attribute (the kernel height KH) on the linalg.generic that
/// --kiln-convert-kiln-to-linalg makes of
/// kiln.static_quant_depthwise_conv2d's integer product: loops (n, oh, ow,
/// c, kq, kw, t), acc[n, oh, ow, c] += zext(u8 input[n, oh s0 + (4 kq + t)
/// d0, ow s1 + kw d1, c]) * sext(weights[kq, kw, c, t]) in i32, from a zero
/// fill, with zero weights where 4 kq + t >= KH.
/// --kiln-cpu-tile-and-vectorize tiles it like a depthwise convolution and
/// gives each tile a vpdpbusd kernel (VnniDepthwise.cpp).
inline constexpr const char *kInt8DepthwiseAttr = "kiln.int8_depthwise";
/// Unit attribute on the linalg.generic that --kiln-convert-kiln-to-linalg
/// makes of kiln.bf16_matmul's product (bf16 rows [M, Kp / 2, 2] times packed
/// bf16 weights [P, Kp / 2, 16, 2] -> f32 [M, P, 16], from a zero fill).
/// --kiln-cpu-tile-and-vectorize leaves it whole; after bufferization
/// --kiln-cpu-amx-matmul replaces it with AMX tile loops.
inline constexpr const char *kBf16MatmulAttr = "kiln.bf16_matmul";
/// Replaces kInt8MatmulAttr on an int8 product that the AMX kernel takes
/// instead of the VNNI one (--kiln-cpu-vnni-matmul{amx=true} marks those
/// with 16-column panels and K padded to 64): u8 rows [M, K4, 4] times s8
/// weights [P, K4, 16, 4] -> i32 [M, P, 16], from a zero fill.
inline constexpr const char *kAmxInt8MatmulAttr = "kiln.amx_int8_matmul";
/// Unit attribute on the elementwise generic that is the only reader of an
/// AMX product's result (through reshapes): --kiln-cpu-tile-and-vectorize
/// leaves it whole and moves the product next to it, and
/// --kiln-cpu-amx-matmul applies it to each block of accumulators as the
/// block leaves the tile registers, so that the accumulators never make a
/// round trip through memory.
inline constexpr const char *kAmxEpilogueAttr = "kiln.amx_epilogue";
/// Unit attribute on the math.roundeven of static int8's activation
/// quantization (round(x / scale), then + zero point, clamp, convert):
/// --kiln-fold-requantization may fold the scale, zero point and clamps
/// into the producer's epilogue. Only these are rewritten: the QDQ/QLinear
/// lowerings keep ONNX's exact rounding.
inline constexpr const char *kRequantAttr = "kiln.requant";
/// Unit attribute on the zero fill of a padded tensor whose padding only
/// ever meets zero weights: static int8's rows padded to a multiple of 64
/// bytes along K (integer products, so any value times 0 adds exactly 0).
/// Once --kiln-cpu-tile-and-vectorize has found that the interior is
/// overwritten (kFillBorderAttr), --kiln-cpu-fill-borders drops the fill
/// instead of filling the border. A bf16 or f32 padding must stay zero (an
/// Inf or NaN times 0 is NaN), and so must dynamic int8's (its rows' ranges
/// read the padding).
inline constexpr const char *kUnreadPaddingAttr = "kiln.unread_padding";
/// Whether `op` is a product that --kiln-cpu-amx-matmul replaces after
/// bufferization (tiling and vectorization leave it whole).
inline bool isAmxProduct(Operation *op) {
  return op->hasAttr(kBf16MatmulAttr) || op->hasAttr(kAmxInt8MatmulAttr);
}
} // namespace mlir::kiln

#endif
