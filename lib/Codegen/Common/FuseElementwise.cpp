//===- FuseElementwise.cpp - elementwise chains in one loop nest -*- C++ -*-===//
#include "kiln/Codegen/Common/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "kiln/Codegen/Common/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// The most operations one fused loop body may hold. Past a few hundred the
/// body is one basic block whose LLVM code generation grows quadratically (a
/// chain of 2,000 elementwise nodes took 46 s), while splitting it costs one
/// store and load per element every 128 operations.
constexpr size_t kMaxFusedBodyOps = 128;

size_t bodyOps(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp ? linalgOp.getBlock()->getOperations().size() : 0;
}

/// Fuse a producer into its only user, unless that user reduces: a producer
/// inside a reduction is evaluated once per reduction step (an erf inside a
/// matmul runs K times per output); and unless the fused body would grow past
/// kMaxFusedBodyOps.
bool shouldFuse(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
  return producer && producer->hasOneUse() && consumer &&
         consumer.getNumReductionLoops() == 0 &&
         bodyOps(producer) + bodyOps(consumer) <= kMaxFusedBodyOps;
}

struct FuseElementwisePass
    : mlir::kiln::impl::FuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuse);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, shouldFuse);
    // A run-time size read off a reshape's result (tensor.dim of a
    // collapse_shape, for the consumer's init) is a second use that would
    // keep the reshape from fusing: read it off the source instead.
    memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
    // Not converging is no error: every rewrite leaves valid IR, at worst
    // less fused. Reshape folding by expansion and the dim resolution can
    // keep rewriting each other's results on run-time sizes (a fuzzed
    // graph of symbolic Transposes and Reshapes), and the pass then failed
    // without a diagnostic, which the compile reported as a crash.
    GreedyRewriteConfig config;
    config.setMaxIterations(32);
    (void)applyPatternsGreedily(getOperation(), std::move(patterns), config);
  }
};
} // namespace
