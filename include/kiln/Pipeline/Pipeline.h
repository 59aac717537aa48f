//===- Pipeline.h - the one place that strings the phases together -*- C++ -*-===//
//
// kiln-compile, the Python binding and the tests all compile through
// kiln::compile(). Every failure comes back as an llvm::Error whose message
// holds every diagnostic, each naming its ONNX node, op type and opset.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PIPELINE_PIPELINE_H
#define KILN_PIPELINE_PIPELINE_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mlir::kiln {

/// How far to take a model; everything but `So` writes one text or object
/// file. `MemoryPlan` writes the arena plan as JSON.
enum class EmitKind { Import, Kiln, Linalg, LLVM, Asm, Obj, So, MemoryPlan };

/// Parses "import", "kiln", ... ; false for an unknown name.
bool parseEmitKind(const std::string &name, EmitKind &out);

struct CompileOptions {
  std::string inputPath;   ///< model.onnx (binary) or *.onnxtxt (text proto)
  std::string outputPath;  ///< where to write; for So also OUT.h and OUT.json
  EmitKind emit = EmitKind::So;
  std::string mcpu;        ///< LLVM CPU name; empty = this machine
  std::string mattr;       ///< extra LLVM features, e.g. "-avx512f"
  unsigned optLevel = 3;   ///< -O0..-O3
  std::string name;        ///< model name; empty = the graph name
  /// Fixes symbolic input dimensions: input name -> full static shape.
  std::vector<std::pair<std::string, std::vector<int64_t>>> inputShapes;
  /// Batch-size variants to compile into one .so (empty = the model's own
  /// leading input dimension). The leading dimension of every input and
  /// output must be the batch dimension.
  std::vector<int64_t> batchSizes;
  bool timing = false;     ///< print per-phase wall times to stderr
  /// Write DIR/report.html (arena over time, lower bound, phase times).
  std::string reportDir;
  bool verifyEach = false; ///< run the verifier after every pass
  /// "" or "none": f32 as imported; "dynamic": MatMul/Gemm with constant
  /// weights get int8 weights and run-time quantized activations
  /// (docs/quantization.md); needs a target with avx512vnni. "static":
  /// MatMul/Gemm and convolutions get int8 weights and activations with
  /// scales calibrated on `calibrationData` (AMX int8 where the target has
  /// it, else VNNI).
  std::string quantize;
  /// --quantize=static (and --max-accuracy-drop in every mode): a folder of
  /// input_<i>.pb files, or of subfolders (test_data_set_<n>) that hold
  /// them, one sample each, or a .npz.
  std::string calibrationData;
  /// --quantize=static: "minmax", "percentile" or "entropy".
  std::string calibrationMethod = "minmax";
  double calibrationPercentile = 99.99;
  /// --quantize=static|dynamic or --precision=bf16|fp16: the largest
  /// accuracy drop allowed against f32 on the calibration samples (0 = no
  /// search): relative L2 error of every output and, for a classifier, the
  /// top-1 disagreement. The most sensitive nodes stay f32 until it holds.
  double maxAccuracyDrop = 0;
  /// Internal (the calibration compile): return the input of every node
  /// static int8 would convert as extra outputs (kiln.observe:<i>); with
  /// observeAllProducts, of every f32 MatMul/Gemm/Conv.
  bool observeQuantInputs = false;
  bool observeAllProducts = false;
  /// Internal (the budget search's trial compiles): calibrated ranges to use
  /// instead of calibrating again.
  std::vector<std::pair<float, float>> activationRanges;
  /// "" or "fp32": as imported; "bf16": MatMul/Gemm with constant weights
  /// run on AMX tiles with bf16 weights and activations and f32 accumulation
  /// (docs/quantization.md); needs a target with amx-bf16.
  std::string precision;
  /// ONNX node names that --precision=bf16 and --quantize=dynamic leave in
  /// f32 (e.g. a sensitive first or last layer).
  std::vector<std::string> keepFp32;
  /// "cpu", or "cuda": the graph runs as NVIDIA GPU kernels (PTX for
  /// `gpuArch`, loaded by the model's runtime through the CUDA driver).
  std::string target = "cpu";
  std::string gpuArch = "sm_80"; ///< sm_80 or sm_90
};

/// What a successful compile wrote.
struct CompileResult {
  std::vector<std::string> files;
  /// With observeQuantInputs: the node name of each observed input.
  std::vector<std::string> observedNodes;
  /// Things the user may want to know that are not errors, e.g. which
  /// matmuls --quantize=dynamic left in f32 and why.
  std::vector<std::string> notes;
  /// The note saying that the asked reduced precision needs a feature the
  /// target lacks and the model was compiled in f32; empty when it was not.
  std::string f32Fallback;
};

/// Compiles options.inputPath as far as options.emit.
llvm::Expected<CompileResult> compile(const CompileOptions &options);

/// One node that cannot be compiled, and why.
struct NodeIssue {
  std::string node, opType;
  int64_t opset = 0;
  std::string reason;
};

/// Preflight: what `compile` would say about each node, without code
/// generation.
struct CheckResult {
  size_t numNodes = 0;
  std::vector<NodeIssue> issues;      ///< per-node problems, in graph order
  std::vector<std::string> otherErrors; ///< problems not tied to one node
};

/// Imports the model and lowers it to the kiln dialect, collecting every
/// problem instead of stopping at the first. Fails only if the file cannot be
/// read as an ONNX model.
llvm::Expected<CheckResult> check(const CompileOptions &options);

/// The version string compiled into kiln and into every model it writes.
const char *versionString();

} // namespace mlir::kiln

#endif
