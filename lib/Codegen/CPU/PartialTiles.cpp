//===- PartialTiles.cpp - full tiles apart from the last one ----*- C++ -*-===//
//
// A loop of run-time extent n tiled by a static t has tiles of
// min(t, n - iv) indices: every one but the last is full. Each such loop is
// split. The full tiles run a copy of the body in which the size is the
// constant t, whose shapes fold to static ones: the register tiles, vectors
// and kernels of a static model. The r = n mod t indices left run one at a
// time, in a copy in which the size is 1; in the register tile loop of a
// product, as a tile of each power of two of 4 or more that r holds, then
// one tile of exactly r mod 4, each a copy of the body with that constant
// size, run or skipped by r (r = 7 of 8: a tile of 4 and one of 3); in an
// innermost loop of vector columns of a computing op, as whole registers
// first. No tile has a size known only at run time, which
// also keeps bufferization's analysis of the slices as cheap as for static
// shapes (sizes of run-time value made it compare them through Presburger
// sets: 15 s for one encoder block).
//
// A static loop of extent n tiled by a t that does not divide it (a register
// tile of 6 rows over 128, 32 columns over 1000: TileStrategy.cpp) is split
// the same way, its last tile one iteration of the constant size n mod t.
//
//===----------------------------------------------------------------------===//
#include "Utils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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

/// A copy of `loop` (its tile size `min`) from `lower` to `upper` by
/// `size`, each tile of the constant size `size`, placed at the rewriter's
/// insertion point; its loop-carried values still start from `loop`'s.
scf::ForOp cloneForTiles(RewriterBase &rewriter, scf::ForOp loop,
                         affine::AffineMinOp min, Value lower, Value upper,
                         int64_t size) {
  Value step = arith::ConstantIndexOp::create(rewriter, loop.getLoc(), size);
  IRMapping map;
  auto copy = cast<scf::ForOp>(rewriter.clone(*loop, map));
  rewriter.modifyOpInPlace(copy, [&] {
    copy.setLowerBound(lower);
    copy.setUpperBound(upper);
    copy.setStep(step);
  });
  auto copyMin = cast<affine::AffineMinOp>(map.lookup(min.getOperation()));
  rewriter.setInsertionPoint(copyMin);
  rewriter.replaceOp(copyMin, step);
  return copy;
}

/// Chains `pieces`, copies of `loop` that run after it, through its
/// loop-carried values: the first starts from `loop`'s results, each next
/// one from the one before, and the last one's results replace `loop`'s.
void replaceLoopResults(RewriterBase &rewriter, scf::ForOp loop,
                        ArrayRef<scf::ForOp> pieces) {
  scf::ForOp last = pieces.back();
  for (auto [before, after] : llvm::zip(loop.getResults(), last.getResults()))
    rewriter.replaceAllUsesWith(before, after);
  ValueRange carried = loop.getResults();
  for (scf::ForOp piece : pieces) {
    rewriter.modifyOpInPlace(
        piece, [&] { piece.getInitArgsMutable().assign(carried); });
    carried = piece.getResults();
  }
}

/// Splits `loop` (from 0 to n by `full`, its tile size `min`): the full
/// tiles, from 0 to n - n mod full with the size the constant `full`, then
/// the rest: when n is a run-time value, at most one tile of each power of
/// two below `full` if `byPowers`, else one index at a time; one tile of the
/// constant size n mod full when n is static. Each body is the original's
/// with its tile size constant, so its shapes fold to static ones.
void peelPartialTile(RewriterBase &rewriter, scf::ForOp loop,
                     affine::AffineMinOp min, int64_t full, bool byPowers,
                     int64_t lanes) {
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
  if (!n && !byPowers && lanes) {
    // The indices left as whole registers of `lanes`, then one at a time:
    // a sequence of 16 in a 64-lane tile runs one register, not 16 scalar
    // steps (an encoder's softmax and its Q K^T columns at short lengths).
    Value step = arith::ConstantIndexOp::create(rewriter, loc, lanes);
    Value left =
        arith::SubIOp::create(rewriter, loc, loop.getUpperBound(), split);
    Value whole = arith::MulIOp::create(
        rewriter, loc, arith::DivUIOp::create(rewriter, loc, left, step), step);
    Value middle = arith::AddIOp::create(rewriter, loc, split, whole);
    scf::ForOp registers =
        cloneForTiles(rewriter, loop, min, split, middle, lanes);
    rewriter.setInsertionPointAfter(registers);
    scf::ForOp rest =
        cloneForTiles(rewriter, loop, min, middle, loop.getUpperBound(), 1);
    replaceLoopResults(rewriter, loop, {registers, rest});
  } else if (n || !byPowers) {
    scf::ForOp rest = cloneForTiles(rewriter, loop, min, split,
                                    loop.getUpperBound(), n ? *n % full : 1);
    replaceLoopResults(rewriter, loop, {rest});
  } else {
    // The r = n - split indices left: one tile of each power of two of 4 or
    // more that r holds, then one tile of exactly r mod 4 (a copy of the
    // body for each of 3, 2 and 1, the one of that size run once): r = 7 of
    // an 8-row tile runs a 4-row and a 3-row tile, r = 3 of a 4-row tile
    // one 3-row tile. One index at a time made a matmul of 5 rows read its
    // right-hand side five times, each time into a register tile of one row
    // (too few accumulators to hide the FMA latency); tiles of 2 and 1 for
    // r = 3 read it twice (an MLP at batch 3: 1.6x its static compile). A
    // copy for every size below 8 made an encoder compile 35% longer.
    Value left =
        arith::SubIOp::create(rewriter, loc, loop.getUpperBound(), split);
    Value lower = split;
    SmallVector<scf::ForOp> pieces;
    auto addPiece = [&](Value upper, int64_t size) {
      scf::ForOp piece = cloneForTiles(rewriter, loop, min, lower, upper, size);
      pieces.push_back(piece);
      rewriter.setInsertionPointAfter(piece);
    };
    auto constant = [&](int64_t v) {
      return arith::ConstantIndexOp::create(rewriter, loc, v);
    };
    for (int64_t size = llvm::bit_floor(uint64_t(full - 1)); size >= 4;
         size /= 2) {
      Value bit = arith::AndIOp::create(rewriter, loc, left, constant(size));
      Value upper = arith::AddIOp::create(rewriter, loc, lower, bit);
      addPiece(upper, size);
      lower = upper;
    }
    Value low = arith::AndIOp::create(rewriter, loc, left, constant(3));
    for (int64_t size = std::min<int64_t>(3, full - 1); size >= 1; --size) {
      Value exact = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq, low, constant(size));
      Value upper = arith::SelectOp::create(
          rewriter, loc, exact,
          arith::AddIOp::create(rewriter, loc, lower, constant(size)), lower);
      addPiece(upper, size);
    }
    replaceLoopResults(rewriter, loop, pieces);
  }
  rewriter.modifyOpInPlace(loop, [&] { loop.setUpperBound(split); });
  rewriter.setInsertionPoint(min);
  rewriter.replaceOp(min, arith::ConstantIndexOp::create(rewriter, loc, full));
}
} // namespace

namespace mlir::kiln {
void peelPartialTiles(RewriterBase &rewriter, func::FuncOp func,
                      int64_t lanes) {
  SmallVector<affine::AffineMinOp> mins;
  func.walk([&](affine::AffineMinOp min) { mins.push_back(min); });
  for (affine::AffineMinOp min : mins)
    hoistToOwningLoop(min);
  // Inner loops first (the walk's post-order): an outer loop's copy of its
  // body then holds them versioned already.
  SmallVector<std::tuple<scf::ForOp, affine::AffineMinOp, int64_t>> tiled;
  func.walk([&](scf::ForOp loop) {
    for (affine::AffineMinOp min : loop.getBody()->getOps<affine::AffineMinOp>()) {
      if (std::optional<int64_t> full = fullTileSize(min, loop)) {
        tiled.push_back({loop, min, *full});
        return;
      }
    }
  });
  // The rest of a run-time extent runs as several whole tiles only in the
  // register tile loops of products: the innermost tile loop of run-time
  // extent around a matmul-like contraction, tiles of at most 8 (rows; wider
  // tiles are vector columns). There one row at a time gives too few
  // accumulators to hide the FMA latency: an MLP at batch 2 or 3 ran 1.4-1.5x
  // slower. Elsewhere each piece only copies the body again: split that way,
  // every loop of a dynamic U-Net doubled its compile time and ran no
  // faster, and the 32-column tiles of an encoder's attention added 30% to
  // its compile.
  DenseSet<Operation *> runtime;
  for (auto &[loop, min, full] : tiled)
    if (!getConstantIntValue(loop.getUpperBound()))
      runtime.insert(loop);
  // The innermost tile loops of run-time extent: no such loop inside.
  auto innermost = [&](scf::ForOp loop) {
    return !loop.getBody()
                ->walk([&](scf::ForOp inner) {
                  return runtime.contains(inner) ? WalkResult::interrupt()
                                                 : WalkResult::advance();
                })
                .wasInterrupted();
  };
  auto registerTileOfProduct = [&](scf::ForOp loop) {
    bool product = false;
    loop.getBody()->walk([&](linalg::LinalgOp op) {
      product |= linalg::isaContractionOpInterface(op);
    });
    return product && innermost(loop);
  };
  // The rest of an innermost tile loop wider than a register (vector
  // columns) runs in whole registers, then one index at a time, where the
  // rest repeats for every row of an op of rank 2 or more that computes:
  // at sequence 16 a width-64 encoder's softmax and score columns ran 16
  // scalar steps each (1.5x its static compile). Fills, copies, transposes
  // and gathers keep the one copy of the rest, as do one-dimensional ops
  // (a Resize's index tables) whose rest runs once: those pieces made the
  // dynamic U-Net's compile 14% longer and ran it no faster.
  auto worthRegisters = [&](scf::ForOp loop) {
    return loop.getBody()
        ->walk([&](linalg::LinalgOp op) {
          bool gathers = false;
          op->walk([&](tensor::ExtractOp) { gathers = true; });
          bool moves =
              isa<linalg::FillOp, linalg::CopyOp, linalg::TransposeOp>(op);
          return !gathers && !moves && op.getNumLoops() >= 2
                     ? WalkResult::interrupt()
                     : WalkResult::advance();
        })
        .wasInterrupted();
  };
  SmallVector<bool> byPowers;
  SmallVector<int64_t> registers;
  for (auto &[loop, min, full] : tiled) {
    bool isRuntime = runtime.contains(loop);
    byPowers.push_back(isRuntime && full <= 8 && registerTileOfProduct(loop));
    bool wide = isRuntime && !byPowers.back() && lanes > 1 && full > lanes &&
                full % lanes == 0 && innermost(loop) && worthRegisters(loop);
    registers.push_back(wide ? lanes : 0);
  }
  for (auto [entry, powers, regs] : llvm::zip(tiled, byPowers, registers)) {
    auto &[loop, min, full] = entry;
    peelPartialTile(rewriter, loop, min, full, powers, regs);
  }
}
} // namespace mlir::kiln
