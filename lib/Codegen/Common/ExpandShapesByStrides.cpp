//===- ExpandShapesByStrides.cpp - expand_shape as a cast --------*- C++ -*-===//
#include "kiln/Codegen/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_EXPANDSHAPESBYSTRIDESPASS
#include "kiln/Codegen/Common/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// Whether a group of `op` splits into more than one run-time size.
bool splitsIntoSeveralDynamic(memref::ExpandShapeOp op) {
  MemRefType type = op.getResultType();
  for (const ReassociationIndices &group : op.getReassociationIndices())
    if (llvm::count_if(group, [&](int64_t d) {
          return type.isDynamicDim(d);
        }) > 1)
      return true;
  return false;
}

void rewrite(OpBuilder &b, memref::ExpandShapeOp op) {
  Location loc = op.getLoc();
  MemRefType type = op.getResultType();
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, op.getSrc());
  SmallVector<OpFoldResult> sizes = op.getMixedOutputShape();
  auto asValue = [&](OpFoldResult f) -> Value {
    if (auto v = dyn_cast<Value>(f))
      return v;
    return arith::ConstantIndexOp::create(
        b, loc, cast<IntegerAttr>(cast<Attribute>(f)).getInt());
  };
  SmallVector<Value> strides(type.getRank());
  for (auto [i, group] : llvm::enumerate(op.getReassociationIndices())) {
    Value inner = meta.getStrides()[i];
    for (int64_t d : llvm::reverse(group)) {
      strides[d] = inner;
      inner = arith::MulIOp::create(b, loc, inner, asValue(sizes[d]));
    }
  }
  // The layout's static strides and offset stay static.
  auto [layoutStrides, layoutOffset] = type.getStridesAndOffset();
  SmallVector<OpFoldResult> mixedStrides, mixedSizes;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    mixedStrides.push_back(ShapedType::isDynamic(layoutStrides[d])
                               ? OpFoldResult(strides[d])
                               : OpFoldResult(b.getIndexAttr(layoutStrides[d])));
    mixedSizes.push_back(type.isDynamicDim(d)
                             ? OpFoldResult(asValue(sizes[d]))
                             : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
  }
  OpFoldResult offset = ShapedType::isDynamic(layoutOffset)
                            ? OpFoldResult(meta.getOffset())
                            : OpFoldResult(b.getIndexAttr(layoutOffset));
  auto cast = memref::ReinterpretCastOp::create(
      b, loc, type, meta.getBaseBuffer(), offset, mixedSizes, mixedStrides);
  op.getResult().replaceAllUsesWith(cast.getResult());
  op.erase();
}

/// Whether `op` drops unit dimensions and steps through some dimension
/// with a stride other than 1. MLIR tells which dimensions such a subview
/// dropped by matching the strides of the source type against the result's,
/// but a stepped dimension's result stride is its source stride times the
/// step, which may equal another dimension's source stride (x[:, ::2] of a
/// [2, 2, 128, 16] tensor read one row at a time: both leading dimensions
/// have stride 4096 in the view). The match then fails, and
/// `SubViewOp::getDroppedDims` (called by expand-strided-metadata) crashed.
bool dropsDimsOfSteppedView(memref::SubViewOp op) {
  if (op.getSourceType().getRank() == op.getType().getRank())
    return false;
  return llvm::any_of(op.getMixedStrides(), [](OpFoldResult stride) {
    std::optional<int64_t> c = getConstantIntValue(stride);
    return !c || *c != 1;
  });
}

/// `op` as a subview that keeps every dimension (its type holds the stepped
/// strides) and a rank-reducing subview of that with unit strides, whose
/// source strides are the result's.
void splitSteppedSubview(OpBuilder &b, memref::SubViewOp op) {
  Location loc = op.getLoc();
  SmallVector<OpFoldResult> sizes = op.getMixedSizes();
  auto whole =
      memref::SubViewOp::create(b, loc, op.getSource(), op.getMixedOffsets(),
                                sizes, op.getMixedStrides());
  int64_t rank = sizes.size();
  SmallVector<OpFoldResult> zeros(rank, b.getIndexAttr(0)),
      ones(rank, b.getIndexAttr(1));
  auto reduced = memref::SubViewOp::create(b, loc, op.getType(), whole, zeros,
                                           sizes, ones);
  op.getResult().replaceAllUsesWith(reduced.getResult());
  op.erase();
}

struct ExpandShapesByStridesPass
    : mlir::kiln::impl::ExpandShapesByStridesPassBase<
          ExpandShapesByStridesPass> {
  void runOnOperation() override {
    SmallVector<memref::ExpandShapeOp> ops;
    SmallVector<memref::SubViewOp> stepped;
    getOperation().walk([&](Operation *op) {
      if (auto expand = dyn_cast<memref::ExpandShapeOp>(op);
          expand && splitsIntoSeveralDynamic(expand))
        ops.push_back(expand);
      if (auto view = dyn_cast<memref::SubViewOp>(op);
          view && dropsDimsOfSteppedView(view))
        stepped.push_back(view);
    });
    OpBuilder b(&getContext());
    for (memref::ExpandShapeOp op : ops) {
      b.setInsertionPoint(op);
      rewrite(b, op);
    }
    for (memref::SubViewOp op : stepped) {
      b.setInsertionPoint(op);
      splitSteppedSubview(b, op);
    }
  }
};
} // namespace
