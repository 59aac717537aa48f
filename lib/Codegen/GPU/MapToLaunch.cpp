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
//    the outputs carried in registers and stored once (ParallelKernel.cpp);
//    a contraction instead gets shared-memory tiles (TiledContraction.cpp),
//    or tensor cores when it is fp16 (TensorCoreContraction.cpp);
//  * anything else with side effects (scalar loops, guards, a generic whose
//    output index involves a reduction dimension): one thread
//    (SingleThreadKernels.cpp).
//
// Pure ops the kernel uses (constants, views of the arena and the weights)
// are cloned into it, so that the outlined kernels take only the function's
// own arguments; the host side becomes a static list of launches.
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/GPU/Passes.h"

#include "KernelBuilder.h"
#include "KernelStrategy.h"

#include "mlir/Transforms/RegionUtils.h"

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

struct MapToLaunchPass
    : mlir::kiln::impl::MapToLaunchPassBase<MapToLaunchPass> {
  using MapToLaunchPassBase::MapToLaunchPassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isDeclaration())
      return;
    names.module = moduleName;
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
        launch = mapSequentialGroup(names, op, done);
      } else {
        if (generic && generic.hasPureBufferSemantics() &&
            isParallelizable(generic)) {
          if (tile && tensorCores)
            launch = mapTensorCoreContraction(names, generic);
          if (failed(launch) && tile)
            launch = mapTiledContraction(names, generic);
          if (failed(launch))
            launch = mapParallel(names, generic, blockSize, coarsen);
        } else
          launch = mapSingleThread(names, op);
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

  KernelNames names;
};
} // namespace
