#include "Tensor.h"

#include "Error.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace kiln::serve {

using client::bfloat16ToFloat;
using client::dtypeName;
using client::dtypeSize;
using client::findDType;
using client::narrowValue;
using client::floatToBfloat16;
using client::floatToHalf;
using client::halfToFloat;

namespace {

// Writes the leaves of a JSON array in row-major order: a flat array of every
// element, or arrays nested exactly as the shape (so a ragged or too deep
// nesting is refused, and the recursion is as deep as the rank at most).
class Flattener {
public:
  Flattener(int32_t dtype, size_t count, char *out, const std::string &what)
      : dtype_(dtype), count_(count), out_(out), what_(what),
        size_(dtypeSize(dtype)) {}

  void walk(const nlohmann::json &data, const std::vector<int64_t> &shape) {
    bool flat = true;
    for (const auto &e : data)
      flat &= !e.is_array();
    if (flat) {
      for (const auto &e : data)
        leaf(e);
      return;
    }
    nested(data, shape, 0);
  }
  size_t written() const { return written_; }

private:
  void nested(const nlohmann::json &v, const std::vector<int64_t> &shape,
              size_t depth) {
    if (depth == shape.size()) {
      if (v.is_array())
        throw Error(400, what_ + ": 'data' is nested deeper than its shape's " +
                             std::to_string(shape.size()) + " dimensions");
      leaf(v);
      return;
    }
    if (!v.is_array() || (int64_t)v.size() != shape[depth])
      throw Error(400, what_ + ": 'data' is nested unlike its shape: an "
                               "array at depth " +
                           std::to_string(depth) + " must hold " +
                           std::to_string(shape[depth]) + " elements" +
                           (v.is_array() ? ", not " + std::to_string(v.size())
                                         : ", not a single value"));
    for (const auto &e : v)
      nested(e, shape, depth + 1);
  }

  void leaf(const nlohmann::json &v) {
    if (v.is_array())
      throw Error(400, what_ + ": 'data' mixes arrays and values");
    if (written_ == count_)
      throw Error(400, what_ + ": 'data' holds more than the " +
                           std::to_string(count_) +
                           " elements its shape calls for");
    store(v, out_ + written_ * size_);
    ++written_;
  }

  [[noreturn]] void bad(const nlohmann::json &v, const char *want) const {
    throw Error(400, what_ + ": element " + std::to_string(written_) + " (" +
                         v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + ") is not " + want);
  }

  double number(const nlohmann::json &v) const {
    if (!v.is_number())
      bad(v, "a number");
    return v.get<double>();
  }

  template <typename T> void storeInt(const nlohmann::json &v, char *p) const {
    T t;
    if (v.is_number_unsigned()) {
      uint64_t u = v.get<uint64_t>();
      t = (T)u;
      if (u > (uint64_t)std::numeric_limits<T>::max())
        bad(v, "in range");
    } else if (v.is_number_integer()) {
      int64_t i = v.get<int64_t>();
      t = (T)i;
      if ((i < 0 && !std::numeric_limits<T>::is_signed) || (int64_t)t != i)
        bad(v, "in range");
    } else if (v.is_boolean()) {
      t = v.get<bool>() ? 1 : 0;
    } else {
      bad(v, "an integer");
    }
    std::memcpy(p, &t, sizeof(T));
  }

  void store(const nlohmann::json &v, char *p) const {
    switch (dtype_) {
    case KILN_DTYPE_FLOAT32: {
      float f = (float)number(v);
      std::memcpy(p, &f, 4);
      return;
    }
    case KILN_DTYPE_FLOAT64: {
      double d = number(v);
      std::memcpy(p, &d, 8);
      return;
    }
    case KILN_DTYPE_FLOAT16: {
      uint16_t h = floatToHalf((float)number(v));
      std::memcpy(p, &h, 2);
      return;
    }
    case KILN_DTYPE_BFLOAT16: {
      uint16_t b = floatToBfloat16((float)number(v));
      std::memcpy(p, &b, 2);
      return;
    }
    case KILN_DTYPE_BOOL:
      if (v.is_boolean())
        *p = v.get<bool>() ? 1 : 0;
      else if (v.is_number_integer() && (v == 0 || v == 1))
        *p = v.get<int>() ? 1 : 0;
      else
        bad(v, "a boolean");
      return;
    case KILN_DTYPE_INT8:
      return storeInt<int8_t>(v, p);
    case KILN_DTYPE_UINT8:
      return storeInt<uint8_t>(v, p);
    case KILN_DTYPE_INT16:
      return storeInt<int16_t>(v, p);
    case KILN_DTYPE_UINT16:
      return storeInt<uint16_t>(v, p);
    case KILN_DTYPE_INT32:
      return storeInt<int32_t>(v, p);
    case KILN_DTYPE_UINT32:
      return storeInt<uint32_t>(v, p);
    case KILN_DTYPE_INT64:
      return storeInt<int64_t>(v, p);
    case KILN_DTYPE_UINT64:
      return storeInt<uint64_t>(v, p);
    default:
      throw Error(400, what_ + ": " + dtypeName(dtype_) +
                           " inputs cannot be given as JSON numbers");
    }
  }

  int32_t dtype_;
  size_t count_;
  char *out_;
  const std::string &what_;
  size_t size_;
  size_t written_ = 0;
};

template <typename T> T load(const char *p) {
  T t;
  std::memcpy(&t, p, sizeof(T));
  return t;
}

template <typename T> void appendNumber(std::string &out, T v) {
  char buf[40];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, r.ptr);
}

template <typename F> void appendFloat(std::string &out, F v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  appendNumber(out, v);
}

} // namespace

void jsonToBytes(const nlohmann::json &data, int32_t dtype,
                 const std::vector<int64_t> &shape, size_t count, char *out,
                 const std::string &what) {
  if (!data.is_array())
    throw Error(400, what + ": 'data' must be an array");
  Flattener f(dtype, count, out, what);
  f.walk(data, shape);
  if (f.written() != count)
    throw Error(400, what + ": 'data' holds " + std::to_string(f.written()) +
                         " elements; its shape calls for " +
                         std::to_string(count));
}

void appendJsonData(std::string &out, const char *data, int32_t dtype,
                    size_t count) {
  out += '[';
  size_t size = dtypeSize(dtype);
  for (size_t i = 0; i < count; ++i) {
    if (i)
      out += ',';
    const char *p = data + i * size;
    switch (dtype) {
    case KILN_DTYPE_FLOAT32:
      appendFloat(out, load<float>(p));
      break;
    case KILN_DTYPE_FLOAT64:
      appendFloat(out, load<double>(p));
      break;
    case KILN_DTYPE_FLOAT16:
      appendFloat(out, halfToFloat(load<uint16_t>(p)));
      break;
    case KILN_DTYPE_BFLOAT16:
      appendFloat(out, bfloat16ToFloat(load<uint16_t>(p)));
      break;
    case KILN_DTYPE_BOOL:
      out += *p ? "true" : "false";
      break;
    case KILN_DTYPE_INT8:
      appendNumber(out, (int)load<int8_t>(p));
      break;
    case KILN_DTYPE_UINT8:
      appendNumber(out, (unsigned)load<uint8_t>(p));
      break;
    case KILN_DTYPE_INT16:
      appendNumber(out, load<int16_t>(p));
      break;
    case KILN_DTYPE_UINT16:
      appendNumber(out, load<uint16_t>(p));
      break;
    case KILN_DTYPE_INT32:
      appendNumber(out, load<int32_t>(p));
      break;
    case KILN_DTYPE_UINT32:
      appendNumber(out, load<uint32_t>(p));
      break;
    case KILN_DTYPE_INT64:
      appendNumber(out, load<int64_t>(p));
      break;
    case KILN_DTYPE_UINT64:
      appendNumber(out, load<uint64_t>(p));
      break;
    default:
      if (findDType(dtype) && size == 1) // ONNX's narrow types
        appendFloat(out, narrowValue(dtype, load<uint8_t>(p)));
      else
        out += "null";
      break;
    }
  }
  out += ']';
}

} // namespace kiln::serve
