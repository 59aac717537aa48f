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
bool isRuntimeTileLoop(Operation *op) {
  auto loop = dyn_cast<scf::ForOp>(op);
  return loop && !getConstantIntValue(loop.getUpperBound()) &&
         !loop.getBody()->getOps<scf::ForOp>().empty();
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
      if (!kiln::isRuntimeTileLoop(loop))
        (void)hoistLoopInvariantSubsets(rewriter, loop);
    });
  }
};
} // namespace
