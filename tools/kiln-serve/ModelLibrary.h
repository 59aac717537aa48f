// A model.so opened through the public Kiln runtime C ABI only: dlopen with
// RTLD_LOCAL (so several models, which all export the same kiln_* names, live
// in one process), then dlsym of the six entry points. Everything the server
// needs from the metadata is copied out, so nothing outlives the library.
#ifndef KILN_TOOLS_KILN_SERVE_MODELLIBRARY_H
#define KILN_TOOLS_KILN_SERVE_MODELLIBRARY_H

#include "kiln/runtime.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::serve {

/// One model input or output as the first batch variant declares it.
struct TensorSpec {
  std::string name;
  int32_t dtype = 0;
  size_t elementSize = 0;
  std::vector<int64_t> shape;
};

class ModelLibrary;

/// A kiln_session of one batch variant; destroyed with the model's own
/// kiln_session_destroy. Holds the library open.
class Session {
public:
  Session(std::shared_ptr<const ModelLibrary> library, kiln_session *session,
          int64_t batch)
      : library_(std::move(library)), session_(session), batch_(batch) {}
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  ~Session();

  int64_t batch() const { return batch_; }
  /// kiln_run; on failure returns false and copies the status message.
  bool run(const kiln_tensor *inputs, size_t numInputs, kiln_tensor *outputs,
           size_t numOutputs, std::string &message);

private:
  std::shared_ptr<const ModelLibrary> library_;
  kiln_session *session_;
  int64_t batch_;
};

/// An open model.so, shared by every session and every version that uses it.
class ModelLibrary : public std::enable_shared_from_this<ModelLibrary> {
public:
  /// Opens `path` and checks that it is a Kiln model of our ABI version that
  /// this CPU can run. Throws Error(400) saying why not.
  static std::shared_ptr<ModelLibrary> open(const std::string &path);
  ~ModelLibrary();
  ModelLibrary(const ModelLibrary &) = delete;
  ModelLibrary &operator=(const ModelLibrary &) = delete;

  const std::string &path() const { return path_; }
  const std::string &modelName() const { return modelName_; }
  const std::string &hash() const { return hash_; }
  const std::string &compilerVersion() const { return compilerVersion_; }
  const std::string &requiredIsa() const { return requiredIsa_; }
  const std::vector<TensorSpec> &inputs() const { return inputs_; }
  const std::vector<TensorSpec> &outputs() const { return outputs_; }
  /// Compiled batch sizes, ascending; never empty.
  const std::vector<int64_t> &batchSizes() const { return batchSizes_; }
  /// True when every input and output has rank >= 1 and leading dimension
  /// batchSizes()[0]: then rows are independent and requests may be packed,
  /// padded and split along that dimension. Otherwise every request must
  /// match the declared shapes exactly and runs alone.
  bool batched() const { return batched_; }

  /// A session for the variant of batch size `batch`. Throws Error(500).
  std::unique_ptr<Session> createSession(int64_t batch, int threads = 1) const;

private:
  friend class Session;
  ModelLibrary() = default;

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

  std::string modelName_, hash_, compilerVersion_, requiredIsa_;
  std::vector<TensorSpec> inputs_, outputs_;
  std::vector<int64_t> batchSizes_;
  bool batched_ = false;
};

} // namespace kiln::serve

#endif // KILN_TOOLS_KILN_SERVE_MODELLIBRARY_H
