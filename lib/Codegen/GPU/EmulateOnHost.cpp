//===- EmulateOnHost.cpp - gpu.launch -> sequential host loops --*- C++ -*-===//
//
// Testing the GPU mapping without a GPU: every gpu.launch becomes loops over
// its blocks and threads on the host. Kiln's kernels use no shared memory
// and no barriers, so running the threads one after another computes what
// the GPU computes; the weights argument becomes the packed global again.
// The result then goes down the CPU path and is compared with reference
// outputs (kiln-compile --target=cuda-emulated, bench/gpu/run.sh).
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/GPU/Passes.h"

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
};
} // namespace
