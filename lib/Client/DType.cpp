//===- DType.cpp - half and bfloat16 element conversions ------------------===//

#include "kiln/Client/DType.h"

#include <cmath>
#include <cstring>

namespace kiln::client {

namespace {
uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}
} // namespace

float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24 is exact in float.
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31)
    return bitsFloat(sign | 0x7f800000u | (mantissa << 13));
  return bitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t floatToHalf(float f) {
  uint32_t x = floatBits(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) // inf or NaN (keep NaN quiet)
    return sign | 0x7c00u | (magnitude > 0x7f800000u ? 0x200u : 0u);
  if (magnitude >= 0x477ff000u) // rounds to a value above 65504
    return sign | 0x7c00u;
  if (magnitude < 0x38800000u) { // below 2^-14: a half subnormal
    // Scaling by 2^24 is exact; nearbyint rounds to nearest even.
    float scaled = bitsFloat(magnitude) * 16777216.0f;
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  uint32_t base =
      (((magnitude >> 23) - 112) << 10) | ((magnitude >> 13) & 0x3ffu);
  uint32_t rest = magnitude & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (base & 1u)))
    ++base; // a carry into the exponent is the correct rounding
  return sign | static_cast<uint16_t>(base);
}

float bfloat16ToFloat(uint16_t b) {
  return bitsFloat(static_cast<uint32_t>(b) << 16);
}

uint16_t floatToBfloat16(float f) {
  uint32_t x = floatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) // NaN stays NaN
    return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

namespace {
/// A float of `expBits` exponent and `manBits` mantissa bits and `bias`,
/// without infinities or NaNs (those are the callers'), sign in bit
/// expBits + manBits.
double smallFloat(unsigned bits, unsigned expBits, unsigned manBits,
                  int bias) {
  unsigned man = bits & ((1u << manBits) - 1);
  unsigned exp = (bits >> manBits) & ((1u << expBits) - 1);
  bool negative = (bits >> (expBits + manBits)) & 1;
  double v = exp == 0 ? std::ldexp(man, 1 - bias - (int)manBits)
                      : std::ldexp((1u << manBits) + man,
                                   (int)exp - bias - (int)manBits);
  return negative ? -v : v;
}
} // namespace

double narrowValue(int32_t dtype, uint8_t bits) {
  switch (dtype) {
  case KILN_DTYPE_FLOAT8E4M3FN:
    if ((bits & 0x7f) == 0x7f)
      return NAN;
    return smallFloat(bits, 4, 3, 7);
  case KILN_DTYPE_FLOAT8E4M3FNUZ:
    if (bits == 0x80)
      return NAN;
    return smallFloat(bits, 4, 3, 8);
  case KILN_DTYPE_FLOAT8E5M2:
    if ((bits & 0x7c) == 0x7c)
      return (bits & 3) ? NAN : (bits & 0x80 ? -INFINITY : INFINITY);
    return smallFloat(bits, 5, 2, 15);
  case KILN_DTYPE_FLOAT8E5M2FNUZ:
    if (bits == 0x80)
      return NAN;
    return smallFloat(bits, 5, 2, 16);
  case KILN_DTYPE_FLOAT4E2M1:
    return smallFloat(bits & 0xf, 2, 1, 1);
  case KILN_DTYPE_FLOAT8E8M0:
    return bits == 0xff ? NAN : std::ldexp(1.0, (int)bits - 127);
  case KILN_DTYPE_UINT4:
    return bits & 0xf;
  case KILN_DTYPE_INT4:
    return (int)(bits & 0xf) - ((bits & 0x8) ? 16 : 0);
  case KILN_DTYPE_UINT2:
    return bits & 0x3;
  case KILN_DTYPE_INT2:
    return (int)(bits & 0x3) - ((bits & 0x2) ? 4 : 0);
  default:
    return 0;
  }
}

} // namespace kiln::client
