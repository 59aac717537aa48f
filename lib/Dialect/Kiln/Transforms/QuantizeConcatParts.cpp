//===- QuantizeConcatParts.cpp - quantize a concatenation by parts -*- C++
//-*-===//
//
// A U-Net decoder (and SqueezeNet's fire modules, DenseNet's blocks) feed a
// concatenation to a convolution. Quantized dynamically (ONNX Runtime's
// quantize_dynamic), the concatenation feeds DynamicQuantizeLinear, which
// imports as a range and a quantizing chain:
//
//   c = concat(a, b)
//   lo = reduce_min(c, all axes)   hi = reduce_max(c, all axes)
//   q = cast(clip(round(c / scale) + zp)) to ui8
//
// so the f32 concatenation is written (a copy of each part) only to be read
// twice more. This pass takes the range and the quantization part by part:
//
//   lo = min(reduce_min(a), reduce_min(b))        (hi likewise)
//   q = concat(cast(clip(round(a / scale) + zp)), cast(...b...))
//
// which computes the same values (the minimum of the parts is the minimum of
// the whole; elementwise ops with one-element operands commute with the
// concatenation), writes the 8-bit parts only, and leaves each part's range
// to be taken in the loop that produces the part. Only quantizing chains are
// moved: elementwise ops, each the only user of the one before, whose other
// operands are one element each, ending in a cast to an integer of at most
// 8 bits. And only where a part would be copied into the concatenation (it
// is read elsewhere too, as a skip connection is, or is an argument): parts
// made for the concatenation alone are written in place, and splitting
// would then only add passes (SqueezeNet's fire modules at 2 threads ran 7%
// slower split: a range pass and a quantizing pass per part).
//
//===----------------------------------------------------------------------===//
#include "Elementwise.h"
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_QUANTIZECONCATPARTSPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Whether `t` holds one element and broadcasts against `rank` dimensions
/// without adding any.
bool isOneElement(Type t, int64_t rank) {
  auto r = dyn_cast<RankedTensorType>(t);
  return r && r.hasStaticShape() && r.getNumElements() == 1 &&
         r.getRank() <= rank;
}

/// Whether `op` applies a function to each element of `v`, its other
/// operands being one element each (of the binary ops, the arithmetic a
/// quantizing chain uses).
bool isElementwiseOn(Operation *op, Value v) {
  if (isUnaryElementwise(op))
    return op->getOperand(0) == v;
  if (!isa<AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp>(op))
    return false;
  int64_t rank = cast<RankedTensorType>(v.getType()).getRank();
  return llvm::count(op->getOperands(), v) == 1 &&
         llvm::all_of(op->getOperands(), [&](Value o) {
           return o == v || isOneElement(o.getType(), rank);
         });
}

/// The quantizing chain that starts at `head`, a user of `v`: elementwise
/// ops, each the only user of the one before, the last one a cast to an
/// integer of at most 8 bits. Empty when there is none.
SmallVector<Operation *> quantizingChain(Operation *head, Value v) {
  SmallVector<Operation *> chain;
  Operation *op = head;
  while (isElementwiseOn(op, v) &&
         op->getResult(0).getType() ==
             cast<RankedTensorType>(v.getType())
                 .clone(getElementTypeOrSelf(op->getResult(0).getType()))) {
    chain.push_back(op);
    Type elt = getElementTypeOrSelf(op->getResult(0).getType());
    if (isa<CastOp>(op) && elt.isInteger() && elt.getIntOrFloatBitWidth() <= 8)
      return chain;
    v = op->getResult(0);
    if (!v.hasOneUse())
      break;
    op = *v.getUsers().begin();
  }
  return {};
}

/// reduce_min / reduce_max over axes that include the concatenation's.
bool isRangeOf(Operation *op, ConcatOp concat) {
  if (auto r = dyn_cast<ReduceMinOp>(op))
    return llvm::is_contained(r.getAxes(), concat.getAxis());
  if (auto r = dyn_cast<ReduceMaxOp>(op))
    return llvm::is_contained(r.getAxes(), concat.getAxis());
  return false;
}

/// The same reduction as `op` of each part of `concat`, combined by
/// kiln.min / kiln.max (both propagate NaN, as the reductions do).
template <typename Reduce, typename Combine>
void rangeByParts(PatternRewriter &rewriter, Reduce op, ConcatOp concat) {
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value range;
  for (Value part : concat.getInputs()) {
    Value r = Reduce::create(rewriter, loc, op.getType(), part,
                             op.getAxesAttr(), op.getKeepdimsAttr());
    range =
        range
            ? Combine::create(rewriter, loc, op.getType(), range, r).getResult()
            : r;
  }
  rewriter.replaceOp(op, range);
}

/// A concatenation read by ranges and one quantizing chain, as
/// DynamicQuantizeLinear imports, when some part would be copied into it
/// (a part read elsewhere too, or a function argument: a part made for the
/// concatenation alone is written in place, and then splitting would only
/// add a range pass and a quantizing pass per part).
struct QuantizeParts : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConcatOp concat,
                                PatternRewriter &rewriter) const override {
    Value c = concat.getResult();
    SmallVector<Operation *> ranges, chain;
    for (Operation *user : c.getUsers()) {
      if (isRangeOf(user, concat)) {
        ranges.push_back(user);
        continue;
      }
      if (!chain.empty() || (chain = quantizingChain(user, c)).empty())
        return failure();
    }
    bool copied = llvm::any_of(concat.getInputs(), [&](Value part) {
      return !part.getDefiningOp() ||
             llvm::any_of(part.getUsers(),
                          [&](Operation *u) { return u != concat; });
    });
    if (chain.empty() || !copied)
      return failure();
    for (Operation *r : ranges) {
      if (auto lo = dyn_cast<ReduceMinOp>(r))
        rangeByParts<ReduceMinOp, MinOp>(rewriter, lo, concat);
      else
        rangeByParts<ReduceMaxOp, MaxOp>(rewriter, cast<ReduceMaxOp>(r),
                                         concat);
    }
    Operation *last = chain.back();
    rewriter.setInsertionPoint(last);
    SmallVector<Value> quantized;
    for (Value part : concat.getInputs()) {
      auto partType = cast<RankedTensorType>(part.getType());
      IRMapping map;
      map.map(c, part);
      for (Operation *op : chain) {
        Operation *copy = rewriter.clone(*op, map);
        copy->getResult(0).setType(
            partType.clone(getElementTypeOrSelf(op->getResult(0).getType())));
        map.map(op->getResult(0), copy->getResult(0));
      }
      quantized.push_back(map.lookup(last->getResult(0)));
    }
    rewriter.replaceOpWithNewOp<ConcatOp>(last, last->getResult(0).getType(),
                                          quantized, concat.getAxisAttr());
    return success();
  }
};

struct QuantizeConcatPartsPass
    : mlir::kiln::impl::QuantizeConcatPartsPassBase<QuantizeConcatPartsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<QuantizeParts>(&getContext());
    // An optimization whose every rewrite leaves valid IR: not reaching a
    // fixed point keeps what was split, and is no error.
    (void)applyPatternsGreedily(getOperation(), std::move(patterns));
  }
};
} // namespace
