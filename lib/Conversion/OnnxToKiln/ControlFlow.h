//===- ControlFlow.h - the rewriting of If, Loop and Scan -------*- C++ -*-===//
//
// Internal to the ONNX -> Kiln conversion: the Inliner rewrites one ONNX
// control-flow node into the onnx ops it stands for (ControlFlow.cpp tells
// how). Its parts live in ControlFlow.cpp (If, Loop and what they share),
// ControlFlowScan.cpp (Scan) and SequenceAppends.cpp (lists appended in a
// loop).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CONVERSION_ONNXTOKILN_CONTROLFLOW_H
#define KILN_LIB_CONVERSION_ONNXTOKILN_CONTROLFLOW_H

#include "SymbolicSizes.h"

#include "llvm/ADT/StringMap.h"

namespace mlir::kiln {

/// Body operations times iterations beyond which a loop is not unrolled.
constexpr int64_t kMaxUnrolledOps = 250000;
/// The most rows a scan output of a loop may reserve in the arena.
constexpr int64_t kMaxScanRows = int64_t(1) << 24;

/// Branches with this many operations between them run only when taken.
constexpr int64_t kMinBranchOps = 48;

class Inliner {
public:
  Inliner(OpBuilder &b, const llvm::StringMap<int64_t> &opsets,
          SymbolicSizes &sizes)
      : b(b), opset(opsets.lookup("")), sizes(sizes) {}

  /// Rewrites `op`; false (after a diagnostic) when it cannot.
  bool rewrite(Operation *op);

  static bool isControlFlow(Operation *op);
  static int64_t countOps(Region &region);
  /// The value of `v` when it is an ONNX constant (Constant node or
  /// initializer) holding dense data.
  static std::optional<DenseElementsAttr> constantOf(Value v);
  static std::optional<int64_t> constantInt(Value v);
  static Type elementTypeOf(Value v);

private:
  /// An upper bound of the one integer `v` holds: a constant, a size with a
  /// range, or a Min, Max or Clip of such values (through reshapes), as
  /// `min(x.size(0), 3)` bounds a scripted loop's trip count.
  std::optional<int64_t> largestValue(Value v, int depth = 0);

  Operation *onnxOp(Location loc, StringRef type, ValueRange operands,
                    ArrayRef<NamedAttribute> attrs, Type elt);

  Value i64Constant(Location loc, int64_t v, bool vector);

  Value boolConstant(Location loc, bool v);

  /// The one axis in which If results `t` and `e` may differ in size (one
  /// size static and the other not, or both static and unequal); nullopt
  /// when their shapes agree, both sizes are run-time sizes, or they differ
  /// in several axes or beside an axis of two run-time sizes (joined once
  /// the branches convert, BranchJoin.cpp); -1 when their static shapes
  /// differ in rank.
  static std::optional<int64_t> differingAxis(Value t, Value e);

  /// `cond ? t : e` for tensors whose sizes may differ in `axis`.
  Value keepTaken(Location loc, Value cond, Value t, Value e, int64_t axis);

  /// x[index] along `axis`, dropping the axis (`index` a rank-0 i64).
  Value take(Location loc, Value x, int64_t index, int64_t axis);
  Value take(Location loc, Value x, Value index, int64_t axis);

  /// Stacks `parts` along a new axis `axis` (negative: from the end of the
  /// stacked rank, as ONNX's Unsqueeze and Concat both count it).
  Value stack(Location loc, ArrayRef<Value> parts, int64_t axis);

  /// Clones the single block of `region` before the insertion point with its
  /// arguments bound to `args`; returns the yielded values.
  SmallVector<Value> inlineBody(Region &region, ValueRange args);

  Region *regionNamed(Operation *op, StringRef name);

  FailureOr<SmallVector<Value>> rewriteIf(OnnxNode &node);

  /// Whether the branches of an If are worth running only when taken: one
  /// of them holds a contraction, a convolution, a recurrent op or a loop,
  /// or they hold kMinBranchOps operations between them.
  static bool expensiveBranches(Region &thenR, Region &elseR);

  /// The types of an If's results when each is ranked, the same in both
  /// branches (run-time sizes at the same axes), and the branches are plain
  /// bodies ending in a Yield; nullopt otherwise.
  std::optional<SmallVector<RankedTensorType>>
  branchTypes(Operation *op, Region &thenR, Region &elseR);

  /// An If of a run-time condition whose branches run only when taken: each
  /// branch a kiln.loop of one iteration or none that carries the results
  /// (of `types`, from branchTypes, all static), the else branch's from zeros,
  /// the then branch's from what the else branch's left. The branches' blocks
  /// become loop bodies, so a failure here is the node's error.
  FailureOr<SmallVector<Value>> branchLoops(OnnxNode &node, Value cond,
                                            Region &thenR, Region &elseR,
                                            ArrayRef<RankedTensorType> types);

  /// Whether every size in `region` (a branch) is known before it runs: no
  /// op whose result's size is what its data says (NonZero, Compress, a
  /// Loop, ...), and every size argument (Reshape's shape, Slice's ends,
  /// ...) computed from shapes and constants. A branch's stacked results
  /// need their sizes before the loop runs.
  bool sizedByShapes(Region &region);

  /// The same where a result has run-time sizes (a symbolic batch or
  /// length): each branch a kiln.loop of one iteration or none that stacks
  /// its results as scan outputs (their sizes computed before the loop),
  /// and each result the one row of the two stacks.
  FailureOr<SmallVector<Value>> branchScans(OnnxNode &node, Value cond,
                                            Region &thenR, Region &elseR,
                                            ArrayRef<RankedTensorType> types);

  /// Makes `region` (a branch) a Loop body of (iteration, condition,
  /// `carried`...) that yields true before its values; returns the trip
  /// count, 1 when `taken` is `runsWhenTrue` and 0 otherwise, built at the
  /// insertion point.
  Value branchBody(Location loc, Value taken, Region &region, bool runsWhenTrue,
                   ArrayRef<RankedTensorType> carried);

  LogicalResult checkUnrollSize(OnnxNode &node, Region &body,
                                int64_t iterations);

  /// A one-element condition as a rank-0 tensor, so that Where on it keeps
  /// the shape of what it selects.
  Value scalarCondition(Location loc, Value c);

  Value bothTrue(Location loc, Value a, Value c);

  /// A Loop that runs its body M times, M known only at run time (or too
  /// large to unroll), without an early exit: a kiln.loop whose body (still
  /// onnx ops) the conversion converts next. Scan outputs need a bound on
  /// M: a constant, or a size computed from bounded symbolic dimensions.
  FailureOr<SmallVector<Value>> runtimeLoop(OnnxNode &node, Region &body,
                                            ArrayRef<Value> initial, int64_t k,
                                            bool earlyExit);

  /// The kiln.loop of `trips` (a rank-0 i64) iterations of `body`, a Loop
  /// body (iteration, condition, loop-carried values...) that yields
  /// (condition, loop-carried values..., `k` scan slices) and whose
  /// condition stays true; scan outputs of at most `bound` rows.
  FailureOr<SmallVector<Value>> makeLoop(OnnxNode &node, Region &body,
                                         Value trips, ArrayRef<Value> initial,
                                         int64_t k, int64_t bound,
                                         bool earlyExit = false);

  FailureOr<SmallVector<Value>> rewriteLoop(OnnxNode &node);

  /// Scan's attributes, one value per scan input or output.
  struct ScanAxes {
    SmallVector<int64_t> inAxes, inDirs, outAxes, outDirs;
  };
  /// Scan 9+: N states, M scan inputs, unrolled over the scan axis when it
  /// is static and short enough, else (when `mayLoop`) a kiln.loop.
  FailureOr<SmallVector<Value>> unrollScan(OnnxNode &node, Region &body,
                                           ValueRange states, ValueRange scans,
                                           int64_t numOut, const ScanAxes &axes,
                                           bool mayLoop);
  /// A Scan over a run-time length (or one too long to unroll): its body
  /// becomes a Loop body that takes the slices it scans, in a kiln.loop.
  FailureOr<SmallVector<Value>> scanLoop(OnnxNode &node, Region &body,
                                         ValueRange states, ValueRange scans,
                                         int64_t numOut, const ScanAxes &axes);

  FailureOr<SmallVector<Value>> rewriteScan(OnnxNode &node);

  /// How ConcatFromSequence `concat` reads the sequence of `slice`s that a
  /// loop stacks as [M, slice...]: as is (torch.stack on axis 0), through a
  /// Transpose (`perm`, stacked on another axis) or a Reshape (`shape`,
  /// torch.cat on axis 0); nullopt when the slices' shape does not tell.
  struct StackedRead {
    SmallVector<int64_t> perm, shape;
  };
  std::optional<StackedRead> planRead(Operation *concat, Value slice);

  Value emitRead(Operation *concat, const StackedRead &read, Value stacked,
                 Type elt);

  /// `outs.append(y)` in a scripted loop exports as a loop-carried sequence:
  /// SequenceEmpty before the Loop, SequenceInsert(seq, y) at its end in the
  /// body, ConcatFromSequence after it. Such a sequence is a scan output of
  /// y (Kiln has no sequence values): returns a Loop that computes it so,
  /// with the ConcatFromSequence users rewritten, or `op` unchanged.
  Operation *foldSequenceAppends(Operation *op);

  OpBuilder &b;
  int64_t opset;
  SymbolicSizes &sizes;
  /// Whether what inlineBody clones may run without its results being used
  /// (a branch of a run-time If, an iteration after a loop may have
  /// stopped): the clones are marked kSpeculativeAttr (see inSubgraph).
  bool speculative = false;
  /// The kSpeculativeAttr value of speculative clones: the index of the
  /// condition under which they are used (0: not known).
  int64_t taken = 0;
  /// Registers the conditions under which the then and else branches of an
  /// If on `cond` are taken; (0, 0) where they cannot be known.
  std::pair<int64_t, int64_t> branchConditions(Value cond);
};

} // namespace mlir::kiln

#endif
