//===- SplitSharedDestinations.cpp - one tensor per insert ------*- C++ -*-===//
#include "kiln/Codegen/Common/Passes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_SPLITSHAREDDESTINATIONSPASS
#include "kiln/Codegen/Common/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Whether `v` is `root` or a slice or reshape of it (transitively).
bool derivesFrom(Value v, Value root) {
  while (v != root) {
    Operation *def = v.getDefiningOp();
    if (!isa_and_nonnull<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
                         tensor::CollapseShapeOp>(def))
      return false;
    v = def->getOperand(0);
  }
  return true;
}

/// `v` (derived from `root` by slices and reshapes) rebuilt on `newRoot`,
/// the clones inserted at `b`'s insertion point.
Value rebase(OpBuilder &b, Value v, Value root, Value newRoot) {
  if (v == root)
    return newRoot;
  Operation *def = v.getDefiningOp();
  Value src = rebase(b, def->getOperand(0), root, newRoot);
  IRMapping map;
  map.map(def->getOperand(0), src);
  return b.clone(*def, map)->getResult(0);
}

/// The destination operand that `v` was written into (through reshapes and
/// the results of destination-style ops) whose value derives from `root`.
OpOperand *rootedInit(Value v, Value root) {
  while (Operation *def = v.getDefiningOp()) {
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def)) {
      v = def->getOperand(0);
      continue;
    }
    auto dps = dyn_cast<DestinationStyleOpInterface>(def);
    if (!dps)
      return nullptr;
    OpOperand *init = dps.getTiedOpOperand(cast<OpResult>(v));
    if (!init)
      return nullptr;
    if (derivesFrom(init->get(), root))
      return init;
    v = init->get();
  }
  return nullptr;
}

/// CSE merges identical fills of one shape, and identical empty tensors
/// with the slices taken from them: the zero-padded rows of two int8 1x1
/// convolutions with the same K, the padded inputs or unfolded windows of
/// two 3x3 ones, the results of two concatenations of one shape that their
/// producers write in place. Every insert into the shared tensor but the
/// first then bufferizes as a copy of the whole tensor (serial memcpys
/// between the parallel loops). Each further insert gets a tensor of its
/// own (a clone of the fill and its empty tensor, or of the empty tensor),
/// created right before the op that writes its source, with the slices and
/// reshapes that op writes through rebuilt on it.
void splitSharedDestinations(RewriterBase &rewriter, func::FuncOp func) {
  int64_t distinct = 0;
  SmallVector<Operation *> roots;
  func.walk([&](Operation *op) {
    if (auto fill = dyn_cast<linalg::FillOp>(op)) {
      if (fill.hasPureTensorSemantics() &&
          fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
        roots.push_back(op);
    } else if (isa<tensor::EmptyOp>(op)) {
      roots.push_back(op);
    }
  });
  for (Operation *rootOp : roots) {
    Value root = rootOp->getResult(0);
    SmallVector<tensor::InsertSliceOp> inserts;
    for (Operation *user : rootOp->getUsers())
      if (auto insert = dyn_cast<tensor::InsertSliceOp>(user))
        if (insert.getDest() == root && insert->getBlock() == rootOp->getBlock())
          inserts.push_back(insert);
    if (inserts.size() < 2)
      continue;
    llvm::sort(inserts, [](tensor::InsertSliceOp a, tensor::InsertSliceOp b) {
      return a->isBeforeInBlock(b);
    });
    for (tensor::InsertSliceOp insert : llvm::drop_begin(inserts)) {
      OpOperand *init = rootedInit(insert.getSource(), root);
      Operation *first = insert;
      if (init && init->getOwner()->getBlock() == insert->getBlock())
        first = init->getOwner();
      else
        init = nullptr;
      rewriter.setInsertionPoint(first);
      IRMapping map;
      if (auto fill = dyn_cast<linalg::FillOp>(rootOp)) {
        Operation *empty = fill.getOutputs()[0].getDefiningOp();
        map.map(empty->getResult(0), rewriter.clone(*empty)->getResult(0));
      }
      Operation *clone = rewriter.clone(*rootOp, map);
      // Without an id of its own, CSE after this pass would merge the new
      // tensor with the shared one again (a fill is kept apart by the id
      // every padded tensor's fill gets after tiling).
      if (isa<tensor::EmptyOp>(clone))
        clone->setAttr(kDistinctEmptyAttr,
                       rewriter.getI64IntegerAttr(distinct++));
      Value fresh = clone->getResult(0);
      if (init)
        init->set(rebase(rewriter, init->get(), root, fresh));
      insert.getDestMutable().set(fresh);
    }
  }
}

struct SplitSharedDestinationsPass
    : mlir::kiln::impl::SplitSharedDestinationsPassBase<SplitSharedDestinationsPass> {
  using SplitSharedDestinationsPassBase::SplitSharedDestinationsPassBase;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    splitSharedDestinations(rewriter, getOperation());
  }
};
} // namespace
