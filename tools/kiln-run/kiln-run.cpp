// kiln-run: runs a model.so written by kiln-compile through the public runtime
// C ABI. Three modes: check against an ONNX backend-test folder (--test-data),
// time it on random inputs (--bench), or print its metadata (--info).
//
// Exit status: 0 success, 1 an output does not match, 2 anything else (usage,
// unreadable files, a model that cannot be loaded, a failing runtime call).
#include "Samples.h"
#include "TensorProto.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;
using namespace kilnrun;
using kiln::client::Model;
using kiln::client::Session;

namespace {

constexpr int kExitMismatch = 1;
constexpr int kExitError = 2;

struct Options {
  std::string model;
  std::string testData;
  std::string saveOutputs;
  bool bench = false;
  bool info = false;
  // ONNX's backend tests compare with numpy's assert_allclose at these.
  double rtol = 1e-3;
  double atol = 1e-7;
  std::string tolerance = "onnx";
  int32_t threads = 0;
  int64_t batchSize = 0;
  int iterations = 100;
  int warmup = 10;
  uint64_t seed = 0;
};


void saveOutputs(const std::string &dir, const Session &session,
                 const std::vector<HostTensor> &outputs) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw Error("cannot create " + dir + ": " + ec.message());
  for (size_t i = 0; i < outputs.size(); ++i)
    writeTensorProto(fileIn(dir, "output_", i), session.outputs()[i].name,
                     outputs[i]);
  std::printf("kiln-run: wrote %zu outputs to %s\n", outputs.size(),
              dir.c_str());
}

// Compares output <i> with output_<i>.pb; prints one report line. Returns
// false on any mismatch, including a reference of the wrong dtype or shape.
bool checkOutput(size_t i, const TensorInfo &spec, const HostTensor &got,
                 const std::string &path, const Options &opts) {
  HostTensor want = readTensorProto(path).tensor;
  if (want.dtype() == KILN_DTYPE_UINT16 && got.dtype() == KILN_DTYPE_BFLOAT16)
    want.reinterpretAs(KILN_DTYPE_BFLOAT16); // bfloat16 stored as its bits
  std::printf("output %zu %s: ", i, describe(spec).c_str());
  if (want.dtype() != got.dtype() || want.shape() != got.shape()) {
    std::printf("FAILED: %s holds %s %s\n", path.c_str(),
                dtypeName(want.dtype()).c_str(),
                shapeText(want.shape()).c_str());
    return false;
  }
  Comparison c = compare(got, want, opts.rtol, opts.atol);
  std::printf("max_abs_err=%.3g max_rel_err=%.3g rel_l2=%.3g mismatches=%zu/%zu",
              c.maxAbsError, c.maxRelError, c.relL2Error, c.mismatches,
              c.compared);
  if (c.mismatches) {
    std::printf(" first at %s (flat %zu): got %s want %s FAILED\n",
                indexString(want.shape(), c.firstMismatch).c_str(),
                c.firstMismatch, got.formatAt(c.firstMismatch).c_str(),
                want.formatAt(c.firstMismatch).c_str());
    return false;
  }
  std::printf(" ok\n");
  return true;
}

// A model with symbolic dimensions: the shape of every input .pb file (a
// missing one keeps the model's shape; readInputs names it).
std::vector<std::vector<int64_t>> shapesOfTestData(const std::string &dir,
                                                   const Model &model) {
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < model.info().inputs.size(); ++i) {
    std::string path = fileIn(dir, "input_", i);
    shapes.push_back(fs::exists(path) ? readTensorProto(path).tensor.shape()
                                      : model.info().inputs[i].shape);
  }
  return shapes;
}

// At run-time sizes an output is written at the front of its buffer, at the
// shape the model reports; the rest of the buffer is unused.
void trimToWrittenShape(const Session &session, size_t i, TensorInfo &spec,
                        HostTensor &t) {
  std::vector<int64_t> shape = session.outputShape(i);
  if (shape == t.shape())
    return;
  HostTensor written(t.dtype(), shape);
  std::memcpy(written.data(), t.data(), written.bytes());
  t = std::move(written);
  spec.shape = shape;
}

int runTestData(const Options &opts) {
  if (!fs::is_directory(opts.testData))
    throw Error(opts.testData + " is not a directory");
  std::shared_ptr<const Model> model = Model::open(opts.model);
  kiln::client::SessionOptions options{opts.threads, opts.batchSize};
  kiln::client::Signature signature = model->signature(options);
  if (model->info().dynamic() && !opts.batchSize)
    signature = model->signatureForInputs(
        shapesOfTestData(opts.testData, *model));
  std::vector<HostTensor> inputs = readInputs(opts.testData, signature.inputs);
  std::vector<HostTensor> outputs = allocate(signature.outputs);
  // 0xff bytes read as NaN or -1: an output the model never writes shows up.
  for (HostTensor &t : outputs)
    std::memset(t.data(), 0xff, t.bytes());

  std::unique_ptr<Session> session = model->createSession(options);
  std::vector<kiln_tensor> in = views(inputs), out = views(outputs);
  session->run(in, out);
  if (model->info().runtimeExtents)
    for (size_t i = 0; i < outputs.size(); ++i)
      trimToWrittenShape(*session, i, signature.outputs[i], outputs[i]);
  if (!opts.saveOutputs.empty())
    saveOutputs(opts.saveOutputs, *session, outputs);

  size_t compared = 0, matched = 0, failed = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string path = fileIn(opts.testData, "output_", i);
    if (!fs::exists(path))
      continue;
    ++compared;
    if (checkOutput(i, signature.outputs[i], outputs[i], path, opts))
      ++matched;
    else
      ++failed;
  }
  std::string extra = fileIn(opts.testData, "output_", outputs.size());
  if (fs::exists(extra)) {
    std::printf("kiln-run: %s exists but the model has only %zu outputs\n",
                extra.c_str(), outputs.size());
    ++failed;
  }
  if (!compared && !failed) {
    std::printf("kiln-run: ran model '%s'; no output_*.pb in %s to compare\n",
                model->info().name.c_str(),
                opts.testData.c_str());
    return 0;
  }
  if (compared && compared < outputs.size())
    std::printf("kiln-run: warning: only %zu of %zu outputs have a reference\n",
                compared, outputs.size());
  std::printf("kiln-run: %s: %zu of %zu compared outputs match (rtol=%g "
              "atol=%g)\n",
              failed ? "FAIL" : "PASS", matched, compared, opts.rtol,
              opts.atol);
  return failed ? kExitMismatch : 0;
}

// numpy.percentile's default (linear interpolation between closest ranks).
double percentile(const std::vector<double> &sorted, double p) {
  double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(rank);
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] +
         (rank - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

int runBench(const Options &opts) {
  std::shared_ptr<const Model> model = Model::open(opts.model);
  std::unique_ptr<Session> session =
      model->createSession({opts.threads, opts.batchSize});
  std::mt19937_64 rng(opts.seed);
  // A symbolic batch runs at --batch-size (the session's signature).
  std::vector<HostTensor> inputs = allocate(session->inputs());
  for (HostTensor &t : inputs)
    t.fillRandom(rng);
  std::vector<HostTensor> outputs = allocate(session->outputs());
  std::vector<kiln_tensor> in = views(inputs), out = views(outputs);

  for (int i = 0; i < opts.warmup; ++i)
    session->run(in, out);
  std::vector<double> ms;
  ms.reserve(static_cast<size_t>(opts.iterations));
  for (int i = 0; i < opts.iterations; ++i) {
    auto start = std::chrono::steady_clock::now();
    session->run(in, out);
    auto stop = std::chrono::steady_clock::now();
    ms.push_back(
        std::chrono::duration<double, std::milli>(stop - start).count());
  }
  double mean = 0;
  for (double t : ms)
    mean += t;
  mean /= static_cast<double>(ms.size());
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  double median = percentile(sorted, 50), p90 = percentile(sorted, 90);

  const char *name = model->info().name.c_str();
  std::printf("model '%s': %d iterations after %d warm-up runs, threads=%d\n",
              name, opts.iterations, opts.warmup, opts.threads);
  std::printf("  min    %12.6f ms\n  mean   %12.6f ms\n  median %12.6f ms\n"
              "  p90    %12.6f ms\n  max    %12.6f ms\n",
              sorted.front(), mean, median, p90, sorted.back());
  std::printf("kiln-run: model=%s iterations=%d threads=%d median_ms=%.6f "
              "min_ms=%.6f mean_ms=%.6f p90_ms=%.6f max_ms=%.6f\n",
              name, opts.iterations, opts.threads, median, sorted.front(), mean,
              p90, sorted.back());
  return 0;
}

// CLI11's stock NonNegativeNumber prints DBL_MAX in its error message.
CLI::Validator atLeast(double min) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", min);
  std::string bound = text;
  return CLI::Validator(
      [min, bound](std::string &value) -> std::string {
        char *end = nullptr;
        double v = std::strtod(value.c_str(), &end);
        if (end == value.c_str() || *end || !(v >= min))
          return "'" + value + "' is not a number >= " + bound;
        return "";
      },
      ">=" + bound);
}

int runInfo(const Options &opts) {
  std::shared_ptr<const Model> model = Model::open(opts.model);
  const kiln::client::ModelInfo &info = model->info();
  std::string machine = "supported";
  try {
    model->checkCpu();
  } catch (const kiln::client::Error &e) {
    machine = "unsupported: " + e.statusMessage();
  }
  std::printf("model:            %s\n", info.name.c_str());
  std::printf("hash:             %s\n", info.hash.c_str());
  std::printf("compiler version: %s\n", info.compilerVersion.c_str());
  std::printf("compile options:  %s\n", info.compileOptions.c_str());
  std::printf("target triple:    %s\n", info.targetTriple.c_str());
  std::printf("cpu:              %s\n", info.cpu.c_str());
  std::printf("required isa:     %s\n", info.requiredIsa.c_str());
  std::printf("this machine:     %s\n", machine.c_str());
  std::printf("abi version:      %u\n", info.abiVersion);
  std::printf("arena:            %llu bytes, aligned to %llu bytes\n",
              static_cast<unsigned long long>(info.arenaBytes),
              static_cast<unsigned long long>(info.arenaAlignment));
  std::printf("batch sizes:     ");
  for (int64_t b : info.batchSizes)
    std::printf(" %lld", static_cast<long long>(b));
  std::printf("\n");
  for (const auto &sym : info.symbols)
    std::printf(info.runtimeExtents
                    ? "symbolic:         '%s' = %lld..%lld (any size in range "
                      "runs in one graph; shapes below at the maxima)%s\n"
                    : "symbolic:         '%s' = %lld..%lld (leading dimension "
                      "of the marked tensors; any batch in range runs as the "
                      "batch sizes above)%s\n",
                sym.name.c_str(), static_cast<long long>(sym.min),
                static_cast<long long>(sym.max),
                info.independentBatch && &sym == &info.symbols.front()
                    ? " - an independent batch: requests may be "
                      "concatenated along it"
                    : "");
  // A tensor with a symbolic axis says which, after its shape; an output
  // axis the model computes from the symbols is marked "computed".
  auto symbolAt0 = [&](const std::vector<std::vector<int32_t>> &axes,
                       size_t i) -> std::string {
    if (i >= axes.size())
      return "";
    std::string marks;
    for (size_t d = 0; d < axes[i].size(); ++d)
      if (axes[i][d] >= 0 || axes[i][d] == -2)
        marks += std::string(marks.empty() ? "" : ", ") + "axis " +
                 std::to_string(d) + ": " +
                 (axes[i][d] >= 0 ? "'" + info.symbols[axes[i][d]].name + "'"
                                  : std::string("computed"));
    return marks.empty() ? "" : "  (" + marks + ")";
  };
  std::printf("inputs (%zu):\n", info.inputs.size());
  for (size_t i = 0; i < info.inputs.size(); ++i)
    std::printf("  %zu %s%s\n", i, describe(info.inputs[i]).c_str(),
                symbolAt0(info.inputSymbols, i).c_str());
  std::printf("outputs (%zu):\n", info.outputs.size());
  for (size_t i = 0; i < info.outputs.size(); ++i)
    std::printf("  %zu %s%s\n", i, describe(info.outputs[i]).c_str(),
                symbolAt0(info.outputSymbols, i).c_str());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Options opts;
  CLI::App app{"Runs a model.so compiled by kiln-compile through the Kiln "
               "runtime C ABI.",
               "kiln-run"};
  app.footer("Exit status: 0 when every output matches (or the run, --bench or "
             "--info succeeds),\n1 when an output does not match, 2 for usage, "
             "file, load and runtime errors.");
  app.add_option("model", opts.model, "The compiled model")
      ->required()
      ->type_name("MODEL.so");
  auto *testData =
      app.add_option(
             "--test-data", opts.testData,
             "ONNX backend-test folder: run on input_<i>.pb, compare with "
             "output_<i>.pb")
          ->type_name("DIR");
  auto *save = app.add_option("--save-outputs", opts.saveOutputs,
                              "Write output_<i>.pb files to this folder")
                   ->type_name("DIR");
  auto *tolerance =
      app.add_option("--tolerance", opts.tolerance,
                     "Tolerance preset: onnx (rtol 1e-3, atol 1e-7, as ONNX's "
                     "backend tests) or ort (rtol 1e-3, atol 1e-3, as ONNX "
                     "Runtime's onnx_test_runner); --rtol/--atol override it")
          ->check(CLI::IsMember({"onnx", "ort"}))
          ->capture_default_str();
  auto *rtol = app.add_option("--rtol", opts.rtol, "Relative tolerance")
                   ->check(atLeast(0))
                   ->capture_default_str();
  auto *atol = app.add_option("--atol", opts.atol, "Absolute tolerance")
                   ->check(atLeast(0))
                   ->capture_default_str();
  auto *bench =
      app.add_flag("--bench", opts.bench, "Time the model on random inputs");
  auto *iterations =
      app.add_option("--iterations", opts.iterations, "Timed runs (--bench)")
          ->check(atLeast(1))
          ->capture_default_str();
  auto *warmup =
      app.add_option("--warmup", opts.warmup, "Untimed runs first (--bench)")
          ->check(atLeast(0))
          ->capture_default_str();
  auto *seed =
      app.add_option("--seed", opts.seed, "Random-input seed (--bench)")
          ->capture_default_str();
  auto *threads = app.add_option("--threads", opts.threads,
                                 "kiln_session_options.num_threads (0 or 1: "
                                 "the calling thread)")
                      ->check(atLeast(0))
                      ->capture_default_str();
  auto *batch = app.add_option("--batch-size", opts.batchSize,
                               "Batch variant to run (a model compiled with "
                               "--batch-sizes); default: the first")
                    ->check(atLeast(1));
  auto *info = app.add_flag("--info", opts.info, "Print the model metadata");
  testData->excludes(bench)->excludes(info);
  bench->excludes(info);
  save->needs(testData);
  rtol->needs(testData);
  atol->needs(testData);
  tolerance->needs(testData);
  iterations->needs(bench);
  warmup->needs(bench);
  seed->needs(bench);
  threads->excludes(info);
  batch->excludes(info);

  try {
    app.parse(argc, argv);
    if (opts.tolerance == "ort") {
      if (!*rtol)
        opts.rtol = 1e-3;
      if (!*atol)
        opts.atol = 1e-3;
    }
    if (!opts.info && !opts.bench && opts.testData.empty())
      throw CLI::ValidationError(
          "choose a mode: --test-data DIR, --bench or --info");
  } catch (const CLI::ParseError &e) {
    if (e.get_exit_code() == 0) // --help
      return app.exit(e);
    std::cerr << "kiln-run: error: " << e.what()
              << "\nRun with --help for usage.\n";
    return kExitError;
  }

  try {
    if (opts.info)
      return runInfo(opts);
    if (opts.bench)
      return runBench(opts);
    return runTestData(opts);
  } catch (const Error &e) {
    std::fflush(stdout);
    std::cerr << "kiln-run: error: " << e.what() << "\n";
    return kExitError;
  } catch (const std::exception &e) {
    std::fflush(stdout);
    std::cerr << "kiln-run: error: " << e.what() << "\n";
    return kExitError;
  }
}
