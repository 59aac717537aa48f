//===- CheapFloatOps.cpp - float ops in their one-instruction forms -*- C++ -*-===//
#include "kiln/Codegen/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_CHEAPFLOATOPSPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// lrint of `x` (f32, or a vector of f32 of any rank) as i32 values: one
/// conversion per row of a vector of several dimensions (the LLVM dialect
/// takes 1-D vectors only).
Value lrintOf(OpBuilder &b, Location loc, Value x, Type resultType) {
  auto vt = dyn_cast<VectorType>(resultType);
  if (!vt || vt.getRank() <= 1)
    return LLVM::LrintOp::create(b, loc, resultType, x);
  auto rowType = VectorType::get(vt.getShape().back(), vt.getElementType());
  Value result = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(vt, b.getI32IntegerAttr(0)));
  SmallVector<int64_t> leading(vt.getShape().drop_back());
  SmallVector<int64_t> at(leading.size(), 0);
  int64_t rows = 1;
  for (int64_t d : leading)
    rows *= d;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t d = int64_t(at.size()) - 1, rest = r; d >= 0; --d) {
      at[d] = rest % leading[d];
      rest /= leading[d];
    }
    Value row = vector::ExtractOp::create(b, loc, x, at);
    result = vector::InsertOp::create(
        b, loc, LLVM::LrintOp::create(b, loc, rowType, row), result, at);
  }
  return result;
}

/// Adds `nsz` to a maximumf/minimumf: NaN still propagates, the sign of a
/// zero result is not kept.
template <typename OpTy> void ignoreSignedZeros(OpTy op) {
  op.setFastmath(op.getFastmath() | arith::FastMathFlags::nsz);
}

struct CheapFloatOpsPass
    : mlir::kiln::impl::CheapFloatOpsPassBase<CheapFloatOpsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<arith::FPToSIOp, math::RoundEvenOp>> conversions;
    getOperation().walk([&](Operation *op) {
      if (auto max = dyn_cast<arith::MaximumFOp>(op))
        ignoreSignedZeros(max);
      if (auto min = dyn_cast<arith::MinimumFOp>(op))
        ignoreSignedZeros(min);
      auto conv = dyn_cast<arith::FPToSIOp>(op);
      if (!conv)
        return;
      auto round = conv.getIn().getDefiningOp<math::RoundEvenOp>();
      if (round && getElementTypeOrSelf(conv.getIn()).isF32() &&
          getElementTypeOrSelf(conv.getType()).isInteger(32) &&
          !(isa<VectorType>(conv.getType()) &&
            cast<VectorType>(conv.getType()).isScalable()))
        conversions.push_back({conv, round});
    });
    for (auto [op, round] : conversions) {
      OpBuilder b(op);
      op.replaceAllUsesWith(
          lrintOf(b, op.getLoc(), round.getOperand(), op.getType()));
      op.erase();
      if (round->use_empty())
        round.erase();
    }
  }
};

} // namespace
