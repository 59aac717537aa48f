//===- Compilation.h - one compile, phase by phase ---------------*- C++ -*-===//
//
// A Compilation holds the state one compile builds up (the context, the
// module, the diagnostics, the phase times, the model's descriptor) and runs
// the phases in order: import, batch variants, the precision plan, the
// graph, the model's signature, linalg, then CPU or GPU code generation and
// the files. Each phase is a member of readable size; --emit stops after
// any of them.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_PIPELINE_COMPILATION_H
#define KILN_LIB_PIPELINE_COMPILATION_H

#include "BatchVariants.h"
#include "SymbolicShapes.h"
#include "Compile.h"
#include "PassPipelines.h"
#include "Report.h"

#include "kiln/Target/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/Timing.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::kiln {

/// An imported ONNX node's op type and the opset of its domain.
struct NodeKind {
  std::string opType;
  int64_t opset = 0;
};
/// Every imported node of `module` (ONNX import dialect) by node name.
llvm::StringMap<NodeKind> onnxNodeKinds(ModuleOp module);
/// The first node name (NameLoc) in `loc`, or "".
std::string nodeNameIn(Location loc);

struct Calibration;

/// Which kernels the model gets, decided from the options and the target
/// CPU's features.
struct PrecisionPlan {
  bool vnni = false;    ///< int8 products (dynamic or static) on VNNI
  bool amx = false;     ///< bf16 or int8 products on AMX tiles
  bool fp16 = false;    ///< --precision=fp16 with F16C
  bool bf16Dot = false; ///< bf16 products on vdpbf16ps
  GraphPipelineOptions graph;
  /// The mode --max-accuracy-drop searches in, as its notes name it.
  std::string budgetLabel;
};

class Compilation {
public:
  explicit Compilation(const CompileRequest &request);
  ~Compilation();

  llvm::Expected<CompileOutcome> run();

private:
  using Finish = llvm::Expected<CompileOutcome>;

  // The phases, in order.
  llvm::Error validateOptions();
  llvm::Error importModel();
  llvm::Error planSymbolicDims();
  llvm::Error planDataDependentSizes();
  llvm::Error planPrecision();
  llvm::Error lowerToGraph();
  llvm::Error describeModel();
  llvm::Error lowerToLinalg();
  Finish generateCPU();
  Finish generateGPU();

  // Pieces of the precision plan.
  llvm::Error planQuantization();
  llvm::Error planReducedPrecision();
  llvm::Error searchKeptNodes();
  llvm::Error applyBudget(const Calibration &calibration);

  // Pieces of code generation.
  void recordArena();
  llvm::Error emitMachineCode(llvm::Module &module, llvm::TargetMachine &tm,
                              bool optimize);

  /// Runs the pipeline `build` makes on the module, timed as `phase`.
  LogicalResult runPasses(llvm::function_ref<void(OpPassManager &)> build,
                          llvm::StringRef phase);
  /// Whether the target CPU has `feature`; if not and `note`, records that
  /// `flag` (which needs it) compiled in f32 instead.
  llvm::Expected<bool> targetHas(llvm::StringRef feature, llvm::StringRef flag,
                                 llvm::StringRef mattr, bool note = true);
  llvm::Expected<bool> targetHasQuietly(llvm::StringRef feature);

  /// Every diagnostic so far as one error, or `fallback` if there was none.
  llvm::Error diagnosticsError(const std::string &fallback) const;
  Finish finishText();
  Finish finishFile(std::string text);
  /// The emitted text to options.outputPath, or into the result's
  /// standardOutput for "-".
  llvm::Error writeOutput(std::string text);
  Finish finishSo();

  /// "(Op, opset N)" of every imported node, by node name, for internal
  /// errors that name only a location.
  void recordNodeKinds();
  /// An error diagnostic as the user sees it: an internal one (from any
  /// pass but the ONNX conversion) becomes "internal error in pass P while
  /// compiling node N (Op, opset K): ...".
  std::string describeError(Diagnostic &diag);

  const CompileRequest &request;
  const CompileOptions &options;
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::vector<std::string> errors;
  llvm::StringMap<std::string> nodeKinds;
  /// The pass now running (its argument), and where a crash in an internal
  /// phase writes MLIR's reproducer.
  std::string currentPass;
  std::string reproducerPath;
  /// Errors reported since the current runPasses began.
  int phaseErrors = 0;
  CompileOutcome outcome;
  DefaultTimingManager timing;
  TimingScope rootTiming;
  PhaseTimes phases;
  std::vector<int64_t> batchSizes;
  std::vector<std::string> entryNames;
  /// The dimensions the importer left symbolic (each has a range), and the
  /// batch they form; empty / unset for a static model.
  std::vector<SymbolicDim> symbolicDims;
  std::optional<SymbolicBatch> symbolicBatch;
  /// Or, when they are not an independent batch: one graph at run-time
  /// sizes (SymbolicShapes.h).
  std::optional<SymbolicShapes> symbolicShapes;
  std::optional<std::string> targetIsa;
  std::string targetCpu;
  PrecisionPlan plan;
  PrecisionReport precisionReport;
  ModelDesc desc;
};

} // namespace mlir::kiln

#endif
