//===- PackConstantRhs.cpp - constant matmul weights in panels --*- C++ -*-===//
#include "TileStrategy.h"
#include "kiln/Codegen/CPU/Passes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "kiln/Dialect/Kiln/IR/ElementsUtils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_PACKCONSTANTRHSPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// A matmul with a constant right-hand side B[K, N] (the weights of Gemm and
/// MatMul, transposed at import when needed) reads B by rows of N, one
/// register tile at a time: for each k, the next few cache lines of the tile
/// lie N elements further on, a new page every k for wide layers, which
/// hardware prefetchers do not follow (the MLP's 1024-wide layers ran at a
/// third of the memory bandwidth ORT gets). Packing B at compile time into
/// panels P[N / nt][K][nt] of one register tile's columns makes every tile's
/// reads one contiguous stream. The matmul becomes a generic over
/// (m, panel, column, k) writing the output as [M][N / nt][nt], a view of
/// the same buffer (expand_shape / collapse_shape).
void packConstantRhs(RewriterBase &rewriter, func::FuncOp func, int64_t vw) {
  SmallVector<linalg::MatmulOp> matmuls;
  func.walk([&](linalg::MatmulOp op) { matmuls.push_back(op); });
  for (linalg::MatmulOp op : matmuls) {
    if (!op.hasPureTensorSemantics() || op.hasUserDefinedMaps())
      continue;
    Value a = op.getDpsInputOperand(0)->get();
    Value b = op.getDpsInputOperand(1)->get();
    Value init = op.getDpsInitOperand(0)->get();
    auto cst = b.getDefiningOp<arith::ConstantOp>();
    auto elements = cst ? dyn_cast<ElementsAttr>(cst.getValue()) : nullptr;
    auto aType = dyn_cast<RankedTensorType>(a.getType());
    auto bType = dyn_cast<RankedTensorType>(b.getType());
    auto cType = dyn_cast<RankedTensorType>(init.getType());
    // M may be a run-time extent (a symbolic dimension): the panels do not
    // depend on it.
    auto staticButRows = [](RankedTensorType t) {
      return t.getRank() == 2 && !ShapedType::isDynamic(t.getDimSize(1));
    };
    if (!elements || !aType || !bType || !cType || !staticButRows(aType) ||
        !bType.hasStaticShape() || !staticButRows(cType))
      continue;
    Type elt = cType.getElementType();
    Type bElt = bType.getElementType();
    // fp16 weights (kiln-cpu-read-half-weights) are widened in the kernel.
    if (!elt.isF32() || aType.getElementType() != elt ||
        (bElt != elt && !bElt.isF16()))
      continue;
    int64_t m = cType.getDimSize(0), k = bType.getDimSize(0),
            n = bType.getDimSize(1);
    int64_t width = mlir::kiln::panelWidth(n, vw);
    if (!width || k < 2)
      continue;
    std::optional<ElementsAttr> packed =
        mlir::kiln::permuteElements(elements, {k, n / width, width}, {1, 0, 2},
                                    /*keepDense=*/true);
    if (!packed)
      continue;
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    Value panels = arith::ConstantOp::create(rewriter, loc, packed->getType(),
                                             cast<TypedAttr>(*packed));
    auto outType = RankedTensorType::get({m, n / width, width}, elt);
    SmallVector<ReassociationIndices> reassociation = {{0}, {1, 2}};
    Value out;
    auto fill = init.getDefiningOp<linalg::FillOp>();
    if (fill && fill->hasOneUse()) {
      SmallVector<Value> rows;
      if (ShapedType::isDynamic(m))
        rows.push_back(tensor::DimOp::create(rewriter, loc, a, 0));
      Value empty =
          tensor::EmptyOp::create(rewriter, loc, outType.getShape(), elt, rows);
      out = linalg::FillOp::create(rewriter, loc, fill.getInputs()[0], empty)
                .getResult(0);
    } else {
      out = tensor::ExpandShapeOp::create(rewriter, loc, outType, init,
                                          reassociation);
    }
    MLIRContext *ctx = rewriter.getContext();
    AffineExpr dm, dp, dc, dk;
    bindDims(ctx, dm, dp, dc, dk);
    SmallVector<AffineMap> maps = {
        AffineMap::get(4, 0, {dm, dk}, ctx),
        AffineMap::get(4, 0, {dp, dk, dc}, ctx),
        AffineMap::get(4, 0, {dm, dp, dc}, ctx)};
    SmallVector<utils::IteratorType> iterators = {
        utils::IteratorType::parallel, utils::IteratorType::parallel,
        utils::IteratorType::parallel, utils::IteratorType::reduction};
    auto generic = linalg::GenericOp::create(
        rewriter, loc, outType, ValueRange{a, panels}, ValueRange{out}, maps,
        iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value w = args[1];
          if (w.getType() != elt)
            w = arith::ExtFOp::create(nb, nl, elt, w);
          Value p = arith::MulFOp::create(nb, nl, args[0], w);
          linalg::YieldOp::create(
              nb, nl, Value(arith::AddFOp::create(nb, nl, args[2], p)));
        });
    generic->setAttr(kPackedRhsAttr, rewriter.getUnitAttr());
    Value result = tensor::CollapseShapeOp::create(
        rewriter, loc, cType, generic.getResult(0), reassociation);
    rewriter.replaceOp(op, result);
    if (fill && fill->use_empty())
      rewriter.eraseOp(fill);
  }
}

struct PackConstantRhsPass
    : mlir::kiln::impl::PackConstantRhsPassBase<PackConstantRhsPass> {
  using PackConstantRhsPassBase::PackConstantRhsPassBase;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    packConstantRhs(rewriter, getOperation(), vectorWidth);
  }
};
} // namespace
