//===- Tensor.cpp - ONNX shape, layout and reduction ops --------*- C++ -*-===//
#include "ShapeInputs.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::kiln;

FailureOr<SmallVector<Value>> mlir::kiln::convertConstant(OnnxNode &node) {
  Builder &b = node.builder;
  ElementsAttr value;
  if (auto t = node.op->getAttrOfType<ElementsAttr>("value")) {
    value = t;
  } else if (auto f = node.op->getAttrOfType<FloatAttr>("value_float")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                                   (float)f.getValueAsDouble());
  } else if (auto i = node.op->getAttrOfType<IntegerAttr>("value_int")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                   i.getInt());
  } else if (auto fs = node.op->getAttrOfType<ArrayAttr>("value_floats")) {
    SmallVector<float> v;
    for (Attribute a : fs)
      v.push_back(cast<FloatAttr>(a).getValueAsDouble());
    value = DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)v.size()}, b.getF32Type()),
        ArrayRef<float>(v));
  } else if (std::optional<SmallVector<int64_t>> is = node.intsAttr("value_ints")) {
    value = DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)is->size()}, b.getI64Type()),
        ArrayRef<int64_t>(*is));
  } else {
    node.fail() << "only tensor, float, int, floats and ints values are "
                   "supported (sparse and string constants are not)";
    return failure();
  }
  Value c = ConstantOp::create(node.builder, node.loc(), value.getType(), value);
  return SmallVector<Value>{c};
}

namespace {
/// ONNX Reshape: 0 copies the input dimension (unless allowzero), -1 is
/// inferred from the element count.
FailureOr<SmallVector<Value>> reshapeWith(OnnxNode &node, Value x,
                                          SmallVector<int64_t> shape,
                                          bool allowZero) {
  RankedTensorType type = typeOf(x);
  if (failed(node.requireStaticShape(type)))
    return failure();
  int64_t known = 1, inferAt = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowZero) {
      if ((int64_t)i >= type.getRank()) {
        node.fail() << "shape entry " << i << " is 0 but the input has rank "
                    << type.getRank();
        return failure();
      }
      shape[i] = type.getDimSize(i);
    }
    if (shape[i] == -1) {
      if (inferAt >= 0) {
        node.fail() << "shape has more than one -1";
        return failure();
      }
      inferAt = i;
      continue;
    }
    if (shape[i] < 0) {
      node.fail() << "shape entry " << i << " is " << shape[i];
      return failure();
    }
    known *= shape[i];
  }
  if (inferAt >= 0) {
    if (known == 0 || type.getNumElements() % known) {
      node.fail() << "cannot infer the -1 dimension: " << type.getNumElements()
                  << " elements do not divide by " << known;
      return failure();
    }
    shape[inferAt] = type.getNumElements() / known;
  }
  return one(reshapeTo(node, x, shape));
}
} // namespace

FailureOr<SmallVector<Value>> mlir::kiln::convertReshape(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  std::optional<SmallVector<int64_t>> shape =
      node.opset < 5 ? node.intsAttr("shape") : node.constantInts(1);
  bool allowZero = node.intAttr("allowzero", 0) != 0;
  if (shape)
    return reshapeWith(node, *x, *shape, allowZero);
  if (node.opset < 5) {
    node.fail() << "the shape attribute is required";
    return failure();
  }
  // A run-time shape: reshape to the declared shape, and guard that the
  // values resolve to it (0 copies the input dimension unless allowzero, one
  // -1 takes what is left).
  FailureOr<RankedTensorType> declared =
      declaredResult(node, 0, "the target shape");
  FailureOr<Value> s = node.rankedInput(1);
  if (failed(declared) || failed(s) ||
      failed(node.requireStaticShape(typeOf(*x))))
    return failure();
  ArrayRef<int64_t> in = typeOf(*x).getShape(), out = declared->getShape();
  int64_t r = out.size();
  RankedTensorType st = typeOf(*s);
  if (st.getRank() != 1 || st.getDimSize(0) != r) {
    node.fail() << "shape of type " << st << " cannot give the declared rank-"
                << r << " output";
    return failure();
  }
  SmallVector<bool> zeroOk, minusOk;
  for (int64_t i = 0; i < r; ++i) {
    zeroOk.push_back(!allowZero && i < (int64_t)in.size() && in[i] == out[i]);
    int64_t others = 1;
    for (int64_t j = 0; j < r; ++j)
      if (j != i)
        others *= out[j];
    minusOk.push_back(others != 0);
  }
  FailureOr<Value> si = castTo(node, *s, node.builder.getI64Type());
  if (failed(si))
    return failure();
  auto entriesAre = [&](int64_t v) {
    return build<EqualOp>(node, *si,
                          constI64(node, SmallVector<int64_t>(r, v), {r}));
  };
  FailureOr<Value> exact = build<EqualOp>(node, *si, constI64(node, out, {r}));
  FailureOr<Value> zero = entriesAre(0), minus = entriesAre(-1);
  if (failed(exact) || failed(zero) || failed(minus))
    return failure();
  FailureOr<Value> zeroFine = build<AndOp>(node, *zero, constBool(node, zeroOk, {r}));
  FailureOr<Value> minusFine =
      build<AndOp>(node, *minus, constBool(node, minusOk, {r}));
  FailureOr<Value> ok = failed(zeroFine) ? FailureOr<Value>(failure()) : build<OrOp>(node, *exact, *zeroFine);
  if (succeeded(ok) && succeeded(minusFine))
    ok = build<OrOp>(node, *ok, *minusFine);
  // At most one -1.
  FailureOr<Value> minusCount = castTo(node, *minus, node.builder.getF32Type());
  if (succeeded(minusCount))
    minusCount = build<ReduceSumOp>(node, *minusCount,
                                    node.builder.getDenseI64ArrayAttr({0}),
                                    node.builder.getBoolAttr(false));
  if (failed(ok) || failed(minusCount))
    return failure();
  FailureOr<Value> oneMinus = allOf(node, *ok);
  if (failed(oneMinus))
    return failure();
  auto f32 = RankedTensorType::get({}, node.builder.getF32Type());
  Value oneF = ConstantOp::create(node.builder, node.loc(), f32,
                                  DenseElementsAttr::get(f32, 1.0f));
  FailureOr<Value> fewMinus = build<LessEqualOp>(node, *minusCount, oneF);
  if (failed(fewMinus))
    return failure();
  oneMinus = build<AndOp>(node, *oneMinus, *fewMinus);
  if (failed(oneMinus))
    return failure();
  std::string outStr;
  for (auto [i, d] : llvm::enumerate(out))
    outStr += (i ? "x" : "") + std::to_string(d);
  guardInput(node, *oneMinus, 1,
             "must resolve to the shape " + (out.empty() ? "[]" : outStr) +
                 " this model was compiled for");
  return one(reshapeTo(node, *x, out));
}

FailureOr<SmallVector<Value>> mlir::kiln::convertFlatten(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  int64_t rank = type.getRank();
  int64_t axis = node.intAttr("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank) {
    node.fail() << "axis " << node.intAttr("axis", 1)
                << " is out of range for rank " << rank;
    return failure();
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? outer : inner) *= type.getDimSize(d);
  return reshapeWith(node, *x, {outer, inner}, false);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertTranspose(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  SmallVector<int64_t> perm;
  if (std::optional<SmallVector<int64_t>> p = node.intsAttr("perm"))
    perm = *p;
  else
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  return one(build<TransposeOp>(node, *x, node.builder.getDenseI64ArrayAttr(perm)));
}

FailureOr<SmallVector<Value>> mlir::kiln::convertConcat(OnnxNode &node) {
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < node.numInputs(); ++i) {
    FailureOr<Value> v = node.rankedInput(i);
    if (failed(v))
      return failure();
    inputs.push_back(*v);
  }
  if (inputs.empty()) {
    node.fail() << "needs at least one input";
    return failure();
  }
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.intAttr("axis", 0), typeOf(inputs[0]).getRank());
  if (failed(axis))
    return failure();
  return one(build<ConcatOp>(node, inputs, node.builder.getI64IntegerAttr(*axis)));
}

FailureOr<SmallVector<Value>> mlir::kiln::convertShape(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  if (failed(node.requireStaticShape(type)))
    return failure();
  int64_t rank = type.getRank();
  int64_t start = node.intAttr("start", 0), end = node.intAttr("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  SmallVector<int64_t> dims(type.getShape().begin() + start,
                            type.getShape().begin() + std::max(start, end));
  auto resultType =
      RankedTensorType::get({(int64_t)dims.size()}, node.builder.getI64Type());
  Value c = ConstantOp::create(node.builder, node.loc(), resultType,
                               DenseElementsAttr::get(resultType,
                                                      ArrayRef<int64_t>(dims)));
  return SmallVector<Value>{c};
}

namespace {
FailureOr<SmallVector<Value>> padByGather(OnnxNode &node, Value x,
                                          StringRef mode,
                                          std::optional<SmallVector<int64_t>> pads);

} // namespace

/// Pad 2 (attributes) and 11+ (inputs). Constant pads and value in
/// "constant" mode become kiln.pad; everything else is gathered
/// (padByGather).
FailureOr<SmallVector<Value>> mlir::kiln::convertPad(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  std::string mode = node.strAttr("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect" &&
      !(mode == "wrap" && node.opset >= 19)) {
    node.fail() << "mode '" << mode << "' is not supported";
    return failure();
  }
  if (node.opset >= 11) {
    std::optional<SmallVector<int64_t>> constPads = node.constantInts(1);
    bool runtimePads = !constPads;
    bool runtimeValue = node.input(2) && !node.constantScalar(2);
    bool negative = constPads && llvm::any_of(*constPads, [](int64_t p) {
                      return p < 0;
                    });
    bool intConstant = mode == "constant" &&
                       !isa<FloatType>(typeOf(*x).getElementType());
    if (mode != "constant" || runtimePads || runtimeValue || negative ||
        intConstant)
      return padByGather(node, *x, mode, constPads);
  } else if (mode != "constant") {
    // Opset 2: edge and reflect with the pads attribute.
    std::optional<SmallVector<int64_t>> attrPads = node.intsAttr("pads");
    if (!attrPads) {
      node.fail() << "the pads attribute is required";
      return failure();
    }
    return padByGather(node, *x, mode, attrPads);
  }
  std::optional<SmallVector<int64_t>> pads;
  double value = 0.0;
  if (node.opset < 11) {
    pads = node.intsAttr("pads");
    value = node.floatAttr("value", 0.0f);
  } else {
    pads = node.constantInts(1);
    if (node.input(2)) {
      std::optional<double> v = node.constantScalar(2);
      if (!v) {
        node.fail() << "constant_value must be a compile-time constant";
        return failure();
      }
      value = *v;
    }
  }
  if (!pads) {
    node.fail() << "pads must be a compile-time constant";
    return failure();
  }
  // Opset 18: optional axes say which dimensions `pads` covers.
  if (node.opset >= 18 && node.input(3)) {
    std::optional<SmallVector<int64_t>> axes = node.constantInts(3);
    if (!axes) {
      node.fail() << "axes must be a compile-time constant";
      return failure();
    }
    int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
    if (pads->size() != 2 * axes->size()) {
      node.fail() << "expects " << 2 * axes->size() << " pads for "
                  << axes->size() << " axes, got " << pads->size();
      return failure();
    }
    SmallVector<int64_t> full(2 * rank, 0);
    for (auto [i, a] : llvm::enumerate(*axes)) {
      FailureOr<int64_t> axis = normalizeAxis(node, a, rank);
      if (failed(axis))
        return failure();
      full[*axis] = (*pads)[i];
      full[*axis + rank] = (*pads)[i + axes->size()];
    }
    pads = full;
  }
  if (llvm::any_of(*pads, [](int64_t p) { return p < 0; })) {
    node.fail() << "negative pads (cropping) are not supported yet";
    return failure();
  }
  return one(build<PadOp>(node, *x, node.builder.getDenseI64ArrayAttr(*pads),
                          node.builder.getF32FloatAttr(value)));
}

namespace {
/// Axes from the attribute (before `inputSince`) or from constant input 1.
std::optional<SmallVector<int64_t>> readAxes(OnnxNode &node, int64_t inputSince,
                                             bool &ok) {
  ok = true;
  if (node.opset < inputSince)
    return node.intsAttr("axes");
  if (!node.input(1))
    return std::nullopt;
  if (auto t = dyn_cast<RankedTensorType>(node.input(1).getType()))
    if (t.hasStaticShape() && t.getNumElements() == 0)
      return SmallVector<int64_t>();
  std::optional<SmallVector<int64_t>> axes = node.constantInts(1);
  if (!axes) {
    node.fail() << "axes must be a compile-time constant";
    ok = false;
  }
  return axes;
}


/// Whether input `i` is present but only known at run time.
bool runtimeInput(OnnxNode &node, unsigned i) {
  Value v = node.input(i);
  if (!v || node.constantInput(i))
    return false;
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return !(t && t.hasStaticShape() && t.getNumElements() == 0);
}

/// `shape` without the positions in `removed` (sorted).
SmallVector<int64_t> without(ArrayRef<int64_t> shape, ArrayRef<int64_t> removed) {
  SmallVector<int64_t> out;
  for (auto [p, d] : llvm::enumerate(shape))
    if (!llvm::is_contained(removed, (int64_t)p))
      out.push_back(d);
  return out;
}

/// One way run-time axes can be: the (sorted) axes and the rank-0 i1 that
/// says the values name exactly them.
struct AxesChoice {
  SmallVector<int64_t> axes;
  Value when;
};

/// Builds the choice conditions for `sets` of axes of a rank-`rank` tensor
/// named by run-time input 1, and guards that one of them holds.
FailureOr<SmallVector<AxesChoice>>
axesChoices(OnnxNode &node, ArrayRef<SmallVector<int64_t>> sets, int64_t rank,
            const Twine &expectation) {
  if (sets.empty()) {
    node.fail() << "no axes give the declared output shape";
    return failure();
  }
  FailureOr<Value> counts = axesCounts(node, node.input(1), rank);
  if (failed(counts))
    return failure();
  SmallVector<AxesChoice> choices;
  Value any;
  for (const SmallVector<int64_t> &set : sets) {
    FailureOr<Value> when = countsAre(node, *counts, set, rank);
    if (failed(when))
      return failure();
    choices.push_back({set, *when});
    if (!any) {
      any = *when;
    } else {
      FailureOr<Value> o = build<OrOp>(node, any, *when);
      if (failed(o))
        return failure();
      any = *o;
    }
  }
  guardInput(node, any, 1, expectation);
  return choices;
}

/// Squeeze/Unsqueeze 13 with run-time axes: every set of axes that gives the
/// declared shape moves the same data, so one reshape serves them all.
FailureOr<SmallVector<Value>> squeezeRuntime(OnnxNode &node, Value x,
                                             bool unsqueeze) {
  FailureOr<RankedTensorType> declared = declaredResult(node, 0, "axes");
  if (failed(declared) || failed(node.requireStaticShape(typeOf(x))))
    return failure();
  ArrayRef<int64_t> in = typeOf(x).getShape(), out = declared->getShape();
  auto axesType = dyn_cast<RankedTensorType>(node.input(1).getType());
  if (!axesType || !axesType.hasStaticShape()) {
    node.fail() << "axes must have a static length";
    return failure();
  }
  int64_t k = axesType.getNumElements();
  ArrayRef<int64_t> big = unsqueeze ? out : in, small = unsqueeze ? in : out;
  SmallVector<int64_t> ones;
  for (auto [p, d] : llvm::enumerate(big))
    if (d == 1)
      ones.push_back(p);
  SmallVector<SmallVector<int64_t>> sets;
  for (SmallVector<int64_t> &set : subsets(ones, k))
    if (ArrayRef<int64_t>(without(big, set)) == small)
      sets.push_back(set);
  if (failed(axesChoices(node, sets, big.size(),
                         "must name axes that turn " + llvm::join(llvm::map_range(in, [](int64_t d) { return std::to_string(d); }), "x") +
                             " into the declared output shape this model was "
                             "compiled for")))
    return failure();
  return one(reshapeTo(node, x, out));
}

FailureOr<SmallVector<Value>> squeeze(OnnxNode &node, bool unsqueeze) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  if (node.opset >= 13 && runtimeInput(node, 1))
    return squeezeRuntime(node, *x, unsqueeze);
  bool ok;
  std::optional<SmallVector<int64_t>> axes = readAxes(node, 13, ok);
  if (!ok)
    return failure();
  RankedTensorType type = typeOf(*x);
  SmallVector<int64_t> shape(type.getShape());
  if (unsqueeze) {
    if (!axes) {
      node.fail() << "axes are required";
      return failure();
    }
    int64_t outRank = type.getRank() + axes->size();
    SmallVector<int64_t> norm;
    for (int64_t a : *axes) {
      FailureOr<int64_t> n = normalizeAxis(node, a, outRank);
      if (failed(n))
        return failure();
      norm.push_back(*n);
    }
    llvm::sort(norm);
    for (int64_t a : norm)
      shape.insert(shape.begin() + std::min<int64_t>(a, shape.size()), 1);
  } else {
    SmallVector<int64_t> norm;
    if (axes) {
      for (int64_t a : *axes) {
        FailureOr<int64_t> n = normalizeAxis(node, a, type.getRank());
        if (failed(n))
          return failure();
        if (type.getDimSize(*n) != 1) {
          node.fail() << "cannot squeeze axis " << a << " of size "
                      << type.getDimSize(*n);
          return failure();
        }
        norm.push_back(*n);
      }
    } else {
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.getDimSize(d) == 1)
          norm.push_back(d);
    }
    llvm::sort(norm);
    for (int64_t a : llvm::reverse(norm))
      shape.erase(shape.begin() + a);
  }
  return one(reshapeTo(node, *x, shape));
}

/// Optional constant integer input `i`: nullopt when omitted, failure (with
/// a diagnostic) when given but not a compile-time constant.
FailureOr<std::optional<SmallVector<int64_t>>>
optionalInts(OnnxNode &node, unsigned i, StringRef what) {
  if (!node.input(i))
    return std::optional<SmallVector<int64_t>>();
  std::optional<SmallVector<int64_t>> v = node.constantInts(i);
  if (!v) {
    node.fail() << what << " must be a compile-time constant";
    return failure();
  }
  return v;
}
} // namespace

/// Gather 1, 11, 13. Constant indices are checked against the axis here;
/// kiln.gather clamps whatever arrives at run time.
FailureOr<SmallVector<Value>> mlir::kiln::convertGather(OnnxNode &node) {
  FailureOr<Value> data = node.rankedInput(0), indices = node.rankedInput(1);
  if (failed(data) || failed(indices))
    return failure();
  FailureOr<int64_t> axis = checkedGatherAxis(node, *data);
  if (failed(axis))
    return failure();
  return one(build<GatherOp>(node, *data, *indices,
                             node.builder.getI64IntegerAttr(*axis)));
}

namespace {
/// Rank-0 i64 constant.
Value scalarI64(OnnxNode &node, int64_t v) { return constI64(node, {v}, {}); }

/// Small builders on rank-0/1 i64 tensors for run-time index arithmetic.
struct IndexMath {
  OnnxNode &node;
  bool ok = true;
  Value check(FailureOr<Value> v) {
    if (failed(v)) {
      ok = false;
      return scalarI64(node, 0);
    }
    return *v;
  }
  Value add(Value a, Value b) { return check(build<AddOp>(node, a, b)); }
  Value sub(Value a, Value b) { return check(build<SubOp>(node, a, b)); }
  Value mul(Value a, Value b) { return check(build<MulOp>(node, a, b)); }
  Value div(Value a, Value b) { return check(build<DivOp>(node, a, b)); }
  Value max(Value a, Value b) { return check(build<MaxOp>(node, a, b)); }
  Value min(Value a, Value b) { return check(build<MinOp>(node, a, b)); }
  Value less(Value a, Value b) { return check(build<LessOp>(node, a, b)); }
  Value eq(Value a, Value b) { return check(build<EqualOp>(node, a, b)); }
  Value land(Value a, Value b) { return check(build<AndOp>(node, a, b)); }
  Value where(Value c, Value a, Value b) {
    return check(build<WhereOp>(node, c, a, b));
  }
  Value clamp(Value v, Value lo, Value hi) { return min(max(v, lo), hi); }
  Value c(int64_t v) { return scalarI64(node, v); }
  Value iota(int64_t n) {
    SmallVector<int64_t> v;
    for (int64_t i = 0; i < n; ++i)
      v.push_back(i);
    return constI64(node, v, {n});
  }
  /// Element j of input i (an integer vector), as rank-0 i64.
  Value at(unsigned i, int64_t j) {
    FailureOr<Value> v = castTo(node, node.input(i), node.builder.getI64Type());
    if (failed(v)) {
      ok = false;
      return c(0);
    }
    return check(elementAt(node, *v, j));
  }
};

/// Slice 10+ with run-time starts, ends, axes or steps: per dimension, the
/// ONNX start/count are computed at run time from the values, the count is
/// guarded against the declared size, and the elements are gathered at
/// start + i * step (kiln.gather clamps, so any values stay in bounds).
FailureOr<SmallVector<Value>>
sliceRuntime(OnnxNode &node, Value x,
             std::optional<RankedTensorType> known = std::nullopt) {
  FailureOr<RankedTensorType> declared =
      known ? FailureOr<RankedTensorType>(*known)
            : declaredResult(node, 0, "starts, ends, axes and steps");
  if (failed(declared) || failed(node.requireStaticShape(typeOf(x))))
    return failure();
  ArrayRef<int64_t> in = typeOf(x).getShape(), out = declared->getShape();
  int64_t rank = in.size();
  if ((int64_t)out.size() != rank) {
    node.fail() << "the declared output rank differs from the input rank";
    return failure();
  }
  auto startsType = dyn_cast<RankedTensorType>(node.input(1).getType());
  if (!startsType || !startsType.hasStaticShape() || startsType.getRank() != 1) {
    node.fail() << "starts must be a 1-D tensor of static length";
    return failure();
  }
  int64_t k = startsType.getNumElements();
  for (unsigned i : {2u, 3u, 4u}) {
    auto t = node.input(i) ? dyn_cast<RankedTensorType>(node.input(i).getType())
                           : RankedTensorType();
    if (node.input(i) && (!t || !t.hasStaticShape() || t.getNumElements() != k)) {
      node.fail() << "starts, ends, axes and steps must have " << k
                  << " values each";
      return failure();
    }
  }
  IndexMath m{node};
  Value r = m.c(rank);
  // Normalized axis of each entry.
  SmallVector<Value> axes, starts, ends, steps;
  // Without axes, entry j slices dimension j: later dimensions stay whole.
  std::optional<SmallVector<int64_t>> constAxes =
      node.input(3) ? node.constantInts(3)
                    : std::optional<SmallVector<int64_t>>(
                          llvm::to_vector(llvm::seq<int64_t>(0, k)));
  for (int64_t j = 0; j < k; ++j) {
    Value a = node.input(3) ? m.at(3, j) : m.c(j);
    axes.push_back(m.where(m.less(a, m.c(0)), m.add(a, r), a));
    starts.push_back(m.at(1, j));
    ends.push_back(m.at(2, j));
    steps.push_back(node.input(4) ? m.at(4, j) : m.c(1));
  }
  if (!m.ok)
    return failure();
  Value ok;
  if (node.input(3) && !constAxes) {
    FailureOr<Value> counts = axesCounts(node, node.input(3), rank);
    if (failed(counts))
      return failure();
    auto f32 = RankedTensorType::get({rank}, node.builder.getF32Type());
    Value ones = ConstantOp::create(node.builder, node.loc(), f32,
                                    DenseElementsAttr::get(f32, 1.0f));
    FailureOr<Value> le = build<LessEqualOp>(node, *counts, ones);
    FailureOr<Value> all = failed(le) ? FailureOr<Value>(failure()) : allOf(node, *le);
    if (failed(all))
      return failure();
    ok = *all;
  }
  Value y = x;
  for (int64_t d = 0; d < rank; ++d) {
    if (constAxes && !llvm::is_contained(*constAxes, d) &&
        !llvm::is_contained(*constAxes, d - rank))
      continue; // not sliced: the whole dimension
    int64_t n = in[d];
    Value start = m.c(0), end = m.c(n), step = m.c(1);
    // The first entry naming d wins (ONNX forbids repeats; guarded above).
    for (int64_t j = k - 1; j >= 0; --j) {
      Value sel = m.eq(axes[j], m.c(d));
      start = m.where(sel, starts[j], start);
      end = m.where(sel, ends[j], end);
      step = m.where(sel, steps[j], step);
    }
    Value stepOk = m.less(m.c(0), m.max(step, m.sub(m.c(0), step)));
    // A step beyond the dimension reads one element either way; clamping
    // it keeps the count arithmetic below from overflowing.
    Value safeStep =
        m.where(stepOk, m.clamp(step, m.c(-n - 1), m.c(n + 1)), m.c(1));
    Value pos = m.less(m.c(0), safeStep);
    start = m.where(m.less(start, m.c(0)), m.add(start, m.c(n)), start);
    end = m.where(m.less(end, m.c(0)), m.add(end, m.c(n)), end);
    start = m.where(pos, m.clamp(start, m.c(0), m.c(n)),
                    m.clamp(start, m.c(0), m.c(n - 1)));
    end = m.where(pos, m.clamp(end, m.c(0), m.c(n)),
                  m.clamp(end, m.c(-1), m.c(n - 1)));
    Value sign = m.where(pos, m.c(1), m.c(-1));
    Value count = m.max(
        m.c(0), m.div(m.sub(m.add(m.sub(end, start), safeStep), sign), safeStep));
    Value dimOk = m.land(stepOk, m.eq(count, m.c(out[d])));
    ok = ok ? m.land(ok, dimOk) : dimOk;
    if (declared->getNumElements() == 0)
      continue; // nothing to read; the result is an empty constant below
    Value idx = m.add(start, m.mul(m.iota(out[d]), safeStep));
    if (!m.ok)
      return failure();
    FailureOr<Value> g =
        build<GatherOp>(node, y, idx, node.builder.getI64IntegerAttr(d));
    if (failed(g))
      return failure();
    y = *g;
  }
  if (!m.ok)
    return failure();
  if (declared->getNumElements() == 0)
    y = ConstantOp::create(
        node.builder, node.loc(), *declared,
        DenseElementsAttr::get(*declared, node.builder.getZeroAttr(
                                              declared->getElementType())));
  if (ok)
    guardInput(node, ok, 1,
               "with ends, axes and steps must select the declared output "
               "shape this model was compiled for (and steps must not be 0)");
  return SmallVector<Value>{y};
}

/// Pad 11+ in any mode by gathers: output position j of dimension d reads
/// input position j - pad_before[d], mapped into range by the mode
/// (constant: masked to `value` outside; edge: clamped; reflect: mirrored;
/// wrap: modulo). Used for edge/reflect/wrap and for run-time pads or values.
FailureOr<SmallVector<Value>> padByGather(OnnxNode &node, Value x,
                                          StringRef mode,
                                          std::optional<SmallVector<int64_t>> pads) {
  if (failed(node.requireStaticShape(typeOf(x))))
    return failure();
  ArrayRef<int64_t> in = typeOf(x).getShape();
  int64_t rank = in.size();
  if (node.opset >= 18 && node.input(3)) {
    node.fail() << "run-time pads or non-constant modes with the axes input "
                   "are not supported";
    return failure();
  }
  IndexMath m{node};
  SmallVector<int64_t> out;
  SmallVector<Value> before;
  if (pads) {
    if ((int64_t)pads->size() != 2 * rank) {
      node.fail() << "expects " << 2 * rank << " pads, got " << pads->size();
      return failure();
    }
    for (int64_t d = 0; d < rank; ++d) {
      out.push_back(in[d] + (*pads)[d] + (*pads)[d + rank]);
      before.push_back(m.c((*pads)[d]));
    }
  } else {
    FailureOr<RankedTensorType> declared = declaredResult(node, 0, "pads");
    if (failed(declared))
      return failure();
    if (declared->getRank() != rank) {
      node.fail() << "the declared output rank differs from the input rank";
      return failure();
    }
    auto pt = dyn_cast<RankedTensorType>(node.input(1).getType());
    if (!pt || !pt.hasStaticShape() || pt.getNumElements() != 2 * rank) {
      node.fail() << "expects " << 2 * rank << " pads";
      return failure();
    }
    out.assign(declared->getShape().begin(), declared->getShape().end());
    Value ok;
    for (int64_t d = 0; d < rank; ++d) {
      Value lo = m.at(1, d), hi = m.at(1, d + rank);
      before.push_back(lo);
      Value dimOk = m.eq(m.add(lo, hi), m.c(out[d] - in[d]));
      ok = ok ? m.land(ok, dimOk) : dimOk;
    }
    if (!m.ok)
      return failure();
    guardInput(node, ok, 1,
               "must pad the input to the declared output shape this model "
               "was compiled for");
  }
  Value y = x, mask;
  for (int64_t d = 0; d < rank; ++d) {
    if (pads && (*pads)[d] == 0 && (*pads)[d + rank] == 0)
      continue;
    int64_t n = in[d];
    if (n == 0 && mode != "constant") {
      node.fail() << "cannot pad an empty dimension in mode '" << mode << "'";
      return failure();
    }
    Value src = m.sub(m.iota(out[d]), before[d]), idx;
    if (mode == "reflect" && n > 1) {
      int64_t period = 2 * (n - 1);
      FailureOr<Value> t = build<ModOp>(node, src, m.c(period),
                                        node.builder.getBoolAttr(false));
      Value tv = m.check(t);
      idx = m.where(m.less(tv, m.c(n)), tv, m.sub(m.c(period), tv));
    } else if (mode == "wrap") {
      idx = m.check(build<ModOp>(node, src, m.c(n),
                                 node.builder.getBoolAttr(false)));
    } else {
      idx = m.clamp(src, m.c(0), m.c(std::max<int64_t>(n - 1, 0)));
    }
    if (mode == "constant") {
      Value inside = m.land(m.less(m.c(-1), src), m.less(src, m.c(n)));
      SmallVector<int64_t> shape(rank, 1);
      shape[d] = out[d];
      Value shaped = m.check(reshapeTo(node, inside, shape));
      mask = mask ? m.land(mask, shaped) : shaped;
    }
    if (!m.ok)
      return failure();
    if (n == 0) {
      node.fail() << "cannot pad an empty dimension by gathering";
      return failure();
    }
    FailureOr<Value> g =
        build<GatherOp>(node, y, idx, node.builder.getI64IntegerAttr(d));
    if (failed(g))
      return failure();
    y = *g;
  }
  if (mode == "constant" && mask) {
    Type elt = typeOf(x).getElementType();
    Value value;
    if (node.input(2)) {
      FailureOr<Value> v = node.rankedInput(2);
      if (failed(v))
        return failure();
      value = *v;
      if (typeOf(value).getRank() != 0)
        value = m.check(reshapeTo(node, value, {}));
    } else {
      auto t = RankedTensorType::get({}, elt);
      value = ConstantOp::create(node.builder, node.loc(), t,
                                 DenseElementsAttr::get(t, node.builder.getZeroAttr(elt)));
    }
    if (!m.ok)
      return failure();
    return one(build<WhereOp>(node, mask, y, value));
  }
  return SmallVector<Value>{y};
}

FailureOr<Value> buildSlice(OnnxNode &node, Value x, const SliceBounds &b) {
  auto &bl = node.builder;
  return build<SliceOp>(node, x, bl.getDenseI64ArrayAttr(b.offsets),
                        bl.getDenseI64ArrayAttr(b.sizes),
                        bl.getDenseI64ArrayAttr(b.strides));
}
} // namespace

/// Slice 1 (attributes) and 10, 11, 13 (constant inputs).
FailureOr<SmallVector<Value>> mlir::kiln::convertSlice(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  std::optional<SmallVector<int64_t>> starts, ends, axes, steps;
  if (node.opset < 10) {
    starts = node.intsAttr("starts");
    ends = node.intsAttr("ends");
    axes = node.intsAttr("axes");
    if (!starts || !ends) {
      node.fail() << "the starts and ends attributes are required";
      return failure();
    }
  } else {
    if (llvm::any_of(std::initializer_list<unsigned>{1, 2, 3, 4},
                     [&](unsigned i) { return runtimeInput(node, i); }))
      return sliceRuntime(node, *x);
    starts = node.constantInts(1);
    ends = node.constantInts(2);
    if (!starts || !ends) {
      node.fail() << "starts and ends must be compile-time constants; Kiln "
                     "slices with static bounds";
      return failure();
    }
    FailureOr<std::optional<SmallVector<int64_t>>> a =
        optionalInts(node, 3, "axes");
    FailureOr<std::optional<SmallVector<int64_t>>> st =
        optionalInts(node, 4, "steps");
    if (failed(a) || failed(st))
      return failure();
    axes = *a;
    steps = *st;
  }
  // Constant negative steps: gather each reversed axis at constant indices
  // start + i * step (after ONNX's clamping).
  if (node.opset >= 10 && steps &&
      llvm::any_of(*steps, [](int64_t s) { return s < 0; }) &&
      typeOf(*x).hasStaticShape() && starts->size() == ends->size() &&
      steps->size() == starts->size() &&
      (!axes || axes->size() == starts->size())) {
    int64_t rank = typeOf(*x).getRank();
    SmallVector<bool> seen(rank, false);
    Value y = *x;
    for (size_t j = 0; j < starts->size(); ++j) {
      FailureOr<int64_t> a =
          normalizeAxis(node, axes ? (*axes)[j] : (int64_t)j, rank);
      if (failed(a))
        return failure();
      if (seen[*a] || (*steps)[j] == 0) {
        node.fail() << (seen[*a] ? "an axis is sliced twice"
                                 : "steps must not be 0");
        return failure();
      }
      seen[*a] = true;
      int64_t n = typeOf(*x).getDimSize(*a), t = (*steps)[j];
      int64_t st = (*starts)[j], e = (*ends)[j], count;
      st = st < 0 ? st + n : st;
      e = e < 0 ? e + n : e;
      if (t > 0) {
        st = std::clamp<int64_t>(st, 0, n);
        e = std::clamp<int64_t>(e, 0, n);
        count = e > st ? (e - st + t - 1) / t : 0;
      } else {
        st = std::clamp<int64_t>(st, 0, n - 1);
        e = std::clamp<int64_t>(e, -1, n - 1);
        count = st > e ? (st - e - t - 1) / -t : 0;
      }
      if (count == n && t == 1)
        continue;
      if (count == 0) {
        SmallVector<int64_t> shape(typeOf(y).getShape());
        shape[*a] = 0;
        auto type = RankedTensorType::get(shape, typeOf(y).getElementType());
        y = ConstantOp::create(node.builder, node.loc(), type,
                               DenseElementsAttr::get(
                                   type, node.builder.getZeroAttr(
                                             type.getElementType())));
        continue;
      }
      SmallVector<int64_t> idx;
      for (int64_t i = 0; i < count; ++i)
        idx.push_back(st + i * t);
      FailureOr<Value> g =
          build<GatherOp>(node, y, constI64(node, idx, {count}),
                          node.builder.getI64IntegerAttr(*a));
      if (failed(g))
        return failure();
      y = *g;
    }
    return SmallVector<Value>{y};
  }
  FailureOr<SliceBounds> bounds =
      resolveSlice(node, typeOf(*x).getShape(), *starts, *ends, axes, steps);
  if (failed(bounds))
    return failure();
  return one(buildSlice(node, *x, *bounds));
}

/// Split 2, 11 (split attribute), 13 (split input), 18 (num_outputs). Without
/// split the outputs are equal; from 18 the last may be smaller.
FailureOr<SmallVector<Value>> mlir::kiln::convertSplit(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.intAttr("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  if (failed(node.requireStaticShape(type)))
    return failure();
  int64_t dim = type.getDimSize(*axis), outputs = node.op->getNumResults();
  std::optional<SmallVector<int64_t>> sizes;
  if (node.opset < 13) {
    sizes = node.intsAttr("split");
  } else if (runtimeInput(node, 1)) {
    // Run-time sizes: the declared outputs' lengths along the axis.
    sizes.emplace();
    for (unsigned i = 0; i < node.op->getNumResults(); ++i) {
      FailureOr<RankedTensorType> declared =
          declaredResult(node, i, "the split sizes");
      if (failed(declared))
        return failure();
      if (declared->getRank() != type.getRank()) {
        node.fail() << "output " << i << " has rank " << declared->getRank()
                    << ", not the input's " << type.getRank();
        return failure();
      }
      sizes->push_back(declared->getDimSize(*axis));
    }
    if (failed(guardEquals(node, 1, *sizes, "the split sizes")))
      return failure();
  } else {
    FailureOr<std::optional<SmallVector<int64_t>>> s =
        optionalInts(node, 1, "split");
    if (failed(s))
      return failure();
    sizes = *s;
  }
  if (sizes) {
    if ((int64_t)sizes->size() != outputs) {
      node.fail() << "split has " << sizes->size() << " sizes but the node has "
                  << outputs << " outputs";
      return failure();
    }
    int64_t total = 0;
    for (int64_t s : *sizes) {
      if (s < 0) {
        node.fail() << "split sizes must be non-negative, got " << s;
        return failure();
      }
      total += s;
    }
    if (total != dim) {
      node.fail() << "split sizes add up to " << total << " but axis " << *axis
                  << " has " << dim << " elements";
      return failure();
    }
  } else if (node.opset >= 18) {
    int64_t parts = node.intAttr("num_outputs", outputs);
    if (parts != outputs) {
      node.fail() << "num_outputs is " << parts << " but the node has "
                  << outputs << " outputs";
      return failure();
    }
    int64_t chunk = (dim + parts - 1) / parts;
    if (dim - chunk * (parts - 1) < 0) {
      node.fail() << "cannot split " << dim << " elements into " << parts
                  << " chunks of " << chunk;
      return failure();
    }
    sizes = SmallVector<int64_t>(parts, chunk);
    sizes->back() = dim - chunk * (parts - 1);
  } else {
    if (outputs == 0 || dim % outputs) {
      node.fail() << "cannot split " << dim << " elements evenly into "
                  << outputs << " outputs; give the split sizes";
      return failure();
    }
    sizes = SmallVector<int64_t>(outputs, dim / outputs);
  }
  SmallVector<Value> results;
  SliceBounds bounds;
  bounds.offsets.assign(type.getRank(), 0);
  bounds.sizes.assign(type.getShape().begin(), type.getShape().end());
  bounds.strides.assign(type.getRank(), 1);
  int64_t offset = 0;
  for (auto [i, size] : llvm::enumerate(*sizes)) {
    bounds.offsets[*axis] = offset;
    bounds.sizes[*axis] = size;
    offset += size;
    if (!node.resultUsed(i)) {
      results.push_back(nullptr);
      continue;
    }
    FailureOr<Value> part = buildSlice(node, *x, bounds);
    if (failed(part))
      return failure();
    results.push_back(*part);
  }
  return results;
}

namespace {
/// The sorted, unique, non-negative axes of an ONNX reduction. Axes are an
/// attribute, except from `axesInputSince` where they are an optional input;
/// no axes means all axes unless noop_with_empty_axes is set, which yields
/// nullopt (the reduction is the identity).
FailureOr<std::optional<SmallVector<int64_t>>>
reductionAxes(OnnxNode &node, int64_t rank, int64_t axesInputSince) {
  bool ok;
  std::optional<SmallVector<int64_t>> axes = readAxes(node, axesInputSince, ok);
  if (!ok)
    return failure();
  SmallVector<int64_t> norm;
  if (!axes || axes->empty()) {
    if (node.intAttr("noop_with_empty_axes", 0))
      return std::optional<SmallVector<int64_t>>();
    for (int64_t d = 0; d < rank; ++d)
      norm.push_back(d);
  } else {
    for (int64_t a : *axes) {
      FailureOr<int64_t> n = normalizeAxis(node, a, rank);
      if (failed(n))
        return failure();
      norm.push_back(*n);
    }
  }
  llvm::sort(norm);
  norm.erase(std::unique(norm.begin(), norm.end()), norm.end());
  return std::optional<SmallVector<int64_t>>(norm);
}

/// The reductions ONNX defines from a sum or a product: a scalar function
/// before, the reduction, a scalar function after.
enum class Composite { L1, L2, SumSquare, LogSum, LogSumExp, Prod };

/// Reductions whose axes are only known at run time (axes input): the sets
/// of axes that give the declared output shape, each reduced by `compute` and
/// selected by a kiln.where on the run-time values. With keepdims the sets
/// differ only in size-1 axes and give the same numbers: one is computed.
FailureOr<SmallVector<Value>>
reduceRuntime(OnnxNode &node, Value x,
              const std::function<FailureOr<Value>(ArrayRef<int64_t>)> &compute) {
  FailureOr<RankedTensorType> declared = declaredResult(node, 0, "axes");
  if (failed(declared) || failed(node.requireStaticShape(typeOf(x))))
    return failure();
  ArrayRef<int64_t> in = typeOf(x).getShape(), out = declared->getShape();
  auto axesType = dyn_cast<RankedTensorType>(node.input(1).getType());
  if (!axesType || !axesType.hasStaticShape()) {
    node.fail() << "axes must have a static length";
    return failure();
  }
  int64_t k = axesType.getNumElements(), rank = in.size();
  bool keep = node.intAttr("keepdims", 1) != 0;
  SmallVector<SmallVector<int64_t>> sets;
  if (keep) {
    if ((int64_t)out.size() != rank) {
      node.fail() << "with keepdims the declared output must have rank "
                  << rank;
      return failure();
    }
    SmallVector<int64_t> must, optional;
    for (int64_t p = 0; p < rank; ++p) {
      if (in[p] != out[p]) {
        if (out[p] != 1) {
          node.fail() << "the declared output shape is not a reduction of "
                         "the input shape";
          return failure();
        }
        must.push_back(p);
      } else if (in[p] == 1) {
        optional.push_back(p);
      }
    }
    for (SmallVector<int64_t> t :
         subsets(optional, k - (int64_t)must.size())) {
      t.append(must);
      llvm::sort(t);
      sets.push_back(t);
    }
  } else {
    SmallVector<int64_t> all;
    for (int64_t p = 0; p < rank; ++p)
      all.push_back(p);
    for (SmallVector<int64_t> &t : subsets(all, k))
      if (ArrayRef<int64_t>(without(in, t)) == out)
        sets.push_back(t);
  }
  FailureOr<SmallVector<AxesChoice>> choices = axesChoices(
      node, sets, rank,
      "must name axes that reduce the input to the declared output shape "
      "this model was compiled for");
  if (failed(choices))
    return failure();
  FailureOr<Value> result = compute(choices->back().axes);
  if (keep || failed(result))
    return one(result);
  for (const AxesChoice &c : llvm::reverse(ArrayRef(*choices).drop_back())) {
    FailureOr<Value> r = compute(c.axes);
    if (failed(r))
      return failure();
    result = build<WhereOp>(node, c.when, *r, *result);
    if (failed(result))
      return failure();
  }
  return one(result);
}

FailureOr<Value> compositeOn(OnnxNode &node, Composite kind, Value x,
                             ArrayRef<int64_t> axes);

FailureOr<SmallVector<Value>> reduceComposite(OnnxNode &node, Composite kind) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  auto compute = [&](ArrayRef<int64_t> axes) {
    return compositeOn(node, kind, *x, axes);
  };
  if (node.opset >= 18 && runtimeInput(node, 1))
    return reduceRuntime(node, *x, compute);
  FailureOr<std::optional<SmallVector<int64_t>>> axes =
      reductionAxes(node, typeOf(*x).getRank(), 18);
  if (failed(axes))
    return failure();
  if (!*axes) {
    // noop_with_empty_axes: ONNX's reference still applies the elementwise
    // parts for some of these ops and not for others; report it rather than
    // guess.
    node.fail() << "noop_with_empty_axes with empty axes is not supported "
                   "for this reduction";
    return failure();
  }
  return one(compute(**axes));
}

FailureOr<Value> compositeOn(OnnxNode &node, Composite kind, Value x,
                             ArrayRef<int64_t> axes) {
  DenseI64ArrayAttr axesAttr = node.builder.getDenseI64ArrayAttr(axes);
  bool keep = node.intAttr("keepdims", 1) != 0;
  BoolAttr keepAttr = node.builder.getBoolAttr(keep);
  Value v = x;
  FailureOr<Value> r;
  switch (kind) {
  case Composite::Prod:
    return build<ReduceProdOp>(node, v, axesAttr, keepAttr);
  case Composite::L1:
    r = build<AbsOp>(node, v);
    break;
  case Composite::L2:
  case Composite::SumSquare:
    r = build<MulOp>(node, v, v);
    break;
  case Composite::LogSum:
    r = v;
    break;
  case Composite::LogSumExp: {
    // log(sum(exp(x - m))) + m with m the maximum, which cannot overflow.
    FailureOr<Value> m =
        build<ReduceMaxOp>(node, v, axesAttr, node.builder.getBoolAttr(true));
    if (failed(m))
      return failure();
    FailureOr<Value> d = build<SubOp>(node, v, *m);
    if (failed(d))
      return failure();
    FailureOr<Value> e = build<ExpOp>(node, *d);
    if (failed(e))
      return failure();
    FailureOr<Value> s = build<ReduceSumOp>(node, *e, axesAttr, keepAttr);
    if (failed(s))
      return failure();
    FailureOr<Value> l = build<LogOp>(node, *s);
    if (failed(l))
      return failure();
    FailureOr<Value> mr = reshapeTo(node, *m, typeOf(*l).getShape());
    if (failed(mr))
      return failure();
    return build<AddOp>(node, *l, *mr);
  }
  }
  if (failed(r))
    return failure();
  r = build<ReduceSumOp>(node, *r, axesAttr, keepAttr);
  if (failed(r))
    return failure();
  if (kind == Composite::L2)
    return build<SqrtOp>(node, *r);
  if (kind == Composite::LogSum)
    return build<LogOp>(node, *r);
  return r;
}
} // namespace

/// Size: the element count of a static input, as an int64 scalar constant.
FailureOr<SmallVector<Value>> mlir::kiln::convertSize(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  if (failed(node.requireStaticShape(type)))
    return failure();
  auto resultType = RankedTensorType::get({}, node.builder.getI64Type());
  Value c = ConstantOp::create(
      node.builder, node.loc(), resultType,
      DenseElementsAttr::get(resultType, type.getNumElements()));
  return SmallVector<Value>{c};
}

namespace {
/// ArgMax/ArgMin 1, 11 (negative axes), 12, 13 (select_last_index).
template <typename OpTy>
FailureOr<SmallVector<Value>> argReduce(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.intAttr("axis", 0), typeOf(*x).getRank());
  if (failed(axis))
    return failure();
  Builder &b = node.builder;
  return one(
      build<OpTy>(node, *x, b.getI64IntegerAttr(*axis),
                  b.getBoolAttr(node.intAttr("keepdims", 1) != 0),
                  b.getBoolAttr(node.intAttr("select_last_index", 0) != 0)));
}

/// ReduceMean/Sum/Max/Min (see reductionAxes).
template <typename OpTy>
FailureOr<SmallVector<Value>> reduce(OnnxNode &node, int64_t axesInputSince) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  if (node.opset >= axesInputSince && runtimeInput(node, 1))
    return reduceRuntime(node, *x, [&](ArrayRef<int64_t> axes) {
      return build<OpTy>(
          node, *x, node.builder.getDenseI64ArrayAttr(axes),
          node.builder.getBoolAttr(node.intAttr("keepdims", 1) != 0));
    });
  FailureOr<std::optional<SmallVector<int64_t>>> axes =
      reductionAxes(node, typeOf(*x).getRank(), axesInputSince);
  if (failed(axes))
    return failure();
  if (!*axes)
    return SmallVector<Value>{*x};
  return one(
      build<OpTy>(node, *x, node.builder.getDenseI64ArrayAttr(**axes),
                  node.builder.getBoolAttr(node.intAttr("keepdims", 1) != 0)));
}
} // namespace

FailureOr<SmallVector<Value>> mlir::kiln::convertSqueeze(OnnxNode &node) {
  return squeeze(node, false);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertUnsqueeze(OnnxNode &node) {
  return squeeze(node, true);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertReduceMean(OnnxNode &node) {
  return reduce<ReduceMeanOp>(node, 18);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertReduceMax(OnnxNode &node) {
  return reduce<ReduceMaxOp>(node, 18);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertReduceMin(OnnxNode &node) {
  return reduce<ReduceMinOp>(node, 18);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertReduceSum(OnnxNode &node) {
  return reduce<ReduceSumOp>(node, 13);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertArgMax(OnnxNode &node) {
  return argReduce<ArgMaxOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertArgMin(OnnxNode &node) {
  return argReduce<ArgMinOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertReduceL1(OnnxNode &node) {
  return reduceComposite(node, Composite::L1);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertReduceL2(OnnxNode &node) {
  return reduceComposite(node, Composite::L2);
}

FailureOr<SmallVector<Value>>
mlir::kiln::convertReduceSumSquare(OnnxNode &node) {
  return reduceComposite(node, Composite::SumSquare);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertReduceLogSum(OnnxNode &node) {
  return reduceComposite(node, Composite::LogSum);
}

FailureOr<SmallVector<Value>>
mlir::kiln::convertReduceLogSumExp(OnnxNode &node) {
  return reduceComposite(node, Composite::LogSumExp);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertReduceProd(OnnxNode &node) {
  return reduceComposite(node, Composite::Prod);
}
