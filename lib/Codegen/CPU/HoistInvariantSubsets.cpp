//===- HoistInvariantSubsets.cpp - invariant tiles out of loops -*- C++ -*-===//
#include "Utils.h"
#include "kiln/Codegen/CPU/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_HOISTINVARIANTSUBSETSPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
// A loop's subsets are matched through the loops its iter_args feed, and
// each pair whose offsets depend on run-time bounds costs a Presburger
// emptiness test: a batched product's tile nest over two symbolic sizes spent
// 6 s there. No such slice can leave a loop whose tiles start at run-time
// offsets, and the reduction loops whose accumulators do leave are static.
bool holdsRuntimeTileLoop(Operation *op) {
  if (!isa<scf::ForOp>(op))
    return false;
  return op
      ->walk([](scf::ForOp loop) {
        return !getConstantIntValue(loop.getUpperBound()) &&
                       !loop.getBody()->getOps<scf::ForOp>().empty()
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether `user` of a loop's iter_arg may be one side of a subset that
/// leaves the loop: not a slice or vector transfer whose position reads a
/// value of the loop (its induction variable, a tile offset computed in it).
bool mayBeInvariantSubset(Operation *user, Region &body) {
  auto inside = [&](Value v) { return body.isAncestor(v.getParentRegion()); };
  SmallVector<Value> position;
  if (auto slice = dyn_cast<OffsetSizeAndStrideOpInterface>(user)) {
    if (!isa<tensor::ExtractSliceOp, tensor::InsertSliceOp>(user))
      return true;
    llvm::append_range(position, slice.getOffsets());
    llvm::append_range(position, slice.getSizes());
    llvm::append_range(position, slice.getStrides());
  } else if (auto read = dyn_cast<vector::TransferReadOp>(user)) {
    llvm::append_range(position, read.getIndices());
  } else if (auto write = dyn_cast<vector::TransferWriteOp>(user)) {
    llvm::append_range(position, write.getIndices());
  } else {
    return true; // an inner loop's init, a yield: matched further in
  }
  return llvm::none_of(position, inside);
}

/// Whether `op` reads one element of a tensor defined outside `loop`, at
/// constant positions within its static shape: a run-time scale or zero
/// point that every iteration reads again (a `tensor.extract`, or a
/// `vector.transfer_read` whose lanes all take that element). Tensors do not
/// change, so the read may leave the loop; being in bounds, it reads what it
/// would have read even when the loop runs no iteration.
bool isInvariantElementRead(Operation *op, LoopLikeOpInterface loop) {
  if (!llvm::all_of(op->getOperands(),
                    [&](Value v) { return loop.isDefinedOutsideOfLoop(v); }))
    return false;
  Value source;
  ValueRange indices;
  if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
    source = extract.getTensor();
    indices = extract.getIndices();
  } else if (auto read = dyn_cast<vector::TransferReadOp>(op)) {
    if (read.getMask() || read.getVectorType().isScalable())
      return false;
    // Every vector dimension either broadcasts or has one lane.
    for (auto [i, result] :
         llvm::enumerate(read.getPermutationMap().getResults()))
      if (isa<AffineDimExpr>(result) && read.getVectorType().getDimSize(i) != 1)
        return false;
    source = read.getBase();
    indices = read.getIndices();
  } else {
    return false;
  }
  auto type = dyn_cast<RankedTensorType>(source.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return false;
  for (auto [i, index] : llvm::enumerate(indices)) {
    std::optional<int64_t> c = getConstantIntValue(index);
    if (!c || *c < 0 || *c >= type.getDimSize(i))
      return false;
  }
  return true;
}

/// Moves the invariant element reads of `loop`'s body before it, as
/// scalars: a vector read becomes a `tensor.extract` before the loop and a
/// broadcast where it was. Out of an `scf.forall`, the scalar is what
/// kiln-outline-parallel-loops passes to the task (it passes no vectors).
void hoistInvariantReads(RewriterBase &rewriter, LoopLikeOpInterface loop) {
  for (Region *region : loop.getLoopRegions()) {
    SmallVector<Operation *> reads;
    for (Operation &op : region->getOps())
      if (isInvariantElementRead(&op, loop))
        reads.push_back(&op);
    for (Operation *op : reads) {
      auto read = dyn_cast<vector::TransferReadOp>(op);
      if (!read) {
        loop.moveOutOfLoop(op);
        continue;
      }
      rewriter.setInsertionPoint(loop);
      Value element = tensor::ExtractOp::create(
          rewriter, read.getLoc(), read.getBase(), read.getIndices());
      rewriter.setInsertionPoint(read);
      rewriter.replaceOpWithNewOp<vector::BroadcastOp>(
          read, read.getVectorType(), element);
    }
  }
}
} // namespace

namespace mlir::kiln {
void hoistInvariantSubsets(RewriterBase &rewriter, LoopLikeOpInterface loop) {
  if (holdsRuntimeTileLoop(loop))
    return;
  // Each candidate pair costs upstream a value-bounds comparison of its
  // positions, built from every loop around it: with run-time sizes a
  // Presburger emptiness test each, 7-18 ms per tile loop of ORT's fused
  // BERT layer. A loop none of whose iter_args' slices can be invariant
  // (every one read at the loop's own tile offset) is left alone; the
  // hoisting could not have moved anything out of it.
  Region *body =
      loop.getLoopRegions().empty() ? nullptr : loop.getLoopRegions().front();
  if (body && llvm::none_of(loop.getRegionIterArgs(), [&](BlockArgument arg) {
        return llvm::any_of(arg.getUsers(), [&](Operation *user) {
          return mayBeInvariantSubset(user, *body);
        });
      }))
    return;
  (void)hoistLoopInvariantSubsets(rewriter, loop);
}
} // namespace mlir::kiln

namespace {
struct HoistInvariantSubsetsPass
    : mlir::kiln::impl::HoistInvariantSubsetsPassBase<
          HoistInvariantSubsetsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Innermost loops first: what leaves an inner loop may leave the next.
    getOperation()->walk([&](LoopLikeOpInterface loop) {
      hoistInvariantReads(rewriter, loop);
      kiln::hoistInvariantSubsets(rewriter, loop);
    });
  }
};
} // namespace
