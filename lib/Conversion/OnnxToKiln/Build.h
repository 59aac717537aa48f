//===- Build.h - building kiln ops from ONNX nodes --------------*- C++ -*-===//
#ifndef KILN_LIB_CONVERSION_ONNXTOKILN_BUILD_H
#define KILN_LIB_CONVERSION_ONNXTOKILN_BUILD_H

#include "Converters.h"
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"

#include "mlir/IR/Verifier.h"

#include <functional>

namespace mlir::kiln {

/// The type of a value known to be a ranked tensor (after
/// OnnxNode::rankedInput, or of a kiln op's result). KilnToLinalg's Lowering.h
/// defines the same inline function for the same purpose.
inline RankedTensorType typeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}
/// The element type of such a value.
inline Type elementOf(Value v) { return typeOf(v).getElementType(); }

/// Verifies a freshly built op and, for ops that infer their result type,
/// sets it. On failure the op is erased and the reason is reported against the
/// node, so a malformed model never reaches a crash or a later pass.
LogicalResult finishBuild(OnnxNode &node, Operation *op);

/// Folds a freshly built, verified op once: a result that folds to a constant
/// becomes a kiln.constant, one that folds to an existing value (x + 0) is
/// that value, and the op is erased. Shape computations (Shape -> Gather ->
/// Concat -> Reshape) thus become constants before the nodes that need them
/// as constants (Reshape's shape, Slice's bounds) are converted. Returns the
/// op's single result otherwise.
Value foldBuilt(OnnxNode &node, Operation *op);
/// At a probe batch size (kBatchProbeAttr, BatchProbe.cpp): whether folding
/// `op` to `folded` would drop the probe held by a constant operand.
bool hidesBatchProbe(Operation *op, Attribute folded);
/// Whether a constant holding `probe` reaches an op as data in `module`
/// (reported there).
bool readsBatchProbe(Operation *module, int64_t probe);

/// Builds OpTy at the node with a placeholder result type, then infers the
/// real one and folds it (see foldBuilt). Returns the single result.
template <typename OpTy, typename... Args>
FailureOr<Value> build(OnnxNode &node, Args &&...args) {
  Type placeholder = UnrankedTensorType::get(node.builder.getF32Type());
  auto op = OpTy::create(node.builder, node.loc(), placeholder,
                         std::forward<Args>(args)...);
  if (failed(finishBuild(node, op)))
    return failure();
  return foldBuilt(node, op);
}

/// A result list with one value.
inline FailureOr<SmallVector<Value>> one(FailureOr<Value> v) {
  if (failed(v))
    return failure();
  return SmallVector<Value>{*v};
}

/// A constant of `type` with every element `value`: floats rounded to
/// nearest even in the element type, integers truncated toward zero.
Value splatConstant(OnnxNode &node, RankedTensorType type, double value);
/// The rank-0 splatConstant of element type `elt`.
Value scalarConstant(OnnxNode &node, Type elt, double value);

/// Reports constant indices outside [-n, n); `dimOf(k)` is the size that the
/// k-th index (in row-major order) indexes.
LogicalResult checkConstantIndices(OnnxNode &node, unsigned input,
                                   const std::function<int64_t(size_t)> &dimOf);

/// LogSoftmax along `axis` as (x - max) - log(sum(exp(x - max))): finite
/// where log(softmax(x)) would underflow to -inf (Softmax.cpp).
FailureOr<Value> logSoftmax(OnnxNode &node, Value x, int64_t axis);
/// Softmax (`log`: LogSoftmax) of `x` along `axis`; with `coerce` (opsets
/// before 13) over the whole block of dimensions from `axis` on.
FailureOr<Value> softmaxOf(OnnxNode &node, Value x, int64_t axis, bool coerce,
                           bool log = false);

FailureOr<Value> floatInput(OnnxNode &node, unsigned i);
/// The same for an elementwise op, whose input may have symbolic
/// (dynamic) dimensions (docs/shapes.md).
FailureOr<Value> elementwiseFloatInput(OnnxNode &node, unsigned i);

/// The element type of an ONNX TensorProto data type that Kiln carries
/// (floats, integers, bool as i1, the narrow types), or null; `name` is set
/// either way for the diagnostic (Elementwise.cpp).
Type onnxElementType(Builder &b, int64_t dataType, std::string &name);

/// Transpose's `perm`, or the reversed axes when it has none.
inline SmallVector<int64_t> transposePerm(OnnxNode &node, int64_t rank) {
  if (std::optional<SmallVector<int64_t>> p = node.intsAttr("perm"))
    return *p;
  SmallVector<int64_t> perm;
  for (int64_t d = rank - 1; d >= 0; --d)
    perm.push_back(d);
  return perm;
}

/// Reshape to a static shape (no-op when it already has it); folded like
/// build().
FailureOr<Value> reshapeTo(OnnxNode &node, Value v, ArrayRef<int64_t> shape);
/// kiln.transpose by `perm` (no-op for the identity permutation).
FailureOr<Value> transposeBy(OnnxNode &node, Value v, ArrayRef<int64_t> perm);

/// 0.5 x (1 + erf(x / sqrt 2)), or with `tanh` the tanh approximation
/// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) (Elementwise.cpp).
FailureOr<Value> gelu(OnnxNode &node, Value x, bool tanh);
/// x / sqrt(mean(x^2 over the axes from `axis`) + epsilon) * scale, in f32
/// for half types (Normalization.cpp).
FailureOr<Value> rmsNorm(OnnxNode &node, Value x, Value scale, int64_t axis,
                         float epsilon);

} // namespace mlir::kiln

#endif
