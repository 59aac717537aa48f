//===- Attention.cpp - ONNX Attention and RotaryEmbedding -------*- C++ -*-===//
//
// The transformer ops of opsets 23 and 24, built from kiln ops that Kiln's
// kernels already run: RotaryEmbedding as slices, products and a concat that
// the elementwise fusion merges; Attention as batched kiln.matmul (Q * K^T),
// a bias add, kiln.softmax and a second batched kiln.matmul with V, never as
// the op's expanded function body.
//
//===----------------------------------------------------------------------===//
#include "Build.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::kiln;

namespace {
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

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

/// A constant of `shape` and element type `elt` (i1 or i64) whose element at
/// (i, j) of the last two dimensions is `f(i, j)`.
template <typename T>
Value grid(OnnxNode &node, ArrayRef<int64_t> shape, Type elt,
           llvm::function_ref<T(int64_t, int64_t)> f) {
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  SmallVector<T> values;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      values.push_back(f(i, j));
  auto type = RankedTensorType::get(shape, elt);
  return ConstantOp::create(node.builder, node.loc(), type,
                            DenseElementsAttr::get(type, ArrayRef(values)));
}

Value boolGrid(OnnxNode &node, ArrayRef<int64_t> shape,
               llvm::function_ref<bool(int64_t, int64_t)> pred) {
  return grid<bool>(node, shape, node.builder.getI1Type(), pred);
}

Value intGrid(OnnxNode &node, ArrayRef<int64_t> shape,
              llvm::function_ref<int64_t(int64_t, int64_t)> f) {
  return grid<int64_t>(node, shape, node.builder.getI64Type(), f);
}

/// 0 where `allowed`, -inf elsewhere, in `elt`.
FailureOr<Value> biasFrom(OnnxNode &node, Value allowed, Type elt) {
  return build<WhereOp>(node, allowed, scalarConstant(node, elt, 0.0),
                        scalarConstant(node, elt, kNegInf));
}

/// `a + b`, where a null operand is absent.
FailureOr<Value> addBias(OnnxNode &node, Value a, FailureOr<Value> b) {
  if (failed(b))
    return failure();
  if (!a)
    return *b;
  return build<AddOp>(node, a, *b);
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
    rotated = build<ConcatOp>(node, ValueRange{*r, *i}, b.getI64IntegerAttr(4));
    SmallVector<int64_t> flat(heads4d);
    flat.back() = rotary;
    if (succeeded(rotated))
      rotated = reshapeTo(node, *rotated, flat);
  } else {
    rotated =
        build<ConcatOp>(node, ValueRange{*real, *imag}, b.getI64IntegerAttr(3));
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

namespace {
/// The sizes of one Attention node, all static.
struct AttentionDims {
  int64_t batch, qHeads, kvHeads, qSeq, kvSeq, headSize, vHeadSize;
  int64_t past = 0;
  bool threeD;
  int64_t total() const { return past + kvSeq; }
  int64_t group() const { return qHeads / kvHeads; }
};

/// Q, K or V as [B, H, S, D]: 4-D inputs as they are, 3-D [B, S, H * D]
/// split into `heads` heads and transposed.
FailureOr<Value> toHeads(OnnxNode &node, Value v, int64_t heads) {
  RankedTensorType t = typeOf(v);
  if (t.getRank() == 4)
    return v;
  int64_t hidden = t.getDimSize(2);
  FailureOr<Value> r = reshapeTo(
      node, v, {t.getDimSize(0), t.getDimSize(1), heads, hidden / heads});
  if (failed(r))
    return failure();
  return transposeBy(node, *r, {0, 2, 1, 3});
}

/// Reads and checks the shapes of Q, K, V and the past caches; the three
/// inputs come back as [B, H, S, D].
FailureOr<AttentionDims> attentionDims(OnnxNode &node, Value &q, Value &k,
                                       Value &v) {
  RankedTensorType qt = typeOf(q), kt = typeOf(k), vt = typeOf(v);
  int64_t rank = qt.getRank();
  if ((rank != 3 && rank != 4) || kt.getRank() != rank ||
      vt.getRank() != rank) {
    node.fail() << "expects Q, K and V all 3-D [batch, seq, hidden] or all "
                   "4-D [batch, heads, seq, head_size], got "
                << qt << ", " << kt << " and " << vt;
    return failure();
  }
  AttentionDims d;
  d.threeD = rank == 3;
  d.batch = qt.getDimSize(0);
  if (d.threeD) {
    d.qHeads = node.intAttr("q_num_heads", 0);
    d.kvHeads = node.intAttr("kv_num_heads", 0);
    if (d.qHeads <= 0 || d.kvHeads <= 0 || qt.getDimSize(2) % d.qHeads ||
        kt.getDimSize(2) % d.kvHeads || vt.getDimSize(2) % d.kvHeads) {
      node.fail() << "3-D Q, K and V need q_num_heads and kv_num_heads "
                     "attributes that divide their hidden sizes";
      return failure();
    }
  } else {
    d.qHeads = qt.getDimSize(1);
    d.kvHeads = kt.getDimSize(1);
  }
  FailureOr<Value> qh = toHeads(node, q, d.qHeads),
                   kh = toHeads(node, k, d.kvHeads),
                   vh = toHeads(node, v, d.kvHeads);
  if (failed(qh) || failed(kh) || failed(vh))
    return failure();
  q = *qh;
  k = *kh;
  v = *vh;
  ArrayRef<int64_t> qs = typeOf(q).getShape(), ks = typeOf(k).getShape(),
                    vs = typeOf(v).getShape();
  d.qSeq = qs[2];
  d.headSize = qs[3];
  d.kvSeq = ks[2];
  d.vHeadSize = vs[3];
  if (ks[0] != d.batch || vs[0] != d.batch || vs[1] != ks[1] ||
      vs[2] != ks[2] || ks[3] != d.headSize) {
    node.fail() << "K must be [batch, kv_heads, kv_seq, head_size] and V "
                   "[batch, kv_heads, kv_seq, v_head_size] with Q's batch "
                   "and head size, got "
                << typeOf(q) << ", " << typeOf(k) << " and " << typeOf(v)
                << " (as heads)";
    return failure();
  }
  if (d.qHeads % d.kvHeads != 0) {
    node.fail() << "q_num_heads " << d.qHeads
                << " must be a multiple of kv_num_heads " << d.kvHeads;
    return failure();
  }
  return d;
}

/// Concatenates past_key/past_value (inputs 4 and 5) before K and V along
/// the sequence; `d.past` becomes the past length.
LogicalResult appendPast(OnnxNode &node, AttentionDims &d, Value &k, Value &v) {
  Value pastK = node.input(4), pastV = node.input(5);
  if (!pastK && !pastV)
    return success();
  if (!pastK || !pastV) {
    node.fail() << "past_key and past_value must be given together";
    return failure();
  }
  if (failed(node.staticInput(4)) || failed(node.staticInput(5)))
    return failure();
  ArrayRef<int64_t> pk = typeOf(pastK).getShape(),
                    pv = typeOf(pastV).getShape();
  if (pk.size() != 4 || pv.size() != 4 || pk[0] != d.batch ||
      pk[1] != d.kvHeads || pk[3] != d.headSize || pv[0] != d.batch ||
      pv[1] != d.kvHeads || pv[2] != pk[2] || pv[3] != d.vHeadSize) {
    node.fail() << "past_key must be [" << d.batch << ", " << d.kvHeads
                << ", past_seq, " << d.headSize << "] and past_value ["
                << d.batch << ", " << d.kvHeads << ", past_seq, " << d.vHeadSize
                << "], got " << typeOf(pastK) << " and " << typeOf(pastV);
    return failure();
  }
  auto axis = node.builder.getI64IntegerAttr(2);
  FailureOr<Value> kAll = build<ConcatOp>(node, ValueRange{pastK, k}, axis),
                   vAll = build<ConcatOp>(node, ValueRange{pastV, v}, axis);
  if (failed(kAll) || failed(vAll))
    return failure();
  k = *kAll;
  v = *vAll;
  d.past = pk[2];
  return success();
}

/// The additive bias of the scores ([.., S_q, total], broadcasting to
/// [B, H_q, S_q, total]) from attn_mask, is_causal and nonpad_kv_seqlen, in
/// `elt`; null when none applies.
FailureOr<Value> attentionBias(OnnxNode &node, const AttentionDims &d,
                               Type elt) {
  auto &b = node.builder;
  int64_t total = d.total();
  Value bias;
  if (Value mask = node.input(3)) {
    if (failed(node.staticInput(3)))
      return failure();
    RankedTensorType mt = typeOf(mask);
    if (mt.getRank() < 1 || mt.getRank() > 4 || mt.getShape().back() > total) {
      node.fail() << "attn_mask must have rank 1 to 4 and at most " << total
                  << " keys in its last dimension, got " << mt;
      return failure();
    }
    FailureOr<Value> m = mask;
    if (mt.getElementType().isInteger(1))
      m = biasFrom(node, mask, elt);
    else if (mt.getElementType() != elt)
      m = build<CastOp>(node, mask, TypeAttr::get(elt));
    // A mask shorter than the keys is padded with -inf.
    if (succeeded(m) && mt.getShape().back() < total) {
      SmallVector<int64_t> pads(2 * mt.getRank(), 0);
      pads.back() = total - mt.getShape().back();
      m = build<PadOp>(
          node, *m, b.getDenseI64ArrayAttr(pads),
          b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
    }
    if (failed(m))
      return failure();
    bias = *m;
  }
  Value nonpad = node.opset >= 24 ? node.input(6) : Value();
  if (nonpad) {
    if (failed(node.staticInput(6)))
      return failure();
    if (typeOf(nonpad).getShape() != ArrayRef<int64_t>{d.batch}) {
      node.fail() << "nonpad_kv_seqlen must be [" << d.batch << "], got "
                  << typeOf(nonpad);
      return failure();
    }
  }
  FailureOr<Value> lens =
      nonpad ? reshapeTo(node, nonpad, {d.batch, 1, 1, 1}) : FailureOr<Value>();
  if (nonpad && failed(lens))
    return failure();
  if (node.intAttr("is_causal", 0) != 0) {
    FailureOr<Value> causal;
    if (nonpad) {
      // Query i of batch b attends key j iff j <= i + nonpad[b] - S_q, that
      // is iff S_q - i + j <= nonpad[b].
      Value frontier =
          intGrid(node, {1, 1, d.qSeq, total},
                  [&](int64_t i, int64_t j) { return d.qSeq - i + j; });
      causal = build<LessEqualOp>(node, frontier, *lens);
    } else {
      causal = boolGrid(node, {d.qSeq, total},
                        [&](int64_t i, int64_t j) { return j <= i + d.past; });
    }
    if (succeeded(causal))
      causal = biasFrom(node, *causal, elt);
    FailureOr<Value> sum = addBias(node, bias, causal);
    if (failed(sum))
      return failure();
    bias = *sum;
  }
  if (nonpad) {
    // Keys at or past nonpad[b] are padding.
    Value keys =
        intGrid(node, {1, 1, 1, total}, [](int64_t, int64_t j) { return j; });
    FailureOr<Value> valid = build<LessOp>(node, keys, *lens);
    if (succeeded(valid))
      valid = biasFrom(node, *valid, elt);
    FailureOr<Value> sum = addBias(node, bias, valid);
    if (failed(sum))
      return failure();
    bias = *sum;
  }
  return bias;
}

/// The element type ONNX `dtype` names for softmax_precision, or null.
Type softmaxType(Builder &b, int64_t dtype) {
  switch (dtype) {
  case 1:
    return b.getF32Type();
  case 10:
    return b.getF16Type();
  case 11:
    return b.getF64Type();
  case 16:
    return b.getBF16Type();
  default:
    return Type();
  }
}

/// softmax(scores) along the keys, in softmax_precision when it is given and
/// wider than the scores, with the rows that `bias` masks entirely set to
/// zero (not NaN).
FailureOr<Value> attentionProbs(OnnxNode &node, Value scores, Value bias) {
  auto &b = node.builder;
  Type elt = elementOf(scores);
  Type precision = elt;
  if (node.hasAttr("softmax_precision")) {
    int64_t dtype = node.intAttr("softmax_precision", 1);
    precision = softmaxType(b, dtype);
    if (!precision) {
      node.fail() << "softmax_precision " << dtype
                  << " is not a floating-point type; use 1 (float), 10 "
                     "(float16), 11 (double) or 16 (bfloat16)";
      return failure();
    }
    if (precision.getIntOrFloatBitWidth() <= elt.getIntOrFloatBitWidth())
      precision = elt;
  }
  FailureOr<Value> p = scores;
  if (precision != elt)
    p = build<CastOp>(node, scores, TypeAttr::get(precision));
  if (succeeded(p))
    p = build<SoftmaxOp>(node, *p, b.getI64IntegerAttr(3));
  if (succeeded(p) && precision != elt)
    p = build<CastOp>(node, *p, TypeAttr::get(elt));
  if (failed(p) || !bias)
    return p;
  int64_t last = typeOf(bias).getRank() - 1;
  FailureOr<Value> rowMax = build<ReduceMaxOp>(
      node, bias, b.getDenseI64ArrayAttr({last}), b.getBoolAttr(true));
  FailureOr<Value> masked;
  if (succeeded(rowMax))
    masked = build<EqualOp>(node, *rowMax, scalarConstant(node, elt, kNegInf));
  if (failed(masked))
    return failure();
  return build<WhereOp>(node, *masked, scalarConstant(node, elt, 0.0), *p);
}

/// Batched `lhs` [B, H_q, S_q, X] times `rhs` [B, H_kv, X, Y]: the query heads
/// of one group share their key/value head, so `lhs` is viewed as
/// [B, H_kv, group * S_q, X] and no key or value is repeated.
FailureOr<Value> groupedMatMul(OnnxNode &node, const AttentionDims &d,
                               Value lhs, Value rhs) {
  ArrayRef<int64_t> ls = typeOf(lhs).getShape();
  FailureOr<Value> l =
      reshapeTo(node, lhs, {d.batch, d.kvHeads, d.group() * d.qSeq, ls[3]});
  FailureOr<Value> y;
  if (succeeded(l))
    y = build<MatMulOp>(node, *l, rhs);
  if (failed(y))
    return failure();
  return reshapeTo(node, *y,
                   {d.batch, d.qHeads, d.qSeq, typeOf(*y).getShape()[3]});
}

} // namespace

/// Attention 23 and 24: scores = (Q * scale) K^T (batched kiln.matmul, the
/// query heads grouped over their key/value head), softcap, + bias (attn_mask,
/// is_causal, nonpad_kv_seqlen), kiln.softmax, with fully masked rows zeroed,
/// then the batched product with V. past_key/past_value are concatenated
/// before K and V and returned as present_key/present_value.
FailureOr<SmallVector<Value>> mlir::kiln::convertAttention(OnnxNode &node) {
  FailureOr<Value> qIn = node.staticInput(0), kIn = node.staticInput(1),
                   vIn = node.staticInput(2);
  if (failed(qIn) || failed(kIn) || failed(vIn))
    return failure();
  Type elt = elementOf(*qIn);
  if (elementOf(*kIn) != elt || elementOf(*vIn) != elt) {
    node.fail() << "Q, K and V must have one element type, got "
                << elementOf(*qIn) << ", " << elementOf(*kIn) << " and "
                << elementOf(*vIn) << "; cast V to Q's type before the node";
    return failure();
  }
  int64_t mode = node.intAttr("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) {
    node.fail() << "qk_matmul_output_mode " << mode
                << " is not defined; use 0 to 3";
    return failure();
  }
  Value nonpad = node.opset >= 24 ? node.input(6) : Value();
  if (nonpad && (node.input(4) || node.input(5))) {
    node.fail() << "nonpad_kv_seqlen cannot be used with past_key and "
                   "past_value; give either the whole cache with "
                   "nonpad_kv_seqlen or the past with the new keys";
    return failure();
  }
  Value q = *qIn, k = *kIn, v = *vIn;
  FailureOr<AttentionDims> dims = attentionDims(node, q, k, v);
  if (failed(dims) || failed(appendPast(node, *dims, k, v)))
    return failure();
  const AttentionDims &d = *dims;
  // float16 and bfloat16 attention is computed in float32 and rounded once
  // at the end, like the accumulators of fused attention kernels.
  Value presentK = k, presentV = v;
  Type io = elt;
  if (elt.getIntOrFloatBitWidth() < 32) {
    elt = node.builder.getF32Type();
    for (Value *x : {&q, &k, &v}) {
      FailureOr<Value> wide = build<CastOp>(node, *x, TypeAttr::get(elt));
      if (failed(wide))
        return failure();
      *x = *wide;
    }
  }
  double scale = node.hasAttr("scale") ? node.floatAttr("scale", 1.0f)
                                       : 1.0 / std::sqrt((double)d.headSize);
  FailureOr<Value> qs = build<MulOp>(node, q, scalarConstant(node, elt, scale));
  FailureOr<Value> kt = transposeBy(node, k, {0, 1, 3, 2});
  if (failed(qs) || failed(kt))
    return failure();
  FailureOr<Value> scores = groupedMatMul(node, d, *qs, *kt);
  if (failed(scores))
    return failure();
  Value qk[4];
  qk[0] = *scores;
  double softcap = node.floatAttr("softcap", 0.0f);
  if (softcap > 0.0) {
    Value c = scalarConstant(node, elt, softcap);
    FailureOr<Value> s = build<DivOp>(node, *scores, c);
    if (succeeded(s))
      s = build<TanhOp>(node, *s);
    if (succeeded(s))
      s = build<MulOp>(node, *s, c);
    if (failed(s))
      return failure();
    scores = *s;
  }
  qk[1] = *scores;
  FailureOr<Value> bias = attentionBias(node, d, elt);
  if (failed(bias))
    return failure();
  if (*bias && failed(scores = build<AddOp>(node, *scores, *bias)))
    return failure();
  qk[2] = *scores;
  FailureOr<Value> probs = attentionProbs(node, *scores, *bias);
  if (failed(probs))
    return failure();
  qk[3] = *probs;
  FailureOr<Value> y = groupedMatMul(node, d, *probs, v);
  if (succeeded(y) && d.threeD) {
    y = transposeBy(node, *y, {0, 2, 1, 3});
    if (succeeded(y))
      y = reshapeTo(node, *y, {d.batch, d.qSeq, d.qHeads * d.vHeadSize});
  }
  Value qkOut = node.resultUsed(3) ? qk[mode] : Value();
  if (succeeded(y) && io != elt)
    y = build<CastOp>(node, *y, TypeAttr::get(io));
  if (failed(y))
    return failure();
  if (qkOut && io != elt) {
    FailureOr<Value> narrow = build<CastOp>(node, qkOut, TypeAttr::get(io));
    if (failed(narrow))
      return failure();
    qkOut = *narrow;
  }
  return SmallVector<Value>{*y, node.resultUsed(1) ? presentK : Value(),
                            node.resultUsed(2) ? presentV : Value(), qkOut};
}

namespace {
/// The additive mask bias of com.microsoft Attention, [.., S, S_total]
/// broadcasting to [B, H, S, S_total], or null: mask_index as key lengths
/// ([B]: keys from the length on are padding; [2B]: end then start
/// positions), a raw 0/1 mask ([B, S_total]) or a 3-D one ([B, S, S_total]),
/// and `unidirectional`'s causal mask. A masked score gets
/// mask_filter_value added, as ONNX Runtime does (not -inf).
FailureOr<Value> msAttentionBias(OnnxNode &node, int64_t batch, int64_t seq,
                                 Type elt, unsigned maskInput,
                                 std::optional<unsigned> extraInput) {
  auto &b = node.builder;
  Value filter =
      scalarConstant(node, elt, node.floatAttr("mask_filter_value", -10000.0f));
  auto toBias = [&](FailureOr<Value> valid) -> FailureOr<Value> {
    if (failed(valid))
      return failure();
    return build<WhereOp>(node, *valid, scalarConstant(node, elt, 0.0), filter);
  };
  Value bias;
  if (Value mask = node.input(maskInput)) {
    FailureOr<Value> m = node.staticInput(maskInput);
    if (failed(m))
      return failure();
    RankedTensorType mt = typeOf(mask);
    ArrayRef<int64_t> ms = mt.getShape();
    if (!mt.getElementType().isInteger(32)) {
      node.fail() << "mask_index must be int32, got " << mt;
      return failure();
    }
    FailureOr<Value> valid;
    if (ms.size() == 1 && (ms[0] == batch || ms[0] == 2 * batch)) {
      FailureOr<Value> ends =
          ms[0] == batch ? m : sliceLast(node, *m, 0, batch);
      if (succeeded(ends))
        ends = reshapeTo(node, *ends, {batch, 1, 1, 1});
      Value keys =
          intGrid(node, {1, 1, 1, seq}, [](int64_t, int64_t j) { return j; });
      FailureOr<Value> keys32 =
          build<CastOp>(node, keys, TypeAttr::get(b.getI32Type()));
      if (failed(ends) || failed(keys32))
        return failure();
      valid = build<LessOp>(node, *keys32, *ends);
      if (succeeded(valid) && ms[0] == 2 * batch) {
        FailureOr<Value> starts = sliceLast(node, *m, batch, batch);
        if (succeeded(starts))
          starts = reshapeTo(node, *starts, {batch, 1, 1, 1});
        FailureOr<Value> after;
        if (succeeded(starts))
          after = build<LessEqualOp>(node, *starts, *keys32);
        if (failed(after))
          return failure();
        valid = build<AndOp>(node, *valid, *after);
      }
    } else if ((ms.size() == 2 && ms[0] == batch && ms[1] == seq) ||
               (ms.size() == 3 && ms[0] == batch && ms[1] == seq &&
                ms[2] == seq)) {
      SmallVector<int64_t> shape{batch, 1, ms.size() == 3 ? seq : 1, seq};
      FailureOr<Value> r = reshapeTo(node, *m, shape);
      if (failed(r))
        return failure();
      FailureOr<Value> masked =
          build<EqualOp>(node, *r, scalarConstant(node, b.getI32Type(), 0.0));
      if (failed(masked))
        return failure();
      valid = build<NotOp>(node, *masked);
    } else {
      node.fail() << "mask_index must be [" << batch << "] or [" << 2 * batch
                  << "] key lengths, a raw mask [" << batch << ", " << seq
                  << "] or [" << batch << ", " << seq << ", " << seq
                  << "], got " << mt
                  << " (4-D masks and past state are not supported)";
      return failure();
    }
    FailureOr<Value> mb = toBias(valid);
    if (failed(mb))
      return failure();
    bias = *mb;
  }
  if (node.intAttr("unidirectional", 0) != 0) {
    FailureOr<Value> causal = toBias(boolGrid(
        node, {seq, seq}, [](int64_t i, int64_t j) { return j <= i; }));
    FailureOr<Value> sum = addBias(node, bias, causal);
    if (failed(sum))
      return failure();
    bias = *sum;
  }
  if (Value extra = extraInput ? node.input(*extraInput) : Value()) {
    FailureOr<Value> e = node.staticInput(*extraInput);
    if (failed(e) || failed(e = addBias(node, bias, e)))
      return failure();
    bias = *e;
  }
  return bias;
}
} // namespace

namespace {
/// Where com.microsoft Attention and QAttention keep their optional inputs.
struct MsAttentionInputs {
  unsigned mask;
  std::optional<unsigned> extraBias, past, pastLength;
};

/// Refuses decoding state (past inputs, the present output) and rotary
/// embeddings, which Kiln does not compile in these ops.
LogicalResult refuseDecoding(OnnxNode &node, const MsAttentionInputs &in) {
  for (std::optional<unsigned> i : {in.past, in.pastLength})
    if (i && node.input(*i)) {
      node.fail() << "input " << *i
                  << (i == in.past ? " (past)" : " (past_sequence_length)")
                  << " is not supported: Kiln compiles the encoder form "
                     "(no past or present state)";
      return failure();
    }
  if (node.resultUsed(1) || node.intAttr("do_rotary", 0) != 0) {
    node.fail() << (node.resultUsed(1) ? "the present output" : "do_rotary=1")
                << " is not supported: Kiln compiles the encoder form "
                   "(no past or present state, no rotary embedding)";
    return failure();
  }
  return success();
}

/// The attention of com.microsoft Attention and QAttention on float `x`
/// [B, S, in] and `w` [in, q + k + v] (+ `bias`): Q, K and V from one
/// product, split by qkv_hidden_sizes (thirds by default) into num_heads
/// heads; scores scaled by `scale` (1/sqrt(head size)), masked, softmax,
/// times V, heads merged back to [B, S, v_hidden].
FailureOr<Value> msAttention(OnnxNode &node, Value x, Value w, Value bias,
                             const MsAttentionInputs &in) {
  RankedTensorType xt = typeOf(x), wt = typeOf(w);
  int64_t heads = node.intAttr("num_heads", 0);
  if (xt.getRank() != 3 || wt.getRank() != 2 ||
      wt.getDimSize(0) != xt.getDimSize(2) || heads <= 0) {
    node.fail() << "expects input [batch, seq, input_hidden], weights "
                   "[input_hidden, q + k + v hidden] and num_heads > 0, got "
                << xt << ", " << wt << " and num_heads " << heads;
    return failure();
  }
  int64_t total = wt.getDimSize(1);
  SmallVector<int64_t> sizes =
      node.intsAttr("qkv_hidden_sizes")
          .value_or(SmallVector<int64_t>{total / 3, total / 3, total / 3});
  if (sizes.size() != 3 || sizes[0] + sizes[1] + sizes[2] != total ||
      sizes[0] != sizes[1] || llvm::any_of(sizes, [&](int64_t s) {
        return s <= 0 || s % heads != 0;
      })) {
    node.fail() << "qkv_hidden_sizes must be three sizes (Q and K equal), "
                   "each a multiple of num_heads "
                << heads << ", summing to the weights' " << total << " columns";
    return failure();
  }
  FailureOr<Value> qkv = build<MatMulOp>(node, x, w);
  if (bias)
    qkv = addBias(node, bias, qkv);
  if (failed(qkv))
    return failure();
  FailureOr<Value> q = sliceLast(node, *qkv, 0, sizes[0]),
                   k = sliceLast(node, *qkv, sizes[0], sizes[1]),
                   v = sliceLast(node, *qkv, sizes[0] + sizes[1], sizes[2]);
  if (failed(q) || failed(k) || failed(v) ||
      failed(q = toHeads(node, *q, heads)) ||
      failed(k = toHeads(node, *k, heads)) ||
      failed(v = toHeads(node, *v, heads)))
    return failure();
  Type elt = xt.getElementType();
  int64_t batch = xt.getDimSize(0), seq = xt.getDimSize(1),
          headSize = sizes[0] / heads;
  double scale = node.hasAttr("scale") && node.floatAttr("scale", 0.0f) != 0.0f
                     ? node.floatAttr("scale", 1.0f)
                     : 1.0 / std::sqrt((double)headSize);
  FailureOr<Value> qs =
      build<MulOp>(node, *q, scalarConstant(node, elt, scale));
  FailureOr<Value> kt = transposeBy(node, *k, {0, 1, 3, 2});
  FailureOr<Value> scores;
  if (succeeded(qs) && succeeded(kt))
    scores = build<MatMulOp>(node, *qs, *kt);
  FailureOr<Value> mask;
  if (succeeded(scores))
    mask = msAttentionBias(node, batch, seq, elt, in.mask, in.extraBias);
  if (failed(mask) ||
      (*mask && failed(scores = build<AddOp>(node, *scores, *mask))))
    return failure();
  FailureOr<Value> y =
      build<SoftmaxOp>(node, *scores, node.builder.getI64IntegerAttr(3));
  if (succeeded(y))
    y = build<MatMulOp>(node, *y, *v);
  if (succeeded(y))
    y = transposeBy(node, *y, {0, 2, 1, 3});
  if (succeeded(y))
    y = reshapeTo(node, *y, {batch, seq, sizes[2]});
  return y;
}
} // namespace

/// Attention (com.microsoft, ONNX Runtime's fused self-attention of BERT-
/// style encoders): msAttention of the input and the packed weights, masked
/// by mask_index (input 3) / unidirectional / attention_bias (input 5). Past
/// and present state (decoding) and rotary embeddings are refused.
FailureOr<SmallVector<Value>> mlir::kiln::convertMsAttention(OnnxNode &node) {
  MsAttentionInputs in{3, 5, 4, 6};
  FailureOr<Value> x = node.staticInput(0), w = node.staticInput(1);
  if (failed(x) || failed(w) || failed(refuseDecoding(node, in)))
    return failure();
  FailureOr<Value> y = msAttention(node, *x, *w, node.input(2), in);
  if (failed(y))
    return failure();
  return SmallVector<Value>{*y, Value()};
}

/// QAttention (com.microsoft; ORT's quantize_dynamic writes it for an
/// Attention): the 8-bit input and weights dequantized, (q - zero point) *
/// scale, with input_scale / input_zero_point per tensor and weight_scale /
/// weight_zero_point per tensor or per column, into msAttention with the
/// float bias; mask_index is input 5, past input 8.
FailureOr<SmallVector<Value>> mlir::kiln::convertQAttention(OnnxNode &node) {
  MsAttentionInputs in{5, std::nullopt, 8, std::nullopt};
  FailureOr<Value> xq = node.staticInput(0), wq = node.staticInput(1),
                   bias = node.staticInput(2), xs = node.rankedInput(3),
                   ws = node.rankedInput(4);
  if (failed(xq) || failed(wq) || failed(bias) || failed(xs) || failed(ws) ||
      failed(refuseDecoding(node, in)))
    return failure();
  Type f32 = node.builder.getF32Type();
  auto dequantize = [&](Value q, Value scale,
                        unsigned zeroInput) -> FailureOr<Value> {
    Type qt = elementOf(q);
    if (!qt.isInteger(8) || !elementOf(scale).isF32()) {
      node.fail() << "expects 8-bit input and weights with float scales, got "
                  << typeOf(q) << " scaled by " << typeOf(scale);
      return failure();
    }
    int64_t columns = typeOf(q).getShape().back();
    if (typeOf(scale).getNumElements() != 1 &&
        (typeOf(scale).getRank() != 1 ||
         typeOf(scale).getDimSize(0) != columns || zeroInput == 6)) {
      node.fail() << "input_scale must hold one value and weight_scale one "
                     "or one per weight column ("
                  << columns << "), got " << typeOf(scale);
      return failure();
    }
    FailureOr<Value> v = build<CastOp>(node, q, TypeAttr::get(f32));
    if (Value zero = node.input(zeroInput)) {
      FailureOr<Value> z = node.rankedInput(zeroInput);
      if (succeeded(z) && elementOf(*z) != qt) {
        node.fail() << "zero points must have their tensor's type " << qt
                    << ", got " << typeOf(*z);
        return failure();
      }
      if (succeeded(z) && typeOf(*z).getNumElements() != 1 &&
          typeOf(*z).getShape() != typeOf(scale).getShape()) {
        node.fail() << "a zero point must match its scale's shape "
                    << typeOf(scale) << ", got " << typeOf(*z);
        return failure();
      }
      if (succeeded(z))
        z = build<CastOp>(node, *z, TypeAttr::get(f32));
      if (failed(z) || failed(v) || failed(v = build<SubOp>(node, *v, *z)))
        return failure();
    }
    if (failed(v))
      return failure();
    return build<MulOp>(node, *v, scale);
  };
  FailureOr<Value> x = dequantize(*xq, *xs, 6), w = dequantize(*wq, *ws, 7);
  if (failed(x) || failed(w))
    return failure();
  FailureOr<Value> y = msAttention(node, *x, *w, *bias, in);
  if (failed(y))
    return failure();
  return SmallVector<Value>{*y, Value()};
}
