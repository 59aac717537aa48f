//===- LowerGroupedConv.cpp - grouped convolution as one kernel -*- C++ -*-===//
//
// A convolution with 1 < group < channels becomes one NHWC convolution
// kernel inside an scf.for over the groups, not one convolution per group:
// the code (and the compile time) no longer grows with the group count
// (regnet_y_400mf has layers with 55 groups, resnext50_32x4d 32).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// The sizes of `v`'s dimensions for a slice or an insertion: constants,
/// and tensor.dim of a dynamic (symbolic) one.
SmallVector<OpFoldResult> mixedSizes(OpBuilder &b, Location loc, Value v,
                                     ArrayRef<int64_t> shape) {
  SmallVector<OpFoldResult> sizes;
  for (auto [i, d] : llvm::enumerate(shape))
    sizes.push_back(ShapedType::isDynamic(d)
                        ? OpFoldResult(
                              tensor::DimOp::create(b, loc, v, i).getResult())
                        : b.getIndexAttr(d));
  return sizes;
}

/// Slice of `v` whose last dimension starts at `offset` (an index value)
/// and spans `size` elements; every other dimension is whole (static, or
/// symbolic at run-time sizes).
Value lastDimSlice(OpBuilder &b, Location loc, Value v, Value offset,
                   int64_t size) {
  RankedTensorType t = typeOf(v);
  int64_t rank = t.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
      strides(rank, b.getIndexAttr(1));
  SmallVector<int64_t> shape(t.getShape());
  shape.back() = size;
  SmallVector<OpFoldResult> sizes = mixedSizes(b, loc, v, shape);
  offsets.back() = offset;
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(shape, t.getElementType()), v, offsets,
      sizes, strides);
}
} // namespace

Value mlir::kiln::groupedConvNHWC(OpBuilder &b, Location loc, Value xp,
                                  Value hwcf, int64_t group,
                                  ArrayRef<int64_t> outShape,
                                  ArrayRef<int64_t> strides,
                                  ArrayRef<int64_t> dilations,
                                  ValueRange dyn) {
  RankedTensorType xt = typeOf(xp), wt = typeOf(hwcf);
  Type elt = xt.getElementType();
  int64_t cg = xt.getDimSize(3) / group, fg = wt.getDimSize(3) / group;
  Value init = emptyTensor(b, loc, outShape, elt, dyn);
  Value lb = arith::ConstantIndexOp::create(b, loc, 0);
  Value ub = arith::ConstantIndexOp::create(b, loc, group);
  Value step = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, step, ValueRange{init},
      [&](OpBuilder &nb, Location nl, Value g, ValueRange iter) {
        Value inOffset = arith::MulIOp::create(
            nb, nl, g, arith::ConstantIndexOp::create(nb, nl, cg));
        Value outOffset = arith::MulIOp::create(
            nb, nl, g, arith::ConstantIndexOp::create(nb, nl, fg));
        Value xs = lastDimSlice(nb, nl, xp, inOffset, cg);
        // The filter is HWCF with the groups side by side along F; group g's
        // [KH, KW, cg, fg] block is a strided view of it (no copy).
        Value ws = lastDimSlice(nb, nl, hwcf, outOffset, fg);
        // The group's output channels, written in place: the convolution
        // accumulates into a zeroed slice of the loop-carried result.
        Value ys = lastDimSlice(nb, nl, iter[0], outOffset, fg);
        Value zero = floatConst(nb, nl, elt, 0.0);
        Value acc =
            linalg::FillOp::create(nb, nl, ValueRange{zero}, ValueRange{ys})
                .getResult(0);
        Value part = linalg::Conv2DNhwcHwcfOp::create(
                         nb, nl, TypeRange{acc.getType()}, ValueRange{xs, ws},
                         ValueRange{acc}, i64Vector(nb, strides),
                         i64Vector(nb, dilations))
                         .getResult(0);
        RankedTensorType pt = typeOf(part);
        SmallVector<OpFoldResult> offsets(4, nb.getIndexAttr(0)),
            unit(4, nb.getIndexAttr(1));
        SmallVector<OpFoldResult> sizes =
            mixedSizes(nb, nl, part, pt.getShape());
        offsets[3] = outOffset;
        Value updated = tensor::InsertSliceOp::create(nb, nl, part, iter[0],
                                                      offsets, sizes, unit);
        scf::YieldOp::create(nb, nl, updated);
      });
  return loop.getResult(0);
}
