//===- ElementTypes.h - ONNX data types and their MLIR types ----*- C++ -*-===//
#ifndef KILN_IMPORT_ONNX_ELEMENTTYPES_H
#define KILN_IMPORT_ONNX_ELEMENTTYPES_H

#include "mlir/IR/Types.h"

#include <memory>
#include <string>

namespace onnx {
class TensorProto;
} // namespace onnx

namespace mlir::kiln {

/// Element type of an ONNX TensorProto data type, or null if unsupported.
/// The 4-bit and 2-bit types (int4, uint4, float4e2m1, int2, uint2) take a
/// byte per element wherever Kiln stores them.
Type elementType(MLIRContext *ctx, int32_t dataType);

/// The `count` elements of a tensor of a `bits`-bit type (4 or 2), which
/// ONNX packs low bits first in raw_data or a packed byte per int32_data
/// value (never external data), a byte each; null with `why` set when the
/// data does not match.
std::unique_ptr<std::string> unpackTensor(const ::onnx::TensorProto &tensor,
                                          int64_t count, unsigned bits,
                                          std::string &why);

} // namespace mlir::kiln

#endif // KILN_IMPORT_ONNX_ELEMENTTYPES_H
