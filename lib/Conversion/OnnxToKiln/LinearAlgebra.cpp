//===- LinearAlgebra.cpp - ONNX Gemm, MatMul, Einsum and Det ----*- C++ -*-===//
//
// Einsum becomes transposes, reshapes, diagonals (a gather), reductions and
// one batched matmul per pair of operands.
//
//===----------------------------------------------------------------------===//
#include "Build.h"
#include "SymbolicSizes.h"

using namespace mlir;
using namespace mlir::kiln;

FailureOr<bool> mlir::kiln::flagAttr(OnnxNode &node, StringRef name) {
  int64_t v = node.intAttr(name, 0);
  if (v != 0 && v != 1) {
    node.fail() << name << " must be 0 or 1, got " << v;
    return failure();
  }
  return v == 1;
}

FailureOr<SmallVector<Value>> mlir::kiln::convertGemm(OnnxNode &node) {
  FailureOr<Value> a = node.rankedInput(0), b = node.rankedInput(1);
  FailureOr<bool> transA = flagAttr(node, "transA"),
                  transB = flagAttr(node, "transB");
  if (failed(a) || failed(b) || failed(transA) || failed(transB))
    return failure();
  auto &bl = node.builder;
  return one(build<GemmOp>(node, *a, *b, node.input(2),
                           bl.getF32FloatAttr(node.floatAttr("alpha", 1.0f)),
                           bl.getF32FloatAttr(node.floatAttr("beta", 1.0f)),
                           bl.getBoolAttr(*transA), bl.getBoolAttr(*transB)));
}

FailureOr<SmallVector<Value>> mlir::kiln::convertMatMul(OnnxNode &node) {
  FailureOr<Value> a = node.rankedInput(0), b = node.rankedInput(1);
  if (failed(a) || failed(b))
    return failure();
  // A vector of run-time length against a static reduced size (`v @ W`):
  // guarded equal, then of that size, so the product is the static one.
  auto refine = [&](Value &v, int64_t operand, Value other) {
    RankedTensorType t = typeOf(v), o = typeOf(other);
    if (t.getRank() != 1 || !t.isDynamicDim(0) || o.getRank() == 0 ||
        !node.sizes)
      return success();
    int64_t axis =
        operand == 1 || o.getRank() == 1 ? o.getRank() - 1 : o.getRank() - 2;
    int64_t k = o.getDimSize(axis);
    if (ShapedType::isDynamic(k))
      return success();
    FailureOr<Value> r = vectorOfLength(
        node, v, other, axis,
        node.describe() + ": operand " + std::to_string(operand) +
            " has a length other than " + std::to_string(k) +
            ", the reduced size of the other operand, at these input sizes");
    if (failed(r))
      return failure();
    v = *r;
    return success();
  };
  if (failed(refine(*a, 0, *b)) || failed(refine(*b, 1, *a)))
    return failure();
  return one(build<MatMulOp>(node, *a, *b));
}

namespace {
bool isAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
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
      for (size_t i = 0; i < t.labels.size() && second == std::string::npos;
           ++i)
        if (size_t j = t.labels.find(t.labels[i], i + 1);
            j != std::string::npos)
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
      if (failed(node.requireStaticShape(typeOf(*moved))))
        return failure();
      auto shape = llvm::to_vector(typeOf(*moved).getShape());
      int64_t n = shape.back();
      if (shape[shape.size() - 2] != n) {
        node.fail() << "label '" << l << "' has sizes "
                    << shape[shape.size() - 2] << " and " << n;
        return failure();
      }
      shape.pop_back();
      shape.back() = n * n;
      FailureOr<Value> flat = reshapeTo(node, *moved, shape);
      SmallVector<int64_t> idx;
      for (int64_t i = 0; i < n; ++i)
        idx.push_back(i * (n + 1));
      auto idxType = RankedTensorType::get({n}, node.builder.getI64Type());
      Value idxV =
          ConstantOp::create(node.builder, node.loc(), idxType,
                             DenseElementsAttr::get(idxType, ArrayRef(idx)));
      if (failed(flat) ||
          failed(flat = build<GatherOp>(
                     node, *flat, idxV,
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
    // Two static sizes of a label must agree; a run-time size gets a guard
    // where the polynomials do not prove the two equal.
    for (char l : batch + inner) {
      int64_t sa = sizeOf(a, l), sb = sizeOf(b, l);
      if (!ShapedType::isDynamic(sa) && !ShapedType::isDynamic(sb) &&
          sa != sb) {
        node.fail() << "label '" << l << "' has sizes " << sa << " and " << sb
                    << "; broadcasting in Einsum is not supported";
        return failure();
      }
      guardSameSize(node, a.v, a.labels.find(l), b.v, b.labels.find(l),
                    std::string("label '") + l + "' of the two operands");
    }
    // [batch, left, inner] x [batch, inner, right] and back, the sizes as
    // polynomials (sized reshapes where one is symbolic).
    auto dimOf = [&](const Labeled &t, char l) {
      return node.sizes->dim(t.v, t.labels.find(l));
    };
    auto prod = [&](const Labeled &t, StringRef ls) -> std::optional<SymSize> {
      SymSize p = SymSize::constant(1);
      for (char l : ls) {
        std::optional<SymSize> q = SymSize::mul(p, dimOf(t, l));
        if (!q)
          return std::nullopt;
        p = *q;
      }
      return p;
    };
    std::optional<SymSize> nb = prod(a, batch), m = prod(a, left),
                           k = prod(a, inner), n = prod(b, right);
    if (!nb || !m || !k || !n) {
      node.fail() << "the operands' sizes overflow";
      return failure();
    }
    FailureOr<Labeled> pa = permute(a, batch + left + inner),
                       pb = permute(b, batch + inner + right);
    if (failed(pa) || failed(pb))
      return failure();
    FailureOr<Value> ra = reshapeToSizes(node, pa->v, {*nb, *m, *k}),
                     rb = reshapeToSizes(node, pb->v, {*nb, *k, *n});
    if (failed(ra) || failed(rb))
      return failure();
    FailureOr<Value> prodV = build<MatMulOp>(node, *ra, *rb);
    if (failed(prodV))
      return failure();
    SmallVector<SymSize> shape;
    for (char l : batch + left)
      shape.push_back(dimOf(a, l));
    for (char l : right)
      shape.push_back(dimOf(b, l));
    FailureOr<Value> out = reshapeToSizes(node, *prodV, shape);
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
                << " operands but the node has " << node.numInputs()
                << " inputs";
    return failure();
  }
  // Ellipsis dimensions get the labels '0', '1', ... right-aligned.
  int64_t ellipsis = 0;
  SmallVector<Labeled> ops;
  for (auto [i, term] : llvm::enumerate(terms)) {
    // Symbolic sizes are contracted with sized reshapes (contractSymbolic).
    FailureOr<Value> v =
        node.sizes ? elementwiseFloatInput(node, i) : floatInput(node, i);
    if (failed(v))
      return failure();
    int64_t rank = typeOf(*v).getRank();
    std::string labels;
    size_t dots = term.find("...");
    int64_t named = term.size() - (dots == std::string::npos ? 0 : 3);
    int64_t extra = rank - named;
    if (extra < 0 || (dots == std::string::npos && extra != 0)) {
      node.fail() << "term '" << term << "' does not match an operand of rank "
                  << rank;
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

/// Det 11.
FailureOr<SmallVector<Value>> mlir::kiln::convertDet(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  return one(build<DetOp>(node, *x));
}
