#include "ModelLibrary.h"

#include "Error.h"
#include "Tensor.h"

#include <dlfcn.h>

namespace kiln::serve {

static std::string text(const char *s) { return s ? s : ""; }

static std::string statusText(kiln_status s) {
  return s.message && *s.message ? s.message
                                 : "status " + std::to_string(s.code);
}

template <typename Fn>
static void lookUp(void *handle, const char *symbol, Fn &fn,
                   const std::string &path) {
  dlerror();
  void *p = dlsym(handle, symbol);
  if (!p)
    throw Error(400,
                path + " is not a Kiln model: it does not export " + symbol);
  fn = reinterpret_cast<Fn>(p);
}

// Copies one tensor description, rejecting what would make the server size a
// buffer wrongly or read out of bounds.
static TensorSpec readSpec(const kiln_tensor_info &t, const char *kind,
                           uint32_t i, size_t (*modelDtypeSize)(int32_t),
                           const std::string &path) {
  std::string what = path + ": " + kind + " " + std::to_string(i);
  if (!t.name)
    throw Error(400, what + " has no name");
  what += " '" + std::string(t.name) + "'";
  if (t.rank < 0 || (t.rank > 0 && !t.shape))
    throw Error(400, what + " has an invalid rank " + std::to_string(t.rank));
  TensorSpec spec;
  spec.name = t.name;
  spec.dtype = t.dtype;
  spec.elementSize = dtypeSize(t.dtype);
  if (!spec.elementSize || !kserveDatatype(t.dtype))
    throw Error(400, what + " has element type " + std::to_string(t.dtype) +
                         ", which kiln-serve cannot carry");
  if (modelDtypeSize(t.dtype) != spec.elementSize)
    throw Error(400, what + ": the model's kiln_dtype_size(" +
                         std::to_string(t.dtype) + ") disagrees with ours");
  for (int32_t d = 0; d < t.rank; ++d) {
    if (t.shape[d] < 0)
      throw Error(400, what + " has a negative dimension");
    spec.shape.push_back(t.shape[d]);
  }
  return spec;
}

std::shared_ptr<ModelLibrary> ModelLibrary::open(const std::string &path) {
  std::shared_ptr<ModelLibrary> lib(new ModelLibrary());
  lib->path_ = path;
  // dlopen searches the library path for a bare file name; users mean ./name.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  // RTLD_LOCAL keeps this model's kiln_* symbols out of the global scope, so
  // the next model's calls bind to its own definitions.
  lib->handle_ = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle_)
    throw Error(400, "cannot load " + path + ": " + text(dlerror()));
  lookUp(lib->handle_, "kiln_get_model_info", lib->getModelInfo_, path);
  lookUp(lib->handle_, "kiln_check_cpu", lib->checkCpu_, path);
  lookUp(lib->handle_, "kiln_session_create", lib->sessionCreate_, path);
  lookUp(lib->handle_, "kiln_run", lib->run_, path);
  lookUp(lib->handle_, "kiln_session_destroy", lib->sessionDestroy_, path);
  lookUp(lib->handle_, "kiln_dtype_size", lib->dtypeSize_, path);

  const kiln_model_info *info = lib->getModelInfo_();
  if (!info)
    throw Error(400, path + ": kiln_get_model_info returned NULL");
  if (info->abi_version != KILN_ABI_VERSION)
    throw Error(400, path + " was built for Kiln runtime ABI version " +
                         std::to_string(info->abi_version) +
                         "; kiln-serve speaks version " +
                         std::to_string(KILN_ABI_VERSION));
  kiln_status cpu = lib->checkCpu_();
  if (cpu.code)
    throw Error(400, path + " cannot run on this CPU: " + statusText(cpu));
  if ((info->num_inputs && !info->inputs) ||
      (info->num_outputs && !info->outputs) ||
      (info->num_batch_sizes && !info->batch_sizes))
    throw Error(400, path + ": the model metadata is incomplete");
  lib->modelName_ = text(info->name);
  lib->hash_ = text(info->hash);
  lib->compilerVersion_ = text(info->compiler_version);
  lib->requiredIsa_ = text(info->required_isa);
  for (uint32_t i = 0; i < info->num_inputs; ++i)
    lib->inputs_.push_back(
        readSpec(info->inputs[i], "input", i, lib->dtypeSize_, path));
  for (uint32_t i = 0; i < info->num_outputs; ++i)
    lib->outputs_.push_back(
        readSpec(info->outputs[i], "output", i, lib->dtypeSize_, path));
  for (uint32_t i = 0; i < info->num_batch_sizes; ++i) {
    int64_t b = info->batch_sizes[i];
    if (b < 1 || (i && b <= lib->batchSizes_.back()))
      throw Error(400, path + ": the batch sizes are not ascending and "
                              "positive");
    lib->batchSizes_.push_back(b);
  }
  if (lib->batchSizes_.empty())
    lib->batchSizes_.push_back(1);

  // Batched: every tensor leads with the first variant's batch size. Several
  // variants promise this; with one variant it is our reading of the shapes.
  bool batched = !lib->inputs_.empty();
  for (const auto *list : {&lib->inputs_, &lib->outputs_})
    for (const TensorSpec &t : *list)
      batched =
          batched && !t.shape.empty() && t.shape[0] == lib->batchSizes_.front();
  if (!batched && lib->batchSizes_.size() > 1)
    throw Error(400, path + " has several batch variants but a tensor whose "
                            "leading dimension is not the batch size");
  lib->batched_ = batched;
  return lib;
}

ModelLibrary::~ModelLibrary() {
  if (handle_)
    dlclose(handle_);
}

std::unique_ptr<Session> ModelLibrary::createSession(int64_t batch,
                                                     int threads) const {
  kiln_session_options options = {};
  options.struct_size = sizeof(options);
  options.num_threads = threads;
  // 0 picks the first variant, which is also right for a model that declares
  // no batch sizes at all.
  options.batch_size = batch == batchSizes_.front() ? 0 : batch;
  kiln_session *session = nullptr;
  kiln_status s = sessionCreate_(&options, &session);
  if (s.code || !session)
    throw Error(500, path_ + ": kiln_session_create for batch size " +
                         std::to_string(batch) + " failed: " + statusText(s));
  return std::make_unique<Session>(shared_from_this(), session, batch);
}

Session::~Session() { library_->sessionDestroy_(session_); }

bool Session::run(const kiln_tensor *inputs, size_t numInputs,
                  kiln_tensor *outputs, size_t numOutputs,
                  std::string &message) {
  kiln_status s =
      library_->run_(session_, inputs, numInputs, outputs, numOutputs);
  if (!s.code)
    return true;
  message = statusText(s);
  return false;
}

} // namespace kiln::serve
