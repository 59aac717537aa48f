//===- Slice.cpp - ONNX ops that cut, join and reverse ----------*- C++ -*-===//
//
// Slice, Split, Concat and ReverseSequence.
//
//===----------------------------------------------------------------------===//
#include "ShapeInputs.h"
#include "SymbolicSizes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

FailureOr<SmallVector<Value>> mlir::kiln::convertConcat(OnnxNode &node) {
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
  // The stacks of an If's branches run as loops (ControlFlow.cpp).
  if (node.op->hasAttr(kIfJoinAttr) && inputs.size() == 2 && *axis == 0) {
    FailureOr<std::optional<Value>> joined =
        joinBranchStacks(node, inputs[0], inputs[1]);
    if (failed(joined))
      return failure();
    if (*joined)
      return SmallVector<Value>{**joined};
  }
  return one(
      build<ConcatOp>(node, inputs, node.builder.getI64IntegerAttr(*axis)));
}

namespace {
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

/// Slice 10+ with run-time starts, ends, axes or steps: per dimension, the
/// ONNX start/count are computed at run time from the values, the count is
/// guarded against the declared size, and the elements are gathered at
/// start + i * step (kiln.gather clamps, so any values stay in bounds).
FailureOr<SmallVector<Value>>
sliceRuntime(OnnxNode &node, Value x,
             std::optional<RankedTensorType> known = std::nullopt) {
  FailureOr<RankedTensorType> declared =
      known ? FailureOr<RankedTensorType>(*known)
            : declaredResult(node, 0, "starts, ends, axes and steps");
  if (failed(declared) || failed(node.requireStaticShape(typeOf(x))))
    return failure();
  ArrayRef<int64_t> in = typeOf(x).getShape(), out = declared->getShape();
  int64_t rank = in.size();
  if ((int64_t)out.size() != rank) {
    node.fail() << "the declared output rank differs from the input rank";
    return failure();
  }
  auto startsType = dyn_cast<RankedTensorType>(node.input(1).getType());
  if (!startsType || !startsType.hasStaticShape() ||
      startsType.getRank() != 1) {
    node.fail() << "starts must be a 1-D tensor of static length";
    return failure();
  }
  int64_t k = startsType.getNumElements();
  for (unsigned i : {2u, 3u, 4u}) {
    auto t = node.input(i) ? dyn_cast<RankedTensorType>(node.input(i).getType())
                           : RankedTensorType();
    if (node.input(i) &&
        (!t || !t.hasStaticShape() || t.getNumElements() != k)) {
      node.fail() << "starts, ends, axes and steps must have " << k
                  << " values each";
      return failure();
    }
  }
  IndexMath m{node};
  Value r = m.c(rank);
  // Normalized axis of each entry.
  SmallVector<Value> axes, starts, ends, steps;
  // Without axes, entry j slices dimension j: later dimensions stay whole.
  std::optional<SmallVector<int64_t>> constAxes =
      node.input(3) ? node.constantInts(3)
                    : std::optional<SmallVector<int64_t>>(
                          llvm::to_vector(llvm::seq<int64_t>(0, k)));
  for (int64_t j = 0; j < k; ++j) {
    Value a = node.input(3) ? m.at(3, j) : m.c(j);
    axes.push_back(m.where(m.less(a, m.c(0)), m.add(a, r), a));
    starts.push_back(m.at(1, j));
    ends.push_back(m.at(2, j));
    steps.push_back(node.input(4) ? m.at(4, j) : m.c(1));
  }
  if (!m.ok)
    return failure();
  Value ok;
  if (node.input(3) && !constAxes) {
    FailureOr<Value> counts = axesCounts(node, node.input(3), rank);
    if (failed(counts))
      return failure();
    auto f32 = RankedTensorType::get({rank}, node.builder.getF32Type());
    Value ones = ConstantOp::create(node.builder, node.loc(), f32,
                                    DenseElementsAttr::get(f32, 1.0f));
    FailureOr<Value> le = build<LessEqualOp>(node, *counts, ones);
    FailureOr<Value> all =
        failed(le) ? FailureOr<Value>(failure()) : allOf(node, *le);
    if (failed(all))
      return failure();
    ok = *all;
  }
  Value y = x;
  for (int64_t d = 0; d < rank; ++d) {
    if (constAxes && !llvm::is_contained(*constAxes, d) &&
        !llvm::is_contained(*constAxes, d - rank))
      continue; // not sliced: the whole dimension
    int64_t n = in[d];
    Value start = m.c(0), end = m.c(n), step = m.c(1);
    // The first entry naming d wins (ONNX forbids repeats; guarded above).
    for (int64_t j = k - 1; j >= 0; --j) {
      Value sel = m.eq(axes[j], m.c(d));
      start = m.where(sel, starts[j], start);
      end = m.where(sel, ends[j], end);
      step = m.where(sel, steps[j], step);
    }
    Value stepOk = m.less(m.c(0), m.max(step, m.sub(m.c(0), step)));
    // A step beyond the dimension reads one element either way; clamping
    // it keeps the count arithmetic below from overflowing.
    Value safeStep =
        m.where(stepOk, m.clamp(step, m.c(-n - 1), m.c(n + 1)), m.c(1));
    Value pos = m.less(m.c(0), safeStep);
    start = m.where(m.less(start, m.c(0)), m.add(start, m.c(n)), start);
    end = m.where(m.less(end, m.c(0)), m.add(end, m.c(n)), end);
    start = m.where(pos, m.clamp(start, m.c(0), m.c(n)),
                    m.clamp(start, m.c(0), m.c(n - 1)));
    end = m.where(pos, m.clamp(end, m.c(0), m.c(n)),
                  m.clamp(end, m.c(-1), m.c(n - 1)));
    Value sign = m.where(pos, m.c(1), m.c(-1));
    Value count =
        m.max(m.c(0),
              m.div(m.sub(m.add(m.sub(end, start), safeStep), sign), safeStep));
    Value dimOk = m.land(stepOk, m.eq(count, m.c(out[d])));
    ok = ok ? m.land(ok, dimOk) : dimOk;
    if (declared->getNumElements() == 0)
      continue; // nothing to read; the result is an empty constant below
    Value idx = m.add(start, m.mul(m.iota(out[d]), safeStep));
    if (!m.ok)
      return failure();
    FailureOr<Value> g =
        build<GatherOp>(node, y, idx, node.builder.getI64IntegerAttr(d));
    if (failed(g))
      return failure();
    y = *g;
  }
  if (!m.ok)
    return failure();
  if (declared->getNumElements() == 0)
    y = ConstantOp::create(
        node.builder, node.loc(), *declared,
        DenseElementsAttr::get(
            *declared, node.builder.getZeroAttr(declared->getElementType())));
  if (ok)
    guardInput(node, ok, 1,
               "with ends, axes and steps must select the declared output "
               "shape this model was compiled for (and steps must not be 0)");
  return SmallVector<Value>{y};
}

FailureOr<Value> buildSlice(OnnxNode &node, Value x, const SliceBounds &b) {
  auto &bl = node.builder;
  return build<SliceOp>(node, x, bl.getDenseI64ArrayAttr(b.offsets),
                        bl.getDenseI64ArrayAttr(b.sizes),
                        bl.getDenseI64ArrayAttr(b.strides));
}

} // namespace

/// Slice 1 (attributes) and 10, 11, 13 (constant inputs).
FailureOr<SmallVector<Value>> mlir::kiln::convertSlice(OnnxNode &node) {
  if (FailureOr<SmallVector<Value>> sym = convertSymbolicSlice(node);
      failed(sym) || !sym->empty())
    return sym;
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
    if (llvm::any_of(std::initializer_list<unsigned>{1, 2, 3, 4},
                     [&](unsigned i) { return runtimeInput(node, i); }))
      return sliceRuntime(node, *x);
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
  // Constant negative steps: gather each reversed axis at constant indices
  // start + i * step (after ONNX's clamping).
  if (node.opset >= 10 && steps &&
      llvm::any_of(*steps, [](int64_t s) { return s < 0; }) &&
      typeOf(*x).hasStaticShape() && starts->size() == ends->size() &&
      steps->size() == starts->size() &&
      (!axes || axes->size() == starts->size())) {
    int64_t rank = typeOf(*x).getRank();
    SmallVector<bool> seen(rank, false);
    Value y = *x;
    for (size_t j = 0; j < starts->size(); ++j) {
      FailureOr<int64_t> a =
          normalizeAxis(node, axes ? (*axes)[j] : (int64_t)j, rank);
      if (failed(a))
        return failure();
      if (seen[*a] || (*steps)[j] == 0) {
        node.fail() << (seen[*a] ? "an axis is sliced twice"
                                 : "steps must not be 0");
        return failure();
      }
      seen[*a] = true;
      int64_t n = typeOf(*x).getDimSize(*a), t = (*steps)[j];
      int64_t st = (*starts)[j], e = (*ends)[j], count;
      st = st < 0 ? st + n : st;
      e = e < 0 ? e + n : e;
      if (t > 0) {
        st = std::clamp<int64_t>(st, 0, n);
        e = std::clamp<int64_t>(e, 0, n);
        count = e > st ? (e - st + t - 1) / t : 0;
      } else {
        st = std::clamp<int64_t>(st, 0, n - 1);
        e = std::clamp<int64_t>(e, -1, n - 1);
        count = st > e ? (st - e - t - 1) / -t : 0;
      }
      if (count == n && t == 1)
        continue;
      if (count == 0) {
        SmallVector<int64_t> shape(typeOf(y).getShape());
        shape[*a] = 0;
        auto type = RankedTensorType::get(shape, typeOf(y).getElementType());
        y = ConstantOp::create(
            node.builder, node.loc(), type,
            DenseElementsAttr::get(
                type, node.builder.getZeroAttr(type.getElementType())));
        continue;
      }
      SmallVector<int64_t> idx;
      for (int64_t i = 0; i < count; ++i)
        idx.push_back(st + i * t);
      FailureOr<Value> g =
          build<GatherOp>(node, y, constI64(node, idx, {count}),
                          node.builder.getI64IntegerAttr(*a));
      if (failed(g))
        return failure();
      y = *g;
    }
    return SmallVector<Value>{y};
  }
  FailureOr<SliceBounds> bounds =
      resolveSlice(node, typeOf(*x).getShape(), *starts, *ends, axes, steps);
  if (failed(bounds))
    return failure();
  return one(buildSlice(node, *x, *bounds));
}

namespace {
/// Split along an axis of run-time size n: constant split sizes must add up
/// to n (a guard); equal parts (before 18) are n / k each, n divisible by k
/// (a guard); num_outputs k (18) gives k - 1 parts of ceil(n / k) and the
/// rest, with a guard that it is not negative where the range allows it.
FailureOr<SmallVector<Value>>
splitRunTimeAxis(OnnxNode &node, Value x, int64_t axis,
                 const std::optional<SmallVector<int64_t>> &given) {
  SymbolicSizes &S = *node.sizes;
  int64_t outputs = node.op->getNumResults();
  SymSize n = sizeOf(node, x, axis);
  auto refuse = [&](const Twine &why) {
    node.fail() << "splitting axis " << axis << " of run-time size " << S.str(n)
                << ": " << why << "; give that dimension one size";
    return failure();
  };
  SmallVector<SymSize> parts;
  std::optional<SymSize> total = SymSize::constant(0);
  if (given) {
    if ((int64_t)given->size() != outputs)
      return refuse("split has " + Twine(given->size()) +
                    " sizes but the node has " + Twine(outputs) + " outputs");
    for (int64_t k : *given) {
      if (k < 0)
        return refuse("split sizes must be non-negative, got " + Twine(k));
      parts.push_back(SymSize::constant(k));
    }
  } else if (outputs < 1) {
    return refuse("the node has no outputs");
  } else if (node.opset >= 18) {
    int64_t k = node.intAttr("num_outputs", outputs);
    if (k != outputs)
      return refuse("num_outputs is " + Twine(k) + " but the node has " +
                    Twine(outputs) + " outputs");
    std::optional<SymSize> up = SymSize::add(n, SymSize::constant(k - 1));
    std::optional<SymSize> chunk = up ? S.floorDiv(*up, k) : std::nullopt;
    std::optional<SymSize> used =
        chunk ? SymSize::mul(*chunk, SymSize::constant(k - 1)) : std::nullopt;
    std::optional<SymSize> negUsed = used ? SymSize::neg(*used) : std::nullopt;
    std::optional<SymSize> last =
        negUsed ? SymSize::add(n, *negUsed) : std::nullopt;
    if (!last)
      return refuse("the size of each of its " + Twine(k) +
                    " parts cannot be followed");
    // The last part, n - (k - 1) * ceil(n / k), is negative at some small n
    // (1 element in 3 parts), where ONNX Runtime fails the run: a guard.
    std::optional<int64_t> lo = S.smallest(*last);
    if (!lo || *lo < 0) {
      if (inSubgraph(node))
        return refuse("the last part may be negative, which a guard would "
                      "check, and a guard cannot stop a subgraph's run");
      OpBuilder &b = node.builder;
      Location loc = node.loc();
      Value ok = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::sge, S.materialize(b, loc, *last),
          arith::ConstantIndexOp::create(b, loc, 0));
      Value okTensor = tensor::FromElementsOp::create(
          b, loc, RankedTensorType::get({}, b.getI1Type()), ok);
      GuardOp::create(b, loc, okTensor,
                      b.getStringAttr(node.describe() + ": " + S.str(n) +
                                      " elements do not make " + Twine(k) +
                                      " parts of ceil(n / " + Twine(k) +
                                      ") and a non-negative rest; run the "
                                      "model at another size"));
    }
    parts.assign(k - 1, *chunk);
    parts.push_back(*last);
  } else {
    std::optional<SymSize> chunk = S.floorDiv(n, outputs);
    if (!chunk)
      return refuse("its parts cannot be followed");
    parts.assign(outputs, *chunk);
  }
  for (const SymSize &p : parts)
    if (!(total = total ? SymSize::add(*total, p) : std::nullopt))
      return refuse("its parts cannot be followed");
  if (*total != n) {
    if (inSubgraph(node))
      return refuse("the parts add up to " + S.str(*total) +
                    ", which a guard would check, and a guard cannot stop a "
                    "subgraph's run");
    if (failed(guardSizesEqual(node, *total, n,
                               "the split parts must cover the axis")))
      return failure();
  }
  RankedTensorType type = typeOf(x);
  SmallVector<SymSize> offsets(type.getRank(), SymSize::constant(0));
  SmallVector<SymSize> sizes = sizesOf(node, x);
  SmallVector<int64_t> strides(type.getRank(), 1);
  SmallVector<Value> results;
  SymSize offset = SymSize::constant(0);
  for (auto [i, p] : llvm::enumerate(parts)) {
    offsets[axis] = offset;
    sizes[axis] = p;
    std::optional<SymSize> next = SymSize::add(offset, p);
    if (!next)
      return refuse("its parts cannot be followed");
    offset = *next;
    results.push_back(node.resultUsed(i)
                          ? sizedBox(node, x, offsets, sizes, strides)
                          : Value());
  }
  return results;
}
} // namespace

/// Split 2, 11 (split attribute), 13 (split input), 18 (num_outputs). Without
/// split the outputs are equal; from 18 the last may be smaller.
FailureOr<SmallVector<Value>> mlir::kiln::convertSplit(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.intAttr("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  // Other dimensions may be symbolic (docs/shapes.md): each part is then a
  // kiln.sized_slice that keeps their run-time sizes.
  if (!node.sizes && !type.hasStaticShape()) {
    node.fail() << "the split axis " << *axis << " of " << type
                << " must have a static size";
    return failure();
  }
  int64_t dim = type.getDimSize(*axis), outputs = node.op->getNumResults();
  std::optional<SmallVector<int64_t>> sizes;
  if (node.opset < 13) {
    sizes = node.intsAttr("split");
  } else if (runtimeInput(node, 1)) {
    // Run-time sizes: the declared outputs' lengths along the axis.
    sizes.emplace();
    for (unsigned i = 0; i < node.op->getNumResults(); ++i) {
      FailureOr<RankedTensorType> declared =
          declaredResult(node, i, "the split sizes");
      if (failed(declared))
        return failure();
      if (declared->getRank() != type.getRank()) {
        node.fail() << "output " << i << " has rank " << declared->getRank()
                    << ", not the input's " << type.getRank();
        return failure();
      }
      sizes->push_back(declared->getDimSize(*axis));
    }
    if (failed(guardEquals(node, 1, *sizes, "the split sizes")))
      return failure();
  } else {
    FailureOr<std::optional<SmallVector<int64_t>>> s =
        optionalInts(node, 1, "split");
    if (failed(s))
      return failure();
    sizes = *s;
  }
  if (type.isDynamicDim(*axis))
    return splitRunTimeAxis(node, *x, *axis, sizes);
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
    if (!type.hasStaticShape()) {
      results.push_back(sizedPart(node, *x, bounds));
      continue;
    }
    FailureOr<Value> part = buildSlice(node, *x, bounds);
    if (failed(part))
      return failure();
    results.push_back(*part);
  }
  return results;
}

/// ReverseSequence 10.
FailureOr<SmallVector<Value>>
mlir::kiln::convertReverseSequence(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0), lens = node.rankedInput(1);
  if (failed(x) || failed(lens))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  FailureOr<int64_t> batch =
      normalizeAxis(node, node.intAttr("batch_axis", 1), rank);
  FailureOr<int64_t> time =
      normalizeAxis(node, node.intAttr("time_axis", 0), rank);
  if (failed(batch) || failed(time))
    return failure();
  // One length per batch entry, when either size is symbolic.
  if (!typeOf(*x).hasStaticShape() || !typeOf(*lens).hasStaticShape()) {
    if (typeOf(*lens).getRank() != 1) {
      node.fail() << "sequence_lens must be 1-D, got " << typeOf(*lens);
      return failure();
    }
    SymSize n = node.sizes->dim(*lens, 0),
            batchSize = node.sizes->dim(*x, *batch);
    if (n != batchSize && inSubgraph(node)) {
      node.fail() << "inside a subgraph, sequence_lens (" << node.sizes->str(n)
                  << " entries) must be the batch size ("
                  << node.sizes->str(batchSize)
                  << ") at every size in range; give the symbolic dimensions "
                     "one size to compile this node";
      return failure();
    }
    guardSameSize(node, *lens, 0, *x, *batch,
                  "the number of sequence_lens and the batch size");
  }
  Builder &b = node.builder;
  return one(build<ReverseSequenceOp>(node, *x, *lens,
                                      b.getI64IntegerAttr(*batch),
                                      b.getI64IntegerAttr(*time)));
}
