//===- Utils.h - helpers shared by the CPU code generation passes -*- C++ -*-===//
#ifndef KILN_LIB_CODEGEN_CPU_UTILS_H
#define KILN_LIB_CODEGEN_CPU_UTILS_H

#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::kiln {
/// Whether `op` is a product that --kiln-cpu-amx-matmul replaces after
/// bufferization (tiling and vectorization leave it whole).
inline bool isAmxProduct(Operation *op) {
  return op->hasAttr(kBf16MatmulAttr) || op->hasAttr(kAmxInt8MatmulAttr);
}
/// The fill that initializes `op`'s one init, when it is the fill's only use
/// and `op` reduces (so the fill can be fused into each of its tiles).
inline linalg::FillOp fusableFill(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return {};
  auto fill = op.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
  return fill && fill->hasOneUse() ? fill : linalg::FillOp();
}

/// Splits each tile loop of run-time extent (a symbolic dimension, tiled by
/// a static step t) into its full tiles, whose size is the constant t, and
/// the indices left, one at a time (in a product's register tile loop, one
/// tile of each power of two below t that they hold); and each static loop a
/// t does not divide
/// into its full tiles and one last tile of the size left (PartialTiles.cpp).
/// An innermost such loop whose tile is wider than `lanes` (vector columns)
/// runs the indices left as whole registers of `lanes` before one at a time.
void peelPartialTiles(RewriterBase &rewriter, func::FuncOp func, int64_t lanes);

/// MLIR's hoistLoopInvariantSubsets on `loop`, unless it holds a tile loop
/// of run-time extent or none of its iter_args' slices can be invariant
/// (both only cost compile time; HoistInvariantSubsets.cpp).
void hoistInvariantSubsets(RewriterBase &rewriter, LoopLikeOpInterface loop);
} // namespace mlir::kiln

#endif
