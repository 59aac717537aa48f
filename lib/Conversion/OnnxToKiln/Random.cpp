//===- Random.cpp - ONNX ops that draw random numbers -----------*- C++ -*-===//
//
// RandomUniform, RandomNormal, their Like forms, Bernoulli and Multinomial
// draw from one kiln.random (uniform on [0, 1) or standard normal, f32 or
// f64), scaled, compared or counted with ordinary kiln ops. Every run draws
// new numbers; a `seed` makes a new session repeat the same sequence of
// runs (docs/ops.md, "Random numbers"). ONNX leaves the values themselves
// to the implementation: they are not those of ONNX Runtime or numpy.
//
//===----------------------------------------------------------------------===//
#include "Build.h"

#include <cstring>

using namespace mlir;
using namespace mlir::kiln;

namespace {
enum class Draw { Uniform, Normal };

/// The output element type from `dtype` (or `dflt` without one), which must
/// be one of ONNX's float types.
FailureOr<Type> floatDtype(OnnxNode &node, Type dflt) {
  auto isFloat = [](Type t) {
    return t && (t.isF32() || t.isF64() || t.isF16() || t.isBF16());
  };
  Type elt = dflt;
  std::string name;
  if (node.hasAttr("dtype")) {
    elt = onnxElementType(node.builder, node.intAttr("dtype", 1), name);
    if (!isFloat(elt)) {
      node.fail() << "dtype " << node.intAttr("dtype", 1) << " ("
                  << (name.empty() ? "unknown" : name)
                  << ") is not a float type; use FLOAT, FLOAT16, BFLOAT16 or "
                     "DOUBLE";
      return failure();
    }
  }
  if (!isFloat(elt)) {
    node.fail() << "draws float16, bfloat16, float or double numbers, not "
                << (elt ? elt : node.builder.getNoneType())
                << "; set dtype to one of FLOAT, FLOAT16, BFLOAT16, DOUBLE";
    return failure();
  }
  return elt;
}

/// One kiln.random of `shape` (from `like` when given) in f64 for a double
/// result, else f32.
FailureOr<Value> draw(OnnxNode &node, Draw kind, ArrayRef<int64_t> shape,
                      Value like, Type elt) {
  Builder &b = node.builder;
  Type computed = elt.isF64() ? b.getF64Type() : b.getF32Type();
  uint64_t seed = 0;
  bool seeded = node.hasAttr("seed");
  if (seeded) {
    float s = node.floatAttr("seed", 0.0f);
    uint32_t bits;
    std::memcpy(&bits, &s, sizeof(bits));
    seed = bits;
  }
  auto type = RankedTensorType::get(shape, computed);
  auto op = RandomOp::create(
      node.builder, node.loc(), type, like,
      b.getStringAttr(kind == Draw::Uniform ? "uniform" : "normal"),
      b.getI64IntegerAttr((int64_t)seed), b.getBoolAttr(seeded));
  if (failed(finishBuild(node, op)))
    return failure();
  return op.getResult();
}

/// a * x + c, then cast to `elt` (each step left out where it is the
/// identity).
FailureOr<Value> affine(OnnxNode &node, Value x, double a, double c, Type elt) {
  Type computed = typeOf(x).getElementType();
  FailureOr<Value> v = x;
  if (a != 1.0)
    v = build<MulOp>(node, *v, scalarConstant(node, computed, a));
  if (succeeded(v) && c != 0.0)
    v = build<AddOp>(node, *v, scalarConstant(node, computed, c));
  if (succeeded(v) && elt != computed)
    v = build<CastOp>(node, *v, TypeAttr::get(elt));
  return v;
}

/// The Random* ops' result from a draw `x`: low + (high - low) u, or
/// mean + scale z, in `elt`.
FailureOr<SmallVector<Value>> scaled(OnnxNode &node, Draw kind,
                                     FailureOr<Value> x, Type elt) {
  if (failed(x))
    return failure();
  if (kind == Draw::Uniform) {
    float low = node.floatAttr("low", 0.0f);
    return one(affine(node, *x, node.floatAttr("high", 1.0f) - low, low, elt));
  }
  return one(affine(node, *x, node.floatAttr("scale", 1.0f),
                    node.floatAttr("mean", 0.0f), elt));
}

FailureOr<SmallVector<Value>> generate(OnnxNode &node, Draw kind) {
  std::optional<SmallVector<int64_t>> shape = node.intsAttr("shape");
  if (!shape) {
    node.fail() << "has no `shape` attribute (required)";
    return failure();
  }
  int64_t elements = 1;
  for (int64_t d : *shape) {
    if (d < 0 || (d > 0 && elements > (int64_t(1) << 40) / d)) {
      node.fail() << "shape entry " << d
                  << " is negative or makes the tensor larger than 2^40 "
                     "elements";
      return failure();
    }
    elements *= d;
  }
  FailureOr<Type> elt = floatDtype(node, node.builder.getF32Type());
  if (failed(elt))
    return failure();
  return scaled(node, kind, draw(node, kind, *shape, Value(), *elt), *elt);
}

FailureOr<SmallVector<Value>> generateLike(OnnxNode &node, Draw kind) {
  FailureOr<Value> like = node.rankedInput(0);
  if (failed(like))
    return failure();
  FailureOr<Type> elt = floatDtype(node, elementOf(*like));
  if (failed(elt))
    return failure();
  return scaled(node, kind,
                draw(node, kind, typeOf(*like).getShape(), *like, *elt), *elt);
}
} // namespace

/// RandomUniform 1, 22: low + (high - low) u.
FailureOr<SmallVector<Value>> mlir::kiln::convertRandomUniform(OnnxNode &node) {
  return generate(node, Draw::Uniform);
}

/// RandomNormal 1, 22: mean + scale z.
FailureOr<SmallVector<Value>> mlir::kiln::convertRandomNormal(OnnxNode &node) {
  return generate(node, Draw::Normal);
}

/// RandomUniformLike 1, 22: RandomUniform of the input's shape (symbolic
/// dimensions included) and, without dtype, its element type.
FailureOr<SmallVector<Value>>
mlir::kiln::convertRandomUniformLike(OnnxNode &node) {
  return generateLike(node, Draw::Uniform);
}

/// RandomNormalLike 1, 22.
FailureOr<SmallVector<Value>>
mlir::kiln::convertRandomNormalLike(OnnxNode &node) {
  return generateLike(node, Draw::Normal);
}

/// Bernoulli 15, 22: 1 where a uniform draw is below p, else 0, in dtype (the
/// input's type without one; any numeric type or bool).
FailureOr<SmallVector<Value>> mlir::kiln::convertBernoulli(OnnxNode &node) {
  FailureOr<Value> p = node.rankedInput(0);
  if (failed(p))
    return failure();
  Type in = elementOf(*p);
  if (!isa<FloatType>(in) || in.getIntOrFloatBitWidth() < 16) {
    node.fail() << "takes float16, bfloat16, float or double probabilities, "
                   "not "
                << in;
    return failure();
  }
  Type out = in;
  if (node.hasAttr("dtype")) {
    std::string name;
    out = onnxElementType(node.builder, node.intAttr("dtype", 0), name);
    if (!out || (!out.isIntOrFloat()) ||
        (isa<FloatType>(out) && out.getIntOrFloatBitWidth() < 16) ||
        (out.isInteger() && !out.isInteger(1) &&
         out.getIntOrFloatBitWidth() < 8)) {
      node.fail() << "dtype " << node.intAttr("dtype", 0) << " ("
                  << (name.empty() ? "unknown" : name)
                  << ") is not a numeric or bool type";
      return failure();
    }
  }
  Type computed =
      in.isF64() ? node.builder.getF64Type() : node.builder.getF32Type();
  FailureOr<Value> u =
      draw(node, Draw::Uniform, typeOf(*p).getShape(), *p, computed);
  if (failed(u))
    return failure();
  Value prob = *p;
  if (in != computed) {
    FailureOr<Value> c = build<CastOp>(node, prob, TypeAttr::get(computed));
    if (failed(c))
      return failure();
    prob = *c;
  }
  FailureOr<Value> hit = build<LessOp>(node, *u, prob);
  if (failed(hit))
    return failure();
  if (out.isInteger(1))
    return one(hit);
  return one(build<CastOp>(node, *hit, TypeAttr::get(out)));
}

/// Multinomial 7, 22: sample_size draws per row of unnormalized log
/// probabilities [batch, classes]. The row's softmax, summed up (the CDF),
/// against a uniform u per sample: the class is the number of CDF entries
/// at or below u (clamped to the last class, for a CDF that rounds to just
/// under 1).
FailureOr<SmallVector<Value>> mlir::kiln::convertMultinomial(OnnxNode &node) {
  FailureOr<Value> x = node.staticInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  if (type.getRank() != 2 || !isa<FloatType>(type.getElementType()) ||
      type.getElementType().getIntOrFloatBitWidth() < 16) {
    node.fail() << "expects float log-probabilities of shape [batch, "
                   "classes], got "
                << type;
    return failure();
  }
  Builder &b = node.builder;
  std::string name;
  Type out = onnxElementType(b, node.intAttr("dtype", 6), name);
  if (!out || !(out.isInteger(32) || out.isInteger(64))) {
    node.fail() << "dtype " << node.intAttr("dtype", 6) << " ("
                << (name.empty() ? "unknown" : name)
                << ") is not INT32 or INT64";
    return failure();
  }
  int64_t batch = type.getDimSize(0), classes = type.getDimSize(1);
  int64_t samples = node.intAttr("sample_size", 1);
  if (samples < 1 || classes < 1 || classes > (int64_t(1) << 24) ||
      batch * classes > (int64_t(1) << 32) / samples) {
    node.fail() << "sample_size " << samples << " with " << classes
                << " classes and batch " << batch
                << " is not supported (each must be at least 1, classes at "
                   "most 2^24, and batch x samples x classes at most 2^32)";
    return failure();
  }
  Type f32 = b.getF32Type();
  FailureOr<Value> logits = *x;
  if (type.getElementType() != f32)
    logits = build<CastOp>(node, *x, TypeAttr::get(f32));
  if (failed(logits))
    return failure();
  FailureOr<Value> p = build<SoftmaxOp>(node, *logits, b.getI64IntegerAttr(1));
  if (failed(p))
    return failure();
  Value axis = ConstantOp::create(
      node.builder, node.loc(), RankedTensorType::get({}, b.getI64Type()),
      DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                             int64_t(1)));
  FailureOr<Value> cdf = build<CumSumOp>(node, *p, axis, b.getBoolAttr(false),
                                         b.getBoolAttr(false));
  if (failed(cdf))
    return failure();
  FailureOr<Value> rows = reshapeTo(node, *cdf, {batch, 1, classes});
  FailureOr<Value> u =
      draw(node, Draw::Uniform, {batch, samples, 1}, Value(), f32);
  if (failed(rows) || failed(u))
    return failure();
  FailureOr<Value> below = build<LessEqualOp>(node, *rows, *u);
  if (failed(below))
    return failure();
  // Counted in float32: exact, as classes are at most 2^24.
  FailureOr<Value> counts = build<CastOp>(node, *below, TypeAttr::get(f32));
  if (failed(counts))
    return failure();
  FailureOr<Value> sum = build<ReduceSumOp>(
      node, *counts, b.getDenseI64ArrayAttr({2}), b.getBoolAttr(false));
  if (failed(sum))
    return failure();
  FailureOr<Value> last = build<MinOp>(
      node, *sum,
      splatConstant(node, RankedTensorType::get({}, f32), double(classes - 1)));
  if (failed(last))
    return failure();
  return one(build<CastOp>(node, *last, TypeAttr::get(out)));
}
