//===- RangeInProducer.cpp - a tensor's range from its producer's tiles -*- C++
//-*-===//
#include "RangeInProducer.h"
#include "Utils.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Utils/VectorUtils.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// The tensor whose elements `v` views: `v` traced back through reshapes
/// and a leading slice of a flat tensor.
Value flatSource(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto e = dyn_cast<tensor::ExpandShapeOp>(def))
      v = e.getSrc();
    else if (auto c = dyn_cast<tensor::CollapseShapeOp>(def))
      v = c.getSrc();
    else if (auto s = dyn_cast<tensor::ExtractSliceOp>(def);
             s && s.getSourceType().getRank() == 1 && s.hasUnitStride() &&
             isZeroInteger(s.getMixedOffsets()[0]))
      v = s.getSource();
    else
      break;
  }
  return v;
}

int64_t elementCount(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() ? type.getNumElements() : -1;
}

/// The maximum and the minimum of the rows of `rows2d` ([rows, width] f32),
/// lane by lane, in one loop with three vector accumulators: the maximum
/// and the minimum as x86 takes them in one instruction each (a compare and
/// a select, which skips NaNs), and the largest |x| as integer bits, which
/// a NaN (exponent all ones, mantissa not 0) exceeds every number in (see
/// withNaNs). The propagating maximumf costs a compare and a blend more on
/// each chain. Written as vectors: the linalg vectorizer takes a reduction
/// only through one combining op.
struct LaneRange {
  Value max, min, bits;
};
LaneRange laneRange(OpBuilder &b, Location loc, Value rows2d) {
  auto type = cast<RankedTensorType>(rows2d.getType());
  int64_t width = type.getDimSize(1);
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  auto rowF = VectorType::get({width}, f32),
       rowI = VectorType::get({width}, i32);
  auto splat = [&](VectorType vt, Attribute v) -> Value {
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vt, v));
  };
  double inf = std::numeric_limits<double>::infinity();
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value absMask = splat(rowI, b.getI32IntegerAttr(0x7fffffff));
  Value pad = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  auto loop = scf::ForOp::create(
      b, loc, c0, arith::ConstantIndexOp::create(b, loc, type.getDimSize(0)),
      arith::ConstantIndexOp::create(b, loc, 1),
      ValueRange{splat(rowF, b.getF32FloatAttr(-inf)),
                 splat(rowF, b.getF32FloatAttr(inf)),
                 splat(rowI, b.getI32IntegerAttr(0))},
      [&](OpBuilder &nb, Location l, Value r, ValueRange acc) {
        Value x = vector::TransferReadOp::create(
            nb, l, rowF, rows2d, ValueRange{r, c0}, pad, ArrayRef<bool>{true});
        auto pick = [&](arith::CmpFPredicate p, Value a) -> Value {
          return arith::SelectOp::create(
              nb, l, arith::CmpFOp::create(nb, l, p, x, a), x, a);
        };
        Value bits = arith::AndIOp::create(
            nb, l, arith::BitcastOp::create(nb, l, rowI, x), absMask);
        scf::YieldOp::create(
            nb, l,
            ValueRange{pick(arith::CmpFPredicate::OGT, acc[0]),
                       pick(arith::CmpFPredicate::OLT, acc[1]),
                       arith::MaxSIOp::create(nb, l, acc[2], bits)});
      });
  return {loop.getResult(0), loop.getResult(1), loop.getResult(2)};
}

/// `v` (f32 values, a vector or a scalar) NaN where `bits` (the largest
/// |x| as integer bits, see laneRange) says a NaN was among them.
Value withNaNs(OpBuilder &b, Location loc, Value v, Value bits) {
  Type i32 = b.getI32Type();
  auto constantLike = [&](Value like, TypedAttr scalar) -> Value {
    if (auto vt = dyn_cast<VectorType>(like.getType()))
      return arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(
              VectorType::get(vt.getShape(), scalar.getType()), scalar));
    return arith::ConstantOp::create(b, loc, scalar);
  };
  Value nan = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::sgt, bits,
      constantLike(bits, b.getIntegerAttr(i32, 0x7f800000)));
  return arith::SelectOp::create(
      b, loc, nan, constantLike(v, b.getF32FloatAttr(std::nan(""))), v);
}

} // namespace

std::optional<MinMaxChain> kiln::minMaxChainOf(linalg::GenericOp partials) {
  if (!partials->hasAttr(kiln::kMinMaxPartialsAttr) ||
      partials.getNumDpsInputs() != 1 || !partials->hasOneUse())
    return std::nullopt;
  auto combine = dyn_cast<linalg::GenericOp>(*partials->user_begin());
  if (!combine || !combine->hasAttr(kiln::kMinMaxCombineAttr) ||
      combine.getNumDpsInputs() != 1 ||
      combine.getDpsInputOperand(0)->get() != partials->getResult(0))
    return std::nullopt;
  linalg::GenericOp rest;
  if (combine->hasOneUse())
    if (auto r = dyn_cast<linalg::GenericOp>(*combine->user_begin());
        r && r->hasAttr(kiln::kMinMaxRestAttr) && r.getNumDpsInputs() == 1 &&
        r.getDpsInitOperand(0)->get() == combine->getResult(0))
      rest = r;
  return MinMaxChain{partials, combine, rest};
}

LogicalResult kiln::fuseMinMaxIntoProducer(RewriterBase &rewriter,
                                           MinMaxChain chain,
                                           int64_t vectorWidth) {
  Value reduced = flatSource(chain.partials.getDpsInputOperand(0)->get());
  int64_t n = elementCount(reduced);
  int64_t covered = elementCount(chain.partials.getDpsInputOperand(0)->get());
  if (chain.rest) {
    // The elements after the blocks: a slice of the flat tensor from there.
    auto after = chain.rest.getDpsInputOperand(0)
                     ->get()
                     .getDefiningOp<tensor::ExtractSliceOp>();
    if (!after || after.getSourceType().getRank() != 1 ||
        !after.hasUnitStride() || flatSource(after.getSource()) != reduced ||
        getConstantIntValue(after.getMixedOffsets()[0]) != covered)
      return failure();
    covered += elementCount(after.getResult());
  }
  auto forall = reduced.getDefiningOp<scf::ForallOp>();
  if (n <= 0 || covered != n || !forall || forall.getRank() != 1)
    return failure();
  std::optional<int64_t> lb =
      getConstantIntValue(forall.getMixedLowerBound()[0]);
  std::optional<int64_t> ub =
      getConstantIntValue(forall.getMixedUpperBound()[0]);
  std::optional<int64_t> step = getConstantIntValue(forall.getMixedStep()[0]);
  if (!lb || !ub || !step || *step <= 0 || *ub <= *lb)
    return failure();
  int64_t trips = (*ub - *lb + *step - 1) / *step;
  unsigned resultNumber = cast<OpResult>(reduced).getResultNumber();
  SmallVector<Operation *> writes =
      forall.getCombiningOps(forall.getRegionOutArgs()[resultNumber]);
  auto write = writes.size() == 1
                   ? dyn_cast<tensor::ParallelInsertSliceOp>(writes.front())
                   : tensor::ParallelInsertSliceOp();
  if (!write || trips * elementCount(write.getSource()) != n)
    return failure();
  ArrayRef<int64_t> sizes = write.getStaticSizes(),
                    whole = write.getDestType().getShape();
  if (ShapedType::isDynamicShape(sizes))
    return failure();
  size_t first = 0;
  while (first < sizes.size() && sizes[first] == 1)
    ++first;
  for (size_t d = first + 1; d < sizes.size(); ++d)
    if (sizes[d] != whole[d])
      return failure();
  // Each tile reduced in rows of `lanes` (four vectors: twelve independent
  // chains for the three accumulators), then folded to `kept` lanes.
  int64_t tileElements = elementCount(write.getSource());
  int64_t lanes = 4 * vectorWidth;
  while (lanes > 1 && tileElements % lanes != 0)
    lanes /= 2;
  int64_t rows = tileElements / lanes, kept = std::min<int64_t>(lanes, 16);
  Type elt = write.getDestType().getElementType();
  if (!elt.isF32())
    return failure();
  Location loc = chain.partials.getLoc();

  // The loop again, with the partials as one more shared output.
  rewriter.setInsertionPoint(forall);
  Value init = tensor::EmptyOp::create(rewriter, loc, {trips, 2, kept}, elt);
  SmallVector<Value> outputs(forall.getOutputs());
  outputs.push_back(init);
  auto fused = scf::ForallOp::create(
      rewriter, loc, forall.getMixedLowerBound(), forall.getMixedUpperBound(),
      forall.getMixedStep(), outputs, forall.getMapping());
  rewriter.eraseOp(fused.getTerminator());
  SmallVector<Value> args(fused.getBody()->getArguments().drop_back());
  rewriter.mergeBlocks(forall.getBody(), fused.getBody(), args);
  rewriter.replaceOp(forall, fused.getResults().drop_back());

  // This tile's row of the partials, from its elements as [rows, lanes].
  scf::InParallelOp terminator = fused.getTerminator();
  rewriter.setInsertionPoint(terminator);
  Value tile = write.getSource();
  auto tileType = cast<RankedTensorType>(tile.getType());
  if (tileType.getRank() != 1) {
    ReassociationIndices all =
        llvm::to_vector(llvm::seq<int64_t>(0, tileType.getRank()));
    tile = tensor::CollapseShapeOp::create(rewriter, loc, tile,
                                           ArrayRef<ReassociationIndices>{all});
  }
  tile = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get({rows, lanes}, elt), tile,
      ArrayRef<ReassociationIndices>{{0, 1}});
  // The tile's lanes' range, folded to `kept` lanes: the maximum and the
  // negated minimum (the combine's form), NaN where the tile held one.
  LaneRange range = laneRange(rewriter, loc, tile);
  auto folded = [&](Value v, vector::CombiningKind kind) -> Value {
    if (kept == lanes)
      return v;
    Type t = cast<VectorType>(v.getType()).getElementType();
    Value groups = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get({lanes / kept, kept}, t), v);
    Value start =
        vector::ExtractOp::create(rewriter, loc, groups, ArrayRef<int64_t>{0});
    for (int64_t g = 1; g < lanes / kept; ++g)
      start = vector::makeArithReduction(
          rewriter, loc, kind, start,
          vector::ExtractOp::create(rewriter, loc, groups,
                                    ArrayRef<int64_t>{g}));
    return start;
  };
  Value bits = folded(range.bits, vector::CombiningKind::MAXSI);
  Value hi = withNaNs(rewriter, loc,
                      folded(range.max, vector::CombiningKind::MAXIMUMF), bits);
  Value lo = withNaNs(
      rewriter, loc,
      arith::NegFOp::create(rewriter, loc,
                            folded(range.min, vector::CombiningKind::MINIMUMF)),
      bits);
  Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value row = tensor::EmptyOp::create(rewriter, loc, {2, kept}, elt);
  SmallVector<Value, 2> sides = {hi, lo};
  for (auto [s, v] : llvm::enumerate(sides))
    row = vector::TransferWriteOp::create(
              rewriter, loc, v, row,
              ValueRange{arith::ConstantIndexOp::create(rewriter, loc, s), c0},
              ArrayRef<bool>{true})
              .getResult();
  AffineExpr iv = rewriter.getAffineDimExpr(0);
  OpFoldResult index = affine::makeComposedFoldedAffineApply(
      rewriter, loc, (iv - *lb).floorDiv(*step),
      {OpFoldResult(fused.getInductionVars()[0])});
  rewriter.setInsertionPointToEnd(&terminator.getRegion().front());
  OpFoldResult zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, row, fused.getRegionOutArgs().back(),
      ArrayRef<OpFoldResult>{index, zero, zero},
      ArrayRef<OpFoldResult>{one, rewriter.getIndexAttr(2),
                             rewriter.getIndexAttr(kept)},
      ArrayRef<OpFoldResult>{one, one, one});

  // The rows combined ([trips, 2 kept] as rows of 2 kept lanes: the
  // maxima, then the negated minima) in place of the blocks' combine and
  // the rest; the blocks go.
  Operation *last = chain.rest ? chain.rest : chain.combine;
  linalg::FillOp combineFill = fusableFill(chain.combine);
  linalg::FillOp blockFill = fusableFill(chain.partials);
  rewriter.setInsertionPoint(last);
  Value rows2d = tensor::CollapseShapeOp::create(
      rewriter, loc, fused.getResults().back(),
      ArrayRef<ReassociationIndices>{{0}, {1, 2}});
  LaneRange all = laneRange(rewriter, loc, rows2d);
  SmallVector<Value, 2> result;
  for (int64_t s = 0; s < 2; ++s) {
    auto half = [&](Value v) -> Value {
      return vector::ExtractStridedSliceOp::create(
          rewriter, loc, v, ArrayRef<int64_t>{s * kept},
          ArrayRef<int64_t>{kept}, ArrayRef<int64_t>{1});
    };
    Value side = vector::ReductionOp::create(
        rewriter, loc, vector::CombiningKind::MAXIMUMF, half(all.max));
    Value bits = vector::ReductionOp::create(
        rewriter, loc, vector::CombiningKind::MAXSI, half(all.bits));
    result.push_back(withNaNs(rewriter, loc, side, bits));
  }
  Value combined = tensor::FromElementsOp::create(
      rewriter, loc, last->getResult(0).getType(), result);
  rewriter.replaceOp(last, combined);
  if (chain.rest)
    rewriter.eraseOp(chain.combine);
  if (combineFill && combineFill->use_empty())
    rewriter.eraseOp(combineFill);
  rewriter.eraseOp(chain.partials);
  if (blockFill && blockFill->use_empty())
    rewriter.eraseOp(blockFill);
  return success();
}
