//===- HoistInvariantSubsets.cpp - invariant tiles out of loops -*- C++ -*-===//
#include "Utils.h"
#include "kiln/Codegen/CPU/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_HOISTINVARIANTSUBSETSPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace mlir::kiln {
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
} // namespace mlir::kiln

namespace {
struct HoistInvariantSubsetsPass
    : mlir::kiln::impl::HoistInvariantSubsetsPassBase<
          HoistInvariantSubsetsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Innermost loops first: what leaves an inner loop may leave the next.
    getOperation()->walk([&](LoopLikeOpInterface loop) {
      if (!kiln::holdsRuntimeTileLoop(loop))
        (void)hoistLoopInvariantSubsets(rewriter, loop);
    });
  }
};
} // namespace
