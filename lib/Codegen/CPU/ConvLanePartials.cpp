//===- ConvLanePartials.cpp - few output channels, lanes of inputs -*- C++
//-*-===//
//
// A convolution's register tiles hold output channels in vector lanes. With
// one output channel (a segmentation mask, a saliency map) or three (an RGB
// image) there is no register of them: the tiles ran as scalar FMAs, 576
// per pixel for a 3x3 convolution of 64 channels. Such a convolution sums
// its input channels in the lanes instead: L partial sums per output pixel
// and channel, each lane l adding the input channels c = cb * L + l, and a
// second op adds the L lanes into the output (which keeps the convolution's
// initial value, a bias or zero). The order of the additions changes, as it
// does between any two tilings of the reduction.
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/CPU/Passes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_CONVLANEPARTIALSPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// The f32 NHWC/HWCF convolution `conv` with at most vw / 4 output channels
/// and input channels a multiple of vw, as the lane-partials generic and the
/// sum of its lanes. The filter and the channels are static; the batch and
/// the image may have run-time sizes (a saliency head over any image size).
LogicalResult sumInLanes(RewriterBase &rewriter, linalg::Conv2DNhwcHwcfOp conv,
                         int64_t vw) {
  Value x = conv.getInputs()[0], w = conv.getInputs()[1],
        init = conv.getOutputs()[0];
  auto xt = dyn_cast<RankedTensorType>(x.getType());
  auto wt = dyn_cast<RankedTensorType>(w.getType());
  auto ot = dyn_cast<RankedTensorType>(init.getType());
  if (!conv.hasPureTensorSemantics() || !xt || !wt || !ot ||
      !wt.hasStaticShape() || xt.isDynamicDim(3) || ot.isDynamicDim(3))
    return failure();
  Type f32 = rewriter.getF32Type();
  if (xt.getElementType() != f32 || wt.getElementType() != f32 ||
      ot.getElementType() != f32)
    return failure();
  int64_t c = wt.getDimSize(2), f = wt.getDimSize(3);
  if (vw < 4 || f * 4 > vw || c % vw != 0)
    return failure();
  SmallVector<int64_t> s(conv.getStrides().getValues<int64_t>()),
      d(conv.getDilations().getValues<int64_t>());
  Location loc = conv.getLoc();
  rewriter.setInsertionPoint(conv);
  // x [N, H, W, C] -> [N, H, W, C / L, L]; w [KH, KW, C, F] ->
  // [KH, KW, C / L, L, F]: views, no copies. Run-time sizes of N, H and W
  // stay what they are.
  SmallVector<OpFoldResult> xeSizes;
  for (int64_t i = 0; i < 3; ++i)
    xeSizes.push_back(tensor::getMixedSize(rewriter, loc, x, i));
  xeSizes.push_back(rewriter.getIndexAttr(c / vw));
  xeSizes.push_back(rewriter.getIndexAttr(vw));
  auto xe = tensor::ExpandShapeOp::create(
      rewriter, loc,
      RankedTensorType::get(
          {xt.getDimSize(0), xt.getDimSize(1), xt.getDimSize(2), c / vw, vw},
          f32),
      x, SmallVector<ReassociationIndices>{{0}, {1}, {2}, {3, 4}}, xeSizes);
  auto we = tensor::ExpandShapeOp::create(
      rewriter, loc,
      RankedTensorType::get({wt.getDimSize(0), wt.getDimSize(1), c / vw, vw, f},
                            f32),
      w, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}, {4}});
  SmallVector<int64_t> partialShape(ot.getShape());
  partialShape.push_back(vw);
  Value zero =
      arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0));
  SmallVector<Value> partialDynamic;
  for (int64_t i = 0; i < ot.getRank(); ++i)
    if (ot.isDynamicDim(i))
      partialDynamic.push_back(tensor::DimOp::create(rewriter, loc, init, i));
  Value empty =
      tensor::EmptyOp::create(rewriter, loc, partialShape, f32, partialDynamic);
  Value start = linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);

  MLIRContext *ctx = rewriter.getContext();
  AffineExpr n, oh, ow, fo, l, kh, kw, cb;
  bindDims(ctx, n, oh, ow, fo, l, kh, kw, cb);
  auto par = utils::IteratorType::parallel,
       red = utils::IteratorType::reduction;
  SmallVector<AffineMap> maps = {
      AffineMap::get(
          8, 0, {n, oh * s[0] + kh * d[0], ow * s[1] + kw * d[1], cb, l}, ctx),
      AffineMap::get(8, 0, {kh, kw, cb, l, fo}, ctx),
      AffineMap::get(8, 0, {n, oh, ow, fo, l}, ctx)};
  auto partial = linalg::GenericOp::create(
      rewriter, loc, start.getType(), ValueRange{xe, we}, ValueRange{start},
      maps,
      SmallVector<utils::IteratorType>{par, par, par, par, par, red, red, red},
      [](OpBuilder &b, Location at, ValueRange v) {
        // One FMA per step: the multiply and add may contract (the
        // convolution's own kernels use fused multiply-adds too).
        auto contract = arith::FastMathFlags::contract;
        Value m = arith::MulFOp::create(b, at, v[0], v[1], contract);
        linalg::YieldOp::create(
            b, at, ValueRange{arith::AddFOp::create(b, at, v[2], m, contract)});
      });
  partial->setAttr(kiln::kLanePartialsAttr, rewriter.getUnitAttr());

  AffineExpr d0, d1, d2, d3, d4;
  bindDims(ctx, d0, d1, d2, d3, d4);
  auto sum = linalg::GenericOp::create(
      rewriter, loc, ot, ValueRange{partial.getResult(0)}, ValueRange{init},
      SmallVector<AffineMap>{AffineMap::get(5, 0, {d0, d1, d2, d3, d4}, ctx),
                             AffineMap::get(5, 0, {d0, d1, d2, d3}, ctx)},
      SmallVector<utils::IteratorType>{par, par, par, par, red},
      [](OpBuilder &b, Location at, ValueRange v) {
        linalg::YieldOp::create(
            b, at, ValueRange{arith::AddFOp::create(b, at, v[1], v[0])});
      });
  rewriter.replaceOp(conv, sum.getResults());
  return success();
}

struct ConvLanePartialsPass
    : mlir::kiln::impl::ConvLanePartialsPassBase<ConvLanePartialsPass> {
  using ConvLanePartialsPassBase::ConvLanePartialsPassBase;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::Conv2DNhwcHwcfOp> convs;
    getOperation().walk(
        [&](linalg::Conv2DNhwcHwcfOp op) { convs.push_back(op); });
    for (linalg::Conv2DNhwcHwcfOp conv : convs)
      (void)sumInLanes(rewriter, conv, vectorWidth);
  }
};
} // namespace
