#include "Calibrate.h"

#include "Npz.h"
#include "Samples.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

namespace fs = std::filesystem;

namespace kilnrun {

using kiln::client::Model;
using kiln::client::Session;

std::vector<std::string> sampleFolders(const std::string &path) {
  std::vector<std::string> folders;
  std::error_code ec;
  if (fs::exists(fs::path(path) / "input_0.pb", ec))
    return {path};
  if (!fs::is_directory(path, ec))
    return folders;
  for (const fs::directory_entry &e : fs::directory_iterator(path, ec))
    if (e.is_directory() && fs::exists(e.path() / "input_0.pb"))
      folders.push_back(e.path().string());
  std::sort(folders.begin(), folders.end());
  return folders;
}

bool isNpz(const std::string &path) {
  return path.size() > 4 && path.compare(path.size() - 4, 4, ".npz") == 0;
}

namespace {
using mlir::kiln::kObservePrefix;

/// The samples of a calibration path, in order: the folders of
/// sampleFolders (read when run), or the arrays of a .npz, each either one
/// sample (the model input's shape) or a stack of them along a new first
/// dimension, matched to model inputs by name (or arr_<i> / input_<i>).
class SampleSet {
public:
  SampleSet(const std::string &path, const std::vector<TensorInfo> &specs) {
    if (!isNpz(path)) {
      folders_ = sampleFolders(path);
      if (folders_.empty())
        throw Error("calibration data '" + path +
                    "' holds no samples: give a folder with input_0.pb, ... "
                    "or with subfolders (test_data_set_0, ...) that hold "
                    "them, or a .npz");
      return;
    }
    std::vector<std::pair<std::string, HostTensor>> arrays = readNpz(path);
    std::string keys;
    for (auto &[name, t] : arrays)
      keys += (keys.empty() ? "'" : ", '") + name + "'";
    size_t count = 0;
    std::vector<const HostTensor *> chosen;
    for (size_t i = 0; i < specs.size(); ++i) {
      const TensorInfo &spec = specs[i];
      const HostTensor *found = nullptr;
      for (const std::string &key :
           {spec.name, "arr_" + std::to_string(i), "input_" + std::to_string(i)})
        for (auto &[name, t] : arrays)
          if (!found && name == key)
            found = &t;
      if (!found)
        throw Error(path + " has no array for model input " +
                    std::to_string(i) + " " + describe(spec) + " (it holds " +
                    keys + "): name arrays after the model's inputs, or save "
                    "them in input order with np.savez(path, x0, x1, ...)");
      std::string what = path + ": the array for model input " +
                         std::to_string(i) + " " + describe(spec);
      if (found->dtype() != spec.dtype())
        throw Error(what + " is " + dtypeName(found->dtype()));
      size_t n = 0;
      const std::vector<int64_t> &shape = found->shape();
      if (shape == spec.shape)
        n = 1;
      else if (shape.size() == spec.shape.size() + 1 && shape[0] > 0 &&
               std::equal(spec.shape.begin(), spec.shape.end(),
                          shape.begin() + 1))
        n = shape[0];
      else
        throw Error(what + " has shape " + shapeText(shape) +
                    "; it needs that shape (one sample) or [samples, ...]");
      if (count && n != count)
        throw Error(path + ": the arrays hold different numbers of samples (" +
                    std::to_string(count) + " and " + std::to_string(n) + ")");
      count = n;
      chosen.push_back(found);
    }
    for (size_t s = 0; s < count; ++s) {
      std::vector<HostTensor> sample;
      for (size_t i = 0; i < chosen.size(); ++i) {
        const TensorInfo &spec = specs[i];
        HostTensor t(spec.dtype(), spec.shape);
        std::memcpy(t.data(),
                    static_cast<const char *>(chosen[i]->data()) + s * t.bytes(),
                    t.bytes());
        sample.push_back(std::move(t));
      }
      arrays_.push_back(std::move(sample));
    }
  }

  size_t size() const {
    return folders_.empty() ? arrays_.size() : folders_.size();
  }

  /// The inputs of sample `i`.
  std::vector<HostTensor> inputs(size_t i,
                                 const std::vector<TensorInfo> &specs) const {
    if (!folders_.empty())
      return readInputs(folders_[i], specs);
    std::vector<HostTensor> copy;
    for (const HostTensor &t : arrays_[i]) {
      HostTensor c(t.dtype(), t.shape());
      std::memcpy(c.data(), t.data(), t.bytes());
      copy.push_back(std::move(c));
    }
    return copy;
  }

private:
  std::vector<std::string> folders_;
  std::vector<std::vector<HostTensor>> arrays_;
};
/// `v` rounded to the nearest value with `bits` significant bits, ties to
/// even, whose quantum is at least 2^`minExp` (the subnormal step), as a
/// float; values from `overflow` up round to infinity.
float roundTo(float v, int bits, int minExp, float overflow) {
  if (!std::isfinite(v) || v == 0)
    return v;
  float a = std::fabs(v);
  if (a >= overflow)
    return std::copysign(std::numeric_limits<float>::infinity(), v);
  int e;
  std::frexp(a, &e); // a in [2^(e-1), 2^e)
  float quantum = std::ldexp(1.0f, std::max(e - bits, minExp));
  return std::copysign(std::nearbyint(a / quantum) * quantum, v);
}
/// fp16: 11 significant bits, subnormal step 2^-24, largest value 65504.
float roundFp16(float v) { return roundTo(v, 11, -24, 65520.0f); }
/// bf16: 8 significant bits and f32's exponent range.
float roundBf16(float v) {
  return roundTo(v, 8, -133, std::numeric_limits<float>::infinity());
}

constexpr int kBins = 2048;
/// Entropy calibration needs this many values (16 per bin on average).
constexpr double kMinEntropyValues = 16.0 * kBins;

/// The observed outputs: output position -> observed index. An output
/// named kiln.observe:3,7 serves indices 3 and 7.
std::vector<std::pair<size_t, size_t>>
observedOutputs(const std::vector<TensorInfo> &outputs) {
  std::vector<std::pair<size_t, size_t>> observed;
  size_t prefix = std::strlen(kObservePrefix);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string &name = outputs[i].name;
    if (name.compare(0, prefix, kObservePrefix) != 0)
      continue;
    if (outputs[i].dtype() != KILN_DTYPE_FLOAT32)
      throw Error("observed tensor '" + name + "' is not float32");
    std::string list = name.substr(prefix);
    for (size_t start = 0; start < list.size();) {
      size_t end = list.find(',', start);
      if (end == std::string::npos)
        end = list.size();
      observed.push_back({i, std::stoul(list.substr(start, end - start))});
      start = end + 1;
    }
  }
  return observed;
}

/// Runs every sample and calls `visit(observed index, values, count)`, and
/// `done(outputs)` once per sample.
template <typename Visit, typename Done>
void runSamples(Session &session, const SampleSet &samples,
                const std::vector<std::pair<size_t, size_t>> &observed,
                Visit visit, Done done) {
  std::vector<HostTensor> outputs = allocate(session.outputs());
  std::vector<kiln_tensor> out = views(outputs);
  for (size_t i = 0; i < samples.size(); ++i) {
    std::vector<HostTensor> inputs = samples.inputs(i, session.inputs());
    std::vector<kiln_tensor> in = views(inputs);
    session.run(in, out);
    for (auto [pos, index] : observed)
      visit(index, static_cast<const float *>(outputs[pos].data()),
            outputs[pos].numElements());
    done(outputs);
  }
}

/// Whether output `i` is one of the observed ones.
bool isObserved(const std::vector<TensorInfo> &outputs, size_t i) {
  return outputs[i].name.compare(0, std::strlen(kObservePrefix),
                                 kObservePrefix) == 0;
}

/// The values of `t` as doubles.
std::vector<double> valuesOf(const HostTensor &t) {
  std::vector<double> v(t.numElements());
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = t.valueAt(i);
  return v;
}

/// The quantile `q` (0..1) of a histogram of `kBins` bins over [lo, hi].
float quantile(const std::vector<double> &hist, float lo, float hi, double q) {
  double total = 0;
  for (double h : hist)
    total += h;
  double target = q * total, seen = 0;
  for (int i = 0; i < kBins; ++i) {
    if (seen + hist[i] >= target && hist[i] > 0) {
      double within = (target - seen) / hist[i];
      return lo + (hi - lo) * float((i + within) / kBins);
    }
    seen += hist[i];
  }
  return hi;
}

/// The upper bound t in (lo, hi] that minimizes KL(P || Q), where P is the
/// histogram up to t with everything above t added to its last bin and Q is
/// P quantized into 256 levels over [lo, t] (each level spreading its count
/// evenly over the bins it covers that were not empty).
float entropyBound(const std::vector<double> &hist, float lo, float hi) {
  double bestKl = std::numeric_limits<double>::infinity();
  int best = kBins;
  for (int n = 256; n <= kBins; n += 16) {
    std::vector<double> p(hist.begin(), hist.begin() + n);
    for (int i = n; i < kBins; ++i)
      p[n - 1] += hist[i];
    double total = 0;
    for (double v : p)
      total += v;
    if (total == 0)
      continue;
    std::vector<double> q(n, 0);
    for (int level = 0; level < 256; ++level) {
      int b0 = level * n / 256, b1 = (level + 1) * n / 256;
      double sum = 0;
      int nonzero = 0;
      for (int i = b0; i < b1; ++i) {
        sum += hist[i];
        nonzero += hist[i] > 0;
      }
      for (int i = b0; i < b1; ++i)
        if (hist[i] > 0)
          q[i] = sum / nonzero;
    }
    double qTotal = 0;
    for (double v : q)
      qTotal += v;
    double kl = 0;
    for (int i = 0; i < n; ++i) {
      if (p[i] == 0)
        continue;
      if (q[i] == 0) {
        kl = std::numeric_limits<double>::infinity();
        break;
      }
      kl += p[i] / total * std::log((p[i] / total) / (q[i] / qTotal));
    }
    if (kl < bestKl) {
      bestKl = kl;
      best = n;
    }
  }
  return lo + (hi - lo) * float(best) / kBins;
}
} // namespace

std::string calibrate(const std::string &soPath, const std::string &dataPath,
                      const CalibrationOptions &options,
                      CalibrationResult &result) {
  try {
    if (options.method != "minmax" && options.method != "percentile" &&
        options.method != "entropy")
      return "unknown calibration method '" + options.method +
             "'; use minmax, percentile or entropy";
    if (!(options.percentile > 50 && options.percentile <= 100))
      return "the calibration percentile must be in (50, 100], got " +
             std::to_string(options.percentile);
    std::shared_ptr<const Model> model = Model::open(soPath);
    SampleSet samples(dataPath, model->inputs());
    std::unique_ptr<Session> session =
        model->createSession({options.threads, /*batchSize=*/0});
    const std::vector<TensorInfo> &outputs = session->outputs();
    std::vector<std::pair<size_t, size_t>> observed = observedOutputs(outputs);
    size_t count = 0;
    for (auto [pos, index] : observed)
      count = std::max(count, index + 1);
    std::vector<float> lo(count, std::numeric_limits<float>::infinity()),
        hi(count, -std::numeric_limits<float>::infinity());
    std::vector<double> squares(count, 0), seen(count, 0),
        fp16Squares(count, 0), bf16Squares(count, 0);
    ReferenceOutputs &refs = result.references;
    refs = ReferenceOutputs();
    for (size_t i = 0; i < outputs.size(); ++i)
      if (!isObserved(outputs, i)) {
        refs.names.push_back(outputs[i].name);
        refs.shapes.push_back(outputs[i].shape);
      }
    runSamples(
        *session, samples, observed,
        [&](size_t i, const float *v, size_t n) {
          for (size_t j = 0; j < n; ++j)
            if (std::isfinite(v[j])) {
              lo[i] = std::min(lo[i], v[j]);
              hi[i] = std::max(hi[i], v[j]);
              squares[i] += double(v[j]) * v[j];
              seen[i] += 1;
              double d16 = double(roundFp16(v[j])) - v[j];
              double db = double(roundBf16(v[j])) - v[j];
              fp16Squares[i] += d16 * d16;
              bf16Squares[i] += db * db;
            }
        },
        [&](const std::vector<HostTensor> &values) {
          std::vector<std::vector<double>> sample;
          for (size_t i = 0; i < values.size(); ++i)
            if (!isObserved(outputs, i))
              sample.push_back(valuesOf(values[i]));
          refs.values.push_back(std::move(sample));
        });
    for (size_t i = 0; i < count; ++i)
      if (!(lo[i] <= hi[i]))
        lo[i] = hi[i] = 0; // nothing finite was seen
    if (options.method != "minmax") {
      bool entropy = options.method == "entropy";
      // A second pass: histograms over the observed ranges.
      std::vector<std::vector<double>> hist(count,
                                            std::vector<double>(kBins, 0));
      runSamples(*session, samples, observed,
                 [&](size_t i, const float *v, size_t n) {
                   float width = hi[i] - lo[i];
                   if (!(width > 0))
                     return;
                   for (size_t j = 0; j < n; ++j)
                     // Entropy leaves out exact zeros: the zero point
                     // represents them exactly whatever the bound, and
                     // their spike (half of a ReLU output) would make any
                     // level that merges bins look costly.
                     if (std::isfinite(v[j]) && !(entropy && v[j] == 0)) {
                       int bin = int((v[j] - lo[i]) / width * kBins);
                       hist[i][std::clamp(bin, 0, kBins - 1)] += 1;
                     }
                 },
                 [](const std::vector<HostTensor> &) {});
      for (size_t i = 0; i < count; ++i) {
        if (!(hi[i] > lo[i]))
          continue;
        if (options.method == "percentile") {
          double q = options.percentile / 100.0;
          float l = quantile(hist[i], lo[i], hi[i], 1.0 - q);
          float h = quantile(hist[i], lo[i], hi[i], q);
          lo[i] = l;
          hi[i] = h;
        } else {
          // The divergence of a sparse histogram is noise (a pooled [N, C]
          // tensor gives a few values per bin): such tensors keep minmax.
          double counted = 0;
          for (double h : hist[i])
            counted += h;
          if (counted >= kMinEntropyValues)
            hi[i] = entropyBound(hist[i], lo[i], hi[i]);
        }
      }
    }
    result.ranges.clear();
    result.rms.clear();
    result.fp16Error.clear();
    result.bf16Error.clear();
    auto relative = [&](double err, size_t i) {
      return squares[i] > 0 ? std::sqrt(err / squares[i]) : 0.0;
    };
    for (size_t i = 0; i < count; ++i) {
      result.ranges.push_back({lo[i], hi[i]});
      result.rms.push_back(seen[i] > 0 ? std::sqrt(squares[i] / seen[i]) : 0);
      result.fp16Error.push_back(relative(fp16Squares[i], i));
      result.bf16Error.push_back(relative(bf16Squares[i], i));
    }
    result.samples = samples.size();
    return "";
  } catch (const std::exception &e) {
    return e.what();
  }
}

std::string evaluate(const std::string &soPath, const std::string &dataPath,
                     const ReferenceOutputs &references, int32_t threads,
                     Accuracy &accuracy) {
  try {
    std::shared_ptr<const Model> model = Model::open(soPath);
    SampleSet samples(dataPath, model->inputs());
    if (samples.size() != references.values.size())
      return dataPath + " holds " + std::to_string(samples.size()) +
             " samples; the reference has " +
             std::to_string(references.values.size());
    std::unique_ptr<Session> session =
        model->createSession({threads, /*batchSize=*/0});
    if (session->outputs().size() != references.names.size())
      return soPath + " has " + std::to_string(session->outputs().size()) +
             " outputs; the reference has " +
             std::to_string(references.names.size());
    size_t numOutputs = references.names.size();
    std::vector<double> diff(numOutputs, 0), norm(numOutputs, 0);
    size_t agree = 0, rows = 0;
    const std::vector<int64_t> &first =
        numOutputs ? references.shapes[0] : std::vector<int64_t>();
    int32_t firstType = numOutputs ? session->outputs()[0].dtype() : 0;
    bool classifier = !first.empty() && first.back() >= 2 &&
                      (firstType == KILN_DTYPE_FLOAT32 ||
                       firstType == KILN_DTYPE_FLOAT16 ||
                       firstType == KILN_DTYPE_FLOAT64);
    // Rows of the first output whose argmax over the last axis agrees.
    auto countAgreement = [&](const std::vector<double> &got,
                              const std::vector<double> &want) {
      size_t classes = first.back();
      auto top = [&](const double *v) {
        return std::max_element(v, v + classes) - v;
      };
      for (size_t r = 0; r + classes <= got.size(); r += classes) {
        agree += top(&got[r]) == top(&want[r]);
        ++rows;
      }
    };
    size_t sample = 0;
    runSamples(*session, samples, {},
               [](size_t, const float *, size_t) {},
               [&](const std::vector<HostTensor> &outputs) {
                 const auto &want = references.values.at(sample++);
                 std::vector<double> got;
                 for (size_t o = 0; o < numOutputs; ++o) {
                   got = valuesOf(outputs[o]);
                   for (size_t j = 0; j < got.size(); ++j) {
                     double d = got[j] - want[o][j];
                     diff[o] += d * d;
                     norm[o] += want[o][j] * want[o][j];
                   }
                   if (o == 0 && classifier)
                     countAgreement(got, want[0]);
                 }
               });
    accuracy.relL2.clear();
    for (size_t o = 0; o < numOutputs; ++o)
      accuracy.relL2.push_back(norm[o] > 0 ? std::sqrt(diff[o] / norm[o])
                                           : std::sqrt(diff[o]));
    accuracy.top1 = classifier && rows ? double(agree) / rows : -1;
    return "";
  } catch (const std::exception &e) {
    return e.what();
  }
}

} // namespace kilnrun
