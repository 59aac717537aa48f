//===- Softmax.cpp - ONNX Softmax, LogSoftmax and Hardmax -------*- C++ -*-===//
#include "Build.h"

#include <numeric>

using namespace mlir;
using namespace mlir::kiln;

/// Hardmax 1, 11 (the input coerced to 2-D at axis), 13 (one axis): 1 where
/// the first maximum along the axis is, as equal(argmax, iota), cast.
FailureOr<SmallVector<Value>> mlir::kiln::convertHardmax(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  if (failed(node.requireStaticShape(type)))
    return failure();
  int64_t rank = type.getRank();
  Value in = *x;
  int64_t axis;
  if (node.opset < 13) {
    FailureOr<int64_t> a = normalizeAxis(node, node.intAttr("axis", 1), rank);
    if (failed(a))
      return failure();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d)
      (d < *a ? outer : inner) *= type.getDimSize(d);
    FailureOr<Value> flat = reshapeTo(node, in, {outer, inner});
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
  int64_t n = inType.getDimSize(axis);
  SmallVector<int64_t> iotaShape(inType.getRank(), 1);
  iotaShape[axis] = n;
  SmallVector<int64_t> iota(n);
  std::iota(iota.begin(), iota.end(), 0);
  auto iotaType = RankedTensorType::get(iotaShape, b.getI64Type());
  Value positions =
      ConstantOp::create(node.builder, node.loc(), iotaType,
                         DenseElementsAttr::get(iotaType, ArrayRef(iota)));
  FailureOr<Value> hit = build<EqualOp>(node, *am, positions);
  if (failed(hit))
    return failure();
  FailureOr<Value> y =
      build<CastOp>(node, *hit, TypeAttr::get(type.getElementType()));
  if (failed(y))
    return failure();
  return one(reshapeTo(node, *y, type.getShape()));
}
