//===- KernelBuilder.h - index helpers of the GPU kernels -------*- C++ -*-===//
//
// The mechanics of kiln-gpu-map-to-launch: one function per kind of kernel,
// each building the kernel that a plan of KernelStrategy.h describes, and
// what they share: launch creation, the index arithmetic that maps a thread
// to points of a linalg.generic's iteration space, guarded loads at tile
// edges, and the payload clone.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CODEGEN_GPU_KERNELBUILDER_H
#define KILN_LIB_CODEGEN_GPU_KERNELBUILDER_H

#include "KernelStrategy.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"

#include <string>

namespace mlir::kiln::gpu_mapping {
/// Ops the host side may keep: they neither read nor write memory and hold
/// no regions, so a kernel can recompute them.
bool isHostPure(Operation *op);

/// Clones the payload of `op` (block arguments and linalg.index results
/// already in `map`) and returns the values it yields. The arithmetic may
/// contract: NVPTX then fuses a multiply and an add into one fma (the CPU
/// path's vector contractions are fmas too), twice the work per cycle.
SmallVector<Value> clonePayload(OpBuilder &b, linalg::GenericOp op,
                                IRMapping &map);

/// The reduction loops of a contraction kernel, from `level` on: the S
/// dimensions outermost (each sets its entry of `ivs`), then `slices`
/// slices of K, each emitted by `kSlice`, all carrying the accumulators.
SmallVector<Value> reductionNest(
    OpBuilder &b, Location loc, ArrayRef<unsigned> sDims,
    ArrayRef<int64_t> ranges, int64_t slices, SmallVector<Value> &ivs,
    ValueRange carried,
    function_ref<SmallVector<Value>(OpBuilder &, Value, ValueRange)> kSlice,
    unsigned level = 0);

/// Sets `ivs[d]` for `dims` (outermost first) from a linear index over their
/// ranges; the outermost takes what is left, so an index past the end gives
/// an out-of-range outermost value rather than wrapping around.
void delinearize(OpBuilder &b, Location loc, Value linear,
                 ArrayRef<unsigned> dims, ArrayRef<int64_t> ranges,
                 SmallVectorImpl<Value> &ivs);

/// The indices of `operand` at `ivs`.
SmallVector<Value> operandIndices(OpBuilder &b, Location loc,
                                  linalg::GenericOp op, OpOperand &operand,
                                  ArrayRef<Value> ivs);

/// `scf.if cond { load } else { 0 }`, or the plain load when `cond` is null.
Value guardedLoad(OpBuilder &b, Location loc, Value cond, Value memref,
                  ValueRange indices);

/// `a && b` where either may be null (true).
Value andCond(OpBuilder &b, Location loc, Value x, Value y);

/// `v < bound` as i1, or null when it always holds (`total % tile == 0`).
Value below(OpBuilder &b, Location loc, Value v, int64_t bound, int64_t total,
            int64_t tile);

/// Names the kernels of one pass instance: `<function>_k<N>` in the
/// gpu.module `module`, N counting up over the instance's lifetime.
struct KernelNames {
  std::string module;
  int64_t count = 0;
};

/// A launch of `grid` blocks of `block` threads, on a 1-D grid, with
/// `workgroup` buffers of workgroup memory; its body is empty.
gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, KernelNames &names,
                           int64_t grid, int64_t block,
                           TypeRange workgroup = {});

/// The launch of a tiled contraction kernel: one block per (batch index
/// g, tile of M, tile of N), `threads` threads, `shared` workgroup
/// buffers; the builder is left at the start of its body. Sets `ivs` to
/// the block's values of the batch loops (0 elsewhere) and m0 / n0 to its
/// tile's first row and column.
gpu::LaunchOp createContractionLaunch(OpBuilder &b, Location loc,
                                      KernelNames &names,
                                      const ContractionTiles &tiles,
                                      int64_t threads, TypeRange shared,
                                      SmallVector<Value> &ivs, Value &m0,
                                      Value &n0);

//===----------------------------------------------------------------------===//
// The kernels, one file each; the plans come from KernelStrategy.h
//===----------------------------------------------------------------------===//

/// An op whose results later ops use (a scalar read of a tensor element,
/// a loop yielding a value): it runs in one thread together with every
/// later op up to its last user, so that the values never cross kernels.
/// The group also takes every side-effecting op in between (their order
/// stays as written) and every pure op that depends on the group; the
/// launch goes where the group ends. Marks the ops it takes in `done` and
/// erases them.
FailureOr<gpu::LaunchOp> buildSequentialGroup(KernelNames &names,
                                              Operation *first,
                                              DenseSet<Operation *> &done);

/// `op` alone in a one-thread kernel, before `op`.
gpu::LaunchOp buildSingleThreadKernel(KernelNames &names, Operation *op);

/// One thread per point of `op`'s parallel iteration space, linearized
/// onto a 1-D grid (innermost dimension fastest); the reduction loops run
/// in the thread with the outputs in registers (ParallelKernel.cpp).
gpu::LaunchOp buildParallelKernel(KernelNames &names, linalg::GenericOp op,
                                  const ParallelPlan &plan);

/// Shared-memory tiles for a contraction: a matmul, a batched matmul,
/// or a convolution seen as an implicit GEMM. With two memref inputs A and
/// B, the parallel dims split into M (only A depends on them), N (only B)
/// and G (the rest: batch); the reduction dims that both inputs use form
/// K, any other reduction dims S. A block of 16x16 threads computes a
/// TM x TN tile of (M, N) for one point of G, each thread RM x RN outputs
/// in registers (strided by 16, so neighbouring threads store neighbouring
/// elements); for each point of S and each 16-wide slice of K the block
/// copies A[TM x 16] and B[16 x TN] into shared memory (neighbouring
/// threads reading neighbouring addresses of the operand's contiguous
/// dimension), waits at a barrier and accumulates from there. Every value
/// a thread reads from global memory is so used by TN (A) or TM (B)
/// outputs instead of RN or RM. N must contain the output's contiguous
/// dimension (A and B are swapped to make it so) (TiledContraction.cpp).
gpu::LaunchOp buildTiledContraction(KernelNames &names, linalg::GenericOp op,
                                    const TiledPlan &plan);

/// Tensor cores for an fp16 contraction whose payload is a multiply-add
/// (out += a * b; out fp16 or fp32): the GEMM view of
/// buildTiledContraction, with warp-level 16x16x16 matrix operations
/// (gpu.subgroup_mma_*, lowered to NVVM's wmma intrinsics: mma.sync on
/// fp16 operands with fp32 accumulation). A block of 4 warps (2 x 2)
/// computes a TM x TN tile of 32 or 64 per side, each warp FM x FN
/// fragments of 16 x 16; K is staged through shared memory in slices of
/// 16 (A as [m][k], B as [k][n], zeros past the edges, which the
/// multiply-add ignores), between two barriers. The fp32 accumulators go
/// through shared memory once at the end, where every thread adds its
/// outputs' initial values and stores them (bounds-checked, rounded to the
/// output type) (TensorCoreContraction.cpp).
gpu::LaunchOp buildTensorCoreContraction(KernelNames &names,
                                         linalg::GenericOp op,
                                         const TensorCorePlan &plan);
} // namespace mlir::kiln::gpu_mapping

#endif // KILN_LIB_CODEGEN_GPU_KERNELBUILDER_H
