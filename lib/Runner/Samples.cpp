#include "Samples.h"
#include "TensorProto.h"

#include <filesystem>

namespace fs = std::filesystem;

namespace kilnrun {

std::string describe(const TensorInfo &spec) {
  return "'" + spec.name + "' " + dtypeName(spec.dtype()) + " " +
         shapeText(spec.shape);
}

std::vector<HostTensor> allocate(const std::vector<TensorInfo> &specs) {
  std::vector<HostTensor> tensors;
  for (const TensorInfo &spec : specs)
    tensors.emplace_back(spec.dtype(), spec.shape);
  return tensors;
}

std::vector<kiln_tensor> views(std::vector<HostTensor> &tensors) {
  std::vector<kiln_tensor> result;
  for (HostTensor &t : tensors)
    result.push_back(t.view());
  return result;
}
std::string fileIn(const std::string &dir, const char *stem, size_t i) {
  return (fs::path(dir) / (stem + std::to_string(i) + ".pb")).string();
}

// Reads input_<i>.pb for every model input and checks it against the model.
std::vector<HostTensor> readInputs(const std::string &dir,
                                   const std::vector<TensorInfo> &specs) {
  std::vector<HostTensor> inputs;
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorInfo &spec = specs[i];
    std::string path = fileIn(dir, "input_", i);
    if (!fs::exists(path))
      throw Error(path + " is missing; model input " + std::to_string(i) +
                  " is " + describe(spec));
    HostTensor t = readTensorProto(path).tensor;
    if (t.dtype() == KILN_DTYPE_UINT16 && spec.dtype() == KILN_DTYPE_BFLOAT16)
      t.reinterpretAs(KILN_DTYPE_BFLOAT16); // bfloat16 stored as its bits
    if (t.dtype() != spec.dtype())
      throw Error(path + " holds " + dtypeName(t.dtype()) + "; model input " +
                  std::to_string(i) + " " + describe(spec) + " needs " +
                  dtypeName(spec.dtype()));
    if (t.shape() != spec.shape)
      throw Error(path + " has shape " + shapeText(t.shape()) +
                  "; model input " + std::to_string(i) + " " + describe(spec) +
                  " needs " + shapeText(spec.shape));
    inputs.push_back(std::move(t));
  }
  std::string extra = fileIn(dir, "input_", specs.size());
  if (fs::exists(extra))
    throw Error(extra + " exists but the model has only " +
                std::to_string(specs.size()) + " inputs");
  return inputs;
}

} // namespace kilnrun
