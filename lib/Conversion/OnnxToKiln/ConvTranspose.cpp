//===- ConvTranspose.cpp - ONNX ConvTranspose -------------------*- C++ -*-===//
//
// A transposed convolution is a regular one over the input with `stride - 1`
// zeros inserted between elements and `dilation * (kernel - 1) - pad` padding
// around it, with the filter flipped spatially and its two channel
// dimensions swapped (per group; at compile time when it is a constant).
// Without dilation the zeros are never materialized: each output phase
// (position mod stride) is a stride-1 convolution of the input with the taps
// that reach it, and the phases interleave. With dilation and strides the
// zeros are inserted by a reshape/pad/reshape of the input. Padding that
// comes out negative is cropped from the result instead. 3-D runs the 2-D
// form per depth tap and adds the shifted results.
//
//===----------------------------------------------------------------------===//
#include "Conv.h"
#include "SymbolicSizes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cstring>

using namespace mlir;
using namespace mlir::kiln;

namespace {
int64_t floorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

int64_t floorMod(int64_t a, int64_t b) { return a - floorDiv(a, b) * b; }

/// The regular-convolution filter [M, C/g, len(ys), len(xs)] from ONNX's
/// [C, M/g, kh, kw]: channels swapped per group, and spatial taps picked by
/// `ys`/`xs` (reversed ranges flip the filter), on the bytes of a constant.
DenseElementsAttr pickFilter(DenseElementsAttr w, int64_t group,
                             ArrayRef<int64_t> ys, ArrayRef<int64_t> xs) {
  auto type = cast<RankedTensorType>(w.getType());
  int64_t c = type.getDimSize(0), mg = type.getDimSize(1),
          kh = type.getDimSize(2), kw = type.getDimSize(3), cg = c / group;
  int64_t oh = ys.size(), ow = xs.size();
  auto outType = RankedTensorType::get({mg * group, cg, oh, ow},
                                       type.getElementType());
  if (w.isSplat())
    return w.resizeSplat(outType);
  unsigned bytes = type.getElementTypeBitWidth() / 8;
  ArrayRef<char> src = w.getRawData();
  std::vector<char> dst(outType.getNumElements() * bytes);
  for (int64_t g = 0; g < group; ++g)
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t m = 0; m < mg; ++m)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t x = 0; x < ow; ++x) {
            int64_t from =
                (((g * cg + ci) * mg + m) * kh + ys[y]) * kw + xs[x];
            int64_t to = (((g * mg + m) * cg + ci) * oh + y) * ow + x;
            std::memcpy(&dst[to * bytes], &src[from * bytes], bytes);
          }
  return DenseElementsAttr::getFromRawBuffer(outType, dst);
}

/// The same as kiln ops, for a filter known only at run time.
FailureOr<Value> pickFilterOps(OnnxNode &node, Value w, int64_t group,
                               ArrayRef<int64_t> ys, ArrayRef<int64_t> xs) {
  ArrayRef<int64_t> s = typeOf(w).getShape();
  int64_t c = s[0], mg = s[1], kh = s[2], kw = s[3], cg = c / group;
  auto &b = node.builder;
  FailureOr<Value> v = reshapeTo(node, w, {group, cg, mg, kh, kw});
  if (failed(v) ||
      failed(v = build<TransposeOp>(node, *v,
                                    b.getDenseI64ArrayAttr({0, 2, 1, 3, 4}))) ||
      failed(v = reshapeTo(node, *v, {group * mg, cg, kh, kw})))
    return failure();
  for (auto [axis, idx] : {std::pair<int64_t, ArrayRef<int64_t>>{2, ys}, {3, xs}}) {
    bool identity = (int64_t)idx.size() == s[axis];
    for (size_t i = 0; i < idx.size(); ++i)
      identity &= idx[i] == (int64_t)i;
    if (identity)
      continue;
    auto idxType = RankedTensorType::get({(int64_t)idx.size()}, b.getI64Type());
    Value iv = ConstantOp::create(b, node.loc(), idxType,
                                  DenseElementsAttr::get(idxType, idx));
    if (failed(v = build<GatherOp>(node, *v, iv, b.getI64IntegerAttr(axis))))
      return failure();
  }
  return v;
}

/// `wc` is the filter's value when it is a constant (shaped like `w`).
FailureOr<Value> filterFor(OnnxNode &node, Value w,
                           std::optional<DenseElementsAttr> wc, int64_t group,
                           ArrayRef<int64_t> ys, ArrayRef<int64_t> xs) {
  if (wc && wc->getElementType().getIntOrFloatBitWidth() % 8 == 0) {
    DenseElementsAttr picked = pickFilter(*wc, group, ys, xs);
    return ConstantOp::create(node.builder, node.loc(), picked.getType(), picked)
        .getResult();
  }
  return pickFilterOps(node, w, group, ys, xs);
}

SmallVector<int64_t> reversed(int64_t n) {
  SmallVector<int64_t> v;
  for (int64_t i = n - 1; i >= 0; --i)
    v.push_back(i);
  return v;
}

/// Stride > 1 without dilation, by output phase: the outputs o with
/// (o + pad) mod s == r only meet the filter taps k == r (mod s), so each
/// phase is a stride-1 convolution of the undilated input with that subset
/// of taps, and the phases interleave into the output. This does s^2 times
/// fewer multiplications than convolving the zero-inserted input.
FailureOr<Value> byPhases(OnnxNode &node, Value x, Value w,
                          std::optional<DenseElementsAttr> wc, Value bias,
                          int64_t group, ArrayRef<int64_t> kernel,
                          ArrayRef<int64_t> strides, ArrayRef<int64_t> padBegin,
                          ArrayRef<int64_t> out) {
  auto &b = node.builder;
  ArrayRef<int64_t> xs = typeOf(x).getShape();
  int64_t n = xs[0], m = typeOf(w).getDimSize(1) * group;
  Type elt = typeOf(x).getElementType();
  // Per axis and phase p: the taps (a reversed, strided subset of the
  // kernel), the shift of the input, and the outputs per phase.
  struct Phase {
    SmallVector<int64_t> taps;
    int64_t left, right; // input padding (negative: crop)
  };
  SmallVector<SmallVector<Phase>> phases(2);
  int64_t per[2];
  for (int i = 0; i < 2; ++i) {
    int64_t s = strides[i], k = kernel[i], len = xs[2 + i];
    per[i] = (out[i] + s - 1) / s;
    for (int64_t p = 0; p < s; ++p) {
      Phase ph;
      int64_t r = floorMod(p + padBegin[i], s), shift = floorDiv(p + padBegin[i], s);
      for (int64_t t = r; t < k; t += s)
        ph.taps.insert(ph.taps.begin(), t);
      int64_t kr = ph.taps.size();
      ph.left = kr - 1 - shift;
      ph.right = per[i] + kr - 1 - len - ph.left;
      phases[i].push_back(ph);
    }
  }
  SmallVector<Value> rowsOfPhases;
  for (const Phase &py : phases[0]) {
    SmallVector<Value> cols;
    for (const Phase &px : phases[1]) {
      FailureOr<Value> y;
      if (py.taps.empty() || px.taps.empty()) {
        // No tap reaches these outputs: only the bias.
        auto type = RankedTensorType::get({n, m, per[0], per[1]}, elt);
        y = ConstantOp::create(b, node.loc(), type,
                               DenseElementsAttr::get(type, cast<TypedAttr>(b.getZeroAttr(elt))))
                .getResult();
        if (bias) {
          FailureOr<Value> bb = reshapeTo(node, bias, {m, 1, 1});
          if (failed(bb) || failed(y = build<AddOp>(node, *y, *bb)))
            return failure();
        }
      } else {
        FailureOr<Value> f = filterFor(node, w, wc, group, py.taps, px.taps);
        if (failed(f))
          return failure();
        SmallVector<int64_t> pads = {std::max<int64_t>(py.left, 0), std::max<int64_t>(px.left, 0),
                                     std::max<int64_t>(py.right, 0), std::max<int64_t>(px.right, 0)};
        y = build<Conv2DOp>(node, x, *f, bias, b.getDenseI64ArrayAttr({1, 1}),
                            b.getDenseI64ArrayAttr({1, 1}), b.getDenseI64ArrayAttr(pads),
                            b.getI64IntegerAttr(group));
        if (failed(y))
          return failure();
        ArrayRef<int64_t> ys = typeOf(*y).getShape();
        int64_t cy = std::max<int64_t>(-py.left, 0), cx = std::max<int64_t>(-px.left, 0);
        if (cy || cx || ys[2] != per[0] || ys[3] != per[1])
          y = build<SliceOp>(node, *y, b.getDenseI64ArrayAttr({0, 0, cy, cx}),
                             b.getDenseI64ArrayAttr({n, m, per[0], per[1]}),
                             b.getDenseI64ArrayAttr({1, 1, 1, 1}));
      }
      if (failed(y) || failed(y = reshapeTo(node, *y, {n, m, per[0], 1, per[1], 1})))
        return failure();
      cols.push_back(*y);
    }
    FailureOr<Value> row = cols.size() == 1 ? FailureOr<Value>(cols[0])
                                            : build<ConcatOp>(node, ValueRange(cols), b.getI64IntegerAttr(5));
    if (failed(row))
      return failure();
    rowsOfPhases.push_back(*row);
  }
  FailureOr<Value> y = rowsOfPhases.size() == 1
                           ? FailureOr<Value>(rowsOfPhases[0])
                           : build<ConcatOp>(node, ValueRange(rowsOfPhases), b.getI64IntegerAttr(3));
  int64_t fy = per[0] * strides[0], fx = per[1] * strides[1];
  if (failed(y) || failed(y = reshapeTo(node, *y, {n, m, fy, fx})))
    return failure();
  if (fy != out[0] || fx != out[1])
    y = build<SliceOp>(node, *y, b.getDenseI64ArrayAttr({0, 0, 0, 0}),
                       b.getDenseI64ArrayAttr({n, m, out[0], out[1]}),
                       b.getDenseI64ArrayAttr({1, 1, 1, 1}));
  return y;
}

/// `x`'s [offsets, offsets + sizes) box when its sizes are symbolic.
Value sizedBox(OnnxNode &node, Value x, ArrayRef<int64_t> offsets,
               ArrayRef<SymSize> sizes) {
  OpBuilder &b = node.builder;
  Location loc = node.loc();
  SmallVector<Value> offs, lens;
  SmallVector<int64_t> shape;
  for (auto [o, n] : llvm::zip(offsets, sizes)) {
    offs.push_back(arith::ConstantIndexOp::create(b, loc, o));
    lens.push_back(node.sizes->materialize(b, loc, n));
    shape.push_back(n.getConstant().value_or(ShapedType::kDynamic));
  }
  auto op = SizedSliceOp::create(
      b, loc, RankedTensorType::get(shape, typeOf(x).getElementType()), x, offs,
      lens, b.getDenseI64ArrayAttr(SmallVector<int64_t>(sizes.size(), 1)));
  node.sizes->setDims(op.getResult(), sizes);
  return op.getResult();
}

/// byPhases for an input whose batch, height and width are symbolic: the
/// same phases, taps and paddings (each a constant: a phase has `len +
/// perOff` outputs along an axis of length `len`), the phase results sized
/// and interleaved with sized ops. The output along axis i is `strides[i] *
/// len + extra[i]`.
FailureOr<Value>
byPhasesSymbolic(OnnxNode &node, Value x, Value w,
                 std::optional<DenseElementsAttr> wc, Value bias, int64_t group,
                 ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                 ArrayRef<int64_t> padBegin, ArrayRef<int64_t> extra) {
  auto &b = node.builder;
  SymbolicSizes &sizes = *node.sizes;
  int64_t m = typeOf(w).getDimSize(1) * group;
  SymSize n = sizes.dim(x, 0), len[2] = {sizes.dim(x, 2), sizes.dim(x, 3)};
  auto plus = [](const SymSize &a, int64_t c) {
    return SymSize::add(a, SymSize::constant(c));
  };
  auto times = [](int64_t c, const SymSize &a) {
    return SymSize::mul(SymSize::constant(c), a);
  };
  int64_t perOff[2];
  SmallVector<SymSize> per, out;
  for (int i = 0; i < 2; ++i) {
    perOff[i] = floorDiv(extra[i] + strides[i] - 1, strides[i]);
    std::optional<SymSize> p = plus(len[i], perOff[i]);
    std::optional<SymSize> sl = times(strides[i], len[i]);
    std::optional<SymSize> o = sl ? plus(*sl, extra[i]) : std::nullopt;
    std::optional<int64_t> least = o ? sizes.smallest(*o) : std::nullopt;
    // An axis that may be empty (a count read from the data, or no lower
    // bound given) but has output at length 1: a run at length 0 fails, as
    // the phases need a row to read; a subgraph's guard cannot stop them.
    if (least && *least <= 0 && strides[i] + extra[i] > 0 &&
        !inSubgraph(node)) {
      Location loc = node.loc();
      Value nonEmpty = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::sgt, sizes.materialize(b, loc, len[i]),
          arith::ConstantIndexOp::create(b, loc, 0));
      GuardOp::create(
          b, loc,
          tensor::FromElementsOp::create(
              b, loc, RankedTensorType::get({}, b.getI1Type()), nonEmpty),
          b.getStringAttr(node.describe() + ": input dimension " +
                          Twine(i + 2) +
                          " is empty; a transposed convolution needs at "
                          "least one row there"));
      least = 1;
    }
    if (!p || !o || !least || *least <= 0) {
      node.fail() << "pads leave no output at the smallest input size";
      return failure();
    }
    per.push_back(*p);
    out.push_back(*o);
  }
  SmallVector<Value> rows;
  for (int64_t py = 0; py < strides[0]; ++py) {
    SmallVector<Value> cols;
    for (int64_t px = 0; px < strides[1]; ++px) {
      SmallVector<int64_t> taps[2], left(2), right(2);
      for (int i = 0; i < 2; ++i) {
        int64_t ph = i ? px : py, s = strides[i];
        int64_t r = floorMod(ph + padBegin[i], s),
                shift = floorDiv(ph + padBegin[i], s);
        for (int64_t t = r; t < kernel[i]; t += s)
          taps[i].insert(taps[i].begin(), t);
        int64_t kr = taps[i].size();
        left[i] = kr - 1 - shift;
        right[i] = perOff[i] + kr - 1 - left[i];
      }
      SmallVector<SymSize> phaseDims = {n, SymSize::constant(m), per[0],
                                        per[1]};
      FailureOr<Value> y;
      if (taps[0].empty() || taps[1].empty()) {
        // No tap reaches these outputs: only the bias.
        Type elt = typeOf(x).getElementType();
        auto scalar = RankedTensorType::get({}, elt);
        Value zero = ConstantOp::create(
            b, node.loc(), scalar,
            DenseElementsAttr::get(scalar,
                                   cast<TypedAttr>(b.getZeroAttr(elt))));
        y = expandToSizes(node, zero, phaseDims);
        if (succeeded(y) && bias) {
          FailureOr<Value> bb = reshapeTo(node, bias, {m, 1, 1});
          if (failed(bb) || failed(y = build<AddOp>(node, *y, *bb)))
            return failure();
        }
      } else {
        FailureOr<Value> f = filterFor(node, w, wc, group, taps[0], taps[1]);
        if (failed(f))
          return failure();
        SmallVector<int64_t> pads = {
            std::max<int64_t>(left[0], 0), std::max<int64_t>(left[1], 0),
            std::max<int64_t>(right[0], 0), std::max<int64_t>(right[1], 0)};
        y = build<Conv2DOp>(node, x, *f, bias, b.getDenseI64ArrayAttr({1, 1}),
                            b.getDenseI64ArrayAttr({1, 1}),
                            b.getDenseI64ArrayAttr(pads),
                            b.getI64IntegerAttr(group));
        if (failed(y))
          return failure();
        // The convolution gives len + pads - taps + 1 rows (recorded, so
        // that later sizes compare); the phase's start at -left (cropped)
        // and per rows.
        SmallVector<SymSize> convDims = {n, SymSize::constant(m)};
        bool exact = true;
        for (int i = 0; i < 2; ++i) {
          int64_t off = pads[i] + pads[2 + i] - (int64_t)taps[i].size() + 1;
          std::optional<SymSize> d = plus(len[i], off);
          if (!d) {
            node.fail() << "the phase sizes overflow";
            return failure();
          }
          convDims.push_back(*d);
          exact &= off == perOff[i];
        }
        sizes.setDims(*y, convDims);
        int64_t cy = std::max<int64_t>(-left[0], 0),
                cx = std::max<int64_t>(-left[1], 0);
        if (cy || cx || !exact)
          y = sizedBox(node, *y, {0, 0, cy, cx}, phaseDims);
      }
      if (failed(y) ||
          failed(y = reshapeToSizes(node, *y,
                                    {n, SymSize::constant(m), per[0],
                                     SymSize::constant(1), per[1],
                                     SymSize::constant(1)})))
        return failure();
      cols.push_back(*y);
    }
    FailureOr<Value> row =
        cols.size() == 1
            ? FailureOr<Value>(cols[0])
            : build<ConcatOp>(node, ValueRange(cols), b.getI64IntegerAttr(5));
    if (failed(row))
      return failure();
    rows.push_back(*row);
  }
  FailureOr<Value> y =
      rows.size() == 1
          ? FailureOr<Value>(rows[0])
          : build<ConcatOp>(node, ValueRange(rows), b.getI64IntegerAttr(3));
  std::optional<SymSize> fy = times(strides[0], per[0]),
                         fx = times(strides[1], per[1]);
  if (failed(y) || !fy || !fx ||
      failed(y = reshapeToSizes(node, *y, {n, SymSize::constant(m), *fy, *fx})))
    return failure();
  if (*fy != out[0] || *fx != out[1])
    y = sizedBox(node, *y, {0, 0, 0, 0},
                 {n, SymSize::constant(m), out[0], out[1]});
  return y;
}

/// A 2-D transposed convolution with explicit [top, left, bottom, right]
/// pads; `wc` is the filter's value when it is a constant.
FailureOr<Value> convTranspose2D(OnnxNode &node, Value x, Value w,
                                 std::optional<DenseElementsAttr> wc,
                                 Value bias, int64_t group,
                                 ArrayRef<int64_t> kernel,
                                 ArrayRef<int64_t> strides,
                                 ArrayRef<int64_t> dilations,
                                 ArrayRef<int64_t> outPad,
                                 ArrayRef<int64_t> pads) {
  int64_t c = typeOf(x).getDimSize(1);
  auto &b = node.builder;
  ArrayRef<int64_t> xs = typeOf(x).getShape();
  int64_t n = xs[0], h = xs[2], wd = xs[3];
  if ((strides[0] > 1 || strides[1] > 1) && dilations[0] == 1 && dilations[1] == 1) {
    SmallVector<int64_t> out(2);
    for (int i = 0; i < 2; ++i)
      out[i] = strides[i] * (xs[2 + i] - 1) + outPad[i] + kernel[i] - pads[i] - pads[2 + i];
    if (out[0] <= 0 || out[1] <= 0) {
      node.fail() << "pads leave no output";
      return failure();
    }
    return byPhases(node, x, w, wc, bias, group, kernel, strides,
                    {pads[0], pads[1]}, out);
  }

  // Zeros between input elements: [N,C,H,W] -> [N,C,H,1,W,1], pad the unit
  // dimensions to the strides, and merge. The s-1 trailing zeros of the last
  // element are taken off the end padding below.
  if (strides[0] > 1 || strides[1] > 1) {
    FailureOr<Value> v = reshapeTo(node, x, {n, c, h, 1, wd, 1});
    SmallVector<int64_t> zp(12, 0);
    zp[6 + 3] = strides[0] - 1;
    zp[6 + 5] = strides[1] - 1;
    if (failed(v) ||
        failed(v = build<PadOp>(node, *v, b.getDenseI64ArrayAttr(zp),
                                b.getF32FloatAttr(0.0f))) ||
        failed(v = reshapeTo(node, *v, {n, c, h * strides[0], wd * strides[1]})))
      return failure();
    x = *v;
  }

  // Filter: flipped, channels swapped per group.
  FailureOr<Value> filterV =
      filterFor(node, w, wc, group, reversed(kernel[0]), reversed(kernel[1]));
  if (failed(filterV))
    return failure();
  Value filter = *filterV;

  // Padding of the zero-inserted input; a negative amount crops the result.
  SmallVector<int64_t> convPads(4), crop(4);
  for (int64_t i = 0; i < 2; ++i) {
    int64_t reach = dilations[i] * (kernel[i] - 1);
    int64_t begin = reach - pads[i],
            end = reach - pads[2 + i] + outPad[i] - (strides[i] - 1);
    convPads[i] = std::max<int64_t>(begin, 0);
    convPads[2 + i] = std::max<int64_t>(end, 0);
    crop[i] = std::max<int64_t>(-begin, 0);
    crop[2 + i] = std::max<int64_t>(-end, 0);
  }
  FailureOr<Value> y = build<Conv2DOp>(
      node, x, filter, bias, b.getDenseI64ArrayAttr({1, 1}),
      b.getDenseI64ArrayAttr(dilations), b.getDenseI64ArrayAttr(convPads),
      b.getI64IntegerAttr(group));
  if (failed(y))
    return failure();
  if (llvm::any_of(crop, [](int64_t v) { return v != 0; })) {
    ArrayRef<int64_t> ys = typeOf(*y).getShape();
    int64_t oh = ys[2] - crop[0] - crop[2], ow = ys[3] - crop[1] - crop[3];
    if (oh <= 0 || ow <= 0) {
      node.fail() << "pads leave no output";
      return failure();
    }
    y = build<SliceOp>(node, *y, b.getDenseI64ArrayAttr({0, 0, crop[0], crop[1]}),
                       b.getDenseI64ArrayAttr({ys[0], ys[1], oh, ow}),
                       b.getDenseI64ArrayAttr({1, 1, 1, 1}));
    if (failed(y))
      return failure();
  }
  return y;
}
} // namespace

DenseElementsAttr mlir::kiln::depthTap(DenseElementsAttr w, int64_t k) {
  auto type = cast<RankedTensorType>(w.getType());
  ArrayRef<int64_t> s = type.getShape();
  auto outType = RankedTensorType::get({s[0], s[1], s[3], s[4]},
                                       type.getElementType());
  if (w.isSplat())
    return w.resizeSplat(outType);
  unsigned bytes = type.getElementTypeBitWidth() / 8;
  int64_t plane = s[3] * s[4] * bytes;
  ArrayRef<char> src = w.getRawData();
  std::vector<char> dst(outType.getNumElements() * bytes);
  for (int64_t cm = 0; cm < s[0] * s[1]; ++cm)
    std::memcpy(&dst[cm * plane], &src[(cm * s[2] + k) * plane], plane);
  return DenseElementsAttr::getFromRawBuffer(outType, dst);
}

namespace {
/// 3-D by depth: every depth slice of the input (batched as N * D) goes
/// through the 2-D transposed convolution with each depth tap of the filter;
/// tap k's results land at depths id * sd + k * dd - pad (zeros inserted by
/// reshape/pad, shifted by pad/slice) and the taps add up.
FailureOr<Value> convTranspose3D(OnnxNode &node, Value x, Value w,
                                 std::optional<DenseElementsAttr> wc,
                                 Value bias, int64_t group,
                                 ArrayRef<int64_t> kernel,
                                 ArrayRef<int64_t> strides,
                                 ArrayRef<int64_t> dilations,
                                 ArrayRef<int64_t> outPad,
                                 ArrayRef<int64_t> pads) {
  auto &b = node.builder;
  ArrayRef<int64_t> xs = typeOf(x).getShape(), ws = typeOf(w).getShape();
  int64_t n = xs[0], c = xs[1], d = xs[2], h = xs[3], wd = xs[4];
  int64_t m = ws[1] * group, sd = strides[0];
  int64_t od = sd * (d - 1) + outPad[0] + (kernel[0] - 1) * dilations[0] + 1 -
               pads[0] - pads[3];
  if (od <= 0) {
    node.fail() << "pads leave no output";
    return failure();
  }
  FailureOr<Value> xb = build<TransposeOp>(node, x, b.getDenseI64ArrayAttr({0, 2, 1, 3, 4}));
  if (failed(xb) || failed(xb = reshapeTo(node, *xb, {n * d, c, h, wd})))
    return failure();
  Value acc;
  int64_t oh = 0, ow = 0;
  for (int64_t k = 0; k < kernel[0]; ++k) {
    std::optional<DenseElementsAttr> tapC;
    Value tap;
    if (wc && wc->getElementType().getIntOrFloatBitWidth() % 8 == 0) {
      tapC = depthTap(*wc, k);
      tap = ConstantOp::create(b, node.loc(), tapC->getType(), *tapC);
    } else {
      FailureOr<Value> t = build<SliceOp>(
          node, w, b.getDenseI64ArrayAttr({0, 0, k, 0, 0}),
          b.getDenseI64ArrayAttr({ws[0], ws[1], 1, ws[3], ws[4]}),
          b.getDenseI64ArrayAttr({1, 1, 1, 1, 1}));
      if (failed(t) || failed(t = reshapeTo(node, *t, {ws[0], ws[1], ws[3], ws[4]})))
        return failure();
      tap = *t;
    }
    FailureOr<Value> z = convTranspose2D(
        node, *xb, tap, tapC, Value(), group, {kernel[1], kernel[2]},
        {strides[1], strides[2]}, {dilations[1], dilations[2]},
        {outPad[1], outPad[2]}, {pads[1], pads[2], pads[4], pads[5]});
    if (failed(z))
      return failure();
    oh = typeOf(*z).getDimSize(2);
    ow = typeOf(*z).getDimSize(3);
    int64_t inner = m * oh * ow, len = d * sd;
    if (failed(z = reshapeTo(node, *z, {n, d, 1, inner})))
      return failure();
    if (sd > 1 &&
        failed(z = build<PadOp>(node, *z, b.getDenseI64ArrayAttr({0, 0, 0, 0, 0, 0, sd - 1, 0}),
                                b.getF32FloatAttr(0.0f))))
      return failure();
    if (failed(z = reshapeTo(node, *z, {n, len, inner})))
      return failure();
    // Output depth o reads position o - shift of the zero-inserted slices.
    int64_t shift = k * dilations[0] - pads[0];
    int64_t front = std::max<int64_t>(shift, 0),
            back = std::max<int64_t>(od - shift - len, 0);
    if ((front || back) &&
        failed(z = build<PadOp>(node, *z, b.getDenseI64ArrayAttr({0, front, 0, 0, back, 0}),
                                b.getF32FloatAttr(0.0f))))
      return failure();
    int64_t offset = front - shift;
    if (offset != 0 || typeOf(*z).getDimSize(1) != od)
      z = build<SliceOp>(node, *z, b.getDenseI64ArrayAttr({0, offset, 0}),
                         b.getDenseI64ArrayAttr({n, od, inner}),
                         b.getDenseI64ArrayAttr({1, 1, 1}));
    if (failed(z) || (acc && failed(z = build<AddOp>(node, acc, *z))))
      return failure();
    acc = *z;
  }
  FailureOr<Value> y = reshapeTo(node, acc, {n, od, m, oh, ow});
  if (failed(y) ||
      failed(y = build<TransposeOp>(node, *y, b.getDenseI64ArrayAttr({0, 2, 1, 3, 4}))))
    return failure();
  if (bias) {
    FailureOr<Value> bb = reshapeTo(node, bias, {m, 1, 1, 1});
    if (failed(bb) || failed(y = build<AddOp>(node, *y, *bb)))
      return failure();
  }
  return y;
}
} // namespace

FailureOr<SmallVector<Value>> mlir::kiln::convertConvTranspose(OnnxNode &node) {
  FailureOr<Value> xv = node.rankedInput(0), wv = node.rankedInput(1);
  if (failed(xv) || failed(wv))
    return failure();
  // Symbolic channels are the filter's dimension 0, checked at run time.
  if (auto w = typeOf(*wv); w.hasStaticShape() && w.getRank() > 1)
    xv = pinDims(node, *xv, {{1, w.getDimSize(0)}},
                 "the filter needs the input's");
  if (failed(xv))
    return failure();
  RankedTensorType xt = typeOf(*xv), wt = typeOf(*wv);
  // A symbolic batch and spatial sizes take the phase form (below); the
  // channels and the filter are static.
  bool symbolic = !xt.hasStaticShape() && node.sizes && xt.getRank() >= 3 &&
                  !xt.isDynamicDim(1) && xt.getRank() <= 4;
  if ((!symbolic && failed(node.requireStaticShape(xt))) ||
      failed(node.requireStaticShape(wt)))
    return failure();
  int64_t spatial = xt.getRank() - 2;
  if (spatial < 1 || spatial > 3) {
    node.fail() << "only 1-D, 2-D and 3-D transposed convolutions are "
                   "supported; the input has "
                << spatial << " spatial dimensions";
    return failure();
  }
  if (wt.getRank() != xt.getRank()) {
    node.fail() << "the filter has rank " << wt.getRank()
                << "; expected the input's rank " << xt.getRank();
    return failure();
  }
  int64_t group = node.intAttr("group", 1), c = xt.getDimSize(1);
  if (group <= 0 || c % group != 0 || wt.getDimSize(0) != c) {
    node.fail() << "input channels " << c << ", filter dimension 0 "
                << wt.getDimSize(0) << " and group " << group
                << " disagree (expects C = filter dimension 0, divisible by group)";
    return failure();
  }
  auto list = [&](StringRef name, int64_t dflt) {
    return node.intsAttr(name).value_or(SmallVector<int64_t>(spatial, dflt));
  };
  SmallVector<int64_t> kernel = node.intsAttr("kernel_shape").value_or(
      llvm::to_vector(wt.getShape().drop_front(2)));
  SmallVector<int64_t> strides = list("strides", 1),
                       dilations = list("dilations", 1),
                       outPad = list("output_padding", 0);
  SmallVector<int64_t> pads =
      node.intsAttr("pads").value_or(SmallVector<int64_t>(2 * spatial, 0));
  if ((int64_t)kernel.size() != spatial || (int64_t)strides.size() != spatial ||
      (int64_t)dilations.size() != spatial || (int64_t)outPad.size() != spatial ||
      (int64_t)pads.size() != 2 * spatial) {
    node.fail() << "kernel_shape, strides, dilations and output_padding need "
                << spatial << " values and pads " << 2 * spatial;
    return failure();
  }
  for (int64_t i = 0; i < spatial; ++i) {
    if (kernel[i] != wt.getDimSize(2 + i)) {
      node.fail() << "kernel_shape " << kernel[i] << " disagrees with the filter";
      return failure();
    }
    if (strides[i] <= 0 || dilations[i] <= 0 || outPad[i] < 0) {
      node.fail() << "strides and dilations must be positive and "
                     "output_padding non-negative";
      return failure();
    }
  }

  // Explicit pads from output_shape or auto_pad: the total padding is what
  // makes the output the requested size; SAME_UPPER puts the odd element at
  // the end.
  std::string autoPad = node.strAttr("auto_pad", "NOTSET");
  std::optional<SmallVector<int64_t>> outShape = node.intsAttr("output_shape");
  if (outShape && (int64_t)outShape->size() > spatial)
    outShape->erase(outShape->begin(), outShape->end() - spatial);
  if (outShape && (int64_t)outShape->size() != spatial) {
    node.fail() << "output_shape has " << outShape->size()
                << " values; expected " << spatial;
    return failure();
  }
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER") {
    node.fail() << "unknown auto_pad '" << autoPad
                << "'; expected NOTSET, VALID, SAME_UPPER or SAME_LOWER";
    return failure();
  }
  if (autoPad == "VALID")
    pads.assign(2 * spatial, 0);
  if (symbolic &&
      (outShape || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER" ||
       llvm::any_of(dilations, [](int64_t d) { return d != 1; }) ||
       llvm::all_of(strides, [](int64_t s) { return s == 1; }))) {
    node.fail() << "with symbolic sizes, ConvTranspose supports strides "
                   "above 1 without dilation, output_shape or SAME padding; "
                   "give the symbolic dimensions one size to compile this "
                   "node";
    return failure();
  }
  if (outShape || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t in = xt.getDimSize(2 + i);
      int64_t out = outShape ? (*outShape)[i] : in * strides[i];
      int64_t total = strides[i] * (in - 1) + outPad[i] +
                      (kernel[i] - 1) * dilations[i] + 1 - out;
      int64_t half = floorDiv(total, 2);
      bool upper = autoPad == "SAME_UPPER";
      pads[i] = upper ? half : total - half;
      pads[spatial + i] = upper ? total - half : half;
    }
  }

  // Lift 1-D to 2-D with a unit height.
  Value x = *xv, w = *wv;
  if (spatial == 1) {
    kernel.insert(kernel.begin(), 1);
    strides.insert(strides.begin(), 1);
    dilations.insert(dilations.begin(), 1);
    outPad.insert(outPad.begin(), 0);
    pads = {0, pads[0], 0, pads[1]};
    FailureOr<Value> xl = liftTo2D(node, x), wl = liftTo2D(node, w);
    if (failed(xl) || failed(wl))
      return failure();
    x = *xl;
    w = *wl;
  }
  std::optional<DenseElementsAttr> wc = node.constantInput(1);
  if (wc)
    wc = wc->reshape(cast<ShapedType>(w.getType()));
  if (spatial == 3)
    return one(convTranspose3D(node, x, w, wc, node.input(2), group, kernel,
                               strides, dilations, outPad, pads));
  FailureOr<Value> y;
  if (symbolic) {
    SmallVector<int64_t> extra(2);
    for (int i = 0; i < 2; ++i)
      extra[i] = outPad[i] + kernel[i] - pads[i] - pads[2 + i] - strides[i];
    y = byPhasesSymbolic(node, x, w, wc, node.input(2), group, kernel, strides,
                         {pads[0], pads[1]}, extra);
  } else {
    y = convTranspose2D(node, x, w, wc, node.input(2), group, kernel, strides,
                        dilations, outPad, pads);
  }
  return one(spatial == 1 ? lowerTo1D(node, y) : y);
}
