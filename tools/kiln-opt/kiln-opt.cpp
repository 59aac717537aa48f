//===- kiln-opt.cpp - mlir-opt with Kiln's dialects and passes --*- C++ -*-===//
#include "kiln/Codegen/CPU/Passes.h"
#include "kiln/Codegen/Common/Passes.h"
#include "kiln/Codegen/Common/Remarks.h"
#include "kiln/Codegen/GPU/Passes.h"
#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"
#include "kiln/Dialect/Onnx/OnnxDialect.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::kiln::registerBoundedAnalysisModels(registry);
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates kernels to LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::registerAllPasses();
  registry.insert<mlir::kiln::KilnDialect, mlir::kiln::onnx::OnnxDialect>();
  mlir::kiln::registerKilnPasses();
  mlir::kiln::registerKilnConversionPasses();
  mlir::kiln::registerKilnCodegenCommonPasses();
  mlir::kiln::registerKilnCPUPasses();
  mlir::kiln::registerKilnCPUPassPipelines();
  mlir::kiln::registerKilnGPUPasses();
  mlir::kiln::registerDebugOnlyOption();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Kiln optimizer driver\n", registry));
}
