//===- Signal.cpp - ONNX signal-processing ops ------------------*- C++ -*-===//
//
// DFT on static shapes: the transform along one axis is a product with a
// constant n x K matrix of cosines and one of sines, so it becomes two or four
// kiln.matmul ops on a [rows, n] view of the signal (no FFT: the sizes these
// models use are small, and a matmul is what the code generator does best).
//
//===----------------------------------------------------------------------===//
#include "ShapeInputs.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Slices `x` to [offset, offset + size) along `axis` (step 1).
FailureOr<Value> sliceAxis(OnnxNode &node, Value x, int64_t axis,
                           int64_t offset, int64_t size) {
  RankedTensorType t = typeOf(x);
  SmallVector<int64_t> offsets(t.getRank(), 0), sizes(t.getShape()),
      strides(t.getRank(), 1);
  offsets[axis] = offset;
  sizes[axis] = size;
  auto &b = node.builder;
  return build<SliceOp>(node, x, b.getDenseI64ArrayAttr(offsets),
                        b.getDenseI64ArrayAttr(sizes),
                        b.getDenseI64ArrayAttr(strides));
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

/// The DFT of `x` (type checked by convertDFT) along `axis`.
FailureOr<Value> dftAlong(OnnxNode &node, Value xValue, int64_t axis,
                          bool inverse, bool onesided) {
  FailureOr<Value> x = xValue;
  RankedTensorType type = typeOf(xValue);
  int64_t rank = type.getRank();
  int64_t complexDim = type.getDimSize(rank - 1);
  int64_t length = type.getDimSize(axis);
  FailureOr<std::optional<int64_t>> given = dftLength(node);
  if (failed(given))
    return failure();
  int64_t n = given->value_or(length);
  int64_t k = onesided ? n / 2 + 1 : n;

  // Real and imaginary parts without the trailing dimension.
  SmallVector<int64_t> partShape(type.getShape().drop_back());
  auto part = [&](int64_t index) -> FailureOr<Value> {
    FailureOr<Value> s = sliceAxis(node, *x, rank - 1, index, 1);
    if (failed(s))
      return failure();
    return reshapeTo(node, *s, partShape);
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
  for (int64_t d = 0; d < prank; ++d)
    if (d != axis) {
      rows *= partShape[d];
      outPermuted.push_back(partShape[d]);
    }
  outPermuted.push_back(k);

  auto asRows = [&](Value p) -> FailureOr<Value> {
    FailureOr<Value> t = transposeBy(node, p, perm);
    if (failed(t))
      return failure();
    // Truncate or zero-pad to n samples.
    if (n < length) {
      t = sliceAxis(node, *t, prank - 1, 0, n);
    } else if (n > length) {
      SmallVector<int64_t> pads(2 * prank, 0);
      pads[2 * prank - 1] = n - length;
      t = build<PadOp>(node, *t, node.builder.getDenseI64ArrayAttr(pads),
                       node.builder.getF32FloatAttr(0.0f));
    }
    if (failed(t))
      return failure();
    return reshapeTo(node, *t, {rows, n});
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
  // precision sin/cos so that large products keep their accuracy.
  double scale = inverse ? 1.0 / n : 1.0;
  double sign = inverse ? -1.0 : 1.0;
  SmallVector<float> a(n * k), bPos(n * k), bNeg(n * k);
  for (int64_t l = 0; l < n; ++l)
    for (int64_t f = 0; f < k; ++f) {
      double angle = 2.0 * M_PI * (double)((l * f) % n) / (double)n;
      a[l * k + f] = (float)(std::cos(angle) * scale);
      bPos[l * k + f] = (float)(sign * std::sin(angle) * scale);
      bNeg[l * k + f] = -bPos[l * k + f];
    }
  Value aMat = constF32(node, a, {n, k});
  Value bMat = constF32(node, bPos, {n, k});
  Value bNegMat = constF32(node, bNeg, {n, k});

  auto mm = [&](Value lhs, Value rhs) { return build<MatMulOp>(node, lhs, rhs); };
  FailureOr<Value> yRe = mm(*re, aMat);
  FailureOr<Value> yIm = mm(*re, bNegMat);
  if (failed(yRe) || failed(yIm))
    return failure();
  if (*im) {
    FailureOr<Value> t1 = mm(*im, bMat), t2 = mm(*im, aMat);
    if (failed(t1) || failed(t2))
      return failure();
    yRe = build<AddOp>(node, *yRe, *t1);
    yIm = build<AddOp>(node, *yIm, *t2);
    if (failed(yRe) || failed(yIm))
      return failure();
  }

  // Back to [..., k, ...] and stack real and imaginary parts last.
  SmallVector<int64_t> outShape(partShape);
  outShape[axis] = k;
  SmallVector<int64_t> stacked(outShape);
  stacked.push_back(1);
  SmallVector<Value> parts;
  for (Value y : {*yRe, *yIm}) {
    FailureOr<Value> r = reshapeTo(node, y, outPermuted);
    if (failed(r) || failed(r = transposeBy(node, *r, inversePerm)) ||
        failed(r = reshapeTo(node, *r, stacked)))
      return failure();
    parts.push_back(*r);
  }
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
    int64_t n = length->value_or(type.getDimSize(a));
    SmallVector<int64_t> shape(type.getShape());
    shape[a] = onesided ? n / 2 + 1 : n;
    shape.back() = 2;
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
      dftAlong(node, x, choices.back().first, inverse, onesided);
  for (auto &[a, when] : llvm::reverse(ArrayRef(choices).drop_back())) {
    if (failed(result))
      return failure();
    FailureOr<Value> r = dftAlong(node, x, a, inverse, onesided);
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
/// frequencies.
FailureOr<SmallVector<Value>> mlir::kiln::convertDFT(OnnxNode &node) {
  FailureOr<Value> x = node.staticInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  if (!type.getElementType().isF32()) {
    node.fail() << "element type " << type.getElementType()
                << " is not supported for DFT yet; Kiln computes DFT on "
                   "float32 signals";
    return failure();
  }
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
  if (onesided && (inverse || complexDim == 2)) {
    node.fail() << "onesided is supported for forward transforms of real "
                   "signals only (inverse or complex onesided DFT is not "
                   "supported)";
    return failure();
  }
  if (node.opset >= 20 && runtimeInput(node, 2))
    return one(dftRuntimeAxis(node, *x, inverse, onesided));
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
  return one(dftAlong(node, *x, axis, inverse, onesided));
}
