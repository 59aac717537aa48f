//===- Options.cpp - the spellings of the compile options --------*- C++ -*-===//
//
// The CLI and the Python binding take option values as text; they are parsed
// here, once, into the enums of CompileOptions, and printed back from here
// into the options string every model records (describeOptions).
//
//===----------------------------------------------------------------------===//
#include "Compile.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::kiln;
using llvm::Expected;
using llvm::StringRef;

namespace {
/// One value of an option and its spelling.
template <typename E> struct Spelling {
  const char *text;
  E value;
};

template <typename E, size_t N>
Expected<E> parse(StringRef name, const Spelling<E> (&table)[N],
                  llvm::function_ref<std::string(StringRef)> message) {
  for (const Spelling<E> &s : table)
    if (name == s.text)
      return s.value;
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 message(name));
}

template <typename E, size_t N>
StringRef spell(E value, const Spelling<E> (&table)[N]) {
  for (const Spelling<E> &s : table)
    if (s.value == value)
      return s.text;
  return "?";
}

const Spelling<EmitKind> kEmitKinds[] = {
    {"import", EmitKind::Import}, {"kiln", EmitKind::Kiln},
    {"linalg", EmitKind::Linalg}, {"llvm", EmitKind::LLVM},
    {"asm", EmitKind::Asm},       {"obj", EmitKind::Obj},
    {"so", EmitKind::So},         {"memory-plan", EmitKind::MemoryPlan}};
const Spelling<Target> kTargets[] = {{"cpu", Target::Cpu},
                                     {"cuda", Target::Cuda},
                                     {"cuda-emulated", Target::CudaEmulated}};
const Spelling<GpuArch> kGpuArchs[] = {{"sm_80", GpuArch::Sm80},
                                       {"sm_90", GpuArch::Sm90}};
const Spelling<Quantization> kQuantizations[] = {
    {"none", Quantization::None},
    {"", Quantization::None},
    {"dynamic", Quantization::Dynamic},
    {"static", Quantization::Static}};
const Spelling<Precision> kPrecisions[] = {{"fp32", Precision::Fp32},
                                           {"", Precision::Fp32},
                                           {"bf16", Precision::Bf16},
                                           {"fp16", Precision::Fp16}};
const Spelling<CalibrationMethod> kCalibrationMethods[] = {
    {"minmax", CalibrationMethod::MinMax},
    {"percentile", CalibrationMethod::Percentile},
    {"entropy", CalibrationMethod::Entropy}};
} // namespace

Expected<EmitKind> kiln::parseEmitKind(StringRef name) {
  return parse<EmitKind>(name, kEmitKinds, [](StringRef n) {
    return ("unknown emit kind '" + n +
            "'; use import, kiln, linalg, llvm, asm, obj, so or memory-plan")
        .str();
  });
}

Expected<Target> kiln::parseTarget(StringRef name) {
  return parse<Target>(name, kTargets, [](StringRef n) {
    return ("unknown target '" + n + "'; use cpu or cuda").str();
  });
}

Expected<GpuArch> kiln::parseGpuArch(StringRef name) {
  return parse<GpuArch>(name, kGpuArchs, [](StringRef n) {
    return ("unknown --gpu-arch '" + n + "'; use sm_80 or sm_90").str();
  });
}

Expected<Quantization> kiln::parseQuantization(StringRef name) {
  return parse<Quantization>(name, kQuantizations, [](StringRef n) {
    return ("unknown quantization '" + n +
            "'; use none, dynamic or static (for bf16 use --precision=bf16)")
        .str();
  });
}

Expected<Precision> kiln::parsePrecision(StringRef name) {
  return parse<Precision>(name, kPrecisions, [](StringRef n) {
    return ("unknown precision '" + n + "'; use fp32, bf16 or fp16").str();
  });
}

Expected<CalibrationMethod> kiln::parseCalibrationMethod(StringRef name) {
  return parse<CalibrationMethod>(name, kCalibrationMethods, [](StringRef n) {
    return ("unknown calibration method '" + n +
            "'; use minmax, percentile or entropy")
        .str();
  });
}

StringRef kiln::toString(Target target) { return spell(target, kTargets); }
StringRef kiln::toString(GpuArch arch) { return spell(arch, kGpuArchs); }
StringRef kiln::toString(Quantization mode) {
  return spell(mode, kQuantizations);
}
StringRef kiln::toString(Precision precision) {
  return spell(precision, kPrecisions);
}
StringRef kiln::toString(CalibrationMethod method) {
  return spell(method, kCalibrationMethods);
}

std::string kiln::describeOptions(const CompileOptions &o,
                                  const std::string &cpu) {
  std::string s = "-O" + std::to_string(o.optLevel) +
                  (o.target == Target::Cuda
                       ? " --target=cuda --gpu-arch=" + toString(o.gpuArch).str()
                       : " --mcpu=" + cpu);
  if (o.target == Target::CudaEmulated)
    s += " --target=cuda-emulated";
  if (!o.mattr.empty())
    s += " --mattr=" + o.mattr;
  if (o.quantize != Quantization::None)
    s += " --quantize=" + toString(o.quantize).str();
  if (o.quantize == Quantization::Static) {
    s += " --calibration=" + toString(o.calibrationMethod).str();
    if (o.calibrationMethod == CalibrationMethod::Percentile)
      s += llvm::formatv(" --calibration-percentile={0}",
                         o.calibrationPercentile)
               .str();
    if (o.maxAccuracyDrop > 0)
      s += llvm::formatv(" --max-accuracy-drop={0}", o.maxAccuracyDrop).str();
  }
  if (o.precision != Precision::Fp32)
    s += " --precision=" + toString(o.precision).str();
  if (!o.widenHalf)
    s += " --half-compute=native";
  for (size_t i = 0; i < o.keepFp32.size(); ++i)
    s += (i ? "," : " --keep-fp32=") + o.keepFp32[i];
  if (o.maxTensorBytes != kDefaultMaxTensorBytes)
    s += " --max-tensor-bytes=" + std::to_string(o.maxTensorBytes);
  if (!o.batchSizes.empty()) {
    s += " --batch-sizes ";
    for (size_t i = 0; i < o.batchSizes.size(); ++i)
      s += (i ? "," : "") + std::to_string(o.batchSizes[i]);
  }
  for (const auto &[name, dims] : o.inputShapes)
    s += " --input-shape " + name + "=" + toString(dims);
  for (const auto &[symbol, bound] : o.dims)
    s += " --dim " + symbol + "=" + toString(bound);
  return s;
}
