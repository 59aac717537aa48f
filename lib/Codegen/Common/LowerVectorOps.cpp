//===- LowerVectorOps.cpp - vector and math lowering -------------*- C++ -*-===//
#include "kiln/Codegen/Common/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/DenseSet.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_LOWERVECTOROPSPASS
#include "kiln/Codegen/Common/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// The shape without its unit dimensions.
SmallVector<int64_t> nonUnitShape(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> dims;
  for (int64_t d : shape)
    if (d != 1)
      dims.push_back(d);
  return dims;
}

/// Whether `op` transfers a vector of exactly its whole tensor's non-unit
/// dimensions, in order, from index 0.
bool coversWholeTensor(VectorTransferOpInterface op) {
  auto tensor = dyn_cast<RankedTensorType>(op.getShapedType());
  if (!tensor || !tensor.hasStaticShape() || op.hasOutOfBoundsDim() ||
      op.getMask() || !op.getPermutationMap().isMinorIdentity())
    return false;
  if (!llvm::all_of(op.getIndices(), [](Value i) {
        return getConstantIntValue(i) == 0;
      }))
    return false;
  return nonUnitShape(tensor.getShape()) ==
         nonUnitShape(op.getVectorType().getShape());
}

/// Whether `slice` (an extract or insert) is at offset 0 with unit strides
/// and spans every non-unit dimension of `whole`, the tensor it is cut from
/// or inserted into: the slice is the whole tensor.
bool spansWhole(OffsetSizeAndStrideOpInterface slice, RankedTensorType whole,
                RankedTensorType part) {
  return whole.hasStaticShape() &&
         llvm::all_of(slice.getMixedStrides(),
                      [](OpFoldResult s) { return isConstantIntValue(s, 1); }) &&
         llvm::all_of(slice.getMixedOffsets(),
                      [](OpFoldResult o) { return isConstantIntValue(o, 0); }) &&
         nonUnitShape(whole.getShape()) == nonUnitShape(part.getShape());
}

/// A tile that a producer accumulated in a tensor of its own (an epilogue
/// of another element type cannot hold it) is written whole, passed whole
/// through slices and inserts, and read back whole: the read is the written
/// vector. Without this, the tile would be a buffer allocated in the loop
/// (and its zero initialization a store and a reload).
struct ForwardWholeTile : OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::TransferReadOp read,
                                PatternRewriter &rewriter) const override {
    if (!coversWholeTensor(read))
      return failure();
    Value t = read.getBase();
    vector::TransferWriteOp write;
    while (!write) {
      Operation *def = t.getDefiningOp();
      if (auto insert = dyn_cast_or_null<tensor::InsertSliceOp>(def)) {
        if (!spansWhole(insert, insert.getDestType(), insert.getSourceType()))
          return failure();
        t = insert.getSource();
      } else if (auto slice = dyn_cast_or_null<tensor::ExtractSliceOp>(def)) {
        if (!spansWhole(slice, slice.getSourceType(), slice.getResultType()))
          return failure();
        t = slice.getSource();
      } else if (auto w = dyn_cast_or_null<vector::TransferWriteOp>(def)) {
        if (!coversWholeTensor(w))
          return failure();
        write = w;
      } else {
        return failure();
      }
    }
    // Every step kept the non-unit shape: the two vectors differ at most in
    // unit dimensions.
    Value v = write.getVector();
    if (v.getType() != read.getVectorType())
      v = vector::ShapeCastOp::create(rewriter, read.getLoc(),
                                      read.getVectorType(), v);
    rewriter.replaceOp(read, v);
    return success();
  }
};

/// A value `v` is a broadcast of `source` reshaped to `shape` (of v's rank,
/// each size v's or 1): v = broadcast(shape_cast(source)). Found through
/// transposes that keep the source's own dimensions in order and extracts
/// of added dimensions.
struct BroadcastOf {
  Value source;
  SmallVector<int64_t> shape;
};

std::optional<BroadcastOf> broadcastOf(Value v) {
  auto type = dyn_cast<VectorType>(v.getType());
  if (!type || type.isScalable())
    return std::nullopt;
  if (auto broadcast = v.getDefiningOp<vector::BroadcastOp>()) {
    BroadcastOf b{broadcast.getSource(),
                  SmallVector<int64_t>(type.getRank(), 1)};
    if (auto source = dyn_cast<VectorType>(broadcast.getSourceType())) {
      if (source.isScalable())
        return std::nullopt;
      llvm::copy(source.getShape(),
                 b.shape.begin() + (type.getRank() - source.getRank()));
    }
    return b;
  }
  if (auto transpose = v.getDefiningOp<vector::TransposeOp>()) {
    std::optional<BroadcastOf> inner = broadcastOf(transpose.getVector());
    if (!inner)
      return std::nullopt;
    SmallVector<int64_t> shape;
    int64_t last = -1;
    for (int64_t from : transpose.getPermutation()) {
      shape.push_back(inner->shape[from]);
      if (inner->shape[from] == 1)
        continue;
      if (from < last)
        return std::nullopt;
      last = from;
    }
    inner->shape = std::move(shape);
    return inner;
  }
  if (auto extract = v.getDefiningOp<vector::ExtractOp>()) {
    std::optional<BroadcastOf> inner = broadcastOf(extract.getSource());
    int64_t removed = extract.getNumIndices();
    if (!inner || !extract.getDynamicPosition().empty() ||
        llvm::any_of(ArrayRef(inner->shape).take_front(removed),
                     [](int64_t d) { return d != 1; }))
      return std::nullopt;
    inner->shape.erase(inner->shape.begin(), inner->shape.begin() + removed);
    return inner;
  }
  return std::nullopt;
}

/// `source` reshaped to `shape` (its own dimensions in order, ones
/// elsewhere) and broadcast to `type`. A scalar or a 0-D vector is
/// broadcast as it is.
Value rebroadcast(PatternRewriter &rewriter, Location loc, Value source,
                  ArrayRef<int64_t> shape, VectorType type) {
  auto vector = dyn_cast<VectorType>(source.getType());
  if (vector && vector.getRank() > 0 && shape != vector.getShape())
    source = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get(shape, type.getElementType()), source);
  return vector::BroadcastOp::create(rewriter, loc, type, source);
}

/// A transpose of a broadcast that keeps the broadcast value's own
/// dimensions (those longer than 1) in their order is a broadcast of that
/// value reshaped: each other dimension of the result is a broadcast one.
/// The vectorizer gives this form to an operand of a batched product whose
/// indexing puts a broadcast dimension between its own (the attention
/// scores' query rows at a run-time sequence length: vector<8x1> broadcast
/// to 32x1x1x8x1 and transposed to 1x1x8x32x1). The element-wise transpose
/// lowering made it 256 extracts and inserts per step of the product's
/// loop, a sixth of the dynamic BERT encoder's IR at the LLVM conversion;
/// as a broadcast it is 8 splats.
struct TransposeOfBroadcastToBroadcast : OpRewritePattern<vector::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getVector().getDefiningOp<vector::BroadcastOp>())
      return failure();
    std::optional<BroadcastOf> b = broadcastOf(op.getResult());
    if (!b)
      return failure();
    // The broadcast adds the leading unit dimensions back.
    ArrayRef<int64_t> kept(b->shape);
    while (kept.size() > 1 && kept.front() == 1)
      kept = kept.drop_front();
    rewriter.replaceOp(op, rebroadcast(rewriter, op.getLoc(), b->source, kept,
                                       op.getResultVectorType()));
    return success();
  }
};

/// `v`, a vector of the contraction's iteration shape whose reduction
/// dimensions have size 1, as a vector of the accumulator's shape. A
/// broadcast (behind transposes and extracts, see BroadcastOf) becomes a
/// broadcast of its source straight to the accumulator's shape: a shape
/// cast of the broadcast result, and the transposes, were lowered element
/// by element (256 extracts and inserts per step of an 8 x 32 tile).
Value asAccumulatorShape(PatternRewriter &rewriter, Location loc, Value v,
                         VectorType accType,
                         ArrayRef<vector::IteratorType> iterators) {
  std::optional<BroadcastOf> b = broadcastOf(v);
  if (!b)
    return vector::ShapeCastOp::create(rewriter, loc, accType, v);
  SmallVector<int64_t> kept;
  for (auto [size, it] : llvm::zip_equal(b->shape, iterators))
    if (it == vector::IteratorType::parallel)
      kept.push_back(size);
  return rebroadcast(rewriter, loc, b->source, kept, accType);
}

/// A contraction whose reduction dimensions all have size 1 and whose two
/// operands have the same shape and identity maps is an elementwise
/// multiply-add: the vectorizer gives this form to a batched matmul's tile
/// (both operands broadcast to the whole 8 x 32 tile, the reduction step
/// of size 1). The upstream lowering turns it into a multiply and an add,
/// which LLVM does not fuse: the attention products of the encoders ran on
/// vmulps + vaddps, two instructions per FMA. It becomes one vector.fma.
struct ElementwiseContractToFma : OpRewritePattern<vector::ContractionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::ContractionOp op,
                                PatternRewriter &rewriter) const override {
    auto accType = dyn_cast<VectorType>(op.getAccType());
    auto lhsType = op.getLhsType();
    if (!accType || op.getKind() != vector::CombiningKind::ADD ||
        !isa<FloatType>(accType.getElementType()) ||
        lhsType != op.getRhsType() ||
        lhsType.getElementType() != accType.getElementType() ||
        lhsType.getNumElements() != accType.getNumElements() ||
        accType.isScalable() || isa<vector::MaskOp>(op->getParentOp()))
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    if (!maps[0].isIdentity() || !maps[1].isIdentity())
      return failure();
    // The accumulator: the parallel dimensions, in order.
    SmallVector<vector::IteratorType> iterators = op.getIteratorTypesArray();
    SmallVector<AffineExpr> parallel;
    for (auto [i, it] : llvm::enumerate(iterators)) {
      if (it == vector::IteratorType::parallel)
        parallel.push_back(rewriter.getAffineDimExpr(i));
      else if (lhsType.getDimSize(i) != 1)
        return failure();
    }
    if (maps[2] !=
        AffineMap::get(maps[0].getNumDims(), 0, parallel, op.getContext()))
      return failure();
    Location loc = op.getLoc();
    Value lhs =
        asAccumulatorShape(rewriter, loc, op.getLhs(), accType, iterators);
    Value rhs =
        asAccumulatorShape(rewriter, loc, op.getRhs(), accType, iterators);
    rewriter.replaceOpWithNewOp<vector::FMAOp>(op, lhs, rhs, op.getAcc());
    return success();
  }
};

/// `acc` plus the sum of the lanes of the 1-D `lanes`, as a vector.reduction
/// marked reassoc (LLVM adds the lanes as a tree); `acc` and the result are
/// scalars, or vectors of one element when `accType` is one.
Value reassociatingSum(PatternRewriter &rewriter, Location loc, Value lanes,
                       Value acc, VectorType accType) {
  if (accType)
    acc = vector::ExtractOp::create(rewriter, loc, acc,
                                    SmallVector<int64_t>(accType.getRank(), 0));
  Value sum =
      vector::ReductionOp::create(rewriter, loc, vector::CombiningKind::ADD,
                                  lanes, acc, arith::FastMathFlags::reassoc);
  if (accType)
    sum = vector::BroadcastOp::create(rewriter, loc, accType, sum);
  return sum;
}

/// A float sum of a whole vector into one value (a row of layer norm,
/// softmax or a mean, 64 lanes per step) as one vector.reduction that may
/// reassociate: LLVM adds the lanes as a tree. The upstream lowering adds
/// them one at a time, in order, a chain of 64 dependent scalar adds (the
/// encoders' layer norms ran at a few GFLOP/s). The order of the additions
/// changes, not what is added.
struct WholeVectorSumToReduction
    : OpRewritePattern<vector::MultiDimReductionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::MultiDimReductionOp op,
                                PatternRewriter &rewriter) const override {
    VectorType source = op.getSourceVectorType();
    auto dest = dyn_cast<VectorType>(op.getDestType());
    if (op.getKind() != vector::CombiningKind::ADD ||
        !isa<FloatType>(source.getElementType()) || source.isScalable() ||
        (dest && dest.getNumElements() != 1) ||
        isa<vector::MaskOp>(op->getParentOp()))
      return failure();
    Location loc = op.getLoc();
    Value flat = vector::ShapeCastOp::create(
        rewriter, loc,
        VectorType::get({source.getNumElements()}, source.getElementType()),
        op.getSource());
    rewriter.replaceOp(
        op, reassociatingSum(rewriter, loc, flat, op.getAcc(), dest));
    return success();
  }
};

/// A contraction to one value (every parallel dimension of size 1) whose
/// operands run over the same reduction dimensions in the same order is a
/// dot product: the lanes multiplied, then summed as a tree (reassoc). The
/// upstream lowering takes one lane at a time into a chain of dependent
/// scalar FMAs: the variance of the encoders' layer norms, 64 lanes a step,
/// was a chain of 64 vfmadd231ss.
struct DotContractToReduction : OpRewritePattern<vector::ContractionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::ContractionOp op,
                                PatternRewriter &rewriter) const override {
    Type accType = op.getAccType();
    auto accVector = dyn_cast<VectorType>(accType);
    Type elt = getElementTypeOrSelf(accType);
    if (op.getKind() != vector::CombiningKind::ADD || !isa<FloatType>(elt) ||
        op.getLhsType().getElementType() != elt ||
        op.getRhsType().getElementType() != elt ||
        (accVector && accVector.getNumElements() != 1) ||
        op.getLhsType().isScalable() || op.getRhsType().isScalable() ||
        isa<vector::MaskOp>(op->getParentOp()))
      return failure();
    SmallVector<int64_t> bounds;
    op.getIterationBounds(bounds);
    SmallVector<vector::IteratorType> iterators = op.getIteratorTypesArray();
    for (auto [bound, it] : llvm::zip(bounds, iterators))
      if (it == vector::IteratorType::parallel && bound != 1)
        return failure();
    // The dimensions longer than 1 that each operand runs over, in order.
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    auto longDims = [&](AffineMap map) {
      SmallVector<unsigned> dims;
      for (unsigned i = 0; i < map.getNumResults(); ++i)
        if (bounds[map.getDimPosition(i)] != 1)
          dims.push_back(map.getDimPosition(i));
      return dims;
    };
    if (!maps[0].isProjectedPermutation() ||
        !maps[1].isProjectedPermutation() ||
        longDims(maps[0]) != longDims(maps[1]))
      return failure();
    Location loc = op.getLoc();
    auto flat = VectorType::get({op.getLhsType().getNumElements()}, elt);
    Value lhs = vector::ShapeCastOp::create(rewriter, loc, flat, op.getLhs());
    Value rhs = vector::ShapeCastOp::create(rewriter, loc, flat, op.getRhs());
    Value product = arith::MulFOp::create(rewriter, loc, lhs, rhs);
    rewriter.replaceOp(
        op, reassociatingSum(rewriter, loc, product, op.getAcc(), accVector));
    return success();
  }
};

/// The value of `v` when it is an integer constant (a scalar or a splat).
std::optional<int64_t> splatInt(Value v) {
  APInt c;
  if (matchPattern(v, m_ConstantInt(&c)))
    return c.getSExtValue();
  return std::nullopt;
}

/// Takes the poison out of the f32 to i32 conversions that the polynomial
/// approximations created (those not in `before`). LLVM defines fptosi of a
/// NaN as poison, and exp's approximation converts its power of two k, which
/// is NaN for a NaN input: where LLVM can see the NaN coming (a softmax of a
/// row masked whole, exp(-inf - -inf) in constants), the poison spreads and
/// LLVM drops the stores that depend on it, leaving the arena's old bytes in
/// the output. The approximation's 2^k, (fptosi(k) + bias) << 23, becomes
/// bitcast(k + 2^23 + bias) << 23 (k integral and k + bias in [0, 2^9), as
/// its clamps ensure): the same bits, a NaN through the fadd, one op less.
/// Any other new conversion reads 0 for a NaN.
void removeConversionPoison(Operation *root,
                            const llvm::DenseSet<Operation *> &before) {
  SmallVector<arith::FPToSIOp> created;
  root->walk([&](arith::FPToSIOp op) {
    if (!before.contains(op) && getElementTypeOrSelf(op.getIn()).isF32() &&
        getElementTypeOrSelf(op.getType()).isInteger(32))
      created.push_back(op);
  });
  for (arith::FPToSIOp op : created) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Type ft = op.getIn().getType();
    auto floatSplat = [&](double v) -> Value {
      FloatAttr f = b.getF32FloatAttr(float(v));
      if (auto vt = dyn_cast<VectorType>(ft))
        return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vt, f));
      return arith::ConstantOp::create(b, loc, f);
    };
    auto add = op->hasOneUse() ? dyn_cast<arith::AddIOp>(*op->user_begin())
                               : arith::AddIOp();
    std::optional<int64_t> bias =
        add ? splatInt(add.getLhs() == op.getResult() ? add.getRhs()
                                                      : add.getLhs())
            : std::nullopt;
    auto shift = add && add->hasOneUse()
                     ? dyn_cast<arith::ShLIOp>(*add->user_begin())
                     : arith::ShLIOp();
    if (bias && *bias >= 0 && *bias < 512 && shift &&
        shift.getLhs() == add.getResult() && splatInt(shift.getRhs()) == 23) {
      Value biased = arith::AddFOp::create(
          b, loc, op.getIn(), floatSplat(std::ldexp(1.0, 23) + double(*bias)));
      Value bits = arith::BitcastOp::create(b, loc, op.getType(), biased);
      shift.getLhsMutable().assign(bits);
      add.erase();
      op.erase();
      continue;
    }
    Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO,
                                        op.getIn(), op.getIn());
    Value safe =
        arith::SelectOp::create(b, loc, isNan, floatSplat(0.0), op.getIn());
    op.getInMutable().assign(safe);
  }
}

struct LowerVectorOpsPass
    : mlir::kiln::impl::LowerVectorOpsPassBase<LowerVectorOpsPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    // Contractions of a register tile become broadcast-FMA outer products.
    vector::populateVectorContractLoweringPatterns(
        patterns, vector::VectorContractLowering::OuterProduct);
    vector::populateVectorOuterProductLoweringPatterns(patterns);
    // The outer products take single elements of a loaded input row; loading
    // each element on its own lets it become a broadcast straight from memory
    // (a load-port uop) instead of a vector load plus in-register shuffles
    // and broadcasts, which compete with the FMAs for the vector pipes.
    vector::populateScalarVectorTransferLoweringPatterns(
        patterns, /*benefit=*/1, /*allowMultipleUses=*/true);
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerParallel);
    vector::populateVectorTransposeLoweringPatterns(
        patterns, vector::VectorTransposeLowering::EltWise);
    // A 16 x 16 transpose of 32-bit elements (tile-and-vectorize's
    // transpose tiles) as the shuffle network AVX-512 runs in registers,
    // instead of 256 element extracts and inserts.
    vector::populateVectorTransposeLoweringPatterns(
        patterns, vector::VectorTransposeLowering::Shuffle16x16,
        /*benefit=*/2);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorBroadcastLoweringPatterns(patterns);
    // exp, tanh, erf, log... as polynomials that stay in vector registers.
    populateMathPolynomialApproximationPatterns(patterns);
    vector::ContractionOp::getCanonicalizationPatterns(patterns, ctx);
    patterns.add<ForwardWholeTile>(ctx);
    patterns.add<ElementwiseContractToFma, WholeVectorSumToReduction,
                 DotContractToReduction>(ctx, /*benefit=*/2);
    patterns.add<TransposeOfBroadcastToBroadcast>(ctx, /*benefit=*/3);
    // These patterns lower, and what they leave the LLVM conversion cannot
    // take: say so here rather than fail without a diagnostic.
    llvm::DenseSet<Operation *> conversions;
    getOperation()->walk(
        [&](arith::FPToSIOp op) { conversions.insert(op.getOperation()); });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation()->emitError("vector lowering did not reach a fixed point");
      return signalPassFailure();
    }
    removeConversionPoison(getOperation(), conversions);
  }
};

} // namespace
