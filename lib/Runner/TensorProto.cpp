#include "TensorProto.h"

#include <onnx/onnx_pb.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

namespace kilnrun {

static std::string readFile(const std::string &path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(path + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad())
    throw Error(path + ": read error");
  return bytes.str();
}

// The repeated field ONNX stores `dtype` in when raw_data is not used; narrow
// types (int8, int16, uint16, bool, float16, bfloat16) go in int32_data.
static const char *typedFieldName(int32_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_FLOAT32:
    return "float_data";
  case KILN_DTYPE_FLOAT64:
    return "double_data";
  case KILN_DTYPE_INT64:
    return "int64_data";
  case KILN_DTYPE_UINT32:
  case KILN_DTYPE_UINT64:
    return "uint64_data";
  default:
    return "int32_data";
  }
}

static size_t typedFieldSize(const onnx::TensorProto &proto, int32_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_FLOAT32:
    return static_cast<size_t>(proto.float_data_size());
  case KILN_DTYPE_FLOAT64:
    return static_cast<size_t>(proto.double_data_size());
  case KILN_DTYPE_INT64:
    return static_cast<size_t>(proto.int64_data_size());
  case KILN_DTYPE_UINT32:
  case KILN_DTYPE_UINT64:
    return static_cast<size_t>(proto.uint64_data_size());
  default:
    return static_cast<size_t>(proto.int32_data_size());
  }
}

// Copies a typed repeated field into `tensor`, narrowing each value to the
// element type; the caller has checked the value count.
template <typename Element, typename Field>
static void copyField(const Field &field, HostTensor &tensor) {
  char *out = static_cast<char *>(tensor.data());
  for (int i = 0; i < field.size(); ++i) {
    Element v = static_cast<Element>(field.Get(i));
    std::memcpy(out + static_cast<size_t>(i) * sizeof(Element), &v,
                sizeof(Element));
  }
}

/// A tensor of a packed type (`bits` per element, low bits first), unpacked
/// to a byte per element.
static NamedTensor readPacked(const onnx::TensorProto &proto,
                              const std::string &path,
                              std::vector<int64_t> dims, size_t count,
                              unsigned bits) {
  size_t perByte = 8 / bits, bytes = (count + perByte - 1) / perByte;
  bool raw = proto.has_raw_data();
  size_t stored = raw ? proto.raw_data().size()
                      : static_cast<size_t>(proto.int32_data_size());
  if (stored != bytes)
    throw Error(path + ": " + std::string(raw ? "raw_data" : "int32_data") +
                " holds " + std::to_string(stored) + " packed bytes; " +
                dtypeName(proto.data_type()) + " " + shapeText(dims) +
                " needs " + std::to_string(bytes));
  NamedTensor result{proto.name(), HostTensor(proto.data_type(), dims)};
  uint8_t *out = static_cast<uint8_t *>(result.tensor.data());
  unsigned mask = (1u << bits) - 1;
  for (size_t i = 0; i < count; ++i) {
    size_t at = i / perByte;
    unsigned byte = raw ? static_cast<uint8_t>(proto.raw_data()[at])
                        : static_cast<uint8_t>(proto.int32_data(
                              static_cast<int>(at)));
    out[i] = static_cast<uint8_t>((byte >> (bits * (i % perByte))) & mask);
  }
  return result;
}

NamedTensor readTensorProto(const std::string &path) {
  std::string contents = readFile(path);
  onnx::TensorProto proto;
  if (!proto.ParseFromString(contents))
    throw Error(path + ": not a serialized onnx.TensorProto");
  if (proto.has_segment())
    throw Error(path + ": segmented tensors are not supported");
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    throw Error(path + ": tensors with external data are not supported");
  int32_t dtype = proto.data_type();
  if (dtype == onnx::TensorProto::UNDEFINED)
    throw Error(path + ": data_type is not set; is this an onnx.TensorProto?");
  if (!dtypeSize(dtype))
    throw Error(path + ": element type " + dtypeName(dtype) +
                " is not supported by kiln-run");

  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  size_t count = elementCount(dims, path), bytes;
  if (__builtin_mul_overflow(count, dtypeSize(dtype), &bytes))
    throw Error(path + ": dims " + shapeText(dims) + " are too large");
  // 4-bit and 2-bit types are packed in the file (raw_data, or int32_data
  // holding one packed byte per value); Kiln's ABI takes a byte each.
  if (unsigned bits = kiln::client::packedBits(dtype))
    return readPacked(proto, path, std::move(dims), count, bits);
  // Check the stored size before allocating: a corrupt file must not make us
  // allocate (and zero) whatever its dims claim.
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != bytes)
      throw Error(path + ": raw_data has " +
                  std::to_string(proto.raw_data().size()) + " bytes; " +
                  dtypeName(dtype) + " " + shapeText(dims) + " needs " +
                  std::to_string(bytes));
  } else if (typedFieldSize(proto, dtype) != count) {
    throw Error(path + ": " + typedFieldName(dtype) + " holds " +
                std::to_string(typedFieldSize(proto, dtype)) + " values; " +
                dtypeName(dtype) + " " + shapeText(dims) + " needs " +
                std::to_string(count));
  }

  NamedTensor result{proto.name(), HostTensor(dtype, dims)};
  HostTensor &tensor = result.tensor;
  if (proto.has_raw_data()) {
    // Little-endian on disk and in memory: a plain copy.
    std::memcpy(tensor.data(), proto.raw_data().data(), bytes);
    return result;
  }
  switch (dtype) {
  case KILN_DTYPE_FLOAT32:
    copyField<float>(proto.float_data(), tensor);
    break;
  case KILN_DTYPE_FLOAT64:
    copyField<double>(proto.double_data(), tensor);
    break;
  case KILN_DTYPE_INT64:
    copyField<int64_t>(proto.int64_data(), tensor);
    break;
  case KILN_DTYPE_UINT32:
    copyField<uint32_t>(proto.uint64_data(), tensor);
    break;
  case KILN_DTYPE_UINT64:
    copyField<uint64_t>(proto.uint64_data(), tensor);
    break;
  case KILN_DTYPE_INT32:
    copyField<int32_t>(proto.int32_data(), tensor);
    break;
  case KILN_DTYPE_INT16:
    copyField<int16_t>(proto.int32_data(), tensor);
    break;
  case KILN_DTYPE_INT8:
    copyField<int8_t>(proto.int32_data(), tensor);
    break;
  case KILN_DTYPE_UINT16:
  case KILN_DTYPE_FLOAT16: // the IEEE half bits
  case KILN_DTYPE_BFLOAT16:
    copyField<uint16_t>(proto.int32_data(), tensor);
    break;
  case KILN_DTYPE_UINT8:
  case KILN_DTYPE_FLOAT8E4M3FN: // the float8 bits
  case KILN_DTYPE_FLOAT8E4M3FNUZ:
  case KILN_DTYPE_FLOAT8E5M2:
  case KILN_DTYPE_FLOAT8E5M2FNUZ:
  case KILN_DTYPE_FLOAT8E8M0:
    copyField<uint8_t>(proto.int32_data(), tensor);
    break;
  case KILN_DTYPE_BOOL: {
    // Any non-zero value is true; store it as 1 like numpy does.
    uint8_t *b = static_cast<uint8_t *>(tensor.data());
    for (size_t i = 0; i < count; ++i)
      b[i] = proto.int32_data(static_cast<int>(i)) != 0;
    break;
  }
  }
  return result;
}

void writeTensorProto(const std::string &path, const std::string &name,
                      const HostTensor &tensor) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(tensor.dtype());
  for (int64_t d : tensor.shape())
    proto.add_dims(d);
  if (unsigned bits = kiln::client::packedBits(tensor.dtype())) {
    // ONNX packs 4-bit and 2-bit elements, low bits first.
    size_t perByte = 8 / bits, count = tensor.numElements();
    std::string packed((count + perByte - 1) / perByte, '\0');
    const uint8_t *in = static_cast<const uint8_t *>(tensor.data());
    for (size_t i = 0; i < count; ++i)
      packed[i / perByte] = static_cast<char>(
          static_cast<uint8_t>(packed[i / perByte]) |
          ((in[i] & ((1u << bits) - 1)) << (bits * (i % perByte))));
    proto.set_raw_data(std::move(packed));
  } else {
    proto.set_raw_data(tensor.data(), tensor.bytes());
  }
  std::string bytes;
  if (!proto.SerializeToString(&bytes))
    throw Error(path + ": cannot serialize the tensor");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    throw Error(path + ": cannot create: " + std::strerror(errno));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    throw Error(path + ": write error");
}

} // namespace kilnrun
