//===- kiln-compile.cpp - ONNX model to a standalone model.so ---*- C++ -*-===//
#include "kiln/Codegen/Common/Remarks.h"
#include "kiln/Pipeline/Pipeline.h"

#include "Progress.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <set>
#include <unistd.h>

using namespace llvm;

static cl::OptionCategory category("kiln-compile options");

static cl::opt<std::string> inputPath(cl::Positional, cl::Required,
                                      cl::desc("<model.onnx>"),
                                      cl::cat(category));
static cl::opt<std::string>
    outputPath("o", cl::desc("Output file (default: MODEL.so, or '-' for "
                             "text to stdout)"),
               cl::value_desc("path"), cl::cat(category));
static cl::opt<std::string> progressFlag(
    "progress",
    cl::desc("Show the phase being compiled on stderr: auto (default: an "
             "updating line on a terminal, else a line per phase of 1 s or "
             "more), always (every phase), never"),
    cl::init("auto"), cl::cat(category));
static cl::opt<std::string>
    emit("emit",
         cl::desc("How far to compile: import | kiln | linalg | llvm | asm | "
                  "obj | so (default) | memory-plan"),
         cl::init("so"), cl::cat(category));
static cl::opt<std::string>
    mcpu("mcpu", cl::desc("Target CPU (LLVM name; default: this machine)"),
         cl::cat(category));
static cl::opt<std::string>
    target("target",
           cl::desc("cpu (default) or cuda: NVIDIA GPU kernels (PTX) run by "
                    "the model's runtime through the CUDA driver"),
           cl::init("cpu"), cl::cat(category));
static cl::opt<std::string>
    gpuArch("gpu-arch",
            cl::desc("GPU architecture for --target=cuda: sm_80 (default) "
                     "or sm_90"),
            cl::init("sm_80"), cl::cat(category));
static cl::opt<std::string>
    mattr("mattr", cl::desc("Extra target features, e.g. -avx512f"),
          cl::cat(category));
static cl::opt<char> optLevel("O", cl::desc("Optimization level 0-3"),
                              cl::Prefix, cl::init('3'), cl::cat(category));
static cl::opt<std::string> name("name", cl::desc("Model name in the metadata"),
                                 cl::cat(category));
static cl::list<std::string>
    inputShapes("input-shape",
                cl::desc("Give an input's open dimensions sizes: "
                         "NAME=1x3x224x224; a dimension may be a range "
                         "MIN..MAX (--check, --emit=import) (repeatable)"),
                cl::cat(category));
static cl::list<std::string>
    dims("dim",
         cl::desc("Give a symbolic dimension (an ONNX dim_param) shared by "
                  "the inputs a size: SYMBOL=N, or a range MIN..MAX "
                  "(--check, --emit=import) (repeatable)"),
         cl::cat(category));
static cl::opt<std::string> batchSizes(
    "batch-sizes",
    cl::desc("Compile several batch-size variants into one .so, e.g. 1,4,8 "
             "(the leading input dimension is the batch)"),
    cl::cat(category));
static cl::opt<std::string>
    reportDir("report",
              cl::desc("Write DIR/report.html: the arena over time, the "
                       "lower bound and per-phase compile times"),
              cl::value_desc("DIR"), cl::cat(category));
static cl::opt<bool>
    checkOnly("check",
              cl::desc("Preflight: list every node that cannot be compiled "
                       "(no code generation); exit 1 if there is any"),
              cl::cat(category));
static cl::opt<std::string>
    checkFormat("format", cl::desc("--check output: text (default) or json"),
           cl::init("text"), cl::cat(category));
static cl::opt<std::string> quantize(
    "quantize",
    cl::desc("none (default); dynamic: int8 weights and run-time "
             "quantized activations for MatMul/Gemm with constant weights "
             "(needs avx512vnni); static: int8 MatMul/Gemm and Conv with "
             "activation scales calibrated on --calibration-data (AMX int8 "
             "or avx512vnni)"),
    cl::init("none"), cl::cat(category));
static cl::opt<std::string> calibrationData(
    "calibration-data",
    cl::desc("--quantize=static (and --max-accuracy-drop in any mode): a "
             "folder of input_0.pb, ... (one sample) or of test_data_set_<n> "
             "folders that hold them, or a .npz with one array per model "
             "input (stacked [samples, ...])"),
    cl::value_desc("DIR|FILE.npz"), cl::cat(category));
static cl::opt<std::string> calibration(
    "calibration",
    cl::desc("--quantize=static: how activation ranges are chosen: minmax "
             "(default), percentile or entropy"),
    cl::init("minmax"), cl::cat(category));
static cl::opt<double> calibrationPercentile(
    "calibration-percentile",
    cl::desc("--calibration=percentile: the quantile kept, in percent "
             "(default 99.99)"),
    cl::init(99.99), cl::cat(category));
static cl::opt<double> maxAccuracyDrop(
    "max-accuracy-drop",
    cl::desc("--quantize=static|dynamic or --precision=bf16|fp16: keep the "
             "most sensitive nodes in f32 until every output is within this "
             "relative L2 error of f32 (and, for a classifier, at most this "
             "fraction of top-1 answers change) on the --calibration-data "
             "samples, e.g. 0.01"),
    cl::init(0), cl::cat(category));
static cl::opt<std::string> precision(
    "precision",
    cl::desc("fp32 (default), bf16: MatMul/Gemm/Conv in bf16 on AMX "
             "tiles, or on AVX512-BF16 (vdpbf16ps) without AMX, accumulated "
             "in f32, or fp16: "
             "MatMul/Gemm/Conv on fp16 operands, weights stored in fp16, "
             "accumulated in f32"),
    cl::init("fp32"), cl::cat(category));
static cl::opt<std::string> halfCompute(
    "half-compute",
    cl::desc("f32 (default): a model whose tensors are fp16 or bf16 (as "
             "export tools convert them) computes in f32, its own casts to "
             "half types still rounding; native: every node computes in the "
             "half type, rounding between nodes (slower on CPUs)"),
    cl::init("f32"), cl::cat(category));
static cl::list<std::string> keepFp32(
    "keep-fp32", cl::CommaSeparated,
    cl::desc("ONNX node names that --precision=bf16|fp16 and --quantize "
             "leave in f32, e.g. --keep-fp32=/conv1/Conv,/fc/Gemm"),
    cl::value_desc("NODE,..."), cl::cat(category));
static cl::opt<std::string> maxTensorBytes(
    "max-tensor-bytes",
    cl::desc("The most bytes one tensor a node computes may hold, e.g. "
             "64G (suffixes K, M, G, T: powers of 1024; default 16G)"),
    cl::value_desc("BYTES"), cl::cat(category));
static cl::opt<bool> timing("timing", cl::desc("Print per-phase times"),
                            cl::cat(category));
static cl::opt<bool> verifyEach(
    "verify-each",
    cl::desc("Run the MLIR verifier after every pass of every phase, not "
             "only at the end of each phase after the graph phase (slower; "
             "finds the pass that made invalid IR)"),
    cl::cat(category));
static cl::opt<bool> remarks(
    "remarks",
    cl::desc("List every op that code generation left off its fast path, "
             "and why (a slow model explained without a debugger)"),
    cl::cat(category));

/// The flags that give every symbolic dimension one size: --dim for a
/// dim_param, --input-shape (with D<axis> to fill in) for an unnamed one.
static std::string
suggestFlags(const std::vector<mlir::kiln::SymbolicDim> &dims) {
  std::string flags;
  std::set<std::string> done;
  for (const auto &d : dims) {
    if (!d.dimParam.empty()) {
      if (done.insert("dim " + d.dimParam).second)
        flags += (flags.empty() ? "" : " ") +
                 ("--dim " + d.dimParam + "=" +
                  (d.fixedSize ? std::to_string(*d.fixedSize) : "N"));
      continue;
    }
    if (!done.insert("input " + d.input).second)
      continue;
    std::string shape;
    for (size_t i = 0; i < d.inputShape.size(); ++i) {
      bool open = d.inputShape[i] < 0;
      shape += (i ? "x" : "") + (open ? "D" + std::to_string(i)
                                      : std::to_string(d.inputShape[i]));
    }
    flags += (flags.empty() ? "" : " ") + ("--input-shape " + d.input + "=" + shape);
  }
  return flags;
}

static int fail(const Twine &msg) {
  WithColor::error(errs(), "kiln-compile") << msg << "\n";
  return 1;
}

/// Compiles with a progress line and prints the notes and remarks.
static int compileAndReport(mlir::kiln::CompileOptions &options) {
  std::optional<kilncompile::Progress::Mode> mode =
      kilncompile::Progress::parse(progressFlag, ::isatty(STDERR_FILENO));
  if (!mode)
    return fail("unknown --progress=" + progressFlag +
                "; use auto, always or never");
  kilncompile::Progress progress(*mode, progressFlag == "always" ? 0.0 : 1.0);
  options.progress = [&](StringRef phase, bool done, double seconds) {
    progress.phase(phase, done, seconds);
  };
  Expected<mlir::kiln::CompileResult> result = mlir::kiln::compile(options);
  progress.finish();
  if (!result) {
    std::string msg = toString(result.takeError());
    errs() << msg << "\n";
    // Symbolic input dimensions given no size (the importer's message):
    // the sizes the model's weights fix are known only after converting
    // the nodes with them symbolic, as --check does.
    if (StringRef(msg).contains("; fix the shape with --input-shape"))
      if (Expected<mlir::kiln::CheckResult> r = mlir::kiln::check(options)) {
        for (const auto &d : r->symbolicDims)
          if (d.fixedSize && !d.dimParam.empty())
            WithColor::note(errs(), "kiln-compile")
                << "node '" << d.fixedBy << "' needs " << d.label() << " to be "
                << *d.fixedSize << ": give --dim " << d.dimParam << "="
                << *d.fixedSize << "\n";
      } else {
        consumeError(r.takeError());
      }
    return fail("cannot compile '" + inputPath + "'");
  }
  for (const std::string &note : result->notes)
    WithColor::note(errs(), "kiln-compile") << note << "\n";
  for (const std::string &remark : result->remarks)
    WithColor::remark(errs(), "kiln-compile") << remark << "\n";
  if (remarks && result->remarks.empty())
    WithColor::remark(errs(), "kiln-compile")
        << "every op took its fast path\n";
  // -o -: after the notes, so the two streams do not interleave when
  // joined (2>&1).
  errs().flush();
  outs() << result->standardOutput;
  return 0;
}

/// A positive byte count with an optional suffix K, M, G or T (powers of
/// 1024); none where the text is not one or the count overflows.
static std::optional<uint64_t> parseByteCount(StringRef text) {
  unsigned shift = 0;
  for (auto [suffix, bits] :
       {std::pair{'K', 10}, {'M', 20}, {'G', 30}, {'T', 40}})
    if (text.consume_back(StringRef(&suffix, 1)))
      shift = bits;
  uint64_t bytes;
  if (text.getAsInteger(10, bytes) || bytes == 0 ||
      bytes > (UINT64_MAX >> shift))
    return std::nullopt;
  return bytes << shift;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  mlir::kiln::registerDebugOnlyOption();
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter(
      [](raw_ostream &os) { os << mlir::kiln::versionString() << "\n"; });
  cl::ParseCommandLineOptions(argc, argv,
                              "kiln-compile: ONNX model -> standalone model.so\n");

  mlir::kiln::CompileOptions options;
  options.inputPath = inputPath;
  if (auto kind = mlir::kiln::parseEmitKind(emit)) {
    options.emit = *kind;
  } else {
    consumeError(kind.takeError());
    return fail("unknown --emit=" + emit +
                "; use import, kiln, linalg, llvm, asm, obj, so or "
                "memory-plan");
  }
  if (optLevel < '0' || optLevel > '3')
    return fail(Twine("unknown optimization level -O") + Twine((char)optLevel) +
                "; use -O0 to -O3");
  options.optLevel = optLevel - '0';
  options.mcpu = mcpu;
  options.mattr = mattr;
  // Each enum option is parsed once here; the error names what is accepted.
  auto parsed = [&](auto value, auto &into) -> bool {
    if (!value) {
      fail(toString(value.takeError()));
      return false;
    }
    into = *value;
    return true;
  };
  if (!parsed(mlir::kiln::parseTarget(target), options.target) ||
      !parsed(mlir::kiln::parseGpuArch(gpuArch), options.gpuArch) ||
      !parsed(mlir::kiln::parseQuantization(quantize), options.quantize) ||
      !parsed(mlir::kiln::parseCalibrationMethod(calibration),
              options.calibrationMethod) ||
      !parsed(mlir::kiln::parsePrecision(precision), options.precision))
    return 1;
  if (halfCompute != "f32" && halfCompute != "native")
    return fail("unknown --half-compute '" + halfCompute +
                "'; use f32 or native");
  options.widenHalf = halfCompute == "f32";
  options.name = name;
  options.timing = timing;
  options.remarks = remarks;
  options.verifyEach = verifyEach;
  options.reportDir = reportDir;
  options.calibrationData = calibrationData;
  options.calibrationPercentile = calibrationPercentile;
  options.maxAccuracyDrop = maxAccuracyDrop;
  options.keepFp32.assign(keepFp32.begin(), keepFp32.end());
  if (!maxTensorBytes.empty()) {
    std::optional<uint64_t> bytes = parseByteCount(maxTensorBytes);
    if (!bytes)
      return fail("bad --max-tensor-bytes '" + maxTensorBytes +
                  "'; expected a positive byte count such as 1073741824 or 1G");
    options.maxTensorBytes = *bytes;
  }
  for (const std::string &spec : inputShapes) {
    Expected<mlir::kiln::InputShape> shape = mlir::kiln::parseInputShape(spec);
    if (!shape)
      return fail(toString(shape.takeError()));
    options.inputShapes.push_back(std::move(*shape));
  }
  for (const std::string &spec : dims) {
    Expected<mlir::kiln::SymbolBound> bound = mlir::kiln::parseSymbolBound(spec);
    if (!bound)
      return fail(toString(bound.takeError()));
    options.dims.push_back(std::move(*bound));
  }
  if (!batchSizes.empty()) {
    SmallVector<StringRef> parts;
    StringRef(batchSizes).split(parts, ',');
    for (StringRef p : parts) {
      int64_t b;
      if (p.trim().getAsInteger(10, b) || b < 1)
        return fail("bad --batch-sizes '" + batchSizes +
                    "'; expected positive integers such as 1,4,8");
      options.batchSizes.push_back(b);
    }
  }
  if (outputPath.empty()) {
    static const char *ext[] = {".import.mlir", ".kiln.mlir", ".linalg.mlir",
                                ".ll", ".s", ".o", ".so",
                                ".memory-plan.json"};
    SmallString<256> out(sys::path::stem(inputPath));
    out += ext[static_cast<int>(options.emit)];
    options.outputPath = std::string(out);
  } else {
    options.outputPath = outputPath;
  }

  if (checkOnly) {
    if (checkFormat != "text" && checkFormat != "json")
      return fail("unknown --format=" + checkFormat + "; use text or json");
    Expected<mlir::kiln::CheckResult> r = mlir::kiln::check(options);
    if (!r) {
      errs() << toString(r.takeError()) << "\n";
      return fail("cannot check '" + inputPath + "'");
    }
    // A symbolic dimension given a range compiles as it is (docs/shapes.md);
    // one given no size needs a size or a range, and every one needs a
    // single size where a node cannot run at run-time sizes.
    std::vector<mlir::kiln::SymbolicDim> open;
    for (const auto &d : r->symbolicDims)
      if (!d.bound)
        open.push_back(d);
    bool clean = r->issues.empty() && r->otherErrors.empty() && open.empty();
    std::string flags = suggestFlags(
        open.empty() && !r->issues.empty() ? r->symbolicDims : open);
    if (checkFormat == "json") {
      json::Array issues, others;
      for (const auto &i : r->issues)
        issues.push_back(json::Object{{"node", i.node},
                                      {"op_type", i.opType},
                                      {"opset", i.opset},
                                      {"reason", i.reason}});
      for (const auto &e : r->otherErrors)
        others.push_back(e);
      json::Array symbolic;
      for (const auto &d : r->symbolicDims) {
        json::Object o{{"input", d.input},
                       {"axis", d.axis},
                       {"dim_param", d.dimParam}};
        if (d.bound) {
          o["min"] = d.bound->min;
          o["max"] = d.bound->max;
        }
        if (d.fixedSize) {
          o["fixed_size"] = *d.fixedSize;
          o["fixed_by"] = d.fixedBy;
        }
        symbolic.push_back(std::move(o));
      }
      outs() << formatv("{0:2}", json::Value(json::Object{
                                     {"model", inputPath},
                                     {"nodes", (int64_t)r->numNodes},
                                     {"supported", clean},
                                     {"unsupported_nodes", std::move(issues)},
                                     {"other_errors", std::move(others)},
                                     {"repairs", json::Array(r->repairs)},
                                     {"symbolic_dimensions", std::move(symbolic)},
                                     {"suggested_flags", flags}}))
             << "\n";
    } else {
      for (const auto &i : r->issues)
        outs() << "node '" << i.node << "' (" << i.opType << ", opset "
               << i.opset << "): " << i.reason << "\n";
      for (const auto &e : r->otherErrors)
        outs() << e << "\n";
      for (const auto &m : r->repairs)
        outs() << "repaired: " << m << "\n";
      for (const auto &d : r->symbolicDims)
        outs() << "graph input '" << d.input << "' has the symbolic dimension "
               << d.label() << " at index " << d.axis
               << (d.bound
                       ? ", given the range " + mlir::kiln::toString(*d.bound)
                       : ", given no size")
               << (d.fixedSize ? "; node '" + d.fixedBy + "' needs it to be " +
                                     std::to_string(*d.fixedSize)
                               : std::string())
               << "\n";
      if (!open.empty())
        outs() << "the nodes were checked with these dimensions symbolic; "
                  "give each one a size N or a range MIN..MAX: "
               << flags << "\n";
      else if (!r->symbolicDims.empty() && !r->issues.empty())
        outs() << "the nodes were checked with these dimensions symbolic; "
                  "the nodes above need one size for each: "
               << flags << "\n";
      else if (!r->symbolicDims.empty())
        outs() << "the nodes were checked with these dimensions symbolic; "
                  "with their ranges the model compiles as one graph that "
                  "runs at the sizes given at run time\n";
      outs() << inputPath << ": " << r->numNodes << " nodes, "
             << r->issues.size() << " cannot be compiled"
             << (r->otherErrors.empty()
                     ? ""
                     : ", " + std::to_string(r->otherErrors.size()) +
                           " other problems")
             << (r->symbolicDims.empty()
                     ? ""
                     : ", " + std::to_string(r->symbolicDims.size()) +
                           " symbolic input dimensions")
             << "\n";
    }
    return clean ? 0 : 1;
  }

  return compileAndReport(options);
}
