//===- GridSample.cpp - ONNX GridSample -------------------------*- C++ -*-===//
//
// GridSample (opset 16, 2-D) from existing kiln ops. The grid is data, so
// source positions are computed at run time: unnormalized coordinates, the
// padding mode (border clamps, reflection folds), then for each tap (1
// nearest, 4 bilinear, 16 bicubic) a flat row index into the input viewed as
// [N * H * W, C] (one gather picks C values per output position) and a
// weight that is zero for taps outside the input with zeros padding. The
// result is gathered in [N, Ho, Wo, C] and transposed back to NCHW.
//
//===----------------------------------------------------------------------===//
#include "Build.h"
#include "NNParts.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

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
    auto type = RankedTensorType::get({}, elt);
    APFloat f(v);
    bool lost;
    f.convert(cast<FloatType>(elt).getFloatSemantics(),
              APFloat::rmNearestTiesToEven, &lost);
    return ConstantOp::create(node.builder, node.loc(), type,
                              DenseElementsAttr::get(type, f));
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
  /// 1 where lo <= a <= hi, else 0 (float ops only).
  Value inRange(Value a, double lo, double hi) {
    Value outside = op<MinOp>(op<CeilOp>(op<AbsOp>(sub(a, clamp(a, lo, hi)))), c(1));
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
};

struct Axis {
  int64_t size;
  bool alignCorners;
  std::string padding;
};

/// Grid value in [-1, 1] -> input coordinate.
Value unnormalize(Ops &o, Value g, const Axis &a) {
  if (a.alignCorners)
    return o.mul(o.add(g, o.c(1)), o.c((a.size - 1) / 2.0));
  return o.div(o.sub(o.mul(o.add(g, o.c(1)), o.c(a.size)), o.c(1)), o.c(2));
}

/// Border and reflection padding move a coordinate into the input.
Value applyPadding(Ops &o, Value x, const Axis &a) {
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

FailureOr<SmallVector<Value>> gridSample(OnnxNode &node) {
  FailureOr<Value> xv = node.rankedInput(0), gv = node.rankedInput(1);
  if (failed(xv) || failed(gv))
    return failure();
  RankedTensorType xt = typeOf(*xv), gt = typeOf(*gv);
  if (failed(node.requireStaticShape(xt)) || failed(node.requireStaticShape(gt)))
    return failure();
  if (xt.getRank() != 4 || gt.getRank() != 4 || gt.getDimSize(3) != 2 ||
      gt.getDimSize(0) != xt.getDimSize(0)) {
    node.fail() << "only 2-D sampling is supported: expects X [N, C, H, W] and "
                   "grid [N, Ho, Wo, 2], got "
                << xt << " and " << gt;
    return failure();
  }
  if (!isa<FloatType>(xt.getElementType()) || gt.getElementType() != xt.getElementType()) {
    node.fail() << "expects float X and grid of one element type, got " << xt
                << " and " << gt;
    return failure();
  }
  std::string mode = node.strAttr("mode", "bilinear"),
              padding = node.strAttr("padding_mode", "zeros");
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") {
    node.fail() << "mode '" << mode << "' is not supported";
    return failure();
  }
  if (padding != "zeros" && padding != "border" && padding != "reflection") {
    node.fail() << "padding_mode '" << padding << "' is not supported";
    return failure();
  }
  bool align = node.intAttr("align_corners", 0) != 0;
  int64_t n = xt.getDimSize(0), ch = xt.getDimSize(1), h = xt.getDimSize(2),
          w = xt.getDimSize(3), ho = gt.getDimSize(1), wo = gt.getDimSize(2);
  Axis ax{w, align, padding}, ay{h, align, padding};
  Ops o(node, xt.getElementType());
  auto &b = node.builder;

  // Rows of the input as [N * H * W, C].
  Value rows = o.reshape(o.op<TransposeOp>(*xv, b.getDenseI64ArrayAttr({0, 2, 3, 1})),
                         {n * h * w, ch});
  auto coord = [&](int64_t k) {
    Value s = o.op<SliceOp>(*gv, b.getDenseI64ArrayAttr({0, 0, 0, k}),
                            b.getDenseI64ArrayAttr({n, ho, wo, 1}),
                            b.getDenseI64ArrayAttr({1, 1, 1, 1}));
    return o.reshape(s, {n, ho, wo});
  };
  Value gx = unnormalize(o, coord(0), ax), gy = unnormalize(o, coord(1), ay);
  // n * H * W for each output position.
  auto i64 = b.getI64Type();
  auto baseType = RankedTensorType::get({n, 1, 1}, i64);
  SmallVector<int64_t> base;
  for (int64_t i = 0; i < n; ++i)
    base.push_back(i * h * w);
  Value imageBase = ConstantOp::create(b, node.loc(), baseType,
                                       DenseElementsAttr::get(baseType, ArrayRef(base)));
  auto widthType = RankedTensorType::get({}, i64);
  Value widthC = ConstantOp::create(b, node.loc(), widthType,
                                    DenseElementsAttr::get(widthType, ArrayRef<int64_t>{w}));

  // Taps: integral positions (already padded) and weights.
  Value acc;
  auto addTap = [&](Value ix, Value iy, Value weight) {
    if (padding == "zeros")
      weight = o.mul(weight, o.mul(o.inRange(ix, 0, w - 1), o.inRange(iy, 0, h - 1)));
    Value cx = o.op<CastOp>(o.clamp(ix, 0, w - 1), TypeAttr::get(i64));
    Value cy = o.op<CastOp>(o.clamp(iy, 0, h - 1), TypeAttr::get(i64));
    Value idx = o.add(o.add(o.mul(cy, widthC), cx), imageBase);
    Value g = o.op<GatherOp>(rows, idx, b.getI64IntegerAttr(0)); // [N,Ho,Wo,C]
    Value t = o.mul(g, o.reshape(weight, {n, ho, wo, 1}));
    acc = acc ? o.add(acc, t) : t;
  };
  if (mode == "nearest") {
    Value x = applyPadding(o, gx, ax), y = applyPadding(o, gy, ay);
    Value one = o.add(o.mul(x, o.c(0)), o.c(1));
    addTap(o.op<RoundOp>(x), o.op<RoundOp>(y), one);
  } else if (mode == "bilinear") {
    Value x = applyPadding(o, gx, ax), y = applyPadding(o, gy, ay);
    Value x0 = o.op<FloorOp>(x), y0 = o.op<FloorOp>(y);
    Value tx = o.sub(x, x0), ty = o.sub(y, y0);
    Value x1 = o.add(x0, o.c(1)), y1 = o.add(y0, o.c(1));
    Value sx = o.sub(o.c(1), tx), sy = o.sub(o.c(1), ty);
    addTap(x0, y0, o.mul(sx, sy));
    addTap(x1, y0, o.mul(tx, sy));
    addTap(x0, y1, o.mul(sx, ty));
    addTap(x1, y1, o.mul(tx, ty));
  } else {
    // Bicubic pads each tap, not the coordinate.
    Value x0 = o.op<FloorOp>(gx), y0 = o.op<FloorOp>(gy);
    SmallVector<Value> cx = cubicCoeffs(o, o.sub(gx, x0)),
                       cy = cubicCoeffs(o, o.sub(gy, y0));
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i) {
        Value tx = applyPadding(o, o.add(x0, o.c(i - 1)), ax);
        Value ty = applyPadding(o, o.add(y0, o.c(j - 1)), ay);
        addTap(tx, ty, o.mul(cx[i], cy[j]));
      }
  }
  if (o.bad)
    return failure();
  return one(build<TransposeOp>(node, acc, b.getDenseI64ArrayAttr({0, 3, 1, 2})));
}
} // namespace

void mlir::kiln::populateGridSampleConversions(std::vector<OnnxConversion> &t) {
  t.push_back({"GridSample", 16, gridSample});
}
