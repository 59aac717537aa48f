//===- EliminateEmptyTensors.cpp - empty-tensor elimination, bounded -*- C++
//-*-===//
//
// Upstream empty-tensor elimination, skipped where its analysis would take
// minutes: with symbolic dimensions, one-shot analysis compares the subsets
// of slices through ValueBounds, which builds a Presburger system of every
// size a slice depends on. Each floor division in a size adds a local
// variable, and eliminating them grows exponentially: Swin's windows
// (every stage padded to a multiple of 7 after halvings) put 9 in one
// size, and the pass took 200 s of a 230 s compile. Without it the copies
// of the few slices it would have removed stay; static models, and dynamic
// ones with simple sizes, take the upstream pass unchanged.
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/Common/Passes.h"
#include "kiln/Codegen/Common/Remarks.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_ELIMINATEEMPTYTENSORSPASS
#include "kiln/Codegen/Common/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
constexpr llvm::StringLiteral kPass = "kiln-eliminate-empty-tensors";

/// The floor divisions, ceiling divisions and modulos in `e`.
int64_t countDivisions(AffineExpr e) {
  int64_t n = 0;
  e.walk([&](AffineExpr sub) {
    n += sub.getKind() == AffineExprKind::FloorDiv ||
         sub.getKind() == AffineExprKind::CeilDiv ||
         sub.getKind() == AffineExprKind::Mod;
  });
  return n;
}

struct EliminateEmptyTensorsPass
    : kiln::impl::EliminateEmptyTensorsPassBase<EliminateEmptyTensorsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool symbolic = false;
    module.walk([&](func::FuncOp f) {
      for (Type t : f.getArgumentTypes())
        if (auto st = dyn_cast<ShapedType>(t); st && !st.hasStaticShape())
          symbolic = true;
    });
    int64_t most = 0;
    Operation *where = nullptr;
    if (symbolic) {
      module.walk([&](Operation *op) {
        AffineMap map;
        if (auto apply = dyn_cast<affine::AffineApplyOp>(op))
          map = apply.getAffineMap();
        else if (auto min = dyn_cast<affine::AffineMinOp>(op))
          map = min.getAffineMap();
        else if (auto max = dyn_cast<affine::AffineMaxOp>(op))
          map = max.getAffineMap();
        else
          return;
        int64_t n = 0;
        for (AffineExpr e : map.getResults())
          n += countDivisions(e);
        if (n > most) {
          most = n;
          where = op;
        }
      });
    }
    if (most > maxDivisions) {
      kiln::remarkMissed(where, kPass, "eliminate-empty-tensors",
                         "a run-time size has " + llvm::Twine(most) +
                             " floor divisions (more than " +
                             llvm::Twine(maxDivisions) +
                             "), which would make the subset analysis "
                             "exponential; slices born empty are copied");
      return;
    }
    OpPassManager pm(ModuleOp::getOperationName());
    pm.addPass(bufferization::createEmptyTensorEliminationPass());
    if (failed(runPipeline(pm, module)))
      signalPassFailure();
  }
};
} // namespace
