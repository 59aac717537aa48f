//===- Compile.cpp - kiln.compile() ---------------------------------------===//
//
// Maps Python keyword options onto kiln::CompileOptions and calls
// kiln::compile() with the GIL released.
//
//===----------------------------------------------------------------------===//

#include "Binding.h"

#include "kiln/Pipeline/Pipeline.h"

#include <mutex>

namespace py = pybind11;

namespace mlir::kiln::python {
namespace {

std::string toPath(py::handle obj, const char *what) {
  if (!py::isinstance<py::str>(obj) && !py::isinstance<py::bytes>(obj) &&
      !py::hasattr(obj, "__fspath__"))
    throw py::type_error(std::string("compile(): ") + what +
                         " must be a str or os.PathLike, not " +
                         std::string(py::str(obj.get_type().attr("__name__"))));
  return py::module_::import("os").attr("fsdecode")(obj).cast<std::string>();
}

std::string toStr(py::handle value, const std::string &key) {
  if (!py::isinstance<py::str>(value))
    throw py::type_error(
        "compile(): option '" + key + "' must be a str, not " +
        std::string(py::str(value.get_type().attr("__name__"))));
  return value.cast<std::string>();
}

int64_t toInt(py::handle value, const std::string &what) {
  PyObject *index = PyNumber_Index(value.ptr());
  if (!index) {
    PyErr_Clear();
    throw py::type_error(
        "compile(): " + what + " must be an int, not " +
        std::string(py::str(value.get_type().attr("__name__"))));
  }
  return py::reinterpret_steal<py::int_>(index).cast<int64_t>();
}

bool toBool(py::handle value) {
  int truth = PyObject_IsTrue(value.ptr());
  if (truth < 0)
    throw py::error_already_set();
  return truth == 1;
}

/// 7 or (MIN, MAX) -> a DimBound; `what` names it in errors.
DimBound toBound(py::handle value, const std::string &what) {
  DimBound bound;
  if (py::isinstance<py::tuple>(value) || py::isinstance<py::list>(value)) {
    auto pair = py::reinterpret_borrow<py::sequence>(value);
    if (py::len(pair) != 2)
      throw py::type_error("compile(): " + what +
                           " must be an int or a (min, max) pair");
    bound = {toInt(pair[0], what + " min"), toInt(pair[1], what + " max")};
  } else {
    bound = DimBound::exactly(toInt(value, what));
  }
  if (bound.min < 0 || bound.max < bound.min)
    throw Error("compile(): " + what + " is " + toString(bound) +
                "; sizes must be >= 0 and a range (min, max) not empty");
  return bound;
}

/// {"input": (1, 3, 224, 224), ...} -> CompileOptions::inputShapes; a
/// dimension may be a (min, max) range.
void parseInputShapes(py::handle value, CompileOptions &options) {
  if (!py::isinstance<py::dict>(value) && !py::hasattr(value, "items"))
    throw py::type_error("compile(): option 'input_shapes' must be a dict "
                         "{input name: shape tuple}");
  for (py::handle item : value.attr("items")()) {
    auto pair = py::reinterpret_borrow<py::tuple>(item);
    std::string name = toStr(pair[0], "input_shapes key");
    py::object dims = pair[1];
    if (py::isinstance<py::str>(dims) || !py::hasattr(dims, "__iter__"))
      throw py::type_error("compile(): input_shapes['" + name +
                           "'] must be a sequence of ints");
    std::vector<DimBound> shape;
    for (py::handle d : dims)
      shape.push_back(toBound(d, "input_shapes['" + name + "'] dimension"));
    options.inputShapes.emplace_back(name, std::move(shape));
  }
}

/// {"batch": 8, "seq": (1, 512)} -> CompileOptions::dims.
void parseDims(py::handle value, CompileOptions &options) {
  if (!py::isinstance<py::dict>(value) && !py::hasattr(value, "items"))
    throw py::type_error("compile(): option 'dims' must be a dict "
                         "{dim_param: size or (min, max)}");
  for (py::handle item : value.attr("items")()) {
    auto pair = py::reinterpret_borrow<py::tuple>(item);
    std::string symbol = toStr(pair[0], "dims key");
    options.dims.emplace_back(symbol,
                              toBound(pair[1], "dims['" + symbol + "']"));
  }
}

/// Without an explicit output, write next to the model: model.onnx ->
/// model.so (or model.o, model.s, model.ll, model.<stage>.mlir).
std::string defaultOutput(const std::string &input, EmitKind emit) {
  std::string base = input;
  size_t slash = base.find_last_of('/');
  size_t dot = base.find_last_of('.');
  if (dot != std::string::npos &&
      (slash == std::string::npos || dot > slash + 1))
    base.resize(dot);
  switch (emit) {
  case EmitKind::Import:
    return base + ".import.mlir";
  case EmitKind::Kiln:
    return base + ".kiln.mlir";
  case EmitKind::Linalg:
    return base + ".linalg.mlir";
  case EmitKind::LLVM:
    return base + ".ll";
  case EmitKind::Asm:
    return base + ".s";
  case EmitKind::Obj:
    return base + ".o";
  case EmitKind::MemoryPlan:
    return base + ".memory-plan.json";
  case EmitKind::So:
    break;
  }
  return base + ".so";
}

/// The value of an option parsed from its text, or kiln.Error naming the
/// accepted values.
template <typename T> T parsed(llvm::Expected<T> value) {
  if (!value)
    throw Error(llvm::toString(value.takeError()));
  return *value;
}

std::string compileModel(py::object onnxPath, py::object output,
                         py::kwargs kwargs) {
  CompileOptions options;
  options.inputPath = toPath(onnxPath, "onnx_path");
  for (auto item : kwargs) {
    std::string key = py::cast<std::string>(item.first);
    py::handle value = item.second;
    if (key == "emit") {
      std::string emit = toStr(value, key);
      llvm::Expected<EmitKind> kind = parseEmitKind(emit);
      if (!kind) {
        llvm::consumeError(kind.takeError());
        throw Error("compile(): emit='" + emit +
                    "' is not one of so, obj, asm, llvm, linalg, kiln, import, "
                    "memory-plan");
      }
      options.emit = *kind;
    } else if (key == "mcpu") {
      options.mcpu = toStr(value, key);
    } else if (key == "target") {
      options.target = parsed(parseTarget(toStr(value, key)));
    } else if (key == "gpu_arch") {
      options.gpuArch = parsed(parseGpuArch(toStr(value, key)));
    } else if (key == "mattr") {
      options.mattr = toStr(value, key);
    } else if (key == "opt_level") {
      int64_t level = toInt(value, "option 'opt_level'");
      if (level < 0 || level > 3)
        throw Error("compile(): opt_level=" + std::to_string(level) +
                    " is out of range; use 0, 1, 2 or 3");
      options.optLevel = static_cast<unsigned>(level);
    } else if (key == "name") {
      options.name = toStr(value, key);
    } else if (key == "input_shapes") {
      parseInputShapes(value, options);
    } else if (key == "dims") {
      parseDims(value, options);
    } else if (key == "batch_sizes") {
      for (py::handle b : py::iter(value)) {
        int64_t size = toInt(b, "batch_sizes entry");
        if (size < 1)
          throw Error("compile(): batch_sizes entries must be positive, got " +
                      std::to_string(size));
        options.batchSizes.push_back(size);
      }
    } else if (key == "timing") {
      options.timing = toBool(value);
    } else if (key == "remarks") {
      options.remarks = toBool(value);
    } else if (key == "verify_each") {
      options.verifyEach = toBool(value);
    } else if (key == "quantize") {
      options.quantize = parsed(
          parseQuantization(value.is_none() ? "none" : toStr(value, key)));
    } else if (key == "calibration_data") {
      options.calibrationData = toPath(value, "calibration_data");
    } else if (key == "calibration") {
      options.calibrationMethod =
          parsed(parseCalibrationMethod(toStr(value, key)));
    } else if (key == "calibration_percentile") {
      options.calibrationPercentile = py::cast<double>(value);
    } else if (key == "max_accuracy_drop") {
      options.maxAccuracyDrop = py::cast<double>(value);
    } else if (key == "precision") {
      options.precision = parsed(
          parsePrecision(value.is_none() ? "fp32" : toStr(value, key)));
    } else if (key == "half_compute") {
      std::string mode = toStr(value, key);
      if (mode != "f32" && mode != "native")
        throw Error("compile(): half_compute must be \"f32\" or \"native\", "
                    "got \"" + mode + "\"");
      options.widenHalf = mode == "f32";
    } else if (key == "keep_fp32") {
      if (py::isinstance<py::str>(value))
        throw py::type_error("compile(): keep_fp32 must be a list of node "
                             "names, not a string");
      for (py::handle n : py::iter(value))
        options.keepFp32.push_back(toStr(n, "keep_fp32 entry"));
    } else if (key == "max_tensor_bytes") {
      int64_t bytes = toInt(value, "max_tensor_bytes");
      if (bytes < 1)
        throw Error("compile(): max_tensor_bytes must be positive, got " +
                    std::to_string(bytes));
      options.maxTensorBytes = (uint64_t)bytes;
    } else {
      throw py::type_error("compile() got an unexpected keyword argument '" +
                           key +
                           "' (options: emit, target, gpu_arch, mcpu, mattr, "
                           "opt_level, name, input_shapes, dims, batch_sizes, "
                           "timing, remarks, verify_each, quantize, calibration_data, "
                           "calibration, calibration_percentile, "
                           "max_accuracy_drop, precision, half_compute, keep_fp32, "
                           "max_tensor_bytes)");
    }
  }
  options.outputPath = output.is_none()
                           ? defaultOutput(options.inputPath, options.emit)
                           : toPath(output, "output");

  std::string failure;
  std::vector<std::string> notes, remarks;
  std::string standardOutput;
  {
    py::gil_scoped_release noGil;
    // One compile at a time per process: the pipeline may touch LLVM's
    // process-wide state (target registry, options). Other Python threads,
    // including ones running models, keep going meanwhile.
    static std::mutex compileMutex;
    std::lock_guard<std::mutex> lock(compileMutex);
    llvm::Expected<CompileResult> result = kiln::compile(options);
    if (!result)
      failure = llvm::toString(result.takeError());
    else {
      notes = result->notes;
      remarks = result->remarks;
      standardOutput = std::move(result->standardOutput);
    }
  }
  if (!failure.empty())
    throw Error(failure);
  // Notes (e.g. which matmuls --quantize=dynamic left in f32) go where
  // kiln-compile prints them: stderr.
  py::object stderr_ = py::module_::import("sys").attr("stderr");
  for (const std::string &note : notes)
    stderr_.attr("write")("kiln: note: " + note + "\n");
  for (const std::string &remark : remarks)
    stderr_.attr("write")("kiln: remark: " + remark + "\n");
  if (options.outputPath == "-") {
    py::object out = py::module_::import("sys").attr("stdout");
    if (options.emit == EmitKind::Obj && py::hasattr(out, "buffer"))
      out.attr("buffer").attr("write")(py::bytes(standardOutput));
    else
      out.attr("write")(py::str(standardOutput));
  }
  return options.outputPath;
}

} // namespace

void defineCompile(py::module_ &m) {
  m.def("compile", &compileModel, py::arg("onnx_path"),
        py::arg("output") = py::none(),
        R"(compile(onnx_path, output=None, **options) -> str

Compiles an ONNX model ahead of time and returns the path written.

`output` defaults to the model's path with `.so` in place of its extension
(for other `emit` kinds: .o, .s, .ll, .<stage>.mlir). Writing a .so also
writes OUT.h and OUT.json beside it.

Options:
  emit         "so" (default), "obj", "asm", "llvm", "linalg", "kiln",
               "import", "memory-plan"
  target       "cpu" (default) or "cuda" (NVIDIA GPU kernels; see docs/gpu.md)
  gpu_arch     "sm_80" (default) or "sm_90", with target="cuda"
  mcpu         LLVM CPU name, e.g. "skylake-avx512"; default: this machine
  mattr        extra LLVM features, e.g. "-avx512f"
  opt_level    0..3 (default 3)
  name         model name (default: the ONNX graph name)
  input_shapes {input name: shape tuple} giving symbolic dimensions sizes
  dims         {dim_param: size} giving a symbolic dimension shared by the
               inputs one size
  batch_sizes  e.g. (1, 4, 8): batch-size variants in one .so
  timing       print per-phase wall times to stderr
  remarks      print to stderr every op code generation left off its fast
               path, and why
  verify_each  run the MLIR verifier after every pass
  quantize     "none" (default); "dynamic": int8 weights and run-time
               quantized activations for MatMul/Gemm with constant weights
               (needs avx512vnni; docs/quantization.md); "static": int8
               MatMul/Gemm and Conv with calibrated activation scales
  calibration_data  quantize="static" (and max_accuracy_drop in any
               mode): a folder of input_0.pb, ... or of
               test_data_set_<n> folders (kiln.write_calibration_data
               writes one from numpy arrays), or a .npz with one array per
               model input, stacked [samples, ...]
  calibration  "minmax" (default), "percentile" or "entropy"
  calibration_percentile  for calibration="percentile" (default 99.99)
  max_accuracy_drop  quantize="static"|"dynamic" or precision="bf16"|"fp16":
               keep the most sensitive nodes in f32 until the model is
               within this fraction of f32 on the calibration samples
               (relative L2 of every output, top-1)
  precision    "fp32" (default), "bf16": MatMul/Gemm/Conv in bf16 on AMX
               tiles, accumulated in f32 (needs amx-bf16), or "fp16":
               MatMul/Gemm/Conv on fp16 operands, weights stored in fp16,
               accumulated in f32
  half_compute "f32" (default): a model whose tensors are fp16 or bf16 (as
               export tools convert them) computes in f32, its own casts to
               half types still rounding; "native": every node computes in
               the half type
  keep_fp32    list of ONNX node names that quantize/precision leave in f32
  max_tensor_bytes  the most bytes one tensor a node computes may hold
               (default 16 GiB)

Raises kiln.Error with every diagnostic when the model does not compile,
TypeError for an unknown option name or a value of the wrong type.
The GIL is released while compiling.)");
}

} // namespace mlir::kiln::python
