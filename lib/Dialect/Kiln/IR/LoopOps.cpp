//===- LoopOps.cpp - kiln.loop and kiln.yield -------------------*- C++ -*-===//
//
// The one graph op with a region: a loop whose trip count is known only at
// run time (ONNX Loop over a symbolic length, Scan over a symbolic axis),
// or too long to unroll, or that ends when its body says so.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"

using namespace mlir;
using namespace mlir::kiln;

LogicalResult LoopOp::verify() {
  Block &body = getBody().front();
  unsigned carried = getNumCarried();
  if (getNumResults() < carried)
    return emitOpError() << "has " << getNumResults() << " results for "
                         << carried << " loop-carried values";
  if (body.getNumArguments() != 1 + carried)
    return emitOpError() << "body takes " << body.getNumArguments()
                         << " arguments; expected the iteration number and "
                         << carried << " loop-carried values";
  auto iter = dyn_cast<RankedTensorType>(body.getArgument(0).getType());
  if (!iter || iter.getRank() != 0 || !iter.getElementType().isInteger(64))
    return emitOpError() << "iteration number must be tensor<i64>";
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError() << "body must end with kiln.yield";
  unsigned first = getEarlyExit() ? 1 : 0;
  if (yield.getValues().size() != first + getNumResults())
    return emitOpError() << "body yields " << yield.getValues().size()
                         << " values for " << getNumResults() << " results"
                         << (first ? " and the condition" : "");
  if (first) {
    auto cond = dyn_cast<RankedTensorType>(yield.getValues()[0].getType());
    if (!cond || cond.getRank() != 0 || !cond.getElementType().isInteger(1))
      return emitOpError() << "with early_exit, the body yields a tensor<i1> "
                              "condition first, not "
                           << yield.getValues()[0].getType();
  }
  ValueRange values = yield.getValues().drop_front(first);
  for (unsigned i = 0; i < carried; ++i) {
    Type t = getInits()[i].getType();
    if (body.getArgument(1 + i).getType() != t || getResult(i).getType() != t ||
        values[i].getType() != t)
      return emitOpError() << "loop-carried value " << i
                           << " must keep its type " << t
                           << " in the body argument, yield and result";
  }
  // I64Attr reads back unsigned: a negative bound is a huge one.
  if (getNumScans() > 0 && static_cast<int64_t>(getScanBound()) < 0)
    return emitOpError() << "scan outputs need a non-negative scan_bound";
  for (unsigned j = carried; j < getNumResults(); ++j) {
    auto slice = cast<RankedTensorType>(values[j].getType());
    auto stacked = cast<RankedTensorType>(getResult(j).getType());
    if (stacked.getRank() != slice.getRank() + 1 ||
        stacked.getShape().drop_front() != slice.getShape() ||
        stacked.getElementType() != slice.getElementType())
      return emitOpError() << "scan output " << j - carried << " " << stacked
                           << " is not the yielded slices " << slice
                           << " stacked on a new axis 0";
  }
  return success();
}

ValueRange LoopOp::getYieldedResults() {
  auto yield = cast<YieldOp>(getBody().front().getTerminator());
  return yield.getValues().drop_front(getEarlyExit() ? 1 : 0);
}
