//===- ShapeInputs.h - shape arguments given at run time --------*- C++ -*-===//
//
// Kiln compiles static shapes. When a shape-deciding argument (Reshape's
// shape, Split's sizes, Unsqueeze's axes, ...) is a graph input, the
// conversion specializes for the output shape the model declares and adds a
// kiln.guard that the argument's run-time values produce exactly that shape.
// These helpers build those guards from kiln ops (docs/ops.md).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CONVERSION_ONNXTOKILN_SHAPEINPUTS_H
#define KILN_LIB_CONVERSION_ONNXTOKILN_SHAPEINPUTS_H

#include "Build.h"

namespace mlir::kiln {

/// The static type the model declares for result `i`. Fails with "<what>
/// must be a compile-time constant, or the output shape must be declared
/// static" otherwise.
FailureOr<RankedTensorType> declaredResult(OnnxNode &node, unsigned i,
                                           StringRef what);

/// Adds a kiln.guard that every element of `ok` is true at run time; the
/// message names the node and input `input` and says `expectation`.
void guardInput(OnnxNode &node, Value ok, unsigned input,
                const Twine &expectation);

/// Guards that input `input` (integers or floats) equals `expected`
/// elementwise; the input must have expected.size() elements.
LogicalResult guardEquals(OnnxNode &node, unsigned input,
                          ArrayRef<int64_t> expected, const Twine &what);

/// An i64 (or `elt`) constant of `shape` holding `values`.
Value constI64(OnnxNode &node, ArrayRef<int64_t> values,
               ArrayRef<int64_t> shape);
Value constBool(OnnxNode &node, ArrayRef<bool> values,
                ArrayRef<int64_t> shape);
Value constF32(OnnxNode &node, ArrayRef<float> values,
               ArrayRef<int64_t> shape);
/// `v` converted to element type `elt` (no-op when it has it).
FailureOr<Value> castTo(OnnxNode &node, Value v, Type elt);
/// Element `j` of a 1-D tensor as a scalar (rank-0) tensor.
FailureOr<Value> elementAt(OnnxNode &node, Value v, int64_t j);
/// A rank-0 i1: every element of `cond` is true.
FailureOr<Value> allOf(OnnxNode &node, Value cond);

/// For run-time `axes` (1-D integers) of a rank-`rank` tensor: a rank-sized
/// f32 vector counting how often each (normalized) position is named.
FailureOr<Value> axesCounts(OnnxNode &node, Value axes, int64_t rank);
/// A rank-0 i1: `counts` is exactly the indicator of the positions in `set`.
FailureOr<Value> countsAre(OnnxNode &node, Value counts, ArrayRef<int64_t> set,
                           int64_t rank);
/// Every `k`-subset of `positions`, in lexicographic order.
SmallVector<SmallVector<int64_t>> subsets(ArrayRef<int64_t> positions,
                                          int64_t k);

} // namespace mlir::kiln

#endif
