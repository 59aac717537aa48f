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
      // A slice of an empty tensor is an empty tensor of the slice's type.
      // An op that writes into such a slice and is then inserted into
      // another tensor at the same place (a concatenation's producer,
      // after the split below gave the insert an empty of its own) is
      // then found by eliminate-empty-tensors and written in place; a slice
      // hides it, and bufferization copied the result (a quarter of every
      // SqueezeNet concatenation).
      for (OpOperand &use : llvm::make_early_inc_range(op->getUses())) {
        auto slice = dyn_cast<tensor::ExtractSliceOp>(use.getOwner());
        if (!slice || !slice.getType().hasStaticShape())
          continue;
        b.setInsertionPoint(slice);
        Value fresh = tensor::EmptyOp::create(b, slice.getLoc(),
                                              slice.getType().getShape(),
                                              slice.getType().getElementType());
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
      for (OpOperand *use : uses) {
        b.setInsertionPoint(use->getOwner());
        use->set(b.clone(*op)->getResult(0));
      }
      op->erase();
    }
  }
};
} // namespace
