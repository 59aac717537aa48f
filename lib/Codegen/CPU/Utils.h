//===- Utils.h - helpers shared by the CPU code generation passes -*- C++ -*-===//
#ifndef KILN_LIB_CODEGEN_CPU_UTILS_H
#define KILN_LIB_CODEGEN_CPU_UTILS_H

#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Operation.h"

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
} // namespace mlir::kiln

#endif
