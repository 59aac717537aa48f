//===- Pipelines.cpp - the CPU code generation pipelines ---------*- C++ -*-===//
#include "kiln/Codegen/CPU/Passes.h"
#include "kiln/Codegen/Common/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::kiln;

void kiln::buildCPUTilingPipeline(OpPassManager &funcPm,
                                  const CPUCodegenOptions &options) {
  funcPm.addPass(createSplitSharedFillsPass());
  if (options.amx)
    funcPm.addPass(createDropAmxZeroFillsPass());
  funcPm.addPass(createReadHalfWeightsPass());
  funcPm.addPass(createSplitSharedDestinationsPass());
  funcPm.addPass(createSplitConvChannelsPass({options.vectorWidth}));
  funcPm.addPass(createConvLanePartialsPass({options.vectorWidth}));
  funcPm.addPass(createPackConstantRhsPass({options.vectorWidth}));
  funcPm.addPass(createWriteIntoDestinationsPass());
  funcPm.addPass(createWriteConcatInPlacePass());
  funcPm.addPass(createMarkBorderFillsPass());
  if (options.amx)
    funcPm.addPass(createMarkAmxEpiloguesPass({options.amxEpilogueBytes}));
  TileAndVectorizePassOptions tile;
  tile.vectorWidth = options.vectorWidth;
  tile.parallelWork = options.parallelWork;
  tile.l2Bytes = options.l2Bytes;
  funcPm.addPass(createTileAndVectorizePass(tile));
}

void kiln::buildCPUCodegenPipeline(OpPassManager &pm,
                                   const CPUCodegenOptions &options) {
  pm.addPass(createVerifyCodegenInputPass());
  OpPassManager &kernels = pm.nest<func::FuncOp>();
  // With both, int8 products that fit AMX tiles are left to AMX. bf16
  // products without AMX run on the same kernel with vdpbf16ps.
  if (options.vnni) {
    VnniMatmulPassOptions vnni;
    vnni.amx = options.amx;
    vnni.avx2 = options.int8Avx2;
    kernels.addPass(createVnniMatmulPass(vnni));
  }
  if (options.bf16Dot) {
    VnniMatmulPassOptions bf16;
    bf16.bf16 = true;
    kernels.addPass(createVnniMatmulPass(bf16));
  }
  buildCPUTilingPipeline(kernels, options);
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createHoistInvariantSubsetsPass());
  kernels.addPass(createLowerVectorOpsPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createSplitEmptyTensorsPass());
  kernels.addPass(createDistinctResultsPass());

  buildBufferizeToArenaPipeline(pm, [&](OpPassManager &beforeArena) {
    if (!options.amx)
      return;
    beforeArena.addPass(createAmxMatmulPass());
    OpPassManager &cleanup = beforeArena.nest<func::FuncOp>();
    cleanup.addPass(createCanonicalizerPass());
    cleanup.addPass(createCSEPass());
  });
  OpPassManager &buffers = pm.nest<func::FuncOp>();
  buffers.addPass(createFillBordersPass());
  buffers.addPass(createRestrideGathersPass());
  buffers.addPass(createPrefetchPanelsPass());
  pm.addPass(createOutlineParallelLoopsPass());
  buildCPULoweringPipeline(pm, options.amx);
}

void kiln::buildCPULoweringPipeline(OpPassManager &pm, bool amx) {
  OpPassManager &loops = pm.nest<func::FuncOp>();
  loops.addPass(createConvertLinalgToLoopsPass());
  loops.addPass(createCheapFloatOpsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createCanonicalizerPass());
  // Float sums marked reassoc (WholeVectorSumToReduction) as trees.
  ConvertVectorToLLVMPassOptions toLlvm;
  toLlvm.reassociateFPReductions = true;
  pm.addPass(createConvertVectorToLLVMPass(toLlvm));
  pm.addNestedPass<func::FuncOp>(createExpandShapesByStridesPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addNestedPass<func::FuncOp>(createPointerArgumentsPass());
  ConvertFuncToLLVMPassOptions funcs;
  funcs.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcs));
  if (amx) {
    // convert-to-llvm knows AMX tile types (loop-carried accumulators in
    // block arguments); convert-cf-to-llvm does not.
    ConvertToLLVMPassOptions toLlvmAmx;
    toLlvmAmx.filterDialects = {"cf", "amx"};
    pm.addPass(createConvertToLLVMPass(toLlvmAmx));
  } else {
    pm.addPass(createConvertControlFlowToLLVMPass());
  }
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createLowerParallelLaunchesPass());
}

namespace {
struct TilingPipelineOptions
    : public PassPipelineOptions<TilingPipelineOptions> {
  Option<int64_t> vectorWidth{*this, "vector-width",
                              llvm::cl::desc("f32 lanes of a register"),
                              llvm::cl::init(16)};
  Option<bool> amx{*this, "amx",
                   llvm::cl::desc("the target runs products on AMX tiles"),
                   llvm::cl::init(false)};
  Option<int64_t> parallelWork{
      *this, "parallel-work",
      llvm::cl::desc("loop iterations from which threads share an op"),
      llvm::cl::init(32768)};
  Option<int64_t> l2Bytes{*this, "l2-bytes",
                          llvm::cl::desc("L2 cache bytes of one core"),
                          llvm::cl::init(1 << 20)};
  Option<int64_t> amxEpilogueBytes{
      *this, "amx-epilogue-bytes",
      llvm::cl::desc("bf16 AMX accumulator bytes from which the epilogue "
                     "runs per block"),
      llvm::cl::init(1 << 20)};
};
} // namespace

void kiln::registerKilnCPUPassPipelines() {
  PassPipelineRegistration<TilingPipelineOptions>(
      "kiln-cpu-tiling-pipeline",
      "The rewrites that prepare linalg ops for the CPU kernels, then "
      "kiln-cpu-tile-and-vectorize",
      [](OpPassManager &pm, const TilingPipelineOptions &o) {
        CPUCodegenOptions options;
        options.vectorWidth = o.vectorWidth;
        options.amx = o.amx;
        options.parallelWork = o.parallelWork;
        options.l2Bytes = o.l2Bytes;
        options.amxEpilogueBytes = o.amxEpilogueBytes;
        buildCPUTilingPipeline(pm.nest<func::FuncOp>(), options);
      });
}
