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
    MappingOptions options{blockSize, coarsen, tile, tensorCores};
    DenseSet<Operation *> done;
    for (Operation *op : work) {
      if (done.contains(op))
        continue;
      FailureOr<KernelPlan> plan = chooseKernel(op, options);
      if (failed(plan))
        return signalPassFailure();
      FailureOr<gpu::LaunchOp> launch = buildKernel(op, *plan, done);
      if (failed(launch) || failed(sinkPureOperands(*launch)))
        return signalPassFailure();
    }
    // Host-side views and constants nobody uses any more.
    for (Operation &op :
         llvm::make_early_inc_range(llvm::reverse(func.getBody().front())))
      if (isHostPure(&op) && op.use_empty())
        op.erase();
  }

  /// The kernel `plan` describes, in place of `op` (and of the ops of its
  /// group, which it adds to `done`).
  FailureOr<gpu::LaunchOp> buildKernel(Operation *op, const KernelPlan &plan,
                                       DenseSet<Operation *> &done) {
    if (std::holds_alternative<SequentialGroupPlan>(plan))
      return buildSequentialGroup(names, op, done);
    auto generic = dyn_cast<linalg::GenericOp>(op);
    gpu::LaunchOp launch;
    if (auto *p = std::get_if<ParallelPlan>(&plan))
      launch = buildParallelKernel(names, generic, *p);
    else if (auto *p = std::get_if<TiledPlan>(&plan))
      launch = buildTiledContraction(names, generic, *p);
    else if (auto *p = std::get_if<TensorCorePlan>(&plan))
      launch = buildTensorCoreContraction(names, generic, *p);
    else
      launch = buildSingleThreadKernel(names, op);
    op->erase();
    return launch;
  }

  KernelNames names;
};
} // namespace
