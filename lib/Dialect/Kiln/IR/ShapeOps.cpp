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

/// What a broadcast from `in` to `out` needs whatever the sizes: the same
/// element type and no fewer dimensions in the result.
static LogicalResult verifyBroadcastTypes(Operation *op, RankedTensorType in,
                                          RankedTensorType out) {
  if (failed(verifySameElementType(op, in, out)))
    return failure();
  if (in.getRank() > out.getRank())
    return op->emitOpError() << "cannot broadcast rank " << in.getRank()
                             << " to the smaller rank " << out.getRank();
  return success();
}

LogicalResult ExpandOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  if (failed(verifyBroadcastTypes(*this, in, out)))
    return failure();
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

//===----------------------------------------------------------------------===//
// Sizes computed in the graph
//===----------------------------------------------------------------------===//

LogicalResult ShapeOfOp::verify() {
  int64_t rank = getInput().getType().getRank();
  int64_t start = getStart(), end = getEnd();
  if (start < 0 || end < start || end > rank)
    return emitOpError() << "expects 0 <= start <= end <= " << rank
                         << ", got start " << start << " and end " << end;
  RankedTensorType out = getType();
  if (out.getRank() != 1 || out.getDimSize(0) != end - start)
    return emitOpError() << "expects a result of " << end - start
                         << " elements, got " << out;
  return success();
}

/// Sized ops have one `index` operand per dynamic result dimension.
static LogicalResult verifySizes(Operation *op, RankedTensorType out,
                                 size_t numSizes) {
  int64_t dynamic = llvm::count_if(out.getShape(), ShapedType::isDynamic);
  if ((int64_t)numSizes != dynamic)
    return op->emitOpError() << "expects one size per dynamic dimension of "
                             << out << " (" << dynamic << "), got "
                             << numSizes;
  return success();
}

LogicalResult SizedReshapeOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  if (failed(verifySameElementType(*this, in, out)))
    return failure();
  if (in.hasStaticShape() && out.hasStaticShape() &&
      in.getNumElements() != out.getNumElements())
    return emitOpError() << "cannot reshape " << in << " into " << out;
  return verifySizes(*this, out, getSizes().size());
}

LogicalResult SizedExpandOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  if (failed(verifyBroadcastTypes(*this, in, out)))
    return failure();
  int64_t lead = out.getRank() - in.getRank();
  for (int64_t d = 0; d < in.getRank(); ++d) {
    int64_t i = in.getDimSize(d), o = out.getDimSize(lead + d);
    if (i == 1 || i == o)
      continue;
    if (ShapedType::isDynamic(i) != ShapedType::isDynamic(o) ||
        !ShapedType::isDynamic(i))
      return emitOpError() << "input dimension " << d << " of " << in
                           << " neither broadcasts (1) nor keeps its size in "
                           << out;
  }
  return verifySizes(*this, out, getSizes().size());
}

LogicalResult SizedSliceOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  int64_t rank = in.getRank();
  if (out.getRank() != rank || (int64_t)getOffsets().size() != rank ||
      (int64_t)getSizes().size() != rank ||
      (int64_t)getStrides().size() != rank)
    return emitOpError() << "expects one offset, size and stride per "
                            "dimension of "
                         << in << " and a result of the same rank";
  if (in.getElementType() != out.getElementType())
    return emitOpError() << "cannot change the element type";
  for (int64_t d = 0; d < rank; ++d) {
    if (getStrides()[d] == 0)
      return emitOpError() << "expects non-zero strides";
    APInt c;
    if (!out.isDynamicDim(d) &&
        (!matchPattern(getSizes()[d], m_ConstantInt(&c)) ||
         c.getSExtValue() != out.getDimSize(d)))
      return emitOpError() << "result dimension " << d << " is static ("
                           << out.getDimSize(d)
                           << ") but its size operand is not that constant";
  }
  return success();
}
