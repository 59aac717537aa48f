//===- MapToLaunch.cpp - top-level ops -> gpu.launch ------------*- C++ -*-===//
//
// The generic GPU mapping: after bufferization and arena placement a model
// function is a straight list of linalg ops on views of its arguments. Each
// one becomes a kernel:
//
//  * a linalg.generic: one thread per point of the parallel iteration space,
//    linearized onto a 1-D grid of `blockSize`-thread blocks (innermost
//    parallel dimension fastest: neighbouring threads touch neighbouring
//    elements); reduction dimensions are sequential loops in the thread with
//    the outputs carried in registers and stored once;
//  * anything else with side effects (scalar loops, guards, a generic whose
//    output index involves a reduction dimension): one thread.
//
// Pure ops the kernel uses (constants, views of the arena and the weights)
// are cloned into it, so that the outlined kernels take only the function's
// own arguments; the host side becomes a static list of launches.
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include <functional>

namespace mlir::kiln {
#define GEN_PASS_DEF_MAPTOLAUNCHPASS
#include "kiln/Codegen/GPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// Ops the host side may keep: they neither read nor write memory and hold
/// no regions, so a kernel can recompute them.
bool isHostPure(Operation *op) {
  return op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
         !op->hasTrait<OpTrait::IsTerminator>() &&
         !isa<gpu::LaunchOp>(op);
}

/// Clones the pure ops that `launch`'s body uses from above into it, until
/// it captures only block arguments of the function.
LogicalResult sinkPureOperands(gpu::LaunchOp launch) {
  Region &body = launch.getBody();
  while (true) {
    SetVector<Value> above;
    getUsedValuesDefinedAbove(body, above);
    bool changed = false;
    for (Value v : above) {
      Operation *def = v.getDefiningOp();
      if (!def)
        continue; // a function argument: passed to the kernel
      if (!isHostPure(def))
        return launch.emitError()
               << "a kernel uses the result of '" << def->getName()
               << "', which has side effects on the host; the GPU mapping "
                  "needs them in the same kernel";
      OpBuilder b = OpBuilder::atBlockBegin(&body.front());
      Operation *copy = b.clone(*def);
      Value replacement = copy->getResult(cast<OpResult>(v).getResultNumber());
      replaceAllUsesInRegionWith(v, replacement, body);
      changed = true;
    }
    if (!changed)
      return success();
  }
}

struct MapToLaunchPass
    : mlir::kiln::impl::MapToLaunchPassBase<MapToLaunchPass> {
  using MapToLaunchPassBase::MapToLaunchPassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isDeclaration())
      return;
    Block &block = func.getBody().front();
    SmallVector<Operation *> work;
    for (Operation &op : block.without_terminator())
      if (!isHostPure(&op) && !isa<gpu::LaunchOp>(op))
        work.push_back(&op);
    DenseSet<Operation *> done;
    for (Operation *op : work) {
      if (done.contains(op))
        continue;
      bool producesValues = llvm::any_of(
          op->getResults(), [](Value r) { return !r.use_empty(); });
      FailureOr<gpu::LaunchOp> launch = failure();
      auto generic = dyn_cast<linalg::GenericOp>(op);
      if (producesValues) {
        launch = mapSequentialGroup(op, done);
      } else {
        if (generic && generic.hasPureBufferSemantics() &&
            parallelizable(generic))
          launch = mapParallel(generic);
        else
          launch = mapSingleThread(op);
        if (succeeded(launch))
          op->erase();
      }
      if (failed(launch) || failed(sinkPureOperands(*launch)))
        return signalPassFailure();
    }
    // Host-side views and constants nobody uses any more.
    for (Operation &op :
         llvm::make_early_inc_range(llvm::reverse(func.getBody().front())))
      if (isHostPure(&op) && op.use_empty())
        op.erase();
  }

  /// Static loop ranges, and every output indexed by parallel dims only.
  static bool parallelizable(linalg::GenericOp op) {
    for (int64_t r : op.getStaticLoopRanges())
      if (ShapedType::isDynamic(r))
        return false;
    for (OpOperand &init : op.getDpsInitsMutable()) {
      AffineMap map = op.getMatchingIndexingMap(&init);
      for (AffineExpr e : map.getResults()) {
        bool ok = true;
        e.walk([&](AffineExpr sub) {
          if (auto d = dyn_cast<AffineDimExpr>(sub))
            if (op.getIteratorTypesArray()[d.getPosition()] !=
                utils::IteratorType::parallel)
              ok = false;
        });
        if (!ok)
          return false;
      }
    }
    return true;
  }

  gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, int64_t grid,
                             int64_t block, int64_t index) {
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value g = arith::ConstantIndexOp::create(b, loc, grid);
    Value t = arith::ConstantIndexOp::create(b, loc, block);
    auto func = cast<func::FuncOp>(b.getInsertionBlock()->getParentOp());
    std::string name = func.getSymName().str() + "_k" + std::to_string(index);
    return gpu::LaunchOp::create(
        b, loc, g, one, one, t, one, one, nullptr, nullptr, {}, {}, {},
        nullptr, nullptr, nullptr, FlatSymbolRefAttr::get(b.getStringAttr(moduleName)),
        FlatSymbolRefAttr::get(b.getStringAttr(name)));
  }

  /// An op whose results later ops use (a scalar read of a tensor element,
  /// a loop yielding a value): it runs in one thread together with every
  /// later op up to its last user, so that the values never cross kernels.
  /// The group also takes every side-effecting op in between (their order
  /// stays as written) and every pure op that depends on the group; the
  /// launch goes where the group ends. Marks the ops it takes in `done`.
  FailureOr<gpu::LaunchOp> mapSequentialGroup(Operation *first,
                                              DenseSet<Operation *> &done) {
    Block *block = first->getBlock();
    DenseSet<Value> tainted;
    SmallVector<Operation *> group;
    Operation *end = first;
    auto extendTo = [&](Operation *op) {
      for (Value r : op->getResults()) {
        tainted.insert(r);
        for (Operation *user : r.getUsers()) {
          Operation *top = block->findAncestorOpInBlock(*user);
          if (top && end->isBeforeInBlock(top))
            end = top;
        }
      }
    };
    for (Operation *op = first; op; op = op->getNextNode()) {
      if (op->hasTrait<OpTrait::IsTerminator>())
        break;
      bool usesGroup = llvm::any_of(op->getOperands(), [&](Value v) {
        return tainted.contains(v);
      });
      if (op == first || !isHostPure(op) || usesGroup) {
        if (isa<gpu::LaunchOp>(op))
          return op->emitError() << "internal: a launch inside a sequential "
                                    "group";
        group.push_back(op);
        extendTo(op);
      }
      if (op == end)
        break;
    }
    OpBuilder b(block, std::next(end->getIterator()));
    gpu::LaunchOp launch =
        createLaunch(b, first->getLoc(), 1, 1, kernelCount++);
    b.setInsertionPointToStart(&launch.getBody().front());
    IRMapping map;
    for (Operation *op : group)
      b.clone(*op, map);
    gpu::TerminatorOp::create(b, first->getLoc());
    for (Operation *op : llvm::reverse(group)) {
      done.insert(op);
      if (!op->use_empty())
        return op->emitError() << "internal: a value of the sequential group "
                                  "is used after it";
      op->erase();
    }
    return launch;
  }

  FailureOr<gpu::LaunchOp> mapSingleThread(Operation *op) {
    OpBuilder b(op);
    gpu::LaunchOp launch = createLaunch(b, op->getLoc(), 1, 1, kernelCount++);
    b.setInsertionPointToStart(&launch.getBody().front());
    b.clone(*op);
    gpu::TerminatorOp::create(b, op->getLoc());
    return launch;
  }

  /// Thread coarsening for kernels with a reduction (matmuls, convolutions):
  /// each thread computes `coarsen` outputs along a parallel dimension that
  /// some input does not depend on, so that input's loads are shared by the
  /// outputs (B[k, j] of a matmul once per 4 rows; a convolution's filter
  /// once per 4 output pixels). The innermost parallel dimension stays one
  /// element per thread to keep neighbouring threads on neighbouring
  /// addresses. A range that `coarsen` does not divide gets the largest
  /// power-of-two factor below it that does (14 output columns: 2).
  /// Returns {dimension, factor}, or {-1, 1}.
  std::pair<int64_t, int64_t> coarsenDim(linalg::GenericOp op,
                                         ArrayRef<int64_t> ranges,
                                         ArrayRef<unsigned> parallelDims,
                                         ArrayRef<unsigned> reductionDims) {
    if (coarsen <= 1 || reductionDims.empty() || parallelDims.size() < 2)
      return {-1, 1};
    for (int64_t factor = coarsen; factor > 1; factor /= 2)
      for (unsigned d : llvm::reverse(parallelDims.drop_back())) {
        if (ranges[d] % factor != 0)
          continue;
        for (OpOperand *in : op.getDpsInputOperands()) {
          if (!isa<MemRefType>(in->get().getType()))
            continue;
          if (!op.getMatchingIndexingMap(in).isFunctionOfDim(d))
            return {d, factor};
        }
      }
    return {-1, 1};
  }

  FailureOr<gpu::LaunchOp> mapParallel(linalg::GenericOp op) {
    Location loc = op.getLoc();
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    auto iterators = op.getIteratorTypesArray();
    SmallVector<unsigned> parallelDims, reductionDims;
    for (auto [d, it] : llvm::enumerate(iterators))
      (it == utils::IteratorType::parallel ? parallelDims : reductionDims)
          .push_back(d);
    OpBuilder b(op);
    if (llvm::any_of(ranges, [](int64_t r) { return r == 0; }))
      return mapSingleThread(op); // nothing to compute; keep semantics simple
    auto [cdim, factor] = coarsenDim(op, ranges, parallelDims, reductionDims);
    // The threads' iteration space: the coarsened dimension shrinks.
    SmallVector<int64_t> threadRanges(ranges);
    if (cdim >= 0)
      threadRanges[cdim] /= factor;
    int64_t total = 1;
    for (unsigned d : parallelDims)
      total *= threadRanges[d];
    int64_t block = std::min<int64_t>(total, blockSize);
    int64_t grid = llvm::divideCeil(total, block);
    if (grid > INT32_MAX)
      return op.emitError() << "iteration space of " << total
                            << " points is too large for one grid";
    gpu::LaunchOp launch = createLaunch(b, loc, grid, block, kernelCount++);
    Block &body = launch.getBody().front();
    b.setInsertionPointToStart(&body);
    gpu::TerminatorOp::create(b, loc);
    b.setInsertionPointToStart(&body);

    // Linear thread index, bounds check, delinearization.
    Value blockDim = arith::ConstantIndexOp::create(b, loc, block);
    Value linear = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, launch.getBlockIds().x, blockDim),
        launch.getThreadIds().x);
    if (total % block != 0) {
      Value inBounds = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ult, linear,
          arith::ConstantIndexOp::create(b, loc, total));
      auto ifOp = scf::IfOp::create(b, loc, inBounds, /*withElse=*/false);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    }
    // Reduction dims start at 0 until their loops define them.
    Value zeroIndex = arith::ConstantIndexOp::create(b, loc, 0);
    SmallVector<Value> ivs(ranges.size(), zeroIndex);
    Value rest = linear;
    for (unsigned d : llvm::reverse(parallelDims)) {
      if (d == parallelDims.front()) {
        ivs[d] = rest;
        break;
      }
      Value size = arith::ConstantIndexOp::create(b, loc, threadRanges[d]);
      ivs[d] = arith::RemUIOp::create(b, loc, rest, size);
      rest = arith::DivUIOp::create(b, loc, rest, size);
    }
    // The coarsened dimension's index for each of the thread's outputs.
    SmallVector<Value> cIndex;
    if (cdim >= 0) {
      Value base = arith::MulIOp::create(
          b, loc, ivs[cdim], arith::ConstantIndexOp::create(b, loc, factor));
      for (int64_t u = 0; u < factor; ++u)
        cIndex.push_back(u == 0 ? base
                                : arith::AddIOp::create(
                                      b, loc, base,
                                      arith::ConstantIndexOp::create(b, loc, u))
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
      for (Operation &inner : payload.without_terminator()) {
        if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
          map.map(index.getResult(), ivs[index.getDim()]);
          continue;
        }
        Operation *copy = bb.clone(inner, map);
        // Let NVPTX fuse a multiply and an add into one fma (the CPU path's
        // vector contractions are fmas too): twice the arithmetic per cycle.
        if (auto fm = dyn_cast<arith::ArithFastMathInterface>(copy))
          copy->setAttr(fm.getFastMathAttrName(),
                        arith::FastMathFlagsAttr::get(
                            copy->getContext(),
                            fm.getFastMathFlagsAttr().getValue() |
                                arith::FastMathFlags::contract));
      }
      SmallVector<Value> results;
      for (Value y : payload.getTerminator()->getOperands())
        results.push_back(map.lookupOrDefault(y));
      return results;
    };
    // All `factor` points of the thread: outputs u * numOutputs + o.
    auto emitAll = [&](OpBuilder &bb, ValueRange outs) {
      SmallVector<Value> results;
      for (int64_t u = 0; u < factor; ++u) {
        select(u);
        llvm::append_range(results,
                           emitPayload(bb, outs.slice(u * numOutputs,
                                                      numOutputs)));
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
          outs.push_back(memref::LoadOp::create(b, loc, init.get(),
                                                indices(b, init)));
      }
    }
    SmallVector<Value> results;
    if (reductionDims.empty()) {
      results = emitAll(b, outs);
    } else {
      // Nested loops over the reduction dims carrying the outputs.
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      std::function<SmallVector<Value>(OpBuilder &, unsigned, ValueRange)>
          nest = [&](OpBuilder &bb, unsigned level,
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

  int64_t kernelCount = 0;
};
} // namespace
