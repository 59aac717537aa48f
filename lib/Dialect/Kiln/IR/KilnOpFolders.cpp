//===- KilnOpFolders.cpp - folders and canonicalizations --------*- C++ -*-===//
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"

#include "mlir/Dialect/CommonFolders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::kiln;

// Folding a large constant through an op would copy its bytes into a new
// attribute; beyond this many elements we leave the work to the generated code.
static constexpr int64_t kMaxFoldElements = 1 << 16;

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult IdentityOp::fold(FoldAdaptor) { return getInput(); }

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    if (getType().hasStaticShape() &&
        (dense.isSplat() || dense.getNumElements() <= kMaxFoldElements))
      return dense.reshape(getType());
  return {};
}

namespace {
/// reshape(reshape(x)) -> reshape(x)
struct ComposeReshapes : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ReshapeOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "input is not a reshape");
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), inner.getInput());
    return success();
  }
};

/// transpose(transpose(x, p1), p2) -> transpose(x, p1 o p2)
struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<TransposeOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "input is not a transpose");
    SmallVector<int64_t> perm;
    for (int64_t p : op.getPerm())
      perm.push_back(inner.getPerm()[p]);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(), inner.getInput(),
                                             perm);
    return success();
  }
};

/// clip(x, 0, +inf) -> relu(x)
struct ClipToRelu : OpRewritePattern<ClipOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ClipOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getMin().isZero() || !op.getMax().isInfinity() ||
        op.getMax().isNegative())
      return rewriter.notifyMatchFailure(op, "not a [0, +inf) clip");
    rewriter.replaceOpWithNewOp<ReluOp>(op, op.getInput());
    return success();
  }
};

/// global_avg_pool(x) -> reduce_mean(x, axes = 2.., keepdims)
struct GlobalAvgPoolToReduceMean : OpRewritePattern<GlobalAvgPoolOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GlobalAvgPoolOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<int64_t> axes;
    for (int64_t d = 2; d < op.getInput().getType().getRank(); ++d)
      axes.push_back(d);
    rewriter.replaceOpWithNewOp<ReduceMeanOp>(op, op.getType(), op.getInput(),
                                              axes, /*keepdims=*/true);
    return success();
  }
};
} // namespace

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<ComposeReshapes>(context);
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  ArrayRef<int64_t> perm = getPerm();
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != (int64_t)i)
      return {};
  return getInput();
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<ComposeTransposes>(context);
}

OpFoldResult PadOp::fold(FoldAdaptor) {
  if (llvm::all_of(getPads(), [](int64_t p) { return p == 0; }) &&
      getInput().getType() == getType())
    return getInput();
  return {};
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  return {};
}

void ClipOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<ClipToRelu>(context);
}

void GlobalAvgPoolOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                  MLIRContext *context) {
  results.add<GlobalAvgPoolToReduceMean>(context);
}

//===----------------------------------------------------------------------===//
// Binary elementwise: constant folding of same-shape or splat operands, and
// the identities x + 0, x - 0, x * 1, x / 1 when no broadcast is involved.
//===----------------------------------------------------------------------===//

template <typename Fn>
static OpFoldResult foldBinary(Operation *op, Attribute lhs, Attribute rhs,
                               Fn &&fn) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  auto l = dyn_cast_or_null<DenseElementsAttr>(lhs);
  auto r = dyn_cast_or_null<DenseElementsAttr>(rhs);
  if (!l || !r || !type.hasStaticShape())
    return {};
  bool small = (l.isSplat() || l.getNumElements() <= kMaxFoldElements) &&
               (r.isSplat() || r.getNumElements() <= kMaxFoldElements);
  if (!small)
    return {};
  if (l.isSplat() && r.isSplat())
    return DenseElementsAttr::get(
        type, fn(l.getSplatValue<APFloat>(), r.getSplatValue<APFloat>()));
  if (l.getType() != type || r.getType() != type)
    return {};
  SmallVector<APFloat> values;
  auto li = l.getValues<APFloat>(), ri = r.getValues<APFloat>();
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i)
    values.push_back(fn(li[l.isSplat() ? 0 : i], ri[r.isSplat() ? 0 : i]));
  return DenseElementsAttr::get(type, values);
}

/// Whether `attr` is a splat of exactly `value` (with its sign: x + 0.0 is
/// not x when x is -0.0, but x + (-0.0) and x - 0.0 are).
static bool isSplatOf(Attribute attr, double value) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || !dense.isSplat())
    return false;
  APFloat v = dense.getSplatValue<APFloat>();
  return v.convertToDouble() == value && v.isNegative() == std::signbit(value);
}

OpFoldResult AddOp::fold(FoldAdaptor a) {
  if (isSplatOf(a.getRhs(), -0.0) && getLhs().getType() == getType())
    return getLhs();
  return foldBinary(*this, a.getLhs(), a.getRhs(),
                    [](APFloat x, const APFloat &y) { return x + y; });
}
OpFoldResult SubOp::fold(FoldAdaptor a) {
  if (isSplatOf(a.getRhs(), 0.0) && getLhs().getType() == getType())
    return getLhs();
  return foldBinary(*this, a.getLhs(), a.getRhs(),
                    [](APFloat x, const APFloat &y) { return x - y; });
}
OpFoldResult MulOp::fold(FoldAdaptor a) {
  if (isSplatOf(a.getRhs(), 1.0) && getLhs().getType() == getType())
    return getLhs();
  return foldBinary(*this, a.getLhs(), a.getRhs(),
                    [](APFloat x, const APFloat &y) { return x * y; });
}
OpFoldResult DivOp::fold(FoldAdaptor a) {
  if (isSplatOf(a.getRhs(), 1.0) && getLhs().getType() == getType())
    return getLhs();
  return foldBinary(*this, a.getLhs(), a.getRhs(),
                    [](APFloat x, const APFloat &y) { return x / y; });
}
OpFoldResult PowOp::fold(FoldAdaptor a) {
  if (isSplatOf(a.getRhs(), 1.0) && getLhs().getType() == getType())
    return getLhs();
  return {};
}
OpFoldResult MaxOp::fold(FoldAdaptor a) {
  return foldBinary(*this, a.getLhs(), a.getRhs(),
                    [](APFloat x, const APFloat &y) { return llvm::maxnum(x, y); });
}
OpFoldResult MinOp::fold(FoldAdaptor a) {
  return foldBinary(*this, a.getLhs(), a.getRhs(),
                    [](APFloat x, const APFloat &y) { return llvm::minnum(x, y); });
}
