//===- SymbolicSlice.cpp - Slice of run-time sizes ------------*- C++ -*-===//
//
// Slice when a size is symbolic: each sliced axis's offset and size are
// `index` values of a kiln.sized_slice, kept as polynomials where the
// clamping is decided at compile time (docs/shapes.md).
//
//===----------------------------------------------------------------------===//
#include "ShapeInputs.h"
#include "SymbolicSizes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Not applicable: the static conversion runs.
SmallVector<Value> notApplicable() { return {}; }

/// One sliced axis at run time: `offset` and `size` as index values, and
/// the size as a polynomial when the clamping is decided at compile time.
struct AxisSlice {
  Value offset, size;
  std::optional<SymSize> known;
};

/// A start or end of a Slice: a polynomial of the sizes (a constant, or
/// computed from shapes), or an `index` read from the data at run time.
struct Bound {
  std::optional<SymSize> known;
  Value read;
};

Value boundValue(OnnxNode &node, const Bound &p) {
  return p.known ? node.sizes->materialize(node.builder, node.loc(), *p.known)
                 : p.read;
}

/// The run-time position `v` of a Slice bound on a dimension of size `d`:
/// negative counts from the end, then clamped into [lowest, highest].
Value clampedPosition(OpBuilder &b, Location loc, Value v, Value d, Value zero,
                      Value lowest, Value highest) {
  Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, zero);
  v = arith::SelectOp::create(b, loc, neg, arith::AddIOp::create(b, loc, v, d),
                              v);
  v = arith::MaxSIOp::create(b, loc, v, lowest);
  return arith::MinSIOp::create(b, loc, v, highest);
}

/// ceil(max(to - from, 0) / step) elements, at most `d` (the arena's bound).
Value stepCount(OpBuilder &b, Location loc, Value from, Value to, int64_t step,
                Value d, Value zero) {
  Value span = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, to, from), zero);
  Value count = arith::CeilDivSIOp::create(
      b, loc, span, arith::ConstantIndexOp::create(b, loc, step));
  AffineMap minMap = AffineMap::get(0, 2,
                                    {getAffineSymbolExpr(0, b.getContext()),
                                     getAffineSymbolExpr(1, b.getContext())},
                                    b.getContext());
  return affine::AffineMinOp::create(b, loc, minMap, ValueRange{d, count});
}

/// A reversed slice (`step` < 0): ONNX clamps `start` into [0, dim - 1] and
/// `end` into [-1, dim - 1] and takes ceil((start - end) / -step) elements
/// from `start` backwards; `offset` is the first position read. The whole
/// axis backwards (torch.flip: start -1, end below -dim) keeps the size's
/// polynomial for a step of -1.
AxisSlice reversedSliceAxis(OnnxNode &node, const SymSize &dim,
                            const Bound &start, const Bound &end,
                            int64_t step) {
  SymbolicSizes &sizes = *node.sizes;
  OpBuilder &b = node.builder;
  Location loc = node.loc();
  AxisSlice out;
  std::optional<int64_t> sc = start.known ? start.known->getConstant()
                                          : std::nullopt,
                         ec = end.known ? end.known->getConstant()
                                        : std::nullopt;
  std::optional<int64_t> hi = sizes.largest(dim);
  bool fromLast = sc && (*sc == -1 || (hi && *sc >= *hi - 1 && *sc >= 0 &&
                                       sizes.smallest(dim) == hi));
  bool toFirst = ec && hi && *ec < -*hi;
  if (step == -1 && fromLast && toFirst) {
    std::optional<SymSize> last = SymSize::add(dim, SymSize::constant(-1));
    if (last) {
      out.offset = sizes.materialize(b, loc, *last);
      out.size = sizes.materialize(b, loc, dim);
      out.known = dim;
      return out;
    }
  }
  Value d = sizes.materialize(b, loc, dim);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value minusOne = arith::ConstantIndexOp::create(b, loc, -1);
  Value last = arith::AddIOp::create(b, loc, d, minusOne);
  Value first =
      clampedPosition(b, loc, boundValue(node, start), d, zero, zero, last);
  Value stop =
      clampedPosition(b, loc, boundValue(node, end), d, zero, minusOne, last);
  out.offset = first;
  out.size = stepCount(b, loc, stop, first, -step, d, zero);
  return out;
}

/// ONNX Slice's clamping of `start` and `end` (positions, negative from the
/// end) to a dimension of size `dim`, with step `step` > 0. Bounds read
/// from the data are clamped at run time.
AxisSlice sliceAxis(OnnxNode &node, const SymSize &dim, const Bound &start,
                    const Bound &end, int64_t step) {
  if (step < 0)
    return reversedSliceAxis(node, dim, start, end, step);
  SymbolicSizes &sizes = *node.sizes;
  OpBuilder &b = node.builder;
  Location loc = node.loc();
  // Compile time: a non-negative position that never passes the smallest
  // size, a negative one that never passes it backwards, or an end that
  // never passes the size (INT64_MAX: to the end).
  auto resolve = [&](const SymSize &p, bool isEnd) -> std::optional<SymSize> {
    std::optional<int64_t> c = p.getConstant();
    std::optional<int64_t> lo = sizes.smallest(dim);
    if (p == dim)
      return p;
    if (c && *c >= 0) {
      if (dim.getConstant())
        return SymSize::constant(std::min(*c, *dim.getConstant()));
      if (isEnd && *c >= (int64_t)1 << 40)
        return dim;
      if (lo && *c <= *lo)
        return p;
      return std::nullopt;
    }
    if (c && *c < 0) {
      if (dim.getConstant())
        return SymSize::constant(std::max<int64_t>(0, *dim.getConstant() + *c));
      if (lo && -*c <= *lo)
        return SymSize::add(dim, p);
      return std::nullopt;
    }
    // A symbolic position: in range when never above the smallest size,
    // or never above the size itself (`y[:, :h]` of y padded from h).
    std::optional<int64_t> hi = sizes.largest(p), plo = sizes.smallest(p);
    if (hi && plo && *plo >= 0 && lo && *hi <= *lo)
      return p;
    std::optional<SymSize> np = SymSize::neg(p);
    std::optional<SymSize> room = np ? SymSize::add(dim, *np) : std::nullopt;
    std::optional<int64_t> roomLo = room ? sizes.smallest(*room) : std::nullopt;
    if (plo && *plo >= 0 && roomLo && *roomLo >= 0)
      return p;
    return std::nullopt;
  };
  std::optional<SymSize> s, e;
  if (start.known && end.known) {
    s = resolve(*start.known, false);
    e = resolve(*end.known, true);
  }
  AxisSlice out;
  if (s && e && step == 1) {
    std::optional<SymSize> ns = SymSize::neg(*s);
    std::optional<SymSize> n = ns ? SymSize::add(*e, *ns) : std::nullopt;
    std::optional<int64_t> nlo = n ? sizes.smallest(*n) : std::nullopt;
    if (n && n->getConstant() && *n->getConstant() < 0)
      n = SymSize::constant(0);
    if (n && (n->getConstant() || (nlo && *nlo >= 0))) {
      out.offset = sizes.materialize(b, loc, *s);
      out.size = sizes.materialize(b, loc, *n);
      out.known = n;
      return out;
    }
  }
  if (s && e && step > 1) {
    // ceil((e - s) / step) elements (`x[:, 0::2]`), as a floor division
    // the consumers' sizes can follow.
    std::optional<SymSize> ns = SymSize::neg(*s);
    std::optional<SymSize> n = ns ? SymSize::add(*e, *ns) : std::nullopt;
    std::optional<int64_t> nlo = n ? sizes.smallest(*n) : std::nullopt;
    std::optional<SymSize> count;
    if (n && nlo && *nlo >= 0)
      if (std::optional<SymSize> up =
              SymSize::add(*n, SymSize::constant(step - 1)))
        count = sizes.floorDiv(*up, step);
    if (count) {
      out.offset = sizes.materialize(b, loc, *s);
      out.size = sizes.materialize(b, loc, *count);
      out.known = count;
      return out;
    }
  }
  // Run time: normalize, clamp to [0, dim], count the steps; the size is
  // at most the dimension's (the arena's bound).
  Value d = sizes.materialize(b, loc, dim);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value lo = clampedPosition(b, loc, boundValue(node, start), d, zero, zero, d);
  Value hi = clampedPosition(b, loc, boundValue(node, end), d, zero, zero, d);
  out.offset = lo;
  out.size = stepCount(b, loc, lo, hi, step, d, zero);
  return out;
}
} // namespace

FailureOr<SmallVector<Value>> mlir::kiln::convertSymbolicSlice(OnnxNode &node) {
  Value x = node.input(0);
  if (!node.sizes || node.opset < 10 || !x ||
      !isa<RankedTensorType>(x.getType()))
    return notApplicable();
  RankedTensorType in = typeOf(x);
  SymbolicSizes &sizes = *node.sizes;
  if (!node.input(1) || !node.input(2))
    return notApplicable(); // the static conversion names what is missing
  std::optional<SmallVector<SymSize>> startSizes =
                                          sizes.contents(node.input(1)),
                                      endSizes = sizes.contents(node.input(2));
  bool symbolicArgs =
      sizes.isSymbolic(node.input(1)) || sizes.isSymbolic(node.input(2));
  bool fromData = !startSizes || !endSizes;
  // A static input sliced by constants, or by data values that must give
  // the declared static shape (checked at run time), keeps its static form.
  auto declared = dyn_cast<RankedTensorType>(node.op->getResult(0).getType());
  if (in.hasStaticShape() && !symbolicArgs &&
      (!fromData || (declared && declared.hasStaticShape())))
    return notApplicable();
  // Starts and ends read from the data (`x[:, :n]` with n counted from a
  // mask): each is clamped at run time and the sliced axis's size, at most
  // the input's, is a run-time size (docs/shapes.md).
  auto bounds = [&](unsigned i, std::optional<SmallVector<SymSize>> &known)
      -> FailureOr<SmallVector<Bound>> {
    SmallVector<Bound> out;
    if (known) {
      for (const SymSize &v : *known)
        out.push_back({v, Value()});
      return out;
    }
    Value t = node.input(i);
    auto type = dyn_cast<RankedTensorType>(t.getType());
    if (!type || type.getRank() != 1 || !type.hasStaticShape() ||
        !isa<IntegerType>(type.getElementType())) {
      node.fail() << (i == 1 ? "starts" : "ends")
                  << " must be a 1-D integer tensor of static length, got "
                  << t.getType();
      return failure();
    }
    // Each axis is sliced once at most: more values than axes is a
    // malformed model, refused before reading any of them.
    if (type.getNumElements() > in.getRank()) {
      node.fail() << (i == 1 ? "starts" : "ends") << " has "
                  << type.getNumElements()
                  << " values, more than the input's rank " << in.getRank();
      return failure();
    }
    OpBuilder &b = node.builder;
    for (int64_t j = 0; j < type.getNumElements(); ++j) {
      Value at = arith::ConstantIndexOp::create(b, node.loc(), j);
      Value raw = tensor::ExtractOp::create(b, node.loc(), t, at);
      out.push_back({std::nullopt, arith::IndexCastOp::create(
                                       b, node.loc(), b.getIndexType(), raw)});
    }
    return out;
  };
  FailureOr<SmallVector<Bound>> starts = bounds(1, startSizes);
  if (failed(starts))
    return failure();
  FailureOr<SmallVector<Bound>> ends = bounds(2, endSizes);
  if (failed(ends))
    return failure();
  const char *why = fromData ? "when starts or ends are read from the data"
                             : "with symbolic sizes";
  int64_t rank = in.getRank();
  SmallVector<int64_t> axes, steps;
  if (node.input(3)) {
    std::optional<SmallVector<int64_t>> a = node.constantInts(3);
    if (!a) {
      node.fail() << "axes must be a constant " << why;
      return failure();
    }
    axes = *a;
  } else {
    for (int64_t i = 0; i < (int64_t)starts->size(); ++i)
      axes.push_back(i);
  }
  if (node.input(4)) {
    std::optional<SmallVector<int64_t>> s = node.constantInts(4);
    if (!s) {
      node.fail() << "steps must be a constant " << why;
      return failure();
    }
    steps = *s;
  } else {
    steps.assign(starts->size(), 1);
  }
  if (axes.size() != starts->size() || ends->size() != starts->size() ||
      steps.size() != starts->size()) {
    node.fail() << "starts, ends, axes and steps must have as many values as "
                   "starts ("
                << starts->size() << ")";
    return failure();
  }
  SmallVector<Value> offsets, sizeVals;
  SmallVector<SymSize> dims = sizes.dims(x);
  SmallVector<std::optional<SymSize>> known;
  SmallVector<int64_t> strides(rank, 1);
  SmallVector<bool> seen(rank, false);
  SmallVector<AxisSlice> perAxis(rank);
  for (size_t i = 0; i < axes.size(); ++i) {
    FailureOr<int64_t> axis = normalizeAxis(node, axes[i], rank);
    if (failed(axis))
      return failure();
    if (seen[*axis]) {
      node.fail() << "axis " << axes[i] << " is sliced twice";
      return failure();
    }
    seen[*axis] = true;
    if (steps[i] == 0) {
      node.fail() << "steps must not be 0";
      return failure();
    }
    strides[*axis] = steps[i];
    perAxis[*axis] =
        sliceAxis(node, dims[*axis], (*starts)[i], (*ends)[i], steps[i]);
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!seen[d]) {
      perAxis[d].offset =
          arith::ConstantIndexOp::create(node.builder, node.loc(), 0);
      perAxis[d].size = sizes.materialize(node.builder, node.loc(), dims[d]);
      perAxis[d].known = dims[d];
    }
    std::optional<int64_t> c =
        perAxis[d].known ? perAxis[d].known->getConstant() : std::nullopt;
    shape.push_back(c.value_or(ShapedType::kDynamic));
    offsets.push_back(perAxis[d].offset);
    sizeVals.push_back(perAxis[d].size);
  }
  auto type = RankedTensorType::get(shape, in.getElementType());
  auto op =
      SizedSliceOp::create(node.builder, node.loc(), type, x, offsets, sizeVals,
                           node.builder.getDenseI64ArrayAttr(strides));
  SmallVector<SymSize> outDims;
  for (int64_t d = 0; d < rank; ++d)
    outDims.push_back(perAxis[d].known ? *perAxis[d].known
                                       : sizes.dim(op.getResult(), d));
  node.sizes->setDims(op.getResult(), outDims);
  return SmallVector<Value>{op.getResult()};
}
