//===- Col2Im.cpp - ONNX Col2Im ---------------------------------*- C++ -*-===//
//
// Col2Im adds every element of every column block into the image position
// it came from. Those positions depend only on the shapes, so they are a
// compile-time table and the image is one kiln.scatter_elements with
// reduction "add" into a zero padded image, then a slice that drops the
// padding. ONNX's models often give image_shape and block_shape as graph
// inputs: the image shape then comes from the declared output, and the
// block shapes that fit the input's sizes are each computed and chosen
// between at run time (a guard checks that one of them is given).
//
//===----------------------------------------------------------------------===//
#include "ShapeInputs.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Row-major position `flat` in `shape`.
SmallVector<int64_t> unflatten(int64_t flat, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> at(shape.size());
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    at[d] = flat % shape[d];
    flat /= shape[d];
  }
  return at;
}

struct Geometry {
  SmallVector<int64_t> image, pads, strides, dilations;
  /// The number of blocks along each dimension for `block`, or nothing
  /// when the block does not fit.
  std::optional<SmallVector<int64_t>> blocks(ArrayRef<int64_t> block) const {
    int64_t n = image.size();
    SmallVector<int64_t> out;
    for (int64_t d = 0; d < n; ++d) {
      int64_t span = dilations[d] * (block[d] - 1) + 1;
      int64_t padded = image[d] + pads[d] + pads[d + n];
      if (block[d] < 1 || span > padded)
        return std::nullopt;
      out.push_back((padded - span) / strides[d] + 1);
    }
    return out;
  }
};

/// The image for one block shape: x [N, C * K, L] scattered into the padded
/// image, which is then cropped.
FailureOr<Value> col2im(OnnxNode &node, Value x, const Geometry &g,
                        ArrayRef<int64_t> block, int64_t c) {
  ArrayRef<int64_t> xs = typeOf(x).getShape();
  int64_t n = g.image.size(), batch = xs[0], k = 1, l = xs[2], flat = 1;
  for (int64_t b : block)
    k *= b;
  SmallVector<int64_t> padded, outBlocks = *g.blocks(block);
  for (int64_t d = 0; d < n; ++d) {
    padded.push_back(g.image[d] + g.pads[d] + g.pads[d + n]);
    flat *= padded.back();
  }
  // Element (k, l) of a channel goes to position o * stride + k * dilation.
  SmallVector<int64_t> index;
  index.reserve(batch * c * k * l);
  for (int64_t i = 0; i < k; ++i) {
    SmallVector<int64_t> kAt = unflatten(i, block);
    for (int64_t j = 0; j < l; ++j) {
      SmallVector<int64_t> oAt = unflatten(j, outBlocks);
      int64_t pos = 0;
      for (int64_t d = 0; d < n; ++d)
        pos = pos * padded[d] + oAt[d] * g.strides[d] + kAt[d] * g.dilations[d];
      index.push_back(pos);
    }
  }
  int64_t perImage = index.size();
  for (int64_t rep = 1; rep < batch * c; ++rep)
    index.append(index.begin(), index.begin() + perImage);
  Type elt = elementOf(x);
  auto zeroType = RankedTensorType::get({batch, c, flat}, elt);
  Value zeros = splatConstant(node, zeroType, 0.0);
  Value idx = constI64(node, index, {batch, c, k * l});
  FailureOr<Value> v = reshapeTo(node, x, {batch, c, k * l});
  if (failed(v) ||
      failed(v = build<ScatterElementsOp>(node, zeros, idx, *v,
                                          node.builder.getI64IntegerAttr(2),
                                          node.builder.getStringAttr("add"))))
    return failure();
  SmallVector<int64_t> shape = {batch, c}, offsets = {0, 0}, sizes = {batch, c},
                       strides(n + 2, 1);
  llvm::append_range(shape, padded);
  for (int64_t d = 0; d < n; ++d) {
    offsets.push_back(g.pads[d]);
    sizes.push_back(g.image[d]);
  }
  auto &b = node.builder;
  if (failed(v = reshapeTo(node, *v, shape)))
    return failure();
  return build<SliceOp>(node, *v, b.getDenseI64ArrayAttr(offsets),
                        b.getDenseI64ArrayAttr(sizes),
                        b.getDenseI64ArrayAttr(strides));
}

/// The block shapes (extending `prefix`, whose remaining dimensions hold `k`
/// elements) that fit the image and give `l` blocks.
void fittingBlocks(const Geometry &g, int64_t k, int64_t l,
                   SmallVector<int64_t> &prefix,
                   SmallVector<SmallVector<int64_t>> &found) {
  int64_t n = g.image.size(), d = prefix.size();
  if (d == n) {
    int64_t blocks = 1;
    std::optional<SmallVector<int64_t>> o = g.blocks(prefix);
    if (!o || k != 1)
      return;
    for (int64_t v : *o)
      blocks *= v;
    if (blocks == l)
      found.push_back(prefix);
    return;
  }
  for (int64_t b = 1; b <= k; ++b)
    if (k % b == 0) {
      prefix.push_back(b);
      fittingBlocks(g, k / b, l, prefix, found);
      prefix.pop_back();
    }
}
} // namespace

/// Col2Im 18.
FailureOr<SmallVector<Value>> mlir::kiln::convertCol2Im(OnnxNode &node) {
  FailureOr<Value> x = floatInput(node, 0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> xs = typeOf(*x).getShape();
  auto shapeLen = [&](unsigned i) -> int64_t {
    auto t = dyn_cast<RankedTensorType>(node.input(i).getType());
    return t && t.hasStaticShape() && t.getRank() == 1 ? t.getNumElements()
                                                       : -1;
  };
  int64_t n = shapeLen(1);
  if (xs.size() != 3 || n < 1 || shapeLen(2) != n) {
    node.fail() << "expects input [N, C * prod(block_shape), L] and 1-D "
                   "image_shape and block_shape of one length";
    return failure();
  }
  auto list = [&](StringRef name, int64_t dflt, int64_t len) {
    return node.intsAttr(name).value_or(SmallVector<int64_t>(len, dflt));
  };
  Geometry g{{},
             list("pads", 0, 2 * n),
             list("strides", 1, n),
             list("dilations", 1, n)};
  if ((int64_t)g.pads.size() != 2 * n || (int64_t)g.strides.size() != n ||
      (int64_t)g.dilations.size() != n) {
    node.fail() << "pads, strides and dilations must have " << 2 * n << ", "
                << n << " and " << n << " values";
    return failure();
  }
  int64_t c = -1;
  if (std::optional<SmallVector<int64_t>> img = node.constantInts(1)) {
    g.image = *img;
  } else {
    FailureOr<RankedTensorType> declared =
        declaredResult(node, 0, "image_shape");
    if (failed(declared))
      return failure();
    if (declared->getRank() != n + 2) {
      node.fail() << "the declared output must have rank " << n + 2;
      return failure();
    }
    g.image.assign(declared->getShape().begin() + 2,
                   declared->getShape().end());
    c = declared->getDimSize(1);
    if (failed(guardEquals(node, 1, g.image, "the image shape")))
      return failure();
  }
  SmallVector<SmallVector<int64_t>> candidates;
  std::optional<SmallVector<int64_t>> block = node.constantInts(2);
  if (block) {
    candidates.push_back(*block);
  } else {
    if (c <= 0) {
      auto declared =
          dyn_cast<RankedTensorType>(node.op->getResult(0).getType());
      if (!declared || declared.getRank() != n + 2 ||
          declared.isDynamicDim(1)) {
        node.fail() << "block_shape must be a compile-time constant, or the "
                       "output shape must be declared static";
        return failure();
      }
      c = declared.getDimSize(1);
    }
    if (c <= 0 || xs[1] % c != 0) {
      node.fail() << "the declared " << c << " channels do not divide the "
                  << xs[1] << " input rows";
      return failure();
    }
    SmallVector<int64_t> prefix;
    fittingBlocks(g, xs[1] / c, xs[2], prefix, candidates);
    if (candidates.empty() || candidates.size() > 8) {
      node.fail() << "block_shape must be a compile-time constant: "
                  << candidates.size() << " block shapes fit the input's sizes";
      return failure();
    }
  }
  for (ArrayRef<int64_t> cand : candidates) {
    int64_t k = 1, l = 1;
    for (int64_t b : cand)
      k *= b;
    std::optional<SmallVector<int64_t>> o = g.blocks(cand);
    if ((int64_t)cand.size() != n || !o || xs[1] % k != 0) {
      node.fail() << "block_shape does not fit the image with these pads, "
                     "strides and dilations";
      return failure();
    }
    for (int64_t v : *o)
      l *= v;
    if (l != xs[2]) {
      node.fail() << "the input has " << xs[2] << " blocks; the shapes give "
                  << l;
      return failure();
    }
  }
  if (block) {
    int64_t k = 1;
    for (int64_t b : *block)
      k *= b;
    return one(col2im(node, *x, g, *block, xs[1] / k));
  }
  // Run-time block shape: each fitting shape, chosen by its values.
  IndexMath m{node};
  Value result, any;
  for (ArrayRef<int64_t> cand : llvm::reverse(candidates)) {
    FailureOr<Value> r = col2im(node, *x, g, cand, c);
    if (failed(r))
      return failure();
    Value when;
    for (int64_t d = 0; d < n; ++d) {
      Value eq = m.eq(m.at(2, d), m.c(cand[d]));
      when = when ? m.land(when, eq) : eq;
    }
    if (!m.ok)
      return failure();
    result = result ? m.where(when, *r, result) : *r;
    any = any ? m.check(build<OrOp>(node, any, when)) : when;
  }
  if (!m.ok)
    return failure();
  guardInput(node, any, 2,
             "must be a block shape that fits the input's sizes and the "
             "declared output this model was compiled for");
  return SmallVector<Value>{result};
}
