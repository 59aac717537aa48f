#include "GrpcInfer.h"

#include "Error.h"
#include "Infer.h"
#include "Tensor.h"

#include <cstring>

namespace kiln::serve {

using inference::InferTensorContents;
using inference::ModelInferRequest;
using inference::ModelInferResponse;

namespace {

// The typed field of InferTensorContents that carries a datatype, as the
// protocol assigns them; None for those it gives none (FP16, BF16, ONNX's
// narrow floats), which travel only as raw bytes.
enum class Field { None, Bool, Int, Int64, Uint, Uint64, Fp32, Fp64 };

Field fieldOf(int32_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_BOOL:
    return Field::Bool;
  case KILN_DTYPE_INT8:
  case KILN_DTYPE_INT16:
  case KILN_DTYPE_INT32:
    return Field::Int;
  case KILN_DTYPE_INT64:
    return Field::Int64;
  case KILN_DTYPE_UINT8:
  case KILN_DTYPE_UINT16:
  case KILN_DTYPE_UINT32:
    return Field::Uint;
  case KILN_DTYPE_UINT64:
    return Field::Uint64;
  case KILN_DTYPE_FLOAT32:
    return Field::Fp32;
  case KILN_DTYPE_FLOAT64:
    return Field::Fp64;
  default:
    return Field::None;
  }
}

const char *fieldName(Field f) {
  switch (f) {
  case Field::Bool:
    return "bool_contents";
  case Field::Int:
    return "int_contents";
  case Field::Int64:
    return "int64_contents";
  case Field::Uint:
    return "uint_contents";
  case Field::Uint64:
    return "uint64_contents";
  case Field::Fp32:
    return "fp32_contents";
  case Field::Fp64:
    return "fp64_contents";
  case Field::None:
    break;
  }
  return "none";
}

size_t fieldSize(const InferTensorContents &c, Field f) {
  switch (f) {
  case Field::Bool:
    return (size_t)c.bool_contents_size();
  case Field::Int:
    return (size_t)c.int_contents_size();
  case Field::Int64:
    return (size_t)c.int64_contents_size();
  case Field::Uint:
    return (size_t)c.uint_contents_size();
  case Field::Uint64:
    return (size_t)c.uint64_contents_size();
  case Field::Fp32:
    return (size_t)c.fp32_contents_size();
  case Field::Fp64:
    return (size_t)c.fp64_contents_size();
  case Field::None:
    break;
  }
  return 0;
}

size_t totalElements(const InferTensorContents &c) {
  size_t n = (size_t)c.bytes_contents_size();
  for (Field f : {Field::Bool, Field::Int, Field::Int64, Field::Uint,
                  Field::Uint64, Field::Fp32, Field::Fp64})
    n += fieldSize(c, f);
  return n;
}

// Stores each element of `src` as a T, refusing a value T cannot hold (an
// int_contents of 300 for an INT8 input).
template <typename T, typename Src>
void narrowInto(const Src &src, char *out, const std::string &what) {
  for (int i = 0; i < src.size(); ++i) {
    auto v = src.Get(i);
    T t = static_cast<T>(v);
    if (static_cast<decltype(v)>(t) != v)
      throw Error(400, what + ": element " + std::to_string(i) + " (" +
                           std::to_string(v) +
                           ") is out of range for its datatype");
    std::memcpy(out + (size_t)i * sizeof(T), &t, sizeof(T));
  }
}

template <typename Src> void copyInto(const Src &src, char *out) {
  if (src.size())
    std::memcpy(out, src.data(), (size_t)src.size() * sizeof(src.Get(0)));
}

// Checks that an input's typed `contents` hold exactly `count` elements in
// the field for its datatype and nothing elsewhere; before anything is
// allocated, so a small message cannot reserve what its shape claims.
void checkTyped(const InferTensorContents &c, const TensorInfo &spec,
                size_t count, const std::string &what) {
  Field f = fieldOf(spec.dtype());
  std::string type = spec.type->kserve;
  if (f == Field::None)
    throw Error(400, what + ": " + type +
                         " has no typed field in InferTensorContents; send "
                         "it in raw_input_contents");
  size_t n = fieldSize(c, f);
  if (n != totalElements(c))
    throw Error(400, what + ": its contents hold values outside " +
                         fieldName(f) + ", the field for " + type);
  if (n != count)
    throw Error(400, what + ": contents." + fieldName(f) + " holds " +
                         std::to_string(n) + " elements; its shape calls for " +
                         std::to_string(count));
}

// Typed `contents` of an input (checked by checkTyped) into `out`.
void typedToBytes(const InferTensorContents &c, const TensorInfo &spec,
                  char *out, const std::string &what) {
  switch (spec.dtype()) {
  case KILN_DTYPE_BOOL:
    for (int i = 0; i < c.bool_contents_size(); ++i)
      out[i] = c.bool_contents(i) ? 1 : 0;
    return;
  case KILN_DTYPE_INT8:
    return narrowInto<int8_t>(c.int_contents(), out, what);
  case KILN_DTYPE_INT16:
    return narrowInto<int16_t>(c.int_contents(), out, what);
  case KILN_DTYPE_INT32:
    return copyInto(c.int_contents(), out);
  case KILN_DTYPE_INT64:
    return copyInto(c.int64_contents(), out);
  case KILN_DTYPE_UINT8:
    return narrowInto<uint8_t>(c.uint_contents(), out, what);
  case KILN_DTYPE_UINT16:
    return narrowInto<uint16_t>(c.uint_contents(), out, what);
  case KILN_DTYPE_UINT32:
    return copyInto(c.uint_contents(), out);
  case KILN_DTYPE_UINT64:
    return copyInto(c.uint64_contents(), out);
  case KILN_DTYPE_FLOAT32:
    return copyInto(c.fp32_contents(), out);
  case KILN_DTYPE_FLOAT64:
    return copyInto(c.fp64_contents(), out);
  }
}

template <typename T> T load(const char *p) {
  T t;
  std::memcpy(&t, p, sizeof(T));
  return t;
}

template <typename T, typename Dst>
void widenInto(const char *data, size_t count, Dst *dst) {
  dst->Reserve((int)count);
  for (size_t i = 0; i < count; ++i)
    dst->Add(load<T>(data + i * sizeof(T)));
}

// `count` elements of `dtype` at `data` into the typed field for it (the
// caller checked fieldOf(dtype) != None).
void bytesToTyped(const char *data, int32_t dtype, size_t count,
                  InferTensorContents &c) {
  switch (dtype) {
  case KILN_DTYPE_BOOL:
    for (size_t i = 0; i < count; ++i)
      c.add_bool_contents(data[i] != 0);
    return;
  case KILN_DTYPE_INT8:
    return widenInto<int8_t>(data, count, c.mutable_int_contents());
  case KILN_DTYPE_INT16:
    return widenInto<int16_t>(data, count, c.mutable_int_contents());
  case KILN_DTYPE_INT32:
    return widenInto<int32_t>(data, count, c.mutable_int_contents());
  case KILN_DTYPE_INT64:
    return widenInto<int64_t>(data, count, c.mutable_int64_contents());
  case KILN_DTYPE_UINT8:
    return widenInto<uint8_t>(data, count, c.mutable_uint_contents());
  case KILN_DTYPE_UINT16:
    return widenInto<uint16_t>(data, count, c.mutable_uint_contents());
  case KILN_DTYPE_UINT32:
    return widenInto<uint32_t>(data, count, c.mutable_uint_contents());
  case KILN_DTYPE_UINT64:
    return widenInto<uint64_t>(data, count, c.mutable_uint64_contents());
  case KILN_DTYPE_FLOAT32:
    return widenInto<float>(data, count, c.mutable_fp32_contents());
  case KILN_DTYPE_FLOAT64:
    return widenInto<double>(data, count, c.mutable_fp64_contents());
  }
}

size_t indexOf(const std::vector<TensorInfo> &specs, const std::string &name) {
  size_t i = 0;
  while (i < specs.size() && specs[i].name != name)
    ++i;
  return i;
}

// Reads every input of a request into `job`: names, datatypes and shapes
// checked by checkInput (the HTTP path's check), raw bytes taken in place,
// typed contents decoded into buffers in `decoded`.
void readInputs(const ModelVersion &model, const ModelInferRequest &request,
                InferJob &job, std::vector<AlignedBuffer> &decoded) {
  const std::vector<TensorInfo> &specs = model.model().inputs();
  job.inputs.assign(specs.size(), nullptr);
  decoded.resize(specs.size());
  std::vector<bool> seen(specs.size(), false);
  bool raw = request.raw_input_contents_size() > 0;
  if (raw && request.raw_input_contents_size() != request.inputs_size())
    throw Error(400, "the request has " +
                         std::to_string(request.raw_input_contents_size()) +
                         " raw_input_contents for " +
                         std::to_string(request.inputs_size()) +
                         " inputs; give one per input, in the order of "
                         "'inputs'");
  int64_t rows = -1;
  for (int k = 0; k < request.inputs_size(); ++k) {
    const ModelInferRequest::InferInputTensor &in = request.inputs(k);
    std::string what = "input '" + in.name() + "'";
    size_t i = indexOf(specs, in.name());
    if (i == specs.size())
      throw Error(400, describe(model) + " has no input '" + in.name() +
                           "'; its inputs are " + tensorNames(specs));
    if (seen[i])
      throw Error(400, what + " is given twice");
    seen[i] = true;
    std::vector<int64_t> shape(in.shape().begin(), in.shape().end());
    for (int64_t d : shape)
      if (d < 0)
        throw Error(400, what + " has shape " + shapeText(shape) +
                             "; a shape holds non-negative integers");
    size_t count =
        checkInput(model, i, in.datatype(), shape, rows, job, what);
    size_t bytes = count * specs[i].elementSize();
    if (raw) {
      if (in.has_contents() && totalElements(in.contents()))
        throw Error(400, what + " has contents, but the request uses "
                                "raw_input_contents: use one or the other "
                                "for every input");
      const std::string &data = request.raw_input_contents(k);
      if (data.size() != bytes)
        throw Error(400, what + ": raw_input_contents[" + std::to_string(k) +
                             "] holds " + std::to_string(data.size()) +
                             " bytes; shape " + shapeText(shape) + " of " +
                             in.datatype() + " needs " + std::to_string(bytes));
      job.inputs[i] = data.data();
    } else {
      if (!in.has_contents() && count)
        throw Error(400, what + " has no contents (and the request no "
                                "raw_input_contents)");
      checkTyped(in.contents(), specs[i], count, what);
      decoded[i] = AlignedBuffer(bytes);
      typedToBytes(in.contents(), specs[i], decoded[i].data(), what);
      job.inputs[i] = decoded[i].data();
    }
  }
  for (size_t i = 0; i < specs.size(); ++i)
    if (!seen[i])
      throw Error(400, "input '" + specs[i].name + "' of " + describe(model) +
                           " is missing");
  job.rows = model.takesRows() ? rows : 1;
}

} // namespace

void grpcInfer(ModelVersion &model, const ModelInferRequest &request,
               ModelInferResponse &response) {
  auto job = std::make_shared<InferJob>();
  std::vector<AlignedBuffer> decoded; // typed inputs, alive until the run ends
  readInputs(model, request, *job, decoded);

  const std::vector<TensorInfo> &outputs = model.model().outputs();
  std::vector<size_t> wanted;
  for (const auto &out : request.outputs()) {
    size_t i = indexOf(outputs, out.name());
    if (i == outputs.size())
      throw Error(400, describe(model) + " has no output '" + out.name() +
                           "'; its outputs are " + tensorNames(outputs));
    wanted.push_back(i);
  }
  if (wanted.empty())
    for (size_t i = 0; i < outputs.size(); ++i)
      wanted.push_back(i);

  runJob(model, job);

  response.set_model_name(model.name());
  response.set_model_version(std::to_string(model.version()));
  response.set_id(request.id());
  // The protocol allows raw bytes for all outputs or for none.
  bool raw = request.raw_input_contents_size() > 0;
  for (size_t i : wanted)
    raw = raw || fieldOf(outputs[i].dtype()) == Field::None;
  for (size_t i : wanted) {
    const TensorInfo &spec = outputs[i];
    auto *out = response.add_outputs();
    out->set_name(spec.name);
    out->set_datatype(spec.type->kserve);
    for (int64_t d : outputShape(model, i, *job))
      out->add_shape(d);
    size_t bytes = outputBytes(model, i, *job);
    const char *data = job->outputs[i].data();
    if (raw)
      response.add_raw_output_contents(data, bytes);
    else
      bytesToTyped(data, spec.dtype(), bytes / spec.elementSize(),
                   *out->mutable_contents());
  }
}

} // namespace kiln::serve
