//===- MarkBorderFills.cpp - fills whose interior is overwritten--*- C++ -*-===//
#include "kiln/Codegen/CPU/Passes.h"
#include "kiln/Codegen/Common/Destinations.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_MARKBORDERFILLSPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// A padded tensor is a fill of the whole tensor, then its interior
/// overwritten (insert_slice, or a producer writing into an interior slice
/// after kiln-write-into-destinations). Only the border needs the fill: for a
/// 3x3 depthwise convolution at 112x112 it is 3.5% of the tensor, and every
/// depthwise input of MobileNetV2 is padded so (the whole-tensor fills were
/// 8.5% of its f32 time and 15% of its int8 time, all of it memset). Such a
/// fill is marked with its interior box (kFillBorderAttr) and left whole
/// here; after bufferization --kiln-cpu-fill-borders fills the border alone.
void markBorderFills(func::FuncOp func) {
  func.walk([&](linalg::FillOp fill) {
    auto empty = fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
    auto type = dyn_cast<RankedTensorType>(fill.getResult(0).getType());
    if (!empty || !type || !type.hasStaticShape() ||
        !fill.hasPureTensorSemantics())
      return;
    // The interior box every user overwrites, and whether one writes it.
    std::optional<std::pair<SmallVector<int64_t>, SmallVector<int64_t>>> box;
    bool ok = true, written = false;
    auto sameBox = [&](ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes) {
      if (ShapedType::isDynamicShape(offsets) ||
          ShapedType::isDynamicShape(sizes))
        return false;
      if (!box)
        box.emplace(SmallVector<int64_t>(offsets), SmallVector<int64_t>(sizes));
      return box->first == offsets && box->second == sizes;
    };
    for (Operation *user : fill->getUsers()) {
      if (auto insert = dyn_cast<tensor::InsertSliceOp>(user)) {
        ok &= insert.getDest() == fill.getResult(0) && insert.hasUnitStride() &&
              insert.getSource() != fill.getResult(0) &&
              insert.getSourceType().getRank() == type.getRank() &&
              sameBox(insert.getStaticOffsets(), insert.getStaticSizes());
        written = true;
      } else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user)) {
        // An init that its op overwrites without reading it (directly or
        // through an expand_shape, see kiln-write-into-destinations).
        ok &= slice.hasUnitStride() &&
              slice.getType().getRank() == type.getRank() &&
              sameBox(slice.getStaticOffsets(), slice.getStaticSizes()) &&
              llvm::all_of(slice->getUses(), [&](OpOperand &use) {
                if (auto expand =
                        dyn_cast<tensor::ExpandShapeOp>(use.getOwner()))
                  return llvm::all_of(expand->getUses(),
                                     mlir::kiln::isOverwrittenInit);
                return mlir::kiln::isOverwrittenInit(use);
              });
      } else {
        ok = false;
      }
    }
    if (!ok || !written || !box)
      return;
    SmallVector<int64_t> packed(box->first);
    packed.append(box->second);
    fill->setAttr(kiln::kFillBorderAttr,
                  DenseI64ArrayAttr::get(fill.getContext(), packed));
  });
}

struct MarkBorderFillsPass
    : mlir::kiln::impl::MarkBorderFillsPassBase<MarkBorderFillsPass> {
  using MarkBorderFillsPassBase::MarkBorderFillsPassBase;

  void runOnOperation() override {
    markBorderFills(getOperation());
  }
};
} // namespace
