//===- LowerGatherElements.cpp - kiln.gather_elements to linalg -*- C++ -*-===//
#include "Lowering.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Result element p is input[p with p[axis] = clamp(wrap(indices[p]))]: a
/// generic over the indices that extracts from the input. ONNX leaves
/// indices outside [-n, n) undefined; wrapping once and clamping to
/// [0, n - 1] keeps every read inside the input.
///
/// Symbolic sizes: the result takes the indices' run-time sizes, the axis
/// its run-time length, and a position off the axis is clamped to the
/// input's size there too where either size is only known at run time (the
/// compile-time check that the indices fit the input cannot be made).
Value lowerGatherElementsOp(OpBuilder &b, GatherElementsOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = op.getType();
  Value input = op.getInput();
  RankedTensorType inType = op.getInput().getType();
  int64_t axis = op.getAxis(), rank = type.getRank();
  SmallVector<Value> sizes(rank);
  for (int64_t d = 0; d < rank; ++d)
    if (inType.isDynamicDim(d))
      sizes[d] = tensor::DimOp::create(b, loc, input, d);
  return mappedGeneric(
      b, loc, type.getShape(), type.getElementType(), op.getIndices(),
      b.getMultiDimIdentityMap(rank),
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value i = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), a[0]);
        i = sizes[axis] ? clampIndex(nb, nl, i, sizes[axis])
                        : clampIndex(nb, nl, i, inType.getDimSize(axis));
        SmallVector<Value> at;
        for (int64_t d = 0; d < rank; ++d) {
          if (d == axis) {
            at.push_back(i);
            continue;
          }
          Value p = linalg::IndexOp::create(nb, nl, d);
          if (sizes[d] || type.isDynamicDim(d))
            p = sizes[d] ? clampIndex(nb, nl, p, sizes[d])
                         : clampIndex(nb, nl, p, inType.getDimSize(d));
          at.push_back(p);
        }
        return tensor::ExtractOp::create(nb, nl, input, at);
      },
      dynamicDims(b, loc, op.getIndices()));
}
} // namespace

FailureOr<Value> mlir::kiln::lowerGatherElements(OpBuilder &b, Operation *op) {
  if (auto g = dyn_cast<GatherElementsOp>(op))
    return lowerGatherElementsOp(b, g);
  return Value();
}
