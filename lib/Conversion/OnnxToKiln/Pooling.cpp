//===- Pooling.cpp - ONNX pooling ops ---------------------------*- C++ -*-===//
//
// MaxPool (with its Indices output), AveragePool, LpPool (an average that
// counts the padding, of |x|^p), GlobalAveragePool, GlobalMaxPool and
// MaxUnpool (a scatter into the flattened output).
//
//===----------------------------------------------------------------------===//
#include "Conv.h"
#include "ShapeInputs.h"
#include "SymbolicSizes.h"

#include <limits>

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// pool3D's two 2-D poolings where sizes are symbolic: the same views, each
/// a sized reshape whose sizes are the polynomials of the input's and of
/// each pooling's output (SymbolicSizes traces a window's output size).
template <typename Pool2>
FailureOr<Value>
pool3DSized(OnnxNode &node, Value x, Pool2 &&pool2, ArrayRef<int64_t> kernel,
            ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
            ArrayRef<int64_t> pads) {
  SmallVector<SymSize> s = sizesOf(node, x);
  std::optional<SymSize> cd = SymSize::mul(s[1], s[2]),
                         nc = SymSize::mul(s[0], s[1]);
  if (!cd || !nc) {
    node.fail() << "cannot follow the sizes " << sizesStr(node, s)
                << " through a 3-D window; give the dimensions one size";
    return failure();
  }
  FailureOr<Value> v = reshapeToSizes(node, x, {s[0], *cd, s[3], s[4]});
  if (failed(v) ||
      failed(v = pool2(*v, {kernel[1], kernel[2]}, {strides[1], strides[2]},
                       {dilations[1], dilations[2]},
                       {pads[1], pads[2], pads[4], pads[5]})))
    return failure();
  SymSize oh = sizeOf(node, *v, 2), ow = sizeOf(node, *v, 3);
  std::optional<SymSize> plane = SymSize::mul(oh, ow);
  if (!plane) {
    node.fail() << "cannot follow the pooled sizes through a 3-D window; "
                   "give the dimensions one size";
    return failure();
  }
  if (failed(v = reshapeToSizes(node, *v,
                                {*nc, SymSize::constant(1), s[2], *plane})) ||
      failed(v = pool2(*v, {kernel[0], 1}, {strides[0], 1}, {dilations[0], 1},
                       {pads[0], 0, pads[3], 0})))
    return failure();
  return reshapeToSizes(node, *v, {s[0], s[1], sizeOf(node, *v, 2), oh, ow});
}

/// 3-D pooling as two 2-D poolings: over (H, W) with depth folded into the
/// channels, then over D with the spatial plane flattened. A pooling window is
/// a box and so is its valid (unpadded) part, so max and average (with or
/// without counting the padding) both separate this way.
template <typename PoolOp>
FailureOr<Value> pool3D(OnnxNode &node, Value x, ArrayRef<int64_t> kernel,
                        bool includePad) {
  RankedTensorType xt = typeOf(x);
  if (!xt.hasStaticShape() && !node.sizes)
    return node.requireStaticShape(xt);
  auto list = [&](StringRef name, int64_t dflt, size_t n) {
    return node.intsAttr(name).value_or(SmallVector<int64_t>(n, dflt));
  };
  SmallVector<int64_t> strides = list("strides", 1, 3),
                       dilations = list("dilations", 1, 3),
                       pads = list("pads", 0, 6);
  if (kernel.size() != 3 || strides.size() != 3 || dilations.size() != 3 ||
      pads.size() != 6) {
    node.fail() << "a 3-D window needs 3 kernel_shape, strides and dilations "
                   "values and 6 pads";
    return failure();
  }
  ArrayRef<int64_t> s = xt.getShape();
  std::string autoPad = node.strAttr("auto_pad", "NOTSET");
  if (autoPad == "VALID") {
    pads.assign(6, 0);
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    if (!xt.hasStaticShape()) {
      node.fail() << "auto_pad " << autoPad << " of a 3-D window needs static "
                  << "sizes (its padding depends on them), not " << xt
                  << "; give the pads explicitly or the dimensions one size";
      return failure();
    }
    for (int i = 0; i < 3; ++i) {
      int64_t in = s[2 + i], out = (in + strides[i] - 1) / strides[i];
      int64_t total = std::max<int64_t>(
          (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - in, 0);
      int64_t small = total / 2, large = total - small;
      pads[i] = autoPad == "SAME_UPPER" ? small : large;
      pads[3 + i] = autoPad == "SAME_UPPER" ? large : small;
    }
  } else if (autoPad != "NOTSET") {
    node.fail() << "unknown auto_pad '" << autoPad
                << "'; expected NOTSET, VALID, SAME_UPPER or SAME_LOWER";
    return failure();
  }
  auto &b = node.builder;
  bool ceil = node.intAttr("ceil_mode", 0) != 0;
  auto pool2 = [&](Value v, ArrayRef<int64_t> k, ArrayRef<int64_t> st,
                   ArrayRef<int64_t> dl, ArrayRef<int64_t> p) {
    if constexpr (std::is_same_v<PoolOp, AvgPool2DOp>)
      return build<PoolOp>(
          node, v, b.getDenseI64ArrayAttr(k), b.getDenseI64ArrayAttr(st),
          b.getDenseI64ArrayAttr(dl), b.getDenseI64ArrayAttr(p),
          b.getBoolAttr(ceil), b.getBoolAttr(includePad));
    else
      return build<PoolOp>(node, v, b.getDenseI64ArrayAttr(k),
                           b.getDenseI64ArrayAttr(st),
                           b.getDenseI64ArrayAttr(dl),
                           b.getDenseI64ArrayAttr(p), b.getBoolAttr(ceil));
  };
  if (!xt.hasStaticShape())
    return pool3DSized(node, x, pool2, kernel, strides, dilations, pads);
  FailureOr<Value> v = reshapeTo(node, x, {s[0], s[1] * s[2], s[3], s[4]});
  if (failed(v) ||
      failed(v = pool2(*v, {kernel[1], kernel[2]}, {strides[1], strides[2]},
                       {dilations[1], dilations[2]},
                       {pads[1], pads[2], pads[4], pads[5]})))
    return failure();
  int64_t oh = typeOf(*v).getDimSize(2), ow = typeOf(*v).getDimSize(3);
  if (failed(v = reshapeTo(node, *v, {s[0] * s[1], 1, s[2], oh * ow})) ||
      failed(v = pool2(*v, {kernel[0], 1}, {strides[0], 1}, {dilations[0], 1},
                       {pads[0], 0, pads[3], 0})))
    return failure();
  return reshapeTo(node, *v, {s[0], s[1], typeOf(*v).getDimSize(2), oh, ow});
}

/// MaxPool's Indices output for a 2-D window: the flat input position of the
/// maximum of each window (the first one on ties, row-major or, with
/// storage_order 1, column-major within each image). Every window position
/// is a strided slice of the input padded with the lowest float (not -inf:
/// -inf - -inf is NaN); a running maximum picks
/// the position where a value is strictly greater. The bookkeeping is in f64,
/// whose integers are exact far beyond any tensor size.
FailureOr<Value> maxPoolIndices(OnnxNode &node, Value x, const Window &w,
                                RankedTensorType pooled) {
  auto &b = node.builder;
  Type f64 = b.getF64Type();
  ArrayRef<int64_t> s = typeOf(x).getShape();
  int64_t n = s[0], c = s[1], h = s[2], wd = s[3];
  int64_t oh = pooled.getDimSize(2), ow = pooled.getDimSize(3);
  bool colMajor = node.intAttr("storage_order", 0) != 0;
  // Enough padding at the end for ceil_mode's last window.
  int64_t endH = std::max<int64_t>((oh - 1) * w.strides[0] +
                                       (w.kernel[0] - 1) * w.dilations[0] + 1 -
                                       h - w.pads[0],
                                   0);
  int64_t endW = std::max<int64_t>((ow - 1) * w.strides[1] +
                                       (w.kernel[1] - 1) * w.dilations[1] + 1 -
                                       wd - w.pads[1],
                                   0);
  FailureOr<Value> xd = build<CastOp>(node, x, TypeAttr::get(f64));
  if (failed(xd) ||
      failed(xd = build<PadOp>(
                 node, *xd,
                 b.getDenseI64ArrayAttr(
                     {0, 0, w.pads[0], w.pads[1], 0, 0, endH, endW}),
                 b.getF32FloatAttr(std::numeric_limits<float>::lowest()))))
    return failure();
  auto constant = [&](ArrayRef<int64_t> shape, ArrayRef<double> v) {
    auto type = RankedTensorType::get(shape, f64);
    return ConstantOp::create(b, node.loc(), type,
                              DenseElementsAttr::get(type, v))
        .getResult();
  };
  SmallVector<double> image(n * c);
  for (int64_t i = 0; i < n * c; ++i)
    image[i] = (double)i * h * wd;
  Value imageBase = constant({n, c, 1, 1}, image);
  Value best, bestIdx;
  for (int64_t ky = 0; ky < w.kernel[0]; ++ky)
    for (int64_t kx = 0; kx < w.kernel[1]; ++kx) {
      FailureOr<Value> v = build<SliceOp>(
          node, *xd,
          b.getDenseI64ArrayAttr(
              {0, 0, ky * w.dilations[0], kx * w.dilations[1]}),
          b.getDenseI64ArrayAttr({n, c, oh, ow}),
          b.getDenseI64ArrayAttr({1, 1, w.strides[0], w.strides[1]}));
      if (failed(v))
        return failure();
      SmallVector<double> rows(oh), cols(ow);
      for (int64_t i = 0; i < oh; ++i) {
        double y = i * w.strides[0] + ky * w.dilations[0] - w.pads[0];
        rows[i] = colMajor ? y : y * wd;
      }
      for (int64_t j = 0; j < ow; ++j) {
        double xx = j * w.strides[1] + kx * w.dilations[1] - w.pads[1];
        cols[j] = colMajor ? xx * h : xx;
      }
      FailureOr<Value> idx =
          build<AddOp>(node, constant({oh, 1}, rows), constant({ow}, cols));
      if (failed(idx) || failed(idx = build<AddOp>(node, imageBase, *idx)))
        return failure();
      if (!best) {
        best = *v;
        bestIdx = *idx;
        continue;
      }
      // m = 1 where v > best: relu(sign(v - best)).
      FailureOr<Value> m = build<SubOp>(node, *v, best), nb, ni;
      if (failed(m) || failed(m = build<SignOp>(node, *m)) ||
          failed(m = build<ReluOp>(node, *m)) ||
          failed(ni = build<SubOp>(node, *idx, bestIdx)) ||
          failed(ni = build<MulOp>(node, *m, *ni)) ||
          failed(ni = build<AddOp>(node, bestIdx, *ni)) ||
          failed(nb = build<MaxOp>(node, best, *v)))
        return failure();
      best = *nb;
      bestIdx = *ni;
    }
  return build<CastOp>(node, bestIdx, TypeAttr::get(b.getI64Type()));
}

/// MaxPool or AveragePool of input 0, or of `source` (LpPool's |x|^p), where
/// an average counts the padding when `includePad`.
template <typename PoolOp>
FailureOr<SmallVector<Value>> pool(OnnxNode &node, bool includePad,
                                   Value source = {}) {
  FailureOr<Value> x = source ? FailureOr<Value>(source) : node.rankedInput(0);
  if (failed(x))
    return failure();
  bool indices = node.resultUsed(1);
  if (indices && (typeOf(*x).getRank() != 4 ||
                  !isa<FloatType>(typeOf(*x).getElementType()))) {
    node.fail() << "the Indices output is only supported for 2-D float "
                   "pooling; this input is "
                << typeOf(*x);
    return failure();
  }
  std::optional<SmallVector<int64_t>> kernel = node.intsAttr("kernel_shape");
  if (!kernel) {
    node.fail() << "kernel_shape is required";
    return failure();
  }
  if (typeOf(*x).getRank() == 5)
    return one(pool3D<PoolOp>(node, *x, *kernel, includePad));
  if (indices && failed(node.requireStaticShape(typeOf(*x))))
    return failure();
  FailureOr<Window> win =
      readWindow(node, typeOf(*x), *kernel, /*staticChannels=*/false, *x);
  if (failed(win))
    return failure();
  Value input = *x;
  if (win->oneD) {
    FailureOr<Value> xi = liftTo2D(node, input);
    if (failed(xi))
      return failure();
    input = *xi;
  }
  auto &b = node.builder;
  FailureOr<Value> y;
  bool ceil = node.intAttr("ceil_mode", 0) != 0;
  if constexpr (std::is_same_v<PoolOp, AvgPool2DOp>)
    y = build<PoolOp>(node, input, b.getDenseI64ArrayAttr(win->kernel),
                      b.getDenseI64ArrayAttr(win->strides),
                      b.getDenseI64ArrayAttr(win->dilations),
                      b.getDenseI64ArrayAttr(win->pads), b.getBoolAttr(ceil),
                      b.getBoolAttr(includePad));
  else
    y = build<PoolOp>(node, input, b.getDenseI64ArrayAttr(win->kernel),
                      b.getDenseI64ArrayAttr(win->strides),
                      b.getDenseI64ArrayAttr(win->dilations),
                      b.getDenseI64ArrayAttr(win->pads), b.getBoolAttr(ceil));
  if (indices && succeeded(y)) {
    FailureOr<Value> i = maxPoolIndices(node, *x, *win, typeOf(*y));
    if (failed(i))
      return failure();
    return SmallVector<Value>{*y, *i};
  }
  return one(win->oneD ? lowerTo1D(node, y) : y);
}

FailureOr<SmallVector<Value>> globalPool(OnnxNode &node, bool isMax) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  if (!isMax)
    return one(build<GlobalAvgPoolOp>(node, *x));
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < typeOf(*x).getRank(); ++d)
    axes.push_back(d);
  return one(build<ReduceMaxOp>(node, *x,
                                node.builder.getDenseI64ArrayAttr(axes),
                                node.builder.getBoolAttr(true)));
}

/// |x|^p for LpPool and GlobalLpPool (x * x for p = 2); p must be 1 or more.
FailureOr<Value> lpMagnitude(OnnxNode &node, Value x, int64_t p) {
  if (p < 1) {
    node.fail() << "p must be 1 or more, got " << p;
    return failure();
  }
  FailureOr<Value> mag =
      p == 2 ? build<MulOp>(node, x, x) : build<AbsOp>(node, x);
  if (succeeded(mag) && p > 2)
    mag = build<PowOp>(node, *mag, scalarConstant(node, elementOf(x), p));
  return mag;
}

/// sum^(1/p): the sum itself, its square root, or a power.
FailureOr<SmallVector<Value>> lpRoot(OnnxNode &node, FailureOr<Value> sum,
                                     int64_t p) {
  if (failed(sum) || p == 1)
    return one(sum);
  if (p == 2)
    return one(build<SqrtOp>(node, *sum));
  return one(build<PowOp>(
      node, *sum, scalarConstant(node, elementOf(*sum), 1.0 / (double)p)));
}

} // namespace

/// MaxPool. Integers of up to 16 bits (ONNX allows int8 and uint8) are
/// pooled in f32, which holds them exactly, and converted back.
FailureOr<SmallVector<Value>> mlir::kiln::convertMaxPool(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  Type elt = elementOf(*x);
  if (isa<FloatType>(elt) || elt.getIntOrFloatBitWidth() > 16)
    return pool<MaxPool2DOp>(node, /*includePad=*/false);
  if (node.resultUsed(1)) {
    node.fail() << "the Indices output is only supported for float pooling; "
                   "Cast the input to float first";
    return failure();
  }
  FailureOr<Value> wide =
      build<CastOp>(node, *x, TypeAttr::get(node.builder.getF32Type()));
  if (failed(wide))
    return failure();
  FailureOr<SmallVector<Value>> r =
      pool<MaxPool2DOp>(node, /*includePad=*/false, *wide);
  if (failed(r))
    return failure();
  return one(build<CastOp>(node, (*r)[0], TypeAttr::get(elt)));
}

FailureOr<SmallVector<Value>> mlir::kiln::convertAveragePool(OnnxNode &node) {
  return pool<AvgPool2DOp>(node, node.intAttr("count_include_pad", 0) != 0);
}

FailureOr<Value> mlir::kiln::averagePoolOf(OnnxNode &node, Value x) {
  FailureOr<SmallVector<Value>> y =
      pool<AvgPool2DOp>(node, node.intAttr("count_include_pad", 0) != 0, x);
  if (failed(y))
    return failure();
  return (*y)[0];
}

FailureOr<SmallVector<Value>>
mlir::kiln::convertGlobalAveragePool(OnnxNode &node) {
  return globalPool(node, false);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertGlobalMaxPool(OnnxNode &node) {
  return globalPool(node, true);
}

/// LpPool 2, 11, 18, 22: (sum over the window of |x|^p)^(1/p), as the
/// average of |x|^p counting the zero padding, times the window size. A
/// ceil_mode window reaching past the padding is refused: its average would
/// not count the part outside.
FailureOr<SmallVector<Value>> mlir::kiln::convertLpPool(OnnxNode &node) {
  // Symbolic sizes go through the pooling as AveragePool's do.
  FailureOr<Value> x = elementwiseFloatInput(node, 0);
  if (failed(x))
    return failure();
  if (node.intAttr("ceil_mode", 0) != 0) {
    node.fail() << "ceil_mode = 1 is not supported for LpPool; pad the input "
                   "(pads) to cover the last window instead";
    return failure();
  }
  std::optional<SmallVector<int64_t>> kernel = node.intsAttr("kernel_shape");
  if (!kernel) {
    node.fail() << "kernel_shape is required";
    return failure();
  }
  int64_t p = node.intAttr("p", 2), window = 1;
  for (int64_t k : *kernel)
    window *= k;
  FailureOr<Value> mag = lpMagnitude(node, *x, p);
  if (failed(mag))
    return failure();
  FailureOr<SmallVector<Value>> avg =
      pool<AvgPool2DOp>(node, /*includePad=*/true, *mag);
  if (failed(avg))
    return failure();
  FailureOr<Value> sum = build<MulOp>(
      node, (*avg)[0], scalarConstant(node, elementOf(*x), window));
  return lpRoot(node, sum, p);
}

/// GlobalLpPool 2, 22: (sum over every spatial position of |x|^p)^(1/p),
/// one value per [N, C].
FailureOr<SmallVector<Value>> mlir::kiln::convertGlobalLpPool(OnnxNode &node) {
  FailureOr<Value> x = floatInput(node, 0);
  if (failed(x))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  if (rank < 3) {
    node.fail() << "expects X [N, C, spatial...], got " << x->getType();
    return failure();
  }
  int64_t p = node.intAttr("p", 2);
  FailureOr<Value> mag = lpMagnitude(node, *x, p);
  if (failed(mag))
    return failure();
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  return lpRoot(node,
                build<ReduceSumOp>(node, *mag,
                                   node.builder.getDenseI64ArrayAttr(axes),
                                   node.builder.getBoolAttr(true)),
                p);
}

/// MaxUnpool 9, 11, 22: a zero tensor of the shape MaxPool's input had,
/// (in - 1) * stride - pads + kernel per spatial axis, with X's values
/// written at I's positions, which index that whole tensor flattened (as
/// MaxPool's Indices index its input): a scatter along the one axis of the
/// flattened tensor. An index outside it writes nothing. A larger
/// output_shape (a constant, or the declared one when given at run time)
/// zero-pads that result at the end of each axis, as ONNX's reference
/// defines it.
FailureOr<SmallVector<Value>> mlir::kiln::convertMaxUnpool(OnnxNode &node) {
  FailureOr<Value> x = node.staticInput(0), idx = node.staticInput(1);
  if (failed(x) || failed(idx))
    return failure();
  RankedTensorType xt = typeOf(*x), it = typeOf(*idx);
  int64_t rank = xt.getRank(), spatial = rank - 2;
  if (rank < 3 || it.getShape() != xt.getShape() ||
      !isa<FloatType>(xt.getElementType()) ||
      !it.getElementType().isInteger(64)) {
    node.fail() << "expects float X [N, C, spatial...] and int64 indices I "
                   "of the same shape, got "
                << xt << " and " << it;
    return failure();
  }
  std::optional<SmallVector<int64_t>> kernel = node.intsAttr("kernel_shape");
  SmallVector<int64_t> strides = node.intsAttr("strides").value_or(
                           SmallVector<int64_t>(spatial, 1)),
                       pads = node.intsAttr("pads").value_or(
                           SmallVector<int64_t>(2 * spatial, 0));
  if (!kernel || (int64_t)kernel->size() != spatial ||
      (int64_t)strides.size() != spatial ||
      (int64_t)pads.size() != 2 * spatial) {
    node.fail() << "needs kernel_shape (and strides, pads if given) for each "
                   "of the "
                << spatial << " spatial axes";
    return failure();
  }
  SmallVector<int64_t> inferred(xt.getShape());
  int64_t total;
  bool bad = __builtin_mul_overflow(xt.getDimSize(0), xt.getDimSize(1), &total);
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t &s = inferred[2 + d];
    bad |= __builtin_mul_overflow(s - 1, strides[d], &s) ||
           __builtin_add_overflow(s, (*kernel)[d] - pads[d] - pads[spatial + d],
                                  &s) ||
           s < 1 || __builtin_mul_overflow(total, s, &total);
  }
  if (bad) {
    node.fail() << "kernel_shape, strides and pads give no valid unpooled "
                   "shape for X "
                << xt;
    return failure();
  }
  SmallVector<int64_t> shape = inferred;
  if (node.input(2)) {
    if (std::optional<SmallVector<int64_t>> given = node.constantInts(2)) {
      shape = *given;
    } else {
      FailureOr<RankedTensorType> declared =
          declaredResult(node, 0, "output_shape");
      if (failed(declared) ||
          failed(guardEquals(node, 2, declared->getShape(),
                             "must be the output shape this model was "
                             "compiled for")))
        return failure();
      shape.assign(declared->getShape().begin(), declared->getShape().end());
    }
    bool fits = (int64_t)shape.size() == rank && shape[0] == inferred[0] &&
                shape[1] == inferred[1];
    for (int64_t d = 2; fits && d < rank; ++d)
      fits = shape[d] >= inferred[d] && shape[d] <= inferred[d] + (1 << 24);
    if (!fits) {
      node.fail() << "output_shape " << shapeStr(shape)
                  << " must keep X's batch and channels and be at least the "
                     "unpooled shape "
                  << shapeStr(inferred) << " on each spatial axis";
      return failure();
    }
  }
  Value zeros = splatConstant(
      node, RankedTensorType::get({total}, xt.getElementType()), 0.0);
  FailureOr<Value> values = reshapeTo(node, *x, {xt.getNumElements()});
  FailureOr<Value> at = reshapeTo(node, *idx, {xt.getNumElements()});
  if (failed(values) || failed(at))
    return failure();
  FailureOr<Value> y = build<ScatterElementsOp>(
      node, zeros, *at, *values, node.builder.getI64IntegerAttr(0),
      node.builder.getStringAttr("none"));
  if (failed(y) || failed(y = reshapeTo(node, *y, inferred)))
    return failure();
  if (shape == inferred)
    return one(y);
  SmallVector<int64_t> padding(2 * rank, 0);
  for (int64_t d = 0; d < rank; ++d)
    padding[rank + d] = shape[d] - inferred[d];
  return one(build<PadOp>(node, *y, node.builder.getDenseI64ArrayAttr(padding),
                          node.builder.getF32FloatAttr(0.0f)));
}
