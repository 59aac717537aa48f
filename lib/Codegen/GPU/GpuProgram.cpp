//===- GpuProgram.cpp - the host side of a GPU model as a table -*- C++ -*-===//
//
// After kiln-gpu-map-to-launch, kernel outlining and gpu-module-to-binary, a
// model function holds nothing but constants and gpu.launch_func ops whose
// arguments are the function's own arguments. That is a static program: the
// runtime replays it from a table, so no host code is generated and the
// .so needs no GPU library at link time.
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/GPU/Passes.h"
#include "kiln/Target/Target.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;

namespace {
FailureOr<uint32_t> constantDim(gpu::LaunchFuncOp op, Value v,
                                const char *what) {
  std::optional<int64_t> c = getConstantIntValue(v);
  if (!c || *c < 0 || *c > UINT32_MAX) {
    op.emitError() << "launch of '" << op.getKernelName().getValue()
                   << "' has a non-constant " << what;
    return failure();
  }
  return (uint32_t)*c;
}
} // namespace

LogicalResult
mlir::kiln::extractGpuProgram(ModuleOp module,
                              const std::vector<std::string> &entryNames,
                              GpuProgram &out) {
  // The PTX: one binary holding one object.
  SmallVector<gpu::BinaryOp> binaries(module.getOps<gpu::BinaryOp>());
  if (binaries.size() > 1)
    return module.emitError() << "expected one gpu.binary, found "
                              << binaries.size();
  if (!binaries.empty()) {
    auto objects = binaries.front().getObjects();
    if (objects.size() != 1)
      return binaries.front().emitError() << "expected one object";
    auto object = cast<gpu::ObjectAttr>(objects[0]);
    if (object.getFormat() != gpu::CompilationTarget::Assembly)
      return binaries.front().emitError() << "expected PTX (format=isa)";
    out.ptx = object.getObject().getValue().str();
    // LLVM may leave a terminating NUL in the text; ptxas rejects it.
    while (!out.ptx.empty() && out.ptx.back() == '\0')
      out.ptx.pop_back();
  }

  llvm::StringMap<uint32_t> kernelIndex;
  for (const std::string &name : entryNames) {
    auto func = module.lookupSymbol<func::FuncOp>(name);
    if (!func)
      return module.emitError() << "no entry function '" << name << "'";
    std::vector<GpuProgram::Launch> launches;
    for (Operation &op : func.getBody().front()) {
      if (isa<arith::ConstantOp, func::ReturnOp>(op))
        continue;
      auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
      if (!launch)
        return op.emitError() << "'" << op.getName()
                              << "' is left on the host side of a GPU model";
      GpuProgram::Launch l;
      std::string kernel = launch.getKernelName().getValue().str();
      auto [it, inserted] = kernelIndex.try_emplace(kernel, out.kernels.size());
      if (inserted)
        out.kernels.push_back(kernel);
      l.kernel = it->second;
      auto grid = launch.getGridSizeOperandValues();
      auto block = launch.getBlockSizeOperandValues();
      Value dims[6] = {grid.x, grid.y, grid.z, block.x, block.y, block.z};
      for (int i = 0; i < 6; ++i) {
        FailureOr<uint32_t> d =
            constantDim(launch, dims[i], i < 3 ? "grid size" : "block size");
        if (failed(d))
          return failure();
        (i < 3 ? l.grid[i] : l.block[i - 3]) = *d;
      }
      if (Value smem = launch.getDynamicSharedMemorySize()) {
        FailureOr<uint32_t> d = constantDim(launch, smem, "shared memory size");
        if (failed(d))
          return failure();
        l.sharedBytes = *d;
      }
      for (Value arg : launch.getKernelOperands()) {
        auto ba = dyn_cast<BlockArgument>(arg);
        if (!ba || ba.getOwner()->getParentOp() != func.getOperation())
          return launch.emitError()
                 << "kernel '" << kernel
                 << "' takes a value that is not an argument of the model "
                    "function";
        l.args.push_back(ba.getArgNumber());
      }
      launches.push_back(std::move(l));
    }
    out.variants.push_back(std::move(launches));
  }

  if (auto weights =
          module.lookupSymbol<memref::GlobalOp>(mlir::kiln::kWeightsGlobal)) {
    auto attr = dyn_cast_or_null<DenseResourceElementsAttr>(
        weights.getInitialValueAttr());
    AsmResourceBlob *blob = attr ? attr.getRawHandle().getBlob() : nullptr;
    if (!blob)
      return weights.emitError() << "the weights blob has no data";
    ArrayRef<char> data = blob->getData();
    out.weights.assign(data.data(), data.size());
  }
  return success();
}
