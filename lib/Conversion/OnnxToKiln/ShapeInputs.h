//===- ShapeInputs.h - shape arguments given at run time --------*- C++ -*-===//
//
// Kiln compiles static shapes. When a shape-deciding argument (Reshape's
// shape, Split's sizes, Unsqueeze's axes, ...) is a graph input, the
// conversion specializes for the output shape the model declares and adds a
// kiln.guard that the argument's run-time values produce exactly that shape.
// These helpers build those guards from kiln ops (docs/ops.md), read axes
// that may come at run time, and compute indices at run time (IndexMath).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CONVERSION_ONNXTOKILN_SHAPEINPUTS_H
#define KILN_LIB_CONVERSION_ONNXTOKILN_SHAPEINPUTS_H

#include "Build.h"

namespace mlir::kiln {

/// "2x3x4", or "a scalar" for rank 0, for messages.
std::string shapeStr(ArrayRef<int64_t> shape);

/// The static type the model declares for result `i`. Fails with "<what>
/// must be a compile-time constant, or the output shape must be declared
/// static" otherwise.
FailureOr<RankedTensorType> declaredResult(OnnxNode &node, unsigned i,
                                           StringRef what);

/// The static shape `v` has, or must have because it flows through
/// shape-preserving elementwise ops into a value declared static (a graph
/// output); none when neither. A run-time guard must still check it.
std::optional<SmallVector<int64_t>> declaredShape(Value v);

/// "graph input 'shape' (input 1)" or "input 1": input `i` in messages.
std::string inputDesc(OnnxNode &node, unsigned i);

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

/// Axes from the attribute (before `inputSince`) or from constant input 1.
std::optional<SmallVector<int64_t>> readAxes(OnnxNode &node, int64_t inputSince,
                                             bool &ok);
/// Whether input `i` is present but only known at run time.
bool runtimeInput(OnnxNode &node, unsigned i);
/// `shape` without the positions in `removed` (sorted).
SmallVector<int64_t> without(ArrayRef<int64_t> shape,
                             ArrayRef<int64_t> removed);

/// One way run-time axes can be: the (sorted) axes and the rank-0 i1 that
/// says the values name exactly them.
struct AxesChoice {
  SmallVector<int64_t> axes;
  Value when;
};

/// Builds the choice conditions for `sets` of axes of a rank-`rank` tensor
/// named by run-time input 1, and guards that one of them holds.
FailureOr<SmallVector<AxesChoice>>
axesChoices(OnnxNode &node, ArrayRef<SmallVector<int64_t>> sets, int64_t rank,
            const Twine &expectation);

/// ConstantOfShape's `value` (one element; f32 0 when absent).
FailureOr<Attribute> constantOfShapeValue(OnnxNode &node);

/// Rank-0 i64 constant.
inline Value scalarI64(OnnxNode &node, int64_t v) {
  return constI64(node, {v}, {});
}

/// Small builders on rank-0/1 i64 tensors for run-time index arithmetic.
struct IndexMath {
  OnnxNode &node;
  bool ok = true;
  Value check(FailureOr<Value> v) {
    if (failed(v)) {
      ok = false;
      return scalarI64(node, 0);
    }
    return *v;
  }
  Value add(Value a, Value b) { return check(build<AddOp>(node, a, b)); }
  Value sub(Value a, Value b) { return check(build<SubOp>(node, a, b)); }
  Value mul(Value a, Value b) { return check(build<MulOp>(node, a, b)); }
  Value div(Value a, Value b) { return check(build<DivOp>(node, a, b)); }
  Value max(Value a, Value b) { return check(build<MaxOp>(node, a, b)); }
  Value min(Value a, Value b) { return check(build<MinOp>(node, a, b)); }
  Value less(Value a, Value b) { return check(build<LessOp>(node, a, b)); }
  Value eq(Value a, Value b) { return check(build<EqualOp>(node, a, b)); }
  Value land(Value a, Value b) { return check(build<AndOp>(node, a, b)); }
  Value where(Value c, Value a, Value b) {
    return check(build<WhereOp>(node, c, a, b));
  }
  Value clamp(Value v, Value lo, Value hi) { return min(max(v, lo), hi); }
  Value c(int64_t v) { return scalarI64(node, v); }
  /// The constant 0, 1, ..., n - 1; fails the node past kMaxIota elements
  /// (a constant of that size in the .so is a mistake in the sizes).
  static constexpr int64_t kMaxIota = int64_t(1) << 24;
  Value iota(int64_t n) {
    if (n > kMaxIota) {
      if (ok)
        node.fail() << "needs a constant index vector of " << n
                    << " elements, more than the " << kMaxIota
                    << " Kiln builds; check the model's sizes";
      ok = false;
      return c(0);
    }
    SmallVector<int64_t> v;
    for (int64_t i = 0; i < n; ++i)
      v.push_back(i);
    return constI64(node, v, {n});
  }
  /// Element j of input i (an integer vector), as rank-0 i64.
  Value at(unsigned i, int64_t j) {
    FailureOr<Value> v = castTo(node, node.input(i), node.builder.getI64Type());
    if (failed(v)) {
      ok = false;
      return c(0);
    }
    return check(elementAt(node, *v, j));
  }
};

} // namespace mlir::kiln

#endif
