//===- Calibration.h - static int8 ranges and the accuracy budget -*- C++ -*-===//
#ifndef KILN_LIB_PIPELINE_CALIBRATION_H
#define KILN_LIB_PIPELINE_CALIBRATION_H

#include "Compile.h"

#include "Calibrate.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::kiln {

/// What calibration found: the range and RMS of each observed input, the
/// node it feeds, and the f32 model's outputs on the samples.
struct Calibration {
  kilnrun::CalibrationResult result;
  std::vector<std::string> nodes;
};

/// --quantize=static (and the accuracy budget, with `allProducts`):
/// compiles the model with every quantizable node's input (every f32
/// MatMul/Gemm/Conv's, with `allProducts`) as an extra output, runs it on the
/// calibration samples, and records the range of each observed input. The
/// model is built and run in a temporary folder that is removed afterwards.
/// `label` names the mode in the note added to `notes`.
llvm::Expected<Calibration> calibrate(const CompileOptions &options,
                                      llvm::StringRef label, bool allProducts,
                                      std::vector<std::string> &notes);

/// --max-accuracy-drop: the node names to keep in f32 so that the model in
/// the reduced precision `label` ("static int8", "dynamic int8", "bf16" or
/// "fp16") stays within the budget on the calibration samples.
llvm::Expected<std::vector<std::string>>
searchBudget(const CompileOptions &options, const Calibration &calibration,
             llvm::StringRef label, std::vector<std::string> &notes);

} // namespace mlir::kiln

#endif
