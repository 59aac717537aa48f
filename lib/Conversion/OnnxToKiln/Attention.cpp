//===- Attention.cpp - ONNX Attention and RotaryEmbedding -------*- C++ -*-===//
//
// The transformer ops of opset 23, built from kiln ops that Kiln's kernels
// already run: RotaryEmbedding as slices, products and a concat that the
// elementwise fusion merges.
//
//===----------------------------------------------------------------------===//
#include "Build.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// kiln.slice of the last dimension of `v`: `count` elements from `first`,
/// `stride` apart.
FailureOr<Value> sliceLast(OnnxNode &node, Value v, int64_t first,
                           int64_t count, int64_t stride = 1) {
  auto &b = node.builder;
  ArrayRef<int64_t> shape = typeOf(v).getShape();
  int64_t rank = shape.size();
  SmallVector<int64_t> offsets(rank, 0), sizes(shape), strides(rank, 1);
  offsets.back() = first;
  sizes.back() = count;
  strides.back() = stride;
  return build<SliceOp>(node, v, b.getDenseI64ArrayAttr(offsets),
                        b.getDenseI64ArrayAttr(sizes),
                        b.getDenseI64ArrayAttr(strides));
}

} // namespace

/// RotaryEmbedding 23. X is [B, H, S, D], or [B, S, H * D] with num_heads
/// (viewed as [B, S, H, D]); cos and sin ([B, S, R/2], or gathered at
/// position_ids from [P, R/2]) are reshaped to broadcast over the heads. The
/// first R = rotary_embedding_dim (default D) channels rotate, as halves or
/// as even/odd interleaved pairs; the rest pass through.
FailureOr<SmallVector<Value>>
mlir::kiln::convertRotaryEmbedding(OnnxNode &node) {
  FailureOr<Value> x = node.staticInput(0), cosCache = node.staticInput(1),
                   sinCache = node.staticInput(2);
  if (failed(x) || failed(cosCache) || failed(sinCache))
    return failure();
  RankedTensorType xt = typeOf(*x);
  int64_t rank = xt.getRank();
  if (rank != 3 && rank != 4) {
    node.fail() << "expects X of rank 3 [batch, seq, hidden] or 4 [batch, "
                   "heads, seq, head_size], got "
                << xt;
    return failure();
  }
  int64_t batch = xt.getDimSize(0), numHeads, seq, headSize;
  SmallVector<int64_t> heads4d, cosShape;
  if (rank == 4) {
    numHeads = xt.getDimSize(1);
    seq = xt.getDimSize(2);
    headSize = xt.getDimSize(3);
    heads4d.assign(xt.getShape().begin(), xt.getShape().end());
  } else {
    seq = xt.getDimSize(1);
    numHeads = node.intAttr("num_heads", 0);
    if (numHeads <= 0 || xt.getDimSize(2) % numHeads != 0) {
      node.fail() << "a 3-D X needs a num_heads attribute that divides its "
                     "hidden size "
                  << xt.getDimSize(2);
      return failure();
    }
    headSize = xt.getDimSize(2) / numHeads;
    heads4d = {batch, seq, numHeads, headSize};
  }
  int64_t rotary = node.intAttr("rotary_embedding_dim", 0);
  if (rotary == 0)
    rotary = headSize;
  if (rotary < 0 || rotary > headSize || rotary % 2 != 0) {
    node.fail() << "rotary_embedding_dim " << rotary
                << " must be even and at most the head size " << headSize;
    return failure();
  }
  int64_t half = rotary / 2;
  // cos/sin broadcast over the heads: [B, 1, S, R/2] against [B, H, S, D],
  // [B, S, 1, R/2] against the [B, S, H, D] view of a 3-D X.
  cosShape = rank == 4 ? SmallVector<int64_t>{batch, 1, seq, half}
                       : SmallVector<int64_t>{batch, seq, 1, half};
  Value positions = node.input(3);
  SmallVector<Value> caches;
  for (Value cache : {*cosCache, *sinCache}) {
    ArrayRef<int64_t> cs = typeOf(cache).getShape();
    FailureOr<Value> c = cache;
    if (positions) {
      if (cs.size() != 2 || cs[1] != half) {
        node.fail() << "with position_ids, cos_cache and sin_cache must be "
                       "[max_position, "
                    << half << "], got " << typeOf(cache);
        return failure();
      }
      if (failed(checkConstantIndices(node, 3, [&](size_t) { return cs[0]; })))
        return failure();
      c = build<GatherOp>(node, cache, positions,
                          node.builder.getI64IntegerAttr(0));
    } else if (cs != ArrayRef<int64_t>{batch, seq, half}) {
      node.fail() << "without position_ids, cos_cache and sin_cache must be ["
                  << batch << ", " << seq << ", " << half << "], got "
                  << typeOf(cache);
      return failure();
    }
    if (succeeded(c))
      c = reshapeTo(node, *c, cosShape);
    if (failed(c))
      return failure();
    caches.push_back(*c);
  }
  FailureOr<Value> xv = reshapeTo(node, *x, heads4d);
  if (failed(xv))
    return failure();
  bool interleaved = node.intAttr("interleaved", 0) != 0;
  FailureOr<Value> x1 = interleaved ? sliceLast(node, *xv, 0, half, 2)
                                    : sliceLast(node, *xv, 0, half);
  FailureOr<Value> x2 = interleaved ? sliceLast(node, *xv, 1, half, 2)
                                    : sliceLast(node, *xv, half, half);
  if (failed(x1) || failed(x2))
    return failure();
  Value cos = caches[0], sin = caches[1];
  // real = cos * x1 - sin * x2, imag = sin * x1 + cos * x2.
  FailureOr<Value> c1 = build<MulOp>(node, cos, *x1),
                   s2 = build<MulOp>(node, sin, *x2),
                   s1 = build<MulOp>(node, sin, *x1),
                   c2 = build<MulOp>(node, cos, *x2);
  if (failed(c1) || failed(s2) || failed(s1) || failed(c2))
    return failure();
  FailureOr<Value> real = build<SubOp>(node, *c1, *s2),
                   imag = build<AddOp>(node, *s1, *c2);
  if (failed(real) || failed(imag))
    return failure();
  auto &b = node.builder;
  FailureOr<Value> rotated;
  if (interleaved) {
    // [..., R/2] pairs side by side as [..., R/2, 2], then [..., R].
    SmallVector<int64_t> pairShape(typeOf(*real).getShape());
    pairShape.push_back(1);
    FailureOr<Value> r = reshapeTo(node, *real, pairShape),
                     i = reshapeTo(node, *imag, pairShape);
    if (failed(r) || failed(i))
      return failure();
    rotated = build<ConcatOp>(node, ValueRange{*r, *i},
                              b.getI64IntegerAttr(4));
    SmallVector<int64_t> flat(heads4d);
    flat.back() = rotary;
    if (succeeded(rotated))
      rotated = reshapeTo(node, *rotated, flat);
  } else {
    rotated = build<ConcatOp>(node, ValueRange{*real, *imag},
                              b.getI64IntegerAttr(3));
  }
  if (failed(rotated))
    return failure();
  if (rotary < headSize) {
    FailureOr<Value> rest = sliceLast(node, *xv, rotary, headSize - rotary);
    if (failed(rest))
      return failure();
    rotated = build<ConcatOp>(node, ValueRange{*rotated, *rest},
                              b.getI64IntegerAttr(3));
    if (failed(rotated))
      return failure();
  }
  return one(reshapeTo(node, *rotated, xt.getShape()));
}
