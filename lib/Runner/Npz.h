// Reading numpy's .npz archives (np.savez / np.savez_compressed): a zip of
// .npy files, read with libzip.
#ifndef KILN_RUNNER_NPZ_H
#define KILN_RUNNER_NPZ_H

#include "Tensor.h"

#include <string>
#include <utility>
#include <vector>

namespace kilnrun {

/// The arrays of `path` in archive order, named without ".npy". Supports
/// little-endian float32/64, float16, int8/16/32/64, uint8/16/32/64 and bool
/// in C order. Throws Error naming the file and the array on any problem.
std::vector<std::pair<std::string, HostTensor>> readNpz(const std::string &path);

} // namespace kilnrun

#endif // KILN_RUNNER_NPZ_H
