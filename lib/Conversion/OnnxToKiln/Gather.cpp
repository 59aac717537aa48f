//===- Gather.cpp - ONNX gathers --------------------------------*- C++ -*-===//
#include "Build.h"

using namespace mlir;
using namespace mlir::kiln;

/// Gather 1, 11, 13. Constant indices are checked against the axis here;
/// kiln.gather clamps whatever arrives at run time.
FailureOr<SmallVector<Value>> mlir::kiln::convertGather(OnnxNode &node) {
  FailureOr<Value> data = node.rankedInput(0), indices = node.rankedInput(1);
  if (failed(data) || failed(indices))
    return failure();
  FailureOr<int64_t> axis = checkedGatherAxis(node, *data);
  if (failed(axis))
    return failure();
  return one(build<GatherOp>(node, *data, *indices,
                             node.builder.getI64IntegerAttr(*axis)));
}
