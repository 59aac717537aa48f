//===- Passes.h - NVIDIA GPU code generation passes -------------*- C++ -*-===//
#ifndef KILN_CODEGEN_GPU_PASSES_H
#define KILN_CODEGEN_GPU_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <string>
#include <vector>

namespace mlir::kiln {
struct GpuProgram;

#define GEN_PASS_DECL
#include "kiln/Codegen/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Codegen/GPU/Passes.h.inc"

/// The packed weights global kiln-gpu-pack-weights creates.
inline constexpr const char *kWeightsGlobal = "__kiln_weights";

/// Reads what the GPU pipeline left in `module` (after gpu-module-to-binary):
/// the PTX of the one kernel module, the kernels, one launch list per entry
/// function in `entryNames` (each launch argument is an index of the entry
/// function's arguments: inputs, outputs, arena, weights) and the weights
/// blob. Emits an error on `module` and fails when the host side holds
/// anything but constant-sized launches of argument buffers.
LogicalResult extractGpuProgram(ModuleOp module,
                                const std::vector<std::string> &entryNames,
                                GpuProgram &out);
} // namespace mlir::kiln

#endif
