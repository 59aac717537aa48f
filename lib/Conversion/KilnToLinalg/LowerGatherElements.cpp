//===- LowerGatherElements.cpp - kiln.gather_elements to linalg -*- C++ -*-===//
#include "Lowering.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Result element p is input[p with p[axis] = clamp(wrap(indices[p]))]: a
/// generic over the indices that extracts from the input. ONNX leaves
/// indices outside [-n, n) undefined; wrapping once and clamping to
/// [0, n - 1] keeps every read inside the input.
Value lowerGatherElementsOp(OpBuilder &b, GatherElementsOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = op.getType();
  Value input = op.getInput();
  int64_t axis = op.getAxis(), rank = type.getRank(),
          n = op.getInput().getType().getDimSize(axis);
  return mappedGeneric(
      b, loc, type.getShape(), type.getElementType(), op.getIndices(),
      b.getMultiDimIdentityMap(rank),
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value i = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), a[0]);
        i = clampIndex(nb, nl, i, n);
        SmallVector<Value> at;
        for (int64_t d = 0; d < rank; ++d)
          at.push_back(d == axis ? i : linalg::IndexOp::create(nb, nl, d));
        return tensor::ExtractOp::create(nb, nl, input, at);
      });
}
} // namespace

FailureOr<Value> mlir::kiln::lowerGatherElements(OpBuilder &b, Operation *op) {
  if (auto g = dyn_cast<GatherElementsOp>(op))
    return lowerGatherElementsOp(b, g);
  return Value();
}
