//===- Generators.cpp - ONNX ops that make a tensor -------------*- C++ -*-===//
//
// Constant, ConstantOfShape, Range, OneHot, EyeLike, the window functions
// (HannWindow, HammingWindow, BlackmanWindow) and MelWeightMatrix. A shape,
// length or depth given
// at run time is taken from the output shape the model declares, with a
// kiln.guard that the run-time values agree (ShapeInputs.h).
//
//===----------------------------------------------------------------------===//
#include "ShapeInputs.h"
#include "SymbolicSizes.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::kiln;

FailureOr<SmallVector<Value>> mlir::kiln::convertConstant(OnnxNode &node) {
  Builder &b = node.builder;
  ElementsAttr value;
  if (auto t = node.op->getAttrOfType<ElementsAttr>("value")) {
    value = t;
  } else if (auto f = node.op->getAttrOfType<FloatAttr>("value_float")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                                   (float)f.getValueAsDouble());
  } else if (auto i = node.op->getAttrOfType<IntegerAttr>("value_int")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                   i.getInt());
  } else if (auto fs = node.op->getAttrOfType<ArrayAttr>("value_floats")) {
    SmallVector<float> v;
    for (Attribute a : fs)
      v.push_back(cast<FloatAttr>(a).getValueAsDouble());
    value = DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)v.size()}, b.getF32Type()),
        ArrayRef<float>(v));
  } else if (std::optional<SmallVector<int64_t>> is =
                 node.intsAttr("value_ints")) {
    value = DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)is->size()}, b.getI64Type()),
        ArrayRef<int64_t>(*is));
  } else {
    node.fail() << "only tensor, float, int, floats and ints values are "
                   "supported (sparse and string constants are not)";
    return failure();
  }
  Value c =
      ConstantOp::create(node.builder, node.loc(), value.getType(), value);
  return SmallVector<Value>{c};
}

namespace {
/// A constant of `type` whose element at row-major position i is f(i).
Value constantOf(OnnxNode &node, RankedTensorType type,
                 const std::function<double(int64_t)> &f) {
  Type elt = type.getElementType();
  SmallVector<Attribute> values;
  for (int64_t i = 0, n = type.getNumElements(); i < n; ++i) {
    double v = f(i);
    if (auto ft = dyn_cast<FloatType>(elt))
      values.push_back(FloatAttr::get(ft, v));
    else
      values.push_back(IntegerAttr::get(elt, (int64_t)v));
  }
  return ConstantOp::create(node.builder, node.loc(), type,
                            DenseElementsAttr::get(type, values));
}

} // namespace

/// ConstantOfShape 9, 20, 21: a splat of `value` (default float 0).
FailureOr<Attribute> mlir::kiln::constantOfShapeValue(OnnxNode &node) {
  Attribute value = node.builder.getF32FloatAttr(0.0f);
  if (auto v = node.op->getAttrOfType<DenseElementsAttr>("value")) {
    if (v.getNumElements() != 1) {
      node.fail() << "value must have exactly one element";
      return failure();
    }
    value = *v.getValues<Attribute>().begin();
  } else if (node.hasAttr("value")) {
    node.fail() << "only an inline dense 'value' is supported";
    return failure();
  }
  return value;
}

FailureOr<SmallVector<Value>>
mlir::kiln::convertConstantOfShape(OnnxNode &node) {
  if (FailureOr<SmallVector<Value>> sym = convertSymbolicConstantOfShape(node);
      failed(sym) || !sym->empty())
    return sym;
  SmallVector<int64_t> shape;
  if (std::optional<SmallVector<int64_t>> c = node.constantInts(0)) {
    shape = *c;
  } else {
    FailureOr<RankedTensorType> declared = declaredResult(node, 0, "the shape");
    if (failed(declared))
      return failure();
    shape.assign(declared->getShape().begin(), declared->getShape().end());
    if (failed(guardEquals(node, 0, shape, "the output shape")))
      return failure();
  }
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; })) {
    node.fail() << "shape " << shapeStr(shape) << " has a negative dimension";
    return failure();
  }
  FailureOr<Attribute> value = constantOfShapeValue(node);
  if (failed(value))
    return failure();
  auto type = RankedTensorType::get(shape, cast<TypedAttr>(*value).getType());
  Value c = ConstantOp::create(node.builder, node.loc(), type,
                               DenseElementsAttr::get(type, *value));
  return SmallVector<Value>{c};
}

/// Range 11: start + i * delta for i < max(ceil((limit - start) / delta), 0).
FailureOr<SmallVector<Value>> mlir::kiln::convertRange(OnnxNode &node) {
  if (FailureOr<SmallVector<Value>> sym = convertSymbolicRange(node);
      failed(sym) || !sym->empty())
    return sym;
  FailureOr<Value> start = node.rankedInput(0), limit = node.rankedInput(1),
                   delta = node.rankedInput(2);
  if (failed(start) || failed(limit) || failed(delta))
    return failure();
  Type elt = typeOf(*start).getElementType();
  int64_t n;
  std::optional<double> s = node.constantScalar(0), l = node.constantScalar(1),
                        d = node.constantScalar(2);
  if (s && l && d) {
    if (*d == 0) {
      node.fail() << "delta must not be 0";
      return failure();
    }
    n = (int64_t)std::max(std::ceil((*l - *s) / *d), 0.0);
  } else {
    FailureOr<RankedTensorType> declared =
        declaredResult(node, 0, "start, limit and delta");
    if (failed(declared))
      return failure();
    if (declared->getRank() != 1) {
      node.fail() << "the declared output is not 1-D";
      return failure();
    }
    n = declared->getDimSize(0);
    // The count, in f64 (exact for any count that fits in memory).
    Type f64 = node.builder.getF64Type();
    FailureOr<Value> sf = castTo(node, *start, f64),
                     lf = castTo(node, *limit, f64),
                     df = castTo(node, *delta, f64);
    if (failed(sf) || failed(lf) || failed(df))
      return failure();
    FailureOr<Value> q = build<SubOp>(node, *lf, *sf);
    if (succeeded(q))
      q = build<DivOp>(node, *q, *df);
    if (succeeded(q))
      q = build<CeilOp>(node, *q);
    auto f64Const = [&](double v) {
      auto t = RankedTensorType::get({}, f64);
      return ConstantOp::create(node.builder, node.loc(), t,
                                DenseElementsAttr::get(t, v));
    };
    if (succeeded(q))
      q = build<MaxOp>(node, *q, f64Const(0.0));
    if (succeeded(q))
      q = build<EqualOp>(node, *q, f64Const((double)n));
    if (failed(q))
      return failure();
    guardInput(node, *q, 1,
               "with start and delta must give " + std::to_string(n) +
                   " elements, the output length this model was compiled "
                   "for");
  }
  auto iotaType = RankedTensorType::get({n}, elt);
  Value iota = constantOf(node, iotaType, [](int64_t i) { return (double)i; });
  FailureOr<Value> v = build<MulOp>(node, iota, *delta);
  if (succeeded(v))
    v = build<AddOp>(node, *v, *start);
  return one(v);
}

/// OneHot 9, 11: on where the (wrapped) index equals the position along
/// `axis`, off elsewhere.
FailureOr<SmallVector<Value>> mlir::kiln::convertOneHot(OnnxNode &node) {
  FailureOr<Value> indices = sizedInput(node, 0), values = node.rankedInput(2);
  if (failed(indices) || failed(values))
    return failure();
  ArrayRef<int64_t> in = typeOf(*indices).getShape();
  int64_t r = in.size() + 1;
  FailureOr<int64_t> axis = normalizeAxis(node, node.intAttr("axis", -1), r);
  if (failed(axis))
    return failure();
  int64_t depth;
  if (std::optional<double> c = node.constantScalar(1)) {
    depth = (int64_t)*c;
  } else {
    FailureOr<RankedTensorType> declared = declaredResult(node, 0, "depth");
    if (failed(declared))
      return failure();
    if (declared->getRank() != r) {
      node.fail() << "the declared output rank " << declared->getRank()
                  << " is not the indices' rank + 1";
      return failure();
    }
    depth = declared->getDimSize(*axis);
    if (failed(guardEquals(node, 1, {depth}, "the depth")))
      return failure();
  }
  if (typeOf(*values).getNumElements() != 2) {
    node.fail() << "values must hold [off, on]";
    return failure();
  }
  FailureOr<Value> idx = castTo(node, *indices, node.builder.getI64Type());
  if (failed(idx))
    return failure();
  FailureOr<Value> neg = build<LessOp>(node, *idx, constI64(node, {0}, {}));
  FailureOr<Value> wrapped =
      failed(neg) ? FailureOr<Value>(failure())
                  : build<AddOp>(node, *idx, constI64(node, {depth}, {}));
  if (failed(wrapped))
    return failure();
  idx = build<WhereOp>(node, *neg, *wrapped, *idx);
  SmallVector<int64_t> withOne(in), iotaShape(r, 1);
  withOne.insert(withOne.begin() + *axis, 1);
  iotaShape[*axis] = depth;
  if (succeeded(idx) && typeOf(*indices).hasStaticShape()) {
    idx = reshapeTo(node, *idx, withOne);
  } else if (succeeded(idx)) {
    // Indices of run-time sizes (a batch of token ids) keep them.
    SmallVector<SymSize> sizes = sizesOf(node, *indices);
    sizes.insert(sizes.begin() + *axis, SymSize::constant(1));
    idx = reshapeToSizes(node, *idx, sizes);
  }
  if (failed(idx))
    return failure();
  SmallVector<int64_t> iota;
  for (int64_t i = 0; i < depth; ++i)
    iota.push_back(i);
  FailureOr<Value> hit =
      build<EqualOp>(node, *idx, constI64(node, iota, iotaShape));
  FailureOr<Value> off = elementAt(node, *values, 0),
                   on = elementAt(node, *values, 1);
  if (failed(hit) || failed(off) || failed(on))
    return failure();
  return one(build<WhereOp>(node, *hit, *on, *off));
}

/// EyeLike 9, 22: ones on diagonal k of a 2-D input's shape.
FailureOr<SmallVector<Value>> mlir::kiln::convertEyeLike(OnnxNode &node) {
  FailureOr<Value> x = sizedInput(node, 0);
  if (failed(x))
    return failure();
  RankedTensorType in = typeOf(*x);
  if (in.getRank() != 2) {
    node.fail() << "expects a 2-D input, got rank " << in.getRank();
    return failure();
  }
  Type elt = in.getElementType();
  if (auto declared =
          dyn_cast<RankedTensorType>(node.op->getResult(0).getType()))
    elt = declared.getElementType();
  if (!in.hasStaticShape()) {
    // Run-time sizes: where col - row is k, compared at run time.
    FailureOr<Value> diag = colMinusRowOfSizes(
        node, sizeOf(node, *x, 0), sizeOf(node, *x, 1), "EyeLike's diagonal");
    if (succeeded(diag))
      diag = build<EqualOp>(node, *diag,
                            constI64(node, {node.intAttr("k", 0)}, {}));
    if (failed(diag))
      return failure();
    return one(build<CastOp>(node, *diag, TypeAttr::get(elt)));
  }
  int64_t k = node.intAttr("k", 0), cols = in.getDimSize(1);
  auto type = RankedTensorType::get(in.getShape(), elt);
  return SmallVector<Value>{constantOf(node, type, [&](int64_t i) {
    return i % cols - i / cols == k ? 1.0 : 0.0;
  })};
}

namespace {
enum class Window { Hann, Hamming, Blackman };

/// HannWindow, HammingWindow, BlackmanWindow 17: the window of a run-time
/// size is computed at compile time for the declared length.
FailureOr<SmallVector<Value>> window(OnnxNode &node, Window kind) {
  int64_t n;
  Type elt = node.builder.getF32Type();
  auto declared = dyn_cast<RankedTensorType>(node.op->getResult(0).getType());
  if (declared)
    elt = declared.getElementType();
  if (std::optional<double> c = node.constantScalar(0)) {
    n = (int64_t)*c;
  } else {
    FailureOr<RankedTensorType> d = declaredResult(node, 0, "size");
    if (failed(d))
      return failure();
    if (d->getRank() != 1) {
      node.fail() << "the declared output is not 1-D";
      return failure();
    }
    n = d->getDimSize(0);
    if (failed(guardEquals(node, 0, {n}, "the window length")))
      return failure();
  }
  if (n < 0) {
    node.fail() << "size " << n << " is negative";
    return failure();
  }
  double period = node.intAttr("periodic", 1) ? (double)n : (double)(n - 1);
  auto type = RankedTensorType::get({n}, elt);
  return SmallVector<Value>{constantOf(node, type, [&](int64_t i) {
    double a = period > 0 ? 2 * M_PI * (double)i / period : 0.0;
    switch (kind) {
    case Window::Hann:
      return 0.5 - 0.5 * std::cos(a);
    case Window::Hamming:
      return 25.0 / 46.0 - 21.0 / 46.0 * std::cos(a);
    case Window::Blackman:
      return 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2 * a);
    }
    return 0.0;
  })};
}

} // namespace

FailureOr<SmallVector<Value>> mlir::kiln::convertHannWindow(OnnxNode &node) {
  return window(node, Window::Hann);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertHammingWindow(OnnxNode &node) {
  return window(node, Window::Hamming);
}

FailureOr<SmallVector<Value>>
mlir::kiln::convertBlackmanWindow(OnnxNode &node) {
  return window(node, Window::Blackman);
}

/// MelWeightMatrix 17: the [dft_length / 2 + 1, num_mel_bins] triangular
/// filterbank, computed at compile time from its constant inputs as ONNX
/// defines it: num_mel_bins + 2 band edges evenly spaced on the mel scale
/// (mel(f) = 2595 log10(1 + f / 700)) from lower_edge_hertz, in steps of
/// (mel(upper) - mel(lower)) / (num_mel_bins + 2), each mapped to the
/// spectrogram bin floor((dft_length + 1) f / sample_rate); band i rises
/// from 0 at edge i to 1 at edge i + 1 and falls to 0 at edge i + 2.
FailureOr<SmallVector<Value>>
mlir::kiln::convertMelWeightMatrix(OnnxNode &node) {
  const char *names[] = {"num_mel_bins", "dft_length", "sample_rate",
                         "lower_edge_hertz", "upper_edge_hertz"};
  double in[5];
  for (unsigned i = 0; i < 5; ++i) {
    std::optional<double> c = node.constantScalar(i);
    if (!c || !std::isfinite(*c)) {
      node.fail() << names[i]
                  << " must be a finite compile-time constant scalar (the "
                     "inputs size the output); run-time values are not "
                     "supported";
      return failure();
    }
    in[i] = *c;
  }
  // The three sizes as integers only once they are in a range where the
  // conversion is defined.
  for (unsigned i = 0; i < 3; ++i)
    in[i] = std::clamp(in[i], -1.0, 1e15);
  auto [mels, dft, rate, lower, upper] =
      std::tuple((int64_t)in[0], (int64_t)in[1], (int64_t)in[2], in[3], in[4]);
  constexpr int64_t kMaxElements = int64_t(1) << 24;
  if (mels < 1 || dft < 1 || rate < 1 || lower < 0 || upper < lower ||
      (dft / 2 + 1) > kMaxElements / mels) {
    node.fail() << "expects num_mel_bins, dft_length and sample_rate of at "
                   "least 1, 0 <= lower_edge_hertz <= upper_edge_hertz and "
                   "at most "
                << kMaxElements << " weights, got " << mels << ", " << dft
                << ", " << rate << ", " << lower << " and " << upper;
    return failure();
  }
  int64_t bins = dft / 2 + 1;
  auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  double low = mel(lower), step = (mel(upper) - low) / double(mels + 2);
  SmallVector<int64_t> edge(mels + 2);
  for (int64_t k = 0; k < mels + 2; ++k) {
    double hz = 700.0 * (std::pow(10.0, (k * step + low) / 2595.0) - 1.0);
    edge[k] = (int64_t)std::floor(double(dft + 1) * hz / double(rate));
    if (edge[k] < 0 || edge[k] >= bins) {
      node.fail() << "band edge " << k << " falls in spectrogram bin "
                  << edge[k] << ", past the " << bins << " bins of a " << dft
                  << "-point DFT; upper_edge_hertz must be at most about "
                     "sample_rate / 2";
      return failure();
    }
  }
  std::vector<double> w(bins * mels, 0.0);
  for (int64_t i = 0; i < mels; ++i) {
    int64_t left = edge[i], center = edge[i + 1], right = edge[i + 2];
    if (center == left)
      w[center * mels + i] = 1.0;
    for (int64_t j = left; center > left && j <= center; ++j)
      w[j * mels + i] = double(j - left) / double(center - left);
    for (int64_t j = center; j < right; ++j)
      w[j * mels + i] = double(right - j) / double(right - center);
  }
  std::string name;
  Type elt =
      onnxElementType(node.builder, node.intAttr("output_datatype", 1), name);
  if (!elt || (!isa<FloatType>(elt) && !elt.isInteger()) || elt.isInteger(1)) {
    node.fail() << "output_datatype " << node.intAttr("output_datatype", 1)
                << " (" << name << ") is not a numeric type";
    return failure();
  }
  auto type = RankedTensorType::get({bins, mels}, elt);
  return SmallVector<Value>{
      constantOf(node, type, [&](int64_t i) { return w[i]; })};
}
