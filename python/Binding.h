//===- Binding.h - shared pieces of the kiln Python module ------*- C++ -*-===//
//
// The module is a thin layer: compile() forwards to kiln::compile(), load()
// goes through the public C ABI in runtime.h with the model client
// (lib/Client), exactly as kiln-run and kiln-serve do. Every failure becomes a
// kiln.Error through one type below.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PYTHON_BINDING_H
#define KILN_PYTHON_BINDING_H

#include "kiln/runtime.h"

#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>

namespace mlir::kiln::python {

/// Thrown anywhere in the binding; pybind11 turns it into a kiln.Error whose
/// `code` attribute names the kiln_status_code (None for compile errors).
class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message, std::string code = "")
      : std::runtime_error(message), code_(std::move(code)) {}
  const std::string &code() const { return code_; }

private:
  std::string code_;
};

/// Registers compile() on the module.
void defineCompile(pybind11::module_ &m);

/// Registers load(), Model and TensorInfo on the module.
void defineModel(pybind11::module_ &m);

} // namespace mlir::kiln::python

#endif
