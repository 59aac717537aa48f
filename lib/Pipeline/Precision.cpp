//===- Precision.cpp - the precision plan of a compile ----------*- C++ -*-===//
//
// Which reduced precision a compile gets and on which kernels: the target's
// features (VNNI, AMX, AVX2, F16C, AVX512-BF16), --quantize=dynamic|static
// with their calibration and accuracy budget, --precision=bf16|fp16, and
// the graph passes each choice adds (part of Compilation, Compilation.h).
//
//===----------------------------------------------------------------------===//
#include "Calibration.h"
#include "Compilation.h"

#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;
using namespace mlir::kiln;
using llvm::Error;
using llvm::Expected;

static Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

Expected<bool> Compilation::targetHasQuietly(llvm::StringRef feature) {
  if (!targetIsa) {
    auto tm =
        createTargetMachine(options.mcpu, options.mattr, options.optLevel);
    if (!tm)
      return tm.takeError();
    targetIsa = requiredIsa(**tm);
    targetCpu = (*tm)->getTargetCPU().str();
  }
  llvm::SmallVector<llvm::StringRef> features;
  llvm::StringRef(*targetIsa).split(features, ',');
  return llvm::is_contained(features, feature);
}

Expected<bool> Compilation::targetHas(llvm::StringRef feature,
                                      llvm::StringRef flag,
                                      llvm::StringRef mattr, bool note) {
  Expected<bool> has = targetHasQuietly(feature);
  if (!has || *has || !note)
    return has;
  CompileResult &result = outcome.result;
  result.f32Fallback =
      (flag + " needs " + feature + ", which the target CPU '" + targetCpu +
       "' lacks (use --mcpu or --mattr=" + mattr + "); compiled in f32")
          .str();
  result.notes.push_back(result.f32Fallback);
  return false;
}

Error Compilation::applyBudget(const Calibration &calibration) {
  // The trials run here, built for this CPU: one with AVX2 but no VNNI
  // keeps depthwise convolutions f32, so it cannot measure a static int8
  // model whose target quantizes them.
  if (options.quantize == Quantization::Static && plan.graph.staticDepthwise &&
      !llvm::sys::getHostCPUFeatures().lookup("avx512vnni"))
    return makeError(
        "--max-accuracy-drop measures each trial model on this machine, "
        "which cannot run static int8 as the target does (its depthwise "
        "convolutions need avx512vnni, which this CPU lacks); search on a "
        "machine that can, or name the nodes to keep in f32 with "
        "--keep-fp32");
  Expected<std::vector<std::string>> kept = searchBudget(
      options, calibration, plan.budgetLabel, outcome.result.notes);
  if (!kept)
    return kept.takeError();
  SmallVector<Attribute> names;
  for (const std::string &n : *kept)
    names.push_back(StringAttr::get(&context, n));
  (*module)->setAttr(kKeepFp32BudgetAttr, ArrayAttr::get(&context, names));
  return Error::success();
}

/// Outside static int8, the budget observes the input of every product.
Error Compilation::searchKeptNodes() {
  if (!(options.maxAccuracyDrop > 0))
    return Error::success();
  Expected<Calibration> c =
      calibrate(options, plan.budgetLabel,
                /*allProducts=*/true, outcome.result.notes);
  if (!c)
    return c.takeError();
  return applyBudget(*c);
}

Error Compilation::planPrecision() {
  const CompileOptions &o = options;
  plan.budgetLabel = o.quantize == Quantization::Static    ? "static int8"
                     : o.quantize == Quantization::Dynamic ? "dynamic int8"
                     : o.precision == Precision::Bf16      ? "bf16"
                     : o.precision == Precision::Fp16      ? "fp16"
                                                           : "";
  if (o.maxAccuracyDrop != 0 &&
      (plan.budgetLabel.empty() || !(o.maxAccuracyDrop > 0) ||
       !(o.maxAccuracyDrop < 1)))
    return makeError(
        "--max-accuracy-drop needs --quantize=static|dynamic or "
        "--precision=bf16|fp16, and a fraction in (0, 1), e.g. 0.01 for 1%");
  if (o.maxAccuracyDrop > 0 && o.quantize != Quantization::Static &&
      o.calibrationData.empty())
    return makeError("--max-accuracy-drop measures the error on "
                     "--calibration-data DIR|FILE.npz: give samples drawn like "
                     "the inputs the model will see");
  plan.graph.maxTensorBytes = options.maxTensorBytes;
  // fp16/bf16 models compute in f32 on CPUs; a CUDA model runs fp16 tensors
  // on tensor cores as they are.
  plan.graph.widenHalf = o.widenHalf && o.target == Target::Cpu;
  plan.graph.observeQuantInputs = request.observeQuantInputs;
  plan.graph.observeAllProducts = request.observeAllProducts;
  if (Error e = planQuantization())
    return e;
  // Imported uint8 x int8 products (ConvInteger, MatMulInteger, QLinear*)
  // run on vpdpbusd wherever the target has it, whatever the options; on
  // AVX2 without VNNI on the same kernel's vpmaddwd form.
  if (o.target == Target::Cpu) {
    Expected<bool> vnni = targetHasQuietly("avx512vnni");
    if (!vnni)
      return vnni.takeError();
    Expected<bool> avx2 = targetHasQuietly("avx2");
    if (!avx2)
      return avx2.takeError();
    plan.graph.integerVnni = *vnni || *avx2;
    plan.graph.integerAvx2 = !*vnni && *avx2;
  }
  if (Error e = planReducedPrecision())
    return e;
  // --keep-fp32: node names both reduced-precision passes leave alone.
  if (!o.keepFp32.empty()) {
    if (!plan.amx && !plan.vnni && !plan.fp16 && !plan.bf16Dot)
      outcome.result.notes.push_back(
          "--keep-fp32 has no effect without --precision=bf16|fp16 or "
          "--quantize=dynamic|static on a target that supports them");
    SmallVector<Attribute> names;
    for (const std::string &n : o.keepFp32)
      names.push_back(StringAttr::get(&context, n));
    (*module)->setAttr(kKeepFp32Attr, ArrayAttr::get(&context, names));
  }
  return Error::success();
}

Error Compilation::planQuantization() {
  const CompileOptions &o = options;
  if (o.quantize == Quantization::Dynamic) {
    // Its products are MatMul/Gemm only, which the int8 kernel also runs in
    // its AVX2 form (vpmaddwd): AVX2 is enough.
    Expected<bool> has = targetHasQuietly("avx512vnni");
    if (has && !*has)
      has = targetHas("avx2", "--quantize=dynamic", "+avx2");
    if (!has)
      return has.takeError();
    if ((plan.vnni = *has)) {
      plan.graph.quantizeDynamic = true;
      return searchKeptNodes();
    }
    return Error::success();
  }
  if (o.quantize != Quantization::Static)
    return Error::success();
  if (o.precision != Precision::Fp32)
    return makeError(
        "--quantize=static and --precision=" + toString(o.precision) +
        " both convert the MatMul/Gemm and Conv nodes; use one of "
        "them");
  if (o.calibrationData.empty())
    return makeError(
        "--quantize=static needs --calibration-data DIR|FILE.npz: a folder "
        "of input_0.pb, ... (one sample) or of test_data_set_<n> folders "
        "that hold them, or a .npz with one array per model input, drawn "
        "like the inputs the model will see");
  // Without VNNI, AVX2 runs the int8 kernel's vpmaddwd form, which has no
  // depthwise variant: depthwise convolutions stay f32 there.
  Expected<bool> has = targetHasQuietly("avx512vnni");
  if (has && !*has) {
    has = targetHas("avx2", "--quantize=static", "+avx2");
    plan.graph.staticDepthwise = false;
  }
  if (!has)
    return has.takeError();
  if (!(plan.vnni = *has))
    return Error::success();
  // AMX int8 (tdpbusd) where the target has it, else VNNI.
  plan.amx = llvm::StringRef(*targetIsa).contains("amx-int8");
  std::vector<std::pair<float, float>> ranges = request.activationRanges;
  if (ranges.empty()) {
    Expected<Calibration> c =
        calibrate(o, plan.budgetLabel,
                  /*allProducts=*/false, outcome.result.notes);
    if (!c)
      return c.takeError();
    ranges = c->result.ranges;
    if (o.maxAccuracyDrop > 0)
      if (Error e = applyBudget(*c))
        return e;
  }
  SmallVector<Attribute> list;
  for (auto [lo, hi] : ranges)
    list.push_back(DenseF32ArrayAttr::get(&context, {lo, hi}));
  (*module)->setAttr(kActivationRangesAttr, ArrayAttr::get(&context, list));
  plan.graph.quantizeStatic = true;
  // Without AMX, K in 4-byte lanes only (the VNNI kernel).
  plan.graph.laneK = !plan.amx;
  return Error::success();
}

Error Compilation::planReducedPrecision() {
  const CompileOptions &o = options;
  if (o.precision == Precision::Bf16) {
    if (o.target != Target::Cpu)
      return makeError(
          "--precision=bf16 has CPU kernels only (AMX); it cannot be "
          "combined with --target=" +
          toString(o.target) +
          " (a CUDA model runs fp16 tensors on tensor cores as they are, "
          "docs/gpu.md)");
    if (o.quantize == Quantization::Dynamic)
      return makeError("--precision=bf16 and --quantize=dynamic both convert "
                       "the MatMul/Gemm nodes; use one of them");
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
    plan.amx = *tiles;
    plan.bf16Dot = !plan.amx && *dot;
    if (plan.bf16Dot)
      outcome.result.notes.push_back(
          "--precision=bf16: the target CPU '" + targetCpu +
          "' has no AMX-BF16; MatMul/Gemm and Conv run on AVX512-BF16 "
          "(vdpbf16ps), MatMuls of two run-time tensors stay f32");
    if (plan.amx || plan.bf16Dot) {
      plan.graph.bf16 = true;
      plan.graph.bf16RunTimeProducts = plan.amx;
      return searchKeptNodes();
    }
    return Error::success();
  }
  if (o.precision == Precision::Fp16) {
    if (o.target != Target::Cpu)
      return makeError(
          "--precision=fp16 is implemented for the CPU target only; a CUDA "
          "model runs fp16 tensors on tensor cores as they are (docs/gpu.md)");
    if (o.quantize == Quantization::Dynamic)
      return makeError("--precision=fp16 and --quantize=dynamic both convert "
                       "the MatMul/Gemm nodes; use one of them");
    // Without F16C every conversion is a call (the MLP ran 40x slower).
    Expected<bool> has = targetHas("f16c", "--precision=fp16", "+f16c");
    if (!has)
      return has.takeError();
    if ((plan.fp16 = *has)) {
      plan.graph.fp16 = true;
      return searchKeptNodes();
    }
  }
  return Error::success();
}
