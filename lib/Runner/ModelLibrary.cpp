#include "ModelLibrary.h"

#include <dlfcn.h>

namespace kilnrun {

static std::string text(const char *s) { return s ? s : "(null)"; }

static std::string statusText(kiln_status s) {
  return s.message && *s.message ? s.message
                                 : "status " + std::to_string(s.code);
}

// Copies one tensor description out of the metadata, rejecting what would make
// kiln-run read out of bounds or size a buffer wrongly.
static TensorSpec readSpec(const kiln_tensor_info &t, const char *kind,
                           uint32_t i, size_t (*dtypeSize)(int32_t),
                           const std::string &path) {
  std::string what = path + ": model " + kind + " " + std::to_string(i);
  if (!t.name)
    throw Error(what + " has no name");
  what += " '" + std::string(t.name) + "'";
  if (t.rank < 0 || (t.rank > 0 && !t.shape))
    throw Error(what + " has an invalid rank " + std::to_string(t.rank));
  TensorSpec spec{t.name, t.dtype, {}};
  if (t.rank > 0)
    spec.shape.assign(t.shape, t.shape + t.rank);
  elementCount(spec.shape, what);
  size_t ours = elementSize(t.dtype);
  if (!ours)
    throw Error(what + " has element type " + dtypeName(t.dtype) +
                ", which kiln-run does not support");
  if (dtypeSize(t.dtype) != ours)
    throw Error(what + ": the model's kiln_dtype_size(" +
                std::to_string(t.dtype) + ") is " +
                std::to_string(dtypeSize(t.dtype)) + "; expected " +
                std::to_string(ours));
  return spec;
}

template <typename Fn>
static void lookUp(void *handle, const char *symbol, Fn &fn,
                   const std::string &path) {
  dlerror();
  void *p = dlsym(handle, symbol);
  if (!p)
    throw Error(path + ": not a Kiln model: it does not export " +
                std::string(symbol));
  fn = reinterpret_cast<Fn>(p);
}

ModelLibrary::ModelLibrary(const std::string &path) : path_(path) {
  // dlopen searches the library path for a bare file name; users mean ./name.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  handle_ = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char *why = dlerror();
    throw Error("cannot load " + path + ": " + text(why));
  }
  try {
    lookUp(handle_, "kiln_get_model_info", getModelInfo_, path);
    lookUp(handle_, "kiln_check_cpu", checkCpu_, path);
    lookUp(handle_, "kiln_session_create", sessionCreate_, path);
    lookUp(handle_, "kiln_run", run_, path);
    lookUp(handle_, "kiln_session_destroy", sessionDestroy_, path);
    lookUp(handle_, "kiln_dtype_size", dtypeSize_, path);
    info_ = getModelInfo_();
    if (!info_)
      throw Error(path + ": kiln_get_model_info returned NULL");
    if (info_->abi_version != KILN_ABI_VERSION)
      throw Error(path + ": built for Kiln runtime ABI version " +
                  std::to_string(info_->abi_version) + "; kiln-run speaks " +
                  std::to_string(KILN_ABI_VERSION));
    if ((info_->num_inputs && !info_->inputs) ||
        (info_->num_outputs && !info_->outputs))
      throw Error(path + ": the model metadata has no tensor list");
    for (uint32_t i = 0; i < info_->num_inputs; ++i)
      inputs_.push_back(
          readSpec(info_->inputs[i], "input", i, dtypeSize_, path));
    for (uint32_t i = 0; i < info_->num_outputs; ++i)
      outputs_.push_back(
          readSpec(info_->outputs[i], "output", i, dtypeSize_, path));
  } catch (...) {
    dlclose(handle_);
    throw;
  }
}

ModelLibrary::~ModelLibrary() { dlclose(handle_); }

kiln_status_code ModelLibrary::checkCpu(std::string &message) const {
  kiln_status s = checkCpu_();
  message = s.code ? statusText(s) : "";
  return s.code;
}

void ModelLibrary::selectBatchSize(int64_t batch) {
  std::string sizes;
  for (uint32_t i = 0; i < info_->num_batch_sizes; ++i) {
    if (info_->batch_sizes[i] == batch) {
      for (auto *specs : {&inputs_, &outputs_})
        for (TensorSpec &spec : *specs)
          if (!spec.shape.empty())
            spec.shape[0] = batch;
      batchSize_ = batch;
      return;
    }
    sizes += (i ? "," : "") + std::to_string(info_->batch_sizes[i]);
  }
  throw Error("the model has no batch size " + std::to_string(batch) +
              "; it was compiled for " + sizes);
}

Session ModelLibrary::createSession(int32_t numThreads) const {
  kiln_session_options options = {};
  options.struct_size = sizeof(options);
  options.num_threads = numThreads;
  options.batch_size = batchSize_;
  kiln_session *session = nullptr;
  kiln_status s = sessionCreate_(&options, &session);
  if (s.code)
    throw Error("kiln_session_create failed: " + statusText(s));
  if (!session)
    throw Error("kiln_session_create returned KILN_OK and no session");
  return Session(*this, session);
}

Session::~Session() {
  if (session_)
    library_->sessionDestroy_(session_);
}

void Session::run(std::vector<kiln_tensor> &inputs,
                  std::vector<kiln_tensor> &outputs) {
  kiln_status s =
      runRaw(inputs.data(), inputs.size(), outputs.data(), outputs.size());
  if (s.code)
    throw Error("kiln_run failed: " + statusText(s));
}

} // namespace kilnrun
