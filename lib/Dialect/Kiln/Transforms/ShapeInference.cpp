//===- ShapeInference.cpp - make every kiln shape static --------*- C++ -*-===//
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/Interfaces/InferTypeOpInterface.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_SHAPEINFERENCEPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Number of statically known dimensions; a refinement must not lose any.
int64_t staticDims(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return -1;
  return llvm::count_if(ranked.getShape(),
                        [](int64_t d) { return !ShapedType::isDynamic(d); });
}

struct ShapeInferencePass
    : mlir::kiln::impl::ShapeInferencePassBase<ShapeInferencePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // Ops are visited in order, so operands are refined before their users.
    WalkResult result = func.walk([&](Operation *op) {
      SmallVector<Type> inferred;
      if (op->hasTrait<OpTrait::SameOperandsAndResultType>() &&
          op->getNumOperands() > 0) {
        inferred.assign(op->getNumResults(), op->getOperand(0).getType());
      } else if (auto infer = dyn_cast<InferTypeOpInterface>(op)) {
        if (failed(infer.inferReturnTypes(
                op->getContext(), op->getLoc(), op->getOperands(),
                op->getAttrDictionary(), op->getPropertiesStorage(),
                op->getRegions(), inferred)))
          return WalkResult::interrupt();
      } else {
        return WalkResult::advance();
      }
      for (auto [res, type] : llvm::zip(op->getResults(), inferred))
        if (res.getType() != type &&
            staticDims(type) >= staticDims(res.getType()))
          res.setType(type);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();

    // Keep the signature in step with what the body now returns.
    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    func.setType(FunctionType::get(func.getContext(),
                                   func.getArgumentTypes(),
                                   ret.getOperandTypes()));
  }
};
} // namespace
