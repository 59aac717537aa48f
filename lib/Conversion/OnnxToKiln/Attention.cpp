//===- Attention.cpp - ONNX Attention and RotaryEmbedding -------*- C++ -*-===//
//
// The transformer ops of opsets 23 and 24, built from kiln ops that Kiln's
// kernels already run: RotaryEmbedding as slices, products and a concat that
// the elementwise fusion merges; Attention as batched kiln.matmul (Q * K^T),
// a bias add, kiln.softmax and a second batched kiln.matmul with V, never as
// the op's expanded function body.
//
//===----------------------------------------------------------------------===//
#include "AttentionParts.h"
#include "Build.h"
#include "SymbolicSizes.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::attention;

namespace {
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

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

/// 0 where `allowed`, -inf elsewhere, in `elt`.
FailureOr<Value> biasFrom(OnnxNode &node, Value allowed, Type elt) {
  return build<WhereOp>(node, allowed, scalarConstant(node, elt, 0.0),
                        scalarConstant(node, elt, kNegInf));
}
} // namespace

FailureOr<Value> attention::sliceLast(OnnxNode &node, Value v, int64_t first,
                                      int64_t count, int64_t stride) {
  auto &b = node.builder;
  ArrayRef<int64_t> shape = typeOf(v).getShape();
  int64_t rank = shape.size();
  SmallVector<int64_t> offsets(rank, 0), sizes(shape), strides(rank, 1);
  offsets.back() = first;
  sizes.back() = count;
  strides.back() = stride;
  if (!typeOf(v).hasStaticShape())
    return sizedPart(node, v, SliceBounds{offsets, sizes, strides});
  return build<SliceOp>(node, v, b.getDenseI64ArrayAttr(offsets),
                        b.getDenseI64ArrayAttr(sizes),
                        b.getDenseI64ArrayAttr(strides));
}

Value attention::boolGrid(OnnxNode &node, ArrayRef<int64_t> shape,
                          llvm::function_ref<bool(int64_t, int64_t)> pred) {
  return grid<bool>(node, shape, node.builder.getI1Type(), pred);
}

Value attention::intGrid(OnnxNode &node, ArrayRef<int64_t> shape,
                         llvm::function_ref<int64_t(int64_t, int64_t)> f) {
  return grid<int64_t>(node, shape, node.builder.getI64Type(), f);
}

FailureOr<Value> attention::addBias(OnnxNode &node, Value a,
                                    FailureOr<Value> b) {
  if (failed(b))
    return failure();
  if (!a)
    return *b;
  return build<AddOp>(node, a, *b);
}

FailureOr<Value> attention::toHeads(OnnxNode &node, Value v, int64_t heads) {
  RankedTensorType t = typeOf(v);
  if (t.getRank() == 4)
    return v;
  int64_t hidden = t.getDimSize(2);
  FailureOr<Value> r = reshapeToSizes(node, v,
                                      {sizeOf(node, v, 0), sizeOf(node, v, 1),
                                       SymSize::constant(heads),
                                       SymSize::constant(hidden / heads)});
  if (failed(r))
    return failure();
  return transposeBy(node, *r, {0, 2, 1, 3});
}

/// RotaryEmbedding 23. X is [B, H, S, D], or [B, S, H * D] with num_heads
/// (viewed as [B, S, H, D]); cos and sin ([B, S, R/2], or gathered at
/// position_ids from [P, R/2]) are reshaped to broadcast over the heads. The
/// first R = rotary_embedding_dim (default D) channels rotate, as halves or
/// as even/odd interleaved pairs; the rest pass through.
FailureOr<SmallVector<Value>>
mlir::kiln::convertRotaryEmbedding(OnnxNode &node) {
  FailureOr<Value> x = sizedInput(node, 0), cosCache = sizedInput(node, 1),
                   sinCache = sizedInput(node, 2);
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
  if (xt.isDynamicDim(rank - 1) || (rank == 4 && xt.isDynamicDim(1))) {
    node.fail() << "the heads and head size of X must be static, got " << xt
                << "; only the batch and sequence length may be symbolic";
    return failure();
  }
  SmallVector<SymSize> xDims = sizesOf(node, *x);
  SymSize batch = xDims[0], seq;
  int64_t numHeads, headSize;
  SmallVector<SymSize> heads4d;
  if (rank == 4) {
    numHeads = xt.getDimSize(1);
    seq = xDims[2];
    headSize = xt.getDimSize(3);
    heads4d = xDims;
  } else {
    seq = xDims[1];
    numHeads = node.intAttr("num_heads", 0);
    if (numHeads <= 0 || xt.getDimSize(2) % numHeads != 0) {
      node.fail() << "a 3-D X needs a num_heads attribute that divides its "
                     "hidden size "
                  << xt.getDimSize(2);
      return failure();
    }
    headSize = xt.getDimSize(2) / numHeads;
    heads4d = {batch, seq, SymSize::constant(numHeads),
               SymSize::constant(headSize)};
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
  SymSize unit = SymSize::constant(1), halfSize = SymSize::constant(half);
  Value positions = node.input(3);
  if (positions && failed(sizedInput(node, 3)))
    return failure();
  SmallVector<Value> caches;
  for (Value cache : {*cosCache, *sinCache}) {
    SmallVector<SymSize> cs = sizesOf(node, cache);
    FailureOr<Value> c = cache;
    if (positions) {
      if (cs.size() != 2 || !cs[1].isConstant(half)) {
        node.fail() << "with position_ids, cos_cache and sin_cache must be "
                       "[max_position, "
                    << half << "], got " << typeOf(cache);
        return failure();
      }
      // Constant positions are checked here; kiln.gather clamps run-time
      // ones into the cache, whatever its length.
      std::optional<int64_t> rows = cs[0].getConstant();
      if (rows &&
          failed(checkConstantIndices(node, 3, [&](size_t) { return *rows; })))
        return failure();
      c = build<GatherOp>(node, cache, positions,
                          node.builder.getI64IntegerAttr(0));
    } else if (cs.size() != 3 || knownToDiffer(cs[0], batch) ||
               knownToDiffer(cs[1], seq) || !cs[2].isConstant(half)) {
      node.fail() << "without position_ids, cos_cache and sin_cache must be "
                  << sizesStr(node, {batch, seq, halfSize}) << ", got "
                  << typeOf(cache);
      return failure();
    }
    if (failed(c))
      return failure();
    if (typeOf(*c).getRank() != 3) {
      node.fail() << "position_ids must be [batch, seq], got "
                  << typeOf(positions);
      return failure();
    }
    // cos/sin broadcast over the heads: [B, 1, S, R/2] against
    // [B, H, S, D], [B, S, 1, R/2] against the [B, S, H, D] view of a 3-D X
    // (their batch and sequence guarded equal to X's where they are not
    // known to be).
    SmallVector<SymSize> bs = sizesOf(node, *c);
    c = reshapeToSizes(node, *c,
                       rank == 4
                           ? SmallVector<SymSize>{bs[0], unit, bs[1], bs[2]}
                           : SmallVector<SymSize>{bs[0], bs[1], unit, bs[2]});
    if (failed(c))
      return failure();
    caches.push_back(*c);
  }
  FailureOr<Value> xv = reshapeToSizes(node, *x, heads4d);
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
    SmallVector<SymSize> pairShape = sizesOf(node, *real);
    pairShape.push_back(unit);
    FailureOr<Value> r = reshapeToSizes(node, *real, pairShape),
                     i = reshapeToSizes(node, *imag, pairShape);
    if (failed(r) || failed(i))
      return failure();
    rotated = build<ConcatOp>(node, ValueRange{*r, *i}, b.getI64IntegerAttr(4));
    SmallVector<SymSize> flat(heads4d);
    flat.back() = SymSize::constant(rotary);
    if (succeeded(rotated))
      rotated = reshapeToSizes(node, *rotated, flat);
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
  return one(reshapeToSizes(node, *rotated, xDims));
}

namespace {
/// The sizes of one Attention node: batch and sequences may be symbolic,
/// heads and head sizes are static.
struct AttentionDims {
  SymSize batch, qSeq, kvSeq, past = SymSize::constant(0);
  int64_t qHeads, kvHeads, headSize, vHeadSize;
  bool threeD;
  std::optional<SymSize> total() const { return SymSize::add(past, kvSeq); }
  int64_t group() const { return qHeads / kvHeads; }
};

/// Reads and checks the shapes of Q, K, V and the past caches; the three
/// inputs come back as [B, H, S, D]. Sizes that may differ at run time are
/// guarded where the products and concatenations combine them.
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
  // Heads and head sizes shape the kernels: only the batch and the
  // sequences may be symbolic.
  for (RankedTensorType t : {qt, kt, vt})
    for (int64_t d = rank == 3 ? 2 : 1; d < rank; ++d)
      if (d != rank - 2 && t.isDynamicDim(d)) {
        node.fail() << "the heads and head sizes of Q, K and V must be "
                       "static, got "
                    << qt << ", " << kt << " and " << vt
                    << "; only the batch and sequence lengths may be symbolic";
        return failure();
      }
  AttentionDims d;
  d.threeD = rank == 3;
  d.batch = sizeOf(node, q, 0);
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
  d.qSeq = sizeOf(node, q, 2);
  d.headSize = qs[3];
  d.kvSeq = sizeOf(node, k, 2);
  d.vHeadSize = vs[3];
  if (knownToDiffer(sizeOf(node, k, 0), d.batch) ||
      knownToDiffer(sizeOf(node, v, 0), d.batch) || vs[1] != ks[1] ||
      knownToDiffer(sizeOf(node, v, 2), d.kvSeq) || ks[3] != d.headSize) {
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
  if (!d.total()) {
    node.fail() << "the number of keys overflows; give the symbolic "
                   "dimensions smaller ranges";
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
  if (failed(sizedInput(node, 4)) || failed(sizedInput(node, 5)))
    return failure();
  RankedTensorType pkt = typeOf(pastK), pvt = typeOf(pastV);
  auto wrong = [&]() {
    if (pkt.getRank() != 4 || pvt.getRank() != 4)
      return true;
    SmallVector<SymSize> pk = sizesOf(node, pastK), pv = sizesOf(node, pastV);
    return knownToDiffer(pk[0], d.batch) || !pk[1].isConstant(d.kvHeads) ||
           !pk[3].isConstant(d.headSize) || knownToDiffer(pv[0], d.batch) ||
           !pv[1].isConstant(d.kvHeads) || knownToDiffer(pv[2], pk[2]) ||
           !pv[3].isConstant(d.vHeadSize);
  };
  if (wrong()) {
    std::string b = sizeStr(node, d.batch);
    node.fail() << "past_key must be [" << b << ", " << d.kvHeads
                << ", past_seq, " << d.headSize << "] and past_value [" << b
                << ", " << d.kvHeads << ", past_seq, " << d.vHeadSize
                << "], got " << pkt << " and " << pvt;
    return failure();
  }
  auto axis = node.builder.getI64IntegerAttr(2);
  FailureOr<Value> kAll = build<ConcatOp>(node, ValueRange{pastK, k}, axis),
                   vAll = build<ConcatOp>(node, ValueRange{pastV, v}, axis);
  if (failed(kAll) || failed(vAll))
    return failure();
  k = *kAll;
  v = *vAll;
  d.past = sizeOf(node, pastK, 2);
  return success();
}

/// The attention mask (input 3) as an additive bias in `elt` whose last
/// dimension covers all `total` keys: a boolean mask becomes 0 / -inf, and
/// a static mask shorter than the keys is padded with -inf.
FailureOr<Value> maskBias(OnnxNode &node, const SymSize &total, Type elt) {
  auto &b = node.builder;
  FailureOr<Value> mask = sizedInput(node, 3);
  if (failed(mask))
    return failure();
  RankedTensorType mt = typeOf(*mask);
  int64_t rank = mt.getRank();
  SymSize keys = rank ? sizeOf(node, *mask, rank - 1) : SymSize();
  std::optional<int64_t> maskKeys = keys.getConstant(),
                         allKeys = total.getConstant();
  if (rank < 1 || rank > 4 || (maskKeys && allKeys && *maskKeys > *allKeys)) {
    node.fail() << "attn_mask must have rank 1 to 4 and at most "
                << sizeStr(node, total) << " keys in its last dimension, got "
                << mt;
    return failure();
  }
  // A mask of run-time length must cover every key: it is not padded.
  if (keys != total && !(maskKeys && allKeys) &&
      failed(guardSizesEqual(node, keys, total,
                             "attn_mask's last dimension and the number of "
                             "keys (past and new)")))
    return failure();
  FailureOr<Value> m = *mask;
  if (mt.getElementType().isInteger(1))
    m = biasFrom(node, *mask, elt);
  else if (mt.getElementType() != elt)
    m = build<CastOp>(node, *mask, TypeAttr::get(elt));
  // A mask shorter than the keys is padded with -inf.
  if (succeeded(m) && maskKeys && allKeys && *maskKeys < *allKeys) {
    SmallVector<int64_t> pads(2 * rank, 0);
    pads.back() = *allKeys - *maskKeys;
    m = build<PadOp>(
        node, *m, b.getDenseI64ArrayAttr(pads),
        b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  }
  return m;
}

/// The additive bias of the scores ([.., S_q, total], broadcasting to
/// [B, H_q, S_q, total]) from attn_mask, is_causal and nonpad_kv_seqlen, in
/// `elt`; null when none applies. Static sizes give constant tables; symbolic
/// ones compute them from iotas of run-time length.
FailureOr<Value> attentionBias(OnnxNode &node, const AttentionDims &d,
                               Type elt) {
  SymSize total = *d.total();
  std::optional<int64_t> qSeq = d.qSeq.getConstant(),
                         keys = total.getConstant(),
                         past = d.past.getConstant();
  bool isStatic = qSeq && keys && past;
  Type i64 = node.builder.getI64Type();
  Value bias;
  if (node.input(3)) {
    FailureOr<Value> m = maskBias(node, total, elt);
    if (failed(m))
      return failure();
    bias = *m;
  }
  Value nonpad = node.opset >= 24 ? node.input(6) : Value();
  if (nonpad) {
    if (failed(sizedInput(node, 6)))
      return failure();
    if (typeOf(nonpad).getRank() != 1 ||
        knownToDiffer(sizeOf(node, nonpad, 0), d.batch)) {
      node.fail() << "nonpad_kv_seqlen must be " << sizesStr(node, {d.batch})
                  << ", got " << typeOf(nonpad);
      return failure();
    }
  }
  SymSize unit = SymSize::constant(1);
  FailureOr<Value> lens =
      nonpad ? reshapeToSizes(node, nonpad,
                              {sizeOf(node, nonpad, 0), unit, unit, unit})
             : FailureOr<Value>();
  if (nonpad && failed(lens))
    return failure();
  // col - row over [S_q, total], for the symbolic tables.
  auto keyMinusQuery = [&]() {
    return colMinusRowOfSizes(node, d.qSeq, total, "Attention's causal mask");
  };
  if (node.intAttr("is_causal", 0) != 0) {
    FailureOr<Value> causal;
    if (nonpad) {
      // Query i of batch b attends key j iff j <= i + nonpad[b] - S_q, that
      // is iff S_q - i + j <= nonpad[b].
      FailureOr<Value> frontier;
      if (isStatic) {
        frontier = intGrid(node, {1, 1, *qSeq, *keys},
                           [&](int64_t i, int64_t j) { return *qSeq - i + j; });
      } else {
        frontier = keyMinusQuery();
        FailureOr<Value> s = sizeAsTensor(node, d.qSeq, i64);
        if (succeeded(frontier) && succeeded(s))
          frontier = build<AddOp>(node, *frontier, *s);
      }
      if (succeeded(frontier))
        causal = build<LessEqualOp>(node, *frontier, *lens);
    } else if (isStatic) {
      causal = boolGrid(node, {*qSeq, *keys},
                        [&](int64_t i, int64_t j) { return j <= i + *past; });
    } else {
      // j <= i + past.
      FailureOr<Value> diff = keyMinusQuery();
      FailureOr<Value> p = sizeAsTensor(node, d.past, i64);
      if (succeeded(diff) && succeeded(p))
        causal = build<LessEqualOp>(node, *diff, *p);
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
    FailureOr<Value> keyIndex =
        isStatic
            ? FailureOr<Value>(intGrid(node, {1, 1, 1, *keys},
                                       [](int64_t, int64_t j) { return j; }))
            : iotaOfSize(node, total, i64, "Attention's key index");
    FailureOr<Value> valid;
    if (succeeded(keyIndex))
      valid = build<LessOp>(node, *keyIndex, *lens);
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
  if (d.group() == 1)
    return build<MatMulOp>(node, lhs, rhs);
  std::optional<SymSize> rows =
      SymSize::mul(SymSize::constant(d.group()), d.qSeq);
  if (!rows) {
    node.fail() << "the query rows overflow; give the symbolic dimensions "
                   "smaller ranges";
    return failure();
  }
  FailureOr<Value> l = reshapeToSizes(
      node, lhs,
      {d.batch, SymSize::constant(d.kvHeads), *rows, sizeOf(node, lhs, 3)});
  FailureOr<Value> y;
  if (succeeded(l))
    y = build<MatMulOp>(node, *l, rhs);
  if (failed(y))
    return failure();
  return reshapeToSizes(
      node, *y,
      {d.batch, SymSize::constant(d.qHeads), d.qSeq, sizeOf(node, *y, 3)});
}

} // namespace

/// Attention 23 and 24: scores = (Q * scale) K^T (batched kiln.matmul, the
/// query heads grouped over their key/value head), softcap, + bias (attn_mask,
/// is_causal, nonpad_kv_seqlen), kiln.softmax, with fully masked rows zeroed,
/// then the batched product with V. past_key/past_value are concatenated
/// before K and V and returned as present_key/present_value.
FailureOr<SmallVector<Value>> mlir::kiln::convertAttention(OnnxNode &node) {
  FailureOr<Value> qIn = sizedInput(node, 0), kIn = sizedInput(node, 1),
                   vIn = sizedInput(node, 2);
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
      y = reshapeToSizes(
          node, *y,
          {d.batch, d.qSeq, SymSize::constant(d.qHeads * d.vHeadSize)});
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
