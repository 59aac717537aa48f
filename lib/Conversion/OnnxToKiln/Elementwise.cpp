//===- Elementwise.cpp - ONNX elementwise ops -------------------*- C++ -*-===//
#include "ShapeInputs.h"
#include "SymbolicSizes.h"
#include "kiln/Dialect/Kiln/IR/ElementsUtils.h"

#include <cmath>
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
} // namespace

/// Neg. Integer constants are negated here: they are shape arithmetic (an
/// axis count turned into a ConstantOfShape input) that later nodes need as
/// constants.
FailureOr<SmallVector<Value>> mlir::kiln::convertNeg(OnnxNode &node) {
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

namespace {
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
} // namespace

/// Clip 11+: constant float bounds become kiln.clip; run-time bounds (or
/// integer tensors) are a kiln.max and a kiln.min with the bound tensors,
/// which only scale numbers and need no specialization.
FailureOr<SmallVector<Value>> mlir::kiln::convertClip(OnnxNode &node) {
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
FailureOr<SmallVector<Value>> mlir::kiln::convertDropout(OnnxNode &node) {
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
      Attribute one = isa<FloatType>(elt) ? Attribute(FloatAttr::get(elt, 1.0))
                                          : Attribute(IntegerAttr::get(elt, 1));
      // All ones; of the input's run-time sizes, a broadcast scalar.
      bool sized = !xt.hasStaticShape();
      auto mt = RankedTensorType::get(
          sized ? ArrayRef<int64_t>() : xt.getShape(), elt);
      Value mask = ConstantOp::create(node.builder, node.loc(), mt,
                                      DenseElementsAttr::get(mt, one));
      if (sized) {
        FailureOr<Value> m = expandToSizes(node, mask, node.sizes->dims(*x));
        if (failed(m))
          return failure();
        mask = *m;
      }
      results.push_back(mask);
    }
  }
  return results;
}

Type mlir::kiln::onnxElementType(Builder &b, int64_t dataType,
                                 std::string &name) {
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
      {"BFLOAT16", b.getBF16Type()},
      {"FLOAT8E4M3FN", b.getType<Float8E4M3FNType>()},
      {"FLOAT8E4M3FNUZ", b.getType<Float8E4M3FNUZType>()},
      {"FLOAT8E5M2", b.getType<Float8E5M2Type>()},
      {"FLOAT8E5M2FNUZ", b.getType<Float8E5M2FNUZType>()},
      {"UINT4", b.getIntegerType(4, false)},
      {"INT4", b.getIntegerType(4)},
      {"FLOAT4E2M1", b.getType<Float4E2M1FNType>()},
      {"FLOAT8E8M0", b.getType<Float8E8M0FNUType>()},
      {"UINT2", b.getIntegerType(2, false)},
      {"INT2", b.getIntegerType(2)}};
  if (dataType < 0 || dataType >= (int64_t)std::size(types)) {
    name = "data type " + std::to_string(dataType);
    return {};
  }
  name = types[dataType].first;
  return types[dataType].second;
}

namespace {
bool isNumeric(Type t) {
  return t &&
         (isa<FloatType>(t) || t.isSignlessInteger() || t.isUnsignedInteger());
}

/// kiln.cast of `x` to `to` (null when ONNX's type has no Kiln counterpart;
/// `name` names it), with Cast 19's `saturate` and 25's `round_mode`, which
/// concern the float8 targets.
FailureOr<Value> checkedCast(OnnxNode &node, Value x, Type to,
                            const std::string &name) {
  UnitAttr noSaturate;
  StringAttr roundMode;
  bool float8 = to && isNarrowType(to) && isa<FloatType>(to) &&
                !isa<Float4E2M1FNType>(to);
  if (float8 && node.opset >= 19 && node.intAttr("saturate", 1) == 0)
    noSaturate = node.builder.getUnitAttr();
  std::string mode = node.strAttr("round_mode", "up");
  if (mode != "up" && mode != "down" && mode != "nearest") {
    node.fail() << "round_mode '" << mode
                << "' is not one of 'up', 'down' and 'nearest'";
    return failure();
  }
  if (to && isa<Float8E8M0FNUType>(to))
    roundMode = node.builder.getStringAttr(mode);
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
  return build<CastOp>(node, x, TypeAttr::get(to), noSaturate, roundMode);
}
} // namespace

/// Cast 6, 9, 13, 19 (saturate), 21 to 24 (new types), 25 (round_mode).
FailureOr<SmallVector<Value>> mlir::kiln::convertCast(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  if (!node.hasAttr("to")) {
    node.fail() << "the 'to' attribute is required";
    return failure();
  }
  std::string name;
  Type to = onnxElementType(node.builder, node.intAttr("to", 0), name);
  return one(checkedCast(node, *x, to, name));
}

/// CastLike 15: Cast to the element type of the second input.
FailureOr<SmallVector<Value>> mlir::kiln::convertCastLike(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0), like = node.rankedInput(1);
  if (failed(x) || failed(like))
    return failure();
  Type to = cast<RankedTensorType>(like->getType()).getElementType();
  std::string name;
  llvm::raw_string_ostream(name) << to;
  return one(checkedCast(node, *x, to, name));
}

/// Pow: ONNX allows an exponent of another type than the base (Pow 12+);
/// the exponent is converted to the base's element type.
FailureOr<SmallVector<Value>> mlir::kiln::convertPow(OnnxNode &node) {
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

namespace {
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

/// Comparisons, whose operands must share an element type. Comparisons, logic
/// and Where read or produce bools (one byte each in memory; the CPU code
/// generator keeps those accesses scalar).
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
} // namespace

FailureOr<SmallVector<Value>> mlir::kiln::convertWhere(OnnxNode &node) {
  FailureOr<Value> c = node.rankedInput(0), a = node.rankedInput(1),
                   b = node.rankedInput(2);
  if (failed(c) || failed(a) || failed(b))
    return failure();
  if (node.op->hasAttr(kIfJoinAttr)) { // an If's branch results
    FailureOr<std::optional<Value>> joined =
        joinBranchResults(node, *c, *a, *b);
    if (failed(joined))
      return failure();
    if (*joined)
      return SmallVector<Value>{**joined};
  }
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
FailureOr<SmallVector<Value>> mlir::kiln::convertPRelu(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0), slope = node.rankedInput(1);
  if (failed(x) || failed(slope))
    return failure();
  // A symbolic dimension the slope gives a size other than 1 must have it.
  ArrayRef<int64_t> ss = cast<RankedTensorType>(slope->getType()).getShape();
  SmallVector<std::pair<int64_t, int64_t>> pins;
  for (auto [i, d] : llvm::enumerate(llvm::reverse(ss)))
    if (d > 1)
      pins.push_back({typeOf(*x).getRank() - 1 - int64_t(i), d});
  if (failed(x = pinDims(node, *x, pins, "the slope needs the input's")))
    return failure();
  ArrayRef<int64_t> xs = cast<RankedTensorType>(x->getType()).getShape();
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(xs, ss);
  if (failed(shape) || ArrayRef<int64_t>(*shape) != xs) {
    node.fail() << "the slope's shape must broadcast to the input's";
    return failure();
  }
  return one(build<PReluOp>(node, *x, *slope));
}

/// Mod: fmod = 0 is Python's % and ONNX allows it on integers only.
FailureOr<SmallVector<Value>> mlir::kiln::convertMod(OnnxNode &node) {
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
FailureOr<SmallVector<Value>> mlir::kiln::convertBitShift(OnnxNode &node) {
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
FailureOr<SmallVector<Value>> mlir::kiln::convertIsNaN(OnnxNode &node) {
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
FailureOr<SmallVector<Value>> mlir::kiln::convertIsInf(OnnxNode &node) {
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
FailureOr<SmallVector<Value>> mlir::kiln::convertMean(OnnxNode &node) {
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
FailureOr<SmallVector<Value>> mlir::kiln::convertShrink(OnnxNode &node) {
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

namespace {
/// The [rows, cols] table of col - row, a constant.
FailureOr<Value> colMinusRow(OnnxNode &node, int64_t rows, int64_t cols) {
  SmallVector<int64_t> diag;
  diag.reserve(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      diag.push_back(j - i);
  auto diagType =
      RankedTensorType::get({rows, cols}, node.builder.getI64Type());
  return Value(ConstantOp::create(
      node.builder, node.loc(), diagType,
      DenseElementsAttr::get(diagType, ArrayRef<int64_t>(diag))));
}

/// col - row over the last two dimensions of `x`, whose sizes are symbolic.
FailureOr<Value> colMinusRow(OnnxNode &node, Value x) {
  int64_t rank = typeOf(x).getRank();
  return colMinusRowOfSizes(node, node.sizes->dim(x, rank - 2),
                            node.sizes->dim(x, rank - 1), "Trilu");
}
} // namespace

/// Trilu 14: keeps the elements with col - row >= k (upper) or <= k (lower)
/// of the last two dimensions. k may be a run-time input: the col - row
/// table is a constant (built from iotas when the sizes are symbolic) and
/// the comparison with k runs in the graph.
FailureOr<SmallVector<Value>> mlir::kiln::convertTrilu(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  if (type.getRank() < 2) {
    node.fail() << "expects an input of rank 2 or more, got rank "
                << type.getRank();
    return failure();
  }
  bool symbolic = !type.hasStaticShape() && node.sizes;
  if (!symbolic && failed(node.requireStaticShape(type)))
    return failure();
  // An empty matrix stays what it is (and needs no mask).
  if (!symbolic && type.getNumElements() == 0)
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
  FailureOr<Value> d =
      symbolic ? colMinusRow(node, *x) : colMinusRow(node, rows, cols);
  if (failed(d))
    return failure();
  bool upper = node.intAttr("upper", 1) != 0;
  FailureOr<Value> keep = upper ? build<GreaterEqualOp>(node, *d, k)
                                : build<LessEqualOp>(node, *d, k);
  if (failed(keep))
    return failure();
  return one(build<WhereOp>(node, *keep, *x,
                            scalarConstant(node, type.getElementType(), 0)));
}

FailureOr<SmallVector<Value>> mlir::kiln::convertIdentity(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  return SmallVector<Value>{*x};
}

FailureOr<SmallVector<Value>> mlir::kiln::convertAdd(OnnxNode &node) {
  return binary<AddOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertSub(OnnxNode &node) {
  return binary<SubOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertMul(OnnxNode &node) {
  return binary<MulOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertDiv(OnnxNode &node) {
  return binary<DivOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertMax(OnnxNode &node) {
  return variadic<MaxOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertMin(OnnxNode &node) {
  return variadic<MinOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertSum(OnnxNode &node) {
  return variadic<AddOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertRelu(OnnxNode &node) {
  return unary<ReluOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertSigmoid(OnnxNode &node) {
  return unary<SigmoidOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertTanh(OnnxNode &node) {
  return unary<TanhOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertExp(OnnxNode &node) {
  return unary<ExpOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertLog(OnnxNode &node) {
  return unary<LogOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertSqrt(OnnxNode &node) {
  return unary<SqrtOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertAbs(OnnxNode &node) {
  return unary<AbsOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertErf(OnnxNode &node) {
  return unary<ErfOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertReciprocal(OnnxNode &node) {
  return unary<ReciprocalOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertFloor(OnnxNode &node) {
  return unary<FloorOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertCeil(OnnxNode &node) {
  return unary<CeilOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertRound(OnnxNode &node) {
  return unary<RoundOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertSign(OnnxNode &node) {
  return unary<SignOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertSoftplus(OnnxNode &node) {
  return unary<SoftplusOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertSoftsign(OnnxNode &node) {
  return unary<SoftsignOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertHardSwish(OnnxNode &node) {
  return unary<HardSwishOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertMish(OnnxNode &node) {
  return unary<MishOp>(node);
}

/// Gelu 20: 0.5 x (1 + erf(x / sqrt 2)), or with approximate = "tanh"
/// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), as elementwise kiln
/// ops that the code generator fuses into one loop.
FailureOr<Value> mlir::kiln::gelu(OnnxNode &node, Value x, bool tanh) {
  Type elt = elementOf(x);
  auto c = [&](double v) { return scalarConstant(node, elt, v); };
  FailureOr<Value> inner;
  if (!tanh) {
    inner = build<MulOp>(node, x, c(M_SQRT1_2));
    if (succeeded(inner))
      inner = build<ErfOp>(node, *inner);
  } else {
    FailureOr<Value> cube = build<MulOp>(node, x, x);
    if (succeeded(cube))
      cube = build<MulOp>(node, *cube, x);
    if (succeeded(cube))
      cube = build<MulOp>(node, *cube, c(0.044715));
    if (succeeded(cube))
      inner = build<AddOp>(node, x, *cube);
    if (succeeded(inner))
      inner = build<MulOp>(node, *inner, c(std::sqrt(2.0 / M_PI)));
    if (succeeded(inner))
      inner = build<TanhOp>(node, *inner);
  }
  if (succeeded(inner))
    inner = build<AddOp>(node, *inner, c(1.0));
  FailureOr<Value> half = build<MulOp>(node, x, c(0.5));
  if (failed(inner) || failed(half))
    return failure();
  return build<MulOp>(node, *half, *inner);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertGelu(OnnxNode &node) {
  FailureOr<Value> x = elementwiseFloatInput(node, 0);
  if (failed(x))
    return failure();
  std::string approximate = node.strAttr("approximate", "none");
  if (approximate != "none" && approximate != "tanh") {
    node.fail() << "approximate '" << approximate
                << "' is not one of Gelu's: none, tanh";
    return failure();
  }
  return one(gelu(node, *x, approximate == "tanh"));
}

FailureOr<SmallVector<Value>> mlir::kiln::convertSin(OnnxNode &node) {
  return unary<SinOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertCos(OnnxNode &node) {
  return unary<CosOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertTan(OnnxNode &node) {
  return unary<TanOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertAsin(OnnxNode &node) {
  return unary<AsinOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertAcos(OnnxNode &node) {
  return unary<AcosOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertAtan(OnnxNode &node) {
  return unary<AtanOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertSinh(OnnxNode &node) {
  return unary<SinhOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertCosh(OnnxNode &node) {
  return unary<CoshOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertAsinh(OnnxNode &node) {
  return unary<AsinhOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertAcosh(OnnxNode &node) {
  return unary<AcoshOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertAtanh(OnnxNode &node) {
  return unary<AtanhOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertCelu(OnnxNode &node) {
  return paramUnary<CeluOp>(node, "alpha", 1.0f, nullptr, 0.0f);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertNot(OnnxNode &node) {
  return unary<NotOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertLeakyRelu(OnnxNode &node) {
  return paramUnary<LeakyReluOp>(node, "alpha", 0.01f, nullptr, 0.0f);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertElu(OnnxNode &node) {
  return paramUnary<EluOp>(node, "alpha", 1.0f, nullptr, 0.0f);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertSelu(OnnxNode &node) {
  return paramUnary<SeluOp>(node, "alpha", 1.67326319217681884765625f, "gamma",
                            1.05070102214813232421875f);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertHardSigmoid(OnnxNode &node) {
  return paramUnary<HardSigmoidOp>(node, "alpha", 0.2f, "beta", 0.5f);
}

FailureOr<SmallVector<Value>>
mlir::kiln::convertThresholdedRelu(OnnxNode &node) {
  return paramUnary<ThresholdedReluOp>(node, "alpha", 1.0f, nullptr, 0.0f);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertEqual(OnnxNode &node) {
  return compare<EqualOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertLess(OnnxNode &node) {
  return compare<LessOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertGreater(OnnxNode &node) {
  return compare<GreaterOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertLessOrEqual(OnnxNode &node) {
  return compare<LessEqualOp>(node);
}

FailureOr<SmallVector<Value>>
mlir::kiln::convertGreaterOrEqual(OnnxNode &node) {
  return compare<GreaterEqualOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertAnd(OnnxNode &node) {
  return binary<AndOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertOr(OnnxNode &node) {
  return binary<OrOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertXor(OnnxNode &node) {
  return binary<XorOp>(node);
}

/// Clip 6: the bounds are attributes.
FailureOr<SmallVector<Value>> mlir::kiln::convertClip6(OnnxNode &node) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  return clip(node, node.floatAttr("min", -inf), node.floatAttr("max", inf));
}
