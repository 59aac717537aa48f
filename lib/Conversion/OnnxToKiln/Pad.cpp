//===- Pad.cpp - ONNX Pad and CenterCropPad ---------------------*- C++ -*-===//
#include "ShapeInputs.h"
#include "SymbolicSizes.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Pad 18+'s constant `pads` over constant `axes`, widened to every
/// dimension (the others padded by 0).
FailureOr<SmallVector<int64_t>> padsOverAxes(OnnxNode &node,
                                             ArrayRef<int64_t> pads,
                                             ArrayRef<int64_t> axes,
                                             int64_t rank) {
  if (pads.size() != 2 * axes.size()) {
    node.fail() << "expects " << 2 * axes.size() << " pads for " << axes.size()
                << " axes, got " << pads.size();
    return failure();
  }
  SmallVector<int64_t> full(2 * rank, 0);
  for (auto [i, a] : llvm::enumerate(axes)) {
    FailureOr<int64_t> axis = normalizeAxis(node, a, rank);
    if (failed(axis))
      return failure();
    full[*axis] = pads[i];
    full[*axis + rank] = pads[i + axes.size()];
  }
  return full;
}

/// Pad's value for "constant" mode as a rank-0 tensor of `x`'s element
/// type: input 2 (opset 11+, constant or not), or 0.
FailureOr<Value> padValue(OnnxNode &node, Value x) {
  if (node.opset >= 11 && node.input(2)) {
    FailureOr<Value> v = node.rankedInput(2);
    if (failed(v) || typeOf(*v).getRank() == 0)
      return v;
    return reshapeTo(node, *v, {});
  }
  Type elt = typeOf(x).getElementType();
  auto t = RankedTensorType::get({}, elt);
  return Value(ConstantOp::create(
      node.builder, node.loc(), t,
      DenseElementsAttr::get(t, node.builder.getZeroAttr(elt))));
}

/// padByGather for an input of symbolic sizes: `pads` (before, then after,
/// one per dimension) are sizes the graph computed, constants or run-time
/// amounts such as Swin's `(7 - w % 7) % 7`. Per padded dimension of
/// run-time size n, output position j (an iota of the padded size) reads
/// j - before: masked to the pad value outside [0, n) (constant), mirrored
/// (reflect, period 2 (n - 1)), clamped (edge) or wrapped, with n and
/// `before` read at run time. Negative pads crop.
FailureOr<SmallVector<Value>> padByGatherSymbolic(OnnxNode &node, Value x,
                                                  StringRef mode,
                                                  ArrayRef<SymSize> pads) {
  RankedTensorType xt = typeOf(x);
  int64_t rank = xt.getRank();
  if ((int64_t)pads.size() != 2 * rank) {
    node.fail() << "expects " << 2 * rank << " pads, got " << pads.size();
    return failure();
  }
  OpBuilder &b = node.builder;
  Type i64 = b.getI64Type();
  auto c = [&](int64_t v) { return scalarConstant(node, i64, v); };
  auto bf = [&](bool v) { return b.getBoolAttr(v); };
  Value value;
  if (mode == "constant") {
    FailureOr<Value> v = padValue(node, x);
    if (failed(v))
      return failure();
    value = *v;
  }
  Value y = x;
  for (int64_t d = 0; d < rank; ++d) {
    const SymSize &lo = pads[d], &hi = pads[d + rank];
    if (lo.isConstant(0) && hi.isConstant(0))
      continue;
    SymSize n = node.sizes->dim(x, d);
    std::optional<SymSize> outN = SymSize::add(n, lo);
    if (outN)
      outN = SymSize::add(*outN, hi);
    std::optional<int64_t> least = node.sizes->smallest(n);
    std::optional<int64_t> outLeast =
        outN ? node.sizes->smallest(*outN) : std::nullopt;
    if (!outN || !least || !outLeast || *outLeast < 0) {
      node.fail() << "cannot pad dimension " << d << " (" << sizeStr(node, n)
                  << ") by " << sizeStr(node, lo) << " before and "
                  << sizeStr(node, hi) << " after in mode '" << mode
                  << "': the result may have a negative size at the sizes in "
                     "range; raise the lower bounds of the symbolic "
                     "dimensions, or bound the pads the graph computes";
      return failure();
    }
    // An axis that may be empty at run time (a size read from the data,
    // such as the boxes a NonZero kept): constant mode reads one more
    // element, padded on at the end and masked like the rest; the other
    // modes have nothing to read, and a guard refuses an empty axis at
    // run time where the result is not empty (ONNX Runtime fails there
    // too).
    bool mayBeEmpty = *least < 1;
    if (mayBeEmpty && mode != "constant" && inSubgraph(node)) {
      node.fail() << "cannot pad dimension " << d << " (" << sizeStr(node, n)
                  << ") in mode '" << mode
                  << "' inside a subgraph: it may be empty at run time, and "
                     "a run-time check there cannot stop the read; pad it "
                     "in the main graph or in mode 'constant'";
      return failure();
    }
    FailureOr<Value> iota = iotaOfSize(node, *outN, i64, "the padded axis");
    FailureOr<Value> nv = sizeAsTensor(node, n, i64);
    FailureOr<Value> before = sizeAsTensor(node, lo, i64);
    if (failed(iota) || failed(nv) || failed(before))
      return failure();
    Value readable = *nv; // one past the last index the gather may read
    if (mayBeEmpty && mode == "constant") {
      SmallVector<int64_t> one(2 * rank, 0);
      one[d + rank] = 1;
      FailureOr<Value> widened = build<PadOp>(
          node, y, b.getDenseI64ArrayAttr(one), b.getF32FloatAttr(0.0f));
      FailureOr<Value> n1 = build<AddOp>(node, *nv, c(1));
      if (failed(widened) || failed(n1))
        return failure();
      y = *widened;
      readable = *n1;
    } else if (mayBeEmpty) {
      FailureOr<Value> outV = sizeAsTensor(node, *outN, i64);
      FailureOr<Value> ok, noOutput;
      if (succeeded(outV))
        ok = build<GreaterOp>(node, *nv, c(0));
      if (succeeded(ok))
        noOutput = build<EqualOp>(node, *outV, c(0));
      if (succeeded(noOutput))
        ok = build<OrOp>(node, *ok, *noOutput);
      if (failed(ok))
        return failure();
      GuardOp::create(
          b, node.loc(), *ok,
          b.getStringAttr(node.describe() + ": dimension " + std::to_string(d) +
                          " of the input is empty at run time; "
                          "mode '" +
                          mode.str() + "' has no value to pad it with"));
    }
    FailureOr<Value> src = build<SubOp>(node, *iota, *before), idx;
    if (failed(src))
      return failure();
    if (mode == "reflect") {
      // A period of at least 1 (n = 1 reads its one element).
      FailureOr<Value> period = build<SubOp>(node, *nv, c(1));
      if (succeeded(period))
        period = build<MulOp>(node, *period, c(2));
      if (succeeded(period))
        period = build<MaxOp>(node, ValueRange{*period, c(1)});
      FailureOr<Value> t;
      if (succeeded(period))
        t = build<ModOp>(node, *src, *period, bf(false));
      FailureOr<Value> inside, mirrored;
      if (succeeded(t))
        inside = build<LessOp>(node, *t, *nv);
      if (succeeded(inside))
        mirrored = build<SubOp>(node, *period, *t);
      if (failed(mirrored))
        return failure();
      idx = build<WhereOp>(node, *inside, *t, *mirrored);
    } else if (mode == "wrap") {
      // A divisor of at least 1 where the axis may be empty (the guard
      // fails that run; no division by zero meanwhile).
      FailureOr<Value> divisor = mayBeEmpty
                                     ? build<MaxOp>(node, ValueRange{*nv, c(1)})
                                     : FailureOr<Value>(*nv);
      if (succeeded(divisor))
        idx = build<ModOp>(node, *src, *divisor, bf(false));
    } else {
      // Edge, and the in-range positions of constant mode.
      FailureOr<Value> last = build<SubOp>(node, readable, c(1));
      if (succeeded(last))
        idx = build<MinOp>(node, ValueRange{*src, *last});
      if (succeeded(idx))
        idx = build<MaxOp>(node, ValueRange{*idx, c(0)});
    }
    FailureOr<Value> g;
    if (succeeded(idx))
      g = build<GatherOp>(node, y, *idx, b.getI64IntegerAttr(d));
    if (failed(g))
      return failure();
    y = *g;
    if (mode != "constant")
      continue;
    // Positions outside [0, n) take the value.
    FailureOr<Value> low = build<LessOp>(node, *src, c(0)), high, outside;
    if (succeeded(low))
      high = build<LessOp>(node, *src, *nv);
    if (succeeded(high))
      high = build<NotOp>(node, *high);
    if (succeeded(high))
      outside = build<OrOp>(node, *low, *high);
    if (failed(outside))
      return failure();
    SmallVector<SymSize> maskSizes(rank, SymSize::constant(1));
    maskSizes[d] = *outN;
    FailureOr<Value> mask = reshapeToSizes(node, *outside, maskSizes);
    FailureOr<Value> w;
    if (succeeded(mask))
      w = build<WhereOp>(node, *mask, value, y);
    if (failed(w))
      return failure();
    y = *w;
  }
  return SmallVector<Value>{y};
}

/// Pad 11+ in any mode by gathers: output position j of dimension d reads
/// input position j - pad_before[d], mapped into range by the mode
/// (constant: masked to `value` outside; edge: clamped; reflect: mirrored;
/// wrap: modulo). Used for edge/reflect/wrap and for run-time pads or values.
FailureOr<SmallVector<Value>>
padByGather(OnnxNode &node, Value x, StringRef mode,
            std::optional<SmallVector<int64_t>> pads) {
  if (!typeOf(x).hasStaticShape() && node.sizes) {
    // Constant pads, or amounts the graph computed from sizes.
    SmallVector<SymSize> sym;
    if (pads) {
      for (int64_t p : *pads)
        sym.push_back(SymSize::constant(p));
    } else if (node.opset >= 11 && node.input(1)) {
      if (std::optional<SmallVector<SymSize>> c =
              node.sizes->contents(node.input(1)))
        sym = *c;
    }
    bool withAxes = node.opset >= 18 && node.input(3);
    std::optional<SmallVector<int64_t>> axes =
        withAxes ? node.constantInts(3) : std::nullopt;
    int64_t rank = typeOf(x).getRank();
    if (!sym.empty() && axes) {
      if (sym.size() != 2 * axes->size()) {
        node.fail() << "expects " << 2 * axes->size() << " pads for "
                    << axes->size() << " axes, got " << sym.size();
        return failure();
      }
      SmallVector<SymSize> full(2 * rank, SymSize::constant(0));
      for (auto [i, a] : llvm::enumerate(*axes)) {
        FailureOr<int64_t> axis = normalizeAxis(node, a, rank);
        if (failed(axis))
          return failure();
        full[*axis] = sym[i];
        full[*axis + rank] = sym[i + axes->size()];
      }
      sym = std::move(full);
    }
    if (!sym.empty() && (!withAxes || axes))
      return padByGatherSymbolic(node, x, mode, sym);
    node.fail() << "pads of a tensor with symbolic dimensions (" << typeOf(x)
                << ") must be constants or sizes computed from Shape, with "
                   "constant axes";
    return failure();
  }
  if (failed(node.requireStaticShape(typeOf(x))))
    return failure();
  ArrayRef<int64_t> in = typeOf(x).getShape();
  int64_t rank = in.size();
  // Pad 18+: `pads` covers the dimensions `axes` names.
  bool withAxes = node.opset >= 18 && node.input(3);
  std::optional<SmallVector<int64_t>> constAxes;
  if (withAxes) {
    constAxes = node.constantInts(3);
    if (pads && constAxes) {
      FailureOr<SmallVector<int64_t>> full =
          padsOverAxes(node, *pads, *constAxes, rank);
      if (failed(full))
        return failure();
      pads = *full;
      withAxes = false;
    } else {
      pads.reset();
    }
  }
  IndexMath m{node};
  SmallVector<int64_t> out;
  SmallVector<Value> before;
  if (pads) {
    if ((int64_t)pads->size() != 2 * rank) {
      node.fail() << "expects " << 2 * rank << " pads, got " << pads->size();
      return failure();
    }
    for (int64_t d = 0; d < rank; ++d) {
      out.push_back(in[d] + (*pads)[d] + (*pads)[d + rank]);
      before.push_back(m.c((*pads)[d]));
    }
  } else {
    FailureOr<RankedTensorType> declared = declaredResult(node, 0, "pads");
    if (failed(declared))
      return failure();
    if (declared->getRank() != rank) {
      node.fail() << "the declared output rank differs from the input rank";
      return failure();
    }
    int64_t k = rank;
    if (withAxes) {
      auto at = dyn_cast<RankedTensorType>(node.input(3).getType());
      if (!at || !at.hasStaticShape() || at.getRank() != 1) {
        node.fail() << "axes must be a 1-D tensor of static length";
        return failure();
      }
      k = at.getNumElements();
      if (k > rank) {
        node.fail() << "axes has " << k << " values; the input has rank "
                    << rank << " and an axis may be named once";
        return failure();
      }
    }
    auto pt = dyn_cast<RankedTensorType>(node.input(1).getType());
    if (!pt || !pt.hasStaticShape() || pt.getNumElements() != 2 * k) {
      node.fail() << "expects " << 2 * k << " pads";
      return failure();
    }
    out.assign(declared->getShape().begin(), declared->getShape().end());
    Value ok;
    // With axes, dimension d takes the pads of the axis that names it (the
    // last one, if repeated) and 0 if none does; every axis must be in
    // [-rank, rank).
    SmallVector<Value> axisOf;
    for (int64_t i = 0; withAxes && i < k; ++i) {
      Value a = constAxes ? m.c((*constAxes)[i]) : m.at(3, i);
      Value inRange = m.land(m.less(m.c(-rank - 1), a), m.less(a, m.c(rank)));
      ok = ok ? m.land(ok, inRange) : inRange;
      axisOf.push_back(m.where(m.less(a, m.c(0)), m.add(a, m.c(rank)), a));
    }
    for (int64_t d = 0; d < rank; ++d) {
      Value lo, hi;
      if (!withAxes) {
        lo = m.at(1, d);
        hi = m.at(1, d + rank);
      } else {
        lo = hi = m.c(0);
        for (int64_t i = 0; i < k; ++i) {
          Value named = m.eq(axisOf[i], m.c(d));
          lo = m.where(named, m.at(1, i), lo);
          hi = m.where(named, m.at(1, i + k), hi);
        }
      }
      before.push_back(lo);
      Value dimOk = m.eq(m.add(lo, hi), m.c(out[d] - in[d]));
      ok = ok ? m.land(ok, dimOk) : dimOk;
    }
    if (!m.ok)
      return failure();
    guardInput(node, ok, 1,
               "must pad the input to the declared output shape this model "
               "was compiled for");
  }
  Value y = x, mask;
  for (int64_t d = 0; d < rank; ++d) {
    if (pads && (*pads)[d] == 0 && (*pads)[d + rank] == 0)
      continue;
    int64_t n = in[d];
    if (n == 0 && mode != "constant") {
      node.fail() << "cannot pad an empty dimension in mode '" << mode << "'";
      return failure();
    }
    Value src = m.sub(m.iota(out[d]), before[d]), idx;
    if (mode == "reflect" && n > 1) {
      int64_t period = 2 * (n - 1);
      FailureOr<Value> t =
          build<ModOp>(node, src, m.c(period), node.builder.getBoolAttr(false));
      Value tv = m.check(t);
      idx = m.where(m.less(tv, m.c(n)), tv, m.sub(m.c(period), tv));
    } else if (mode == "wrap") {
      idx = m.check(
          build<ModOp>(node, src, m.c(n), node.builder.getBoolAttr(false)));
    } else {
      idx = m.clamp(src, m.c(0), m.c(std::max<int64_t>(n - 1, 0)));
    }
    if (mode == "constant") {
      Value inside = m.land(m.less(m.c(-1), src), m.less(src, m.c(n)));
      SmallVector<int64_t> shape(rank, 1);
      shape[d] = out[d];
      Value shaped = m.check(reshapeTo(node, inside, shape));
      mask = mask ? m.land(mask, shaped) : shaped;
    }
    if (!m.ok)
      return failure();
    if (n == 0) {
      node.fail() << "cannot pad an empty dimension by gathering";
      return failure();
    }
    FailureOr<Value> g =
        build<GatherOp>(node, y, idx, node.builder.getI64IntegerAttr(d));
    if (failed(g))
      return failure();
    y = *g;
  }
  if (mode == "constant" && mask) {
    FailureOr<Value> value = padValue(node, x);
    if (failed(value))
      return failure();
    return one(build<WhereOp>(node, mask, y, *value));
  }
  return SmallVector<Value>{y};
}

} // namespace

/// Pad 2 (attributes) and 11+ (inputs). Constant pads and value in
/// "constant" mode become kiln.pad; everything else is gathered
/// (padByGather).
FailureOr<SmallVector<Value>> mlir::kiln::convertPad(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  std::string mode = node.strAttr("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect" &&
      !(mode == "wrap" && node.opset >= 19)) {
    node.fail() << "mode '" << mode << "' is not supported";
    return failure();
  }
  if (node.opset >= 11) {
    std::optional<SmallVector<int64_t>> constPads = node.constantInts(1);
    bool runtimePads = !constPads;
    bool runtimeValue = node.input(2) && !node.constantScalar(2);
    bool negative =
        constPads && llvm::any_of(*constPads, [](int64_t p) { return p < 0; });
    bool intConstant =
        mode == "constant" && !isa<FloatType>(typeOf(*x).getElementType());
    bool runtimeAxes =
        node.opset >= 18 && node.input(3) && !node.constantInts(3);
    if (mode != "constant" || runtimePads || runtimeValue || negative ||
        intConstant || runtimeAxes)
      return padByGather(node, *x, mode, constPads);
  } else if (mode != "constant") {
    // Opset 2: edge and reflect with the pads attribute.
    std::optional<SmallVector<int64_t>> attrPads = node.intsAttr("pads");
    if (!attrPads) {
      node.fail() << "the pads attribute is required";
      return failure();
    }
    return padByGather(node, *x, mode, attrPads);
  }
  std::optional<SmallVector<int64_t>> pads;
  double value = 0.0;
  if (node.opset < 11) {
    pads = node.intsAttr("pads");
    value = node.floatAttr("value", 0.0f);
  } else {
    pads = node.constantInts(1);
    if (node.input(2)) {
      std::optional<double> v = node.constantScalar(2);
      if (!v) {
        node.fail() << "constant_value must be a compile-time constant";
        return failure();
      }
      value = *v;
    }
  }
  if (!pads) {
    node.fail() << "pads must be a compile-time constant";
    return failure();
  }
  // Opset 18: optional axes say which dimensions `pads` covers (run-time
  // axes were gathered above).
  if (node.opset >= 18 && node.input(3)) {
    std::optional<SmallVector<int64_t>> axes = node.constantInts(3);
    FailureOr<SmallVector<int64_t>> full = padsOverAxes(
        node, *pads, *axes, cast<RankedTensorType>(x->getType()).getRank());
    if (failed(full))
      return failure();
    pads = *full;
  }
  if (llvm::any_of(*pads, [](int64_t p) { return p < 0; })) {
    node.fail() << "negative pads (cropping) are not supported yet";
    return failure();
  }
  return one(build<PadOp>(node, *x, node.builder.getDenseI64ArrayAttr(*pads),
                          node.builder.getF32FloatAttr(value)));
}

/// CenterCropPad 18: per axis, a centered window of the target size (the
/// crop starts at floor((in - target) / 2)) or the input centered in zeros
/// (the odd pixel on the right). The crop is a kiln.slice; float padding is
/// a kiln.pad, other types are padded by gathering. Run-time target sizes
/// are guarded to equal the declared output shape.
FailureOr<SmallVector<Value>> mlir::kiln::convertCenterCropPad(OnnxNode &node) {
  FailureOr<Value> x = node.staticInput(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> in = typeOf(*x).getShape();
  int64_t rank = in.size();
  SmallVector<int64_t> axes;
  if (std::optional<SmallVector<int64_t>> attr = node.intsAttr("axes")) {
    SmallVector<bool> seen(rank, false);
    for (int64_t a : *attr) {
      FailureOr<int64_t> axis = normalizeAxis(node, a, rank);
      if (failed(axis))
        return failure();
      if (seen[*axis]) {
        node.fail() << "axis " << a << " is repeated in axes";
        return failure();
      }
      seen[*axis] = true;
      axes.push_back(*axis);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  auto st = dyn_cast<RankedTensorType>(node.input(1).getType());
  if (!st || !st.hasStaticShape() || st.getRank() != 1 ||
      st.getNumElements() != (int64_t)axes.size()) {
    node.fail() << "shape must be a 1-D tensor with one size per axis ("
                << axes.size() << ")";
    return failure();
  }
  SmallVector<int64_t> target(in);
  if (std::optional<SmallVector<int64_t>> sizes = node.constantInts(1)) {
    for (auto [i, a] : llvm::enumerate(axes))
      target[a] = (*sizes)[i];
  } else {
    FailureOr<RankedTensorType> declared = declaredResult(node, 0, "shape");
    if (failed(declared))
      return failure();
    if (declared->getRank() != rank) {
      node.fail() << "the declared output rank differs from the input rank";
      return failure();
    }
    SmallVector<int64_t> expected;
    for (int64_t a : axes) {
      target[a] = declared->getDimSize(a);
      expected.push_back(target[a]);
    }
    if (failed(guardEquals(node, 1, expected,
                           "the declared output sizes of the cropped or "
                           "padded axes")))
      return failure();
  }
  SmallVector<int64_t> offsets(rank, 0), sizes(in), strides(rank, 1);
  SmallVector<int64_t> pads(2 * rank, 0);
  bool crop = false, pad = false;
  for (int64_t d = 0; d < rank; ++d) {
    if (target[d] < 0) {
      node.fail() << "target size " << target[d] << " of axis " << d
                  << " is negative";
      return failure();
    }
    if (target[d] < in[d]) {
      offsets[d] = (in[d] - target[d]) / 2;
      sizes[d] = target[d];
      crop = true;
    } else if (target[d] > in[d]) {
      pads[d] = (target[d] - in[d]) / 2;
      pads[d + rank] = target[d] - in[d] - pads[d];
      pad = true;
    }
  }
  Value y = *x;
  Builder &b = node.builder;
  if (crop) {
    FailureOr<Value> s = build<SliceOp>(
        node, y, b.getDenseI64ArrayAttr(offsets), b.getDenseI64ArrayAttr(sizes),
        b.getDenseI64ArrayAttr(strides));
    if (failed(s))
      return failure();
    y = *s;
  }
  if (!pad)
    return SmallVector<Value>{y};
  if (!isa<FloatType>(elementOf(y)))
    return padByGather(node, y, "constant", pads);
  return one(build<PadOp>(node, y, b.getDenseI64ArrayAttr(pads),
                          b.getF32FloatAttr(0.0f)));
}
