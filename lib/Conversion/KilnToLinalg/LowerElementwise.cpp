//===- LowerElementwise.cpp - elementwise kiln ops to linalg ----*- C++ -*-===//
#include "Lowering.h"

#include "kiln/Dialect/Kiln/IR/ElementsUtils.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|)).
Value softplus(OpBuilder &b, Location l, Value x) {
  Type t = x.getType();
  Value pos = arith::MaximumFOp::create(b, l, x, floatConst(b, l, t, 0.0));
  Value negAbs = arith::NegFOp::create(b, l, math::AbsFOp::create(b, l, x));
  Value tail = math::Log1pOp::create(b, l, math::ExpOp::create(b, l, negAbs));
  return arith::AddFOp::create(b, l, pos, tail);
}

/// max(0, min(1, alpha * x + beta)).
Value hardSigmoid(OpBuilder &b, Location l, Value x, double alpha,
                  double beta) {
  Type t = x.getType();
  Value v = arith::MulFOp::create(b, l, x, floatConst(b, l, t, alpha));
  v = arith::AddFOp::create(b, l, v, floatConst(b, l, t, beta));
  v = arith::MinimumFOp::create(b, l, v, floatConst(b, l, t, 1.0));
  return arith::MaximumFOp::create(b, l, v, floatConst(b, l, t, 0.0));
}

/// The body of an elementwise function that is one math-dialect op.
template <typename MathOp> BodyFn mathBody() {
  return [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return MathOp::create(b, l, a[0]);
  };
}

/// The float functions that are one math-dialect op of the element.
std::optional<BodyFn> mathFunctionBody(Operation *op) {
  if (isa<TanhOp>(op))
    return mathBody<math::TanhOp>();
  if (isa<ExpOp>(op))
    return mathBody<math::ExpOp>();
  if (isa<LogOp>(op))
    return mathBody<math::LogOp>();
  if (isa<SqrtOp>(op))
    return mathBody<math::SqrtOp>();
  if (isa<AbsOp>(op))
    return mathBody<math::AbsFOp>();
  if (isa<ErfOp>(op))
    return mathBody<math::ErfOp>();
  if (isa<FloorOp>(op))
    return mathBody<math::FloorOp>();
  if (isa<CeilOp>(op))
    return mathBody<math::CeilOp>();
  if (isa<RoundOp>(op))
    return mathBody<math::RoundEvenOp>();
  if (isa<SinOp>(op))
    return mathBody<math::SinOp>();
  if (isa<CosOp>(op))
    return mathBody<math::CosOp>();
  if (isa<TanOp>(op))
    return mathBody<math::TanOp>();
  if (isa<AsinOp>(op))
    return mathBody<math::AsinOp>();
  if (isa<AcosOp>(op))
    return mathBody<math::AcosOp>();
  if (isa<AtanOp>(op))
    return mathBody<math::AtanOp>();
  if (isa<SinhOp>(op))
    return mathBody<math::SinhOp>();
  if (isa<CoshOp>(op))
    return mathBody<math::CoshOp>();
  return std::nullopt;
}

/// Neg, Abs and Sign of signed integers (two's complement: the minimum value
/// stays itself under neg and abs, as in numpy).
std::optional<BodyFn> signedIntBody(Operation *op) {
  if (isa<NegOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value zero =
          arith::ConstantOp::create(b, l, b.getIntegerAttr(a[0].getType(), 0));
      return arith::SubIOp::create(b, l, zero, a[0]);
    });
  // max(x, -x): math.absi has no lowering in the CPU pipeline.
  if (isa<AbsOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value zero =
          arith::ConstantOp::create(b, l, b.getIntegerAttr(a[0].getType(), 0));
      Value neg = arith::SubIOp::create(b, l, zero, a[0]);
      return arith::MaxSIOp::create(b, l, a[0], neg);
    });
  if (isa<SignOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      Type t = a[0].getType();
      auto cst = [&](int64_t v) -> Value {
        return arith::ConstantOp::create(b, l, b.getIntegerAttr(t, v));
      };
      Value neg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, a[0],
                                        cst(0));
      Value pos = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, a[0],
                                        cst(0));
      Value v = arith::SelectOp::create(b, l, neg, cst(-1), cst(0));
      return arith::SelectOp::create(b, l, pos, cst(1), v);
    });
  return std::nullopt;
}

/// The activations with attributes (alpha, beta, gamma, Clip's bounds).
std::optional<BodyFn> activationBody(Operation *op) {
  if (auto p = dyn_cast<CeluOp>(op)) {
    double alpha = p.getAlpha().convertToDouble();
    return BodyFn([=](OpBuilder &b, Location l, ValueRange a) -> Value {
      Type t = a[0].getType();
      Value zero = floatConst(b, l, t, 0.0);
      Value scaled =
          arith::DivFOp::create(b, l, a[0], floatConst(b, l, t, alpha));
      Value em1 = arith::MulFOp::create(b, l, floatConst(b, l, t, alpha),
                                        math::ExpM1Op::create(b, l, scaled));
      Value pos = arith::MaximumFOp::create(b, l, a[0], zero);
      Value neg = arith::MinimumFOp::create(b, l, em1, zero);
      return arith::AddFOp::create(b, l, pos, neg);
    });
  }
  if (auto p = dyn_cast<HardSigmoidOp>(op)) {
    double alpha = p.getAlpha().convertToDouble();
    double beta = p.getBeta().convertToDouble();
    return BodyFn([=](OpBuilder &b, Location l, ValueRange a) -> Value {
      return hardSigmoid(b, l, a[0], alpha, beta);
    });
  }
  if (auto p = dyn_cast<LeakyReluOp>(op)) {
    double alpha = p.getAlpha().convertToDouble();
    return BodyFn([=](OpBuilder &b, Location l, ValueRange a) -> Value {
      Type t = a[0].getType();
      Value neg = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, a[0],
                                        floatConst(b, l, t, 0.0));
      Value scaled =
          arith::MulFOp::create(b, l, a[0], floatConst(b, l, t, alpha));
      return arith::SelectOp::create(b, l, neg, scaled, a[0]);
    });
  }
  // Elu is Selu with gamma 1; Elu is negative below 0, Selu at or below 0
  // (the same value at 0).
  if (isa<EluOp, SeluOp>(op)) {
    double alpha = op->getAttrOfType<FloatAttr>("alpha").getValueAsDouble();
    double gamma = 1.0;
    if (auto selu = dyn_cast<SeluOp>(op))
      gamma = selu.getBeta().convertToDouble();
    return BodyFn([=](OpBuilder &b, Location l, ValueRange a) -> Value {
      Type t = a[0].getType();
      Value neg = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, a[0],
                                        floatConst(b, l, t, 0.0));
      Value em1 = math::ExpM1Op::create(b, l, a[0]);
      Value scaled =
          arith::MulFOp::create(b, l, em1, floatConst(b, l, t, alpha));
      Value v = arith::SelectOp::create(b, l, neg, scaled, a[0]);
      if (gamma == 1.0)
        return v;
      return arith::MulFOp::create(b, l, v, floatConst(b, l, t, gamma));
    });
  }
  if (auto p = dyn_cast<ThresholdedReluOp>(op)) {
    double alpha = p.getAlpha().convertToDouble();
    return BodyFn([=](OpBuilder &b, Location l, ValueRange a) -> Value {
      Type t = a[0].getType();
      Value keep = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, a[0],
                                         floatConst(b, l, t, alpha));
      return arith::SelectOp::create(b, l, keep, a[0],
                                     floatConst(b, l, t, 0.0));
    });
  }
  if (auto clip = dyn_cast<ClipOp>(op)) {
    double lo = clip.getMin().convertToDouble();
    double hi = clip.getMax().convertToDouble();
    return BodyFn([lo, hi](OpBuilder &b, Location l, ValueRange a) -> Value {
      Type t = a[0].getType();
      Value v = a[0];
      if (!std::isinf(lo))
        v = arith::MaximumFOp::create(b, l, v, floatConst(b, l, t, lo));
      if (!std::isinf(hi))
        v = arith::MinimumFOp::create(b, l, v, floatConst(b, l, t, hi));
      return v;
    });
  }
  return std::nullopt;
}

/// The scalar computation of each unary elementwise op.
std::optional<BodyFn> unaryBody(Operation *op) {
  if (isa<IntegerType>(typeOf(op->getResult(0)).getElementType()))
    if (std::optional<BodyFn> body = signedIntBody(op))
      return body;
  if (std::optional<BodyFn> body = mathFunctionBody(op))
    return body;
  if (std::optional<BodyFn> body = activationBody(op))
    return body;
  if (isa<ReluOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      return arith::MaximumFOp::create(b, l, a[0],
                                       floatConst(b, l, a[0].getType(), 0.0));
    });
  if (isa<SigmoidOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      Type t = a[0].getType();
      Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, a[0]));
      Value d = arith::AddFOp::create(b, l, floatConst(b, l, t, 1.0), e);
      return arith::DivFOp::create(b, l, floatConst(b, l, t, 1.0), d);
    });
  if (isa<NegOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      return arith::NegFOp::create(b, l, a[0]);
    });
  if (isa<ReciprocalOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      return arith::DivFOp::create(b, l, floatConst(b, l, a[0].getType(), 1.0),
                                   a[0]);
    });
  // The inverse hyperbolic functions from log and sqrt (the math dialect's
  // own do not lower on vectors in the CPU pipeline).
  if (isa<AsinhOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      // copysign(log(|x| + sqrt(x^2 + 1)), x): exact symmetry, no cancellation.
      Type t = a[0].getType();
      Value ax = math::AbsFOp::create(b, l, a[0]);
      Value sq = arith::AddFOp::create(
          b, l, arith::MulFOp::create(b, l, ax, ax), floatConst(b, l, t, 1.0));
      Value r = math::LogOp::create(
          b, l,
          arith::AddFOp::create(b, l, ax, math::SqrtOp::create(b, l, sq)));
      return math::CopySignOp::create(b, l, r, a[0]);
    });
  if (isa<AcoshOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      // log(x + sqrt(x^2 - 1)); NaN below 1 as in ONNX.
      Type t = a[0].getType();
      Value sq =
          arith::SubFOp::create(b, l, arith::MulFOp::create(b, l, a[0], a[0]),
                                floatConst(b, l, t, 1.0));
      return math::LogOp::create(
          b, l,
          arith::AddFOp::create(b, l, a[0], math::SqrtOp::create(b, l, sq)));
    });
  if (isa<AtanhOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      // (log1p(x) - log1p(-x)) / 2.
      Type t = a[0].getType();
      Value up = math::Log1pOp::create(b, l, a[0]);
      Value down =
          math::Log1pOp::create(b, l, arith::NegFOp::create(b, l, a[0]));
      Value d = arith::SubFOp::create(b, l, up, down);
      return arith::MulFOp::create(b, l, d, floatConst(b, l, t, 0.5));
    });
  if (isa<SignOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      // x > 0 ? 1 : x < 0 ? -1 : x, so zeros and NaN pass through.
      Type t = a[0].getType();
      Value zero = floatConst(b, l, t, 0.0);
      Value neg =
          arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, a[0], zero);
      Value pos =
          arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, a[0], zero);
      Value v =
          arith::SelectOp::create(b, l, neg, floatConst(b, l, t, -1.0), a[0]);
      return arith::SelectOp::create(b, l, pos, floatConst(b, l, t, 1.0), v);
    });
  if (isa<SoftplusOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      return softplus(b, l, a[0]);
    });
  if (isa<MishOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      return arith::MulFOp::create(
          b, l, a[0], math::TanhOp::create(b, l, softplus(b, l, a[0])));
    });
  if (isa<SoftsignOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      Type t = a[0].getType();
      Value d = arith::AddFOp::create(b, l, floatConst(b, l, t, 1.0),
                                      math::AbsFOp::create(b, l, a[0]));
      return arith::DivFOp::create(b, l, a[0], d);
    });
  if (isa<HardSwishOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      return arith::MulFOp::create(b, l, a[0],
                                   hardSigmoid(b, l, a[0], 1.0 / 6.0, 0.5));
    });
  if (isa<NotOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      Type t = a[0].getType();
      Value ones = arith::ConstantOp::create(
          b, l,
          IntegerAttr::get(t, APInt::getAllOnes(t.getIntOrFloatBitWidth())));
      return arith::XOrIOp::create(b, l, a[0], ones);
    });
  return std::nullopt;
}

template <typename ArithOp>
BodyFn binaryBody() {
  return [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return ArithOp::create(b, l, a[0], a[1]);
  };
}

/// One element of kiln.bitcast (`x` and `to` signless): a bool is the byte
/// 0 or 1, a byte is the bool "not zero", other types keep their bits.
Value bitcastScalar(OpBuilder &b, Location l, Value x, Type to) {
  Type from = x.getType();
  if (from == to)
    return x;
  if (from.isInteger(1) || to.isInteger(1))
    return castScalar(b, l, x, to, /*fromUnsigned=*/true, /*toUnsigned=*/true);
  return arith::BitcastOp::create(b, l, to, x);
}

/// Integer division and remainder never trap (x86 faults on a zero divisor
/// and on INT_MIN / -1): a zero divisor gives 0 (ONNX leaves it undefined),
/// and a signed divisor of -1 divides as negation (remainder 0).
Value safeDivRem(OpBuilder &b, Location l, Value x, Value d, bool isUnsigned,
                 bool isRem) {
  Type t = x.getType();
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, l, b.getIntegerAttr(t, v));
  };
  Value zero = c(0), one = c(1);
  Value isZero = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, d, zero);
  Value special = isZero;
  Value isMinusOne;
  if (!isUnsigned) {
    isMinusOne =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, d, c(-1));
    special = arith::OrIOp::create(b, l, isZero, isMinusOne);
  }
  Value safe = arith::SelectOp::create(b, l, special, one, d);
  Value r;
  if (isRem)
    r = isUnsigned ? Value(arith::RemUIOp::create(b, l, x, safe))
                   : Value(arith::RemSIOp::create(b, l, x, safe));
  else
    r = isUnsigned ? Value(arith::DivUIOp::create(b, l, x, safe))
                   : Value(arith::DivSIOp::create(b, l, x, safe));
  if (!isUnsigned && !isRem)
    r = arith::SelectOp::create(b, l, isMinusOne,
                                arith::SubIOp::create(b, l, zero, x), r);
  return arith::SelectOp::create(b, l, isZero, zero, r);
}

BodyFn divRemBody(bool isUnsigned, bool isRem) {
  return [=](OpBuilder &b, Location l, ValueRange a) -> Value {
    return safeDivRem(b, l, a[0], a[1], isUnsigned, isRem);
  };
}

/// The float or the signless-integer form of a binary op, by element type.
std::optional<BodyFn> binaryBody(Operation *op) {
  bool isInt = isa<IntegerType>(typeOf(op->getResult(0)).getElementType());
  bool isUnsigned = isUnsignedInt(op->getResult(0).getType());
  if (isa<AddOp>(op))
    return isInt ? binaryBody<arith::AddIOp>() : binaryBody<arith::AddFOp>();
  if (isa<SubOp>(op))
    return isInt ? binaryBody<arith::SubIOp>() : binaryBody<arith::SubFOp>();
  if (isa<MulOp>(op))
    return isInt ? binaryBody<arith::MulIOp>() : binaryBody<arith::MulFOp>();
  if (isa<DivOp>(op))
    return isInt ? divRemBody(isUnsigned, /*isRem=*/false)
                 : binaryBody<arith::DivFOp>();
  if (isa<PowOp>(op))
    return binaryBody<math::PowFOp>();
  if (isa<MaxOp>(op))
    return !isInt       ? binaryBody<arith::MaximumFOp>()
           : isUnsigned ? binaryBody<arith::MaxUIOp>()
                        : binaryBody<arith::MaxSIOp>();
  if (isa<AndOp>(op))
    return binaryBody<arith::AndIOp>();
  if (isa<OrOp>(op))
    return binaryBody<arith::OrIOp>();
  if (isa<XorOp>(op))
    return binaryBody<arith::XOrIOp>();
  if (isa<PReluOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value neg = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, a[0],
                                        floatConst(b, l, a[0].getType(), 0.0));
      Value scaled = arith::MulFOp::create(b, l, a[0], a[1]);
      return arith::SelectOp::create(b, l, neg, scaled, a[0]);
    });
  if (auto mod = dyn_cast<ModOp>(op)) {
    if (!isInt)
      return binaryBody<arith::RemFOp>();
    // Unsigned remainders are non-negative: both signs agree.
    if (isUnsigned)
      return divRemBody(/*isUnsigned=*/true, /*isRem=*/true);
    if (mod.getFmod())
      return divRemBody(/*isUnsigned=*/false, /*isRem=*/true);
    // Python's %: a non-zero remainder whose sign differs from the divisor's
    // gets the divisor added.
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value r = safeDivRem(b, l, a[0], a[1], /*isUnsigned=*/false,
                           /*isRem=*/true);
      Value zero =
          arith::ConstantOp::create(b, l, b.getIntegerAttr(r.getType(), 0));
      Value rNeg =
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, r, zero);
      Value dNeg =
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, a[1], zero);
      Value nonZero =
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, r, zero);
      Value differ = arith::XOrIOp::create(b, l, rNeg, dNeg);
      Value fix = arith::AndIOp::create(b, l, nonZero, differ);
      Value adjusted = arith::AddIOp::create(b, l, r, a[1]);
      return arith::SelectOp::create(b, l, fix, adjusted, r);
    });
  }
  if (isa<WhereOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      return arith::SelectOp::create(b, l, a[0], a[1], a[2]);
    });
  if (isa<EqualOp, LessOp, LessEqualOp, GreaterOp, GreaterEqualOp>(op)) {
    // Signed integer and ordered float predicates (NaN compares false);
    // bools and `ui` types compare as unsigned.
    Type elt = typeOf(op->getOperand(0)).getElementType();
    bool uns = elt.isInteger(1) || elt.isUnsignedInteger();
    using IP = arith::CmpIPredicate;
    using FP = arith::CmpFPredicate;
    std::pair<IP, FP> preds =
        isa<EqualOp>(op)       ? std::pair{IP::eq, FP::OEQ}
        : isa<LessOp>(op)      ? std::pair{uns ? IP::ult : IP::slt, FP::OLT}
        : isa<LessEqualOp>(op) ? std::pair{uns ? IP::ule : IP::sle, FP::OLE}
        : isa<GreaterOp>(op)   ? std::pair{uns ? IP::ugt : IP::sgt, FP::OGT}
                               : std::pair{uns ? IP::uge : IP::sge, FP::OGE};
    if (isa<IntegerType>(elt))
      return BodyFn(
          [p = preds.first](OpBuilder &b, Location l, ValueRange a) -> Value {
            return arith::CmpIOp::create(b, l, p, a[0], a[1]);
          });
    return BodyFn(
        [p = preds.second](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::CmpFOp::create(b, l, p, a[0], a[1]);
        });
  }
  if (auto shift = dyn_cast<BitShiftOp>(op)) {
    // A shift by the width or more is poison in arith; ONNX means all bits
    // shifted out (the sign fills an arithmetic right shift).
    bool left = shift.getLeft();
    return BodyFn([left, isUnsigned](OpBuilder &b, Location l,
                                     ValueRange a) -> Value {
      Type t = a[0].getType();
      unsigned w = t.getIntOrFloatBitWidth();
      Value width = arith::ConstantOp::create(b, l, b.getIntegerAttr(t, w));
      Value tooFar =
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::uge, a[1], width);
      if (!left && !isUnsigned) {
        Value maxShift =
            arith::ConstantOp::create(b, l, b.getIntegerAttr(t, w - 1));
        Value n = arith::SelectOp::create(b, l, tooFar, maxShift, a[1]);
        return arith::ShRSIOp::create(b, l, a[0], n);
      }
      Value v = left ? Value(arith::ShLIOp::create(b, l, a[0], a[1]))
                     : Value(arith::ShRUIOp::create(b, l, a[0], a[1]));
      Value zero = arith::ConstantOp::create(b, l, b.getIntegerAttr(t, 0));
      return arith::SelectOp::create(b, l, tooFar, zero, v);
    });
  }
  if (isa<MinOp>(op))
    return !isInt       ? binaryBody<arith::MinimumFOp>()
           : isUnsigned ? binaryBody<arith::MinUIOp>()
                        : binaryBody<arith::MinSIOp>();
  return std::nullopt;
}
} // namespace

/// One element of kiln.cast: integers are signed except i1 (0 or 1) and
/// those the kiln types marked unsigned (`x` and `to` are signless here),
/// floats go to integers toward zero, anything goes to i1 as "not zero" (NaN
/// too).
Value mlir::kiln::castScalar(OpBuilder &b, Location l, Value x, Type to,
                             bool fromUnsigned, bool toUnsigned) {
  Type from = x.getType();
  if (from == to)
    return x;
  auto fromInt = dyn_cast<IntegerType>(from);
  auto toInt = dyn_cast<IntegerType>(to);
  // Bools (0 or 1) and unsigned integers zero-extend and convert unsigned.
  bool fromUnsignedInt =
      fromInt && (fromInt.getWidth() == 1 || fromUnsigned);
  if (toInt && toInt.getWidth() == 1) {
    if (fromInt)
      return arith::CmpIOp::create(
          b, l, arith::CmpIPredicate::ne, x,
          arith::ConstantOp::create(b, l, b.getIntegerAttr(from, 0)));
    return arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNE, x,
                                 floatConst(b, l, from, 0.0));
  }
  if (fromInt && toInt) {
    if (toInt.getWidth() < fromInt.getWidth())
      return arith::TruncIOp::create(b, l, to, x);
    if (fromUnsignedInt)
      return arith::ExtUIOp::create(b, l, to, x);
    return arith::ExtSIOp::create(b, l, to, x);
  }
  if (fromInt) {
    if (fromUnsignedInt)
      return arith::UIToFPOp::create(b, l, to, x);
    return arith::SIToFPOp::create(b, l, to, x);
  }
  if (toInt)
    return toUnsigned ? Value(arith::FPToUIOp::create(b, l, to, x))
                      : Value(arith::FPToSIOp::create(b, l, to, x));
  unsigned fromBits = from.getIntOrFloatBitWidth(),
           toBits = to.getIntOrFloatBitWidth();
  if (toBits > fromBits)
    return arith::ExtFOp::create(b, l, to, x);
  if (toBits < fromBits)
    return arith::TruncFOp::create(b, l, to, x);
  // Same width, other format (f16 <-> bf16): through f32, which holds both.
  Value wide = arith::ExtFOp::create(b, l, b.getF32Type(), x);
  return arith::TruncFOp::create(b, l, to, wide);
}

FailureOr<Value> mlir::kiln::lowerElementwise(OpBuilder &b, Operation *op) {
  if (isa<IdentityOp>(op))
    return op->getOperand(0);
  if (auto cast = dyn_cast<CastOp>(op)) {
    RankedTensorType type = cast.getType();
    bool fromUnsigned = isUnsignedInt(cast.getInput().getType());
    bool toUnsigned = isUnsignedInt(type);
    Type to = signlessType(type.getElementType());
    Type fromElt = typeOf(cast.getInput()).getElementType();
    Type toElt = type.getElementType();
    bool saturate = !cast.getNoSaturate();
    std::string roundMode = cast.getRoundMode().value_or("up").str();
    return broadcastGeneric(
        b, op->getLoc(), type.getShape(), to,
        asSignless(b, op->getLoc(), cast.getInput()),
        [=](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          if (isNarrowType(fromElt) || isNarrowType(toElt))
            return narrowCastScalar(nb, nl, a[0], fromElt, toElt, saturate,
                                    roundMode);
          return castScalar(nb, nl, a[0], to, fromUnsigned, toUnsigned);
        },
        dynamicDims(b, op->getLoc(), cast.getInput()));
  }
  if (auto bitcast = dyn_cast<BitCastOp>(op)) {
    RankedTensorType type = bitcast.getType();
    Type to = signlessType(type.getElementType());
    return broadcastGeneric(
        b, op->getLoc(), type.getShape(), to,
        asSignless(b, op->getLoc(), bitcast.getInput()),
        [=](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          return bitcastScalar(nb, nl, a[0], to);
        },
        dynamicDims(b, op->getLoc(), bitcast.getInput()));
  }
  std::optional<BodyFn> body = elementwiseBody(op);
  if (!body)
    return Value();
  // Unsigned operands compute as signless with the unsigned arith ops the
  // bodies picked above.
  RankedTensorType type = typeOf(op->getResult(0));
  SmallVector<Value> operands;
  for (Value v : op->getOperands())
    operands.push_back(asSignless(b, op->getLoc(), v));
  FailureOr<SmallVector<Value>> dyn =
      broadcastDims(b, op->getLoc(), type.getShape(), operands);
  if (failed(dyn))
    return op->emitError() << "result type " << type
                           << " has a symbolic dimension that no operand "
                              "carries; give the symbolic dimensions sizes";
  return broadcastGeneric(b, op->getLoc(), type.getShape(),
                          signlessType(type.getElementType()), operands, *body,
                          *dyn);
}

std::optional<BodyFn> mlir::kiln::elementwiseBody(Operation *op) {
  if (std::optional<BodyFn> body = unaryBody(op))
    return body;
  return binaryBody(op);
}

bool mlir::kiln::isElementwise(Operation *op) {
  if (op->getNumResults() != 1 ||
      !isa<RankedTensorType>(op->getResult(0).getType()))
    return false;
  return isa<IdentityOp, CastOp, BitCastOp>(op) || elementwiseBody(op);
}
