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

std::optional<BodyFn> binaryBody(Operation *op) {
  if (isa<AddOp>(op))
    return binaryBody<arith::AddFOp>();
  if (isa<SubOp>(op))
    return binaryBody<arith::SubFOp>();
  if (isa<MulOp>(op))
    return binaryBody<arith::MulFOp>();
  if (isa<DivOp>(op))
    return binaryBody<arith::DivFOp>();
  if (isa<PowOp>(op))
    return binaryBody<math::PowFOp>();
  if (isa<MaxOp>(op))
    return binaryBody<arith::MaximumFOp>();
  if (isa<MinOp>(op))
    return binaryBody<arith::MinimumFOp>();
  return std::nullopt;
}
} // namespace

FailureOr<Value> mlir::kiln::lowerElementwise(OpBuilder &b, Operation *op) {
  if (isa<IdentityOp>(op))
    return op->getOperand(0);
  std::optional<BodyFn> body = unaryBody(op);
  if (!body)
    body = binaryBody(op);
  if (!body)
    return Value();
  RankedTensorType type = typeOf(op->getResult(0));
  return broadcastGeneric(b, op->getLoc(), type.getShape(),
                          type.getElementType(), op->getOperands(), *body);
}
