//===- Legacy.cpp - ONNX ops before opset 7 ---------------------*- C++ -*-===//
//
// Before opset 7, binary arithmetic did not broadcast like numpy: B had the
// shape of A unless `broadcast` = 1, and then B's shape matched a contiguous
// run of A's dimensions starting at `axis` (by default the trailing ones).
// Reshaping B to A's rank with 1s around that run turns the old rule into
// numpy broadcasting, after which the ops are the same kiln ops as in opset 7.
// Old PRelu applies a slope of C values per channel (axis 1).
//
//===----------------------------------------------------------------------===//
#include "Build.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// B of a legacy binary op, reshaped so that numpy broadcasting against A
/// means what `broadcast` / `axis` meant.
FailureOr<Value> legacyBroadcast(OnnxNode &node, Value a, Value b) {
  RankedTensorType at = typeOf(a), bt = typeOf(b);
  if (!at.hasStaticShape() || !bt.hasStaticShape()) {
    node.fail() << "legacy broadcasting needs static shapes, got " << at
                << " and " << bt;
    return failure();
  }
  if (node.intAttr("broadcast", 0) == 0) {
    if (at.getShape() != bt.getShape()) {
      node.fail() << "without broadcast = 1, opset " << node.opset
                  << " requires both inputs to have the same shape; got "
                  << at << " and " << bt;
      return failure();
    }
    return b;
  }
  int64_t rankA = at.getRank(), rankB = bt.getRank();
  // A scalar or one-element B broadcasts anywhere.
  if (bt.getNumElements() == 1)
    return b;
  int64_t axis = node.intAttr("axis", rankA - rankB);
  if (axis < 0)
    axis += rankA;
  if (axis < 0 || axis + rankB > rankA) {
    node.fail() << "broadcast axis " << node.intAttr("axis", rankA - rankB)
                << " does not place " << bt << " inside " << at;
    return failure();
  }
  SmallVector<int64_t> shape(rankA, 1);
  bool trailing = axis + rankB == rankA;
  for (int64_t i = 0; i < rankB; ++i) {
    int64_t d = bt.getDimSize(i);
    if (d != 1 && d != at.getDimSize(axis + i)) {
      node.fail() << "cannot broadcast " << bt << " to " << at
                  << " at axis " << axis;
      return failure();
    }
    shape[axis + i] = d;
  }
  // Trailing dimensions already line up under numpy's rule.
  if (trailing)
    return b;
  return reshapeTo(node, b, shape);
}

template <typename OpTy>
FailureOr<SmallVector<Value>> legacyBinary(OnnxNode &node) {
  FailureOr<Value> a = node.rankedInput(0), b = node.rankedInput(1);
  if (failed(a) || failed(b))
    return failure();
  FailureOr<Value> bb = legacyBroadcast(node, *a, *b);
  if (failed(bb))
    return failure();
  return one(build<OpTy>(node, *a, *bb));
}

/// Sum, Max, Min before opset 8: variadic, all inputs of one shape.
template <typename OpTy>
FailureOr<SmallVector<Value>> legacyVariadic(OnnxNode &node) {
  FailureOr<Value> acc = node.rankedInput(0);
  for (unsigned i = 1; succeeded(acc) && i < node.numInputs(); ++i) {
    FailureOr<Value> next = node.rankedInput(i);
    if (failed(next))
      return failure();
    if (typeOf(*next).getShape() != typeOf(*acc).getShape()) {
      node.fail() << "before opset 8, all inputs must have the same shape; "
                     "got "
                  << typeOf(*acc) << " and " << typeOf(*next);
      return failure();
    }
    acc = build<OpTy>(node, *acc, *next);
  }
  return one(acc);
}
} // namespace

/// PRelu before opset 7: one slope, or one per channel (axis 1), or the
/// input's shape.
FailureOr<SmallVector<Value>> mlir::kiln::convertPRelu1(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0), slope = node.rankedInput(1);
  if (failed(x) || failed(slope))
    return failure();
  RankedTensorType xt = typeOf(*x), st = typeOf(*slope);
  Value s = *slope;
  if (st.hasStaticShape() && st.getNumElements() > 1 &&
      st.getShape() != xt.getShape()) {
    if (st.getRank() != 1 || xt.getRank() < 2 ||
        st.getDimSize(0) != xt.getDimSize(1)) {
      node.fail() << "the slope " << st
                  << " must hold one value, one per channel (dimension 1) "
                     "or one per element of "
                  << xt;
      return failure();
    }
    SmallVector<int64_t> shape(xt.getRank() - 1, 1);
    shape[0] = st.getDimSize(0);
    FailureOr<Value> r = reshapeTo(node, s, shape);
    if (failed(r))
      return failure();
    s = *r;
  }
  return one(build<PReluOp>(node, *x, s));
}

FailureOr<SmallVector<Value>> mlir::kiln::convertAdd1(OnnxNode &node) {
  return legacyBinary<AddOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertSub1(OnnxNode &node) {
  return legacyBinary<SubOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertMul1(OnnxNode &node) {
  return legacyBinary<MulOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertDiv1(OnnxNode &node) {
  return legacyBinary<DivOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertPow1(OnnxNode &node) {
  return legacyBinary<PowOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertSum6(OnnxNode &node) {
  return legacyVariadic<AddOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertMax6(OnnxNode &node) {
  return legacyVariadic<MaxOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertMin6(OnnxNode &node) {
  return legacyVariadic<MinOp>(node);
}
