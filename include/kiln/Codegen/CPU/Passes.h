//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//
#ifndef KILN_CODEGEN_CPU_PASSES_H
#define KILN_CODEGEN_CPU_PASSES_H

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

#include "kiln/Dialect/Kiln/IR/KilnDialect.h"

namespace mlir::kiln {
#define GEN_PASS_DECL
#include "kiln/Codegen/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Codegen/CPU/Passes.h.inc"

/// What the CPU pipelines build for: the vector width and which kernels the
/// target CPU runs.
struct CPUCodegenOptions {
  int64_t vectorWidth = 16; ///< f32 lanes of a register (16 AVX-512, 8 AVX2)
  bool vnni = false;    ///< int8 products on AVX512-VNNI (vpdpbusd)
  /// With vnni: the int8 kernel's AVX2 form (vpmaddwd), for targets with
  /// AVX2 and no AVX512-VNNI.
  bool int8Avx2 = false;
  bool amx = false;     ///< bf16 and int8 products on AMX tiles
  bool bf16Dot = false; ///< bf16 products on AVX512-BF16 (vdpbf16ps)
  /// Loop iterations from which an op's outer tile loop is shared by the
  /// threads (0: never); see kiln-cpu-tile-and-vectorize.
  int64_t parallelWork = 32768;
  /// L2 cache bytes of one core of the target (see l2CacheBytes in
  /// kiln/Target/Target.h); kiln-cpu-tile-and-vectorize's `l2-bytes`.
  int64_t l2Bytes = 1 << 20;
  /// Accumulator bytes from which a bf16 AMX product applies its epilogue
  /// per block; see kiln-cpu-mark-amx-epilogues.
  int64_t amxEpilogueBytes = 1 << 20;
};

/// On functions: the rewrites that prepare linalg ops for the CPU kernels
/// and --kiln-cpu-tile-and-vectorize, in the order the compile runs them
/// (kiln-opt: --kiln-cpu-tiling-pipeline).
void buildCPUTilingPipeline(OpPassManager &funcPm,
                            const CPUCodegenOptions &options);

/// On the module, from linalg on tensors to the LLVM dialect: the int8 and
/// bf16 kernels, tiling and vectorization, bufferization into the arena,
/// the thread pool's loops and the lowering.
void buildCPUCodegenPipeline(OpPassManager &pm,
                             const CPUCodegenOptions &options);

/// On the module, from loops, vectors and buffers to the LLVM dialect (also
/// the tail of --target=cuda-emulated).
void buildCPULoweringPipeline(OpPassManager &pm, bool amx);

/// Registers kiln-cpu-tiling-pipeline for kiln-opt.
void registerKilnCPUPassPipelines();

} // namespace mlir::kiln

#endif
