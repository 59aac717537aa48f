// A model.so opened through the public Kiln runtime C ABI only: dlopen, then
// dlsym of the six kiln_* entry points. kiln-run never sees model internals.
#ifndef KILN_RUNNER_MODELLIBRARY_H
#define KILN_RUNNER_MODELLIBRARY_H

#include "Tensor.h"

#include "kiln/runtime.h"

#include <string>
#include <vector>

namespace kilnrun {

/// One model input or output, copied out of the model's metadata.
struct TensorSpec {
  std::string name;
  int32_t dtype;
  std::vector<int64_t> shape;
};

class Session;

/// An open model.so. Throws Error when the file cannot be loaded, lacks an
/// entry point, was built for another ABI version or has metadata kiln-run
/// cannot use. Sessions must be destroyed before the library.
class ModelLibrary {
public:
  explicit ModelLibrary(const std::string &path);
  ~ModelLibrary();
  ModelLibrary(const ModelLibrary &) = delete;
  ModelLibrary &operator=(const ModelLibrary &) = delete;

  const kiln_model_info &info() const { return *info_; }
  const std::vector<TensorSpec> &inputs() const { return inputs_; }
  const std::vector<TensorSpec> &outputs() const { return outputs_; }

  /// Selects the batch variant that later sessions run: every input and
  /// output spec gets leading dimension `batch`. Throws Error if the model
  /// was not compiled for that batch size.
  void selectBatchSize(int64_t batch);

  /// kiln_check_cpu; the message is copied (the model's buffer is reused).
  kiln_status_code checkCpu(std::string &message) const;
  /// kiln_session_create with `num_threads`; throws Error with the status
  /// message (for example a missing CPU feature) on failure.
  Session createSession(int32_t numThreads) const;

private:
  friend class Session;
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
  const kiln_model_info *info_ = nullptr;
  std::vector<TensorSpec> inputs_, outputs_;
  int64_t batchSize_ = 0; ///< 0: the first variant

};

/// A kiln_session, destroyed with the model's kiln_session_destroy.
class Session {
public:
  Session(const ModelLibrary &library, kiln_session *session)
      : library_(&library), session_(session) {}
  Session(Session &&other) noexcept
      : library_(other.library_), session_(other.session_) {
    other.session_ = nullptr;
  }
  Session &operator=(Session &&) = delete;
  ~Session();

  /// kiln_run; throws Error with the status message on failure.
  void run(std::vector<kiln_tensor> &inputs, std::vector<kiln_tensor> &outputs);
  /// kiln_run without the exception, for the timing loop.
  kiln_status runRaw(const kiln_tensor *inputs, size_t numInputs,
                     kiln_tensor *outputs, size_t numOutputs) {
    return library_->run_(session_, inputs, numInputs, outputs, numOutputs);
  }

private:
  const ModelLibrary *library_;
  kiln_session *session_;
};

} // namespace kilnrun

#endif // KILN_RUNNER_MODELLIBRARY_H
