//===- Scatter.cpp - ONNX scatters ------------------------------*- C++ -*-===//
//
// ScatterElements (and the deprecated Scatter, the same op) and ScatterND.
//
//===----------------------------------------------------------------------===//
#include "Build.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
FailureOr<StringAttr> reductionAttr(OnnxNode &node) {
  std::string r = node.strAttr("reduction", "none");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min") {
    node.fail() << "reduction '" << r
                << "' is not supported; expected none, add, mul, max or min";
    return failure();
  }
  return node.builder.getStringAttr(r);
}

} // namespace

/// ScatterElements 11, 13, 16 (reduction), 18 (max/min); Scatter 9, 11.
FailureOr<SmallVector<Value>>
mlir::kiln::convertScatterElements(OnnxNode &node) {
  FailureOr<Value> data = node.rankedInput(0), indices = node.rankedInput(1),
                   updates = node.rankedInput(2);
  if (failed(data) || failed(indices) || failed(updates))
    return failure();
  RankedTensorType type = typeOf(*data);
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.intAttr("axis", 0), type.getRank());
  FailureOr<StringAttr> reduction = reductionAttr(node);
  if (failed(axis) || failed(reduction))
    return failure();
  if (failed(checkConstantIndices(
          node, 1, [&](size_t) { return type.getDimSize(*axis); })))
    return failure();
  return one(build<ScatterElementsOp>(node, *data, *indices, *updates,
                                      node.builder.getI64IntegerAttr(*axis),
                                      *reduction));
}

/// ScatterND 11, 13, 16 (reduction), 18 (max/min).
FailureOr<SmallVector<Value>> mlir::kiln::convertScatterND(OnnxNode &node) {
  FailureOr<Value> data = node.rankedInput(0), indices = node.rankedInput(1),
                   updates = node.rankedInput(2);
  if (failed(data) || failed(indices) || failed(updates))
    return failure();
  FailureOr<StringAttr> reduction = reductionAttr(node);
  if (failed(reduction))
    return failure();
  RankedTensorType type = typeOf(*data), idx = typeOf(*indices);
  if (idx.getRank() >= 1 && !ShapedType::isDynamic(idx.getShape().back())) {
    int64_t q = idx.getShape().back();
    if (failed(checkConstantIndices(node, 1, [&](size_t k) {
          return q > 0 && q <= type.getRank() ? type.getDimSize(k % q)
                                              : ShapedType::kDynamic;
        })))
      return failure();
  }
  return one(build<ScatterNDOp>(node, *data, *indices, *updates, *reduction));
}
