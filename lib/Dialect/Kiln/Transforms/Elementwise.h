//===- Elementwise.h - which kiln ops act element by element --*- C++ -*-===//
//
// Shared by the graph passes that move ops across others (the layout pass
// sinks transposes through them; kiln-quantize-concat-parts moves a
// quantizing chain above a concatenation).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_DIALECT_KILN_TRANSFORMS_ELEMENTWISE_H
#define KILN_LIB_DIALECT_KILN_TRANSFORMS_ELEMENTWISE_H

#include "mlir/IR/Operation.h"

namespace mlir::kiln {

/// Ops of one operand that apply a function to each element (kiln.cast and
/// the ops whose result type is their operand's; softmax and identity are
/// not, identity folds anyway).
bool isUnaryElementwise(Operation *op);

} // namespace mlir::kiln

#endif // KILN_LIB_DIALECT_KILN_TRANSFORMS_ELEMENTWISE_H
