//===- FillBorders.cpp - fill only the border of padded buffers -*- C++ -*-===//
//
// A padded tensor is lowered as a fill of the whole tensor whose interior is
// then overwritten (an insert_slice, or a producer writing into an interior
// slice). Only the border needs the fill: for a 3x3 depthwise convolution at
// 112x112 it is 3.5% of the buffer. --kiln-cpu-mark-border-fills marks such
// fills with the interior box (kFillBorderAttr); after bufferization,
// where the buffer and its subviews are plain memory, this pass fills the
// border slabs alone. (Done on tensors, the slab chain over the empty
// tensor bufferized out of place: a copy of every slab and of the interior.)
// A fill also marked kUnreadPaddingAttr (static int8's K padding, which
// meets zero weights) is dropped: no value there changes the product.
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/CPU/Passes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_FILLBORDERSPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
struct FillBordersPass
    : mlir::kiln::impl::FillBordersPassBase<FillBordersPass> {
  void runOnOperation() override {
    SmallVector<linalg::FillOp> fills;
    getOperation().walk([&](linalg::FillOp op) {
      if (op->hasAttr(kiln::kFillBorderAttr))
        fills.push_back(op);
    });
    for (linalg::FillOp fill : fills) {
      auto box = fill->getAttrOfType<DenseI64ArrayAttr>(kiln::kFillBorderAttr);
      Value buffer = fill.getOutputs()[0];
      auto type = dyn_cast<MemRefType>(buffer.getType());
      // `offsets..., sizes...`, and `trailing...` where a size is a run-time
      // one (a symbolic dimension: the box's size is the buffer's minus
      // its offset and the trailing border).
      int64_t rank = type ? type.getRank() : 0;
      bool dynamic = type && (int64_t)box.size() == 3 * rank;
      if (!type || (!dynamic && !type.hasStaticShape()) ||
          (!dynamic && (int64_t)box.size() != 2 * rank)) {
        fill->removeAttr(kiln::kFillBorderAttr);
        continue; // still a tensor, or malformed: fill it all
      }
      // Padding that only meets zero weights: whatever the buffer holds
      // there adds 0 to the product.
      if (fill->hasAttr(kiln::kUnreadPaddingAttr)) {
        fill.erase();
        continue;
      }
      ArrayRef<int64_t> offsets = box.asArrayRef().take_front(rank);
      ArrayRef<int64_t> boxSizes = box.asArrayRef().slice(rank, rank);
      OpBuilder b(fill);
      Location loc = fill.getLoc();
      // Sizes as OpFoldResults: constants where known, else computed from
      // the buffer's run-time size.
      auto sub = [&](OpFoldResult x, int64_t c) -> OpFoldResult {
        if (std::optional<int64_t> k = getConstantIntValue(x))
          return b.getIndexAttr(*k - c);
        return arith::SubIOp::create(b, loc, cast<Value>(x),
                                     arith::ConstantIndexOp::create(b, loc, c))
            .getResult();
      };
      SmallVector<OpFoldResult> shape, sizes;
      for (int64_t d = 0; d < rank; ++d) {
        shape.push_back(type.isDynamicDim(d)
                            ? OpFoldResult(
                                  memref::DimOp::create(b, loc, buffer, d)
                                      .getResult())
                            : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
        sizes.push_back(
            ShapedType::isDynamic(boxSizes[d])
                ? sub(shape[d], offsets[d] + box.asArrayRef()[2 * rank + d])
                : OpFoldResult(b.getIndexAttr(boxSizes[d])));
      }
      for (int64_t d = 0; d < rank; ++d) {
        // The slabs before and after the box along d, within the box along
        // the dimensions before d.
        OpFoldResult end = ShapedType::isDynamic(boxSizes[d])
                               ? sub(shape[d], box.asArrayRef()[2 * rank + d])
                               : b.getIndexAttr(offsets[d] + boxSizes[d]);
        std::pair<OpFoldResult, OpFoldResult> slabs[2] = {
            {b.getIndexAttr(0), b.getIndexAttr(offsets[d])},
            {end, ShapedType::isDynamic(boxSizes[d])
                      ? OpFoldResult(b.getIndexAttr(
                            box.asArrayRef()[2 * rank + d]))
                      : sub(shape[d], offsets[d] + boxSizes[d])}};
        for (auto [lo, len] : slabs) {
          std::optional<int64_t> n = getConstantIntValue(len);
          if (n && *n <= 0)
            continue;
          SmallVector<OpFoldResult> slabOffsets(rank, b.getIndexAttr(0)),
              slabSizes(shape), strides(rank, b.getIndexAttr(1));
          for (int64_t e = 0; e < d; ++e) {
            slabOffsets[e] = b.getIndexAttr(offsets[e]);
            slabSizes[e] = sizes[e];
          }
          slabOffsets[d] = lo;
          slabSizes[d] = len;
          Value slab = memref::SubViewOp::create(b, loc, buffer, slabOffsets,
                                                 slabSizes, strides);
          linalg::FillOp::create(b, loc, fill.getInputs()[0], slab);
        }
      }
      fill.erase();
    }
  }
};
} // namespace
