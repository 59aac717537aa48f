//===- Recurrent.cpp - ONNX RNN, GRU and LSTM -------------------*- C++ -*-===//
//
// Sequence lengths are static, so the recurrences are unrolled over time into
// kiln gemm/add/activation ops. The input projection of every time step is
// one gemm over the whole sequence ([seq * batch, input] x W^T, with the
// biases that do not sit inside a gate product); each step then adds
// H_{t-1} R^T and applies the gates. Weights stay in ONNX's [gates*hidden, k]
// layout: gemm's trans_b transposes constant weights at compile time.
//
//===----------------------------------------------------------------------===//
#include "ControlFlow.h"
#include "ShapeInputs.h"

#include "kiln/Dialect/Kiln/IR/ElementsUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
enum class Cell { RNN, GRU, LSTM };

/// One activation of the `activations` attribute with its alpha and beta.
struct Activation {
  std::string name;
  float alpha = 0, beta = 0;
};

/// Builds kiln ops on values of one element type, threading failures through
/// a flag so that the cell equations read as equations.
class Builder {
public:
  Builder(OnnxNode &node, Type elt) : node(node), elt(elt) {}
  OnnxNode &node;
  Type elt;
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
  Value scalar(double v) {
    return scalarConstant(node, elt, v);
  }
  Value add(Value a, Value b) { return op<AddOp>(a, b); }
  Value sub(Value a, Value b) { return op<SubOp>(a, b); }
  Value mul(Value a, Value b) { return op<MulOp>(a, b); }
  /// The sizes of `v`'s dimensions: constants, or (symbolic batch) the
  /// polynomials of SymbolicSizes.
  SmallVector<SymSize> dims(Value v) {
    RankedTensorType t = typeOf(v);
    if (!t.hasStaticShape())
      return node.sizes->dims(v);
    SmallVector<SymSize> out;
    for (int64_t d : t.getShape())
      out.push_back(SymSize::constant(d));
    return out;
  }
  Value reshape(Value v, ArrayRef<SymSize> shape) {
    return bad ? Value() : check(reshapeToSizes(node, v, shape));
  }
  /// Elements [offset, offset + size) of dimension `axis`; the other
  /// dimensions keep their (possibly run-time) sizes.
  Value part(Value v, int64_t axis, int64_t offset, int64_t size) {
    if (bad)
      return {};
    RankedTensorType t = typeOf(v);
    SliceBounds box;
    box.offsets.assign(t.getRank(), 0);
    box.sizes.assign(t.getShape().begin(), t.getShape().end());
    box.strides.assign(t.getRank(), 1);
    box.offsets[axis] = offset;
    box.sizes[axis] = size;
    if (!t.hasStaticShape())
      return sizedPart(node, v, box);
    // Rows of a constant (a direction's W, R and B, R's gates) are cut at
    // compile time whatever their size (the folders stop at 2^16 elements):
    // the products then see constant weights, which they transpose and
    // pack once instead of on every call and every step.
    if (auto cst = v.getDefiningOp<ConstantOp>(); cst && axis == 0)
      if (auto elements = dyn_cast<ElementsAttr>(cst.getValue()))
        if (std::optional<ElementsAttr> rows =
                sliceOutermost(elements, offset, size, /*keepDense=*/true))
          return ConstantOp::create(node.builder, node.loc(), rows->getType(),
                                    *rows)
              .getResult();
    auto &b = node.builder;
    return op<SliceOp>(v, b.getDenseI64ArrayAttr(box.offsets),
                       b.getDenseI64ArrayAttr(box.sizes),
                       b.getDenseI64ArrayAttr(box.strides));
  }
  /// Columns [offset, offset + size) of a 2-D value, or elements of a 1-D one.
  Value cols(Value v, int64_t offset, int64_t size) {
    return bad ? Value() : part(v, typeOf(v).getRank() - 1, offset, size);
  }
  /// Rows [offset, offset + size) of dimension 0.
  Value rows(Value v, int64_t offset, int64_t size) {
    return part(v, 0, offset, size);
  }
  /// Index `i` of dimension 0, dropped: [n, ...] -> [...].
  Value row(Value v, int64_t i) {
    Value r = part(v, 0, i, 1);
    if (bad)
      return {};
    if (auto cst = r.getDefiningOp<ConstantOp>())
      if (std::optional<ElementsAttr> dropped = reshapeElements(
              cst.getValue(), typeOf(r).getShape().drop_front()))
        return ConstantOp::create(node.builder, node.loc(), dropped->getType(),
                                  *dropped)
            .getResult();
    return reshape(r, ArrayRef(dims(r)).drop_front());
  }
  /// a x b^T (+ c), or a x b (+ c) when not `transB`.
  Value gemmT(Value a, Value b, Value c, bool transB = true) {
    auto &bl = node.builder;
    return op<GemmOp>(a, b, c, bl.getF32FloatAttr(1.0f),
                      bl.getF32FloatAttr(1.0f), bl.getBoolAttr(false),
                      bl.getBoolAttr(transB));
  }
  Value transpose(Value v, ArrayRef<int64_t> perm) {
    return op<TransposeOp>(v, node.builder.getDenseI64ArrayAttr(perm));
  }
  Value concat(ArrayRef<Value> vs, int64_t axis) {
    if (vs.size() == 1)
      return vs[0];
    return op<ConcatOp>(ValueRange(vs), node.builder.getI64IntegerAttr(axis));
  }

  Value apply(const Activation &a, Value x, float clip) {
    auto &b = node.builder;
    if (clip > 0)
      x = op<ClipOp>(x, b.getF32FloatAttr(-clip), b.getF32FloatAttr(clip));
    const std::string &n = a.name;
    auto alpha = b.getF32FloatAttr(a.alpha), beta = b.getF32FloatAttr(a.beta);
    if (n == "Sigmoid")
      return op<SigmoidOp>(x);
    if (n == "Tanh")
      return op<TanhOp>(x);
    if (n == "Relu")
      return op<ReluOp>(x);
    if (n == "LeakyRelu")
      return op<LeakyReluOp>(x, alpha, beta);
    if (n == "ThresholdedRelu")
      return op<ThresholdedReluOp>(x, alpha, beta);
    if (n == "HardSigmoid")
      return op<HardSigmoidOp>(x, alpha, beta);
    if (n == "Elu")
      return op<EluOp>(x, alpha, beta);
    if (n == "Softsign")
      return op<SoftsignOp>(x);
    if (n == "Softplus")
      return op<SoftplusOp>(x);
    if (n == "Affine")
      return add(mul(x, scalar(a.alpha)), scalar(a.beta));
    // ScaledTanh
    return mul(op<TanhOp>(mul(x, scalar(a.beta))), scalar(a.alpha));
  }
};

/// Reads `activations`, `activation_alpha` and `activation_beta`: `perDir`
/// functions per direction, ONNX's defaults where the attribute is absent.
/// Alphas and betas are consumed in order by the functions that take them.
FailureOr<SmallVector<Activation>> readActivations(OnnxNode &node, Cell cell,
                                                   int64_t dirs) {
  SmallVector<std::string> names;
  if (auto list = node.op->getAttrOfType<ArrayAttr>("activations")) {
    for (Attribute a : list)
      if (auto s = dyn_cast<StringAttr>(a))
        names.push_back(s.str());
  } else {
    SmallVector<std::string> dflt =
        cell == Cell::RNN   ? SmallVector<std::string>{"Tanh"}
        : cell == Cell::GRU ? SmallVector<std::string>{"Sigmoid", "Tanh"}
                            : SmallVector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int64_t d = 0; d < dirs; ++d)
      names.append(dflt);
  }
  size_t perDir = cell == Cell::RNN ? 1 : cell == Cell::GRU ? 2 : 3;
  if (names.size() != perDir * dirs) {
    node.fail() << "activations has " << names.size() << " functions; expected "
                << perDir * dirs << " (" << perDir << " per direction)";
    return failure();
  }
  auto floats = [&](StringRef name) {
    SmallVector<float> v;
    if (auto list = node.op->getAttrOfType<ArrayAttr>(name))
      for (Attribute a : list)
        if (auto f = dyn_cast<FloatAttr>(a))
          v.push_back(f.getValueAsDouble());
    return v;
  };
  SmallVector<float> alphas = floats("activation_alpha"),
                     betas = floats("activation_beta");
  size_t ai = 0, bi = 0;
  SmallVector<Activation> out;
  for (std::string &name : names) {
    // Names are case-insensitive in practice (exporters write "tanh").
    static const char *known[] = {"Relu",     "Tanh",        "Sigmoid",
                                  "Affine",   "LeakyRelu",   "ThresholdedRelu",
                                  "ScaledTanh", "HardSigmoid", "Elu",
                                  "Softsign", "Softplus"};
    const char *match = nullptr;
    for (const char *k : known)
      if (StringRef(name).equals_insensitive(k))
        match = k;
    if (!match) {
      node.fail() << "activation '" << name << "' is not supported";
      return failure();
    }
    Activation a{match};
    StringRef n(match);
    // Default alpha/beta of each function, then the attribute's values.
    bool hasAlpha = true, hasBeta = false;
    if (n == "LeakyRelu")
      a.alpha = 0.01f;
    else if (n == "ThresholdedRelu" || n == "Elu")
      a.alpha = 1.0f;
    else if (n == "HardSigmoid")
      a.alpha = 0.2f, a.beta = 0.5f, hasBeta = true;
    else if (n == "Affine" || n == "ScaledTanh")
      a.alpha = 1.0f, a.beta = n == "Affine" ? 0.0f : 1.0f, hasBeta = true;
    else
      hasAlpha = false;
    if (hasAlpha && ai < alphas.size())
      a.alpha = alphas[ai++];
    if (hasBeta && bi < betas.size())
      a.beta = betas[bi++];
    out.push_back(a);
  }
  return out;
}

/// What every time step of one direction computes with.
struct CellParams {
  Cell cell;
  ArrayRef<Activation> f; ///< the direction's activation functions
  float clip;
  int64_t hidden;
  bool lbr;      ///< GRU's linear_before_reset
  bool coupled;  ///< LSTM's input_forget
  Value r;       ///< the direction's R, [gates * hidden, hidden]
  Value rzr, rh; ///< GRU: R's update and reset rows, and its hidden rows
  Value recBias; ///< GRU with linear_before_reset: Rbh
  Value pd;      ///< LSTM: the direction's peepholes P, or null
  /// r, rzr and rh are given transposed ([hidden, rows]): a loop's body
  /// then multiplies by a constant instead of transposing one per step.
  bool transposed = false;
};

/// One time step of the cell from the projected input `xp` ([batch, gates *
/// hidden]) and the states `h` and `c`: the new h and, for LSTM, the new c.
std::pair<Value, Value> cellStep(Builder &B, const CellParams &p, Value xp,
                                 Value h, Value c) {
  Cell cell = p.cell;
  ArrayRef<Activation> f = p.f;
  float clip = p.clip;
  int64_t hidden = p.hidden;
  bool lbr = p.lbr, coupled = p.coupled;
  Value r = p.r, rzr = p.rzr, rh = p.rh, recBias = p.recBias, pd = p.pd;
  // h x R^T (+ c), with R as the parameters hold it.
  auto recur = [&](Value a, Value m, Value c) {
    return B.gemmT(a, m, c, /*transB=*/!p.transposed);
  };
  Value hNew, cNew;
  if (cell == Cell::RNN) {
    hNew = B.apply(f[0], B.add(xp, recur(h, r, Value())), clip);
  } else if (cell == Cell::GRU) {
    Value zr = B.add(B.cols(xp, 0, 2 * hidden), recur(h, rzr, Value()));
    Value z = B.apply(f[0], B.cols(zr, 0, hidden), clip);
    Value rg = B.apply(f[0], B.cols(zr, hidden, hidden), clip);
    Value xh = B.cols(xp, 2 * hidden, hidden);
    Value pre = lbr ? B.add(xh, B.mul(rg, recur(h, rh, recBias)))
                    : B.add(xh, recur(B.mul(rg, h), rh, Value()));
    Value hc = B.apply(f[1], pre, clip);
    // (1 - z) * hc + z * h = hc + z * (h - hc)
    hNew = B.add(hc, B.mul(z, B.sub(h, hc)));
  } else {
    Value g = B.add(xp, recur(h, r, Value()));
    Value gi = B.cols(g, 0, hidden), go = B.cols(g, hidden, hidden),
          gf = B.cols(g, 2 * hidden, hidden),
          gc = B.cols(g, 3 * hidden, hidden);
    if (pd) {
      gi = B.add(gi, B.mul(B.cols(pd, 0, hidden), c));
      gf = B.add(gf, B.mul(B.cols(pd, 2 * hidden, hidden), c));
    }
    Value i = B.apply(f[0], gi, clip);
    Value fg = coupled ? B.sub(B.scalar(1), i) : B.apply(f[0], gf, clip);
    cNew = B.add(B.mul(fg, c), B.mul(i, B.apply(f[1], gc, clip)));
    if (pd)
      go = B.add(go, B.mul(B.cols(pd, hidden, hidden), cNew));
    Value o = B.apply(f[0], go, clip);
    hNew = B.mul(o, B.apply(f[2], cNew, /*clip=*/0));
  }
  return {hNew, cNew};
}

/// The steps of one direction over a sequence of run-time length: a
/// kiln.loop of `trips` (a rank-0 i64) iterations whose body runs
/// `step(t, h, c)` at time t = i (or length - 1 - i, `reverse`) on the
/// loop-carried h and c (c null for RNN and GRU), which it updates. Returns
/// the step outputs stacked in iteration order ([length, batch, hidden],
/// when `stack`, else null) and leaves the last h and c in `h` and `c`.
FailureOr<Value> stepLoop(Builder &B, Value trips, int64_t bound, bool reverse,
                          bool stack,
                          function_ref<Value(Value t, Value &h, Value &c)> step,
                          Value &h, Value &c) {
  OnnxNode &node = B.node;
  OpBuilder &b = node.builder;
  Location loc = node.loc();
  SmallVector<Value> inits{h};
  if (c)
    inits.push_back(c);
  SmallVector<Type> types;
  for (Value v : inits)
    types.push_back(v.getType());
  if (stack) {
    SmallVector<int64_t> shape{ShapedType::kDynamic};
    llvm::append_range(shape, typeOf(h).getShape());
    types.push_back(RankedTensorType::get(shape, B.elt));
  }
  auto loop = LoopOp::create(b, loc, types, trips, inits,
                             b.getI64IntegerAttr(stack ? bound : 0));
  Block *body = new Block;
  loop.getBody().push_back(body);
  Value i = body->addArgument(RankedTensorType::get({}, b.getI64Type()), loc);
  SmallVector<Value> state;
  for (Value v : inits) {
    state.push_back(body->addArgument(v.getType(), loc));
    // Loop-carried values keep their init's run-time sizes.
    if (!typeOf(v).hasStaticShape())
      node.sizes->setDims(state.back(), node.sizes->dims(v));
  }
  OpBuilder::InsertionGuard atBody(b);
  b.setInsertionPointToStart(body);
  Value t = i;
  if (reverse)
    t = B.sub(B.sub(trips, constI64(node, {1}, {})), i);
  Value bh = state[0], bc = c ? state[1] : Value();
  Value out = step(t, bh, bc);
  if (B.bad)
    return failure();
  SmallVector<Value> yielded{bh};
  if (bc)
    yielded.push_back(bc);
  for (auto [v, init] : llvm::zip(yielded, inits))
    if (v.getType() != init.getType()) {
      node.fail() << "the state is " << init.getType()
                  << " before the sequence and " << v.getType()
                  << " after a step; give the initial state the batch size "
                     "of X";
      return failure();
    }
  if (stack)
    yielded.push_back(out);
  YieldOp::create(b, loc, yielded);
  for (auto [r, init] : llvm::zip(loop.getResults(), inits))
    if (!typeOf(init).hasStaticShape())
      node.sizes->setDims(r, node.sizes->dims(init));
  h = loop.getResult(0);
  if (c)
    c = loop.getResult(1);
  return stack ? loop.getResults().back() : Value();
}

/// The rows of `v` ([n, ...], n of run-time size) in reverse order.
Value reversedRows(OnnxNode &node, Value v) {
  OpBuilder &b = node.builder;
  Location loc = node.loc();
  RankedTensorType type = typeOf(v);
  SmallVector<SymSize> dims = node.sizes->dims(v);
  SmallVector<Value> offsets, sizes;
  for (auto [d, s] : llvm::enumerate(dims)) {
    Value n = node.sizes->materialize(b, loc, s);
    sizes.push_back(n);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    offsets.push_back(
        d == 0 ? arith::SubIOp::create(
                     b, loc, n, arith::ConstantIndexOp::create(b, loc, 1))
                     .getResult()
               : zero);
  }
  SmallVector<int64_t> strides(type.getRank(), 1);
  strides[0] = -1;
  auto op = SizedSliceOp::create(b, loc, type, v, offsets, sizes,
                                 b.getDenseI64ArrayAttr(strides));
  node.sizes->setDims(op.getResult(), dims);
  return op.getResult();
}

/// What every direction of one RNN/GRU/LSTM node computes with.
struct Layer {
  OnnxNode &node;
  Builder &B;
  Cell cell;
  std::string direction;
  int64_t hidden, gh;
  float clip;
  bool lbr, coupled;
  Value wv, rv, bias, peep, h0, c0, lens;
  SmallVector<Activation> acts;
  size_t perDir;
  SymSize seqS, batch;
  std::optional<int64_t> seqStatic;
  int64_t seqBound;
  Value trips; ///< the run-time sequence length (rank-0 i64), or null
  Value xFlat; ///< X as [seq * batch, input]
};

/// Direction `d` of the layer: its outputs `y` ([seq, 1, batch, hidden],
/// when used), `hLast` and `cLast` ([1, batch, hidden]; c for LSTM only).
LogicalResult runDirection(Layer &L, int64_t d, Value &y, Value &hLast,
                        Value &cLast) {
  OnnxNode &node = L.node;
  Builder &B = L.B;
  Cell cell = L.cell;
  int64_t hidden = L.hidden, gh = L.gh, perDir = L.perDir;
  float clip = L.clip;
  bool lbr = L.lbr, coupled = L.coupled;
  Value wv = L.wv, rv = L.rv, bias = L.bias, peep = L.peep, h0 = L.h0,
        c0 = L.c0, lens = L.lens, xFlat = L.xFlat, trips = L.trips;
  SymSize seqS = L.seqS, batch = L.batch;
  std::optional<int64_t> seqStatic = L.seqStatic;
  int64_t seqBound = L.seqBound;
  const std::string &direction = L.direction;
  auto C = [](int64_t c) { return SymSize::constant(c); };
  bool reverse = direction == "reverse" || d == 1;
  ArrayRef<Activation> f(L.acts.begin() + d * perDir, perDir);
  Value w = B.row(wv, d), r = B.row(rv, d);
  // Biases: Wb + Rb go into the input projection, except GRU's Rbh with
  // linear_before_reset, which is added inside r * (...).
  Value inBias, recBias;
  if (bias) {
    Value bd = B.row(bias, d);
    Value wb = B.cols(bd, 0, gh), rb = B.cols(bd, gh, gh);
    if (lbr) {
      inBias = B.add(wb, B.op<PadOp>(B.cols(rb, 0, 2 * hidden),
                                     node.builder.getDenseI64ArrayAttr({0, hidden}),
                                     node.builder.getF32FloatAttr(0.0f)));
      recBias = B.cols(rb, 2 * hidden, hidden);
    } else {
      inBias = B.add(wb, rb);
    }
  }
  Value proj = B.reshape(B.gemmT(xFlat, w, inBias), {seqS, batch, C(gh)});
  // A state given with another symbolic batch than X's (which a guard
  // checks equal at run time) takes X's batch size.
  auto state0 = [&](Value v) -> Value {
    if (!v || B.bad)
      return {};
    Value row = B.row(v, d);
    if (!row || B.dims(row)[0] == batch)
      return row;
    auto op = SizedReshapeOp::create(
        node.builder, node.loc(), typeOf(row), row,
        ValueRange{node.sizes->materialize(node.builder, node.loc(), batch)});
    node.sizes->setDims(op.getResult(), {batch, C(hidden)});
    return op.getResult();
  };
  Value h = state0(h0), c = state0(c0);
  Value pd = peep ? B.row(peep, d) : Value();
  auto zeros = [&]() -> Value {
    auto type = RankedTensorType::get(
        {batch.getConstant().value_or(1), hidden}, B.elt);
    Value z = ConstantOp::create(
        node.builder, node.loc(), type,
        DenseElementsAttr::get(
            type, cast<TypedAttr>(node.builder.getZeroAttr(B.elt))));
    if (batch.getConstant())
      return z;
    return B.check(expandToSizes(node, z, {batch, C(hidden)}));
  };
  if (!h)
    h = zeros();
  if (!c && cell == Cell::LSTM)
    c = zeros();
  Value rzr, rh;
  if (cell == Cell::GRU) {
    rzr = B.rows(r, 0, 2 * hidden);
    rh = B.rows(r, 2 * hidden, hidden);
  }
  CellParams params{cell, f,   clip, hidden,  lbr, coupled,
                    r,    rzr, rh,   recBias, pd};
  // A loop's body multiplies by R^T: a constant R is transposed when the
  // products are lowered, another one once here, outside the loop.
  if (!seqStatic && !r.getDefiningOp<ConstantOp>()) {
    params.transposed = true;
    for (Value *m : {&params.r, &params.rzr, &params.rh})
      if (*m)
        *m = B.transpose(*m, {1, 0});
  }
  // One time step on the projected input `xp` at time `tf` (a scalar of
  // the element type, read by sequence_lens): updates h and c, returns
  // the step's output.
  auto step = [&](Value xp, Value tf, Value &h, Value &c) -> Value {
    Value hNew, cNew;
    std::tie(hNew, cNew) = cellStep(B, params, xp, h, c);
    Value out = hNew;
    if (lens) {
      // m = clamp(len - t, 0, 1): 1 while the entry is still running.
      Value m =
          B.op<ClipOp>(B.sub(lens, tf), node.builder.getF32FloatAttr(0.0f),
                       node.builder.getF32FloatAttr(1.0f));
      m = B.reshape(m, {B.dims(lens)[0], C(1)});
      out = B.mul(hNew, m);
      hNew = B.add(h, B.mul(m, B.sub(hNew, h)));
      if (cNew)
        cNew = B.add(c, B.mul(m, B.sub(cNew, c)));
    }
    h = hNew;
    if (cNew)
      c = cNew;
    return out;
  };
  if (seqStatic) {
    int64_t seq = *seqStatic;
    SmallVector<Value> steps(seq);
    for (int64_t s = 0; s < seq; ++s) {
      int64_t t = reverse ? seq - 1 - s : s;
      Value out = step(B.row(proj, t), B.scalar(t), h, c);
      if (B.bad)
        return failure();
      steps[t] = B.reshape(out, {C(1), C(1), batch, C(hidden)});
    }
    if (node.resultUsed(0))
      y = B.concat(steps, 0);
  } else {
    FailureOr<Value> stacked = stepLoop(
        B, trips, seqBound, reverse, node.resultUsed(0),
        [&](Value t, Value &h, Value &c) {
          Value xp =
              B.op<GatherOp>(proj, t, node.builder.getI64IntegerAttr(0));
          Value tf = lens ? B.op<CastOp>(t, TypeAttr::get(B.elt)) : Value();
          return step(xp, tf, h, c);
        },
        h, c);
    if (failed(stacked))
      return failure();
    if (*stacked) {
      node.sizes->setDims(*stacked, {seqS, batch, C(hidden)});
      Value rows = *stacked;
      if (reverse)
        rows = reversedRows(node, rows);
      y = B.reshape(rows, {seqS, C(1), batch, C(hidden)});
    }
  }
  if (lens) {
    // An entry of length 0 never ran: its last state is 0, as ONNX Runtime
    // gives it, not the initial state.
    Value ran = B.op<ClipOp>(lens, node.builder.getF32FloatAttr(0.0f),
                             node.builder.getF32FloatAttr(1.0f));
    ran = B.reshape(ran, {B.dims(lens)[0], C(1)});
    h = B.mul(h, ran);
    if (c)
      c = B.mul(c, ran);
  }
  hLast = B.reshape(h, {C(1), batch, C(hidden)});
  if (c)
    cLast = B.reshape(c, {C(1), batch, C(hidden)});
  return failure(B.bad);

}

FailureOr<SmallVector<Value>> recurrent(OnnxNode &node, Cell cell) {
  FailureOr<Value> xv = node.rankedInput(0), wv = node.rankedInput(1),
                   rv = node.rankedInput(2);
  if (failed(xv) || failed(wv) || failed(rv))
    return failure();
  if (failed(node.requireStaticShape(typeOf(*wv))) ||
      failed(node.requireStaticShape(typeOf(*rv))))
    return failure();
  // A symbolic input size is W's dimension 2, checked at run time.
  if (RankedTensorType w = typeOf(*wv); w.getRank() == 3)
    xv = pinDims(node, *xv, {{2, w.getDimSize(2)}}, "W needs the input's");
  if (failed(xv))
    return failure();
  RankedTensorType xt = typeOf(*xv);
  if (xt.getRank() != 3 || !isa<FloatType>(xt.getElementType())) {
    node.fail() << "expects a 3-D float input, got " << xt;
    return failure();
  }
  int64_t layout = node.opset >= 14 ? node.intAttr("layout", 0) : 0;
  // The batch and the sequence length may be symbolic (their sizes come
  // from SymbolicSizes); the input size may not.
  if (xt.isDynamicDim(2) || (!xt.hasStaticShape() && !node.sizes)) {
    node.fail() << "input shape " << xt
                << " is not static in its input size (dimension 2); give it "
                   "one size with --input-shape or --dim";
    return failure();
  }
  std::string direction = node.strAttr("direction", "forward");
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional") {
    node.fail() << "unknown direction '" << direction
                << "'; expected forward, reverse or bidirectional";
    return failure();
  }
  int64_t dirs = direction == "bidirectional" ? 2 : 1;
  int64_t gates = cell == Cell::RNN ? 1 : cell == Cell::GRU ? 3 : 4;
  int64_t hidden = node.intAttr("hidden_size", typeOf(*rv).getDimSize(2));
  if (hidden < 1 || hidden > (int64_t(1) << 31) ||
      (layout != 0 && layout != 1)) {
    node.fail() << "hidden_size is " << hidden << " and layout " << layout
                << "; hidden_size must be 1 to 2^31 and layout 0 or 1";
    return failure();
  }
  float clip = node.floatAttr("clip", 0.0f);
  bool lbr = cell == Cell::GRU && node.intAttr("linear_before_reset", 0) != 0;
  bool coupled = cell == Cell::LSTM && node.intAttr("input_forget", 0) != 0;
  Builder B(node, xt.getElementType());

  Value x = *xv;
  if (layout == 1)
    x = B.transpose(x, {1, 0, 2});
  if (B.bad)
    return failure();
  int64_t input = typeOf(x).getDimSize(2), gh = gates * hidden;
  SymSize seqS = B.dims(x)[0], batch = B.dims(x)[1];
  auto C = [](int64_t c) { return SymSize::constant(c); };
  std::optional<SymSize> rowsAll = SymSize::mul(seqS, batch);
  if (!rowsAll) {
    node.fail() << "seq * batch overflows";
    return failure();
  }
  auto expect = [&](Value v, ArrayRef<int64_t> shape, StringRef what) {
    if (typeOf(v).getShape() == shape)
      return success();
    node.fail() << what << " has shape " << typeOf(v) << "; expected ["
                << llvm::make_range(shape.begin(), shape.end()) << "]";
    return failure();
  };
  if (failed(expect(*wv, {dirs, gh, input}, "W")) ||
      failed(expect(*rv, {dirs, gh, hidden}, "R")))
    return failure();
  Value bias = node.input(3);
  if (bias && failed(expect(bias, {dirs, 2 * gh}, "B")))
    return failure();
  Value peep = cell == Cell::LSTM ? node.input(7) : Value();
  if (peep && failed(expect(peep, {dirs, 3 * hidden}, "P")))
    return failure();

  // A symbolic sequence runs as a kiln.loop over its run-time length, with
  // the steps' outputs stacked as a scan output of at most `seqBound` rows.
  std::optional<int64_t> seqStatic = seqS.getConstant();
  int64_t seqBound = 0;
  Value trips;
  if (!seqStatic) {
    std::optional<int64_t> largest = node.sizes->largest(seqS);
    if (!largest || *largest > kMaxScanRows) {
      node.fail() << "the sequence length " << node.sizes->str(seqS)
                  << " has no bound Kiln can use (at most " << kMaxScanRows
                  << " steps); give it a range with --dim or --input-shape";
      return failure();
    }
    seqBound = *largest;
    Value len = ShapeOfOp::create(
        node.builder, node.loc(),
        RankedTensorType::get({1}, node.builder.getI64Type()), x,
        node.builder.getI64IntegerAttr(0), node.builder.getI64IntegerAttr(1));
    trips = B.reshape(len, {});
  }
  // sequence_lens: a no-op when every length is the full sequence. Otherwise
  // each step runs an entry only while t < its length: going forward, a
  // finished entry keeps its state; in reverse, an entry keeps its initial
  // state until t reaches its length - 1. Either way its output past its
  // length is 0, as ONNX defines.
  Value lens;
  if (node.input(4)) {
    std::optional<SmallVector<int64_t>> c = node.constantInts(4);
    bool full = c && seqStatic &&
                llvm::all_of(*c, [&](int64_t l) { return l == *seqStatic; });
    if (!full) {
      lens = B.op<CastOp>(node.input(4), TypeAttr::get(B.elt));
      if (!B.bad && !typeOf(lens).hasStaticShape())
        guardSameSize(node, lens, 0, x, 1,
                      "the length of sequence_lens and X's batch");
    }
  }

  // Initial states: [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]).
  auto initial = [&](unsigned idx) -> Value {
    Value v = node.input(idx);
    if (!v)
      return {};
    return layout == 1 ? B.transpose(v, {1, 0, 2}) : v;
  };
  Value h0 = initial(5), c0 = cell == Cell::LSTM ? initial(6) : Value();
  for (Value v : {h0, c0}) {
    if (!v || B.bad)
      continue;
    RankedTensorType t = typeOf(v);
    std::optional<int64_t> b = batch.getConstant();
    if (t.getRank() != 3 || t.getDimSize(0) != dirs ||
        t.getDimSize(2) != hidden ||
        (b && !t.isDynamicDim(1) && t.getDimSize(1) != *b)) {
      node.fail() << "the initial state has shape " << t << "; expected ["
                  << dirs << ", " << (b ? std::to_string(*b) : "batch") << ", "
                  << hidden << "]";
      return failure();
    }
    if (t.isDynamicDim(1) || !b)
      guardSameSize(node, v, 1, x, 1,
                    "the initial state's batch and X's batch");
  }

  FailureOr<SmallVector<Activation>> acts = readActivations(node, cell, dirs);
  if (failed(acts))
    return failure();
  size_t perDir = acts->size() / dirs;

  Value xFlat = B.reshape(x, {*rowsAll, C(input)});
  SmallVector<Value> ys(dirs), hLast(dirs), cLast(dirs);
  Layer L{node,   B,      cell,    direction, hidden, gh,     clip,
          lbr,    coupled, *wv,    *rv,       bias,   peep,   h0,
          c0,     lens,   std::move(*acts), perDir, seqS, batch, seqStatic,
          seqBound, trips, xFlat};
  for (int64_t d = 0; d < dirs; ++d)
    if (failed(runDirection(L, d, ys[d], hLast[d], cLast[d])))
      return failure();

  SmallVector<Value> results(node.op->getNumResults());
  if (node.resultUsed(0)) {
    Value y = B.concat(ys, 1); // [seq, dirs, batch, hidden]
    results[0] = layout == 1 ? B.transpose(y, {2, 0, 1, 3}) : y;
  }
  auto state = [&](ArrayRef<Value> parts) {
    Value v = B.concat(parts, 0); // [dirs, batch, hidden]
    return layout == 1 ? B.transpose(v, {1, 0, 2}) : v;
  };
  if (results.size() > 1 && node.resultUsed(1))
    results[1] = state(hLast);
  if (results.size() > 2 && node.resultUsed(2))
    results[2] = state(cLast);
  if (B.bad)
    return failure();
  return results;
}
} // namespace

FailureOr<SmallVector<Value>> mlir::kiln::convertRNN(OnnxNode &node) {
  return recurrent(node, Cell::RNN);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertGRU(OnnxNode &node) {
  return recurrent(node, Cell::GRU);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertLSTM(OnnxNode &node) {
  return recurrent(node, Cell::LSTM);
}
