//===- SingleThreadKernels.cpp - one-thread kernels -------------*- C++ -*-===//
//
// The kernels of ops that do not parallelize: side effects outside linalg
// (scalar loops, run-time guards), and values that later ops read.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::kiln::gpu_mapping {
FailureOr<gpu::LaunchOp> buildSequentialGroup(KernelNames &names,
                                              Operation *first,
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
    bool usesGroup = llvm::any_of(op->getOperands(),
                                  [&](Value v) { return tainted.contains(v); });
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
  gpu::LaunchOp launch = createLaunch(b, first->getLoc(), names, 1, 1);
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

gpu::LaunchOp buildSingleThreadKernel(KernelNames &names, Operation *op) {
  OpBuilder b(op);
  gpu::LaunchOp launch = createLaunch(b, op->getLoc(), names, 1, 1);
  b.setInsertionPointToStart(&launch.getBody().front());
  b.clone(*op);
  gpu::TerminatorOp::create(b, op->getLoc());
  return launch;
}
} // namespace mlir::kiln::gpu_mapping
