//===- FuseLayerNorm.cpp - written-out LayerNorm to kiln.layer_norm -*- C++ -*-===//
//
// Exporters before opset 17 (and Paddle2ONNX at any opset) write layer
// normalization out as nodes:
//
//   m = ReduceMean(x, trailing axes)       d = x - m
//   v = ReduceMean(d^2 | d*d, same axes)   s = Sqrt(v + eps) | Pow(v + eps, 0.5)
//   y = d / s  [* gamma]  [+ beta]
//
// which runs as two reductions and a string of elementwise passes over the
// tensor. This pass rewrites the chain into one kiln.layer_norm (the same
// two-pass kernel as ONNX's LayerNormalization). It matches only what
// computes exactly that: the reductions over the same trailing axes with
// kept dimensions, a scalar epsilon, the centred value used by nothing but
// the square and the division, and gamma/beta shaped like the normalized
// dimensions.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_FUSELAYERNORMPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// The value of a constant splat float (a scalar or any one-value tensor).
std::optional<double> splatValue(Value v) {
  auto cst = v.getDefiningOp<ConstantOp>();
  if (!cst)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
  if (!dense || !dense.isSplat() || !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

/// The first reduced axis when `r` keeps dimensions and reduces the trailing
/// axes of a static f32 tensor, else nullopt.
std::optional<int64_t> trailingAxis(ReduceMeanOp r) {
  auto t = dyn_cast<RankedTensorType>(r.getInput().getType());
  ArrayRef<int64_t> axes = r.getAxes();
  if (!t || !t.hasStaticShape() || !t.getElementType().isF32() ||
      !r.getKeepdims() || axes.empty())
    return std::nullopt;
  int64_t first = t.getRank() - (int64_t)axes.size();
  for (auto [i, a] : llvm::enumerate(axes))
    if (a != first + (int64_t)i)
      return std::nullopt;
  return first;
}

/// `v` is shaped exactly like the dimensions `axis..` of `x`.
bool shapedLikeTrailing(Value v, RankedTensorType x, int64_t axis) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.getElementType() == x.getElementType() &&
         t.getShape() == x.getShape().drop_front(axis);
}

struct FuseLayerNorm : OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DivOp div,
                                PatternRewriter &rewriter) const override {
    auto fail = [&](const char *why) {
      return rewriter.notifyMatchFailure(div, why);
    };
    Value d = div.getLhs();
    auto sub = d.getDefiningOp<SubOp>();
    auto mean = sub ? sub.getRhs().getDefiningOp<ReduceMeanOp>() : nullptr;
    if (!mean || mean.getInput() != sub.getLhs())
      return fail("numerator is not x - mean(x)");
    Value x = sub.getLhs();
    auto xType = cast<RankedTensorType>(x.getType());
    std::optional<int64_t> axis = trailingAxis(mean);
    if (!axis || d.getType() != xType || div.getType() != xType)
      return fail("not a mean over trailing axes of a static f32 tensor");

    // The denominator: sqrt(var + eps) or (var + eps)^0.5.
    Value varEps;
    if (auto sqrt = div.getRhs().getDefiningOp<SqrtOp>())
      varEps = sqrt.getInput();
    else if (auto pow = div.getRhs().getDefiningOp<PowOp>();
             pow && splatValue(pow.getRhs()) == 0.5)
      varEps = pow.getLhs();
    auto add = varEps ? varEps.getDefiningOp<AddOp>() : nullptr;
    if (!add)
      return fail("denominator is not sqrt(var + eps)");
    std::optional<double> eps = splatValue(add.getRhs());
    Value var = add.getLhs();
    if (!eps) {
      eps = splatValue(add.getLhs());
      var = add.getRhs();
    }
    auto varMean = var.getDefiningOp<ReduceMeanOp>();
    if (!eps || *eps < 0 || !varMean || trailingAxis(varMean) != axis ||
        add.getType() != var.getType())
      return fail("no scalar epsilon added to a mean over the same axes");
    Operation *square = varMean.getInput().getDefiningOp();
    bool squares =
        (isa_and_nonnull<PowOp>(square) && square->getOperand(0) == d &&
         splatValue(square->getOperand(1)) == 2.0) ||
        (isa_and_nonnull<MulOp>(square) && square->getOperand(0) == d &&
         square->getOperand(1) == d);
    if (!squares)
      return fail("variance is not the mean of (x - mean)^2");
    for (Operation *user : d.getUsers())
      if (user != square && user != div)
        return fail("x - mean is used outside the normalization");

    // The affine part, when there is one: * gamma, then + beta. A gamma of
    // ones is gone by now (x * 1 folds), but beta stays (x + 0 is not x
    // for x = -0): + beta may follow the division directly.
    Operation *root = div;
    Value scale, bias;
    auto other = [](Operation *op, Value v) {
      return op->getOperand(0) == v ? op->getOperand(1) : op->getOperand(0);
    };
    auto shiftAfter = [&](Operation *op) {
      if (op->hasOneUse())
        if (auto shift = dyn_cast<AddOp>(*op->user_begin());
            shift &&
            shapedLikeTrailing(other(shift, op->getResult(0)), xType, *axis) &&
            shift.getType() == xType) {
          bias = other(shift, op->getResult(0));
          root = shift;
        }
    };
    if (div->hasOneUse())
      if (auto mul = dyn_cast<MulOp>(*div->user_begin());
          mul && shapedLikeTrailing(other(mul, div), xType, *axis) &&
          mul.getType() == xType) {
        scale = other(mul, div);
        root = mul;
        shiftAfter(mul);
      }
    if (!scale)
      shiftAfter(div);
    rewriter.setInsertionPoint(root);
    Location loc = root->getLoc();
    if (!scale) {
      auto type = RankedTensorType::get(xType.getShape().drop_front(*axis),
                                        xType.getElementType());
      scale = ConstantOp::create(rewriter, loc, type,
                                 DenseElementsAttr::get(type, 1.0f));
    }
    Value fused = LayerNormOp::create(
        rewriter, loc, xType, x, scale, bias,
        rewriter.getI64IntegerAttr(*axis),
        rewriter.getF32FloatAttr((float)*eps), UnitAttr());
    rewriter.replaceOp(root, fused);
    return success();
  }
};

struct FuseLayerNormPass
    : mlir::kiln::impl::FuseLayerNormPassBase<FuseLayerNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseLayerNorm>(&getContext());
    // Fusing is an optimization and every rewrite leaves valid IR: a graph
    // that keeps offering matches past the driver's limit is compiled as far
    // as it got, not failed without a diagnostic.
    (void)applyPatternsGreedily(getOperation(), std::move(patterns));
  }
};
} // namespace
