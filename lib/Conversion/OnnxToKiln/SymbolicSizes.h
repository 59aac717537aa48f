//===- SymbolicSizes.h - sizes the graph computes from Shape -----*- C++
//-*-===//
//
// Exporters write `x.view(b, t, heads, d)`, `position_ids[:, :t]` and
// `mask.expand(b, t)` as Shape, Gather, Unsqueeze, Concat, arithmetic and
// then Reshape, Slice, Expand or ConstantOfShape. With symbolic dimensions
// those shape arguments are only known at run time. The conversion follows
// them symbolically instead: every dimension of a converted value is a
// polynomial over atoms (the run-time size of one dimension of one value; a
// graph input's dim_param is one atom for every input that names it; the
// floor of a polynomial divided by a constant, `h // 2`), and
// every small integer tensor computed from Shape keeps the polynomial of
// each element. A consumer then knows which result sizes are equal to which,
// builds a kiln.sized_* op with each run-time size as an `index` operand
// (tensor.dim of a value, and arith), and proves the element counts of a
// reshape equal (docs/shapes.md, "Shapes the graph computes").
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CONVERSION_ONNXTOKILN_SYMBOLICSIZES_H
#define KILN_LIB_CONVERSION_ONNXTOKILN_SYMBOLICSIZES_H

#include "Build.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <map>

namespace mlir::kiln {

/// A size as a polynomial with integer coefficients over atom ids.
class SymSize {
public:
  using Monomial = SmallVector<unsigned, 2>; ///< sorted atom ids

  SymSize() = default;
  static SymSize constant(int64_t c);
  static SymSize atom(unsigned id);

  std::optional<int64_t> getConstant() const;
  bool isConstant(int64_t c) const { return getConstant() == c; }
  /// The atom, when the size is exactly one atom.
  std::optional<unsigned> getAtom() const;
  bool operator==(const SymSize &o) const { return terms == o.terms; }
  bool operator!=(const SymSize &o) const { return terms != o.terms; }

  /// Sums and products; nullopt when a coefficient would overflow.
  static std::optional<SymSize> add(const SymSize &a, const SymSize &b);
  static std::optional<SymSize> mul(const SymSize &a, const SymSize &b);
  static std::optional<SymSize> neg(const SymSize &a);
  /// a / b when b is a single term that divides every term of a exactly.
  static std::optional<SymSize> divExact(const SymSize &a, const SymSize &b);

  const std::map<Monomial, int64_t> &getTerms() const { return terms; }
  std::string str(ArrayRef<std::string> atomNames) const;

private:
  /// Adds c * m; false when a coefficient overflows or there are too many
  /// terms (the size is then unknown).
  bool accumulate(const Monomial &m, int64_t c);

  std::map<Monomial, int64_t> terms; ///< no zero coefficients
};

/// The symbolic sizes of one function's conversion.
class SymbolicSizes {
public:
  explicit SymbolicSizes(func::FuncOp func) : func(func) {}

  /// The size of dimension `axis` of the converted value `v`.
  SymSize dim(Value v, int64_t axis);
  SmallVector<SymSize> dims(Value v);
  /// Records the sizes of `v`'s dimensions (a sized op's result).
  void setDims(Value v, ArrayRef<SymSize> sizes);

  /// Larger integer tensors are data, not shape arithmetic.
  static constexpr int64_t kMaxContents = 64;
  /// Every element of a small integer tensor (a constant, or one computed
  /// from Shape), or of a float one holding whole numbers, when each is
  /// known (ShapeArithmetic.cpp).
  std::optional<SmallVector<SymSize>> contents(Value v);
  /// Records `v`'s contents (a value built to hold them).
  void setContents(Value v, ArrayRef<SymSize> c) {
    contentMap[v] = SmallVector<SymSize>(c);
  }
  /// Whether `v`'s contents are known and some element is not a constant.
  bool isSymbolic(Value v);

  /// After node `node` converted to `results`: records the contents of the
  /// results of Shape, Gather, Concat, arithmetic, ... on known contents.
  /// Returns a constant to use instead of result 0 when every element of
  /// it is a known constant (null otherwise).
  Value record(OnnxNode &node, ArrayRef<Value> results);

  /// After node `node` converted: where `def`, one of the ops its
  /// conversion built, combines dimensions that must agree (broadcasting
  /// operands, Concat outside its axis, a product's reduced and batch
  /// dimensions, a Gemm's bias) and that the polynomials do not prove equal,
  /// adds a kiln.guard that they agree at run time. The lowering reads one of
  /// them (the graph types assume them equal); a model whose shapes agree only
  /// at some sizes of its symbols then fails with a message naming the node,
  /// never computes on mismatched sizes unnoticed. Where a failed guard does
  /// not end the run (a Loop, Scan or If body, a speculative branch), each
  /// member that may disagree is read as a view at the anchor's size.
  void guardAgreement(OnnxNode &node, Operation *def);
  /// A kiln.guard at `b`'s insertion point that dimension `ax` of `x` and
  /// `yx` of `y` are equal at run time (where `when`, an i1, is true, if
  /// given), failing the run with `message`.
  static void guardEqualDims(OpBuilder &b, Location loc, Value x, int64_t ax,
                             Value y, int64_t yx, const Twine &message,
                             Value when = {});

  /// An `index` value holding `s`, built at the builder's insertion point.
  Value materialize(OpBuilder &b, Location loc, const SymSize &s);

  /// floor(p / c) and p - c * floor(p / c) (Python's `//` and `%`) for a
  /// positive constant c: exact or constant when they can be, else through
  /// an atom for the quotient (`h // 2`, materialized as an affine
  /// floordiv); nullopt when a coefficient overflows.
  std::optional<SymSize> floorDiv(const SymSize &p, int64_t c);
  std::optional<SymSize> floorMod(const SymSize &p, int64_t c);

  /// Bounds of `s` from its atoms' ranges (interval arithmetic; a size
  /// never below 0), when every atom the bound needs has one.
  std::optional<int64_t> largest(const SymSize &s);
  std::optional<int64_t> smallest(const SymSize &s);
  /// Dimension `axis` of `v` (an op's result whose size Kiln cannot
  /// compute, such as an If's result joined from branches of other sizes)
  /// as one of `options` at run time: its range is theirs, where each has
  /// one.
  void boundByOptions(Value v, int64_t axis, ArrayRef<SymSize> options);

  /// Whether every atom of `s` is a dimension of a value defined outside
  /// `region` (so that `s` can be materialized after it).
  bool definedOutside(const SymSize &s, Region &region);

  /// "batch", "seq * 64", "dim 1 of '/q/MatMul'" for messages.
  std::string str(const SymSize &s);
  /// The dim_param `s` is, where it is exactly a graph input's named
  /// dimension.
  std::optional<std::string> inputSymbolName(const SymSize &s);
  /// For a refusal of `s`, which has no largest value: what to do. A range
  /// for each graph input's dimension without one; where a size computed
  /// in the graph has no bound, that size named (no range helps).
  std::string boundAdvice(const SymSize &s);

  /// Registers the condition under which a speculatively inlined branch is
  /// taken: `cond` (a converted one-element i1 tensor, defined before the
  /// If), or its negation, within the branch whose condition has the index
  /// `outer` (0: none). The branch's ops carry the returned index in
  /// kSpeculativeAttr.
  int64_t addTakenCondition(Value cond, bool negated, int64_t outer);
  /// The condition under which the results of `op` (inlined speculatively)
  /// are used, built as an i1 at `b`'s point; null where it is not known
  /// (an iteration after a loop may have stopped).
  Value takenCondition(OpBuilder &b, Location loc, Operation *op) const;
  /// Whether takenCondition knows `op`'s condition.
  bool knowsTakenCondition(Operation *op) const;

private:
  /// A dimension of a value (`value`, `axis`), or, with no value, the
  /// quotient floor(numerator / divisor).
  struct Atom {
    Value value;
    int64_t axis;
    std::string name;
    std::optional<int64_t> min, max;
    SymSize numerator = {};
    int64_t divisor = 0;
  };
  unsigned atomFor(Value v, int64_t axis);
  std::optional<int64_t> largestByInference(Value v, int64_t axis);
  std::optional<int64_t> largestOfDataSize(Value v, int64_t axis);
  std::optional<SymSize> computeDim(Value v, int64_t axis);
  std::optional<int64_t> bound(const SymSize &s, bool upper);
  std::optional<int64_t> refinedBound(const SymSize &s, bool upper,
                                      int &budget);
  std::optional<int64_t> intervalBound(const SymSize &s, bool upper);
  bool fitsElementType(ArrayRef<SymSize> values, Type elt);
  std::optional<SymSize> windowSize(const SymSize &in, int64_t kernel,
                                    int64_t stride, int64_t dilation,
                                    int64_t pb, int64_t pe, bool ceilMode);
  std::optional<SymSize> windowDim(Operation *def, int64_t axis);
  std::optional<SymSize> arithmetic(OnnxNode &node, const SymSize &x,
                                    const SymSize &y, bool integers);

  func::FuncOp func;
  int depth = 0; ///< of computeDim's recursion
  SmallVector<Atom> atoms;
  DenseMap<std::pair<Value, int64_t>, unsigned> atomIds;
  llvm::StringMap<unsigned> namedAtoms;
  std::map<std::pair<std::map<SymSize::Monomial, int64_t>, int64_t>, unsigned>
      quotientAtoms;
  DenseMap<std::pair<Value, int64_t>, SymSize> dimMemo;
  DenseMap<Value, SmallVector<SymSize>> contentMap;
  struct Taken {
    Value cond;
    bool negated;
    int64_t outer;
  };
  SmallVector<Taken> takenConditions; ///< index i + 1 in kSpeculativeAttr
};

/// On an onnx.Reshape of a tensor with symbolic dimensions: the target
/// ONNX's shape inference resolved (-1 for its one symbolic size), which
/// the conversion uses once the computed target's element count checks.
inline constexpr llvm::StringLiteral kInferredTargetAttr =
    "kiln.inferred_target";
/// Checks a Reshape carrying kInferredTargetAttr: where its computed target
/// is known as sizes, the element counts must agree (a guard where they
/// agree only at some sizes, an error where at none).
LogicalResult checkInferredTarget(OnnxNode &node);

/// The conversions of Shape, Reshape, Expand, ConstantOfShape, Slice and Range
/// when an input's contents or dimensions are symbolic; null (no failure)
/// when they do not apply, so the static conversion runs.
FailureOr<SmallVector<Value>> convertSymbolicShape(OnnxNode &node);
FailureOr<SmallVector<Value>> convertSymbolicReshape(OnnxNode &node);
FailureOr<SmallVector<Value>> convertSymbolicExpand(OnnxNode &node);
FailureOr<SmallVector<Value>> convertSymbolicConstantOfShape(OnnxNode &node);
FailureOr<SmallVector<Value>> convertSymbolicSlice(OnnxNode &node);
FailureOr<SmallVector<Value>> convertSymbolicRange(OnnxNode &node);

/// Building blocks for converters whose values may have symbolic
/// dimensions (SizedOps.cpp); each records its result's sizes.
///
/// `x` reshaped to `sizes`: kiln.reshape when both are static, else a
/// kiln.sized_reshape; fails (naming the node) when the element counts are
/// not the same polynomial or run-time dimensions regroup.
/// Counts that agree only at some sizes get a run-time guard (refused in a
/// subgraph), unless `countsGuarded` says the caller has checked them.
FailureOr<Value> reshapeToSizes(OnnxNode &node, Value x,
                                ArrayRef<SymSize> sizes,
                                bool countsGuarded = false);
/// `x` as a matrix: the product of its dimensions before `axis` by the
/// product of the rest (ONNX Flatten, and the 2-D coercion of Softmax before
/// opset 13), either side of run-time size.
FailureOr<Value> flattenToSizes(OnnxNode &node, Value x, int64_t axis);
/// The vector `v` of run-time length as one of dimension `axis` of `other`,
/// which is static: guarded equal at run time (failing the run with
/// `message`), then of that static length.
FailureOr<Value> vectorOfLength(OnnxNode &node, Value v, Value other,
                                int64_t axis, const Twine &message);
/// The box `bounds` of `x`, whose dimensions other than the static ones in
/// `bounds` keep their run-time sizes, as a kiln.sized_slice.
Value sizedPart(OnnxNode &node, Value x, const SliceBounds &bounds);
/// The box of `x` at `offsets` of `sizes` (either may be a run-time size)
/// with static `strides`, as a kiln.sized_slice of type `shape` (by default
/// static where a size is a constant).
Value sizedBox(OnnxNode &node, Value x, ArrayRef<SymSize> offsets,
               ArrayRef<SymSize> sizes, ArrayRef<int64_t> strides,
               ArrayRef<int64_t> shape = {});
/// `x` broadcast (numpy rules) to `sizes`, as kiln.expand or
/// kiln.sized_expand.
FailureOr<Value> expandToSizes(OnnxNode &node, Value x,
                               ArrayRef<SymSize> sizes);
/// The integers (or floats) 0, 1, ..., count - 1 of element type `elt`:
/// the first `count` of a constant as long as count's largest value; fails
/// (naming the node and `what`) without a bound or over 2^20 elements.
FailureOr<Value> iotaOfSize(OnnxNode &node, const SymSize &count, Type elt,
                            StringRef what);
/// Operand `i` as a ranked tensor: of any shape when the conversion has the
/// function's sizes to follow its symbolic dimensions, else static (failing
/// with "input shape T is not static").
FailureOr<Value> sizedInput(OnnxNode &node, unsigned i);
/// The size of dimension `axis` of `v` (a constant where it is static; a
/// symbolic one needs node.sizes), and of all its dimensions.
SymSize sizeOf(OnnxNode &node, Value v, int64_t axis);
SmallVector<SymSize> sizesOf(OnnxNode &node, Value v);
/// Whether `a` and `b` are known to differ: both static and unequal (sizes
/// that may agree at run time are guarded where they combine).
inline bool knownToDiffer(const SymSize &a, const SymSize &b) {
  return a.getConstant() && b.getConstant() && a != b;
}
/// "4", "seq * 2" and "[2, seq, 4]" for messages.
std::string sizeStr(OnnxNode &node, const SymSize &s);
std::string sizesStr(OnnxNode &node, ArrayRef<SymSize> sizes);
/// The [rows, cols] table of col - row (int64) for sizes that may be
/// symbolic: a column iota minus a row iota (iotaOfSize; `what` names the
/// table in a refusal).
FailureOr<Value> colMinusRowOfSizes(OnnxNode &node, const SymSize &rows,
                                    const SymSize &cols, StringRef what);
/// The size `s` as a one-element tensor of `elt` (a scalar constant when
/// `s` is one), to compare or combine with data in the graph.
FailureOr<Value> sizeAsTensor(OnnxNode &node, const SymSize &s, Type elt);
/// The largest rank Kiln compiles (numpy allows 64; models use a handful).
constexpr int64_t kMaxTensorRank = 16;
/// Fails `node` when a value of one of `types` (`what`: "result", "input")
/// has a rank over kMaxTensorRank, or would hold more than `maxBytes`, or a
/// byte count that does not fit in 64 bits; a dimension of run-time size
/// counts at its largest, where `values` (the typed values) give one, else
/// as 1.
bool withinTensorLimit(OnnxNode &node, TypeRange types, uint64_t maxBytes,
                       StringRef what, ValueRange values = {});
/// Marks an ONNX node inlined from a branch of a run-time If or from a loop
/// iteration that may run after the loop stopped: it runs whether or not
/// its result is used. Its value (i64) indexes the condition under which
/// the result is used (SymbolicSizes::takenCondition); 0 where not known.
inline constexpr llvm::StringLiteral kSpeculativeAttr = "kiln.speculative";
/// Marks the join of an If's branch results (a Where of the two results, or
/// a Concat of the two stacks of a branch run as a loop of one iteration or
/// none) whose run-time sizes may differ: its conversion compares the sizes
/// the branches converted to (BranchJoin.cpp).
inline constexpr llvm::StringLiteral kIfJoinAttr = "kiln.if_join";
/// The result of the If whose condition (one bool) is `cond` and whose
/// branches gave `t` and `e`: where their sizes differ in one axis, the
/// taken one's, cut out along that axis and joined; nullopt where they are
/// the same polynomials (a plain Where then joins them); fails naming the
/// axes where they differ in several.
FailureOr<std::optional<Value>> joinBranchResults(OnnxNode &node, Value cond,
                                                  Value t, Value e);
/// The same for the stacks `st` and `se` of a branch run as a loop (one row
/// when the branch ran, none when not), as the one row `[1, ...]` of the
/// taken branch's result; nullopt where their rows' sizes are the same
/// polynomials (a plain Concat then joins them).
FailureOr<std::optional<Value>> joinBranchStacks(OnnxNode &node, Value st,
                                                 Value se);
/// The ops that broadcast their operands right-aligned to the result
/// (numpy), or keep one operand's shape.
bool broadcastsOperands(Operation *op);
/// Whether `node` converts inside a Loop, Scan or If body, where a failed
/// kiln.guard records the failure but does not end the body (so a guard
/// there cannot stand between a mismatch and an out-of-bounds access), or
/// was inlined speculatively (kSpeculativeAttr: a guard there would fail
/// runs that never use its result).
bool inSubgraph(OnnxNode &node);
/// `ok` (an i1), or where `when` (an i1, the condition a speculatively
/// inlined branch is taken under) is given, `ok || !when`.
Value orNotTaken(OpBuilder &b, Location loc, Value ok, Value when);
/// A kiln.guard that the sizes `a` and `b` are equal at run time; `what`
/// says what needs them equal. Fails the node when they differ at every
/// size in range. `guard`, if given, receives the kiln.guard. With `when`
/// (an i1), they need to be equal only where it is true.
LogicalResult guardSizesEqual(OnnxNode &node, const SymSize &a,
                              const SymSize &b, const Twine &what,
                              GuardOp *guard = nullptr, Value when = {});
/// `x` (an operand of an op inlined speculatively) seen at `size` along
/// `axis`: `x` itself where `taken` (an i1) holds, where a guard checks
/// that its size is `size`, and zeros of that size where it does not, so an
/// untaken branch whose sizes disagree reads in bounds. Fails (building
/// nothing) for an element type without a zero.
FailureOr<Value> fitUntakenOperand(OnnxNode &node, Value x, int64_t axis,
                                   const SymSize &size, Value taken);
/// `x` with the dimensions `pins` (axis, size) static: where one is symbolic
/// (an export that declares every dimension, channels too, as a dim_param)
/// a kiln.guard checks at run time that it has that size, `what` saying
/// what fixes it, and a view of `x` takes it static (in a Loop, Scan or If
/// body, where a failed guard does not stop the body, a gather of indices
/// clamped to the run-time size, so a wrong size still reads in bounds; an
/// axis that may be empty gets a row of zeros after it to read instead).
/// In a branch inlined to run whether or not it is taken, the guard holds
/// where the branch is taken and the axis is read through
/// fitUntakenOperand. `x` unchanged without symbolic sizes, or in such a
/// branch whose condition is not known (the caller's static check then
/// refuses it); fails where the size is outside the dimension's range.
FailureOr<Value> pinDims(OnnxNode &node, Value x,
                         ArrayRef<std::pair<int64_t, int64_t>> pins,
                         const Twine &what);
/// A kiln.guard that dimension `ax` of `a` and `bx` of `b` agree at run time,
/// unless their sizes are the same polynomial; `what` names the pair.
void guardSameSize(OnnxNode &node, Value a, int64_t ax, Value b, int64_t bx,
                   StringRef what);

} // namespace mlir::kiln

#endif
