//===- LowerRandom.cpp - kiln.random ----------------------------*- C++ -*-===//
//
// kiln.random becomes a call of the runtime's `__kiln_random_key` (a new
// 64-bit key on every call: runtime/src/runtime.c) and one elementwise
// generic over the result. Element i (row-major) is splitmix64's output
// function of key + (i + 1) * 0x9E3779B97F4A7C15, the generator of
// splitmix64 itself: a counter-based stream that passes BigCrush, with no
// state between elements, so the generic tiles, vectorizes and runs on any
// number of threads like any other. From the 64 bits:
//   uniform f32: the top 24 bits times 2^-24, on [0, 1 - 2^-24];
//   uniform f64: the top 53 bits times 2^-53;
//   normal: Box-Muller on both 32-bit halves, sqrt(-2 ln u1) cos(2 pi u2)
//   with u1 = (hi + 1) 2^-32 in (0, 1] and u2 = lo 2^-32 (|z| <= 6.7).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;

namespace {
func::FuncOp randomKeyFn(ModuleOp module) {
  if (auto f = module.lookupSymbol<func::FuncOp>(kRandomKeyFn))
    return f;
  OpBuilder mb(module.getBodyRegion());
  auto f = func::FuncOp::create(
      mb, module.getLoc(), kRandomKeyFn,
      mb.getFunctionType({mb.getI64Type(), mb.getI32Type()},
                         {mb.getI64Type()}));
  f.setPrivate();
  return f;
}

Value i64Const(OpBuilder &b, Location loc, uint64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr((int64_t)v));
}

/// splitmix64's output function.
Value mix(OpBuilder &b, Location loc, Value x) {
  auto step = [&](Value v, int64_t shift, uint64_t mul) {
    Value s = arith::ShRUIOp::create(b, loc, v, i64Const(b, loc, shift));
    Value x = arith::XOrIOp::create(b, loc, v, s);
    return mul ? Value(arith::MulIOp::create(b, loc, x, i64Const(b, loc, mul)))
               : x;
  };
  x = step(x, 30, 0xBF58476D1CE4E5B9ull);
  x = step(x, 27, 0x94D049BB133111EBull);
  return step(x, 31, 0);
}

/// `bits` (u64) >> shift as a float of type `t`, times 2^-(64 - shift).
Value unitFloat(OpBuilder &b, Location loc, Value bits, int64_t shift, Type t) {
  Value top = arith::ShRUIOp::create(b, loc, bits, i64Const(b, loc, shift));
  Value f = arith::UIToFPOp::create(b, loc, t, top);
  return arith::MulFOp::create(
      b, loc, f, floatConst(b, loc, t, std::ldexp(1.0, (int)shift - 64)));
}
} // namespace

FailureOr<Value> mlir::kiln::lowerRandom(OpBuilder &b, Operation *op) {
  auto random = dyn_cast<RandomOp>(op);
  if (!random)
    return Value();
  Location loc = op->getLoc();
  RankedTensorType type = random.getType();
  Type elt = type.getElementType();
  func::FuncOp callee = randomKeyFn(op->getParentOfType<ModuleOp>());
  Value seed = i64Const(b, loc, (uint64_t)random.getSeed());
  Value seeded = arith::ConstantOp::create(
      b, loc, b.getI32IntegerAttr(random.getSeeded() ? 1 : 0));
  Value key = func::CallOp::create(b, loc, callee, ValueRange{seed, seeded})
                  .getResult(0);
  SmallVector<Value> dyn;
  if (random.getLike())
    dyn = dynamicDims(b, loc, random.getLike());
  Value init = emptyTensor(b, loc, type.getShape(), elt, dyn);
  int64_t rank = type.getRank();
  bool normal = random.getDistribution() == "normal";
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{}, ValueRange{init},
      SmallVector<AffineMap>{b.getMultiDimIdentityMap(rank)}, iters,
      [&](OpBuilder &nb, Location nl, ValueRange) {
        // The row-major position, from the indices and the result's sizes.
        Value pos = rank ? Value(linalg::IndexOp::create(nb, nl, 0))
                         : Value(arith::ConstantIndexOp::create(nb, nl, 0));
        for (int64_t d = 1; d < rank; ++d) {
          Value size = type.isDynamicDim(d)
                           ? Value(tensor::DimOp::create(nb, nl, init, d))
                           : Value(arith::ConstantIndexOp::create(
                                 nb, nl, type.getDimSize(d)));
          pos = arith::AddIOp::create(nb, nl,
                                      arith::MulIOp::create(nb, nl, pos, size),
                                      linalg::IndexOp::create(nb, nl, d));
        }
        Value i = arith::IndexCastUIOp::create(nb, nl, nb.getI64Type(), pos);
        Value counter = arith::MulIOp::create(
            nb, nl, arith::AddIOp::create(nb, nl, i, i64Const(nb, nl, 1)),
            i64Const(nb, nl, 0x9E3779B97F4A7C15ull));
        Value bits = mix(nb, nl, arith::AddIOp::create(nb, nl, key, counter));
        Value r;
        if (!normal) {
          r = unitFloat(nb, nl, bits, elt.isF32() ? 40 : 11, elt);
        } else {
          Value hi = unitFloat(nb, nl, bits, 32, elt);
          Value u1 = arith::AddFOp::create(
              nb, nl, hi, floatConst(nb, nl, elt, std::ldexp(1.0, -32)));
          Value lo = arith::AndIOp::create(nb, nl, bits,
                                           i64Const(nb, nl, 0xFFFFFFFFull));
          Value u2 = arith::MulFOp::create(
              nb, nl, arith::UIToFPOp::create(nb, nl, elt, lo),
              floatConst(nb, nl, elt, 2 * M_PI * std::ldexp(1.0, -32)));
          Value radius = math::SqrtOp::create(
              nb, nl,
              arith::MulFOp::create(nb, nl, math::LogOp::create(nb, nl, u1),
                                    floatConst(nb, nl, elt, -2.0)));
          r = arith::MulFOp::create(nb, nl, radius,
                                    math::CosOp::create(nb, nl, u2));
        }
        linalg::YieldOp::create(nb, nl, r);
      });
  return generic.getResult(0);
}
