//===- PassPipelines.cpp - the compile's phases as pass pipelines -*- C++ -*-===//
#include "PassPipelines.h"

#include "kiln/Codegen/Common/Passes.h"
#include "kiln/Codegen/GPU/Passes.h"
#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::kiln;

void kiln::buildGraphPipeline(OpPassManager &pm,
                              const GraphPipelineOptions &options) {
  ConvertOnnxToKilnPassOptions convert;
  convert.maxTensorBytes = options.maxTensorBytes;
  pm.addPass(createConvertOnnxToKilnPass(convert));
  OpPassManager &graph = pm.nest<func::FuncOp>();
  if (options.widenHalf)
    graph.addPass(createWidenHalfPass());
  // QDQ products on integers: the VNNI kernels take them, and without VNNI
  // the f32 kernels do with constant (packed) filters instead of weights
  // dequantized at every run.
  DequantizedProductsPassOptions dequantized;
  dequantized.anyGroup = !options.integerVnni || options.integerAvx2;
  graph.addPass(createDequantizedProductsPass(dequantized));
  graph.addPass(createCanonicalizerPass());
  graph.addPass(createShapeInferencePass());
  graph.addPass(createCanonicalizerPass());
  graph.addPass(createCSEPass());
  graph.addPass(createFuseLayerNormPass());
  IntegerProductsInF32PassOptions inF32;
  inF32.keepVnniProducts = options.integerVnni;
  inF32.keepDepthwise = !options.integerAvx2;
  graph.addPass(createIntegerProductsInF32Pass(inF32));
  graph.addPass(createCanonicalizerPass());
  // Weights computed from constants (weight-only quantization, QDQ weights
  // left in f32) become constants the f32 kernels pack.
  graph.addPass(createFoldConstantWeightsPass());
  graph.addPass(createLayoutPass());
  graph.addPass(createCanonicalizerPass());
  graph.addPass(createCSEPass());
  graph.addPass(createQuantizeConcatPartsPass());
  if (options.integerVnni) {
    IntegerProductsOnVnniPassOptions onVnni;
    onVnni.depthwise = !options.integerAvx2;
    graph.addPass(createIntegerProductsOnVnniPass(onVnni));
    graph.addPass(createCanonicalizerPass());
  }
  if (options.observeQuantInputs) {
    ObserveQuantInputsPassOptions observe;
    observe.all = options.observeAllProducts;
    pm.addPass(createObserveQuantInputsPass(observe));
  }
  if (options.quantizeDynamic)
    pm.addPass(createQuantizeDynamicPass());
  if (options.quantizeStatic) {
    QuantizeStaticPassOptions quantize;
    quantize.laneK = options.laneK;
    quantize.depthwise = options.staticDepthwise;
    pm.addPass(createQuantizeStaticPass(quantize));
  }
  if (options.bf16) {
    Bf16MatmulPassOptions bf16;
    bf16.runTimeProducts = options.bf16RunTimeProducts;
    pm.addPass(createBf16MatmulPass(bf16));
  }
  if (options.fp16)
    pm.addPass(createFp16ComputePass());
}

void kiln::buildLinalgPipeline(OpPassManager &pm, bool cpu) {
  ConvertKilnToLinalgPassOptions lowering;
  lowering.rowBlocks = cpu;
  pm.addPass(createConvertKilnToLinalgPass(lowering));
  OpPassManager &linalg = pm.nest<func::FuncOp>();
  linalg.addPass(createCanonicalizerPass());
  linalg.addPass(createCSEPass());
  linalg.addPass(createHoistRequantizationPass());
  linalg.addPass(createFuseElementwisePass());
  linalg.addPass(createFoldRequantizationPass());
  linalg.addPass(createCanonicalizerPass());
  linalg.addPass(createCSEPass());
}

void kiln::buildGPUCodegenPipeline(OpPassManager &pm, const std::string &arch,
                                   bool emulate) {
  pm.addPass(createVerifyCodegenInputPass());
  pm.nest<func::FuncOp>().addPass(createSplitEmptyTensorsPass());
  pm.nest<func::FuncOp>().addPass(createDistinctResultsPass());
  // The host launches every kernel without reading device memory between
  // them, so a failed guard cannot end the run early: it stores its status,
  // which the runtime reports after the run (shapes here are static, so the
  // kernels after it stay in bounds).
  buildBufferizeToArenaPipeline(pm, nullptr, /*returnAtFailedGuard=*/false);
  pm.addPass(createPackWeightsPass());
  pm.nest<func::FuncOp>().addPass(createLinalgGeneralizeNamedOpsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  OpPassManager &kernels = pm.nest<func::FuncOp>();
  kernels.addPass(createMapToLaunchPass());
  kernels.addPass(createConvertLinalgToLoopsPass());
  kernels.addPass(createLowerVectorOpsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (emulate) {
    // --target=cuda-emulated: the same kernels as host loops.
    pm.addPass(createEmulateOnHostPass());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    pm.addPass(createOutlineParallelLoopsPass());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    buildCPULoweringPipeline(pm, /*amx=*/false);
    return;
  }
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createAlignWorkgroupPass());
  GpuNVVMAttachTargetOptions nvvm;
  nvvm.chip = arch;
  // sm_90 needs PTX ISA 8.0; sm_80 keeps LLVM's minimum (7.0) so older
  // drivers can load it.
  if (arch == "sm_90")
    nvvm.features = "+ptx80";
  nvvm.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(nvvm));
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addNestedPass<func::FuncOp>(createExpandShapesByStridesPass());
  device.addPass(memref::createExpandStridedMetadataPass());
  device.addPass(createLowerAffinePass());
  device.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions toNvvm;
  toNvvm.useBarePtrCallConv = true;
  device.addPass(createConvertGpuOpsToNVVMOps(toNvvm));
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
}
