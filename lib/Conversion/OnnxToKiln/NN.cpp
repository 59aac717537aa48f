//===- NN.cpp - ONNX convolution, pooling, normalization, GEMM --*- C++ -*-===//
#include "Build.h"
#include "NNParts.h"

#include <limits>

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Window attributes of a Conv or pooling node, in 2-D form.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, pads;
  bool oneD = false; ///< a 1-D window lifted to 2-D with a unit height
};

/// Reads kernel/strides/dilations/pads for an input of rank 3 (1-D) or 4
/// (2-D); 1-D windows become 2-D windows of height 1.
FailureOr<Window> readWindow(OnnxNode &node, RankedTensorType input,
                             SmallVector<int64_t> kernel) {
  Window w;
  int64_t spatial = input.getRank() - 2;
  if (spatial != 1 && spatial != 2) {
    node.fail() << "only 1-D, 2-D and 3-D windows are supported; the input has "
                << spatial << " spatial dimensions";
    return failure();
  }
  if (failed(node.requireStaticShape(input)))
    return failure();
  auto list = [&](StringRef name, int64_t dflt) -> FailureOr<SmallVector<int64_t>> {
    SmallVector<int64_t> v =
        node.intsAttr(name).value_or(SmallVector<int64_t>(spatial, dflt));
    if ((int64_t)v.size() != spatial) {
      node.fail() << name << " has " << v.size() << " values; expected "
                  << spatial;
      return failure();
    }
    return v;
  };
  if ((int64_t)kernel.size() != spatial) {
    node.fail() << "kernel_shape has " << kernel.size() << " values; expected "
                << spatial;
    return failure();
  }
  FailureOr<SmallVector<int64_t>> strides = list("strides", 1),
                                  dilations = list("dilations", 1);
  if (failed(strides) || failed(dilations))
    return failure();
  w.kernel = kernel;
  w.strides = *strides;
  w.dilations = *dilations;
  SmallVector<int64_t> hw(input.getShape().drop_front(2));
  if (spatial == 1) {
    // Lift to 2-D: height 1, and ONNX's [begin, end] pads to [0, b, 0, e].
    w.oneD = true;
    w.kernel.insert(w.kernel.begin(), 1);
    w.strides.insert(w.strides.begin(), 1);
    w.dilations.insert(w.dilations.begin(), 1);
    hw.insert(hw.begin(), 1);
    SmallVector<int64_t> pads1 =
        node.intsAttr("pads").value_or(SmallVector<int64_t>{0, 0});
    std::string autoPad = node.strAttr("auto_pad", "NOTSET");
    if (autoPad == "NOTSET") {
      if (pads1.size() != 2) {
        node.fail() << "expects 2 pads for a 1-D window, got " << pads1.size();
        return failure();
      }
      w.pads = {0, pads1[0], 0, pads1[1]};
      return w;
    }
  }
  FailureOr<SmallVector<int64_t>> pads =
      resolvePads2D(node, hw, w.kernel, w.strides, w.dilations);
  if (failed(pads))
    return failure();
  w.pads = *pads;
  return w;
}

/// [N, C, W] -> [N, C, 1, W] for 1-D windows.
FailureOr<Value> liftTo2D(OnnxNode &node, Value v) {
  auto shape = llvm::to_vector(typeOf(v).getShape());
  shape.insert(shape.begin() + 2, 1);
  return reshapeTo(node, v, shape);
}

FailureOr<Value> lowerTo1D(OnnxNode &node, FailureOr<Value> v) {
  if (failed(v))
    return failure();
  auto shape = llvm::to_vector(typeOf(*v).getShape());
  shape.erase(shape.begin() + 2);
  return reshapeTo(node, *v, shape);
}

/// Explicit [begin..., end...] pads for an N-D window from pads/auto_pad.
FailureOr<SmallVector<int64_t>> padsND(OnnxNode &node, ArrayRef<int64_t> in,
                                       ArrayRef<int64_t> kernel,
                                       ArrayRef<int64_t> strides,
                                       ArrayRef<int64_t> dilations) {
  size_t n = in.size();
  std::string autoPad = node.strAttr("auto_pad", "NOTSET");
  SmallVector<int64_t> pads =
      node.intsAttr("pads").value_or(SmallVector<int64_t>(2 * n, 0));
  if (autoPad == "VALID") {
    pads.assign(2 * n, 0);
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    pads.assign(2 * n, 0);
    for (size_t i = 0; i < n; ++i) {
      int64_t out = (in[i] + strides[i] - 1) / strides[i];
      int64_t total = std::max<int64_t>(
          (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - in[i], 0);
      int64_t small = total / 2, large = total - small;
      pads[i] = autoPad == "SAME_UPPER" ? small : large;
      pads[n + i] = autoPad == "SAME_UPPER" ? large : small;
    }
  } else if (autoPad != "NOTSET") {
    node.fail() << "unknown auto_pad '" << autoPad
                << "'; expected NOTSET, VALID, SAME_UPPER or SAME_LOWER";
    return failure();
  }
  if (pads.size() != 2 * n) {
    node.fail() << "expects " << 2 * n << " pads, got " << pads.size();
    return failure();
  }
  return pads;
}

/// 3-D convolution as a sum over depth taps of 2-D convolutions: tap k reads
/// the depth slices k * dd, k * dd + sd, ... of the depth-padded input,
/// batched as N * OD.
FailureOr<Value> conv3D(OnnxNode &node, Value x, Value w) {
  RankedTensorType xt = typeOf(x), wt = typeOf(w);
  if (failed(node.requireStaticShape(xt)) || failed(node.requireStaticShape(wt)))
    return failure();
  auto list = [&](StringRef name, int64_t dflt) {
    return node.intsAttr(name).value_or(SmallVector<int64_t>(3, dflt));
  };
  SmallVector<int64_t> kernel = node.intsAttr("kernel_shape").value_or(
      llvm::to_vector(wt.getShape().drop_front(2)));
  SmallVector<int64_t> strides = list("strides", 1), dilations = list("dilations", 1);
  if (kernel.size() != 3 || strides.size() != 3 || dilations.size() != 3 ||
      wt.getRank() != 5) {
    node.fail() << "a 3-D convolution needs a 5-D filter and 3 kernel_shape, "
                   "strides and dilations values";
    return failure();
  }
  ArrayRef<int64_t> s = xt.getShape(), ws = wt.getShape();
  FailureOr<SmallVector<int64_t>> pads =
      padsND(node, s.drop_front(2), kernel, strides, dilations);
  if (failed(pads))
    return failure();
  auto &b = node.builder;
  int64_t n = s[0], c = s[1], m = ws[0];
  int64_t dp = s[2] + (*pads)[0] + (*pads)[3];
  int64_t od = (dp - dilations[0] * (kernel[0] - 1) - 1) / strides[0] + 1;
  if (od <= 0) {
    node.fail() << "the kernel does not fit the padded depth " << dp;
    return failure();
  }
  Value in = x;
  if ((*pads)[0] || (*pads)[3]) {
    FailureOr<Value> p = build<PadOp>(
        node, x, b.getDenseI64ArrayAttr({0, 0, (*pads)[0], 0, 0, 0, 0, (*pads)[3], 0, 0}),
        b.getF32FloatAttr(0.0f));
    if (failed(p))
      return failure();
    in = *p;
  }
  std::optional<DenseElementsAttr> wc = node.constantInput(1);
  Value acc;
  int64_t oh = 0, ow = 0;
  for (int64_t k = 0; k < kernel[0]; ++k) {
    FailureOr<Value> xk = build<SliceOp>(
        node, in, b.getDenseI64ArrayAttr({0, 0, k * dilations[0], 0, 0}),
        b.getDenseI64ArrayAttr({n, c, od, s[3], s[4]}),
        b.getDenseI64ArrayAttr({1, 1, strides[0], 1, 1}));
    if (failed(xk) ||
        failed(xk = build<TransposeOp>(node, *xk, b.getDenseI64ArrayAttr({0, 2, 1, 3, 4}))) ||
        failed(xk = reshapeTo(node, *xk, {n * od, c, s[3], s[4]})))
      return failure();
    FailureOr<Value> wk;
    if (wc && wc->getElementType().getIntOrFloatBitWidth() % 8 == 0) {
      DenseElementsAttr tap = depthTap(wc->reshape(wt), k);
      wk = ConstantOp::create(b, node.loc(), tap.getType(), tap).getResult();
    } else if (failed(wk = build<SliceOp>(node, w, b.getDenseI64ArrayAttr({0, 0, k, 0, 0}),
                                          b.getDenseI64ArrayAttr({ws[0], ws[1], 1, ws[3], ws[4]}),
                                          b.getDenseI64ArrayAttr({1, 1, 1, 1, 1}))) ||
               failed(wk = reshapeTo(node, *wk, {ws[0], ws[1], ws[3], ws[4]}))) {
      return failure();
    }
    FailureOr<Value> y = build<Conv2DOp>(
        node, *xk, *wk, k == 0 ? node.input(2) : Value(),
        b.getDenseI64ArrayAttr({strides[1], strides[2]}),
        b.getDenseI64ArrayAttr({dilations[1], dilations[2]}),
        b.getDenseI64ArrayAttr({(*pads)[1], (*pads)[2], (*pads)[4], (*pads)[5]}),
        b.getI64IntegerAttr(node.intAttr("group", 1)));
    if (failed(y) || (acc && failed(y = build<AddOp>(node, acc, *y))))
      return failure();
    acc = *y;
    oh = typeOf(acc).getDimSize(2);
    ow = typeOf(acc).getDimSize(3);
  }
  FailureOr<Value> y = reshapeTo(node, acc, {n, od, m, oh, ow});
  if (failed(y))
    return failure();
  return build<TransposeOp>(node, *y, b.getDenseI64ArrayAttr({0, 2, 1, 3, 4}));
}
} // namespace

FailureOr<Value> mlir::kiln::buildConv(OnnxNode &node, Value x, Value w,
                                       Value bias) {
  SmallVector<int64_t> kernel =
      node.intsAttr("kernel_shape")
          .value_or(llvm::to_vector(typeOf(w).getShape().drop_front(2)));
  FailureOr<Window> win = readWindow(node, typeOf(x), kernel);
  if (failed(win))
    return failure();
  Value input = x, filter = w;
  if (win->oneD) {
    FailureOr<Value> xi = liftTo2D(node, input), wi = liftTo2D(node, filter);
    if (failed(xi) || failed(wi))
      return failure();
    input = *xi;
    filter = *wi;
  }
  auto &b = node.builder;
  FailureOr<Value> y = build<Conv2DOp>(
      node, input, filter, bias, b.getDenseI64ArrayAttr(win->strides),
      b.getDenseI64ArrayAttr(win->dilations), b.getDenseI64ArrayAttr(win->pads),
      b.getI64IntegerAttr(node.intAttr("group", 1)));
  return win->oneD ? lowerTo1D(node, y) : y;
}

FailureOr<SmallVector<Value>> mlir::kiln::convertConv(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0), w = node.rankedInput(1);
  if (failed(x) || failed(w))
    return failure();
  if (typeOf(*x).getRank() == 5)
    return one(conv3D(node, *x, *w));
  return one(buildConv(node, *x, *w, node.input(2)));
}

namespace {
/// 3-D pooling as two 2-D poolings: over (H, W) with depth folded into the
/// channels, then over D with the spatial plane flattened. A pooling window is
/// a box and so is its valid (unpadded) part, so max and average (with or
/// without counting the padding) both separate this way.
template <typename PoolOp>
FailureOr<Value> pool3D(OnnxNode &node, Value x, ArrayRef<int64_t> kernel) {
  RankedTensorType xt = typeOf(x);
  if (failed(node.requireStaticShape(xt)))
    return failure();
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
      return build<PoolOp>(node, v, b.getDenseI64ArrayAttr(k),
                           b.getDenseI64ArrayAttr(st), b.getDenseI64ArrayAttr(dl),
                           b.getDenseI64ArrayAttr(p), b.getBoolAttr(ceil),
                           b.getBoolAttr(node.intAttr("count_include_pad", 0) != 0));
    else
      return build<PoolOp>(node, v, b.getDenseI64ArrayAttr(k),
                           b.getDenseI64ArrayAttr(st), b.getDenseI64ArrayAttr(dl),
                           b.getDenseI64ArrayAttr(p), b.getBoolAttr(ceil));
  };
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
  int64_t endH = std::max<int64_t>(
      (oh - 1) * w.strides[0] + (w.kernel[0] - 1) * w.dilations[0] + 1 - h - w.pads[0], 0);
  int64_t endW = std::max<int64_t>(
      (ow - 1) * w.strides[1] + (w.kernel[1] - 1) * w.dilations[1] + 1 - wd - w.pads[1], 0);
  FailureOr<Value> xd = build<CastOp>(node, x, TypeAttr::get(f64));
  if (failed(xd) ||
      failed(xd = build<PadOp>(node, *xd,
                               b.getDenseI64ArrayAttr({0, 0, w.pads[0], w.pads[1], 0, 0, endH, endW}),
                               b.getF32FloatAttr(std::numeric_limits<float>::lowest()))))
    return failure();
  auto constant = [&](ArrayRef<int64_t> shape, ArrayRef<double> v) {
    auto type = RankedTensorType::get(shape, f64);
    return ConstantOp::create(b, node.loc(), type, DenseElementsAttr::get(type, v))
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
          b.getDenseI64ArrayAttr({0, 0, ky * w.dilations[0], kx * w.dilations[1]}),
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
      FailureOr<Value> idx = build<AddOp>(node, constant({oh, 1}, rows),
                                          constant({ow}, cols));
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

template <typename PoolOp>
FailureOr<SmallVector<Value>> pool(OnnxNode &node, bool isAvg) {
  FailureOr<Value> x = node.rankedInput(0);
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
    return one(pool3D<PoolOp>(node, *x, *kernel));
  FailureOr<Window> win = readWindow(node, typeOf(*x), *kernel);
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
                      b.getBoolAttr(node.intAttr("count_include_pad", 0) != 0));
  else
    y = build<PoolOp>(node, input, b.getDenseI64ArrayAttr(win->kernel),
                      b.getDenseI64ArrayAttr(win->strides),
                      b.getDenseI64ArrayAttr(win->dilations),
                      b.getDenseI64ArrayAttr(win->pads), b.getBoolAttr(ceil));
  (void)isAvg;
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
  return one(build<ReduceMaxOp>(node, *x, node.builder.getDenseI64ArrayAttr(axes),
                                node.builder.getBoolAttr(true)));
}
} // namespace

FailureOr<SmallVector<Value>>
mlir::kiln::convertBatchNormalization(OnnxNode &node) {
  if (node.intAttr("training_mode", 0) != 0) {
    node.fail() << "training_mode=1 is not supported; export the model in "
                   "inference (eval) mode";
    return failure();
  }
  for (unsigned i = 1; i < 5; ++i)
    if (node.resultUsed(i)) {
      node.fail() << "output " << i
                  << " (running statistics) is not supported in inference";
      return failure();
    }
  SmallVector<Value> in;
  for (unsigned i = 0; i < 5; ++i) {
    FailureOr<Value> v = node.rankedInput(i);
    if (failed(v))
      return failure();
    in.push_back(*v);
  }
  return one(build<BatchNormOp>(node, in[0], in[1], in[2], in[3], in[4],
                                node.builder.getF32FloatAttr(
                                    node.floatAttr("epsilon", 1e-5f))));
}

namespace {
/// LayerNormalization 17 with its Mean and InvStdDev outputs: decomposed
/// into reductions and elementwise ops in stash_type (float32); the two
/// statistics keep the normalized dimensions with size 1.
FailureOr<SmallVector<Value>> layerNormWithStats(OnnxNode &node, Value x,
                                                 Value scale, int64_t axis,
                                                 float epsilon) {
  if (node.intAttr("stash_type", 1) != 1) {
    node.fail() << "stash_type " << node.intAttr("stash_type", 1)
                << " is not supported with the Mean or InvStdDev outputs; "
                   "Kiln computes them in float32 (stash_type 1)";
    return failure();
  }
  // Scale and B broadcast to the normalized dimensions, never beyond them.
  ArrayRef<int64_t> normalized = typeOf(x).getShape().drop_front(axis);
  for (Value p : {scale, node.input(2)}) {
    if (!p)
      continue;
    ArrayRef<int64_t> ps = typeOf(p).getShape();
    FailureOr<SmallVector<int64_t>> bs = broadcastShapes(ps, normalized);
    if (ps.size() > normalized.size() || failed(bs) ||
        ArrayRef<int64_t>(*bs) != normalized) {
      auto dims = [](ArrayRef<int64_t> shape) {
        std::string s = "[";
        llvm::interleave(
            shape, [&](int64_t d) { s += std::to_string(d); },
            [&] { s += ","; });
        return s + "]";
      };
      node.fail() << "scale and bias must broadcast to the normalized shape "
                  << dims(normalized) << ", got " << dims(ps);
      return failure();
    }
  }
  auto &b = node.builder;
  Type elt = typeOf(x).getElementType(), f32 = b.getF32Type();
  SmallVector<int64_t> axes;
  for (int64_t d = axis; d < typeOf(x).getRank(); ++d)
    axes.push_back(d);
  auto reduceMean = [&](Value v) {
    return build<ReduceMeanOp>(node, v, b.getDenseI64ArrayAttr(axes),
                               b.getBoolAttr(true));
  };
  FailureOr<Value> xs = x;
  if (elt != f32)
    xs = build<CastOp>(node, x, TypeAttr::get(f32));
  if (failed(xs))
    return failure();
  FailureOr<Value> mean = reduceMean(*xs);
  if (failed(mean))
    return failure();
  FailureOr<Value> centered = build<SubOp>(node, *xs, *mean);
  if (failed(centered))
    return failure();
  FailureOr<Value> var = build<MulOp>(node, *centered, *centered);
  if (succeeded(var))
    var = reduceMean(*var);
  if (failed(var))
    return failure();
  auto epsType = RankedTensorType::get({}, f32);
  Value eps = ConstantOp::create(
      b, node.loc(), epsType,
      DenseElementsAttr::get(epsType, b.getF32FloatAttr(epsilon)));
  FailureOr<Value> invStd = build<AddOp>(node, *var, eps);
  if (succeeded(invStd))
    invStd = build<SqrtOp>(node, *invStd);
  if (succeeded(invStd))
    invStd = build<ReciprocalOp>(node, *invStd);
  if (failed(invStd))
    return failure();
  FailureOr<Value> y = build<MulOp>(node, *centered, *invStd);
  if (succeeded(y) && elt != f32)
    y = build<CastOp>(node, *y, TypeAttr::get(elt));
  if (succeeded(y))
    y = build<MulOp>(node, *y, scale);
  if (succeeded(y) && node.input(2))
    y = build<AddOp>(node, *y, node.input(2));
  if (failed(y))
    return failure();
  return SmallVector<Value>{*y, *mean, *invStd};
}
} // namespace

/// LayerNormalization 17. Y alone is one kiln.layer_norm (computed in the
/// input type); the Mean and InvStdDev outputs, when used, take the
/// decomposed path.
FailureOr<SmallVector<Value>>
mlir::kiln::convertLayerNormalization(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0), scale = node.rankedInput(1);
  if (failed(x) || failed(scale))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  if (rank == 0) {
    node.fail() << "cannot normalize a scalar";
    return failure();
  }
  FailureOr<int64_t> axis = normalizeAxis(node, node.intAttr("axis", -1), rank);
  if (failed(axis))
    return failure();
  float epsilon = node.floatAttr("epsilon", 1e-5f);
  if (node.resultUsed(1) || node.resultUsed(2))
    return layerNormWithStats(node, *x, *scale, *axis, epsilon);
  auto &b = node.builder;
  return one(build<LayerNormOp>(node, *x, *scale, node.input(2),
                                b.getI64IntegerAttr(*axis),
                                b.getF32FloatAttr(epsilon)));
}

FailureOr<SmallVector<Value>> mlir::kiln::convertGemm(OnnxNode &node) {
  FailureOr<Value> a = node.rankedInput(0), b = node.rankedInput(1);
  if (failed(a) || failed(b))
    return failure();
  auto &bl = node.builder;
  return one(build<GemmOp>(node, *a, *b, node.input(2),
                           bl.getF32FloatAttr(node.floatAttr("alpha", 1.0f)),
                           bl.getF32FloatAttr(node.floatAttr("beta", 1.0f)),
                           bl.getBoolAttr(node.intAttr("transA", 0) != 0),
                           bl.getBoolAttr(node.intAttr("transB", 0) != 0)));
}

FailureOr<SmallVector<Value>> mlir::kiln::convertMatMul(OnnxNode &node) {
  FailureOr<Value> a = node.rankedInput(0), b = node.rankedInput(1);
  if (failed(a) || failed(b))
    return failure();
  return one(build<MatMulOp>(node, *a, *b));
}

namespace {
/// Softmax and LogSoftmax. Before opset 13 the input is coerced to 2-D at
/// `axis` (default 1) and normalized over the whole trailing block.
FailureOr<SmallVector<Value>> softmax(OnnxNode &node, bool log) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  int64_t rank = type.getRank();
  bool coerce = node.opset < 13;
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.intAttr("axis", coerce ? 1 : -1), rank);
  if (failed(axis))
    return failure();
  Value in = *x;
  if (coerce && *axis != rank - 1) {
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d)
      (d < *axis ? outer : inner) *= type.getDimSize(d);
    FailureOr<Value> flat = reshapeTo(node, in, {outer, inner});
    if (failed(flat))
      return failure();
    in = *flat;
    axis = 1;
  }
  FailureOr<Value> y =
      log ? logSoftmax(node, in, *axis)
          : build<SoftmaxOp>(node, in, node.builder.getI64IntegerAttr(*axis));
  if (failed(y))
    return failure();
  return one(reshapeTo(node, *y, type.getShape()));
}
} // namespace

FailureOr<SmallVector<Value>> mlir::kiln::convertMaxPool(OnnxNode &node) {
  return pool<MaxPool2DOp>(node, false);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertAveragePool(OnnxNode &node) {
  return pool<AvgPool2DOp>(node, true);
}

FailureOr<SmallVector<Value>>
mlir::kiln::convertGlobalAveragePool(OnnxNode &node) {
  return globalPool(node, false);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertGlobalMaxPool(OnnxNode &node) {
  return globalPool(node, true);
}

/// BatchNormalization 1 and 6: is_test = 1 meant inference and spatial = 0
/// normalized every element separately; Kiln compiles the inference, spatial
/// form.
FailureOr<SmallVector<Value>>
mlir::kiln::convertBatchNormalization1(OnnxNode &node) {
  if (node.intAttr("is_test", 0) != 1) {
    node.fail() << "is_test = 0 (training statistics) is not "
                   "supported; export the model in inference "
                   "(eval) mode";
    return failure();
  }
  if (node.intAttr("spatial", 1) != 1) {
    node.fail() << "spatial = 0 (per-element statistics) is not "
                   "supported";
    return failure();
  }
  return convertBatchNormalization(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertSoftmax(OnnxNode &node) {
  return softmax(node, false);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertLogSoftmax(OnnxNode &node) {
  return softmax(node, true);
}
