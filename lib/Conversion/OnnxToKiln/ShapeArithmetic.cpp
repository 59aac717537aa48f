//===- ShapeArithmetic.cpp - the shape values a graph computes ---*- C++
//-*-===//
//
// The contents of the small integer tensors a graph computes its shape
// arguments in (Shape, Gather, Concat, Add, Div, ...), as SymbolicSizes'
// polynomials, recorded node by node as the conversion goes.
//
//===----------------------------------------------------------------------===//
#include "SymbolicSizes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;

//===----------------------------------------------------------------------===//
// Contents of small integer tensors
//===----------------------------------------------------------------------===//

std::optional<SmallVector<SymSize>> SymbolicSizes::contents(Value v) {
  if (!v)
    return std::nullopt;
  if (auto it = contentMap.find(v); it != contentMap.end())
    return it->second;
  auto cst = v.getDefiningOp<ConstantOp>();
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!cst || !type || !type.hasStaticShape() ||
      type.getNumElements() > kMaxContents ||
      !isa<IntegerType, FloatType>(type.getElementType()))
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
  if (!dense)
    return std::nullopt;
  SmallVector<SymSize> out;
  // A float constant of whole numbers is their integers (the 2.0 a size
  // cast to float is scaled by, as F.interpolate(scale_factor=2) exports
  // it); one with a fraction is not a size.
  if (isa<FloatType>(type.getElementType())) {
    for (const APFloat &x : dense.getValues<APFloat>()) {
      bool lost = false;
      APFloat d = x;
      d.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      double v = d.convertToDouble();
      if (!x.isFinite() || std::trunc(v) != v || std::fabs(v) > 0x1p53)
        return std::nullopt;
      out.push_back(SymSize::constant((int64_t)v));
    }
    return out;
  }
  // Bools and unsigned integers zero-extend (a uint8 200 is 200, not -56);
  // a uint64 past int64's range is not a size.
  bool zext = type.getElementType().isInteger(1) ||
              type.getElementType().isUnsignedInteger();
  for (const APInt &x : dense.getValues<APInt>()) {
    if (zext && x.isNegative() && x.getBitWidth() == 64)
      return std::nullopt;
    out.push_back(
        SymSize::constant(zext ? (int64_t)x.getZExtValue() : x.getSExtValue()));
  }
  return out;
}

bool SymbolicSizes::isSymbolic(Value v) {
  std::optional<SmallVector<SymSize>> c = contents(v);
  return c && llvm::any_of(*c, [](const SymSize &s) {
           return !s.getConstant().has_value();
         });
}

//===----------------------------------------------------------------------===//
// Shape arithmetic
//===----------------------------------------------------------------------===//

/// Whether every value `values` can take is one `elt` holds exactly, so
/// the contents are the run-time values: a float holds whole numbers up to
/// 2^(mantissa bits) (a product of sizes in float16 is not exact), a
/// narrower integer its range (sizes in int8 wrap). From 32 bits on an
/// integer holds any size (no dimension has 2^31 elements), bounded or not.
bool SymbolicSizes::fitsElementType(ArrayRef<SymSize> values, Type elt) {
  int64_t lowest, highest;
  bool needBounds = true;
  if (auto ft = dyn_cast<FloatType>(elt)) {
    highest = int64_t(1) << std::min<unsigned>(ft.getFPMantissaWidth(), 62);
    lowest = -highest;
  } else if (auto it = dyn_cast<IntegerType>(elt);
             it && it.getWidth() > 1 && it.getWidth() < 64) {
    unsigned w = it.getWidth();
    lowest = it.isUnsigned() ? 0 : -(int64_t(1) << (w - 1));
    highest =
        it.isUnsigned() ? (int64_t(1) << w) - 1 : (int64_t(1) << (w - 1)) - 1;
    needBounds = w < 32;
  } else {
    return true; // int64 (the arithmetic's own), bool (0 or 1)
  }
  for (const SymSize &e : values) {
    std::optional<int64_t> lo = smallest(e), hi = largest(e);
    if ((lo ? *lo < lowest : needBounds) || (hi ? *hi > highest : needBounds))
      return false;
  }
  return true;
}

/// Element `x op y` of the shape arithmetic of `node` (Add, Sub, Mul, Div,
/// Mod, Max, Min, Equal, Neg), when the polynomials decide it.
std::optional<SymSize> SymbolicSizes::arithmetic(OnnxNode &node,
                                                 const SymSize &x,
                                                 const SymSize &y,
                                                 bool integers) {
  StringRef type = node.opType();
  std::optional<int64_t> cx = x.getConstant(), cy = y.getConstant();
  std::optional<SymSize> r;
  // Converting at a probe batch size (kBatchProbeAttr): a fold that loses
  // the probe (min(P, 3) is 3) would hide that the model reads its batch
  // size; the op converts with P as an operand, which the pass reports.
  if (auto module = node.op->getParentOfType<ModuleOp>())
    if (auto probe = module->getAttrOfType<IntegerAttr>(kBatchProbeAttr))
      if ((cx == probe.getInt() || cy == probe.getInt()) &&
          llvm::is_contained({"Min", "Max", "Equal", "Mod", "Div"}, type))
        return std::nullopt;
  if (type == "Add") {
    r = SymSize::add(x, y);
  } else if (type == "Sub") {
    if (std::optional<SymSize> ny = SymSize::neg(y))
      r = SymSize::add(x, *ny);
  } else if (type == "Neg") {
    r = SymSize::neg(x);
  } else if (type == "Mul") {
    r = SymSize::mul(x, y);
  } else if (type == "Div") {
    // Integer Div truncates, which is floor division where the
    // dividend is never negative (a size, `h // 2`). Float contents (sizes
    // cast to float) divide only where the quotient is whole.
    std::optional<int64_t> low = smallest(x);
    if (integers && cx && cy && *cy > 0 && *cx >= 0)
      r = SymSize::constant(*cx / *cy);
    else if (!(r = SymSize::divExact(x, y)) && integers && cy && *cy > 0 &&
             low && *low >= 0)
      r = floorDiv(x, *cy);
  } else if (type == "Mod") {
    // fmod 0 is Python's `%` (the divisor's sign), fmod 1 C's (the
    // dividend's): the same for a dividend never negative.
    std::optional<int64_t> low = smallest(x);
    if (integers && cy && *cy > 0 &&
        (node.intAttr("fmod", 0) == 0 || (low && *low >= 0)))
      r = floorMod(x, *cy);
  } else if (type == "Max" || type == "Min") {
    bool max = type == "Max";
    // max(s, c) is s when s is never below c; min(s, c) when never above.
    auto dominates = [&](const SymSize &s, int64_t c) {
      std::optional<int64_t> b = max ? smallest(s) : largest(s);
      return b && (max ? *b >= c : *b <= c);
    };
    if (cx && cy)
      r = SymSize::constant(max ? std::max(*cx, *cy) : std::min(*cx, *cy));
    else if (x == y)
      r = x;
    else if (cy && dominates(x, *cy))
      r = x;
    else if (cx && dominates(y, *cx))
      r = y;
  } else if (type == "Equal") {
    auto nonNegative = [&](const SymSize &s) {
      std::optional<int64_t> b = smallest(s);
      return b && *b >= 0;
    };
    if (x == y)
      r = SymSize::constant(1);
    else if (cx && cy)
      r = SymSize::constant(*cx == *cy);
    else if ((cy && *cy < 0 && nonNegative(x)) ||
             (cx && *cx < 0 && nonNegative(y)))
      r = SymSize::constant(0); // a size is never negative
  }
  return r;
}

/// Slice's contents: constant starts, ends, axes and steps, any sign of
/// step, over `data` of static `shape` (row-major).
static std::optional<SmallVector<SymSize>>
sliceContents(OnnxNode &node, const std::optional<SmallVector<SymSize>> &data,
              const std::optional<SmallVector<int64_t>> &shape) {
  std::optional<SmallVector<SymSize>> got;
  std::optional<SmallVector<int64_t>> starts = node.constantInts(1),
                                      ends = node.constantInts(2);
  if (!data || !shape || !starts || !ends || starts->size() != ends->size())
    return {};
  int64_t rank = shape->size(), k = starts->size();
  SmallVector<int64_t> axes, steps(k, 1);
  for (int64_t i = 0; i < k; ++i)
    axes.push_back(i);
  if (node.input(3)) {
    std::optional<SmallVector<int64_t>> a = node.constantInts(3);
    if (!a || (int64_t)a->size() != k)
      return {};
    axes = *a;
  }
  if (node.input(4)) {
    std::optional<SmallVector<int64_t>> st = node.constantInts(4);
    if (!st || (int64_t)st->size() != k)
      return {};
    steps = *st;
  }
  // The indices each dimension keeps.
  SmallVector<SmallVector<int64_t>> keep(rank);
  SmallVector<bool> named(rank, false);
  for (int64_t d = 0; d < rank; ++d)
    for (int64_t i = 0; i < (*shape)[d]; ++i)
      keep[d].push_back(i);
  for (int64_t i = 0; i < k; ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank || named[a] || steps[i] == 0)
      return {};
    named[a] = true;
    int64_t size = (*shape)[a], st = steps[i];
    int64_t b = (*starts)[i], e = (*ends)[i];
    b = b < 0 ? b + size : b;
    e = e < 0 ? e + size : e;
    keep[a].clear();
    if (size == 0)
      continue;
    if (st > 0) {
      b = std::clamp<int64_t>(b, 0, size);
      e = std::clamp<int64_t>(e, 0, size);
      for (int64_t j = b; j < e; j += st)
        keep[a].push_back(j);
    } else {
      b = std::clamp<int64_t>(b, 0, size - 1);
      e = std::clamp<int64_t>(e, -1, size - 1);
      for (int64_t j = b; j > e; j += st)
        keep[a].push_back(j);
    }
  }
  SmallVector<int64_t> strides = computeStrides(*shape);
  got.emplace();
  SmallVector<int64_t> pos(rank, 0);
  int64_t total = 1;
  for (const SmallVector<int64_t> &kd : keep)
    total *= kd.size();
  for (int64_t t = 0; t < total; ++t) {
    int64_t flat = 0, r = t;
    for (int64_t d = rank - 1; d >= 0; --d) {
      int64_t len = keep[d].size();
      flat += keep[d][r % len] * strides[d];
      r /= len;
    }
    got->push_back((*data)[flat]);
  }
  return got;
}

/// Transpose's contents: `data` of static `shape` permuted to `outShape`.
static std::optional<SmallVector<SymSize>>
transposeContents(OnnxNode &node,
                  const std::optional<SmallVector<SymSize>> &data,
                  const std::optional<SmallVector<int64_t>> &shape,
                  ArrayRef<int64_t> outShape) {
  std::optional<SmallVector<SymSize>> got;
  if (!data || !shape)
    return {};
  int64_t rank = shape->size();
  SmallVector<int64_t> perm = transposePerm(node, rank);
  if ((int64_t)perm.size() != rank)
    return {};
  SmallVector<int64_t> strides = computeStrides(*shape);
  got.emplace();
  for (int64_t t = 0, n = computeProduct(outShape); t < n; ++t) {
    int64_t flat = 0, r = t;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (perm[d] < 0 || perm[d] >= rank)
        return {};
      flat += (r % outShape[d]) * strides[perm[d]];
      r /= outShape[d];
    }
    got->push_back((*data)[flat]);
  }
  return got;
}

Value SymbolicSizes::record(OnnxNode &node, ArrayRef<Value> results) {
  if (results.empty() || !results[0])
    return {};
  Value out = results[0];
  auto outType = dyn_cast<RankedTensorType>(out.getType());
  if (!outType || !outType.hasStaticShape() ||
      outType.getNumElements() > kMaxContents ||
      !isa<IntegerType, FloatType>(outType.getElementType()))
    return {};
  int64_t n = outType.getNumElements();
  StringRef type = node.opType();
  std::optional<SmallVector<SymSize>> got;
  auto in = [&](unsigned i) { return contents(node.input(i)); };
  // Contents are kept in row-major order; a tensor of rank 2 or more (the
  // [-1, 2] pairs torch's F.pad reorders) needs its static shape.
  auto shapeOf = [&](unsigned i) -> std::optional<SmallVector<int64_t>> {
    auto t = node.input(i) ? dyn_cast<RankedTensorType>(node.input(i).getType())
                           : nullptr;
    if (!t || !t.hasStaticShape())
      return std::nullopt;
    return SmallVector<int64_t>(t.getShape());
  };
  // An elementwise operand: one element, or the result's shape.
  auto elementwise = [&](unsigned i) {
    std::optional<SmallVector<int64_t>> sh = shapeOf(i);
    return sh && (computeProduct(*sh) == 1 ||
                  ArrayRef<int64_t>(*sh) == outType.getShape());
  };
  if (type == "Shape") {
    Value x = node.input(0);
    auto xt = x ? dyn_cast<RankedTensorType>(x.getType()) : nullptr;
    if (!xt)
      return {};
    int64_t rank = xt.getRank();
    int64_t start = node.intAttr("start", 0), end = node.intAttr("end", rank);
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    got.emplace();
    for (int64_t d = start; d < end; ++d)
      got->push_back(dim(x, d));
  } else if (type == "Size") {
    Value x = node.input(0);
    if (!x || !isa<RankedTensorType>(x.getType()))
      return {};
    SymSize p = SymSize::constant(1);
    for (const SymSize &s : dims(x)) {
      std::optional<SymSize> q = SymSize::mul(p, s);
      if (!q)
        return {};
      p = *q;
    }
    got = SmallVector<SymSize>{p};
  } else if (llvm::is_contained({"Identity", "Cast", "Squeeze", "Unsqueeze",
                                 "Reshape", "Flatten"},
                                type) ||
             (llvm::is_contained({"Floor", "Ceil", "Round"}, type) &&
              isa<FloatType>(outType.getElementType()))) {
    // Contents are whole numbers, held exactly (fitsElementType): rounding
    // a float that holds one leaves it.
    got = in(0);
    // A Cast to bool makes a size known to be nonzero (or zero) 1 (or 0).
    if (got && type == "Cast" && outType.getElementType().isInteger(1)) {
      for (SymSize &e : *got) {
        std::optional<int64_t> lo = smallest(e), hi = largest(e);
        if (!lo || !hi || (*lo <= 0 && *hi >= 0 && (*lo || *hi)))
          return {};
        e = SymSize::constant(*lo || *hi ? 1 : 0);
      }
    }
  } else if (type == "Gather" && node.intAttr("axis", 0) == 0) {
    // Whole rows of axis 0 (single elements of a vector).
    std::optional<SmallVector<SymSize>> data = in(0), idx = in(1);
    std::optional<SmallVector<int64_t>> shape = shapeOf(0);
    if (!data || !idx || !shape || shape->empty() || (*shape)[0] == 0)
      return {};
    int64_t rows = (*shape)[0], row = data->size() / rows;
    got.emplace();
    for (const SymSize &i : *idx) {
      std::optional<int64_t> k = i.getConstant();
      if (!k || *k < -rows || *k >= rows)
        return {};
      int64_t r = *k < 0 ? *k + rows : *k;
      got->append(data->begin() + r * row, data->begin() + (r + 1) * row);
    }
  } else if (type == "Concat") {
    // Per index of the dimensions before the axis, each input's block.
    int64_t rank = outType.getRank();
    int64_t axis = node.intAttr("axis", 0);
    axis = axis < 0 ? axis + rank : axis;
    if (axis < 0 || axis >= std::max<int64_t>(rank, 1))
      return {};
    int64_t outer = computeProduct(outType.getShape().take_front(axis));
    SmallVector<SmallVector<SymSize>> parts;
    for (unsigned i = 0; i < node.numInputs(); ++i) {
      std::optional<SmallVector<SymSize>> part = in(i);
      if (!part || part->size() % std::max<int64_t>(outer, 1))
        return {};
      parts.push_back(std::move(*part));
    }
    got.emplace();
    for (int64_t o = 0; o < outer; ++o)
      for (const SmallVector<SymSize> &part : parts) {
        int64_t block = part.size() / outer;
        got->append(part.begin() + o * block, part.begin() + (o + 1) * block);
      }
  } else if (type == "Slice" && node.opset >= 10) {
    got = sliceContents(node, in(0), shapeOf(0));
  } else if (type == "Transpose") {
    got = transposeContents(node, in(0), shapeOf(0), outType.getShape());
  } else if (llvm::is_contained({"Add", "Sub", "Mul", "Div", "Mod", "Max",
                                 "Min", "Equal", "Neg"},
                                type)) {
    bool integers = isa<IntegerType>(outType.getElementType());
    if (!elementwise(0) || (type != "Neg" && !elementwise(1)))
      return {};
    std::optional<SmallVector<SymSize>>
        a = in(0),
        b = type == "Neg" ? SmallVector<SymSize>{SymSize::constant(0)} : in(1);
    if (!a || !b || a->empty() || b->empty())
      return {};
    size_t len = std::max(a->size(), b->size());
    if ((a->size() != len && a->size() != 1) ||
        (b->size() != len && b->size() != 1))
      return {};
    got.emplace();
    for (size_t i = 0; i < len; ++i) {
      const SymSize &x = (*a)[a->size() == 1 ? 0 : i];
      const SymSize &y = (*b)[b->size() == 1 ? 0 : i];
      std::optional<SymSize> r = arithmetic(node, x, y, integers);
      if (!r)
        return {};
      got->push_back(*r);
    }
  } else if (type == "Where") {
    std::optional<SmallVector<SymSize>> c = in(0), a = in(1), b = in(2);
    if (!c || !a || !b || !elementwise(0) || !elementwise(1) || !elementwise(2))
      return {};
    got.emplace();
    for (int64_t i = 0; i < n; ++i) {
      auto at = [&](const SmallVector<SymSize> &v) -> const SymSize * {
        if (v.size() == 1)
          return &v[0];
        return i < (int64_t)v.size() ? &v[i] : nullptr;
      };
      const SymSize *ci = at(*c), *ai = at(*a), *bi = at(*b);
      if (!ci || !ai || !bi || !ci->getConstant())
        return {};
      got->push_back(*ci->getConstant() ? *ai : *bi);
    }
  } else if (type == "ConstantOfShape") {
    auto v = node.op->getAttrOfType<DenseElementsAttr>("value");
    int64_t value = 0;
    if (v) {
      if (v.getNumElements() != 1 || !v.getElementType().isInteger())
        return {};
      value = (*v.getValues<APInt>().begin()).getSExtValue();
    }
    got = SmallVector<SymSize>(n, SymSize::constant(value));
  }
  if (!got || (int64_t)got->size() != n)
    return {};
  if (!fitsElementType(*got, outType.getElementType()))
    return {};
  contentMap[out] = *got;
  // Shape arithmetic that comes out constant (the static dimensions of a
  // symbolic tensor) becomes a constant, so the static conversions of its
  // consumers apply.
  SmallVector<int64_t> values;
  for (const SymSize &e : *got) {
    std::optional<int64_t> c = e.getConstant();
    if (!c)
      return {};
    values.push_back(*c);
  }
  if (out.getDefiningOp<ConstantOp>())
    return {};
  Type elt = outType.getElementType();
  SmallVector<Attribute> attrs;
  for (int64_t c : values)
    attrs.push_back(isa<FloatType>(elt)
                        ? Attribute(FloatAttr::get(elt, (double)c))
                        : Attribute(IntegerAttr::get(
                              elt, APInt(elt.getIntOrFloatBitWidth(),
                                         (uint64_t)c, /*isSigned=*/true,
                                         /*implicitTrunc=*/true))));
  Value c = ConstantOp::create(node.builder, node.loc(), outType,
                               DenseElementsAttr::get(outType, attrs));
  contentMap[c] = *got;
  return c;
}
