//===- BatchVariants.cpp - one graph per batch size --------------*- C++ -*-===//
#include "BatchVariants.h"

#include "kiln/Dialect/Onnx/OnnxDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::kiln;
using llvm::Error;
using llvm::Expected;

namespace {
Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}
} // namespace

Expected<std::vector<std::string>>
kiln::makeBatchVariants(ModuleOp module,
                        const std::vector<int64_t> &batchSizes) {
  auto graph = module.lookupSymbol<func::FuncOp>("main_graph");
  if (!graph)
    return makeError("internal error: no main_graph function");
  if (batchSizes.empty())
    return std::vector<std::string>{"main_graph"};
  if (batchSizes.front() < 1)
    return makeError("batch sizes must be positive");
  for (auto [i, t] : llvm::enumerate(graph.getArgumentTypes()))
    if (cast<RankedTensorType>(t).getRank() == 0)
      return makeError("--batch-sizes needs a leading batch dimension, but "
                     "input " +
                     std::to_string(i) + " is a scalar");
  std::vector<std::string> entryNames;
  OpBuilder b(module.getContext());
  b.setInsertionPoint(graph);
  for (int64_t batch : batchSizes) {
    auto variant = cast<func::FuncOp>(b.clone(*graph));
    std::string name = "main_graph_b" + std::to_string(batch);
    variant.setSymName(name);
    SmallVector<Type> types;
    for (BlockArgument arg : variant.getArguments()) {
      auto t = cast<RankedTensorType>(arg.getType());
      SmallVector<int64_t> shape(t.getShape());
      shape[0] = batch;
      arg.setType(RankedTensorType::get(shape, t.getElementType()));
      types.push_back(arg.getType());
    }
    variant.setType(b.getFunctionType(types, variant.getResultTypes()));
    // ONNX's shape inference typed the nodes for the original batch; those
    // types no longer hold, so forget them (OnnxToKiln infers its own).
    variant.walk([&](Operation *op) {
      if (op->getName().getDialectNamespace() != "onnx" ||
          isa<onnx::InitializerOp>(op))
        return;
      for (OpResult r : op->getResults())
        if (auto t = dyn_cast<RankedTensorType>(r.getType()))
          r.setType(UnrankedTensorType::get(t.getElementType()));
    });
    entryNames.push_back(name);
  }
  graph.erase();
  return entryNames;
}

Error kiln::checkBatchVariantOutputs(ModuleOp module,
                                     const std::vector<std::string> &entryNames,
                                     const std::vector<int64_t> &batchSizes,
                                     const std::vector<TensorDesc> &outputs) {
  if (batchSizes.empty())
    return Error::success();
  for (auto [i, name] : llvm::enumerate(entryNames)) {
    auto variant = module.lookupSymbol<func::FuncOp>(name);
    for (auto [j, t] : llvm::enumerate(variant.getResultTypes())) {
      auto rt = cast<RankedTensorType>(t);
      if (rt.getRank() == 0 || rt.getDimSize(0) != batchSizes[i])
        return makeError(
            "output '" + outputs[j].name +
            "' does not have the batch size " + std::to_string(batchSizes[i]) +
            " as its leading dimension in that variant; --batch-sizes needs "
            "a model whose leading input and output dimension is the batch");
    }
  }
  return Error::success();
}
