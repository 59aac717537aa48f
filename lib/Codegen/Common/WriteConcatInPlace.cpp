//===- WriteConcatInPlace.cpp - concatenated parts written in place--*- C++ -*-===//
#include "kiln/Codegen/Common/Passes.h"
#include "kiln/Codegen/Common/Destinations.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_WRITECONCATINPLACEPASS
#include "kiln/Codegen/Common/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// A concatenation is lowered as a chain over one empty tensor E:
///   D0 = E; Di = insert_slice(copy(xi into extract_slice(Di-1)), Di-1).
/// When every xi comes from an elementwise generic that only the copy reads
/// (int8's dequantizing epilogues) or from an int8 kernel with its
/// requantization (a loop marked kOverwrittenOutsAttr), each writes
/// straight into its slice instead and the copies, a pass over the whole
/// result, disappear: a fresh E goes above the first producer, each slice
/// right before its producer and each insert right after it. The producers
/// must run in the order of the concatenation.
void writeConcatInPlace(RewriterBase &rewriter, func::FuncOp func) {
  struct Link {
    tensor::ExtractSliceOp slice;
    linalg::CopyOp copy;
    tensor::InsertSliceOp insert;
    Operation *producer;
    OpOperand *init;
  };
  // The link whose copy is `copy`, writing a slice of `dest`, if it is one.
  // CSE may have merged identical slices of a shared empty tensor, so the
  // slice may have other users.
  auto linkAt = [](linalg::CopyOp copy, Value dest) -> std::optional<Link> {
    if (!copy || !copy.hasPureTensorSemantics() ||
        !copy->getResult(0).hasOneUse())
      return std::nullopt;
    auto slice = copy.getOutputs()[0].getDefiningOp<tensor::ExtractSliceOp>();
    auto insert =
        dyn_cast<tensor::InsertSliceOp>(*copy->getResult(0).getUsers().begin());
    if (!slice || slice.getSource() != dest || !insert ||
        insert.getDest() != dest ||
        slice.getStaticOffsets() != insert.getStaticOffsets() ||
        slice.getStaticSizes() != insert.getStaticSizes() ||
        !slice.hasUnitStride() || !insert.hasUnitStride() ||
        !slice.getOffsets().empty() || !insert.getOffsets().empty())
      return std::nullopt;
    Value src = copy.getInputs()[0];
    Operation *producer = src.getDefiningOp();
    OpOperand *init = overwrittenEmptyInit(producer);
    if (!init ||
        !(isa<linalg::GenericOp>(producer) ||
          producer->hasAttr(kiln::kOverwrittenOutsAttr)) ||
        !src.hasOneUse() || producer->getBlock() != copy->getBlock() ||
        slice.getType() != src.getType())
      return std::nullopt;
    return Link{slice, copy, insert, producer, init};
  };
  SmallVector<tensor::EmptyOp> empties;
  func.walk([&](tensor::EmptyOp op) {
    if (op.getDynamicSizes().empty())
      empties.push_back(op);
  });
  for (tensor::EmptyOp empty : empties) {
    // CSE may share one empty tensor between several concatenations: each
    // chain starts at a copy into a slice of it.
    SmallVector<linalg::CopyOp> starts;
    for (Operation *user : empty->getUsers())
      if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user))
        for (Operation *sliceUser : slice->getUsers())
          if (auto copy = dyn_cast<linalg::CopyOp>(sliceUser))
            starts.push_back(copy);
    for (linalg::CopyOp start : starts) {
      SmallVector<Link> chain;
      std::optional<Link> link = linkAt(start, empty.getResult());
      while (link) {
        chain.push_back(*link);
        Value dest = link->insert.getResult();
        // The next link reads dest through one slice (into its copy) and
        // one insert.
        linalg::CopyOp next;
        int uses = 0;
        for (Operation *user : dest.getUsers()) {
          ++uses;
          if (auto s = dyn_cast<tensor::ExtractSliceOp>(user))
            if (s->hasOneUse())
              next = dyn_cast<linalg::CopyOp>(*s->getUsers().begin());
        }
        link = uses == 2 ? linkAt(next, dest) : std::nullopt;
      }
      if (chain.size() < 2)
        continue;
      bool ordered = true;
      for (size_t i = 1; i < chain.size(); ++i)
        ordered &= chain[i - 1].producer->isBeforeInBlock(chain[i].producer);
      if (!ordered)
        continue;
      rewriter.setInsertionPoint(chain.front().producer);
      Value current = rewriter.clone(*empty)->getResult(0);
      for (Link &l : chain) {
        rewriter.setInsertionPoint(l.producer);
        auto slice = tensor::ExtractSliceOp::create(
            rewriter, l.slice.getLoc(), l.slice.getType(), current,
            l.slice.getMixedOffsets(), l.slice.getMixedSizes(),
            l.slice.getMixedStrides());
        l.init->set(slice);
        rewriter.setInsertionPointAfter(l.producer);
        current = tensor::InsertSliceOp::create(
            rewriter, l.insert.getLoc(), l.producer->getResult(0), current,
            l.insert.getMixedOffsets(), l.insert.getMixedSizes(),
            l.insert.getMixedStrides());
      }
      rewriter.replaceAllUsesWith(chain.back().insert.getResult(), current);
      for (Link &l : llvm::reverse(chain)) {
        rewriter.eraseOp(l.insert);
        rewriter.eraseOp(l.copy);
        if (l.slice->use_empty())
          rewriter.eraseOp(l.slice);
      }
    }
  }
}

struct WriteConcatInPlacePass
    : mlir::kiln::impl::WriteConcatInPlacePassBase<WriteConcatInPlacePass> {
  using WriteConcatInPlacePassBase::WriteConcatInPlacePassBase;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    writeConcatInPlace(rewriter, getOperation());
  }
};
} // namespace
