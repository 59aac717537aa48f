// Calibration for --quantize=static: runs a model built with
// --kiln-observe-quant-inputs on sample inputs and records the range of
// every observed tensor (the outputs named kiln.observe:<i>). Used by the
// compiler (which has no exceptions) through a function that returns its
// error as text.
#ifndef KILN_RUNNER_CALIBRATE_H
#define KILN_RUNNER_CALIBRATE_H

#include <string>
#include <utility>
#include <vector>

namespace kilnrun {

struct CalibrationOptions {
  /// "minmax": the observed minimum and maximum; "percentile": the
  /// `percentile` and 100 - `percentile` quantiles; "entropy": the upper
  /// bound that minimizes the KL divergence between the observed histogram
  /// and its 8-bit quantization (the lower bound as for minmax).
  std::string method = "minmax";
  double percentile = 99.99;
  int32_t threads = 1;
};

/// The model's own outputs (not the observed ones) on every sample, as
/// doubles: the f32 reference a reduced-precision build is measured against.
struct ReferenceOutputs {
  std::vector<std::string> names;                       // per output
  std::vector<std::vector<int64_t>> shapes;             // per output
  std::vector<std::vector<std::vector<double>>> values; // [sample][output]
};

struct CalibrationResult {
  /// [lo, hi] of observed tensor i (kiln.observe:<i>), in index order.
  std::vector<std::pair<float, float>> ranges;
  /// Root mean square of observed tensor i over every sample.
  std::vector<double> rms;
  /// Relative L2 error of observed tensor i rounded to fp16 and to bf16
  /// (nearest even; infinity where fp16 overflows), over every sample.
  std::vector<double> fp16Error, bf16Error;
  /// How many samples were run.
  size_t samples = 0;
  ReferenceOutputs references;
};

/// How far a build's outputs are from the references on the same samples.
struct Accuracy {
  /// Per output: ||y - ref|| / ||ref|| over all samples together.
  std::vector<double> relL2;
  /// Fraction of rows whose argmax over the last axis of the first output
  /// agrees with the reference's; -1 when that output is not a classifier
  /// (fewer than 2 classes or not floating point).
  double top1 = -1;
};

/// Whether `path` names a .npz archive (calibration samples as numpy arrays:
/// one array per model input, named after it or arr_<i>, shaped like the
/// input or stacked [samples, ...]).
bool isNpz(const std::string &path);

/// The sample folders of `path`: `path` itself when it holds input_0.pb,
/// else its subfolders that do (ONNX backend-test style test_data_set_<n>),
/// sorted by name. Empty if there are none.
std::vector<std::string> sampleFolders(const std::string &path);

/// Runs the observer model `soPath` on every sample of `dataPath` (a folder
/// as sampleFolders describes, or a .npz). Returns
/// "" on success, else what went wrong (naming the file or the sample).
std::string calibrate(const std::string &soPath, const std::string &dataPath,
                      const CalibrationOptions &options,
                      CalibrationResult &result);

/// Runs `soPath` on the samples of `dataPath` (as for calibrate, in the
/// order of `references`) and measures its outputs against `references`.
/// Returns "" or the error.
std::string evaluate(const std::string &soPath, const std::string &dataPath,
                     const ReferenceOutputs &references, int32_t threads,
                     Accuracy &accuracy);

} // namespace kilnrun

#endif // KILN_RUNNER_CALIBRATE_H
