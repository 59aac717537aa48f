//===- DType.h - the element types of the model ABI -------------*- C++ -*-===//
//
// The one table of element types: the ONNX number a model.so uses
// (kiln_dtype), the size of an element and the names each client shows
// (numpy, .npy, KServe v2). Header-only and free of exceptions, so the
// compiler (which writes these names into model.json) reads it too.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CLIENT_DTYPE_H
#define KILN_CLIENT_DTYPE_H

#include "kiln/runtime.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::client {

/// One element type of the model ABI.
struct DType {
  int32_t onnx;         ///< kiln_dtype (ONNX TensorProto.DataType)
  size_t size;          ///< bytes per element
  const char *name;     ///< "float32", "bfloat16", ...
  const char *numpy;    ///< numpy's dtype name; nullptr where numpy has none
  const char *npyDescr; ///< a little-endian .npy descr; nullptr where none
  const char *kserve;   ///< KServe v2 datatype ("FP32", "BF16", ...)
};

/// Every element type a model may use. A model's kiln_dtype_size must agree
/// with `size` (Model::open checks it).
inline constexpr DType kDTypes[] = {
    {KILN_DTYPE_FLOAT32, 4, "float32", "float32", "<f4", "FP32"},
    {KILN_DTYPE_UINT8, 1, "uint8", "uint8", "|u1", "UINT8"},
    {KILN_DTYPE_INT8, 1, "int8", "int8", "|i1", "INT8"},
    {KILN_DTYPE_UINT16, 2, "uint16", "uint16", "<u2", "UINT16"},
    {KILN_DTYPE_INT16, 2, "int16", "int16", "<i2", "INT16"},
    {KILN_DTYPE_INT32, 4, "int32", "int32", "<i4", "INT32"},
    {KILN_DTYPE_INT64, 8, "int64", "int64", "<i8", "INT64"},
    {KILN_DTYPE_BOOL, 1, "bool", "bool", "|b1", "BOOL"},
    {KILN_DTYPE_FLOAT16, 2, "float16", "float16", "<f2", "FP16"},
    {KILN_DTYPE_FLOAT64, 8, "float64", "float64", "<f8", "FP64"},
    {KILN_DTYPE_UINT32, 4, "uint32", "uint32", "<u4", "UINT32"},
    {KILN_DTYPE_UINT64, 8, "uint64", "uint64", "<u8", "UINT64"},
    {KILN_DTYPE_BFLOAT16, 2, "bfloat16", nullptr, nullptr, "BF16"},
    // ONNX's narrow types, one byte per element (runtime.h); numpy and .npy
    // have no names for them, KServe v2 neither (kiln-serve's are its own).
    {KILN_DTYPE_FLOAT8E4M3FN, 1, "float8e4m3fn", nullptr, nullptr, "FP8E4M3FN"},
    {KILN_DTYPE_FLOAT8E4M3FNUZ, 1, "float8e4m3fnuz", nullptr, nullptr,
     "FP8E4M3FNUZ"},
    {KILN_DTYPE_FLOAT8E5M2, 1, "float8e5m2", nullptr, nullptr, "FP8E5M2"},
    {KILN_DTYPE_FLOAT8E5M2FNUZ, 1, "float8e5m2fnuz", nullptr, nullptr,
     "FP8E5M2FNUZ"},
    {KILN_DTYPE_UINT4, 1, "uint4", nullptr, nullptr, "UINT4"},
    {KILN_DTYPE_INT4, 1, "int4", nullptr, nullptr, "INT4"},
    {KILN_DTYPE_FLOAT4E2M1, 1, "float4e2m1", nullptr, nullptr, "FP4E2M1"},
    {KILN_DTYPE_FLOAT8E8M0, 1, "float8e8m0", nullptr, nullptr, "FP8E8M0"},
    {KILN_DTYPE_UINT2, 1, "uint2", nullptr, nullptr, "UINT2"},
    {KILN_DTYPE_INT2, 1, "int2", nullptr, nullptr, "INT2"},
};

/// The entry of `dtype`, or nullptr for a number Kiln does not carry.
inline const DType *findDType(int32_t dtype) {
  for (const DType &t : kDTypes)
    if (t.onnx == dtype)
      return &t;
  return nullptr;
}

/// Bytes per element of `dtype`, 0 for a number Kiln does not carry.
inline size_t dtypeSize(int32_t dtype) {
  const DType *t = findDType(dtype);
  return t ? t->size : 0;
}

/// "float32", ... for messages; "string" or "dtype <n>" for other numbers.
inline std::string dtypeName(int32_t dtype) {
  if (const DType *t = findDType(dtype))
    return t->name;
  if (dtype == 8) // ONNX's STRING: worth naming in "cannot read" messages
    return "string";
  return "dtype " + std::to_string(dtype);
}

/// Bits per element of `dtype` in an ONNX file, where ONNX packs several
/// elements into a byte (4 for int4, uint4 and float4e2m1, 2 for int2 and
/// uint2, low bits first); 0 for every other type.
inline unsigned packedBits(int32_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_UINT4:
  case KILN_DTYPE_INT4:
  case KILN_DTYPE_FLOAT4E2M1:
    return 4;
  case KILN_DTYPE_UINT2:
  case KILN_DTYPE_INT2:
    return 2;
  default:
    return 0;
  }
}

/// Whether `dtype` is one of the 8-bit or 4-bit float formats.
inline bool isNarrowFloat(int32_t dtype) {
  return (dtype >= KILN_DTYPE_FLOAT8E4M3FN &&
          dtype <= KILN_DTYPE_FLOAT8E5M2FNUZ) ||
         dtype == KILN_DTYPE_FLOAT4E2M1 || dtype == KILN_DTYPE_FLOAT8E8M0;
}

/// The value of one element of a narrow type (its byte as runtime.h lays it
/// out): exact for the float formats (NaN for their NaN codes), the
/// two's-complement or unsigned value for the 4-bit and 2-bit integers.
double narrowValue(int32_t dtype, uint8_t bits);

/// IEEE binary16 and bfloat16 conversions (round to nearest even; NaN stays
/// a quiet NaN).
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bfloat16ToFloat(uint16_t b);
uint16_t floatToBfloat16(float f);

} // namespace kiln::client

#endif // KILN_CLIENT_DTYPE_H
