//===- Signal.cpp - ONNX signal-processing ops ------------------*- C++ -*-===//
//
// DFT on static shapes: the transform along one axis is a product with a
// constant n x K matrix of cosines and one of sines, so it becomes two or four
// kiln.matmul ops on a [rows, n] view of the signal (no FFT: the sizes these
// models use are small, and a matmul is what the code generator does best).
//
//===----------------------------------------------------------------------===//
#include "ShapeInputs.h"
#include "SymbolicSizes.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Slices `x` to [offset, offset + size) along `axis` (step 1); other
/// dimensions may have run-time sizes.
FailureOr<Value> sliceAxis(OnnxNode &node, Value x, int64_t axis,
                           int64_t offset, int64_t size) {
  RankedTensorType t = typeOf(x);
  SmallVector<int64_t> offsets(t.getRank(), 0), sizes(t.getShape()),
      strides(t.getRank(), 1);
  offsets[axis] = offset;
  sizes[axis] = size;
  if (!t.hasStaticShape())
    return sizedPart(node, x, SliceBounds{offsets, sizes, strides});
  auto &b = node.builder;
  return build<SliceOp>(node, x, b.getDenseI64ArrayAttr(offsets),
                        b.getDenseI64ArrayAttr(sizes),
                        b.getDenseI64ArrayAttr(strides));
}

/// Input 0, a float32 signal (DFT and STFT compute in float32): static, or
/// with `sized` of run-time sizes where the function has them.
FailureOr<Value> float32Signal(OnnxNode &node, bool sized = false) {
  FailureOr<Value> x = sized ? sizedInput(node, 0) : node.staticInput(0);
  if (succeeded(x) && !typeOf(*x).getElementType().isF32()) {
    node.fail() << "element type " << typeOf(*x).getElementType()
                << " is not supported for " << node.opType()
                << " yet; Kiln computes it on float32 signals";
    return failure();
  }
  return x;
}

/// The optional dft_length input: a positive compile-time constant, or none.
FailureOr<std::optional<int64_t>> dftLength(OnnxNode &node) {
  if (!node.input(1))
    return std::optional<int64_t>();
  std::optional<SmallVector<int64_t>> len = node.constantInts(1);
  if (!len || len->size() != 1) {
    node.fail() << "dft_length must be a compile-time constant scalar; "
                   "run-time DFT lengths are not supported";
    return failure();
  }
  if ((*len)[0] < 1) {
    node.fail() << "dft_length must be positive, got " << (*len)[0];
    return failure();
  }
  return std::optional<int64_t>((*len)[0]);
}

/// The points of a DFT of an axis of `length` elements: `given`, else the
/// length, or for an inverse onesided DFT (IRFFT) 2 * (length - 1).
int64_t dftPoints(int64_t length, bool inverse, bool onesided,
                  std::optional<int64_t> given) {
  return given.value_or(inverse && onesided ? 2 * (length - 1) : length);
}

/// The DFT's output length along the axis and its trailing dimension.
std::pair<int64_t, int64_t> dftOutput(int64_t n, bool inverse, bool onesided) {
  if (inverse && onesided)
    return {n, 1}; // IRFFT: a real signal
  return {onesided ? n / 2 + 1 : n, 2};
}

/// The DFT of `x` (type checked by convertDFT) along `axis`, of `given`
/// points (dftPoints). An IRFFT reads the first n / 2 + 1 bins (the rest
/// are their conjugates) and returns the real signal.
FailureOr<Value> dftAlong(OnnxNode &node, Value xValue, int64_t axis,
                          bool inverse, bool onesided,
                          std::optional<int64_t> given) {
  FailureOr<Value> x = xValue;
  RankedTensorType type = typeOf(xValue);
  int64_t rank = type.getRank();
  int64_t complexDim = type.getDimSize(rank - 1);
  int64_t length = type.getDimSize(axis);
  int64_t n = dftPoints(length, inverse, onesided, given);
  if (n < 1) {
    node.fail() << "the DFT has " << n << " points; give a positive "
                << "dft_length";
    return failure();
  }
  bool irfft = inverse && onesided;
  auto [k, trailing] = dftOutput(n, inverse, onesided);
  // Samples (or bins) read along the axis.
  int64_t used = irfft ? n / 2 + 1 : n;

  // Real and imaginary parts without the trailing dimension. Dimensions
  // other than the axis may have run-time sizes (a batch of signals): the
  // same views as sized reshapes.
  bool isStatic = type.hasStaticShape();
  SmallVector<SymSize> sizes =
      isStatic ? SmallVector<SymSize>() : sizesOf(node, xValue);
  auto reshapeAny = [&](Value v, ArrayRef<int64_t> shape,
                        ArrayRef<SymSize> sym) {
    return isStatic ? reshapeTo(node, v, shape) : reshapeToSizes(node, v, sym);
  };
  SmallVector<int64_t> partShape(type.getShape().drop_back());
  SmallVector<SymSize> partSizes(
      ArrayRef<SymSize>(sizes).drop_back(isStatic ? 0 : 1));
  auto part = [&](int64_t index) -> FailureOr<Value> {
    FailureOr<Value> s = sliceAxis(node, *x, rank - 1, index, 1);
    if (failed(s))
      return failure();
    return reshapeAny(*s, partShape, partSizes);
  };
  int64_t prank = rank - 1;
  // Move the transformed axis last and view the rest as rows.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < prank; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  SmallVector<int64_t> inversePerm(prank);
  for (int64_t i = 0; i < prank; ++i)
    inversePerm[perm[i]] = i;
  int64_t rows = 1;
  SmallVector<int64_t> outPermuted;
  std::optional<SymSize> rowCount = SymSize::constant(1);
  SmallVector<SymSize> outPermutedSizes;
  for (int64_t d = 0; d < prank; ++d)
    if (d != axis) {
      rows *= partShape[d];
      outPermuted.push_back(partShape[d]);
      if (!isStatic) {
        rowCount =
            rowCount ? SymSize::mul(*rowCount, partSizes[d]) : std::nullopt;
        outPermutedSizes.push_back(partSizes[d]);
      }
    }
  outPermuted.push_back(k);
  outPermutedSizes.push_back(SymSize::constant(k));
  if (!rowCount) {
    node.fail() << "cannot follow the sizes of " << type
                << "; give its dimensions one size";
    return failure();
  }

  auto asRows = [&](Value p) -> FailureOr<Value> {
    FailureOr<Value> t = transposeBy(node, p, perm);
    if (failed(t))
      return failure();
    // Truncate or zero-pad to the samples used.
    if (used < length) {
      t = sliceAxis(node, *t, prank - 1, 0, used);
    } else if (used > length) {
      SmallVector<int64_t> pads(2 * prank, 0);
      pads[2 * prank - 1] = used - length;
      t = build<PadOp>(node, *t, node.builder.getDenseI64ArrayAttr(pads),
                       node.builder.getF32FloatAttr(0.0f));
    }
    if (failed(t))
      return failure();
    return reshapeAny(*t, {rows, used}, {*rowCount, SymSize::constant(used)});
  };

  FailureOr<Value> re = part(0);
  if (failed(re) || failed(re = asRows(*re)))
    return failure();
  FailureOr<Value> im = Value();
  if (complexDim == 2) {
    im = part(1);
    if (failed(im) || failed(im = asRows(*im)))
      return failure();
  }

  // y_re = x_re A + x_im B, y_im = x_im A - x_re B with A = cos * scale and
  // B = sign * sin * scale: forward sign = +1 (e^{-i...}), inverse -1 and
  // scale 1 / n. Angles are reduced modulo n in integers before the double
  // precision sin/cos so that large products keep their accuracy. An IRFFT
  // counts each bin between 0 and n / 2 twice (for its conjugate) and
  // needs only y_re.
  double scale = inverse ? 1.0 / n : 1.0;
  double sign = inverse ? -1.0 : 1.0;
  SmallVector<float> a(used * k), bPos(used * k), bNeg(used * k);
  for (int64_t l = 0; l < used; ++l) {
    double twice = irfft && l != 0 && 2 * l != n ? 2.0 : 1.0;
    for (int64_t f = 0; f < k; ++f) {
      double angle = 2.0 * M_PI * (double)((l * f) % n) / (double)n;
      a[l * k + f] = (float)(std::cos(angle) * scale * twice);
      bPos[l * k + f] = (float)(sign * std::sin(angle) * scale * twice);
      bNeg[l * k + f] = -bPos[l * k + f];
    }
  }
  Value aMat = constF32(node, a, {used, k});
  Value bMat = constF32(node, bPos, {used, k});
  Value bNegMat = constF32(node, bNeg, {used, k});

  auto mm = [&](Value lhs, Value rhs) { return build<MatMulOp>(node, lhs, rhs); };
  FailureOr<Value> yRe = mm(*re, aMat);
  FailureOr<Value> yIm = irfft ? Value() : mm(*re, bNegMat);
  if (failed(yRe) || failed(yIm))
    return failure();
  if (*im) {
    FailureOr<Value> t1 = mm(*im, bMat);
    if (failed(t1) || failed(yRe = build<AddOp>(node, *yRe, *t1)))
      return failure();
    if (!irfft) {
      FailureOr<Value> t2 = mm(*im, aMat);
      if (failed(t2) || failed(yIm = build<AddOp>(node, *yIm, *t2)))
        return failure();
    }
  }

  // Back to [..., k, ...] and stack real and imaginary parts last.
  SmallVector<int64_t> outShape(partShape);
  outShape[axis] = k;
  SmallVector<int64_t> stacked(outShape);
  stacked.push_back(1);
  SmallVector<SymSize> stackedSizes(partSizes);
  if (!isStatic) {
    stackedSizes[axis] = SymSize::constant(k);
    stackedSizes.push_back(SymSize::constant(1));
  }
  SmallVector<Value> parts;
  for (Value y : {*yRe, *yIm}) {
    if (!y)
      continue;
    FailureOr<Value> r = reshapeAny(y, outPermuted, outPermutedSizes);
    if (failed(r) || failed(r = transposeBy(node, *r, inversePerm)) ||
        failed(r = reshapeAny(*r, stacked, stackedSizes)))
      return failure();
    parts.push_back(*r);
  }
  if (trailing == 1)
    return parts[0];
  return build<ConcatOp>(node, ValueRange(parts),
                         node.builder.getI64IntegerAttr(prank));
}

/// DFT 20 with the axis given at run time: the transform along each axis
/// that yields the declared output shape, the one the value names selected,
/// and a guard that it names one of them.
FailureOr<Value> dftRuntimeAxis(OnnxNode &node, Value x, bool inverse,
                                bool onesided) {
  FailureOr<RankedTensorType> declared = declaredResult(node, 0, "axis");
  if (failed(declared))
    return failure();
  RankedTensorType type = typeOf(x);
  int64_t rank = type.getRank();
  auto axisType = dyn_cast<RankedTensorType>(node.input(2).getType());
  if (!axisType || !axisType.hasStaticShape() ||
      axisType.getNumElements() != 1) {
    node.fail() << "the axis input must be a scalar";
    return failure();
  }
  FailureOr<std::optional<int64_t>> length = dftLength(node);
  if (failed(length))
    return failure();
  IndexMath m{node};
  FailureOr<Value> given = reshapeTo(node, node.input(2), {});
  if (failed(given) || failed(given = castTo(node, *given,
                                             node.builder.getI64Type())))
    return failure();
  SmallVector<std::pair<int64_t, Value>> choices;
  Value any;
  for (int64_t a = 0; a + 2 <= rank; ++a) {
    int64_t n = dftPoints(type.getDimSize(a), inverse, onesided, *length);
    SmallVector<int64_t> shape(type.getShape());
    std::tie(shape[a], shape.back()) = dftOutput(n, inverse, onesided);
    if (ArrayRef<int64_t>(shape) != declared->getShape())
      continue;
    Value when = m.check(build<OrOp>(node, m.eq(*given, m.c(a)),
                                     m.eq(*given, m.c(a - rank))));
    choices.push_back({a, when});
    any = any ? m.check(build<OrOp>(node, any, when)) : when;
  }
  if (!m.ok)
    return failure();
  if (choices.empty()) {
    node.fail() << "no axis gives the declared output shape " << *declared;
    return failure();
  }
  guardInput(node, any, 2,
             "must name the axis that gives the declared output shape this "
             "model was compiled for");
  FailureOr<Value> result =
      dftAlong(node, x, choices.back().first, inverse, onesided, *length);
  for (auto &[a, when] : llvm::reverse(ArrayRef(choices).drop_back())) {
    if (failed(result))
      return failure();
    FailureOr<Value> r = dftAlong(node, x, a, inverse, onesided, *length);
    if (failed(r))
      return failure();
    result = build<WhereOp>(node, when, *r, *result);
  }
  return result;
}
} // namespace

/// DFT, opset 17: input [batch, ..., n, 1 | 2] (real or complex), transform
/// along the `axis` attribute (1 by default); opset 20: along the `axis`
/// input (-2 by default; a graph input selects among the axes that give the
/// declared output shape). The optional dft_length (a constant) truncates or
/// zero-pads the signal; `inverse` scales by 1/n; `onesided` keeps n / 2 + 1
/// frequencies of a real signal, or with `inverse` (IRFFT) turns n / 2 + 1
/// bins into a real signal of n = 2 * (bins - 1) samples by default.
FailureOr<SmallVector<Value>> mlir::kiln::convertDFT(OnnxNode &node) {
  FailureOr<Value> x = float32Signal(node, /*sized=*/true);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  int64_t rank = type.getRank();
  int64_t complexDim = rank ? type.getDimSize(rank - 1) : 0;
  if (rank < (node.opset >= 20 ? 2 : 3) ||
      (complexDim != 1 && complexDim != 2)) {
    node.fail() << "expects a signal of shape [batch, ..., n, 1 or 2], got "
                << type;
    return failure();
  }
  bool inverse = node.intAttr("inverse", 0) != 0;
  bool onesided = node.intAttr("onesided", 0) != 0;
  if (onesided && !inverse && complexDim == 2) {
    node.fail() << "onesided=1 with inverse=0 (RFFT) takes a real signal "
                   "([..., 1]); got a complex one";
    return failure();
  }
  if (onesided && inverse && complexDim == 1) {
    node.fail() << "onesided=1 with inverse=1 (IRFFT) takes a complex "
                   "spectrum ([..., 2]); got a real one";
    return failure();
  }
  if (node.opset >= 20 && runtimeInput(node, 2)) {
    if (failed(node.requireStaticShape(type)))
      return failure();
    return one(dftRuntimeAxis(node, *x, inverse, onesided));
  }
  int64_t axis;
  if (node.opset >= 20) {
    // DFT 20: the axis is an optional input, -2 (the last signal axis) by
    // default, and may be any axis but the trailing real/imaginary one.
    int64_t given = -2;
    if (node.input(2)) {
      std::optional<SmallVector<int64_t>> a = node.constantInts(2);
      if (!a || a->size() != 1) {
        node.fail() << "the axis input must be a scalar";
        return failure();
      }
      given = (*a)[0];
    }
    axis = given < 0 ? given + rank : given;
    if (given < -rank || given == -1 || axis > rank - 2) {
      node.fail() << "axis " << given << " must name a signal dimension of "
                  << "the rank-" << rank << " input ([" << -rank
                  << ", -2] or [0, " << rank - 2
                  << "]; the last dimension holds the real and imaginary "
                     "parts)";
      return failure();
    }
  } else {
    axis = node.intAttr("axis", 1);
    if (axis < 0)
      axis += rank;
    if (axis < 1 || axis > rank - 2) {
      node.fail() << "axis " << node.intAttr("axis", 1)
                  << " must name a signal dimension (not the batch or the "
                     "trailing real/imaginary dimension) of rank "
                  << rank;
      return failure();
    }
  }
  if (type.isDynamicDim(axis) || type.isDynamicDim(rank - 1)) {
    node.fail() << "the transformed axis " << axis << " of " << type
                << " has a run-time size; a DFT needs it static (its matrix "
                   "is a constant), the other dimensions may be symbolic";
    return failure();
  }
  FailureOr<std::optional<int64_t>> length = dftLength(node);
  if (failed(length))
    return failure();
  return one(dftAlong(node, *x, axis, inverse, onesided, *length));
}

namespace {
/// STFT's frame length: the window's length, a constant frame_length, or
/// one given at run time, which must be the length the declared output
/// shape implies (guarded).
FailureOr<int64_t> stftFrameLength(OnnxNode &node, bool onesided) {
  std::optional<int64_t> windowLength;
  if (Value w = node.input(2)) {
    auto t = dyn_cast<RankedTensorType>(w.getType());
    if (!t || t.getRank() != 1 || t.isDynamicDim(0) || t.getDimSize(0) < 1) {
      node.fail() << "the window must be a 1-D tensor of static length, got "
                  << w.getType();
      return failure();
    }
    windowLength = t.getDimSize(0);
  }
  if (!node.input(3)) {
    if (!windowLength) {
      node.fail() << "needs a window or frame_length to know the frame "
                     "length; give one of them";
      return failure();
    }
    return *windowLength;
  }
  if (std::optional<SmallVector<int64_t>> c = node.constantInts(3)) {
    if (c->size() != 1 || (*c)[0] < 1) {
      node.fail() << "frame_length must be one positive integer";
      return failure();
    }
    if (windowLength && *windowLength != (*c)[0]) {
      node.fail() << "frame_length " << (*c)[0]
                  << " differs from the window's length " << *windowLength;
      return failure();
    }
    return (*c)[0];
  }
  // A run-time frame_length: the window's length, else the one the
  // declared output implies (of the two lengths that give the same
  // onesided bins, the even one).
  int64_t n;
  if (windowLength) {
    n = *windowLength;
  } else {
    FailureOr<RankedTensorType> declared =
        declaredResult(node, 0, "frame_length");
    if (failed(declared))
      return failure();
    if (declared->getRank() != 4 || declared->getDimSize(2) < 1) {
      node.fail() << "the declared output " << *declared
                  << " is not [batch, frames, bins, 2]";
      return failure();
    }
    int64_t bins = declared->getDimSize(2);
    n = onesided ? std::max<int64_t>(1, 2 * (bins - 1)) : bins;
  }
  if (failed(guardEquals(node, 3, {n},
                         "must be " + std::to_string(n) +
                             ", the frame length this model was compiled "
                             "for (from the window or the declared output "
                             "shape)")))
    return failure();
  return n;
}
} // namespace

/// STFT, opset 17: the signal [batch, length, 1 | 2] cut into frames of n
/// samples every frame_step (a gather of [frames, n] positions f * step + k;
/// a step given at run time must give the declared frame count), times the
/// window, then the DFT of each frame (dftAlong's products with the constant
/// cosine and sine matrices): [batch, frames, n / 2 + 1 (onesided) or n, 2].
FailureOr<SmallVector<Value>> mlir::kiln::convertSTFT(OnnxNode &node) {
  FailureOr<Value> x = float32Signal(node);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  if (type.getRank() != 3 ||
      (type.getDimSize(2) != 1 && type.getDimSize(2) != 2)) {
    node.fail() << "expects a signal of shape [batch, length, 1 or 2], got "
                << type;
    return failure();
  }
  bool onesided = node.intAttr("onesided", 1) != 0;
  if (onesided && type.getDimSize(2) == 2) {
    node.fail() << "onesided=1 needs a real signal ([batch, length, 1]); "
                   "set onesided=0 for a complex one";
    return failure();
  }
  if (Value w = node.input(2); w && !typeOf(w).getElementType().isF32()) {
    node.fail() << "the window must be float32 like the signal, got "
                << w.getType();
    return failure();
  }
  FailureOr<int64_t> n = stftFrameLength(node, onesided);
  if (failed(n))
    return failure();
  int64_t length = type.getDimSize(1);
  if (*n > length) {
    node.fail() << "the frame length " << *n << " is longer than the signal ("
                << length << " samples)";
    return failure();
  }

  // Positions [frames, n]: f * step + k, from two iotas (folded to a
  // constant when small; a long signal cut finely is not a huge constant).
  IndexMath m{node};
  Value step;
  int64_t frames;
  if (std::optional<SmallVector<int64_t>> c = node.constantInts(1)) {
    if (c->size() != 1 || (*c)[0] < 1) {
      node.fail() << "frame_step must be one positive integer";
      return failure();
    }
    frames = (length - *n) / (*c)[0] + 1;
    step = m.c((*c)[0]);
  } else {
    FailureOr<RankedTensorType> declared =
        declaredResult(node, 0, "frame_step");
    if (failed(declared))
      return failure();
    if (declared->getRank() != 4 || declared->getDimSize(1) < 1) {
      node.fail() << "the declared output " << *declared
                  << " is not [batch, frames, bins, 2]";
      return failure();
    }
    frames = declared->getDimSize(1);
    FailureOr<Value> given = reshapeTo(node, node.input(1), {});
    if (failed(given) ||
        failed(given = castTo(node, *given, node.builder.getI64Type())))
      return failure();
    step = *given;
    // 1 <= step and (length - n) / step + 1 == frames.
    Value ok =
        m.land(m.less(m.c(0), step),
               m.eq(m.add(m.div(m.c(length - *n), m.max(step, m.c(1))), m.c(1)),
                    m.c(frames)));
    if (!m.ok)
      return failure();
    guardInput(node, ok, 1,
               "must be a positive step giving the " + std::to_string(frames) +
                   " frames of the declared output shape this model was "
                   "compiled for");
  }
  // The positions are built as constants first: refuse a cut whose index
  // table alone would not fit in memory (its result would not either).
  int64_t positionsCount;
  if (__builtin_mul_overflow(frames, *n, &positionsCount) ||
      positionsCount > (int64_t(1) << 31)) {
    node.fail() << "cutting " << frames << " frames of " << *n
                << " samples is more than Kiln compiles (2^31 positions); "
                   "split the signal";
    return failure();
  }
  FailureOr<Value> rows = reshapeTo(node, m.iota(frames), {frames, 1});
  FailureOr<Value> cols = reshapeTo(node, m.iota(*n), {1, *n});
  if (failed(rows) || failed(cols))
    return failure();
  Value positions = m.add(m.mul(*rows, step), *cols);
  if (!m.ok)
    return failure();
  FailureOr<Value> cut =
      build<GatherOp>(node, *x, positions, node.builder.getI64IntegerAttr(1));
  if (failed(cut))
    return failure();
  if (Value w = node.input(2)) {
    FailureOr<Value> shaped = reshapeTo(node, w, {1, 1, *n, 1});
    if (failed(shaped) || failed(cut = build<MulOp>(node, *cut, *shaped)))
      return failure();
  }
  return one(dftAlong(node, *cut, 2, /*inverse=*/false, onesided, *n));
}
