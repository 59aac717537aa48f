//===- MsAttention.cpp - ONNX Runtime's Attention and QAttention -*- C++
//-*-===//
//
// com.microsoft Attention (the fused self-attention ONNX Runtime's optimizer
// writes for BERT-style encoders) and QAttention (its quantize_dynamic
// form): one product for Q, K and V, split into heads, scaled scores with
// ONNX Runtime's mask forms, softmax and the product with V, all on Kiln's
// kernels. The batch and sequence may be symbolic.
//
//===----------------------------------------------------------------------===//
#include "AttentionParts.h"
#include "Build.h"
#include "SymbolicSizes.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::attention;

namespace {
/// The additive mask bias of com.microsoft Attention, [.., S, S_total]
/// broadcasting to [B, H, S, S_total], or null: mask_index as key lengths
/// ([B]: keys from the length on are padding; [2B]: end then start
/// positions), a raw 0/1 mask ([B, S_total]) or a 3-D one ([B, S, S_total]),
/// and `unidirectional`'s causal mask. A masked score gets
/// mask_filter_value added, as ONNX Runtime does (not -inf).
FailureOr<Value> msAttentionBias(OnnxNode &node, const SymSize &batch,
                                 const SymSize &seq, Type elt,
                                 unsigned maskInput,
                                 std::optional<unsigned> extraInput) {
  auto &b = node.builder;
  Value filter =
      scalarConstant(node, elt, node.floatAttr("mask_filter_value", -10000.0f));
  auto toBias = [&](FailureOr<Value> valid) -> FailureOr<Value> {
    if (failed(valid))
      return failure();
    return build<WhereOp>(node, *valid, scalarConstant(node, elt, 0.0), filter);
  };
  std::optional<int64_t> staticSeq = seq.getConstant();
  SymSize unit = SymSize::constant(1);
  Value bias;
  if (Value mask = node.input(maskInput)) {
    FailureOr<Value> m = sizedInput(node, maskInput);
    if (failed(m))
      return failure();
    RankedTensorType mt = typeOf(mask);
    SmallVector<SymSize> ms = sizesOf(node, mask);
    if (!mt.getElementType().isInteger(32)) {
      node.fail() << "mask_index must be int32, got " << mt;
      return failure();
    }
    // [2B] (end and start positions) is told from [B] by its static length.
    std::optional<int64_t> n = batch.getConstant(),
                           m0 = ms.empty() ? std::nullopt : ms[0].getConstant();
    bool twice = ms.size() == 1 && n && m0 && *m0 == 2 * *n;
    bool lengths = ms.size() == 1 && !twice && !knownToDiffer(ms[0], batch);
    FailureOr<Value> valid;
    if (lengths || twice) {
      if (lengths && ms[0] != batch &&
          failed(guardSizesEqual(node, ms[0], batch,
                                 "mask_index's key lengths and the batch")))
        return failure();
      FailureOr<Value> ends = twice ? sliceLast(node, *m, 0, *n) : m;
      if (succeeded(ends))
        ends = reshapeToSizes(node, *ends,
                              {twice ? batch : ms[0], unit, unit, unit});
      FailureOr<Value> keys =
          staticSeq
              ? FailureOr<Value>(intGrid(node, {1, 1, 1, *staticSeq},
                                         [](int64_t, int64_t j) { return j; }))
              : iotaOfSize(node, seq, b.getI64Type(), "the key index");
      FailureOr<Value> keys32;
      if (succeeded(keys))
        keys32 = build<CastOp>(node, *keys, TypeAttr::get(b.getI32Type()));
      if (failed(ends) || failed(keys32))
        return failure();
      valid = build<LessOp>(node, *keys32, *ends);
      if (succeeded(valid) && twice) {
        FailureOr<Value> starts = sliceLast(node, *m, *n, *n);
        if (succeeded(starts))
          starts = reshapeTo(node, *starts, {*n, 1, 1, 1});
        FailureOr<Value> after;
        if (succeeded(starts))
          after = build<LessEqualOp>(node, *starts, *keys32);
        if (failed(after))
          return failure();
        valid = build<AndOp>(node, *valid, *after);
      }
    } else if ((ms.size() == 2 && !knownToDiffer(ms[0], batch) &&
                !knownToDiffer(ms[1], seq)) ||
               (ms.size() == 3 && !knownToDiffer(ms[0], batch) &&
                !knownToDiffer(ms[1], seq) && !knownToDiffer(ms[2], seq))) {
      // [B, 1, S or 1, S] of the mask's own sizes; the scores' broadcast
      // guards them against the batch and sequence.
      FailureOr<Value> r = reshapeToSizes(
          node, *m, {ms[0], unit, ms.size() == 3 ? ms[1] : unit, ms.back()});
      if (failed(r))
        return failure();
      FailureOr<Value> masked =
          build<EqualOp>(node, *r, scalarConstant(node, b.getI32Type(), 0.0));
      if (failed(masked))
        return failure();
      valid = build<NotOp>(node, *masked);
    } else {
      std::string bs = sizeStr(node, batch), ss = sizeStr(node, seq);
      std::string twiceB = n ? std::to_string(2 * *n) : "2 * " + bs;
      node.fail() << "mask_index must be [" << bs << "] or [" << twiceB
                  << "] key lengths, a raw mask [" << bs << ", " << ss
                  << "] or [" << bs << ", " << ss << ", " << ss << "], got "
                  << mt << " (4-D masks and past state are not supported)";
      return failure();
    }
    FailureOr<Value> mb = toBias(valid);
    if (failed(mb))
      return failure();
    bias = *mb;
  }
  if (node.intAttr("unidirectional", 0) != 0) {
    FailureOr<Value> allowed;
    if (staticSeq) {
      allowed = boolGrid(node, {*staticSeq, *staticSeq},
                         [](int64_t i, int64_t j) { return j <= i; });
    } else {
      allowed = colMinusRowOfSizes(node, seq, seq, "the causal mask");
      if (succeeded(allowed))
        allowed = build<LessEqualOp>(node, *allowed,
                                     scalarConstant(node, b.getI64Type(), 0.0));
    }
    FailureOr<Value> sum = addBias(node, bias, toBias(allowed));
    if (failed(sum))
      return failure();
    bias = *sum;
  }
  if (Value extra = extraInput ? node.input(*extraInput) : Value()) {
    FailureOr<Value> e = sizedInput(node, *extraInput);
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
  SymSize batch = sizeOf(node, x, 0), seq = sizeOf(node, x, 1);
  int64_t headSize = sizes[0] / heads;
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
    y = reshapeToSizes(node, *y, {batch, seq, SymSize::constant(sizes[2])});
  return y;
}
} // namespace

/// Attention (com.microsoft, ONNX Runtime's fused self-attention of BERT-
/// style encoders): msAttention of the input and the packed weights, masked
/// by mask_index (input 3) / unidirectional / attention_bias (input 5). Past
/// and present state (decoding) and rotary embeddings are refused.
FailureOr<SmallVector<Value>> mlir::kiln::convertMsAttention(OnnxNode &node) {
  MsAttentionInputs in{3, 5, 4, 6};
  FailureOr<Value> x = sizedInput(node, 0), w = node.staticInput(1);
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
  FailureOr<Value> xq = sizedInput(node, 0), wq = node.staticInput(1),
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
