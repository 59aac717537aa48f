//===- DropInPlaceMaterialize.cpp - loop values in place --------*- C++ -*-===//
#include "kiln/Codegen/Common/Passes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_DROPINPLACEMATERIALIZEPASS
#include "kiln/Codegen/Common/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// Whether `v` is `dest` updated in place: reached from `dest` through the
/// destinations of the ops that compute it, and `dest` not used after the
/// first of them writes it except by `copy`, the copy into it (a read there
/// would see the update, so bufferization would copy and the loop would no
/// longer yield its argument's buffer).
bool updatesInPlace(Value v, Value dest, Operation *copy) {
  Operation *first = nullptr;
  for (int depth = 0; depth < 256; ++depth) {
    if (v == dest) {
      if (!first)
        return true;
      Block *block = first->getBlock();
      for (OpOperand &use : dest.getUses()) {
        Operation *user = block->findAncestorOpInBlock(*use.getOwner());
        if (!user)
          return false;
        if (use.getOwner() == copy)
          continue;
        if (user == first)
          continue; // read by the first writer itself, as it updates it
        if (!user->isBeforeInBlock(first))
          return false;
        if (auto dps = dyn_cast<DestinationStyleOpInterface>(user);
            dps && dps.isDpsInit(&use))
          return false;
      }
      return true;
    }
    auto r = dyn_cast<OpResult>(v);
    if (!r)
      return false;
    Operation *op = r.getOwner();
    first = op;
    unsigned i = r.getResultNumber();
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
      v = dps.getDpsInitOperand(i)->get();
    else if (auto write = dyn_cast<vector::TransferWriteOp>(op))
      v = write.getBase();
    else if (auto loop = dyn_cast<scf::ForOp>(op))
      v = loop.getInitArgs()[i];
    else
      return false;
  }
  return false;
}

/// The block argument of a graph loop (kGraphLoopAttr) that `v` is, if any.
bool isGraphLoopArgument(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  Operation *owner = arg ? arg.getOwner()->getParentOp() : nullptr;
  return owner && isa<scf::ForOp, scf::WhileOp>(owner) &&
         owner->hasAttr(mlir::kiln::kGraphLoopAttr);
}

struct DropInPlaceMaterializePass
    : mlir::kiln::impl::DropInPlaceMaterializePassBase<
          DropInPlaceMaterializePass> {
  void runOnOperation() override {
    getOperation().walk([&](bufferization::MaterializeInDestinationOp op) {
      Value dest = op.getDest();
      if (!op.getResult() || !isGraphLoopArgument(dest) ||
          !updatesInPlace(op.getSource(), dest, op))
        return;
      op.getResult().replaceAllUsesWith(op.getSource());
      op.erase();
    });
  }
};
} // namespace
