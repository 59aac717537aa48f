//===- Module.cpp - the kiln._kiln extension module -----------------------===//

#include "Binding.h"

#include "kiln/Pipeline/Pipeline.h"

namespace py = pybind11;

namespace mlir::kiln::python {

namespace {
// The kiln.Error class. Deliberately leaked: it must outlive the interpreter's
// teardown of this module, and static py::object destructors run too late.
PyObject *errorType = nullptr;
} // namespace

} // namespace mlir::kiln::python

using mlir::kiln::python::Error;

PYBIND11_MODULE(_kiln, m) {
  m.doc() = "Kiln: compile ONNX models ahead of time and run them with numpy.";

  mlir::kiln::python::errorType = PyErr_NewExceptionWithDoc(
      "kiln.Error",
      "Raised for every Kiln failure: a model that does not compile, a .so "
      "that does not load, inputs that do not match the model. `code` names "
      "the runtime status (e.g. 'INVALID_ARGUMENT', 'UNSUPPORTED_ISA') or is "
      "None for compile errors.",
      PyExc_RuntimeError, nullptr);
  if (!mlir::kiln::python::errorType)
    throw py::error_already_set();
  py::handle errorType(mlir::kiln::python::errorType);
  errorType.attr("code") = py::none();
  m.attr("Error") = errorType;

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const Error &e) {
      py::handle type(mlir::kiln::python::errorType);
      py::object exc = type(e.what());
      if (!e.code().empty())
        exc.attr("code") = e.code();
      PyErr_SetObject(type.ptr(), exc.ptr());
    }
  });

  mlir::kiln::python::defineCompile(m);
  mlir::kiln::python::defineModel(m);
  m.attr("__version__") = mlir::kiln::versionString();
  m.attr("ABI_VERSION") = KILN_ABI_VERSION;
}
