//===- Swish.cpp - ONNX Swish and SwiGLU ------------------------*- C++ -*-===//
//
// Swish (x * sigmoid(alpha * x)) and the gated SwiGLU (Swish(A) * B), as
// elementwise kiln ops that the code generator fuses into one loop.
//
//===----------------------------------------------------------------------===//
#include "Build.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// x * sigmoid(alpha * x), the alpha product left out when alpha is 1.
FailureOr<Value> swish(OnnxNode &node, Value x) {
  double alpha = node.floatAttr("alpha", 1.0f);
  FailureOr<Value> gate = x;
  if (alpha != 1.0)
    gate = build<MulOp>(node, x, scalarConstant(node, elementOf(x), alpha));
  if (failed(gate) || failed(gate = build<SigmoidOp>(node, *gate)))
    return failure();
  return build<MulOp>(node, x, *gate);
}
} // namespace

/// Swish 24.
FailureOr<SmallVector<Value>> mlir::kiln::convertSwish(OnnxNode &node) {
  FailureOr<Value> x = elementwiseFloatInput(node, 0);
  if (failed(x))
    return failure();
  return one(swish(node, *x));
}

/// SwiGLU 28: Swish(A) * B for A and B of one shape (no broadcasting).
FailureOr<SmallVector<Value>> mlir::kiln::convertSwiGLU(OnnxNode &node) {
  FailureOr<Value> a = elementwiseFloatInput(node, 0), b = elementwiseFloatInput(node, 1);
  if (failed(a) || failed(b))
    return failure();
  if (typeOf(*a) != typeOf(*b)) {
    node.fail() << "A (" << typeOf(*a) << ") and B (" << typeOf(*b)
                << ") must have the same shape and type; SwiGLU does not "
                   "broadcast (Expand or Cast one of them first)";
    return failure();
  }
  FailureOr<Value> gate = swish(node, *a);
  if (failed(gate))
    return failure();
  return one(build<MulOp>(node, *gate, *b));
}
