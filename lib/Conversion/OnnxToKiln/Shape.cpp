//===- Shape.cpp - ONNX ops that reshape and rearrange ----------*- C++ -*-===//
//
// Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Expand, Tile, and Shape
// and Size (folded to constants). Shape arguments given at run time are
// guarded (ShapeInputs.h).
//
//===----------------------------------------------------------------------===//
#include "ShapeInputs.h"
#include "SymbolicSizes.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Reshape of a tensor with symbolic dimensions (docs/shapes.md): 0 copies
/// an input dimension (symbolic or not) and -1 is what the element count
/// leaves; the result may have one symbolic size, which the lowering
/// derives from the element count.
FailureOr<SmallVector<Value>> reshapeSymbolic(OnnxNode &node, Value x,
                                              SmallVector<int64_t> shape,
                                              bool allowZero) {
  RankedTensorType type = typeOf(x);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowZero && (int64_t)i < type.getRank())
      shape[i] = type.getDimSize(i);
    else if (shape[i] == -1)
      shape[i] = ShapedType::kDynamic;
    else if (shape[i] < 0) {
      node.fail() << "shape entry " << i << " is " << shape[i];
      return failure();
    }
  }
  if (llvm::count_if(shape, ShapedType::isDynamic) != 1) {
    node.fail() << "the input " << type
                << " has symbolic dimensions; the target shape must have "
                   "exactly one entry of run-time size (a -1, or a 0 that "
                   "copies a symbolic dimension); give the symbolic "
                   "dimensions one size to compile this Reshape";
    return failure();
  }
  // The run-time entry is the element count over the static entries; it is
  // whole at every size only if the input's static dimensions divide by
  // them (else some sizes in range would not reshape).
  int64_t inStatic = 1, outStatic = 1;
  for (int64_t n : type.getShape())
    if (!ShapedType::isDynamic(n))
      inStatic *= n;
  for (int64_t n : shape)
    if (!ShapedType::isDynamic(n))
      outStatic *= n;
  if (outStatic == 0 || inStatic % outStatic) {
    node.fail() << "reshaping " << type << " to "
                << RankedTensorType::get(shape, type.getElementType())
                << " divides its run-time element count by " << outStatic
                << ", which not every size in range allows; give the "
                   "symbolic dimensions one size to compile this Reshape";
    return failure();
  }
  return one(reshapeTo(node, x, shape));
}

/// ONNX Reshape: 0 copies the input dimension (unless allowzero), -1 is
/// inferred from the element count.
FailureOr<SmallVector<Value>> reshapeWith(OnnxNode &node, Value x,
                                          SmallVector<int64_t> shape,
                                          bool allowZero) {
  RankedTensorType type = typeOf(x);
  if (!type.hasStaticShape())
    return reshapeSymbolic(node, x, std::move(shape), allowZero);
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
  // ONNX's inferred target (foldSymbolicReshapeShapes), once the computed
  // one is checked.
  if (auto inferred =
          node.op->getAttrOfType<DenseIntElementsAttr>(kInferredTargetAttr)) {
    if (failed(checkInferredTarget(node)))
      return failure();
    node.op->setOperand(1, ConstantOp::create(node.builder, node.loc(),
                                              inferred.getType(), inferred));
  }
  if (FailureOr<SmallVector<Value>> sym = convertSymbolicReshape(node);
      failed(sym) || !sym->empty())
    return sym;
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
  FailureOr<Value> zeroFine =
      build<AndOp>(node, *zero, constBool(node, zeroOk, {r}));
  FailureOr<Value> minusFine =
      build<AndOp>(node, *minus, constBool(node, minusOk, {r}));
  FailureOr<Value> ok = failed(zeroFine) ? FailureOr<Value>(failure())
                                         : build<OrOp>(node, *exact, *zeroFine);
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
  return one(flattenToSizes(node, *x, axis));
}

FailureOr<SmallVector<Value>> mlir::kiln::convertTranspose(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  SmallVector<int64_t> perm = transposePerm(node, rank);
  return one(
      build<TransposeOp>(node, *x, node.builder.getDenseI64ArrayAttr(perm)));
}

FailureOr<SmallVector<Value>> mlir::kiln::convertShape(OnnxNode &node) {
  if (FailureOr<SmallVector<Value>> sym = convertSymbolicShape(node);
      failed(sym) || !sym->empty())
    return sym;
  FailureOr<Value> x = node.staticInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  int64_t rank = type.getRank();
  int64_t start = node.intAttr("start", 0), end = node.intAttr("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  SmallVector<int64_t> dims(type.getShape().begin() + start,
                            type.getShape().begin() + std::max(start, end));
  auto resultType =
      RankedTensorType::get({(int64_t)dims.size()}, node.builder.getI64Type());
  Value c = ConstantOp::create(
      node.builder, node.loc(), resultType,
      DenseElementsAttr::get(resultType, ArrayRef<int64_t>(dims)));
  return SmallVector<Value>{c};
}

/// Size: the element count of a static input, as an int64 scalar constant.
FailureOr<SmallVector<Value>> mlir::kiln::convertSize(OnnxNode &node) {
  OpBuilder &b = node.builder;
  auto resultType = RankedTensorType::get({}, b.getI64Type());
  auto x = node.input(0) ? dyn_cast<RankedTensorType>(node.input(0).getType())
                         : nullptr;
  if (x && !x.hasStaticShape() && node.sizes) {
    // Symbolic: the static dimensions' product times each run-time one
    // (SymbolicSizes::record knows the product as a polynomial).
    int64_t known = 1;
    for (int64_t d : x.getShape())
      if (!ShapedType::isDynamic(d) &&
          __builtin_mul_overflow(known, d, &known)) {
        node.fail() << "the element count of " << x << " overflows 64 bits";
        return failure();
      }
    auto vec1 = RankedTensorType::get({1}, b.getI64Type());
    Value product = ConstantOp::create(b, node.loc(), vec1,
                                       DenseElementsAttr::get(vec1, known));
    for (int64_t d = 0; d < x.getRank(); ++d) {
      if (!x.isDynamicDim(d))
        continue;
      Value size =
          ShapeOfOp::create(b, node.loc(), vec1, node.input(0),
                            b.getI64IntegerAttr(d), b.getI64IntegerAttr(d + 1));
      FailureOr<Value> p = build<MulOp>(node, product, size);
      if (failed(p))
        return failure();
      product = *p;
    }
    return one(reshapeTo(node, product, {}));
  }
  FailureOr<Value> in = node.staticInput(0);
  if (failed(in))
    return failure();
  Value c = ConstantOp::create(
      b, node.loc(), resultType,
      DenseElementsAttr::get(resultType, typeOf(*in).getNumElements()));
  return SmallVector<Value>{c};
}

namespace {
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
  if (failed(axesChoices(
          node, sets, big.size(),
          "must name axes that turn " +
              llvm::join(llvm::map_range(
                             in, [](int64_t d) { return std::to_string(d); }),
                         "x") +
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
    FailureOr<SmallVector<int64_t>> norm = normalizeAxes(node, *axes, outRank);
    if (failed(norm))
      return failure();
    llvm::sort(*norm);
    for (int64_t a : *norm)
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
  // Only 1s come and go, so the dimensions of run-time size keep their
  // order: each keeps its size (the lowering cannot tell several apart).
  if (node.sizes && llvm::count_if(shape, ShapedType::isDynamic) > 1) {
    SmallVector<SymSize> in = node.sizes->dims(*x), out;
    SmallVector<int64_t> dynamicIn;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        dynamicIn.push_back(d);
    SmallVector<Value> sizes;
    size_t k = 0;
    for (int64_t d : shape) {
      if (!ShapedType::isDynamic(d)) {
        out.push_back(SymSize::constant(d));
        continue;
      }
      const SymSize &s = in[dynamicIn[k++]];
      out.push_back(s);
      sizes.push_back(node.sizes->materialize(node.builder, node.loc(), s));
    }
    auto op = SizedReshapeOp::create(
        node.builder, node.loc(),
        RankedTensorType::get(shape, type.getElementType()), *x, sizes);
    node.sizes->setDims(op.getResult(), out);
    return SmallVector<Value>{op.getResult()};
  }
  return one(reshapeTo(node, *x, shape));
}

} // namespace

FailureOr<SmallVector<Value>> mlir::kiln::convertSqueeze(OnnxNode &node) {
  return squeeze(node, false);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertUnsqueeze(OnnxNode &node) {
  return squeeze(node, true);
}

namespace {
/// Builds a kiln.expand of `x` to `type`, folded like build().
FailureOr<Value> expandTo(OnnxNode &node, Value x, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, typeOf(x).getElementType());
  if (typeOf(x) == type)
    return x;
  auto op = ExpandOp::create(node.builder, node.loc(), type, x);
  if (failed(finishBuild(node, op)))
    return failure();
  return foldBuilt(node, op);
}

} // namespace

/// Expand 8, 13: numpy broadcasting of the input with `shape`.
FailureOr<SmallVector<Value>> mlir::kiln::convertExpand(OnnxNode &node) {
  if (FailureOr<SmallVector<Value>> sym = convertSymbolicExpand(node);
      failed(sym) || !sym->empty())
    return sym;
  FailureOr<Value> x = node.staticInput(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> in = typeOf(*x).getShape();
  auto broadcastOf =
      [&](ArrayRef<int64_t> s) -> FailureOr<SmallVector<int64_t>> {
    int64_t r = std::max(in.size(), s.size());
    SmallVector<int64_t> out(r);
    for (int64_t p = 0; p < r; ++p) {
      int64_t a =
          p - (r - (int64_t)in.size()) >= 0 ? in[p - (r - in.size())] : 1;
      int64_t b = p - (r - (int64_t)s.size()) >= 0 ? s[p - (r - s.size())] : 1;
      if (a != b && a != 1 && b != 1) {
        node.fail() << "cannot broadcast input shape " << shapeStr(in)
                    << " with shape " << shapeStr(s);
        return failure();
      }
      out[p] = a == 1 ? b : a;
    }
    return out;
  };
  if (std::optional<SmallVector<int64_t>> s = node.constantInts(1)) {
    FailureOr<SmallVector<int64_t>> out = broadcastOf(*s);
    if (failed(out))
      return failure();
    return one(expandTo(node, *x, *out));
  }
  FailureOr<RankedTensorType> declared = declaredResult(node, 0, "shape");
  FailureOr<Value> s = node.rankedInput(1);
  if (failed(declared) || failed(s))
    return failure();
  ArrayRef<int64_t> out = declared->getShape();
  RankedTensorType st = typeOf(*s);
  int64_t r = out.size();
  if (st.getRank() != 1 || !st.hasStaticShape() || st.getDimSize(0) > r ||
      (int64_t)in.size() > r) {
    node.fail() << "shape of type " << st << " cannot give the declared "
                << "output shape " << shapeStr(out);
    return failure();
  }
  int64_t k = st.getDimSize(0);
  // Entry j of `shape` lines up with output dimension p = r - k + j: it must
  // be that dimension, or 1 where the input already has it.
  SmallVector<int64_t> want;
  SmallVector<bool> oneOk;
  for (int64_t p = 0; p < r; ++p) {
    int64_t a = p - (r - (int64_t)in.size()) >= 0 ? in[p - (r - in.size())] : 1;
    if (a != out[p] && a != 1) {
      node.fail() << "input shape " << shapeStr(in)
                  << " does not broadcast to the declared output shape "
                  << shapeStr(out);
      return failure();
    }
    if (p < r - k) {
      if (a != out[p]) {
        node.fail() << "shape has " << k << " entries, too few for the "
                    << "declared output shape " << shapeStr(out);
        return failure();
      }
      continue;
    }
    want.push_back(out[p]);
    oneOk.push_back(a == out[p]);
  }
  FailureOr<Value> si = castTo(node, *s, node.builder.getI64Type());
  if (failed(si))
    return failure();
  FailureOr<Value> eq = build<EqualOp>(node, *si, constI64(node, want, {k}));
  FailureOr<Value> isOne =
      failed(eq)
          ? FailureOr<Value>(failure())
          : build<EqualOp>(node, *si,
                           constI64(node, SmallVector<int64_t>(k, 1), {k}));
  FailureOr<Value> oneFine =
      failed(isOne) ? FailureOr<Value>(failure())
                    : build<AndOp>(node, *isOne, constBool(node, oneOk, {k}));
  FailureOr<Value> ok = failed(oneFine) ? FailureOr<Value>(failure())
                                        : build<OrOp>(node, *eq, *oneFine);
  if (failed(ok))
    return failure();
  guardInput(node, *ok, 1,
             "must broadcast the input " + shapeStr(in) + " to " +
                 shapeStr(out) +
                 ", the output shape this model was compiled "
                 "for");
  return one(expandTo(node, *x, out));
}

/// Tile 6, 13: interleave size-1 dimensions, broadcast them to the repeats,
/// merge each pair.
namespace {
/// Tile of an input with symbolic sizes by constant repeats (`x.repeat(1,
/// 2, 1)` at any sequence length): the same reshape, expand, reshape with
/// the sizes as polynomials.
FailureOr<Value> tileSymbolic(OnnxNode &node, Value x) {
  int64_t r = typeOf(x).getRank();
  std::optional<SmallVector<int64_t>> reps = node.constantInts(1);
  if (!reps || (int64_t)reps->size() != r ||
      llvm::any_of(*reps, [](int64_t v) { return v < 0; })) {
    node.fail() << "with symbolic sizes, repeats must be a compile-time "
                   "constant of "
                << r << " non-negative entries";
    return failure();
  }
  SmallVector<SymSize> spread, wide, out;
  for (int64_t d = 0; d < r; ++d) {
    SymSize n = node.sizes->dim(x, d), k = SymSize::constant((*reps)[d]);
    std::optional<SymSize> kn = SymSize::mul(k, n);
    if (!kn) {
      node.fail() << "the tiled sizes overflow";
      return failure();
    }
    spread.append({SymSize::constant(1), n});
    wide.append({k, n});
    out.push_back(*kn);
  }
  if (llvm::is_contained(*reps, 0)) {
    // Nothing to read: an empty result of the tiled sizes.
    Type elt = typeOf(x).getElementType();
    auto scalar = RankedTensorType::get({}, elt);
    Value zero = ConstantOp::create(
        node.builder, node.loc(), scalar,
        DenseElementsAttr::get(scalar, node.builder.getZeroAttr(elt)));
    return expandToSizes(node, zero, out);
  }
  FailureOr<Value> v = reshapeToSizes(node, x, spread);
  if (succeeded(v))
    v = expandToSizes(node, *v, wide);
  if (succeeded(v))
    v = reshapeToSizes(node, *v, out);
  return v;
}
} // namespace

FailureOr<SmallVector<Value>> mlir::kiln::convertTile(OnnxNode &node) {
  Value in0 = node.input(0);
  if (in0 && isa<RankedTensorType>(in0.getType()) &&
      !typeOf(in0).hasStaticShape() && node.sizes)
    return one(tileSymbolic(node, in0));
  FailureOr<Value> x = node.staticInput(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> in = typeOf(*x).getShape();
  int64_t r = in.size();
  SmallVector<int64_t> reps;
  if (std::optional<SmallVector<int64_t>> c = node.constantInts(1)) {
    reps = *c;
    if ((int64_t)reps.size() != r ||
        llvm::any_of(reps, [](int64_t v) { return v < 0; })) {
      node.fail() << "repeats must have " << r << " non-negative entries";
      return failure();
    }
  } else {
    FailureOr<RankedTensorType> declared = declaredResult(node, 0, "repeats");
    if (failed(declared))
      return failure();
    if (declared->getRank() != r) {
      node.fail() << "the declared output rank " << declared->getRank()
                  << " differs from the input rank " << r;
      return failure();
    }
    SmallVector<bool> anyOk;
    for (int64_t d = 0; d < r; ++d) {
      int64_t o = declared->getDimSize(d);
      if (in[d] == 0 ? o != 0 : o % in[d]) {
        node.fail() << "the declared output shape "
                    << shapeStr(declared->getShape())
                    << " is not a tiling of the input shape " << shapeStr(in);
        return failure();
      }
      reps.push_back(in[d] ? o / in[d] : 0);
      anyOk.push_back(in[d] == 0);
    }
    FailureOr<Value> rv = node.rankedInput(1);
    if (failed(rv))
      return failure();
    if (!typeOf(*rv).hasStaticShape() || typeOf(*rv).getNumElements() != r) {
      node.fail() << "repeats must have " << r << " entries";
      return failure();
    }
    FailureOr<Value> ri = castTo(node, *rv, node.builder.getI64Type());
    FailureOr<Value> eq =
        failed(ri) ? FailureOr<Value>(failure())
                   : build<EqualOp>(node, *ri, constI64(node, reps, {r}));
    FailureOr<Value> ok =
        failed(eq) ? FailureOr<Value>(failure())
                   : build<OrOp>(node, *eq, constBool(node, anyOk, {r}));
    if (failed(ok))
      return failure();
    guardInput(node, *ok, 1,
               "must tile " + shapeStr(in) + " to " +
                   shapeStr(declared->getShape()) +
                   ", the output shape this model was compiled for");
  }
  SmallVector<int64_t> spread, wide, out;
  for (int64_t d = 0; d < r; ++d) {
    spread.append({1, in[d]});
    wide.append({reps[d], in[d]});
    out.push_back(reps[d] * in[d]);
  }
  FailureOr<Value> v = reshapeTo(node, *x, spread);
  if (succeeded(v))
    v = expandTo(node, *v, wide);
  if (succeeded(v))
    v = reshapeTo(node, *v, out);
  return one(v);
}

namespace {
/// reshape -> transpose -> reshape, the sizes as polynomials (static ones
/// reshape as kiln.reshape, symbolic ones as kiln.sized_reshape).
FailureOr<Value> rearrangeSizes(OnnxNode &node, Value x,
                                ArrayRef<SymSize> split, ArrayRef<int64_t> perm,
                                ArrayRef<SymSize> out,
                                bool countsGuarded = false) {
  FailureOr<Value> v = reshapeToSizes(node, x, split, countsGuarded);
  if (failed(v) ||
      failed(v = build<TransposeOp>(node, *v,
                                    node.builder.getDenseI64ArrayAttr(perm))))
    return failure();
  return reshapeToSizes(node, *v, out);
}

/// rearrangeSizes() of static sizes.
FailureOr<Value> rearrange(OnnxNode &node, Value x, ArrayRef<int64_t> split,
                           ArrayRef<int64_t> perm, ArrayRef<int64_t> out) {
  auto sym = [](ArrayRef<int64_t> v) {
    return llvm::map_to_vector(v,
                               [](int64_t d) { return SymSize::constant(d); });
  };
  return rearrangeSizes(node, x, sym(split), perm, sym(out));
}

/// A kiln.guard that `size` (the `what` of node's input) equals `whole`, the
/// size its split into blocks of `block` (words: "blocksize 2") keeps;
/// fails inside a subgraph, where a failed guard would not stop the reshape
/// that reads it.
LogicalResult guardBlocks(OnnxNode &node, const char *what, const SymSize &size,
                          const SymSize &whole, const std::string &block) {
  if (size == whole)
    return success();
  if (inSubgraph(node)) {
    node.fail() << "inside a subgraph, the " << what << " ("
                << node.sizes->str(size) << ") must be a multiple of " << block
                << " at every size in range; give the symbolic dimensions "
                   "one size to compile this node";
    return failure();
  }
  return guardSizesEqual(node, size, whole,
                         std::string("the ") + what +
                             " must be a multiple of " + block);
}

/// DepthToSpace (DCR or CRD) of `x`: reshape, transpose, reshape. Any
/// dimension may be symbolic (a super-resolution model's pixel shuffle at
/// any image size; channels an export declares symbolic, which a guard
/// checks divide by blocksize^2 at run time).
FailureOr<Value> depthToSpaceOf(OnnxNode &node, Value x, int64_t bs) {
  SymbolicSizes &sizes = *node.sizes;
  int64_t bb;
  if (__builtin_mul_overflow(bs, bs, &bb)) {
    node.fail() << "blocksize " << bs << " is too large";
    return failure();
  }
  int64_t c = typeOf(x).getDimSize(1);
  if (!ShapedType::isDynamic(c) && c % bb) {
    node.fail() << "channels " << c
                << " must be a multiple of blocksize^2 = " << bb;
    return failure();
  }
  SymSize n = sizes.dim(x, 0), h = sizes.dim(x, 2), w = sizes.dim(x, 3);
  SymSize ch = sizes.dim(x, 1), b = SymSize::constant(bs);
  std::optional<SymSize> co = sizes.floorDiv(ch, bb);
  std::optional<SymSize> whole =
      co ? SymSize::mul(*co, SymSize::constant(bb)) : std::nullopt;
  std::optional<SymSize> hb = SymSize::mul(h, b), wb = SymSize::mul(w, b);
  if (!co || !whole || !hb || !wb) {
    node.fail() << "the output sizes overflow";
    return failure();
  }
  std::string mode = node.strAttr("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") {
    node.fail() << "mode '" << mode
                << "' is not supported; expected DCR or CRD";
    return failure();
  }
  if (failed(guardBlocks(node, "channels", ch, *whole,
                         "blocksize^2 = " + std::to_string(bb))))
    return failure();
  if (mode == "DCR")
    return rearrangeSizes(node, x, {n, b, b, *co, h, w}, {0, 3, 4, 1, 5, 2},
                          {n, *co, *hb, *wb}, /*countsGuarded=*/true);
  return rearrangeSizes(node, x, {n, *co, b, b, h, w}, {0, 1, 4, 2, 5, 3},
                        {n, *co, *hb, *wb}, /*countsGuarded=*/true);
}

/// SpaceToDepth of `x` with symbolic dimensions (a detector's stem folding
/// 2x2 pixels into channels at any image size): the height and width must
/// divide by the block, which a guard checks at run time.
FailureOr<Value> spaceToDepthSymbolic(OnnxNode &node, Value x, int64_t bs) {
  SymbolicSizes &sizes = *node.sizes;
  SymSize n = sizes.dim(x, 0), h = sizes.dim(x, 2), w = sizes.dim(x, 3);
  SymSize co = sizes.dim(x, 1), b = SymSize::constant(bs);
  std::optional<SymSize> hq = sizes.floorDiv(h, bs), wq = sizes.floorDiv(w, bs);
  std::optional<SymSize> hb = hq ? SymSize::mul(*hq, b) : std::nullopt;
  std::optional<SymSize> wb = wq ? SymSize::mul(*wq, b) : std::nullopt;
  int64_t bb;
  std::optional<SymSize> cb = __builtin_mul_overflow(bs, bs, &bb)
                                  ? std::nullopt
                                  : SymSize::mul(co, SymSize::constant(bb));
  if (!hb || !wb || !cb) {
    node.fail() << "the output sizes overflow";
    return failure();
  }
  // Each guard checks a size that splits into blocks; together they are the
  // first reshape's element counts.
  std::string block = "blocksize " + std::to_string(bs);
  if (failed(guardBlocks(node, "height", h, *hb, block)) ||
      failed(guardBlocks(node, "width", w, *wb, block)))
    return failure();
  return rearrangeSizes(node, x, {n, co, *hq, b, *wq, b}, {0, 3, 5, 1, 2, 4},
                        {n, *cb, *hq, *wq},
                        /*countsGuarded=*/true);
}

FailureOr<SmallVector<Value>> depthToSpace(OnnxNode &node, bool toDepth) {
  int64_t bs = node.intAttr("blocksize", 0);
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  RankedTensorType xt = typeOf(*x);
  if (xt.getRank() != 4 || bs <= 0) {
    node.fail() << "expects a 4-D input and a positive blocksize";
    return failure();
  }
  if (!toDepth)
    return one(depthToSpaceOf(node, *x, bs));
  if (!xt.hasStaticShape())
    return one(spaceToDepthSymbolic(node, *x, bs));
  int64_t n = xt.getDimSize(0), c = xt.getDimSize(1), h = xt.getDimSize(2),
          w = xt.getDimSize(3);
  if (h % bs || w % bs) {
    node.fail() << "height " << h << " and width " << w
                << " must be multiples of blocksize " << bs;
    return failure();
  }
  return one(rearrange(node, *x, {n, c, h / bs, bs, w / bs, bs},
                       {0, 3, 5, 1, 2, 4}, {n, c * bs * bs, h / bs, w / bs}));
}

} // namespace

FailureOr<SmallVector<Value>> mlir::kiln::convertDepthToSpace(OnnxNode &node) {
  return depthToSpace(node, false);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertSpaceToDepth(OnnxNode &node) {
  return depthToSpace(node, true);
}
