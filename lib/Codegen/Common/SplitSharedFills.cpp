//===- SplitSharedFills.cpp - one fill per reduction -------------*- C++ -*-===//
#include "kiln/Codegen/Common/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_SPLITSHAREDFILLSPASS
#include "kiln/Codegen/Common/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// CSE shares one zero-filled tensor between every matmul that starts from
/// zero; each consumer gets its own fill so that the fill can be fused into
/// the consumer's tiles (and its buffer need not live long).
void splitSharedFills(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<linalg::FillOp> fills;
  func.walk([&](linalg::FillOp op) { fills.push_back(op); });
  for (linalg::FillOp fill : fills) {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : fill->getResult(0).getUses())
      uses.push_back(&use);
    // A padded tensor (filled, its interior written through a slice and
    // inserted back) must stay one tensor: a second fill would be a second
    // buffer, and the insert a copy between the two.
    if (llvm::any_of(uses, [](OpOperand *use) {
          return isa<tensor::ExtractSliceOp, tensor::InsertSliceOp>(
              use->getOwner());
        }))
      continue;
    for (OpOperand *use : llvm::drop_begin(uses)) {
      rewriter.setInsertionPoint(use->getOwner());
      Operation *init = fill.getDpsInitOperand(0)->get().getDefiningOp();
      Operation *freshInit = isa_and_nonnull<tensor::EmptyOp>(init)
                                 ? rewriter.clone(*init)
                                 : nullptr;
      Operation *clone = rewriter.clone(*fill);
      if (freshInit)
        clone->setOperand(1, freshInit->getResult(0));
      use->set(clone->getResult(0));
    }
  }
}

struct SplitSharedFillsPass
    : mlir::kiln::impl::SplitSharedFillsPassBase<SplitSharedFillsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    splitSharedFills(rewriter, getOperation());
  }
};
} // namespace
