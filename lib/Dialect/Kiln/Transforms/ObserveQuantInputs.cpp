//===- ObserveQuantInputs.cpp - the calibration model ---------*- C++ -*-===//
//
// --quantize=static, first step: the input of every MatMul/Gemm with constant
// weights and every NHWC group-1 or depthwise convolution becomes an extra
// result of the model, which the compiler runs on the calibration data to
// find each input's range (lib/Runner/Calibrate.cpp).
//
//===----------------------------------------------------------------------===//
#include "QuantizeCommon.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"
#include "kiln/Dialect/Onnx/OnnxDialect.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_OBSERVEQUANTINPUTSPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::quant;

namespace {
struct ObserveQuantInputsPass
    : mlir::kiln::impl::ObserveQuantInputsPassBase<ObserveQuantInputsPass> {
  using ObserveQuantInputsPassBase::ObserveQuantInputsPassBase;

  /// The nodes to observe: static int8's candidates, or with `all` every
  /// MatMul/Gemm/Conv whose first input is f32.
  SmallVector<Operation *> observedNodes(func::FuncOp func) {
    SmallVector<Operation *> ops;
    if (all) {
      func.walk([&](Operation *op) {
        if (isa<MatMulOp, GemmOp, Conv2DOp>(op) &&
            cast<ShapedType>(op->getOperand(0).getType())
                .getElementType()
                .isF32())
          ops.push_back(op);
      });
      return ops;
    }
    for (const StaticNode &node : staticNodes(func))
      if (node.why.empty())
        ops.push_back(node.op);
    return ops;
  }

  void runOnOperation() override {
    SmallVector<Attribute> nodeNames;
    getOperation().walk([&](func::FuncOp func) {
      if (func.isExternal())
        return;
      auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
      SmallVector<Value> results(ret.getOperands());
      unsigned first = results.size();
      // One result per distinct value (a block's downsample branch and its
      // first conv read the same tensor), named by every index it serves:
      // bufferization cannot return one buffer twice.
      llvm::MapVector<Value, std::string> names;
      int64_t index = 0;
      for (Operation *op : observedNodes(func)) {
        std::string &name = names[op->getOperand(0)];
        name += (name.empty() ? kObservePrefix : ",") + std::to_string(index++);
        nodeNames.push_back(
            StringAttr::get(func.getContext(), nodeName(op->getLoc())));
      }
      if (names.empty())
        return;
      for (auto &[value, name] : names)
        results.push_back(value);
      ret->setOperands(results);
      func.setType(FunctionType::get(func.getContext(),
                                     func.getArgumentTypes(),
                                     ValueRange(results).getTypes()));
      for (auto [i, entry] : llvm::enumerate(names))
        func.setResultAttr(first + i, onnx::OnnxDialect::kValueNameAttr,
                           StringAttr::get(func.getContext(), entry.second));
    });
    getOperation()->setAttr(kObservedNodesAttr,
                            ArrayAttr::get(&getContext(), nodeNames));
  }
};

} // namespace
