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
      kiln::hoistInvariantSubsets(rewriter, loop);
    });
  }
};
} // namespace
