//===- Lowering.h - shared helpers of KilnToLinalg --------------*- C++ -*-===//
#ifndef KILN_LIB_CONVERSION_KILNTOLINALG_LOWERING_H
#define KILN_LIB_CONVERSION_KILNTOLINALG_LOWERING_H

#include "kiln/Dialect/Kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <functional>

namespace mlir::kiln {

using BodyFn = std::function<Value(OpBuilder &, Location, ValueRange)>;

/// Marks a kiln op whose results a sibling's lowering already replaced
/// (a reduce_max lowered with its reduce_min); the lowering walk erases it.
constexpr llvm::StringLiteral kLoweredWithSibling = "kiln.lowered_with_sibling";

/// The type of a kiln value, a ranked tensor after the graph is converted.
/// OnnxToKiln's Build.h defines the same inline function.
inline RankedTensorType typeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// tensor.empty of `shape`; `dyn` holds the size of each dynamic
/// (ShapedType::kDynamic) entry of `shape`, in order, as tensor.empty takes
/// them. Symbolic dimensions (docs/shapes.md) reach the lowerings as dynamic
/// sizes; a static shape takes no `dyn`.
Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type elt, ValueRange dyn = {});
/// A tensor of `shape` filled with `value` (`dyn` as for emptyTensor).
Value filledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   Type elt, double value, ValueRange dyn = {});

/// The sizes of the dynamic dimensions of the tensor `v` (tensor.dim of
/// each), in order: the `dyn` of a tensor shaped like `v`; of dimensions
/// [from, to) only when given (`to` < 0: to the last).
SmallVector<Value> dynamicDims(OpBuilder &b, Location loc, Value v,
                               int64_t from = 0, int64_t to = -1);
/// The product of dimensions [from, to) of the tensor `v` at run time, an
/// index (tensor.dim of each dynamic one): a symbolic row or element count.
Value sizeProduct(OpBuilder &b, Location loc, Value v, int64_t from,
                  int64_t to);
/// The `dyn` of an elementwise result of `shape` whose operands `inputs`
/// broadcast to it (ONNX-style, right-aligned): each dynamic dimension is
/// taken from the first operand that has it dynamic at that position.
/// Returns failure if no operand does (the result type cannot be sized).
FailureOr<SmallVector<Value>> broadcastDims(OpBuilder &b, Location loc,
                                            ArrayRef<int64_t> shape,
                                            ValueRange inputs);
/// A scalar constant of type `elt` holding `value`. Integer types take the
/// value truncated toward zero and clamped to their range (infinities give
/// the extremes, for max/min identities); `ui` types give a signless
/// constant (arith has no unsigned types).
Value floatConst(OpBuilder &b, Location loc, Type elt, double value);

/// Whether `t` (or its element type) is an unsigned (`ui`) integer type.
/// ONNX's unsigned tensors keep `ui` element types through the kiln dialect;
/// KilnToLinalg computes on signless integers with unsigned arith ops and
/// finally retypes every `ui` value in the function as signless.
bool isUnsignedInt(Type t);
/// `t` with any `ui` element type replaced by the signless one of its
/// width, and ONNX's narrow types (isNarrowType) by their storage byte, i8.
Type signlessType(Type t);
/// `v` viewed as signless (an unrealized cast, gone once the function is
/// retyped), or `v` itself.
Value asSignless(OpBuilder &b, Location loc, Value v);

/// One element of kiln.cast: integers are signed except i1 (0 or 1) and
/// those the kiln types marked unsigned (`x` and `to` are signless here),
/// floats go to integers toward zero, anything goes to i1 as "not zero" (NaN
/// too).
Value castScalar(OpBuilder &b, Location l, Value x, Type to, bool fromUnsigned,
                 bool toUnsigned);
/// One element of a kiln.cast from or to one of ONNX's narrow types
/// (isNarrowType), whose values are their storage byte (i8) here; `from`
/// and `to` are the kiln element types (LowerNarrowCast.cpp).
Value narrowCastScalar(OpBuilder &b, Location l, Value x, Type from, Type to,
                       bool saturate, StringRef roundMode);

/// The indexing map that reads a value of type `t` broadcast (ONNX-style,
/// right-aligned) to an iteration space of `shape`.
AffineMap broadcastMap(OpBuilder &b, RankedTensorType t,
                       ArrayRef<int64_t> shape);

/// Elementwise linalg.generic over `shape` with ONNX broadcasting of every
/// input (rank-aligned on the right, size-1 dimensions broadcast).
Value broadcastGeneric(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                       Type elt, ValueRange inputs, const BodyFn &body,
                       ValueRange dyn = {});

/// Generic whose inputs use explicit indexing maps, e.g. a permuted write.
Value mappedGeneric(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                    Type elt, ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                    const BodyFn &body, ValueRange dyn = {});

/// Transposes `v` by `perm` (dynamic sizes move with their dimensions). A constant is transposed at compile time (weights
/// stay constants); anything else gets a linalg.transpose.
Value transposed(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> perm);

/// Pads `x` with `value` (or with the scalar `runTimeValue` of x's element
/// type when given): `low[d]` before and `high[d]` after dimension d.
Value padded(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> low,
             ArrayRef<int64_t> high, double value, Value runTimeValue = {});

/// Grouped convolution (1 < group < channels) of the padded NHWC input `xp`
/// with the HWCF filter `hwcf` (groups side by side along F), as one
/// convolution kernel in a loop over the groups. Returns NHWC `outShape`
/// (`dyn` sizes its dynamic entries, as for emptyTensor).
Value groupedConvNHWC(OpBuilder &b, Location loc, Value xp, Value hwcf,
                      int64_t group, ArrayRef<int64_t> outShape,
                      ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                      ValueRange dyn = {});

/// `v` as a 1-D i64 elements attribute (the strides and dilations of the
/// linalg convolutions).
DenseIntElementsAttr i64Vector(OpBuilder &b, ArrayRef<int64_t> v);

/// Reshape to `shape` with the same element count, through a 1-D view;
/// `dyn` sizes the dynamic entries of `shape`, as for emptyTensor.
Value reshaped(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape,
               ValueRange dyn = {});

/// Reduction of `input` over `axes` (sorted) with `init`, combining with
/// `combine(acc, x)`; the result drops the reduced dimensions (and keeps the
/// dynamic sizes of the others).
Value reduced(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes,
              double init,
              const std::function<Value(OpBuilder &, Location, Value, Value)>
                  &combine);

/// ONNX index semantics on a dimension of size `n` (> 0) for an index `i`
/// (of index type): negative counts from the end. Returns the position
/// clamped into [0, n), never outside the data; `inRange`, when asked for,
/// gets whether `i` was a valid index.
Value clampIndex(OpBuilder &b, Location loc, Value i, int64_t n,
                 Value *inRange = nullptr);
/// The same on a dimension whose size `n` (index, > 0) is known at run time.
Value clampIndex(OpBuilder &b, Location loc, Value i, Value n,
                 Value *inRange = nullptr);

/// Whether lowerElementwise lowers `op` (one linalg.generic over its result).
bool isElementwise(Operation *op);
/// The scalar computation of an elementwise op other than Identity, Cast
/// and BitCast, on signless operands in the op's order (lowerElementwise's
/// body); none for any other op.
std::optional<BodyFn> elementwiseBody(Operation *op);

/// Lowers one kiln op; returns the replacement value or failure (after
/// emitting a diagnostic on the op).
FailureOr<Value> lowerElementwise(OpBuilder &b, Operation *op);
FailureOr<Value> lowerNN(OpBuilder &b, Operation *op);
FailureOr<Value> lowerTensor(OpBuilder &b, Operation *op);
FailureOr<Value> lowerGatherElements(OpBuilder &b, Operation *op);

/// Lowers a kiln.guard (which has no result) in place; the caller erases it.
LogicalResult lowerGuard(OpBuilder &b, GuardOp op);
/// kiln.expand (LowerShapeOps.cpp).
FailureOr<Value> lowerShapeOps(OpBuilder &b, Operation *op);
/// Scatter, gather_nd, cumsum, top_k, reverse_sequence, det, compress,
/// non_zero, unique and non_max_suppression; top_k and unique replace their
/// results after the first themselves.
FailureOr<Value> lowerIndexing(OpBuilder &b, Operation *op);
/// top_k, compress, non_zero, unique and non_max_suppression
/// (LowerSelect.cpp), for lowerIndexing; null for any other op.
FailureOr<Value> lowerSelect(OpBuilder &b, Operation *op);
/// kiln.non_max_suppression (LowerSuppression.cpp), for lowerSelect.
Value lowerNonMaxSuppression(OpBuilder &b, NonMaxSuppressionOp op);
/// kiln.loop, whose body is lowered already, as an scf.for marked
/// kGraphLoopAttr (LowerLoop.cpp); replaces and erases the op.
LogicalResult lowerLoop(OpBuilder &b, LoopOp op);
/// kiln.dynamic_quant_matmul (LowerQuantized.cpp).
FailureOr<Value> lowerQuantized(OpBuilder &b, Operation *op);
/// kiln.random (LowerRandom.cpp); null for any other op.
FailureOr<Value> lowerRandom(OpBuilder &b, Operation *op);
/// a [m, k] times bm [k, n] (either may have run-time sizes) as a
/// linalg.matmul from zeros (LowerNN.cpp).
Value matmul2D(OpBuilder &b, Location loc, Value a, Value bm);
/// kiln.softmax over the last axis of a static float tensor of at least
/// 32,768 elements whose rows are a multiple of 16 long, as one scf.forall
/// over blocks of rows (LowerSoftmax.cpp); failure, building nothing, for
/// any other softmax.
FailureOr<Value> rowBlockedSoftmax(OpBuilder &b, SoftmaxOp op);
/// The ops of an attention that rowBlockedAttention lowers with its last
/// product `pv`: g(softmax(f(q kt))) v, the softmax over the last axis; f, g
/// are chains of elementwise ops (a scale, an additive or `where` mask, the
/// zeroing of fully masked rows), each reading the previous result and
/// operands that broadcast to the scores. Every tensor is f32 (a `where`
/// condition i1) of static shape; q, kt, v and the output have the scores'
/// leading (batch, head) sizes; the scores have 32,768+ elements in rows a
/// multiple of 16 long; each intermediate is read by the next alone.
struct AttentionChain {
  MatMulOp qk;
  SoftmaxOp softmax;
  /// The elementwise ops on the scores (f) and on the probabilities (g),
  /// in order, with the index of the operand that reads the chain.
  SmallVector<std::pair<Operation *, unsigned>> onScores, onProbs;
  /// Every op of the chain but `pv`, in order.
  SmallVector<Operation *> ops() const;
};
/// The attention chains among the ops of `block`, by their last product;
/// no op is in two.
DenseMap<Operation *, AttentionChain> attentionChains(Block &block);
/// The chain ending in `pv` as one scf.forall over blocks of query rows:
/// each block's scores, their softmax and its product with v, the scores
/// never stored whole (LowerSoftmax.cpp).
Value rowBlockedAttention(OpBuilder &b, MatMulOp pv,
                          const AttentionChain &chain);

} // namespace mlir::kiln

#endif
