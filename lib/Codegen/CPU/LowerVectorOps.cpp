//===- LowerVectorOps.cpp - vector and math lowering for the CPU -*- C++ -*-===//
#include "kiln/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_SPLITEMPTYTENSORSPASS
#define GEN_PASS_DEF_LOWERVECTOROPSPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
struct LowerVectorOpsPass
    : mlir::kiln::impl::LowerVectorOpsPassBase<LowerVectorOpsPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    // Contractions of a register tile become broadcast-FMA outer products.
    vector::populateVectorContractLoweringPatterns(
        patterns, vector::VectorContractLowering::OuterProduct);
    vector::populateVectorOuterProductLoweringPatterns(patterns);
    // The outer products take single elements of a loaded input row; loading
    // each element on its own lets it become a broadcast straight from memory
    // (a load-port uop) instead of a vector load plus in-register shuffles
    // and broadcasts, which compete with the FMAs for the vector pipes.
    vector::populateScalarVectorTransferLoweringPatterns(
        patterns, /*benefit=*/1, /*allowMultipleUses=*/true);
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerParallel);
    vector::populateVectorTransposeLoweringPatterns(
        patterns, vector::VectorTransposeLowering::EltWise);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorBroadcastLoweringPatterns(patterns);
    // exp, tanh, erf, log... as polynomials that stay in vector registers.
    populateMathPolynomialApproximationPatterns(patterns);
    vector::ContractionOp::getCanonicalizationPatterns(patterns, ctx);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

struct SplitEmptyTensorsPass
    : mlir::kiln::impl::SplitEmptyTensorsPassBase<SplitEmptyTensorsPass> {
  void runOnOperation() override {
    SmallVector<tensor::EmptyOp> empties;
    getOperation().walk([&](tensor::EmptyOp op) { empties.push_back(op); });
    OpBuilder b(&getContext());
    for (tensor::EmptyOp op : empties) {
      // Every use gets a fresh empty right before the op that fills it.
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : op->getUses())
        uses.push_back(&use);
      if (uses.size() == 1 &&
          uses.front()->getOwner()->getBlock() == op->getBlock()) {
        op->moveBefore(uses.front()->getOwner());
        continue;
      }
      for (OpOperand *use : uses) {
        b.setInsertionPoint(use->getOwner());
        use->set(b.clone(*op)->getResult(0));
      }
      op->erase();
    }
  }
};
} // namespace
