//===- ParallelKernel.cpp - one thread per point ----------------*- C++ -*-===//
//
// The generic mapping of a linalg.generic: one thread per point of its
// parallel iteration space (or per `factor` points along a coarsened
// dimension), reductions as loops in the thread with the outputs carried in
// registers (see buildParallelKernel in KernelBuilder.h; the sizes come
// from ParallelPlan).
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::kiln::gpu_mapping {
namespace {
/// Builds the kernel of one ParallelPlan. The steps share the loop indices
/// of the point being computed (`ivs`).
class ParallelKernelBuilder {
public:
  ParallelKernelBuilder(linalg::GenericOp op, const ParallelPlan &plan)
      : op(op), plan(plan), loc(op.getLoc()), payload(op.getRegion().front()),
        numInputs(op.getNumDpsInputs()), numOutputs(op.getNumDpsInits()) {}

  gpu::LaunchOp build(KernelNames &names);

private:
  void placeThread(OpBuilder &b, gpu::LaunchOp launch);
  void select(int64_t u);
  SmallVector<Value> indices(OpBuilder &b, OpOperand &operand);
  SmallVector<Value> loadOutputs(OpBuilder &b);
  SmallVector<Value> payloadAt(OpBuilder &b, ValueRange outs);
  SmallVector<Value> allPoints(OpBuilder &b, ValueRange outs);
  SmallVector<Value> reductionLoops(OpBuilder &b, unsigned level,
                                    ValueRange carried);
  void storeOutputs(OpBuilder &b, ArrayRef<Value> results);

  linalg::GenericOp op;
  const ParallelPlan &plan;
  Location loc;
  Block &payload;
  unsigned numInputs, numOutputs;

  // Defined by build().
  SmallVector<Value> ivs;
  /// The coarsened dimension's index for each of the thread's points.
  SmallVector<Value> cIndex;
  /// The bounds of the reduction loops.
  Value zero, one;
};

gpu::LaunchOp ParallelKernelBuilder::build(KernelNames &names) {
  OpBuilder b(op);
  gpu::LaunchOp launch = createLaunch(b, loc, names, plan.grid, plan.block);
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&body);
  placeThread(b, launch);
  // Current output values: needed when the payload reads them or a
  // reduction accumulates into them.
  SmallVector<Value> outs = loadOutputs(b);
  SmallVector<Value> results;
  if (plan.reductionDims.empty()) {
    results = allPoints(b, outs);
  } else {
    zero = arith::ConstantIndexOp::create(b, loc, 0);
    one = arith::ConstantIndexOp::create(b, loc, 1);
    results = reductionLoops(b, 0, outs);
  }
  storeOutputs(b, results);
  return launch;
}

/// Linear thread index, bounds check (the builder is left inside it),
/// delinearization into `ivs`, and the coarsened indices.
void ParallelKernelBuilder::placeThread(OpBuilder &b, gpu::LaunchOp launch) {
  Value blockDim = arith::ConstantIndexOp::create(b, loc, plan.block);
  Value linear = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, blockDim),
      launch.getThreadIds().x);
  if (plan.total % plan.block != 0) {
    Value inBounds = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ult, linear,
        arith::ConstantIndexOp::create(b, loc, plan.total));
    auto ifOp = scf::IfOp::create(b, loc, inBounds, /*withElse=*/false);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  }
  // Reduction dims start at 0 until their loops define them.
  Value zeroIndex = arith::ConstantIndexOp::create(b, loc, 0);
  ivs.assign(plan.ranges.size(), zeroIndex);
  delinearize(b, loc, linear, plan.parallelDims, plan.threadRanges, ivs);
  int64_t cdim = plan.coarsenDim, factor = plan.factor;
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
}

/// Points `ivs` at the thread's `u`th point.
void ParallelKernelBuilder::select(int64_t u) {
  if (plan.coarsenDim >= 0)
    ivs[plan.coarsenDim] = cIndex[u];
}

SmallVector<Value> ParallelKernelBuilder::indices(OpBuilder &b,
                                                  OpOperand &operand) {
  return operandIndices(b, loc, op, operand, ivs);
}

/// The outputs at each of the thread's points (u * numOutputs + o); null
/// where neither the payload nor a reduction reads them.
SmallVector<Value> ParallelKernelBuilder::loadOutputs(OpBuilder &b) {
  SmallVector<Value> outs;
  for (int64_t u = 0; u < plan.factor; ++u) {
    select(u);
    for (OpOperand &init : op.getDpsInitsMutable()) {
      Value arg = payload.getArgument(init.getOperandNumber());
      if (arg.use_empty() && plan.reductionDims.empty())
        outs.push_back(Value());
      else
        outs.push_back(
            memref::LoadOp::create(b, loc, init.get(), indices(b, init)));
    }
  }
  return outs;
}

/// The payload, with inputs loaded at this point and outputs taken from
/// `outs`; returns the yielded values.
SmallVector<Value> ParallelKernelBuilder::payloadAt(OpBuilder &b,
                                                    ValueRange outs) {
  IRMapping map;
  for (OpOperand *in : op.getDpsInputOperands()) {
    Value arg = payload.getArgument(in->getOperandNumber());
    if (arg.use_empty())
      continue;
    Value v = in->get();
    if (isa<MemRefType>(v.getType()))
      v = memref::LoadOp::create(b, loc, v, indices(b, *in));
    map.map(arg, v);
  }
  for (auto [i, v] : llvm::enumerate(outs))
    map.map(payload.getArgument(numInputs + i), v);
  for (Operation &inner : payload.without_terminator())
    if (auto index = dyn_cast<linalg::IndexOp>(inner))
      map.map(index.getResult(), ivs[index.getDim()]);
  return clonePayload(b, op, map);
}

/// All `factor` points of the thread: outputs u * numOutputs + o.
SmallVector<Value> ParallelKernelBuilder::allPoints(OpBuilder &b,
                                                    ValueRange outs) {
  SmallVector<Value> results;
  for (int64_t u = 0; u < plan.factor; ++u) {
    select(u);
    llvm::append_range(results,
                       payloadAt(b, outs.slice(u * numOutputs, numOutputs)));
  }
  return results;
}

/// Nested loops over the reduction dims from `level` on, carrying the
/// outputs.
SmallVector<Value> ParallelKernelBuilder::reductionLoops(OpBuilder &b,
                                                         unsigned level,
                                                         ValueRange carried) {
  if (level == plan.reductionDims.size())
    return allPoints(b, carried);
  unsigned d = plan.reductionDims[level];
  Value ub = arith::ConstantIndexOp::create(b, loc, plan.ranges[d]);
  auto loop = scf::ForOp::create(
      b, loc, zero, ub, one, carried,
      [&](OpBuilder &lb, Location, Value iv, ValueRange iterArgs) {
        ivs[d] = iv;
        SmallVector<Value> next = reductionLoops(lb, level + 1, iterArgs);
        scf::YieldOp::create(lb, loc, next);
      });
  return SmallVector<Value>(loop.getResults());
}

void ParallelKernelBuilder::storeOutputs(OpBuilder &b,
                                         ArrayRef<Value> results) {
  for (int64_t u = 0; u < plan.factor; ++u) {
    select(u);
    for (auto [o, init] : llvm::enumerate(op.getDpsInitsMutable()))
      memref::StoreOp::create(b, loc, results[u * numOutputs + o], init.get(),
                              indices(b, init));
  }
}
} // namespace

gpu::LaunchOp buildParallelKernel(KernelNames &names, linalg::GenericOp op,
                                  const ParallelPlan &plan) {
  return ParallelKernelBuilder(op, plan).build(names);
}
} // namespace mlir::kiln::gpu_mapping
