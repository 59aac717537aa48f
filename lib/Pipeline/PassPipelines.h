//===- PassPipelines.h - the compile's phases as pass pipelines ---*- C++ -*-===//
//
// Each phase of the compile is one pass pipeline on the module, built from
// the options by a typed builder; `--emit` stops after any of them. The
// code generation pipelines come from their layers (buildCPUCodegenPipeline,
// buildBufferizeToArenaPipeline); this file strings the phases together.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_PIPELINE_PASSPIPELINES_H
#define KILN_LIB_PIPELINE_PASSPIPELINES_H

#include "kiln/Codegen/CPU/Passes.h"
#include "kiln/Pipeline/Pipeline.h"

#include "mlir/Pass/PassManager.h"

#include <string>

namespace mlir::kiln {

/// Which graph passes the compile adds after the layout pass.
struct GraphPipelineOptions {
  /// The most bytes one tensor a node computes may hold.
  uint64_t maxTensorBytes = kDefaultMaxTensorBytes;
  /// Return the input of every node static int8 converts (every product's,
  /// with observeAllProducts) as an extra output.
  bool observeQuantInputs = false;
  bool observeAllProducts = false;
  bool quantizeDynamic = false;
  bool quantizeStatic = false;
  /// Static int8 without AMX: K in 4-byte lanes, not 64-byte tile rows.
  bool laneK = false;
  /// Static int8 of depthwise convolutions (not on AVX2 without VNNI).
  bool staticDepthwise = true;
  bool bf16 = false;
  /// bf16 on vdpbf16ps: products of two run-time tensors stay f32.
  bool bf16RunTimeProducts = true;
  bool fp16 = false;
  /// Imported fp16/bf16 tensors computed in f32 (kiln-widen-half).
  bool widenHalf = false;
  /// Imported uint8 x int8 products on the VNNI kernels
  /// (kiln-integer-products-on-vnni).
  bool integerVnni = false;
  /// With integerVnni: the kernels' AVX2 form (no depthwise kernel).
  bool integerAvx2 = false;
};

/// ONNX ops to the graph dialect, shapes, layout, then the precision passes.
void buildGraphPipeline(OpPassManager &pm, const GraphPipelineOptions &options);

/// The graph dialect to linalg on tensors, with the linalg-level fusions;
/// `cpu` lowers large softmaxes as loops over blocks of rows.
void buildLinalgPipeline(OpPassManager &pm, bool cpu);

/// --target=cuda: bufferization and the arena as on the CPU, the weights into
/// one device blob, every op into a kernel (lib/Codegen/GPU), and the kernels
/// through NVVM to PTX for `arch` ("sm_80", "sm_90"). With `emulate`
/// (--target=cuda-emulated) the kernels become host loops instead and the CPU
/// lowering follows.
void buildGPUCodegenPipeline(OpPassManager &pm, const std::string &arch,
                             bool emulate);

} // namespace mlir::kiln

#endif
