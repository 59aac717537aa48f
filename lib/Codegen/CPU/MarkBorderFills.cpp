//===- MarkBorderFills.cpp - fills whose interior is overwritten--*- C++ -*-===//
#include "kiln/Codegen/CPU/Passes.h"
#include "kiln/Codegen/Common/Destinations.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
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
/// With symbolic dimensions (docs/shapes.md) the box may have run-time
/// sizes: a dynamic size of the padded tensor that is the box's size plus a
/// constant (as the lowering of a pad builds it) leaves a border of that
/// constant minus the offset after the box (none for a run-time size the
/// box spans whole, as a symbolic batch), and the mark then carries those
/// trailing borders too (`offsets..., sizes..., trailing...`, with the
/// dynamic sizes as ShapedType::kDynamic).
void markBorderFills(func::FuncOp func) {
  func.walk([&](linalg::FillOp fill) {
    auto empty = fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
    auto type = dyn_cast<RankedTensorType>(fill.getResult(0).getType());
    if (!empty || !type || !fill.hasPureTensorSemantics())
      return;
    int64_t rank = type.getRank();
    // The interior box every user overwrites, and whether one writes it.
    std::optional<std::pair<SmallVector<int64_t>, SmallVector<OpFoldResult>>>
        box;
    bool ok = true, written = false;
    auto sameBox = [&](ArrayRef<int64_t> offsets,
                       SmallVector<OpFoldResult> sizes) {
      if (ShapedType::isDynamicShape(offsets))
        return false;
      if (!box)
        box.emplace(SmallVector<int64_t>(offsets), sizes);
      return box->first == offsets && box->second == sizes;
    };
    for (Operation *user : fill->getUsers()) {
      if (auto insert = dyn_cast<tensor::InsertSliceOp>(user)) {
        ok &= insert.getDest() == fill.getResult(0) && insert.hasUnitStride() &&
              insert.getSource() != fill.getResult(0) &&
              insert.getSourceType().getRank() == rank &&
              sameBox(insert.getStaticOffsets(), insert.getMixedSizes());
        written = true;
      } else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user)) {
        // An init that its op overwrites without reading it (directly or
        // through an expand_shape, see kiln-write-into-destinations).
        ok &= slice.hasUnitStride() && slice.getType().getRank() == rank &&
              sameBox(slice.getStaticOffsets(), slice.getMixedSizes()) &&
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
    SmallVector<int64_t> packed(box->first), trailing;
    bool dynamic = false;
    for (int64_t d = 0; d < rank; ++d) {
      OpFoldResult size = box->second[d];
      if (std::optional<int64_t> c = getConstantIntValue(size)) {
        packed.push_back(*c);
        trailing.push_back(type.isDynamicDim(d)
                               ? 0
                               : type.getDimSize(d) - box->first[d] - *c);
        if (type.isDynamicDim(d))
          return; // a static box in a run-time extent: fill it all
        continue;
      }
      // A run-time size: the padded size must be it plus a constant, or
      // the size itself at offset 0 (an axis not padded, a symbolic batch).
      if (!type.isDynamicDim(d))
        return;
      if (empty.getDynamicSize(d) == cast<Value>(size) && box->first[d] == 0) {
        dynamic = true;
        packed.push_back(ShapedType::kDynamic);
        trailing.push_back(0);
        continue;
      }
      auto add = empty.getDynamicSize(d).getDefiningOp<arith::AddIOp>();
      APInt pad;
      if (!add || add.getLhs() != cast<Value>(size) ||
          !matchPattern(add.getRhs(), m_ConstantInt(&pad)) ||
          pad.getSExtValue() < box->first[d])
        return;
      dynamic = true;
      packed.push_back(ShapedType::kDynamic);
      trailing.push_back(pad.getSExtValue() - box->first[d]);
    }
    if (dynamic)
      packed.append(trailing);
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
