//===- SplitEmptyTensors.cpp - one tensor.empty per use ----------*- C++ -*-===//
#include "kiln/Codegen/Common/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_SPLITEMPTYTENSORSPASS
#include "kiln/Codegen/Common/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
struct SplitEmptyTensorsPass
    : mlir::kiln::impl::SplitEmptyTensorsPassBase<SplitEmptyTensorsPass> {
  void runOnOperation() override {
    SmallVector<tensor::EmptyOp> empties;
    getOperation().walk([&](tensor::EmptyOp op) { empties.push_back(op); });
    OpBuilder b(&getContext());
    for (tensor::EmptyOp op : empties) {
      // A slice of an empty tensor is an empty tensor of the slice's type.
      // An op that writes into such a slice and is then inserted into
      // another tensor at the same place (a concatenation's producer,
      // after the split below gave the insert an empty of its own) is
      // then found by eliminate-empty-tensors and written in place; a slice
      // hides it, and bufferization copied the result (a quarter of every
      // SqueezeNet concatenation). A slice of run-time size (a symbolic
      // dimension, docs/shapes.md) gives the empty tensor its sizes.
      for (OpOperand &use : llvm::make_early_inc_range(op->getUses())) {
        auto slice = dyn_cast<tensor::ExtractSliceOp>(use.getOwner());
        if (!slice)
          continue;
        RankedTensorType type = slice.getType();
        SmallVector<Value> dynamicSizes;
        if (!type.hasStaticShape()) {
          // The slice's dynamic sizes, in order, for the dimensions it
          // keeps (a rank-reducing slice drops unit ones).
          llvm::SmallBitVector dropped = slice.getDroppedDims();
          SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
          for (auto [i, size] : llvm::enumerate(sizes))
            if (!dropped.test(i))
              if (auto v = dyn_cast<Value>(size))
                dynamicSizes.push_back(v);
          if (dynamicSizes.size() != type.getNumDynamicDims())
            continue;
        }
        b.setInsertionPoint(slice);
        Value fresh = tensor::EmptyOp::create(b, slice.getLoc(),
                                              type.getShape(),
                                              type.getElementType(),
                                              dynamicSizes);
        slice.getResult().replaceAllUsesWith(fresh);
        slice.erase();
      }
      if (op->use_empty()) {
        op->erase();
        continue;
      }
      // Every use gets a fresh empty right before the op that fills it.
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : op->getUses())
        uses.push_back(&use);
      if (uses.size() == 1 &&
          uses.front()->getOwner()->getBlock() == op->getBlock()) {
        op->moveBefore(uses.front()->getOwner());
        continue;
      }
      // The uses inside the branches of one scf.if share one empty, made
      // before the if: each branch then writes the same buffer, which the
      // if's result is. An empty made in each branch became a buffer the
      // if yields out of its region, which the arena cannot hold (a Compress
      // of a single row, whose loop folds into an if whose other branch
      // yields the empty unchanged).
      DenseMap<Operation *, Value> ofBranch;
      for (OpOperand *use : uses) {
        Operation *top =
            op->getBlock()->findAncestorOpInBlock(*use->getOwner());
        if (top && top != use->getOwner() && isa<scf::IfOp>(top)) {
          Value &shared = ofBranch[top];
          if (!shared) {
            b.setInsertionPoint(top);
            shared = b.clone(*op)->getResult(0);
          }
          use->set(shared);
          continue;
        }
        b.setInsertionPoint(use->getOwner());
        use->set(b.clone(*op)->getResult(0));
      }
      op->erase();
    }
  }
};
} // namespace
