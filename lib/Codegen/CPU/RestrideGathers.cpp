//===- RestrideGathers.cpp - gathers from non-contiguous memrefs -*- C++
//-*-===//
//
// linalg's vectorizer reads an N-d tensor.extract whose indices vary across
// the tile with a vector.gather: its offsets are the element positions
// linear in the tensor's shape (row * width + column), added to the base
// position. That holds for a contiguous buffer only; a tensor that
// bufferizes into a view with strides (x[::2] feeding an edge Pad's
// gather) or into a box of a larger buffer was read at the wrong places,
// since the LLVM lowering adds the linear offsets to the innermost
// dimension. Here each such gather splits its linear offsets by the view's
// shape, multiplies the digits by the view's strides, and reads the same
// memory through a 1-D view (LLVM 22 has no lowering that does this).
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_RESTRIDEGATHERSPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// Whether a gather's linear offsets address `type` correctly: its layout
/// is the identity, or each dimension of more than one element is as far
/// apart as the elements of the dimensions inside it (the strides of a unit
/// dimension never matter).
bool linearOffsetsHold(MemRefType type) {
  if (type.getLayout().isIdentity())
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  int64_t inner = 1; // elements of the dimensions inside, when known
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    int64_t size = type.getDimSize(d);
    if (size == 1)
      continue;
    if (ShapedType::isDynamic(inner) || strides[d] != inner)
      return false;
    inner = ShapedType::isDynamic(size) ? ShapedType::kDynamic : inner * size;
  }
  return true;
}

void restride(vector::GatherOp gather) {
  OpBuilder b(gather);
  Location loc = gather.getLoc();
  Value base = gather.getBase();
  auto type = cast<MemRefType>(base.getType());
  int64_t rank = type.getRank();
  VectorType indexType = gather.getIndices().getType();
  auto indexVec = indexType.clone(b.getIndexType());
  Value indices = gather.getIndices();
  if (!indexType.getElementType().isIndex())
    indices = arith::IndexCastOp::create(b, loc, indexVec, indices);

  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, base);
  SmallVector<Value> sizes(meta.getSizes()), strides(meta.getStrides());
  auto splat = [&](Value v) {
    return vector::BroadcastOp::create(b, loc, indexVec, v).getResult();
  };
  // The linear position of the base, in the shape, added to every offset.
  Value first = arith::ConstantIndexOp::create(b, loc, 0);
  for (int64_t d = 0; d < rank; ++d) {
    first = arith::MulIOp::create(b, loc, first, sizes[d]);
    first = arith::AddIOp::create(b, loc, first, gather.getOffsets()[d]);
  }
  Value linear = arith::AddIOp::create(b, loc, indices, splat(first));
  // Digits from the innermost dimension out; the outermost takes the rest.
  // (A view with an empty dimension has nothing to read; dividing by at
  // least 1 keeps a stray gather from trapping.)
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value position = splat(arith::ConstantIndexOp::create(b, loc, 0));
  for (int64_t d = rank - 1; d >= 0; --d) {
    Value digit = linear;
    if (d > 0) {
      Value size = splat(arith::MaxUIOp::create(b, loc, sizes[d], one));
      digit = arith::RemUIOp::create(b, loc, linear, size);
      linear = arith::DivUIOp::create(b, loc, linear, size);
    }
    position = arith::AddIOp::create(
        b, loc, position,
        arith::MulIOp::create(b, loc, digit, splat(strides[d])));
  }
  // The memory the view spans: 1 + sum of (size - 1) * stride.
  Value extent = one;
  for (int64_t d = 0; d < rank; ++d) {
    Value last = arith::MaxSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, sizes[d], one),
        arith::ConstantIndexOp::create(b, loc, 0));
    extent = arith::AddIOp::create(
        b, loc, extent, arith::MulIOp::create(b, loc, last, strides[d]));
  }
  auto flatType = MemRefType::get(
      {ShapedType::kDynamic}, type.getElementType(),
      StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, {1}),
      type.getMemorySpace());
  Value flat = memref::ReinterpretCastOp::create(
      b, loc, flatType, meta.getBaseBuffer(), OpFoldResult(meta.getOffset()),
      ArrayRef<OpFoldResult>{extent},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  auto replacement = vector::GatherOp::create(
      b, loc, gather.getType(), flat, ValueRange{zero}, position,
      gather.getMask(), gather.getPassThru(), gather.getAlignmentAttr());
  gather.replaceAllUsesWith(replacement.getResult());
  gather.erase();
}

struct RestrideGathersPass
    : mlir::kiln::impl::RestrideGathersPassBase<RestrideGathersPass> {
  void runOnOperation() override {
    SmallVector<vector::GatherOp> gathers;
    getOperation().walk([&](vector::GatherOp g) {
      auto type = dyn_cast<MemRefType>(g.getBase().getType());
      if (type && type.getRank() > 0 && !linearOffsetsHold(type))
        gathers.push_back(g);
    });
    for (vector::GatherOp g : gathers)
      restride(g);
  }
};
} // namespace
