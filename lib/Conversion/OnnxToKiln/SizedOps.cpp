//===- SizedOps.cpp - shape arguments the graph computes ---------*- C++ -*-===//
//
// Shape, Reshape, Expand, ConstantOfShape and Slice when a size is symbolic:
// the shape argument's elements come from SymbolicSizes (docs/shapes.md,
// "Shapes the graph computes"), each run-time size of the result becomes an
// `index` operand of a kiln.sized_* op, and the result's dimensions are
// recorded so that later nodes can compare them.
//
//===----------------------------------------------------------------------===//
#include "ShapeInputs.h"
#include "SymbolicSizes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include <numeric>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Not applicable: the static conversion runs.
SmallVector<Value> notApplicable() { return {}; }

RankedTensorType typeFor(ArrayRef<SymSize> sizes, Type elt) {
  SmallVector<int64_t> shape;
  for (const SymSize &s : sizes)
    shape.push_back(s.getConstant().value_or(ShapedType::kDynamic));
  return RankedTensorType::get(shape, elt);
}

/// The index operands of `sizes`' dynamic entries.
SmallVector<Value> dynamicSizes(OnnxNode &node, ArrayRef<SymSize> sizes) {
  SmallVector<Value> out;
  for (const SymSize &s : sizes)
    if (!s.getConstant())
      out.push_back(node.sizes->materialize(node.builder, node.loc(), s));
  return out;
}

std::optional<SymSize> productOf(ArrayRef<SymSize> sizes) {
  SymSize p = SymSize::constant(1);
  for (const SymSize &s : sizes) {
    std::optional<SymSize> q = SymSize::mul(p, s);
    if (!q)
      return std::nullopt;
    p = *q;
  }
  return p;
}

/// Whether the reshape of a value of type `in` and dimensions `inDims` to
/// `type`, whose dimensions are `out`, merges
/// or splits groups of dimensions with at most one of run-time size on each
/// side, as the lowering groups them (by their static sizes), and each group
/// holds the same number of elements at every size.
bool dimensionsGroup(RankedTensorType in, ArrayRef<SymSize> inDims,
                     RankedTensorType type, ArrayRef<SymSize> out) {
  if (llvm::count_if(type.getShape(), ShapedType::isDynamic) <= 1)
    return true; // the lowering's route through one dimension
  if (in.getRank() == type.getRank())
    return false;
  bool collapse = in.getRank() > type.getRank();
  auto groups = collapse ? getReassociationIndicesForCollapse(in.getShape(),
                                                              type.getShape())
                         : getReassociationIndicesForCollapse(type.getShape(),
                                                              in.getShape());
  if (!groups)
    return false;
  ArrayRef<SymSize> big = collapse ? inDims : out;
  ArrayRef<SymSize> small = collapse ? out : inDims;
  for (auto [k, group] : llvm::enumerate(*groups)) {
    SmallVector<SymSize> members;
    for (int64_t i : group)
      members.push_back(big[i]);
    std::optional<SymSize> p = productOf(members);
    if (!p || *p != small[k])
      return false;
  }
  return true;
}

bool anyNegativeConstant(ArrayRef<SymSize> v) {
  return llvm::any_of(v, [](const SymSize &s) {
    std::optional<int64_t> c = s.getConstant();
    return c && *c < 0;
  });
}
} // namespace

FailureOr<SmallVector<Value>> mlir::kiln::convertSymbolicShape(OnnxNode &node) {
  Value x = node.input(0);
  auto type = x ? dyn_cast<RankedTensorType>(x.getType()) : nullptr;
  if (!node.sizes || !type || type.hasStaticShape())
    return notApplicable();
  int64_t rank = type.getRank();
  int64_t start = node.intAttr("start", 0), end = node.intAttr("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  end = std::max(start, end);
  auto resultType =
      RankedTensorType::get({end - start}, node.builder.getI64Type());
  // Static dimensions alone are a constant (SymbolicSizes::record).
  Value s = ShapeOfOp::create(node.builder, node.loc(), resultType, x,
                              node.builder.getI64IntegerAttr(start),
                              node.builder.getI64IntegerAttr(end));
  return SmallVector<Value>{s};
}

/// `x` (of `count` elements) reshaped to `sizes` (of `total`): counts
/// equal only at some sizes (`[b, c, h, w]` viewed as `[b, c, h // 2, 2,
/// w // 2, 2]`, which needs h and w even) are checked at run time, as ONNX
/// Runtime refuses such a Reshape when they differ. A failed guard ends the
/// run only at the top level of the graph (inside a Loop or If body it
/// records the failure and the body goes on), so a subgraph keeps needing
/// counts that agree at every size.
static LogicalResult guardReshapeCount(OnnxNode &node, Value x,
                                       ArrayRef<SymSize> sizes,
                                       const SymSize &count,
                                       const SymSize &total) {
  if (count == total)
    return success();
  if (inSubgraph(node)) {
    node.fail() << "reshaping " << typeOf(x) << " to " << sizesStr(node, sizes)
                << " inside a subgraph does not keep its "
                << node.sizes->str(count)
                << " elements at every size in range; give the symbolic "
                   "dimensions one size to compile this node";
    return failure();
  }
  return guardSizesEqual(node, count, total,
                         "reshaping to " + sizesStr(node, sizes) +
                             " needs as many elements as the input has");
}

LogicalResult mlir::kiln::checkInferredTarget(OnnxNode &node) {
  Value x = node.input(0);
  std::optional<SmallVector<SymSize>> target =
      node.sizes && x ? node.sizes->contents(node.input(1)) : std::nullopt;
  if (!target || !isa<RankedTensorType>(x.getType()))
    return success();
  // A -1 takes whatever count there is (the inferred target has it too).
  bool allowZero = node.intAttr("allowzero", 0) != 0;
  SmallVector<SymSize> out = *target;
  for (auto [i, s] : llvm::enumerate(out)) {
    std::optional<int64_t> c = s.getConstant();
    if (c == -1)
      return success();
    if (c == 0 && !allowZero && (int64_t)i < typeOf(x).getRank())
      s = node.sizes->dim(x, i);
  }
  std::optional<SymSize> count = productOf(node.sizes->dims(x));
  std::optional<SymSize> total = productOf(out);
  if (!count || !total)
    return success();
  return guardReshapeCount(node, x, out, *count, *total);
}

FailureOr<SmallVector<Value>>
mlir::kiln::convertSymbolicReshape(OnnxNode &node) {
  Value x = node.input(0), shapeArg = node.input(1);
  if (!node.sizes || node.opset < 5 || !x || !shapeArg ||
      !isa<RankedTensorType>(x.getType()))
    return notApplicable();
  RankedTensorType in = typeOf(x);
  std::optional<SmallVector<SymSize>> target = node.sizes->contents(shapeArg);
  if (!target || (in.hasStaticShape() && !node.sizes->isSymbolic(shapeArg)))
    return notApplicable();
  bool allowZero = node.intAttr("allowzero", 0) != 0;
  // A constant target with one entry of run-time extent keeps the reshape
  // it always had (the lowering divides the element count) where the
  // static sizes divide; where they do not, only some sizes reshape and the
  // entry is a quotient, guarded below.
  if (!node.sizes->isSymbolic(shapeArg)) {
    int64_t dynamic = 0, inStatic = 1, outStatic = 1;
    for (auto [i, s] : llvm::enumerate(*target)) {
      int64_t c = *s.getConstant();
      bool copies = c == 0 && !allowZero && (int64_t)i < in.getRank();
      bool runTime = c == -1 || (copies && in.isDynamicDim(i));
      dynamic += runTime;
      if (!runTime && __builtin_mul_overflow(
                          outStatic, copies ? in.getDimSize(i) : c, &outStatic))
        return notApplicable();
    }
    for (int64_t n : in.getShape())
      if (!ShapedType::isDynamic(n) &&
          __builtin_mul_overflow(inStatic, n, &inStatic))
        return notApplicable();
    if (dynamic <= 1 && outStatic > 0 && inStatic % outStatic == 0)
      return notApplicable();
  }
  SmallVector<SymSize> out = *target;
  int64_t inferAt = -1;
  for (auto [i, s] : llvm::enumerate(out)) {
    std::optional<int64_t> c = s.getConstant();
    if (c == 0 && !allowZero) {
      if ((int64_t)i >= in.getRank()) {
        node.fail() << "shape entry " << i << " is 0 but the input has rank "
                    << in.getRank();
        return failure();
      }
      s = node.sizes->dim(x, i);
    } else if (c == -1) {
      if (inferAt >= 0) {
        node.fail() << "shape has more than one -1";
        return failure();
      }
      inferAt = i;
    } else if (c && *c < 0) {
      node.fail() << "shape entry " << i << " is " << *c;
      return failure();
    }
  }
  std::optional<SymSize> count = productOf(node.sizes->dims(x));
  if (inferAt >= 0) {
    SmallVector<SymSize> others = out;
    others[inferAt] = SymSize::constant(1);
    std::optional<SymSize> known = productOf(others);
    std::optional<SymSize> rest =
        count && known ? SymSize::divExact(*count, *known) : std::nullopt;
    // A count the static entries divide only at some sizes (`[1, seq, 8]`
    // to `[-1, 16]`): the quotient, and reshapeToSizes guards the rest.
    int64_t k = known ? known->getConstant().value_or(0) : 0;
    if (!rest && count && k > 0)
      rest = node.sizes->floorDiv(*count, k);
    // Symbolic entries beside the static ones (`[b, t, 2, -1]` of a
    // `[b, t, d]` whose d is symbolic, as `view(b, t, heads, -1)` exports):
    // the count over the symbolic entries, then the quotient by the static
    // ones, guarded like the case above.
    if (!rest && count) {
      SmallVector<SymSize> symbolic;
      int64_t fixed = 1;
      bool fits = true;
      for (const SymSize &s : others) {
        if (std::optional<int64_t> c = s.getConstant())
          fits &= !__builtin_mul_overflow(fixed, *c, &fixed);
        else
          symbolic.push_back(s);
      }
      std::optional<SymSize> symProduct = productOf(symbolic);
      std::optional<SymSize> part = fits && fixed > 0 && symProduct
                                        ? SymSize::divExact(*count, *symProduct)
                                        : std::nullopt;
      if (part)
        rest = node.sizes->floorDiv(*part, fixed);
    }
    if (!rest) {
      node.fail() << "the input " << in << " has "
                  << (count ? node.sizes->str(*count) : "?")
                  << " elements, which Kiln cannot divide by the other "
                     "entries of the target shape "
                  << sizesStr(node, out)
                  << " at every size in range; give the symbolic dimensions "
                     "one size to compile this Reshape";
      return failure();
    }
    out[inferAt] = *rest;
  }
  return one(reshapeToSizes(node, x, out));
}

namespace {
/// The broadcast of `x` to the shape `target` (numpy, right-aligned), as a
/// kiln.sized_expand; fails when a dimension of `x` of run-time size cannot
/// be shown to equal the target's or be 1.
FailureOr<Value> sizedExpand(OnnxNode &node, Value x,
                             ArrayRef<SymSize> target) {
  RankedTensorType in = typeOf(x);
  int64_t rank = std::max<int64_t>(in.getRank(), target.size());
  SmallVector<SymSize> out;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t k = d - (rank - (int64_t)target.size());
    int64_t j = d - (rank - in.getRank());
    std::optional<SymSize> want =
        k >= 0 ? std::optional<SymSize>(target[k]) : std::nullopt;
    std::optional<SymSize> have =
        j >= 0 ? std::optional<SymSize>(node.sizes->dim(x, j)) : std::nullopt;
    if (!want || want->isConstant(1)) {
      // A 1 of the shape keeps the input's size, or is 1 where the input has
      // no such dimension.
      out.push_back(have ? *have : SymSize::constant(1));
    } else if (!have || have->isConstant(1) || *have == *want) {
      out.push_back(*want);
    } else if (have->getConstant()) {
      // A static input dimension other than 1: the shape's entry must be 1
      // or equal (the shape broadcasts too); the result keeps it.
      if (want->getConstant()) {
        node.fail() << "input dimension " << j << " of size "
                    << *have->getConstant() << " does not broadcast to "
                    << *want->getConstant();
        return failure();
      }
      out.push_back(*have);
    } else {
      node.fail() << "dimension " << j << " of the input (" << in
                  << ") has the run-time size " << node.sizes->str(*have)
                  << ", which Kiln cannot show to be 1 or the shape's "
                  << node.sizes->str(*want)
                  << "; give the symbolic dimensions one size to compile this "
                     "node";
      return failure();
    }
  }
  RankedTensorType type = typeFor(out, in.getElementType());
  if (type == in)
    return x;
  if (type.hasStaticShape() && in.hasStaticShape()) {
    auto op = ExpandOp::create(node.builder, node.loc(), type, x);
    if (failed(finishBuild(node, op)))
      return failure();
    return op.getResult();
  }
  auto op = SizedExpandOp::create(node.builder, node.loc(), type, x,
                                  dynamicSizes(node, out));
  if (failed(verify(op))) {
    op->erase();
    return failure();
  }
  node.sizes->setDims(op.getResult(), out);
  return op.getResult();
}
} // namespace

FailureOr<SmallVector<Value>>
mlir::kiln::convertSymbolicExpand(OnnxNode &node) {
  Value x = node.input(0), shapeArg = node.input(1);
  if (!node.sizes || !x || !shapeArg || !isa<RankedTensorType>(x.getType()))
    return notApplicable();
  std::optional<SmallVector<SymSize>> target = node.sizes->contents(shapeArg);
  if (!target ||
      (typeOf(x).hasStaticShape() && !node.sizes->isSymbolic(shapeArg)))
    return notApplicable();
  if (anyNegativeConstant(*target)) {
    node.fail() << "shape " << sizesStr(node, *target)
                << " has a negative dimension";
    return failure();
  }
  return one(sizedExpand(node, x, *target));
}

FailureOr<SmallVector<Value>>
mlir::kiln::convertSymbolicConstantOfShape(OnnxNode &node) {
  Value shapeArg = node.input(0);
  if (!node.sizes || !shapeArg || !node.sizes->isSymbolic(shapeArg))
    return notApplicable();
  SmallVector<SymSize> target = *node.sizes->contents(shapeArg);
  if (anyNegativeConstant(target)) {
    node.fail() << "shape " << sizesStr(node, target)
                << " has a negative dimension";
    return failure();
  }
  FailureOr<Attribute> value = constantOfShapeValue(node);
  if (failed(value))
    return failure();
  auto scalar = RankedTensorType::get({}, cast<TypedAttr>(*value).getType());
  Value c = ConstantOp::create(node.builder, node.loc(), scalar,
                               DenseElementsAttr::get(scalar, *value));
  return one(sizedExpand(node, c, target));
}

FailureOr<SmallVector<Value>> mlir::kiln::convertSymbolicRange(OnnxNode &node) {
  Value start = node.input(0), limit = node.input(1), delta = node.input(2);
  if (!node.sizes || !start || !limit || !delta ||
      (!node.sizes->isSymbolic(start) && !node.sizes->isSymbolic(limit)))
    return notApplicable();
  SymbolicSizes &sizes = *node.sizes;
  std::optional<SmallVector<SymSize>> s = sizes.contents(start),
                                      l = sizes.contents(limit),
                                      d = sizes.contents(delta);
  std::optional<SymSize> count;
  if (s && l && d && s->size() == 1 && l->size() == 1 && d->size() == 1 &&
      (*d)[0].isConstant(1))
    if (std::optional<SymSize> ns = SymSize::neg((*s)[0]))
      count = SymSize::add((*l)[0], *ns);
  std::optional<int64_t> lo = count ? sizes.smallest(*count) : std::nullopt;
  std::optional<int64_t> hi = count ? sizes.largest(*count) : std::nullopt;
  if (count && lo && *lo >= 0 && !hi) {
    node.fail() << "Range counts " << sizes.str(*count)
                << " elements; Kiln sizes a run-time Range by the largest "
                   "count, so "
                << sizes.boundAdvice(*count);
    return failure();
  }
  if (!count || !lo || *lo < 0 || !hi) {
    node.fail() << "with symbolic sizes, Range needs delta 1 and a limit "
                   "that is start plus a size computed from the symbolic "
                   "dimensions (as torch.arange(n) exports), each symbol "
                   "with a range; give the symbolic dimensions one size to "
                   "compile this node";
    return failure();
  }
  // start + i for i < count, plus start.
  FailureOr<Value> iota =
      iotaOfSize(node, *count, typeOf(start).getElementType(), "Range");
  if (failed(iota))
    return failure();
  return one(build<AddOp>(node, *iota, start));
}

FailureOr<Value> mlir::kiln::iotaOfSize(OnnxNode &node, const SymSize &count,
                                        Type elt, StringRef what) {
  SymbolicSizes &sizes = *node.sizes;
  std::optional<int64_t> hi = sizes.largest(count);
  if (!hi) {
    node.fail() << what << " counts " << sizes.str(count)
                << " elements; Kiln sizes it by the largest count, so "
                << sizes.boundAdvice(count);
    return failure();
  }
  // The iota is a constant in the .so: one of millions of elements is a
  // mistake in the bounds, not a model.
  constexpr int64_t kMaxIota = 1 << 20;
  if (*hi > kMaxIota) {
    node.fail() << what << " counts up to " << *hi
                << " elements at the symbols' maxima; Kiln builds it from a "
                   "constant of that length and allows "
                << kMaxIota << "; give the symbolic dimensions smaller ranges";
    return failure();
  }
  // The first `count` of a constant iota as long as the largest count (the
  // arena's bound).
  auto iotaType = RankedTensorType::get({std::max<int64_t>(*hi, 1)}, elt);
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < iotaType.getDimSize(0); ++i)
    values.push_back(
        isa<FloatType>(elt)
            ? Attribute(FloatAttr::get(elt, (double)i))
            : Attribute(IntegerAttr::get(elt, APInt(elt.getIntOrFloatBitWidth(),
                                                    (uint64_t)i, true, true))));
  Value iota = ConstantOp::create(node.builder, node.loc(), iotaType,
                                  DenseElementsAttr::get(iotaType, values));
  OpBuilder &b = node.builder;
  Location loc = node.loc();
  std::optional<int64_t> c = count.getConstant();
  auto type = RankedTensorType::get({c.value_or(ShapedType::kDynamic)}, elt);
  auto slice = SizedSliceOp::create(
      b, loc, type, iota, ValueRange{arith::ConstantIndexOp::create(b, loc, 0)},
      ValueRange{sizes.materialize(b, loc, count)},
      b.getDenseI64ArrayAttr({1}));
  sizes.setDims(slice.getResult(), {count});
  return slice.getResult();
}

//===----------------------------------------------------------------------===//
// Building blocks for converters of values with symbolic dimensions
//===----------------------------------------------------------------------===//

FailureOr<Value> mlir::kiln::sizedInput(OnnxNode &node, unsigned i) {
  FailureOr<Value> v = node.rankedInput(i);
  if (failed(v) || (!node.sizes && failed(node.requireStaticShape(typeOf(*v)))))
    return failure();
  return v;
}

SymSize mlir::kiln::sizeOf(OnnxNode &node, Value v, int64_t axis) {
  RankedTensorType t = typeOf(v);
  if (!t.isDynamicDim(axis))
    return SymSize::constant(t.getDimSize(axis));
  return node.sizes->dim(v, axis);
}

SmallVector<SymSize> mlir::kiln::sizesOf(OnnxNode &node, Value v) {
  SmallVector<SymSize> out;
  for (int64_t d = 0; d < typeOf(v).getRank(); ++d)
    out.push_back(sizeOf(node, v, d));
  return out;
}

std::string mlir::kiln::sizeStr(OnnxNode &node, const SymSize &s) {
  std::optional<int64_t> c = s.getConstant();
  return c ? std::to_string(*c) : node.sizes->str(s);
}

std::string mlir::kiln::sizesStr(OnnxNode &node, ArrayRef<SymSize> sizes) {
  std::string out = "[";
  for (auto [i, s] : llvm::enumerate(sizes))
    out += (i ? ", " : "") + sizeStr(node, s);
  return out + "]";
}

FailureOr<Value> mlir::kiln::colMinusRowOfSizes(OnnxNode &node,
                                                const SymSize &rows,
                                                const SymSize &cols,
                                                StringRef what) {
  Type i64 = node.builder.getI64Type();
  FailureOr<Value> r =
      iotaOfSize(node, rows, i64, (Twine(what) + "'s row index").str());
  FailureOr<Value> c =
      iotaOfSize(node, cols, i64, (Twine(what) + "'s column index").str());
  if (failed(r) || failed(c))
    return failure();
  SymSize unit = SymSize::constant(1);
  r = reshapeToSizes(node, *r, {rows, unit});
  c = reshapeToSizes(node, *c, {unit, cols});
  if (failed(r) || failed(c))
    return failure();
  return build<SubOp>(node, *c, *r);
}

FailureOr<Value> mlir::kiln::sizeAsTensor(OnnxNode &node, const SymSize &s,
                                          Type elt) {
  if (std::optional<int64_t> c = s.getConstant())
    return scalarConstant(node, elt, (double)*c);
  OpBuilder &b = node.builder;
  Location loc = node.loc();
  Value n = arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                       node.sizes->materialize(b, loc, s));
  Value t = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({1}, b.getI64Type()), n);
  if (elt.isInteger(64))
    return t;
  return build<CastOp>(node, t, TypeAttr::get(elt));
}

FailureOr<Value> mlir::kiln::flattenToSizes(OnnxNode &node, Value x,
                                            int64_t axis) {
  RankedTensorType type = typeOf(x);
  if (type.hasStaticShape()) {
    ArrayRef<int64_t> shape = type.getShape();
    auto product = [](ArrayRef<int64_t> s) {
      return std::accumulate(s.begin(), s.end(), int64_t(1),
                             std::multiplies<int64_t>());
    };
    return reshapeTo(
        node, x,
        {product(shape.take_front(axis)), product(shape.drop_front(axis))});
  }
  if (!node.sizes) {
    node.fail() << "cannot flatten " << type
                << " here without the sizes of its symbolic dimensions; give "
                   "them one size to compile this node";
    return failure();
  }
  SmallVector<SymSize> dims = node.sizes->dims(x);
  std::optional<SymSize> outer = productOf(ArrayRef(dims).take_front(axis));
  std::optional<SymSize> inner = productOf(ArrayRef(dims).drop_front(axis));
  if (!outer || !inner) {
    node.fail() << "flattening " << type << " multiplies sizes past 2^63; "
                << "give the symbolic dimensions smaller bounds";
    return failure();
  }
  return reshapeToSizes(node, x, {*outer, *inner});
}

FailureOr<Value> mlir::kiln::vectorOfLength(OnnxNode &node, Value v,
                                            Value other, int64_t axis,
                                            const Twine &message) {
  SymbolicSizes::guardEqualDims(node.builder, node.loc(), v, 0, other, axis,
                                message);
  return reshapeToSizes(node, v, {SymSize::constant(typeOf(other).getDimSize(axis))},
                        /*countsGuarded=*/true);
}

FailureOr<Value> mlir::kiln::reshapeToSizes(OnnxNode &node, Value x,
                                            ArrayRef<SymSize> sizes,
                                            bool countsGuarded) {
  RankedTensorType in = typeOf(x);
  RankedTensorType type = typeFor(sizes, in.getElementType());
  if (type.hasStaticShape() && in.hasStaticShape())
    return reshapeTo(node, x, type.getShape());
  std::optional<SymSize> count = productOf(node.sizes->dims(x));
  std::optional<SymSize> total = productOf(sizes);
  if (!count || !total) {
    node.fail() << "reshaping " << in << " to " << sizesStr(node, sizes)
                << " multiplies sizes past 2^63; give the symbolic dimensions "
                   "one size to compile this node";
    return failure();
  }
  if (!countsGuarded &&
      failed(guardReshapeCount(node, x, sizes, *count, *total)))
    return failure();
  auto sized = [&](Value v, ArrayRef<SymSize> to) {
    auto op = SizedReshapeOp::create(node.builder, node.loc(),
                                     typeFor(to, in.getElementType()), v,
                                     dynamicSizes(node, to));
    node.sizes->setDims(op.getResult(), to);
    return op.getResult();
  };
  SmallVector<SymSize> inDims = node.sizes->dims(x);
  // Only 1s come or go (a Conv1d's [n, c, w] as [n, c, 1, w] and back): a
  // kiln.reshape, whose run-time sizes are the input's in order, and which
  // the layout pass moves past transposes.
  if (std::optional<SmallVector<int64_t>> sources = unitDimsReshape(in, type);
      sources && llvm::all_of(llvm::enumerate(*sources), [&](auto s) {
        return s.value() < 0 ? sizes[s.index()].isConstant(1)
                             : inDims[s.value()] == sizes[s.index()];
      })) {
    auto op = ReshapeOp::create(node.builder, node.loc(), type, x);
    node.sizes->setDims(op.getResult(), sizes);
    return op.getResult();
  }
  if (dimensionsGroup(in, inDims, type, sizes))
    return sized(x, sizes);
  // The dimensions regroup (torch's MultiheadAttention views [t, b, e] as
  // [t, b * heads, e / heads]; GroupNorm views [b, c, h, w] as [b, g, c / g
  // * h * w]): through one dimension of all the elements, a collapse and an
  // expand (views of the same row-major buffer, each size an operand). No
  // elements at all (a static 0 beside run-time sizes): an empty result.
  if (count->isConstant(0)) {
    Type elt = in.getElementType();
    auto scalar = RankedTensorType::get({}, elt);
    Value zero = ConstantOp::create(
        node.builder, node.loc(), scalar,
        DenseElementsAttr::get(scalar, node.builder.getZeroAttr(elt)));
    return expandToSizes(node, zero, sizes);
  }
  return sized(sized(x, {*count}), sizes);
}

Value mlir::kiln::sizedPart(OnnxNode &node, Value x,
                            const SliceBounds &bounds) {
  RankedTensorType type = typeOf(x);
  SmallVector<SymSize> offsets, sizes;
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    offsets.push_back(SymSize::constant(bounds.offsets[d]));
    sizes.push_back(type.isDynamicDim(d) ? node.sizes->dim(x, d)
                                         : SymSize::constant(bounds.sizes[d]));
    shape.push_back(type.isDynamicDim(d) ? ShapedType::kDynamic
                                         : bounds.sizes[d]);
  }
  return sizedBox(node, x, offsets, sizes, bounds.strides, shape);
}

Value mlir::kiln::sizedBox(OnnxNode &node, Value x, ArrayRef<SymSize> offsets,
                           ArrayRef<SymSize> sizes, ArrayRef<int64_t> strides,
                           ArrayRef<int64_t> shape) {
  RankedTensorType type = typeOf(x);
  OpBuilder &b = node.builder;
  Location loc = node.loc();
  SmallVector<Value> offsetValues, sizeValues;
  SmallVector<int64_t> resultShape(shape);
  for (int64_t d = 0; d < type.getRank(); ++d) {
    offsetValues.push_back(node.sizes->materialize(b, loc, offsets[d]));
    sizeValues.push_back(node.sizes->materialize(b, loc, sizes[d]));
    if (shape.empty())
      resultShape.push_back(
          sizes[d].getConstant().value_or(ShapedType::kDynamic));
  }
  auto op = SizedSliceOp::create(
      b, loc, RankedTensorType::get(resultShape, type.getElementType()), x,
      offsetValues, sizeValues, b.getDenseI64ArrayAttr(strides));
  node.sizes->setDims(op.getResult(), sizes);
  return op.getResult();
}

FailureOr<Value> mlir::kiln::expandToSizes(OnnxNode &node, Value x,
                                           ArrayRef<SymSize> sizes) {
  return sizedExpand(node, x, sizes);
}

bool mlir::kiln::inSubgraph(OnnxNode &node) {
  return !isa<func::FuncOp>(node.builder.getInsertionBlock()->getParentOp()) ||
         node.op->hasAttr(kSpeculativeAttr);
}

LogicalResult mlir::kiln::guardSizesEqual(OnnxNode &node, const SymSize &a,
                                          const SymSize &b, const Twine &what,
                                          GuardOp *guard, Value when) {
  OpBuilder &builder = node.builder;
  Location loc = node.loc();
  SymbolicSizes &S = *node.sizes;
  // Sizes whose difference never reaches 0 in range (a static height of 5
  // in blocks of 2, [seq, 8] viewed as [seq, 4]) are refused now, not at
  // every run.
  std::optional<SymSize> negB = SymSize::neg(b);
  std::optional<SymSize> diff = negB ? SymSize::add(a, *negB) : std::nullopt;
  std::optional<int64_t> lo = diff ? S.smallest(*diff) : std::nullopt;
  std::optional<int64_t> hi = diff ? S.largest(*diff) : std::nullopt;
  if ((lo && *lo > 0) || (hi && *hi < 0)) {
    node.fail() << what << ", and " << S.str(a) << " and " << S.str(b)
                << " differ at every size in range; fix the model or give "
                   "the symbolic dimensions a range where they agree";
    return failure();
  }
  Value ok = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                                   S.materialize(builder, loc, a),
                                   S.materialize(builder, loc, b));
  ok = orNotTaken(builder, loc, ok, when);
  Value okTensor = tensor::FromElementsOp::create(
      builder, loc, RankedTensorType::get({}, builder.getI1Type()), ok);
  GuardOp created = GuardOp::create(
      builder, loc, okTensor,
      builder.getStringAttr(node.describe() + ": " + what + " (" + S.str(a) +
                            " and " + S.str(b) +
                            " differ at these input sizes); run the model at "
                            "sizes where they agree"));
  if (guard)
    *guard = created;
  return success();
}

/// `x` followed along `axis` by `count` rows of zeros; fails (building
/// nothing) for an element type without a zero.
static FailureOr<Value> withZerosAfter(OnnxNode &node, Value x, int64_t axis,
                                       const SymSize &count) {
  OpBuilder &b = node.builder;
  Type elt = typeOf(x).getElementType();
  auto zeroAttr = dyn_cast_or_null<TypedAttr>(b.getZeroAttr(elt));
  if (!zeroAttr)
    return failure();
  SmallVector<SymSize> rows = sizesOf(node, x);
  rows[axis] = count;
  auto scalar = RankedTensorType::get({}, elt);
  Value zero = ConstantOp::create(b, node.loc(), scalar,
                                  DenseElementsAttr::get(scalar, zeroAttr));
  FailureOr<Value> zeros = sizedExpand(node, zero, rows);
  if (failed(zeros))
    return failure();
  return build<ConcatOp>(node, ValueRange{x, *zeros},
                         b.getI64IntegerAttr(axis));
}

FailureOr<Value> mlir::kiln::fitUntakenOperand(OnnxNode &node, Value x,
                                               int64_t axis,
                                               const SymSize &size,
                                               Value taken) {
  OpBuilder &b = node.builder;
  Location loc = node.loc();
  SymbolicSizes &S = *node.sizes;
  RankedTensorType t = typeOf(x);
  // concat(x, zeros) cut at `size` rows from 0 (taken) or from x's end.
  SmallVector<SymSize> dims = sizesOf(node, x), fit = dims;
  fit[axis] = size;
  FailureOr<Value> both = withZerosAfter(node, x, axis, size);
  if (failed(both))
    return failure();
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<Value> offsets(t.getRank(), c0), sizes;
  offsets[axis] = arith::SelectOp::create(b, loc, taken, c0,
                                          S.materialize(b, loc, dims[axis]));
  for (const SymSize &d : fit)
    sizes.push_back(S.materialize(b, loc, d));
  auto cut = SizedSliceOp::create(
      b, loc, typeFor(fit, t.getElementType()), *both, offsets, sizes,
      b.getDenseI64ArrayAttr(SmallVector<int64_t>(t.getRank(), 1)));
  S.setDims(cut.getResult(), fit);
  return cut.getResult();
}

FailureOr<Value> mlir::kiln::pinDims(OnnxNode &node, Value x,
                                     ArrayRef<std::pair<int64_t, int64_t>> pins,
                                     const Twine &what) {
  RankedTensorType t = typeOf(x);
  if (!node.sizes)
    return x;
  // A branch inlined to run whether or not it is taken guards only when
  // taken, so its condition must be known; the axis is read as a cut of
  // itself and zeros (fitUntakenOperand): an untaken branch may hold any
  // size, an empty one too.
  bool speculative = node.op->hasAttr(kSpeculativeAttr);
  if (speculative && !node.sizes->knowsTakenCondition(node.op))
    return x;
  Value when;
  // In a Loop, Scan or If body a failed guard does not end the body, so the
  // axis is read through indices clamped to its run-time size instead of a
  // view: a size other than the guarded one still reads inside the input.
  bool body = inSubgraph(node);
  SmallVector<SymSize> sizes = sizesOf(node, x);
  auto &b = node.builder;
  bool changed = false;
  Value y = x;
  for (auto [axis, size] : pins) {
    if (axis < 0 || axis >= t.getRank() || !t.isDynamicDim(axis) || size < 1)
      continue;
    std::optional<int64_t> least = node.sizes->smallest(sizes[axis]);
    std::optional<SymSize> last =
        SymSize::add(sizes[axis], SymSize::constant(-1));
    // An axis that may be empty (a Slice of the input carried by a Loop)
    // has no row to clamp to: it gets one row of zeros after it, which the
    // indices past its run-time size read. The index table is kept small.
    // (A speculative op reads a cut of the axis with zeros after it
    // instead, which needs neither.)
    bool mayBeEmpty = !least || *least < 1;
    bool hasZero = isa_and_nonnull<TypedAttr>(b.getZeroAttr(t.getElementType()));
    if (body && !speculative &&
        (!last || size > (int64_t(1) << 20) || (mayBeEmpty && !hasZero)))
      continue;
    SymSize had = sizes[axis];
    SymSize want = SymSize::constant(size);
    if (speculative) {
      if (!when)
        when = node.sizes->takenCondition(b, node.loc(), node.op);
      FailureOr<Value> fit = fitUntakenOperand(node, y, axis, want, when);
      if (failed(fit))
        continue;
      y = *fit;
    }
    GuardOp guard;
    if (failed(guardSizesEqual(node, sizes[axis], want,
                               what + " dimension " + Twine(axis) + " to be " +
                                   Twine(size),
                               &guard, when)))
      return failure();
    // A dimension that is an input's dim_param as it is: --check names the
    // size the model needs.
    if (std::optional<std::string> name =
            node.sizes->inputSymbolName(sizes[axis])) {
      guard->setAttr(kFixedSymbolAttr, b.getStringAttr(*name));
      guard->setAttr(kFixedSizeAttr, b.getI64IntegerAttr(size));
    }
    sizes[axis] = want;
    changed = true;
    if (!body || speculative)
      continue;
    auto idxType = RankedTensorType::get({size}, b.getI64Type());
    SmallVector<int64_t> first = llvm::to_vector(llvm::seq<int64_t>(0, size));
    Value iota = ConstantOp::create(
        b, node.loc(), idxType,
        DenseElementsAttr::get(idxType, ArrayRef<int64_t>(first)));
    FailureOr<Value> from =
        mayBeEmpty ? withZerosAfter(node, y, axis, SymSize::constant(1)) : y;
    if (failed(from))
      return failure();
    FailureOr<Value> top = sizeAsTensor(node, mayBeEmpty ? had : *last,
                                        b.getI64Type()),
                     idx;
    if (failed(top) || failed(idx = build<MinOp>(node, iota, *top)))
      return failure();
    FailureOr<Value> g =
        build<GatherOp>(node, *from, *idx, b.getI64IntegerAttr(axis));
    if (failed(g))
      return failure();
    y = *g;
  }
  if (!changed || body)
    return y;
  return reshapeToSizes(node, y, sizes, /*countsGuarded=*/true);
}

void mlir::kiln::guardSameSize(OnnxNode &node, Value a, int64_t ax, Value b,
                               int64_t bx, StringRef what) {
  SymSize sa = node.sizes->dim(a, ax), sb = node.sizes->dim(b, bx);
  if (sa == sb)
    return;
  SymbolicSizes::guardEqualDims(
      node.builder, node.loc(), a, ax, b, bx,
      node.describe() + ": " + what + " (" + node.sizes->str(sa) + " and " +
          node.sizes->str(sb) +
          ") differ at these input sizes, where the node needs them equal");
}

bool mlir::kiln::withinTensorLimit(OnnxNode &node, TypeRange types,
                                   uint64_t maxBytes, StringRef what,
                                   ValueRange values) {
  for (auto [i, t] : llvm::enumerate(types)) {
    auto type = dyn_cast<RankedTensorType>(t);
    if (!type || !type.getElementType().isIntOrFloat())
      continue;
    // Tiling and bufferization analyses grow faster than linearly with the
    // rank (a rank-40 input took minutes); models use far fewer.
    if (type.getRank() > kMaxTensorRank) {
      node.fail() << "its " << what << " " << type << " has rank "
                  << type.getRank() << ", over Kiln's limit of "
                  << kMaxTensorRank << " dimensions; reshape it to fewer";
      return false;
    }
    int64_t bytes = std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
    // A run-time size without a largest value counts as 1: the static
    // sizes alone may already be past the limit.
    bool overflow = false, unbounded = false;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      std::optional<int64_t> n = type.getDimSize(d);
      if (type.isDynamicDim(d))
        n = values.size() <= i || !node.sizes
                ? std::nullopt
                : node.sizes->largest(node.sizes->dim(values[i], d));
      unbounded |= !n;
      overflow |= __builtin_mul_overflow(
          bytes, n ? std::max<int64_t>(*n, 1) : 1, &bytes);
    }
    if (!overflow && (uint64_t)bytes <= maxBytes)
      continue;
    InFlightDiagnostic diag = node.fail();
    diag << "its " << what << " " << type << " would hold ";
    if (overflow)
      diag << "more bytes than fit in 64 bits";
    else
      diag << bytes << " bytes";
    diag << (type.hasStaticShape() ? ""
             : unbounded           ? " with each run-time size at least 1"
                                   : " at the largest sizes in range")
         << ", over the limit of " << std::to_string(maxBytes)
         << " bytes per tensor; check the model's sizes"
         << (type.hasStaticShape() ? "" : " and the ranges given (--dim)")
         << ", or raise the limit with --max-tensor-bytes";
    return false;
  }
  return true;
}
