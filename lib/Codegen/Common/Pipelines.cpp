//===- Pipelines.cpp - pass pipelines every target shares --------*- C++ -*-===//
#include "kiln/Codegen/Common/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void kiln::buildBufferizeToArenaPipeline(
    OpPassManager &pm, llvm::function_ref<void(OpPassManager &)> beforeArena,
    bool returnAtFailedGuard) {
  pm.addNestedPass<func::FuncOp>(createMarkInputsReadOnlyPass());
  pm.addPass(createEliminateEmptyTensorsPass());
  pm.addNestedPass<func::FuncOp>(createDropInPlaceMaterializePass());
  pm.addPass(bufferization::createEmptyTensorToAllocTensorPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Loops that carried a tensor now forward one buffer: folding their
  // results lets a returned buffer become the caller's output.
  pm.addPass(createCanonicalizerPass());
  // An entry function with symbolic dimensions takes its run-time sizes and
  // writes its outputs itself; the others are left to the next pass.
  pm.addPass(createBindSymbolicShapesPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (beforeArena)
    beforeArena(pm);
  ArenaAllocationPassOptions arena;
  arena.returnAtFailedGuard = returnAtFailedGuard;
  pm.addPass(createArenaAllocationPass(arena));
}
