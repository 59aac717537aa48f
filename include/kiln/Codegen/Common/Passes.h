//===- Passes.h - target-neutral code generation passes ---------*- C++ -*-===//
#ifndef KILN_CODEGEN_COMMON_PASSES_H
#define KILN_CODEGEN_COMMON_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::kiln {
#define GEN_PASS_DECL
#include "kiln/Codegen/Common/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Codegen/Common/Passes.h.inc"

/// Tensors to buffers, outputs to caller-owned arguments, and every other
/// buffer into the one arena (every target). `beforeArena` adds the passes
/// that must run on the buffers before the arena plans their lifetimes: ones
/// that change when a buffer is used (the AMX kernels apply their epilogue
/// where the epilogue was, so the product's inputs live until then).
/// `returnAtFailedGuard` is the arena pass's option of that name.
void buildBufferizeToArenaPipeline(
    OpPassManager &pm,
    llvm::function_ref<void(OpPassManager &)> beforeArena = nullptr,
    bool returnAtFailedGuard = true);

/// Kiln's ValueBounds models of scf.for and scf.if and subset models of
/// tensor slices, which answer in bounded time (BoundedAnalysis.cpp). The
/// first model attached to an op wins, so call this before
/// registerAllDialects (which attaches upstream's).
void registerBoundedAnalysisModels(DialectRegistry &registry);
} // namespace mlir::kiln

#endif
