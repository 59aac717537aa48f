//===- Generators.cpp - ONNX ops that make a tensor -------------*- C++ -*-===//
#include "Build.h"

using namespace mlir;
using namespace mlir::kiln;

FailureOr<SmallVector<Value>> mlir::kiln::convertConstant(OnnxNode &node) {
  Builder &b = node.builder;
  ElementsAttr value;
  if (auto t = node.op->getAttrOfType<ElementsAttr>("value")) {
    value = t;
  } else if (auto f = node.op->getAttrOfType<FloatAttr>("value_float")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                                   (float)f.getValueAsDouble());
  } else if (auto i = node.op->getAttrOfType<IntegerAttr>("value_int")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                   i.getInt());
  } else if (auto fs = node.op->getAttrOfType<ArrayAttr>("value_floats")) {
    SmallVector<float> v;
    for (Attribute a : fs)
      v.push_back(cast<FloatAttr>(a).getValueAsDouble());
    value = DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)v.size()}, b.getF32Type()),
        ArrayRef<float>(v));
  } else if (std::optional<SmallVector<int64_t>> is =
                 node.intsAttr("value_ints")) {
    value = DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)is->size()}, b.getI64Type()),
        ArrayRef<int64_t>(*is));
  } else {
    node.fail() << "only tensor, float, int, floats and ints values are "
                   "supported (sparse and string constants are not)";
    return failure();
  }
  Value c =
      ConstantOp::create(node.builder, node.loc(), value.getType(), value);
  return SmallVector<Value>{c};
}
