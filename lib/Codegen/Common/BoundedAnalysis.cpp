//===- BoundedAnalysis.cpp - analysis models of bounded cost ----*- C++ -*-===//
//
// MLIR's ValueBounds analysis asks each op for facts about its index results
// and tensor sizes, and one-shot bufferization and empty-tensor elimination
// ask it whether two slices are the same or disjoint. Upstream answers both
// by exploring the whole backward slice of the sizes involved, and its scf.for
// and scf.if answer by nesting a further comparison of what their regions
// yield. A chain of loops whose results feed the next loop's inits (a
// detection head's per-class NonZero, TopK and GatherND, concatenated) then
// builds a Presburger system over everything before it for every slice pair
// bufferization looks at, with one nested comparison per loop: one-shot
// bufferization never finished on torchvision's SSDlite.
//
// Kiln's models answer in bounded time:
// - scf.for: an iter_arg and its result keep the init's sizes when what the
//   body yields is written into the iter_arg (through destination-style ops,
//   casts, and nested loops and ifs that do the same); an index iter_arg the
//   body yields unchanged equals its init;
// - scf.if: a result has the sizes, or the value, both branches share;
// - tensor.extract_slice and tensor.insert_slice compare their slices with
//   another subset op's on the same tensor: equal offsets, sizes and strides
//   are seen in the IR first; otherwise ValueBounds explores at most
//   kValueBudget values of their backward slices and compares once.
// Anything not proven gets no constraint, which is always sound: bufferization
// copies where it cannot prove two slices equal or apart.
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/Common/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SubsetOpInterface.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

using namespace mlir;

namespace {
/// How many ops a size is traced through; a longer chain gets no constraint.
constexpr int kMaxSteps = 256;

/// How many values of the sizes' backward slices one slice comparison
/// explores. Tiled code's offsets are a few ops from their loop's induction
/// variable; anything further is a run-time size the comparison cannot use.
constexpr int kValueBudget = 64;

/// The value whose sizes `v` has, found by following destination-style ops
/// to their destinations, casts to their sources, and loops and ifs whose
/// results keep their inits' sizes. `steps` bounds the walk.
Value shapeRoot(Value v, int &steps);

/// Whether every iteration of `forOp` yields, for iter_arg `i`, a tensor
/// sized as the iter_arg.
bool loopKeepsSizes(scf::ForOp forOp, unsigned i, int &steps) {
  Value yielded = forOp.getYieldedValues()[i];
  return shapeRoot(yielded, steps) == forOp.getRegionIterArgs()[i];
}

Value shapeRoot(Value v, int &steps) {
  while (++steps < kMaxSteps) {
    auto result = dyn_cast<OpResult>(v);
    if (!result)
      return v;
    Operation *op = result.getOwner();
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(op)) {
      if (!dps.hasPureTensorSemantics())
        return v;
      v = dps.getTiedOpOperand(result)->get();
      continue;
    }
    if (auto cast = dyn_cast<tensor::CastOp>(op)) {
      v = cast.getSource();
      continue;
    }
    if (auto forOp = dyn_cast<scf::ForOp>(op)) {
      unsigned i = result.getResultNumber();
      if (!loopKeepsSizes(forOp, i, steps))
        return v;
      v = forOp.getInitArgs()[i];
      continue;
    }
    if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      unsigned i = result.getResultNumber();
      if (ifOp.getElseRegion().empty())
        return v;
      Value thenRoot = shapeRoot(ifOp.thenYield().getOperand(i), steps);
      Value elseRoot = shapeRoot(ifOp.elseYield().getOperand(i), steps);
      if (thenRoot != elseRoot)
        return v;
      v = thenRoot;
      continue;
    }
    return v;
  }
  return v;
}

/// The iter_arg index `value` (an iter_arg or a result of `forOp`) is for.
unsigned iterArgIndex(scf::ForOp forOp, Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getArgNumber() - forOp.getNumInductionVars();
  return cast<OpResult>(value).getResultNumber();
}

struct ForOpBounds
    : public ValueBoundsOpInterface::ExternalModel<ForOpBounds, scf::ForOp> {
  void populateBoundsForIndexValue(Operation *op, Value value,
                                   ValueBoundsConstraintSet &cstr) const {
    auto forOp = cast<scf::ForOp>(op);
    if (value == forOp.getInductionVar()) {
      cstr.bound(value) >= forOp.getLowerBound();
      cstr.bound(value) < forOp.getUpperBound();
      return;
    }
    unsigned i = iterArgIndex(forOp, value);
    if (forOp.getYieldedValues()[i] == forOp.getRegionIterArgs()[i])
      cstr.bound(value) == forOp.getInitArgs()[i];
  }

  void populateBoundsForShapedValueDim(Operation *op, Value value, int64_t dim,
                                       ValueBoundsConstraintSet &cstr) const {
    auto forOp = cast<scf::ForOp>(op);
    unsigned i = iterArgIndex(forOp, value);
    int steps = 0;
    if (loopKeepsSizes(forOp, i, steps))
      cstr.bound(value)[dim] == cstr.getExpr(forOp.getInitArgs()[i], dim);
  }
};

struct IfOpBounds
    : public ValueBoundsOpInterface::ExternalModel<IfOpBounds, scf::IfOp> {
  void populateBoundsForIndexValue(Operation *op, Value value,
                                   ValueBoundsConstraintSet &cstr) const {
    auto ifOp = cast<scf::IfOp>(op);
    unsigned i = cast<OpResult>(value).getResultNumber();
    Value thenValue = ifOp.thenYield().getOperand(i);
    Value elseValue = ifOp.elseYield().getOperand(i);
    if (thenValue == elseValue) {
      cstr.bound(value) == thenValue;
      return;
    }
    // Two constants bound the result between them.
    std::optional<int64_t> a = getConstantIntValue(thenValue);
    std::optional<int64_t> b = getConstantIntValue(elseValue);
    if (a && b) {
      cstr.bound(value) >= std::min(*a, *b);
      cstr.bound(value) <= std::max(*a, *b);
    }
  }

  void populateBoundsForShapedValueDim(Operation *op, Value value, int64_t dim,
                                       ValueBoundsConstraintSet &cstr) const {
    auto ifOp = cast<scf::IfOp>(op);
    unsigned i = cast<OpResult>(value).getResultNumber();
    int steps = 0;
    Value thenRoot = shapeRoot(ifOp.thenYield().getOperand(i), steps);
    Value elseRoot = shapeRoot(ifOp.elseYield().getOperand(i), steps);
    if (thenRoot == elseRoot)
      cstr.bound(value)[dim] == cstr.getExpr(thenRoot, dim);
  }
};
/// A constraint set that explores at most kValueBudget values.
class BudgetedConstraints : public ValueBoundsConstraintSet {
public:
  BudgetedConstraints(MLIRContext *ctx, int &explored)
      : ValueBoundsConstraintSet(ctx, [&explored](Value, std::optional<int64_t>,
                                                  ValueBoundsConstraintSet &) {
          return ++explored > kValueBudget;
        }) {}
};

using Cmp = ValueBoundsConstraintSet::ComparisonOperator;
using Variable = ValueBoundsConstraintSet::Variable;

/// Whether `lhs cmp rhs` is proven within the budget.
bool proven(MLIRContext *ctx, const Variable &lhs, Cmp cmp,
            const Variable &rhs) {
  int explored = 0;
  BudgetedConstraints cstr(ctx, explored);
  return cstr.populateAndCompare(lhs, cmp, rhs);
}

/// Whether `a` and `b` are the same index: the same value or constant first,
/// then within the budget.
bool provenEqual(MLIRContext *ctx, OpFoldResult a, OpFoldResult b) {
  if (isEqualConstantIntOrValue(a, b))
    return true;
  if (getConstantIntValue(a) && getConstantIntValue(b))
    return false;
  return proven(ctx, Variable(a), Cmp::EQ, Variable(b));
}

/// The end of dimension `d` of `slice`, offset + size * stride, when the
/// stride is a constant.
std::optional<Variable>
sliceEnd(MLIRContext *ctx, const HyperrectangularSlice &slice, unsigned d) {
  std::optional<int64_t> stride =
      getConstantIntValue(slice.getMixedStrides()[d]);
  if (!stride)
    return std::nullopt;
  AffineExpr offset, size;
  bindSymbols(ctx, offset, size);
  AffineMap end = AffineMap::get(0, 2, offset + size * *stride);
  return Variable(end, {Variable(slice.getMixedOffsets()[d]),
                        Variable(slice.getMixedSizes()[d])});
}

/// Whether `a` ends before `b` begins in dimension `d`.
bool endsBefore(MLIRContext *ctx, const HyperrectangularSlice &a,
                const HyperrectangularSlice &b, unsigned d) {
  std::optional<Variable> end = sliceEnd(ctx, a, d);
  if (!end)
    return false;
  return proven(ctx, *end, Cmp::LE, Variable(b.getMixedOffsets()[d]));
}

/// The slices of `op` and `candidate`, when both are hyperrectangular slices
/// of the same rank on equivalent tensors.
std::optional<std::pair<HyperrectangularSlice, HyperrectangularSlice>>
comparableSlices(Operation *op, SubsetOpInterface candidate,
                 function_ref<bool(Value, Value)> equivalenceFn) {
  auto subsetOp = cast<SubsetOpInterface>(op);
  FailureOr<HyperrectangularSlice> other =
      candidate.getAccessedHyperrectangularSlice();
  if (failed(other))
    return std::nullopt;
  if (!equivalenceFn(subsetOp.getTensorContainer(),
                     candidate.getTensorContainer()))
    return std::nullopt;
  HyperrectangularSlice mine(cast<OffsetSizeAndStrideOpInterface>(op));
  if (mine.getMixedOffsets().size() != other->getMixedOffsets().size())
    return std::nullopt;
  return std::make_pair(mine, *other);
}

template <typename SliceOp>
struct SliceSubset
    : public SubsetOpInterface::ExternalModel<SliceSubset<SliceOp>, SliceOp> {
  FailureOr<HyperrectangularSlice>
  getAccessedHyperrectangularSlice(Operation *op) const {
    return HyperrectangularSlice(cast<OffsetSizeAndStrideOpInterface>(op));
  }

  bool operatesOnEquivalentSubset(
      Operation *op, SubsetOpInterface candidate,
      function_ref<bool(Value, Value)> equivalenceFn) const {
    auto slices = comparableSlices(op, candidate, equivalenceFn);
    if (!slices)
      return false;
    auto &[a, b] = *slices;
    MLIRContext *ctx = op->getContext();
    for (unsigned d = 0, e = a.getMixedOffsets().size(); d < e; ++d)
      if (!provenEqual(ctx, a.getMixedOffsets()[d], b.getMixedOffsets()[d]) ||
          !provenEqual(ctx, a.getMixedSizes()[d], b.getMixedSizes()[d]) ||
          !provenEqual(ctx, a.getMixedStrides()[d], b.getMixedStrides()[d]))
        return false;
    return true;
  }

  bool operatesOnDisjointSubset(
      Operation *op, SubsetOpInterface candidate,
      function_ref<bool(Value, Value)> equivalenceFn) const {
    auto slices = comparableSlices(op, candidate, equivalenceFn);
    if (!slices)
      return false;
    auto &[a, b] = *slices;
    MLIRContext *ctx = op->getContext();
    for (unsigned d = 0, e = a.getMixedOffsets().size(); d < e; ++d)
      if (endsBefore(ctx, a, b, d) || endsBefore(ctx, b, a, d))
        return true;
    return false;
  }
};
} // namespace

void mlir::kiln::registerBoundedAnalysisModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, scf::SCFDialect *) {
    scf::ForOp::attachInterface<ForOpBounds>(*ctx);
    scf::IfOp::attachInterface<IfOpBounds>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::ExtractSliceOp::attachInterface<
        SliceSubset<tensor::ExtractSliceOp>>(*ctx);
    tensor::InsertSliceOp::attachInterface<SliceSubset<tensor::InsertSliceOp>>(
        *ctx);
  });
}
