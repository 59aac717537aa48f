//===- Select.cpp - ONNX ops that select elements by value ------*- C++ -*-===//
//
// TopK, Compress, NonZero, Unique and NonMaxSuppression. All but TopK have
// output shapes that depend on the data (TopK too with a run-time k): a
// compile-time constant input is computed while converting; a run-time one
// gives a dynamic size the op bounds (docs/shapes.md, "Sizes that depend on
// the data"), or, where the model declares a static output shape (not for
// NonMaxSuppression), that shape, which a guard checks at run time.
//
//===----------------------------------------------------------------------===//
#include "ShapeInputs.h"
#include "SymbolicSizes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// The declared (ONNX shape inference) type of result `i`, if static.
RankedTensorType declaredStaticResult(OnnxNode &node, unsigned i) {
  // Optional outputs (Unique's indices, inverse and counts) may be absent.
  if (i >= node.op->getNumResults())
    return RankedTensorType();
  auto t = dyn_cast<RankedTensorType>(node.op->getResult(i).getType());
  return t && t.hasStaticShape() ? t : RankedTensorType();
}

} // namespace

namespace {
void guardTopK(OnnxNode &node, Value k, const SymSize &n, int64_t axis,
               const std::string &what);

/// The run-time k of TopK (input 1, one integer) as an `index`, with a
/// kiln.guard that it lies in [0, size of `axis`] unless the symbols'
/// ranges prove it does.
FailureOr<Value> runtimeTopK(OnnxNode &node, Value x, int64_t axis) {
  OpBuilder &b = node.builder;
  Location loc = node.loc();
  Value kIn = node.input(1);
  auto kType = kIn ? dyn_cast<RankedTensorType>(kIn.getType()) : nullptr;
  if (!kType || !kType.hasStaticShape() || kType.getNumElements() != 1 ||
      !kType.getElementType().isInteger(64)) {
    node.fail() << "k must be one int64 element";
    return failure();
  }
  SymbolicSizes &S = *node.sizes;
  SymSize n = S.dim(x, axis);
  Value k;
  if (std::optional<SmallVector<SymSize>> c = S.contents(kIn);
      c && c->size() == 1) {
    // A k the graph computes from shapes: proven in range, or checked.
    std::optional<int64_t> lo = S.smallest(c->front()), hi = S.largest(c->front());
    std::optional<int64_t> nLo = S.smallest(n);
    k = S.materialize(b, loc, c->front());
    if (lo && *lo >= 0 && hi && nLo && *hi <= *nLo)
      return k;
  } else {
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    SmallVector<Value> at(kType.getRank(), zero);
    Value raw = tensor::ExtractOp::create(b, loc, kIn, at);
    k = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
  }
  guardTopK(node, k, n, axis, inputDesc(node, 1));
  return k;
}

/// A kiln.guard that the `index` k (`what` names it) lies in [0, n], n the
/// size of `axis`.
void guardTopK(OnnxNode &node, Value k, const SymSize &n, int64_t axis,
               const std::string &what) {
  OpBuilder &b = node.builder;
  Location loc = node.loc();
  SymbolicSizes &S = *node.sizes;
  Value size = S.materialize(b, loc, n);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value notNegative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, k, zero);
  Value fits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, k, size);
  Value ok = arith::AndIOp::create(b, loc, notNegative, fits);
  auto okType = RankedTensorType::get({}, b.getI1Type());
  Value okTensor = tensor::FromElementsOp::create(b, loc, okType, ok);
  GuardOp::create(b, loc, okTensor,
                  b.getStringAttr(node.describe() + ": " + what +
                                  " must be in [0, " + S.str(n) +
                                  "] (the size of axis " +
                                  std::to_string(axis) + ")"));
}
} // namespace

/// TopK 1 (k attribute), 10 (k input), 11 (largest, sorted). A k that is
/// not a constant is a run-time size: the polynomial of a k computed from
/// shapes (`min(1000, scores.shape[1])`), or the value read from the data;
/// a guard checks it lies in [0, axis] unless the bounds prove it. A model
/// that declares the outputs' static shape with a data k gets that shape.
FailureOr<SmallVector<Value>> mlir::kiln::convertTopK(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  if (type.getRank() == 0) {
    node.fail() << "expects an input of rank 1 or more, got " << type;
    return failure();
  }
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.intAttr("axis", -1), type.getRank());
  if (failed(axis))
    return failure();
  std::optional<int64_t> k;
  Value kSize;
  if (node.opset < 10) {
    if (node.hasAttr("k"))
      k = node.intAttr("k", 0);
  } else if (std::optional<SmallVector<int64_t>> c = node.constantInts(1)) {
    if (c->size() != 1) {
      node.fail() << "k must have one element, got " << c->size();
      return failure();
    }
    k = c->front();
  } else if (RankedTensorType declared = declaredStaticResult(node, 0);
             declared && !node.sizes->isSymbolic(node.input(1))) {
    // The outputs' static shape fixes k; a guard checks the run-time value.
    if (declared.getRank() == type.getRank()) {
      k = declared.getDimSize(*axis);
      if (failed(guardEquals(node, 1, {*k}, "the k")))
        return failure();
    }
  }
  if (!k && node.opset >= 10) {
    FailureOr<Value> kSizeOr = runtimeTopK(node, *x, *axis);
    if (failed(kSizeOr))
      return failure();
    kSize = *kSizeOr;
    k = 0;
  }
  if (!k) {
    node.fail() << "k must be a compile-time constant (or the outputs must "
                   "have a declared static shape); a run-time k is not "
                   "supported";
    return failure();
  }
  // A constant k on an axis of run-time size: checked unless the range of
  // the axis proves it fits.
  if (!kSize && type.isDynamicDim(*axis)) {
    SymSize n = node.sizes->dim(*x, *axis);
    std::optional<int64_t> least = node.sizes->smallest(n);
    if (!least || *least < *k)
      guardTopK(node,
                arith::ConstantIndexOp::create(node.builder, node.loc(), *k),
                n, *axis, "k = " + std::to_string(*k));
  }
  Builder &b = node.builder;
  Type placeholder = UnrankedTensorType::get(b.getF32Type());
  auto op =
      TopKOp::create(node.builder, node.loc(), placeholder, placeholder, *x,
                     kSize, b.getI64IntegerAttr(*k), b.getI64IntegerAttr(*axis),
                     b.getBoolAttr(node.intAttr("largest", 1) != 0));
  if (failed(finishBuild(node, op)))
    return failure();
  if (node.sizes) {
    // Both results have the input's sizes off the axis and are k long
    // along it: the same sizes downstream (a Resize or Range after them
    // bounded by the input's ranges).
    SmallVector<SymSize> dims = node.sizes->dims(*x);
    if (!kSize)
      dims[*axis] = SymSize::constant(*k);
    else if (std::optional<SmallVector<SymSize>> c =
                 node.sizes->contents(node.input(1));
             c && c->size() == 1)
      dims[*axis] = c->front();
    else
      dims[*axis] = node.sizes->dim(op.getValues(), *axis);
    node.sizes->setDims(op.getValues(), dims);
    node.sizes->setDims(op.getIndices(), dims);
  }
  return SmallVector<Value>{op.getValues(), op.getIndices()};
}

namespace {
/// The `axis` attribute of Compress or Unique (normalized), or without one,
/// axis 0 of `in` flattened to 1-D (which `in` becomes).
FailureOr<int64_t> axisOrFlattened(OnnxNode &node, Value &in) {
  RankedTensorType type = typeOf(in);
  if (node.hasAttr("axis"))
    return normalizeAxis(node, node.intAttr("axis", 0), type.getRank());
  FailureOr<Value> flat = reshapeTo(node, in, {type.getNumElements()});
  if (failed(flat))
    return failure();
  in = *flat;
  return 0;
}

/// Guards that `count` (a rank-0 f32 tensor computed from input `input`)
/// is `expected`: the size the model declares for a data-dependent output.
LogicalResult guardCount(OnnxNode &node, Value count, int64_t expected,
                         unsigned input, StringRef what) {
  auto t = RankedTensorType::get({}, node.builder.getF32Type());
  Value want = ConstantOp::create(
      node.builder, node.loc(), t,
      DenseElementsAttr::get(t, node.builder.getF32FloatAttr((float)expected)));
  FailureOr<Value> ok = build<EqualOp>(node, count, want);
  if (failed(ok))
    return failure();
  guardInput(node, *ok, input,
             "must give exactly " + Twine(expected) + " " + what +
                 ": the output shape this model was compiled for");
  return success();
}

/// The number of elements of `v` that are not zero (false), as a rank-0 f32.
FailureOr<Value> countNonZero(OnnxNode &node, Value v) {
  RankedTensorType t = typeOf(v);
  Value nz = v;
  if (!t.getElementType().isInteger(1)) {
    auto zt = RankedTensorType::get({}, t.getElementType());
    Attribute zero = isa<FloatType>(t.getElementType())
                         ? Attribute(FloatAttr::get(t.getElementType(), 0.0))
                         : Attribute(IntegerAttr::get(t.getElementType(), 0));
    Value z = ConstantOp::create(node.builder, node.loc(), zt,
                                 DenseElementsAttr::get(zt, zero));
    FailureOr<Value> eq = build<EqualOp>(node, v, z);
    if (failed(eq) || failed(eq = build<NotOp>(node, *eq)))
      return failure();
    nz = *eq;
  }
  FailureOr<Value> f = castTo(node, nz, node.builder.getF32Type());
  if (failed(f))
    return failure();
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < t.getRank(); ++d)
    axes.push_back(d);
  if (axes.empty())
    return *f;
  return build<ReduceSumOp>(node, *f, node.builder.getDenseI64ArrayAttr(axes),
                            node.builder.getBoolAttr(false));
}

} // namespace

/// Compress 9, 11 (negative axis). A constant condition becomes a gather of
/// the selected positions. A run-time one selects as many slices as it has
/// true entries (among the first as many as the axis is long), a size known
/// at run time and at most the axis; a model that declares the output's
/// static shape gets that shape, checked at run time.
FailureOr<SmallVector<Value>> mlir::kiln::convertCompress(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0), cond = node.rankedInput(1);
  if (failed(x) || failed(cond))
    return failure();
  RankedTensorType type = typeOf(*x);
  // Without an axis the input is flattened, which needs its static shape.
  if ((!node.hasAttr("axis") || node.constantInput(1)) &&
      failed(node.requireStaticShape(type)))
    return failure();
  Value in = *x;
  FailureOr<int64_t> axisAttr = axisOrFlattened(node, in);
  if (failed(axisAttr))
    return failure();
  int64_t axis = *axisAttr;
  RankedTensorType inType = typeOf(in);
  if (typeOf(*cond).getRank() != 1) {
    node.fail() << "condition must be 1-D, got " << typeOf(*cond);
    return failure();
  }
  if (std::optional<DenseElementsAttr> c = node.constantInput(1)) {
    SmallVector<int64_t> picked;
    int64_t n = inType.getDimSize(axis), i = 0;
    for (APInt v : c->getValues<APInt>()) {
      if (i >= n)
        break;
      if (!v.isZero())
        picked.push_back(i);
      ++i;
    }
    if (picked.empty()) {
      // An empty result: a static tensor with no elements.
      SmallVector<int64_t> shape(inType.getShape());
      shape[axis] = 0;
      auto t = RankedTensorType::get(shape, inType.getElementType());
      Value e =
          ConstantOp::create(node.builder, node.loc(), t,
                             DenseElementsAttr::get(t, ArrayRef<Attribute>()));
      return SmallVector<Value>{e};
    }
    auto idxType = RankedTensorType::get({(int64_t)picked.size()},
                                         node.builder.getI64Type());
    Value idx = ConstantOp::create(
        node.builder, node.loc(), idxType,
        DenseElementsAttr::get(idxType, ArrayRef<int64_t>(picked)));
    return one(
        build<GatherOp>(node, in, idx, node.builder.getI64IntegerAttr(axis)));
  }
  RankedTensorType declared = declaredStaticResult(node, 0);
  if (!declared || declared.getRank() != inType.getRank() ||
      !inType.hasStaticShape() || !typeOf(*cond).hasStaticShape()) {
    SmallVector<int64_t> shape(inType.getShape());
    shape[axis] = ShapedType::kDynamic;
    auto t = RankedTensorType::get(shape, inType.getElementType());
    auto op = CompressOp::create(node.builder, node.loc(), t, in, *cond,
                                 node.builder.getI64IntegerAttr(axis));
    if (failed(finishBuild(node, op)))
      return failure();
    return SmallVector<Value>{op.getResult()};
  }
  // The kernel fills the declared size; a guard checks that the condition
  // selects exactly that many slices (conditions longer than the axis count
  // only their first entries, as the kernel reads them).
  Value selected = *cond;
  int64_t axisLen = inType.getDimSize(axis);
  if (typeOf(*cond).getDimSize(0) > axisLen) {
    FailureOr<Value> head =
        build<SliceOp>(node, *cond, node.builder.getDenseI64ArrayAttr({0}),
                       node.builder.getDenseI64ArrayAttr({axisLen}),
                       node.builder.getDenseI64ArrayAttr({1}));
    if (failed(head))
      return failure();
    selected = *head;
  }
  FailureOr<Value> count = countNonZero(node, selected);
  if (failed(count) ||
      failed(guardCount(node, *count, declared.getDimSize(axis), 1,
                        "selected slices")))
    return failure();
  auto op = CompressOp::create(node.builder, node.loc(), declared, in, *cond,
                               node.builder.getI64IntegerAttr(axis));
  if (failed(finishBuild(node, op)))
    return failure();
  return SmallVector<Value>{op.getResult()};
}

/// NonZero 9, 13: a constant input folds to its coordinates. A run-time
/// one gives as many columns as it has non-zero elements, a size known at
/// run time and at most the input's element count; a model that declares
/// the output's static shape gets that shape, checked at run time.
FailureOr<SmallVector<Value>> mlir::kiln::convertNonZero(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  int64_t rank = std::max<int64_t>(type.getRank(), 1);
  if (std::optional<DenseElementsAttr> c = node.constantInput(0)) {
    SmallVector<SmallVector<int64_t>> coords(rank);
    SmallVector<int64_t> at(type.getRank(), 0);
    auto visit = [&](bool nonzero) {
      if (nonzero) {
        for (int64_t d = 0; d < type.getRank(); ++d)
          coords[d].push_back(at[d]);
        if (type.getRank() == 0)
          coords[0].push_back(0);
      }
      for (int64_t d = type.getRank() - 1; d >= 0; --d) {
        if (++at[d] < type.getDimSize(d))
          break;
        at[d] = 0;
      }
    };
    if (isa<FloatType>(c->getElementType())) {
      for (APFloat v : c->getValues<APFloat>())
        visit(!v.isZero());
    } else if (c->getElementType().isInteger()) {
      for (APInt v : c->getValues<APInt>())
        visit(!v.isZero());
    } else {
      node.fail() << "element type " << c->getElementType()
                  << " is not supported";
      return failure();
    }
    int64_t count = coords[0].size();
    SmallVector<int64_t> flat;
    for (auto &row : coords)
      llvm::append_range(flat, row);
    auto t = RankedTensorType::get({rank, count}, node.builder.getI64Type());
    Value r = ConstantOp::create(node.builder, node.loc(), t,
                                 DenseElementsAttr::get(t, ArrayRef(flat)));
    return SmallVector<Value>{r};
  }
  RankedTensorType declared = declaredStaticResult(node, 0);
  if (!declared) {
    auto t = RankedTensorType::get({rank, ShapedType::kDynamic},
                                   node.builder.getI64Type());
    auto op = NonZeroOp::create(node.builder, node.loc(), t, *x);
    if (failed(finishBuild(node, op)))
      return failure();
    return SmallVector<Value>{op.getResult()};
  }
  FailureOr<Value> count = countNonZero(node, *x);
  if (failed(count) || declared.getRank() != 2 ||
      failed(guardCount(node, *count, declared.getDimSize(1), 0,
                        "non-zero elements")))
    return failure();
  auto op = NonZeroOp::create(node.builder, node.loc(), declared, *x);
  if (failed(finishBuild(node, op)))
    return failure();
  return SmallVector<Value>{op.getResult()};
}

namespace {
/// Unique of a run-time input: the number of distinct slices comes from the
/// outputs' declared static shapes (values, or indices, or counts).
FailureOr<SmallVector<Value>> uniqueAtRunTime(OnnxNode &node, Value in,
                                              int64_t axis) {
  RankedTensorType type = typeOf(in);
  std::optional<int64_t> m;
  if (RankedTensorType y = declaredStaticResult(node, 0);
      y && y.getRank() == type.getRank())
    m = y.getDimSize(axis);
  for (unsigned r : {1u, 3u})
    if (RankedTensorType t = declaredStaticResult(node, r);
        !m && t && t.getRank() == 1)
      m = t.getDimSize(0);
  if (!m) {
    // As many distinct slices as the data has, at most the axis's size.
    Builder &b = node.builder;
    SmallVector<int64_t> shape(type.getShape());
    shape[axis] = ShapedType::kDynamic;
    auto ints = [&](int64_t size) {
      return RankedTensorType::get({size}, b.getI64Type());
    };
    auto op = UniqueOp::create(
        node.builder, node.loc(),
        RankedTensorType::get(shape, type.getElementType()),
        ints(ShapedType::kDynamic), ints(type.getDimSize(axis)),
        ints(ShapedType::kDynamic), in, b.getI64IntegerAttr(axis),
        b.getBoolAttr(node.intAttr("sorted", 1) != 0));
    if (failed(finishBuild(node, op)))
      return failure();
    return SmallVector<Value>{op.getValues(), op.getIndices(), op.getInverse(),
                              op.getCounts()};
  }
  // Guard the number of distinct slices: slice i is a repeat when it equals
  // an earlier one (an n x n comparison of the [n, rest] view).
  {
    int64_t n = type.getDimSize(axis);
    int64_t rest = n ? type.getNumElements() / n : 0;
    SmallVector<int64_t> perm{axis};
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != axis)
        perm.push_back(d);
    FailureOr<Value> rows = in;
    if (axis != 0)
      rows =
          build<TransposeOp>(node, in, node.builder.getDenseI64ArrayAttr(perm));
    FailureOr<Value> a, bT;
    if (failed(rows) || failed(a = reshapeTo(node, *rows, {n, 1, rest})) ||
        failed(bT = reshapeTo(node, *rows, {1, n, rest})))
      return failure();
    FailureOr<Value> eq = build<EqualOp>(node, *a, *bT);
    if (failed(eq) ||
        failed(eq = castTo(node, *eq, node.builder.getF32Type())) ||
        failed(eq = build<ReduceMinOp>(node, *eq,
                                       node.builder.getDenseI64ArrayAttr({2}),
                                       node.builder.getBoolAttr(false))))
      return failure();
    // Only earlier slices count: j < i.
    SmallVector<float> lower(n * n, 0.0f);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < i; ++j)
        lower[i * n + j] = 1.0f;
    auto lt = RankedTensorType::get({n, n}, node.builder.getF32Type());
    Value mask =
        ConstantOp::create(node.builder, node.loc(), lt,
                           DenseElementsAttr::get(lt, ArrayRef(lower)));
    FailureOr<Value> rep = build<MulOp>(node, *eq, mask);
    if (failed(rep) ||
        failed(rep = build<ReduceMaxOp>(node, *rep,
                                        node.builder.getDenseI64ArrayAttr({1}),
                                        node.builder.getBoolAttr(false))) ||
        failed(rep = build<ReduceSumOp>(node, *rep,
                                        node.builder.getDenseI64ArrayAttr({0}),
                                        node.builder.getBoolAttr(false))))
      return failure();
    if (failed(guardCount(node, *rep, n - *m, 0, "repeated slices")))
      return failure();
  }
  Builder &b = node.builder;
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = *m;
  auto values = RankedTensorType::get(shape, type.getElementType());
  auto ints = [&](int64_t size) {
    return RankedTensorType::get({size}, b.getI64Type());
  };
  auto op = UniqueOp::create(node.builder, node.loc(), values, ints(*m),
                             ints(type.getDimSize(axis)), ints(*m), in,
                             b.getI64IntegerAttr(axis),
                             b.getBoolAttr(node.intAttr("sorted", 1) != 0));
  if (failed(finishBuild(node, op)))
    return failure();
  return SmallVector<Value>{op.getValues(), op.getIndices(), op.getInverse(),
                            op.getCounts()};
}

} // namespace

/// Unique 11. A compile-time constant input is computed here (the unique
/// slices gathered from the constant); a run-time one becomes kiln.unique.
FailureOr<SmallVector<Value>> mlir::kiln::convertUnique(OnnxNode &node) {
  FailureOr<Value> x = node.staticInput(0);
  if (failed(x))
    return failure();
  Value in = *x;
  FailureOr<int64_t> axisAttr = axisOrFlattened(node, in);
  if (failed(axisAttr))
    return failure();
  int64_t axis = *axisAttr;
  std::optional<DenseElementsAttr> c = node.constantInput(0);
  if (!c)
    return uniqueAtRunTime(node, in, axis);
  // Every slice along the axis (every element without one) as a key of
  // doubles: exact for floats up to f64 and integers up to 2^53.
  SmallVector<double> values;
  if (isa<FloatType>(c->getElementType())) {
    for (APFloat v : c->getValues<APFloat>())
      values.push_back(v.convertToDouble());
  } else if (c->getElementType().isInteger()) {
    for (APInt v : c->getValues<APInt>())
      values.push_back(c->getElementType().isInteger(1) ? v.getZExtValue()
                                                        : v.getSExtValue());
  } else {
    node.fail() << "element type " << c->getElementType()
                << " is not supported";
    return failure();
  }
  ArrayRef<int64_t> shape = typeOf(in).getShape();
  int64_t n = shape[axis], inner = 1, outer = 1;
  for (int64_t d = 0; d < (int64_t)shape.size(); ++d)
    if (d != axis)
      (d < axis ? outer : inner) *= shape[d];
  std::vector<std::vector<double>> keys(n);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j)
        keys[i].push_back(values[(o * n + i) * inner + j]);
  // First occurrences in order, then (sorted) ordered by value.
  SmallVector<int64_t> firsts, inverse(n);
  for (int64_t i = 0; i < n; ++i)
    if (llvm::none_of(firsts, [&](int64_t f) { return keys[f] == keys[i]; }))
      firsts.push_back(i);
  if (node.intAttr("sorted", 1))
    llvm::stable_sort(firsts,
                      [&](int64_t a, int64_t b) { return keys[a] < keys[b]; });
  SmallVector<int64_t> counts(firsts.size(), 0);
  for (int64_t i = 0; i < n; ++i)
    for (auto [u, f] : llvm::enumerate(firsts))
      if (keys[f] == keys[i]) {
        inverse[i] = u;
        ++counts[u];
      }
  auto ints = [&](ArrayRef<int64_t> v) -> Value {
    auto t =
        RankedTensorType::get({(int64_t)v.size()}, node.builder.getI64Type());
    return ConstantOp::create(node.builder, node.loc(), t,
                              DenseElementsAttr::get(t, v));
  };
  SmallVector<Value> results(4);
  results[1] = ints(firsts);
  if (node.resultUsed(0)) {
    FailureOr<Value> y = build<GatherOp>(node, in, results[1],
                                         node.builder.getI64IntegerAttr(axis));
    if (failed(y))
      return failure();
    results[0] = *y;
  }
  results[2] = ints(inverse);
  results[3] = ints(counts);
  return results;
}

/// NonMaxSuppression 10, 11: the rows kept depend on the data, so the
/// result is `[count, 3]` with the count known at run time, at most
/// batches * classes * min(boxes, max_output_boxes_per_class). A missing or
/// constant non-positive maximum keeps nothing (an empty result); a missing
/// IoU threshold is 0 and a missing score threshold keeps every score.
FailureOr<SmallVector<Value>>
mlir::kiln::convertNonMaxSuppression(OnnxNode &node) {
  FailureOr<Value> boxes = node.rankedInput(0), scores = node.rankedInput(1);
  if (failed(boxes) || failed(scores))
    return failure();
  OpBuilder &b = node.builder;
  Type f32 = b.getF32Type();
  RankedTensorType bt = typeOf(*boxes), st = typeOf(*scores);
  if (!isa<FloatType>(bt.getElementType()) ||
      !isa<FloatType>(st.getElementType())) {
    node.fail() << "boxes and scores must be float tensors, got " << bt
                << " and " << st;
    return failure();
  }
  auto same = [](int64_t x, int64_t y) {
    return ShapedType::isDynamic(x) || ShapedType::isDynamic(y) || x == y;
  };
  if (bt.getRank() != 3 || !same(bt.getDimSize(2), 4)) {
    node.fail() << "boxes must be [num_batches, spatial_dimension, 4], got "
                << bt;
    return failure();
  }
  if (st.getRank() != 3 || !same(st.getDimSize(0), bt.getDimSize(0)) ||
      !same(st.getDimSize(2), bt.getDimSize(1))) {
    node.fail() << "scores must be [num_batches, num_classes, "
                   "spatial_dimension] matching boxes "
                << bt << ", got " << st;
    return failure();
  }
  // A declared [k, 3] keeps that shape, and a guard checks the count.
  RankedTensorType declared = declaredStaticResult(node, 0);
  if (declared && (declared.getRank() != 2 || declared.getDimSize(1) != 3))
    declared = RankedTensorType();
  auto resultType =
      declared ? declared
               : RankedTensorType::get({ShapedType::kDynamic, 3}, b.getI64Type());
  auto empty = [&]() -> FailureOr<SmallVector<Value>> {
    if (declared && declared.getDimSize(0) != 0) {
      node.fail() << "max_output_boxes_per_class is 0 (or absent), so no box "
                     "is kept, but the model declares the result as "
                  << declared;
      return failure();
    }
    auto t = RankedTensorType::get({0, 3}, b.getI64Type());
    return SmallVector<Value>{ConstantOp::create(
        b, node.loc(), t, DenseElementsAttr::get(t, ArrayRef<Attribute>()))};
  };
  // One element of the given kind, as a tensor (cast to f32 for floats).
  auto scalar = [&](unsigned i, bool isFloat, StringRef what) -> FailureOr<Value> {
    Value v = node.input(i);
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.hasStaticShape() || t.getNumElements() != 1 ||
        (isFloat ? !isa<FloatType>(t.getElementType())
                 : !t.getElementType().isInteger(64))) {
      node.fail() << what << " must be one " << (isFloat ? "float" : "int64")
                  << " element, got " << v.getType();
      return failure();
    }
    if (isFloat && !t.getElementType().isF32())
      return castTo(node, v, f32);
    return v;
  };
  Value maxIn = node.input(2);
  if (!maxIn)
    return empty(); // ONNX's default of 0 boxes per class
  FailureOr<Value> maxV = scalar(2, false, "max_output_boxes_per_class");
  if (failed(maxV))
    return failure();
  if (std::optional<DenseElementsAttr> c = node.constantInput(2))
    if ((*c.value().value_begin<APInt>()).getSExtValue() <= 0)
      return empty();
  // The thresholds when given (null otherwise), and the boxes and scores,
  // as f32.
  Value thresholds[2];
  for (unsigned i : {3u, 4u})
    if (node.input(i)) {
      FailureOr<Value> v =
          scalar(i, true, i == 3 ? "iou_threshold" : "score_threshold");
      if (failed(v))
        return failure();
      thresholds[i - 3] = *v;
    }
  Value iou = thresholds[0];
  if (!iou) {
    auto t = RankedTensorType::get({}, f32);
    iou = ConstantOp::create(b, node.loc(), t,
                             DenseElementsAttr::get(t, b.getF32FloatAttr(0.0f)));
  }
  Value data[2] = {*boxes, *scores};
  for (Value &v : data)
    if (!typeOf(v).getElementType().isF32()) {
      FailureOr<Value> c = castTo(node, v, f32);
      if (failed(c))
        return failure();
      v = *c;
    }
  auto op = NonMaxSuppressionOp::create(
      b, node.loc(), resultType, RankedTensorType::get({}, b.getI64Type()),
      data[0], data[1], *maxV, iou, thresholds[1],
      b.getBoolAttr(node.intAttr("center_point_box", 0) != 0));
  if (failed(finishBuild(node, op)))
    return failure();
  if (declared) {
    auto t = RankedTensorType::get({}, b.getI64Type());
    Value want = ConstantOp::create(
        b, node.loc(), t,
        DenseElementsAttr::get(t, b.getI64IntegerAttr(declared.getDimSize(0))));
    FailureOr<Value> ok = build<EqualOp>(node, op.getCount(), want);
    if (failed(ok))
      return failure();
    GuardOp::create(b, node.loc(), *ok,
                    b.getStringAttr(node.describe() +
                                    ": the boxes and scores must keep exactly " +
                                    std::to_string(declared.getDimSize(0)) +
                                    " boxes: the output shape this model was "
                                    "compiled for"));
  }
  return SmallVector<Value>{op.getResult()};
}
