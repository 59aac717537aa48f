//===- Model.cpp - kiln.load() and kiln.Model -----------------------------===//
//
// A Model is one model.so, opened through the model client (lib/Client), plus
// one session. Only the public ABI in runtime.h is used, the way any user
// program would load a model; the runtime sources are never linked in here.
//
//===----------------------------------------------------------------------===//

#include "Binding.h"

#include "kiln/Client/Model.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

namespace py = pybind11;
namespace client = ::kiln::client;

namespace mlir::kiln::python {
namespace {

/// Name, element type and shape of one input or output, copied out of the
/// .so so it stays valid whatever happens to the library.
struct TensorInfo {
  std::string name;
  int32_t kilnDtype = 0;
  py::dtype dtype;
  std::vector<int64_t> shape;
  size_t bytes = 0;

  py::tuple shapeTuple() const { return py::cast(shape); }
  std::string describe() const;
};

std::string dtypeName(const py::dtype &dtype) {
  return py::str(py::handle(dtype)).cast<std::string>();
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string describeArray(const py::array &a) {
  std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
  return dtypeName(a.dtype()) + " of shape " + shapeString(shape);
}

std::string TensorInfo::describe() const {
  return dtypeName(dtype) + " of shape " + shapeString(shape);
}

/// The memory of output arrays, given back when numpy frees an array and
/// handed to the next call's outputs. A fresh array per call is fresh pages:
/// glibc returns a few MB freed at the top of its heap to the kernel, and
/// the next call faults them in again, zeroed. A decoder step of 0.6 ms
/// took 0.9 ms that way (1.2 ms with its grown keys and values allocated at
/// their bound). The pool keeps at most two calls' worth of outputs.
class OutputPool {
public:
  ~OutputPool() {
    for (auto &[bytes, p] : free_)
      std::free(p);
  }

  /// Makes room for a call whose outputs take `bytes`.
  void expect(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    keep_ = std::max(keep_, 2 * bytes);
  }

  /// A 64-byte aligned block of `bytes`, reused or new.
  void *take(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = free_.find(bytes); it != free_.end()) {
        void *p = it->second;
        free_.erase(it);
        held_ -= bytes;
        return p;
      }
    }
    void *p =
        std::aligned_alloc(64, std::max<size_t>(64, (bytes + 63) / 64 * 64));
    if (!p)
      throw std::bad_alloc();
    return p;
  }

  void give(void *p, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (held_ + bytes > keep_) {
      std::free(p);
      return;
    }
    free_.emplace(bytes, p);
    held_ += bytes;
  }

private:
  std::mutex mutex_;
  std::multimap<size_t, void *> free_;
  size_t held_ = 0, keep_ = 0;
};

/// An array of `shape` over a block of `bytes` from `pool`, which gets the
/// block back when the array (and every view of it) is freed.
py::array pooledArray(const std::shared_ptr<OutputPool> &pool,
                      const py::dtype &dtype, const std::vector<int64_t> &shape,
                      size_t bytes) {
  struct Block {
    std::shared_ptr<OutputPool> pool;
    void *data;
    size_t bytes;
  };
  auto block = std::make_unique<Block>(Block{pool, pool->take(bytes), bytes});
  void *data = block->data;
  py::capsule owner(block.get(), [](void *p) {
    auto *b = static_cast<Block *>(p);
    b->pool->give(b->data, b->bytes);
    delete b;
  });
  block.release();
  return py::array(dtype, shape, data, owner);
}

/// A client error as a kiln.Error: "<what>: <status message>" with the
/// status code's name when a kiln_* call failed, the client's message (and
/// no code) when the file could not be opened or used.
Error fromClient(const client::Error &e, const std::string &what) {
  if (e.code() == KILN_OK)
    return Error(e.what());
  return Error(what + ": " + e.statusMessage(),
               client::statusCodeName(e.code()));
}

/// `t` with its numpy dtype; a dtype numpy lacks (bfloat16) is an error.
TensorInfo toNumpy(const client::TensorInfo &t, const char *kind,
                   const std::string &path) {
  if (!t.type->numpy)
    throw Error("'" + path + "': " + kind + " '" + t.name + "' has dtype " +
                t.type->name + ", which numpy cannot represent");
  TensorInfo info;
  info.name = t.name;
  info.kilnDtype = t.dtype();
  info.dtype = py::dtype(t.type->numpy);
  info.shape = t.shape;
  info.bytes = t.bytes();
  return info;
}

class Model {
public:
  Model(std::shared_ptr<const client::Model> model, int threads);
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  py::list call(const py::args &arrays);
  py::dict runDict(const py::object &feeds);
  std::string repr() const;

  const std::string &path() const { return model_->path(); }
  const std::string &name() const { return model_->info().name; }
  const std::vector<TensorInfo> &inputs() const { return inputs_; }
  const std::vector<TensorInfo> &outputs() const { return outputs_; }
  // A copy each time: callers may edit what they get.
  py::dict info() const { return info_.attr("copy")(); }

private:
  /// The tensors of one call: the compiled ones, or for a symbolic batch
  /// those at the batch of the call's first batched input (`arg(i)` gives
  /// input i as passed).
  using Tensors = std::pair<std::vector<TensorInfo>, std::vector<TensorInfo>>;
  Tensors tensorsFor(const std::function<py::object(size_t)> &arg) const;
  py::array checkInput(const TensorInfo &want, const py::handle &obj) const;
  std::vector<py::array> execute(const std::vector<py::array> &inputs,
                                 const Tensors &tensors);

  std::shared_ptr<const client::Model> model_;
  std::unique_ptr<client::Session> session_; // holds model_ open too
  std::vector<TensorInfo> inputs_, outputs_;
  py::dict info_;
  std::mutex runMutex_; // a session serves one thread at a time
  std::shared_ptr<OutputPool> outputPool_ = std::make_shared<OutputPool>();
};

Model::Model(std::shared_ptr<const client::Model> model, int threads)
    : model_(std::move(model)) {
  const client::ModelInfo &info = model_->info();
  for (const client::TensorInfo &t : info.inputs)
    inputs_.push_back(toNumpy(t, "input", path()));
  for (const client::TensorInfo &t : info.outputs)
    outputs_.push_back(toNumpy(t, "output", path()));
  info_["name"] = info.name;
  info_["hash"] = info.hash;
  info_["compiler_version"] = info.compilerVersion;
  info_["compile_options"] = info.compileOptions;
  info_["target_triple"] = info.targetTriple;
  info_["cpu"] = info.cpu;
  info_["required_isa"] = info.requiredIsa;
  info_["arena_bytes"] = info.arenaBytes;
  info_["arena_alignment"] = info.arenaAlignment;
  info_["abi_version"] = info.abiVersion;
  info_["batch_sizes"] = info.batchSizes;
  // Symbolic dimensions: name, range, and the tensors that lead with them.
  py::list symbols;
  for (size_t k = 0; k < info.symbols.size(); ++k) {
    py::dict sym;
    sym["name"] = info.symbols[k].name;
    sym["min"] = info.symbols[k].min;
    sym["max"] = info.symbols[k].max;
    py::list uses;
    auto addUses = [&](const std::vector<client::TensorInfo> &ts,
                       const std::vector<std::vector<int32_t>> &axes) {
      for (size_t i = 0; i < ts.size() && i < axes.size(); ++i)
        for (size_t d = 0; d < axes[i].size(); ++d)
          if (axes[i][d] == static_cast<int32_t>(k))
            uses.append(py::make_tuple(ts[i].name, d));
    };
    addUses(info.inputs, info.inputSymbols);
    addUses(info.outputs, info.outputSymbols);
    sym["dimensions"] = uses;
    if (info.runtimeExtents && k == 0)
      sym["independent_batch"] = info.independentBatch;
    symbols.append(sym);
  }
  info_["symbolic_dimensions"] = symbols;

  // The session checks the CPU's features, so an unsupported ISA fails here.
  try {
    session_ = model_->createSession({threads, /*batchSize=*/0});
  } catch (const client::Error &e) {
    throw fromClient(e, "cannot create a session for '" + path() + "'");
  }
}

Model::Tensors
Model::tensorsFor(const std::function<py::object(size_t)> &arg) const {
  const client::ModelInfo &info = model_->info();
  if (!info.dynamic())
    return {inputs_, outputs_};
  // The shapes of the arguments decide the run's; checkInput reports an
  // argument numpy cannot read.
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    py::array a = py::array::ensure(arg(i));
    if (!a) {
      shapes.push_back(inputs_[i].shape);
      continue;
    }
    shapes.emplace_back(a.shape(), a.shape() + a.ndim());
  }
  client::Signature sig;
  try {
    sig = model_->signatureForInputs(shapes);
  } catch (const client::Error &e) {
    throw Error("model '" + name() + "': " + e.what(), "INVALID_ARGUMENT");
  }
  Tensors t;
  for (const client::TensorInfo &x : sig.inputs)
    t.first.push_back(toNumpy(x, "input", path()));
  for (const client::TensorInfo &x : sig.outputs)
    t.second.push_back(toNumpy(x, "output", path()));
  return t;
}

/// Converts one argument to a C-contiguous, aligned array of exactly the
/// model's dtype and shape. Never casts: a silent cast hides caller bugs.
py::array Model::checkInput(const TensorInfo &want,
                            const py::handle &obj) const {
  const std::string expected =
      "input '" + want.name + "' expects " + want.describe();
  py::array array = py::array::ensure(
      obj, py::array::c_style | py::detail::npy_api::NPY_ARRAY_ALIGNED_);
  if (!array)
    throw Error(expected + "; got a " +
                std::string(py::str(obj.get_type().attr("__name__"))) +
                " that numpy cannot convert to an array");
  bool sameShape = array.ndim() == static_cast<py::ssize_t>(want.shape.size());
  for (size_t d = 0; sameShape && d < want.shape.size(); ++d)
    sameShape = array.shape(d) == want.shape[d];
  if (!array.dtype().equal(want.dtype) || !sameShape)
    throw Error(
        expected + "; got " + describeArray(array) +
            (sameShape ? " (kiln does not cast: convert with .astype())" : ""),
        "INVALID_ARGUMENT");
  return array;
}

std::vector<py::array> Model::execute(const std::vector<py::array> &inputs,
                                      const Tensors &tensors) {
  const std::vector<TensorInfo> &ins = tensors.first, &outs = tensors.second;
  std::vector<kiln_tensor> in(inputs.size()), out(outs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const py::array &a = inputs[i];
    in[i] = {const_cast<void *>(a.data()), static_cast<size_t>(a.nbytes()),
             ins[i].kilnDtype, static_cast<int32_t>(ins[i].shape.size()),
             ins[i].shape.data()};
  }
  std::vector<py::array> results;
  size_t outputBytes = 0;
  for (const TensorInfo &t : outs)
    outputBytes += t.bytes;
  outputPool_->expect(outputBytes);
  for (size_t i = 0; i < outs.size(); ++i) {
    const TensorInfo &t = outs[i];
    results.push_back(pooledArray(outputPool_, t.dtype, t.shape, t.bytes));
    out[i] = {results.back().mutable_data(), t.bytes, t.kilnDtype,
              static_cast<int32_t>(t.shape.size()), t.shape.data()};
  }

  std::vector<std::vector<int64_t>> written;
  try {
    // Release the GIL before taking the lock, never the other way round, so
    // a thread waiting for the session never holds up the interpreter. The
    // lock is released before the GIL is taken back.
    py::gil_scoped_release noGil;
    std::lock_guard<std::mutex> lock(runMutex_);
    session_->run(in, out);
    if (model_->info().runtimeExtents)
      for (size_t i = 0; i < outs.size(); ++i)
        written.push_back(session_->outputShape(i));
  } catch (const client::Error &e) {
    throw fromClient(e, "model '" + name() + "'");
  }
  // At run-time sizes an output is written at the front of its buffer at
  // the shape the model reports (smaller where an axis is computed): the
  // result is a C-contiguous view of that front, not a copy (a decoder's
  // grown keys and values, allocated at the cache's bound, were copied
  // whole each step). Pages of the buffer the run did not write were never
  // touched, so they take no memory.
  for (size_t i = 0; i < written.size(); ++i) {
    if (written[i] == outs[i].shape)
      continue;
    py::ssize_t elements = 1;
    for (int64_t n : written[i])
      elements *= n;
    if (elements > results[i].size())
      throw Error("model '" + name() + "' reports output '" + outs[i].name +
                      "' larger than its bound; the .so is damaged",
                  "INTERNAL");
    results[i] = py::array(outs[i].dtype, written[i], results[i].mutable_data(),
                           results[i]);
  }
  return results;
}

py::list Model::call(const py::args &arrays) {
  if (arrays.size() != inputs_.size()) {
    std::string names;
    for (const TensorInfo &t : inputs_)
      names += (names.empty() ? "" : ", ") + t.name;
    throw Error("model '" + name() + "' takes " +
                    std::to_string(inputs_.size()) + " input(s) (" + names +
                    "); got " + std::to_string(arrays.size()),
                "INVALID_ARGUMENT");
  }
  Tensors tensors =
      tensorsFor([&](size_t i) -> py::object { return arrays[i]; });
  std::vector<py::array> in;
  for (size_t i = 0; i < inputs_.size(); ++i)
    in.push_back(checkInput(tensors.first[i], arrays[i]));
  py::list result;
  for (py::array &a : execute(in, tensors))
    result.append(std::move(a));
  return result;
}

py::dict Model::runDict(const py::object &feeds) {
  if (!py::isinstance<py::dict>(feeds) &&
      !(py::hasattr(feeds, "keys") && py::hasattr(feeds, "__getitem__")))
    throw py::type_error(
        "Model.run() takes a dict {input name: array}, not " +
        std::string(py::str(feeds.get_type().attr("__name__"))));
  std::string names;
  for (const TensorInfo &t : inputs_)
    names += (names.empty() ? "'" : ", '") + t.name + "'";
  for (py::handle key : feeds.attr("keys")()) {
    bool known = false;
    for (const TensorInfo &t : inputs_)
      known = known || (py::isinstance<py::str>(key) &&
                        key.cast<std::string>() == t.name);
    if (!known)
      throw Error("model '" + name() + "' has no input " +
                      std::string(py::repr(key)) + "; its inputs are " + names,
                  "INVALID_ARGUMENT");
  }
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (!feeds.attr("__contains__")(py::str(inputs_[i].name)).cast<bool>())
      throw Error("model '" + name() + "': missing input '" + inputs_[i].name +
                      "' (" + inputs_[i].describe() + "); its inputs are " +
                      names,
                  "INVALID_ARGUMENT");
  Tensors tensors = tensorsFor([&](size_t i) -> py::object {
    return feeds[py::str(inputs_[i].name)];
  });
  std::vector<py::array> in;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    py::str key(inputs_[i].name);
    if (!feeds.attr("__contains__")(key).cast<bool>())
      throw Error("model '" + name() + "': missing input '" + inputs_[i].name +
                      "' (" + inputs_[i].describe() + "); its inputs are " +
                      names,
                  "INVALID_ARGUMENT");
    in.push_back(checkInput(tensors.first[i], feeds[key]));
  }
  py::dict result;
  std::vector<py::array> out = execute(in, tensors);
  for (size_t i = 0; i < outputs_.size(); ++i)
    result[py::str(outputs_[i].name)] = std::move(out[i]);
  return result;
}

std::string Model::repr() const {
  auto list = [](const std::vector<TensorInfo> &ts) {
    std::string s = "[";
    for (size_t i = 0; i < ts.size(); ++i) {
      std::string dims = shapeString(ts[i].shape); // "(2, 3)" -> "[2, 3]"
      if (dims.size() > 2 && dims[dims.size() - 2] == ',')
        dims.erase(dims.size() - 2, 1);
      s += (i ? ", " : "") + ts[i].name + ": " + dtypeName(ts[i].dtype) + "[" +
           dims.substr(1, dims.size() - 2) + "]";
    }
    return s + "]";
  };
  return "<kiln.Model '" + name() + "' inputs=" + list(inputs_) +
         " outputs=" + list(outputs_) + " path='" + path() + "'>";
}

std::unique_ptr<Model> loadModel(const py::object &soPath, int threads) {
  if (threads < 1)
    throw py::value_error("load(): threads must be at least 1, got " +
                          std::to_string(threads));
  py::module_ os = py::module_::import("os");
  if (!py::isinstance<py::str>(soPath) && !py::isinstance<py::bytes>(soPath) &&
      !py::hasattr(soPath, "__fspath__"))
    throw py::type_error(
        "load() takes a str or os.PathLike, not " +
        std::string(py::str(soPath.get_type().attr("__name__"))));
  // An absolute path: dlopen would search the library path for a bare name.
  std::string path = os.attr("path")
                         .attr("abspath")(os.attr("fsdecode")(soPath))
                         .cast<std::string>();
  std::shared_ptr<const client::Model> model;
  try {
    model = client::Model::open(path);
  } catch (const client::Error &e) {
    throw fromClient(e, "cannot load '" + path + "'");
  }
  return std::make_unique<Model>(std::move(model), threads);
}

} // namespace

void defineModel(py::module_ &m) {
  py::class_<TensorInfo>(m, "TensorInfo",
                         "Name, numpy dtype and static shape of one model "
                         "input or output.")
      .def_readonly("name", &TensorInfo::name, "The ONNX name.")
      .def_readonly("dtype", &TensorInfo::dtype, "The numpy dtype.")
      .def_property_readonly("shape", &TensorInfo::shapeTuple,
                             "The shape as a tuple of ints (the first batch "
                             "size for a model with several).")
      .def("__repr__", [](const TensorInfo &t) {
        return "TensorInfo(name='" + t.name + "', dtype=" + dtypeName(t.dtype) +
               ", shape=" + shapeString(t.shape) + ")";
      });

  py::class_<Model>(m, "Model",
                    "A compiled model loaded from its .so, with one session. "
                    "Calls are thread-safe: concurrent callers take turns on "
                    "the session with the GIL released.")
      .def("__call__", &Model::call,
           "model(*arrays) -> list of numpy arrays, one per output in model "
           "order. Each input must match the model's dtype and shape exactly.")
      .def("run", &Model::runDict, py::arg("feeds"),
           "model.run({input name: array}) -> {output name: array}")
      .def_property_readonly("inputs", &Model::inputs,
                             "The inputs as TensorInfo, in the order calls "
                             "take them.")
      .def_property_readonly("outputs", &Model::outputs,
                             "The outputs as TensorInfo, in the order calls "
                             "return them.")
      .def_property_readonly("info", &Model::info,
                             "The model's metadata as a dict: name, hash, "
                             "compiler_version, compile_options, cpu, "
                             "required_isa, arena_bytes, batch_sizes, ...")
      .def_property_readonly("name", &Model::name,
                             "The model name (graph name or --name).")
      .def_property_readonly("path", &Model::path,
                             "The path of the loaded .so.")
      .def("__repr__", &Model::repr);

  m.def("load", &loadModel, py::arg("so_path"), py::arg("threads") = 1,
        R"(load(so_path, threads=1) -> Model

Loads a model.so written by kiln.compile() or kiln-compile and creates one
session that runs on `threads` threads (1: the calling thread only; more
starts threads - 1 workers that share each parallel loop with the caller). Raises kiln.Error when the file is not a loadable Kiln model or this
CPU lacks an instruction set the model was compiled for (code
'UNSUPPORTED_ISA').)");

  // Show the public package in reprs and tracebacks, not the extension.
  for (const char *name : {"TensorInfo", "Model"})
    m.attr(name).attr("__module__") = "kiln";
}

} // namespace mlir::kiln::python
