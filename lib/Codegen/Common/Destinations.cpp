//===- Destinations.cpp - ops that write in place ---------------*- C++ -*-===//
#include "kiln/Codegen/Common/Destinations.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::kiln {

/// Whether `v` is available before `producer` once the pure ops that
/// compute it from such values (at most a short chain) move there; appends
/// those ops to `moves`, each after the ones it uses.
static bool availableBefore(Value v, Operation *producer,
                            SmallVectorImpl<Operation *> &moves,
                            int depth = 0) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner()->findAncestorOpInBlock(*producer) != nullptr;
  Operation *def = v.getDefiningOp();
  Operation *at = def->getBlock()->findAncestorOpInBlock(*producer);
  if (!at)
    return false;
  if (def->isBeforeInBlock(at) || llvm::is_contained(moves, def))
    return true;
  if (def == at || depth > 8 || !isMemoryEffectFree(def))
    return false;
  // Its operands, and the values its regions use from around it.
  llvm::SetVector<Value> used(def->operand_begin(), def->operand_end());
  getUsedValuesDefinedAbove(def->getRegions(), used);
  for (Value operand : used)
    if (!availableBefore(operand, producer, moves, depth + 1))
      return false;
  moves.push_back(def);
  return true;
}

linalg::FillOp fillOfEmptyBefore(RewriterBase &rewriter, Value v,
                                 Operation *producer) {
  auto fill = v.getDefiningOp<linalg::FillOp>();
  auto empty = fill ? fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>()
                    : tensor::EmptyOp();
  if (!fill || !empty)
    return nullptr;
  // The fill and its empty tensor move above the producer: its run-time
  // sizes (symbolic dimensions, a padded height `h + 2`) and a run-time
  // value must be known there.
  SmallVector<Operation *> moves;
  for (Value size : empty.getDynamicSizes())
    if (!availableBefore(size, producer, moves))
      return nullptr;
  Value value = fill.getInputs()[0];
  if (!value.getDefiningOp<arith::ConstantOp>() &&
      !availableBefore(value, producer, moves))
    return nullptr;
  for (Operation *op : moves)
    rewriter.moveOpBefore(op, op->getBlock()->findAncestorOpInBlock(*producer));
  return fill;
}

bool moveAboveProducer(RewriterBase &rewriter, ValueRange values,
                       Operation *producer) {
  SmallVector<Operation *> moves;
  for (Value v : values)
    if (!availableBefore(v, producer, moves))
      return false;
  for (Operation *op : moves)
    rewriter.moveOpBefore(op, op->getBlock()->findAncestorOpInBlock(*producer));
  return true;
}

Value cloneFillBefore(RewriterBase &rewriter, linalg::FillOp fill,
                      Operation *before) {
  rewriter.setInsertionPoint(before);
  IRMapping map;
  if (Operation *constant =
          fill.getInputs()[0].getDefiningOp<arith::ConstantOp>())
    rewriter.clone(*constant, map);
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
  // The view takes the init's sizes: an empty tensor (overwrittenEmptyInit)
  // made above `producer`, so its run-time sizes are known there too, and
  // a group of several run-time sizes cannot be inferred from the slice.
  if (!groups.empty())
    newDest = tensor::ExpandShapeOp::create(
        rewriter, insert.getLoc(), init->get().getType(), newDest, groups,
        init->get().getDefiningOp<tensor::EmptyOp>().getMixedSizes());
  init->set(newDest);
  insert.getDestMutable().set(newFill);
}

} // namespace mlir::kiln
