//===- Gather.cpp - ONNX gathers --------------------------------*- C++ -*-===//
//
// Gather, GatherElements and GatherND. Constant indices out of range are reported here;
// kiln's gathers clamp run-time ones into the data.
//
//===----------------------------------------------------------------------===//
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

/// GatherElements 11, 13.
FailureOr<SmallVector<Value>>
mlir::kiln::convertGatherElements(OnnxNode &node) {
  FailureOr<Value> data = node.rankedInput(0), indices = node.rankedInput(1);
  if (failed(data) || failed(indices))
    return failure();
  FailureOr<int64_t> axis = checkedGatherAxis(node, *data);
  if (failed(axis))
    return failure();
  return one(build<GatherElementsOp>(node, *data, *indices,
                                     node.builder.getI64IntegerAttr(*axis)));
}

/// GatherND 11, 12 (batch_dims), 13.
FailureOr<SmallVector<Value>> mlir::kiln::convertGatherND(OnnxNode &node) {
  FailureOr<Value> data = node.rankedInput(0), indices = node.rankedInput(1);
  if (failed(data) || failed(indices))
    return failure();
  int64_t b = node.intAttr("batch_dims", 0);
  RankedTensorType type = typeOf(*data), idx = typeOf(*indices);
  if (idx.getRank() >= 1 && !ShapedType::isDynamic(idx.getShape().back())) {
    int64_t q = idx.getShape().back();
    if (failed(checkConstantIndices(node, 1, [&](size_t k) {
          return b >= 0 && q > 0 && b + q <= type.getRank()
                     ? type.getDimSize(b + k % q)
                     : ShapedType::kDynamic;
        })))
      return failure();
  }
  return one(build<GatherNDOp>(node, *data, *indices,
                               node.builder.getI64IntegerAttr(b)));
}
