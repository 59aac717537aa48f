//===- Calibration.cpp - static int8 ranges and the accuracy budget -*- C++ -*-===//
//
// Both compile the model again (compileRequest with internal settings), run
// it on the calibration samples through the model ABI (lib/Runner), and
// read the results back: calibration the range of each quantizable node's
// input, the budget search the error of each trial model against f32.
//
//===----------------------------------------------------------------------===//
#include "Calibration.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <limits>
#include <map>

using namespace mlir;
using namespace mlir::kiln;
using llvm::Error;
using llvm::Expected;

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

} // namespace

/// --quantize=static: compiles the model with every quantizable node's input
/// as an extra output (kiln.observe:<i>), runs it on the calibration
/// samples, and records the range of each observed input. The model is
/// built and run in a temporary folder that is removed afterwards.
Expected<Calibration> kiln::calibrate(const CompileOptions &o, llvm::StringRef label,
                                bool allProducts,
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
  CompileRequest request;
  CompileOptions &observe = request.options;
  observe = o;
  // The observing model runs here, whatever machine the model is for: an
  // f32 model for this CPU (a model cross-compiled for sapphirerapids on a
  // CPU without AVX512-FP16 could not be calibrated otherwise).
  observe.mcpu.clear();
  observe.mattr.clear();
  observe.quantize = Quantization::None;
  observe.precision = Precision::Fp32;
  observe.keepFp32.clear();
  observe.batchSizes.clear();
  observe.reportDir.clear();
  observe.timing = false;
  observe.remarks = false;
  observe.maxAccuracyDrop = 0;
  observe.emit = EmitKind::So;
  observe.outputPath = dir.file("observe.so");
  request.observeQuantInputs = true;
  request.observeAllProducts = allProducts;
  Expected<CompileOutcome> built = compileRequest(request);
  if (!built)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "compiling the model for calibration failed: " +
            llvm::toString(built.takeError()));
  Calibration c;
  c.nodes = built->observedNodes;
  kilnrun::CalibrationOptions copts;
  copts.method = toString(o.calibrationMethod).str();
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
                    " activation ranges (" + toString(o.calibrationMethod).str() +
                  ") on " +
                    std::to_string(c.result.samples) + " samples from '" +
                    o.calibrationData + "'");
  return c;
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
kiln::searchBudget(const CompileOptions &o, const Calibration &c,
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
    CompileRequest request;
    CompileOptions &t = request.options;
    t = o;
    t.maxAccuracyDrop = 0;
    if (isStatic)
      request.activationRanges = r.ranges;
    t.reportDir.clear();
    t.timing = false;
    t.remarks = false;
    t.batchSizes.clear();
    t.emit = EmitKind::So;
    // Each trial runs here, so it is built for this CPU: a model cross-
    // compiled for another one (--mcpu) may need features this one lacks.
    // The int8 kernels of both compute the same integers; a precision this
    // CPU cannot run at all would be measured as f32, so that is an error.
    t.mcpu.clear();
    t.mattr.clear();
    for (const std::string &n : kept(k))
      t.keepFp32.push_back(n);
    t.outputPath = dir.file("trial" + std::to_string(k) + ".so");
    Expected<CompileOutcome> outcome = compileRequest(request);
    if (!outcome)
      return outcome.takeError();
    const CompileResult *built = &outcome->result;
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