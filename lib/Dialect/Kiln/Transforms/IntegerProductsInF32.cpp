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

namespace {
struct Interval {
  double lo, hi;
  double maxAbs() const { return std::max(std::fabs(lo), std::fabs(hi)); }
};

/// The values an integer type holds (i1 as 0/1; signless as signed).
std::optional<Interval> typeRange(Type t) {
  auto it = dyn_cast<IntegerType>(t);
  if (!it || it.getWidth() > 16)
    return std::nullopt;
  unsigned w = it.getWidth();
  if (w == 1 || it.isUnsigned())
    return Interval{0, std::ldexp(1.0, w) - 1};
  return Interval{-std::ldexp(1.0, w - 1), std::ldexp(1.0, w - 1) - 1};
}

/// The most elements a constant operand may have to be evaluated here.
constexpr int64_t kMaxEvaluated = int64_t(1) << 26;

/// The integer elements of a constant (dense or a weights resource of 8, 16
/// or 32-bit integers), row-major.
std::optional<std::vector<double>> readInts(ConstantOp c) {
  auto type = cast<ShapedType>(c.getValue().getType());
  auto it = dyn_cast<IntegerType>(type.getElementType());
  if (!it || !type.hasStaticShape() || type.getNumElements() > kMaxEvaluated)
    return std::nullopt;
  bool isUnsigned = it.isUnsigned() || it.getWidth() == 1;
  std::vector<double> out;
  out.reserve(type.getNumElements());
  if (auto dense = dyn_cast<DenseIntElementsAttr>(c.getValue())) {
    for (const APInt &x : dense)
      out.push_back(isUnsigned ? (double)x.getZExtValue()
                               : (double)x.getSExtValue());
    return out;
  }
  auto res = dyn_cast<DenseResourceElementsAttr>(c.getValue());
  unsigned w = it.getWidth();
  AsmResourceBlob *blob = res ? res.getRawHandle().getBlob() : nullptr;
  if (!blob || (w != 8 && w != 16 && w != 32) ||
      blob->getData().size() != size_t(type.getNumElements()) * (w / 8))
    return std::nullopt;
  const char *data = blob->getData().data();
  for (int64_t i = 0; i < type.getNumElements(); ++i) {
    int64_t v;
    if (w == 8)
      v = isUnsigned ? (int64_t)(uint8_t)data[i] : (int64_t)(int8_t)data[i];
    else if (w == 16) {
      uint16_t u;
      std::memcpy(&u, data + 2 * i, 2);
      v = isUnsigned ? (int64_t)u : (int64_t)(int16_t)u;
    } else {
      uint32_t u;
      std::memcpy(&u, data + 4 * i, 4);
      v = isUnsigned ? (int64_t)u : (int64_t)(int32_t)u;
    }
    out.push_back((double)v);
  }
  return out;
}

/// Bounds of an i32 tensor built from narrow integers: casts from types of
/// 16 bits or fewer, integer constants, sums and differences, and ops that
/// only move elements. Nothing else is trusted.
std::optional<Interval> intRange(Value v, unsigned depth = 0) {
  if (depth > 16)
    return std::nullopt;
  Operation *op = v.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (auto c = dyn_cast<CastOp>(op))
    return typeRange(getElementTypeOrSelf(c.getInput().getType()));
  if (auto c = dyn_cast<ConstantOp>(op)) {
    std::optional<std::vector<double>> values = readInts(c);
    if (!values || values->empty())
      return std::nullopt;
    auto [lo, hi] = std::minmax_element(values->begin(), values->end());
    return Interval{*lo, *hi};
  }
  if (isa<SubOp, AddOp>(op)) {
    auto a = intRange(op->getOperand(0), depth + 1);
    auto b = intRange(op->getOperand(1), depth + 1);
    if (!a || !b)
      return std::nullopt;
    if (isa<AddOp>(op))
      return Interval{a->lo + b->lo, a->hi + b->hi};
    return Interval{a->lo - b->hi, a->hi - b->lo};
  }
  if (isa<TransposeOp, ReshapeOp, IdentityOp>(op))
    return intRange(op->getOperand(0), depth + 1);
  return std::nullopt;
}

/// The elements of an integer value computed from constants only (casts
/// between integer types, sums and differences with a same-shaped or
/// one-element operand, reshapes), row-major; nullopt otherwise.
std::optional<std::vector<double>> evalInts(Value v, unsigned depth = 0) {
  Operation *op = v.getDefiningOp();
  if (!op || depth > 8)
    return std::nullopt;
  if (auto c = dyn_cast<ConstantOp>(op))
    return readInts(c);
  if (auto c = dyn_cast<CastOp>(op)) {
    if (!isa<IntegerType>(getElementTypeOrSelf(c.getInput().getType())) ||
        !isa<IntegerType>(c.getTo()))
      return std::nullopt;
    auto in = evalInts(c.getInput(), depth + 1);
    auto range = typeRange(c.getTo());
    // Narrowing casts wrap: only widening (or i32) keeps the values.
    if (in && range &&
        llvm::any_of(*in, [&](double x) { return x < range->lo || x > range->hi; }))
      return std::nullopt;
    return in;
  }
  if (isa<ReshapeOp, IdentityOp>(op))
    return evalInts(op->getOperand(0), depth + 1);
  if (isa<SubOp, AddOp>(op)) {
    auto a = evalInts(op->getOperand(0), depth + 1);
    auto b = evalInts(op->getOperand(1), depth + 1);
    auto outType = cast<ShapedType>(v.getType());
    if (!a || !b || !outType.hasStaticShape())
      return std::nullopt;
    size_t n = outType.getNumElements();
    if ((a->size() != n && a->size() != 1) || (b->size() != n && b->size() != 1))
      return std::nullopt;
    std::vector<double> out(n);
    double sign = isa<SubOp>(op) ? -1 : 1;
    for (size_t i = 0; i < n; ++i)
      out[i] = (*a)[a->size() == 1 ? 0 : i] + sign * (*b)[b->size() == 1 ? 0 : i];
    return out;
  }
  return std::nullopt;
}

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
  void runOnOperation() override {
    SmallVector<Operation *> products;
    getOperation().walk([&](Operation *op) {
      if (isa<Conv2DOp, MatMulOp>(op))
        products.push_back(op);
    });
    for (Operation *op : products)
      (void)rewrite(op);
  }
};
} // namespace
