//===- Target.cpp - TargetMachine, optimization, machine code ---*- C++ -*-===//
#include "kiln/Target/Target.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/IPO/MergeFunctions.h"
#include "llvm/Transforms/Utils/CodeExtractor.h"
#include "llvm/Transforms/Utils/LoopUtils.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <thread>
#include <unistd.h>

using namespace llvm;

namespace {
/// CPU features the runtime's guard knows how to check (runtime/src/runtime.c);
/// the model requires those of them that its target machine enables.
const char *const kCheckedFeatures[] = {
    "sse3",        "ssse3",      "fma",          "sse4.1",     "sse4.2",
    "popcnt",      "avx",        "f16c",         "bmi",        "avx2",
    "bmi2",        "avx512f",    "avx512dq",     "avx512ifma", "avx512cd",
    "avx512bw",    "avx512vl",   "avx512vbmi",   "avx512vbmi2", "avx512vnni",
    "avx512bitalg", "avx512vpopcntdq", "avx512fp16", "amx-bf16", "amx-tile",
    "amx-int8",    "avxvnni",    "avx512bf16", "avx512vp2intersect",
    "gfni",        "vaes",       "vpclmulqdq"};

void initializeTargets() {
  static bool done = [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeX86AsmParser();
    return true;
  }();
  (void)done;
}
} // namespace

Expected<std::unique_ptr<TargetMachine>>
mlir::kiln::createTargetMachine(const std::string &mcpu, const std::string &mattr,
                          unsigned optLevel) {
  initializeTargets();
  Triple triple(sys::getDefaultTargetTriple());
  std::string error;
  const Target *target = TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return createStringError(inconvertibleErrorCode(),
                             "no LLVM target for " + triple.str() + ": " +
                                 error);
  std::string cpu = mcpu;
  std::string features;
  if (cpu.empty() || cpu == "native") {
    cpu = sys::getHostCPUName().str();
    for (const auto &f : sys::getHostCPUFeatures())
      features += (features.empty() ? "" : ",") +
                  std::string(f.second ? "+" : "-") + f.first().str();
  }
  // Kiln's kernels use whole AVX-512 registers wherever the CPU has them.
  // LLVM tunes some AVX-512 CPUs (Rocket Lake, Ice Lake, Sapphire Rapids)
  // to prefer 256-bit vectors; its own vectorizer then splits our copy
  // loops into twice the instructions and unrolls them into basic blocks
  // whose DAG combining grows quadratically (ResNet-18: 142 s instead of 7 s
  // of LLVM codegen on a Rocket Lake host, same run time). --mattr can
  // still turn the preference back on.
  {
    std::unique_ptr<MCSubtargetInfo> probe(
        target->createMCSubtargetInfo(triple, cpu, features));
    if (probe && probe->checkFeatures("+avx512f"))
      features += (features.empty() ? "" : ",") + std::string("-prefer-256-bit");
  }
  if (!mattr.empty())
    features += (features.empty() ? "" : ",") + mattr;
  // Reject CPU names LLVM does not know instead of silently using a default.
  std::unique_ptr<MCSubtargetInfo> sti(
      target->createMCSubtargetInfo(triple, cpu, ""));
  if (!sti || !sti->isCPUStringValid(cpu))
    return createStringError(inconvertibleErrorCode(),
                             "unknown --mcpu '" + cpu +
                                 "'; use an LLVM CPU name such as x86-64-v3, "
                                 "skylake-avx512 or sapphirerapids");
  TargetOptions options;
  CodeGenOptLevel level = optLevel == 0   ? CodeGenOptLevel::None
                          : optLevel == 1 ? CodeGenOptLevel::Less
                          : optLevel == 2 ? CodeGenOptLevel::Default
                                          : CodeGenOptLevel::Aggressive;
  std::unique_ptr<TargetMachine> tm(target->createTargetMachine(
      triple, cpu, features, options, Reloc::PIC_, std::nullopt, level));
  if (!tm)
    return createStringError(inconvertibleErrorCode(),
                             "cannot create a target machine for " + cpu);
  return tm;
}

int64_t mlir::kiln::l2CacheBytes(const std::string &mcpu) {
  constexpr int64_t kKiB = 1024, kDefault = 1024 * kKiB;
  if (mcpu.empty() || mcpu == "native") {
    long bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
    // A hypervisor may hide the cache leaves (0) or report nonsense.
    if (bytes >= 64 * kKiB && bytes <= 64 * 1024 * kKiB)
      return bytes;
    return kDefault;
  }
  // Per-core L2 of the server and desktop cores LLVM names (vendors' data
  // sheets); generic levels such as x86-64-v3 keep the default.
  static const std::pair<StringRef, int64_t> kL2[] = {
      {"haswell", 256 * kKiB},         {"broadwell", 256 * kKiB},
      {"skylake", 256 * kKiB},         {"skylake-avx512", 1024 * kKiB},
      {"cascadelake", 1024 * kKiB},    {"cooperlake", 1024 * kKiB},
      {"icelake-client", 512 * kKiB},  {"rocketlake", 512 * kKiB},
      {"icelake-server", 1280 * kKiB}, {"tigerlake", 1280 * kKiB},
      {"alderlake", 1280 * kKiB},      {"sapphirerapids", 2048 * kKiB},
      {"emeraldrapids", 2048 * kKiB},  {"graniterapids", 2048 * kKiB},
      {"znver1", 512 * kKiB},          {"znver2", 512 * kKiB},
      {"znver3", 512 * kKiB},          {"znver4", 1024 * kKiB},
      {"znver5", 1024 * kKiB}};
  for (auto [name, bytes] : kL2)
    if (mcpu == name)
      return bytes;
  return kDefault;
}

std::string mlir::kiln::requiredIsa(const TargetMachine &tm) {
  const MCSubtargetInfo *sti = tm.getMCSubtargetInfo();
  std::string out;
  for (const char *f : kCheckedFeatures)
    if (sti->checkFeatures(std::string("+") + f))
      out += (out.empty() ? "" : ",") + std::string(f);
  return out;
}

/// Moves every top-level loop nest of a large function into a function of
/// its own (noinline). A model lowers to one function holding one loop nest
/// per kernel; LLVM's IndVarSimplify and other per-function analyses grow
/// faster than linearly with function size, so a DenseNet-121 spent 84% of
/// a 400 s compile in IndVarSimplify before this. One function per kernel
/// keeps the optimizer linear in the number of kernels.
static void outlineLoopNests(Module &module) {
  constexpr unsigned kMinInstructions = 20000;
  SmallVector<Function *> functions;
  for (Function &f : module)
    if (!f.isDeclaration() && f.getInstructionCount() >= kMinInstructions)
      functions.push_back(&f);
  for (Function *f : functions) {
    DominatorTree dt(*f);
    LoopInfo li(dt);
    SmallVector<Loop *> nests(li.begin(), li.end());
    if (nests.size() < 2)
      continue;
    for (Loop *nest : nests) {
      CodeExtractorAnalysisCache cache(*f);
      CodeExtractor extractor(nest->getBlocks(), &dt, /*AggregateArgs=*/false,
                              nullptr, nullptr, nullptr,
                              /*AllowVarArgs=*/false, /*AllowAlloca=*/false,
                              nullptr, "kernel");
      if (!extractor.isEligible())
        continue;
      if (Function *kernel = extractor.extractCodeRegion(cache)) {
        kernel->addFnAttr(Attribute::NoInline);
        kernel->addFnAttr(Attribute::NoUnwind);
        li.erase(nest);
      }
    }
  }
}

/// Turns off LLVM's runtime unrolling of every loop of `module`. Code for
/// run-time sizes has a remainder loop (a few elements or rows, one at a
/// time) beside each full-tile loop, whose trip counts LLVM does not know;
/// it unrolled each by 8 with an epilogue, which made the dynamic saliency
/// U-Net's optimizer and code generator a third slower with no change in
/// run time. The hot loops are unrolled in the register tiles already.
static void disableRuntimeUnrolling(Module &module) {
  for (Function &f : module) {
    if (f.isDeclaration())
      continue;
    DominatorTree dt(f);
    LoopInfo li(dt);
    for (Loop *loop : li.getLoopsInPreorder())
      addStringMetadataToLoop(loop, "llvm.loop.unroll.runtime.disable");
  }
}

/// Folds the outlined kernels that are the same code into one. Kernels of
/// run-time sizes take their buffers and sizes as arguments, so the
/// repeated blocks of a model (the attention of each layer, the same
/// window over several inputs) are often identical: ORT's fused BERT layer
/// with symbolic batch and sequence lowers to 119 functions, 39 of them
/// distinct, and LLVM optimized and compiled each copy. Static models keep
/// their code as it was (their weights are globals, and their code is
/// compared byte for byte across changes).
static void mergeIdenticalKernels(Module &module) {
  // Nothing compares a kernel's address: the thread pool's tasks are only
  // called through it. Without unnamed_addr a merged task would be kept as
  // a thunk to its twin, and the inliner would copy the twin back in.
  for (Function &f : module)
    if (!f.isDeclaration() && f.hasLocalLinkage())
      f.setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
  MergeFunctionsPass::runOnModule(module);
}

/// Marks the weights' globals `unnamed_addr`: nothing compares their
/// addresses, so LLVM's ConstantMerge may fold identical ones into one. Batch
/// variants pack each weight once per variant, and where a weight's address
/// reaches a call or a store LLVM cannot infer that itself: ResNet-50 with a
/// symbolic batch kept 76 MB of stage-3 and stage-4 weights twice. Globals of
/// at most 32 bytes are left alone, since the code generator would move them
/// into mergeable constant sections, and a static model's small constants
/// stay where they were.
static void markWeightsUnnamed(Module &module) {
  const DataLayout &layout = module.getDataLayout();
  for (GlobalVariable &g : module.globals())
    if (g.isConstant() && g.hasLocalLinkage() && g.hasInitializer() &&
        g.getName().starts_with("__constant_") &&
        layout.getTypeAllocSize(g.getValueType()) > 32)
      g.setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
}

Error mlir::kiln::optimizeModule(Module &module, TargetMachine &tm,
                                 unsigned optLevel, bool runTimeSizes) {
  if (optLevel > 0) {
    markWeightsUnnamed(module);
    outlineLoopNests(module);
    boundLongFunctions(module);
    if (runTimeSizes) {
      disableRuntimeUnrolling(module);
      mergeIdenticalKernels(module);
    }
  }
  for (Function &f : module) {
    if (f.isDeclaration())
      continue;
    f.addFnAttr("target-cpu", tm.getTargetCPU());
    f.addFnAttr("target-features", tm.getTargetFeatureString());
  }
  auto transformer =
      mlir::makeOptimizingTransformer(optLevel, /*sizeLevel=*/0, &tm);
  return transformer(&module);
}

/// Moves the large constant globals of `module` (the weights) into a module
/// of their own in the same context, leaving hidden declarations behind.
/// The parts of a parallel back end travel as bitcode, and a weight in a
/// part was written, parsed and uniqued again: ResNet-50 with a symbolic
/// batch (100 MB of weights) took 4.3 s of code generation on two threads
/// against 3.0 s on one.
static std::unique_ptr<Module> takeWeights(Module &module) {
  constexpr uint64_t kMinBytes = 4096;
  const DataLayout &layout = module.getDataLayout();
  auto data =
      std::make_unique<Module>("kiln_model_weights", module.getContext());
  data->setDataLayout(layout);
  data->setTargetTriple(module.getTargetTriple());
  for (GlobalVariable &g : module.globals()) {
    if (!g.isConstant() || !g.hasInitializer() || !g.hasLocalLinkage() ||
        g.hasComdat() || g.isThreadLocal() || !g.hasName() ||
        layout.getTypeAllocSize(g.getValueType()) < kMinBytes)
      continue;
    auto *copy = new GlobalVariable(
        *data, g.getValueType(), /*isConstant=*/true,
        GlobalValue::ExternalLinkage, g.getInitializer(), g.getName(),
        /*InsertBefore=*/nullptr, GlobalValue::NotThreadLocal,
        g.getAddressSpace());
    copy->copyAttributesFrom(&g);
    copy->setVisibility(GlobalValue::HiddenVisibility);
    g.setLinkage(GlobalValue::ExternalLinkage);
    g.setVisibility(GlobalValue::HiddenVisibility);
    g.setInitializer(nullptr);
  }
  return data;
}

/// A target machine like `tm`, for another thread.
static std::unique_ptr<TargetMachine> twin(const TargetMachine &tm) {
  return std::unique_ptr<TargetMachine>(tm.getTarget().createTargetMachine(
      tm.getTargetTriple(), tm.getTargetCPU(), tm.getTargetFeatureString(),
      tm.Options, tm.getRelocationModel(), tm.getCodeModel(),
      tm.getOptLevel()));
}

Expected<std::vector<std::string>> mlir::kiln::emitObjectsInParallel(
    Module &module, MutableArrayRef<std::unique_ptr<TargetMachine>> tms) {
  // The weights stay in this context and thread; the code's parts travel
  // as bitcode into contexts of their own: an LLVMContext is not shared
  // between threads.
  std::unique_ptr<Module> weights = takeWeights(module);
  std::unique_ptr<TargetMachine> weightsTm = twin(*tms[0]);
  if (!weightsTm)
    return createStringError(inconvertibleErrorCode(),
                             "cannot create a target machine for the weights");
  std::vector<SmallString<0>> bitcode;
  SplitModule(module, tms.size(), [&](std::unique_ptr<Module> part) {
    SmallString<0> buffer;
    raw_svector_ostream os(buffer);
    WriteBitcodeToFile(*part, os);
    bitcode.push_back(std::move(buffer));
  });
  // Each thread leaves its object or its error text; nothing crosses back
  // as an llvm::Error, which must be handled on the thread that holds it.
  std::vector<std::string> objects(bitcode.size()), errors(bitcode.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < bitcode.size(); ++i)
    threads.emplace_back([&, i] {
      LLVMContext context;
      Expected<std::unique_ptr<Module>> part = parseBitcodeFile(
          MemoryBufferRef(StringRef(bitcode[i].data(), bitcode[i].size()),
                          "kiln_model_part"),
          context);
      Expected<std::string> object =
          part ? emitMachineCode(**part, *tms[i], /*assembly=*/false)
               : Expected<std::string>(part.takeError());
      if (object)
        objects[i] = std::move(*object);
      else
        errors[i] = toString(object.takeError());
    });
  Expected<std::string> data =
      weights->global_empty()
          ? Expected<std::string>(std::string())
          : emitMachineCode(*weights, *weightsTm, /*assembly=*/false);
  for (std::thread &t : threads)
    t.join();
  if (!data)
    return data.takeError();
  if (!data->empty())
    objects.push_back(std::move(*data));
  for (const std::string &e : errors)
    if (!e.empty())
      return createStringError(inconvertibleErrorCode(),
                               "code generation of a model part failed: " + e);
  return objects;
}

Expected<std::string> mlir::kiln::emitMachineCode(Module &module, TargetMachine &tm,
                                            bool assembly) {
  module.setDataLayout(tm.createDataLayout());
  module.setTargetTriple(tm.getTargetTriple());
  SmallVector<char, 0> buffer;
  raw_svector_ostream stream(buffer);
  legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, stream, nullptr,
                             assembly ? CodeGenFileType::AssemblyFile
                                      : CodeGenFileType::ObjectFile))
    return createStringError(inconvertibleErrorCode(),
                             "the target cannot emit this file type");
  pm.run(module);
  return std::string(buffer.begin(), buffer.end());
}
