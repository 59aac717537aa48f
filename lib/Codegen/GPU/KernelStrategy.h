//===- KernelStrategy.h - which kernel an op becomes ------------*- C++ -*-===//
//
// The strategy of kiln-gpu-map-to-launch, apart from the code that builds
// the kernels: for each top-level op of a bufferized function, which kind of
// kernel it becomes and with which sizes (threads per block, outputs per
// thread, tiles). The builders (KernelBuilder.h) take these plans as given.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CODEGEN_GPU_KERNELSTRATEGY_H
#define KILN_LIB_CODEGEN_GPU_KERNELSTRATEGY_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <variant>

namespace mlir::kiln::gpu_mapping {
/// The options of kiln-gpu-map-to-launch that the strategy reads.
struct MappingOptions {
  int64_t blockSize;
  int64_t coarsen;
  bool tile;
  bool tensorCores;
};

/// A generic seen as a GEMM (see TiledPlan): its two memref inputs, A and
/// B, and its loop dims by role.
struct Contraction {
  OpOperand *a, *b;
  SmallVector<unsigned> m, n, g, k, s;
};

/// A contraction's GEMM sizes and how its outputs are cut into tiles, one
/// block per (point of G, tile of M, tile of N).
struct ContractionTiles {
  Contraction dims;
  SmallVector<int64_t> ranges; ///< the static loop ranges
  int64_t M, N, K, G;          ///< the extents of the dims by role
  int64_t TM, TN;              ///< the tile of one block
  int64_t tilesM, tilesN;
  int64_t grid; ///< G * tilesM * tilesN
};

/// An op whose results later ops use: one thread, with every op up to its
/// last user (buildSequentialGroup).
struct SequentialGroupPlan {};

/// The op alone in a one-thread kernel (buildSingleThreadKernel).
struct SingleThreadPlan {};

/// One thread per point of a generic's parallel iteration space
/// (buildParallelKernel), on a 1-D grid of `block`-thread blocks.
struct ParallelPlan {
  SmallVector<int64_t> ranges;
  SmallVector<unsigned> parallelDims, reductionDims;
  /// Each thread computes `factor` outputs along `coarsenDim` (-1: none).
  int64_t coarsenDim = -1, factor = 1;
  /// The threads' iteration space: `ranges` with coarsenDim's divided.
  SmallVector<int64_t> threadRanges;
  int64_t total, block, grid;
};

/// Shared-memory tiles for a contraction (buildTiledContraction): blocks
/// of kSide x kSide threads, each thread RM x RN outputs, K in slices of
/// kTK.
struct TiledPlan {
  static constexpr int64_t kSide = 16, kTK = 16, kThreads = kSide * kSide;
  ContractionTiles tiles;
  int64_t RM, RN;
};

/// Tensor cores for an fp16 contraction (buildTensorCoreContraction):
/// blocks of 2 x 2 warps, each warp FM x FN fragments of kFrag x kFrag.
struct TensorCorePlan {
  static constexpr int64_t kFrag = 16, kWarp = 32, kThreads = 4 * kWarp;
  ContractionTiles tiles;
  int64_t FM, FN;
};

using KernelPlan = std::variant<SequentialGroupPlan, SingleThreadPlan,
                                ParallelPlan, TiledPlan, TensorCorePlan>;

/// The kernel `op` becomes: `op` is a top-level op of the function with
/// side effects. Tensor cores first, then shared-memory tiles, then one
/// thread per point; under -debug-only=kiln-gpu-map-to-launch, says which
/// op fell back from which and why. Emits an error and fails when no
/// kernel can take the op.
FailureOr<KernelPlan> chooseKernel(Operation *op,
                                   const MappingOptions &options);
} // namespace mlir::kiln::gpu_mapping

#endif // KILN_LIB_CODEGEN_GPU_KERNELSTRATEGY_H
