//===- SplitConvChannels.cpp - whole-register output channels ---*- C++ -*-===//
#include "Utils.h"
#include "kiln/Dialect/Kiln/IR/ElementsUtils.h"
#include "kiln/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_SPLITCONVCHANNELSPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// A convolution whose output channels are not a multiple of the register
/// (1000 classes: only of half a register) ran all of its tiles on half
/// registers or on vectors LLVM assembles from pieces. It is split along
/// its output channels into the largest multiple of the register (992) and
/// the rest (8): two convolutions, each writing its part of one output.
void splitConvChannels(RewriterBase &rewriter, func::FuncOp func, int64_t vw) {
  SmallVector<linalg::Conv2DNhwcHwcfOp> convs;
  func.walk([&](linalg::Conv2DNhwcHwcfOp op) { convs.push_back(op); });
  for (linalg::Conv2DNhwcHwcfOp conv : convs) {
    auto outType = dyn_cast<RankedTensorType>(conv->getResult(0).getType());
    Value x = conv.getInputs()[0], w = conv.getInputs()[1];
    auto wType = dyn_cast<RankedTensorType>(w.getType());
    linalg::FillOp fill = mlir::kiln::fusableFill(conv);
    if (vw < 2 || !conv.hasPureTensorSemantics() || !outType || !wType ||
        !outType.hasStaticShape() || !wType.hasStaticShape() || !fill ||
        !outType.getElementType().isF32())
      continue;
    int64_t f = outType.getDimSize(3), rest = f % vw, main = f - rest;
    if (rest == 0 || f < 2 * vw)
      continue;
    Location loc = conv.getLoc();
    rewriter.setInsertionPoint(conv);
    auto cst = w.getDefiningOp<arith::ConstantOp>();
    auto elements = cst ? dyn_cast<ElementsAttr>(cst.getValue()) : nullptr;
    auto filterPart = [&](int64_t begin, int64_t size) -> Value {
      if (elements)
        if (std::optional<ElementsAttr> part = mlir::kiln::sliceInnermost(
                elements, begin, size, /*keepDense=*/true))
          return arith::ConstantOp::create(rewriter, loc, part->getType(),
                                           cast<TypedAttr>(*part));
      SmallVector<OpFoldResult> offsets(4, rewriter.getIndexAttr(0));
      offsets[3] = rewriter.getIndexAttr(begin);
      SmallVector<OpFoldResult> sizes = getAsIndexOpFoldResult(
          rewriter.getContext(), {wType.getDimSize(0), wType.getDimSize(1),
                                  wType.getDimSize(2), size});
      SmallVector<OpFoldResult> ones(4, rewriter.getIndexAttr(1));
      return tensor::ExtractSliceOp::create(rewriter, loc, w, offsets, sizes,
                                            ones);
    };
    SmallVector<int64_t> shape(outType.getShape());
    Value result = tensor::EmptyOp::create(rewriter, loc, shape,
                                           outType.getElementType());
    for (auto [begin, size] : {std::pair<int64_t, int64_t>{0, main},
                               std::pair<int64_t, int64_t>{main, rest}}) {
      shape[3] = size;
      Value empty = tensor::EmptyOp::create(rewriter, loc, shape,
                                            outType.getElementType());
      Value init = linalg::FillOp::create(rewriter, loc, fill.getInputs()[0],
                                          empty)
                       .getResult(0);
      Value part = linalg::Conv2DNhwcHwcfOp::create(
                       rewriter, loc, TypeRange{init.getType()},
                       ValueRange{x, filterPart(begin, size)}, ValueRange{init},
                       conv.getStrides(), conv.getDilations())
                       .getResult(0);
      SmallVector<OpFoldResult> offsets(4, rewriter.getIndexAttr(0));
      offsets[3] = rewriter.getIndexAttr(begin);
      SmallVector<OpFoldResult> ones(4, rewriter.getIndexAttr(1));
      result = tensor::InsertSliceOp::create(
          rewriter, loc, part, result, offsets,
          getAsIndexOpFoldResult(rewriter.getContext(), shape), ones);
    }
    rewriter.replaceOp(conv, result);
    if (fill->use_empty())
      rewriter.eraseOp(fill);
  }
}

struct SplitConvChannelsPass
    : mlir::kiln::impl::SplitConvChannelsPassBase<SplitConvChannelsPass> {
  using SplitConvChannelsPassBase::SplitConvChannelsPassBase;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    splitConvChannels(rewriter, getOperation(), vectorWidth);
  }
};
} // namespace
