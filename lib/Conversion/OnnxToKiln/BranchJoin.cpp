//===- BranchJoin.cpp - an If's result where the branches' sizes differ --===//
//
// An If on a run-time condition runs both branches (or each in a loop of
// one iteration or none) and joins their results (ControlFlow.cpp). Before
// the branches convert, two run-time sizes at the same axis look alike (both
// `?`), so the inliner marks the join (kIfJoinAttr) and decides nothing.
// Here, with the branches converted, their sizes are polynomials: where they
// are the same, the join is the plain Where or Concat; where they differ in
// one axis (a stride-2 Conv in one branch and a stride-1 Conv in the other
// over a symbolic length), the result is the taken branch's, cut out along
// that axis. Where they differ in several axes, both are flattened, joined
// the same way, and viewed at the taken branch's sizes.
//
//===----------------------------------------------------------------------===//
#include "SymbolicSizes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// The axes at which `a` and `b` (their dimensions from `from` on) have
/// sizes that are not the same polynomial.
SmallVector<int64_t> differingAxes(SymbolicSizes &S, Value a, Value b,
                                   int64_t from) {
  SmallVector<SymSize> da = S.dims(a), db = S.dims(b);
  SmallVector<int64_t> axes;
  for (int64_t d = from; d < (int64_t)da.size(); ++d)
    if (da[d] != db[d])
      axes.push_back(d);
  return axes;
}

/// `x` cut to `kept` elements along `axis` (from its start), recording the
/// sizes of the other axes.
Value cutAlong(OnnxNode &node, Value x, int64_t axis, Value kept) {
  OpBuilder &b = node.builder;
  Location loc = node.loc();
  SymbolicSizes &S = *node.sizes;
  SmallVector<SymSize> dims = S.dims(x);
  SmallVector<Value> offsets, sizes;
  SmallVector<int64_t> shape(typeOf(x).getShape());
  shape[axis] = ShapedType::kDynamic;
  for (auto [d, s] : llvm::enumerate(dims)) {
    offsets.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    sizes.push_back((int64_t)d == axis ? kept : S.materialize(b, loc, s));
  }
  auto slice = SizedSliceOp::create(
      b, loc, RankedTensorType::get(shape, typeOf(x).getElementType()), x,
      offsets, sizes,
      b.getDenseI64ArrayAttr(SmallVector<int64_t>(dims.size(), 1)));
  SmallVector<SymSize> out = dims;
  out[axis] = S.dim(slice.getResult(), axis);
  S.setDims(slice.getResult(), out);
  return slice.getResult();
}

/// The join where the sizes differ in several axes: each side flattened
/// (a branch result cut to all of its elements or none by `keep`; a stack,
/// whose one row or none already says it), the two concatenated, and the
/// elements viewed at the taken branch's sizes: `select(taken, t, e)` at
/// each differing axis, a size the data decides (bounded in code
/// generation by the larger of the two). The first `from` axes of the
/// result have size 1 (a stack's row) and are never among `axes`.
FailureOr<Value> joinFlat(OnnxNode &node, Value t, Value e, Value taken,
                          ArrayRef<int64_t> axes, int64_t from,
                          function_ref<Value(Value, int64_t)> keep) {
  OpBuilder &b = node.builder;
  Location loc = node.loc();
  SymbolicSizes &S = *node.sizes;
  SmallVector<Value> flat;
  for (auto [side, x] : llvm::enumerate(SmallVector<Value>{t, e})) {
    std::optional<SymSize> count = SymSize::constant(1);
    for (const SymSize &d : S.dims(x))
      if (count)
        count = SymSize::mul(*count, d);
    if (!count) {
      node.fail() << "the number of elements of the If's result overflows";
      return failure();
    }
    FailureOr<Value> r = reshapeToSizes(node, x, {*count});
    if (failed(r))
      return failure();
    flat.push_back(keep ? keep(*r, side) : *r);
  }
  FailureOr<Value> joined =
      build<ConcatOp>(node, ValueRange(flat), b.getI64IntegerAttr(0));
  if (failed(joined))
    return failure();
  auto tt = cast<RankedTensorType>(t.getType());
  SmallVector<SymSize> dt = S.dims(t), de = S.dims(e);
  SmallVector<int64_t> shape(from, 1);
  SmallVector<Value> sizes;
  SmallVector<SymSize> known(from, SymSize::constant(1));
  for (int64_t d = from; d < tt.getRank(); ++d) {
    if (!llvm::is_contained(axes, d)) {
      known.push_back(dt[d]);
      std::optional<int64_t> c = dt[d].getConstant();
      shape.push_back(c ? *c : ShapedType::kDynamic);
      if (!c)
        sizes.push_back(S.materialize(b, loc, dt[d]));
      continue;
    }
    known.push_back(SymSize::constant(0)); // set below
    shape.push_back(ShapedType::kDynamic);
    sizes.push_back(arith::SelectOp::create(b, loc, taken,
                                            S.materialize(b, loc, dt[d]),
                                            S.materialize(b, loc, de[d])));
  }
  auto op = SizedReshapeOp::create(
      b, loc, RankedTensorType::get(shape, tt.getElementType()), *joined,
      sizes);
  for (int64_t d : axes) {
    known[d] = S.dim(op.getResult(), d);
    S.boundByOptions(op.getResult(), d, {dt[d], de[d]});
  }
  S.setDims(op.getResult(), known);
  return op.getResult();
}
} // namespace

FailureOr<std::optional<Value>>
mlir::kiln::joinBranchResults(OnnxNode &node, Value cond, Value t, Value e) {
  SymbolicSizes &S = *node.sizes;
  auto tt = dyn_cast<RankedTensorType>(t.getType());
  auto et = dyn_cast<RankedTensorType>(e.getType());
  auto ct = dyn_cast<RankedTensorType>(cond.getType());
  if (!tt || !et || !ct || tt.getRank() != et.getRank() ||
      tt.getElementType() != et.getElementType() || !ct.hasStaticShape() ||
      ct.getNumElements() != 1)
    return std::optional<Value>();
  SmallVector<int64_t> axes = differingAxes(S, t, e, 0);
  if (axes.empty())
    return std::optional<Value>();
  int64_t axis = axes.size() > 1 ? 0 : axes.front();
  OpBuilder &b = node.builder;
  Location loc = node.loc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value taken = tensor::ExtractOp::create(
      b, loc, cond, SmallVector<Value>(ct.getRank(), zero));
  Value other = arith::XOrIOp::create(
      b, loc, taken, arith::ConstantIntOp::create(b, loc, 1, 1));
  // Each branch's result whole where taken, nothing of it where not; the
  // minimum tells the arena's bounds the cut is at most the whole.
  auto keep = [&](Value x, Value when) {
    Value whole = S.materialize(b, loc, S.dim(x, axis));
    Value kept = arith::SelectOp::create(b, loc, when, whole, zero);
    kept = arith::MinUIOp::create(b, loc, kept, whole);
    return cutAlong(node, x, axis, kept);
  };
  if (axes.size() > 1) {
    FailureOr<Value> r =
        joinFlat(node, t, e, taken, axes, 0, [&](Value flat, int64_t side) {
          return keep(flat, side == 0 ? taken : other);
        });
    if (failed(r))
      return failure();
    return std::optional<Value>(*r);
  }
  FailureOr<Value> joined =
      build<ConcatOp>(node, ValueRange{keep(t, taken), keep(e, other)},
                      b.getI64IntegerAttr(axis));
  if (failed(joined))
    return failure();
  return std::optional<Value>(*joined);
}

FailureOr<std::optional<Value>>
mlir::kiln::joinBranchStacks(OnnxNode &node, Value st, Value se) {
  SymbolicSizes &S = *node.sizes;
  auto tt = dyn_cast<RankedTensorType>(st.getType());
  auto et = dyn_cast<RankedTensorType>(se.getType());
  if (!tt || !et || tt.getRank() != et.getRank() || tt.getRank() < 2 ||
      tt.getElementType() != et.getElementType())
    return std::optional<Value>();
  SmallVector<int64_t> axes = differingAxes(S, st, se, 1);
  if (axes.empty())
    return std::optional<Value>();
  if (axes.size() > 1) {
    // The then stack has its row when the condition held.
    OpBuilder &b = node.builder;
    Location loc = node.loc();
    Value taken = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne, S.materialize(b, loc, S.dim(st, 0)),
        arith::ConstantIndexOp::create(b, loc, 0));
    FailureOr<Value> r = joinFlat(node, st, se, taken, axes, 1, nullptr);
    if (failed(r))
      return failure();
    return std::optional<Value>(*r);
  }
  // Stack j holds the branch's result as its one row when the branch ran
  // and no row when not: its row count n (1 or 0) folded into the axis
  // where the sizes differ gives the result whole or empty, and the two
  // joined along that axis are the taken branch's result.
  int64_t axis = axes.front(), rank = tt.getRank();
  OpBuilder &b = node.builder;
  SmallVector<Value> folded;
  for (Value x : {st, se}) {
    Value moved = x;
    if (axis > 1) { // rows next to the axis: [s1 .. n, s_axis ..]
      SmallVector<int64_t> perm;
      for (int64_t d = 1; d < axis; ++d)
        perm.push_back(d);
      perm.push_back(0);
      for (int64_t d = axis; d < rank; ++d)
        perm.push_back(d);
      FailureOr<Value> tr =
          build<TransposeOp>(node, x, b.getDenseI64ArrayAttr(perm));
      if (failed(tr))
        return failure();
      moved = *tr;
    }
    SmallVector<SymSize> dims = S.dims(moved), to;
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis - 1) {
        std::optional<SymSize> p = SymSize::mul(dims[d], dims[d + 1]);
        if (!p) {
          node.fail() << "the size of the If's result along axis " << axis - 1
                      << " overflows";
          return failure();
        }
        to.push_back(*p);
        ++d;
        continue;
      }
      to.push_back(dims[d]);
    }
    FailureOr<Value> r = reshapeToSizes(node, moved, to);
    if (failed(r))
      return failure();
    folded.push_back(*r);
  }
  FailureOr<Value> joined =
      build<ConcatOp>(node, ValueRange(folded), b.getI64IntegerAttr(axis - 1));
  if (failed(joined))
    return failure();
  // As one row, which the inliner then takes.
  SmallVector<SymSize> row{SymSize::constant(1)};
  llvm::append_range(row, S.dims(*joined));
  FailureOr<Value> r = reshapeToSizes(node, *joined, row);
  if (failed(r))
    return failure();
  return std::optional<Value>(*r);
}
