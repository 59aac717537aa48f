//===- Layout.cpp - channels-last window ops, transposes sunk ---*- C++ -*-===//
//
// Convolutions run NHWC (the layout MLIR's convolution vectorizer blocks
// well), ONNX graphs are NCHW. Lowering each NCHW convolution on its own
// costs a transpose of its input and of its output. This pass instead makes
// every 2-D convolution NHWC at the graph level, with explicit kiln.transpose
// ops at its input and output and its filter permuted to HWCF at compile time,
// then moves the output transposes down through ops that do not care about
// layout (elementwise with broadcasting, concat, pad, slice, nearest
// upsampling, gathers along one axis, reductions, batch normalization) and lets
// inverse pairs cancel. Pooling whose input arrives NHWC becomes NHWC too. In a
// ResNet the transposes that remain are one at the input; the global pool's
// transpose moves only unit dimensions and becomes a reshape.
//
// Transposes only move down (toward the results), so the rewriting ends. A
// transpose stops at an op it cannot pass; such an op sees the same values
// as before, so the pass never changes results, only where copies happen.
//
//===----------------------------------------------------------------------===//
#include "Elementwise.h"
#include "kiln/Dialect/Kiln/IR/ElementsUtils.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_LAYOUTPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace mlir::kiln

bool mlir::kiln::isUnaryElementwise(Operation *op) {
  if (!isa<KilnDialect>(op->getDialect()) || op->getNumOperands() != 1 ||
      op->getNumResults() != 1)
    return false;
  if (isa<CastOp>(op))
    return true;
  return op->hasTrait<OpTrait::SameOperandsAndResultType>() &&
         !isa<SoftmaxOp, IdentityOp>(op);
}

using namespace mlir;
using namespace mlir::kiln;

namespace {
constexpr int64_t kToNHWC[] = {0, 2, 3, 1};
constexpr int64_t kToNCHW[] = {0, 3, 1, 2};
constexpr int64_t kFCHWToHWCF[] = {2, 3, 1, 0};

/// Result dimension i is dimension perm[i] of `shape` (kiln.transpose's rule).
SmallVector<int64_t> permute(ArrayRef<int64_t> shape, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> out;
  for (int64_t p : perm)
    out.push_back(shape[p]);
  return out;
}

SmallVector<int64_t> inversePerm(ArrayRef<int64_t> perm) {
  SmallVector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inv[perm[i]] = i;
  return inv;
}

RankedTensorType permuteType(Type type, ArrayRef<int64_t> perm) {
  auto t = cast<RankedTensorType>(type);
  return RankedTensorType::get(permute(t.getShape(), perm),
                               t.getElementType());
}

/// `v` transposed by `perm`; a constant is permuted now (weights included).
Value transposeValue(PatternRewriter &rw, Location loc, Value v,
                     ArrayRef<int64_t> perm) {
  RankedTensorType type = permuteType(v.getType(), perm);
  if (auto c = v.getDefiningOp<ConstantOp>())
    if (std::optional<ElementsAttr> e = transposeElements(c.getValue(), perm, /*keepDense=*/true))
      return ConstantOp::create(rw, loc, type, *e);
  return TransposeOp::create(rw, loc, type, v, perm);
}

/// The transpose that defines `v`, if any.
TransposeOp transposeOf(Value v) { return v.getDefiningOp<TransposeOp>(); }

/// Ops whose operands broadcast (numpy rules) to the result, element by
/// element.
bool isBroadcastElementwise(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, PReluOp, ModOp,
             AndOp, OrOp, XorOp, EqualOp, LessOp, LessEqualOp, GreaterOp,
             GreaterEqualOp, WhereOp, BitShiftOp>(op);
}

/// How an operand that is not the transpose being sunk gets into the
/// untransposed frame: read from a transpose with the same permutation, an
/// inverse transpose of it that exists already, a constant permuted now, or a
/// reshape when the operand has at most one
/// dimension above 1 (a per-channel vector, a scalar). Decided before any IR
/// is built, so that a pattern that fails leaves the IR untouched.
struct OperandPlan {
  enum Kind { FromTranspose, Constant, Reshape } kind;
  Value value;
  ElementsAttr permuted;
  RankedTensorType type;
};

std::optional<OperandPlan> planOperand(Operation *user, Value v,
                                       ArrayRef<int64_t> perm,
                                       ArrayRef<int64_t> inv) {
  int64_t rank = perm.size();
  if (TransposeOp t = transposeOf(v); t && t.getPerm() == perm)
    return OperandPlan{OperandPlan::FromTranspose, t.getInput(), {},
                       t.getInput().getType()};
  // The value may already be transposed to NHWC for another user (a
  // residual branch's input also feeds a convolution). Only for NHWC: such
  // transposes are never sunk themselves (see SinkThroughElementwise), or
  // the two frames would trade places forever.
  if (perm == ArrayRef<int64_t>(kToNCHW))
    for (Operation *other : v.getUsers())
      if (auto t = dyn_cast<TransposeOp>(other);
          t && t.getPerm() == inv && t->getBlock() == user->getBlock() &&
          t->isBeforeInBlock(user))
        return OperandPlan{OperandPlan::FromTranspose, t.getResult(), {},
                           t.getType()};
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() > rank)
    return std::nullopt;
  // Broadcasting aligns to the right: the operand gains leading 1s.
  SmallVector<int64_t> full(rank - type.getRank(), 1);
  llvm::append_range(full, type.getShape());
  auto newType =
      RankedTensorType::get(permute(full, inv), type.getElementType());
  if (auto c = v.getDefiningOp<ConstantOp>(); c && type.hasStaticShape())
    if (std::optional<ElementsAttr> e =
            permuteElements(c.getValue(), full, inv, /*keepDense=*/true))
      return OperandPlan{OperandPlan::Constant, v, *e, newType};
  // One dimension that may be above 1 (a symbolic one counts: the weights
  // of a Resize over a run-time length, [?, 1]) keeps its place among the
  // elements whatever the permutation: a reshape, sized at run time from
  // the element count.
  if (llvm::count_if(full, [](int64_t d) { return d != 1; }) <= 1)
    return OperandPlan{OperandPlan::Reshape, v, {}, newType};
  return std::nullopt;
}

Value materialize(PatternRewriter &rw, Location loc, const OperandPlan &p) {
  switch (p.kind) {
  case OperandPlan::FromTranspose:
    return p.value;
  case OperandPlan::Constant:
    return ConstantOp::create(rw, loc, p.type, p.permuted);
  case OperandPlan::Reshape:
    return ReshapeOp::create(rw, loc, p.type, p.value);
  }
  llvm_unreachable("unknown operand plan");
}

/// Replaces `op` by a clone that computes in the untransposed frame (operands
/// `operands`, result permuted by `inv`, `update` adjusting attributes),
/// followed by a transpose by `perm` back to what `op` returned.
void rebuildUnder(PatternRewriter &rw, Operation *op, ArrayRef<Value> operands,
                  ArrayRef<int64_t> perm,
                  function_ref<void(Operation *)> update = nullptr) {
  Operation *clone = rw.clone(*op);
  rw.modifyOpInPlace(clone, [&] {
    clone->setOperands(operands);
    Value r = clone->getResult(0);
    r.setType(permuteType(r.getType(), inversePerm(perm)));
    if (update)
      update(clone);
  });
  rw.replaceOpWithNewOp<TransposeOp>(op, op->getResult(0).getType(),
                                     clone->getResult(0), perm);
}

/// conv2d(x, w) in NCHW -> transpose(conv2d(transpose(x), hwcf(w)) in NHWC).
struct ConvToNHWC : OpRewritePattern<Conv2DOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(Conv2DOp op,
                                PatternRewriter &rw) const override {
    if (op.isNHWC())
      return rw.notifyMatchFailure(op, "already NHWC");
    Location loc = op.getLoc();
    Value x = transposeValue(rw, loc, op.getInput(), kToNHWC);
    Value w = transposeValue(rw, loc, op.getFilter(), kFCHWToHWCF);
    SmallVector<Value> operands = {x, w};
    if (Value b = op.getBias())
      operands.push_back(b);
    rebuildUnder(rw, op, operands, kToNCHW, [&](Operation *c) {
      cast<Conv2DOp>(c).setLayout("NHWC");
    });
    return success();
  }
};

/// Pooling whose input is already an NHWC value seen through a transpose
/// runs NHWC (an isolated NCHW pooling is left alone: two transposes would
/// cost more than they save).
template <typename PoolOp>
struct PoolToNHWC : OpRewritePattern<PoolOp> {
  using OpRewritePattern<PoolOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(PoolOp op,
                                PatternRewriter &rw) const override {
    TransposeOp t = transposeOf(op.getInput());
    if (op.isNHWC() || !t || t.getPerm() != ArrayRef<int64_t>(kToNCHW))
      return rw.notifyMatchFailure(op, "input does not come from NHWC");
    rebuildUnder(rw, op, {t.getInput()}, kToNCHW, [&](Operation *c) {
      cast<PoolOp>(c).setLayout("NHWC");
    });
    return success();
  }
};

/// f(transpose(x)) -> transpose(f(x)) for elementwise f; with broadcasting,
/// every other operand is a transpose by the same permutation, a constant
/// or a vector (see planOperand).
struct SinkThroughElementwise : RewritePattern {
  SinkThroughElementwise(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rw) const override {
    if (!isUnaryElementwise(op) && !isBroadcastElementwise(op))
      return failure();
    auto rt = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!rt)
      return failure();
    ArrayRef<int64_t> perm;
    // Transposes to NHWC feed convolutions; they stay where they are.
    for (Value v : op->getOperands())
      if (TransposeOp t = transposeOf(v);
          t && t.getType().getRank() == rt.getRank() &&
          t.getPerm() != ArrayRef<int64_t>(kToNHWC)) {
        perm = t.getPerm();
        break;
      }
    if (perm.empty())
      return rw.notifyMatchFailure(op, "no operand is a transpose");
    SmallVector<int64_t> inv = inversePerm(perm);
    SmallVector<OperandPlan> plans;
    for (Value v : op->getOperands()) {
      std::optional<OperandPlan> p = planOperand(op, v, perm, inv);
      if (!p)
        return rw.notifyMatchFailure(
            op, "an operand cannot be permuted cheaply");
      plans.push_back(*p);
    }
    SmallVector<Value> operands;
    for (const OperandPlan &p : plans)
      operands.push_back(materialize(rw, op->getLoc(), p));
    rebuildUnder(rw, op, operands, perm);
    return success();
  }
};

/// concat(transpose(a), transpose(b), axis) -> transpose(concat(a, b, perm[axis])).
struct SinkThroughConcat : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rw) const override {
    TransposeOp first = transposeOf(op.getInputs().front());
    if (!first)
      return rw.notifyMatchFailure(op, "first input is not a transpose");
    ArrayRef<int64_t> perm = first.getPerm();
    SmallVector<Value> operands;
    for (Value v : op.getInputs()) {
      TransposeOp t = transposeOf(v);
      if (!t || t.getPerm() != perm)
        return rw.notifyMatchFailure(op, "inputs are not transposed alike");
      operands.push_back(t.getInput());
    }
    int64_t axis = perm[op.getAxis()];
    rebuildUnder(rw, op, operands, perm,
                 [&](Operation *c) { cast<ConcatOp>(c).setAxis(axis); });
    return success();
  }
};

/// pad(transpose(x)) -> transpose(pad(x)) with the pads permuted.
struct SinkThroughPad : OpRewritePattern<PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PadOp op, PatternRewriter &rw) const override {
    TransposeOp t = transposeOf(op.getInput());
    if (!t)
      return rw.notifyMatchFailure(op, "input is not a transpose");
    ArrayRef<int64_t> perm = t.getPerm(), pads = op.getPads();
    int64_t rank = perm.size();
    SmallVector<int64_t> newPads(2 * rank);
    for (int64_t i = 0; i < rank; ++i) {
      newPads[perm[i]] = pads[i];
      newPads[rank + perm[i]] = pads[rank + i];
    }
    rebuildUnder(rw, op, {t.getInput()}, perm,
                 [&](Operation *c) { cast<PadOp>(c).setPads(newPads); });
    return success();
  }
};

/// upsample(transpose(x)) -> transpose(upsample(x)) with the scales
/// permuted: a nearest upsampling between NHWC convolutions stays NHWC,
/// where its channels are the contiguous (vectorized) dimension.
struct SinkThroughUpsample : OpRewritePattern<UpsampleNearestOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(UpsampleNearestOp op,
                                PatternRewriter &rw) const override {
    TransposeOp t = transposeOf(op.getInput());
    if (!t)
      return rw.notifyMatchFailure(op, "input is not a transpose");
    SmallVector<int64_t> scales =
        permute(op.getScales(), inversePerm(t.getPerm()));
    rebuildUnder(rw, op, {t.getInput()}, t.getPerm(), [&](Operation *c) {
      cast<UpsampleNearestOp>(c).setScales(scales);
    });
    return success();
  }
};

/// gather(transpose(x), idx, axis) -> transpose(gather(x, idx, perm[axis]))
/// for 1-D indices (the result keeps the input's rank and dimension order):
/// the per-axis passes of a linear or cubic Resize between NHWC
/// convolutions then gather whole rows or channel vectors, contiguous in
/// NHWC, instead of running between two transposes.
struct SinkThroughGather : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op,
                                PatternRewriter &rw) const override {
    TransposeOp t = transposeOf(op.getInput());
    if (!t)
      return rw.notifyMatchFailure(op, "input is not a transpose");
    auto it = dyn_cast<RankedTensorType>(op.getIndices().getType());
    if (!it || it.getRank() != 1)
      return rw.notifyMatchFailure(op, "indices are not 1-D");
    int64_t newAxis = t.getPerm()[op.getAxis()]; // verified in range
    rebuildUnder(rw, op, {t.getInput(), op.getIndices()}, t.getPerm(),
                 [&](Operation *c) { cast<GatherOp>(c).setAxis(newAxis); });
    return success();
  }
};

/// slice(transpose(x)) -> transpose(slice(x)) with the box permuted.
struct SinkThroughSlice : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rw) const override {
    TransposeOp t = transposeOf(op.getInput());
    if (!t)
      return rw.notifyMatchFailure(op, "input is not a transpose");
    SmallVector<int64_t> inv = inversePerm(t.getPerm());
    SmallVector<int64_t> offsets = permute(op.getOffsets(), inv),
                         sizes = permute(op.getSizes(), inv),
                         strides = permute(op.getStrides(), inv);
    rebuildUnder(rw, op, {t.getInput()}, t.getPerm(), [&](Operation *c) {
      auto s = cast<SliceOp>(c);
      s.setOffsets(offsets);
      s.setSizes(sizes);
      s.setStrides(strides);
    });
    return success();
  }
};

/// reduce(transpose(x), axes) -> transpose(reduce(x, perm[axes])); without
/// keepdims the transpose permutes only the dimensions left (often none).
template <typename ReduceOp>
struct SinkThroughReduce : OpRewritePattern<ReduceOp> {
  using OpRewritePattern<ReduceOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rw) const override {
    TransposeOp t = transposeOf(op.getInput());
    if (!t)
      return rw.notifyMatchFailure(op, "input is not a transpose");
    ArrayRef<int64_t> perm = t.getPerm();
    int64_t rank = perm.size();
    SmallVector<int64_t> axes;
    for (int64_t a : op.getAxes())
      axes.push_back(perm[a]);
    llvm::sort(axes);
    SmallVector<int64_t> resultPerm;
    if (op.getKeepdims()) {
      resultPerm.assign(perm.begin(), perm.end());
    } else {
      // Result position r holds the r-th kept dimension i of the transposed
      // input, which is dimension perm[i] of x; the new reduction keeps x's
      // dimensions in order, so it sits at perm[i]'s rank among them.
      for (int64_t i = 0; i < rank; ++i) {
        if (llvm::is_contained(op.getAxes(), i))
          continue;
        int64_t pos = 0;
        for (int64_t d = 0; d < perm[i]; ++d)
          pos += !llvm::is_contained(axes, d);
        resultPerm.push_back(pos);
      }
    }
    auto xt = cast<RankedTensorType>(t.getInput().getType());
    SmallVector<int64_t> shape;
    for (int64_t d = 0; d < rank; ++d) {
      if (!llvm::is_contained(axes, d))
        shape.push_back(xt.getDimSize(d));
      else if (op.getKeepdims())
        shape.push_back(1);
    }
    auto reduced = ReduceOp::create(
        rw, op.getLoc(), RankedTensorType::get(shape, xt.getElementType()),
        t.getInput(), axes, op.getKeepdims());
    rw.replaceOpWithNewOp<TransposeOp>(op, op.getType(), reduced, resultPerm);
    return success();
  }
};

/// batch_norm(transpose(x)) -> x * s + t with per-channel s and t shaped to
/// broadcast over the transposed value; the multiply and add then sink.
struct DecomposeTransposedBatchNorm : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BatchNormOp op,
                                PatternRewriter &rw) const override {
    if (!transposeOf(op.getInput()))
      return rw.notifyMatchFailure(op, "input is not a transpose");
    RankedTensorType rt = op.getType();
    auto vt = dyn_cast<RankedTensorType>(op.getScale().getType());
    if (rt.getRank() < 2 || !vt || vt.getRank() != 1 || !vt.hasStaticShape())
      return rw.notifyMatchFailure(op, "needs static 1-D parameters");
    Location loc = op.getLoc();
    Type elt = rt.getElementType();
    auto one = [&](double v) -> Value {
      auto t = RankedTensorType::get({1}, elt);
      return ConstantOp::create(
          rw, loc, t,
          DenseElementsAttr::get(t, rw.getFloatAttr(elt, v).getValue()));
    };
    // s = scale / sqrt(var + eps), t = bias - mean * s, as ONNX defines it.
    Value ve = AddOp::create(rw, loc, vt, op.getVariance(),
                             one(op.getEpsilon().convertToDouble()));
    Value s = DivOp::create(rw, loc, vt, op.getScale(),
                            SqrtOp::create(rw, loc, vt, ve));
    Value shift = SubOp::create(rw, loc, vt, op.getBias(),
                                MulOp::create(rw, loc, vt, op.getMean(), s));
    // [C] -> [C, 1, ..., 1], channel on dimension 1 after broadcasting.
    SmallVector<int64_t> shape(rt.getRank() - 1, 1);
    shape[0] = vt.getDimSize(0);
    auto bt = RankedTensorType::get(shape, elt);
    Value y = MulOp::create(rw, loc, rt, op.getInput(),
                            ReshapeOp::create(rw, loc, bt, s));
    rw.replaceOpWithNewOp<AddOp>(op, rt, y,
                                 ReshapeOp::create(rw, loc, bt, shift));
    return success();
  }
};

/// A reshape that only removes or adds 1s after a transpose (a Conv1d's
/// NCHW result [n, c, 1, w] viewed as [n, c, w]) moves above it: the
/// untransposed value drops its 1s and gains the new ones first, and a
/// transpose of what remains follows, free to sink further (through the
/// elementwise ops and reductions after it, or into the next Conv1d's NHWC
/// transpose).
struct SinkThroughUnitReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rw) const override {
    auto t = op.getInput().getDefiningOp<TransposeOp>();
    if (!t || !t->hasOneUse())
      return rw.notifyMatchFailure(op, "not the one use of a transpose");
    RankedTensorType tt = t.getType(), out = op.getType();
    RankedTensorType xt = t.getInput().getType();
    std::optional<SmallVector<int64_t>> sources = unitDimsReshape(tt, out);
    if (!sources)
      return rw.notifyMatchFailure(op, "regroups dimensions above 1");
    ArrayRef<int64_t> perm = t.getPerm();
    // The reshape's 1s lead (a 1 innermost would leave the ops after it
    // nothing to vectorize: [1, w, c] reduces over w in vectors of c, [w, c,
    // 1] one element at a time); then the untransposed value's dimensions
    // above 1, in its order.
    int64_t ones = llvm::count(*sources, -1);
    SmallVector<int64_t> kept;
    for (int64_t d = 0; d < xt.getRank(); ++d)
      if (xt.getDimSize(d) != 1)
        kept.push_back(d);
    SmallVector<int64_t> shape(ones, 1);
    for (int64_t d : kept)
      shape.push_back(xt.getDimSize(d));
    SmallVector<int64_t> newPerm;
    int64_t one = 0;
    for (int64_t src : *sources)
      newPerm.push_back(
          src < 0 ? one++
                  : ones + (llvm::find(kept, perm[src]) - kept.begin()));
    auto rt = RankedTensorType::get(shape, xt.getElementType());
    Value r = ReshapeOp::create(rw, op.getLoc(), rt, t.getInput());
    if (llvm::equal(newPerm, llvm::seq<int64_t>(0, newPerm.size())))
      rw.replaceOp(op, r);
    else
      rw.replaceOpWithNewOp<TransposeOp>(op, out, r, newPerm);
    return success();
  }
};

/// A transpose that keeps every dimension above 1 in its order only moves
/// unit dimensions: it is a reshape (free; one of run-time sizes keeps them
/// in order, unitDimsReshape), and reshapes compose.
struct TransposeOfUnitDimsToReshape : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rw) const override {
    auto xt = dyn_cast<RankedTensorType>(op.getInput().getType());
    if (!xt)
      return rw.notifyMatchFailure(op, "unranked");
    int64_t last = -1;
    for (int64_t p : op.getPerm()) {
      if (xt.getDimSize(p) == 1)
        continue;
      if (p < last)
        return rw.notifyMatchFailure(op, "moves a dimension above 1");
      last = p;
    }
    rw.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), op.getInput());
    return success();
  }
};

struct LayoutPass : mlir::kiln::impl::LayoutPassBase<LayoutPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns
        .add<ConvToNHWC, PoolToNHWC<MaxPool2DOp>, PoolToNHWC<AvgPool2DOp>,
             SinkThroughElementwise, SinkThroughConcat, SinkThroughPad,
             SinkThroughSlice, SinkThroughUpsample, SinkThroughGather,
             SinkThroughReduce<ReduceMeanOp>, SinkThroughReduce<ReduceSumOp>,
             SinkThroughReduce<ReduceMaxOp>, SinkThroughReduce<ReduceMinOp>,
             SinkThroughReduce<ReduceProdOp>, DecomposeTransposedBatchNorm,
             SinkThroughUnitReshape, TransposeOfUnitDimsToReshape>(ctx);
    TransposeOp::getCanonicalizationPatterns(patterns, ctx);
    ReshapeOp::getCanonicalizationPatterns(patterns, ctx);
    GlobalAvgPoolOp::getCanonicalizationPatterns(patterns, ctx);
    GreedyRewriteConfig config;
    config.setMaxIterations(64);
    // Not converging within the limit leaves a correct graph with some
    // transposes unsunk; that is a missed optimization, not an error.
    (void)applyPatternsGreedily(func, std::move(patterns), config);
  }
};
} // namespace
