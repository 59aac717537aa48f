//===- ShapeOps.cpp - verifiers and folders of the shape-input ops -*- C++ -*-===//
//
// kiln.guard and kiln.expand: the ops that let a graph
// input decide a shape the model declares statically (docs/ops.md, "Shape
// arguments given as graph inputs").
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// A guard whose condition is a constant of all true checks nothing.
struct EraseTrueGuard : OpRewritePattern<GuardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GuardOp op,
                                PatternRewriter &rewriter) const override {
    DenseElementsAttr cond;
    if (!matchPattern(op.getCondition(), m_Constant(&cond)))
      return rewriter.notifyMatchFailure(op, "condition is not a constant");
    if (!llvm::all_of(cond.getValues<bool>(), [](bool b) { return b; }))
      return rewriter.notifyMatchFailure(op, "condition may be false");
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void GuardOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<EraseTrueGuard>(context);
}

LogicalResult ExpandOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError() << "cannot change the element type from "
                         << in.getElementType() << " to "
                         << out.getElementType();
  if (in.getRank() > out.getRank())
    return emitOpError() << "cannot broadcast rank " << in.getRank()
                         << " to the smaller rank " << out.getRank();
  int64_t lead = out.getRank() - in.getRank();
  for (int64_t d = 0; d < in.getRank(); ++d) {
    int64_t i = in.getDimSize(d), o = out.getDimSize(lead + d);
    if (i != 1 && !ShapedType::isDynamic(i) && !ShapedType::isDynamic(o) &&
        i != o)
      return emitOpError() << "input dimension " << d << " of size " << i
                           << " does not broadcast to " << o;
  }
  return success();
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    if (dense.isSplat() && getType().hasStaticShape())
      return dense.resizeSplat(getType());
  return {};
}
