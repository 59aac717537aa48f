//===- DistinctResults.cpp - one tensor per function result -----*- C++ -*-===//
#include "kiln/Codegen/Common/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_DISTINCTRESULTSPASS
#include "kiln/Codegen/Common/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
struct DistinctResultsPass
    : mlir::kiln::impl::DistinctResultsPassBase<DistinctResultsPass> {
  void runOnOperation() override {
    OpBuilder b(&getContext());
    getOperation().walk([&](func::ReturnOp ret) {
      llvm::SmallDenseSet<Value> seen;
      for (OpOperand &operand : ret->getOpOperands()) {
        Value v = operand.get();
        auto type = dyn_cast<RankedTensorType>(v.getType());
        if (!type || seen.insert(v).second)
          continue;
        // A repeat: the caller gets its own copy.
        b.setInsertionPoint(ret);
        operand.set(bufferization::AllocTensorOp::create(
            b, ret.getLoc(), type, ValueRange{}, /*copy=*/v));
      }
    });
  }
};
} // namespace
