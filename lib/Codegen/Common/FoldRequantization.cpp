//===- FoldRequantization.cpp - one multiply-add per requantized value ---===//
//
// Between two static int8 layers, the fused epilogue dequantizes the
// accumulator, applies the activation and quantizes again:
//
//   y = f * (wscale[c] * scale) + bias[c]        (dequantization)
//   y = clamp(y, 0, 6)                           (ReLU6)
//   q = roundeven(y * inv) + zp; q = clamp(q, 0, 255); fptosi
//
// The quantization's positive scale and integral zero point move through the
// clamps (clamp(y, a, b) * inv + zp = clamp(y * inv + zp, a * inv + zp,
// b * inv + zp)) and into the affine dequantization, and rounding commutes
// with clamps to integral bounds, so the same value is
//
//   q = roundeven(clamp(fma(f, A[c], B[c]), lo, hi)); fptosi
//
// with A = wscale * scale * inv and B = bias * inv + zp computed from
// per-channel values only (the AMX kernel computes them once per block).
// That is 8 vector operations per 16 values instead of 13. The rounding of
// the intermediate products differs in the last bit, so a value within an
// ulp of a rounding tie may land one step away; only the quantizations that
// static int8's lowering marks (kRequantAttr) are rewritten, never the
// QDQ/QLinear lowerings that must round exactly as ONNX does.
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/Common/ChannelInvariance.h"
#include "kiln/Codegen/Common/Passes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

namespace mlir::kiln {
#define GEN_PASS_DEF_FOLDREQUANTIZATIONPASS
#include "kiln/Codegen/Common/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using mlir::kiln::floatConstant;
using mlir::kiln::isPerChannel;

namespace {
/// `v` as base * scale + offset, following multiplications by, and additions
/// and subtractions of, per-channel values. Null scale or offset: 1 or 0.
struct Affine {
  Value base, scale, offset;
};

Affine affineOf(OpBuilder &b, linalg::GenericOp g, Value v,
                llvm::DenseMap<Value, bool> &memo) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != &g.getRegion().front() ||
      !isa<arith::MulFOp, arith::AddFOp, arith::SubFOp>(def))
    return {v, Value(), Value()};
  Value lhs = def->getOperand(0), rhs = def->getOperand(1);
  bool lc = isPerChannel(g, lhs, memo), rc = isPerChannel(g, rhs, memo);
  if (lc == rc)
    return {v, Value(), Value()};
  Value x = lc ? rhs : lhs, c = lc ? lhs : rhs;
  Affine a = affineOf(b, g, x, memo);
  Location loc = def->getLoc();
  auto mul = [&](Value p, Value q) -> Value {
    return p ? arith::MulFOp::create(b, loc, p, q).getResult() : q;
  };
  if (isa<arith::MulFOp>(def))
    return {a.base, mul(a.scale, c), a.offset ? mul(a.offset, c) : Value()};
  if (isa<arith::AddFOp>(def))
    return {a.base, a.scale,
            a.offset ? arith::AddFOp::create(b, loc, a.offset, c).getResult()
                     : c};
  // subf: x - c, or c - x.
  if (!lc)
    return {a.base, a.scale,
            a.offset ? arith::SubFOp::create(b, loc, a.offset, c).getResult()
                     : arith::NegFOp::create(b, loc, c).getResult()};
  Value minusOne = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(-1.0));
  return {a.base, mul(a.scale, minusOne),
          a.offset ? arith::SubFOp::create(b, loc, c, a.offset).getResult()
                   : c};
}

/// Folds the marked `round` of `g`'s body; false, changing nothing, when it
/// does not have the expected shape.
bool fold(linalg::GenericOp g, math::RoundEvenOp round) {
  // Before the rounding: clamps to constants, then the multiplication by
  // the positive inverse scale.
  auto scaled = round.getOperand().getDefiningOp<arith::MulFOp>();
  if (!scaled || !round.getOperand().hasOneUse())
    return false;
  std::optional<double> inv = floatConstant(scaled.getRhs());
  if (!inv || !(*inv > 0))
    return false;
  double lo = -INFINITY, hi = INFINITY;
  Value y = scaled.getLhs();
  // Composed clamps to constants are one clamp: [g(-inf), g(+inf)].
  SmallVector<std::pair<bool, double>> clamps; // (is max, bound), outer first
  while (Operation *def = y.getDefiningOp()) {
    if (!isa<arith::MaximumFOp, arith::MinimumFOp>(def) || !y.hasOneUse())
      break;
    std::optional<double> c = floatConstant(def->getOperand(1));
    if (!c)
      break;
    clamps.push_back({isa<arith::MaximumFOp>(def), *c});
    y = def->getOperand(0);
  }
  for (auto [isMax, c] : llvm::reverse(clamps)) {
    lo = isMax ? std::max(lo, c) : std::min(lo, c);
    hi = isMax ? std::max(hi, c) : std::min(hi, c);
  }
  // After it: + an integral zero point, clamps to integral constants, then
  // the conversion to an integer.
  double zp = 0, lo2 = -INFINITY, hi2 = INFINITY;
  Value end = round.getResult();
  while (end.hasOneUse()) {
    Operation *user = *end.getUsers().begin();
    std::optional<double> c;
    if (user->getNumOperands() == 2 && user->getOperand(0) == end)
      c = floatConstant(user->getOperand(1));
    if (!c || std::nearbyint(*c) != *c)
      break;
    if (isa<arith::AddFOp>(user)) {
      if (!std::isinf(lo2) || !std::isinf(hi2))
        break; // a shift after a clamp: not this shape
      zp += *c;
    } else if (isa<arith::MaximumFOp>(user)) {
      lo2 = std::max(lo2, *c);
      hi2 = std::max(hi2, *c);
    } else if (isa<arith::MinimumFOp>(user)) {
      lo2 = std::min(lo2, *c);
      hi2 = std::min(hi2, *c);
    } else {
      break;
    }
    end = user->getResult(0);
  }
  if (!end.hasOneUse() || !isa<arith::FPToSIOp>(*end.getUsers().begin()))
    return false;

  OpBuilder b(round);
  Location loc = round.getLoc();
  llvm::DenseMap<Value, bool> memo;
  Affine a = affineOf(b, g, y, memo);
  Value invC = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(*inv));
  Value zpC = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(zp));
  Value scale = a.scale ? arith::MulFOp::create(b, loc, a.scale, invC).getResult()
                        : invC;
  Value offset =
      a.offset ? math::FmaOp::create(b, loc, a.offset, invC, zpC).getResult()
               : zpC;
  Value w = math::FmaOp::create(b, loc, a.base, scale, offset);
  // clamp(y, lo, hi) * inv + zp, then the integral bounds after rounding.
  // maxnum/minnum against a constant are one instruction each on x86, where
  // NaN-propagating maximum/minimum take three; a NaN, which had no defined
  // code (the conversion to integer gave 0x80000000), now gets the lowest.
  double wlo = std::max(lo * *inv + zp, lo2), whi = std::min(hi * *inv + zp, hi2);
  if (!std::isinf(wlo))
    w = arith::MaxNumFOp::create(
        b, loc, w, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(wlo)));
  if (!std::isinf(whi))
    w = arith::MinNumFOp::create(
        b, loc, w, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(whi)));
  Value r = math::RoundEvenOp::create(b, loc, w);
  end.replaceAllUsesWith(r);
  return true;
}

struct FoldRequantizationPass
    : mlir::kiln::impl::FoldRequantizationPassBase<FoldRequantizationPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, math::RoundEvenOp>> marked;
    getOperation().walk([&](math::RoundEvenOp round) {
      if (!round->hasAttr(kiln::kRequantAttr))
        return;
      auto g = dyn_cast<linalg::GenericOp>(round->getParentOp());
      if (g && g.getNumLoops() > 0 && g.getNumReductionLoops() == 0)
        marked.push_back({g, round});
    });
    for (auto [g, round] : marked)
      fold(g, round);
  }
};
} // namespace
