//===- WriteIntoDestinations.cpp - producers write into slices --*- C++ -*-===//
#include "kiln/Codegen/Common/Passes.h"
#include "kiln/Codegen/Common/Destinations.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_WRITEINTODESTINATIONSPASS
#include "kiln/Codegen/Common/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// A padded tensor is built as fill(padded) + copy(x into its interior
/// slice); when x comes from an elementwise op that only the copy reads
/// (the activation after a convolution, which then fuses as its epilogue),
/// that op writes straight into the interior slice instead: the copy, a
/// whole pass over the activation, disappears (MobileNetV2 pads every
/// depthwise convolution's input). The fill and slice move above the op.
/// The activation may have other readers (a U-Net's skip connection, a
/// residual add): they read the same values from the interior slice, and
/// bufferization keeps the padded buffer alive for them (the U-Net's copies
/// of its 320 x 320 x 64 activations into padded buffers went).
/// The slice may be seen through a reshape: static int8 pads the channels
/// of a 1x1 convolution's [pixels, C] rows to a multiple of 64, and copies
/// the NHWC activation in through an expand_shape of the slice (and a
/// collapse_shape of the result back).
void writeIntoCopyDestination(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<linalg::CopyOp> copies;
  func.walk([&](linalg::CopyOp op) { copies.push_back(op); });
  for (linalg::CopyOp copy : copies) {
    if (!copy.hasPureTensorSemantics() || !copy->getResult(0).hasOneUse())
      continue;
    Value src = copy.getInputs()[0];
    // An elementwise generic, a named op such as the transpose of an NCHW
    // model input in front of a padded stem, or an int8 kernel with its
    // requantization.
    Operation *producer = src.getDefiningOp();
    OpOperand *init = overwrittenEmptyInit(producer);
    // The destination, possibly an expand_shape of the slice, whose
    // result then goes back through the matching collapse_shape.
    Value dest = copy.getOutputs()[0];
    auto expand = dest.getDefiningOp<tensor::ExpandShapeOp>();
    auto slice = (expand ? expand.getSrc() : dest)
                     .getDefiningOp<tensor::ExtractSliceOp>();
    Operation *user = *copy->getResult(0).getUsers().begin();
    auto collapse = dyn_cast<tensor::CollapseShapeOp>(user);
    if (expand) {
      if (!collapse || !collapse->hasOneUse() || !expand->hasOneUse() ||
          collapse.getReassociationIndices() !=
              expand.getReassociationIndices() ||
          collapse.getType() != expand.getSrcType())
        continue;
      user = *collapse->getUsers().begin();
    }
    auto insert = dyn_cast<tensor::InsertSliceOp>(user);
    if (!init || !slice || !insert ||
        producer->getBlock() != copy->getBlock() ||
        dest.getType() != src.getType() || !slice.hasUnitStride() ||
        !insert.hasUnitStride() || !slice.getOffsets().empty() ||
        !insert.getOffsets().empty() ||
        slice.getStaticOffsets() != insert.getStaticOffsets() ||
        slice.getStaticSizes() != insert.getStaticSizes() ||
        slice.getSizes() != insert.getSizes() ||
        insert.getDest() != slice.getSource())
      continue;
    // Run-time sizes of the box (symbolic dimensions) are used above the
    // producer, where its slice is taken.
    if (!moveAboveProducer(rewriter, insert.getSizes(), producer))
      continue;
    auto fill = fillOfEmptyBefore(rewriter, slice.getSource(), producer);
    if (!fill)
      continue;
    // A padded tensor of its own for this copy, its slice the same box.
    startFromInsertedSlice(rewriter, fill, producer, init, insert,
                           expand ? expand.getReassociationIndices()
                                  : SmallVector<ReassociationIndices, 4>());
    rewriter.replaceOp(copy, producer->getResult(0));
    if (expand && expand->use_empty())
      rewriter.eraseOp(expand);
  }
}

/// An op whose result is inserted, directly or through a collapse_shape,
/// into a slice of a constant-filled tensor, and that never reads its own
/// empty init: static int8's unfolded windows (im2col, [N, OH, OW, KH, KW
/// C]) inserted into the first K columns of the [M, Kp] rows whose K is
/// padded for the kernel (to 64 bytes for AMX). Lowering builds the
/// unfolding on that slice, but canonicalization gives the generic a fresh
/// empty init (its body never reads one), and the insert then bufferizes as
/// a serial copy of every row between two parallel loops: SqueezeNet's 3x3
/// expansions copied 435 KB at 55 x 55, 3% of its int8 time on one thread
/// and 6% on two. The op writes into the slice again (seen through the
/// matching expand_shape) of a fresh clone of the fill, as
/// writeIntoCopyDestination does.
void writeIntoInsertDestination(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<tensor::InsertSliceOp> inserts;
  func.walk([&](tensor::InsertSliceOp op) { inserts.push_back(op); });
  for (tensor::InsertSliceOp insert : inserts) {
    Value src = insert.getSource();
    auto collapse = src.getDefiningOp<tensor::CollapseShapeOp>();
    Value produced = collapse ? collapse.getSrc() : src;
    Operation *producer = produced.getDefiningOp();
    OpOperand *init = overwrittenEmptyInit(producer);
    if (!init || !src.hasOneUse() || !produced.hasOneUse() ||
        producer->getBlock() != insert->getBlock() || !insert.hasUnitStride() ||
        !insert.getOffsets().empty() || !insert.getSizes().empty() ||
        insert.getSourceType().getRank() != insert.getDestType().getRank())
      continue;
    auto fill = fillOfEmptyBefore(rewriter, insert.getDest(), producer);
    if (!fill)
      continue;
    startFromInsertedSlice(rewriter, fill, producer, init, insert,
                           collapse ? collapse.getReassociationIndices()
                                    : SmallVector<ReassociationIndices, 4>());
    if (fill->use_empty()) {
      Operation *empty = fill.getOutputs()[0].getDefiningOp();
      rewriter.eraseOp(fill);
      if (empty->use_empty())
        rewriter.eraseOp(empty);
    }
  }
}

struct WriteIntoDestinationsPass
    : mlir::kiln::impl::WriteIntoDestinationsPassBase<WriteIntoDestinationsPass> {
  using WriteIntoDestinationsPassBase::WriteIntoDestinationsPassBase;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    writeIntoCopyDestination(rewriter, getOperation());
    writeIntoInsertDestination(rewriter, getOperation());
  }
};
} // namespace
