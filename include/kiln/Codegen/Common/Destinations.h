//===- Destinations.h - ops that write in place -----------------*- C++ -*-===//
//
// Helpers of the rewrites that let an op write its result straight into the
// tensor its consumer would copy it into (a padded tensor's interior, a
// concatenation's part), so that bufferization makes no copy.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_COMMON_DESTINATIONS_H
#define KILN_CODEGEN_COMMON_DESTINATIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {

/// The fill of an empty tensor that defines `v`, with a constant or with a
/// value known before `producer` (dynamic int8's zero point, which pads the
/// next convolution's input), and of run-time sizes known there too
/// (symbolic dimensions); the pure ops that compute the value and the sizes
/// from such values move above the producer. Null otherwise.
linalg::FillOp fillOfEmptyBefore(RewriterBase &rewriter, Value v,
                                 Operation *producer);

/// Whether every one of `values` is known before `producer` once the pure
/// ops that compute them (a short chain) move there; moves them if so.
bool moveAboveProducer(RewriterBase &rewriter, ValueRange values,
                       Operation *producer);

/// A clone of `fill` (see fillOfEmptyBefore), of its empty tensor and of
/// its constant (a run-time value is used as it is), created before
/// `before`. Clones, so that the fill keeps its marks (kUnreadPaddingAttr).
Value cloneFillBefore(RewriterBase &rewriter, linalg::FillOp fill,
                      Operation *before);

/// Whether `use` is an init its op overwrites whole without reading it: a
/// linalg op's init its body never reads, or the tensor a loop marked
/// kOverwrittenOutsAttr carries (the int8 dot-product kernels).
bool isOverwrittenInit(OpOperand &use);

/// The one init of `op` (see isOverwrittenInit), when it is an empty
/// tensor and `op` has one result and is not a copy (the copies are what
/// the callers remove); null otherwise.
OpOperand *overwrittenEmptyInit(Operation *op);

/// Points `insert` at a fresh clone of `fill` made above `producer` (CSE
/// may share one fill between two pads of the same shape), and starts
/// `init` (of `producer`) from the slice of that clone the insert writes,
/// seen through an expand_shape by `groups` when given. `init` must be an
/// empty tensor, as overwrittenEmptyInit finds; the view takes its sizes.
void startFromInsertedSlice(RewriterBase &rewriter, linalg::FillOp fill,
                            Operation *producer, OpOperand *init,
                            tensor::InsertSliceOp insert,
                            ArrayRef<ReassociationIndices> groups);

} // namespace mlir::kiln

#endif
