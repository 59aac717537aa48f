//===- Pipeline.h - the one place that strings the phases together -*- C++ -*-===//
//
// kiln-compile, the Python binding and the tests all compile through
// kiln::compile(). Every failure comes back as an llvm::Error whose message
// holds every diagnostic, each naming its ONNX node, op type and opset.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PIPELINE_PIPELINE_H
#define KILN_PIPELINE_PIPELINE_H

#include "kiln/Import/Onnx/ShapeBounds.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::kiln {

/// How far to take a model; everything but `So` writes one text or object
/// file. `MemoryPlan` writes the arena plan as JSON.
enum class EmitKind { Import, Kiln, Linalg, LLVM, Asm, Obj, So, MemoryPlan };

/// What the model runs on: the host CPU's kind (x86-64 with AVX-512 or AVX2),
/// NVIDIA GPU kernels, or those kernels as host loops (to test the GPU
/// mapping without a GPU, docs/gpu.md).
enum class Target { Cpu, Cuda, CudaEmulated };
enum class GpuArch { Sm80, Sm90 };
/// --quantize: f32 as imported, int8 MatMul/Gemm with run-time quantized
/// activations, or int8 MatMul/Gemm/Conv with calibrated scales.
enum class Quantization { None, Dynamic, Static };
/// --precision of the MatMul/Gemm/Conv nodes: as imported, bf16 or fp16
/// operands with f32 sums.
enum class Precision { Fp32, Bf16, Fp16 };
/// --calibration: how static int8 picks each activation's range.
enum class CalibrationMethod { MinMax, Percentile, Entropy };

/// Each parses the spelling the CLI and Python use ("cpu", "sm_80",
/// "dynamic", "bf16", "minmax", ...); the error names the accepted values.
llvm::Expected<EmitKind> parseEmitKind(llvm::StringRef name);
llvm::Expected<Target> parseTarget(llvm::StringRef name);
llvm::Expected<GpuArch> parseGpuArch(llvm::StringRef name);
llvm::Expected<Quantization> parseQuantization(llvm::StringRef name);
llvm::Expected<Precision> parsePrecision(llvm::StringRef name);
llvm::Expected<CalibrationMethod> parseCalibrationMethod(llvm::StringRef name);
/// The spellings back ("sm_80", "static", ...).
llvm::StringRef toString(Target target);
llvm::StringRef toString(GpuArch arch);
llvm::StringRef toString(Quantization mode);
llvm::StringRef toString(Precision precision);
llvm::StringRef toString(CalibrationMethod method);

/// The default of CompileOptions::maxTensorBytes: 16 GiB.
constexpr uint64_t kDefaultMaxTensorBytes = uint64_t(16) << 30;

/// Told when a compile phase starts (done = false) and when it ends (done =
/// true, with its wall seconds), on the compiling thread. kiln-compile draws
/// its progress line from it.
using ProgressFn =
    std::function<void(llvm::StringRef phase, bool done, double seconds)>;

struct CompileOptions {
  std::string inputPath;   ///< model.onnx (binary) or *.onnxtxt (text proto)
  std::string outputPath;  ///< where to write; for So also OUT.h and OUT.json
  EmitKind emit = EmitKind::So;
  std::string mcpu;        ///< LLVM CPU name; empty = this machine
  std::string mattr;       ///< extra LLVM features, e.g. "-avx512f"
  unsigned optLevel = 3;   ///< -O0..-O3
  std::string name;        ///< model name; empty = the graph name
  /// Sizes for symbolic input dimensions: input name -> a size or a range
  /// per axis (--input-shape x=1x3x224x224).
  std::vector<InputShape> inputShapes;
  /// Sizes for the graph's dim_params, shared by every input that uses them
  /// (--dim batch=8). A range (MIN < MAX) is accepted by --emit=import and
  /// check(); code generation needs one size per dimension (docs/shapes.md).
  std::vector<SymbolBound> dims;
  /// Batch-size variants to compile into one .so (empty = the model's own
  /// leading input dimension). The leading dimension of every input and
  /// output must be the batch dimension.
  std::vector<int64_t> batchSizes;
  bool timing = false;     ///< print per-phase wall times to stderr
  ProgressFn progress;     ///< phase starts and ends; empty = none
  /// Write DIR/report.html (arena over time, lower bound, phase times).
  std::string reportDir;
  bool verifyEach = false; ///< run the verifier after every pass
  /// Dynamic: MatMul/Gemm with constant weights get int8 weights and run-time
  /// quantized activations (docs/quantization.md); needs a target with
  /// avx512vnni. Static: MatMul/Gemm and convolutions get int8 weights and
  /// activations with scales calibrated on `calibrationData` (AMX int8 where
  /// the target has it, else VNNI).
  Quantization quantize = Quantization::None;
  /// Quantization::Static (and --max-accuracy-drop in every mode): a folder
  /// of input_<i>.pb files, or of subfolders (test_data_set_<n>) that hold
  /// them, one sample each, or a .npz.
  std::string calibrationData;
  CalibrationMethod calibrationMethod = CalibrationMethod::MinMax;
  double calibrationPercentile = 99.99;
  /// With a quantization or a reduced precision: the largest accuracy drop
  /// allowed against f32 on the calibration samples (0 = no search):
  /// relative L2 error of every output and, for a classifier, the top-1
  /// disagreement. The most sensitive nodes stay f32 until it holds.
  double maxAccuracyDrop = 0;
  /// Bf16: MatMul/Gemm/Conv with constant weights on AMX tiles (or
  /// AVX512-BF16's vdpbf16ps) with bf16 operands and f32 sums; Fp16: fp16
  /// operands and weights, f32 sums (docs/quantization.md).
  Precision precision = Precision::Fp32;
  /// CPU: fp16 and bf16 tensors of an imported model computed in f32
  /// (kiln-widen-half; the model's own casts to half types still round).
  /// False keeps them in the half type (--half-compute=native).
  bool widenHalf = true;
  /// ONNX node names that a reduced precision or quantization leaves in f32
  /// (e.g. a sensitive first or last layer).
  std::vector<std::string> keepFp32;
  /// The most bytes one tensor a node computes may hold; a node over it is
  /// an error before anything is built for it (--max-tensor-bytes).
  uint64_t maxTensorBytes = kDefaultMaxTensorBytes;
  /// Cuda: the graph runs as NVIDIA GPU kernels (PTX for `gpuArch`, loaded
  /// by the model's runtime through the CUDA driver).
  Target target = Target::Cpu;
  GpuArch gpuArch = GpuArch::Sm80;
  /// Report every op that code generation left off its fast path, and why,
  /// as notes of the result (kiln-compile --remarks).
  bool remarks = false;
};

/// What a successful compile wrote.
struct CompileResult {
  std::vector<std::string> files;
  /// For the output path "-": the emitted text, for the caller to write to
  /// standard output (the library writes none; kiln-compile prints it after
  /// the notes, so the two never interleave).
  std::string standardOutput;
  /// Things the user may want to know that are not errors, e.g. which
  /// matmuls --quantize=dynamic left in f32 and why.
  std::vector<std::string> notes;
  /// With `remarks`: each op code generation left off its fast path, as
  /// "node 'n' (op): what was skipped: why".
  std::vector<std::string> remarks;
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
  /// Input dimensions still symbolic (no size given, or a range); the nodes
  /// are checked with them symbolic. Code generation needs one size each.
  std::vector<SymbolicDim> symbolicDims;
  std::vector<NodeIssue> issues;      ///< per-node problems, in graph order
  std::vector<std::string> otherErrors; ///< problems not tied to one node
  /// What the importer repaired to accept the model as ONNX Runtime does
  /// (nodes out of topological order, ...); the compile does the same.
  std::vector<std::string> repairs;
};

/// Imports the model and lowers it to the kiln dialect, collecting every
/// problem instead of stopping at the first. Fails only if the file cannot be
/// read as an ONNX model.
llvm::Expected<CheckResult> check(const CompileOptions &options);

/// The version string compiled into kiln and into every model it writes.
const char *versionString();

} // namespace mlir::kiln

#endif
