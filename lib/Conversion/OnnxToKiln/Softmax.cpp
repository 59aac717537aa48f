//===- Softmax.cpp - ONNX Softmax, LogSoftmax and Hardmax -------*- C++ -*-===//
#include "Build.h"
#include "SymbolicSizes.h"

#include <numeric>

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Softmax and LogSoftmax. Before opset 13 the input is coerced to 2-D at
/// `axis` (default 1) and normalized over the whole trailing block.
FailureOr<SmallVector<Value>> softmax(OnnxNode &node, bool log) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  bool coerce = node.opset < 13;
  return one(
      softmaxOf(node, *x, node.intAttr("axis", coerce ? 1 : -1), coerce, log));
}

} // namespace

FailureOr<Value> mlir::kiln::softmaxOf(OnnxNode &node, Value x, int64_t axis,
                                       bool coerce, bool log) {
  RankedTensorType type = typeOf(x);
  int64_t rank = type.getRank();
  FailureOr<int64_t> a = normalizeAxis(node, axis, rank);
  if (failed(a))
    return failure();
  Value in = x;
  if (coerce && *a != rank - 1) {
    FailureOr<Value> flat = flattenToSizes(node, in, *a);
    if (failed(flat))
      return failure();
    in = *flat;
    a = 1;
  }
  FailureOr<Value> y =
      log ? logSoftmax(node, in, *a)
          : build<SoftmaxOp>(node, in, node.builder.getI64IntegerAttr(*a));
  if (failed(y) || in == x)
    return y;
  if (!type.hasStaticShape())
    return reshapeToSizes(node, *y, node.sizes->dims(x));
  return reshapeTo(node, *y, type.getShape());
}

/// log(softmax(x)) along `axis` as (x - max) - log(sum(exp(x - max))): the
/// same passes as kiln.softmax, but a class whose probability underflows
/// still gets a finite log-probability (log(softmax) would give -inf and an
/// infinite loss).
FailureOr<Value> mlir::kiln::logSoftmax(OnnxNode &node, Value x, int64_t axis) {
  auto &b = node.builder;
  auto axes = b.getDenseI64ArrayAttr({axis});
  FailureOr<Value> max = build<ReduceMaxOp>(node, x, axes, b.getBoolAttr(true));
  if (failed(max))
    return failure();
  FailureOr<Value> shifted = build<SubOp>(node, x, *max);
  if (failed(shifted))
    return failure();
  FailureOr<Value> logSum = build<ExpOp>(node, *shifted);
  if (succeeded(logSum))
    logSum = build<ReduceSumOp>(node, *logSum, axes, b.getBoolAttr(true));
  if (succeeded(logSum))
    logSum = build<LogOp>(node, *logSum);
  if (failed(logSum))
    return failure();
  return build<SubOp>(node, *shifted, *logSum);
}

/// Hardmax 1, 11 (the input coerced to 2-D at axis), 13 (one axis): 1 where
/// the first maximum along the axis is, as equal(argmax, iota), cast. Sizes
/// may be symbolic: the iota then counts to the axis's run-time size.
FailureOr<SmallVector<Value>> mlir::kiln::convertHardmax(OnnxNode &node) {
  FailureOr<Value> x = sizedInput(node, 0);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  bool isStatic = type.hasStaticShape();
  int64_t rank = type.getRank();
  Value in = *x;
  int64_t axis;
  if (node.opset < 13) {
    FailureOr<int64_t> a = normalizeAxis(node, node.intAttr("axis", 1), rank);
    if (failed(a))
      return failure();
    FailureOr<Value> flat;
    if (isStatic) {
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < rank; ++d)
        (d < *a ? outer : inner) *= type.getDimSize(d);
      flat = reshapeTo(node, in, {outer, inner});
    } else {
      flat = flattenToSizes(node, in, *a);
    }
    if (failed(flat))
      return failure();
    in = *flat;
    axis = 1;
  } else {
    FailureOr<int64_t> a = normalizeAxis(node, node.intAttr("axis", -1), rank);
    if (failed(a))
      return failure();
    axis = *a;
  }
  RankedTensorType inType = typeOf(in);
  Builder &b = node.builder;
  FailureOr<Value> am =
      build<ArgMaxOp>(node, in, b.getI64IntegerAttr(axis), b.getBoolAttr(true),
                      b.getBoolAttr(false));
  if (failed(am))
    return failure();
  SmallVector<int64_t> iotaShape(inType.getRank(), 1);
  FailureOr<Value> positions;
  if (!inType.isDynamicDim(axis)) {
    int64_t n = inType.getDimSize(axis);
    iotaShape[axis] = n;
    SmallVector<int64_t> iota(n);
    std::iota(iota.begin(), iota.end(), 0);
    auto iotaType = RankedTensorType::get(iotaShape, b.getI64Type());
    positions = Value(
        ConstantOp::create(node.builder, node.loc(), iotaType,
                           DenseElementsAttr::get(iotaType, ArrayRef(iota))));
  } else {
    SymSize n = sizeOf(node, in, axis);
    SmallVector<SymSize> sizes(inType.getRank(), SymSize::constant(1));
    sizes[axis] = n;
    positions = iotaOfSize(node, n, b.getI64Type(), "Hardmax's positions");
    if (succeeded(positions))
      positions = reshapeToSizes(node, *positions, sizes);
  }
  if (failed(positions))
    return failure();
  FailureOr<Value> hit = build<EqualOp>(node, *am, *positions);
  if (failed(hit))
    return failure();
  FailureOr<Value> y =
      build<CastOp>(node, *hit, TypeAttr::get(type.getElementType()));
  if (failed(y) || in == *x)
    return one(y);
  if (!isStatic)
    return one(reshapeToSizes(node, *y, sizesOf(node, *x)));
  return one(reshapeTo(node, *y, type.getShape()));
}

FailureOr<SmallVector<Value>> mlir::kiln::convertSoftmax(OnnxNode &node) {
  return softmax(node, false);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertLogSoftmax(OnnxNode &node) {
  return softmax(node, true);
}
