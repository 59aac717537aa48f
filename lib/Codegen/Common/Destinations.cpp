//===- Destinations.cpp - ops that write in place ---------------*- C++ -*-===//
#include "kiln/Codegen/Common/Destinations.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::kiln {

/// The fill of a static empty tensor with a constant that defines `v`, or
/// null.
linalg::FillOp constantFillOfEmpty(Value v) {
  auto fill = v.getDefiningOp<linalg::FillOp>();
  auto empty = fill ? fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>()
                    : tensor::EmptyOp();
  if (!fill || !empty || !empty.getDynamicSizes().empty() ||
      !fill.getInputs()[0].getDefiningOp<arith::ConstantOp>())
    return nullptr;
  return fill;
}

/// A clone of `fill` (see constantFillOfEmpty), of its empty tensor and of
/// its constant, created before `before`. Clones, so that the fill keeps
/// its marks (kUnreadPaddingAttr).
Value cloneFillBefore(RewriterBase &rewriter, linalg::FillOp fill,
                      Operation *before) {
  rewriter.setInsertionPoint(before);
  IRMapping map;
  rewriter.clone(*fill.getInputs()[0].getDefiningOp(), map);
  rewriter.clone(*fill.getOutputs()[0].getDefiningOp(), map);
  return rewriter.clone(*fill, map)->getResult(0);
}

/// Whether `use` is an init its op overwrites whole without reading it: a
/// linalg op's init its body never reads, or the tensor a loop marked
/// kOverwrittenOutsAttr carries (the int8 dot-product kernels).
bool isOverwrittenInit(OpOperand &use) {
  Operation *op = use.getOwner();
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return linalgOp.isDpsInit(&use) &&
           !linalgOp.payloadUsesValueFromOperand(&use);
  if (!op->hasAttr(kiln::kOverwrittenOutsAttr) || op->getNumResults() != 1)
    return false;
  if (auto forall = dyn_cast<scf::ForallOp>(op))
    return &use == &forall.getOutputsMutable()[0];
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return &use == &loop.getInitArgsMutable()[0];
  return false;
}

/// The one init of `op` (see isOverwrittenInit), when it is an empty
/// tensor and `op` has one result and is not a copy (the copies are what
/// the callers remove); null otherwise.
OpOperand *overwrittenEmptyInit(Operation *op) {
  if (!op || isa<linalg::CopyOp, linalg::FillOp>(op) ||
      op->getNumResults() != 1)
    return nullptr;
  OpOperand *init = nullptr;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    if (linalgOp.getNumDpsInits() == 1)
      init = linalgOp.getDpsInitOperand(0);
  } else if (auto forall = dyn_cast<scf::ForallOp>(op)) {
    init = &forall.getOutputsMutable()[0];
  } else if (auto loop = dyn_cast<scf::ForOp>(op)) {
    if (loop.getNumRegionIterArgs() == 1)
      init = &loop.getInitArgsMutable()[0];
  }
  return init && isOverwrittenInit(*init) &&
                 init->get().getDefiningOp<tensor::EmptyOp>()
             ? init
             : nullptr;
}

/// Points `insert` at a fresh clone of `fill` made above `producer` (CSE
/// may share one fill between two pads of the same shape), and starts
/// `init` (of `producer`) from the slice of that clone the insert writes,
/// seen through an expand_shape by `groups` when given.
void startFromInsertedSlice(RewriterBase &rewriter, linalg::FillOp fill,
                            Operation *producer, OpOperand *init,
                            tensor::InsertSliceOp insert,
                            ArrayRef<ReassociationIndices> groups) {
  Value newFill = cloneFillBefore(rewriter, fill, producer);
  Value newDest = tensor::ExtractSliceOp::create(
      rewriter, insert.getLoc(), insert.getSourceType(), newFill,
      insert.getMixedOffsets(), insert.getMixedSizes(),
      insert.getMixedStrides());
  if (!groups.empty())
    newDest = tensor::ExpandShapeOp::create(
        rewriter, insert.getLoc(), init->get().getType(), newDest, groups);
  init->set(newDest);
  insert.getDestMutable().set(newFill);
}

} // namespace mlir::kiln
