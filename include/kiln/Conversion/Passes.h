//===- Passes.h - Kiln conversion passes ------------------------*- C++ -*-===//
#ifndef KILN_CONVERSION_PASSES_H
#define KILN_CONVERSION_PASSES_H

#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

#include <optional>
#include <string>

namespace mlir::kiln {
#define GEN_PASS_DECL
#include "kiln/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Conversion/Passes.h.inc"

/// Why kiln-convert-kiln-to-linalg cannot lower the kiln op `op` with the
/// symbolic (dynamic) dimensions of its operand and result types
/// (docs/shapes.md), as advice for the user; nothing if it can. `--check`
/// asks it of every op the conversion made.
std::optional<std::string> symbolicSizesUnsupported(Operation *op);

} // namespace mlir::kiln

#endif
