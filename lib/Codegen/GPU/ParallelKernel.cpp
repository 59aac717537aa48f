//===- ParallelKernel.cpp - one thread per point ----------------*- C++ -*-===//
//
// The generic mapping of a linalg.generic: one thread per point of its
// parallel iteration space, reductions as loops in the thread.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <functional>

namespace mlir::kiln::gpu_mapping {
gpu::LaunchOp buildParallelKernel(KernelNames &names, linalg::GenericOp op,
                                  const ParallelPlan &plan) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> ranges = plan.ranges, threadRanges = plan.threadRanges;
  ArrayRef<unsigned> parallelDims = plan.parallelDims,
                     reductionDims = plan.reductionDims;
  int64_t cdim = plan.coarsenDim, factor = plan.factor;
  int64_t total = plan.total, block = plan.block, grid = plan.grid;
  OpBuilder b(op);
  gpu::LaunchOp launch = createLaunch(b, loc, names, grid, block);
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&body);

  // Linear thread index, bounds check, delinearization.
  Value blockDim = arith::ConstantIndexOp::create(b, loc, block);
  Value linear = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, blockDim),
      launch.getThreadIds().x);
  if (total % block != 0) {
    Value inBounds =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, linear,
                              arith::ConstantIndexOp::create(b, loc, total));
    auto ifOp = scf::IfOp::create(b, loc, inBounds, /*withElse=*/false);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  }
  // Reduction dims start at 0 until their loops define them.
  Value zeroIndex = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<Value> ivs(ranges.size(), zeroIndex);
  delinearize(b, loc, linear, parallelDims, threadRanges, ivs);
  // The coarsened dimension's index for each of the thread's outputs.
  SmallVector<Value> cIndex;
  if (cdim >= 0) {
    Value base = arith::MulIOp::create(
        b, loc, ivs[cdim], arith::ConstantIndexOp::create(b, loc, factor));
    for (int64_t u = 0; u < factor; ++u)
      cIndex.push_back(
          u == 0 ? base
                 : arith::AddIOp::create(
                       b, loc, base, arith::ConstantIndexOp::create(b, loc, u))
                       .getResult());
  }
  auto select = [&](int64_t u) {
    if (cdim >= 0)
      ivs[cdim] = cIndex[u];
  };

  auto indices = [&](OpBuilder &bb, OpOperand &operand) {
    SmallVector<Value> out;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (AffineExpr e : map.getResults()) {
      if (auto d = dyn_cast<AffineDimExpr>(e))
        out.push_back(ivs[d.getPosition()]);
      else
        out.push_back(affine::expandAffineExpr(bb, loc, e, ivs, {}));
    }
    return out;
  };
  Block &payload = op.getRegion().front();
  unsigned numInputs = op.getNumDpsInputs();
  unsigned numOutputs = op.getNumDpsInits();
  // The payload, with inputs loaded at this point and outputs taken from
  // `outs`; returns the yielded values.
  auto emitPayload = [&](OpBuilder &bb, ValueRange outs) {
    IRMapping map;
    for (OpOperand *in : op.getDpsInputOperands()) {
      Value arg = payload.getArgument(in->getOperandNumber());
      if (arg.use_empty())
        continue;
      Value v = in->get();
      if (isa<MemRefType>(v.getType()))
        v = memref::LoadOp::create(bb, loc, v, indices(bb, *in));
      map.map(arg, v);
    }
    for (auto [i, v] : llvm::enumerate(outs))
      map.map(payload.getArgument(numInputs + i), v);
    for (Operation &inner : payload.without_terminator())
      if (auto index = dyn_cast<linalg::IndexOp>(inner))
        map.map(index.getResult(), ivs[index.getDim()]);
    return clonePayload(bb, op, map);
  };
  // All `factor` points of the thread: outputs u * numOutputs + o.
  auto emitAll = [&](OpBuilder &bb, ValueRange outs) {
    SmallVector<Value> results;
    for (int64_t u = 0; u < factor; ++u) {
      select(u);
      llvm::append_range(
          results, emitPayload(bb, outs.slice(u * numOutputs, numOutputs)));
    }
    return results;
  };

  // Current output values: needed when the payload reads them or a
  // reduction accumulates into them.
  SmallVector<Value> outs;
  for (int64_t u = 0; u < factor; ++u) {
    select(u);
    for (OpOperand &init : op.getDpsInitsMutable()) {
      Value arg = payload.getArgument(init.getOperandNumber());
      if (arg.use_empty() && reductionDims.empty())
        outs.push_back(Value());
      else
        outs.push_back(
            memref::LoadOp::create(b, loc, init.get(), indices(b, init)));
    }
  }
  SmallVector<Value> results;
  if (reductionDims.empty()) {
    results = emitAll(b, outs);
  } else {
    // Nested loops over the reduction dims carrying the outputs.
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    std::function<SmallVector<Value>(OpBuilder &, unsigned, ValueRange)> nest =
        [&](OpBuilder &bb, unsigned level,
            ValueRange carried) -> SmallVector<Value> {
      if (level == reductionDims.size())
        return emitAll(bb, carried);
      unsigned d = reductionDims[level];
      Value ub = arith::ConstantIndexOp::create(bb, loc, ranges[d]);
      auto loop = scf::ForOp::create(
          bb, loc, zero, ub, one, carried,
          [&](OpBuilder &lb, Location, Value iv, ValueRange iterArgs) {
            ivs[d] = iv;
            SmallVector<Value> next = nest(lb, level + 1, iterArgs);
            scf::YieldOp::create(lb, loc, next);
          });
      return SmallVector<Value>(loop.getResults());
    };
    results = nest(b, 0, outs);
  }
  for (int64_t u = 0; u < factor; ++u) {
    select(u);
    for (auto [o, init] : llvm::enumerate(op.getDpsInitsMutable()))
      memref::StoreOp::create(b, loc, results[u * numOutputs + o], init.get(),
                              indices(b, init));
  }
  return launch;
}
} // namespace mlir::kiln::gpu_mapping
