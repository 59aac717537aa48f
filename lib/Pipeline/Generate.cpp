//===- Generate.cpp - code generation and the files a compile writes -*- C++ -*-===//
#include "Compilation.h"

#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "kiln/Codegen/CPU/Passes.h"
#include "kiln/Codegen/GPU/Passes.h"
#include "kiln/Version.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

using namespace mlir;
using namespace mlir::kiln;
using llvm::Error;
using llvm::Expected;

namespace {
Error writeText(const std::string &path, llvm::StringRef text) {
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
  op->print(os, OpPrintingFlags()
                    .elideLargeElementsAttrs(16)
                    .elideLargeResourceString(64));
  return s;
}

std::string printed(const llvm::Module &module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  return text;
}

std::string replaceExtension(const std::string &path, llvm::StringRef ext) {
  llvm::SmallString<256> p(path);
  llvm::sys::path::replace_extension(p, ext);
  return std::string(p);
}

/// The required features without AMX's: LLVM emits AMX instructions only for
/// the tile kernels, and a model without them must not ask the OS for tile
/// state (kiln_session_create does).
std::string withoutAmx(llvm::StringRef isa) {
  llvm::SmallVector<llvm::StringRef> kept, features;
  isa.split(features, ',');
  for (llvm::StringRef f : features)
    if (!f.starts_with("amx-"))
      kept.push_back(f);
  return llvm::join(kept, ",");
}
} // namespace

//===----------------------------------------------------------------------===//
// Finishing: the files
//===----------------------------------------------------------------------===//

Error Compilation::writeOutput(std::string text) {
  if (options.outputPath == "-") {
    outcome.result.standardOutput = std::move(text);
    return Error::success();
  }
  if (Error e = writeText(options.outputPath, text))
    return e;
  outcome.result.files.push_back(options.outputPath);
  return Error::success();
}

Expected<CompileOutcome> Compilation::finishFile(std::string text) {
  if (Error e = writeOutput(std::move(text)))
    return std::move(e);
  return std::move(outcome);
}

Expected<CompileOutcome> Compilation::finishText() {
  return finishFile(printed(*module));
}

/// Writes the report, model.h and model.json beside a linked model.so.
Expected<CompileOutcome> Compilation::finishSo() {
  CompileResult &result = outcome.result;
  if (!options.reportDir.empty()) {
    if (std::error_code ec =
            llvm::sys::fs::create_directories(options.reportDir))
      return llvm::createStringError(ec, "cannot create '" +
                                             options.reportDir +
                                             "': " + ec.message());
    llvm::SmallString<256> path(options.reportDir);
    llvm::sys::path::append(path, "report.html");
    precisionReport.notes = result.notes;
    if (Error e = writeText(std::string(path),
                            reportHtml(*module, desc, phases, precisionReport)))
      return std::move(e);
    result.files.push_back(std::string(path));
  }
  std::string header = replaceExtension(options.outputPath, "h");
  std::string json = replaceExtension(options.outputPath, "json");
  if (Error e = writeText(header, modelHeader(desc)))
    return std::move(e);
  if (Error e = writeText(json, modelJson(desc)))
    return std::move(e);
  result.files.insert(result.files.begin(),
                      {options.outputPath, header, json});
  return std::move(outcome);
}

/// The arena size of each variant and the guards' messages, which the arena
/// pass left on the module.
void Compilation::recordArena() {
  for (ModelDesc::Variant &v : desc.variants) {
    Operation *f = module->lookupSymbol(v.entryName);
    if (!f)
      continue;
    if (auto a = f->getAttrOfType<IntegerAttr>(kArenaBytesAttr))
      v.arenaBytes = a.getInt();
    // At run-time sizes: each output axis's symbol and largest size, which
    // --kiln-bind-symbolic-shapes derived.
    auto symbols = f->getAttrOfType<DenseI64ArrayAttr>(kOutputSymbolsAttr);
    auto bounds = f->getAttrOfType<DenseI64ArrayAttr>(kOutputBoundsAttr);
    if (!desc.runtimeExtents || !symbols || !bounds)
      continue;
    size_t at = 0;
    desc.outputSymbols.clear();
    for (TensorDesc &t : desc.outputs) {
      std::vector<int32_t> axes;
      for (int64_t &n : t.shape) {
        if (at >= size_t(symbols.size()))
          break;
        axes.push_back((int32_t)symbols[at]);
        n = bounds[at++];
      }
      desc.outputSymbols.push_back(std::move(axes));
    }
  }
  if (auto guards = (*module)->getAttrOfType<ArrayAttr>(kGuardMessagesAttr))
    for (Attribute g : guards)
      desc.guardMessages.push_back(cast<StringAttr>(g).str());
}

/// Optimizes `llvmModule` (unless `optimize` is false), then writes it as
/// --emit asks: LLVM IR, assembly, an object, or a linked model.so.
/// LLVM IR has no place for the argument and result attributes of other
/// dialects (onnx.name, kiln.*): the translation warns about each one, and
/// every warning prints the whole function, which made translation quadratic
/// in the number of arguments (a Sum of 500 inputs spent 22 s there). They
/// are dropped first; the translation would ignore them anyway.
static void dropForeignArgumentAttrs(ModuleOp module) {
  auto llvmOnly = [](ArrayRef<NamedAttribute> attrs) {
    SmallVector<NamedAttribute> kept;
    for (NamedAttribute a : attrs)
      if (a.getName().strref().starts_with("llvm."))
        kept.push_back(a);
    return kept;
  };
  // All of a function's argument (result) attributes are set at once: one
  // setArgAttrs per argument rebuilds the array of all of them.
  auto kept = [&](LLVM::LLVMFuncOp f, DictionaryAttr d) {
    return DictionaryAttr::get(f.getContext(),
                               d ? llvmOnly(d.getValue())
                                 : SmallVector<NamedAttribute>());
  };
  module.walk([&](LLVM::LLVMFuncOp f) {
    if (f.getArgAttrsAttr()) {
      SmallVector<DictionaryAttr> args;
      for (unsigned i = 0; i < f.getNumArguments(); ++i)
        args.push_back(kept(f, f.getArgAttrDict(i)));
      f.setAllArgAttrs(args);
    }
    if (f.getResAttrsAttr()) {
      SmallVector<DictionaryAttr> results;
      for (unsigned i = 0; i < f.getNumResults(); ++i)
        results.push_back(kept(f, f.getResultAttrDict(i)));
      f.setAllResultAttrs(results);
    }
  });
}

/// How many threads run the back end of a .so: large models (the back end
/// is most of their compile: a 1,000-node U-Net spends 20 s there) split
/// over the cores, up to 4; smaller ones stay one object, byte for byte what
/// a single-threaded compile writes. Split from 10,000 instructions, the
/// BERT-mini encoder's code generation took 0.43 s instead of 0.65 s, and
/// BERT-small ran 3-5% slower in one measurement, not in a second
/// (kiln-run --bench, Intel Xeon): the bar stays where the back end
/// dominates until that is settled. KILN_BACKEND_THREADS overrides.
static unsigned backEndParts(const llvm::Module &module) {
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  if (const char *env = std::getenv("KILN_BACKEND_THREADS"); env && *env) {
    unsigned n = (unsigned)std::strtoul(env, nullptr, 10);
    return std::clamp(n, 1u, 64u);
  }
  size_t instructions = 0, functions = 0;
  for (const llvm::Function &f : module)
    if (!f.isDeclaration()) {
      ++functions;
      instructions += f.getInstructionCount();
    }
  if (functions < 64 || instructions < 50000)
    return 1;
  return std::min(cores, 4u);
}

Error Compilation::emitMachineCode(llvm::Module &llvmModule,
                                   llvm::TargetMachine &tm, bool optimize) {
  if (optimize) {
    Phase t(rootTiming, phases, "llvm-optimize", options.progress);
    // Symbolic dimensions, not a static model's data-dependent sizes.
    bool runTimeSizes = symbolicShapes && !symbolicShapes->symbols.empty();
    if (Error e =
            optimizeModule(llvmModule, tm, options.optLevel, runTimeSizes))
      return e;
  }
  if (options.emit == EmitKind::LLVM) {
    return writeOutput(printed(llvmModule));
  }
  if (options.emit == EmitKind::So && optimize) {
    if (unsigned parts = backEndParts(llvmModule); parts > 1) {
      std::vector<std::unique_ptr<llvm::TargetMachine>> tms;
      for (unsigned i = 0; i < parts; ++i) {
        auto part = createTargetMachine(options.mcpu, options.mattr,
                                        options.optLevel);
        if (!part)
          return part.takeError();
        tms.push_back(std::move(*part));
      }
      Expected<std::vector<std::string>> objects = [&] {
        Phase t(rootTiming, phases, "llvm-codegen", options.progress);
        return emitObjectsInParallel(llvmModule, tms);
      }();
      if (!objects)
        return objects.takeError();
      Phase t(rootTiming, phases, "link", options.progress);
      return linkSharedObject(*objects, options.outputPath);
    }
  }
  Expected<std::string> code = [&] {
    Phase t(rootTiming, phases, "llvm-codegen", options.progress);
    return kiln::emitMachineCode(llvmModule, tm,
                                 options.emit == EmitKind::Asm);
  }();
  if (!code)
    return code.takeError();
  if (options.emit == EmitKind::Asm || options.emit == EmitKind::Obj) {
    return writeOutput(std::move(*code));
  }
  Phase t(rootTiming, phases, "link", options.progress);
  return linkSharedObject({*code}, options.outputPath);
}

//===----------------------------------------------------------------------===//
// The CPU
//===----------------------------------------------------------------------===//

Expected<CompileOutcome> Compilation::generateCPU() {
  auto tm = createTargetMachine(options.mcpu, options.mattr, options.optLevel);
  if (!tm)
    return tm.takeError();
  desc.requiredIsa = requiredIsa(**tm);
  CPUCodegenOptions cpu;
  cpu.vnni = plan.vnni || plan.graph.integerVnni;
  cpu.int8Avx2 = plan.graph.integerAvx2;
  cpu.bf16Dot = plan.bf16Dot;
  cpu.amx = plan.amx;
  if (cpu.amx) {
    bool used = false;
    module->walk([&](linalg::GenericOp op) {
      // Static int8 products all fit AMX tiles (16-column panels, K
      // padded to 64); --kiln-cpu-vnni-matmul{amx} re-marks them.
      used |= op->hasAttr(kBf16MatmulAttr) ||
              (options.quantize == Quantization::Static &&
               op->hasAttr(kInt8MatmulAttr));
    });
    cpu.amx = used;
  }
  if (!cpu.amx)
    desc.requiredIsa = withoutAmx(desc.requiredIsa);
  llvm::StringRef isa(desc.requiredIsa);
  cpu.vectorWidth = isa.contains("avx512f") ? 16 : isa.contains("avx") ? 8 : 4;
  cpu.l2Bytes = l2CacheBytes(options.mcpu);
  // cuda-emulated: the GPU kernels as host loops, to test the GPU mapping
  // against reference outputs on a machine without a GPU (docs/gpu.md).
  LogicalResult generated = runPasses(
      [&](OpPassManager &pm) {
        if (options.target == Target::CudaEmulated)
          buildGPUCodegenPipeline(pm, toString(options.gpuArch).str(),
                                  /*emulate=*/true);
        else
          buildCPUCodegenPipeline(pm, cpu);
      },
      "codegen");
  if (failed(generated))
    return diagnosticsError("code generation failed");
  recordArena();
  if (options.emit == EmitKind::MemoryPlan)
    return finishFile(memoryPlanJson(*module, desc));

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule;
  {
    Phase t(rootTiming, phases, "translate", options.progress);
    dropForeignArgumentAttrs(*module);
    llvmModule = translateModuleToLLVMIR(*module, llvmContext, "kiln_model");
  }
  if (!llvmModule)
    return diagnosticsError("translation to LLVM IR failed");
  if (auto h = (*module)->getAttrOfType<StringAttr>(kModelHashAttr))
    desc.hash = h.str();
  desc.compilerVersion = versionString();
  desc.triple = (*tm)->getTargetTriple().str();
  desc.cpu = (*tm)->getTargetCPU().str();
  desc.compileOptions = describeOptions(options, desc.cpu);
  if (Error e = addModelDescriptor(*llvmModule, desc))
    return std::move(e);
  if (Error e = emitMachineCode(*llvmModule, **tm, /*optimize=*/true))
    return std::move(e);
  if (options.emit != EmitKind::So)
    return std::move(outcome);
  return finishSo();
}

//===----------------------------------------------------------------------===//
// The GPU
//===----------------------------------------------------------------------===//

/// The rest of a compile for --target=cuda, after the linalg phase: GPU
/// code generation, the launch table, ptxas figures, and a model.so whose
/// host side is the descriptor plus the table.
Expected<CompileOutcome> Compilation::generateGPU() {
  std::string arch = toString(options.gpuArch).str();
  if (failed(runPasses(
          [&](OpPassManager &pm) {
            buildGPUCodegenPipeline(pm, arch, /*emulate=*/false);
          },
          "codegen-gpu")))
    return diagnosticsError("GPU code generation failed");
  recordArena();
  if (options.emit == EmitKind::MemoryPlan)
    return finishFile(memoryPlanJson(*module, desc));
  GpuProgram program;
  program.arch = arch;
  if (failed(extractGpuProgram(*module, entryNames, program)))
    return diagnosticsError("extracting the GPU launch table failed");
  if (options.emit == EmitKind::Asm) // the PTX
    return finishFile(program.ptx);

  desc.target = "cuda";
  desc.gpuArch = arch;
  desc.triple = "nvptx64-nvidia-cuda";
  desc.cpu = arch;
  desc.requiredIsa = ""; // the host side is data and the baseline runtime
  if (auto h = (*module)->getAttrOfType<StringAttr>(kModelHashAttr))
    desc.hash = h.str();
  desc.compilerVersion = versionString();
  desc.compileOptions = describeOptions(options, "");
  {
    Phase t(rootTiming, phases, "ptxas", options.progress);
    bool found = false;
    // A model with nothing to compute (a zero-sized output) has no kernels
    // and no PTX.
    auto stats = program.kernels.empty()
                     ? Expected<std::vector<ModelDesc::KernelStats>>(
                           std::vector<ModelDesc::KernelStats>{})
                     : runPtxas(program.ptx, arch, found);
    if (!stats)
      return stats.takeError();
    desc.kernelStats = std::move(*stats);
    if (!found && !program.kernels.empty())
      desc.ptxasNote = "ptxas not found (set KILN_PTXAS or put the CUDA "
                       "toolkit's bin on PATH); PTX not assembled at compile "
                       "time";
  }

  // The host object: descriptor and launch table, for a baseline x86-64.
  auto tm = createTargetMachine("x86-64", "", options.optLevel);
  if (!tm)
    return tm.takeError();
  llvm::LLVMContext llvmContext;
  llvm::Module host("kiln_model", llvmContext);
  if (Error e = addModelDescriptor(host, desc))
    return std::move(e);
  if (Error e = addGpuProgram(host, program))
    return std::move(e);
  if (Error e = emitMachineCode(host, **tm, /*optimize=*/false))
    return std::move(e);
  if (options.emit != EmitKind::So)
    return std::move(outcome);
  return finishSo();
}

const char *kiln::versionString() {
  static const std::string v =
      std::string("kiln ") + KILN_VERSION_STRING +
      (std::string(KILN_GIT_REVISION).empty()
           ? ""
           : std::string(" (") + KILN_GIT_REVISION + ")");
  return v.c_str();
}
