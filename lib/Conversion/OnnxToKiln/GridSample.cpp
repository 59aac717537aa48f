//===- GridSample.cpp - GridSample, RoiAlign, AffineGrid, DeformConv -----===//
//
// GridSample (opsets 16, 20 and 22; 2-D, and 3-D from 20) from existing kiln
// ops. The grid is data, so source positions are computed at run time:
// unnormalized coordinates, the padding mode (border clamps, reflection
// folds), then for each tap (1 nearest, 2^k linear, 16 bicubic) a flat row
// index into the input viewed as [N * D * H * W, C] (one gather picks C
// values per output position) and a weight that is zero for taps outside the
// input with zeros padding. The result is gathered channels-last and
// transposed back.
// RoiAlign samples the same way at positions computed from its run-time
// boxes, with a static number of samples per bin. AffineGrid makes the
// grids GridSample reads. DeformConv samples each kernel tap at its run-time
// offset the same way (bilinear) and multiplies the samples with the
// weights like im2col.
//
//===----------------------------------------------------------------------===//
#include "ShapeInputs.h"
#include "SymbolicSizes.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// kiln ops with failures threaded through a flag, so the formulas read as
/// formulas.
class Ops {
public:
  Ops(OnnxNode &node, Type elt) : node(node), elt(elt) {}
  OnnxNode &node;
  Type elt;
  bool bad = false;

  template <typename OpTy, typename... Args> Value op(Args &&...args) {
    if (bad)
      return {};
    FailureOr<Value> v = build<OpTy>(node, std::forward<Args>(args)...);
    if (failed(v)) {
      bad = true;
      return {};
    }
    return *v;
  }
  Value c(double v) {
    return scalarConstant(node, elt, v);
  }
  Value add(Value a, Value b) { return op<AddOp>(a, b); }
  Value sub(Value a, Value b) { return op<SubOp>(a, b); }
  Value mul(Value a, Value b) { return op<MulOp>(a, b); }
  Value div(Value a, Value b) { return op<DivOp>(a, b); }
  Value fmod(Value a, Value b) {
    return op<ModOp>(a, b, node.builder.getBoolAttr(true));
  }
  Value clamp(Value a, double lo, double hi) {
    return op<MinOp>(op<MaxOp>(a, c(lo)), c(hi));
  }
  /// clamp with a bound of run-time value.
  Value clamp(Value a, double lo, Value hi) {
    return op<MinOp>(op<MaxOp>(a, c(lo)), hi);
  }
  /// 1 where lo <= a <= hi, else 0 (float ops only).
  Value inRange(Value a, double lo, double hi) {
    Value outside = op<MinOp>(op<CeilOp>(op<AbsOp>(sub(a, clamp(a, lo, hi)))), c(1));
    return sub(c(1), outside);
  }
  Value inRange(Value a, double lo, Value hi) {
    Value outside =
        op<MinOp>(op<CeilOp>(op<AbsOp>(sub(a, clamp(a, lo, hi)))), c(1));
    return sub(c(1), outside);
  }
  Value reshape(Value v, ArrayRef<int64_t> shape) {
    if (bad)
      return {};
    FailureOr<Value> r = reshapeTo(node, v, shape);
    if (failed(r)) {
      bad = true;
      return {};
    }
    return *r;
  }
  /// reshape to sizes that may be symbolic (static ones as reshape does).
  Value reshape(Value v, ArrayRef<SymSize> sizes) {
    if (bad)
      return {};
    FailureOr<Value> r = reshapeToSizes(node, v, sizes);
    if (failed(r)) {
      bad = true;
      return {};
    }
    return *r;
  }
};

/// A spatial axis of the input: its size, static or (kDynamic) the run-time
/// `sizeF`, a scalar of the element type.
struct Axis {
  int64_t size;
  bool alignCorners;
  std::string padding;
  Value sizeF = {};
  bool dynamic() const { return ShapedType::isDynamic(size); }
  /// The last index, size - 1, as a value.
  Value last(Ops &o) const {
    return dynamic() ? o.sub(sizeF, o.c(1)) : o.c(size - 1);
  }
};

/// Grid value in [-1, 1] -> input coordinate.
Value unnormalize(Ops &o, Value g, const Axis &a) {
  if (a.dynamic())
    return a.alignCorners
               ? o.mul(o.add(g, o.c(1)), o.mul(a.last(o), o.c(0.5)))
               : o.div(o.sub(o.mul(o.add(g, o.c(1)), a.sizeF), o.c(1)), o.c(2));
  if (a.alignCorners)
    return o.mul(o.add(g, o.c(1)), o.c((a.size - 1) / 2.0));
  return o.div(o.sub(o.mul(o.add(g, o.c(1)), o.c(a.size)), o.c(1)), o.c(2));
}

/// applyPadding at a run-time size: a span of 0 (one pixel with
/// align_corners) folds by 1 instead, and the clamp to [0, 0] gives 0.
Value applyPaddingDynamic(Ops &o, Value x, const Axis &a) {
  if (a.padding == "border")
    return o.clamp(x, 0, a.last(o));
  if (a.padding != "reflection")
    return x;
  double lo = a.alignCorners ? 0 : -0.5;
  Value span = a.alignCorners ? o.op<MaxOp>(a.last(o), o.c(1)) : a.sizeF;
  Value in = o.op<AbsOp>(o.sub(x, o.c(lo)));
  Value extra = o.fmod(in, span);
  Value odd = o.fmod(o.op<FloorOp>(o.div(in, span)), o.c(2));
  Value r = o.add(o.add(o.c(lo), extra),
                  o.mul(odd, o.sub(span, o.mul(extra, o.c(2)))));
  return o.clamp(r, 0, a.last(o));
}

/// Border and reflection padding move a coordinate into the input.
Value applyPadding(Ops &o, Value x, const Axis &a) {
  if (a.dynamic())
    return applyPaddingDynamic(o, x, a);
  if (a.padding == "border")
    return o.clamp(x, 0, a.size - 1);
  if (a.padding != "reflection")
    return x;
  // Reflect over [lo, hi]: the edges with align_corners, the outer pixel
  // borders without.
  double lo = a.alignCorners ? 0 : -0.5, hi = a.alignCorners ? a.size - 1 : a.size - 0.5;
  double span = hi - lo;
  if (span <= 0)
    return o.mul(x, o.c(0));
  Value in = o.op<AbsOp>(o.sub(x, o.c(lo)));
  Value extra = o.fmod(in, o.c(span));
  Value odd = o.fmod(o.op<FloorOp>(o.div(in, o.c(span))), o.c(2));
  // even flips: lo + extra; odd flips: lo + span - extra.
  Value r = o.add(o.add(o.c(lo), extra),
                  o.mul(odd, o.sub(o.c(span), o.mul(extra, o.c(2)))));
  return o.clamp(r, 0, a.size - 1);
}

/// Keys' cubic coefficients (A = -0.75) for taps at distances 1 + t, t,
/// 1 - t, 2 - t.
SmallVector<Value> cubicCoeffs(Ops &o, Value t) {
  double A = -0.75;
  auto far = [&](Value d) {
    return o.sub(o.mul(o.add(o.mul(o.sub(o.mul(o.c(A), d), o.c(5 * A)), d), o.c(8 * A)), d),
                 o.c(4 * A));
  };
  auto near = [&](Value d) {
    return o.add(o.mul(o.mul(o.sub(o.mul(o.c(A + 2), d), o.c(A + 3)), d), d), o.c(1));
  };
  Value rest = o.sub(o.c(1), t);
  return {far(o.add(t, o.c(1))), near(t), near(rest), far(o.add(rest, o.c(1)))};
}
} // namespace

namespace {
/// Whether a sampling op's image `x` and `others` are all static; with
/// symbolic sizes the conversion needs the function's sizes and static
/// channels (dimension 1 of x).
FailureOr<bool> staticSampling(OnnxNode &node, RankedTensorType x,
                               ArrayRef<RankedTensorType> others) {
  bool isStatic =
      x.hasStaticShape() && llvm::all_of(others, [](RankedTensorType t) {
        return t.hasStaticShape();
      });
  if (isStatic || (node.sizes && x.getRank() >= 2 && !x.isDynamicDim(1)))
    return isStatic;
  if (node.sizes && x.getRank() >= 2) {
    node.fail() << "the channels of " << x
                << " must have a static size; give that dimension one size";
    return failure();
  }
  if (failed(node.requireStaticShape(x)))
    return failure();
  for (RankedTensorType t : others)
    if (failed(node.requireStaticShape(t)))
      return failure();
  return failure();
}

/// GridSample's mode (opset 20's names as 16's) and padding, checked for
/// `k` spatial axes.
FailureOr<std::pair<std::string, std::string>> gridModes(OnnxNode &node,
                                                         int64_t k) {
  // GridSample 20 renamed the modes (bilinear -> linear, bicubic -> cubic)
  // when it generalized to N-D; Kiln samples 2-D grids with either set.
  bool v20 = node.opset >= 20;
  std::string mode = node.strAttr("mode", v20 ? "linear" : "bilinear"),
              padding = node.strAttr("padding_mode", "zeros");
  if (v20 && (mode == "linear" || mode == "cubic"))
    mode = mode == "linear" ? "bilinear" : "bicubic";
  else if (v20 ? mode != "nearest"
               : mode != "bilinear" && mode != "nearest" && mode != "bicubic") {
    node.fail() << "mode '" << mode << "' is not supported"
                << (v20 ? "; GridSample-20 modes are linear, nearest and cubic"
                        : "; GridSample-16 modes are bilinear, nearest and "
                          "bicubic");
    return failure();
  }
  if (mode == "bicubic" && k != 2) {
    node.fail() << "cubic sampling of " << k
                << "-D inputs is not supported; use linear or nearest";
    return failure();
  }
  if (padding != "zeros" && padding != "border" && padding != "reflection") {
    node.fail() << "padding_mode '" << padding << "' is not supported";
    return failure();
  }
  return std::pair{mode, padding};
}

/// The sizes a GridSample of symbolic sizes reshapes to, as polynomials:
/// the output positions [N, O1..Ok], those with a unit channel, the input's
/// rows [N * D1 * .. * Dk, C], and D1 * .. * Dk.
struct GridSizes {
  SmallVector<SymSize> out, outRow, rows;
  SymSize pixels = SymSize::constant(1);
};

FailureOr<GridSizes> gridSizes(OnnxNode &node, Value x, Value grid, int64_t k) {
  GridSizes g;
  g.out.push_back(sizeOf(node, grid, 0));
  std::optional<SymSize> all;
  for (int64_t d = 0; d < k; ++d) {
    g.out.push_back(sizeOf(node, grid, d + 1));
    std::optional<SymSize> p = SymSize::mul(g.pixels, sizeOf(node, x, d + 2));
    if (!p)
      break;
    g.pixels = *p;
    if (d + 1 == k)
      all = SymSize::mul(sizeOf(node, x, 0), g.pixels);
  }
  if (!all) {
    node.fail() << "cannot follow the sizes of " << x.getType()
                << "; give its dimensions one size";
    return failure();
  }
  g.outRow = g.out;
  g.outRow.push_back(SymSize::constant(1));
  g.rows = {*all, sizeOf(node, x, 1)};
  return g;
}

/// i * D1 * .. * Dk for image i, shaped [N, 1, .., 1] (k ones): a constant,
/// or an iota of the run-time batch times the run-time pixel count.
Value imageBases(Ops &o, Value x, int64_t k, int64_t pixels,
                 const GridSizes *sym) {
  OnnxNode &node = o.node;
  auto &b = node.builder;
  auto i64 = b.getI64Type();
  int64_t n = typeOf(x).getDimSize(0);
  if (!sym) {
    SmallVector<int64_t> baseShape(k + 1, 1);
    baseShape[0] = n;
    auto baseType = RankedTensorType::get(baseShape, i64);
    SmallVector<int64_t> base;
    for (int64_t i = 0; i < n; ++i)
      base.push_back(i * pixels);
    return ConstantOp::create(b, node.loc(), baseType,
                              DenseElementsAttr::get(baseType, ArrayRef(base)));
  }
  SmallVector<SymSize> baseSizes(k + 1, SymSize::constant(1));
  baseSizes[0] = sizeOf(node, x, 0);
  FailureOr<Value> iota =
      iotaOfSize(node, baseSizes[0], i64, "GridSample's image index");
  FailureOr<Value> stride = sizeAsTensor(node, sym->pixels, i64);
  if (failed(iota) || failed(stride)) {
    o.bad = true;
    return {};
  }
  return o.reshape(o.mul(*iota, *stride), ArrayRef<SymSize>(baseSizes));
}
} // namespace

FailureOr<SmallVector<Value>> mlir::kiln::convertGridSample(OnnxNode &node) {
  FailureOr<Value> xv = node.rankedInput(0), gv = node.rankedInput(1);
  if (failed(xv) || failed(gv))
    return failure();
  RankedTensorType xt = typeOf(*xv), gt = typeOf(*gv);
  // Symbolic sizes (an image warped at any resolution and batch) take their
  // run-time values where the formulas use them.
  FailureOr<bool> allStatic = staticSampling(node, xt, {gt});
  if (failed(allStatic))
    return failure();
  bool isStatic = *allStatic;
  // k spatial axes: X [N, C, D1..Dk], grid [N, O1..Ok, k]; GridSample-16
  // is 2-D only, 20 is N-D (Kiln samples 2-D and 3-D).
  int64_t k = xt.getRank() - 2;
  int64_t maxK = node.opset >= 20 ? 3 : 2;
  if (k < 2 || k > maxK || gt.getRank() != k + 2 || gt.getDimSize(k + 1) != k ||
      knownToDiffer(sizeOf(node, *gv, 0), sizeOf(node, *xv, 0))) {
    node.fail() << (maxK == 3 ? "expects X [N, C, H, W] and grid [N, Ho, Wo, "
                                "2], or X [N, C, D, H, W] and grid [N, Do, Ho, "
                                "Wo, 3], got "
                              : "expects X [N, C, H, W] and grid [N, Ho, Wo, "
                                "2], got ")
                << xt << " and " << gt;
    return failure();
  }
  if (!isa<FloatType>(xt.getElementType()) || gt.getElementType() != xt.getElementType()) {
    node.fail() << "expects float X and grid of one element type, got " << xt
                << " and " << gt;
    return failure();
  }
  FailureOr<std::pair<std::string, std::string>> modes = gridModes(node, k);
  if (failed(modes))
    return failure();
  auto [mode, padding] = *modes;
  bool align = node.intAttr("align_corners", 0) != 0;
  int64_t n = xt.getDimSize(0), ch = xt.getDimSize(1);
  // Grid component c is spatial axis k - 1 - c (x is the last axis, W).
  SmallVector<int64_t> size, outShape{n}, outRow{n}, toChannelsLast{0};
  for (int64_t c = 0; c < k; ++c)
    size.push_back(xt.getDimSize(k + 1 - c));
  int64_t pixels = 1;
  for (int64_t d = 0; d < k; ++d) {
    outShape.push_back(gt.getDimSize(d + 1));
    if (isStatic)
      pixels *= xt.getDimSize(d + 2);
    toChannelsLast.push_back(d + 2);
  }
  toChannelsLast.push_back(1);
  outRow.append(outShape.begin() + 1, outShape.end());
  outRow.push_back(1);
  Ops o(node, xt.getElementType());
  auto &b = node.builder;
  auto i64 = b.getI64Type();
  // With symbolic sizes: the same shapes as polynomials, and each run-time
  // spatial size as a scalar for the formulas.
  std::optional<GridSizes> sym;
  if (!isStatic) {
    FailureOr<GridSizes> g = gridSizes(node, *xv, *gv, k);
    if (failed(g))
      return failure();
    sym = *g;
  }
  SmallVector<Axis> axes;
  for (int64_t c = 0; c < k; ++c) {
    axes.push_back(Axis{size[c], align, padding});
    if (axes.back().dynamic()) {
      FailureOr<Value> f =
          sizeAsTensor(node, sizeOf(node, *xv, k + 1 - c), xt.getElementType());
      if (failed(f))
        return failure();
      axes.back().sizeF = *f;
    }
  }

  // Rows of the input as [N * D1 * .. * Dk, C].
  Value rows = o.op<TransposeOp>(*xv, b.getDenseI64ArrayAttr(toChannelsLast));
  rows = isStatic ? o.reshape(rows, {n * pixels, ch})
                  : o.reshape(rows, ArrayRef<SymSize>(sym->rows));
  auto coord = [&](int64_t c) {
    SmallVector<int64_t> offsets(k + 2, 0), sizes(gt.getShape()),
        strides(k + 2, 1);
    offsets[k + 1] = c;
    sizes[k + 1] = 1;
    if (!isStatic)
      return o.reshape(
          sizedPart(node, *gv, SliceBounds{offsets, sizes, strides}),
          ArrayRef<SymSize>(sym->out));
    Value s = o.op<SliceOp>(*gv, b.getDenseI64ArrayAttr(offsets),
                            b.getDenseI64ArrayAttr(sizes),
                            b.getDenseI64ArrayAttr(strides));
    return o.reshape(s, outShape);
  };
  SmallVector<Value> g;
  for (int64_t c = 0; c < k; ++c)
    g.push_back(unnormalize(o, coord(c), axes[c]));
  // n * D1 * .. * Dk for each output position.
  Value imageBase = imageBases(o, *xv, k, pixels, sym ? &*sym : nullptr);
  // The sizes of the spatial axes below the outermost, as i64 scalars.
  auto scalarType = RankedTensorType::get({}, i64);
  SmallVector<Value> sizeC(k);
  for (int64_t c = 0; c + 1 < k; ++c) {
    if (axes[c].dynamic()) {
      FailureOr<Value> sc =
          sizeAsTensor(node, sizeOf(node, *xv, k + 1 - c), i64);
      if (failed(sc))
        return failure();
      sizeC[c] = *sc;
      continue;
    }
    sizeC[c] = ConstantOp::create(
        b, node.loc(), scalarType,
        DenseElementsAttr::get(scalarType, ArrayRef<int64_t>{size[c]}));
  }

  // Taps: integral positions (already padded, grid order) and weights.
  Value acc;
  auto addTap = [&](ArrayRef<Value> pos, Value weight) {
    if (padding == "zeros") {
      Value inside;
      for (int64_t c = 0; c < k; ++c) {
        Value r = axes[c].dynamic() ? o.inRange(pos[c], 0, axes[c].last(o))
                                    : o.inRange(pos[c], 0, size[c] - 1);
        inside = inside ? o.mul(inside, r) : r;
      }
      weight = o.mul(weight, inside);
    }
    SmallVector<Value> at;
    for (int64_t c = 0; c < k; ++c)
      at.push_back(o.op<CastOp>(axes[c].dynamic()
                                    ? o.clamp(pos[c], 0, axes[c].last(o))
                                    : o.clamp(pos[c], 0, size[c] - 1),
                                TypeAttr::get(i64)));
    // Row-major flat index, outermost axis first.
    Value idx = at[k - 1];
    for (int64_t c = k - 2; c >= 0; --c)
      idx = o.add(o.mul(idx, sizeC[c]), at[c]);
    idx = o.add(idx, imageBase);
    Value v = o.op<GatherOp>(rows, idx, b.getI64IntegerAttr(0)); // [N,O..,C]
    Value t =
        o.mul(v, isStatic ? o.reshape(weight, outRow)
                          : o.reshape(weight, ArrayRef<SymSize>(sym->outRow)));
    acc = acc ? o.add(acc, t) : t;
  };
  if (mode == "nearest") {
    SmallVector<Value> pos;
    for (int64_t c = 0; c < k; ++c)
      pos.push_back(applyPadding(o, g[c], axes[c]));
    Value one = o.add(o.mul(pos[0], o.c(0)), o.c(1));
    for (Value &p : pos)
      p = o.op<RoundOp>(p);
    addTap(pos, one);
  } else if (mode == "bilinear") {
    // 2^k corners; corner bit c picks the upper neighbour along component c.
    SmallVector<Value> x, lo, hi, t, s;
    for (int64_t c = 0; c < k; ++c)
      x.push_back(applyPadding(o, g[c], axes[c]));
    for (int64_t c = 0; c < k; ++c)
      lo.push_back(o.op<FloorOp>(x[c]));
    for (int64_t c = 0; c < k; ++c)
      t.push_back(o.sub(x[c], lo[c]));
    for (int64_t c = 0; c < k; ++c)
      hi.push_back(o.add(lo[c], o.c(1)));
    for (int64_t c = 0; c < k; ++c)
      s.push_back(o.sub(o.c(1), t[c]));
    for (int64_t corner = 0; corner < (int64_t(1) << k); ++corner) {
      SmallVector<Value> pos;
      Value weight;
      for (int64_t c = 0; c < k; ++c) {
        bool upper = (corner >> c) & 1;
        pos.push_back(upper ? hi[c] : lo[c]);
        Value w = upper ? t[c] : s[c];
        weight = weight ? o.mul(weight, w) : w;
      }
      addTap(pos, weight);
    }
  } else {
    // Bicubic (2-D) pads each tap, not the coordinate.
    Value x0 = o.op<FloorOp>(g[0]), y0 = o.op<FloorOp>(g[1]);
    SmallVector<Value> cx = cubicCoeffs(o, o.sub(g[0], x0)),
                       cy = cubicCoeffs(o, o.sub(g[1], y0));
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i) {
        Value tx = applyPadding(o, o.add(x0, o.c(i - 1)), axes[0]);
        Value ty = applyPadding(o, o.add(y0, o.c(j - 1)), axes[1]);
        addTap({tx, ty}, o.mul(cx[i], cy[j]));
      }
  }
  if (o.bad)
    return failure();
  // [N, O1..Ok, C] back to [N, C, O1..Ok].
  SmallVector<int64_t> toChannelsFirst{0, k + 1};
  for (int64_t d = 1; d <= k; ++d)
    toChannelsFirst.push_back(d);
  return one(
      build<TransposeOp>(node, acc, b.getDenseI64ArrayAttr(toChannelsFirst)));
}

namespace {
/// RoiAlign's run-time sizes: the boxes' count R, the image's height and
/// width as scalars of its element type and (W, H * W) as i64, and its rows
/// [N * H * W, C].
struct RoiSizes {
  SymSize r;
  Value hF, wF, wI, hwI;
  SmallVector<SymSize> rows;
};

LogicalResult roiSizes(OnnxNode &node, Value x, Value rois, RoiSizes &s) {
  Type elt = typeOf(x).getElementType(), i64 = node.builder.getI64Type();
  SymSize h = sizeOf(node, x, 2), w = sizeOf(node, x, 3);
  std::optional<SymSize> hw = SymSize::mul(h, w);
  std::optional<SymSize> all =
      hw ? SymSize::mul(sizeOf(node, x, 0), *hw) : std::nullopt;
  if (!all) {
    node.fail() << "cannot follow the sizes of " << x.getType()
                << "; give its dimensions one size";
    return failure();
  }
  s.r = sizeOf(node, rois, 0);
  s.rows = {*all, sizeOf(node, x, 1)};
  FailureOr<Value> hF = sizeAsTensor(node, h, elt),
                   wF = sizeAsTensor(node, w, elt),
                   wI = sizeAsTensor(node, w, i64),
                   hwI = sizeAsTensor(node, *hw, i64);
  if (failed(hF) || failed(wF) || failed(wI) || failed(hwI))
    return failure();
  s.hF = *hF, s.wF = *wF, s.wI = *wI, s.hwI = *hwI;
  return success();
}
} // namespace

/// RoiAlign (opset 10, 16): per box, `sampling_ratio`^2 bilinear samples per
/// output bin (ONNX's rules: samples beyond one pixel outside the input give
/// 0, others clamp to the edge), averaged or maxed.
FailureOr<SmallVector<Value>> mlir::kiln::convertRoiAlign(OnnxNode &node) {
  FailureOr<Value> xv = node.rankedInput(0), rv = node.rankedInput(1),
                   bv = node.rankedInput(2);
  if (failed(xv) || failed(rv) || failed(bv))
    return failure();
  RankedTensorType xt = typeOf(*xv), rt = typeOf(*rv);
  // Symbolic sizes: the boxes' count (what a detector's NMS leaves) and the
  // image's batch and size.
  FailureOr<bool> allStatic = staticSampling(node, xt, {rt, typeOf(*bv)});
  if (failed(allStatic))
    return failure();
  bool isStatic = *allStatic;
  if (xt.getRank() != 4 || rt.getRank() != 2 || rt.getDimSize(1) != 4 ||
      !isa<FloatType>(xt.getElementType()) || rt.getElementType() != xt.getElementType()) {
    node.fail() << "expects float X [N, C, H, W] and rois [R, 4] of the same "
                   "element type, got "
                << xt << " and " << rt;
    return failure();
  }
  int64_t ratio = node.intAttr("sampling_ratio", 0);
  if (ratio <= 0) {
    node.fail() << "sampling_ratio " << ratio
                << " (adaptive, depends on the run-time boxes) is not "
                   "supported; set a positive sampling_ratio";
    return failure();
  }
  std::string mode = node.strAttr("mode", "avg");
  // Opset 10 has no coordinate_transformation_mode and behaves as
  // output_half_pixel (no half-pixel shift).
  std::string ctm = node.strAttr("coordinate_transformation_mode",
                                 node.opset >= 16 ? "half_pixel" : "output_half_pixel");
  if ((mode != "avg" && mode != "max") ||
      (ctm != "half_pixel" && ctm != "output_half_pixel")) {
    node.fail() << "mode '" << mode << "' with coordinate_transformation_mode '"
                << ctm << "' is not supported";
    return failure();
  }
  int64_t oh = node.intAttr("output_height", 1), ow = node.intAttr("output_width", 1);
  double scale = node.floatAttr("spatial_scale", 1.0f);
  bool half = ctm == "half_pixel";
  int64_t n = xt.getDimSize(0), ch = xt.getDimSize(1), h = xt.getDimSize(2),
          w = xt.getDimSize(3), r = rt.getDimSize(0);
  Ops o(node, xt.getElementType());
  auto &b = node.builder;
  auto i64 = b.getI64Type();
  // Run-time sizes: R, the image's height and width (as scalars of the
  // element type, and as i64 for the row index) and its rows.
  RoiSizes sym;
  if (!isStatic && failed(roiSizes(node, *xv, *rv, sym)))
    return failure();
  auto rShape = [&](ArrayRef<int64_t> rest) {
    SmallVector<SymSize> sizes{sym.r};
    for (int64_t d : rest)
      sizes.push_back(SymSize::constant(d));
    return sizes;
  };

  Value rows = o.op<TransposeOp>(*xv, b.getDenseI64ArrayAttr({0, 2, 3, 1}));
  rows = isStatic ? o.reshape(rows, {n * h * w, ch})
                  : o.reshape(rows, ArrayRef<SymSize>(sym.rows));
  // Box coordinate k as [R, 1], scaled and shifted.
  auto box = [&](int64_t k) {
    Value s = isStatic
                  ? o.op<SliceOp>(*rv, b.getDenseI64ArrayAttr({0, k}),
                                  b.getDenseI64ArrayAttr({r, 1}),
                                  b.getDenseI64ArrayAttr({1, 1}))
                  : sizedPart(node, *rv, SliceBounds{{0, k}, {r, 1}, {1, 1}});
    return o.sub(o.mul(s, o.c(scale)), o.c(half ? 0.5 : 0.0));
  };
  Value x0 = box(0), y0 = box(1), x1 = box(2), y1 = box(3);
  Value bw = o.sub(x1, x0), bh = o.sub(y1, y0);
  if (!half) {
    bw = o.op<MaxOp>(bw, o.c(1));
    bh = o.op<MaxOp>(bh, o.c(1));
  }
  bw = o.div(bw, o.c(ow));
  bh = o.div(bh, o.c(oh));
  // Sample positions in bins: bin + (i + 0.5) / ratio, for every bin and i.
  auto offsets = [&](int64_t bins) {
    SmallVector<double> v;
    for (int64_t p = 0; p < bins; ++p)
      for (int64_t i = 0; i < ratio; ++i)
        v.push_back(p + (i + 0.5) / ratio);
    auto type = RankedTensorType::get({(int64_t)v.size()}, b.getF64Type());
    Value c = ConstantOp::create(b, node.loc(), type, DenseElementsAttr::get(type, ArrayRef(v)));
    return o.op<CastOp>(c, TypeAttr::get(o.elt));
  };
  int64_t sy = oh * ratio, sx = ow * ratio;
  Value ys = o.add(y0, o.mul(bh, offsets(oh)));
  ys = isStatic ? o.reshape(ys, {r, sy, 1})
                : o.reshape(ys, ArrayRef<SymSize>(rShape({sy, 1})));
  Value xs = o.add(x0, o.mul(bw, offsets(ow)));
  xs = isStatic ? o.reshape(xs, {r, 1, sx})
                : o.reshape(xs, ArrayRef<SymSize>(rShape({1, sx})));
  Value valid, yh, xh;
  if (isStatic) {
    valid = o.mul(o.inRange(ys, -1, h), o.inRange(xs, -1, w)); // [R,Sy,Sx]
    ys = o.clamp(ys, 0, h - 1);
    xs = o.clamp(xs, 0, w - 1);
  } else {
    valid = o.mul(o.inRange(ys, -1, sym.hF), o.inRange(xs, -1, sym.wF));
    ys = o.clamp(ys, 0, o.sub(sym.hF, o.c(1)));
    xs = o.clamp(xs, 0, o.sub(sym.wF, o.c(1)));
  }
  Value yl = o.op<FloorOp>(ys), xl = o.op<FloorOp>(xs);
  if (isStatic) {
    yh = o.op<MinOp>(o.add(yl, o.c(1)), o.c(h - 1));
    xh = o.op<MinOp>(o.add(xl, o.c(1)), o.c(w - 1));
  } else {
    yh = o.op<MinOp>(o.add(yl, o.c(1)), o.sub(sym.hF, o.c(1)));
    xh = o.op<MinOp>(o.add(xl, o.c(1)), o.sub(sym.wF, o.c(1)));
  }
  Value ly = o.sub(ys, yl), lx = o.sub(xs, xl);
  Value hy = o.sub(o.c(1), ly), hx = o.sub(o.c(1), lx);

  Value batch = o.op<CastOp>(*bv, TypeAttr::get(i64));
  auto hwType = RankedTensorType::get({}, i64);
  Value hw, wC;
  if (isStatic) {
    hw = ConstantOp::create(
        b, node.loc(), hwType,
        DenseElementsAttr::get(hwType, ArrayRef<int64_t>{h * w}));
    wC = ConstantOp::create(
        b, node.loc(), hwType,
        DenseElementsAttr::get(hwType, ArrayRef<int64_t>{w}));
  } else {
    hw = sym.hwI;
    wC = sym.wI;
  }
  Value base =
      isStatic ? o.reshape(o.mul(batch, hw), {r, 1, 1})
               : o.reshape(o.mul(batch, hw), ArrayRef<SymSize>(rShape({1, 1})));
  Value acc;
  auto tap = [&](Value yy, Value xx, Value weight) {
    Value cy = o.op<CastOp>(yy, TypeAttr::get(i64)), cx = o.op<CastOp>(xx, TypeAttr::get(i64));
    Value idx = o.add(o.add(o.mul(cy, wC), cx), base); // [R,Sy,Sx]
    Value g = o.op<GatherOp>(rows, idx, b.getI64IntegerAttr(0)); // [R,Sy,Sx,C]
    Value wv = o.mul(weight, valid);
    wv = isStatic ? o.reshape(wv, {r, sy, sx, 1})
                  : o.reshape(wv, ArrayRef<SymSize>(rShape({sy, sx, 1})));
    Value t = o.mul(g, wv);
    acc = !acc ? t : mode == "avg" ? o.add(acc, t) : o.op<MaxOp>(acc, t);
  };
  tap(yl, xl, o.mul(hy, hx));
  tap(yl, xh, o.mul(hy, lx));
  tap(yh, xl, o.mul(ly, hx));
  tap(yh, xh, o.mul(ly, lx));
  Value bins = isStatic ? o.reshape(acc, {r, oh, ratio, ow, ratio, ch})
                        : o.reshape(acc, ArrayRef<SymSize>(rShape(
                                             {oh, ratio, ow, ratio, ch})));
  auto axes = b.getDenseI64ArrayAttr({2, 4});
  Value pooled = mode == "avg"
                     ? o.div(o.op<ReduceSumOp>(bins, axes, b.getBoolAttr(false)),
                             o.c(ratio * ratio))
                     : o.op<ReduceMaxOp>(bins, axes, b.getBoolAttr(false));
  if (o.bad)
    return failure();
  return one(build<TransposeOp>(node, pooled, b.getDenseI64ArrayAttr({0, 3, 1, 2})));
}

/// AffineGrid 20: for theta [N, 2, 3] (or [N, 3, 4]) and size [N, C, H, W]
/// (or [N, C, D, H, W]), the grid [N, H, W, 2] (or [N, D, H, W, 3]) of
/// theta times each output position's normalized (x, y[, z], 1). The
/// positions are a compile-time constant [H * W, 3] matrix, so the grid is one
/// broadcast matmul. A run-time size is guarded to give the declared shape.
FailureOr<SmallVector<Value>> mlir::kiln::convertAffineGrid(OnnxNode &node) {
  // A batch of run-time size (a spatial transformer's `affine_grid(theta,
  // x.size())` at any batch): the size's entries as the shape arithmetic
  // knows them, the grid's own sizes constant.
  FailureOr<Value> theta = sizedInput(node, 0);
  if (succeeded(theta))
    theta = elementwiseFloatInput(node, 0);
  if (failed(theta))
    return failure();
  ArrayRef<int64_t> ts = typeOf(*theta).getShape();
  if (ts.size() != 3 ||
      !((ts[1] == 2 && ts[2] == 3) || (ts[1] == 3 && ts[2] == 4))) {
    node.fail() << "theta must be [N, 2, 3] or [N, 3, 4], got "
                << typeOf(*theta);
    return failure();
  }
  int64_t spatial = ts[1];
  SmallVector<int64_t> dims; // D, H, W or H, W
  if (ShapedType::isDynamic(ts[0])) {
    std::optional<SmallVector<SymSize>> size =
        node.sizes->contents(node.input(1));
    if (!size || (int64_t)size->size() != spatial + 2 ||
        llvm::any_of(ArrayRef<SymSize>(*size).drop_front(2),
                     [](const SymSize &d) { return !d.getConstant(); })) {
      node.fail() << "with theta " << typeOf(*theta)
                  << " of run-time batch, size must be [N, C, "
                  << (spatial == 2 ? "H, W" : "D, H, W")
                  << "] with constant spatial sizes computed at compile time "
                     "(Shape of the image is fine)";
      return failure();
    }
    if (failed(guardSizesEqual(node, (*size)[0], sizeOf(node, *theta, 0),
                               "size's batch must be theta's")))
      return failure();
    for (const SymSize &d : ArrayRef<SymSize>(*size).drop_front(2))
      dims.push_back(*d.getConstant());
  } else if (std::optional<SmallVector<int64_t>> size = node.constantInts(1)) {
    if ((int64_t)size->size() != spatial + 2 || (*size)[0] != ts[0]) {
      node.fail() << "size must be [N, C, "
                  << (spatial == 2 ? "H, W" : "D, H, W")
                  << "] with N = " << ts[0];
      return failure();
    }
    dims.assign(size->begin() + 2, size->end());
  } else {
    FailureOr<RankedTensorType> declared = declaredResult(node, 0, "size");
    if (failed(declared))
      return failure();
    if (declared->getRank() != spatial + 2 ||
        declared->getDimSize(spatial + 1) != spatial) {
      node.fail() << "the declared output " << *declared
                  << " is not a grid for theta " << typeOf(*theta);
      return failure();
    }
    dims.assign(declared->getShape().begin() + 1,
                declared->getShape().end() - 1);
    auto st = dyn_cast<RankedTensorType>(node.input(1).getType());
    if (!st || !st.hasStaticShape() || st.getNumElements() != spatial + 2) {
      node.fail() << "size must have " << spatial + 2 << " elements";
      return failure();
    }
    IndexMath m{node};
    Value ok = m.eq(m.at(1, 0), m.c(ts[0]));
    std::string want = "[" + std::to_string(ts[0]) + ", any";
    for (auto [i, d] : llvm::enumerate(dims)) {
      ok = m.land(ok, m.eq(m.at(1, i + 2), m.c(d)));
      want += ", " + std::to_string(d);
    }
    if (!m.ok)
      return failure();
    guardInput(node, ok, 1,
               "must be " + want +
                   "]: the grid size this model was compiled for");
  }
  if (llvm::any_of(dims, [](int64_t d) { return d <= 0; })) {
    node.fail() << "size must be positive";
    return failure();
  }
  bool alignCorners = node.intAttr("align_corners", 0) != 0;
  auto coord = [&](int64_t i, int64_t n) -> float {
    if (alignCorners)
      return n == 1 ? -1.0f : (float)(-1.0 + 2.0 * i / (n - 1));
    return (float)((2.0 * i + 1.0) / n - 1.0);
  };
  // Row p of the positions: (x, y[, z], 1), x along the last dimension.
  int64_t count = 1;
  for (int64_t d : dims)
    count *= d;
  SmallVector<float> base;
  base.reserve(count * (spatial + 1));
  for (int64_t p = 0; p < count; ++p) {
    SmallVector<int64_t> at(spatial);
    for (int64_t k = spatial - 1, r = p; k >= 0; --k) {
      at[k] = r % dims[k];
      r /= dims[k];
    }
    for (int64_t k = spatial - 1; k >= 0; --k)
      base.push_back(coord(at[k], dims[k]));
    base.push_back(1.0f);
  }
  Value positions = constF32(node, base, {count, spatial + 1});
  Type elt = elementOf(*theta);
  FailureOr<Value> pos = castTo(node, positions, elt);
  FailureOr<Value> thetaT = transposeBy(node, *theta, {0, 2, 1}), grid;
  if (failed(pos) || failed(thetaT) ||
      failed(grid = build<MatMulOp>(node, *pos, *thetaT)))
    return failure();
  SmallVector<int64_t> shape = {ts[0]};
  llvm::append_range(shape, dims);
  shape.push_back(spatial);
  if (ShapedType::isDynamic(ts[0])) {
    SmallVector<SymSize> sizes{sizeOf(node, *theta, 0)};
    for (int64_t d : ArrayRef<int64_t>(shape).drop_front())
      sizes.push_back(SymSize::constant(d));
    return one(reshapeToSizes(node, *grid, sizes));
  }
  return one(reshapeTo(node, *grid, shape));
}

namespace {
/// DeformConv's attributes and sizes, checked against its inputs.
struct DeformShape {
  int64_t n, c, h, w, oc, cg, kh, kw, oh, ow, group, og;
  SmallVector<int64_t> strides, dilations, pads;
};

FailureOr<DeformShape> deformShape(OnnxNode &node, RankedTensorType xt,
                                   RankedTensorType wt, RankedTensorType ot) {
  if (xt.getRank() != 4 || wt.getRank() != 4 || ot.getRank() != 4) {
    node.fail() << "only 2-D deformable convolution is supported: expects X "
                   "[N, C, H, W], W [oC, C/group, kH, kW] and offset [N, "
                   "offset_group * kH * kW * 2, oH, oW], got "
                << xt << ", " << wt << " and " << ot;
    return failure();
  }
  DeformShape s;
  s.n = xt.getDimSize(0), s.c = xt.getDimSize(1), s.h = xt.getDimSize(2),
  s.w = xt.getDimSize(3), s.oc = wt.getDimSize(0), s.cg = wt.getDimSize(1),
  s.kh = wt.getDimSize(2), s.kw = wt.getDimSize(3), s.oh = ot.getDimSize(2),
  s.ow = ot.getDimSize(3);
  s.group = node.intAttr("group", 1);
  s.og = node.intAttr("offset_group", 1);
  auto list = [&](StringRef name, int64_t dflt, size_t k) {
    return node.intsAttr(name).value_or(SmallVector<int64_t>(k, dflt));
  };
  s.strides = list("strides", 1, 2);
  s.dilations = list("dilations", 1, 2);
  s.pads = list("pads", 0, 4);
  std::optional<SmallVector<int64_t>> kernel = node.intsAttr("kernel_shape");
  bool ok = s.strides.size() == 2 && s.dilations.size() == 2 &&
            s.pads.size() == 4 && s.group >= 1 && s.og >= 1 &&
            s.c == s.cg * s.group && s.oc % s.group == 0 && s.c % s.og == 0 &&
            ot.getDimSize(0) == s.n &&
            ot.getDimSize(1) == s.og * s.kh * s.kw * 2 &&
            (!kernel || *kernel == SmallVector<int64_t>{s.kh, s.kw});
  for (int64_t d = 0; ok && d < 2; ++d) {
    int64_t in = d ? s.w : s.h, k = d ? s.kw : s.kh;
    int64_t span = (k - 1) * s.dilations[d] + 1;
    ok = s.strides[d] >= 1 && s.dilations[d] >= 1 && s.pads[d] >= 0 &&
         s.pads[2 + d] >= 0 && in + s.pads[d] + s.pads[2 + d] >= span &&
         (in + s.pads[d] + s.pads[2 + d] - span) / s.strides[d] + 1 ==
             (d ? s.ow : s.oh);
  }
  if (!ok) {
    node.fail() << "the shapes of X " << xt << ", W " << wt << " and offset "
                << ot << " do not agree with group " << s.group
                << ", offset_group " << s.og
                << ", kernel_shape, strides, dilations and pads (offset must "
                   "be [N, offset_group * kH * kW * 2, oH, oW] with the "
                   "convolution's output size)";
    return failure();
  }
  return s;
}
} // namespace

/// DeformConv 19, 22 (2-D): each kernel tap of each output position samples
/// X bilinearly at its regular position plus its run-time offset (of its
/// channels' offset group), with zeros outside X (GridSample's corner
/// rule, align_corners), times the mask; the samples, [N * oH * oW, C * K]
/// as im2col would lay them out, meet the weights in one product per group.
FailureOr<SmallVector<Value>> mlir::kiln::convertDeformConv(OnnxNode &node) {
  FailureOr<Value> xv = node.staticInput(0), wv = node.staticInput(1),
                   ov = node.staticInput(2);
  if (failed(xv) || failed(wv) || failed(ov))
    return failure();
  RankedTensorType xt = typeOf(*xv), wt = typeOf(*wv), ot = typeOf(*ov);
  Type elt = xt.getElementType();
  Value bias = node.input(3), mask = node.input(4);
  for (Value v : {*wv, *ov, bias, mask})
    if (v && (!isa<FloatType>(elt) || typeOf(v).getElementType() != elt)) {
      node.fail() << "expects float X, W, offset, B and mask of one element "
                     "type, got "
                  << xt << " and " << v.getType();
      return failure();
    }
  FailureOr<DeformShape> shape = deformShape(node, xt, wt, ot);
  if (failed(shape))
    return failure();
  const DeformShape &s = *shape;
  int64_t k = s.kh * s.kw, cpo = s.c / s.og;
  if (mask &&
      typeOf(mask).getShape() != ArrayRef<int64_t>{s.n, s.og * k, s.oh, s.ow}) {
    node.fail() << "mask " << mask.getType() << " must be [" << s.n << ", "
                << s.og * k << ", " << s.oh << ", " << s.ow << "]";
    return failure();
  }
  if (bias && typeOf(bias).getShape() != ArrayRef<int64_t>{s.oc}) {
    node.fail() << "B " << bias.getType() << " must be [" << s.oc << "]";
    return failure();
  }
  Ops o(node, elt);
  auto &b = node.builder;
  auto i64 = b.getI64Type();
  auto arr = [&](ArrayRef<int64_t> v) { return b.getDenseI64ArrayAttr(v); };
  // Regular tap positions [K, oH, oW] (as elt) and each image's first row.
  SmallVector<int64_t> baseY, baseX, image;
  for (int64_t i = 0; i < s.kh; ++i)
    for (int64_t j = 0; j < s.kw; ++j)
      for (int64_t y = 0; y < s.oh; ++y)
        for (int64_t x = 0; x < s.ow; ++x) {
          baseY.push_back(y * s.strides[0] - s.pads[0] + i * s.dilations[0]);
          baseX.push_back(x * s.strides[1] - s.pads[1] + j * s.dilations[1]);
        }
  for (int64_t i = 0; i < s.n; ++i)
    image.push_back(i * s.h * s.w);
  auto asElt = [&](ArrayRef<int64_t> v, ArrayRef<int64_t> dims) {
    return o.op<CastOp>(constI64(node, v, dims), TypeAttr::get(elt));
  };
  Value posY = asElt(baseY, {k, s.oh, s.ow}),
        posX = asElt(baseX, {k, s.oh, s.ow});
  Value imageBase = constI64(node, image, {s.n, 1, 1, 1});
  Value widthC = constI64(node, {s.w}, {});
  Value offsets = o.reshape(*ov, {s.n, s.og, k, 2, s.oh, s.ow});
  Value masks = mask ? o.reshape(mask, {s.n, s.og, k, s.oh, s.ow}) : Value();

  SmallVector<Value> perGroup;
  for (int64_t g = 0; g < s.og; ++g) {
    auto part = [&](Value v, ArrayRef<int64_t> at, ArrayRef<int64_t> size) {
      SmallVector<int64_t> ones(at.size(), 1);
      return o.op<SliceOp>(v, arr(at), arr(size), arr(ones));
    };
    auto offsetOf = [&](int64_t d) {
      return o.reshape(
          part(offsets, {0, g, 0, d, 0, 0}, {s.n, 1, k, 1, s.oh, s.ow}),
          {s.n, k, s.oh, s.ow});
    };
    Value y = o.add(offsetOf(0), posY), x = o.add(offsetOf(1), posX);
    // This group's channels as rows [N * H * W, C / offset_group].
    Value channels = part(*xv, {0, g * cpo, 0, 0}, {s.n, cpo, s.h, s.w});
    Value rows = o.reshape(o.op<TransposeOp>(channels, arr({0, 2, 3, 1})),
                           {s.n * s.h * s.w, cpo});
    Value y0 = o.op<FloorOp>(y), x0 = o.op<FloorOp>(x);
    Value ty = o.sub(y, y0), tx = o.sub(x, x0);
    Value sy = o.sub(o.c(1), ty), sx = o.sub(o.c(1), tx);
    Value y1 = o.add(y0, o.c(1)), x1 = o.add(x0, o.c(1));
    Value acc;
    auto tap = [&](Value iy, Value ix, Value weight) {
      weight = o.mul(
          weight, o.mul(o.inRange(iy, 0, s.h - 1), o.inRange(ix, 0, s.w - 1)));
      Value cy = o.op<CastOp>(o.clamp(iy, 0, s.h - 1), TypeAttr::get(i64));
      Value cx = o.op<CastOp>(o.clamp(ix, 0, s.w - 1), TypeAttr::get(i64));
      Value idx = o.add(o.add(o.mul(cy, widthC), cx), imageBase);
      Value picked = o.op<GatherOp>(rows, idx, b.getI64IntegerAttr(0));
      Value t = o.mul(picked, o.reshape(weight, {s.n, k, s.oh, s.ow, 1}));
      acc = acc ? o.add(acc, t) : t;
    };
    tap(y0, x0, o.mul(sy, sx));
    tap(y0, x1, o.mul(sy, tx));
    tap(y1, x0, o.mul(ty, sx));
    tap(y1, x1, o.mul(ty, tx));
    if (masks)
      acc = o.mul(
          acc, o.reshape(part(masks, {0, g, 0, 0, 0}, {s.n, 1, k, s.oh, s.ow}),
                         {s.n, k, s.oh, s.ow, 1}));
    perGroup.push_back(acc); // [N, K, oH, oW, C / offset_group]
  }
  Value samples = perGroup.size() == 1 ? perGroup[0]
                                       : o.op<ConcatOp>(ValueRange(perGroup),
                                                        b.getI64IntegerAttr(4));
  // im2col order: rows (n, y, x), columns (c, kernel tap).
  Value cols = o.reshape(o.op<TransposeOp>(samples, arr({0, 2, 3, 4, 1})),
                         {s.n * s.oh * s.ow, s.c * k});
  int64_t ocg = s.oc / s.group, rowsOut = s.n * s.oh * s.ow;
  Value weights = o.reshape(*wv, {s.oc, s.cg * k});
  SmallVector<Value> outs;
  for (int64_t g = 0; g < s.group; ++g) {
    Value lhs = s.group == 1
                    ? cols
                    : o.op<SliceOp>(cols, arr({0, g * s.cg * k}),
                                    arr({rowsOut, s.cg * k}), arr({1, 1}));
    Value wg = s.group == 1 ? weights
                            : o.op<SliceOp>(weights, arr({g * ocg, 0}),
                                            arr({ocg, s.cg * k}), arr({1, 1}));
    outs.push_back(o.op<MatMulOp>(lhs, o.op<TransposeOp>(wg, arr({1, 0}))));
  }
  Value y = outs.size() == 1
                ? outs[0]
                : o.op<ConcatOp>(ValueRange(outs), b.getI64IntegerAttr(1));
  if (bias)
    y = o.add(y, bias);
  y = o.reshape(y, {s.n, s.oh, s.ow, s.oc});
  if (o.bad)
    return failure();
  return one(build<TransposeOp>(node, y, arr({0, 3, 1, 2})));
}
