//===- DropAmxZeroFills.cpp - AMX products start from zero tiles -*- C++ -*-===//
#include "Utils.h"
#include "kiln/Codegen/CPU/Passes.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_DROPAMXZEROFILLSPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
struct DropAmxZeroFillsPass
    : mlir::kiln::impl::DropAmxZeroFillsPassBase<DropAmxZeroFillsPass> {
  void runOnOperation() override {
    // The AMX kernels start their accumulators from zero tiles: the zero
    // fill of a marked product would only be a memset nobody reads.
    getOperation().walk([&](linalg::GenericOp op) {
      if (!mlir::kiln::isAmxProduct(op))
        return;
      if (auto fill =
              op.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>())
        op.getDpsInitOperand(0)->set(fill.getOutputs()[0]);
    });
  }
};
} // namespace
