//===- Conv.cpp - ONNX Conv -------------------------------------*- C++ -*-===//
//
// 1-D and 2-D convolutions are one kiln.conv2d (1-D with a unit height); 3-D
// ones are a sum of 2-D convolutions over the depth taps. The window helpers
// of Conv.h serve the pooling ops and the integer convolutions too.
// CausalConvWithState (27), the streaming depthwise convolution of Mamba-
// and Gated-DeltaNet-style models, is one depthwise kiln.conv2d too.
//
//===----------------------------------------------------------------------===//
#include "Conv.h"
#include "SymbolicSizes.h"

using namespace mlir;
using namespace mlir::kiln;

/// `w` when its dilated window fits in the padded input along every static
/// spatial axis (sizes `hw`, pads [begin..., end...]); else no output
/// position exists (ONNX's inference and Kiln's would disagree on 0 or 1).
/// Refuses a window larger than its padded input; a run-time size counts at
/// its largest (`largest`, where known), where no size in range fits it.
static FailureOr<Window> windowFits(OnnxNode &node, const Window &w,
                                    ArrayRef<int64_t> shape,
                                    ArrayRef<int64_t> largest) {
  SmallVector<int64_t> hw(shape);
  for (size_t i = 0; i < hw.size(); ++i)
    if (ShapedType::isDynamic(hw[i]) && i < largest.size())
      hw[i] = largest[i];
  for (size_t i = 0; i < hw.size(); ++i) {
    if (ShapedType::isDynamic(hw[i]))
      continue;
    int64_t span = (w.kernel[i] - 1) * w.dilations[i] + 1;
    int64_t padded = hw[i] + w.pads[i] + w.pads[i + hw.size()];
    if (span > padded) {
      int64_t axis = w.oneD ? 2 : 2 + (int64_t)i;
      node.fail() << "the window (kernel " << w.kernel[i] << ", dilation "
                  << w.dilations[i] << ": " << span
                  << " elements) is larger than the padded input along axis "
                  << axis << " ("
                  << (ShapedType::isDynamic(shape[i]) ? "at most " : "")
                  << hw[i] << " + " << w.pads[i] << " + "
                  << w.pads[i + hw.size()] << " = " << padded
                  << "), so no output position exists; check the kernel, "
                     "strides and pads of the layers before it";
      return failure();
    }
  }
  return w;
}

FailureOr<Window> mlir::kiln::readWindow(OnnxNode &node, RankedTensorType input,
                                         SmallVector<int64_t> kernel,
                                         bool staticChannels, Value value) {
  Window w;
  int64_t spatial = input.getRank() - 2;
  if (spatial != 1 && spatial != 2) {
    node.fail() << "only 1-D, 2-D and 3-D windows are supported; the input has "
                << spatial << " spatial dimensions";
    return failure();
  }
  // Symbolic batch and spatial sizes are sized at run time in the lowering
  // (docs/shapes.md); a convolution's channels size the filter and must be
  // known. A 1-D window of symbolic length is lifted with kiln.sized_reshape.
  if ((staticChannels && input.isDynamicDim(1)) ||
      (spatial == 1 && !input.hasStaticShape() && !node.sizes)) {
    if (failed(node.requireStaticShape(input)))
      return failure();
  }
  auto list = [&](StringRef name,
                  int64_t dflt) -> FailureOr<SmallVector<int64_t>> {
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
  // The largest size of each run-time spatial size, where `value` and the
  // ranges give one.
  SmallVector<int64_t> largest(hw.size(), ShapedType::kDynamic);
  if (value && node.sizes)
    for (size_t i = 0; i < hw.size(); ++i)
      if (ShapedType::isDynamic(hw[i]))
        if (std::optional<int64_t> l =
                node.sizes->largest(node.sizes->dim(value, 2 + (int64_t)i)))
          largest[i] = *l;
  if (spatial == 1) {
    // Lift to 2-D: height 1, and ONNX's [begin, end] pads to [0, b, 0, e].
    w.oneD = true;
    w.kernel.insert(w.kernel.begin(), 1);
    w.strides.insert(w.strides.begin(), 1);
    w.dilations.insert(w.dilations.begin(), 1);
    hw.insert(hw.begin(), 1);
    largest.insert(largest.begin(), 1);
    SmallVector<int64_t> pads1 =
        node.intsAttr("pads").value_or(SmallVector<int64_t>{0, 0});
    std::string autoPad = node.strAttr("auto_pad", "NOTSET");
    if (autoPad == "NOTSET") {
      if (pads1.size() != 2) {
        node.fail() << "expects 2 pads for a 1-D window, got " << pads1.size();
        return failure();
      }
      w.pads = {0, pads1[0], 0, pads1[1]};
      return windowFits(node, w, hw, largest);
    }
  }
  FailureOr<SmallVector<int64_t>> pads =
      resolvePads2D(node, hw, w.kernel, w.strides, w.dilations);
  if (failed(pads))
    return failure();
  w.pads = *pads;
  return windowFits(node, w, hw, largest);
}

FailureOr<Value> mlir::kiln::liftTo2D(OnnxNode &node, Value v) {
  if (!typeOf(v).hasStaticShape() && node.sizes) {
    SmallVector<SymSize> dims = node.sizes->dims(v);
    dims.insert(dims.begin() + 2, SymSize::constant(1));
    return reshapeToSizes(node, v, dims);
  }
  auto shape = llvm::to_vector(typeOf(v).getShape());
  shape.insert(shape.begin() + 2, 1);
  return reshapeTo(node, v, shape);
}

FailureOr<Value> mlir::kiln::lowerTo1D(OnnxNode &node, FailureOr<Value> v) {
  if (failed(v))
    return failure();
  if (!typeOf(*v).hasStaticShape() && node.sizes) {
    SmallVector<SymSize> dims = node.sizes->dims(*v);
    dims.erase(dims.begin() + 2);
    return reshapeToSizes(node, *v, dims);
  }
  auto shape = llvm::to_vector(typeOf(*v).getShape());
  shape.erase(shape.begin() + 2);
  return reshapeTo(node, *v, shape);
}

namespace {
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
      // At stride 1 the padding is (k - 1) * dilation whatever the size; at
      // others it depends on a run-time size.
      if (ShapedType::isDynamic(in[i]) && strides[i] != 1) {
        node.fail() << "auto_pad " << autoPad << " at stride " << strides[i]
                    << " needs a static size on spatial axis " << i
                    << " (its padding depends on it); give the pads "
                       "explicitly or the dimension one size";
        return failure();
      }
      int64_t out = ShapedType::isDynamic(in[i])
                        ? 0
                        : (in[i] + strides[i] - 1) / strides[i];
      int64_t total = ShapedType::isDynamic(in[i])
                          ? (kernel[i] - 1) * dilations[i]
                          : std::max<int64_t>(
                                (out - 1) * strides[i] +
                                    (kernel[i] - 1) * dilations[i] + 1 - in[i],
                                0);
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

/// Depth tap k of a 3-D filter [M, C/g, KD, KH, KW] as a 2-D filter [M, C/g,
/// KH, KW]: a constant of a constant filter, else a slice.
FailureOr<Value> filterTap(OnnxNode &node, Value w, int64_t k) {
  auto &b = node.builder;
  RankedTensorType wt = typeOf(w);
  ArrayRef<int64_t> ws = wt.getShape();
  std::optional<DenseElementsAttr> wc = node.constantInput(1);
  if (wc && wc->getElementType().getIntOrFloatBitWidth() % 8 == 0) {
    DenseElementsAttr tap = depthTap(wc->reshape(wt), k);
    return ConstantOp::create(b, node.loc(), tap.getType(), tap).getResult();
  }
  FailureOr<Value> wk =
      build<SliceOp>(node, w, b.getDenseI64ArrayAttr({0, 0, k, 0, 0}),
                     b.getDenseI64ArrayAttr({ws[0], ws[1], 1, ws[3], ws[4]}),
                     b.getDenseI64ArrayAttr({1, 1, 1, 1, 1}));
  if (failed(wk))
    return failure();
  return reshapeTo(node, *wk, {ws[0], ws[1], ws[3], ws[4]});
}

/// conv3D of an input of run-time sizes (a video clip or a volume of any
/// batch, depth and size): the same taps, each a sized slice of the
/// depth-padded input viewed as [N * OD, C, H, W] by a sized reshape; OD is
/// the depth's window count, (D + pads - span) floordiv stride + 1.
FailureOr<Value> conv3DSized(OnnxNode &node, Value x, Value w,
                             ArrayRef<int64_t> kernel,
                             ArrayRef<int64_t> strides,
                             ArrayRef<int64_t> dilations,
                             ArrayRef<int64_t> pads) {
  auto &b = node.builder;
  SymbolicSizes &S = *node.sizes;
  SmallVector<SymSize> s = sizesOf(node, x);
  int64_t m = typeOf(w).getDimSize(0);
  int64_t span = dilations[0] * (kernel[0] - 1) + 1;
  std::optional<SymSize> room =
      SymSize::add(s[2], SymSize::constant(pads[0] + pads[3] - span));
  std::optional<int64_t> least = room ? S.smallest(*room) : std::nullopt;
  std::optional<SymSize> od =
      room ? S.floorDiv(*room, strides[0]) : std::nullopt;
  if (od)
    od = SymSize::add(*od, SymSize::constant(1));
  std::optional<SymSize> rows = od ? SymSize::mul(s[0], *od) : std::nullopt;
  if (!least || *least < 0 || !rows) {
    node.fail() << "the kernel's depth " << span << " does not fit the "
                << "padded depth " << S.str(s[2]) << " + " << pads[0] + pads[3]
                << " at every size in range; give the depth a range where it "
                   "fits";
    return failure();
  }
  Value in = x;
  if (pads[0] || pads[3]) {
    FailureOr<Value> p = build<PadOp>(
        node, x,
        b.getDenseI64ArrayAttr({0, 0, pads[0], 0, 0, 0, 0, pads[3], 0, 0}),
        b.getF32FloatAttr(0.0f));
    if (failed(p))
      return failure();
    in = *p;
  }
  Value acc;
  for (int64_t k = 0; k < kernel[0]; ++k) {
    SmallVector<SymSize> offsets(5, SymSize::constant(0));
    offsets[2] = SymSize::constant(k * dilations[0]);
    Value xk = sizedBox(node, in, offsets, {s[0], s[1], *od, s[3], s[4]},
                        {1, 1, strides[0], 1, 1});
    FailureOr<Value> xt =
        build<TransposeOp>(node, xk, b.getDenseI64ArrayAttr({0, 2, 1, 3, 4}));
    FailureOr<Value> wk = filterTap(node, w, k);
    if (failed(xt) || failed(wk) ||
        failed(xt = reshapeToSizes(node, *xt, {*rows, s[1], s[3], s[4]})))
      return failure();
    FailureOr<Value> y = build<Conv2DOp>(
        node, *xt, *wk, k == 0 ? node.input(2) : Value(),
        b.getDenseI64ArrayAttr({strides[1], strides[2]}),
        b.getDenseI64ArrayAttr({dilations[1], dilations[2]}),
        b.getDenseI64ArrayAttr({pads[1], pads[2], pads[4], pads[5]}),
        b.getI64IntegerAttr(node.intAttr("group", 1)));
    if (failed(y) || (acc && failed(y = build<AddOp>(node, acc, *y))))
      return failure();
    acc = *y;
  }
  FailureOr<Value> y =
      reshapeToSizes(node, acc,
                     {s[0], *od, SymSize::constant(m), sizeOf(node, acc, 2),
                      sizeOf(node, acc, 3)});
  if (failed(y))
    return failure();
  return build<TransposeOp>(node, *y, b.getDenseI64ArrayAttr({0, 2, 1, 3, 4}));
}

/// 3-D convolution as a sum over depth taps of 2-D convolutions: tap k reads
/// the depth slices k * dd, k * dd + sd, ... of the depth-padded input,
/// batched as N * OD.
FailureOr<Value> conv3D(OnnxNode &node, Value x, Value w) {
  RankedTensorType xt = typeOf(x), wt = typeOf(w);
  if ((!node.sizes && failed(node.requireStaticShape(xt))) ||
      failed(node.requireStaticShape(wt)))
    return failure();
  auto list = [&](StringRef name, int64_t dflt) {
    return node.intsAttr(name).value_or(SmallVector<int64_t>(3, dflt));
  };
  SmallVector<int64_t> kernel =
      node.intsAttr("kernel_shape")
          .value_or(llvm::to_vector(wt.getShape().drop_front(2)));
  SmallVector<int64_t> strides = list("strides", 1),
                       dilations = list("dilations", 1);
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
  if (!xt.hasStaticShape()) {
    if (xt.isDynamicDim(1)) {
      node.fail() << "the input channels of " << xt
                  << " must have a static size; give that dimension one size";
      return failure();
    }
    return conv3DSized(node, x, w, kernel, strides, dilations, *pads);
  }
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
    FailureOr<Value> p =
        build<PadOp>(node, x,
                     b.getDenseI64ArrayAttr(
                         {0, 0, (*pads)[0], 0, 0, 0, 0, (*pads)[3], 0, 0}),
                     b.getF32FloatAttr(0.0f));
    if (failed(p))
      return failure();
    in = *p;
  }
  Value acc;
  int64_t oh = 0, ow = 0;
  for (int64_t k = 0; k < kernel[0]; ++k) {
    FailureOr<Value> xk = build<SliceOp>(
        node, in, b.getDenseI64ArrayAttr({0, 0, k * dilations[0], 0, 0}),
        b.getDenseI64ArrayAttr({n, c, od, s[3], s[4]}),
        b.getDenseI64ArrayAttr({1, 1, strides[0], 1, 1}));
    if (failed(xk) ||
        failed(xk = build<TransposeOp>(
                   node, *xk, b.getDenseI64ArrayAttr({0, 2, 1, 3, 4}))) ||
        failed(xk = reshapeTo(node, *xk, {n * od, c, s[3], s[4]})))
      return failure();
    FailureOr<Value> wk = filterTap(node, w, k);
    if (failed(wk))
      return failure();
    FailureOr<Value> y =
        build<Conv2DOp>(node, *xk, *wk, k == 0 ? node.input(2) : Value(),
                        b.getDenseI64ArrayAttr({strides[1], strides[2]}),
                        b.getDenseI64ArrayAttr({dilations[1], dilations[2]}),
                        b.getDenseI64ArrayAttr(
                            {(*pads)[1], (*pads)[2], (*pads)[4], (*pads)[5]}),
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
  // Only the batch and spatial sizes may be symbolic: the channels and the
  // filter shape size the kernels' register tiles. Symbolic channels are
  // the filter's (times the groups), checked at run time.
  RankedTensorType wt = typeOf(*w);
  int64_t channels = 0; // a group count past int64 pins nothing
  if (wt.hasStaticShape() && wt.getRank() > 1 &&
      !__builtin_mul_overflow(wt.getDimSize(1),
                              std::max<int64_t>(node.intAttr("group", 1), 1),
                              &channels))
    x = pinDims(node, *x, {{1, channels}}, "the filter needs the input's");
  if (failed(x))
    return failure();
  RankedTensorType xt = typeOf(*x);
  if (!wt.hasStaticShape() || (xt.getRank() > 1 && xt.isDynamicDim(1))) {
    node.fail() << "the input " << xt << " and filter " << wt
                << " have symbolic channels or filter sizes; a convolution "
                   "needs them fixed (only the batch and spatial dimensions "
                   "may be symbolic): give those dimensions one size with "
                   "--input-shape or --dim";
    return failure();
  }
  if (xt.getRank() == 5)
    return one(conv3D(node, *x, *w));
  return one(buildConv(node, *x, *w, node.input(2)));
}

/// CausalConvWithState 27: the input [B, C, L] after the carried state
/// [B, C, k - 1] (zeros without past_state), convolved depthwise with
/// weight [C, 1, k] and no padding (each output sees its position and the
/// k - 1 before it), plus bias, then SiLU if asked; present_state is the
/// last k - 1 positions of that joined sequence.
FailureOr<SmallVector<Value>>
mlir::kiln::convertCausalConvWithState(OnnxNode &node) {
  FailureOr<Value> x = node.staticInput(0), w = node.staticInput(1);
  if (failed(x) || failed(w))
    return failure();
  RankedTensorType xt = typeOf(*x), wt = typeOf(*w);
  Type elt = xt.getElementType();
  if (xt.getRank() != 3 || wt.getRank() != 3 || !isa<FloatType>(elt) ||
      wt.getElementType() != elt || wt.getDimSize(0) != xt.getDimSize(1) ||
      wt.getDimSize(1) != 1 || wt.getDimSize(2) < 1) {
    node.fail() << "expects a float input [B, C, L] and a weight [C, 1, k] "
                   "(k >= 1) of its type, got "
                << xt << " and " << wt;
    return failure();
  }
  std::string act = node.strAttr("activation", "none");
  if (act != "none" && act != "silu" && act != "swish") {
    node.fail() << "activation '" << act
                << "' is not supported; expected none, silu or swish";
    return failure();
  }
  int64_t batch = xt.getDimSize(0), ch = xt.getDimSize(1),
          len = xt.getDimSize(2), k1 = wt.getDimSize(2) - 1;
  SmallVector<int64_t> stateShape{batch, ch, k1};
  Value bias = node.input(2);
  if (bias && typeOf(bias) != RankedTensorType::get({ch}, elt)) {
    node.fail() << "bias must be [" << ch << "] of the input's type, got "
                << bias.getType();
    return failure();
  }
  auto &b = node.builder;
  Value joined = *x;
  if (k1 > 0) {
    auto stateType = RankedTensorType::get(stateShape, elt);
    Value state = node.input(3);
    if (state && state.getType() != stateType) {
      node.fail() << "past_state must be " << stateType << ", got "
                  << state.getType();
      return failure();
    }
    if (!state)
      state = ConstantOp::create(
          b, node.loc(), stateType,
          DenseElementsAttr::get(stateType, b.getZeroAttr(elt)));
    FailureOr<Value> c =
        build<ConcatOp>(node, ValueRange{state, *x}, b.getI64IntegerAttr(2));
    if (failed(c))
      return failure();
    joined = *c;
  }
  FailureOr<Value> xi = liftTo2D(node, joined), wi = liftTo2D(node, *w);
  if (failed(xi) || failed(wi))
    return failure();
  FailureOr<Value> y =
      lowerTo1D(node, build<Conv2DOp>(node, *xi, *wi, bias,
                                      b.getDenseI64ArrayAttr({1, 1}),
                                      b.getDenseI64ArrayAttr({1, 1}),
                                      b.getDenseI64ArrayAttr({0, 0, 0, 0}),
                                      b.getI64IntegerAttr(ch)));
  if (succeeded(y) && act != "none") {
    FailureOr<Value> s = build<SigmoidOp>(node, *y);
    y = failed(s) ? s : build<MulOp>(node, *y, *s);
  }
  FailureOr<Value> present = build<SliceOp>(
      node, joined, b.getDenseI64ArrayAttr({0, 0, len}),
      b.getDenseI64ArrayAttr(stateShape), b.getDenseI64ArrayAttr({1, 1, 1}));
  if (failed(y) || failed(present))
    return failure();
  return SmallVector<Value>{*y, *present};
}
