//===- Resize.cpp - ONNX Resize and Upsample --------------------*- C++ -*-===//
//
// Resize is separable: each resized axis is one pass that gathers 1, 2 or 4
// source slices along the axis (nearest, linear, cubic) and blends them with
// per-position weights. Source positions and weights are tables over the
// output positions of the axis. With constant scales/sizes/roi the tables are
// computed here and become constants; when scales or roi are fed at run time
// (and the output shape is declared static) the same formulas are emitted as
// kiln ops on small f64 vectors, so the numbers follow the run-time values.
//
// The formulas follow ONNX's reference implementation (onnx 1.12), including
// its use of `scale * input_size` (not the rounded output size) as the output
// length in align_corners, pytorch_half_pixel and tf_crop_and_resize.
//
// Opset 18/19 additions: `axes` (scales, sizes and roi list only those axes),
// `keep_aspect_ratio_policy` (one scale for every listed axis, the output
// length rounded half up), `half_pixel_symmetric`, and `antialias`: when a
// linear or cubic axis shrinks, its filter is stretched by 1/scale, so each
// output blends every source position under the stretched filter (2 - 2 *
// (floor(-support / scale) + 1) taps, normalized), computed here per output
// position from constant scales.
//
//===----------------------------------------------------------------------===//
#include "Build.h"
#include "SymbolicSizes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// A vector over the output positions of one axis, or a scalar (size 1) that
/// broadcasts: compile-time doubles, or a run-time f64 tensor.
struct Table {
  SmallVector<double> cst;
  Value run;
  bool isConst() const { return !run; }
};

/// Arithmetic on tables: folded here when every operand is constant, kiln ops
/// otherwise. A failed build is remembered in `bad` (checked once at the end)
/// so that the formulas read as formulas.
class Tables {
public:
  explicit Tables(OnnxNode &node) : node(node) {}
  OnnxNode &node;
  bool bad = false;

  static Table cst(ArrayRef<double> v) { return {SmallVector<double>(v), {}}; }
  static Table scalar(double v) { return cst({v}); }
  static Table iota(int64_t n) {
    Table t;
    for (int64_t i = 0; i < n; ++i)
      t.cst.push_back(i);
    return t;
  }
  Table wrap(FailureOr<Value> v) {
    if (failed(v)) {
      bad = true;
      return scalar(0);
    }
    return {{}, *v};
  }

  Value materialize(const Table &t) {
    if (t.run)
      return t.run;
    auto type = RankedTensorType::get({(int64_t)t.cst.size()},
                                      node.builder.getF64Type());
    return ConstantOp::create(node.builder, node.loc(), type,
                              DenseElementsAttr::get(type, ArrayRef(t.cst)));
  }

  template <typename OpTy>
  Table binary(const Table &a, const Table &b, double (*fn)(double, double)) {
    if (a.isConst() && b.isConst()) {
      size_t n = std::max(a.cst.size(), b.cst.size());
      Table r;
      for (size_t i = 0; i < n; ++i)
        r.cst.push_back(fn(a.cst[a.cst.size() == 1 ? 0 : i],
                           b.cst[b.cst.size() == 1 ? 0 : i]));
      return r;
    }
    return wrap(build<OpTy>(node, materialize(a), materialize(b)));
  }
  template <typename OpTy>
  Table unary(const Table &a, double (*fn)(double)) {
    if (a.isConst()) {
      Table r;
      for (double v : a.cst)
        r.cst.push_back(fn(v));
      return r;
    }
    return wrap(build<OpTy>(node, a.run));
  }

  Table add(const Table &a, const Table &b) {
    return binary<AddOp>(a, b, [](double x, double y) { return x + y; });
  }
  Table sub(const Table &a, const Table &b) {
    return binary<SubOp>(a, b, [](double x, double y) { return x - y; });
  }
  Table mul(const Table &a, const Table &b) {
    return binary<MulOp>(a, b, [](double x, double y) { return x * y; });
  }
  Table div(const Table &a, const Table &b) {
    return binary<DivOp>(a, b, [](double x, double y) { return x / y; });
  }
  Table min(const Table &a, const Table &b) {
    return binary<MinOp>(a, b, [](double x, double y) { return std::min(x, y); });
  }
  Table max(const Table &a, const Table &b) {
    return binary<MaxOp>(a, b, [](double x, double y) { return std::max(x, y); });
  }
  Table floor(const Table &a) {
    return unary<FloorOp>(a, [](double x) { return std::floor(x); });
  }
  Table ceil(const Table &a) {
    return unary<CeilOp>(a, [](double x) { return std::ceil(x); });
  }
  Table abs(const Table &a) {
    return unary<AbsOp>(a, [](double x) { return std::fabs(x); });
  }
  Table clamp(const Table &a, double lo, double hi) {
    return min(max(a, scalar(lo)), scalar(hi));
  }
  Table clamp(const Table &a, double lo, const Table &hi) {
    return min(max(a, scalar(lo)), hi);
  }
  /// 1 where lo <= a <= hi, else 0 (from float ops only: bool tensors are not
  /// stored by the code generator yet).
  Table inRange(const Table &a, double lo, double hi) {
    return inRange(a, lo, scalar(hi));
  }
  Table inRange(const Table &a, double lo, const Table &hi) {
    Table outside = min(ceil(abs(sub(a, clamp(a, lo, hi)))), scalar(1));
    return sub(scalar(1), outside);
  }

  /// The table as an i64 index vector (its values are integral).
  FailureOr<Value> indices(const Table &t) {
    if (t.isConst()) {
      SmallVector<int64_t> v;
      for (double x : t.cst)
        v.push_back((int64_t)std::llround(x));
      auto type = RankedTensorType::get({(int64_t)v.size()},
                                        node.builder.getI64Type());
      return ConstantOp::create(node.builder, node.loc(), type,
                                DenseElementsAttr::get(type, ArrayRef(v)))
          .getResult();
    }
    return build<CastOp>(node, t.run, TypeAttr::get(node.builder.getI64Type()));
  }

  /// The table as `elt` weights of shape [n, 1 x trailing], which broadcast
  /// along the resized axis of a tensor with `trailing` dimensions after it.
  FailureOr<Value> weights(const Table &t, Type elt, int64_t trailing) {
    SmallVector<int64_t> shape(trailing + 1, 1);
    if (t.isConst()) {
      shape[0] = t.cst.size();
      auto type = RankedTensorType::get(shape, elt);
      SmallVector<APFloat> v;
      for (double x : t.cst) {
        APFloat f(x);
        bool lost;
        f.convert(cast<FloatType>(elt).getFloatSemantics(),
                  APFloat::rmNearestTiesToEven, &lost);
        v.push_back(f);
      }
      return ConstantOp::create(node.builder, node.loc(), type,
                                DenseElementsAttr::get(type, v))
          .getResult();
    }
    shape[0] = typeOf(t.run).getDimSize(0);
    FailureOr<Value> c = build<CastOp>(node, t.run, TypeAttr::get(elt));
    if (failed(c))
      return failure();
    return reshapeTo(node, *c, shape);
  }

  /// Element `i` of a run-time 1-D tensor as a scalar table.
  Table element(Value v, int64_t i) {
    auto idxType = RankedTensorType::get({1}, node.builder.getI64Type());
    Value idx = ConstantOp::create(node.builder, node.loc(), idxType,
                                   DenseElementsAttr::get(idxType, ArrayRef(i)));
    FailureOr<Value> g =
        build<GatherOp>(node, v, idx, node.builder.getI64IntegerAttr(0));
    if (failed(g))
      return wrap(failure());
    return wrap(build<CastOp>(node, *g, TypeAttr::get(node.builder.getF64Type())));
  }
};

/// An input that is either a compile-time list of numbers or a run-time 1-D
/// tensor; `present` is false for an omitted or empty input.
struct ParamInput {
  bool present = false;
  std::optional<SmallVector<double>> values;
  Value run;
};

ParamInput readParam(OnnxNode &node, int idx) {
  ParamInput p;
  Value v = idx < 0 ? Value() : node.input(idx);
  if (!v)
    return p;
  if (std::optional<DenseElementsAttr> c = node.constantInput(idx)) {
    if (c->getNumElements() == 0)
      return p;
    p.present = true;
    p.values.emplace();
    if (isa<FloatType>(c->getElementType()))
      for (const APFloat &f : c->getValues<APFloat>())
        p.values->push_back(f.convertToDouble());
    else
      for (const APInt &i : c->getValues<APInt>())
        p.values->push_back((double)i.getSExtValue());
    return p;
  }
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (t && t.hasStaticShape() && t.getNumElements() == 0)
    return p;
  p.present = true;
  p.run = v;
  return p;
}

struct ResizeAttrs {
  std::string mode, ctm, nearestMode;
  double cubicA = -0.75, extrapolation = 0.0;
  bool excludeOutside = false, antialias = false;
};

/// Antialiased taps of one shrinking axis: for every output position the
/// linear or cubic filter stretched by 1/scale over the source positions
/// around it, normalized, as ONNX's reference computes them. The tap count
/// follows from `minScale`, the smallest scale the axis may have (the scale
/// itself when constant): taps a larger scale does not reach weigh 0.
/// Positions outside the axis clamp to its edge, or drop out with
/// exclude_outside.
void antialiasTaps(Tables &T, const Table &xo, const Table &scale,
                   double minScale, int64_t in, const ResizeAttrs &a,
                   std::vector<std::pair<Table, std::optional<Table>>> &taps) {
  bool cubic = a.mode == "cubic";
  double support = cubic ? 2.0 : 1.0, A = a.cubicA;
  int64_t start = (int64_t)std::floor(-support / minScale) + 1;
  int64_t n = 2 - 2 * start;
  Table s = T.min(scale, Tables::scalar(1));
  // The tap at offset 0 is the source position at or left of x, left of it
  // when x is a whole number: the reference's `ratio` lies in (0, 1].
  Table base = T.floor(xo), ratio = T.sub(xo, base);
  Table whole = T.inRange(ratio, 0, 0);
  ratio = T.add(ratio, whole);
  base = T.sub(base, whole);
  auto c = [](double v) { return Tables::scalar(v); };
  std::vector<Table> at, w;
  Table sum = c(0);
  for (int64_t k = 0; k < n; ++k) {
    Table t = T.abs(T.mul(T.sub(c((double)(start + k)), ratio), s));
    Table f;
    if (!cubic) {
      f = T.max(c(0), T.sub(c(1), t));
    } else {
      Table nearW = T.add(
          T.mul(T.mul(T.sub(T.mul(c(A + 2), t), c(A + 3)), t), t), c(1));
      Table farW = T.sub(
          T.mul(T.add(T.mul(T.sub(T.mul(c(A), t), c(5 * A)), t), c(8 * A)),
                t),
          c(4 * A));
      // Both pieces are 0 at |t| = 1 and far is 0 at |t| = 2.
      f = T.add(T.mul(T.inRange(t, 0, 1), nearW),
                T.mul(T.inRange(t, 1, 2), farW));
    }
    at.push_back(T.add(base, c((double)(start + k))));
    w.push_back(f);
    sum = T.add(sum, f);
  }
  for (Table &f : w)
    f = T.div(f, sum);
  if (a.excludeOutside) {
    Table inside = c(0);
    for (int64_t k = 0; k < n; ++k) {
      w[k] = T.mul(w[k], T.inRange(at[k], 0, (double)in - 1));
      inside = T.add(inside, w[k]);
    }
    for (Table &f : w)
      f = T.div(f, inside);
  }
  for (int64_t k = 0; k < n; ++k)
    taps.push_back({T.clamp(at[k], 0, (double)in - 1), w[k]});
}

/// One resized axis: in/out lengths, the scale and the output length the
/// reference uses (scale * in), and the roi bounds for tf_crop_and_resize.
/// At run-time sizes (docs/shapes.md) `in` and/or `out` are kDynamic and
/// `inLen`/`outLen` hold them as run-time scalars, `positions` the output
/// positions 0..out-1 as a run-time f64 vector.
struct AxisParams {
  int64_t in, out;
  Table scale, width, roiStart, roiEnd;
  bool runtimeScale;
  Table inLen, outLen, positions;
  bool dynamic() const {
    return ShapedType::isDynamic(in) || ShapedType::isDynamic(out);
  }
};

/// Resizes `x` along `axis`.
FailureOr<Value> resizeAxis(OnnxNode &node, Tables &T, Value x, int64_t axis,
                            const AxisParams &p, const ResizeAttrs &a) {
  const std::string &ctm = a.ctm;
  int64_t in = p.in, out = p.out;
  bool crop = ctm == "tf_crop_and_resize";
  // One element in and out: every tap clamps to it and the weights sum to 1.
  if (in == 1 && out == 1 && !crop)
    return x;
  auto isOne = [](const Table &t) {
    return t.isConst() && t.cst.size() == 1 && t.cst[0] == 1.0;
  };
  if (!p.width.isConst() && out == 1 &&
      (ctm == "pytorch_half_pixel" || crop)) {
    node.fail() << "axis " << axis << " resizes to one element with scales "
                << "given at run time; " << ctm << " treats that case apart, "
                << "which is not supported unless scales is a constant";
    return failure();
  }

  bool dyn = p.dynamic();
  Table pos = dyn ? p.positions : Tables::iota(out), xo;
  auto halfPixel = [&] {
    return T.sub(T.div(T.add(pos, Tables::scalar(0.5)), p.scale),
                 Tables::scalar(0.5));
  };
  if (dyn) {
    // The same formulas on run-time lengths; where the reference treats one
    // output element apart, the case is selected arithmetically.
    Table one = Tables::scalar(1);
    if (ctm == "half_pixel_symmetric") {
      xo = T.add(T.mul(T.div(p.inLen, Tables::scalar(2)),
                       T.sub(one, T.div(p.outLen, p.width))),
                 halfPixel());
    } else if (ctm == "align_corners") {
      // out == 1 reads position 0: pos is 0 there, and the denominator is
      // kept off 0.
      xo = T.div(T.mul(pos, T.sub(p.inLen, one)),
                 T.max(T.sub(p.width, one), Tables::scalar(1e-300)));
    } else if (ctm == "asymmetric") {
      xo = T.div(pos, p.scale);
    } else if (ctm == "pytorch_half_pixel") {
      Table single = T.inRange(p.outLen, 1, 1);
      xo = T.add(T.mul(halfPixel(), T.sub(one, single)),
                 T.mul(single, Tables::scalar(-0.5)));
    } else if (ctm == "tf_half_pixel_for_nn") {
      xo = T.div(T.add(pos, Tables::scalar(0.5)), p.scale);
    } else {
      xo = halfPixel();
    }
  } else if (ctm == "half_pixel_symmetric") {
    // Centred: shifted by in/2 * (1 - out / width).
    Table adjustment = T.div(Tables::scalar(out), p.width);
    xo = T.add(T.mul(Tables::scalar(in / 2.0),
                     T.sub(Tables::scalar(1), adjustment)),
               halfPixel());
  } else if (ctm == "align_corners") {
    xo = out == 1 ? Tables::scalar(0)
                  : T.div(T.mul(pos, Tables::scalar(in - 1)),
                          T.sub(p.width, Tables::scalar(1)));
  } else if (ctm == "asymmetric") {
    xo = T.div(pos, p.scale);
  } else if (ctm == "pytorch_half_pixel") {
    xo = isOne(p.width) ? Tables::scalar(-0.5) : halfPixel();
  } else if (ctm == "tf_half_pixel_for_nn") {
    xo = T.div(T.add(pos, Tables::scalar(0.5)), p.scale);
  } else if (crop) {
    Table span = T.mul(T.sub(p.roiEnd, p.roiStart), Tables::scalar(in - 1));
    Table offset = T.mul(p.roiStart, Tables::scalar(in - 1));
    xo = isOne(p.width)
             ? T.div(span, Tables::scalar(2))
             : T.div(T.mul(pos, span), T.sub(p.width, Tables::scalar(1)));
    xo = T.add(xo, offset);
  } else {
    xo = halfPixel();
  }
  if (xo.isConst() && xo.cst.size() == 1 && out > 1)
    xo.cst.assign(out, xo.cst[0]);
  if (dyn && xo.isConst())
    xo = T.add(T.mul(pos, Tables::scalar(0)), xo);

  // The identity: nothing to do on this axis.
  if (!crop && in == out && xo.isConst()) {
    bool identity = true;
    for (int64_t i = 0; i < out; ++i)
      identity &= xo.cst[i] == (double)i;
    if (identity)
      return x;
  }

  // Taps: source positions (clamped to the axis, like ONNX's edge padding)
  // and their weights (none for a single nearest tap).
  std::vector<std::pair<Table, std::optional<Table>>> taps;
  Table last = ShapedType::isDynamic(in)
                   ? T.sub(p.inLen, Tables::scalar(1))
                   : Tables::scalar((double)(in - 1));
  // The smallest scale this axis may have: a run-time scale gave
  // out = floor(scale * in), so scale >= out / in.
  double minScale = p.scale.isConst() ? p.scale.cst[0]
                    : dyn            ? 1.0 // checked by resizeSymbolic
                                     : (double)out / in;
  if (a.antialias && a.mode != "nearest" && minScale < 1) {
    antialiasTaps(T, xo, p.scale, minScale, in, a, taps);
  } else if (a.mode == "nearest") {
    Table r;
    if (a.nearestMode == "round_prefer_floor")
      r = T.ceil(T.sub(xo, Tables::scalar(0.5)));
    else if (a.nearestMode == "round_prefer_ceil")
      r = T.floor(T.add(xo, Tables::scalar(0.5)));
    else if (a.nearestMode == "floor")
      r = T.floor(xo);
    else
      r = T.ceil(xo);
    taps.push_back({T.clamp(r, 0, last), std::nullopt});
  } else {
    Table x0 = T.floor(xo), frac = T.sub(xo, x0);
    if (a.mode == "linear") {
      taps.push_back({T.clamp(x0, 0, last), T.sub(Tables::scalar(1), frac)});
      taps.push_back({T.clamp(T.add(x0, Tables::scalar(1)), 0, last), frac});
    } else {
      // Keys' cubic convolution with coefficient A, taps x0-1 .. x0+2.
      Table A = Tables::scalar(a.cubicA);
      Table A5 = Tables::scalar(5 * a.cubicA), A8 = Tables::scalar(8 * a.cubicA),
            A4 = Tables::scalar(4 * a.cubicA),
            A2 = Tables::scalar(a.cubicA + 2), A3 = Tables::scalar(a.cubicA + 3);
      Table one = Tables::scalar(1);
      auto far = [&](const Table &t) { // distance in [1, 2]
        return T.sub(T.mul(T.add(T.mul(T.sub(T.mul(A, t), A5), t), A8), t), A4);
      };
      auto near = [&](const Table &t) { // distance in [0, 1]
        return T.add(T.mul(T.mul(T.sub(T.mul(A2, t), A3), t), t), one);
      };
      Table rest = T.sub(one, frac);
      std::vector<Table> coeffs = {far(T.add(frac, one)), near(frac),
                                   near(rest), far(T.add(rest, one))};
      std::vector<Table> at;
      for (int k = 0; k < 4; ++k)
        at.push_back(T.add(x0, Tables::scalar(k - 1)));
      if (a.excludeOutside) {
        Table sum = Tables::scalar(0);
        for (int k = 0; k < 4; ++k) {
          coeffs[k] = T.mul(coeffs[k], T.inRange(at[k], 0, last));
          sum = T.add(sum, coeffs[k]);
        }
        for (int k = 0; k < 4; ++k)
          coeffs[k] = T.div(coeffs[k], sum);
      }
      for (int k = 0; k < 4; ++k)
        taps.push_back({T.clamp(at[k], 0, last), coeffs[k]});
    }
  }
  // tf_crop_and_resize: positions outside the input take extrapolation_value.
  std::optional<Table> fill;
  if (crop) {
    Table inside = T.inRange(xo, 0, last);
    for (auto &[idx, w] : taps)
      w = w ? T.mul(*w, inside) : inside;
    fill = T.mul(T.sub(Tables::scalar(1), inside),
                 Tables::scalar(a.extrapolation));
  }
  if (T.bad)
    return failure();

  Type elt = typeOf(x).getElementType();
  int64_t trailing = typeOf(x).getRank() - axis - 1;
  Value acc;
  for (auto &[idx, w] : taps) {
    FailureOr<Value> i = T.indices(idx);
    if (failed(i))
      return failure();
    FailureOr<Value> g =
        build<GatherOp>(node, x, *i, node.builder.getI64IntegerAttr(axis));
    if (failed(g))
      return failure();
    if (w) {
      FailureOr<Value> wt = T.weights(*w, elt, trailing);
      if (failed(wt) || failed(g = build<MulOp>(node, *g, *wt)))
        return failure();
    }
    if (acc && failed(g = build<AddOp>(node, acc, *g)))
      return failure();
    acc = *g;
  }
  if (fill) {
    FailureOr<Value> f = T.weights(*fill, elt, trailing), y;
    if (failed(f) || failed(y = build<AddOp>(node, acc, *f)))
      return failure();
    acc = *y;
  }
  return acc;
}

/// Opset 18's `axes`: `slot[d]` becomes axis d's position in scales, sizes
/// and roi (-1: not resized); returns how many axes they list.
FailureOr<int64_t> listedAxes(OnnxNode &node, int64_t rank,
                              SmallVector<int64_t> &slot) {
  slot.assign(rank, -1);
  if (!node.hasAttr("axes")) {
    for (int64_t d = 0; d < rank; ++d)
      slot[d] = d;
    return rank;
  }
  std::optional<SmallVector<int64_t>> given = node.intsAttr("axes");
  if (!given) {
    node.fail() << "axes must be a list of integers";
    return failure();
  }
  for (auto [i, a] : llvm::enumerate(*given)) {
    int64_t d = a < 0 ? a + rank : a;
    if (d < 0 || d >= rank || slot[d] >= 0) {
      node.fail() << "axes lists " << a << ", which is "
                  << (d >= 0 && d < rank ? "repeated" : "out of range")
                  << " for an input of rank " << rank;
      return failure();
    }
    slot[d] = (int64_t)i;
  }
  return (int64_t)given->size();
}

/// keep_aspect_ratio_policy's one scale for every listed axis: the smallest
/// (not_larger) or largest (not_smaller) of sizes / input length.
Table keepAspectScale(Tables &T, const ParamInput &sizes,
                      ArrayRef<int64_t> slot, RankedTensorType xt,
                      StringRef policy) {
  std::optional<Table> scale;
  for (auto [d, j] : llvm::enumerate(slot)) {
    if (j < 0)
      continue;
    Table s = T.div(sizes.values ? Tables::scalar((*sizes.values)[j])
                                 : T.element(sizes.run, j),
                    Tables::scalar((double)xt.getDimSize(d)));
    scale = !scale                     ? s
            : policy == "not_larger" ? T.min(*scale, s)
                                       : T.max(*scale, s);
  }
  return scale ? *scale : Tables::scalar(1);
}

/// Resize of an input with symbolic sizes (docs/shapes.md): nearest mode
/// with whole constant scales, under a coordinate mode that maps output o to
/// input o floordiv scale, becomes kiln.upsample_nearest (output size the
/// input's times the scale). For a whole scale k, o = q k + r with r < k:
/// asymmetric takes o / k and floor gives q (round_prefer_floor too when
/// k = 2, the only tie being r / k = 1/2); the half-pixel modes take
/// (2r + 1 - k) / 2k off q, strictly between -1/2 and 1/2, so either
/// rounding gives q; tf_half_pixel_for_nn adds (r + 1/2) / k < 1 and floor
/// gives q. Anything else takes resizeSymbolic's general tables: null here.
Value upsampleSymbolic(OnnxNode &node, Value x, const ResizeAttrs &a,
                       const ParamInput &scales, ArrayRef<int64_t> slot) {
  RankedTensorType xt = typeOf(x);
  auto refuse = [](const Twine &) { return Value(); };
  if (a.mode != "nearest")
    return refuse("mode '" + a.mode + "'");
  if (!scales.present || !scales.values)
    return refuse(scales.present ? "scales computed at run time"
                                 : "sizes instead of scales");
  SmallVector<int64_t> ks;
  int64_t largest = 1;
  for (int64_t d = 0; d < xt.getRank(); ++d) {
    double k = slot[d] >= 0 ? (*scales.values)[slot[d]] : 1.0;
    if (!(k >= 1.0 && k <= 65536.0 && k == std::floor(k)))
      return refuse("the scale " + std::to_string(k) + " on axis " +
                    std::to_string(d));
    ks.push_back((int64_t)k);
    largest = std::max(largest, ks.back());
  }
  const std::string &c = a.ctm, &n = a.nearestMode;
  bool rounding = n == "round_prefer_floor" || n == "round_prefer_ceil";
  bool floors =
      (c == "asymmetric" &&
       (n == "floor" || (n == "round_prefer_floor" && largest <= 2))) ||
      ((c == "half_pixel" || c == "pytorch_half_pixel") && rounding) ||
      (c == "tf_half_pixel_for_nn" && n == "floor");
  if (largest > 1 && !floors)
    return refuse("coordinate_transformation_mode '" + c +
                  "' with nearest_mode '" + n + "'");
  if (c == "tf_crop_and_resize")
    return refuse("coordinate_transformation_mode '" + c + "'");
  FailureOr<Value> y =
      build<UpsampleNearestOp>(node, x, node.builder.getDenseI64ArrayAttr(ks));
  return succeeded(y) ? *y : Value();
}

/// `s` as m / 2^k (every finite double is one), reduced; nullopt when m or
/// 2^k would not fit the index arithmetic of a size.
std::optional<std::pair<int64_t, int64_t>> dyadic(double s) {
  int e = 0;
  double f = std::frexp(s, &e); // s = f * 2^e, f in [0.5, 1)
  int64_t m = (int64_t)std::ldexp(f, 53);
  int64_t k = 53 - e;
  while (k > 0 && m % 2 == 0) {
    m /= 2;
    --k;
  }
  if (k < 0 || k > 40 || m <= 0 || m > (int64_t(1) << 24))
    return std::nullopt;
  return std::make_pair(m, k);
}

/// Resize of an input with run-time sizes (docs/shapes.md) in any mode but
/// what upsampleSymbolic takes: the tables of resizeAxis over run-time
/// output positions, the first `out` of a constant iota as long as the
/// largest output (the arena's bound). The output length of an axis is
/// sizes[j] as the graph computed it (F.interpolate(size=...)), in * s for
/// a whole scale s, else floor(in * s) computed exactly as (in * m) floordiv
/// 2^k with s = m / 2^k.
FailureOr<Value> resizeSymbolic(OnnxNode &node, Value x, const ResizeAttrs &a,
                                const ParamInput &scales,
                                const ParamInput &sizes, int sizesIdx,
                                ArrayRef<int64_t> slot, StringRef policy) {
  RankedTensorType xt = typeOf(x);
  auto refuse = [&](const Twine &what) -> FailureOr<Value> {
    node.fail() << "input shape " << xt
                << " is not static; with symbolic sizes Resize needs " << what
                << "; give the symbolic dimensions one size each";
    return failure();
  };
  if (!node.sizes)
    return refuse("the symbolic-size conversion");
  if (a.ctm == "tf_crop_and_resize")
    return refuse("a coordinate_transformation_mode other than "
                  "tf_crop_and_resize");
  if (policy != "stretch")
    return refuse("keep_aspect_ratio_policy 'stretch', not '" + policy + "'");
  if (scales.present && !scales.values)
    return refuse("constant scales (these are computed at run time)");
  SymbolicSizes &S = *node.sizes;
  std::optional<SmallVector<SymSize>> sizeContents;
  if (sizes.present) {
    sizeContents = S.contents(node.input(sizesIdx));
    if (!sizeContents)
      return refuse("sizes that are constant or computed from the shapes "
                    "(as F.interpolate(size=...) exports them)");
  }
  OpBuilder &b = node.builder;
  Location loc = node.loc();
  Tables T(node);
  Type f64 = b.getF64Type();
  auto lengthOf = [&](Value v, int64_t d) {
    auto shapeType = RankedTensorType::get({1}, b.getI64Type());
    Value shape = ShapeOfOp::create(b, loc, shapeType, v, b.getI64IntegerAttr(d),
                                    b.getI64IntegerAttr(d + 1));
    return T.wrap(build<CastOp>(node, shape, TypeAttr::get(f64)));
  };

  int64_t rank = xt.getRank();
  std::vector<AxisParams> axes(rank);
  SmallVector<std::optional<SymSize>> outSyms(rank);
  SmallVector<double> ratio(rank, 1.0);
  SmallVector<bool> slotKept(rank, false);
  for (int64_t d = 0; d < rank; ++d) {
    AxisParams &p = axes[d];
    p.in = xt.getDimSize(d);
    p.runtimeScale = false;
    p.roiStart = Tables::scalar(0);
    p.roiEnd = Tables::scalar(1);
    int64_t j = slot[d];
    if (j < 0) { // not listed in axes: kept as is
      p.out = p.in;
      p.scale = Tables::scalar(1);
      p.width = Tables::scalar(p.in);
      continue;
    }
    SymSize in = S.dim(x, d);
    std::optional<SymSize> out;
    Value outIndex;
    std::optional<int64_t> outMax;
    double s = 0;
    if (sizes.present) {
      out = (*sizeContents)[j];
      // The same length (a batch or channel axis the sizes copy from the
      // input's shape): every mode but tf_half_pixel_for_nn maps output o
      // to input o there, so the axis is kept as is.
      if (*out == in && a.ctm != "tf_half_pixel_for_nn") {
        p.out = p.in;
        p.scale = Tables::scalar(1);
        p.width = Tables::scalar(p.in);
        slotKept[d] = true;
        continue;
      }
    } else {
      s = (*scales.values)[j];
      ratio[d] = s;
      if (!(s > 0 && std::isfinite(s)))
        return refuse("positive scales, not " + std::to_string(s) +
                      " on axis " + std::to_string(d));
      if (a.antialias && a.mode != "nearest" && s < 1)
        return refuse("no antialiased shrinking (scale " + std::to_string(s) +
                      " on axis " + std::to_string(d) + ")");
      if (s == std::floor(s) && s <= 65536) {
        out = SymSize::mul(in, SymSize::constant((int64_t)s));
      } else if (std::optional<std::pair<int64_t, int64_t>> mk = dyadic(s)) {
        std::optional<int64_t> inMax = S.largest(in);
        if (std::optional<int64_t> c = in.getConstant()) {
          out = SymSize::constant((int64_t)std::floor(s * (double)*c));
        } else {
          Value inIndex = S.materialize(b, loc, in);
          Value prod = arith::MulIOp::create(
              b, loc, inIndex, arith::ConstantIndexOp::create(b, loc, mk->first));
          outIndex = arith::DivUIOp::create(
              b, loc, prod,
              arith::ConstantIndexOp::create(b, loc, int64_t(1) << mk->second));
          if (inMax)
            outMax = (*inMax * mk->first) >> mk->second;
        }
      } else {
        return refuse("a scale Kiln can represent exactly, not " +
                      std::to_string(s));
      }
    }
    if (sizes.present && a.antialias && a.mode != "nearest")
      return refuse("no antialiasing with sizes");
    if (out) {
      outSyms[d] = *out;
      outIndex = S.materialize(b, loc, *out);
      outMax = S.largest(*out);
    }
    p.out = out ? out->getConstant().value_or(ShapedType::kDynamic)
                : ShapedType::kDynamic;
    if (!ShapedType::isDynamic(p.out) && p.out <= 0) {
      node.fail() << "axis " << d << " resizes to " << p.out
                  << " elements; sizes and scales must give at least one";
      return failure();
    }
    if (!p.dynamic()) {
      // Both lengths known here: the static tables.
      double sc = sizes.present ? (double)p.out / p.in : s;
      p.scale = Tables::scalar(sc);
      p.width = Tables::scalar(sc * p.in);
      continue;
    }
    if (!outMax) {
      node.fail() << "axis " << d << " resizes to "
                  << (out ? S.str(*out) : std::string("a computed length"))
                  << " elements; Kiln sizes the output positions by the "
                     "largest, so give each symbolic dimension a range "
                     "(--dim SYMBOL=MIN..MAX)";
      return failure();
    }
    constexpr int64_t kMaxPositions = 1 << 20;
    if (*outMax > kMaxPositions)
      return refuse("outputs of at most " + std::to_string(kMaxPositions) +
                    " elements per axis at the symbols' maxima, not " +
                    std::to_string(*outMax));
    // The output positions: the first `out` of a constant iota.
    auto iotaType = RankedTensorType::get({std::max<int64_t>(*outMax, 1)}, f64);
    SmallVector<double> iota;
    for (int64_t i = 0; i < iotaType.getDimSize(0); ++i)
      iota.push_back((double)i);
    Value all = ConstantOp::create(b, loc, iotaType,
                                   DenseElementsAttr::get(iotaType, ArrayRef(iota)));
    auto posType = RankedTensorType::get({p.out}, f64);
    auto positions = SizedSliceOp::create(
        b, loc, posType, all,
        ValueRange{arith::ConstantIndexOp::create(b, loc, 0)},
        ValueRange{outIndex}, b.getDenseI64ArrayAttr({1}));
    if (out)
      S.setDims(positions.getResult(), {*out});
    p.positions = Table{{}, positions.getResult()};
    p.inLen = ShapedType::isDynamic(p.in) ? lengthOf(x, d)
                                          : Tables::scalar((double)p.in);
    p.outLen = ShapedType::isDynamic(p.out)
                   ? lengthOf(positions.getResult(), 0)
                   : Tables::scalar((double)p.out);
    if (sizes.present) {
      p.scale = T.div(p.outLen, p.inLen);
      p.width = p.outLen;
    } else {
      p.scale = Tables::scalar(s);
      p.width = T.mul(Tables::scalar(s), p.inLen);
    }
  }
  if (T.bad)
    return failure();

  // Shrinking axes first, as the static conversion does.
  SmallVector<int64_t> order;
  for (int64_t d = 0; d < rank; ++d)
    order.push_back(d);
  llvm::stable_sort(order,
                    [&](int64_t l, int64_t r) { return ratio[l] < ratio[r]; });
  for (int64_t d : order) {
    if (slot[d] < 0 || slotKept[d])
      continue;
    SmallVector<SymSize> dims = S.dims(x);
    FailureOr<Value> y = resizeAxis(node, T, x, d, axes[d], a);
    if (failed(y))
      return failure();
    if (*y != x) {
      // The output length as the graph computed it, for the nodes after.
      dims[d] = outSyms[d] ? *outSyms[d] : S.dim(*y, d);
      S.setDims(*y, dims);
    }
    x = *y;
  }
  return x;
}

/// Resize (opset 10/11/13) and Upsample (7/9). `scalesIdx`/`sizesIdx`/`roiIdx`
/// are input positions (-1: not an input of this version).
FailureOr<SmallVector<Value>> resize(OnnxNode &node, bool upsample) {
  FailureOr<Value> xv = node.rankedInput(0);
  if (failed(xv))
    return failure();
  Value x = *xv;
  RankedTensorType xt = typeOf(x);
  int64_t rank = xt.getRank();
  bool legacy = upsample || node.opset < 11; // Upsample and Resize-10
  int roiIdx = legacy ? -1 : 1, scalesIdx = legacy ? 1 : 2,
      sizesIdx = legacy ? -1 : 3;

  // Opset 18: scales, sizes and roi may list only some axes.
  SmallVector<int64_t> slot;
  FailureOr<int64_t> listedOr = listedAxes(node, rank, slot);
  if (failed(listedOr))
    return failure();
  int64_t listed = *listedOr;
  std::string policy = node.strAttr("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" &&
      policy != "not_smaller") {
    node.fail() << "keep_aspect_ratio_policy '" << policy
                << "' is not supported; expected stretch, not_larger or "
                   "not_smaller";
    return failure();
  }
  ResizeAttrs a;
  a.antialias = node.intAttr("antialias", 0) != 0;
  a.mode = node.strAttr("mode", "nearest");
  if (a.mode == "bilinear")
    a.mode = "linear";
  a.ctm = legacy ? "asymmetric"
                 : node.strAttr("coordinate_transformation_mode", "half_pixel");
  a.nearestMode = legacy ? "floor"
                         : node.strAttr("nearest_mode", "round_prefer_floor");
  a.cubicA = node.floatAttr("cubic_coeff_a", -0.75f);
  a.excludeOutside = node.intAttr("exclude_outside", 0) != 0;
  a.extrapolation = node.floatAttr("extrapolation_value", 0.0f);
  if (a.mode != "nearest" && a.mode != "linear" &&
      (a.mode != "cubic" || legacy)) {
    node.fail() << "mode '" << a.mode << "' is not supported; expected "
                << (legacy ? "nearest or linear" : "nearest, linear or cubic");
    return failure();
  }
  static const char *ctms[] = {"half_pixel",   "pytorch_half_pixel",
                               "align_corners", "asymmetric",
                               "tf_half_pixel_for_nn", "tf_crop_and_resize",
                               "half_pixel_symmetric"};
  if (!llvm::is_contained(ctms, a.ctm)) {
    node.fail() << "coordinate_transformation_mode '" << a.ctm
                << "' is not supported";
    return failure();
  }
  static const char *nearests[] = {"round_prefer_floor", "round_prefer_ceil",
                                   "floor", "ceil"};
  if (!llvm::is_contained(nearests, a.nearestMode)) {
    node.fail() << "nearest_mode '" << a.nearestMode << "' is not supported";
    return failure();
  }
  if (a.mode != "nearest" && !isa<FloatType>(xt.getElementType())) {
    node.fail() << a.mode << " resizing of " << xt.getElementType()
                << " is not supported; only nearest resizes integers";
    return failure();
  }

  ParamInput scales, sizes = readParam(node, sizesIdx),
                     roi = readParam(node, roiIdx);
  if (node.opType() == "Upsample" && node.opset < 9) {
    if (auto attr = node.op->getAttrOfType<ArrayAttr>("scales")) {
      scales.present = true;
      scales.values.emplace();
      for (Attribute e : attr)
        if (auto f = dyn_cast<FloatAttr>(e))
          scales.values->push_back(f.getValueAsDouble());
    }
  } else {
    scales = readParam(node, scalesIdx);
  }
  if (scales.present == sizes.present) {
    node.fail() << "expects exactly one of scales and sizes, got "
                << (scales.present ? "both" : "neither");
    return failure();
  }
  ParamInput &given = scales.present ? scales : sizes;
  if (given.values && (int64_t)given.values->size() != listed) {
    node.fail() << (scales.present ? "scales" : "sizes") << " has "
                << given.values->size() << " values for "
                << (listed == rank ? "an input of rank " : "axes listing ")
                << listed << (listed == rank ? "" : " axes");
    return failure();
  }
  bool crop = a.ctm == "tf_crop_and_resize";
  if (crop && (!roi.present || (roi.values && (int64_t)roi.values->size() != 2 * listed))) {
    node.fail() << "tf_crop_and_resize needs roi with 2 * " << listed
                << " values";
    return failure();
  }
  auto declared = dyn_cast<RankedTensorType>(node.op->getResult(0).getType());
  bool declaredStatic = declared && declared.hasStaticShape() &&
                        declared.getRank() == rank;
  // Run-time sizes: in, or out through sizes the graph computes from shapes.
  if (!xt.hasStaticShape() ||
      (sizes.run && node.sizes && node.sizes->isSymbolic(node.input(sizesIdx)))) {
    if (Value up = xt.hasStaticShape()
                       ? Value()
                       : upsampleSymbolic(node, x, a, scales, slot))
      return SmallVector<Value>{up};
    return one(resizeSymbolic(node, x, a, scales, sizes, sizesIdx, slot,
                              policy));
  }
  if (given.run && !declaredStatic) {
    node.fail() << (scales.present ? "scales" : "sizes")
                << " must be a compile-time constant when the output shape is "
                   "not declared static (declare it or fold the input)";
    return failure();
  }

  Tables T(node);
  std::optional<Table> keepScale;
  if (policy != "stretch" && sizes.present) {
    if (!sizes.values && !declaredStatic) {
      node.fail() << "keep_aspect_ratio_policy '" << policy
                  << "' needs sizes known at compile time or a declared "
                     "static output shape";
      return failure();
    }
    keepScale = keepAspectScale(T, sizes, slot, xt, policy);
  }

  std::vector<AxisParams> axes;
  for (int64_t d = 0; d < rank; ++d) {
    AxisParams p;
    p.in = xt.getDimSize(d);
    p.runtimeScale = false;
    int64_t j = slot[d];
    if (j < 0) { // not listed in axes: kept as is
      p.out = p.in;
      p.scale = Tables::scalar(1);
      p.width = Tables::scalar(p.in);
      p.roiStart = Tables::scalar(0);
      p.roiEnd = Tables::scalar(1);
    } else if (keepScale) {
      // Rounded half up, as the policy specifies (the declared length when
      // sizes come at run time).
      p.out = keepScale->isConst()
                  ? (int64_t)std::floor(keepScale->cst[0] * p.in + 0.5)
                  : declared.getDimSize(d);
      p.scale = *keepScale;
      p.width = T.mul(*keepScale, Tables::scalar(p.in));
    } else if (sizes.present) {
      p.out = sizes.values ? (int64_t)(*sizes.values)[j] : declared.getDimSize(d);
      double s = (double)p.out / p.in;
      p.scale = Tables::scalar(s);
      p.width = Tables::scalar(s * p.in);
    } else if (scales.values) {
      // Scales are float32 in the model; the reference computes in double.
      double s = (*scales.values)[j];
      p.out = (int64_t)std::floor(s * p.in);
      p.scale = Tables::scalar(s);
      p.width = Tables::scalar(s * p.in);
    } else {
      p.out = declared.getDimSize(d);
      p.scale = T.element(scales.run, j);
      p.width = T.mul(p.scale, Tables::scalar(p.in));
      p.runtimeScale = true;
    }
    if (p.out <= 0) {
      node.fail() << "axis " << d << " resizes to " << p.out
                  << " elements; sizes and scales must give at least one";
      return failure();
    }
    if (declaredStatic && declared.getDimSize(d) != p.out) {
      node.fail() << "axis " << d << " resizes to " << p.out
                  << " elements but the declared output has "
                  << declared.getDimSize(d);
      return failure();
    }
    if (crop && j >= 0) {
      p.roiStart = roi.values ? Tables::scalar((*roi.values)[j])
                              : T.element(roi.run, j);
      p.roiEnd = roi.values ? Tables::scalar((*roi.values)[listed + j])
                            : T.element(roi.run, listed + j);
    }
    axes.push_back(p);
  }
  if (T.bad)
    return failure();

  // Shrinking axes first: later passes then touch fewer elements.
  SmallVector<int64_t> order;
  for (int64_t d = 0; d < rank; ++d)
    order.push_back(d);
  llvm::stable_sort(order, [&](int64_t l, int64_t r) {
    return axes[l].out * axes[r].in < axes[r].out * axes[l].in;
  });
  for (int64_t d : order) {
    if (slot[d] < 0)
      continue; // not listed in axes
    FailureOr<Value> y = resizeAxis(node, T, x, d, axes[d], a);
    if (failed(y))
      return failure();
    x = *y;
  }
  return SmallVector<Value>{x};
}
} // namespace

FailureOr<SmallVector<Value>> mlir::kiln::convertResize(OnnxNode &node) {
  return resize(node, false);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertUpsample(OnnxNode &node) {
  return resize(node, true);
}
