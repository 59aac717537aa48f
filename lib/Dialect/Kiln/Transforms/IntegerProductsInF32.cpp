//===- IntegerProductsInF32.cpp - i32 conv/matmul on the f32 kernels -*- C++ -*-===//
//
// Imported integer models (ONNX Runtime's dynamic quantization writes
// DynamicQuantizeLinear -> ConvInteger / MatMulInteger -> Cast -> Mul;
// QLinearConv and QLinearMatMul requantize) reach the graph as kiln.conv2d
// and kiln.matmul on i32: 8-bit operands widened, zero points subtracted.
// CPUs have no fast i32 multiply-add, so those products ran several times
// slower than the same layers in f32. Their operands are small integers,
// which f32 holds exactly, so the product can run on the f32 kernels:
//
//  * when every user converts the i32 result to a float type (the dequantize
//    that follows ConvInteger / MatMulInteger), the f32 result replaces it:
//    it equals the integer result until a partial sum passes 2^24, and past
//    that differs by f32 rounding only (a relative 2^-24 per addition, far
//    below the error of the 8-bit data itself);
//  * otherwise (QLinear* requantize with rounding, so the i32 value must be
//    exact), only when no partial sum can reach 2^24: max|a| times the
//    largest sum of |w| over one output's reduction (constant weights), or
//    K * max|a| * max|b|, below 2^24; the f32 result is converted back to
//    i32.
//
// Either way both operands must be integers f32 holds exactly: their
// magnitudes are bounded by an interval walk back to casts from integer
// types of 16 bits or fewer and to constants, and nothing else is trusted.
//
// The operands are converted by kiln.cast (i32 -> f32, exact for these
// magnitudes), which fuses with the widening and zero-point subtraction in
// front of it; constant filters fold.
//
//===----------------------------------------------------------------------===//
#include "IntegerValues.h"
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

namespace mlir::kiln {
#define GEN_PASS_DEF_INTEGERPRODUCTSINF32PASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::integers;

namespace {
/// A constant f32 tensor of `type`'s shape holding `values`.
Value f32Constant(OpBuilder &b, Location loc, RankedTensorType type,
                  const std::vector<double> &values) {
  auto f32Type = type.clone(b.getF32Type());
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
      values.size() * sizeof(float), alignof(float), /*dataIsMutable=*/true);
  auto *out = reinterpret_cast<float *>(blob.getMutableData().data());
  for (size_t i = 0; i < values.size(); ++i)
    out[i] = (float)values[i];
  return ConstantOp::create(
      b, loc, f32Type,
      DenseResourceElementsAttr::get(f32Type, "integer_weights_f32",
                                     std::move(blob)));
}

/// The largest sum of |w| over one output's reduction: the filter of an NCHW
/// conv2d ([F, C/g, KH, KW]) or the 2-D right operand of a matmul ([K, N]).
std::optional<double> maxAbsRowSum(Operation *op,
                                   const std::vector<double> &w) {
  auto type = cast<RankedTensorType>(op->getOperand(1).getType());
  ArrayRef<int64_t> s = type.getShape();
  double best = 0;
  if (auto conv = dyn_cast<Conv2DOp>(op)) {
    if (conv.isNHWC() || s.size() != 4)
      return std::nullopt;
    int64_t per = s[1] * s[2] * s[3];
    for (int64_t f = 0; f < s[0]; ++f) {
      double sum = 0;
      for (int64_t i = 0; i < per; ++i)
        sum += std::fabs(w[f * per + i]);
      best = std::max(best, sum);
    }
    return best;
  }
  if (s.size() != 2)
    return std::nullopt;
  for (int64_t n = 0; n < s[1]; ++n) {
    double sum = 0;
    for (int64_t k = 0; k < s[0]; ++k)
      sum += std::fabs(w[k * s[1] + n]);
    best = std::max(best, sum);
  }
  return best;
}

/// The reduction length of a conv2d (per output) or matmul.
std::optional<int64_t> reductionLength(Operation *op) {
  if (auto conv = dyn_cast<Conv2DOp>(op)) {
    auto f = cast<RankedTensorType>(conv.getFilter().getType());
    if (!f.hasStaticShape() || f.getRank() != 4)
      return std::nullopt;
    ArrayRef<int64_t> s = f.getShape();
    // NCHW: [F, C/g, KH, KW]; NHWC: [KH, KW, C/g, F].
    return conv.isNHWC() ? s[0] * s[1] * s[2] : s[1] * s[2] * s[3];
  }
  auto lhs = cast<RankedTensorType>(cast<MatMulOp>(op).getLhs().getType());
  if (lhs.getRank() < 1 || lhs.isDynamicDim(lhs.getRank() - 1))
    return std::nullopt;
  return lhs.getDimSize(lhs.getRank() - 1);
}

bool isFloatCast(Operation *user) {
  auto c = dyn_cast<CastOp>(user);
  return c && isa<FloatType>(c.getTo());
}

/// Runs the i32 product `op` in f32 if that keeps its meaning; true when
/// rewritten.
bool rewrite(Operation *op) {
  Value result = op->getResult(0);
  auto type = cast<RankedTensorType>(result.getType());
  if (!type.getElementType().isSignlessInteger(32) || op->getNumOperands() > 2)
    return false;
  std::optional<std::vector<double>> weights = evalInts(op->getOperand(1));
  bool dequantized = !result.use_empty() &&
                     llvm::all_of(result.getUsers(), isFloatCast);
  // Both operands must be integers f32 holds exactly.
  const double exact = std::ldexp(1.0, 24);
  auto a = intRange(op->getOperand(0));
  auto bRange = intRange(op->getOperand(1));
  double bMax = 0;
  if (weights)
    for (double w : *weights)
      bMax = std::max(bMax, std::fabs(w));
  else if (bRange)
    bMax = bRange->maxAbs();
  if (!a || (!weights && !bRange) || a->maxAbs() > exact || bMax > exact)
    return false;
  if (!dequantized) {
    // Every partial sum an integer below 2^24 in magnitude: exact in f32.
    std::optional<double> bound;
    if (weights)
      if (std::optional<double> rows = maxAbsRowSum(op, *weights))
        bound = a->maxAbs() * *rows;
    if (!bound) {
      std::optional<int64_t> k = reductionLength(op);
      if (!k)
        return false;
      bound = (double)*k * a->maxAbs() * bMax;
    }
    if (*bound >= exact)
      return false;
  }

  OpBuilder b(op);
  Location loc = op->getLoc();
  Type f32 = b.getF32Type();
  for (OpOperand &operand : op->getOpOperands()) {
    auto t = cast<RankedTensorType>(operand.get().getType());
    if (operand.getOperandNumber() == 1 && weights)
      operand.set(f32Constant(b, loc, t, *weights));
    else
      operand.set(CastOp::create(b, loc, t.clone(f32), operand.get(),
                                 TypeAttr::get(f32)));
  }
  result.setType(type.clone(f32));
  b.setInsertionPointAfter(op);
  Value asInt;
  for (OpOperand &use : llvm::make_early_inc_range(result.getUses())) {
    Operation *user = use.getOwner();
    if (isFloatCast(user)) {
      auto c = cast<CastOp>(user);
      if (c.getResult().getType() == result.getType()) {
        c.getResult().replaceAllUsesWith(result);
        c->erase();
      }
      continue; // a cast to another float type now reads f32
    }
    if (!asInt)
      asInt = CastOp::create(b, loc, type, result,
                             TypeAttr::get(type.getElementType()));
    use.set(asInt);
  }
  return true;
}

struct IntegerProductsInF32Pass
    : mlir::kiln::impl::IntegerProductsInF32PassBase<IntegerProductsInF32Pass> {
  using IntegerProductsInF32PassBase::IntegerProductsInF32PassBase;
  void runOnOperation() override {
    for (Operation *op : products(getOperation()))
      if (std::optional<VnniProduct> p =
              keepVnniProducts ? matchVnniProduct(op) : std::nullopt;
          !p || (p->depthwise && !keepDepthwise))
        (void)rewrite(op);
  }
};
} // namespace
