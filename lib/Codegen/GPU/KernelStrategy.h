//===- KernelStrategy.h - which kernel an op becomes ------------*- C++ -*-===//
//
// The strategy of kiln-gpu-map-to-launch: which kind of kernel a top-level
// op of a bufferized function becomes.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CODEGEN_GPU_KERNELSTRATEGY_H
#define KILN_LIB_CODEGEN_GPU_KERNELSTRATEGY_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir::kiln::gpu_mapping {
/// A generic seen as a GEMM (see mapTiledContraction): its two memref
/// inputs, A and B, and its loop dims by role.
struct Contraction {
  OpOperand *a, *b;
  SmallVector<unsigned> m, n, g, k, s;
};

/// The GEMM view of `op`, or nothing: one output, a reduction, no
/// linalg.index, exactly two memref inputs that the payload reads, non-empty
/// M, N and K, and N holding the output's contiguous dimension (A and B are
/// swapped to make it so).
std::optional<Contraction> classifyContraction(linalg::GenericOp op);

/// Static loop ranges, and every output indexed by parallel dims only.
bool isParallelizable(linalg::GenericOp op);
} // namespace mlir::kiln::gpu_mapping

#endif // KILN_LIB_CODEGEN_GPU_KERNELSTRATEGY_H
