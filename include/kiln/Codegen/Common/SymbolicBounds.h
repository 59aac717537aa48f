//===- SymbolicBounds.h - largest values of run-time sizes --------*- C++ -*-===//
//
// A model with symbolic dimensions (docs/shapes.md) sizes its buffers from the
// symbols' run-time values, which --kiln-bind-symbolic-shapes reads once and
// bounds with affine.min by their maxima. These helpers follow a size (an
// index value, or a dimension of a tensor or buffer) back through the ops
// that forward or combine sizes (dims of views, reshapes, allocations,
// destination-style results; products, sums, quotients, min/max) to those
// bounded symbols, for the arena planner and the output descriptor.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_COMMON_SYMBOLICBOUNDS_H
#define KILN_CODEGEN_COMMON_SYMBOLICBOUNDS_H

#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <optional>

namespace mlir::kiln {

/// The largest value the index `size` can take, or nullopt if it does not
/// trace back to constants and bounded symbols.
std::optional<int64_t> largestSize(Value size);
/// The largest size of dimension `dim` of the shaped value `shaped`.
std::optional<int64_t> largestDim(Value shaped, int64_t dim);
/// The value dimension `dim` of `shaped` forwards unchanged (a symbol's
/// bounded size, say), or null if it is computed.
Value forwardedDim(Value shaped, int64_t dim);

} // namespace mlir::kiln

#endif
