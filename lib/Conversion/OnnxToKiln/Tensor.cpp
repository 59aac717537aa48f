//===- Tensor.cpp - ONNX shape, layout and reduction ops --------*- C++ -*-===//
#include "Build.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

FailureOr<SmallVector<Value>> constant(OnnxNode &node) {
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
  } else if (std::optional<SmallVector<int64_t>> is = node.intsAttr("value_ints")) {
    value = DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)is->size()}, b.getI64Type()),
        ArrayRef<int64_t>(*is));
  } else {
    node.fail() << "only tensor, float, int, floats and ints values are "
                   "supported (sparse and string constants are not)";
    return failure();
  }
  Value c = ConstantOp::create(node.builder, node.loc(), value.getType(), value);
  return SmallVector<Value>{c};
}

/// ONNX Reshape: 0 copies the input dimension (unless allowzero), -1 is
/// inferred from the element count.
FailureOr<SmallVector<Value>> reshapeWith(OnnxNode &node, Value x,
                                          SmallVector<int64_t> shape,
                                          bool allowZero) {
  RankedTensorType type = typeOf(x);
  if (failed(node.requireStaticShape(type)))
    return failure();
  int64_t known = 1, inferAt = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowZero) {
      if ((int64_t)i >= type.getRank()) {
        node.fail() << "shape entry " << i << " is 0 but the input has rank "
                    << type.getRank();
        return failure();
      }
      shape[i] = type.getDimSize(i);
    }
    if (shape[i] == -1) {
      if (inferAt >= 0) {
        node.fail() << "shape has more than one -1";
        return failure();
      }
      inferAt = i;
      continue;
    }
    if (shape[i] < 0) {
      node.fail() << "shape entry " << i << " is " << shape[i];
      return failure();
    }
    known *= shape[i];
  }
  if (inferAt >= 0) {
    if (known == 0 || type.getNumElements() % known) {
      node.fail() << "cannot infer the -1 dimension: " << type.getNumElements()
                  << " elements do not divide by " << known;
      return failure();
    }
    shape[inferAt] = type.getNumElements() / known;
  }
  return one(reshapeTo(node, x, shape));
}

FailureOr<SmallVector<Value>> reshape(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  std::optional<SmallVector<int64_t>> shape =
      node.opset < 5 ? node.intsAttr("shape") : node.constantInts(1);
  if (!shape) {
    node.fail() << "the target shape must be a compile-time constant";
    return failure();
  }
  return reshapeWith(node, *x, *shape, node.intAttr("allowzero", 0) != 0);
}

FailureOr<SmallVector<Value>> flatten(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  int64_t rank = type.getRank();
  int64_t axis = node.intAttr("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank) {
    node.fail() << "axis " << node.intAttr("axis", 1)
                << " is out of range for rank " << rank;
    return failure();
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? outer : inner) *= type.getDimSize(d);
  return reshapeWith(node, *x, {outer, inner}, false);
}

FailureOr<SmallVector<Value>> transpose(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  SmallVector<int64_t> perm;
  if (std::optional<SmallVector<int64_t>> p = node.intsAttr("perm"))
    perm = *p;
  else
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  return one(build<TransposeOp>(node, *x, node.builder.getDenseI64ArrayAttr(perm)));
}

FailureOr<SmallVector<Value>> concat(OnnxNode &node) {
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < node.numInputs(); ++i) {
    FailureOr<Value> v = node.rankedInput(i);
    if (failed(v))
      return failure();
    inputs.push_back(*v);
  }
  if (inputs.empty()) {
    node.fail() << "needs at least one input";
    return failure();
  }
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.intAttr("axis", 0), typeOf(inputs[0]).getRank());
  if (failed(axis))
    return failure();
  return one(build<ConcatOp>(node, inputs, node.builder.getI64IntegerAttr(*axis)));
}

FailureOr<SmallVector<Value>> shape(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  if (failed(node.requireStaticShape(type)))
    return failure();
  int64_t rank = type.getRank();
  int64_t start = node.intAttr("start", 0), end = node.intAttr("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  SmallVector<int64_t> dims(type.getShape().begin() + start,
                            type.getShape().begin() + std::max(start, end));
  auto resultType =
      RankedTensorType::get({(int64_t)dims.size()}, node.builder.getI64Type());
  Value c = ConstantOp::create(node.builder, node.loc(), resultType,
                               DenseElementsAttr::get(resultType,
                                                      ArrayRef<int64_t>(dims)));
  return SmallVector<Value>{c};
}

/// Pad 2 (attributes) and 11+ (constant inputs); only "constant" mode.
FailureOr<SmallVector<Value>> pad(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  std::string mode = node.strAttr("mode", "constant");
  if (mode != "constant") {
    node.fail() << "mode '" << mode
                << "' is not supported yet; only 'constant' padding is";
    return failure();
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
  // Opset 18: optional axes say which dimensions `pads` covers.
  if (node.opset >= 18 && node.input(3)) {
    std::optional<SmallVector<int64_t>> axes = node.constantInts(3);
    if (!axes) {
      node.fail() << "axes must be a compile-time constant";
      return failure();
    }
    int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
    if (pads->size() != 2 * axes->size()) {
      node.fail() << "expects " << 2 * axes->size() << " pads for "
                  << axes->size() << " axes, got " << pads->size();
      return failure();
    }
    SmallVector<int64_t> full(2 * rank, 0);
    for (auto [i, a] : llvm::enumerate(*axes)) {
      FailureOr<int64_t> axis = normalizeAxis(node, a, rank);
      if (failed(axis))
        return failure();
      full[*axis] = (*pads)[i];
      full[*axis + rank] = (*pads)[i + axes->size()];
    }
    pads = full;
  }
  if (llvm::any_of(*pads, [](int64_t p) { return p < 0; })) {
    node.fail() << "negative pads (cropping) are not supported yet";
    return failure();
  }
  return one(build<PadOp>(node, *x, node.builder.getDenseI64ArrayAttr(*pads),
                          node.builder.getF32FloatAttr(value)));
}

/// Axes from the attribute (before `inputSince`) or from constant input 1.
std::optional<SmallVector<int64_t>> readAxes(OnnxNode &node, int64_t inputSince,
                                             bool &ok) {
  ok = true;
  if (node.opset < inputSince)
    return node.intsAttr("axes");
  if (!node.input(1))
    return std::nullopt;
  std::optional<SmallVector<int64_t>> axes = node.constantInts(1);
  if (!axes) {
    node.fail() << "axes must be a compile-time constant";
    ok = false;
  }
  return axes;
}

FailureOr<SmallVector<Value>> squeeze(OnnxNode &node, bool unsqueeze) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  bool ok;
  std::optional<SmallVector<int64_t>> axes = readAxes(node, 13, ok);
  if (!ok)
    return failure();
  RankedTensorType type = typeOf(*x);
  SmallVector<int64_t> shape(type.getShape());
  if (unsqueeze) {
    if (!axes) {
      node.fail() << "axes are required";
      return failure();
    }
    int64_t outRank = type.getRank() + axes->size();
    SmallVector<int64_t> norm;
    for (int64_t a : *axes) {
      FailureOr<int64_t> n = normalizeAxis(node, a, outRank);
      if (failed(n))
        return failure();
      norm.push_back(*n);
    }
    llvm::sort(norm);
    for (int64_t a : norm)
      shape.insert(shape.begin() + std::min<int64_t>(a, shape.size()), 1);
  } else {
    SmallVector<int64_t> norm;
    if (axes) {
      for (int64_t a : *axes) {
        FailureOr<int64_t> n = normalizeAxis(node, a, type.getRank());
        if (failed(n))
          return failure();
        if (type.getDimSize(*n) != 1) {
          node.fail() << "cannot squeeze axis " << a << " of size "
                      << type.getDimSize(*n);
          return failure();
        }
        norm.push_back(*n);
      }
    } else {
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.getDimSize(d) == 1)
          norm.push_back(d);
    }
    llvm::sort(norm);
    for (int64_t a : llvm::reverse(norm))
      shape.erase(shape.begin() + a);
  }
  return one(reshapeTo(node, *x, shape));
}

/// Optional constant integer input `i`: nullopt when omitted, failure (with
/// a diagnostic) when given but not a compile-time constant.
FailureOr<std::optional<SmallVector<int64_t>>>
optionalInts(OnnxNode &node, unsigned i, StringRef what) {
  if (!node.input(i))
    return std::optional<SmallVector<int64_t>>();
  std::optional<SmallVector<int64_t>> v = node.constantInts(i);
  if (!v) {
    node.fail() << what << " must be a compile-time constant";
    return failure();
  }
  return v;
}

/// Gather 1, 11, 13. Constant indices are checked against the axis here;
/// kiln.gather clamps whatever arrives at run time.
FailureOr<SmallVector<Value>> gather(OnnxNode &node) {
  FailureOr<Value> data = node.rankedInput(0), indices = node.rankedInput(1);
  if (failed(data) || failed(indices))
    return failure();
  RankedTensorType type = typeOf(*data);
  if (type.getRank() == 0) {
    node.fail() << "cannot gather from a scalar";
    return failure();
  }
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.intAttr("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  int64_t n = type.getDimSize(*axis);
  if (std::optional<SmallVector<int64_t>> c = node.constantInts(1))
    for (int64_t i : *c)
      if (n != ShapedType::kDynamic && (i < -n || i >= n)) {
        node.fail() << "index " << i << " is out of range for axis " << *axis
                    << " of size " << n;
        return failure();
      }
  return one(build<GatherOp>(node, *data, *indices,
                             node.builder.getI64IntegerAttr(*axis)));
}

FailureOr<Value> buildSlice(OnnxNode &node, Value x, const SliceBounds &b) {
  auto &bl = node.builder;
  return build<SliceOp>(node, x, bl.getDenseI64ArrayAttr(b.offsets),
                        bl.getDenseI64ArrayAttr(b.sizes),
                        bl.getDenseI64ArrayAttr(b.strides));
}

/// Slice 1 (attributes) and 10, 11, 13 (constant inputs).
FailureOr<SmallVector<Value>> slice(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  std::optional<SmallVector<int64_t>> starts, ends, axes, steps;
  if (node.opset < 10) {
    starts = node.intsAttr("starts");
    ends = node.intsAttr("ends");
    axes = node.intsAttr("axes");
    if (!starts || !ends) {
      node.fail() << "the starts and ends attributes are required";
      return failure();
    }
  } else {
    starts = node.constantInts(1);
    ends = node.constantInts(2);
    if (!starts || !ends) {
      node.fail() << "starts and ends must be compile-time constants; Kiln "
                     "slices with static bounds";
      return failure();
    }
    FailureOr<std::optional<SmallVector<int64_t>>> a =
        optionalInts(node, 3, "axes");
    FailureOr<std::optional<SmallVector<int64_t>>> st =
        optionalInts(node, 4, "steps");
    if (failed(a) || failed(st))
      return failure();
    axes = *a;
    steps = *st;
  }
  FailureOr<SliceBounds> bounds =
      resolveSlice(node, typeOf(*x).getShape(), *starts, *ends, axes, steps);
  if (failed(bounds))
    return failure();
  return one(buildSlice(node, *x, *bounds));
}

/// Split 2, 11 (split attribute), 13 (split input), 18 (num_outputs). Without
/// split the outputs are equal; from 18 the last may be smaller.
FailureOr<SmallVector<Value>> split(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.intAttr("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  if (failed(node.requireStaticShape(type)))
    return failure();
  int64_t dim = type.getDimSize(*axis), outputs = node.op->getNumResults();
  std::optional<SmallVector<int64_t>> sizes;
  if (node.opset < 13) {
    sizes = node.intsAttr("split");
  } else {
    FailureOr<std::optional<SmallVector<int64_t>>> s =
        optionalInts(node, 1, "split");
    if (failed(s))
      return failure();
    sizes = *s;
  }
  if (sizes) {
    if ((int64_t)sizes->size() != outputs) {
      node.fail() << "split has " << sizes->size() << " sizes but the node has "
                  << outputs << " outputs";
      return failure();
    }
    int64_t total = 0;
    for (int64_t s : *sizes) {
      if (s < 0) {
        node.fail() << "split sizes must be non-negative, got " << s;
        return failure();
      }
      total += s;
    }
    if (total != dim) {
      node.fail() << "split sizes add up to " << total << " but axis " << *axis
                  << " has " << dim << " elements";
      return failure();
    }
  } else if (node.opset >= 18) {
    int64_t parts = node.intAttr("num_outputs", outputs);
    if (parts != outputs) {
      node.fail() << "num_outputs is " << parts << " but the node has "
                  << outputs << " outputs";
      return failure();
    }
    int64_t chunk = (dim + parts - 1) / parts;
    if (dim - chunk * (parts - 1) < 0) {
      node.fail() << "cannot split " << dim << " elements into " << parts
                  << " chunks of " << chunk;
      return failure();
    }
    sizes = SmallVector<int64_t>(parts, chunk);
    sizes->back() = dim - chunk * (parts - 1);
  } else {
    if (outputs == 0 || dim % outputs) {
      node.fail() << "cannot split " << dim << " elements evenly into "
                  << outputs << " outputs; give the split sizes";
      return failure();
    }
    sizes = SmallVector<int64_t>(outputs, dim / outputs);
  }
  SmallVector<Value> results;
  SliceBounds bounds;
  bounds.offsets.assign(type.getRank(), 0);
  bounds.sizes.assign(type.getShape().begin(), type.getShape().end());
  bounds.strides.assign(type.getRank(), 1);
  int64_t offset = 0;
  for (auto [i, size] : llvm::enumerate(*sizes)) {
    bounds.offsets[*axis] = offset;
    bounds.sizes[*axis] = size;
    offset += size;
    if (!node.resultUsed(i)) {
      results.push_back(nullptr);
      continue;
    }
    FailureOr<Value> part = buildSlice(node, *x, bounds);
    if (failed(part))
      return failure();
    results.push_back(*part);
  }
  return results;
}

/// The sorted, unique, non-negative axes of an ONNX reduction. Axes are an
/// attribute, except from `axesInputSince` where they are an optional input;
/// no axes means all axes unless noop_with_empty_axes is set, which yields
/// nullopt (the reduction is the identity).
FailureOr<std::optional<SmallVector<int64_t>>>
reductionAxes(OnnxNode &node, int64_t rank, int64_t axesInputSince) {
  bool ok;
  std::optional<SmallVector<int64_t>> axes = readAxes(node, axesInputSince, ok);
  if (!ok)
    return failure();
  SmallVector<int64_t> norm;
  if (!axes || axes->empty()) {
    if (node.intAttr("noop_with_empty_axes", 0))
      return std::optional<SmallVector<int64_t>>();
    for (int64_t d = 0; d < rank; ++d)
      norm.push_back(d);
  } else {
    for (int64_t a : *axes) {
      FailureOr<int64_t> n = normalizeAxis(node, a, rank);
      if (failed(n))
        return failure();
      norm.push_back(*n);
    }
  }
  llvm::sort(norm);
  norm.erase(std::unique(norm.begin(), norm.end()), norm.end());
  return std::optional<SmallVector<int64_t>>(norm);
}

/// The reductions ONNX defines from a sum or a product: a scalar function
/// before, the reduction, a scalar function after.
enum class Composite { L1, L2, SumSquare, LogSum, LogSumExp, Prod };

FailureOr<SmallVector<Value>> reduceComposite(OnnxNode &node, Composite kind) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> axes =
      reductionAxes(node, typeOf(*x).getRank(), 18);
  if (failed(axes))
    return failure();
  if (!*axes) {
    // noop_with_empty_axes: ONNX's reference still applies the elementwise
    // parts for some of these ops and not for others; report it rather than
    // guess.
    node.fail() << "noop_with_empty_axes with empty axes is not supported "
                   "for this reduction";
    return failure();
  }
  DenseI64ArrayAttr axesAttr = node.builder.getDenseI64ArrayAttr(**axes);
  bool keep = node.intAttr("keepdims", 1) != 0;
  BoolAttr keepAttr = node.builder.getBoolAttr(keep);
  Value v = *x;
  FailureOr<Value> r;
  switch (kind) {
  case Composite::Prod:
    return one(build<ReduceProdOp>(node, v, axesAttr, keepAttr));
  case Composite::L1:
    r = build<AbsOp>(node, v);
    break;
  case Composite::L2:
  case Composite::SumSquare:
    r = build<MulOp>(node, v, v);
    break;
  case Composite::LogSum:
    r = v;
    break;
  case Composite::LogSumExp: {
    // log(sum(exp(x - m))) + m with m the maximum, which cannot overflow.
    FailureOr<Value> m =
        build<ReduceMaxOp>(node, v, axesAttr, node.builder.getBoolAttr(true));
    if (failed(m))
      return failure();
    FailureOr<Value> d = build<SubOp>(node, v, *m);
    if (failed(d))
      return failure();
    FailureOr<Value> e = build<ExpOp>(node, *d);
    if (failed(e))
      return failure();
    FailureOr<Value> s = build<ReduceSumOp>(node, *e, axesAttr, keepAttr);
    if (failed(s))
      return failure();
    FailureOr<Value> l = build<LogOp>(node, *s);
    if (failed(l))
      return failure();
    FailureOr<Value> mr = reshapeTo(node, *m, typeOf(*l).getShape());
    if (failed(mr))
      return failure();
    return one(build<AddOp>(node, *l, *mr));
  }
  }
  if (failed(r))
    return failure();
  r = build<ReduceSumOp>(node, *r, axesAttr, keepAttr);
  if (failed(r))
    return failure();
  if (kind == Composite::L2)
    return one(build<SqrtOp>(node, *r));
  if (kind == Composite::LogSum)
    return one(build<LogOp>(node, *r));
  return one(r);
}

/// Size: the element count of a static input, as an int64 scalar constant.
FailureOr<SmallVector<Value>> size(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  if (failed(node.requireStaticShape(type)))
    return failure();
  auto resultType = RankedTensorType::get({}, node.builder.getI64Type());
  Value c = ConstantOp::create(
      node.builder, node.loc(), resultType,
      DenseElementsAttr::get(resultType, type.getNumElements()));
  return SmallVector<Value>{c};
}

/// ArgMax/ArgMin 1, 11 (negative axes), 12, 13 (select_last_index).
template <typename OpTy>
FailureOr<SmallVector<Value>> argReduce(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.intAttr("axis", 0), typeOf(*x).getRank());
  if (failed(axis))
    return failure();
  Builder &b = node.builder;
  return one(
      build<OpTy>(node, *x, b.getI64IntegerAttr(*axis),
                  b.getBoolAttr(node.intAttr("keepdims", 1) != 0),
                  b.getBoolAttr(node.intAttr("select_last_index", 0) != 0)));
}

/// ReduceMean/Sum/Max/Min (see reductionAxes).
template <typename OpTy>
FailureOr<SmallVector<Value>> reduce(OnnxNode &node, int64_t axesInputSince) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> axes =
      reductionAxes(node, typeOf(*x).getRank(), axesInputSince);
  if (failed(axes))
    return failure();
  if (!*axes)
    return SmallVector<Value>{*x};
  return one(
      build<OpTy>(node, *x, node.builder.getDenseI64ArrayAttr(**axes),
                  node.builder.getBoolAttr(node.intAttr("keepdims", 1) != 0)));
}
} // namespace

void mlir::kiln::populateTensorConversions(std::vector<OnnxConversion> &t) {
  for (int64_t v : {1, 9, 11, 12, 13})
    t.push_back({"Constant", v, constant});
  for (int64_t v : {1, 5, 13, 14})
    t.push_back({"Reshape", v, reshape});
  for (int64_t v : {1, 9, 11, 13})
    t.push_back({"Flatten", v, flatten});
  for (int64_t v : {1, 13})
    t.push_back({"Transpose", v, transpose});
  for (int64_t v : {4, 11, 13})
    t.push_back({"Concat", v, concat});
  for (int64_t v : {1, 13, 15})
    t.push_back({"Shape", v, shape});
  for (int64_t v : {2, 11, 13, 18})
    t.push_back({"Pad", v, pad});
  for (int64_t v : {1, 11, 13})
    t.push_back({"Gather", v, gather});
  for (int64_t v : {1, 10, 11, 13})
    t.push_back({"Slice", v, slice});
  for (int64_t v : {2, 11, 13, 18})
    t.push_back({"Split", v, split});
  for (int64_t v : {1, 11, 13}) {
    t.push_back({"Squeeze", v, [](OnnxNode &n) { return squeeze(n, false); }});
    t.push_back({"Unsqueeze", v, [](OnnxNode &n) { return squeeze(n, true); }});
  }
  for (int64_t v : {1, 11, 13}) {
    t.push_back({"ReduceMean", v, [](OnnxNode &n) { return reduce<ReduceMeanOp>(n, 18); }});
    t.push_back({"ReduceMax", v, [](OnnxNode &n) { return reduce<ReduceMaxOp>(n, 18); }});
    t.push_back({"ReduceMin", v, [](OnnxNode &n) { return reduce<ReduceMinOp>(n, 18); }});
    t.push_back({"ReduceSum", v, [](OnnxNode &n) { return reduce<ReduceSumOp>(n, 13); }});
  }
  for (int64_t v : {1, 13})
    t.push_back({"Size", v, size});
  for (int64_t v : {1, 11, 12, 13}) {
    t.push_back({"ArgMax", v, argReduce<ArgMaxOp>});
    t.push_back({"ArgMin", v, argReduce<ArgMinOp>});
  }
  for (int64_t v : {1, 11, 13, 18}) {
    t.push_back({"ReduceL1", v, [](OnnxNode &n) {
                   return reduceComposite(n, Composite::L1);
                 }});
    t.push_back({"ReduceL2", v, [](OnnxNode &n) {
                   return reduceComposite(n, Composite::L2);
                 }});
    t.push_back({"ReduceSumSquare", v, [](OnnxNode &n) {
                   return reduceComposite(n, Composite::SumSquare);
                 }});
    t.push_back({"ReduceLogSum", v, [](OnnxNode &n) {
                   return reduceComposite(n, Composite::LogSum);
                 }});
    t.push_back({"ReduceLogSumExp", v, [](OnnxNode &n) {
                   return reduceComposite(n, Composite::LogSumExp);
                 }});
    t.push_back({"ReduceProd", v, [](OnnxNode &n) {
                   return reduceComposite(n, Composite::Prod);
                 }});
  }
}
