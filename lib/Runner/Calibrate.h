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

struct CalibrationResult {
  /// [lo, hi] of observed tensor i (kiln.observe:<i>), in index order.
  std::vector<std::pair<float, float>> ranges;
  /// The sample folders used, in order.
  std::vector<std::string> samples;
};

/// The sample folders of `path`: `path` itself when it holds input_0.pb,
/// else its subfolders that do (ONNX backend-test style test_data_set_<n>),
/// sorted by name. Empty if there are none.
std::vector<std::string> sampleFolders(const std::string &path);

/// Runs the observer model `soPath` on every sample of `dataPath`. Returns
/// "" on success, else what went wrong (naming the file or the sample).
std::string calibrate(const std::string &soPath, const std::string &dataPath,
                      const CalibrationOptions &options,
                      CalibrationResult &result);

} // namespace kilnrun

#endif // KILN_RUNNER_CALIBRATE_H
