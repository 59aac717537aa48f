//===- LoopFinish.cpp - completing a run-time ONNX Loop -------*- C++ -*-===//
//
// A Loop that runs at run time becomes a kiln.loop whose body the
// conversion converts after the loop op itself (ControlFlow.cpp). Once it
// has, finishOnnxLoop checks what the body yields against the loop: each
// loop-carried value keeps its init's type and run-time sizes (every
// iteration writes over one buffer), and each scan output is typed as the
// stack of its slices, with the sizes the lowering computes before the loop.
// A carried value the body makes static where its init is symbolic (a
// weight in the body fixes a channel that the model declares as a
// dim_param) is pinned to those sizes before a loop at the top level.
//
//===----------------------------------------------------------------------===//
#include "ControlFlow.h"
#include "kiln/Conversion/OnnxToKiln/OnnxToKiln.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// The dimensions `init` has symbolic where `after` has them static, with
/// those sizes; nullopt when the two differ otherwise (rank, element type,
/// or a static size of `init` that `after` changes).
std::optional<SmallVector<std::pair<int64_t, int64_t>>>
staticInBody(RankedTensorType init, Type after) {
  auto a = dyn_cast<RankedTensorType>(after);
  if (!a || a.getRank() != init.getRank() ||
      a.getElementType() != init.getElementType())
    return std::nullopt;
  SmallVector<std::pair<int64_t, int64_t>> pins;
  for (int64_t d = 0; d < init.getRank(); ++d) {
    if (init.isDynamicDim(d) && !a.isDynamicDim(d))
      pins.push_back({d, a.getDimSize(d)});
    else if (init.getDimSize(d) != a.getDimSize(d))
      return std::nullopt;
  }
  if (pins.empty())
    return std::nullopt;
  return pins;
}

/// Carried value `i`, whose body yields it at type `after` with the sizes
/// `pins` static: a guard before the loop checks that the init has those
/// sizes (the body could not run otherwise, and a guard in it could not
/// stop the write over the init's buffer), and the loop carries the static
/// type from then on. Only a loop at the top level, where a failed guard
/// ends the run; false (building nothing) elsewhere.
bool pinCarried(LoopOp loop, unsigned i, RankedTensorType after,
                ArrayRef<std::pair<int64_t, int64_t>> pins,
                SymbolicSizes &sizes) {
  if (!isa<func::FuncOp>(loop->getParentOp()) ||
      loop->hasAttr(kSpeculativeAttr))
    return false;
  OpBuilder b(loop);
  // Its description is the ONNX Loop's (kOnnxNodeAttr).
  OnnxNode node(loop, b, /*opset=*/0);
  node.sizes = &sizes;
  Value init = loop.getInits()[i];
  FailureOr<Value> pinned = pinDims(
      node, init, pins, "the body needs loop-carried value " + Twine(i) + "'s");
  if (failed(pinned) || (*pinned).getType() != after)
    return false;
  SmallVector<SymSize> dims = sizes.dims(*pinned);
  loop.getInitsMutable()[i].assign(*pinned);
  BlockArgument arg = loop.getBody().front().getArgument(1 + i);
  arg.setType(after);
  sizes.setDims(arg, dims);
  loop.getResult(i).setType(after);
  sizes.setDims(loop.getResult(i), dims);
  return true;
}
} // namespace

LogicalResult mlir::kiln::finishOnnxLoop(Operation *op, SymbolicSizes &sizes) {
  auto loop = cast<LoopOp>(op);
  std::string node;
  if (auto name = loop->getAttrOfType<StringAttr>(kOnnxNodeAttr))
    node = name.str();
  Block &block = loop.getBody().front();
  Operation *yield = block.getTerminator();
  ValueRange values = yield->getOperands().drop_front(); // the condition
  bool earlyExit = loop.getEarlyExit();
  unsigned n = loop.getNumCarried();
  if (values.size() != loop.getNumResults())
    return loop.emitError()
           << node << ": the body yields " << values.size()
           << " values after its condition; expected " << loop.getNumResults();
  // Every iteration writes over the init's buffer, so the type and the
  // run-time sizes must be the init's: a guard in the body could not stop
  // the write.
  for (unsigned i = 0; i < n; ++i) {
    Value init = loop.getInits()[i];
    auto type = cast<RankedTensorType>(init.getType());
    if (values[i].getType() != type) {
      auto after = cast<RankedTensorType>(values[i].getType());
      if (std::optional<SmallVector<std::pair<int64_t, int64_t>>> pins =
              staticInBody(type, after);
          pins && pinCarried(loop, i, after, *pins, sizes))
        type = after;
    }
    if (values[i].getType() != type)
      return loop.emitError()
             << node << ": loop-carried value " << i << " is " << type
             << " before the loop and " << values[i].getType()
             << " after an iteration; a loop-carried value that changes "
                "shape is not supported with a run-time trip count";
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d))
        continue;
      SymSize before = sizes.dim(init, d), after = sizes.dim(values[i], d);
      if (before != after)
        return loop.emitError()
               << node << ": loop-carried value " << i << " has "
               << sizes.str(before) << " elements along axis " << d
               << " before the loop and " << sizes.str(after)
               << " after an iteration, which Kiln cannot prove equal; a "
                  "loop-carried value must keep its sizes with a run-time "
                  "trip count (give the trip count a constant, or carry a "
                  "value of fixed size)";
    }
  }
  if (earlyExit) {
    auto cond = dyn_cast<RankedTensorType>(yield->getOperand(0).getType());
    if (!cond || cond.getRank() != 0 || !cond.getElementType().isInteger(1))
      return loop.emitError()
             << node << ": the body's condition output is "
             << yield->getOperand(0).getType() << "; it must be one bool";
  }
  std::optional<SmallVector<SymSize>> trips =
      sizes.contents(loop.getTripCount());
  for (unsigned j = n; j < values.size(); ++j) {
    auto slice = dyn_cast<RankedTensorType>(values[j].getType());
    if (!slice)
      return loop.emitError()
             << node << ": scan output " << j - n << " stacks slices of type "
             << values[j].getType() << ", which has no rank";
    SmallVector<int64_t> shape{ShapedType::kDynamic};
    llvm::append_range(shape, slice.getShape());
    Value result = loop.getResult(j);
    result.setType(RankedTensorType::get(shape, slice.getElementType()));
    // However many iterations run, there are at most scan_bound rows (the
    // buffer's): a Range or Trilu sized by them is bounded even where the
    // trip count's own value is not known here.
    if (int64_t bound = loop.getScanBound(); bound > 0)
      sizes.boundByOptions(result, 0,
                           {SymSize::constant(0), SymSize::constant(bound)});
    // Slices of run-time shape (a symbolic batch) are stacked at sizes the
    // lowering computes before the loop; the result's sizes are known here
    // when they come from values outside the loop (the row count, when the
    // trip count is data, a size of its own).
    if (!earlyExit) {
      SmallVector<SymSize> dims{
          trips && trips->size() == 1 ? trips->front() : sizes.dim(result, 0)};
      for (int64_t d = 0; d < slice.getRank(); ++d) {
        SymSize s = slice.isDynamicDim(d)
                        ? sizes.dim(values[j], d)
                        : SymSize::constant(slice.getDimSize(d));
        if (!sizes.definedOutside(s, loop.getBody()))
          break;
        dims.push_back(s);
      }
      if ((int64_t)dims.size() == 1 + slice.getRank())
        sizes.setDims(result, dims);
    }
  }
  loop->removeAttr(kOnnxNodeAttr);
  OpBuilder b(yield);
  YieldOp::create(b, yield->getLoc(),
                  earlyExit ? ValueRange(yield->getOperands()) : values);
  yield->erase();
  return success();
}
