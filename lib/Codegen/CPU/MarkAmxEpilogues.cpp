//===- MarkAmxEpilogues.cpp - epilogues applied on AMX tiles ----*- C++ -*-===//
#include "TileStrategy.h"
#include "Utils.h"
#include "kiln/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_MARKAMXEPILOGUESPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// The elementwise generic that reads an AMX product's accumulators
/// [M, P, 16] (through reshapes only, its sole reader) in the form
/// --kiln-cpu-amx-matmul applies to each block of them: loops [..., N]
/// with N = 16 P and the other loops spanning M, every loop parallel, the
/// accumulators and the result read and written with identity maps, other
/// inputs through projected permutations, and a body of arith ops and math
/// ops of one instruction, which take vectors as they take scalars. Marked
/// kAmxEpilogueAttr and left whole; the product (with its reshapes) moves
/// right before it, so that after bufferization nothing runs between the
/// two.
/// bf16 products only with at least `minBytes` of accumulators: ones that
/// stay in L2 (2 MiB per core here) make their round trip through memory
/// cheaply, and the epilogue as a pass of its own is then as fast or faster
/// (the encoders' products, 128 rows and 128-512 KiB, ran 2-6% slower
/// fused). int8 products fuse at any size: their i32 accumulators are four
/// times the bytes of the int8 they are requantized to, and with two
/// threads the round trip crosses cores (a tensor one core wrote, the other
/// reads at a third of the speed on this machine); MobileNetV2 int8 ran
/// 11% faster on two threads fused, and as fast on one.
void markAmxEpilogues(func::FuncOp func, int64_t minBytes) {
  SmallVector<linalg::GenericOp> products;
  func.walk([&](linalg::GenericOp op) {
    if (kiln::isAmxProduct(op))
      products.push_back(op);
  });
  for (linalg::GenericOp product : products) {
    auto out = dyn_cast<RankedTensorType>(product->getResult(0).getType());
    if (!out || out.getRank() != 3 || !out.hasStaticShape() ||
        out.getDimSize(2) != 16 ||
        (!product->hasAttr(kiln::kAmxInt8MatmulAttr) &&
         out.getNumElements() * 4 < minBytes))
      continue;
    SmallVector<Operation *> chain;
    Value v = product->getResult(0);
    while (v.hasOneUse() &&
           isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
               *v.getUsers().begin())) {
      chain.push_back(*v.getUsers().begin());
      v = chain.back()->getResult(0);
    }
    if (!v.hasOneUse())
      continue;
    auto epilogue = dyn_cast<linalg::GenericOp>(*v.getUsers().begin());
    if (!epilogue || !epilogue.hasPureTensorSemantics() ||
        epilogue.getNumDpsInits() != 1 || epilogue->getNumResults() != 1 ||
        epilogue.getNumParallelLoops() != epilogue.getNumLoops() ||
        mlir::kiln::touchesBools(epilogue) ||
        epilogue.payloadUsesValueFromOperand(epilogue.getDpsInitOperand(0)))
      continue;
    SmallVector<int64_t> ranges = epilogue.getStaticLoopRanges();
    int64_t rows = 1;
    for (int64_t r : ArrayRef<int64_t>(ranges).drop_back())
      rows *= r;
    if (ranges.empty() || ShapedType::isDynamicShape(ranges) ||
        ranges.back() != 16 * out.getDimSize(1) || rows != out.getDimSize(0) ||
        !epilogue.getIndexingMapsArray().back().isIdentity())
      continue;
    bool ok = true;
    for (OpOperand *in : epilogue.getDpsInputOperands()) {
      AffineMap map = epilogue.getMatchingIndexingMap(in);
      if (in->get() == v ? !map.isIdentity() : !map.isProjectedPermutation())
        ok = false;
    }
    // Only arith and the math ops that are one instruction: an epilogue with
    // a polynomial (GELU's erf, SiLU's exp) holds its constants and each
    // panel's per-channel values at once, runs out of registers in the
    // block's row loop and was slower fused (the encoders in bf16: 6%).
    for (Operation &op : epilogue.getRegion().front().without_terminator())
      if (op.getNumRegions() != 0 || op.getNumResults() != 1 ||
          !(isa<arith::ArithDialect>(op.getDialect()) ||
            isa<math::RoundEvenOp, math::RoundOp, math::FloorOp, math::CeilOp,
                math::TruncOp, math::AbsFOp, math::FmaOp, math::CopySignOp,
                math::SqrtOp>(op)) ||
          !op.getResult(0).getType().isIntOrFloat())
        ok = false;
    if (!ok || product->getBlock() != epilogue->getBlock())
      continue;
    epilogue->setAttr(kiln::kAmxEpilogueAttr, UnitAttr::get(func.getContext()));
    product->moveBefore(epilogue);
    for (Operation *op : chain)
      op->moveBefore(epilogue);
  }
}

struct MarkAmxEpiloguesPass
    : mlir::kiln::impl::MarkAmxEpiloguesPassBase<MarkAmxEpiloguesPass> {
  using MarkAmxEpiloguesPassBase::MarkAmxEpiloguesPassBase;

  void runOnOperation() override {
    markAmxEpilogues(getOperation(), minBytes);
  }
};
} // namespace
