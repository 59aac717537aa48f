//===- ElementTypes.cpp - ONNX data types and their MLIR types --*- C++ -*-===//
//
// Which MLIR element type carries each ONNX TensorProto data type, and the
// unpacking of the 4-bit and 2-bit types, which ONNX packs into bytes and
// Kiln keeps a byte per element.
//
//===----------------------------------------------------------------------===//
#include "ElementTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <onnx/onnx_pb.h>

using namespace mlir;

/// Element type of an ONNX TensorProto data type, or null if unsupported.
Type mlir::kiln::elementType(MLIRContext *ctx, int32_t dataType) {
  Builder b(ctx);
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  case onnx::TensorProto::INT8:
    return b.getI8Type();
  case onnx::TensorProto::INT16:
    return b.getI16Type();
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case onnx::TensorProto::UINT16:
    return b.getIntegerType(16, false);
  case onnx::TensorProto::UINT32:
    return b.getIntegerType(32, false);
  case onnx::TensorProto::UINT64:
    return b.getIntegerType(64, false);
  // The narrow types of ONNX 1.23 (numbered here: Debian's onnx headers
  // predate them).
  case 17:
    return b.getType<Float8E4M3FNType>();
  case 18:
    return b.getType<Float8E4M3FNUZType>();
  case 19:
    return b.getType<Float8E5M2Type>();
  case 20:
    return b.getType<Float8E5M2FNUZType>();
  case 21:
    return b.getIntegerType(4, false);
  case 22:
    return b.getIntegerType(4);
  case 23:
    return b.getType<Float4E2M1FNType>();
  case 24:
    return b.getType<Float8E8M0FNUType>();
  case 25:
    return b.getIntegerType(2, false);
  case 26:
    return b.getIntegerType(2);
  default:
    return nullptr;
  }
}

std::unique_ptr<std::string>
mlir::kiln::unpackTensor(const ::onnx::TensorProto &tensor, int64_t count,
                         unsigned bits, std::string &why) {
  int64_t perByte = 8 / bits, packedBytes = (count + perByte - 1) / perByte;
  bool rawData = tensor.has_raw_data();
  int64_t stored = rawData ? (int64_t)tensor.raw_data().size()
                           : (int64_t)tensor.int32_data_size();
  if (stored != packedBytes) {
    why = "holds " + std::to_string(stored) + " packed bytes; it needs " +
          std::to_string(packedBytes);
    return nullptr;
  }
  auto out = std::make_unique<std::string>(count, '\0');
  for (int64_t i = 0; i < count; ++i) {
    unsigned byte = rawData ? (uint8_t)tensor.raw_data()[i / perByte]
                            : (uint8_t)tensor.int32_data(i / perByte);
    (*out)[i] = (char)((byte >> (bits * (i % perByte))) & ((1u << bits) - 1));
  }
  return out;
}
