//===- OnnxImporter.cpp - ONNX protobuf to the onnx dialect -----*- C++ -*-===//
//
// One ONNX node becomes one generic `onnx.<OpType>` op with its attributes
// verbatim and its node name as location. Initializer bytes are moved out of
// the protobuf message into dense resources, so after parsing they are never
// copied again. protobuf and onnx throw; every throw is caught here and turned
// into a diagnostic.
//
//===----------------------------------------------------------------------===//
#include "kiln/Import/Onnx/OnnxImporter.h"
#include "ElementTypes.h"
#include "HiddenFromInference.h"
#include "ModelValidation.h"
#include "SafeInference.h"
#include "StaleDeclarations.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "kiln/Dialect/Onnx/OnnxDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/BuiltinDialect.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <exception>
#include <functional>
#include <memory>

using namespace mlir;
using mlir::kiln::ImportOptions;
using mlir::kiln::DimBound;
using mlir::kiln::SymbolicDim;
using mlir::kiln::toString;

namespace {

// Initializers with fewer elements than this stay inline (DenseElementsAttr):
// they are shapes, axes and scalars that the compiler reads and folds.
constexpr int64_t kInlineElements = 64;

std::string dataTypeName(int32_t dataType) {
  if (onnx::TensorProto::DataType_IsValid(dataType))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(dataType));
  return "data type " + std::to_string(dataType);
}

class Importer {
public:
  Importer(MLIRContext &ctx, const ImportOptions &options)
      : ctx(ctx), options(options), builder(&ctx) {}

  OwningOpRef<ModuleOp> run(const std::string &path);

private:
  LogicalResult parse(const std::string &path);
  LogicalResult importGraph(ModuleOp module);
  LogicalResult importNode(const onnx::NodeProto &node, int index);
  LogicalResult importSubgraph(onnx::GraphProto &graph, Region &region,
                               const std::string &where, Location loc);
  FailureOr<ElementsAttr> importTensor(onnx::TensorProto &tensor,
                                       const std::string &where);
  FailureOr<ElementsAttr> importExternalTensor(const onnx::TensorProto &tensor,
                                               RankedTensorType type,
                                               size_t bytes,
                                               const std::string &where,
                                               Location loc);
  FailureOr<Attribute> importAttribute(onnx::AttributeProto &attr,
                                       const std::string &where);
  LogicalResult bindSymbols(ArrayRef<const onnx::ValueInfoProto *> inputs);
  FailureOr<RankedTensorType> inputType(const onnx::ValueInfoProto &info);
  Type valueType(const std::string &name);
  InFlightDiagnostic error(Location loc) { return emitError(loc); }

  MLIRContext &ctx;
  const ImportOptions &options;
  OpBuilder builder;
  onnx::ModelProto model;
  std::string fileName;
  std::string hash;
  llvm::StringMap<Value> values;          // ONNX value name -> SSA value
  llvm::StringMap<Type> inferredTypes;    // from ONNX shape inference
  llvm::StringMap<int64_t> opsets;        // domain -> version
  llvm::StringMap<DimBound> symbols;      // dim_param -> --dim / --input-shape
  llvm::StringMap<ArrayAttr> dimParams;   // input -> onnx.dim_params
  Value noValue;
};

LogicalResult Importer::parse(const std::string &path) {
  Location loc = FileLineColLoc::get(&ctx, path, 0, 0);
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return error(loc) << "cannot read '" << path
                      << "': " << buffer.getError().message();
  llvm::StringRef bytes = (*buffer)->getBuffer();
  hash = llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(bytes)),
                     /*LowerCase=*/true);
  llvm::StringRef name(path);
  bool text = name.ends_with(".onnxtxt") || name.ends_with(".textproto") ||
              name.ends_with(".pbtxt");
  bool ok;
  if (text) {
    ok = google::protobuf::TextFormat::ParseFromString(bytes.str(), &model);
  } else {
    google::protobuf::io::ArrayInputStream stream(bytes.data(),
                                                  (int)bytes.size());
    google::protobuf::io::CodedInputStream coded(&stream);
    coded.SetTotalBytesLimit(INT32_MAX);
    ok = bytes.size() < INT32_MAX && model.ParseFromCodedStream(&coded) &&
         coded.ConsumedEntireMessage();
  }
  if (!ok)
    return error(loc) << "'" << path
                      << "' is not a valid ONNX model (protobuf parsing failed; "
                         "the file may be truncated or not an ONNX file)";
  if (!model.has_graph())
    return error(loc) << "'" << path << "' has no graph";
  return success();
}

FailureOr<ElementsAttr> Importer::importTensor(onnx::TensorProto &tensor,
                                               const std::string &where) {
  Location loc = NameLoc::get(builder.getStringAttr(
      tensor.name().empty() ? where : tensor.name()));
  Type elt = mlir::kiln::elementType(&ctx, tensor.data_type());
  if (!elt)
    return error(loc) << where << ": tensor '" << tensor.name() << "' has "
                      << dataTypeName(tensor.data_type())
                      << ", which Kiln does not support";
  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return error(loc) << where << ": tensor '" << tensor.name()
                      << "' has a negative dimension";
  // Bools and the 4-bit and 2-bit types take a byte per element in memory.
  unsigned bitWidth = std::max(8u, elt.getIntOrFloatBitWidth());
  std::optional<int64_t> checkedBytes =
      mlir::kiln::checkedTensorBytes(shape, bitWidth / 8);
  if (!checkedBytes)
    return error(loc) << where << ": tensor '" << tensor.name()
                      << "' has dimensions whose byte size does not fit in "
                         "64 bits";
  auto type = RankedTensorType::get(shape, elt);
  int64_t count = type.getNumElements();
  size_t bytes = (size_t)*checkedBytes;

  // 4-bit and 2-bit types are packed in the file and a byte each in Kiln.
  unsigned packed = elt.getIntOrFloatBitWidth();
  bool subByte = packed > 1 && packed < 8;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    if (subByte)
      return error(loc) << where << ": tensor '" << tensor.name() << "' of "
                        << type << " has external data, which Kiln reads for "
                        << "types of 8 bits or more only; store the tensor in "
                           "the model file";
    return importExternalTensor(tensor, type, bytes, where, loc);
  }

  // Gather the bytes: raw_data is moved out of the message, typed fields are
  // converted into a fresh buffer.
  std::unique_ptr<std::string> raw;
  if (subByte) {
    std::string why;
    raw = mlir::kiln::unpackTensor(tensor, type.getNumElements(), packed, why);
    if (!raw)
      return error(loc) << where << ": tensor '" << tensor.name() << "' of "
                        << type << " " << why;
  } else if (tensor.has_raw_data()) {
    raw.reset(tensor.release_raw_data());
  } else {
    raw = std::make_unique<std::string>();
    raw->resize(bytes);
    char *out = raw->data();
    auto fill = [&](auto &field, auto convert) -> bool {
      if ((int64_t)field.size() != count)
        return false;
      for (int64_t i = 0; i < count; ++i)
        convert(out, i, field.Get(i));
      return true;
    };
    bool ok = count == 0;
    switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT:
      ok = fill(tensor.float_data(), [](char *o, int64_t i, float v) {
        memcpy(o + 4 * i, &v, 4);
      });
      break;
    case onnx::TensorProto::DOUBLE:
      ok = fill(tensor.double_data(), [](char *o, int64_t i, double v) {
        memcpy(o + 8 * i, &v, 8);
      });
      break;
    case onnx::TensorProto::INT64:
      ok = fill(tensor.int64_data(), [](char *o, int64_t i, int64_t v) {
        memcpy(o + 8 * i, &v, 8);
      });
      break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      ok = fill(tensor.uint64_data(), [&](char *o, int64_t i, uint64_t v) {
        memcpy(o + (bitWidth / 8) * i, &v, bitWidth / 8);
      });
      break;
    default: // int32 field carries int32, int16, int8, uint16, uint8, bool, fp16
      ok = fill(tensor.int32_data(), [&](char *o, int64_t i, int32_t v) {
        memcpy(o + (bitWidth / 8) * i, &v, bitWidth / 8);
      });
      break;
    }
    if (!ok && count != 0)
      return error(loc) << where << ": tensor '" << tensor.name()
                        << "' holds the wrong number of values for shape "
                        << type;
  }
  if (raw->size() != bytes)
    return error(loc) << where << ": tensor '" << tensor.name() << "' has "
                      << raw->size() << " bytes of data; its type " << type
                      << " needs " << bytes;

  // Bools stay dense attributes at any size: MLIR stores i1 elements one bit
  // each and has no byte-per-element resource form for them (a resource of
  // i1 failed later with "no known conversion for innermost element type").
  if (count < kInlineElements || elt.isInteger(1)) {
    if (elt.isInteger(1)) {
      SmallVector<bool> bits;
      for (char c : *raw)
        bits.push_back(c != 0);
      return ElementsAttr(DenseElementsAttr::get(type, bits));
    }
    bool splat = false;
    if (!DenseElementsAttr::isValidRawBuffer(type, ArrayRef<char>(*raw), splat))
      return error(loc) << where << ": tensor '" << tensor.name()
                        << "' has malformed data";
    return ElementsAttr(
        DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(*raw)));
  }
  // Hand the buffer to a resource blob that frees it when MLIR is done.
  std::string *owned = raw.release();
  ArrayRef<char> data(owned->data(), owned->size());
  AsmResourceBlob blob(
      data, alignof(int64_t),
      [owned](void *, size_t, size_t) { delete owned; },
      /*dataIsMutable=*/false);
  std::string blobName = tensor.name().empty() ? "tensor" : tensor.name();
  return ElementsAttr(
      DenseResourceElementsAttr::get(type, blobName, std::move(blob)));
}

/// Weights in a side file: the file is mapped (never read into a buffer) and
/// the mapping is handed to MLIR as the resource's bytes, so they are not
/// copied at all before code generation.
FailureOr<ElementsAttr>
Importer::importExternalTensor(const onnx::TensorProto &tensor,
                               RankedTensorType type, size_t bytes,
                               const std::string &where, Location loc) {
  std::string location;
  uint64_t offset = 0, length = bytes;
  for (const auto &entry : tensor.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset" || entry.key() == "length") {
      uint64_t v;
      if (llvm::StringRef(entry.value()).getAsInteger(10, v))
        return error(loc) << where << ": external data " << entry.key()
                          << " '" << entry.value() << "' is not a number";
      (entry.key() == "offset" ? offset : length) = v;
    }
  }
  if (location.empty())
    return error(loc) << where << ": external data has no location";
  // Only files beside the model, as ONNX requires: no absolute paths and no
  // way out of the model's directory.
  llvm::SmallString<256> path(llvm::sys::path::parent_path(fileName));
  if (llvm::sys::path::is_absolute(location) ||
      llvm::any_of(llvm::make_range(llvm::sys::path::begin(location),
                                    llvm::sys::path::end(location)),
                   [](llvm::StringRef c) { return c == ".."; }))
    return error(loc) << where << ": external data location '" << location
                      << "' must be a relative path inside the model's "
                         "directory";
  llvm::sys::path::append(path, location);
  // Links are followed only as far as they stay inside: the file's final
  // path must lie in the model's directory (its final path too).
  llvm::SmallString<256> realDir, realFile;
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(fileName));
  if (dir.empty())
    dir = ".";
  if (!llvm::sys::fs::real_path(dir, realDir) &&
      !llvm::sys::fs::real_path(path, realFile)) {
    llvm::StringRef file(realFile);
    if (!file.starts_with(realDir) ||
        !llvm::sys::path::is_separator(file[realDir.size()]))
      return error(loc) << where << ": external data '" << location
                        << "' leads outside the model's directory (through "
                           "a symbolic link); Kiln reads only files inside it";
    if (!llvm::sys::fs::is_regular_file(realFile))
      return error(loc) << where << ": external data '" << location
                        << "' is not a regular file";
  }
  if (length != bytes)
    return error(loc) << where << ": external data holds " << length
                      << " bytes; the type " << type << " needs " << bytes;
  uint64_t fileSize = 0;
  if (std::error_code ec = llvm::sys::fs::file_size(path, fileSize))
    return error(loc) << where << ": cannot open external data '" << path
                      << "': " << ec.message();
  if (offset > fileSize || length > fileSize - offset)
    return error(loc) << where << ": external data '" << location
                      << "' is truncated: bytes " << offset << ".."
                      << offset + length << " requested, the file has "
                      << fileSize;
  if (bytes == 0)
    return ElementsAttr(DenseElementsAttr::getFromRawBuffer(type, {}));
  auto buffer = llvm::MemoryBuffer::getFileSlice(path, length, offset,
                                                 /*IsVolatile=*/false);
  if (!buffer)
    return error(loc) << where << ": cannot map external data '" << path
                      << "': " << buffer.getError().message();
  if (type.getElementType().isInteger(1)) {
    // Bools as a dense attribute, as importTensor keeps them.
    SmallVector<bool> bits;
    for (char c : (*buffer)->getBuffer())
      bits.push_back(c != 0);
    return ElementsAttr(DenseElementsAttr::get(type, bits));
  }
  std::shared_ptr<llvm::MemoryBuffer> mapped(std::move(*buffer));
  ArrayRef<char> data(mapped->getBufferStart(), mapped->getBufferSize());
  // The blob's alignment must hold for wherever the slice starts.
  size_t alignment = 8;
  while (alignment > 1 &&
         reinterpret_cast<uintptr_t>(data.data()) % alignment)
    alignment /= 2;
  AsmResourceBlob blob(
      data, alignment, [mapped](void *, size_t, size_t) mutable { mapped.reset(); },
      /*dataIsMutable=*/false);
  return ElementsAttr(DenseResourceElementsAttr::get(
      type, tensor.name().empty() ? "tensor" : tensor.name(), std::move(blob)));
}

FailureOr<Attribute> Importer::importAttribute(onnx::AttributeProto &attr,
                                               const std::string &where) {
  switch (attr.type()) {
  case onnx::AttributeProto::INT:
    return Attribute(builder.getI64IntegerAttr(attr.i()));
  case onnx::AttributeProto::FLOAT:
    return Attribute(builder.getF32FloatAttr(attr.f()));
  case onnx::AttributeProto::STRING:
    return Attribute(builder.getStringAttr(attr.s()));
  case onnx::AttributeProto::INTS: {
    SmallVector<Attribute> v;
    for (int64_t i : attr.ints())
      v.push_back(builder.getI64IntegerAttr(i));
    return Attribute(builder.getArrayAttr(v));
  }
  case onnx::AttributeProto::FLOATS: {
    SmallVector<Attribute> v;
    for (float f : attr.floats())
      v.push_back(builder.getF32FloatAttr(f));
    return Attribute(builder.getArrayAttr(v));
  }
  case onnx::AttributeProto::STRINGS: {
    SmallVector<Attribute> v;
    for (const std::string &s : attr.strings())
      v.push_back(builder.getStringAttr(s));
    return Attribute(builder.getArrayAttr(v));
  }
  case onnx::AttributeProto::TENSOR: {
    FailureOr<ElementsAttr> t = importTensor(*attr.mutable_t(), where);
    if (failed(t))
      return failure();
    return Attribute(*t);
  }
  default:
    // Sparse tensors, type protos and lists of graphs: kept as a marker so
    // that OnnxToKiln can report the node as unsupported. (Single subgraphs
    // become regions of the op, see importNode.)
    return Attribute(builder.getStringAttr(
        "<unsupported " +
        onnx::AttributeProto::AttributeType_Name(attr.type()) + " attribute>"));
  }
}

/// "2x?x3" for messages.
static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + (ShapedType::isDynamic(shape[i])
                               ? std::string("?")
                               : std::to_string(shape[i]));
  return s;
}

/// What a user can write for an input whose dimensions are open, on the
/// command line ("x=D0x3") or in Python ("(D0, 3)").
static std::string shapeHint(const onnx::ValueInfoProto &info, bool python) {
  std::string s = python ? "(" : info.name() + "=";
  const auto &shape = info.type().tensor_type().shape();
  for (int i = 0; i < shape.dim_size(); ++i) {
    const auto &dim = shape.dim(i);
    s += i ? (python ? ", " : "x") : "";
    s += dim.has_dim_value() && dim.dim_value() >= 0
             ? std::to_string(dim.dim_value())
             : "D" + std::to_string(i);
  }
  return s + (python ? (shape.dim_size() == 1 ? ",)" : ")") : "");
}

LogicalResult
Importer::bindSymbols(ArrayRef<const onnx::ValueInfoProto *> inputs) {
  Location loc = UnknownLoc::get(&ctx);
  llvm::StringMap<std::string> from; // symbol -> the flag that bound it
  std::vector<std::string> graphSymbols;
  for (const onnx::ValueInfoProto *info : inputs)
    for (const auto &dim : info->type().tensor_type().shape().dim())
      if (!dim.has_dim_value() && dim.has_dim_param() &&
          !llvm::is_contained(graphSymbols, dim.dim_param()))
        graphSymbols.push_back(dim.dim_param());
  for (const auto &[symbol, bound] : options.dims) {
    if (!llvm::is_contained(graphSymbols, symbol)) {
      std::string known;
      for (const std::string &g : graphSymbols)
        known += (known.empty() ? "'" : ", '") + g + "'";
      return error(loc) << "--dim names '" << symbol
                        << "', which no graph input uses as a dim_param ("
                        << (known.empty() ? "the inputs have none"
                                          : "they use " + known)
                        << ")";
    }
    std::string flag = "--dim " + symbol + "=" + toString(bound);
    if (symbols.count(symbol) && !(symbols[symbol] == bound))
      return error(loc) << flag << " contradicts " << from[symbol];
    symbols[symbol] = bound;
    from[symbol] = flag;
  }
  // An --input-shape that gives a dim_param a size gives it to every input
  // that shares the dim_param.
  for (const auto &[name, dims] : options.inputShapes)
    for (const onnx::ValueInfoProto *info : inputs) {
      const auto &tt = info->type().tensor_type();
      if (info->name() != name || !tt.has_shape() ||
          (size_t)tt.shape().dim_size() != dims.size())
        continue;
      for (int i = 0; i < tt.shape().dim_size(); ++i) {
        const auto &dim = tt.shape().dim(i);
        if (dim.has_dim_value() || !dim.has_dim_param())
          continue;
        std::string flag = "--input-shape " + name + "=" + toString(dims) +
                           " ('" + dim.dim_param() + "' at index " +
                           std::to_string(i) + " is " + toString(dims[i]) + ")";
        auto it = symbols.find(dim.dim_param());
        if (it != symbols.end() && !(it->second == dims[i]))
          return error(loc) << flag << " contradicts "
                            << from[dim.dim_param()] << "; inputs that share a "
                            << "dim_param must have the same size there";
        symbols[dim.dim_param()] = dims[i];
        from[dim.dim_param()] = flag;
      }
    }
  return success();
}

FailureOr<RankedTensorType>
Importer::inputType(const onnx::ValueInfoProto &info) {
  Location loc = NameLoc::get(builder.getStringAttr(info.name()));
  if (!info.type().has_tensor_type())
    return error(loc) << "graph input '" << info.name()
                      << "' is not a tensor; only tensor inputs are supported";
  const auto &tt = info.type().tensor_type();
  Type elt = mlir::kiln::elementType(&ctx, tt.elem_type());
  if (!elt)
    return error(loc) << "graph input '" << info.name() << "' has "
                      << dataTypeName(tt.elem_type())
                      << ", which Kiln does not support";
  const std::vector<DimBound> *given = nullptr;
  for (const auto &[name, dims] : options.inputShapes)
    if (name == info.name())
      given = &dims;
  if (!tt.has_shape() && !given)
    return error(loc) << "graph input '" << info.name()
                      << "' has no shape; give one with --input-shape "
                      << info.name() << "=D0xD1x... (Python: input_shapes={'"
                      << info.name() << "': (D0, D1, ...)})";
  // A given shape may only fill in what the graph leaves open.
  if (given && tt.has_shape() &&
      (size_t)tt.shape().dim_size() != given->size())
    return error(loc) << "the shape given for graph input '" << info.name()
                      << "' has rank " << given->size()
                      << ", but the graph declares rank "
                      << tt.shape().dim_size();
  int64_t rank = given ? given->size() : tt.shape().dim_size();
  SmallVector<int64_t> shape;
  SmallVector<Attribute> params;
  bool ok = true;
  for (int64_t i = 0; i < rank; ++i) {
    const onnx::TensorShapeProto::Dimension *dim =
        tt.has_shape() ? &tt.shape().dim(i) : nullptr;
    std::string param =
        dim && dim->has_dim_param() && !dim->has_dim_value() ? dim->dim_param()
                                                             : "";
    std::optional<DimBound> bound;
    if (dim && dim->has_dim_value() && dim->dim_value() >= 0) {
      int64_t declared = dim->dim_value();
      if (given && !(*given)[i].contains(declared))
        return error(loc) << "the shape given for graph input '" << info.name()
                          << "' has " << toString((*given)[i]) << " at index "
                          << i << ", but the graph declares " << declared;
      bound = DimBound::exactly(declared);
    } else if (given) {
      bound = (*given)[i];
    } else if (!param.empty() && symbols.count(param)) {
      bound = symbols.lookup(param);
    }
    params.push_back(builder.getStringAttr(param));
    if (bound && bound->isStatic()) {
      shape.push_back(bound->min);
      continue;
    }
    shape.push_back(ShapedType::kDynamic);
    if (options.allowDynamicInputs ||
        (options.allowRangedInputs && bound && bound->max >= 0)) {
      if (options.symbolicDims)
        options.symbolicDims->push_back({info.name(), i, param, bound, {}});
      continue;
    }
    ok = false;
    std::string symbol = param.empty() ? "" : " '" + param + "'";
    if (bound) {
      error(loc) << "graph input '" << info.name() << "' has the range "
                 << toString(*bound) << " at index " << i
                 << (param.empty() ? "" : " (dim_param '" + param + "')")
                 << ", but Kiln cannot yet compile a symbolic dimension: give "
                    "it one size and compile one .so per size (--batch-sizes "
                    "puts several batch sizes in one .so); kiln-compile "
                    "--check checks every node with the dimension symbolic";
      continue;
    }
    InFlightDiagnostic diag =
        error(loc) << "graph input '" << info.name() << "' has a"
                   << (param.empty() ? "n unknown dimension" : " symbolic dimension")
                   << symbol << " at index " << i
                   << "; fix the shape with --input-shape "
                   << shapeHint(info, false) << " (Python: input_shapes={'"
                   << info.name() << "': " << shapeHint(info, true) << "})";
    if (!param.empty())
      diag << " or the symbol with --dim " << param << "=N (Python: dims={'"
           << param << "': N})";
  }
  if (!ok)
    return failure();
  if (options.symbolicDims)
    for (SymbolicDim &d : *options.symbolicDims)
      if (d.input == info.name())
        for (int64_t size : shape)
          d.inputShape.push_back(ShapedType::isDynamic(size) ? -1 : size);
  auto type = RankedTensorType::get(shape, elt);
  SmallVector<int64_t> known;
  for (int64_t d : shape)
    known.push_back(ShapedType::isDynamic(d) ? 1 : d);
  unsigned bits = elt.isInteger(1) ? 8 : elt.getIntOrFloatBitWidth();
  if (!mlir::kiln::checkedTensorBytes(known, std::max(1u, bits / 8)))
    return error(loc) << "graph input '" << info.name() << "' has the shape "
                      << shapeString(shape)
                      << ", whose byte size does not fit in 64 bits";
  if (!type.hasStaticShape())
    dimParams[info.name()] = builder.getArrayAttr(params);
  return type;
}

Type Importer::valueType(const std::string &name) {
  auto it = inferredTypes.find(name);
  if (it != inferredTypes.end())
    return it->second;
  return UnrankedTensorType::get(builder.getF32Type());
}

LogicalResult Importer::importNode(const onnx::NodeProto &constNode,
                                   int index) {
  onnx::NodeProto &node = const_cast<onnx::NodeProto &>(constNode);
  std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  int64_t opset = opsets.lookup(domain);
  std::string name = node.name().empty()
                         ? node.op_type() + "_" + std::to_string(index)
                         : node.name();
  std::string where = "node '" + name + "' (" + node.op_type() + ", opset " +
                      std::to_string(opset) + ")";
  Location loc = NameLoc::get(builder.getStringAttr(name));

  SmallVector<Value> operands;
  for (const std::string &input : node.input()) {
    if (input.empty()) {
      if (!noValue)
        noValue = mlir::kiln::onnx::NoValueOp::create(builder, loc, builder.getNoneType()).getResult();
      operands.push_back(noValue);
      continue;
    }
    Value v = values.lookup(input);
    if (!v)
      return error(loc) << where << ": input '" << input
                        << "' is not a graph input, an initializer or the "
                           "output of an earlier node";
    operands.push_back(v);
  }
  SmallVector<NamedAttribute> attrs;
  // Subgraphs (If's branches, Loop's and Scan's bodies) become regions, in
  // attribute order; `onnx.regions` names them.
  SmallVector<onnx::GraphProto *> subgraphs;
  SmallVector<Attribute> regionNames;
  for (onnx::AttributeProto &attr : *node.mutable_attribute()) {
    if (attr.type() == onnx::AttributeProto::GRAPH) {
      subgraphs.push_back(attr.mutable_g());
      regionNames.push_back(builder.getStringAttr(attr.name()));
      continue;
    }
    FailureOr<Attribute> a = importAttribute(attr, where);
    if (failed(a))
      return failure();
    attrs.push_back(builder.getNamedAttr(attr.name(), *a));
  }
  SmallVector<Type> resultTypes;
  for (const std::string &output : node.output())
    resultTypes.push_back(output.empty() ? builder.getNoneType()
                                         : valueType(output));
  std::string opName = "onnx." + (domain.empty() ? "" : domain + ".") +
                       node.op_type();
  OperationState state(loc, opName);
  state.addOperands(operands);
  state.addAttributes(attrs);
  state.addTypes(resultTypes);
  if (!subgraphs.empty())
    state.addAttribute("onnx.regions", builder.getArrayAttr(regionNames));
  for (size_t i = 0; i < subgraphs.size(); ++i)
    state.addRegion();
  Operation *op = builder.create(state);
  for (auto [graph, region] : llvm::zip(subgraphs, op->getRegions()))
    if (failed(importSubgraph(*graph, region, where, loc)))
      return failure();
  for (auto [output, result] : llvm::zip(node.output(), op->getResults()))
    if (!output.empty())
      values[output] = result;
  return success();
}

LogicalResult Importer::importSubgraph(onnx::GraphProto &graph, Region &region,
                                       const std::string &where,
                                       Location loc) {
  Block *block = new Block();
  region.push_back(block);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(block);
  // Outer values stay visible (ONNX subgraphs capture by name); the
  // subgraph's own names shadow them until it ends.
  llvm::StringMap<Value> outer = values;
  Value outerNoValue = noValue;
  noValue = nullptr;
  llvm::scope_exit restore([&] {
    values = std::move(outer);
    noValue = outerNoValue;
  });
  for (const onnx::ValueInfoProto &in : graph.input()) {
    Type type;
    if (in.type().has_tensor_type()) {
      const auto &tt = in.type().tensor_type();
      Type elt = mlir::kiln::elementType(&ctx, tt.elem_type());
      if (!elt)
        return error(loc) << where << ": subgraph '" << graph.name()
                          << "' input '" << in.name() << "' has "
                          << dataTypeName(tt.elem_type())
                          << ", which Kiln does not support";
      if (tt.has_shape()) {
        SmallVector<int64_t> shape;
        for (const auto &dim : tt.shape().dim())
          shape.push_back(dim.has_dim_value() ? dim.dim_value()
                                              : ShapedType::kDynamic);
        type = RankedTensorType::get(shape, elt);
      } else {
        type = UnrankedTensorType::get(elt);
      }
    } else if (in.type().has_sequence_type() &&
               in.type().sequence_type().elem_type().has_tensor_type()) {
      // A sequence a Loop carries (`outs.append(y)` in a scripted loop):
      // typed as its element, for the conversion to fold into a scan output
      // (ControlFlow.cpp); the Sequence* ops themselves are not converted.
      int32_t dtype =
          in.type().sequence_type().elem_type().tensor_type().elem_type();
      Type elt = mlir::kiln::elementType(&ctx, dtype);
      if (!elt)
        return error(loc) << where << ": subgraph '" << graph.name()
                          << "' input '" << in.name() << "' is a sequence of "
                          << dataTypeName(dtype)
                          << ", which Kiln does not support";
      type = UnrankedTensorType::get(elt);
    } else if (!in.type().has_tensor_type() &&
               in.type().value_case() != onnx::TypeProto::VALUE_NOT_SET) {
      return error(loc) << where << ": subgraph '" << graph.name()
                        << "' input '" << in.name()
                        << "' is not a tensor; only tensor values are supported";
    } else {
      // Untyped (allowed in subgraphs): the caller decides.
      type = UnrankedTensorType::get(builder.getF32Type());
    }
    values[in.name()] = block->addArgument(type, loc);
  }
  for (onnx::TensorProto &init : *graph.mutable_initializer()) {
    FailureOr<ElementsAttr> value =
        importTensor(init, "initializer '" + init.name() + "'");
    if (failed(value))
      return failure();
    values[init.name()] = mlir::kiln::onnx::InitializerOp::create(
        builder, NameLoc::get(builder.getStringAttr(init.name())),
        value->getType(), init.name(), *value);
  }
  for (int i = 0; i < graph.node_size(); ++i)
    if (failed(importNode(graph.node(i), i)))
      return failure();
  SmallVector<Value> results;
  for (const auto &out : graph.output()) {
    Value v = values.lookup(out.name());
    if (!v)
      return error(loc) << where << ": subgraph '" << graph.name()
                        << "' output '" << out.name()
                        << "' is not produced by any node, input or initializer";
    results.push_back(v);
  }
  OperationState yield(loc, "onnx.Yield");
  yield.addOperands(results);
  builder.create(yield);
  return success();
}

LogicalResult Importer::importGraph(ModuleOp module) {
  onnx::GraphProto &graph = *model.mutable_graph();
  for (const auto &imp : model.opset_import())
    opsets[imp.domain() == "ai.onnx" ? "" : imp.domain()] = imp.version();
  SmallVector<NamedAttribute> opsetAttrs;
  for (const auto &entry : opsets)
    opsetAttrs.push_back(builder.getNamedAttr(
        entry.getKey().empty() ? "ai.onnx" : entry.getKey(),
        builder.getI64IntegerAttr(entry.getValue())));
  module->setAttr(mlir::kiln::onnx::OnnxDialect::kOpsetImportAttr,
                  builder.getDictionaryAttr(opsetAttrs));
  module->setAttr(mlir::kiln::onnx::OnnxDialect::kGraphNameAttr, builder.getStringAttr(graph.name()));
  module->setAttr(mlir::kiln::onnx::OnnxDialect::kProducerAttr,
                  builder.getStringAttr(model.producer_name()));
  module->setAttr(mlir::kiln::kModelHashAttr, builder.getStringAttr(hash));

  // Fix input shapes first so that ONNX's shape inference sees them.
  llvm::StringMap<bool> isInitializer;
  for (const auto &init : graph.initializer())
    isInitializer[init.name()] = true;
  // Misspelled --input-shape names first: they explain other errors.
  for (const auto &[name, dims] : options.inputShapes)
    if (!llvm::any_of(graph.input(), [&](const onnx::ValueInfoProto &i) {
          return i.name() == name && !isInitializer.count(name);
        }))
      return error(UnknownLoc::get(&ctx))
             << "--input-shape names '" << name
             << "', which is not an input of the graph";
  SmallVector<const onnx::ValueInfoProto *> inputs;
  SmallVector<Type> inputTypes;
  for (onnx::ValueInfoProto &info : *graph.mutable_input())
    if (!isInitializer.count(info.name())) // IR < 4 lists initializers too
      inputs.push_back(&info);
  if (failed(bindSymbols(inputs)))
    return failure();
  // Every input's open dimensions are reported at once.
  bool inputsOk = true;
  for (const onnx::ValueInfoProto *constInfo : inputs) {
    auto &info = const_cast<onnx::ValueInfoProto &>(*constInfo);
    FailureOr<RankedTensorType> type = inputType(info);
    if (failed(type)) {
      inputsOk = false;
      continue;
    }
    // The sizes given become the graph's, so that ONNX's shape inference
    // sees them; open dimensions keep their dim_param.
    auto *shape = info.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (auto [i, d] : llvm::enumerate(type->getShape())) {
      auto *dim = i < (size_t)shape->dim_size() ? shape->mutable_dim(i)
                                                : shape->add_dim();
      if (!ShapedType::isDynamic(d))
        dim->set_dim_value(d);
    }
    inputTypes.push_back(*type);
  }
  if (!inputsOk)
    return failure();

  { // ONNX's inference types the import; its failure is not fatal.
    mlir::kiln::HiddenFromInference hidden(*model.mutable_graph());
    mlir::kiln::dropStaleDeclarations(
        model, !options.dims.empty() || !options.inputShapes.empty(),
        [&](StringRef name, StringRef message) {
          emitRemark(NameLoc::get(builder.getStringAttr(name))) << message;
        });
    mlir::kiln::inferShapesSafely(model);
  }
  auto record = [&](const onnx::ValueInfoProto &info) {
    if (!info.type().has_tensor_type())
      return;
    const auto &tt = info.type().tensor_type();
    Type elt = mlir::kiln::elementType(&ctx, tt.elem_type());
    if (!elt)
      return;
    if (!tt.has_shape()) {
      inferredTypes[info.name()] = UnrankedTensorType::get(elt);
      return;
    }
    SmallVector<int64_t> shape;
    for (const auto &dim : tt.shape().dim())
      shape.push_back(dim.has_dim_value() ? dim.dim_value()
                                          : ShapedType::kDynamic);
    inferredTypes[info.name()] = RankedTensorType::get(shape, elt);
  };
  std::function<void(const onnx::GraphProto &)> recordGraph =
      [&](const onnx::GraphProto &g) {
        for (const auto &info : g.value_info())
          record(info);
        for (const auto &info : g.output())
          record(info);
        for (const auto &n : g.node())
          for (const auto &attr : n.attribute())
            if (attr.type() == onnx::AttributeProto::GRAPH)
              recordGraph(attr.g());
      };
  recordGraph(graph);

  builder.setInsertionPointToEnd(module.getBody());
  auto funcType = builder.getFunctionType(inputTypes, {});
  auto func = func::FuncOp::create(builder, UnknownLoc::get(&ctx), "main_graph",
                                   funcType);
  Block *entry = func.addEntryBlock();
  // The attributes of all arguments at once: one setArgAttr per argument
  // rebuilds the array of all of them (quadratic in the inputs; a model
  // with 20,000 inputs spent 15 s here).
  SmallVector<DictionaryAttr> argAttrs;
  for (auto [i, info] : llvm::enumerate(inputs)) {
    values[info->name()] = entry->getArgument(i);
    SmallVector<NamedAttribute> attrs{builder.getNamedAttr(
        mlir::kiln::onnx::OnnxDialect::kValueNameAttr,
        builder.getStringAttr(info->name()))};
    if (ArrayAttr params = dimParams.lookup(info->name()))
      attrs.push_back(builder.getNamedAttr(
          mlir::kiln::onnx::OnnxDialect::kDimParamsAttr, params));
    argAttrs.push_back(builder.getDictionaryAttr(attrs));
  }
  func.setAllArgAttrs(argAttrs);
  builder.setInsertionPointToStart(entry);

  for (onnx::TensorProto &init : *graph.mutable_initializer()) {
    FailureOr<ElementsAttr> value =
        importTensor(init, "initializer '" + init.name() + "'");
    if (failed(value))
      return failure();
    Location loc = NameLoc::get(builder.getStringAttr(init.name()));
    values[init.name()] = mlir::kiln::onnx::InitializerOp::create(
        builder, loc, value->getType(), init.name(), *value);
  }
  for (int i = 0; i < graph.node_size(); ++i)
    if (failed(importNode(graph.node(i), i)))
      return failure();

  SmallVector<Value> results;
  for (const auto &out : graph.output()) {
    Value v = values.lookup(out.name());
    if (!v)
      return error(NameLoc::get(builder.getStringAttr(out.name())))
             << "graph output '" << out.name()
             << "' is not produced by any node, input or initializer";
    results.push_back(v);
  }
  func::ReturnOp::create(builder, UnknownLoc::get(&ctx), results);
  func.setType(builder.getFunctionType(inputTypes, TypeRange(results)));
  SmallVector<DictionaryAttr> resultAttrs;
  for (const auto &out : graph.output())
    resultAttrs.push_back(builder.getDictionaryAttr(builder.getNamedAttr(
        mlir::kiln::onnx::OnnxDialect::kValueNameAttr,
        builder.getStringAttr(out.name()))));
  func.setAllResultAttrs(resultAttrs);
  return success();
}

OwningOpRef<ModuleOp> Importer::run(const std::string &path) {
  ctx.loadDialect<mlir::kiln::onnx::OnnxDialect, func::FuncDialect>();
  fileName = path;
  try {
    if (failed(parse(path)) || failed(mlir::kiln::validateModel(ctx, model)))
      return nullptr;
    OwningOpRef<ModuleOp> module =
        ModuleOp::create(FileLineColLoc::get(&ctx, path, 0, 0));
    if (failed(importGraph(*module)))
      return nullptr;
    return module;
  } catch (const std::exception &e) {
    emitError(FileLineColLoc::get(&ctx, path, 0, 0))
        << "cannot import '" << path << "': " << e.what();
    return nullptr;
  }
}

} // namespace

namespace mlir::kiln {
OwningOpRef<ModuleOp> importOnnxFile(MLIRContext &context,
                                     const std::string &path,
                                     const ImportOptions &options) {
  Importer importer(context, options);
  return importer.run(path);
}
} // namespace mlir::kiln
