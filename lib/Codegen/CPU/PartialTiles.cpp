//===- PartialTiles.cpp - full tiles apart from the last one ----*- C++ -*-===//
//
// A loop of run-time extent n tiled by a static t has tiles of
// min(t, n - iv) indices: every one but the last is full. Each such loop is
// split in two. The full tiles run a copy of the body in which the size is
// the constant t, whose shapes fold to static ones: the register tiles,
// vectors and kernels of a static model. The n mod t indices left run one
// at a time, in a copy in which the size is 1. No tile has a size known
// only at run time, which also keeps bufferization's analysis of the slices
// as cheap as for static shapes (sizes of run-time value made it compare
// them through Presburger sets: 15 s for one encoder block).
//
// A static loop of extent n tiled by a t that does not divide it (a register
// tile of 6 rows over 128, TileStrategy.cpp) is split the same way, its
// last tile one iteration of the constant size n mod t.
//
//===----------------------------------------------------------------------===//
#include "Utils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace {
/// The tile size of `loop`, a tile loop from 0 to n by a constant step t,
/// when `min` computes it as min(t, n - iv): n of run-time value, or a
/// constant t does not divide.
std::optional<int64_t> fullTileSize(affine::AffineMinOp min, scf::ForOp loop) {
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
  AffineMap map = min.getMap();
  if (!step || *step < 2 || !lb || *lb != 0 || loop.getNumResults() == 0 ||
      map.getNumResults() != 2 || map.getNumDims() != 1 ||
      min->getOperand(0) != loop.getInductionVar())
    return std::nullopt;
  MLIRContext *ctx = min.getContext();
  AffineExpr iv = getAffineDimExpr(0, ctx), rest;
  if (ub) {
    // Tiling folds a static n into the map: min(n - iv, t).
    if (*ub % *step == 0 || map.getNumSymbols() != 0)
      return std::nullopt;
    rest = getAffineConstantExpr(*ub, ctx) - iv;
  } else {
    if (map.getNumSymbols() != 1 || min->getOperand(1) != loop.getUpperBound())
      return std::nullopt;
    rest = getAffineSymbolExpr(0, ctx) - iv;
  }
  AffineExpr tile = getAffineConstantExpr(*step, ctx);
  if ((map.getResult(0) == rest && map.getResult(1) == tile) ||
      (map.getResult(0) == tile && map.getResult(1) == rest))
    return step;
  return std::nullopt;
}

/// Tiling computes every tile size in the innermost tile loop; moves `min`
/// out to the loop whose induction variable it reads.
void hoistToOwningLoop(affine::AffineMinOp min) {
  while (auto loop = dyn_cast<scf::ForOp>(min->getParentOp())) {
    if (llvm::any_of(min->getOperands(), [&](Value v) {
          return loop.getRegion().isAncestor(v.getParentRegion());
        }))
      return;
    min->moveBefore(loop);
  }
}

/// Splits `loop` (from 0 to n by `full`, its tile size `min`) in two: the
/// full tiles, from 0 to n - n mod full with the size the constant `full`,
/// then the rest: one index at a time, with the size 1, when n is a run-time
/// value; one tile of the constant size n mod full when n is static. Each
/// body is the original's with its tile size constant, so its shapes fold
/// to static ones.
void peelPartialTile(RewriterBase &rewriter, scf::ForOp loop,
                     affine::AffineMinOp min, int64_t full) {
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  std::optional<int64_t> n = getConstantIntValue(loop.getUpperBound());
  Value split;
  if (n) {
    split = arith::ConstantIndexOp::create(rewriter, loc, *n - *n % full);
  } else {
    // n - n mod full, in arith rather than affine: value-bounds analysis
    // (bufferization's and hoisting's slice comparisons) then takes it as an
    // opaque bound of the loops. As a floordiv it brought Presburger local
    // variables into every comparison of slices inside them (an encoder
    // block spent 4 s there).
    Value step = arith::ConstantIndexOp::create(rewriter, loc, full);
    Value tiles =
        arith::DivUIOp::create(rewriter, loc, loop.getUpperBound(), step);
    split = arith::MulIOp::create(rewriter, loc, tiles, step);
  }
  rewriter.setInsertionPointAfter(loop);
  IRMapping map;
  auto rest = cast<scf::ForOp>(rewriter.clone(*loop, map));
  // The size of the tiles left, and their step.
  Value restSize =
      arith::ConstantIndexOp::create(rewriter, loc, n ? *n % full : 1);
  for (auto [before, after] : llvm::zip(loop.getResults(), rest.getResults()))
    rewriter.replaceAllUsesExcept(before, after, rest);
  rewriter.modifyOpInPlace(rest, [&] {
    rest.setLowerBound(split);
    rest.setStep(restSize);
    rest.getInitArgsMutable().assign(loop.getResults());
  });
  rewriter.modifyOpInPlace(loop, [&] { loop.setUpperBound(split); });
  auto restMin = cast<affine::AffineMinOp>(map.lookup(min.getOperation()));
  rewriter.setInsertionPoint(restMin);
  rewriter.replaceOp(restMin, restSize);
  rewriter.setInsertionPoint(min);
  rewriter.replaceOp(min, arith::ConstantIndexOp::create(rewriter, loc, full));
}
} // namespace

namespace mlir::kiln {
void peelPartialTiles(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<affine::AffineMinOp> mins;
  func.walk([&](affine::AffineMinOp min) { mins.push_back(min); });
  for (affine::AffineMinOp min : mins)
    hoistToOwningLoop(min);
  // Inner loops first: an outer loop's copy of its body then holds them
  // versioned already.
  SmallVector<scf::ForOp> loops;
  func.walk([&](scf::ForOp loop) { loops.push_back(loop); });
  for (scf::ForOp loop : loops) {
    for (affine::AffineMinOp min : loop.getBody()->getOps<affine::AffineMinOp>()) {
      if (std::optional<int64_t> full = fullTileSize(min, loop)) {
        peelPartialTile(rewriter, loop, min, *full);
        break;
      }
    }
  }
}
} // namespace mlir::kiln
