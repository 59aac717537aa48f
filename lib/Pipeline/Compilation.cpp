//===- Compilation.cpp - import, precision, graph and linalg -----*- C++
//-*-===//
//
// The phases of a compile up to linalg on tensors. The precision plan is in
// Precision.cpp; code generation and the files it writes are in
// Generate.cpp.
//
//===----------------------------------------------------------------------===//
#include "Compilation.h"
#include "BatchVariants.h"
#include "Calibration.h"

#include "kiln/Codegen/CPU/Passes.h"
#include "kiln/Codegen/Common/Passes.h"
#include "kiln/Codegen/GPU/Passes.h"
#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"
#include "kiln/Dialect/Onnx/OnnxDialect.h"
#include "kiln/Import/Onnx/OnnxImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Remarks.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <csignal>
#include <unistd.h>
#include <cstdlib>
#include <mutex>
#include <regex>

using namespace mlir;
using namespace mlir::kiln;
using llvm::Error;
using llvm::Expected;

namespace {
Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

void registerEverythingOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerAllPasses();
    registerKilnPasses();
    registerKilnConversionPasses();
    registerKilnCodegenCommonPasses();
    registerKilnCPUPasses();
    registerKilnGPUPasses();
  });
}

DialectRegistry compilerDialects() {
  DialectRegistry registry;
  registerBoundedAnalysisModels(registry);
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  // The GPU target translates its kernels (NVVM, GPU dialects) to LLVM IR.
  registerAllToLLVMIRTranslations(registry);
  registry.insert<KilnDialect, onnx::OnnxDialect>();
  return registry;
}

/// "node 'n': error: ..." as compilers print it. Importer and OnnxToKiln
/// messages name their node, input or tensor themselves.
std::string formatError(Diagnostic &diag) {
  std::string text;
  llvm::raw_string_ostream os(text);
  Location loc = diag.getLocation();
  std::string msg = diag.str();
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    os << file.getFilename().getValue() << ": ";
  } else if (auto name = dyn_cast<NameLoc>(loc)) {
    if (!llvm::StringRef(msg).contains("'" + name.getName().str() + "'"))
      os << "node '" << name.getName().getValue() << "': ";
  } else if (!isa<UnknownLoc>(loc)) {
    os << loc << ": ";
  }
  os << "error: " << msg;
  return text;
}

/// --remarks: every op code generation left off its fast path, as
/// "node 'n': pass: no <what>: <why>", once each (batch variants repeat
/// them once per function).
class CollectRemarks final : public remark::detail::MLIRRemarkStreamerBase {
public:
  explicit CollectRemarks(std::vector<std::string> &out) : out(out) {}
  void streamOptimizationRemark(const remark::detail::Remark &r) override {
    std::string text;
    llvm::raw_string_ostream os(text);
    Location loc = r.getLocation();
    if (auto name = dyn_cast<NameLoc>(loc))
      os << "node '" << name.getName().getValue() << "': ";
    os << r.getCategoryName() << ": no " << r.getRemarkName();
    for (const remark::detail::Remark::Arg &arg : r.getArgs())
      os << ": " << arg.val;
    if (!llvm::is_contained(out, text))
      out.push_back(text);
  }

private:
  std::vector<std::string> &out;
};
} // namespace

Compilation::Compilation(const CompileRequest &request)
    : request(request), options(request.options),
      context((registerEverythingOnce(), compilerDialects()),
              MLIRContext::Threading::DISABLED) {
  context.getDiagEngine().registerHandler([this](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Remark) {
      // Batch variants repeat the same remark once per function.
      std::vector<std::string> &notes = outcome.result.notes;
      if (!llvm::is_contained(notes, diag.str()))
        notes.push_back(diag.str());
    } else if (diag.getSeverity() == DiagnosticSeverity::Error) {
      std::string text = describeError(diag);
      if (!text.empty())
        errors.push_back(text);
    }
    return success();
  });
  timing.setEnabled(options.timing);
  rootTiming = timing.getRootScope();
  if (options.remarks) {
    remark::RemarkCategories categories;
    categories.missed = ".*";
    (void)remark::enableOptimizationRemarks(
        context, std::make_unique<CollectRemarks>(outcome.result.remarks),
        std::make_unique<remark::RemarkEmittingPolicyAll>(), categories);
  }
}

Compilation::~Compilation() = default;

Expected<CompileOutcome> Compilation::run() {
  if (Error e = validateOptions())
    return std::move(e);
  if (Error e = importModel())
    return std::move(e);
  if (options.emit == EmitKind::Import)
    return finishText();
  if (Error e = planPrecision())
    return std::move(e);
  if (Error e = lowerToGraph())
    return std::move(e);
  if (options.emit == EmitKind::Kiln)
    return finishText();
  if (Error e = planDataDependentSizes())
    return std::move(e);
  if (Error e = describeModel())
    return std::move(e);
  if (Error e = lowerToLinalg())
    return std::move(e);
  if (options.emit == EmitKind::Linalg)
    return finishText();
  if (options.target == Target::Cuda)
    return generateGPU();
  return generateCPU();
}

Error Compilation::diagnosticsError(const std::string &fallback) const {
  std::string text;
  for (const std::string &m : errors)
    text += (text.empty() ? "" : "\n") + m;
  return makeError(text.empty() ? fallback : text);
}

namespace {
/// Records the argument of the pass now running (see describeError).
class CurrentPass final : public PassInstrumentation {
public:
  explicit CurrentPass(std::string &name) : name(name) {}
  void runBeforePass(Pass *pass, Operation *) override {
    name = pass->getArgument().empty() ? pass->getName().str()
                                       : pass->getArgument().str();
  }

private:
  std::string &name;
};

/// KILN_TEST_FAULT's pass: "crash" raises SIGSEGV, "error" fails with an
/// MLIR-style message on the first op that names a node, "invalid" succeeds
/// but leaves that op with an attribute the Kiln dialect's verifier rejects.
struct TestFaultPass final
    : PassWrapper<TestFaultPass, OperationPass<ModuleOp>> {
  explicit TestFaultPass(std::string kind) : kind(std::move(kind)) {}
  StringRef getArgument() const override { return "kiln-test-fault"; }
  void runOnOperation() override {
    if (kind == "crash")
      std::raise(SIGSEGV);
    getOperation()->walk([&](Operation *op) {
      if (!isa<NameLoc>(op->getLoc()))
        return WalkResult::advance();
      if (kind == "invalid")
        op->setAttr("kiln.test_fault", UnitAttr::get(op->getContext()));
      else
        op->emitOpError() << "operand #0 must be a test fault, but got "
                             "something else";
      return WalkResult::interrupt();
    });
    if (kind != "invalid")
      signalPassFailure();
  }
  std::string kind;
};

std::unique_ptr<Pass> createTestFaultPass(std::string kind) {
  return std::make_unique<TestFaultPass>(std::move(kind));
}

} // namespace

llvm::StringMap<NodeKind> kiln::onnxNodeKinds(ModuleOp module) {
  llvm::StringMap<int64_t> opsets;
  if (auto dict = module->getAttrOfType<DictionaryAttr>(
          onnx::OnnxDialect::kOpsetImportAttr))
    for (NamedAttribute entry : dict)
      opsets[entry.getName() == "ai.onnx" ? "" : entry.getName().str()] =
          cast<IntegerAttr>(entry.getValue()).getInt();
  llvm::StringMap<NodeKind> kinds;
  module->walk([&](Operation *op) {
    StringRef full = op->getName().getStringRef();
    auto name = dyn_cast<NameLoc>(op->getLoc());
    if (!name || !full.consume_front("onnx.") ||
        isa<onnx::InitializerOp, onnx::NoValueOp>(op))
      return;
    size_t dot = full.rfind('.');
    StringRef domain = dot == StringRef::npos ? "" : full.take_front(dot);
    StringRef type = dot == StringRef::npos ? full : full.drop_front(dot + 1);
    kinds[name.getName().getValue()] = {type.str(), opsets.lookup(domain)};
  });
  return kinds;
}

/// The first node name in `loc` (a NameLoc, possibly inside fused or
/// call-site locations).
std::string kiln::nodeNameIn(Location loc) {
  std::string found;
  loc->walk([&](Location l) {
    if (auto name = dyn_cast<NameLoc>(l)) {
      found = name.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

void Compilation::recordNodeKinds() {
  for (auto &entry : onnxNodeKinds(*module))
    nodeKinds[entry.getKey()] = "(" + entry.getValue().opType + ", opset " +
                                std::to_string(entry.getValue().opset) + ")";
}

std::string Compilation::describeError(Diagnostic &diag) {
  // Kiln's own diagnostics name their node and say what to do; those of
  // the ONNX conversion (and the batch proof) are about the model.
  static const std::regex kilnStyle(R"(^node '.*' \(.*, opset -?[0-9]+\): )");
  // A lowering that meets a symbolic dimension it cannot size yet says so
  // and tells the user to give the dimensions sizes: a known limit of Kiln,
  // reported against the model's node, not a crash.
  static const std::regex symbolicLimit(
      R"(give the symbolic dimensions (one size|sizes))");
  std::string msg = diag.str();
  int earlier = phaseErrors++;
  std::string node = nodeNameIn(diag.getLocation());
  if (!currentPass.empty() && !node.empty() &&
      std::regex_search(msg, symbolicLimit) &&
      !std::regex_search(msg, kilnStyle)) {
    std::string text = "error: node '" + node + "'";
    auto kind = nodeKinds.find(node);
    if (kind != nodeKinds.end())
      text += " " + kind->second;
    return text + ": " + msg;
  }
  bool internal = !currentPass.empty() &&
                  currentPass != "kiln-convert-onnx-to-kiln" &&
                  currentPass != "kiln-verify-batch-independence" &&
                  !std::regex_search(msg, kilnStyle);
  if (!internal)
    return formatError(diag);
  std::string text = "error: internal error in pass '" + currentPass + "'";
  if (!node.empty()) {
    text += " while compiling node '" + node + "'";
    auto kind = nodeKinds.find(node);
    if (kind != nodeKinds.end())
      text += " " + kind->second;
  }
  if (llvm::StringRef(msg).starts_with("Failures have been detected")) {
    // MLIR's summary of a failed pipeline: after a diagnostic of the pass
    // itself it adds nothing; alone, the pass crashed.
    if (earlier > 0)
      return "";
    msg = "the pass crashed";
  }
  text += ": " + msg + ". This is a bug in Kiln, not in the model; please "
                       "report it with the model";
  if (!reproducerPath.empty() && llvm::sys::fs::exists(reproducerPath))
    text += " and the reproducer MLIR wrote to " + reproducerPath;
  return text;
}

LogicalResult
Compilation::runPasses(llvm::function_ref<void(OpPassManager &)> build,
                       llvm::StringRef phase) {
  PassManager pm(&context, ModuleOp::getOperationName());
  // The graph phase verifies after every pass: a malformed model can still
  // make invalid IR there. The later phases see only IR Kiln's own passes
  // made; verifying it after each of their passes took a third of a dynamic
  // encoder's code generation (0.8 of 2.4 s, four times a static compile's
  // share), so they verify their result once, and --verify-each (a compiler
  // developer finding the pass that broke the IR) verifies every pass.
  bool everyPass = options.verifyEach || phase == "graph";
  pm.enableVerifier(everyPass);
  Phase t(rootTiming, phases, phase, options.progress);
  pm.enableTiming(t.scope);
  pm.addInstrumentation(std::make_unique<CurrentPass>(currentPass));
  phaseErrors = 0;
  // After the graph phase every failure is internal: MLIR catches a crash
  // there (a signal in a pass) and writes a reproducer the error names.
  // The graph phase fails for models Kiln refuses, which need no file.
  reproducerPath.clear();
  if (phase != "graph") {
    llvm::SmallString<128> path;
    llvm::sys::path::system_temp_directory(/*erasedOnReboot=*/true, path);
    llvm::sys::path::append(path, "kiln-crash-%%%%%%.mlir");
    llvm::SmallString<128> unique;
    llvm::sys::fs::createUniquePath(path, unique, /*MakeAbsolute=*/false);
    reproducerPath = std::string(unique);
    pm.enableCrashReproducerGeneration(reproducerPath);
  }
  build(pm);
  // A test hook (test/Pipeline/internal-error.onnxtxt): KILN_TEST_FAULT=crash
  // or =error makes the linalg phase crash or fail with a raw message, the
  // way a compiler bug would.
  if (const char *fault = std::getenv("KILN_TEST_FAULT"); fault &&
      phase == "linalg")
    pm.addPass(createTestFaultPass(fault));
  LogicalResult result = pm.run(*module);
  if (succeeded(result) && !everyPass) {
    currentPass = (phase + " (the verifier at its end)").str();
    result = verify(*module);
  }
  currentPass.clear();
  // MLIR writes a reproducer for any failure; keep only one an error names.
  if (!reproducerPath.empty() &&
      llvm::none_of(errors, [&](const std::string &e) {
        return llvm::StringRef(e).contains(reproducerPath);
      }))
    (void)llvm::sys::fs::remove(reproducerPath);
  return result;
}

//===----------------------------------------------------------------------===//
// Options and import
//===----------------------------------------------------------------------===//

/// Fails before any compiling when `path` cannot be written: its directory
/// is missing or read-only, or the path is a directory. ("-" is stdout.)
static Error checkOutputWritable(const std::string &path) {
  if (path == "-")
    return Error::success();
  namespace fs = llvm::sys::fs;
  if (fs::is_directory(path))
    return makeError("the output '" + path +
                     "' is a directory; give a file name such as " + path +
                     "/model.so");
  llvm::StringRef dir = llvm::sys::path::parent_path(path);
  if (dir.empty())
    dir = ".";
  if (!fs::is_directory(dir))
    return makeError("cannot write '" + path + "': the directory '" + dir +
                     "' does not exist; create it (mkdir -p " + dir +
                     ") or choose another -o");
  // Creating a file is the only test that holds for root, read-only mounts
  // and pseudo file systems alike.
  llvm::SmallString<128> probe(dir);
  llvm::sys::path::append(probe, ".kiln-write-test-%%%%%%%%");
  int fd = -1;
  llvm::SmallString<128> probePath;
  if (std::error_code ec = fs::createUniqueFile(probe, fd, probePath))
    return makeError("cannot write '" + path + "': the directory '" + dir +
                     "' is not writable (" + ec.message() +
                     "); choose another -o");
  ::close(fd);
  (void)fs::remove(probePath);
  if (fs::exists(path) && fs::access(path, fs::AccessMode::Write))
    return makeError("cannot write '" + path +
                     "': the file exists and is not writable");
  return Error::success();
}

Error Compilation::validateOptions() {
  const CompileOptions &o = options;
  if (o.optLevel > 3)
    return makeError("optimization level must be 0..3, got " +
                  std::to_string(o.optLevel));
  if (o.outputPath.empty())
    return makeError("no output path given");
  if (Error e = checkOutputWritable(o.outputPath))
    return e;
  if (o.target != Target::Cpu && o.quantize != Quantization::None)
    return makeError("--quantize=" + toString(o.quantize) +
                  " has CPU kernels only (VNNI); it cannot be combined with "
                  "--target=" +
                  toString(o.target));
  return Error::success();
}

Error Compilation::importModel() {
  {
    Phase t(rootTiming, phases, "import", options.progress);
    ImportOptions io;
    io.inputShapes = options.inputShapes;
    io.dims = options.dims;
    io.allowDynamicInputs = options.emit == EmitKind::Import;
    io.allowRangedInputs = true;
    io.symbolicDims = &symbolicDims;
    module = importOnnxFile(context, options.inputPath, io);
  }
  if (!module)
    return diagnosticsError("import failed");
  recordNodeKinds();
  if (options.emit == EmitKind::Import)
    return Error::success();
  batchSizes = options.batchSizes;
  llvm::sort(batchSizes);
  batchSizes.erase(std::unique(batchSizes.begin(), batchSizes.end()),
                   batchSizes.end());
  if (!symbolicDims.empty()) {
    if (options.target != Target::Cpu)
      return makeError("error: --target=" + toString(options.target).str() +
                       " compiles static shapes only; give the symbolic "
                       "dimension " +
                       symbolicDims.front().label() +
                       " one size (--dim or --input-shape)");
    if (Error e = planSymbolicDims())
      return e;
  }
  Expected<std::vector<std::string>> names = makeBatchVariants(
      *module, batchSizes, /*onlySymbolic=*/symbolicBatch.has_value());
  if (!names)
    return names.takeError();
  entryNames = std::move(*names);
  return Error::success();
}

/// A range for a symbolic dimension: batch variants where the dimension is
/// an independent leading batch (the faster form, proven on a probe), else
/// one graph at run-time sizes.
Error Compilation::planSymbolicDims() {
  Expected<SymbolicBatch> planned =
      planSymbolicBatch(*module, symbolicDims, batchSizes);
  std::string why;
  bool probed = false; // the graph mixes the samples of the only symbol
  if (planned) {
    Phase t(rootTiming, phases, "batch-independence", options.progress);
    size_t reported = errors.size();
    if (Error e = proveBatchIndependence(*module, *planned,
                                         options.maxTensorBytes)) {
      // The nodes that mix samples matter only where variants were asked
      // for (--batch-sizes); otherwise the note says why in a line, and a
      // later failure must not list them.
      if (!batchSizes.empty()) {
        errors.push_back(llvm::toString(std::move(e)));
      } else {
        llvm::consumeError(std::move(e));
        errors.resize(reported);
      }
      why = "the graph mixes the samples of '" + planned->name + "'";
      probed = true;
    }
  } else {
    why = llvm::toString(planned.takeError());
  }
  if (why.empty()) {
    symbolicBatch = std::move(*planned);
    batchSizes = symbolicBatch->variants;
    return Error::success();
  }
  if (!batchSizes.empty()) {
    errors.push_back("error: --batch-sizes needs a symbolic batch that the "
                     "model keeps independent (" + why +
                     "); without it the model compiles once for the whole "
                     "range");
    return diagnosticsError("the batch is not independent");
  }
  auto graph = module->lookupSymbol<func::FuncOp>("main_graph");
  Expected<SymbolicShapes> shapes = planSymbolicShapes(graph, symbolicDims);
  if (!shapes)
    return shapes.takeError();
  // A leading batch beside other symbols: proven independent, callers (the
  // kiln-serve batcher) may concatenate requests along it. Proven before
  // the graph is marked: the probe marks its own copy.
  if (!probed && leadsLikeBatch(*shapes)) {
    Phase t(rootTiming, phases, "batch-independence", options.progress);
    SymbolicBatch batch;
    batch.name = shapes->symbols[0].name;
    batch.min = shapes->symbols[0].min;
    batch.max = shapes->symbols[0].max;
    batch.batchedInputs.assign(shapes->inputAxes.size(), true);
    size_t reported = errors.size();
    Error e = proveBatchIndependence(*module, batch, options.maxTensorBytes,
                                     &*shapes);
    shapes->independentBatch = !e;
    // Only a yes or no: the nodes that mix samples are not this compile's
    // errors (a later failure must not list them).
    llvm::consumeError(std::move(e));
    errors.resize(reported);
  }
  llvm::StringRef reason = llvm::StringRef(why).split('\n').first.trim();
  reason.consume_front("error: ");
  std::string note =
      "the symbolic dimensions compile as one graph that runs at the sizes "
      "given at run time (not as batch variants: " +
      reason.str() + ")";
  if (shapes->independentBatch)
    note += "; '" + shapes->symbols[0].name +
            "' is an independent batch, so requests may be concatenated "
            "along it";
  outcome.result.notes.push_back(std::move(note));
  markSymbolicShapes(graph, *shapes);
  symbolicShapes = std::move(*shapes);
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Graph, signature, linalg
//===----------------------------------------------------------------------===//

Error Compilation::lowerToGraph() {
  if (failed(runPasses(
          [&](OpPassManager &pm) { buildGraphPipeline(pm, plan.graph); },
          "graph"))) {
    if (!batchSizes.empty())
      errors.push_back(
          "note: --batch-sizes compiles the graph once per batch size with "
          "the leading dimension of every input replaced; the errors above "
          "mean the model's leading input dimension is not a batch dimension "
          "(for example, a Reshape to a constant shape)");
    return diagnosticsError("lowering to the kiln dialect failed");
  }
  // Under --quantize or --precision, what each layer runs in (the report).
  if (plan.amx || plan.vnni || plan.fp16)
    precisionReport.layers = layerPrecisions(*module);
  if (request.observeQuantInputs)
    if (auto nodes = (*module)->getAttrOfType<ArrayAttr>(kObservedNodesAttr))
      for (Attribute n : nodes)
        outcome.observedNodes.push_back(cast<StringAttr>(n).str());
  return Error::success();
}

/// A static model whose graph computes a size from the data (NonZero's
/// count, a Compress of a run-time condition) runs that part at run-time
/// sizes as a model with symbolic dimensions does, with no symbols: the
/// arena is planned at the bound each such size has (the input's element
/// count for NonZero), and each output's shape is written by the graph.
Error Compilation::planDataDependentSizes() {
  if (symbolicShapes || symbolicBatch || entryNames.size() != 1)
    return Error::success();
  auto func = module->lookupSymbol<func::FuncOp>(entryNames.front());
  if (!func)
    return Error::success();
  auto dynamic = [](Type t) {
    auto rt = dyn_cast<RankedTensorType>(t);
    return rt && !rt.hasStaticShape();
  };
  // The first ops that make a dynamic size from static operands.
  std::vector<std::string> sources;
  bool any = false;
  func.walk([&](Operation *op) {
    if (!llvm::any_of(op->getResultTypes(), dynamic))
      return;
    any = true;
    if (llvm::any_of(op->getOperandTypes(), dynamic))
      return;
    std::string node = nodeNameIn(op->getLoc());
    auto kind = nodeKinds.find(node);
    if (!node.empty() && sources.size() < 3)
      sources.push_back("'" + node + "'" +
                        (kind != nodeKinds.end() ? " " + kind->second : ""));
  });
  if (!any)
    return Error::success();
  std::string where = sources.empty() ? std::string("some node")
                                      : llvm::join(sources, ", ");
  if (options.target != Target::Cpu)
    return makeError("error: --target=" + toString(options.target).str() +
                     " compiles static shapes only; node " + where +
                     " gives a tensor whose size depends on the data");
  SymbolicShapes shapes;
  for (Type t : func.getArgumentTypes())
    shapes.inputAxes.emplace_back(cast<RankedTensorType>(t).getRank(), -1);
  markSymbolicShapes(func, shapes);
  symbolicShapes = std::move(shapes);
  outcome.result.notes.push_back(
      "sizes that depend on the data (node " + where +
      ") run at the sizes each call gives, in an arena planned at their "
      "bounds; read the outputs' shapes after each run");
  return Error::success();
}

namespace {
int32_t onnxDataType(Type t) {
  if (t.isF32()) return 1;
  if (t.isF64()) return 11;
  if (t.isF16()) return 10;
  if (t.isBF16()) return 16;
  if (t.isInteger(1)) return 9;
  if (isa<Float8E4M3FNType>(t)) return 17;
  if (isa<Float8E4M3FNUZType>(t)) return 18;
  if (isa<Float8E5M2Type>(t)) return 19;
  if (isa<Float8E5M2FNUZType>(t)) return 20;
  if (isa<Float4E2M1FNType>(t)) return 23;
  if (isa<Float8E8M0FNUType>(t)) return 24;
  if (auto i = dyn_cast<IntegerType>(t)) {
    bool u = i.isUnsigned();
    switch (i.getWidth()) {
    case 2: return u ? 25 : 26;
    case 4: return u ? 21 : 22;
    case 8: return u ? 2 : 3;
    case 16: return u ? 4 : 5;
    case 32: return u ? 12 : 6;
    case 64: return u ? 13 : 7;
    }
  }
  return 0;
}

/// One input or output of the model for the descriptor. With `maxima`
/// (a model at run-time sizes) a dynamic axis takes its entry there, or -1
/// past its end (an output, whose largest size code generation finds).
Expected<TensorDesc>
describeTensor(Type t, DictionaryAttr attrs, const std::string &dflt,
               std::optional<ArrayRef<int64_t>> maxima = std::nullopt) {
  TensorDesc d;
  auto named =
      attrs ? attrs.getAs<StringAttr>(onnx::OnnxDialect::kValueNameAttr)
            : nullptr;
  d.name = named ? named.str() : dflt;
  auto rt = dyn_cast<RankedTensorType>(t);
  if (!rt || (!rt.hasStaticShape() && !maxima))
    return makeError("'" + d.name + "' has no static shape");
  d.dtype = onnxDataType(rt.getElementType());
  d.shape.assign(rt.getShape().begin(), rt.getShape().end());
  for (auto [i, n] : llvm::enumerate(d.shape))
    if (ShapedType::isDynamic(n))
      n = i < maxima->size() ? (*maxima)[i] : -1;
  return d;
}
} // namespace

Error Compilation::describeModel() {
  desc.name = options.name;
  if (desc.name.empty())
    if (auto n = (*module)->getAttrOfType<StringAttr>(
            onnx::OnnxDialect::kGraphNameAttr))
      desc.name = n.str();
  if (desc.name.empty())
    desc.name = llvm::sys::path::stem(options.inputPath).str();
  auto func = module->lookupSymbol<func::FuncOp>(entryNames.front());
  // At run-time sizes: every symbol at its maximum.
  std::vector<std::vector<int64_t>> maxima(func.getNumArguments());
  if (symbolicShapes)
    for (auto [i, axes] : llvm::enumerate(symbolicShapes->inputAxes))
      for (int32_t s : axes)
        maxima[i].push_back(s < 0 ? -1 : symbolicShapes->symbols[s].max);
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto d = describeTensor(func.getArgumentTypes()[i], func.getArgAttrDict(i),
                            "input_" + std::to_string(i),
                            symbolicShapes ? std::optional<ArrayRef<int64_t>>(
                                                 maxima[i])
                                           : std::nullopt);
    if (!d)
      return d.takeError();
    desc.inputs.push_back(*d);
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto d = describeTensor(func.getResultTypes()[i], func.getResultAttrDict(i),
                            "output_" + std::to_string(i),
                            symbolicShapes ? std::optional<ArrayRef<int64_t>>(
                                                 ArrayRef<int64_t>())
                                           : std::nullopt);
    if (!d)
      return d.takeError();
    desc.outputs.push_back(*d);
  }
  if (Error e = checkBatchVariantOutputs(*module, entryNames, batchSizes,
                                         desc.outputs))
    return e;
  if (symbolicBatch) {
    desc.symbols.push_back(
        {symbolicBatch->name, symbolicBatch->min, symbolicBatch->max});
    for (auto [i, t] : llvm::enumerate(desc.inputs)) {
      std::vector<int32_t> axes(t.shape.size(), -1);
      if (i < symbolicBatch->batchedInputs.size() &&
          symbolicBatch->batchedInputs[i] && !axes.empty())
        axes[0] = 0;
      desc.inputSymbols.push_back(std::move(axes));
    }
    for (const TensorDesc &t : desc.outputs) {
      std::vector<int32_t> axes(t.shape.size(), -1);
      if (!axes.empty())
        axes[0] = 0; // kiln-verify-batch-independence: every output leads
      desc.outputSymbols.push_back(std::move(axes));
    }
  }
  if (symbolicShapes) {
    desc.runtimeExtents = true;
    desc.independentBatch = symbolicShapes->independentBatch;
    desc.symbols = symbolicShapes->symbols;
    desc.inputSymbols = symbolicShapes->inputAxes;
    // The outputs' symbols and largest sizes come from code generation
    // (recordArena).
  }
  for (auto [i, name] : llvm::enumerate(entryNames))
    desc.variants.push_back(
        {batchSizes.empty()
             ? (desc.inputs.empty() || desc.inputs[0].shape.empty()
                    ? 1
                    : desc.inputs[0].shape[0])
             : batchSizes[i],
         name, 0});
  return Error::success();
}

Error Compilation::lowerToLinalg() {
  // Random ops ask the CPU runtime for their keys (docs/ops.md, "Random
  // numbers"); the GPU runtime has no such call yet.
  if (options.target == Target::Cuda) {
    std::string node;
    module->walk([&](kiln::RandomOp op) {
      node = nodeNameIn(op->getLoc());
      return WalkResult::interrupt();
    });
    if (!node.empty()) {
      auto kind = nodeKinds.find(node);
      return makeError(
          "node '" + node + "'" +
          (kind != nodeKinds.end() ? " " + kind->second : std::string()) +
          ": draws random numbers, which the GPU target (--target=cuda) "
          "does not support yet; compile the model for the CPU");
    }
  }
  bool cpu = options.target == Target::Cpu;
  if (failed(
          runPasses([cpu](OpPassManager &pm) { buildLinalgPipeline(pm, cpu); },
                    "linalg")))
    return diagnosticsError("lowering to linalg failed");
  return Error::success();
}

//===----------------------------------------------------------------------===//
// The public entry points
//===----------------------------------------------------------------------===//

Expected<CompileOutcome> kiln::compileRequest(const CompileRequest &request) {
  Compilation compilation(request);
  return compilation.run();
}

Expected<CompileResult> kiln::compile(const CompileOptions &options) {
  CompileRequest request;
  request.options = options;
  Expected<CompileOutcome> outcome = compileRequest(request);
  if (!outcome)
    return outcome.takeError();
  return std::move(outcome->result);
}
