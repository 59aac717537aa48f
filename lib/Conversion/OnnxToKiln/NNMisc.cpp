//===- NNMisc.cpp - normalizations, rearrangements, Einsum ------*- C++ -*-===//
//
// ONNX ops that decompose into a handful of existing kiln ops:
// InstanceNormalization, MeanVarianceNormalization and LRN into reductions
// and elementwise ops; DepthToSpace and SpaceToDepth into
// reshape/transpose/reshape; Einsum into transposes, reshapes, diagonals (a
// gather), reductions and one batched matmul per pair of operands.
//
//===----------------------------------------------------------------------===//
#include "Build.h"
#include "NNParts.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
bool isAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }


FailureOr<Value> floatInput(OnnxNode &node, unsigned i) {
  FailureOr<Value> v = node.rankedInput(i);
  if (failed(v))
    return failure();
  if (failed(node.requireStaticShape(typeOf(*v))))
    return failure();
  if (!isa<FloatType>(typeOf(*v).getElementType())) {
    node.fail() << "element type " << typeOf(*v).getElementType()
                << " is not supported; expects a float tensor";
    return failure();
  }
  return v;
}

/// (x - mean) / sqrt(var + eps) over `axes` (biased variance), or with
/// `epsOutside`, (x - mean) / (sqrt(var) + eps) as MeanVarianceNormalization.
FailureOr<Value> normalize(OnnxNode &node, Value x, ArrayRef<int64_t> axes,
                           double eps, bool epsOutside) {
  auto &b = node.builder;
  Type elt = typeOf(x).getElementType();
  auto axesAttr = b.getDenseI64ArrayAttr(axes);
  FailureOr<Value> mean = build<ReduceMeanOp>(node, x, axesAttr, b.getBoolAttr(true));
  if (failed(mean))
    return failure();
  FailureOr<Value> centered = build<SubOp>(node, x, *mean), var, sq, y;
  if (failed(centered) || failed(sq = build<MulOp>(node, *centered, *centered)) ||
      failed(var = build<ReduceMeanOp>(node, *sq, axesAttr, b.getBoolAttr(true))))
    return failure();
  Value e = scalarConstant(node, elt, eps);
  if (epsOutside) {
    if (failed(y = build<SqrtOp>(node, *var)) || failed(y = build<AddOp>(node, *y, e)))
      return failure();
  } else if (failed(y = build<AddOp>(node, *var, e)) ||
             failed(y = build<SqrtOp>(node, *y))) {
    return failure();
  }
  return build<DivOp>(node, *centered, *y);
}
} // namespace

FailureOr<SmallVector<Value>>
mlir::kiln::convertInstanceNormalization(OnnxNode &node) {
  FailureOr<Value> x = floatInput(node, 0), scale = node.rankedInput(1),
                   bias = node.rankedInput(2);
  if (failed(x) || failed(scale) || failed(bias))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  if (rank < 3) {
    node.fail() << "expects an input of rank 3 or more, got " << typeOf(*x);
    return failure();
  }
  int64_t c = typeOf(*x).getDimSize(1);
  SmallVector<int64_t> axes, perChannel(rank - 1, 1);
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  perChannel[0] = c;
  FailureOr<Value> y =
      normalize(node, *x, axes, node.floatAttr("epsilon", 1e-5f), false);
  FailureOr<Value> s = reshapeTo(node, *scale, perChannel),
                   bb = reshapeTo(node, *bias, perChannel);
  if (failed(y) || failed(s) || failed(bb) || failed(y = build<MulOp>(node, *y, *s)))
    return failure();
  return one(build<AddOp>(node, *y, *bb));
}

FailureOr<SmallVector<Value>>
mlir::kiln::convertMeanVarianceNormalization(OnnxNode &node) {
  FailureOr<Value> x = floatInput(node, 0);
  if (failed(x))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  SmallVector<int64_t> axes =
      node.intsAttr("axes").value_or(SmallVector<int64_t>{0, 2, 3});
  for (int64_t &a : axes) {
    FailureOr<int64_t> n = normalizeAxis(node, a, rank);
    if (failed(n))
      return failure();
    a = *n;
  }
  llvm::sort(axes);
  axes.erase(llvm::unique(axes), axes.end());
  return one(normalize(node, *x, axes, 1e-9, true));
}

/// LRN: x / (bias + alpha / size * sum of squares over a window of channels)^beta.
FailureOr<SmallVector<Value>> mlir::kiln::convertLRN(OnnxNode &node) {
  FailureOr<Value> x = floatInput(node, 0);
  if (failed(x))
    return failure();
  RankedTensorType xt = typeOf(*x);
  int64_t size = node.intAttr("size", 0), rank = xt.getRank();
  if (size <= 0 || rank < 2) {
    node.fail() << "expects a positive size and an input of rank 2 or more";
    return failure();
  }
  auto &b = node.builder;
  Type elt = xt.getElementType();
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  SmallVector<int64_t> pads(2 * rank, 0);
  pads[1] = before;
  pads[rank + 1] = after;
  FailureOr<Value> sq = build<MulOp>(node, *x, *x), padded;
  if (failed(sq) || failed(padded = build<PadOp>(node, *sq, b.getDenseI64ArrayAttr(pads),
                                                  b.getF32FloatAttr(0.0f))))
    return failure();
  SmallVector<int64_t> sizes(xt.getShape()), strides(rank, 1);
  Value sum;
  for (int64_t k = 0; k < size; ++k) {
    SmallVector<int64_t> offsets(rank, 0);
    offsets[1] = k;
    FailureOr<Value> s = build<SliceOp>(node, *padded, b.getDenseI64ArrayAttr(offsets),
                                        b.getDenseI64ArrayAttr(sizes),
                                        b.getDenseI64ArrayAttr(strides));
    if (failed(s) || (sum && failed(s = build<AddOp>(node, sum, *s))))
      return failure();
    sum = *s;
  }
  double alpha = node.floatAttr("alpha", 1e-4f), beta = node.floatAttr("beta", 0.75f),
         bias = node.floatAttr("bias", 1.0f);
  FailureOr<Value> d = build<MulOp>(node, sum, scalarConstant(node, elt, alpha / size));
  if (failed(d) || failed(d = build<AddOp>(node, *d, scalarConstant(node, elt, bias))) ||
      failed(d = build<PowOp>(node, *d, scalarConstant(node, elt, beta))))
    return failure();
  return one(build<DivOp>(node, *x, *d));
}

namespace {
/// reshape -> transpose -> reshape.
FailureOr<Value> rearrange(OnnxNode &node, Value x, ArrayRef<int64_t> split,
                           ArrayRef<int64_t> perm, ArrayRef<int64_t> out) {
  FailureOr<Value> v = reshapeTo(node, x, split);
  if (failed(v) ||
      failed(v = build<TransposeOp>(node, *v, node.builder.getDenseI64ArrayAttr(perm))))
    return failure();
  return reshapeTo(node, *v, out);
}

FailureOr<SmallVector<Value>> depthToSpace(OnnxNode &node, bool toDepth) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x) || failed(node.requireStaticShape(typeOf(*x))))
    return failure();
  RankedTensorType xt = typeOf(*x);
  int64_t bs = node.intAttr("blocksize", 0);
  if (xt.getRank() != 4 || bs <= 0) {
    node.fail() << "expects a 4-D input and a positive blocksize";
    return failure();
  }
  int64_t n = xt.getDimSize(0), c = xt.getDimSize(1), h = xt.getDimSize(2),
          w = xt.getDimSize(3);
  if (toDepth) {
    if (h % bs || w % bs) {
      node.fail() << "height " << h << " and width " << w
                  << " must be multiples of blocksize " << bs;
      return failure();
    }
    return one(rearrange(node, *x, {n, c, h / bs, bs, w / bs, bs},
                         {0, 3, 5, 1, 2, 4}, {n, c * bs * bs, h / bs, w / bs}));
  }
  if (c % (bs * bs)) {
    node.fail() << "channels " << c << " must be a multiple of blocksize^2 = "
                << bs * bs;
    return failure();
  }
  int64_t co = c / (bs * bs);
  std::string mode = node.strAttr("mode", "DCR");
  if (mode == "DCR")
    return one(rearrange(node, *x, {n, bs, bs, co, h, w}, {0, 3, 4, 1, 5, 2},
                         {n, co, h * bs, w * bs}));
  if (mode == "CRD")
    return one(rearrange(node, *x, {n, co, bs, bs, h, w}, {0, 1, 4, 2, 5, 3},
                         {n, co, h * bs, w * bs}));
  node.fail() << "mode '" << mode << "' is not supported; expected DCR or CRD";
  return failure();
}

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

/// A tensor with one label per dimension.
struct Labeled {
  Value v;
  std::string labels;
};

class Einsum {
public:
  explicit Einsum(OnnxNode &node) : node(node) {}
  OnnxNode &node;

  /// Reorders `t` to `labels` (a permutation of its labels).
  FailureOr<Labeled> permute(Labeled t, StringRef labels) {
    SmallVector<int64_t> perm;
    for (char l : labels)
      perm.push_back(t.labels.find(l));
    FailureOr<Value> v = transposeBy(node, t.v, perm);
    if (failed(v))
      return failure();
    return Labeled{*v, labels.str()};
  }

  /// Takes the diagonal of every label that repeats within `t`.
  FailureOr<Labeled> diagonals(Labeled t) {
    for (;;) {
      size_t first = std::string::npos, second = std::string::npos;
      for (size_t i = 0; i < t.labels.size() && second == std::string::npos; ++i)
        if (size_t j = t.labels.find(t.labels[i], i + 1); j != std::string::npos)
          first = i, second = j;
      if (second == std::string::npos)
        return t;
      char l = t.labels[first];
      std::string rest;
      SmallVector<int64_t> perm;
      for (size_t i = 0; i < t.labels.size(); ++i)
        if (i != first && i != second) {
          rest += t.labels[i];
          perm.push_back(i);
        }
      perm.push_back(first);
      perm.push_back(second);
      // Move the pair to the end, merge it, and gather every (n+1)-th.
      FailureOr<Value> moved = transposeBy(node, t.v, perm);
      if (failed(moved))
        return failure();
      auto shape = llvm::to_vector(typeOf(*moved).getShape());
      int64_t n = shape.back();
      if (shape[shape.size() - 2] != n) {
        node.fail() << "label '" << l << "' has sizes " << shape[shape.size() - 2]
                    << " and " << n;
        return failure();
      }
      shape.pop_back();
      shape.back() = n * n;
      FailureOr<Value> flat = reshapeTo(node, *moved, shape);
      SmallVector<int64_t> idx;
      for (int64_t i = 0; i < n; ++i)
        idx.push_back(i * (n + 1));
      auto idxType = RankedTensorType::get({n}, node.builder.getI64Type());
      Value idxV = ConstantOp::create(node.builder, node.loc(), idxType,
                                      DenseElementsAttr::get(idxType, ArrayRef(idx)));
      if (failed(flat) ||
          failed(flat = build<GatherOp>(node, *flat, idxV,
                                        node.builder.getI64IntegerAttr(shape.size() - 1))))
        return failure();
      t = Labeled{*flat, rest + l};
    }
  }

  /// Sums the labels of `t` that are not in `keep`.
  FailureOr<Labeled> sumOut(Labeled t, StringRef keep) {
    SmallVector<int64_t> axes;
    std::string rest;
    for (size_t i = 0; i < t.labels.size(); ++i)
      if (keep.contains(t.labels[i]))
        rest += t.labels[i];
      else
        axes.push_back(i);
    if (axes.empty())
      return t;
    FailureOr<Value> v =
        build<ReduceSumOp>(node, t.v, node.builder.getDenseI64ArrayAttr(axes),
                           node.builder.getBoolAttr(false));
    if (failed(v))
      return failure();
    return Labeled{*v, rest};
  }

  int64_t sizeOf(const Labeled &t, char l) {
    return typeOf(t.v).getDimSize(t.labels.find(l));
  }

  /// Contracts two operands, keeping the labels in `keep`.
  FailureOr<Labeled> contract(Labeled a, Labeled b, StringRef keep) {
    std::string batch, left, right, inner;
    for (char l : a.labels) {
      bool inB = b.labels.find(l) != std::string::npos;
      if (inB && keep.contains(l))
        batch += l;
      else if (inB)
        inner += l;
      else
        left += l;
    }
    for (char l : b.labels)
      if (a.labels.find(l) == std::string::npos)
        right += l;
    for (char l : batch + inner)
      if (sizeOf(a, l) != sizeOf(b, l)) {
        node.fail() << "label '" << l << "' has sizes " << sizeOf(a, l) << " and "
                    << sizeOf(b, l) << "; broadcasting in Einsum is not supported";
        return failure();
      }
    auto prod = [](const Labeled &t, StringRef ls, Einsum &e) {
      int64_t p = 1;
      for (char l : ls)
        p *= e.sizeOf(t, l);
      return p;
    };
    int64_t nb = prod(a, batch, *this), m = prod(a, left, *this),
            k = prod(a, inner, *this), n = prod(b, right, *this);
    FailureOr<Labeled> pa = permute(a, batch + left + inner),
                       pb = permute(b, batch + inner + right);
    if (failed(pa) || failed(pb))
      return failure();
    FailureOr<Value> ra = reshapeTo(node, pa->v, {nb, m, k}),
                     rb = reshapeTo(node, pb->v, {nb, k, n});
    if (failed(ra) || failed(rb))
      return failure();
    FailureOr<Value> prodV = build<MatMulOp>(node, *ra, *rb);
    if (failed(prodV))
      return failure();
    SmallVector<int64_t> shape;
    for (char l : batch + left)
      shape.push_back(sizeOf(a, l));
    for (char l : right)
      shape.push_back(sizeOf(b, l));
    FailureOr<Value> out = reshapeTo(node, *prodV, shape);
    if (failed(out))
      return failure();
    return Labeled{*out, batch + left + right};
  }
};

} // namespace

FailureOr<SmallVector<Value>> mlir::kiln::convertEinsum(OnnxNode &node) {
  std::string eq;
  for (char ch : node.strAttr("equation", ""))
    if (ch != ' ')
      eq += ch;
  std::string lhs = eq, out;
  bool explicitOut = false;
  if (size_t arrow = eq.find("->"); arrow != std::string::npos) {
    lhs = eq.substr(0, arrow);
    out = eq.substr(arrow + 2);
    explicitOut = true;
  }
  SmallVector<std::string> terms;
  SmallVector<StringRef> parts;
  StringRef(lhs).split(parts, ',');
  for (StringRef t : parts)
    terms.push_back(t.str());
  if (terms.size() != node.numInputs()) {
    node.fail() << "equation '" << eq << "' has " << terms.size()
                << " operands but the node has " << node.numInputs() << " inputs";
    return failure();
  }
  // Ellipsis dimensions get the labels '0', '1', ... right-aligned.
  int64_t ellipsis = 0;
  SmallVector<Labeled> ops;
  for (auto [i, term] : llvm::enumerate(terms)) {
    FailureOr<Value> v = floatInput(node, i);
    if (failed(v))
      return failure();
    int64_t rank = typeOf(*v).getRank();
    std::string labels;
    size_t dots = term.find("...");
    int64_t named = term.size() - (dots == std::string::npos ? 0 : 3);
    int64_t extra = rank - named;
    if (extra < 0 || (dots == std::string::npos && extra != 0)) {
      node.fail() << "term '" << term << "' does not match an operand of rank " << rank;
      return failure();
    }
    for (size_t c = 0; c < term.size(); ++c) {
      if (c == dots) {
        for (int64_t e = 0; e < extra; ++e)
          labels += char('0' + (9 - extra + 1 + e));
        c += 2;
        continue;
      }
      if (!isAlpha(term[c])) {
        node.fail() << "equation '" << eq << "' has an unexpected character '"
                    << term[c] << "'";
        return failure();
      }
      labels += term[c];
    }
    ellipsis = std::max(ellipsis, extra);
    ops.push_back({*v, labels});
  }
  std::string ellipsisLabels;
  for (int64_t e = 0; e < ellipsis; ++e)
    ellipsisLabels += char('0' + (9 - ellipsis + 1 + e));
  if (explicitOut) {
    if (size_t dots = out.find("..."); dots != std::string::npos)
      out.replace(dots, 3, ellipsisLabels);
  } else {
    // Implicit output: the ellipsis, then labels that occur once, sorted.
    std::string all;
    for (Labeled &t : ops)
      all += t.labels;
    std::string once;
    for (char l : all)
      if (isAlpha(l) && llvm::count(all, l) == 1)
        once += l;
    llvm::sort(once);
    out = ellipsisLabels + once;
  }

  Einsum e(node);
  for (Labeled &t : ops) {
    FailureOr<Labeled> d = e.diagonals(t);
    if (failed(d))
      return failure();
    t = *d;
  }
  // Left to right: each step keeps the labels needed later or in the output;
  // labels only one operand has and nobody needs are summed first.
  auto needed = [&](size_t from) {
    std::string n = out;
    for (size_t j = from; j < ops.size(); ++j)
      n += ops[j].labels;
    return n;
  };
  FailureOr<Labeled> acc = e.sumOut(ops[0], needed(1));
  for (size_t i = 1; i < ops.size() && succeeded(acc); ++i) {
    std::string keep = needed(i + 1);
    FailureOr<Labeled> rhs = e.sumOut(ops[i], keep + acc->labels);
    if (failed(rhs))
      return failure();
    FailureOr<Labeled> lhs = e.sumOut(*acc, keep + rhs->labels);
    if (failed(lhs))
      return failure();
    acc = e.contract(*lhs, *rhs, keep);
  }
  if (failed(acc) || failed(acc = e.sumOut(*acc, out)))
    return failure();
  for (char l : out)
    if (acc->labels.find(l) == std::string::npos) {
      node.fail() << "output label '" << l << "' is not in any operand";
      return failure();
    }
  if (failed(acc = e.permute(*acc, out)))
    return failure();
  return SmallVector<Value>{acc->v};
}

FailureOr<SmallVector<Value>> mlir::kiln::convertDepthToSpace(OnnxNode &node) {
  return depthToSpace(node, false);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertSpaceToDepth(OnnxNode &node) {
  return depthToSpace(node, true);
}
