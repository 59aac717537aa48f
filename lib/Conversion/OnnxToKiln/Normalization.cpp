//===- Normalization.cpp - ONNX normalizations ------------------*- C++ -*-===//
//
// BatchNormalization (inference), LayerNormalization and RMSNormalization
// are kiln ops; InstanceNormalization, GroupNormalization,
// MeanVarianceNormalization, LpNormalization and LRN decompose into
// reductions and elementwise ops.
//
//===----------------------------------------------------------------------===//
#include "Build.h"
#include "SymbolicSizes.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// (x - mean) / sqrt(var + eps) over `axes` (biased variance), or with
/// `epsOutside`, (x - mean) / (sqrt(var) + eps) as MeanVarianceNormalization;
/// the mean and variance (keeping the reduced dimensions) into `meanOut` and
/// `varOut` when given.
FailureOr<Value> normalize(OnnxNode &node, Value x, ArrayRef<int64_t> axes,
                           double eps, bool epsOutside,
                           Value *meanOut = nullptr, Value *varOut = nullptr) {
  auto &b = node.builder;
  Type elt = typeOf(x).getElementType();
  auto axesAttr = b.getDenseI64ArrayAttr(axes);
  FailureOr<Value> mean =
      build<ReduceMeanOp>(node, x, axesAttr, b.getBoolAttr(true));
  if (failed(mean))
    return failure();
  FailureOr<Value> centered = build<SubOp>(node, x, *mean), var, sq, y;
  if (failed(centered) ||
      failed(sq = build<MulOp>(node, *centered, *centered)) ||
      failed(var =
                 build<ReduceMeanOp>(node, *sq, axesAttr, b.getBoolAttr(true))))
    return failure();
  if (meanOut)
    *meanOut = *mean;
  if (varOut)
    *varOut = *var;
  Value e = scalarConstant(node, elt, eps);
  if (epsOutside) {
    if (failed(y = build<SqrtOp>(node, *var)) ||
        failed(y = build<AddOp>(node, *y, e)))
      return failure();
  } else if (failed(y = build<AddOp>(node, *var, e)) ||
             failed(y = build<SqrtOp>(node, *y))) {
    return failure();
  }
  return build<DivOp>(node, *centered, *y);
}

/// BatchNormalization 14/15 with training_mode=1: Y normalized by the
/// batch's own mean and (population) variance over every axis but the
/// channels, and the running statistics updated with `momentum`:
/// input_mean * momentum + batch_mean * (1 - momentum), likewise the
/// variance, in the type of input_mean/input_var.
FailureOr<SmallVector<Value>> batchNormTraining(OnnxNode &node) {
  FailureOr<Value> x = floatInput(node, 0);
  SmallVector<Value> in;
  for (unsigned i = 1; i < 5; ++i) {
    FailureOr<Value> v = node.rankedInput(i);
    if (failed(v))
      return failure();
    in.push_back(*v);
  }
  if (failed(x))
    return failure();
  RankedTensorType xt = typeOf(*x);
  int64_t rank = xt.getRank();
  if (rank < 2 || ShapedType::isDynamic(xt.getDimSize(1))) {
    node.fail() << "training_mode=1 needs an input of rank 2 or more with a "
                   "static channel dimension, got "
                << xt;
    return failure();
  }
  int64_t c = xt.getDimSize(1);
  for (unsigned i = 0; i < 4; ++i)
    if (typeOf(in[i]).getRank() != 1 || typeOf(in[i]).getDimSize(0) != c) {
      node.fail() << "scale, B, input_mean and input_var must have shape [" << c
                  << "] (the channels of X), got " << typeOf(in[i]);
      return failure();
    }
  SmallVector<int64_t> axes{0}, perChannel(rank - 1, 1);
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  perChannel[0] = c;
  Value mean, var;
  FailureOr<Value> y = normalize(
      node, *x, axes, node.floatAttr("epsilon", 1e-5f), false, &mean, &var);
  FailureOr<Value> s = reshapeTo(node, in[0], perChannel),
                   bias = reshapeTo(node, in[1], perChannel);
  if (failed(y) || failed(s) || failed(bias) ||
      failed(y = build<MulOp>(node, *y, *s)) ||
      failed(y = build<AddOp>(node, *y, *bias)))
    return failure();
  SmallVector<Value> results{*y, Value(), Value()};
  double momentum = node.floatAttr("momentum", 0.9f);
  for (unsigned i = 1; i < 3; ++i) {
    if (!node.resultUsed(i))
      continue;
    Value running = in[1 + i];
    Type elt = typeOf(running).getElementType();
    FailureOr<Value> batch = reshapeTo(node, i == 1 ? mean : var, {c});
    if (succeeded(batch) && typeOf(*batch).getElementType() != elt)
      batch = build<CastOp>(node, *batch, TypeAttr::get(elt));
    FailureOr<Value> kept, added;
    if (failed(batch) ||
        failed(kept = build<MulOp>(node, running,
                                   scalarConstant(node, elt, momentum))) ||
        failed(added = build<MulOp>(node, *batch,
                                    scalarConstant(node, elt, 1 - momentum))) ||
        failed(kept = build<AddOp>(node, *kept, *added)))
      return failure();
    results[i] = *kept;
  }
  return results;
}

} // namespace

FailureOr<SmallVector<Value>>
mlir::kiln::convertBatchNormalization(OnnxNode &node) {
  if (node.intAttr("training_mode", 0) != 0) {
    if (node.opset >= 14)
      return batchNormTraining(node);
    node.fail() << "training_mode=1 is not supported; export the model in "
                   "inference (eval) mode";
    return failure();
  }
  for (unsigned i = 1; i < 5; ++i)
    if (node.resultUsed(i)) {
      node.fail() << "output " << i
                  << " (running statistics) is only computed with "
                     "training_mode=1 (opset 14+); export the model in "
                     "inference (eval) mode";
      return failure();
    }
  SmallVector<Value> in;
  for (unsigned i = 0; i < 5; ++i) {
    FailureOr<Value> v = node.rankedInput(i);
    if (failed(v))
      return failure();
    in.push_back(*v);
  }
  // Symbolic channels are the scale's, checked at run time.
  if (RankedTensorType s = typeOf(in[1]);
      s.getRank() == 1 && s.hasStaticShape()) {
    FailureOr<Value> x = pinDims(node, in[0], {{1, s.getDimSize(0)}},
                                 "the scale needs the input's");
    if (failed(x))
      return failure();
    in[0] = *x;
  }
  RankedTensorType xt = typeOf(in[0]);
  if (xt.getRank() >= 2 && xt.isDynamicDim(1)) {
    node.fail() << "the channels (dimension 1) of " << xt
                << " are symbolic; the scale, bias, mean and variance fix "
                   "their number: declare it in the input's shape";
    return failure();
  }
  return one(build<BatchNormOp>(
      node, in[0], in[1], in[2], in[3], in[4],
      node.builder.getF32FloatAttr(node.floatAttr("epsilon", 1e-5f))));
}

namespace {
/// LayerNormalization 17 with its Mean and InvStdDev outputs: decomposed
/// into reductions and elementwise ops in stash_type (float32); the two
/// statistics keep the normalized dimensions with size 1.
FailureOr<SmallVector<Value>> layerNormWithStats(OnnxNode &node, Value x,
                                                 Value scale, int64_t axis,
                                                 float epsilon) {
  if (node.intAttr("stash_type", 1) != 1) {
    node.fail() << "stash_type " << node.intAttr("stash_type", 1)
                << " is not supported with the Mean or InvStdDev outputs; "
                   "Kiln computes them in float32 (stash_type 1)";
    return failure();
  }
  // Scale and B broadcast to the normalized dimensions, never beyond them; a
  // normalized dimension of run-time size takes theirs (guarded equal where
  // the product broadcasts).
  ArrayRef<int64_t> normalized = typeOf(x).getShape().drop_front(axis);
  for (Value p : {scale, node.input(2)}) {
    if (!p)
      continue;
    ArrayRef<int64_t> ps = typeOf(p).getShape();
    SmallVector<int64_t> want(normalized);
    for (size_t k = 0; k < ps.size() && k < want.size(); ++k) {
      int64_t &w = want[want.size() - 1 - k];
      if (ShapedType::isDynamic(w))
        w = ps[ps.size() - 1 - k];
    }
    FailureOr<SmallVector<int64_t>> bs = broadcastShapes(ps, want);
    if (ps.size() > normalized.size() || failed(bs) ||
        ArrayRef<int64_t>(*bs) != ArrayRef<int64_t>(want)) {
      auto dims = [](ArrayRef<int64_t> shape) {
        std::string s = "[";
        llvm::interleave(
            shape,
            [&](int64_t d) {
              s += ShapedType::isDynamic(d) ? "?" : std::to_string(d);
            },
            [&] { s += ","; });
        return s + "]";
      };
      node.fail() << "scale and bias must broadcast to the normalized shape "
                  << dims(normalized) << ", got " << dims(ps);
      return failure();
    }
  }
  auto &b = node.builder;
  Type elt = typeOf(x).getElementType(), f32 = b.getF32Type();
  SmallVector<int64_t> axes;
  for (int64_t d = axis; d < typeOf(x).getRank(); ++d)
    axes.push_back(d);
  auto reduceMean = [&](Value v) {
    return build<ReduceMeanOp>(node, v, b.getDenseI64ArrayAttr(axes),
                               b.getBoolAttr(true));
  };
  FailureOr<Value> xs = x;
  if (elt != f32)
    xs = build<CastOp>(node, x, TypeAttr::get(f32));
  if (failed(xs))
    return failure();
  FailureOr<Value> mean = reduceMean(*xs);
  if (failed(mean))
    return failure();
  FailureOr<Value> centered = build<SubOp>(node, *xs, *mean);
  if (failed(centered))
    return failure();
  FailureOr<Value> var = build<MulOp>(node, *centered, *centered);
  if (succeeded(var))
    var = reduceMean(*var);
  if (failed(var))
    return failure();
  auto epsType = RankedTensorType::get({}, f32);
  Value eps = ConstantOp::create(
      b, node.loc(), epsType,
      DenseElementsAttr::get(epsType, b.getF32FloatAttr(epsilon)));
  FailureOr<Value> invStd = build<AddOp>(node, *var, eps);
  if (succeeded(invStd))
    invStd = build<SqrtOp>(node, *invStd);
  if (succeeded(invStd))
    invStd = build<ReciprocalOp>(node, *invStd);
  if (failed(invStd))
    return failure();
  FailureOr<Value> y = build<MulOp>(node, *centered, *invStd);
  if (succeeded(y) && elt != f32)
    y = build<CastOp>(node, *y, TypeAttr::get(elt));
  if (succeeded(y))
    y = build<MulOp>(node, *y, scale);
  if (succeeded(y) && node.input(2))
    y = build<AddOp>(node, *y, node.input(2));
  if (failed(y))
    return failure();
  return SmallVector<Value>{*y, *mean, *invStd};
}

} // namespace

namespace {
/// X, scale and the normalized axis of LayerNormalization and
/// RMSNormalization (attribute `axis`, default -1).
struct NormInputs {
  Value x, scale;
  int64_t axis;
};
FailureOr<NormInputs> normInputs(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0), scale = node.rankedInput(1);
  if (failed(x) || failed(scale))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  if (rank == 0) {
    node.fail() << "cannot normalize a scalar";
    return failure();
  }
  FailureOr<int64_t> axis = normalizeAxis(node, node.intAttr("axis", -1), rank);
  if (failed(axis))
    return failure();
  return NormInputs{*x, *scale, *axis};
}
} // namespace

/// LayerNormalization 17. Y alone is one kiln.layer_norm (computed in the
/// input type); the Mean and InvStdDev outputs, when used, take the
/// decomposed path.
FailureOr<SmallVector<Value>>
mlir::kiln::convertLayerNormalization(OnnxNode &node) {
  FailureOr<NormInputs> in = normInputs(node);
  if (failed(in))
    return failure();
  auto [x, scale, axis] = *in;
  float epsilon = node.floatAttr("epsilon", 1e-5f);
  // The statistics' decomposition also normalizes over sizes of run-time
  // extent, which the fused kernel cannot (its sizes are static).
  if (node.resultUsed(1) || node.resultUsed(2) ||
      llvm::any_of(typeOf(x).getShape().drop_front(axis),
                   ShapedType::isDynamic))
    return layerNormWithStats(node, x, scale, axis, epsilon);
  auto &b = node.builder;
  return one(build<LayerNormOp>(node, x, scale, node.input(2),
                                b.getI64IntegerAttr(axis),
                                b.getF32FloatAttr(epsilon), UnitAttr()));
}

/// RMSNormalization 23: one kiln.layer_norm with `rms` (no mean, no bias).
/// stash_type 1 asks for float32: float16 and bfloat16 inputs are cast to
/// float32 around it, float32 and float64 are normalized in their own type.
/// Y has scale's type.
FailureOr<SmallVector<Value>>
mlir::kiln::convertRMSNormalization(OnnxNode &node) {
  FailureOr<NormInputs> in = normInputs(node);
  if (failed(in))
    return failure();
  auto [x, scale, axis] = *in;
  int64_t stash = node.intAttr("stash_type", 1);
  if (stash != 1) {
    node.fail() << "stash_type " << stash
                << " is not supported; Kiln computes RMSNormalization in "
                   "float32 (stash_type 1): remove the attribute or set it "
                   "to 1";
    return failure();
  }
  return one(rmsNorm(node, x, scale, axis, node.floatAttr("epsilon", 1e-5f)));
}

/// SimplifiedLayerNormalization (ONNX Runtime's, which it registers in the
/// default domain): the RMS norm of RMSNormalization-23 over the dimensions
/// from `axis` (-1); its inv_std_var output (training) is refused.
FailureOr<SmallVector<Value>>
mlir::kiln::convertSimplifiedLayerNormalization(OnnxNode &node) {
  if (node.resultUsed(1)) {
    node.fail() << "output 1 (inv_std_var, computed by ONNX Runtime for "
                   "training) is not supported; use only the normalized "
                   "output";
    return failure();
  }
  FailureOr<NormInputs> in = normInputs(node);
  if (failed(in))
    return failure();
  return one(rmsNorm(node, in->x, in->scale, in->axis,
                     node.floatAttr("epsilon", 1e-5f)));
}

FailureOr<Value> mlir::kiln::rmsNorm(OnnxNode &node, Value x, Value scale,
                                     int64_t axis, float epsilon) {
  auto &b = node.builder;
  Type xElt = elementOf(x), yElt = elementOf(scale);
  Type compute =
      xElt.getIntOrFloatBitWidth() < 32 ? Type(b.getF32Type()) : xElt;
  FailureOr<Value> xs = x, ss = scale;
  if (xElt != compute)
    xs = build<CastOp>(node, x, TypeAttr::get(compute));
  if (yElt != compute)
    ss = build<CastOp>(node, scale, TypeAttr::get(compute));
  if (failed(xs) || failed(ss))
    return failure();
  FailureOr<Value> y;
  ArrayRef<int64_t> normalized = typeOf(x).getShape().drop_front(axis);
  if (llvm::any_of(normalized, ShapedType::isDynamic)) {
    // The fused kernel keeps a row of static length in registers; a row of
    // run-time length (axis 0 of a symbolic batch) is x / sqrt(mean(x^2) +
    // eps) * scale, as ops that size themselves at run time.
    SmallVector<int64_t> axes =
        llvm::to_vector(llvm::seq<int64_t>(axis, typeOf(x).getRank()));
    FailureOr<Value> sq = build<MulOp>(node, *xs, *xs), ms;
    if (failed(sq) ||
        failed(ms = build<ReduceMeanOp>(node, *sq, b.getDenseI64ArrayAttr(axes),
                                        b.getBoolAttr(true))) ||
        failed(ms = build<AddOp>(node, *ms,
                                 scalarConstant(node, compute, epsilon))) ||
        failed(ms = build<SqrtOp>(node, *ms)) ||
        failed(y = build<DivOp>(node, *xs, *ms)) ||
        failed(y = build<MulOp>(node, *y, *ss)))
      return failure();
  } else {
    y = build<LayerNormOp>(node, *xs, *ss, Value(), b.getI64IntegerAttr(axis),
                           b.getF32FloatAttr(epsilon), b.getUnitAttr());
  }
  if (succeeded(y) && yElt != compute)
    y = build<CastOp>(node, *y, TypeAttr::get(yElt));
  return y;
}

FailureOr<SmallVector<Value>>
mlir::kiln::convertInstanceNormalization(OnnxNode &node) {
  // The batch and spatial sizes may be symbolic (the reductions and
  // elementwise ops size them at run time); the channels size the scale.
  FailureOr<Value> x = elementwiseFloatInput(node, 0),
                   scale = node.rankedInput(1), bias = node.rankedInput(2);
  if (failed(x) || failed(scale) || failed(bias))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  if (rank < 3) {
    node.fail() << "expects an input of rank 3 or more, got " << typeOf(*x);
    return failure();
  }
  if (RankedTensorType s = typeOf(*scale);
      s.getRank() == 1 && s.hasStaticShape())
    x = pinDims(node, *x, {{1, s.getDimSize(0)}},
                "the scale needs the input's");
  if (failed(x))
    return failure();
  int64_t c = typeOf(*x).getDimSize(1);
  if (ShapedType::isDynamic(c) && failed(node.requireStaticShape(typeOf(*x))))
    return failure();
  SmallVector<int64_t> axes, perChannel(rank - 1, 1);
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  perChannel[0] = c;
  FailureOr<Value> y =
      normalize(node, *x, axes, node.floatAttr("epsilon", 1e-5f), false);
  // A scale or bias of run-time length must have the C entries of the
  // input's static channels (guarded), then is of that size.
  auto perChannelOf = [&](Value v, int64_t operand) -> FailureOr<Value> {
    RankedTensorType t = typeOf(v);
    if (t.hasStaticShape() || t.getRank() != 1 || !node.sizes)
      return reshapeTo(node, v, perChannel);
    FailureOr<Value> r = vectorOfLength(
        node, v, *x, 1,
        node.describe() + ": input " + std::to_string(operand) +
            " does not have one entry per channel (" + std::to_string(c) +
            ") at these input sizes");
    return failed(r) ? r : reshapeTo(node, *r, perChannel);
  };
  FailureOr<Value> s = perChannelOf(*scale, 1), bb = perChannelOf(*bias, 2);
  if (failed(y) || failed(s) || failed(bb) ||
      failed(y = build<MulOp>(node, *y, *s)))
    return failure();
  return one(build<AddOp>(node, *y, *bb));
}

FailureOr<SmallVector<Value>>
mlir::kiln::convertMeanVarianceNormalization(OnnxNode &node) {
  // Reductions and elementwise ops: symbolic sizes are fine.
  FailureOr<Value> x = elementwiseFloatInput(node, 0);
  if (failed(x))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  SmallVector<int64_t> axes =
      node.intsAttr("axes").value_or(SmallVector<int64_t>{0, 2, 3});
  FailureOr<SmallVector<int64_t>> norm = normalizeAxes(node, axes, rank);
  if (failed(norm))
    return failure();
  axes = *norm;
  llvm::sort(axes);
  axes.erase(llvm::unique(axes), axes.end());
  return one(normalize(node, *x, axes, 1e-9, true));
}

/// LRN: x / (bias + alpha / size * sum of squares over a window of
/// channels)^beta.
/// The batch and spatial sizes may be symbolic (each window slice keeps
/// them); the channels must be static.
FailureOr<SmallVector<Value>> mlir::kiln::convertLRN(OnnxNode &node) {
  FailureOr<Value> x = sizedInput(node, 0);
  if (succeeded(x))
    x = elementwiseFloatInput(node, 0);
  if (failed(x))
    return failure();
  RankedTensorType xt = typeOf(*x);
  int64_t size = node.intAttr("size", 0), rank = xt.getRank();
  if (size <= 0 || rank < 2) {
    node.fail() << "expects a positive size and an input of rank 2 or more";
    return failure();
  }
  if (xt.isDynamicDim(1)) {
    node.fail() << "the channels (dimension 1 of " << xt
                << ") must have a static size; give that dimension one size";
    return failure();
  }
  auto &b = node.builder;
  Type elt = xt.getElementType();
  // A window reaching past every channel sums the same as one reaching to
  // the last (the rest is zeros): at most C - 1 channels either side, so a
  // huge size costs no more than 2C - 1 taps.
  int64_t channels = std::max<int64_t>(xt.getDimSize(1), 1);
  int64_t before = std::min((size - 1) / 2, channels - 1),
          after = std::min(size - 1 - (size - 1) / 2, channels - 1);
  SmallVector<int64_t> pads(2 * rank, 0);
  pads[1] = before;
  pads[rank + 1] = after;
  FailureOr<Value> sq = build<MulOp>(node, *x, *x), padded;
  if (failed(sq) ||
      failed(padded = build<PadOp>(node, *sq, b.getDenseI64ArrayAttr(pads),
                                   b.getF32FloatAttr(0.0f))))
    return failure();
  SmallVector<int64_t> sizes(xt.getShape()), strides(rank, 1);
  Value sum;
  for (int64_t k = 0; k <= before + after; ++k) {
    SmallVector<int64_t> offsets(rank, 0);
    offsets[1] = k;
    FailureOr<Value> s =
        xt.hasStaticShape()
            ? build<SliceOp>(node, *padded, b.getDenseI64ArrayAttr(offsets),
                             b.getDenseI64ArrayAttr(sizes),
                             b.getDenseI64ArrayAttr(strides))
            : FailureOr<Value>(sizedPart(node, *padded,
                                         SliceBounds{offsets, sizes, strides}));
    if (failed(s) || (sum && failed(s = build<AddOp>(node, sum, *s))))
      return failure();
    sum = *s;
  }
  double alpha = node.floatAttr("alpha", 1e-4f),
         beta = node.floatAttr("beta", 0.75f),
         bias = node.floatAttr("bias", 1.0f);
  FailureOr<Value> d =
      build<MulOp>(node, sum, scalarConstant(node, elt, alpha / size));
  if (failed(d) ||
      failed(d = build<AddOp>(node, *d, scalarConstant(node, elt, bias))) ||
      failed(d = build<PowOp>(node, *d, scalarConstant(node, elt, beta))))
    return failure();
  return one(build<DivOp>(node, *x, *d));
}

/// BatchNormalization 1 and 6: is_test = 1 meant inference and spatial = 0
/// normalized every element separately; Kiln compiles the inference, spatial
/// form.
FailureOr<SmallVector<Value>>
mlir::kiln::convertBatchNormalization1(OnnxNode &node) {
  if (node.intAttr("is_test", 0) != 1) {
    node.fail() << "is_test = 0 (training statistics) is not "
                   "supported; export the model in inference "
                   "(eval) mode";
    return failure();
  }
  if (node.intAttr("spatial", 1) != 1) {
    node.fail() << "spatial = 0 (per-element statistics) is not "
                   "supported";
    return failure();
  }
  return convertBatchNormalization(node);
}

/// LpNormalization 1, 22: x / ||x||_p along `axis` for p 1 or 2; where the
/// norm is 0 (all of x is), the result is 0 (22 says so; 1 left it open).
FailureOr<SmallVector<Value>>
mlir::kiln::convertLpNormalization(OnnxNode &node) {
  // A reduction and elementwise ops: symbolic sizes are fine (an embedding
  // normalized at any batch).
  FailureOr<Value> x = elementwiseFloatInput(node, 0);
  if (failed(x))
    return failure();
  int64_t p = node.intAttr("p", 2);
  if (p != 1 && p != 2) {
    node.fail() << "p = " << p << " is not supported; LpNormalization takes "
                << "p = 1 or 2";
    return failure();
  }
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.intAttr("axis", -1), typeOf(*x).getRank());
  if (failed(axis))
    return failure();
  auto &b = node.builder;
  Type elt = elementOf(*x);
  FailureOr<Value> mag =
      p == 1 ? build<AbsOp>(node, *x) : build<MulOp>(node, *x, *x);
  FailureOr<Value> norm, isZero, safe;
  if (failed(mag) ||
      failed(norm =
                 build<ReduceSumOp>(node, *mag, b.getDenseI64ArrayAttr({*axis}),
                                    b.getBoolAttr(true))) ||
      (p == 2 && failed(norm = build<SqrtOp>(node, *norm))) ||
      failed(isZero =
                 build<EqualOp>(node, *norm, scalarConstant(node, elt, 0))) ||
      failed(safe = build<WhereOp>(node, *isZero, scalarConstant(node, elt, 1),
                                   *norm)))
    return failure();
  // x is 0 wherever its norm is, so x / 1 there is the 0 ONNX asks for.
  return one(build<DivOp>(node, *x, *safe));
}

/// GroupNormalization 18, 21: the channels of each sample in `num_groups`
/// groups, each normalized over its channels and spatial positions, then
/// scaled and shifted per group (18) or per channel (21). With stash_type 1
/// the statistics of a 16-bit float input are computed in f32.
FailureOr<SmallVector<Value>>
mlir::kiln::convertGroupNormalization(OnnxNode &node) {
  // The batch and spatial sizes may be symbolic (a diffusion U-Net at any
  // image size); the channels must be static.
  FailureOr<Value> x = sizedInput(node, 0);
  if (succeeded(x))
    x = elementwiseFloatInput(node, 0);
  FailureOr<Value> scale = node.staticInput(1), bias = node.staticInput(2);
  if (failed(x) || failed(scale) || failed(bias))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
  if (shape.size() < 2 || ShapedType::isDynamic(shape[1])) {
    node.fail() << "expects an input of rank 2 or more with static channels, "
                   "got "
                << typeOf(*x);
    return failure();
  }
  int64_t groups = node.intAttr("num_groups", 0), c = shape[1];
  if (groups <= 0 || c % groups != 0) {
    node.fail() << "num_groups must be a positive divisor of the " << c
                << " channels, got " << groups;
    return failure();
  }
  int64_t perGroupParams = node.opset < 21 ? groups : c;
  if (typeOf(*scale).getNumElements() != perGroupParams ||
      typeOf(*bias).getNumElements() != perGroupParams) {
    node.fail() << "scale and bias must have " << perGroupParams
                << " elements (one per "
                << (node.opset < 21 ? "group" : "channel") << ")";
    return failure();
  }
  SmallVector<SymSize> dims = sizesOf(node, *x);
  std::optional<SymSize> inner = SymSize::constant(1);
  for (const SymSize &d : ArrayRef(dims).drop_front(2))
    if (inner)
      inner = SymSize::mul(*inner, d);
  std::optional<SymSize> perGroup =
      inner ? SymSize::mul(SymSize::constant(c / groups), *inner)
            : std::nullopt;
  if (!perGroup) {
    node.fail() << "the spatial sizes of " << typeOf(*x)
                << " multiply past 2^63; give them smaller ranges";
    return failure();
  }
  Type elt = elementOf(*x), f32 = node.builder.getF32Type();
  bool stash =
      node.intAttr("stash_type", 1) == 1 && elt.getIntOrFloatBitWidth() < 32;
  FailureOr<Value> y =
      reshapeToSizes(node, *x, {dims[0], SymSize::constant(groups), *perGroup});
  if (succeeded(y) && stash)
    y = build<CastOp>(node, *y, TypeAttr::get(f32));
  if (failed(y) ||
      failed(y = normalize(node, *y, {2}, node.floatAttr("epsilon", 1e-5f),
                           false)) ||
      (stash && failed(y = build<CastOp>(node, *y, TypeAttr::get(elt)))))
    return failure();
  // Scale and shift per group on [N, G, C/G * inner], or per channel on
  // [N, C, inner].
  SmallVector<int64_t> paramShape = {perGroupParams, 1};
  if (node.opset >= 21)
    y = reshapeToSizes(node, *y, {dims[0], SymSize::constant(c), *inner});
  FailureOr<Value> s = reshapeTo(node, *scale, paramShape),
                   bb = reshapeTo(node, *bias, paramShape);
  if (failed(y) || failed(s) || failed(bb) ||
      failed(y = build<MulOp>(node, *y, *s)) ||
      failed(y = build<AddOp>(node, *y, *bb)))
    return failure();
  return one(reshapeToSizes(node, *y, dims));
}
