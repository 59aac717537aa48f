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

/// IEEE binary16 and bfloat16 conversions (round to nearest even; NaN stays
/// a quiet NaN).
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bfloat16ToFloat(uint16_t b);
uint16_t floatToBfloat16(float f);

} // namespace kiln::client

#endif // KILN_CLIENT_DTYPE_H
