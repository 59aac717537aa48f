//===- EmulateOnHost.cpp - gpu.launch -> host loops -------------*- C++ -*-===//
//
// Testing the GPU mapping without a GPU: every gpu.launch becomes loops over
// its blocks and threads on the host, and the weights argument becomes the
// packed global again. A kernel without barriers runs its threads one after
// another, which computes what the GPU computes. A kernel with barriers
// (the shared-memory tiles of contractions) runs each block's threads as
// fibers: an scf.forall marked `kiln.fibers`, outlined by
// kiln-outline-parallel-loops and run by the runtime's
// __kiln_emu_fibers, where gpu.barrier becomes a call of __kiln_emu_barrier
// that switches to the next thread of the block; the workgroup memory is one
// host buffer that the blocks reuse in turn. The result then goes down the
// CPU path and is compared with reference outputs
// (kiln-compile --target=cuda-emulated, bench/gpu/run.sh).
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/GPU/Passes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_EMULATEONHOSTPASS
#include "kiln/Codegen/GPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// The warp-level matrix operations (gpu.subgroup_mma_*) of one thread:
/// every lane of a warp holds the whole 16x16 fragment in a buffer of its
/// own (memory of its fiber's stack) and computes all of it, which gives
/// each lane the values the warp computes together. A fragment value
/// becomes its buffer: loads and constants fill a new buffer, a
/// multiply-accumulate updates its accumulator's buffer in place (Kiln's
/// kernels never read an accumulator again once they have fed it to the
/// next one), and loops carry buffers instead of fragments. Products are
/// taken in the accumulator's type, as the tensor cores do.
class FragmentsToBuffers {
public:
  FragmentsToBuffers(IRRewriter &rewriter, scf::ForallOp forall)
      : rewriter(rewriter), forall(forall), loc(forall.getLoc()),
        entry(forall.getBody()) {}

  LogicalResult run();

private:
  static Type bufferType(Type t) {
    if (auto m = dyn_cast<gpu::MMAMatrixType>(t))
      return MemRefType::get(m.getShape(), m.getElementType());
    return t;
  }
  LogicalResult prepare();
  Value newBuffer(Type fragment);
  void forEach(function_ref<void(Value, Value)> body, int64_t rows,
               int64_t cols);
  FailureOr<SmallVector<Value>> at(Value memref, ValueRange indices,
                                   int64_t lead, Value r, Value c);
  LogicalResult rewrite(gpu::SubgroupMmaConstantMatrixOp cst);
  LogicalResult rewrite(gpu::SubgroupMmaLoadMatrixOp load);
  LogicalResult rewrite(gpu::SubgroupMmaStoreMatrixOp store);
  LogicalResult rewrite(gpu::SubgroupMmaComputeOp mma);

  IRRewriter &rewriter;
  scf::ForallOp forall;
  Location loc;
  Block *entry;
};

LogicalResult FragmentsToBuffers::run() {
  bool any = false;
  forall.walk([&](Operation *op) {
    for (Value v : op->getResults())
      if (isa<gpu::MMAMatrixType>(v.getType()))
        any = true;
  });
  if (!any)
    return success();
  if (failed(prepare()))
    return failure();
  SmallVector<Operation *> ops;
  forall.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<gpu::SubgroupMmaConstantMatrixOp, gpu::SubgroupMmaLoadMatrixOp,
            gpu::SubgroupMmaComputeOp, gpu::SubgroupMmaStoreMatrixOp>(op))
      ops.push_back(op);
    else if (op->getDialect() &&
             op->getName().getStringRef().starts_with("gpu.subgroup_mma"))
      ops.push_back(op); // reported below
  });
  for (Operation *op : ops) {
    rewriter.setInsertionPoint(op);
    LogicalResult done =
        TypeSwitch<Operation *, LogicalResult>(op)
            .Case<gpu::SubgroupMmaConstantMatrixOp,
                  gpu::SubgroupMmaLoadMatrixOp, gpu::SubgroupMmaStoreMatrixOp,
                  gpu::SubgroupMmaComputeOp>(
                [&](auto typed) { return rewrite(typed); })
            .Default([](Operation *op) -> LogicalResult {
              return op->emitError("cannot emulate this warp-level matrix "
                                   "operation");
            });
    if (failed(done))
      return failure();
  }
  return success();
}

/// Gives each use of a constant fragment its own, checks that every
/// accumulator has one use, and makes loops carry buffers.
LogicalResult FragmentsToBuffers::prepare() {
  // CSE merges equal constant fragments (the zero accumulators); each use
  // gets its own again, since accumulators are updated in place.
  SmallVector<gpu::SubgroupMmaConstantMatrixOp> constants;
  forall.walk(
      [&](gpu::SubgroupMmaConstantMatrixOp op) { constants.push_back(op); });
  for (gpu::SubgroupMmaConstantMatrixOp op : constants) {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : op->getUses())
      uses.push_back(&use);
    for (OpOperand *use : llvm::drop_begin(uses)) {
      rewriter.setInsertionPoint(op);
      use->set(rewriter.clone(*op)->getResult(0));
    }
  }
  // An accumulator feeds one multiply-accumulate or one loop, no more.
  WalkResult shared = forall.walk([&](gpu::SubgroupMmaComputeOp op) {
    if (!op.getOpC().hasOneUse()) {
      op.emitError("cannot emulate an accumulator fragment with more than "
                   "one use");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (shared.wasInterrupted())
    return failure();
  // Loops carry buffers.
  forall.walk([&](scf::ForOp loop) {
    for (auto [arg, result] :
         llvm::zip(loop.getRegionIterArgs(), loop.getResults())) {
      arg.setType(bufferType(arg.getType()));
      result.setType(bufferType(result.getType()));
    }
  });
  return success();
}

Value FragmentsToBuffers::newBuffer(Type fragment) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(entry);
  return memref::AllocaOp::create(rewriter, loc,
                                  cast<MemRefType>(bufferType(fragment)));
}

/// for r, c in rows x cols: body(r, c).
void FragmentsToBuffers::forEach(function_ref<void(Value, Value)> body,
                                 int64_t rows, int64_t cols) {
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto outer = scf::ForOp::create(
      rewriter, loc, zero, arith::ConstantIndexOp::create(rewriter, loc, rows),
      one);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(outer.getBody());
  auto inner = scf::ForOp::create(
      rewriter, loc, zero, arith::ConstantIndexOp::create(rewriter, loc, cols),
      one);
  rewriter.setInsertionPointToStart(inner.getBody());
  body(outer.getInductionVar(), inner.getInductionVar());
}

/// The element (r, c) of a fragment at `indices` of a 2-D memref whose
/// rows are `lead` elements apart.
FailureOr<SmallVector<Value>> FragmentsToBuffers::at(Value memref,
                                                     ValueRange indices,
                                                     int64_t lead, Value r,
                                                     Value c) {
  auto type = cast<MemRefType>(memref.getType());
  if (type.getRank() != 2 || indices.size() != 2 ||
      !type.getLayout().isIdentity() || type.getDimSize(1) != lead)
    return failure();
  return SmallVector<Value>{
      arith::AddIOp::create(rewriter, loc, indices[0], r),
      arith::AddIOp::create(rewriter, loc, indices[1], c)};
}

LogicalResult
FragmentsToBuffers::rewrite(gpu::SubgroupMmaConstantMatrixOp cst) {
  auto type = cst.getType();
  Value buffer = newBuffer(type);
  forEach(
      [&](Value r, Value c) {
        memref::StoreOp::create(rewriter, loc, cst.getValue(), buffer,
                                ValueRange{r, c});
      },
      type.getShape()[0], type.getShape()[1]);
  rewriter.replaceOp(cst, buffer);
  return success();
}

LogicalResult FragmentsToBuffers::rewrite(gpu::SubgroupMmaLoadMatrixOp load) {
  auto type = cast<gpu::MMAMatrixType>(load.getRes().getType());
  if (load.getTranspose() && *load.getTranspose())
    return load->emitError("cannot emulate a transposed fragment load");
  Value buffer = newBuffer(type);
  LogicalResult ok = success();
  forEach(
      [&](Value r, Value c) {
        auto src = at(load.getSrcMemref(), load.getIndices(),
                      load.getLeadDimension().getSExtValue(), r, c);
        if (failed(src)) {
          ok = failure();
          return;
        }
        Value v =
            memref::LoadOp::create(rewriter, loc, load.getSrcMemref(), *src);
        memref::StoreOp::create(rewriter, loc, v, buffer, ValueRange{r, c});
      },
      type.getShape()[0], type.getShape()[1]);
  if (failed(ok))
    return load->emitError("cannot emulate a fragment load from a "
                           "memref other than a 2-D row-major one "
                           "with rows of leadDimension elements");
  rewriter.replaceOp(load, buffer);
  return success();
}

LogicalResult FragmentsToBuffers::rewrite(gpu::SubgroupMmaStoreMatrixOp store) {
  Value buffer = store.getSrc();
  auto type = cast<MemRefType>(buffer.getType());
  LogicalResult ok = success();
  forEach(
      [&](Value r, Value c) {
        auto dst = at(store.getDstMemref(), store.getIndices(),
                      store.getLeadDimension().getSExtValue(), r, c);
        if (failed(dst)) {
          ok = failure();
          return;
        }
        Value v =
            memref::LoadOp::create(rewriter, loc, buffer, ValueRange{r, c});
        memref::StoreOp::create(rewriter, loc, v, store.getDstMemref(), *dst);
      },
      type.getShape()[0], type.getShape()[1]);
  if (failed(ok))
    return store->emitError("cannot emulate a fragment store to a "
                            "memref other than a 2-D row-major one "
                            "with rows of leadDimension elements");
  rewriter.eraseOp(store);
  return success();
}

LogicalResult FragmentsToBuffers::rewrite(gpu::SubgroupMmaComputeOp mma) {
  if ((mma.getATranspose() && *mma.getATranspose()) ||
      (mma.getBTranspose() && *mma.getBTranspose()))
    return mma->emitError("cannot emulate a transposed fragment");
  Value a = mma.getOpA(), b = mma.getOpB(), c = mma.getOpC();
  auto cType = cast<MemRefType>(c.getType());
  Type accType = cType.getElementType();
  int64_t depth = cast<MemRefType>(a.getType()).getShape()[1];
  forEach(
      [&](Value r, Value col) {
        Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
        Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
        Value init =
            memref::LoadOp::create(rewriter, loc, c, ValueRange{r, col});
        auto loop = scf::ForOp::create(
            rewriter, loc, zero,
            arith::ConstantIndexOp::create(rewriter, loc, depth), one,
            ValueRange{init},
            [&](OpBuilder &lb, Location l, Value k, ValueRange sum) {
              Value x = memref::LoadOp::create(lb, l, a, ValueRange{r, k});
              Value y = memref::LoadOp::create(lb, l, b, ValueRange{k, col});
              if (x.getType() != accType)
                x = arith::ExtFOp::create(lb, l, accType, x);
              if (y.getType() != accType)
                y = arith::ExtFOp::create(lb, l, accType, y);
              Value p = arith::MulFOp::create(lb, l, x, y);
              scf::YieldOp::create(
                  lb, l, Value(arith::AddFOp::create(lb, l, sum[0], p)));
            });
        memref::StoreOp::create(rewriter, loc, loop.getResult(0), c,
                                ValueRange{r, col});
      },
      cType.getShape()[0], cType.getShape()[1]);
  rewriter.replaceOp(mma, c);
  return success();
}

struct EmulateOnHostPass
    : mlir::kiln::impl::EmulateOnHostPassBase<EmulateOnHostPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(&getContext());
    auto weights =
        module.lookupSymbol<memref::GlobalOp>(mlir::kiln::kWeightsGlobal);
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isDeclaration())
        continue;
      // The weights argument reads the packed global instead.
      for (BlockArgument arg : func.getArguments()) {
        if (!func.getArgAttr(arg.getArgNumber(), mlir::kiln::kWeightsArgAttr))
          continue;
        if (!weights) {
          func.emitError() << "a weights argument but no "
                           << mlir::kiln::kWeightsGlobal << " global";
          return signalPassFailure();
        }
        rewriter.setInsertionPointToStart(&func.getBody().front());
        Value global = memref::GetGlobalOp::create(
            rewriter, func.getLoc(), weights.getType(), weights.getSymName());
        arg.replaceAllUsesWith(global);
        if (failed(func.eraseArgument(arg.getArgNumber())))
          return signalPassFailure();
        break;
      }
      SmallVector<gpu::LaunchOp> launches;
      func.walk([&](gpu::LaunchOp op) { launches.push_back(op); });
      for (gpu::LaunchOp launch : launches)
        emulate(rewriter, launch);
    }
  }

  /// for bz, by, bx, tz, ty, tx: body (the ids and sizes are the ivs and the
  /// launch's operands).
  void emulate(IRRewriter &rewriter, gpu::LaunchOp launch) {
    bool barriers = false;
    launch.walk([&](gpu::BarrierOp) { barriers = true; });
    if (barriers || !launch.getWorkgroupAttributions().empty())
      return emulateWithFibers(rewriter, launch);
    Location loc = launch.getLoc();
    rewriter.setInsertionPoint(launch);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value sizes[6] = {launch.getGridSizeZ(),  launch.getGridSizeY(),
                      launch.getGridSizeX(),  launch.getBlockSizeZ(),
                      launch.getBlockSizeY(), launch.getBlockSizeX()};
    auto blockIds = launch.getBlockIds();
    auto threadIds = launch.getThreadIds();
    Value ids[6] = {blockIds.z,  blockIds.y,  blockIds.x,
                    threadIds.z, threadIds.y, threadIds.x};
    auto gridArgs = launch.getGridSize();
    auto blockArgs = launch.getBlockSize();
    Value sizeArgs[6] = {gridArgs.z,  gridArgs.y,  gridArgs.x,
                         blockArgs.z, blockArgs.y, blockArgs.x};
    IRMapping map;
    for (int i = 0; i < 6; ++i)
      map.map(sizeArgs[i], sizes[i]);
    for (int i = 0; i < 6; ++i) {
      auto loop = scf::ForOp::create(rewriter, loc, zero, sizes[i], one);
      map.map(ids[i], loop.getInductionVar());
      rewriter.setInsertionPoint(loop.getBody()->getTerminator());
    }
    Block &body = launch.getBody().front();
    if (launch.getBody().getBlocks().size() != 1) {
      launch.emitError() << "only single-block kernels can be emulated";
      return signalPassFailure();
    }
    for (Operation &op : body.without_terminator())
      rewriter.clone(op, map);
    rewriter.eraseOp(launch);
  }

  /// for bz, by, bx: forall t in [0, threads) {kiln.fibers}: body, with the
  /// thread ids from t (x fastest) and gpu.barrier as a call of
  /// __kiln_emu_barrier. Workgroup attributions become host buffers
  /// allocated once before the loops (the blocks run one after another).
  void emulateWithFibers(IRRewriter &rewriter, gpu::LaunchOp launch) {
    Location loc = launch.getLoc();
    ModuleOp module = getOperation();
    if (launch.getBody().getBlocks().size() != 1) {
      launch.emitError() << "only single-block kernels can be emulated";
      return signalPassFailure();
    }
    if (!launch.getPrivateAttributions().empty()) {
      launch.emitError() << "private attributions cannot be emulated";
      return signalPassFailure();
    }
    auto barrierFn = module.lookupSymbol<func::FuncOp>(kBarrierFn);
    if (!barrierFn) {
      OpBuilder mb(module.getBodyRegion());
      barrierFn = func::FuncOp::create(mb, loc, kBarrierFn,
                                       mb.getFunctionType({}, {}));
      barrierFn.setPrivate();
    }
    IRMapping map;
    rewriter.setInsertionPoint(launch);
    for (BlockArgument shared : launch.getWorkgroupAttributions()) {
      auto type = cast<MemRefType>(shared.getType());
      auto host = MemRefType::get(type.getShape(), type.getElementType());
      map.map(shared, memref::AllocaOp::create(rewriter, loc, host));
    }
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value grid[3] = {launch.getGridSizeZ(), launch.getGridSizeY(),
                     launch.getGridSizeX()};
    auto blockIds = launch.getBlockIds();
    Value blockIdArgs[3] = {blockIds.z, blockIds.y, blockIds.x};
    auto gridArgs = launch.getGridSize();
    auto blockArgs = launch.getBlockSize();
    map.map(gridArgs.x, launch.getGridSizeX());
    map.map(gridArgs.y, launch.getGridSizeY());
    map.map(gridArgs.z, launch.getGridSizeZ());
    map.map(blockArgs.x, launch.getBlockSizeX());
    map.map(blockArgs.y, launch.getBlockSizeY());
    map.map(blockArgs.z, launch.getBlockSizeZ());
    for (int i = 0; i < 3; ++i) {
      auto loop = scf::ForOp::create(rewriter, loc, zero, grid[i], one);
      map.map(blockIdArgs[i], loop.getInductionVar());
      rewriter.setInsertionPoint(loop.getBody()->getTerminator());
    }
    Value sx = launch.getBlockSizeX(), sy = launch.getBlockSizeY();
    Value sxy = arith::MulIOp::create(rewriter, loc, sx, sy);
    Value threads =
        arith::MulIOp::create(rewriter, loc, sxy, launch.getBlockSizeZ());
    // A static count when the block is (always, for Kiln's launches): the
    // fiber launcher takes the count as a constant.
    OpFoldResult count = threads;
    std::optional<int64_t> bx = getConstantIntValue(launch.getBlockSizeX());
    std::optional<int64_t> by = getConstantIntValue(launch.getBlockSizeY());
    std::optional<int64_t> bz = getConstantIntValue(launch.getBlockSizeZ());
    if (bx && by && bz)
      count = rewriter.getIndexAttr(*bx * *by * *bz);
    auto forall = scf::ForallOp::create(rewriter, loc,
                                        ArrayRef<OpFoldResult>{count},
                                        ValueRange{}, std::nullopt);
    forall->setAttr(mlir::kiln::kFibersAttr, rewriter.getUnitAttr());
    rewriter.setInsertionPointToStart(forall.getBody());
    Value t = forall.getInductionVar(0);
    auto threadIds = launch.getThreadIds();
    map.map(threadIds.x, arith::RemUIOp::create(rewriter, loc, t, sx));
    map.map(threadIds.y,
            arith::RemUIOp::create(
                rewriter, loc, arith::DivUIOp::create(rewriter, loc, t, sx),
                sy));
    map.map(threadIds.z, arith::DivUIOp::create(rewriter, loc, t, sxy));
    for (Operation &op : launch.getBody().front().without_terminator())
      rewriter.clone(op, map);
    if (failed(FragmentsToBuffers(rewriter, forall).run()))
      return signalPassFailure();
    SmallVector<gpu::BarrierOp> barriers;
    forall.walk([&](gpu::BarrierOp op) { barriers.push_back(op); });
    for (gpu::BarrierOp op : barriers) {
      rewriter.setInsertionPoint(op);
      rewriter.replaceOpWithNewOp<func::CallOp>(op, barrierFn, ValueRange{});
    }
    rewriter.eraseOp(launch);
  }

  static constexpr llvm::StringLiteral kBarrierFn = "__kiln_emu_barrier";
};
} // namespace
