// Inputs and outputs of one run of a model: buffers shaped by the model's
// metadata and input_<i>.pb files checked against it.
#ifndef KILN_RUNNER_SAMPLES_H
#define KILN_RUNNER_SAMPLES_H

#include "Tensor.h"

#include "kiln/Client/Model.h"

#include <string>
#include <vector>

namespace kilnrun {

using kiln::client::TensorInfo;

/// "DIR/<stem><i>.pb".
std::string fileIn(const std::string &dir, const char *stem, size_t i);
/// "'name' float32 [1,3]".
std::string describe(const TensorInfo &spec);
/// Zero-filled tensors for `specs`.
std::vector<HostTensor> allocate(const std::vector<TensorInfo> &specs);
/// kiln_tensor views of `tensors`.
std::vector<kiln_tensor> views(std::vector<HostTensor> &tensors);
/// Reads input_<i>.pb of `dir` for every one of `specs` (the inputs of a
/// session or a signature); throws Error when one is missing, has another
/// dtype or shape, or there is one too many.
std::vector<HostTensor> readInputs(const std::string &dir,
                                   const std::vector<TensorInfo> &specs);

} // namespace kilnrun

#endif // KILN_RUNNER_SAMPLES_H
