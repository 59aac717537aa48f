// Element types between the Kiln ABI (ONNX numbering) and KServe v2 names, and
// tensor data between JSON and raw little-endian bytes.
#ifndef KILN_TOOLS_KILN_SERVE_TENSOR_H
#define KILN_TOOLS_KILN_SERVE_TENSOR_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::serve {

/// KServe v2 datatype name ("FP32", "INT64", ...) of a kiln_dtype; nullptr
/// when the type has no KServe name.
const char *kserveDatatype(int32_t dtype);
/// Bytes per element of a kiln_dtype kiln-serve can carry; 0 if unknown.
size_t dtypeSize(int32_t dtype);

/// "[1,16]": a shape for messages.
std::string shapeText(const std::vector<int64_t> &shape);

/// Writes the elements of JSON `data` (a flat or nested array of numbers or
/// booleans, row-major) as `count` elements of `dtype` to `out`. Throws
/// Error(400) naming `what` when the values or their count do not fit.
void jsonToBytes(const nlohmann::json &data, int32_t dtype, size_t count,
                 char *out, const std::string &what);

/// Appends `count` elements of `dtype` at `data` to `out` as a flat JSON
/// array. Floats use the shortest text that reads back to the same value;
/// NaN and infinities, which JSON cannot spell, become null.
void appendJsonData(std::string &out, const char *data, int32_t dtype,
                    size_t count);

/// IEEE binary16 and bfloat16 conversions (round to nearest even).
uint16_t floatToHalf(float f);
float halfToFloat(uint16_t h);
uint16_t floatToBfloat16(float f);
float bfloat16ToFloat(uint16_t b);

} // namespace kiln::serve

#endif // KILN_TOOLS_KILN_SERVE_TENSOR_H
