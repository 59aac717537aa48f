// Reading and writing onnx::TensorProto files (the input_<i>.pb / output_<i>.pb
// of ONNX backend-test folders).
#ifndef KILN_RUNNER_TENSORPROTO_H
#define KILN_RUNNER_TENSORPROTO_H

#include "Tensor.h"

#include <string>

namespace kilnrun {

/// A tensor read from a file, with the name stored in it (may be empty).
struct NamedTensor {
  std::string name;
  HostTensor tensor;
};

/// Reads a serialized TensorProto whose values are in raw_data or in the typed
/// field ONNX uses for its dtype. Throws Error naming `path` on any problem.
NamedTensor readTensorProto(const std::string &path);

/// Writes `tensor` as a TensorProto with dims, data_type, name and raw_data.
void writeTensorProto(const std::string &path, const std::string &name,
                      const HostTensor &tensor);

} // namespace kilnrun

#endif // KILN_RUNNER_TENSORPROTO_H
