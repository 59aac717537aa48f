//===- BatchVariants.cpp - one graph per batch size --------------*- C++ -*-===//
#include "BatchVariants.h"

#include "PassPipelines.h"
#include "SymbolicShapes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"
#include "kiln/Dialect/Onnx/OnnxDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

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
                        const std::vector<int64_t> &batchSizes,
                        bool onlySymbolic) {
  auto graph = module.lookupSymbol<func::FuncOp>("main_graph");
  if (!graph)
    return makeError("internal error: no main_graph function");
  if (batchSizes.empty())
    return std::vector<std::string>{"main_graph"};
  if (batchSizes.front() < 1)
    return makeError("batch sizes must be positive");
  for (auto [i, t] : llvm::enumerate(graph.getArgumentTypes()))
    if (!onlySymbolic && cast<RankedTensorType>(t).getRank() == 0)
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
      if (onlySymbolic && (shape.empty() || !ShapedType::isDynamic(shape[0]))) {
        types.push_back(t);
        continue;
      }
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

Expected<SymbolicBatch>
kiln::planSymbolicBatch(ModuleOp module, const std::vector<SymbolicDim> &dims,
                        const std::vector<int64_t> &batchSizes) {
  auto graph = module.lookupSymbol<func::FuncOp>("main_graph");
  if (!graph)
    return makeError("internal error: no main_graph function");
  SymbolicBatch batch;
  const SymbolicDim &first = dims.front();
  batch.name = first.dimParam.empty() ? first.input + "[0]" : first.dimParam;
  batch.min = first.bound->min;
  batch.max = first.bound->max;
  std::string how = "; batch variants need a leading batch dimension";
  for (const SymbolicDim &d : dims) {
    if (d.axis != 0)
      return makeError("error: input '" + d.input + "' has the range " +
                       toString(*d.bound) + " at axis " +
                       std::to_string(d.axis) + " (" + d.label() + ")" + how);
    if (!(*d.bound == *first.bound))
      return makeError("error: inputs '" + first.input + "' and '" + d.input +
                       "' lead with the ranges " + toString(*first.bound) +
                       " and " + toString(*d.bound) +
                       "; a batch shared by several inputs needs one range");
    if (d.dimParam != first.dimParam)
      return makeError("error: inputs '" + first.input + "' and '" + d.input +
                       "' lead with different symbols (" + first.label() +
                       " and " + d.label() +
                       "); Kiln runs one symbolic batch, so give them one "
                       "dim_param or fix one of them");
  }
  if (batch.min < 1)
    return makeError("error: the batch " + first.label() + " has the range " +
                     toString(*first.bound) +
                     "; a batch range must start at 1 or more");
  for (Type t : graph.getArgumentTypes()) {
    auto rt = cast<RankedTensorType>(t);
    batch.batchedInputs.push_back(rt.getRank() > 0 &&
                                  ShapedType::isDynamic(rt.getDimSize(0)));
  }
  batch.variants.push_back(1);
  for (int64_t b : batchSizes) {
    if (b < 1 || b > batch.max)
      return makeError("error: --batch-sizes has " + std::to_string(b) +
                       ", outside the range " + toString(*first.bound) +
                       " of the batch " + first.label());
    batch.variants.push_back(b);
  }
  if (batchSizes.empty())
    batch.variants.push_back(std::min<int64_t>(8, batch.max));
  llvm::sort(batch.variants);
  batch.variants.erase(std::unique(batch.variants.begin(), batch.variants.end()),
                       batch.variants.end());
  return batch;
}

namespace {
/// Whether `size` is a dimension of any value in `module`, or the value of a
/// small integer constant (a probe batch must be neither).
bool sizeOccurs(ModuleOp module, int64_t size) {
  bool found = false;
  module.walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      if (auto rt = dyn_cast<RankedTensorType>(t))
        found |= llvm::is_contained(rt.getShape(), size);
    for (Region &r : op->getRegions())
      for (Block &b : r)
        for (BlockArgument a : b.getArguments())
          if (auto rt = dyn_cast<RankedTensorType>(a.getType()))
            found |= llvm::is_contained(rt.getShape(), size);
    for (NamedAttribute attr : op->getAttrs())
      if (auto dense = dyn_cast<DenseIntElementsAttr>(attr.getValue());
          dense && dense.getNumElements() <= 4096)
        for (const APInt &v : dense.getValues<APInt>())
          found |= v.getSExtValue() == size;
  });
  return found;
}
} // namespace

Error kiln::proveBatchIndependence(ModuleOp module, const SymbolicBatch &batch,
                                   uint64_t maxTensorBytes,
                                   const SymbolicShapes *others) {
  int64_t probe = 0;
  static constexpr int64_t kPrimes[] = {211, 223, 227, 229, 233, 239, 241,
                                        251, 257, 263, 269, 271, 277, 281,
                                        283, 293, 307, 311, 313, 317};
  for (int64_t p : kPrimes)
    if (p > batch.max && !sizeOccurs(module, p)) {
      probe = p;
      break;
    }
  // A probe inside the range is right as well (it is no other size of the
  // model); past a large bound the probe graph grows with it: one past 4,096
  // unrolled a recurrent layer whose leading axis is time over 4,097 steps
  // (106 s, to learn that it mixes them).
  if (!probe)
    for (int64_t p : kPrimes)
      if (p >= batch.min && p <= batch.max && !sizeOccurs(module, p)) {
        probe = p;
        break;
      }
  // Far outside the range keeps the check about this model's sizes, not a
  // coincidence.
  if (!probe)
    for (int64_t p = std::max<int64_t>(batch.max + 1, 331);; p += 2)
      if (!sizeOccurs(module, p)) {
        probe = p;
        break;
      }
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
  // The conversion reports a model that reads the probe as a value.
  (*copy)->setAttr(
      kBatchProbeAttr,
      IntegerAttr::get(IntegerType::get(module.getContext(), 64), probe));
  Expected<std::vector<std::string>> names =
      makeBatchVariants(*copy, {probe}, /*onlySymbolic=*/true);
  if (!names)
    return names.takeError();
  if (others) {
    // The batch (symbol 0) is the probe now; the other symbols stay run-time
    // sizes, as in the graph that is compiled.
    SymbolicShapes rest = *others;
    for (std::vector<int32_t> &axes : rest.inputAxes)
      for (int32_t &s : axes)
        if (s == 0)
          s = -1;
    markSymbolicShapes(copy->lookupSymbol<func::FuncOp>(names->front()), rest);
  }
  // The checker reports kiln ops; name each as the ONNX node it came from,
  // "node 'n' (ReduceSum, opset 13): ...", like the other graph errors.
  llvm::StringMap<std::string> nodes;
  int64_t opset = 0;
  if (auto dict = module->getAttrOfType<DictionaryAttr>(
          onnx::OnnxDialect::kOpsetImportAttr))
    if (auto v = dict.getAs<IntegerAttr>("ai.onnx"))
      opset = v.getInt();
  copy->walk([&](Operation *op) {
    auto loc = dyn_cast<NameLoc>(op->getLoc());
    StringRef type = op->getName().getStringRef();
    if (!loc || !type.consume_front("onnx.") || type.contains('.') ||
        type == "Initializer")
      return;
    nodes[loc.getName().getValue()] = "node '" +
                                      loc.getName().getValue().str() + "' (" +
                                      type.str() + ", opset " +
                                      std::to_string(opset) + "): ";
  });
  MLIRContext *ctx = module.getContext();
  ScopedDiagnosticHandler named(ctx, [&](Diagnostic &diag) {
    auto loc = dyn_cast<NameLoc>(diag.getLocation());
    if (!loc || diag.getSeverity() != DiagnosticSeverity::Error)
      return failure();
    auto it = nodes.find(loc.getName().getValue());
    if (it == nodes.end() ||
        StringRef(diag.str()).starts_with(it->second))
      return failure();
    emitError(UnknownLoc::get(ctx)) << it->second << diag.str();
    return success();
  });
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  GraphPipelineOptions graph;
  graph.maxTensorBytes = maxTensorBytes;
  buildGraphPipeline(pm, graph);
  VerifyBatchIndependencePassOptions verify;
  verify.batch = probe;
  pm.nest<func::FuncOp>().addPass(createVerifyBatchIndependencePass(verify));
  if (failed(pm.run(*copy)))
    return makeError(
        "error: the symbolic dimension '" + batch.name + "' (range " +
        std::to_string(batch.min) + ".." + std::to_string(batch.max) +
        ") is not an independent batch of this model (see the nodes above, "
        "checked at the probe size " +
        std::to_string(probe) +
        "); Kiln runs a range only when every sample is computed from its "
        "own inputs, so give the dimension one size (--dim " +
        batch.name + "=N) and compile one .so per size");
  return Error::success();
}
