//===- AlignWorkgroup.cpp - alignment of shared-memory buffers --*- C++ -*-===//
//
// After gpu-kernel-outlining: every workgroup attribution of every gpu.func
// gets `llvm.align`, which convert-gpu-to-nvvm gives the .shared array it
// makes. Without it the array is aligned to its element only (2 bytes for
// fp16), but a wmma fragment load needs 32 bytes and a vector access 16.
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/GPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_ALIGNWORKGROUPPASS
#include "kiln/Codegen/GPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
struct AlignWorkgroupPass
    : mlir::kiln::impl::AlignWorkgroupPassBase<AlignWorkgroupPass> {
  using AlignWorkgroupPassBase::AlignWorkgroupPassBase;

  void runOnOperation() override {
    Builder b(&getContext());
    getOperation().walk([&](gpu::GPUFuncOp func) {
      for (unsigned i = 0; i < func.getNumWorkgroupAttributions(); ++i) {
        auto existing = dyn_cast_or_null<IntegerAttr>(
            func.getWorkgroupAttributionAttr(
                i, LLVM::LLVMDialect::getAlignAttrName()));
        if (existing && existing.getInt() >= alignment)
          continue;
        func.setWorkgroupAttributionAttr(
            i, LLVM::LLVMDialect::getAlignAttrName(),
            b.getI64IntegerAttr(alignment));
      }
    });
  }
};
} // namespace
