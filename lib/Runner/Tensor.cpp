#include "Tensor.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace kilnrun {

size_t elementCount(const std::vector<int64_t> &shape,
                    const std::string &what) {
  size_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      throw Error(what + ": dimension " + std::to_string(d) + " in shape " +
                  shapeText(shape) + " is negative");
    if (__builtin_mul_overflow(n, static_cast<size_t>(d), &n))
      throw Error(what + ": shape " + shapeText(shape) + " is too large");
  }
  return n;
}

std::string indexString(const std::vector<int64_t> &shape, size_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = static_cast<int64_t>(flat % static_cast<size_t>(shape[d]));
    flat /= static_cast<size_t>(shape[d]);
  }
  return shapeText(index);
}

HostTensor::HostTensor(int32_t dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  size_t size = dtypeSize(dtype);
  if (!size)
    throw Error("unsupported element type " + dtypeName(dtype));
  numElements_ = elementCount(shape_, "tensor");
  if (__builtin_mul_overflow(numElements_, size, &bytes_))
    throw Error("tensor of shape " + shapeText(shape_) + " is too large");
  // aligned_alloc wants a multiple of the alignment; never ask for 0 bytes so
  // that even an empty tensor has a non-NULL data pointer.
  size_t rounded = (bytes_ + 63) / 64 * 64;
  void *p = std::aligned_alloc(64, rounded ? rounded : 64);
  if (!p)
    throw Error("cannot allocate " + std::to_string(bytes_) + " bytes");
  std::memset(p, 0, rounded ? rounded : 64);
  storage_.reset(p);
}

kiln_tensor HostTensor::view() {
  kiln_tensor t;
  t.data = data();
  t.bytes = bytes_;
  t.dtype = dtype_;
  t.rank = static_cast<int32_t>(shape_.size());
  t.shape = shape_.data();
  return t;
}

template <typename T> static T load(const void *base, size_t i) {
  T v;
  std::memcpy(&v, static_cast<const char *>(base) + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T> static void store(void *base, size_t i, T v) {
  std::memcpy(static_cast<char *>(base) + i * sizeof(T), &v, sizeof(T));
}

double HostTensor::valueAt(size_t i) const {
  const void *p = data();
  switch (dtype_) {
  case KILN_DTYPE_FLOAT32:
    return load<float>(p, i);
  case KILN_DTYPE_FLOAT64:
    return load<double>(p, i);
  case KILN_DTYPE_FLOAT16:
    return halfToFloat(load<uint16_t>(p, i));
  case KILN_DTYPE_BFLOAT16:
    return bfloat16ToFloat(load<uint16_t>(p, i));
  case KILN_DTYPE_BOOL:
    return load<uint8_t>(p, i) ? 1.0 : 0.0;
  case KILN_DTYPE_UINT8:
    return load<uint8_t>(p, i);
  case KILN_DTYPE_INT8:
    return load<int8_t>(p, i);
  case KILN_DTYPE_UINT16:
    return load<uint16_t>(p, i);
  case KILN_DTYPE_INT16:
    return load<int16_t>(p, i);
  case KILN_DTYPE_INT32:
    return load<int32_t>(p, i);
  case KILN_DTYPE_UINT32:
    return load<uint32_t>(p, i);
  case KILN_DTYPE_INT64:
    return static_cast<double>(load<int64_t>(p, i));
  case KILN_DTYPE_UINT64:
    return static_cast<double>(load<uint64_t>(p, i));
  default: // ONNX's narrow types, one byte each
    return kiln::client::narrowValue(dtype_, load<uint8_t>(p, i));
  }
}

std::string HostTensor::formatAt(size_t i) const {
  char buffer[64];
  const void *p = data();
  switch (dtype_) {
  case KILN_DTYPE_FLOAT64:
    std::snprintf(buffer, sizeof(buffer), "%.17g", load<double>(p, i));
    break;
  case KILN_DTYPE_FLOAT32:
  case KILN_DTYPE_FLOAT16:
  case KILN_DTYPE_BFLOAT16:
  case KILN_DTYPE_FLOAT8E4M3FN:
  case KILN_DTYPE_FLOAT8E4M3FNUZ:
  case KILN_DTYPE_FLOAT8E5M2:
  case KILN_DTYPE_FLOAT8E5M2FNUZ:
  case KILN_DTYPE_FLOAT4E2M1:
  case KILN_DTYPE_FLOAT8E8M0:
    std::snprintf(buffer, sizeof(buffer), "%.9g", valueAt(i));
    break;
  case KILN_DTYPE_BOOL:
    return load<uint8_t>(p, i) ? "true" : "false";
  case KILN_DTYPE_INT64:
    std::snprintf(buffer, sizeof(buffer), "%" PRId64, load<int64_t>(p, i));
    break;
  case KILN_DTYPE_UINT64:
    std::snprintf(buffer, sizeof(buffer), "%" PRIu64, load<uint64_t>(p, i));
    break;
  default: // every other integer type is exact in a double
    std::snprintf(buffer, sizeof(buffer), "%.0f", valueAt(i));
    break;
  }
  return buffer;
}

void HostTensor::fillRandom(std::mt19937_64 &rng) {
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int> bit(0, 1);
  void *p = data();
  for (size_t i = 0; i < numElements_; ++i) {
    switch (dtype_) {
    case KILN_DTYPE_FLOAT32:
      store<float>(p, i, real(rng));
      break;
    case KILN_DTYPE_FLOAT64:
      store<double>(p, i, real(rng));
      break;
    case KILN_DTYPE_FLOAT16:
      store<uint16_t>(p, i, floatToHalf(real(rng)));
      break;
    case KILN_DTYPE_BFLOAT16:
      store<uint16_t>(p, i, floatToBfloat16(real(rng)));
      break;
    default: {
      // Little-endian: setting the lowest byte sets the integer to 0 or 1.
      size_t size = dtypeSize(dtype_);
      unsigned char *element = static_cast<unsigned char *>(p) + i * size;
      std::memset(element, 0, size);
      element[0] = static_cast<unsigned char>(bit(rng));
      break;
    }
    }
  }
}

static bool isFloatingPoint(int32_t dtype) {
  return dtype == KILN_DTYPE_FLOAT32 || dtype == KILN_DTYPE_FLOAT64 ||
         dtype == KILN_DTYPE_FLOAT16 || dtype == KILN_DTYPE_BFLOAT16 ||
         kiln::client::isNarrowFloat(dtype);
}

Comparison compare(const HostTensor &got, const HostTensor &want, double rtol,
                   double atol) {
  Comparison c;
  c.compared = want.numElements();
  bool floating = isFloatingPoint(want.dtype());
  size_t size = dtypeSize(want.dtype());
  const unsigned char *gotBytes =
      static_cast<const unsigned char *>(got.data());
  const unsigned char *wantBytes =
      static_cast<const unsigned char *>(want.data());
  double diffSquares = 0, wantSquares = 0;
  for (size_t i = 0; i < c.compared; ++i) {
    double g = got.valueAt(i), w = want.valueAt(i);
    if (std::isfinite(g) && std::isfinite(w)) {
      diffSquares += (g - w) * (g - w);
      wantSquares += w * w;
    }
    bool match;
    if (floating) {
      if (std::isnan(g) || std::isnan(w))
        match = std::isnan(g) && std::isnan(w);
      else if (g == w) // also equal infinities
        match = true;
      else if (!std::isfinite(g) || !std::isfinite(w))
        match = false;
      else
        match = std::fabs(g - w) <= atol + rtol * std::fabs(w);
    } else if (want.dtype() == KILN_DTYPE_BOOL) {
      match = (gotBytes[i] != 0) == (wantBytes[i] != 0);
    } else if (kiln::client::packedBits(want.dtype())) {
      match = g == w; // the 4-bit and 2-bit values, upper bits aside
    } else {
      // Compare the bits: int64 and uint64 are not exact in a double.
      match = std::memcmp(gotBytes + i * size, wantBytes + i * size, size) == 0;
    }
    // A NaN against a number, or a wrong infinity, is an infinite error.
    double absError;
    if (std::isfinite(g) && std::isfinite(w))
      absError = std::fabs(g - w);
    else
      absError = match ? 0 : INFINITY;
    if (absError > c.maxAbsError)
      c.maxAbsError = absError;
    if (w != 0 && std::isfinite(w)) {
      double relError = absError / std::fabs(w);
      if (relError > c.maxRelError)
        c.maxRelError = relError;
    }
    if (!match && c.mismatches++ == 0)
      c.firstMismatch = i;
  }
  if (wantSquares > 0)
    c.relL2Error = std::sqrt(diffSquares / wantSquares);
  else
    c.relL2Error = diffSquares > 0 ? INFINITY : 0;
  return c;
}

} // namespace kilnrun
