//===- PartialTiles.cpp - full tiles apart from the last one ----*- C++ -*-===//
//
// A loop of run-time extent n tiled by a static t has tiles of
// min(t, n - iv) indices: every one but the last is full. Each such loop is
// split. The full tiles run a copy of the body in which the size is the
// constant t, whose shapes fold to static ones: the register tiles, vectors
// and kernels of a static model. The n mod t indices left run in at most one
// tile each of t / 2, t / 4, ... down to 2, then one at a time, each a copy
// in which the size is that constant. No tile has a size known
// only at run time, which also keeps bufferization's analysis of the slices
// as cheap as for static shapes (sizes of run-time value made it compare
// them through Presburger sets: 15 s for one encoder block).
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
/// The tile size of `loop`, a tile loop of run-time extent from 0 to n by a
/// constant step t, when `min` computes it as min(t, n - iv).
std::optional<int64_t> fullTileSize(affine::AffineMinOp min, scf::ForOp loop) {
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
  AffineMap map = min.getMap();
  if (!step || *step < 2 || !lb || *lb != 0 ||
      getConstantIntValue(loop.getUpperBound()) || loop.getNumResults() == 0 ||
      map.getNumResults() != 2 || map.getNumDims() != 1 ||
      map.getNumSymbols() != 1 ||
      min->getOperand(0) != loop.getInductionVar() ||
      min->getOperand(1) != loop.getUpperBound())
    return std::nullopt;
  MLIRContext *ctx = min.getContext();
  AffineExpr rest = getAffineSymbolExpr(0, ctx) - getAffineDimExpr(0, ctx);
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

/// Splits `loop` (from 0 to n by `full`, its tile size `min`): the full
/// tiles, from 0 to n - n mod full with the size the constant `full`, then
/// what is left in tiles of full / 2, full / 4, ... (at most one of each)
/// down to 2, then one index at a time. Each body is the original's with its
/// tile size constant, so its shapes fold to static ones: a batch of 4 under
/// a matmul tiled by 8 rows runs one 4-row register tile, not 4 single rows.
void peelPartialTile(RewriterBase &rewriter, scf::ForOp loop,
                     affine::AffineMinOp min, int64_t full) {
  Location loc = loop.getLoc();
  Value n = loop.getUpperBound();
  SmallVector<int64_t> sizes;
  for (int64_t t = full / 2; t >= 2; t /= 2)
    sizes.push_back(t);
  sizes.push_back(1);
  // Where each loop ends: from + ((n - from) / t) * t after the one before,
  // in arith rather than affine: value-bounds analysis (bufferization's and
  // hoisting's slice comparisons) then takes them as opaque bounds of the
  // loops. As a floordiv it brought Presburger local variables into every
  // comparison of slices inside them (an encoder block spent 4 s there).
  rewriter.setInsertionPoint(loop);
  auto splitAt = [&](Value from, int64_t t) -> Value {
    Value step = arith::ConstantIndexOp::create(rewriter, loc, t);
    Value left = from ? arith::SubIOp::create(rewriter, loc, n, from) : n;
    Value tiles = arith::DivUIOp::create(rewriter, loc, left, step);
    Value len = arith::MulIOp::create(rewriter, loc, tiles, step);
    return from ? arith::AddIOp::create(rewriter, loc, from, len) : len;
  };
  SmallVector<Value> bounds{splitAt(Value(), full)}, steps;
  for (int64_t t : ArrayRef(sizes).drop_back())
    bounds.push_back(splitAt(bounds.back(), t));
  bounds.push_back(n);
  for (int64_t t : sizes)
    steps.push_back(arith::ConstantIndexOp::create(rewriter, loc, t));
  // The copies for the smaller tiles, made from the loop as it is.
  rewriter.setInsertionPointAfter(loop);
  SmallVector<scf::ForOp> copies;
  SmallVector<affine::AffineMinOp> copyMins;
  for (size_t i = 0; i < sizes.size(); ++i) {
    IRMapping map;
    copies.push_back(cast<scf::ForOp>(rewriter.clone(*loop, map)));
    copyMins.push_back(
        cast<affine::AffineMinOp>(map.lookup(min.getOperation())));
  }
  scf::ForOp last = copies.back();
  for (auto [before, after] : llvm::zip(loop.getResults(), last.getResults()))
    rewriter.replaceUsesWithIf(before, after, [&](OpOperand &use) {
      return llvm::none_of(
          copies, [&](scf::ForOp c) { return c->isAncestor(use.getOwner()); });
    });
  scf::ForOp prev = loop;
  for (auto [i, copy] : llvm::enumerate(copies)) {
    rewriter.modifyOpInPlace(copy, [&] {
      copy.setLowerBound(bounds[i]);
      copy.setUpperBound(bounds[i + 1]);
      copy.setStep(steps[i]);
      copy.getInitArgsMutable().assign(prev.getResults());
    });
    rewriter.replaceOp(copyMins[i], steps[i]);
    prev = copy;
  }
  rewriter.modifyOpInPlace(loop, [&] { loop.setUpperBound(bounds[0]); });
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
