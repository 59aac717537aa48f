//===- EmulateOnHost.cpp - gpu.launch -> host loops -------------*- C++ -*-===//
//
// Testing the GPU mapping without a GPU: every gpu.launch becomes loops over
// its blocks and threads on the host, and the weights argument becomes the
// packed global again. A kernel without barriers runs its threads one after
// another, which computes what the GPU computes. A kernel with barriers
// (the shared-memory tiles of contractions) runs each block's threads as
// fibers: an scf.forall marked `kiln.fibers`, outlined by
// kiln-cpu-outline-parallel-loops and run by the runtime's
// __kiln_emu_fibers, where gpu.barrier becomes a call of __kiln_emu_barrier
// that switches to the next thread of the block; the workgroup memory is one
// host buffer that the blocks reuse in turn. The result then goes down the
// CPU path and is compared with reference outputs
// (kiln-compile --target=cuda-emulated, bench/gpu/run.sh).
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_EMULATEONHOSTPASS
#include "kiln/Codegen/GPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
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
    forall->setAttr(kFibersAttr, rewriter.getUnitAttr());
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
    SmallVector<gpu::BarrierOp> barriers;
    forall.walk([&](gpu::BarrierOp op) { barriers.push_back(op); });
    for (gpu::BarrierOp op : barriers) {
      rewriter.setInsertionPoint(op);
      rewriter.replaceOpWithNewOp<func::CallOp>(op, barrierFn, ValueRange{});
    }
    rewriter.eraseOp(launch);
  }

  static constexpr llvm::StringLiteral kBarrierFn = "__kiln_emu_barrier";
  static constexpr llvm::StringLiteral kFibersAttr = "kiln.fibers";
};
} // namespace
