//===- LinearAttention.cpp - ONNX LinearAttention ---------------*- C++ -*-===//
//
// LinearAttention (27): the recurrent attention of linear-attention and
// DeltaNet-style layers. The state S [B, H_kv, d_k, d_v] is updated once
// per token by the chosen rule and read by that token's query; Kiln unrolls
// the recurrence over the (static) sequence length with kiln ops: outer
// products as broadcast multiplies, S^T k as a reduction over d_k, q^T S as
// a batched matmul whose query heads are grouped per KV head (GQA). The
// arithmetic is float32 (float16 and bfloat16 tensors are widened and the
// results narrowed back).
//
//===----------------------------------------------------------------------===//
#include "ShapeInputs.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Unrolled tokens at most: each is about fifteen ops.
constexpr int64_t kMaxTokens = 1024;

/// Failures threaded through a flag, as the formulas read.
struct Math {
  OnnxNode &node;
  bool bad = false;
  Value check(FailureOr<Value> v) {
    if (failed(v)) {
      bad = true;
      return {};
    }
    return *v;
  }
  template <typename OpTy, typename... Args> Value op(Args &&...args) {
    if (bad)
      return {};
    return check(build<OpTy>(node, std::forward<Args>(args)...));
  }
  Value reshape(Value v, ArrayRef<int64_t> shape) {
    return bad ? Value() : check(reshapeTo(node, v, shape));
  }
  /// Token t of a packed [B, T, X] tensor, as `shape`.
  Value token(Value v, int64_t t, ArrayRef<int64_t> shape) {
    if (bad)
      return {};
    RankedTensorType type = typeOf(v);
    auto &b = node.builder;
    Value s = op<SliceOp>(
        v, b.getDenseI64ArrayAttr({0, t, 0}),
        b.getDenseI64ArrayAttr({type.getDimSize(0), 1, type.getDimSize(2)}),
        b.getDenseI64ArrayAttr({1, 1, 1}));
    return reshape(s, shape);
  }
};
} // namespace

FailureOr<SmallVector<Value>>
mlir::kiln::convertLinearAttention(OnnxNode &node) {
  FailureOr<Value> qv = node.staticInput(0), kv = node.staticInput(1),
                   vv = node.staticInput(2);
  if (failed(qv) || failed(kv) || failed(vv))
    return failure();
  RankedTensorType qt = typeOf(*qv), kt = typeOf(*kv), vt = typeOf(*vv);
  Type elt = qt.getElementType();
  int64_t hq = node.intAttr("q_num_heads", 0),
          hkv = node.intAttr("kv_num_heads", 0);
  if (qt.getRank() != 3 || kt.getRank() != 3 || vt.getRank() != 3 ||
      !isa<FloatType>(elt) || kt.getElementType() != elt ||
      vt.getElementType() != elt) {
    node.fail() << "expects float query, key and value [B, T, heads * d] of "
                   "one type, got "
                << qt << ", " << kt << " and " << vt;
    return failure();
  }
  if (hq < 1 || hkv < 1 || hq % hkv != 0) {
    node.fail() << "q_num_heads (" << hq << ") must be a positive multiple of "
                << "kv_num_heads (" << hkv << ")";
    return failure();
  }
  int64_t batch = qt.getDimSize(0), tokens = qt.getDimSize(1);
  if (qt.getDimSize(2) % hq != 0 || vt.getDimSize(2) % hkv != 0) {
    node.fail() << "the query's last dimension must split into " << hq
                << " heads and the value's into " << hkv;
    return failure();
  }
  int64_t dk = qt.getDimSize(2) / hq, dv = vt.getDimSize(2) / hkv,
          group = hq / hkv;
  if (kt.getShape() != ArrayRef<int64_t>{batch, tokens, hkv * dk} ||
      vt.getDimSize(0) != batch || vt.getDimSize(1) != tokens) {
    node.fail() << "key must be [" << batch << ", " << tokens << ", "
                << hkv * dk << "] and value [" << batch << ", " << tokens
                << ", " << hkv << " * d_v], got " << kt << " and " << vt;
    return failure();
  }
  if (tokens > kMaxTokens) {
    node.fail() << "runs its recurrence over " << tokens
                << " tokens; Kiln unrolls it and allows " << kMaxTokens
                << ": run the prefill in chunks";
    return failure();
  }
  std::string rule = node.strAttr("update_rule", "gated_delta");
  bool gated = rule == "gated" || rule == "gated_delta",
       delta = rule == "delta" || rule == "gated_delta";
  if (!gated && !delta && rule != "linear") {
    node.fail() << "update_rule '" << rule
                << "' is not supported; expected linear, gated, delta or "
                   "gated_delta";
    return failure();
  }
  Value decay = node.input(4), beta = node.input(5);
  if ((gated && !decay) || (delta && !beta)) {
    node.fail() << "update_rule '" << rule << "' needs the "
                << (gated && !decay ? "decay" : "beta") << " input";
    return failure();
  }
  // Per-key decay [B, T, H_kv * d_k] scales the rows of S, per-head decay
  // [B, T, H_kv] all of it; beta is [B, T, H_kv] or [B, T, 1].
  SmallVector<int64_t> decayShape, betaShape;
  auto check3 = [&](Value v, ArrayRef<int64_t> lasts, const char *what,
                    SmallVector<int64_t> &shape) -> LogicalResult {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (t && t.hasStaticShape() && t.getRank() == 3 &&
        t.getDimSize(0) == batch && t.getDimSize(1) == tokens &&
        t.getElementType() == elt)
      for (int64_t last : lasts)
        if (t.getDimSize(2) == last) {
          shape = last == hkv * dk ? SmallVector<int64_t>{batch, hkv, dk, 1}
                  : last == 1      ? SmallVector<int64_t>{batch, 1, 1, 1}
                                   : SmallVector<int64_t>{batch, hkv, 1, 1};
          return success();
        }
    node.fail() << what << " must be [" << batch << ", " << tokens << ", "
                << (lasts.size() == 2 && lasts[0] == hkv * dk
                        ? std::to_string(hkv * dk) + " or " +
                              std::to_string(hkv)
                        : std::to_string(hkv) + " or 1")
                << "] of the query's type, got " << v.getType();
    return failure();
  };
  if (gated && failed(check3(decay, {hkv * dk, hkv}, "decay", decayShape)))
    return failure();
  if (delta && failed(check3(beta, {hkv, 1}, "beta", betaShape)))
    return failure();

  Math m{node};
  auto &b = node.builder;
  Type f32 = b.getF32Type();
  auto wide = [&](Value v) { return m.check(castTo(node, v, f32)); };
  SmallVector<int64_t> stateShape{batch, hkv, dk, dv};
  auto stateType = RankedTensorType::get(stateShape, f32);
  Type stateElt = elt;
  Value state;
  if (Value past = node.input(3)) {
    auto pt = dyn_cast<RankedTensorType>(past.getType());
    if (!pt || pt.getShape() != ArrayRef<int64_t>(stateShape) ||
        !isa<FloatType>(pt.getElementType())) {
      node.fail() << "past_state must be float [" << batch << ", " << hkv
                  << ", " << dk << ", " << dv << "], got " << past.getType();
      return failure();
    }
    stateElt = pt.getElementType();
    state = wide(past);
  } else {
    if (auto rt = dyn_cast<ShapedType>(node.op->getResult(1).getType());
        rt && isa<FloatType>(rt.getElementType()))
      stateElt = rt.getElementType();
    state = ConstantOp::create(
        b, node.loc(), stateType,
        DenseElementsAttr::get(stateType, b.getZeroAttr(f32)));
  }
  double scale = node.floatAttr("scale", 0.0f);
  if (scale == 0.0)
    scale = 1.0 / std::sqrt((double)dk);
  Value q = wide(*qv), k = wide(*kv), v = wide(*vv);
  Value g = gated ? m.op<ExpOp>(wide(decay)) : Value();
  Value be = delta ? wide(beta) : Value();
  Value scaleC = scalarConstant(node, f32, scale);
  SmallVector<Value> outs;
  for (int64_t t = 0; t < tokens && !m.bad; ++t) {
    Value kt4 = m.token(k, t, {batch, hkv, dk, 1});
    Value vt4 = m.token(v, t, {batch, hkv, 1, dv});
    if (gated)
      state = m.op<MulOp>(state, m.token(g, t, decayShape));
    Value update = vt4;
    if (delta) {
      // v - S^T k, then scaled by beta.
      Value stk = m.op<ReduceSumOp>(m.op<MulOp>(state, kt4),
                                    b.getDenseI64ArrayAttr({2}),
                                    b.getBoolAttr(true)); // [B, H, 1, dv]
      update = m.op<MulOp>(m.op<SubOp>(vt4, stk), m.token(be, t, betaShape));
    }
    state = m.op<AddOp>(state, m.op<MulOp>(kt4, update));
    // q^T S per query head, grouped under its KV head.
    Value qt4 = m.token(q, t, {batch, hkv, group, dk});
    Value o = m.op<MulOp>(m.op<MatMulOp>(qt4, state), scaleC);
    outs.push_back(m.reshape(o, {batch, 1, hq * dv}));
  }
  if (m.bad)
    return failure();
  Value out = outs.size() == 1
                  ? outs[0]
                  : m.op<ConcatOp>(ValueRange(outs), b.getI64IntegerAttr(1));
  out = m.check(castTo(node, out, elt));
  Value present = m.check(castTo(node, state, stateElt));
  if (m.bad)
    return failure();
  return SmallVector<Value>{out, present};
}
