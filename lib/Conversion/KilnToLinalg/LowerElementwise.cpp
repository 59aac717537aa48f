//===- LowerElementwise.cpp - elementwise kiln ops to linalg ----*- C++ -*-===//
#include "Lowering.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// The scalar computation of each elementwise op.
std::optional<BodyFn> unaryBody(Operation *op) {
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
  if (isa<TanhOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      return math::TanhOp::create(b, l, a[0]);
    });
  if (isa<ExpOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      return math::ExpOp::create(b, l, a[0]);
    });
  if (isa<LogOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      return math::LogOp::create(b, l, a[0]);
    });
  if (isa<SqrtOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      return math::SqrtOp::create(b, l, a[0]);
    });
  if (isa<NegOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      return arith::NegFOp::create(b, l, a[0]);
    });
  if (isa<AbsOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      return math::AbsFOp::create(b, l, a[0]);
    });
  if (isa<ErfOp>(op))
    return BodyFn([](OpBuilder &b, Location l, ValueRange a) -> Value {
      return math::ErfOp::create(b, l, a[0]);
    });
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

template <typename ArithOp>
BodyFn binaryBody() {
  return [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return ArithOp::create(b, l, a[0], a[1]);
  };
}

/// One element of kiln.cast: integers are signed except i1 (0 or 1), floats
/// go to integers toward zero, anything goes to i1 as "not zero" (NaN too).
Value castScalar(OpBuilder &b, Location l, Value x, Type to) {
  Type from = x.getType();
  if (from == to)
    return x;
  auto fromInt = dyn_cast<IntegerType>(from);
  auto toInt = dyn_cast<IntegerType>(to);
  bool fromBool = fromInt && fromInt.getWidth() == 1;
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
    if (fromBool)
      return arith::ExtUIOp::create(b, l, to, x);
    return arith::ExtSIOp::create(b, l, to, x);
  }
  if (fromInt) {
    if (fromBool)
      return arith::UIToFPOp::create(b, l, to, x);
    return arith::SIToFPOp::create(b, l, to, x);
  }
  if (toInt)
    return arith::FPToSIOp::create(b, l, to, x);
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

/// The float or the signless-integer form of a binary op, by element type.
std::optional<BodyFn> binaryBody(Operation *op) {
  bool isInt = isa<IntegerType>(typeOf(op->getResult(0)).getElementType());
  if (isa<AddOp>(op))
    return isInt ? binaryBody<arith::AddIOp>() : binaryBody<arith::AddFOp>();
  if (isa<SubOp>(op))
    return isInt ? binaryBody<arith::SubIOp>() : binaryBody<arith::SubFOp>();
  if (isa<MulOp>(op))
    return isInt ? binaryBody<arith::MulIOp>() : binaryBody<arith::MulFOp>();
  if (isa<DivOp>(op))
    return isInt ? binaryBody<arith::DivSIOp>() : binaryBody<arith::DivFOp>();
  if (isa<PowOp>(op))
    return binaryBody<math::PowFOp>();
  if (isa<MaxOp>(op))
    return isInt ? binaryBody<arith::MaxSIOp>()
                 : binaryBody<arith::MaximumFOp>();
  if (isa<MinOp>(op))
    return isInt ? binaryBody<arith::MinSIOp>()
                 : binaryBody<arith::MinimumFOp>();
  return std::nullopt;
}
} // namespace

FailureOr<Value> mlir::kiln::lowerElementwise(OpBuilder &b, Operation *op) {
  if (isa<IdentityOp>(op))
    return op->getOperand(0);
  if (auto cast = dyn_cast<CastOp>(op)) {
    RankedTensorType type = cast.getType();
    Type to = type.getElementType();
    return broadcastGeneric(
        b, op->getLoc(), type.getShape(), to, cast.getInput(),
        [to](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          return castScalar(nb, nl, a[0], to);
        });
  }
  std::optional<BodyFn> body = unaryBody(op);
  if (!body)
    body = binaryBody(op);
  if (!body)
    return Value();
  RankedTensorType type = typeOf(op->getResult(0));
  return broadcastGeneric(b, op->getLoc(), type.getShape(),
                          type.getElementType(), op->getOperands(), *body);
}
