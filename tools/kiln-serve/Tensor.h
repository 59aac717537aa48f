// Tensor data between JSON and raw little-endian bytes. Element types, their
// KServe v2 names and shapes for messages come from the model client.
#ifndef KILN_TOOLS_KILN_SERVE_TENSOR_H
#define KILN_TOOLS_KILN_SERVE_TENSOR_H

#include "kiln/Client/Model.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::serve {

using client::shapeText;

/// Writes the elements of JSON `data` (a flat array, or arrays nested as
/// `shape`, of numbers or booleans, row-major) as `count` elements of `dtype`
/// to `out`. Throws Error(400) naming `what` when the values, their count or
/// their nesting do not fit.
void jsonToBytes(const nlohmann::json &data, int32_t dtype,
                 const std::vector<int64_t> &shape, size_t count, char *out,
                 const std::string &what);

/// Appends `count` elements of `dtype` at `data` to `out` as a flat JSON
/// array. Floats use the shortest text that reads back to the same value;
/// NaN and infinities, which JSON cannot spell, become null.
void appendJsonData(std::string &out, const char *data, int32_t dtype,
                    size_t count);

} // namespace kiln::serve

#endif // KILN_TOOLS_KILN_SERVE_TENSOR_H
