//===- LinearAlgebra.cpp - ONNX matrix products and Det ---------*- C++ -*-===//
#include "Build.h"

using namespace mlir;
using namespace mlir::kiln;

/// Det 11.
FailureOr<SmallVector<Value>> mlir::kiln::convertDet(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  return one(build<DetOp>(node, *x));
}
