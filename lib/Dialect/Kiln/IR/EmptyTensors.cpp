//===- EmptyTensors.cpp - zero-element tensors fold away --------*- C++ -*-===//
//
// A tensor with a zero-size dimension holds no values, so any side-effect
// free op whose results are all empty computes nothing: its results become
// empty constants. A reduction over an empty input yields its identity at
// every position (sum 0, product 1, max -inf, min +inf, mean NaN as 0 / 0),
// as ONNX defines it, and empty parts of a concatenation drop out. Code
// generation then never sees a loop nest with a zero trip count feeding a
// reduction (tiling such nests divided by zero) or a slice at the end of its
// destination.
// These are dialect-wide canonicalization patterns, so every canonicalizer
// run of the graph pipeline applies them.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::kiln;

namespace {
bool isEmpty(Type t) {
  auto ranked = dyn_cast<RankedTensorType>(t);
  return ranked && ranked.hasStaticShape() && ranked.getNumElements() == 0;
}

/// A splat of `value` for `type` (int or float elements), or null. For
/// integers, an infinity is the type's largest or smallest value (an empty
/// ReduceMin or ReduceMax), and NaN has no value.
DenseElementsAttr splat(RankedTensorType type, double value) {
  Type elt = type.getElementType();
  if (auto f = dyn_cast<FloatType>(elt)) {
    APFloat v(value);
    bool lost = false;
    v.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    return DenseElementsAttr::get(type, v);
  }
  auto i = dyn_cast<IntegerType>(elt);
  if (!i || std::isnan(value))
    return {};
  unsigned width = i.getWidth();
  APInt v;
  if (std::isinf(value) && value > 0)
    v = i.isUnsigned() ? APInt::getMaxValue(width)
                       : APInt::getSignedMaxValue(width);
  else if (std::isinf(value))
    v = i.isUnsigned() ? APInt::getMinValue(width)
                       : APInt::getSignedMinValue(width);
  else
    v = APInt(width, (uint64_t)(int64_t)value, /*isSigned=*/true);
  return DenseElementsAttr::get(type, v);
}

/// Any side-effect free kiln op whose results all hold no elements.
struct FoldEmptyResults final : RewritePattern {
  FoldEmptyResults(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<KilnDialect>(op->getDialect()) || isa<ConstantOp>(op) ||
        op->getNumResults() == 0 || op->getNumRegions() != 0 ||
        !isMemoryEffectFree(op))
      return failure();
    SmallVector<Value> empties;
    for (Value r : op->getResults()) {
      if (!isEmpty(r.getType()))
        return failure();
      DenseElementsAttr value =
          splat(cast<RankedTensorType>(r.getType()), 0.0);
      if (!value)
        return failure();
      empties.push_back(
          ConstantOp::create(rewriter, op->getLoc(), r.getType(), value));
    }
    rewriter.replaceOp(op, empties);
    return success();
  }
};

/// Empty parts of a concatenation add nothing; the one part left is the
/// result itself.
struct DropEmptyConcatParts final : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> kept;
    for (Value in : op.getInputs())
      if (!isEmpty(in.getType()))
        kept.push_back(in);
    if (kept.size() == op.getInputs().size() || kept.empty())
      return failure(); // all kept, or all empty (FoldEmptyResults)
    if (kept.size() == 1 && kept.front().getType() == op.getType()) {
      rewriter.replaceOp(op, kept.front());
      return success();
    }
    rewriter.modifyOpInPlace(op, [&] { op.getInputsMutable().assign(kept); });
    return success();
  }
};

/// A reduction of an empty input to a non-empty result: the identity.
template <typename ReduceOp>
struct FoldEmptyReduction final : OpRewritePattern<ReduceOp> {
  FoldEmptyReduction(MLIRContext *ctx, double identity)
      : OpRewritePattern<ReduceOp>(ctx, /*benefit=*/2), identity(identity) {}

  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!isEmpty(op.getInput().getType()) || !type || !type.hasStaticShape() ||
        type.getNumElements() == 0)
      return failure();
    DenseElementsAttr value = splat(type, identity);
    if (!value)
      return failure();
    rewriter.replaceOpWithNewOp<ConstantOp>(op, type, value);
    return success();
  }

  double identity;
};
} // namespace

void KilnDialect::getCanonicalizationPatterns(
    RewritePatternSet &results) const {
  MLIRContext *ctx = getContext();
  double inf = std::numeric_limits<double>::infinity();
  results.add<FoldEmptyResults, DropEmptyConcatParts>(ctx);
  results.add<FoldEmptyReduction<ReduceSumOp>>(ctx, 0.0);
  results.add<FoldEmptyReduction<ReduceProdOp>>(ctx, 1.0);
  results.add<FoldEmptyReduction<ReduceMaxOp>>(ctx, -inf);
  results.add<FoldEmptyReduction<ReduceMinOp>>(ctx, inf);
  results.add<FoldEmptyReduction<ReduceMeanOp>>(
      ctx, std::numeric_limits<double>::quiet_NaN());
}
