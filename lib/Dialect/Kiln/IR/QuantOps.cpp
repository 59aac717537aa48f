//===- QuantOps.cpp - verifiers of the reduced-precision matmuls -*- C++ -*-===//
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"

using namespace mlir;
using namespace mlir::kiln;

LogicalResult DynamicQuantMatMulOp::verify() {
  RankedTensorType in = getInput().getType(), w = getWeights().getType(),
                   out = getType();
  if (in.getRank() < 2 || !in.hasStaticShape())
    return emitOpError() << "expects a static input of rank 2 or more, got "
                         << in;
  if (w.getRank() != 3 || !w.hasStaticShape() || w.getDimSize(2) % 4 != 0)
    return emitOpError() << "expects packed weights [N / R, ceil(K / 4), 4 * R]"
                         << ", got " << w;
  int64_t k = in.getShape().back();
  int64_t k4 = (k + 3) / 4;
  if (w.getDimSize(1) != k4)
    return emitOpError() << "expects " << k4 << " groups of 4 along K = " << k
                         << " in the packed weights, got " << w.getDimSize(1);
  int64_t n = w.getDimSize(0) * (w.getDimSize(2) / 4);
  auto checkVector = [&](Value v, StringRef what) -> LogicalResult {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != 1 || t.getDimSize(0) != n)
      return emitOpError() << "expects " << what << " of shape [" << n
                           << "], got " << t;
    return success();
  };
  if (failed(checkVector(getWeightScales(), "weight_scales")) ||
      failed(checkVector(getWeightSums(), "weight_sums")) ||
      (getBias() && failed(checkVector(getBias(), "bias"))))
    return failure();
  SmallVector<int64_t> shape(in.getShape());
  shape.back() = n;
  if (out.getShape() != ArrayRef<int64_t>(shape))
    return emitOpError() << "expects result type "
                         << RankedTensorType::get(shape, out.getElementType())
                         << ", got " << out;
  return success();
}

LogicalResult Bf16MatMulOp::verify() {
  RankedTensorType in = getInput().getType(), w = getWeights().getType(),
                   out = getType();
  if (in.getRank() < 2 || !in.hasStaticShape())
    return emitOpError() << "expects a static input of rank 2 or more, got "
                         << in;
  int64_t k = in.getShape().back(), kp = (k + 31) / 32 * 32;
  if (w.getRank() != 3 || !w.hasStaticShape() || w.getDimSize(2) != 32 ||
      w.getDimSize(1) != kp / 2)
    return emitOpError() << "expects packed weights [N / 16, " << kp / 2
                         << ", 32] for K = " << k << ", got " << w;
  int64_t n = w.getDimSize(0) * 16;
  if (getBias()) {
    auto t = cast<RankedTensorType>(getBias().getType());
    if (t.getRank() != 1 || t.getDimSize(0) != n)
      return emitOpError() << "expects bias of shape [" << n << "], got " << t;
  }
  SmallVector<int64_t> shape(in.getShape());
  shape.back() = n;
  if (out.getShape() != ArrayRef<int64_t>(shape))
    return emitOpError() << "expects result type "
                         << RankedTensorType::get(shape, out.getElementType())
                         << ", got " << out;
  return success();
}
