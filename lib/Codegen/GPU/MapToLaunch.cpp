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

#include "KernelBuilder.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include <functional>

namespace mlir::kiln {
#define GEN_PASS_DEF_MAPTOLAUNCHPASS
#include "kiln/Codegen/GPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln::gpu_mapping;

namespace {
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
std::optional<Contraction> classifyContraction(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return std::nullopt;
  bool hasIndex = false;
  op.getRegion().walk([&](linalg::IndexOp) { hasIndex = true; });
  if (hasIndex)
    return std::nullopt;
  Block &payload = op.getRegion().front();
  SmallVector<OpOperand *> mem;
  for (OpOperand *in : op.getDpsInputOperands())
    if (isa<MemRefType>(in->get().getType())) {
      if (payload.getArgument(in->getOperandNumber()).use_empty())
        return std::nullopt;
      mem.push_back(in);
    }
  if (mem.size() != 2)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto iterators = op.getIteratorTypesArray();
  Contraction c;
  auto classify = [&](OpOperand *a, OpOperand *b) {
    c = Contraction{a, b, {}, {}, {}, {}, {}};
    AffineMap mapA = op.getMatchingIndexingMap(a);
    AffineMap mapB = op.getMatchingIndexingMap(b);
    for (unsigned d = 0; d < ranges.size(); ++d) {
      bool inA = mapA.isFunctionOfDim(d), inB = mapB.isFunctionOfDim(d);
      if (iterators[d] == utils::IteratorType::parallel)
        (inA && !inB ? c.m : !inA && inB ? c.n : c.g).push_back(d);
      else
        (inA && inB ? c.k : c.s).push_back(d);
    }
  };
  classify(mem[0], mem[1]);
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (outMap.getNumResults() == 0)
    return std::nullopt;
  auto last = dyn_cast<AffineDimExpr>(outMap.getResults().back());
  if (!last)
    return std::nullopt;
  unsigned fast = last.getPosition();
  if (llvm::is_contained(c.m, fast))
    classify(mem[1], mem[0]);
  if (c.m.empty() || c.n.empty() || c.k.empty() || c.n.back() != fast)
    return std::nullopt;
  return c;
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
            parallelizable(generic)) {
          if (tile && tensorCores)
            launch = mapTensorCoreContraction(generic);
          if (failed(launch) && tile)
            launch = mapTiledContraction(generic);
          if (failed(launch))
            launch = mapParallel(generic);
        }
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
                             int64_t block, int64_t index,
                             TypeRange workgroup = {}) {
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value g = arith::ConstantIndexOp::create(b, loc, grid);
    Value t = arith::ConstantIndexOp::create(b, loc, block);
    auto func = cast<func::FuncOp>(b.getInsertionBlock()->getParentOp());
    std::string name = func.getSymName().str() + "_k" + std::to_string(index);
    return gpu::LaunchOp::create(
        b, loc, g, one, one, t, one, one, nullptr, nullptr, {}, workgroup, {},
        nullptr, nullptr, nullptr, FlatSymbolRefAttr::get(b.getStringAttr(moduleName)),
        FlatSymbolRefAttr::get(b.getStringAttr(name)));
  }

  /// The launch of a tiled contraction kernel: one block per (batch index
  /// g, tile of M, tile of N), `threads` threads, `shared` workgroup
  /// buffers; the builder is left at the start of its body. Sets `ivs` to
  /// the block's values of the batch loops (0 elsewhere) and m0 / n0 to its
  /// tile's first row and column.
  gpu::LaunchOp createContractionLaunch(OpBuilder &b, Location loc,
                                        int64_t grid, int64_t threads,
                                        TypeRange shared, int64_t tilesM,
                                        int64_t tilesN, int64_t TM, int64_t TN,
                                        ArrayRef<unsigned> gDims,
                                        ArrayRef<int64_t> ranges,
                                        SmallVector<Value> &ivs, Value &m0,
                                        Value &n0) {
    gpu::LaunchOp launch =
        createLaunch(b, loc, grid, threads, kernelCount++, shared);
    Block &body = launch.getBody().front();
    b.setInsertionPointToStart(&body);
    gpu::TerminatorOp::create(b, loc);
    b.setInsertionPointToStart(&body);
    auto cst = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value bid = launch.getBlockIds().x;
    Value tn = arith::RemUIOp::create(b, loc, bid, cst(tilesN));
    Value rest = arith::DivUIOp::create(b, loc, bid, cst(tilesN));
    Value tm = arith::RemUIOp::create(b, loc, rest, cst(tilesM));
    Value g = arith::DivUIOp::create(b, loc, rest, cst(tilesM));
    ivs.assign(ranges.size(), cst(0));
    if (!gDims.empty())
      delinearize(b, loc, g, gDims, ranges, ivs);
    m0 = arith::MulIOp::create(b, loc, tm, cst(TM));
    n0 = arith::MulIOp::create(b, loc, tn, cst(TN));
    return launch;
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
    delinearize(b, loc, linear, parallelDims, threadRanges, ivs);
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
  /// dimension (A and B are swapped to make it so). Fails when the op is
  /// not such a contraction or too small to gain from it.
  FailureOr<gpu::LaunchOp> mapTiledContraction(linalg::GenericOp op) {
    constexpr int64_t kSide = 16, kTK = 16, kThreads = kSide * kSide;
    std::optional<Contraction> contraction = classifyContraction(op);
    if (!contraction)
      return failure();
    OpOperand *a = contraction->a, *bIn = contraction->b;
    OpOperand &init = op.getDpsInitsMutable()[0];
    Block &payload = op.getRegion().front();
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    ArrayRef<unsigned> mDims = contraction->m, nDims = contraction->n,
                       gDims = contraction->g, kDims = contraction->k,
                       sDims = contraction->s;
    int64_t M = extent(ranges, mDims), N = extent(ranges, nDims);
    int64_t K = extent(ranges, kDims), G = extent(ranges, gDims);
    // Register tile per thread: up to 4 x 4; a side under 16 does not fill
    // the block (a matrix-vector product keeps the generic mapping).
    auto regs = [](int64_t size) -> int64_t {
      return size >= 64 ? 4 : size >= 32 ? 2 : size >= 16 ? 1 : 0;
    };
    int64_t RM = regs(M), RN = regs(N);
    if (!RM || !RN || K < kTK / 2)
      return failure();
    int64_t TM = kSide * RM, TN = kSide * RN;
    int64_t tilesM = llvm::divideCeil(M, TM), tilesN = llvm::divideCeil(N, TN);
    int64_t grid = G * tilesM * tilesN;
    if (grid > INT32_MAX)
      return failure();

    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto workgroup =
        gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    auto elementType = [](OpOperand *o) {
      return cast<MemRefType>(o->get().getType()).getElementType();
    };
    auto tileA = MemRefType::get({kTK, TM}, elementType(a), AffineMap(),
                                 workgroup);
    auto tileB = MemRefType::get({kTK, TN}, elementType(bIn), AffineMap(),
                                 workgroup);
    OpBuilder b(op);
    // Block -> (g, tile of M, tile of N); thread -> (ty, tx).
    SmallVector<Value> ivs;
    Value m0, n0;
    gpu::LaunchOp launch = createContractionLaunch(
        b, loc, grid, kThreads, TypeRange{tileA, tileB}, tilesM, tilesN, TM,
        TN, gDims, ranges, ivs, m0, n0);
    Value sharedA = launch.getWorkgroupAttributions()[0];
    Value sharedB = launch.getWorkgroupAttributions()[1];
    auto cst = [&](OpBuilder &bb, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(bb, loc, v);
    };
    Value zero = cst(b, 0), one = cst(b, 1);
    Value tid = launch.getThreadIds().x;
    Value tx = arith::RemUIOp::create(b, loc, tid, cst(b, kSide));
    Value ty = arith::DivUIOp::create(b, loc, tid, cst(b, kSide));

    // The thread's outputs: rows ty + 16 r, columns tx + 16 c.
    SmallVector<Value> rows, cols, rowOk, colOk;
    for (int64_t r = 0; r < RM; ++r) {
      Value mr = arith::AddIOp::create(
          b, loc, m0, arith::AddIOp::create(b, loc, ty, cst(b, kSide * r)));
      rows.push_back(mr);
      rowOk.push_back(below(b, loc, mr, M, M, TM));
    }
    for (int64_t c = 0; c < RN; ++c) {
      Value nc = arith::AddIOp::create(
          b, loc, n0, arith::AddIOp::create(b, loc, tx, cst(b, kSide * c)));
      cols.push_back(nc);
      colOk.push_back(below(b, loc, nc, N, N, TN));
    }
    auto outputIndices = [&](OpBuilder &bb, int64_t r, int64_t c) {
      delinearize(bb, loc, rows[r], mDims, ranges, ivs);
      delinearize(bb, loc, cols[c], nDims, ranges, ivs);
      return operandIndices(bb, loc, op, init, ivs);
    };
    SmallVector<Value> acc;
    for (int64_t r = 0; r < RM; ++r)
      for (int64_t c = 0; c < RN; ++c)
        acc.push_back(guardedLoad(b, loc, andCond(b, loc, rowOk[r], colOk[c]),
                                  init.get(), outputIndices(b, r, c)));

    // Whether an operand's contiguous dimension is the innermost K dim: then
    // neighbouring threads copy neighbouring k, else neighbouring m (n).
    auto fastAlongK = [&](OpOperand *o) {
      AffineMap map = op.getMatchingIndexingMap(o);
      return map.getNumResults() > 0 &&
             map.getResults().back().isFunctionOfDim(kDims.back());
    };
    // Vector loads: each thread copies its elements of the slice as one
    // aligned vector of up to 4 when they are consecutive in memory (the
    // operand's contiguous dimension is the copy direction's innermost dim,
    // its range a multiple of the width, the layout the identity: then a
    // vector never straddles a row, and rows start 16-byte aligned in the
    // 64-byte aligned buffers of the memory plan). Returns 1 otherwise.
    auto vectorWidth = [&](OpOperand *o, ArrayRef<unsigned> dims,
                           int64_t T) -> int64_t {
      int64_t width = T * kTK / kThreads;
      auto type = cast<MemRefType>(o->get().getType());
      AffineMap map = op.getMatchingIndexingMap(o);
      if (width < 2 || !type.getLayout().isIdentity() ||
          type.getElementTypeBitWidth() != 32 || map.getNumResults() == 0)
        return 1;
      auto lastDim = dyn_cast<AffineDimExpr>(map.getResults().back());
      unsigned along = fastAlongK(o) ? kDims.back() : dims.back();
      if (!lastDim || lastDim.getPosition() != along ||
          ranges[along] % width != 0)
        return 1;
      return width;
    };
    // Copies operand `o`'s [16 x T] slice at k0 into `shared` ([k][m]).
    auto copyTile = [&](OpBuilder &bb, OpOperand *o, Value shared,
                        ArrayRef<unsigned> dims, int64_t size, int64_t T,
                        Value origin, Value k0) {
      bool alongK = fastAlongK(o);
      if (int64_t width = vectorWidth(o, dims, T); width > 1) {
        // One vector per thread: `width` consecutive k (or m).
        int64_t perRow = (alongK ? kTK : T) / width;
        Value q = arith::MulIOp::create(
            bb, loc, arith::RemUIOp::create(bb, loc, tid, cst(bb, perRow)),
            cst(bb, width));
        Value p = arith::DivUIOp::create(bb, loc, tid, cst(bb, perRow));
        Value kk = alongK ? q : p, mm = alongK ? p : q;
        Value m = arith::AddIOp::create(bb, loc, origin, mm);
        Value k = arith::AddIOp::create(bb, loc, k0, kk);
        Value ok = andCond(bb, loc, below(bb, loc, m, size, size, T),
                           below(bb, loc, k, K, K, kTK));
        delinearize(bb, loc, m, dims, ranges, ivs);
        delinearize(bb, loc, k, kDims, ranges, ivs);
        SmallVector<Value> at = operandIndices(bb, loc, op, *o, ivs);
        Type elem = elementType(o);
        auto vecType = VectorType::get({width}, elem);
        auto load = [&](OpBuilder &lb) -> Value {
          return vector::LoadOp::create(lb, loc, vecType, o->get(), at,
                                        /*nontemporal=*/false,
                                        llvm::Align(width * 4));
        };
        Value v;
        if (!ok) {
          v = load(bb);
        } else {
          auto ifOp = scf::IfOp::create(
              bb, loc, ok,
              [&](OpBuilder &tb, Location l) {
                scf::YieldOp::create(tb, l, load(tb));
              },
              [&](OpBuilder &eb, Location l) {
                scf::YieldOp::create(
                    eb, l,
                    Value(arith::ConstantOp::create(
                        eb, l, DenseElementsAttr::get(
                                   vecType, cast<TypedAttr>(
                                                eb.getZeroAttr(elem))))));
              });
          v = ifOp.getResult(0);
        }
        for (int64_t e = 0; e < width; ++e) {
          Value x = vector::ExtractOp::create(bb, loc, v, e);
          Value off = arith::AddIOp::create(bb, loc, alongK ? kk : mm,
                                            cst(bb, e));
          memref::StoreOp::create(
              bb, loc, x, shared,
              alongK ? ValueRange{off, mm} : ValueRange{kk, off});
        }
        return;
      }
      for (int64_t e = 0; e < T * kTK / kThreads; ++e) {
        Value lin = arith::AddIOp::create(bb, loc, tid, cst(bb, kThreads * e));
        Value kk, mm;
        if (alongK) {
          kk = arith::RemUIOp::create(bb, loc, lin, cst(bb, kTK));
          mm = arith::DivUIOp::create(bb, loc, lin, cst(bb, kTK));
        } else {
          mm = arith::RemUIOp::create(bb, loc, lin, cst(bb, T));
          kk = arith::DivUIOp::create(bb, loc, lin, cst(bb, T));
        }
        Value m = arith::AddIOp::create(bb, loc, origin, mm);
        Value k = arith::AddIOp::create(bb, loc, k0, kk);
        Value ok = andCond(bb, loc, below(bb, loc, m, size, size, T),
                           below(bb, loc, k, K, K, kTK));
        delinearize(bb, loc, m, dims, ranges, ivs);
        delinearize(bb, loc, k, kDims, ranges, ivs);
        Value v = guardedLoad(bb, loc, ok, o->get(),
                              operandIndices(bb, loc, op, *o, ivs));
        memref::StoreOp::create(bb, loc, v, shared, ValueRange{kk, mm});
      }
    };

    // One 16-wide slice of K: copy, wait, accumulate, wait.
    auto kSlice = [&](OpBuilder &bb, Value kt, ValueRange carried) {
      Value k0 = arith::MulIOp::create(bb, loc, kt, cst(bb, kTK));
      copyTile(bb, a, sharedA, mDims, M, TM, m0, k0);
      copyTile(bb, bIn, sharedB, nDims, N, TN, n0, k0);
      gpu::BarrierOp::create(bb, loc);
      Value kEnd = K % kTK == 0
                       ? cst(bb, kTK)
                       : arith::MinSIOp::create(
                             bb, loc, cst(bb, kTK),
                             arith::SubIOp::create(bb, loc, cst(bb, K), k0))
                             .getResult();
      auto inner = scf::ForOp::create(
          bb, loc, zero, kEnd, one, carried,
          [&](OpBuilder &lb, Location, Value kk, ValueRange accs) {
            SmallVector<Value> av, bv;
            for (int64_t r = 0; r < RM; ++r)
              av.push_back(memref::LoadOp::create(
                  lb, loc, sharedA,
                  ValueRange{kk, arith::AddIOp::create(lb, loc, ty,
                                                       cst(lb, kSide * r))}));
            for (int64_t c = 0; c < RN; ++c)
              bv.push_back(memref::LoadOp::create(
                  lb, loc, sharedB,
                  ValueRange{kk, arith::AddIOp::create(lb, loc, tx,
                                                       cst(lb, kSide * c))}));
            SmallVector<Value> next;
            for (int64_t r = 0; r < RM; ++r)
              for (int64_t c = 0; c < RN; ++c) {
                IRMapping map;
                for (OpOperand *in : op.getDpsInputOperands()) {
                  Value arg = payload.getArgument(in->getOperandNumber());
                  if (in == a)
                    map.map(arg, av[r]);
                  else if (in == bIn)
                    map.map(arg, bv[c]);
                  else
                    map.map(arg, in->get());
                }
                map.map(payload.getArgument(init.getOperandNumber()),
                        accs[r * RN + c]);
                next.push_back(clonePayload(lb, op, map).front());
              }
            scf::YieldOp::create(lb, loc, next);
          });
      gpu::BarrierOp::create(bb, loc);
      return SmallVector<Value>(inner.getResults());
    };

    // S dims outermost, then the slices of K, carrying the accumulators.
    SmallVector<Value> results = reductionNest(
        b, loc, sDims, ranges, llvm::divideCeil(K, kTK), ivs, acc, kSlice);

    for (int64_t r = 0; r < RM; ++r)
      for (int64_t c = 0; c < RN; ++c) {
        Value ok = andCond(b, loc, rowOk[r], colOk[c]);
        OpBuilder::InsertionGuard guard(b);
        if (ok) {
          auto ifOp = scf::IfOp::create(b, loc, ok, /*withElse=*/false);
          b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        }
        memref::StoreOp::create(b, loc, results[r * RN + c], init.get(),
                                outputIndices(b, r, c));
      }
    return launch;
  }

  /// Tensor cores for an fp16 contraction whose payload is a multiply-add
  /// (out += a * b; out fp16 or fp32): the GEMM view of
  /// mapTiledContraction, with warp-level 16x16x16 matrix operations
  /// (gpu.subgroup_mma_*, lowered to NVVM's wmma intrinsics: mma.sync on
  /// fp16 operands with fp32 accumulation). A block of 4 warps (2 x 2)
  /// computes a TM x TN tile of 32 or 64 per side, each warp FM x FN
  /// fragments of 16 x 16; K is staged through shared memory in slices of
  /// 16 (A as [m][k], B as [k][n], zeros past the edges, which the
  /// multiply-add ignores), between two barriers. The fp32 accumulators go
  /// through shared memory once at the end, where every thread adds its
  /// outputs' initial values and stores them (bounds-checked, rounded to the
  /// output type). Fails when the op does not qualify.
  FailureOr<gpu::LaunchOp> mapTensorCoreContraction(linalg::GenericOp op) {
    constexpr int64_t kFrag = 16, kWarp = 32, kThreads = 4 * kWarp;
    std::optional<Contraction> contraction = classifyContraction(op);
    if (!contraction)
      return failure();
    OpOperand *a = contraction->a, *bIn = contraction->b;
    OpOperand &init = op.getDpsInitsMutable()[0];
    Block &payload = op.getRegion().front();
    MLIRContext *ctx = op.getContext();
    Type f16 = Float16Type::get(ctx), f32 = Float32Type::get(ctx);
    auto elementType = [](Value v) {
      return cast<MemRefType>(v.getType()).getElementType();
    };
    Type outType = elementType(init.get());
    if (elementType(a->get()) != f16 || elementType(bIn->get()) != f16 ||
        (outType != f16 && outType != f32))
      return failure();
    // The payload: exactly acc + x * y over the two inputs.
    Value argA = payload.getArgument(a->getOperandNumber());
    Value argB = payload.getArgument(bIn->getOperandNumber());
    Value argOut = payload.getArgument(init.getOperandNumber());
    auto ops = payload.without_terminator();
    if (std::distance(ops.begin(), ops.end()) != 2)
      return failure();
    auto mul = dyn_cast<arith::MulFOp>(&*ops.begin());
    auto add = dyn_cast<arith::AddFOp>(&*std::next(ops.begin()));
    if (!mul || !add ||
        payload.getTerminator()->getOperands() != ValueRange{add.getResult()})
      return failure();
    auto isPair = [](Value x, Value y, Value p, Value q) {
      return (x == p && y == q) || (x == q && y == p);
    };
    if (!isPair(mul.getLhs(), mul.getRhs(), argA, argB) ||
        !isPair(add.getLhs(), add.getRhs(), argOut, mul.getResult()))
      return failure();

    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    ArrayRef<unsigned> mDims = contraction->m, nDims = contraction->n,
                       gDims = contraction->g, kDims = contraction->k,
                       sDims = contraction->s;
    int64_t M = extent(ranges, mDims), N = extent(ranges, nDims);
    int64_t K = extent(ranges, kDims), G = extent(ranges, gDims);
    if (M < kFrag || N < kFrag || K < kFrag)
      return failure();
    int64_t FM = M >= 64 ? 2 : 1, FN = N >= 64 ? 2 : 1;
    int64_t TM = 2 * kFrag * FM, TN = 2 * kFrag * FN;
    int64_t tilesM = llvm::divideCeil(M, TM), tilesN = llvm::divideCeil(N, TN);
    int64_t grid = G * tilesM * tilesN;
    if (grid > INT32_MAX)
      return failure();

    Location loc = op.getLoc();
    auto workgroup =
        gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    auto tileA = MemRefType::get({TM, kFrag}, f16, AffineMap(), workgroup);
    auto tileB = MemRefType::get({kFrag, TN}, f16, AffineMap(), workgroup);
    auto tileC = MemRefType::get({TM, TN}, f32, AffineMap(), workgroup);
    OpBuilder b(op);
    SmallVector<Value> ivs;
    Value m0, n0;
    gpu::LaunchOp launch = createContractionLaunch(
        b, loc, grid, kThreads, TypeRange{tileA, tileB, tileC}, tilesM, tilesN,
        TM, TN, gDims, ranges, ivs, m0, n0);
    Value sharedA = launch.getWorkgroupAttributions()[0];
    Value sharedB = launch.getWorkgroupAttributions()[1];
    Value sharedC = launch.getWorkgroupAttributions()[2];
    auto cst = [&](OpBuilder &bb, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(bb, loc, v);
    };
    Value zero = cst(b, 0);
    Value tid = launch.getThreadIds().x;
    // Warp (wr, wc) of the 2 x 2: rows wr * 16 FM, columns wc * 16 FN.
    Value warp = arith::DivUIOp::create(b, loc, tid, cst(b, kWarp));
    Value wr = arith::DivUIOp::create(b, loc, warp, cst(b, 2));
    Value wc = arith::RemUIOp::create(b, loc, warp, cst(b, 2));
    SmallVector<Value> fragRow, fragCol;
    for (int64_t f = 0; f < FM; ++f)
      fragRow.push_back(arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, wr, cst(b, kFrag * FM)),
          cst(b, kFrag * f)));
    for (int64_t f = 0; f < FN; ++f)
      fragCol.push_back(arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, wc, cst(b, kFrag * FN)),
          cst(b, kFrag * f)));
    auto accType = gpu::MMAMatrixType::get({kFrag, kFrag}, f32, "COp");
    auto aType = gpu::MMAMatrixType::get({kFrag, kFrag}, f16, "AOp");
    auto bType = gpu::MMAMatrixType::get({kFrag, kFrag}, f16, "BOp");
    Value zeroF32 = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
    SmallVector<Value> acc;
    for (int64_t i = 0; i < FM * FN; ++i)
      acc.push_back(
          gpu::SubgroupMmaConstantMatrixOp::create(b, loc, accType, zeroF32));

    // Copies `o`'s slice at k0 into `shared`: [m][k] (A) or [k][n] (B).
    // Each thread copies a run of consecutive elements along the operand's
    // contiguous dimension (k, or m/n), so that the index arithmetic of the
    // other dimension (an implicit GEMM's pixel coordinates) is done once
    // per thread rather than once per element: fewer registers live across
    // the K loop.
    auto copyTile = [&](OpBuilder &bb, OpOperand *o, Value shared,
                        ArrayRef<unsigned> dims, int64_t size, int64_t T,
                        Value origin, Value k0, bool rowsAreM) {
      AffineMap map = op.getMatchingIndexingMap(o);
      bool alongK = map.getNumResults() > 0 &&
                    map.getResults().back().isFunctionOfDim(kDims.back());
      int64_t run = T * kFrag / kThreads;
      int64_t runsPerLine = (alongK ? kFrag : T) / run;
      Value first = arith::MulIOp::create(
          bb, loc, arith::RemUIOp::create(bb, loc, tid, cst(bb, runsPerLine)),
          cst(bb, run));
      Value line = arith::DivUIOp::create(bb, loc, tid, cst(bb, runsPerLine));
      for (int64_t e = 0; e < run; ++e) {
        Value along = arith::AddIOp::create(bb, loc, first, cst(bb, e));
        Value kk = alongK ? along : line, mm = alongK ? line : along;
        Value m = arith::AddIOp::create(bb, loc, origin, mm);
        Value k = arith::AddIOp::create(bb, loc, k0, kk);
        Value ok = andCond(bb, loc, below(bb, loc, m, size, size, T),
                           below(bb, loc, k, K, K, kFrag));
        delinearize(bb, loc, m, dims, ranges, ivs);
        delinearize(bb, loc, k, kDims, ranges, ivs);
        Value v = guardedLoad(bb, loc, ok, o->get(),
                              operandIndices(bb, loc, op, *o, ivs));
        memref::StoreOp::create(bb, loc, v, shared,
                                rowsAreM ? ValueRange{mm, kk}
                                         : ValueRange{kk, mm});
      }
    };
    auto kSlice = [&](OpBuilder &bb, Value kt, ValueRange carried) {
      Value k0 = arith::MulIOp::create(bb, loc, kt, cst(bb, kFrag));
      copyTile(bb, a, sharedA, mDims, M, TM, m0, k0, /*rowsAreM=*/true);
      copyTile(bb, bIn, sharedB, nDims, N, TN, n0, k0, /*rowsAreM=*/false);
      gpu::BarrierOp::create(bb, loc);
      SmallVector<Value> fa, fb, next;
      for (int64_t f = 0; f < FM; ++f)
        fa.push_back(gpu::SubgroupMmaLoadMatrixOp::create(
            bb, loc, aType, sharedA, ValueRange{fragRow[f], zero},
            bb.getIndexAttr(kFrag), UnitAttr()));
      for (int64_t f = 0; f < FN; ++f)
        fb.push_back(gpu::SubgroupMmaLoadMatrixOp::create(
            bb, loc, bType, sharedB, ValueRange{zero, fragCol[f]},
            bb.getIndexAttr(TN), UnitAttr()));
      for (int64_t i = 0; i < FM; ++i)
        for (int64_t j = 0; j < FN; ++j)
          next.push_back(gpu::SubgroupMmaComputeOp::create(
              bb, loc, accType, fa[i], fb[j], carried[i * FN + j],
              UnitAttr(), UnitAttr()));
      gpu::BarrierOp::create(bb, loc);
      return next;
    };
    SmallVector<Value> sums = reductionNest(
        b, loc, sDims, ranges, llvm::divideCeil(K, kFrag), ivs, acc, kSlice);

    // The accumulators through shared memory to the outputs.
    for (int64_t i = 0; i < FM; ++i)
      for (int64_t j = 0; j < FN; ++j)
        gpu::SubgroupMmaStoreMatrixOp::create(
            b, loc, sums[i * FN + j], sharedC,
            ValueRange{fragRow[i], fragCol[j]}, b.getIndexAttr(TN),
            UnitAttr());
    gpu::BarrierOp::create(b, loc);
    for (int64_t e = 0; e < TM * TN / kThreads; ++e) {
      Value lin = arith::AddIOp::create(b, loc, tid, cst(b, kThreads * e));
      Value nn = arith::RemUIOp::create(b, loc, lin, cst(b, TN));
      Value mm = arith::DivUIOp::create(b, loc, lin, cst(b, TN));
      Value m = arith::AddIOp::create(b, loc, m0, mm);
      Value n = arith::AddIOp::create(b, loc, n0, nn);
      Value ok = andCond(b, loc, below(b, loc, m, M, M, TM),
                         below(b, loc, n, N, N, TN));
      OpBuilder::InsertionGuard guard(b);
      if (ok) {
        auto ifOp = scf::IfOp::create(b, loc, ok, /*withElse=*/false);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      }
      delinearize(b, loc, m, mDims, ranges, ivs);
      delinearize(b, loc, n, nDims, ranges, ivs);
      SmallVector<Value> at = operandIndices(b, loc, op, init, ivs);
      Value sum = memref::LoadOp::create(b, loc, sharedC, ValueRange{mm, nn});
      Value old = memref::LoadOp::create(b, loc, init.get(), at);
      if (outType != f32)
        old = arith::ExtFOp::create(b, loc, f32, old);
      Value total = arith::AddFOp::create(b, loc, old, sum);
      if (outType != f32)
        total = arith::TruncFOp::create(b, loc, outType, total);
      memref::StoreOp::create(b, loc, total, init.get(), at);
    }
    return launch;
  }

  int64_t kernelCount = 0;
};
} // namespace
