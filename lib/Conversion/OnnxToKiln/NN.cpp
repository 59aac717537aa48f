//===- NN.cpp - ONNX convolution, pooling, normalization, GEMM --*- C++ -*-===//
#include "Build.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Window attributes of a Conv or pooling node, in 2-D form.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, pads;
  bool oneD = false; ///< a 1-D window lifted to 2-D with a unit height
};

/// Reads kernel/strides/dilations/pads for an input of rank 3 (1-D) or 4
/// (2-D); 1-D windows become 2-D windows of height 1.
FailureOr<Window> readWindow(OnnxNode &node, RankedTensorType input,
                             SmallVector<int64_t> kernel) {
  Window w;
  int64_t spatial = input.getRank() - 2;
  if (spatial != 1 && spatial != 2) {
    node.fail() << "only 1-D and 2-D windows are supported; the input has "
                << spatial << " spatial dimensions";
    return failure();
  }
  if (failed(node.requireStaticShape(input)))
    return failure();
  auto list = [&](StringRef name, int64_t dflt) -> FailureOr<SmallVector<int64_t>> {
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
  if (spatial == 1) {
    // Lift to 2-D: height 1, and ONNX's [begin, end] pads to [0, b, 0, e].
    w.oneD = true;
    w.kernel.insert(w.kernel.begin(), 1);
    w.strides.insert(w.strides.begin(), 1);
    w.dilations.insert(w.dilations.begin(), 1);
    hw.insert(hw.begin(), 1);
    SmallVector<int64_t> pads1 =
        node.intsAttr("pads").value_or(SmallVector<int64_t>{0, 0});
    std::string autoPad = node.strAttr("auto_pad", "NOTSET");
    if (autoPad == "NOTSET") {
      if (pads1.size() != 2) {
        node.fail() << "expects 2 pads for a 1-D window, got " << pads1.size();
        return failure();
      }
      w.pads = {0, pads1[0], 0, pads1[1]};
      return w;
    }
  }
  FailureOr<SmallVector<int64_t>> pads =
      resolvePads2D(node, hw, w.kernel, w.strides, w.dilations);
  if (failed(pads))
    return failure();
  w.pads = *pads;
  return w;
}

/// [N, C, W] -> [N, C, 1, W] for 1-D windows.
FailureOr<Value> liftTo2D(OnnxNode &node, Value v) {
  auto shape = llvm::to_vector(typeOf(v).getShape());
  shape.insert(shape.begin() + 2, 1);
  return reshapeTo(node, v, shape);
}

FailureOr<Value> lowerTo1D(OnnxNode &node, FailureOr<Value> v) {
  if (failed(v))
    return failure();
  auto shape = llvm::to_vector(typeOf(*v).getShape());
  shape.erase(shape.begin() + 2);
  return reshapeTo(node, *v, shape);
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

namespace {
FailureOr<SmallVector<Value>> conv(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0), w = node.rankedInput(1);
  if (failed(x) || failed(w))
    return failure();
  return one(buildConv(node, *x, *w, node.input(2)));
}

template <typename PoolOp>
FailureOr<SmallVector<Value>> pool(OnnxNode &node, bool isAvg) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  if (node.resultUsed(1)) {
    node.fail() << "the Indices output is not supported";
    return failure();
  }
  std::optional<SmallVector<int64_t>> kernel = node.intsAttr("kernel_shape");
  if (!kernel) {
    node.fail() << "kernel_shape is required";
    return failure();
  }
  FailureOr<Window> win = readWindow(node, typeOf(*x), *kernel);
  if (failed(win))
    return failure();
  Value input = *x;
  if (win->oneD) {
    FailureOr<Value> xi = liftTo2D(node, input);
    if (failed(xi))
      return failure();
    input = *xi;
  }
  auto &b = node.builder;
  FailureOr<Value> y;
  bool ceil = node.intAttr("ceil_mode", 0) != 0;
  if constexpr (std::is_same_v<PoolOp, AvgPool2DOp>)
    y = build<PoolOp>(node, input, b.getDenseI64ArrayAttr(win->kernel),
                      b.getDenseI64ArrayAttr(win->strides),
                      b.getDenseI64ArrayAttr(win->dilations),
                      b.getDenseI64ArrayAttr(win->pads), b.getBoolAttr(ceil),
                      b.getBoolAttr(node.intAttr("count_include_pad", 0) != 0));
  else
    y = build<PoolOp>(node, input, b.getDenseI64ArrayAttr(win->kernel),
                      b.getDenseI64ArrayAttr(win->strides),
                      b.getDenseI64ArrayAttr(win->dilations),
                      b.getDenseI64ArrayAttr(win->pads), b.getBoolAttr(ceil));
  (void)isAvg;
  return one(win->oneD ? lowerTo1D(node, y) : y);
}

FailureOr<SmallVector<Value>> globalPool(OnnxNode &node, bool isMax) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  if (!isMax)
    return one(build<GlobalAvgPoolOp>(node, *x));
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < typeOf(*x).getRank(); ++d)
    axes.push_back(d);
  return one(build<ReduceMaxOp>(node, *x, node.builder.getDenseI64ArrayAttr(axes),
                                node.builder.getBoolAttr(true)));
}

FailureOr<SmallVector<Value>> batchNorm(OnnxNode &node) {
  if (node.intAttr("training_mode", 0) != 0) {
    node.fail() << "training_mode=1 is not supported; export the model in "
                   "inference (eval) mode";
    return failure();
  }
  for (unsigned i = 1; i < 5; ++i)
    if (node.resultUsed(i)) {
      node.fail() << "output " << i
                  << " (running statistics) is not supported in inference";
      return failure();
    }
  SmallVector<Value> in;
  for (unsigned i = 0; i < 5; ++i) {
    FailureOr<Value> v = node.rankedInput(i);
    if (failed(v))
      return failure();
    in.push_back(*v);
  }
  return one(build<BatchNormOp>(node, in[0], in[1], in[2], in[3], in[4],
                                node.builder.getF32FloatAttr(
                                    node.floatAttr("epsilon", 1e-5f))));
}

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
  // Scale and B broadcast to the normalized dimensions, never beyond them.
  ArrayRef<int64_t> normalized = typeOf(x).getShape().drop_front(axis);
  for (Value p : {scale, node.input(2)}) {
    if (!p)
      continue;
    ArrayRef<int64_t> ps = typeOf(p).getShape();
    FailureOr<SmallVector<int64_t>> bs = broadcastShapes(ps, normalized);
    if (ps.size() > normalized.size() || failed(bs) ||
        ArrayRef<int64_t>(*bs) != normalized) {
      auto dims = [](ArrayRef<int64_t> shape) {
        std::string s = "[";
        llvm::interleave(
            shape, [&](int64_t d) { s += std::to_string(d); },
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

/// LayerNormalization 17. Y alone is one kiln.layer_norm (computed in the
/// input type); the Mean and InvStdDev outputs, when used, take the
/// decomposed path.
FailureOr<SmallVector<Value>> layerNorm(OnnxNode &node) {
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
  float epsilon = node.floatAttr("epsilon", 1e-5f);
  if (node.resultUsed(1) || node.resultUsed(2))
    return layerNormWithStats(node, *x, *scale, *axis, epsilon);
  auto &b = node.builder;
  return one(build<LayerNormOp>(node, *x, *scale, node.input(2),
                                b.getI64IntegerAttr(*axis),
                                b.getF32FloatAttr(epsilon)));
}

FailureOr<SmallVector<Value>> gemm(OnnxNode &node) {
  FailureOr<Value> a = node.rankedInput(0), b = node.rankedInput(1);
  if (failed(a) || failed(b))
    return failure();
  auto &bl = node.builder;
  return one(build<GemmOp>(node, *a, *b, node.input(2),
                           bl.getF32FloatAttr(node.floatAttr("alpha", 1.0f)),
                           bl.getF32FloatAttr(node.floatAttr("beta", 1.0f)),
                           bl.getBoolAttr(node.intAttr("transA", 0) != 0),
                           bl.getBoolAttr(node.intAttr("transB", 0) != 0)));
}

FailureOr<SmallVector<Value>> matmul(OnnxNode &node) {
  FailureOr<Value> a = node.rankedInput(0), b = node.rankedInput(1);
  if (failed(a) || failed(b))
    return failure();
  return one(build<MatMulOp>(node, *a, *b));
}

/// Softmax and LogSoftmax. Before opset 13 the input is coerced to 2-D at
/// `axis` (default 1) and normalized over the whole trailing block.
FailureOr<SmallVector<Value>> softmax(OnnxNode &node, bool log) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  int64_t rank = type.getRank();
  bool coerce = node.opset < 13;
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.intAttr("axis", coerce ? 1 : -1), rank);
  if (failed(axis))
    return failure();
  Value in = *x;
  if (coerce && *axis != rank - 1) {
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d)
      (d < *axis ? outer : inner) *= type.getDimSize(d);
    FailureOr<Value> flat = reshapeTo(node, in, {outer, inner});
    if (failed(flat))
      return failure();
    in = *flat;
    axis = 1;
  }
  FailureOr<Value> y = build<SoftmaxOp>(node, in, node.builder.getI64IntegerAttr(*axis));
  if (succeeded(y) && log)
    y = build<LogOp>(node, *y);
  if (failed(y))
    return failure();
  return one(reshapeTo(node, *y, type.getShape()));
}
} // namespace

void mlir::kiln::populateNNConversions(std::vector<OnnxConversion> &t) {
  for (int64_t v : {1, 11})
    t.push_back({"Conv", v, conv});
  for (int64_t v : {1, 8, 10, 11, 12})
    t.push_back({"MaxPool", v, [](OnnxNode &n) { return pool<MaxPool2DOp>(n, false); }});
  for (int64_t v : {7, 10, 11})
    t.push_back({"AveragePool", v, [](OnnxNode &n) { return pool<AvgPool2DOp>(n, true); }});
  t.push_back({"GlobalAveragePool", 1, [](OnnxNode &n) { return globalPool(n, false); }});
  t.push_back({"GlobalMaxPool", 1, [](OnnxNode &n) { return globalPool(n, true); }});
  for (int64_t v : {7, 9, 14, 15})
    t.push_back({"BatchNormalization", v, batchNorm});
  t.push_back({"LayerNormalization", 17, layerNorm});
  for (int64_t v : {7, 9, 11, 13})
    t.push_back({"Gemm", v, gemm});
  for (int64_t v : {1, 9, 13})
    t.push_back({"MatMul", v, matmul});
  for (int64_t v : {1, 11, 13}) {
    t.push_back({"Softmax", v, [](OnnxNode &n) { return softmax(n, false); }});
    t.push_back({"LogSoftmax", v, [](OnnxNode &n) { return softmax(n, true); }});
  }
}
