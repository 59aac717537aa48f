//===- KernelBuilder.h - index helpers of the GPU kernels -------*- C++ -*-===//
//
// Shared by the kernel builders of kiln-gpu-map-to-launch: the index
// arithmetic that maps a thread to points of a linalg.generic's iteration
// space, guarded loads at tile edges, and the payload clone.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CODEGEN_GPU_KERNELBUILDER_H
#define KILN_LIB_CODEGEN_GPU_KERNELBUILDER_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

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

/// Product of `ranges` over `dims`.
int64_t extent(ArrayRef<int64_t> ranges, ArrayRef<unsigned> dims);

/// The reduction loops of a contraction kernel, from `level` on: the S
/// dimensions outermost (each sets its entry of `ivs`), then `slices`
/// slices of K, each emitted by `kSlice`, all carrying the accumulators.
SmallVector<Value>
reductionNest(OpBuilder &b, Location loc, ArrayRef<unsigned> sDims,
              ArrayRef<int64_t> ranges, int64_t slices,
              SmallVector<Value> &ivs, ValueRange carried,
              function_ref<SmallVector<Value>(OpBuilder &, Value, ValueRange)>
                  kSlice,
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
} // namespace mlir::kiln::gpu_mapping

#endif // KILN_LIB_CODEGEN_GPU_KERNELBUILDER_H
