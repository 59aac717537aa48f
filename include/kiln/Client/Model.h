//===- Model.h - the one client of the model ABI ----------------*- C++ -*-===//
//
// Every Kiln program that loads a model.so (kiln-run, kiln-serve, the Python
// module, calibration in the compiler) opens it here: dlopen with RTLD_LOCAL
// (so several models, which all export the same kiln_* names, live in one
// process), dlsym of the six entry points of runtime.h, the ABI version check
// and a checked copy of the metadata, so nothing a tool reads points into the
// .so. Plain C++ with exceptions; no MLIR, no LLVM.
//
// Thread safety: a Model is immutable once open and may be shared by any
// number of threads; a Session is used by one thread at a time.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CLIENT_MODEL_H
#define KILN_CLIENT_MODEL_H

#include "kiln/Client/DType.h"
#include "kiln/runtime.h"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::client {

/// Everything the client throws. A failing kiln_* call carries its status
/// code and its message, copied before the model can reuse the buffer; a
/// .so that cannot be opened or whose metadata cannot be used has code()
/// KILN_OK.
class Error : public std::runtime_error {
public:
  /// The model cannot be opened or used; `message` names the file.
  explicit Error(const std::string &message)
      : std::runtime_error(message), code_(KILN_OK) {}
  /// `call` (e.g. "kiln_run") returned `status`: what() is
  /// "<call> failed: <status message>".
  Error(const char *call, kiln_status status);

  /// The failing call's status code; KILN_OK when no call failed.
  kiln_status_code code() const { return code_; }
  /// The status message alone ("" when code() is KILN_OK).
  const std::string &statusMessage() const { return statusMessage_; }

private:
  kiln_status_code code_;
  std::string statusMessage_;
};

/// "INVALID_ARGUMENT", "UNSUPPORTED_ISA", ... ("OK", "UNKNOWN").
const char *statusCodeName(kiln_status_code code);

/// "[1,16]": a shape for messages; a scalar is "[]".
std::string shapeText(const std::vector<int64_t> &shape);

/// One model input or output: a checked copy of a kiln_tensor_info.
struct TensorInfo {
  std::string name;
  const DType *type = nullptr; ///< never null in a TensorInfo from a Model
  std::vector<int64_t> shape;  ///< non-negative; bytes() does not overflow

  int32_t dtype() const { return type->onnx; }
  size_t elementSize() const { return type->size; }
  size_t elementCount() const;
  size_t bytes() const { return elementCount() * type->size; }
};

/// A copy of kiln_model_info. Absent strings are empty.
struct ModelInfo {
  uint32_t abiVersion = 0;
  std::string name, hash, compilerVersion, compileOptions, targetTriple, cpu,
      requiredIsa;
  /// Inputs and outputs of the first batch variant.
  std::vector<TensorInfo> inputs, outputs;
  /// Compiled batch sizes, strictly ascending and non-negative (a single
  /// variant reports its leading dimension, which may be 0); a model that
  /// declares none has one variant, listed as {1}.
  std::vector<int64_t> batchSizes;
  /// Arena bytes of each variant (empty when the model does not say).
  std::vector<uint64_t> batchArenaBytes;
  uint64_t arenaBytes = 0, arenaAlignment = 0;
  /// Symbolic dimensions (kiln_dims_info; empty for a static model or one
  /// built before the ABI addition). Today one symbol: the batch, the
  /// leading dimension of the inputs marked in inputSymbols and of every
  /// output, any size in [min, max].
  struct Symbol {
    std::string name;
    int64_t min = 0, max = 0;
  };
  std::vector<Symbol> symbols;
  /// Per input (output), per axis: its symbol index, or -1.
  std::vector<std::vector<int32_t>> inputSymbols, outputSymbols;
  bool dynamic() const { return !symbols.empty(); }
  /// The symbols run at run-time sizes in one graph (not batch variants):
  /// any axis may carry one, `inputs`/`outputs` are at the maxima, and an
  /// output axis of -2 is computed by the model (at most its size here).
  bool runtimeExtents = false;
  /// With runtimeExtents: symbol 0 is an independent batch (axis 0 of every
  /// input and output, samples computed apart), so requests whose other
  /// sizes agree may be concatenated along it (KILN_DIMS_INDEPENDENT_BATCH).
  bool independentBatch = false;
};

/// What a session runs. Zero values are the defaults. kiln_session_options
/// is filled from this in one place (Model::createSession), and the tensors
/// a session takes in one other (Model::signature): an ABI addition such as
/// run-time input shapes becomes a field here and a change in those two.
struct SessionOptions {
  /// kiln_session_options.num_threads: 0 or 1 run on the calling thread.
  int32_t numThreads = 0;
  /// The batch variant; 0 is the first. For a model with a symbolic batch,
  /// the batch the session's signature shows (0: 1); the session runs any
  /// batch in range (Session::signatureFor).
  int64_t batchSize = 0;
};

/// The inputs and outputs a session of some options takes and fills.
struct Signature {
  int64_t batchSize = 0; ///< the variant's batch size
  std::vector<TensorInfo> inputs, outputs;
};

class Session;

/// An open model.so. Sessions hold it open, so it is closed when the last
/// shared_ptr to it or any of its sessions goes.
class Model : public std::enable_shared_from_this<Model> {
public:
  /// Opens `path` (a bare file name means ./name, not a library search) and
  /// checks that it is a Kiln model of this ABI version with metadata the
  /// client can use. Throws Error saying why not.
  static std::shared_ptr<const Model> open(const std::string &path);
  ~Model();
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  const std::string &path() const { return path_; }
  const ModelInfo &info() const { return info_; }
  const std::vector<TensorInfo> &inputs() const { return info_.inputs; }
  const std::vector<TensorInfo> &outputs() const { return info_.outputs; }

  /// kiln_check_cpu: throws Error (code KILN_UNSUPPORTED_ISA) when this CPU
  /// cannot run the model. Creating a session checks it too.
  void checkCpu() const;

  /// The tensors a session of `options` takes: in the variant of batch size
  /// b, every tensor's leading dimension is b. Throws Error when the model
  /// has no variant of options.batchSize.
  Signature signature(const SessionOptions &options) const;

  /// A model with a symbolic batch: the tensors of a run at batch `batch`
  /// (the batched ones lead with it). Throws Error naming the range when
  /// `batch` is outside it, or for a static model.
  Signature signatureForBatch(int64_t batch) const;

  /// The shapes of one run whose inputs have the shapes `inputShapes` (one
  /// per input): for a symbolic batch, the batch of the first batched input;
  /// for run-time extents, the symbols' sizes from every input (checked
  /// against their ranges and each other), and the output buffers that
  /// run needs (a computed axis at its maximum; Session::outputShape gives
  /// the shape written). A static model returns its own signature.
  Signature
  signatureForInputs(const std::vector<std::vector<int64_t>> &inputShapes) const;

  /// kiln_session_create; throws Error with the status on failure.
  std::unique_ptr<Session> createSession(const SessionOptions &options) const;

private:
  friend class Session;
  explicit Model(std::string path) : path_(std::move(path)) {}
  void resolveEntryPoints();
  void copyMetadata();
  void copySymbols();

  std::string path_;
  void *handle_ = nullptr;
  const kiln_model_info *(*getModelInfo_)(void) = nullptr;
  kiln_status (*checkCpu_)(void) = nullptr;
  kiln_status (*sessionCreate_)(const kiln_session_options *,
                                kiln_session **) = nullptr;
  kiln_status (*run_)(kiln_session *, const kiln_tensor *, size_t,
                      kiln_tensor *, size_t) = nullptr;
  void (*sessionDestroy_)(kiln_session *) = nullptr;
  size_t (*dtypeSize_)(int32_t) = nullptr;
  /// Optional (ABI additions): null in models built before them.
  const kiln_dims_info *(*getDimsInfo_)(void) = nullptr;
  kiln_status (*getOutputShape_)(kiln_session *, size_t, int64_t *,
                                 size_t) = nullptr;
  ModelInfo info_;
};

/// A kiln_session of one batch variant, destroyed with the model's own
/// kiln_session_destroy. Used by one thread at a time.
class Session {
public:
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  const Model &model() const { return *model_; }
  int64_t batchSize() const { return signature_.batchSize; }
  const std::vector<TensorInfo> &inputs() const { return signature_.inputs; }
  const std::vector<TensorInfo> &outputs() const { return signature_.outputs; }
  /// Whether the session runs any batch in the model's symbolic range.
  bool dynamic() const { return model_->info().dynamic(); }
  /// The tensors of a run at `batch` (Model::signatureForBatch).
  Signature signatureFor(int64_t batch) const {
    return model_->signatureForBatch(batch);
  }
  /// kiln_get_output_shape: output `i`'s shape in the last successful run.
  std::vector<int64_t> outputShape(size_t i) const;

  /// kiln_run with tensors in the order of inputs() and outputs(); throws
  /// Error with the status on failure. Allocates nothing when it succeeds.
  void run(const kiln_tensor *inputs, size_t numInputs, kiln_tensor *outputs,
           size_t numOutputs);
  void run(const std::vector<kiln_tensor> &inputs,
           std::vector<kiln_tensor> &outputs) {
    run(inputs.data(), inputs.size(), outputs.data(), outputs.size());
  }

private:
  friend class Model;
  Session(std::shared_ptr<const Model> model, kiln_session *session,
          Signature signature)
      : model_(std::move(model)), session_(session),
        signature_(std::move(signature)) {}

  std::shared_ptr<const Model> model_;
  kiln_session *session_;
  Signature signature_;
};

} // namespace kiln::client

#endif // KILN_CLIENT_MODEL_H
