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
#include "ResizeTables.h"
#include "SymbolicSizes.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::resize;

ParamInput mlir::kiln::resize::readParam(OnnxNode &node, int idx) {
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

namespace {
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
} // namespace

/// Resizes `x` along `axis`.
FailureOr<Value> mlir::kiln::resize::resizeAxis(OnnxNode &node, Tables &T, Value x, int64_t axis,
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

namespace {
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

/// The mode attributes of Resize (Upsample and Resize-10: asymmetric with
/// floor), checked against what the conversion supports.
FailureOr<ResizeAttrs> readAttrs(OnnxNode &node, bool legacy,
                                 RankedTensorType xt) {
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
  return a;
}

/// Resize (opset 10/11/13) and Upsample (7/9). `scalesIdx`/`sizesIdx`/`roiIdx`
/// are input positions (-1: not an input of this version).
FailureOr<SmallVector<Value>> resizeNode(OnnxNode &node, bool upsample) {
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
  FailureOr<ResizeAttrs> attrs = readAttrs(node, legacy, xt);
  if (failed(attrs))
    return failure();
  const ResizeAttrs &a = *attrs;

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
  return resizeNode(node, false);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertUpsample(OnnxNode &node) {
  return resizeNode(node, true);
}
