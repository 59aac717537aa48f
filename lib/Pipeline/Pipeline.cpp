//===- Pipeline.cpp - ONNX file to model.so ---------------------*- C++ -*-===//
#include "kiln/Pipeline/Pipeline.h"
#include "Report.h"

#include "kiln/Codegen/CPU/Passes.h"
#include "kiln/Codegen/GPU/Passes.h"
#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"
#include "kiln/Dialect/Onnx/OnnxDialect.h"
#include "kiln/Import/Onnx/OnnxImporter.h"
#include "kiln/Target/Target.h"
#include "kiln/Version.h"

#include "Calibrate.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <map>
#include <mutex>
#include <regex>

using namespace mlir;
using llvm::Error;
using llvm::Expected;

namespace {
/// The phases of the compile, as textual pass pipelines on the module over upstream and
/// Kiln passes; `--emit` stops after any of them.
constexpr const char *kGraphPipeline =
    "kiln-convert-onnx-to-kiln,"
    "func.func(canonicalize,kiln-shape-inference,canonicalize,cse,"
    "kiln-layout,canonicalize,cse)";
constexpr const char *kLinalgPipeline =
    "kiln-convert-kiln-to-linalg,"
    "func.func(canonicalize,cse,kiln-hoist-requantization,kiln-fuse-elementwise,"
    "kiln-fold-requantization,canonicalize,cse)";
std::string cpuLoweringTail(bool amx = false);
/// Tensors to buffers, outputs to caller-owned arguments, and every other
/// buffer into the one arena (shared by the CPU and GPU paths). `beforeArena`
/// runs on the buffers first: passes that change when a buffer is used (the
/// AMX kernels apply their epilogue where the epilogue was, so the product's
/// inputs live until then) must run before the arena plans the lifetimes.
std::string bufferizeToArena(const std::string &beforeArena = "") {
  return "eliminate-empty-tensors,empty-tensor-to-alloc-tensor,"
         "one-shot-bufferize{bufferize-function-boundaries "
         "function-boundary-type-conversion=identity-layout-map},"
         // Loops that carried a tensor now forward one buffer: folding their
         // results lets a returned buffer become the caller's output.
         "canonicalize,"
         "buffer-results-to-out-params{hoist-static-allocs "
         "modify-public-functions},"
         "canonicalize,cse," + beforeArena + "kiln-arena-allocation,";
}
std::string codegenPipeline(int64_t vectorWidth, bool vnni, bool amx,
                            bool bf16Dot) {
  // With both, int8 products that fit AMX tiles are left to AMX. bf16
  // products without AMX run on the same kernel with vdpbf16ps.
  return std::string("func.func(") +
         (vnni ? (amx ? "kiln-cpu-vnni-matmul{amx=true},"
                      : "kiln-cpu-vnni-matmul,")
               : "") +
         (bf16Dot ? "kiln-cpu-vnni-matmul{bf16=true}," : "") +
         "kiln-cpu-tile-and-vectorize{vector-width=" +
         std::to_string(vectorWidth) + (amx ? " amx=true" : "") +
         "},canonicalize,cse,loop-invariant-subset-hoisting,"
         "kiln-cpu-lower-vector-ops,canonicalize,cse,"
         "kiln-cpu-split-empty-tensors)," +
         bufferizeToArena(
             amx ? "kiln-cpu-amx-matmul,func.func(canonicalize,cse)," : "") +
         "func.func(kiln-cpu-fill-borders,kiln-cpu-prefetch-panels),"
         "kiln-cpu-outline-parallel-loops," +
         cpuLoweringTail(amx);
}

/// From loops, vectors and memrefs to the LLVM dialect.
std::string cpuLoweringTail(bool amx) {
  return "func.func(convert-linalg-to-loops,kiln-cpu-cheap-float-ops),"
         "canonicalize,convert-vector-to-scf{full-unroll=true},lower-affine,"
         "convert-scf-to-cf,canonicalize,"
         // Float sums marked reassoc (WholeVectorSumToReduction) as trees.
         "convert-vector-to-llvm{reassociate-fp-reductions},"
         "expand-strided-metadata,lower-affine,finalize-memref-to-llvm,"
         "convert-math-to-llvm,convert-math-to-libm,convert-arith-to-llvm,"
         "convert-index-to-llvm,convert-ub-to-llvm,"
         "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},"
         // convert-to-llvm knows AMX tile types (loop-carried accumulators
         // in block arguments); convert-cf-to-llvm does not.
         + std::string(amx ? "convert-to-llvm{filter-dialects=cf,amx},"
                           : "convert-cf-to-llvm,") +
         "reconcile-unrealized-casts,"
         "kiln-cpu-lower-parallel-launches";
}

/// The NVIDIA GPU phase: the CPU path's bufferization and arena, then the
/// weights into one device blob, every op into a kernel
/// (lib/Codegen/GPU), and the kernels through NVVM to PTX.
std::string gpuCodegenPipeline(const std::string &arch, bool emulate) {
  std::string kernels =
      "func.func(kiln-cpu-split-empty-tensors)," + bufferizeToArena() +
      "kiln-gpu-pack-weights,"
      "func.func(linalg-generalize-named-ops),canonicalize,cse,"
      "func.func(kiln-gpu-map-to-launch,convert-linalg-to-loops,"
      "kiln-cpu-lower-vector-ops),canonicalize,cse,";
  // --target=cuda-emulated: the same kernels as host loops.
  if (emulate)
    return kernels +
           "kiln-gpu-emulate-on-host,canonicalize,cse,"
           "kiln-cpu-outline-parallel-loops,canonicalize,cse," +
           cpuLoweringTail();
  // sm_90 needs PTX ISA 8.0; sm_80 keeps LLVM's minimum (7.0) so older
  // drivers can load it.
  std::string features = arch == "sm_90" ? " features=+ptx80" : "";
  return kernels +
         "gpu-launch-sink-index-computations,gpu-kernel-outlining,"
         "kiln-gpu-align-workgroup,"
         "nvvm-attach-target{chip=" + arch + features + " O=3},"
         "gpu.module(expand-strided-metadata,lower-affine,convert-scf-to-cf,"
         "convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1},"
         "canonicalize,cse,reconcile-unrealized-casts),"
         "gpu-module-to-binary{format=isa}";
}

void registerEverythingOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerAllPasses();
    mlir::kiln::registerKilnPasses();
    mlir::kiln::registerKilnConversionPasses();
    mlir::kiln::registerKilnCPUPasses();
    mlir::kiln::registerKilnGPUPasses();
  });
}

Error errorFrom(const std::vector<std::string> &messages,
                const std::string &fallback) {
  std::string text;
  for (const std::string &m : messages)
    text += (text.empty() ? "" : "\n") + m;
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 text.empty() ? fallback : text);
}

int32_t onnxDataType(Type t) {
  if (t.isF32()) return 1;
  if (t.isF64()) return 11;
  if (t.isF16()) return 10;
  if (t.isBF16()) return 16;
  if (t.isInteger(1)) return 9;
  if (auto i = dyn_cast<IntegerType>(t)) {
    bool u = i.isUnsigned();
    switch (i.getWidth()) {
    case 8: return u ? 2 : 3;
    case 16: return u ? 4 : 5;
    case 32: return u ? 12 : 6;
    case 64: return u ? 13 : 7;
    }
  }
  return 0;
}

Error writeText(const std::string &path, llvm::StringRef text) {
  if (path == "-") {
    llvm::outs() << text;
    return Error::success();
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return llvm::createStringError(ec, "cannot write '" + path +
                                           "': " + ec.message());
  os << text;
  return Error::success();
}

std::string printed(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  // Weights would drown the IR a person wants to read.
  op->print(os, OpPrintingFlags().elideLargeElementsAttrs(16).elideLargeResourceString(64));
  return s;
}

std::string replaceExtension(const std::string &path, llvm::StringRef ext) {
  llvm::SmallString<256> p(path);
  llvm::sys::path::replace_extension(p, ext);
  return std::string(p);
}

std::string describeOptions(const kiln::CompileOptions &o,
                            const std::string &cpu) {
  std::string s = "-O" + std::to_string(o.optLevel) +
                  (o.target == "cuda" ? " --target=cuda --gpu-arch=" + o.gpuArch
                                      : " --mcpu=" + cpu);
  if (o.target == "cuda-emulated")
    s += " --target=cuda-emulated";
  if (!o.mattr.empty())
    s += " --mattr=" + o.mattr;
  if (!o.quantize.empty() && o.quantize != "none")
    s += " --quantize=" + o.quantize;
  if (o.quantize == "static") {
    s += " --calibration=" + o.calibrationMethod;
    if (o.calibrationMethod == "percentile")
      s += llvm::formatv(" --calibration-percentile={0}",
                         o.calibrationPercentile)
               .str();
    if (o.maxAccuracyDrop > 0)
      s += llvm::formatv(" --max-accuracy-drop={0}", o.maxAccuracyDrop).str();
  }
  if (!o.precision.empty() && o.precision != "fp32")
    s += " --precision=" + o.precision;
  for (size_t i = 0; i < o.keepFp32.size(); ++i)
    s += (i ? "," : " --keep-fp32=") + o.keepFp32[i];
  if (!o.batchSizes.empty()) {
    s += " --batch-sizes ";
    for (size_t i = 0; i < o.batchSizes.size(); ++i)
      s += (i ? "," : "") + std::to_string(o.batchSizes[i]);
  }
  for (const auto &[name, dims] : o.inputShapes) {
    s += " --input-shape " + name + "=";
    for (size_t i = 0; i < dims.size(); ++i)
      s += (i ? "x" : "") + std::to_string(dims[i]);
  }
  return s;
}
/// The rest of a compile for --target=cuda, after the linalg phase: GPU
/// code generation, the launch table, ptxas figures, and a model.so whose
/// host side is the descriptor plus the table.
template <typename RunPipeline, typename FinishSo>
Expected<kiln::CompileResult>
compileGpu(ModuleOp module, const kiln::CompileOptions &o, kiln::ModelDesc &desc,
           const std::vector<std::string> &entryNames, RunPipeline &runPipeline,
           std::vector<std::string> &errors, TimingScope &root,
           kiln::PhaseTimes &phases, kiln::CompileResult &result,
           FinishSo &finishSo) {
  if (failed(runPipeline(gpuCodegenPipeline(o.gpuArch, false), "codegen-gpu")))
    return errorFrom(errors, "GPU code generation failed");
  for (kiln::ModelDesc::Variant &v : desc.variants)
    if (auto f = module.lookupSymbol<func::FuncOp>(v.entryName))
      if (auto a = f->getAttrOfType<IntegerAttr>(mlir::kiln::kArenaBytesAttr))
        v.arenaBytes = a.getInt();
  if (auto guards =
          module->getAttrOfType<ArrayAttr>(mlir::kiln::kGuardMessagesAttr))
    for (Attribute g : guards)
      desc.guardMessages.push_back(cast<StringAttr>(g).str());
  if (o.emit == kiln::EmitKind::MemoryPlan) {
    if (Error e = writeText(o.outputPath, kiln::memoryPlanJson(module, desc)))
      return std::move(e);
    result.files.push_back(o.outputPath);
    return result;
  }
  kiln::GpuProgram program;
  program.arch = o.gpuArch;
  if (failed(mlir::kiln::extractGpuProgram(module, entryNames, program)))
    return errorFrom(errors, "extracting the GPU launch table failed");
  if (o.emit == kiln::EmitKind::Asm) { // the PTX
    if (Error e = writeText(o.outputPath, program.ptx))
      return std::move(e);
    result.files.push_back(o.outputPath);
    return result;
  }

  desc.target = "cuda";
  desc.gpuArch = o.gpuArch;
  desc.triple = "nvptx64-nvidia-cuda";
  desc.cpu = o.gpuArch;
  desc.requiredIsa = ""; // the host side is data and the baseline runtime
  if (auto h = module->getAttrOfType<StringAttr>(kiln::kModelHashAttr))
    desc.hash = h.str();
  desc.compilerVersion = kiln::versionString();
  desc.compileOptions = describeOptions(o, "");
  {
    kiln::Phase t(root, phases, "ptxas");
    bool found = false;
    // A model with nothing to compute (a zero-sized output) has no kernels
    // and no PTX.
    auto stats = program.kernels.empty()
                     ? Expected<std::vector<kiln::ModelDesc::KernelStats>>(
                           std::vector<kiln::ModelDesc::KernelStats>{})
                     : kiln::runPtxas(program.ptx, o.gpuArch, found);
    if (!stats)
      return stats.takeError();
    desc.kernelStats = std::move(*stats);
    if (!found && !program.kernels.empty())
      desc.ptxasNote = "ptxas not found (set KILN_PTXAS or put the CUDA "
                       "toolkit's bin on PATH); PTX not assembled at compile "
                       "time";
  }

  // The host object: descriptor and launch table, for a baseline x86-64.
  auto tm = kiln::createTargetMachine("x86-64", "", o.optLevel);
  if (!tm)
    return tm.takeError();
  llvm::LLVMContext llvmCtx;
  llvm::Module host("kiln_model", llvmCtx);
  desc.triple = "nvptx64-nvidia-cuda";
  if (Error e = kiln::addModelDescriptor(host, desc))
    return std::move(e);
  if (Error e = kiln::addGpuProgram(host, program))
    return std::move(e);
  if (o.emit == kiln::EmitKind::LLVM) {
    std::string text;
    llvm::raw_string_ostream os(text);
    host.print(os, nullptr);
    if (Error e = writeText(o.outputPath, text))
      return std::move(e);
    result.files.push_back(o.outputPath);
    return result;
  }
  Expected<std::string> code = kiln::emitMachineCode(host, **tm, false);
  if (!code)
    return code.takeError();
  if (o.emit == kiln::EmitKind::Obj) {
    if (Error e = writeText(o.outputPath, *code))
      return std::move(e);
    result.files.push_back(o.outputPath);
    return result;
  }
  {
    kiln::Phase t(root, phases, "link");
    if (Error e = kiln::linkSharedObject(*code, o.outputPath))
      return std::move(e);
  }
  return finishSo();
}
} // namespace

bool kiln::parseEmitKind(const std::string &name, EmitKind &out) {
  static const std::pair<const char *, EmitKind> kinds[] = {
      {"import", EmitKind::Import}, {"kiln", EmitKind::Kiln},
      {"linalg", EmitKind::Linalg}, {"llvm", EmitKind::LLVM},
      {"asm", EmitKind::Asm},       {"obj", EmitKind::Obj},
      {"so", EmitKind::So},         {"memory-plan", EmitKind::MemoryPlan}};
  for (const auto &[n, k] : kinds)
    if (name == n) {
      out = k;
      return true;
    }
  return false;
}

const char *kiln::versionString() {
  static const std::string v =
      std::string("kiln ") + KILN_VERSION_STRING +
      (std::string(KILN_GIT_REVISION).empty()
           ? ""
           : std::string(" (") + KILN_GIT_REVISION + ")");
  return v.c_str();
}

namespace {
/// A temporary folder, removed with what is left in it.
struct TempDir {
  llvm::SmallString<256> path;
  ~TempDir() {
    if (!path.empty())
      llvm::sys::fs::remove_directories(path);
  }
  std::string file(llvm::StringRef name) const {
    llvm::SmallString<256> p(path);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
};

Error makeTempDir(TempDir &dir) {
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("kiln-calibrate", dir.path))
    return llvm::createStringError(ec, "cannot create a temporary folder "
                                       "for calibration: " + ec.message());
  return Error::success();
}

/// What calibration found: the range and RMS of each observed input, the
/// node it feeds, and the f32 model's outputs on the samples.
struct Calibration {
  kilnrun::CalibrationResult result;
  std::vector<std::string> nodes;
};

/// --quantize=static: compiles the model with every quantizable node's input
/// as an extra output (kiln.observe:<i>), runs it on the calibration
/// samples, and records the range of each observed input. The model is
/// built and run in a temporary folder that is removed afterwards.
Expected<Calibration> calibrate(const kiln::CompileOptions &o,
                                llvm::StringRef label, bool allProducts,
                                std::vector<std::string> &notes) {
  if (!kilnrun::isNpz(o.calibrationData) &&
      kilnrun::sampleFolders(o.calibrationData).empty())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "--calibration-data '" + o.calibrationData +
            "' holds no samples: give a folder with input_0.pb, ... (one "
            "sample) or with subfolders (test_data_set_0, ...) that hold them, "
            "or a .npz");
  TempDir dir;
  if (Error e = makeTempDir(dir))
    return std::move(e);
  kiln::CompileOptions observe = o;
  // The observing model runs here, whatever machine the model is for: an
  // f32 model for this CPU (a model cross-compiled for sapphirerapids on a
  // CPU without AVX512-FP16 could not be calibrated otherwise).
  observe.mcpu.clear();
  observe.mattr.clear();
  observe.quantize.clear();
  observe.precision.clear();
  observe.keepFp32.clear();
  observe.batchSizes.clear();
  observe.reportDir.clear();
  observe.timing = false;
  observe.maxAccuracyDrop = 0;
  observe.emit = kiln::EmitKind::So;
  observe.observeQuantInputs = true;
  observe.observeAllProducts = allProducts;
  observe.outputPath = dir.file("observe.so");
  Expected<kiln::CompileResult> built = kiln::compile(observe);
  if (!built)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "compiling the model for calibration failed: " +
            llvm::toString(built.takeError()));
  Calibration c;
  c.nodes = built->observedNodes;
  kilnrun::CalibrationOptions copts;
  copts.method = o.calibrationMethod;
  copts.percentile = o.calibrationPercentile;
  std::string error = kilnrun::calibrate(observe.outputPath, o.calibrationData,
                                         copts, c.result);
  if (!error.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "calibration failed: " + error);
  if (allProducts)
    notes.push_back(label.str() + ": observed the inputs of " +
                    std::to_string(c.result.ranges.size()) + " nodes on " +
                    std::to_string(c.result.samples) + " samples from '" +
                    o.calibrationData + "'");
  else
    notes.push_back("static int8: calibrated " +
                    std::to_string(c.result.ranges.size()) +
                    " activation ranges (" + o.calibrationMethod + ") on " +
                    std::to_string(c.result.samples) + " samples from '" +
                    o.calibrationData + "'");
  return c;
}

/// "rel. L2 0.8% (worst output), top-1 agreement 99.5%".
std::string describeAccuracy(const kilnrun::Accuracy &a) {
  double worst = 0;
  for (double e : a.relL2)
    worst = std::max(worst, e);
  std::string s = llvm::formatv("rel. L2 {0:F2}%", 100 * worst).str();
  if (a.relL2.size() > 1)
    s += " (worst output)";
  if (a.top1 >= 0)
    s += llvm::formatv(", top-1 agreement {0:F1}%", 100 * a.top1).str();
  return s;
}

/// Whether every output is within `drop` (relative L2) of f32 and, for a
/// classifier, at most a fraction `drop` of the top-1 answers changed.
bool withinBudget(const kilnrun::Accuracy &a, double drop) {
  for (double e : a.relL2)
    if (!(e <= drop))
      return false;
  return a.top1 < 0 || 1 - a.top1 <= drop;
}

/// --max-accuracy-drop: the nodes to keep in f32 so that the reduced-
/// precision model (`label`: "static int8", "dynamic int8", "bf16" or
/// "fp16") stays within the budget on the calibration samples. Nodes are
/// ranked by the error their input takes, measured on the samples: for int8
/// the relative size of its quantization step ((hi - lo) / 255 / RMS); for
/// bf16 and fp16 the relative L2 error of rounding it (fp16 flushes values
/// under 6e-8 to zero and overflows past 65504, which puts such inputs
/// first). The search keeps the first k of that ranking in f32 for k = 0,
/// 1, 2, 4, ... until the budget holds, then bisects for the smallest such
/// k. Every trial is a full compile and one run over the samples.
Expected<std::vector<std::string>>
searchBudget(const kiln::CompileOptions &o, const Calibration &c,
             llvm::StringRef label, std::vector<std::string> &notes) {
  const kilnrun::CalibrationResult &r = c.result;
  bool isStatic = label == "static int8";
  llvm::StringRef format = label.ends_with("int8") ? "int8" : label;
  std::vector<size_t> order;
  for (size_t i = 0; i < r.ranges.size() && i < c.nodes.size(); ++i)
    if (c.nodes[i] != "?" && !llvm::is_contained(o.keepFp32, c.nodes[i]) &&
        !llvm::any_of(order, [&](size_t j) { return c.nodes[j] == c.nodes[i]; }))
      order.push_back(i);
  auto sensitivity = [&](size_t i) {
    if (label == "fp16")
      return r.fp16Error[i];
    if (label == "bf16")
      return r.bf16Error[i];
    double width = std::max(r.ranges[i].second, 0.0f) -
                   std::min(r.ranges[i].first, 0.0f);
    return r.rms[i] > 0 ? width / 255.0 / r.rms[i]
                        : std::numeric_limits<double>::infinity();
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return sensitivity(a) > sensitivity(b);
  });

  TempDir dir;
  if (Error e = makeTempDir(dir))
    return std::move(e);
  auto kept = [&](size_t k) {
    std::vector<std::string> names;
    for (size_t i = 0; i < k; ++i)
      names.push_back(c.nodes[order[i]]);
    return names;
  };
  std::map<size_t, kilnrun::Accuracy> measured;
  auto trial = [&](size_t k) -> Expected<bool> {
    kiln::CompileOptions t = o;
    t.maxAccuracyDrop = 0;
    if (isStatic)
      t.activationRanges = r.ranges;
    t.reportDir.clear();
    t.timing = false;
    t.batchSizes.clear();
    t.emit = kiln::EmitKind::So;
    // Each trial runs here, so it is built for this CPU: a model cross-
    // compiled for another one (--mcpu) may need features this one lacks.
    // The int8 kernels of both compute the same integers; a precision this
    // CPU cannot run at all would be measured as f32, so that is an error.
    t.mcpu.clear();
    t.mattr.clear();
    for (const std::string &n : kept(k))
      t.keepFp32.push_back(n);
    t.outputPath = dir.file("trial" + std::to_string(k) + ".so");
    Expected<kiln::CompileResult> built = kiln::compile(t);
    if (!built)
      return built.takeError();
    if (!built->f32Fallback.empty())
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--max-accuracy-drop measures each trial model on this machine, "
          "which cannot run " +
              label.str() + " (" + built->f32Fallback +
              "); search on a machine that can, or name the nodes to keep "
              "in f32 with --keep-fp32");
    kilnrun::Accuracy a;
    std::string error =
        kilnrun::evaluate(t.outputPath, o.calibrationData, r.references, 1, a);
    for (const std::string &f : built->files)
      llvm::sys::fs::remove(f);
    if (!error.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "measuring the " + label.str() +
                                         " model failed: " + error);
    measured[k] = a;
    return withinBudget(a, o.maxAccuracyDrop);
  };
  // Grow k until the budget holds (all nodes in f32 always does), then
  // bisect between the last failing and the first passing k.
  size_t fail = 0, pass = 0;
  Expected<bool> ok = trial(0);
  if (!ok)
    return ok.takeError();
  if (!*ok) {
    size_t k = 1;
    while (true) {
      k = std::min(k, order.size());
      ok = trial(k);
      if (!ok)
        return ok.takeError();
      if (*ok || k == order.size())
        break;
      fail = k;
      k *= 2;
    }
    pass = k;
    while (*ok && pass - fail > 1) {
      size_t mid = (fail + pass) / 2;
      Expected<bool> m = trial(mid);
      if (!m)
        return m.takeError();
      (*m ? pass : fail) = mid;
    }
  }
  std::string note = llvm::formatv("{0}: accuracy budget {1:F2}%: ", label,
                                   100 * o.maxAccuracyDrop)
                         .str();
  std::vector<std::string> names = kept(pass);
  if (!withinBudget(measured[pass], o.maxAccuracyDrop)) {
    note += "not met even with every node in f32";
  } else if (pass == 0) {
    note += "met with every candidate node in " + format.str();
  } else {
    note += std::to_string(pass) + " of " + std::to_string(order.size()) +
            " nodes kept in f32:";
    for (auto [i, n] : llvm::enumerate(names))
      note += (i ? ", '" : " '") + n + "'";
  }
  note += "; measured against f32 on " + std::to_string(r.samples) +
          " calibration samples: " + describeAccuracy(measured[pass]);
  if (pass != 0)
    note += " (all in " + format.str() + ": " +
            describeAccuracy(measured[0]) + ")";
  note += "; " + std::to_string(measured.size()) + " trial builds";
  notes.push_back(note);
  return names;
}
} // namespace

Expected<kiln::CompileResult> kiln::compile(const CompileOptions &o) {
  if (o.optLevel > 3)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "optimization level must be 0..3, got " +
                                       std::to_string(o.optLevel));
  if (o.outputPath.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no output path given");
  registerEverythingOnce();
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  // The GPU target translates its kernels (NVVM, GPU dialects) to LLVM IR.
  registerAllToLLVMIRTranslations(registry);
  registry.insert<mlir::kiln::KilnDialect, mlir::kiln::onnx::OnnxDialect>();
  MLIRContext ctx(registry, MLIRContext::Threading::DISABLED);
  if (o.target != "cpu" && o.target != "cuda" && o.target != "cuda-emulated")
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown target '" + o.target +
                                       "'; use cpu or cuda");
  if (o.target != "cpu" && !o.quantize.empty() && o.quantize != "none")
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "--quantize=" + o.quantize + " has CPU kernels only (VNNI); it "
        "cannot be combined with --target=" + o.target);
  if (o.target == "cuda" && o.gpuArch != "sm_80" && o.gpuArch != "sm_90")
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown --gpu-arch '" + o.gpuArch +
                                       "'; use sm_80 or sm_90");

  std::vector<std::string> errors;
  CompileResult result;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Remark) {
      // Batch variants repeat the same remark once per function.
      if (!llvm::is_contained(result.notes, diag.str()))
        result.notes.push_back(diag.str());
      return success();
    }
    if (diag.getSeverity() != DiagnosticSeverity::Error)
      return success();
    std::string text;
    llvm::raw_string_ostream os(text);
    Location loc = diag.getLocation();
    std::string msg = diag.str();
    // Importer and OnnxToKiln messages name their node, input or tensor
    // themselves; other locations are printed the way compilers do.
    if (auto file = dyn_cast<FileLineColLoc>(loc)) {
      os << file.getFilename().getValue() << ": ";
    } else if (auto name = dyn_cast<NameLoc>(loc)) {
      if (!llvm::StringRef(msg).contains("'" + name.getName().str() + "'"))
        os << "node '" << name.getName().getValue() << "': ";
    } else if (!isa<UnknownLoc>(loc)) {
      os << loc << ": ";
    }
    os << "error: " << msg;
    errors.push_back(text);
    return success();
  });

  DefaultTimingManager timing;
  timing.setEnabled(o.timing);
  TimingScope root = timing.getRootScope();
  PhaseTimes phases;

  // Import.
  OwningOpRef<ModuleOp> module;
  {
    Phase t(root, phases, "import");
    ImportOptions io;
    io.inputShapes = o.inputShapes;
    io.allowDynamicInputs = o.emit == EmitKind::Import;
    module = importOnnxFile(ctx, o.inputPath, io);
  }
  if (!module)
    return errorFrom(errors, "import failed");
  auto finishText = [&]() -> Expected<CompileResult> {
    if (Error e = writeText(o.outputPath, printed(*module)))
      return std::move(e);
    result.files.push_back(o.outputPath);
    return result;
  };
  if (o.emit == EmitKind::Import)
    return finishText();

  // Batch variants: one copy of the graph per batch size, differing only in
  // the leading dimension of the inputs; every type after that is inferred
  // again, and the weights stay one set of constants.
  std::vector<int64_t> batchSizes = o.batchSizes;
  llvm::sort(batchSizes);
  batchSizes.erase(std::unique(batchSizes.begin(), batchSizes.end()),
                   batchSizes.end());
  std::vector<std::string> entryNames = {"main_graph"};
  auto graph = module->lookupSymbol<func::FuncOp>("main_graph");
  if (!graph)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: no main_graph function");
  if (!batchSizes.empty()) {
    if (batchSizes.front() < 1)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "batch sizes must be positive");
    for (auto [i, t] : llvm::enumerate(graph.getArgumentTypes()))
      if (cast<RankedTensorType>(t).getRank() == 0)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "--batch-sizes needs a leading batch dimension, but input " +
                std::to_string(i) + " is a scalar");
    entryNames.clear();
    OpBuilder b(&ctx);
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
            isa<mlir::kiln::onnx::InitializerOp>(op))
          return;
        for (OpResult r : op->getResults())
          if (auto t = dyn_cast<RankedTensorType>(r.getType()))
            r.setType(UnrankedTensorType::get(t.getElementType()));
      });
      entryNames.push_back(name);
    }
    graph.erase();
  }

  auto runPipeline = [&](const std::string &text, llvm::StringRef phase) {
    PassManager pm(&ctx, ModuleOp::getOperationName());
    pm.enableVerifier(true);
    if (o.verifyEach)
      pm.enableIRPrinting();
    Phase t(root, phases, phase);
    pm.enableTiming(t.scope);
    if (failed(parsePassPipeline(text, pm))) {
      errors.push_back("internal error: bad pass pipeline for " + phase.str());
      return failure();
    }
    return pm.run(*module);
  };

  // Whether the target CPU has `feature`, which `flag` needs; if not (and
  // `note`), a note that the model is compiled in f32, also kept as the
  // result's f32Fallback. The features are read once.
  std::optional<std::string> targetIsa;
  std::string targetCpu;
  auto targetHasQuietly = [&](llvm::StringRef feature) -> Expected<bool> {
    if (!targetIsa) {
      auto ttm = createTargetMachine(o.mcpu, o.mattr, o.optLevel);
      if (!ttm)
        return ttm.takeError();
      targetIsa = requiredIsa(**ttm);
      targetCpu = (*ttm)->getTargetCPU().str();
    }
    llvm::SmallVector<llvm::StringRef> features;
    llvm::StringRef(*targetIsa).split(features, ',');
    return llvm::is_contained(features, feature);
  };
  auto targetHas = [&](llvm::StringRef feature, llvm::StringRef flag,
                       llvm::StringRef mattr,
                       bool note = true) -> Expected<bool> {
    Expected<bool> has = targetHasQuietly(feature);
    if (!has || *has || !note)
      return has;
    result.f32Fallback =
        (flag + " needs " + feature + ", which the target CPU '" + targetCpu +
         "' lacks (use --mcpu or --mattr=" + mattr + "); compiled in f32")
            .str();
    result.notes.push_back(result.f32Fallback);
    return false;
  };

  // Graph, then dynamic int8 where asked for and the target has VNNI.
  // bf16Dot: bf16 products on AVX512-BF16 (vdpbf16ps) for a target without
  // AMX-BF16.
  bool vnni = false, amx = false, fp16 = false, bf16Dot = false;
  // The mode --max-accuracy-drop searches in, as its notes name it.
  std::string budgetLabel = o.quantize == "static"    ? "static int8"
                            : o.quantize == "dynamic" ? "dynamic int8"
                            : o.precision == "bf16"   ? "bf16"
                            : o.precision == "fp16"   ? "fp16"
                                                      : "";
  if (o.maxAccuracyDrop != 0 &&
      (budgetLabel.empty() || !(o.maxAccuracyDrop > 0) ||
       !(o.maxAccuracyDrop < 1)))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "--max-accuracy-drop needs --quantize=static|dynamic or "
        "--precision=bf16|fp16, and a fraction in (0, 1), e.g. 0.01 for 1%");
  if (o.maxAccuracyDrop > 0 && o.quantize != "static" &&
      o.calibrationData.empty())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "--max-accuracy-drop measures the error on --calibration-data "
        "DIR|FILE.npz: give samples drawn like the inputs the model will see");
  // --max-accuracy-drop: search on what calibration observed and record
  // the nodes to keep in f32.
  auto applyBudget = [&](const Calibration &c) -> Error {
    Expected<std::vector<std::string>> kept =
        searchBudget(o, c, budgetLabel, result.notes);
    if (!kept)
      return kept.takeError();
    SmallVector<Attribute> names;
    for (const std::string &n : *kept)
      names.push_back(StringAttr::get(&ctx, n));
    (*module)->setAttr(mlir::kiln::kKeepFp32BudgetAttr,
                       ArrayAttr::get(&ctx, names));
    return Error::success();
  };
  // Outside static int8, the budget observes the input of every product.
  auto searchKept = [&]() -> Error {
    if (!(o.maxAccuracyDrop > 0))
      return Error::success();
    Expected<Calibration> c =
        calibrate(o, budgetLabel, /*allProducts=*/true, result.notes);
    if (!c)
      return c.takeError();
    return applyBudget(*c);
  };
  std::string graphPipeline = kGraphPipeline;
  if (o.observeQuantInputs)
    graphPipeline += o.observeAllProducts ? ",kiln-observe-quant-inputs{all=true}"
                                          : ",kiln-observe-quant-inputs";
  if (o.quantize == "dynamic") {
    Expected<bool> has =
        targetHas("avx512vnni", "--quantize=dynamic", "+avx512vnni");
    if (!has)
      return has.takeError();
    if ((vnni = *has)) {
      graphPipeline += ",kiln-quantize-dynamic";
      if (Error e = searchKept())
        return std::move(e);
    }
  } else if (o.quantize == "static") {
    if (!o.precision.empty() && o.precision != "fp32")
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--quantize=static and --precision=" + o.precision +
              " both convert the MatMul/Gemm and Conv nodes; use one of them");
    if (o.calibrationData.empty())
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--quantize=static needs --calibration-data DIR|FILE.npz: a folder "
          "of input_0.pb, ... (one sample) or of test_data_set_<n> folders "
          "that hold them, or a .npz with one array per model input, drawn "
          "like the inputs the model will see");
    Expected<bool> has =
        targetHas("avx512vnni", "--quantize=static", "+avx512vnni");
    if (!has)
      return has.takeError();
    if ((vnni = *has)) {
      // AMX int8 (tdpbusd) where the target has it, else VNNI.
      amx = llvm::StringRef(*targetIsa).contains("amx-int8");
      std::vector<std::pair<float, float>> ranges = o.activationRanges;
      if (ranges.empty()) {
        Expected<Calibration> c =
            calibrate(o, budgetLabel, /*allProducts=*/false, result.notes);
        if (!c)
          return c.takeError();
        ranges = c->result.ranges;
        if (o.maxAccuracyDrop > 0)
          if (Error e = applyBudget(*c))
            return std::move(e);
      }
      SmallVector<Attribute> list;
      for (auto [lo, hi] : ranges)
        list.push_back(DenseF32ArrayAttr::get(&ctx, {lo, hi}));
      (*module)->setAttr(mlir::kiln::kActivationRangesAttr,
                         ArrayAttr::get(&ctx, list));
      // Without AMX, K in 4-byte lanes only (the VNNI kernel).
      graphPipeline +=
          amx ? ",kiln-quantize-static" : ",kiln-quantize-static{lane-k=true}";
    }
  } else if (!o.quantize.empty() && o.quantize != "none") {
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "unknown quantization '" + o.quantize +
            "'; use none, dynamic or static (for bf16 use --precision=bf16)");
  }
  // bf16 matmuls where asked for and the target has AMX-BF16.
  if (o.precision == "bf16") {
    if (o.target != "cpu")
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--precision=bf16 has CPU kernels only (AMX); it cannot be "
          "combined with --target=" + o.target +
              " (a CUDA model runs fp16 tensors on tensor cores as they are, "
              "docs/gpu.md)");
    if (o.quantize == "dynamic")
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--precision=bf16 and --quantize=dynamic both convert the "
          "MatMul/Gemm nodes; use one of them");
    // AMX-BF16 tiles where the target has them; else AVX512-BF16's dot
    // product (vdpbf16ps) for MatMul/Gemm and Conv, whose run-time products
    // (attention) stay f32; else f32 with a note.
    Expected<bool> dot = targetHasQuietly("avx512bf16");
    if (!dot)
      return dot.takeError();
    Expected<bool> tiles = targetHas("amx-bf16", "--precision=bf16",
                                     "+amx-tile,+amx-bf16", /*note=*/!*dot);
    if (!tiles)
      return tiles.takeError();
    amx = *tiles;
    bf16Dot = !amx && *dot;
    if (bf16Dot) {
      result.notes.push_back(
          "--precision=bf16: the target CPU '" + targetCpu +
          "' has no AMX-BF16; MatMul/Gemm and Conv run on AVX512-BF16 "
          "(vdpbf16ps), MatMuls of two run-time tensors stay f32");
    }
    if (amx || bf16Dot) {
      graphPipeline += amx ? ",kiln-bf16-matmul"
                           : ",kiln-bf16-matmul{run-time-products=false}";
      if (Error e = searchKept())
        return std::move(e);
    }
  } else if (o.precision == "fp16") {
    if (o.target != "cpu")
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--precision=fp16 is implemented for the CPU target only; a CUDA "
          "model runs fp16 tensors on tensor cores as they are (docs/gpu.md)");
    if (o.quantize == "dynamic")
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--precision=fp16 and --quantize=dynamic both convert the "
          "MatMul/Gemm nodes; use one of them");
    // Without F16C every conversion is a call (the MLP ran 40x slower).
    Expected<bool> has = targetHas("f16c", "--precision=fp16", "+f16c");
    if (!has)
      return has.takeError();
    if ((fp16 = *has)) {
      graphPipeline += ",kiln-fp16-compute";
      if (Error e = searchKept())
        return std::move(e);
    }
  } else if (!o.precision.empty() && o.precision != "fp32") {
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "unknown precision '" + o.precision + "'; use fp32, bf16 or fp16");
  }
  // --keep-fp32: node names both reduced-precision passes leave alone.
  if (!o.keepFp32.empty()) {
    if (!amx && !vnni && !fp16 && !bf16Dot)
      result.notes.push_back(
          "--keep-fp32 has no effect without --precision=bf16|fp16 or "
          "--quantize=dynamic|static on a target that supports them");
    SmallVector<Attribute> names;
    for (const std::string &n : o.keepFp32)
      names.push_back(StringAttr::get(&ctx, n));
    (*module)->setAttr(mlir::kiln::kKeepFp32Attr, ArrayAttr::get(&ctx, names));
  }
  if (failed(runPipeline(graphPipeline, "graph"))) {
    if (!batchSizes.empty())
      errors.push_back(
          "note: --batch-sizes compiles the graph once per batch size with "
          "the leading dimension of every input replaced; the errors above "
          "mean the model's leading input dimension is not a batch dimension "
          "(for example, a Reshape to a constant shape)");
    return errorFrom(errors, "lowering to the kiln dialect failed");
  }
  // Under --quantize or --precision, what each layer runs in (the report).
  PrecisionReport precisionReport;
  if (amx || vnni || fp16)
    precisionReport.layers = layerPrecisions(*module);
  if (o.observeQuantInputs)
    if (auto nodes =
            (*module)->getAttrOfType<ArrayAttr>(mlir::kiln::kObservedNodesAttr))
      for (Attribute n : nodes)
        result.observedNodes.push_back(cast<StringAttr>(n).str());
  if (o.emit == EmitKind::Kiln)
    return finishText();

  // The model's signature, for the descriptor.
  ModelDesc desc;
  desc.name = o.name;
  if (desc.name.empty())
    if (auto n = (*module)->getAttrOfType<StringAttr>(kModelNameAttr))
      desc.name = n.str();
  if (desc.name.empty())
    desc.name = llvm::sys::path::stem(o.inputPath).str();
  auto func = module->lookupSymbol<func::FuncOp>(entryNames.front());
  auto describe = [&](Type t, DictionaryAttr attrs, const std::string &dflt)
      -> Expected<TensorDesc> {
    TensorDesc d;
    auto named = attrs ? attrs.getAs<StringAttr>(kValueNameAttr) : nullptr;
    d.name = named ? named.str() : dflt;
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!rt || !rt.hasStaticShape())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "'" + d.name + "' has no static shape");
    d.dtype = onnxDataType(rt.getElementType());
    d.shape.assign(rt.getShape().begin(), rt.getShape().end());
    return d;
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto d = describe(func.getArgumentTypes()[i], func.getArgAttrDict(i),
                      "input_" + std::to_string(i));
    if (!d)
      return d.takeError();
    desc.inputs.push_back(*d);
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto d = describe(func.getResultTypes()[i], func.getResultAttrDict(i),
                      "output_" + std::to_string(i));
    if (!d)
      return d.takeError();
    desc.outputs.push_back(*d);
  }

  // Every variant must scale its outputs with the batch.
  for (auto [i, name] : llvm::enumerate(entryNames)) {
    if (batchSizes.empty())
      break;
    auto variant = module->lookupSymbol<func::FuncOp>(name);
    for (auto [j, t] : llvm::enumerate(variant.getResultTypes())) {
      auto rt = cast<RankedTensorType>(t);
      if (rt.getRank() == 0 || rt.getDimSize(0) != batchSizes[i])
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "output '" + desc.outputs[j].name + "' does not have the batch "
            "size " + std::to_string(batchSizes[i]) +
            " as its leading dimension in that variant; --batch-sizes needs "
            "a model whose leading input and output dimension is the batch");
    }
  }
  desc.variants.clear();
  for (auto [i, name] : llvm::enumerate(entryNames))
    desc.variants.push_back(
        {batchSizes.empty() ? (desc.inputs.empty() || desc.inputs[0].shape.empty()
                                   ? 1
                                   : desc.inputs[0].shape[0])
                            : batchSizes[i],
         name, 0});

  // Linalg.
  if (failed(runPipeline(kLinalgPipeline, "linalg")))
    return errorFrom(errors, "lowering to linalg failed");
  if (o.emit == EmitKind::Linalg)
    return finishText();

  // Writes the report, model.h and model.json beside a linked model.so.
  auto finishSo = [&]() -> Expected<CompileResult> {
    if (!o.reportDir.empty()) {
      if (std::error_code ec = llvm::sys::fs::create_directories(o.reportDir))
        return llvm::createStringError(ec, "cannot create '" + o.reportDir +
                                               "': " + ec.message());
      llvm::SmallString<256> path(o.reportDir);
      llvm::sys::path::append(path, "report.html");
      precisionReport.notes = result.notes;
      if (Error e = writeText(std::string(path),
                              reportHtml(*module, desc, phases,
                                         precisionReport)))
        return std::move(e);
      result.files.push_back(std::string(path));
    }
    std::string header = replaceExtension(o.outputPath, "h");
    std::string json = replaceExtension(o.outputPath, "json");
    if (Error e = writeText(header, modelHeader(desc)))
      return std::move(e);
    if (Error e = writeText(json, modelJson(desc)))
      return std::move(e);
    result.files.insert(result.files.begin(), {o.outputPath, header, json});
    return result;
  };
  if (o.target == "cuda")
    return compileGpu(*module, o, desc, entryNames, runPipeline, errors, root,
                      phases, result, finishSo);

  // Code generation.
  auto tm = createTargetMachine(o.mcpu, o.mattr, o.optLevel);
  if (!tm)
    return tm.takeError();
  desc.requiredIsa = requiredIsa(**tm);
  // LLVM emits AMX instructions only for the tile kernels; a model without
  // them must not ask the OS for tile state (kiln_session_create does).
  if (amx) {
    bool used = false;
    module->walk([&](linalg::GenericOp op) {
      // Static int8 products all fit AMX tiles (16-column panels, K
      // padded to 64); --kiln-cpu-vnni-matmul{amx} re-marks them.
      used |= op->hasAttr(mlir::kiln::kBf16MatmulAttr) ||
              (o.quantize == "static" &&
               op->hasAttr(mlir::kiln::kInt8MatmulAttr));
    });
    amx = used;
  }
  if (!amx) {
    llvm::SmallVector<llvm::StringRef> kept, features;
    llvm::StringRef(desc.requiredIsa).split(features, ',');
    for (llvm::StringRef f : features)
      if (!f.starts_with("amx-"))
        kept.push_back(f);
    desc.requiredIsa = llvm::join(kept, ",");
  }
  llvm::StringRef isa(desc.requiredIsa);
  int64_t vectorWidth = isa.contains("avx512f") ? 16
                        : isa.contains("avx")   ? 8
                                                : 4;
  // cuda-emulated: the GPU kernels as host loops, to test the GPU mapping
  // against reference outputs on a machine without a GPU (docs/gpu.md).
  std::string codegen = o.target == "cuda-emulated"
                            ? gpuCodegenPipeline(o.gpuArch, true)
                            : codegenPipeline(vectorWidth, vnni, amx, bf16Dot);
  if (failed(runPipeline(codegen, "codegen")))
    return errorFrom(errors, "code generation failed");
  for (ModelDesc::Variant &v : desc.variants)
    if (auto f = module->lookupSymbol<LLVM::LLVMFuncOp>(v.entryName))
      if (auto a = f->getAttrOfType<IntegerAttr>(mlir::kiln::kArenaBytesAttr))
        v.arenaBytes = a.getInt();
  if (auto guards =
          (*module)->getAttrOfType<ArrayAttr>(mlir::kiln::kGuardMessagesAttr))
    for (Attribute g : guards)
      desc.guardMessages.push_back(cast<StringAttr>(g).str());
  if (o.emit == EmitKind::MemoryPlan) {
    if (Error e = writeText(o.outputPath, memoryPlanJson(*module, desc)))
      return std::move(e);
    result.files.push_back(o.outputPath);
    return result;
  }

  llvm::LLVMContext llvmCtx;
  std::unique_ptr<llvm::Module> llvmModule;
  {
    Phase t(root, phases, "translate");
    llvmModule = translateModuleToLLVMIR(*module, llvmCtx, "kiln_model");
  }
  if (!llvmModule)
    return errorFrom(errors, "translation to LLVM IR failed");

  if (auto h = (*module)->getAttrOfType<StringAttr>(kModelHashAttr))
    desc.hash = h.str();
  desc.compilerVersion = versionString();
  desc.triple = (*tm)->getTargetTriple().str();
  desc.cpu = (*tm)->getTargetCPU().str();
  desc.compileOptions = describeOptions(o, desc.cpu);
  if (Error e = addModelDescriptor(*llvmModule, desc))
    return std::move(e);
  {
    Phase t(root, phases, "llvm-optimize");
    if (Error e = optimizeModule(*llvmModule, **tm, o.optLevel))
      return std::move(e);
  }
  if (o.emit == EmitKind::LLVM) {
    std::string text;
    llvm::raw_string_ostream os(text);
    llvmModule->print(os, nullptr);
    if (Error e = writeText(o.outputPath, text))
      return std::move(e);
    result.files.push_back(o.outputPath);
    return result;
  }
  Expected<std::string> code = [&] {
    Phase t(root, phases, "llvm-codegen");
    return emitMachineCode(*llvmModule, **tm, o.emit == EmitKind::Asm);
  }();
  if (!code)
    return code.takeError();
  if (o.emit == EmitKind::Asm || o.emit == EmitKind::Obj) {
    if (Error e = writeText(o.outputPath, *code))
      return std::move(e);
    result.files.push_back(o.outputPath);
    return result;
  }
  {
    Phase t(root, phases, "link");
    if (Error e = linkSharedObject(*code, o.outputPath))
      return std::move(e);
  }
  return finishSo();
}

Expected<kiln::CheckResult> kiln::check(const CompileOptions &o) {
  registerEverythingOnce();
  DialectRegistry registry;
  registerAllDialects(registry);
  registry.insert<mlir::kiln::KilnDialect, mlir::kiln::onnx::OnnxDialect>();
  MLIRContext ctx(registry, MLIRContext::Threading::DISABLED);
  std::vector<std::string> messages;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      messages.push_back(diag.str());
    return success();
  });
  ImportOptions io;
  io.inputShapes = o.inputShapes;
  OwningOpRef<ModuleOp> module = importOnnxFile(ctx, o.inputPath, io);
  CheckResult result;
  if (!module) {
    // An unreadable file is a failure; an input without a static shape is a
    // finding like any other.
    bool shapeOnly = !messages.empty() &&
                     llvm::all_of(messages, [](const std::string &m) {
                       return llvm::StringRef(m).starts_with("graph input");
                     });
    if (!shapeOnly)
      return errorFrom(messages, "import failed");
    result.otherErrors = messages;
    return result;
  }
  module->walk([&](Operation *op) {
    if (op->getName().getDialectNamespace() == "onnx" &&
        !isa<mlir::kiln::onnx::InitializerOp, mlir::kiln::onnx::NoValueOp>(op))
      ++result.numNodes;
  });
  PassManager pm(&ctx, ModuleOp::getOperationName());
  if (failed(parsePassPipeline("kiln-convert-onnx-to-kiln", pm)))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: bad check pipeline");
  (void)pm.run(*module);
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
  return result;
}
