//===- Elementwise.cpp - ONNX elementwise ops -------------------*- C++ -*-===//
#include "ShapeInputs.h"

#include <limits>

using namespace mlir;
using namespace mlir::kiln;

namespace {
template <typename OpTy>
FailureOr<SmallVector<Value>> unary(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  return one(build<OpTy>(node, *x));
}

template <typename OpTy>
FailureOr<SmallVector<Value>> binary(OnnxNode &node) {
  FailureOr<Value> a = node.rankedInput(0), b = node.rankedInput(1);
  if (failed(a) || failed(b))
    return failure();
  return one(build<OpTy>(node, *a, *b));
}

/// Neg. Integer constants are negated here: they are shape arithmetic (an
/// axis count turned into a ConstantOfShape input) that later nodes need as
/// constants.
FailureOr<SmallVector<Value>> negate(OnnxNode &node) {
  if (std::optional<DenseElementsAttr> c = node.constantInput(0);
      c && c->getElementType().isSignlessInteger() &&
      !c->getElementType().isInteger(1)) {
    DenseElementsAttr neg = c->mapValues(
        c->getElementType(), [](const APInt &v) { return -v; });
    Value r = ConstantOp::create(node.builder, node.loc(), neg.getType(), neg);
    return SmallVector<Value>{r};
  }
  return unary<NegOp>(node);
}

/// Max, Min, Sum (opset 8+): variadic with broadcasting, folded left.
template <typename OpTy>
FailureOr<SmallVector<Value>> variadic(OnnxNode &node) {
  FailureOr<Value> acc = node.rankedInput(0);
  for (unsigned i = 1; succeeded(acc) && i < node.numInputs(); ++i) {
    FailureOr<Value> next = node.rankedInput(i);
    if (failed(next))
      return failure();
    acc = build<OpTy>(node, *acc, *next);
  }
  return one(acc);
}

FailureOr<SmallVector<Value>> clip(OnnxNode &node, double lo, double hi) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  return one(build<ClipOp>(node, *x, node.builder.getF32FloatAttr(lo),
                           node.builder.getF32FloatAttr(hi)));
}

/// Clip 11+: constant float bounds become kiln.clip; run-time bounds (or
/// integer tensors) are a kiln.max and a kiln.min with the bound tensors,
/// which only scale numbers and need no specialization.
FailureOr<SmallVector<Value>> clipInputs(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  constexpr double inf = std::numeric_limits<double>::infinity();
  bool isFloat = isa<FloatType>(cast<RankedTensorType>(x->getType()).getElementType());
  double lo = -inf, hi = inf;
  Value loV, hiV;
  for (unsigned i : {1u, 2u}) {
    if (!node.input(i))
      continue;
    std::optional<double> c = isFloat ? node.constantScalar(i) : std::nullopt;
    if (c) {
      (i == 1 ? lo : hi) = *c;
      continue;
    }
    FailureOr<Value> v = node.rankedInput(i);
    if (failed(v))
      return failure();
    (i == 1 ? loV : hiV) = *v;
  }
  Value y = *x;
  if (isFloat && (!std::isinf(lo) || !std::isinf(hi))) {
    FailureOr<SmallVector<Value>> c = clip(node, lo, hi);
    if (failed(c))
      return failure();
    y = c->front();
  }
  if (loV) {
    FailureOr<Value> m = build<MaxOp>(node, y, loV);
    if (failed(m))
      return failure();
    y = *m;
  }
  if (hiV) {
    FailureOr<Value> m = build<MinOp>(node, y, hiV);
    if (failed(m))
      return failure();
    y = *m;
  }
  return SmallVector<Value>{y};
}

/// Dropout 7, 10, 12, 13 in inference: the output is the input and the
/// mask (if used) all true. From 12 training_mode is an input: training with
/// ratio 0 is the same; a run-time training_mode or ratio gets a guard that
/// they are (false, any) or (any, 0), since the random mask is not
/// reproducible and not supported.
FailureOr<SmallVector<Value>> dropout(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  if (node.opset >= 12 && node.input(2)) {
    std::optional<DenseElementsAttr> training = node.constantInput(2);
    bool trainingOff = training && training->getNumElements() == 1 &&
                       (*training->getValues<APInt>().begin()).isZero();
    if (!trainingOff) {
      std::optional<double> ratio =
          node.input(1) ? node.constantScalar(1) : std::optional<double>(0.5);
      if (ratio && *ratio != 0.0) {
        if (training) {
          node.fail() << "training mode with a non-zero ratio is not "
                         "supported: its random mask is not reproducible "
                         "(Kiln compiles inference only; export the model in "
                         "eval mode)";
          return failure();
        }
      }
      if (!ratio || !training) {
        // Guard: !training || ratio == 0, at run time.
        OpBuilder &b = node.builder;
        Value ok;
        if (!training) {
          FailureOr<Value> t = node.rankedInput(2);
          if (failed(t))
            return failure();
          FailureOr<Value> off = build<NotOp>(node, *t);
          if (failed(off))
            return failure();
          ok = *off;
        }
        if (!ratio) {
          FailureOr<Value> r = node.rankedInput(1);
          if (failed(r))
            return failure();
          Value zero;
          Type elt = cast<RankedTensorType>(r->getType()).getElementType();
          auto zt = RankedTensorType::get({}, elt);
          zero = ConstantOp::create(b, node.loc(), zt,
                                    DenseElementsAttr::get(zt, b.getZeroAttr(elt)));
          Value rv = *r;
          FailureOr<Value> isZero = build<EqualOp>(node, rv, zero);
          if (failed(isZero))
            return failure();
          if (ok) {
            FailureOr<Value> o = build<OrOp>(node, ok, *isZero);
            if (failed(o))
              return failure();
            ok = *o;
          } else {
            ok = *isZero;
          }
        }
        if (ok)
          guardInput(node, ok, 2,
                     "is true with a non-zero ratio: training-mode Dropout "
                     "is not supported (its random mask is not "
                     "reproducible); only ratio 0 or inference is");
      }
    }
  }
  SmallVector<Value> results = {*x};
  if (node.op->getNumResults() > 1) {
    if (!node.resultUsed(1)) {
      results.push_back(nullptr);
    } else {
      auto xt = cast<RankedTensorType>(x->getType());
      Type elt = node.builder.getI1Type();
      if (auto declared = dyn_cast<RankedTensorType>(node.op->getResult(1).getType()))
        elt = declared.getElementType();
      auto mt = RankedTensorType::get(xt.getShape(), elt);
      Attribute one = isa<FloatType>(elt) ? Attribute(FloatAttr::get(elt, 1.0))
                                          : Attribute(IntegerAttr::get(elt, 1));
      results.push_back(ConstantOp::create(node.builder, node.loc(), mt,
                                           DenseElementsAttr::get(mt, one)));
    }
  }
  return results;
}

/// Element type of an ONNX TensorProto data type that kiln.cast handles, or
/// null; `name` is set either way for the diagnostic.
Type castTarget(Builder &b, int64_t dataType, std::string &name) {
  // Indexed by TensorProto.DataType (Kiln does not link onnx here).
  const std::pair<const char *, Type> types[] = {
      {"UNDEFINED", {}},
      {"FLOAT", b.getF32Type()},
      {"UINT8", b.getIntegerType(8, false)},
      {"INT8", b.getI8Type()},
      {"UINT16", b.getIntegerType(16, false)},
      {"INT16", b.getI16Type()},
      {"INT32", b.getI32Type()},
      {"INT64", b.getI64Type()},
      {"STRING", {}},
      {"BOOL", b.getI1Type()},
      {"FLOAT16", b.getF16Type()},
      {"DOUBLE", b.getF64Type()},
      {"UINT32", b.getIntegerType(32, false)},
      {"UINT64", b.getIntegerType(64, false)},
      {"COMPLEX64", {}},
      {"COMPLEX128", {}},
      {"BFLOAT16", b.getBF16Type()}};
  if (dataType < 0 || dataType >= (int64_t)std::size(types)) {
    name = "data type " + std::to_string(dataType);
    return {};
  }
  name = types[dataType].first;
  return types[dataType].second;
}

bool isNumeric(Type t) {
  return t &&
         (isa<FloatType>(t) || t.isSignlessInteger() || t.isUnsignedInteger());
}

/// kiln.cast of `x` to `to` (null when ONNX's type has no Kiln counterpart;
/// `name` names it).
FailureOr<Value> castTo(OnnxNode &node, Value x, Type to,
                        const std::string &name) {
  Type from = cast<RankedTensorType>(x.getType()).getElementType();
  if (!isNumeric(to) || !isNumeric(from)) {
    InFlightDiagnostic diag = node.fail();
    diag << "casting from " << from << " to ";
    if (to)
      diag << to;
    else
      diag << name;
    diag << " is not supported; Kiln casts between float, integer and bool "
            "types (strings and complex numbers are unsupported)";
    return failure();
  }
  return build<CastOp>(node, x, TypeAttr::get(to));
}

/// Cast 6, 9, 13 (19's saturate only concerns float8, which Kiln lacks).
FailureOr<SmallVector<Value>> castNode(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  if (!node.hasAttr("to")) {
    node.fail() << "the 'to' attribute is required";
    return failure();
  }
  std::string name;
  Type to = castTarget(node.builder, node.intAttr("to", 0), name);
  return one(castTo(node, *x, to, name));
}

/// CastLike 15: Cast to the element type of the second input.
FailureOr<SmallVector<Value>> castLike(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0), like = node.rankedInput(1);
  if (failed(x) || failed(like))
    return failure();
  Type to = cast<RankedTensorType>(like->getType()).getElementType();
  std::string name;
  llvm::raw_string_ostream(name) << to;
  return one(castTo(node, *x, to, name));
}

/// Pow: ONNX allows an exponent of another type than the base (Pow 12+);
/// the exponent is converted to the base's element type.
FailureOr<SmallVector<Value>> power(OnnxNode &node) {
  FailureOr<Value> a = node.rankedInput(0), b = node.rankedInput(1);
  if (failed(a) || failed(b))
    return failure();
  Type base = cast<RankedTensorType>(a->getType()).getElementType();
  if (!isa<FloatType>(base)) {
    // Integer bases: in f64, rounded to the nearest integer on the way back,
    // which is exact wherever the result fits in 53 bits (beyond that the
    // integer result overflows in ONNX too).
    Type f64 = node.builder.getF64Type();
    FailureOr<Value> af = build<CastOp>(node, *a, TypeAttr::get(f64));
    FailureOr<Value> bf = build<CastOp>(node, *b, TypeAttr::get(f64));
    if (failed(af) || failed(bf))
      return failure();
    FailureOr<Value> p = build<PowOp>(node, *af, *bf);
    if (failed(p))
      return failure();
    FailureOr<Value> r = build<RoundOp>(node, *p);
    if (failed(r))
      return failure();
    return one(build<CastOp>(node, *r, TypeAttr::get(base)));
  }
  if (cast<RankedTensorType>(b->getType()).getElementType() != base) {
    FailureOr<Value> converted = build<CastOp>(node, *b, TypeAttr::get(base));
    if (failed(converted))
      return failure();
    b = converted;
  }
  return one(build<PowOp>(node, *a, *b));
}

/// An activation with ONNX's scalar attributes (absent ones take `alpha0`,
/// `beta0`: the ONNX defaults).
template <typename OpTy>
FailureOr<SmallVector<Value>> paramUnary(OnnxNode &node, const char *alphaName,
                                         float alpha0, const char *betaName,
                                         float beta0) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  float alpha = node.floatAttr(alphaName, alpha0);
  float beta = betaName ? node.floatAttr(betaName, beta0) : beta0;
  return one(build<OpTy>(node, *x, node.builder.getF32FloatAttr(alpha),
                         node.builder.getF32FloatAttr(beta)));
}

/// Comparisons, logic and Where read or produce bools (one byte each in
/// memory; the CPU code generator keeps those accesses scalar).
template <typename Fn>
FailureOr<SmallVector<Value>> boolOp(OnnxNode &node, Fn fn) {
  return fn(node);
}

/// Evaluates an elementwise op on small integer (or bool) constants with
/// numpy broadcasting, as shape arithmetic needs (torch's exports compute
/// masks and shapes with Equal and Where on Shape results). Returns null
/// when an input is not such a constant.
Value foldSmallIntConstants(OnnxNode &node, ArrayRef<Value> inputs,
                            Type resultElt,
                            function_ref<APInt(ArrayRef<APInt>)> fn) {
  SmallVector<DenseElementsAttr> cs;
  SmallVector<SmallVector<APInt>> values;
  int64_t rank = 0;
  for (unsigned i = 0; i < inputs.size(); ++i) {
    std::optional<DenseElementsAttr> c = node.constantInput(i);
    if (!c || !c->getElementType().isSignlessInteger() ||
        !c->getType().hasStaticShape() || c->getNumElements() > 4096)
      return Value();
    cs.push_back(*c);
    values.emplace_back(c->getValues<APInt>());
    rank = std::max<int64_t>(rank, c->getType().getRank());
  }
  SmallVector<int64_t> shape(rank, 1);
  for (DenseElementsAttr c : cs) {
    ArrayRef<int64_t> s = c.getType().getShape();
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t &o = shape[rank - s.size() + d];
      if (s[d] != 1 && o != 1 && s[d] != o)
        return Value();
      if (s[d] != 1)
        o = s[d];
    }
  }
  auto type = RankedTensorType::get(shape, resultElt);
  if (type.getNumElements() > 4096)
    return Value();
  SmallVector<APInt> out;
  SmallVector<int64_t> idx(rank, 0);
  for (int64_t n = 0; n < type.getNumElements(); ++n) {
    SmallVector<APInt> args;
    for (auto [c, vals] : llvm::zip(cs, values)) {
      ArrayRef<int64_t> s = c.getType().getShape();
      int64_t flat = 0;
      for (size_t d = 0; d < s.size(); ++d)
        flat = flat * s[d] + (s[d] == 1 ? 0 : idx[rank - s.size() + d]);
      args.push_back(c.isSplat() ? vals.front() : vals[flat]);
    }
    out.push_back(fn(args));
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
  return ConstantOp::create(node.builder, node.loc(), type,
                            DenseElementsAttr::get(type, out));
}

/// Comparisons, whose operands must share an element type.
template <typename OpTy> FailureOr<SmallVector<Value>> compare(OnnxNode &node) {
  FailureOr<Value> a = node.rankedInput(0), b = node.rankedInput(1);
  if (failed(a) || failed(b))
    return failure();
  if constexpr (std::is_same_v<OpTy, EqualOp>) {
    Type elt = cast<RankedTensorType>(a->getType()).getElementType();
    if (elt == cast<RankedTensorType>(b->getType()).getElementType())
      if (Value folded = foldSmallIntConstants(
              node, {*a, *b}, node.builder.getI1Type(),
              [](ArrayRef<APInt> v) { return APInt(1, v[0] == v[1]); }))
        return SmallVector<Value>{folded};
  }
  Type ta = cast<RankedTensorType>(a->getType()).getElementType();
  if (!isNumeric(ta)) {
    node.fail() << "comparing " << ta
                << " is not supported; Kiln compares float, integer and bool "
                   "tensors";
    return failure();
  }
  return one(build<OpTy>(node, *a, *b));
}

FailureOr<SmallVector<Value>> where(OnnxNode &node) {
  FailureOr<Value> c = node.rankedInput(0), a = node.rankedInput(1),
                   b = node.rankedInput(2);
  if (failed(c) || failed(a) || failed(b))
    return failure();
  Type elt = cast<RankedTensorType>(a->getType()).getElementType();
  if (elt == cast<RankedTensorType>(b->getType()).getElementType() &&
      !elt.isInteger(1))
    if (Value folded = foldSmallIntConstants(
            node, {*c, *a, *b}, elt,
            [](ArrayRef<APInt> v) { return v[0].isZero() ? v[2] : v[1]; }))
      return SmallVector<Value>{folded};
  return one(build<WhereOp>(node, *c, *a, *b));
}

/// PRelu: the slope broadcasts to the input (unidirectionally).
FailureOr<SmallVector<Value>> prelu(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0), slope = node.rankedInput(1);
  if (failed(x) || failed(slope))
    return failure();
  ArrayRef<int64_t> xs = cast<RankedTensorType>(x->getType()).getShape();
  ArrayRef<int64_t> ss = cast<RankedTensorType>(slope->getType()).getShape();
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(xs, ss);
  if (failed(shape) || ArrayRef<int64_t>(*shape) != xs) {
    node.fail() << "the slope's shape must broadcast to the input's";
    return failure();
  }
  return one(build<PReluOp>(node, *x, *slope));
}

/// Mod: fmod = 0 is Python's % and ONNX allows it on integers only.
FailureOr<SmallVector<Value>> mod(OnnxNode &node) {
  FailureOr<Value> a = node.rankedInput(0), b = node.rankedInput(1);
  if (failed(a) || failed(b))
    return failure();
  bool fmod = node.intAttr("fmod", 0) != 0;
  Type elt = cast<RankedTensorType>(a->getType()).getElementType();
  if (isa<FloatType>(elt) && !fmod) {
    node.fail() << "floating-point Mod requires fmod = 1 (ONNX)";
    return failure();
  }
  if (!isNumeric(elt)) {
    node.fail() << "Mod of " << elt
                << " is not supported; Kiln computes Mod on float and integer "
                   "tensors";
    return failure();
  }
  // Small signed-integer constants (shape arithmetic, such as the padding
  // torch computes for windowed attention) are computed here so that the
  // nodes that need them as constants get constants.
  std::optional<DenseElementsAttr> ca = node.constantInput(0),
                                   cb = node.constantInput(1);
  auto ta = cast<RankedTensorType>(a->getType()),
       tb = cast<RankedTensorType>(b->getType());
  if (ca && cb && elt.isSignlessInteger() && !elt.isInteger(1) &&
      ta.hasStaticShape() && tb.hasStaticShape() &&
      tb.getNumElements() == 1 && ta.getNumElements() <= 64) {
    APInt d = *cb->getValues<APInt>().begin();
    if (!d.isZero()) {
      SmallVector<APInt> out;
      for (APInt x : ca->getValues<APInt>()) {
        // srem has the dividend's sign (fmod = 1); fmod = 0 takes the
        // divisor's, as Python's %.
        APInt r = (x.isMinSignedValue() && d.isAllOnes())
                      ? APInt(x.getBitWidth(), 0)
                      : x.srem(d);
        if (!fmod && !r.isZero() && (r.isNegative() != d.isNegative()))
          r += d;
        out.push_back(r);
      }
      DenseElementsAttr v = DenseElementsAttr::get(ta, out);
      Value c = ConstantOp::create(node.builder, node.loc(), ta, v);
      return SmallVector<Value>{c};
    }
  }
  return one(build<ModOp>(node, *a, *b, node.builder.getBoolAttr(fmod)));
}

/// BitShift 11: direction LEFT or RIGHT, on unsigned integers in ONNX (Kiln
/// also shifts signed ones, arithmetically to the right).
FailureOr<SmallVector<Value>> bitShift(OnnxNode &node) {
  FailureOr<Value> a = node.rankedInput(0), b = node.rankedInput(1);
  if (failed(a) || failed(b))
    return failure();
  std::string dir = node.strAttr("direction", "");
  if (dir != "LEFT" && dir != "RIGHT") {
    node.fail() << "direction must be \"LEFT\" or \"RIGHT\", got \"" << dir
                << "\"";
    return failure();
  }
  Type elt = elementOf(*a);
  if (!isa<IntegerType>(elt) || elt.isInteger(1)) {
    node.fail() << "BitShift of " << elt
                << " is not supported; it takes integer tensors";
    return failure();
  }
  return one(
      build<BitShiftOp>(node, *a, *b, node.builder.getBoolAttr(dir == "LEFT")));
}

/// IsNaN 9, 13: x != x (ordered equality is false only for NaN).
FailureOr<SmallVector<Value>> isNaN(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  if (!isa<FloatType>(elementOf(*x))) {
    node.fail() << "IsNaN of " << elementOf(*x)
                << " is not supported; it takes float tensors";
    return failure();
  }
  FailureOr<Value> same = build<EqualOp>(node, *x, *x);
  if (failed(same))
    return failure();
  return one(build<NotOp>(node, *same));
}

/// IsInf 10: comparisons with the infinities the attributes ask for.
FailureOr<SmallVector<Value>> isInf(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  Type elt = elementOf(*x);
  if (!isa<FloatType>(elt)) {
    node.fail() << "IsInf of " << elt
                << " is not supported; it takes float tensors";
    return failure();
  }
  bool neg = node.intAttr("detect_negative", 1) != 0;
  bool pos = node.intAttr("detect_positive", 1) != 0;
  constexpr double inf = std::numeric_limits<double>::infinity();
  Value result;
  for (auto [want, value] : {std::pair{pos, inf}, std::pair{neg, -inf}}) {
    if (!want)
      continue;
    FailureOr<Value> hit =
        build<EqualOp>(node, *x, scalarConstant(node, elt, value));
    if (succeeded(hit) && result)
      hit = build<OrOp>(node, result, *hit);
    if (failed(hit))
      return failure();
    result = *hit;
  }
  if (result)
    return SmallVector<Value>{result};
  // Neither sign: all false.
  auto type = cast<RankedTensorType>(x->getType());
  if (failed(node.requireStaticShape(type)))
    return failure();
  return one(splatConstant(node, type.clone(node.builder.getI1Type()), 0));
}

/// Mean 8, 13: the broadcast sum divided by the number of inputs.
FailureOr<SmallVector<Value>> mean(OnnxNode &node) {
  FailureOr<SmallVector<Value>> sum = variadic<AddOp>(node);
  if (failed(sum))
    return failure();
  Type elt = elementOf((*sum)[0]);
  if (!isa<FloatType>(elt)) {
    node.fail() << "Mean of " << elt
                << " is not supported; it takes float tensors";
    return failure();
  }
  if (node.numInputs() == 1)
    return sum;
  return one(build<DivOp>(node, (*sum)[0],
                          scalarConstant(node, elt, node.numInputs())));
}

/// Shrink 9: x < -lambd ? x + bias : x > lambd ? x - bias : 0.
FailureOr<SmallVector<Value>> shrink(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  Type elt = elementOf(*x);
  if (!isNumeric(elt) || elt.isInteger(1)) {
    node.fail() << "Shrink of " << elt << " is not supported";
    return failure();
  }
  double lambd = node.floatAttr("lambd", 0.5f);
  double bias = node.floatAttr("bias", 0.0f);
  Value biasC = scalarConstant(node, elt, bias);
  FailureOr<Value> below =
      build<LessOp>(node, *x, scalarConstant(node, elt, -lambd));
  FailureOr<Value> above =
      build<GreaterOp>(node, *x, scalarConstant(node, elt, lambd));
  FailureOr<Value> up = build<AddOp>(node, *x, biasC);
  FailureOr<Value> down = build<SubOp>(node, *x, biasC);
  if (failed(below) || failed(above) || failed(up) || failed(down))
    return failure();
  FailureOr<Value> inner =
      build<WhereOp>(node, *above, *down, scalarConstant(node, elt, 0));
  if (failed(inner))
    return failure();
  return one(build<WhereOp>(node, *below, *up, *inner));
}

/// Trilu 14: keeps the elements with col - row >= k (upper) or <= k (lower)
/// of the last two dimensions. k may be a run-time input: the col - row
/// table is a constant and the comparison with k runs in the graph.
FailureOr<SmallVector<Value>> trilu(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  if (type.getRank() < 2) {
    node.fail() << "expects an input of rank 2 or more, got rank "
                << type.getRank();
    return failure();
  }
  if (failed(node.requireStaticShape(type)))
    return failure();
  // An empty matrix stays what it is (and needs no mask).
  if (type.getNumElements() == 0)
    return SmallVector<Value>{*x};
  int64_t rows = type.getDimSize(type.getRank() - 2),
          cols = type.getDimSize(type.getRank() - 1);
  auto &b = node.builder;
  Value k = scalarConstant(node, b.getI64Type(), 0);
  if (node.input(1)) {
    FailureOr<Value> kIn = node.rankedInput(1);
    if (failed(kIn))
      return failure();
    auto kt = cast<RankedTensorType>(kIn->getType());
    if (kt.getElementType() != b.getI64Type() || !kt.hasStaticShape() ||
        kt.getNumElements() != 1) {
      node.fail() << "k must be a single int64, got " << kt;
      return failure();
    }
    FailureOr<Value> scalar = reshapeTo(node, *kIn, {});
    if (failed(scalar))
      return failure();
    k = *scalar;
  }
  SmallVector<int64_t> diag;
  diag.reserve(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      diag.push_back(j - i);
  auto diagType = RankedTensorType::get({rows, cols}, b.getI64Type());
  Value d = ConstantOp::create(
      b, node.loc(), diagType,
      DenseElementsAttr::get(diagType, ArrayRef<int64_t>(diag)));
  bool upper = node.intAttr("upper", 1) != 0;
  FailureOr<Value> keep = upper ? build<GreaterEqualOp>(node, d, k)
                                : build<LessEqualOp>(node, d, k);
  if (failed(keep))
    return failure();
  return one(build<WhereOp>(node, *keep, *x,
                            scalarConstant(node, type.getElementType(), 0)));
}

FailureOr<SmallVector<Value>> identity(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  return SmallVector<Value>{*x};
}
} // namespace

void mlir::kiln::populateElementwiseConversions(
    std::vector<OnnxConversion> &t) {
  // Opsets 1-6 broadcast only with an explicit attribute; 7 introduced numpy
  // broadcasting, which is what kiln's binary ops implement.
  for (int64_t v : {7, 13, 14}) {
    t.push_back({"Add", v, binary<AddOp>});
    t.push_back({"Sub", v, binary<SubOp>});
    t.push_back({"Mul", v, binary<MulOp>});
    t.push_back({"Div", v, binary<DivOp>});
  }
  for (int64_t v : {7, 12, 13, 15})
    t.push_back({"Pow", v, power});
  for (int64_t v : {8, 12, 13}) {
    t.push_back({"Max", v, variadic<MaxOp>});
    t.push_back({"Min", v, variadic<MinOp>});
  }
  for (int64_t v : {8, 13})
    t.push_back({"Sum", v, variadic<AddOp>});
  for (int64_t v : {6, 13, 14})
    t.push_back({"Relu", v, unary<ReluOp>});
  for (int64_t v : {6, 13}) {
    t.push_back({"Sigmoid", v, unary<SigmoidOp>});
    t.push_back({"Tanh", v, unary<TanhOp>});
    t.push_back({"Exp", v, unary<ExpOp>});
    t.push_back({"Log", v, unary<LogOp>});
    t.push_back({"Sqrt", v, unary<SqrtOp>});
    t.push_back({"Neg", v, negate});
    t.push_back({"Abs", v, unary<AbsOp>});
  }
  for (int64_t v : {9, 13})
    t.push_back({"Erf", v, unary<ErfOp>});
  for (int64_t v : {6, 13}) {
    t.push_back({"Reciprocal", v, unary<ReciprocalOp>});
    t.push_back({"Floor", v, unary<FloorOp>});
    t.push_back({"Ceil", v, unary<CeilOp>});
  }
  t.push_back({"Round", 11, unary<RoundOp>});
  for (int64_t v : {9, 13})
    t.push_back({"Sign", v, unary<SignOp>});
  t.push_back({"Softplus", 1, unary<SoftplusOp>});
  t.push_back({"Softsign", 1, unary<SoftsignOp>});
  t.push_back({"HardSwish", 14, unary<HardSwishOp>});
  t.push_back({"Mish", 18, unary<MishOp>});
  t.push_back({"Sin", 7, unary<SinOp>});
  t.push_back({"Cos", 7, unary<CosOp>});
  t.push_back({"Tan", 7, unary<TanOp>});
  t.push_back({"Asin", 7, unary<AsinOp>});
  t.push_back({"Acos", 7, unary<AcosOp>});
  t.push_back({"Atan", 7, unary<AtanOp>});
  t.push_back({"Sinh", 9, unary<SinhOp>});
  t.push_back({"Cosh", 9, unary<CoshOp>});
  t.push_back({"Asinh", 9, unary<AsinhOp>});
  t.push_back({"Acosh", 9, unary<AcoshOp>});
  t.push_back({"Atanh", 9, unary<AtanhOp>});
  t.push_back({"Celu", 12, [](OnnxNode &node) {
                 return paramUnary<CeluOp>(node, "alpha", 1.0f, nullptr, 0.0f);
               }});
  t.push_back({"Not", 1, [](OnnxNode &n) { return boolOp(n, unary<NotOp>); }});
  for (int64_t v : {6, 16})
    t.push_back({"LeakyRelu", v, [](OnnxNode &node) {
                   return paramUnary<LeakyReluOp>(node, "alpha", 0.01f, nullptr,
                                                  0.0f);
                 }});
  t.push_back({"Elu", 6, [](OnnxNode &node) {
                 return paramUnary<EluOp>(node, "alpha", 1.0f, nullptr, 0.0f);
               }});
  t.push_back({"Selu", 6, [](OnnxNode &node) {
                 return paramUnary<SeluOp>(node, "alpha",
                                           1.67326319217681884765625f, "gamma",
                                           1.05070102214813232421875f);
               }});
  t.push_back({"HardSigmoid", 6, [](OnnxNode &node) {
                 return paramUnary<HardSigmoidOp>(node, "alpha", 0.2f, "beta",
                                                  0.5f);
               }});
  t.push_back({"ThresholdedRelu", 10, [](OnnxNode &node) {
                 return paramUnary<ThresholdedReluOp>(node, "alpha", 1.0f,
                                                      nullptr, 0.0f);
               }});

  // Comparisons and logic: numpy broadcasting from opset 7.
  for (int64_t v : {7, 11, 13, 19})
    t.push_back(
        {"Equal", v, [](OnnxNode &n) { return boolOp(n, compare<EqualOp>); }});
  for (int64_t v : {7, 9, 13}) {
    t.push_back(
        {"Less", v, [](OnnxNode &n) { return boolOp(n, compare<LessOp>); }});
    t.push_back({"Greater", v,
                 [](OnnxNode &n) { return boolOp(n, compare<GreaterOp>); }});
  }
  for (int64_t v : {12, 16}) {
    t.push_back({"LessOrEqual", v,
                 [](OnnxNode &n) { return boolOp(n, compare<LessEqualOp>); }});
    t.push_back({"GreaterOrEqual", v, [](OnnxNode &n) {
                   return boolOp(n, compare<GreaterEqualOp>);
                 }});
  }
  t.push_back({"And", 7, [](OnnxNode &n) { return boolOp(n, binary<AndOp>); }});
  t.push_back({"Or", 7, [](OnnxNode &n) { return boolOp(n, binary<OrOp>); }});
  t.push_back({"Xor", 7, [](OnnxNode &n) { return boolOp(n, binary<XorOp>); }});
  for (int64_t v : {7, 9, 16})
    t.push_back({"PRelu", v, prelu});
  for (int64_t v : {10, 13})
    t.push_back({"Mod", v, mod});
  for (int64_t v : {9, 16})
    t.push_back({"Where", v, [](OnnxNode &n) { return boolOp(n, where); }});
  for (int64_t v : {1, 13, 14, 16})
    t.push_back({"Identity", v, identity});
  for (int64_t v : {6, 9, 13})
    t.push_back({"Cast", v, castNode});
  t.push_back({"CastLike", 15, castLike});
  t.push_back({"BitShift", 11, bitShift});
  t.push_back({"IsInf", 10, isInf});
  for (int64_t v : {9, 13})
    t.push_back({"IsNaN", v, isNaN});
  for (int64_t v : {8, 13})
    t.push_back({"Mean", v, mean});
  t.push_back({"Shrink", 9, shrink});
  t.push_back({"Trilu", 14, trilu});
  for (int64_t v : {7, 10, 12, 13})
    t.push_back({"Dropout", v, dropout});

  // Clip 6: bounds are attributes. Clip 11+: optional constant inputs.
  constexpr double inf = std::numeric_limits<double>::infinity();
  t.push_back({"Clip", 6, [](OnnxNode &node) {
                 return clip(node, node.floatAttr("min", -inf),
                             node.floatAttr("max", inf));
               }});
  for (int64_t v : {11, 12, 13})
    t.push_back({"Clip", v, clipInputs});
}
