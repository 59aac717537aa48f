//===- Optional.cpp - ONNX's optional values --------------------*- C++ -*-===//
//
// Optional, OptionalHasElement and OptionalGetElement inside a graph, as
// scripted models write `x if cond else None` and `if state is None`. Kiln
// has no optional values: an optional holding a tensor is that tensor, an
// empty one is an absent value (as an omitted input is). Whether an optional
// has an element is therefore known at compile time, a constant that folds
// the If around it. Optional graph inputs and outputs stay refused (the C
// ABI passes tensors).
//
//===----------------------------------------------------------------------===//
#include "Build.h"
#include "kiln/Dialect/Onnx/OnnxDialect.h"

using namespace mlir;
using namespace mlir::kiln;

/// Optional 15: its input, or an absent value without one.
FailureOr<SmallVector<Value>> mlir::kiln::convertOptional(OnnxNode &node) {
  if (Value x = node.input(0)) {
    FailureOr<Value> t = node.rankedInput(0);
    if (failed(t))
      return failure();
    return SmallVector<Value>{*t};
  }
  Value none = onnx::NoValueOp::create(node.builder, node.loc(),
                                       node.builder.getNoneType())
                   .getResult();
  return SmallVector<Value>{none};
}

/// OptionalHasElement 15, 18: a constant, false for an absent input.
FailureOr<SmallVector<Value>>
mlir::kiln::convertOptionalHasElement(OnnxNode &node) {
  auto type = RankedTensorType::get({}, node.builder.getI1Type());
  return SmallVector<Value>{splatConstant(node, type, node.input(0) ? 1 : 0)};
}

/// OptionalGetElement 15, 18: the tensor; an empty optional is an error.
FailureOr<SmallVector<Value>>
mlir::kiln::convertOptionalGetElement(OnnxNode &node) {
  if (!node.input(0)) {
    node.fail() << "reads an optional that is empty (an Optional without "
                   "input, or an omitted input); ONNX defines no result for "
                   "it. Guard the read with OptionalHasElement and If";
    return failure();
  }
  FailureOr<Value> t = node.rankedInput(0);
  if (failed(t))
    return failure();
  return SmallVector<Value>{*t};
}
