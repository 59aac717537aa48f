//===- Check.cpp - what the compile would say about each node -----*- C++ -*-===//
#include "kiln/Pipeline/Pipeline.h"

#include "Compilation.h"
#include "SymbolicShapes.h"

#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "kiln/Dialect/Onnx/OnnxDialect.h"
#include "kiln/Import/Onnx/OnnxImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringSet.h"

#include <regex>

using namespace mlir;
using namespace mlir::kiln;
using llvm::Expected;

Expected<CheckResult> kiln::check(const CompileOptions &o) {
  DialectRegistry registry;
  registerAllDialects(registry);
  registry.insert<mlir::kiln::KilnDialect, mlir::kiln::onnx::OnnxDialect>();
  MLIRContext ctx(registry, MLIRContext::Threading::DISABLED);
  std::vector<std::string> messages, repairs;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      messages.push_back(diag.str());
    else if (diag.getSeverity() == DiagnosticSeverity::Remark)
      repairs.push_back(diag.str());
    return success();
  });
  ImportOptions io;
  io.inputShapes = o.inputShapes;
  io.dims = o.dims;
  io.allowDynamicInputs = true;
  CheckResult result;
  io.symbolicDims = &result.symbolicDims;
  OwningOpRef<ModuleOp> module = importOnnxFile(ctx, o.inputPath, io);
  if (!module) {
    // An unreadable file is a failure; an input without a static shape is a
    // finding like any other.
    bool shapeOnly = !messages.empty() &&
                     llvm::all_of(messages, [](const std::string &m) {
                       return llvm::StringRef(m).starts_with("graph input");
                     });
    if (!shapeOnly) {
      std::string text;
      for (const std::string &m : messages)
        text += (text.empty() ? "" : "\n") + m;
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     text.empty() ? "import failed" : text);
    }
    result.otherErrors = messages;
    result.repairs = repairs;
    return result;
  }
  module->walk([&](Operation *op) {
    if (op->getName().getDialectNamespace() == "onnx" &&
        !isa<mlir::kiln::onnx::InitializerOp, mlir::kiln::onnx::NoValueOp>(op))
      ++result.numNodes;
  });
  llvm::StringMap<NodeKind> kinds = onnxNodeKinds(*module);
  // With every range given, the conversion knows the bounds a compile would
  // (a slice to a symbolic end that never passes the size, say).
  if (auto graph = module->lookupSymbol<func::FuncOp>("main_graph")) {
    if (Expected<SymbolicShapes> shapes =
            planSymbolicShapes(graph, result.symbolicDims))
      markSymbolicShapes(graph, *shapes);
    else
      llvm::consumeError(shapes.takeError());
  }
  PassManager pm(&ctx, ModuleOp::getOperationName());
  ConvertOnnxToKilnPassOptions convert;
  convert.maxTensorBytes = o.maxTensorBytes;
  pm.addPass(createConvertOnnxToKilnPass(convert));
  (void)pm.run(*module);
  // Dimensions a weight fixes (a Conv's channels): the size to suggest.
  module->walk([&](GuardOp guard) {
    auto symbol = guard->getAttrOfType<StringAttr>(kFixedSymbolAttr);
    auto size = guard->getAttrOfType<IntegerAttr>(kFixedSizeAttr);
    if (!symbol || !size)
      return;
    for (SymbolicDim &d : result.symbolicDims)
      if (d.dimParam == symbol.getValue() && !d.fixedSize) {
        d.fixedSize = size.getInt();
        d.fixedBy = nodeNameIn(guard->getLoc());
      }
  });
  // A node that converted, but to an op whose lowering cannot size a
  // symbolic dimension yet: the compile would stop there, so it is a
  // finding too (once per node).
  std::vector<NodeIssue> lowering;
  llvm::StringSet<> seen;
  module->walk([&](Operation *op) {
    if (!isa<KilnDialect>(op->getDialect()))
      return;
    std::optional<std::string> why = symbolicSizesUnsupported(op);
    std::string node = nodeNameIn(op->getLoc());
    auto kind = kinds.find(node);
    if (!why || kind == kinds.end() || !seen.insert(node).second)
      return;
    lowering.push_back(
        {node, kind->getValue().opType, kind->getValue().opset, *why});
  });
  static const std::regex nodeMessage(
      R"(^node '(.*)' \((.*), opset (-?[0-9]+)\): ([\s\S]*)$)");
  for (const std::string &m : messages) {
    std::smatch match;
    if (std::regex_match(m, match, nodeMessage))
      result.issues.push_back({match[1], match[2], std::stoll(match[3]),
                               match[4]});
    else
      result.otherErrors.push_back(m);
  }
  for (NodeIssue &issue : lowering)
    if (llvm::none_of(result.issues, [&](const NodeIssue &i) {
          return i.node == issue.node;
        }))
      result.issues.push_back(std::move(issue));
  result.repairs = repairs;
  return result;
}
