//===- VnniMatch.h - what the VNNI kernel takes ------------------*- C++
//-*-===//
//
// --kiln-cpu-vnni-matmul replaces a marked product (kiln.int8_matmul, or
// kiln.bf16_matmul for vdpbf16ps) with its register-blocked kernel, and with
// it the elementwise op that reads the product when that op can run on the
// accumulator registers. This is the matching: the product's shapes, and
// the epilogue or consumer the kernel applies (VnniMatmul.cpp builds it).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CODEGEN_CPU_VNNIMATCH_H
#define KILN_LIB_CODEGEN_CPU_VNNIMATCH_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>
#include <string>

namespace mlir::kiln::vnni {

/// Rows that are a convolution's unfolded windows (im2col): row m is output
/// pixel (n, oh, ow) of [N, OH, OW], and with the padded input seen as
/// [N Hp, Wp C], column (kh KWn + kw) run + j of it is the byte at row
/// n Hp + oh rowStride + kh tapStride, column ow pixelStride + kw kwStride +
/// j. Without dilation along W and with C a multiple of 16, each kernel row
/// is one run (KWn = 1, run = KW C); otherwise each tap is (KWn = KW,
/// run = C). The kernel then reads the input itself, and the unfolding (a
/// copy KH KW times the size of the input: 118 MB for one 3x3 layer of 128
/// channels at 320 x 320) is never made.
struct Window {
  Value src;                      // [N, Hp, Wp C] or [N, Hp, Wp, C]
  linalg::GenericOp unfold;       // the copy that made the rows from src
  SmallVector<Operation *> views; // rows back to the copy, product side first
  int64_t oh, ow, hp, rowStride, tapStride, pixelStride, taps, run;
  int64_t kwCount = 1, kwStride = 0;
};

/// The shapes the kernel needs, or a reason why this generic does not fit.
/// Each 32-bit lane of a weight vector holds one group of k: four int8
/// (vpdpbusd) or two bf16 (vdpbf16ps).
struct DotProduct {
  Value rows, weights; // [M, K4, g] and [P, K4, R, g], g = 4 i8 or 2 bf16
  linalg::FillOp fill; // the zero init [M, P, R] i32 (f32 for bf16)
  int64_t m, p, k4, r;
  bool bf16 = false;
  /// Set when the rows are a convolution's unfolded windows.
  std::optional<Window> window;
  int64_t group() const { return bf16 ? 2 : 4; }
};

/// The product `op` as the kernel takes it, or failure with `why` set.
FailureOr<DotProduct> match(linalg::GenericOp op, std::string &why);

/// The epilogue (see kInt8EpilogueAttr) when it is the product's only user.
struct Epilogue {
  linalg::GenericOp op;
  Value scale, zeroPoint, weightScale, weightSum, bias;
};

std::optional<Epilogue> matchEpilogue(linalg::GenericOp op,
                                      const DotProduct &k);

/// Static int8's requantization (with its activation), an imported int8
/// model's dequantization, or a bf16 product's bias, activation and
/// rounding to bf16 for the next layer: an elementwise generic over the
/// product's own [M, P, R] (a Gemm's) or over [1, H, W, C], C = P R (a
/// convolution's), that reads the product (i32, or f32 for bf16) through
/// reshapes only, as their one user, and writes int8 or f32 (bf16 for a
/// bf16 product). The kernel applies its body to each register of
/// accumulators and writes that result, rather than writing the product
/// for a separate pass over it (MobileNetV2's 112 x 112 expansion to 96
/// channels wrote 4.8 MB of i32 and read it back; in bf16 the same
/// MobileNetV2 ran 9% faster fused).
struct Consumer {
  linalg::GenericOp op;
  /// Per input: the product, a tensor of the consumer's shape (read at the
  /// same place), per-channel values ([C], or [P, R] for a Gemm's), or one
  /// value (a scalar, or a tensor of one element).
  enum Kind { Product, Full, Channels, Scalar };
  SmallVector<Kind> kinds;
  SmallVector<Operation *> views; // the reshapes from the product to it
};

std::optional<Consumer> matchConsumer(linalg::GenericOp op,
                                      const DotProduct &k);

} // namespace mlir::kiln::vnni

#endif // KILN_LIB_CODEGEN_CPU_VNNIMATCH_H
