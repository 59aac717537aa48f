//===- FuseElementwise.cpp - elementwise chains in one loop nest -*- C++ -*-===//
#include "kiln/Codegen/Common/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "kiln/Codegen/Common/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// Fuse a producer into its only user, unless that user reduces: a producer
/// inside a reduction is evaluated once per reduction step (an erf inside a
/// matmul runs K times per output).
bool shouldFuse(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
  return producer && producer->hasOneUse() && consumer &&
         consumer.getNumReductionLoops() == 0;
}

struct FuseElementwisePass
    : mlir::kiln::impl::FuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuse);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, shouldFuse);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
