//===- Reduce.cpp - ONNX reductions -----------------------------*- C++ -*-===//
//
// ReduceMean, ReduceSum, ReduceMax, ReduceMin, the reductions built from a
// sum or a product (ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum,
// ReduceLogSumExp, ReduceProd), ArgMax and ArgMin, and the running sum and
// product CumSum and CumProd.
//
//===----------------------------------------------------------------------===//
#include "ShapeInputs.h"

using namespace mlir;
using namespace mlir::kiln;

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
    FailureOr<SmallVector<int64_t>> n = normalizeAxes(node, *axes, rank);
    if (failed(n))
      return failure();
    norm = *n;
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
FailureOr<SmallVector<Value>> reduceRuntime(
    OnnxNode &node, Value x,
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
    for (SmallVector<int64_t> t : subsets(optional, k - (int64_t)must.size())) {
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

/// ReduceMean/Sum/Max/Min (see reductionAxes) of input 0, or of `source`.
template <typename OpTy>
FailureOr<SmallVector<Value>> reduce(OnnxNode &node, int64_t axesInputSince,
                                     Value source = {}) {
  FailureOr<Value> x = source ? FailureOr<Value>(source) : node.rankedInput(0);
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

FailureOr<SmallVector<Value>> mlir::kiln::convertReduceMean(OnnxNode &node) {
  return reduce<ReduceMeanOp>(node, 18);
}

namespace {
/// ReduceMax/Min. Bools and integers of up to 32 bits are reduced in f64,
/// which holds them exactly, and converted back (a bool as "not zero").
template <typename OpTy>
FailureOr<SmallVector<Value>> reduceExtremum(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  Type elt = elementOf(*x);
  if (isa<FloatType>(elt) || elt.getIntOrFloatBitWidth() > 32)
    return reduce<OpTy>(node, 18);
  FailureOr<Value> wide =
      build<CastOp>(node, *x, TypeAttr::get(node.builder.getF64Type()));
  if (failed(wide))
    return failure();
  FailureOr<SmallVector<Value>> r = reduce<OpTy>(node, 18, *wide);
  if (failed(r))
    return failure();
  return one(build<CastOp>(node, (*r)[0], TypeAttr::get(elt)));
}
} // namespace

FailureOr<SmallVector<Value>> mlir::kiln::convertReduceMax(OnnxNode &node) {
  return reduceExtremum<ReduceMaxOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertReduceMin(OnnxNode &node) {
  return reduceExtremum<ReduceMinOp>(node);
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

namespace {
/// CumSum and CumProd. The axis is an input: a constant is checked here and
/// folds away after lowering; a run-time axis is read by the kernel.
template <typename OpTy>
FailureOr<SmallVector<Value>> cumulative(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0), axis = node.rankedInput(1);
  if (failed(x) || failed(axis))
    return failure();
  if (std::optional<SmallVector<int64_t>> a = node.constantInts(1)) {
    if (a->size() != 1) {
      node.fail() << "axis must have one element, got " << a->size();
      return failure();
    }
    if (failed(normalizeAxis(node, a->front(), typeOf(*x).getRank())))
      return failure();
  }
  Builder &b = node.builder;
  return one(build<OpTy>(node, *x, *axis,
                         b.getBoolAttr(node.intAttr("exclusive", 0) != 0),
                         b.getBoolAttr(node.intAttr("reverse", 0) != 0)));
}
} // namespace

/// CumSum 11, 14.
FailureOr<SmallVector<Value>> mlir::kiln::convertCumSum(OnnxNode &node) {
  return cumulative<CumSumOp>(node);
}

/// CumProd 26: CumSum with a product (an exclusive product starts at 1).
FailureOr<SmallVector<Value>> mlir::kiln::convertCumProd(OnnxNode &node) {
  return cumulative<CumProdOp>(node);
}
