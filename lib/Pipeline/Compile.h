//===- Compile.h - the compile's private request and phases ------*- C++ -*-===//
//
// kiln::compile(options) is a CompileRequest with nothing internal set. The
// calibration and the accuracy budget search (Calibration.cpp) compile the
// model again with internal settings a user never gives: the inputs of the
// quantizable nodes as extra outputs, or ranges calibrated already. They
// live here, not in the public CompileOptions.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_PIPELINE_COMPILE_H
#define KILN_LIB_PIPELINE_COMPILE_H

#include "kiln/Pipeline/Pipeline.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir::kiln {

struct CompileRequest {
  CompileOptions options;
  /// Return the input of every node static int8 would convert as extra
  /// outputs (kiln.observe:<i>); with observeAllProducts, of every f32
  /// MatMul/Gemm/Conv.
  bool observeQuantInputs = false;
  bool observeAllProducts = false;
  /// Calibrated ranges to use instead of calibrating again (the budget
  /// search's trial compiles).
  std::vector<std::pair<float, float>> activationRanges;
};

struct CompileOutcome {
  CompileResult result;
  /// With observeQuantInputs: the node name of each observed input.
  std::vector<std::string> observedNodes;
};

/// Compiles `request.options.inputPath` as far as `request.options.emit`.
llvm::Expected<CompileOutcome> compileRequest(const CompileRequest &request);

/// The options as the model records them (kiln_model_info.compile_options);
/// `cpu` is the target CPU's name.
std::string describeOptions(const CompileOptions &options,
                            const std::string &cpu);

} // namespace mlir::kiln

#endif
