#include "Infer.h"

#include "Error.h"
#include "Tensor.h"

#include <nlohmann/json.hpp>

using nlohmann::json;

namespace kiln::serve {

namespace {

std::string quoted(const std::string &s) { return json(s).dump(-1, ' ', false, json::error_handler_t::replace); }

// parameters.<key> of a request, input or output object, as a bool.
std::optional<bool> boolParameter(const json &object, const char *key,
                                  const std::string &what) {
  auto params = object.find("parameters");
  if (params == object.end())
    return std::nullopt;
  if (!params->is_object())
    throw Error(400, what + ": 'parameters' must be an object");
  auto it = params->find(key);
  if (it == params->end())
    return std::nullopt;
  if (!it->is_boolean())
    throw Error(400, what + ": parameters." + key + " must be true or false");
  return it->get<bool>();
}

const std::string &stringField(const json &object, const char *key,
                               const std::string &what) {
  auto it = object.find(key);
  if (it == object.end())
    throw Error(400, what + " has no '" + key + "'");
  if (!it->is_string())
    throw Error(400, what + ": '" + key + "' must be a string");
  return it->get_ref<const std::string &>();
}

// Input `index`'s symbol per axis (-1 for a static one) in a model with
// run-time sizes.
const std::vector<int32_t> &inputAxes(const ModelVersion &model, size_t index) {
  return model.model().info().inputSymbols[index];
}

// The shape a client must send: -1 where any number of rows is accepted, or
// (run-time sizes) any size in the axis's range.
std::vector<int64_t> wantedShape(const ModelVersion &model, size_t index) {
  std::vector<int64_t> s = model.model().inputs()[index].shape;
  if (model.batched())
    s[0] = -1;
  if (model.runtimeExtents())
    for (size_t d = 0; d < s.size(); ++d)
      if (d < inputAxes(model, index).size() && inputAxes(model, index)[d] >= 0)
        s[d] = -1;
  return s;
}

size_t elementCount(const std::vector<int64_t> &shape,
                    const std::string &what) {
  size_t count = 1;
  for (int64_t d : shape) {
    if (d && count > (size_t(1) << 40) / (size_t)d)
      throw Error(400, what + " has an absurdly large shape");
    count *= (size_t)d;
  }
  return count;
}

// An input of a model with run-time sizes: the rank and static axes as
// compiled, each symbolic axis within its symbol's range and equal to the
// same symbol's size in the inputs read before. Records the shape in `job`.
size_t checkRuntimeShape(const ModelVersion &model, size_t index,
                         const std::vector<int64_t> &shape, InferJob &job,
                         const std::string &what) {
  const client::ModelInfo &info = model.model().info();
  const TensorInfo &spec = model.model().inputs()[index];
  const std::vector<int32_t> &axes = inputAxes(model, index);
  auto symbolAt = [&](size_t d) { return d < axes.size() ? axes[d] : -1; };
  bool fits = shape.size() == spec.shape.size();
  for (size_t d = 0; fits && d < shape.size(); ++d)
    fits = symbolAt(d) >= 0 || shape[d] == spec.shape[d];
  if (!fits)
    throw Error(400, what + " has shape " + shapeText(shape) + "; " +
                         describe(model) + " expects " +
                         shapeText(wantedShape(model, index)) +
                         " (-1: a size in the range of its symbol)");
  job.inputShapes.resize(model.model().inputs().size());
  for (size_t d = 0; d < shape.size(); ++d) {
    int32_t sym = symbolAt(d);
    if (sym < 0)
      continue;
    const client::ModelInfo::Symbol &symbol = info.symbols[sym];
    std::string axis = "dimension " + std::to_string(d) + " ('" +
                       symbol.name + "')";
    if (shape[d] < symbol.min || shape[d] > symbol.max)
      throw Error(400, what + ": " + axis + " is " + std::to_string(shape[d]) +
                           ", outside the range " + std::to_string(symbol.min) +
                           ".." + std::to_string(symbol.max) + " " +
                           describe(model) + " was compiled for");
    for (size_t j = 0; j < job.inputShapes.size(); ++j)
      for (size_t e = 0; e < job.inputShapes[j].size(); ++e)
        if (inputAxes(model, j).size() > e && inputAxes(model, j)[e] == sym &&
            job.inputShapes[j][e] != shape[d])
          throw Error(400, what + ": " + axis + " is " +
                               std::to_string(shape[d]) + ", but input '" +
                               model.model().inputs()[j].name + "' has " +
                               std::to_string(job.inputShapes[j][e]) +
                               " for it; inputs that share a symbol must "
                               "agree");
  }
  job.inputShapes[index] = shape;
  return elementCount(shape, what);
}

// How many bytes at the start of `body` are JSON: all of them, unless the
// client sent Inference-Header-Content-Length.
size_t jsonHeaderBytes(const std::string &body,
                       const std::optional<std::string> &headerLength) {
  if (!headerLength)
    return body.size();
  const std::string &h = *headerLength;
  bool ok = !h.empty() && h.size() < 19;
  for (char c : h)
    ok = ok && c >= '0' && c <= '9';
  if (!ok || std::stoull(h) > body.size())
    throw Error(400, "Inference-Header-Content-Length '" + h +
                         "' is not a byte count within the " +
                         std::to_string(body.size()) + "-byte body");
  return std::stoull(h);
}

json parseRequest(const std::string &body, size_t jsonBytes) {
  json request;
  try {
    request = json::parse(body.begin(), body.begin() + (ptrdiff_t)jsonBytes);
  } catch (const json::exception &e) {
    throw Error(400, std::string("malformed JSON in the request: ") + e.what());
  }
  if (!request.is_object())
    throw Error(400, "the request must be a JSON object");
  return request;
}

// Reads the "inputs" of one request into a job: each entry's name, datatype
// and shape checked against the model, its data decoded from JSON into a
// buffer this reader owns, or taken in place from the binary bytes that
// follow the JSON header.
class InputReader {
public:
  InputReader(const ModelVersion &model, const std::string &body,
              size_t jsonBytes, InferJob &job)
      : model_(model), specs_(model.model().inputs()), body_(body),
        jsonBytes_(jsonBytes), job_(job), where_(describe(model)),
        decoded_(specs_.size()), seen_(specs_.size(), false),
        cursor_(jsonBytes) {
    job_.inputs.assign(specs_.size(), nullptr);
  }

  void read(const json &request) {
    auto inputs = request.find("inputs");
    if (inputs == request.end() || !inputs->is_array())
      throw Error(400, "the request has no 'inputs' array");
    for (const json &in : *inputs)
      readInput(in);
    for (size_t i = 0; i < specs_.size(); ++i)
      if (!seen_[i])
        throw Error(400, "input '" + specs_[i].name + "' of " + where_ +
                             " is missing");
    if (cursor_ != body_.size())
      throw Error(400, "the body has " + std::to_string(body_.size() - cursor_) +
                           " bytes after the JSON header and the binary "
                           "inputs it declares");
    job_.rows = model_.takesRows() ? rows_ : 1;
  }

private:
  void readInput(const json &in) {
    if (!in.is_object())
      throw Error(400, "each entry of 'inputs' must be an object");
    const std::string &name = stringField(in, "name", "an input");
    std::string what = "input '" + name + "'";
    size_t i = 0;
    while (i < specs_.size() && specs_[i].name != name)
      ++i;
    if (i == specs_.size())
      throw Error(400, where_ + " has no input '" + name +
                           "'; its inputs are " + tensorNames(specs_));
    if (seen_[i])
      throw Error(400, what + " is given twice");
    seen_[i] = true;
    const TensorInfo &spec = specs_[i];

    const std::string &datatype = stringField(in, "datatype", what);
    std::vector<int64_t> shape = readShape(in, what);
    size_t count = checkInput(model_, i, datatype, shape, rows_, job_, what);
    size_t bytes = count * spec.elementSize();
    if (const json *binarySize = binaryDataSize(in, what))
      job_.inputs[i] = binaryData(*binarySize, bytes, shape, datatype, what);
    else
      job_.inputs[i] = jsonData(in, i, count, bytes, shape, what);
  }

  // The "shape" of an input (checked against the model by checkInput).
  static std::vector<int64_t> readShape(const json &in,
                                        const std::string &what) {
    auto shapeIt = in.find("shape");
    if (shapeIt == in.end() || !shapeIt->is_array())
      throw Error(400, what + " has no 'shape' array");
    std::vector<int64_t> shape;
    for (const json &d : *shapeIt) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0)
        throw Error(400, what + ": 'shape' must hold non-negative integers");
      shape.push_back(d.get<int64_t>());
    }
    return shape;
  }

  // parameters.binary_data_size of an input, or nullptr.
  static const json *binaryDataSize(const json &in, const std::string &what) {
    auto params = in.find("parameters");
    if (params == in.end())
      return nullptr;
    if (!params->is_object())
      throw Error(400, what + ": 'parameters' must be an object");
    auto it = params->find("binary_data_size");
    return it == params->end() ? nullptr : &*it;
  }

  // The input's bytes in place, the next `bytes` after the JSON header.
  const char *binaryData(const json &binarySize, size_t bytes,
                         const std::vector<int64_t> &shape,
                         const std::string &datatype, const std::string &what) {
    if (!binarySize.is_number_unsigned())
      throw Error(400, what + ": parameters.binary_data_size must be a "
                              "byte count");
    size_t n = binarySize.get<size_t>();
    if (n != bytes)
      throw Error(400, what + ": binary_data_size is " + std::to_string(n) +
                           " bytes; shape " + shapeText(shape) + " of " +
                           datatype + " needs " + std::to_string(bytes));
    if (body_.size() - cursor_ < n)
      throw Error(400, what + ": the body holds " +
                           std::to_string(body_.size() - cursor_) +
                           " binary bytes for it, not " + std::to_string(n));
    const char *data = body_.data() + cursor_;
    cursor_ += n;
    return data;
  }

  // The input's "data" decoded into a buffer of its own.
  const char *jsonData(const json &in, size_t i, size_t count, size_t bytes,
                       const std::vector<int64_t> &shape,
                       const std::string &what) {
    auto data = in.find("data");
    if (data == in.end())
      throw Error(400, what + " has no 'data' (and no "
                              "parameters.binary_data_size)");
    // Every JSON element takes at least two bytes ("0,"), so a shape that
    // calls for more cannot be what the data holds; checking first keeps a
    // tiny request from reserving a huge buffer.
    if (count > jsonBytes_ / 2 + 1)
      throw Error(400, what + ": shape " + shapeText(shape) + " calls for " +
                           std::to_string(count) +
                           " elements, more than the request's JSON can hold");
    decoded_[i] = AlignedBuffer(bytes);
    jsonToBytes(*data, specs_[i].dtype(), shape, count, decoded_[i].data(),
                what);
    return decoded_[i].data();
  }

  const ModelVersion &model_;
  const std::vector<TensorInfo> &specs_;
  const std::string &body_;
  size_t jsonBytes_;
  InferJob &job_;
  std::string where_;
  std::vector<AlignedBuffer> decoded_; // inputs sent as JSON
  std::vector<bool> seen_;
  int64_t rows_ = -1;
  size_t cursor_; // next unread binary byte
};

struct RequestedOutput {
  size_t index;
  bool binary;
};

// Which outputs the request asks for (all by default), and which of them as
// raw bytes.
std::vector<RequestedOutput> requestedOutputs(const ModelVersion &model,
                                              const json &request) {
  const std::vector<TensorInfo> &outputs = model.model().outputs();
  bool allBinary = boolParameter(request, "binary_data_output", "the request")
                       .value_or(false);
  std::vector<RequestedOutput> wanted;
  auto outputsIt = request.find("outputs");
  if (outputsIt == request.end()) {
    for (size_t i = 0; i < outputs.size(); ++i)
      wanted.push_back({i, allBinary});
    return wanted;
  }
  if (!outputsIt->is_array())
    throw Error(400, "'outputs' must be an array");
  for (const json &out : *outputsIt) {
    if (!out.is_object())
      throw Error(400, "each entry of 'outputs' must be an object");
    const std::string &name = stringField(out, "name", "an output");
    size_t i = 0;
    while (i < outputs.size() && outputs[i].name != name)
      ++i;
    if (i == outputs.size())
      throw Error(400, describe(model) + " has no output '" + name +
                           "'; its outputs are " + tensorNames(outputs));
    wanted.push_back(
        {i, boolParameter(out, "binary_data_output", "output '" + name + "'")
                .value_or(allBinary)});
  }
  return wanted;
}

// The JSON response, followed by the raw bytes of the outputs asked for as
// binary data.
InferResponse response(const ModelVersion &model, const json &request,
                       const InferJob &job,
                       const std::vector<RequestedOutput> &wanted) {
  InferResponse response;
  std::string &out = response.body;
  out.reserve(256);
  out += "{\"model_name\":" + quoted(model.name()) + ",\"model_version\":\"" +
         std::to_string(model.version()) + "\"";
  auto id = request.find("id");
  if (id != request.end() && id->is_string())
    out += ",\"id\":" + id->dump(-1, ' ', false, json::error_handler_t::replace);
  out += ",\"outputs\":[";
  bool anyBinary = false;
  for (size_t k = 0; k < wanted.size(); ++k) {
    const TensorInfo &spec = model.model().outputs()[wanted[k].index];
    std::vector<int64_t> shape = outputShape(model, wanted[k].index, job);
    size_t bytes = outputBytes(model, wanted[k].index, job);
    out += k ? ",{" : "{";
    out += "\"name\":" + quoted(spec.name) + ",\"datatype\":\"" +
           spec.type->kserve + "\",\"shape\":" + shapeText(shape);
    if (wanted[k].binary) {
      anyBinary = true;
      out += ",\"parameters\":{\"binary_data_size\":" + std::to_string(bytes) +
             "}}";
    } else {
      out += ",\"data\":";
      appendJsonData(out, job.outputs[wanted[k].index].data(), spec.dtype(),
                     bytes / spec.elementSize());
      out += "}";
    }
  }
  out += "]}";
  if (anyBinary) {
    response.jsonBytes = out.size();
    for (const RequestedOutput &w : wanted)
      if (w.binary)
        out.append(job.outputs[w.index].data(),
                   outputBytes(model, w.index, job));
  }
  return response;
}

} // namespace

InferResponse infer(ModelVersion &model, const std::string &body,
                    const std::optional<std::string> &headerLength) {
  size_t jsonBytes = jsonHeaderBytes(body, headerLength);
  json request = parseRequest(body, jsonBytes);
  auto job = std::make_shared<InferJob>();
  InputReader inputs(model, body, jsonBytes, *job); // owns decoded inputs
  inputs.read(request);
  std::vector<RequestedOutput> wanted = requestedOutputs(model, request);
  runJob(model, job);
  return response(model, request, *job, wanted);
}

std::string describe(const ModelVersion &model) {
  return "model '" + model.name() + "' version " +
         std::to_string(model.version());
}

std::string tensorNames(const std::vector<TensorInfo> &specs) {
  std::string s;
  for (const TensorInfo &t : specs)
    s += (s.empty() ? "'" : ", '") + t.name + "'";
  return s.empty() ? "none" : s;
}

std::vector<int64_t> advertisedShape(const ModelVersion &v, bool input,
                                     size_t index) {
  const TensorInfo &t =
      input ? v.model().inputs()[index] : v.model().outputs()[index];
  std::vector<int64_t> shape = t.shape;
  // -1 says "any number of rows"; a one-variant model keeps its number,
  // though it too accepts more rows (they are run in several batches).
  if (v.batched() && (v.batchSizes().size() > 1 || v.dynamic()))
    shape[0] = -1;
  // Run-time sizes: -1 on every axis that carries a symbol or is computed
  // from them (the symbols' ranges are in the metadata's parameters).
  if (v.runtimeExtents()) {
    const client::ModelInfo &info = v.model().info();
    const auto &table = input ? info.inputSymbols : info.outputSymbols;
    for (size_t d = 0; index < table.size() && d < shape.size() &&
                       d < table[index].size();
         ++d)
      if (table[index][d] != -1)
        shape[d] = -1;
  }
  return shape;
}

std::vector<int64_t> outputShape(const ModelVersion &model, size_t index,
                                 const InferJob &job) {
  if (model.runtimeExtents())
    return job.outputShapes[index];
  std::vector<int64_t> shape = model.model().outputs()[index].shape;
  if (model.batched())
    shape[0] = job.rows;
  return shape;
}

size_t outputBytes(const ModelVersion &model, size_t index,
                   const InferJob &job) {
  if (!model.runtimeExtents())
    return (size_t)job.rows * model.outputRowBytes()[index];
  size_t bytes = model.model().outputs()[index].elementSize();
  for (int64_t d : job.outputShapes[index])
    bytes *= (size_t)d;
  return bytes;
}

size_t checkInput(const ModelVersion &model, size_t index,
                  const std::string &datatype,
                  const std::vector<int64_t> &shape, int64_t &rows,
                  InferJob &job, const std::string &what) {
  const TensorInfo &spec = model.model().inputs()[index];
  std::string where = describe(model);
  if (datatype != spec.type->kserve)
    throw Error(400, what + " has datatype " + datatype + "; " + where +
                         " expects " + spec.type->kserve);
  if (model.runtimeExtents()) {
    size_t count = checkRuntimeShape(model, index, shape, job, what);
    if (model.packs())
      rows = shape[0]; // the batch, which the inputs share
    return count;
  }
  bool batched = model.batched();
  bool fits = shape.size() == spec.shape.size();
  for (size_t d = 0; fits && d < shape.size(); ++d)
    fits = d == 0 && batched ? shape[0] >= 1 : shape[d] == spec.shape[d];
  if (!fits)
    throw Error(400, what + " has shape " + shapeText(shape) + "; " + where +
                         " expects " + shapeText(wantedShape(model, index)) +
                         (batched ? " (-1: any number of rows >= 1)" : ""));
  if (batched) {
    if (rows >= 0 && shape[0] != rows)
      throw Error(400, what + " has " + std::to_string(shape[0]) +
                           " rows; the inputs before it have " +
                           std::to_string(rows));
    rows = shape[0];
  }
  return elementCount(shape, what);
}

void runJob(ModelVersion &model, const std::shared_ptr<InferJob> &job) {
  job->outputs.clear();
  for (size_t i = 0; i < model.model().outputs().size(); ++i)
    job->outputs.emplace_back((size_t)job->rows * model.outputRowBytes()[i]);
  if (!model.run(job))
    throw Error(500, job->error);
}

} // namespace kiln::serve
