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

#include "mlir/Dialect/Linalg/IR/Linalg.h"
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
      if (!type || !type.hasStaticShape() ||
          box.size() != 2 * type.getRank()) {
        fill->removeAttr(kiln::kFillBorderAttr);
        continue; // still a tensor, or malformed: fill it all
      }
      // Padding that only meets zero weights: whatever the buffer holds
      // there adds 0 to the product.
      if (fill->hasAttr(kiln::kUnreadPaddingAttr)) {
        fill.erase();
        continue;
      }
      int64_t rank = type.getRank();
      ArrayRef<int64_t> shape = type.getShape();
      ArrayRef<int64_t> offsets = box.asArrayRef().take_front(rank);
      ArrayRef<int64_t> sizes = box.asArrayRef().drop_front(rank);
      OpBuilder b(fill);
      Location loc = fill.getLoc();
      for (int64_t d = 0; d < rank; ++d) {
        std::pair<int64_t, int64_t> slabs[2] = {
            {0, offsets[d]}, {offsets[d] + sizes[d], shape[d]}};
        for (auto [lo, hi] : slabs) {
          if (hi <= lo)
            continue;
          SmallVector<int64_t> slabOffsets(rank, 0), slabSizes(shape);
          for (int64_t e = 0; e < d; ++e) {
            slabOffsets[e] = offsets[e];
            slabSizes[e] = sizes[e];
          }
          slabOffsets[d] = lo;
          slabSizes[d] = hi - lo;
          SmallVector<int64_t> strides(rank, 1);
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
