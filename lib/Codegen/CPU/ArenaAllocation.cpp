//===- ArenaAllocation.cpp - every buffer at an offset of one arena -*- C++ -*-===//
//
// The generated code never allocates: after bufferization each memref.alloc of
// the entry function is rewritten to a memref.view of a trailing arena
// argument at a static offset. This version lays buffers out one after
// another (no reuse); the planner with liveness-based reuse replaces
// `assignOffsets` without changing the rewrite.
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/CPU/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_ARENAALLOCATIONPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
int64_t bufferBytes(MemRefType type) {
  int64_t eltBytes =
      std::max<int64_t>(1, (type.getElementTypeBitWidth() + 7) / 8);
  return type.getNumElements() * eltBytes;
}

struct ArenaAllocationPass
    : mlir::kiln::impl::ArenaAllocationPassBase<ArenaAllocationPass> {
  using ArenaAllocationPassBase::ArenaAllocationPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    int64_t arenaBytes = 0;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isDeclaration())
        continue;
      if (failed(runOnFunction(func, arenaBytes)))
        return signalPassFailure();
    }
    module->setAttr(mlir::kiln::kArenaBytesAttr,
                    IntegerAttr::get(IntegerType::get(ctx, 64), arenaBytes));
  }

  LogicalResult runOnFunction(func::FuncOp func, int64_t &arenaBytes) {
    MLIRContext *ctx = &getContext();
    IRRewriter rewriter(ctx);

    // memref.copy would call a runtime library; a linalg.copy becomes loops.
    SmallVector<memref::CopyOp> copies;
    func.walk([&](memref::CopyOp op) { copies.push_back(op); });
    for (memref::CopyOp op : copies) {
      rewriter.setInsertionPoint(op);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(op, op.getSource(),
                                                  op.getTarget());
    }
    func.walk([&](memref::DeallocOp op) { rewriter.eraseOp(op); });

    SmallVector<memref::AllocOp> allocs;
    WalkResult walk = func.walk([&](memref::AllocOp op) {
      MemRefType type = op.getType();
      if (!type.hasStaticShape() || !type.getLayout().isIdentity()) {
        op.emitError() << "buffer " << type
                       << " has no static shape and identity layout; it "
                          "cannot live in the arena";
        return WalkResult::interrupt();
      }
      if (op->getParentOp() != func.getOperation()) {
        op.emitError() << "buffer " << type
                       << " is allocated inside a loop; it cannot live in the "
                          "arena";
        return WalkResult::interrupt();
      }
      allocs.push_back(op);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();

    // Lay the buffers out back to back, each aligned.
    SmallVector<int64_t> offsets;
    int64_t size = 0;
    for (memref::AllocOp op : allocs) {
      size = llvm::alignTo(size, alignment);
      offsets.push_back(size);
      size += bufferBytes(op.getType());
    }
    size = llvm::alignTo(size, alignment);
    arenaBytes = std::max(arenaBytes, size);
    func->setAttr(mlir::kiln::kArenaBytesAttr,
                  IntegerAttr::get(IntegerType::get(ctx, 64), size));

    auto arenaType = MemRefType::get({size}, IntegerType::get(ctx, 8));
    if (failed(func.insertArgument(func.getNumArguments(), arenaType,
                                   DictionaryAttr::get(ctx, {rewriter.getNamedAttr(
                                       "kiln.arena", rewriter.getUnitAttr())}),
                                   func.getLoc())))
      return failure();
    Value arena = func.getArgument(func.getNumArguments() - 1);
    for (auto [op, offset] : llvm::zip(allocs, offsets)) {
      rewriter.setInsertionPoint(op);
      Value off = arith::ConstantIndexOp::create(rewriter, op.getLoc(), offset);
      rewriter.replaceOpWithNewOp<memref::ViewOp>(op, op.getType(), arena, off,
                                                  ValueRange{});
    }
    return success();
  }
};
} // namespace
