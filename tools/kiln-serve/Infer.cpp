#include "Infer.h"

#include "Error.h"
#include "Tensor.h"

#include <nlohmann/json.hpp>

using nlohmann::json;

namespace kiln::serve {

namespace {

std::string quoted(const std::string &s) { return json(s).dump(); }

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

std::string names(const std::vector<TensorInfo> &specs) {
  std::string s;
  for (const TensorInfo &t : specs)
    s += (s.empty() ? "'" : ", '") + t.name + "'";
  return s.empty() ? "none" : s;
}

// The shape a client must send: -1 where any number of rows is accepted.
std::vector<int64_t> wantedShape(const ModelVersion &model,
                                 const TensorInfo &t) {
  std::vector<int64_t> s = t.shape;
  if (model.batched())
    s[0] = -1;
  return s;
}

struct RequestedOutput {
  size_t index;
  bool binary;
};

} // namespace

InferResponse infer(ModelVersion &model, const std::string &body,
                    const std::optional<std::string> &headerLength) {
  std::string where =
      "model '" + model.name() + "' version " + std::to_string(model.version());

  size_t jsonBytes = body.size();
  if (headerLength) {
    const std::string &h = *headerLength;
    bool ok = !h.empty() && h.size() < 19;
    for (char c : h)
      ok = ok && c >= '0' && c <= '9';
    if (!ok || std::stoull(h) > body.size())
      throw Error(400, "Inference-Header-Content-Length '" + h +
                           "' is not a byte count within the " +
                           std::to_string(body.size()) + "-byte body");
    jsonBytes = std::stoull(h);
  }
  json request;
  try {
    request = json::parse(body.begin(), body.begin() + (ptrdiff_t)jsonBytes);
  } catch (const json::exception &e) {
    throw Error(400, std::string("malformed JSON in the request: ") + e.what());
  }
  if (!request.is_object())
    throw Error(400, "the request must be a JSON object");

  auto inputsIt = request.find("inputs");
  if (inputsIt == request.end() || !inputsIt->is_array())
    throw Error(400, "the request has no 'inputs' array");

  size_t numIn = model.model().inputs().size();
  auto job = std::make_shared<InferJob>();
  job->inputs.assign(numIn, nullptr);
  std::vector<AlignedBuffer> decoded(numIn); // inputs sent as JSON
  std::vector<bool> seen(numIn, false);
  int64_t rows = -1;
  size_t cursor = jsonBytes; // next unread binary byte

  for (const json &in : *inputsIt) {
    if (!in.is_object())
      throw Error(400, "each entry of 'inputs' must be an object");
    const std::string &name = stringField(in, "name", "an input");
    std::string what = "input '" + name + "'";
    size_t i = 0;
    while (i < numIn && model.model().inputs()[i].name != name)
      ++i;
    if (i == numIn)
      throw Error(400, where + " has no input '" + name + "'; its inputs are " +
                           names(model.model().inputs()));
    if (seen[i])
      throw Error(400, what + " is given twice");
    seen[i] = true;
    const TensorInfo &spec = model.model().inputs()[i];

    const std::string &datatype = stringField(in, "datatype", what);
    if (datatype != spec.type->kserve)
      throw Error(400, what + " has datatype " + datatype + "; " + where +
                           " expects " + spec.type->kserve);

    auto shapeIt = in.find("shape");
    if (shapeIt == in.end() || !shapeIt->is_array())
      throw Error(400, what + " has no 'shape' array");
    std::vector<int64_t> shape;
    for (const json &d : *shapeIt) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0)
        throw Error(400, what + ": 'shape' must hold non-negative integers");
      shape.push_back(d.get<int64_t>());
    }
    bool fits = shape.size() == spec.shape.size();
    for (size_t d = model.batched() ? 1 : 0; fits && d < shape.size(); ++d)
      fits = shape[d] == spec.shape[d];
    if (fits && model.batched())
      fits = shape[0] >= 1;
    if (!fits)
      throw Error(400,
                  what + " has shape " + shapeText(shape) + "; " + where +
                      " expects " + shapeText(wantedShape(model, spec)) +
                      (model.batched() ? " (-1: any number of rows >= 1)" : ""));
    if (model.batched()) {
      if (rows >= 0 && shape[0] != rows)
        throw Error(400, what + " has " + std::to_string(shape[0]) +
                             " rows; the inputs before it have " +
                             std::to_string(rows));
      rows = shape[0];
    }
    size_t count = 1;
    for (int64_t d : shape) {
      if (d && count > (size_t(1) << 40) / (size_t)d)
        throw Error(400, what + " has an absurdly large shape");
      count *= (size_t)d;
    }
    size_t bytes = count * spec.elementSize();

    const json *binarySize = nullptr;
    auto params = in.find("parameters");
    if (params != in.end()) {
      if (!params->is_object())
        throw Error(400, what + ": 'parameters' must be an object");
      auto it = params->find("binary_data_size");
      if (it != params->end())
        binarySize = &*it;
    }
    if (binarySize) {
      if (!binarySize->is_number_unsigned())
        throw Error(400, what + ": parameters.binary_data_size must be a "
                                "byte count");
      size_t n = binarySize->get<size_t>();
      if (n != bytes)
        throw Error(400, what + ": binary_data_size is " + std::to_string(n) +
                             " bytes; shape " + shapeText(shape) + " of " +
                             datatype + " needs " + std::to_string(bytes));
      if (body.size() - cursor < n)
        throw Error(400, what + ": the body holds " +
                             std::to_string(body.size() - cursor) +
                             " binary bytes for it, not " + std::to_string(n));
      job->inputs[i] = body.data() + cursor;
      cursor += n;
    } else {
      auto data = in.find("data");
      if (data == in.end())
        throw Error(400, what + " has no 'data' (and no "
                                "parameters.binary_data_size)");
      // Every JSON element takes at least two bytes ("0,"), so a shape
      // that calls for more cannot be what the data holds; checking first
      // keeps a tiny request from reserving a huge buffer.
      if (count > jsonBytes / 2 + 1)
        throw Error(400,
                    what + ": shape " + shapeText(shape) + " calls for " +
                        std::to_string(count) +
                        " elements, more than the request's JSON can hold");
      decoded[i] = AlignedBuffer(bytes);
      jsonToBytes(*data, spec.dtype(), count, decoded[i].data(), what);
      job->inputs[i] = decoded[i].data();
    }
  }
  for (size_t i = 0; i < numIn; ++i)
    if (!seen[i])
      throw Error(400, "input '" + model.model().inputs()[i].name + "' of " + where +
                           " is missing");
  if (cursor != body.size())
    throw Error(400, "the body has " + std::to_string(body.size() - cursor) +
                         " bytes after the JSON header and the binary inputs "
                         "it declares");
  job->rows = model.batched() ? rows : 1;

  // Which outputs, and which of them as raw bytes.
  bool allBinary = boolParameter(request, "binary_data_output", "the request")
                       .value_or(false);
  std::vector<RequestedOutput> wanted;
  auto outputsIt = request.find("outputs");
  if (outputsIt != request.end()) {
    if (!outputsIt->is_array())
      throw Error(400, "'outputs' must be an array");
    for (const json &out : *outputsIt) {
      if (!out.is_object())
        throw Error(400, "each entry of 'outputs' must be an object");
      const std::string &name = stringField(out, "name", "an output");
      size_t i = 0;
      while (i < model.model().outputs().size() && model.model().outputs()[i].name != name)
        ++i;
      if (i == model.model().outputs().size())
        throw Error(400, where + " has no output '" + name +
                             "'; its outputs are " + names(model.model().outputs()));
      wanted.push_back(
          {i, boolParameter(out, "binary_data_output", "output '" + name + "'")
                  .value_or(allBinary)});
    }
  } else {
    for (size_t i = 0; i < model.model().outputs().size(); ++i)
      wanted.push_back({i, allBinary});
  }

  for (size_t i = 0; i < model.model().outputs().size(); ++i)
    job->outputs.emplace_back((size_t)job->rows * model.outputRowBytes()[i]);
  if (!model.run(job))
    throw Error(500, job->error);

  InferResponse response;
  std::string &out = response.body;
  out.reserve(256);
  out += "{\"model_name\":" + quoted(model.name()) + ",\"model_version\":\"" +
         std::to_string(model.version()) + "\"";
  auto id = request.find("id");
  if (id != request.end() && id->is_string())
    out += ",\"id\":" + id->dump();
  out += ",\"outputs\":[";
  bool anyBinary = false;
  for (size_t k = 0; k < wanted.size(); ++k) {
    const TensorInfo &spec = model.model().outputs()[wanted[k].index];
    std::vector<int64_t> shape = spec.shape;
    if (model.batched())
      shape[0] = job->rows;
    size_t bytes = (size_t)job->rows * model.outputRowBytes()[wanted[k].index];
    out += k ? ",{" : "{";
    out += "\"name\":" + quoted(spec.name) + ",\"datatype\":\"" +
           spec.type->kserve + "\",\"shape\":" + shapeText(shape);
    if (wanted[k].binary) {
      anyBinary = true;
      out += ",\"parameters\":{\"binary_data_size\":" + std::to_string(bytes) +
             "}}";
    } else {
      out += ",\"data\":";
      appendJsonData(out, job->outputs[wanted[k].index].data(), spec.dtype(),
                     bytes / spec.elementSize());
      out += "}";
    }
  }
  out += "]}";
  if (anyBinary) {
    response.jsonBytes = out.size();
    for (const RequestedOutput &w : wanted)
      if (w.binary)
        out.append(job->outputs[w.index].data(),
                   (size_t)job->rows * model.outputRowBytes()[w.index]);
  }
  return response;
}

} // namespace kiln::serve
