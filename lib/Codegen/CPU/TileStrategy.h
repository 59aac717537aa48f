//===- TileStrategy.h - how each op is tiled --------------------*- C++ -*-===//
//
// The strategy of --kiln-cpu-tile-and-vectorize, apart from the mechanics
// that apply it: the register tile of each linalg op, the order of its tile
// loops, and which loop the threads share. Every choice is a function of the
// op and the vector width alone, so that it can be read, tested and tuned
// without the rewrites around it. The passes that rewrite ops for the
// kernels (packed weights, split channels) ask it too, so that they and the
// tiling agree.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CODEGEN_CPU_TILESTRATEGY_H
#define KILN_LIB_CODEGEN_CPU_TILESTRATEGY_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <cstdint>

namespace mlir::kiln {

/// Vectorizing a tile bigger than this would build huge vectors; such an op
/// (whose tiling failed) is left to become scalar loops instead.
inline constexpr int64_t kMaxVectorizedTile = 1 << 16;

/// Columns per panel of a packed right-hand side: 4 registers when they
/// divide N (a matrix-vector product then has 4 independent FMA chains for
/// its single row of accumulators; a 4 x 64 tile holds 16), else the usual
/// register tile. It depends on B alone, so that the batch variants of one
/// model pack each weight the same way and share one copy of it. 0: no
/// packing (a single panel).
int64_t panelWidth(int64_t n, int64_t vw);

/// Bools are one byte each in memory, but vector<Nxi1> loads and stores are
/// bit-packed; ops that read or write i1 tensors stay scalar loops.
bool touchesBools(linalg::LinalgOp op);

/// How chooseTileSizes tiles a loop of run-time extent (a symbolic
/// dimension, docs/shapes.md).
enum class RuntimeExtentTiling {
  /// One index at a time, so that the tile inside has a static shape.
  Unit,
  /// As a static loop of many indices would be. Every tile but the last is
  /// full; peelPartialTiles gives the full ones a body with static shapes
  /// and runs the indices left one at a time.
  Full,
  /// Left whole: the loop is a tile of an enclosing Full loop already.
  Whole,
};

/// Tile sizes for one op (0 = leave the loop whole), kept whole for the
/// divisors of its indexing maps (keepDivisorsWhole).
SmallVector<int64_t>
chooseTileSizes(linalg::LinalgOp op, int64_t vw,
                RuntimeExtentTiling runtime = RuntimeExtentTiling::Unit);

/// Tiling starts each tile at a multiple of its size and gives the tile the
/// op's own indexing maps, which is right for a map that divides a loop
/// (nearest upsampling reads row `d floordiv 2`) only where the tile starts
/// at a multiple of the divisor: a tile of 5 rows at row 5 reads input rows
/// 2, 2, 3, ... as 2, 2, 2, 3, ... Each tile of more than one index becomes
/// a multiple of every divisor of its loop (a floordiv, ceildiv or mod by a
/// constant), or 1 when it is smaller or the divisor is not a constant.
void keepDivisorsWhole(linalg::LinalgOp op, MutableArrayRef<int64_t> tiles);

/// Tiling loop order for `op`: the channels first for channelsOutermost
/// products (weights over `l2Bytes`, the L2 cache of one core), the other
/// loops in their order after them; else the op's own order (empty).
SmallVector<int64_t> tileInterchange(linalg::LinalgOp op,
                                     ArrayRef<int64_t> tiles, int64_t l2Bytes);

/// The loop of `op` to split across threads: the channels of a
/// channelsOutermost product (see tileInterchange), else the outermost
/// parallel loop
/// that its tiles cut into at least two pieces, else the loop of run-time
/// extent tiled by 1 with the largest bound; -1 when the op is too small to
/// be worth a fork and join (fewer than `minWork` iterations of its loop
/// nest, a run-time extent counted at its largest), has no such loop, or
/// would need a task buffer over kMaxLoopScratchBytes for a result no one
/// reads.
int64_t parallelLoop(linalg::LinalgOp op, ArrayRef<int64_t> tiles,
                     int64_t minWork, int64_t l2Bytes);

/// Whether `op`, whose loops include a run-time extent, does at least
/// `minWork` loop iterations at the run-time sizes: the test parallelLoop
/// made at the symbols' maxima, computed before `op`. Null when every
/// extent is static (the fork was decided at compile time) or one cannot
/// be found.
Value forkPaysAtRunTime(OpBuilder &b, linalg::LinalgOp op, int64_t minWork);

/// Marks the scf.forall that tiling just made around `inside` as shared
/// among threads only where `pays` (forkPaysAtRunTime) is true: a
/// kiln.parallel_if with id `id` (then incremented) before it, which
/// --kiln-outline-parallel-loops reads. Nothing when `pays` is null or was
/// not made before that loop in its block (no loop was made for threads).
void markRunTimeFork(OpBuilder &b, Operation *inside, Value pays, int64_t &id);

/// The largest extent loop `loop` of `op` can have at run time (a symbolic
/// dimension's maximum, docs/shapes.md), from the operands it indexes.
std::optional<int64_t> largestLoopExtent(linalg::LinalgOp op, int64_t loop);

/// Elements of `op`'s iteration space (its tile, once tiled); INT64_MAX
/// when it is not static.
int64_t tileVolume(linalg::LinalgOp op);

} // namespace mlir::kiln

#endif
