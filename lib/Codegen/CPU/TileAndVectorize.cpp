//===- TileAndVectorize.cpp - static register tiles, then vectors -*- C++ -*-===//
#include "RangeInProducer.h"
#include "TileStrategy.h"
#include "Utils.h"
#include "VnniDepthwise.h"
#include "kiln/Codegen/CPU/Passes.h"
#include "kiln/Codegen/Common/Remarks.h"
#include "kiln/Dialect/Kiln/IR/ElementsUtils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"
#include "llvm/ADT/DenseSet.h"

#include <limits>

namespace mlir::kiln {
#define GEN_PASS_DEF_TILEANDVECTORIZEPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Whether `v`, computed in the body of `op` (a tile of static extents),
/// keeps one value over all of the tile's iterations: defined outside the
/// body, a constant, `linalg.index` of a unit loop, or computed from those
/// alone. A block argument of the body is not (its map is not looked at).
bool invariantInTile(linalg::LinalgOp op, Value v) {
  Block *body = op.getBlock();
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() != body;
  Operation *def = v.getDefiningOp();
  if (auto index = dyn_cast<linalg::IndexOp>(def))
    return op.getStaticLoopRanges()[index.getDim()] == 1;
  Operation *inBody = body->findAncestorOpInBlock(*def);
  if (!inBody || isa<arith::ConstantOp>(inBody))
    return true;
  return llvm::all_of(inBody->getOperands(),
                      [&](Value o) { return invariantInTile(op, o); });
}

/// Whether linalg's vectorizer reads `e` (in a tile whose only non-unit
/// loop is the innermost) with one vector.transfer_read, not a
/// vector.gather: its leading indices invariant in the tile, its last one
/// invariant too (a broadcast scalar) or `linalg.index` of the innermost
/// loop. Stricter than the vectorizer's own test (no offsets added to the
/// index), never looser: a gather from a tensor of run-time size does not
/// lower.
bool readWithoutGather(linalg::LinalgOp op, tensor::ExtractOp e) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (e.getIndices().empty() || ranges.empty() ||
      llvm::count_if(ranges, [](int64_t r) { return r != 1; }) != 1 ||
      ranges.back() == 1)
    return false;
  RankedTensorType t = e.getTensor().getType();
  for (auto [i, index] : llvm::enumerate(e.getIndices().drop_back()))
    if (t.getDimSize(i) != 1 && !invariantInTile(op, index))
      return false;
  Value last = e.getIndices().back();
  if (invariantInTile(op, last))
    return true;
  auto index = last.getDefiningOp<linalg::IndexOp>();
  return index && index.getDim() == ranges.size() - 1;
}

/// Whether a loop of `op` runs no iteration: its static extent is 0, or an
/// operand that the loop indexes directly (a map result `dN`) is a slice
/// whose size there is a constant 0 that its type does not show. The empty
/// last piece of a Split or Slice of run-time rows is such a slice,
/// [%c128] [%c0] of a dimension of 128: the canonicalizer keeps an offset at
/// the end of a dimension out of the type, and tiling a loop of extent 0
/// divides by it.
bool hasEmptyLoop(linalg::LinalgOp op) {
  if (llvm::is_contained(op.getStaticLoopRanges(), 0))
    return true;
  for (OpOperand &operand : op->getOpOperands()) {
    auto slice = operand.get().getDefiningOp<tensor::ExtractSliceOp>();
    if (!slice)
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    int64_t resultDim = 0;
    for (auto [i, size] : llvm::enumerate(slice.getMixedSizes())) {
      if (dropped.test(i))
        continue;
      int64_t d = resultDim++;
      if (isa<AffineDimExpr>(map.getResult(d)) &&
          getConstantIntValue(size) == 0)
        return true;
    }
  }
  return false;
}

/// Whether index `ofr` is a multiple of `m`: a constant, or the induction
/// variable of a loop whose lower bound and step are.
bool isMultipleOf(OpFoldResult ofr, int64_t m) {
  auto multiple = [&](OpFoldResult x) {
    std::optional<int64_t> c = getConstantIntValue(x);
    return c && *c % m == 0;
  };
  if (std::optional<int64_t> c = getConstantIntValue(ofr))
    return *c % m == 0;
  auto arg = dyn_cast<BlockArgument>(dyn_cast<Value>(ofr));
  if (!arg)
    return false;
  Operation *owner = arg.getOwner()->getParentOp();
  if (auto loop = dyn_cast<scf::ForOp>(owner))
    return arg == loop.getInductionVar() &&
           multiple(loop.getLowerBound()) && multiple(loop.getStep());
  if (auto loop = dyn_cast<scf::ForallOp>(owner)) {
    if (arg.getArgNumber() >= loop.getRank())
      return false;
    unsigned i = arg.getArgNumber();
    return multiple(loop.getMixedLowerBound()[i]) &&
           multiple(loop.getMixedStep()[i]);
  }
  return false;
}

/// After tiling, each convolution tile reads its filter (HWCF, output
/// channels innermost) as a slice [kh, kw, c, f0 : f0 + nt] whose rows of nt
/// channels lie F apart: a new cache line, and for wide layers a new page,
/// every input channel. A constant filter whose every use is such a slice,
/// nt wide at multiples of nt, is stored instead as panels
/// [F / nt][KH][KW][C][nt] and each slice reads its panel, one contiguous
/// stream per tile (ResNet's 1x1 and 3x3 convolutions at 7x7 and 14x14).
void packConvFilterPanels(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<arith::ConstantOp> constants;
  func.walk([&](arith::ConstantOp c) { constants.push_back(c); });
  for (arith::ConstantOp cst : constants) {
    auto type = dyn_cast<RankedTensorType>(cst.getType());
    auto elements = dyn_cast<ElementsAttr>(cst.getValue());
    if (!type || !elements || type.getRank() != 4 || !type.hasStaticShape() ||
        cst->use_empty())
      continue;
    int64_t f = type.getDimSize(3), width = 0;
    SmallVector<tensor::ExtractSliceOp> slices;
    bool packable = true;
    for (Operation *user : cst->getUsers()) {
      auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
      if (!slice || !slice.hasUnitStride() ||
          ShapedType::isDynamic(slice.getStaticSizes()[3]) ||
          !llvm::all_of(slice->getUsers(), [](Operation *u) {
            return isa<linalg::Conv1DNwcWcfOp, linalg::Conv2DNhwcHwcfOp>(u);
          })) {
        packable = false;
        break;
      }
      int64_t w = slice.getStaticSizes()[3];
      if ((width && w != width) || w >= f || f % w ||
          !isMultipleOf(slice.getMixedOffsets()[3], w)) {
        packable = false;
        break;
      }
      width = w;
      slices.push_back(slice);
    }
    if (!packable || slices.empty())
      continue;
    int64_t kh = type.getDimSize(0), kw = type.getDimSize(1),
            c = type.getDimSize(2);
    std::optional<ElementsAttr> packed = mlir::kiln::permuteElements(
        elements, {kh, kw, c, f / width, width}, {3, 0, 1, 2, 4},
        /*keepDense=*/true);
    if (!packed)
      continue;
    rewriter.setInsertionPoint(cst);
    Value panels = arith::ConstantOp::create(
        rewriter, cst.getLoc(), packed->getType(), cast<TypedAttr>(*packed));
    for (tensor::ExtractSliceOp slice : slices) {
      rewriter.setInsertionPoint(slice);
      Location loc = slice.getLoc();
      SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
      SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
      OpFoldResult panel;
      if (std::optional<int64_t> o = getConstantIntValue(offsets[3])) {
        panel = rewriter.getIndexAttr(*o / width);
      } else {
        Value w = arith::ConstantIndexOp::create(rewriter, loc, width);
        panel = arith::DivUIOp::create(rewriter, loc,
                                       cast<Value>(offsets[3]), w)
                    .getResult();
      }
      SmallVector<OpFoldResult> newOffsets = {panel, offsets[0], offsets[1],
                                              offsets[2],
                                              rewriter.getIndexAttr(0)};
      SmallVector<OpFoldResult> newSizes = {rewriter.getIndexAttr(1), sizes[0],
                                            sizes[1], sizes[2], sizes[3]};
      SmallVector<OpFoldResult> strides(5, rewriter.getIndexAttr(1));
      rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
          slice, slice.getType(), panels, newOffsets, newSizes, strides);
    }
    rewriter.eraseOp(cst);
  }
}

/// The tensor `v` is a view of (reshaped or sliced), or `v` itself.
Value viewedTensor(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto e = dyn_cast<tensor::ExpandShapeOp>(def))
      v = e.getSrc();
    else if (auto c = dyn_cast<tensor::CollapseShapeOp>(def))
      v = c.getSrc();
    else if (auto s = dyn_cast<tensor::ExtractSliceOp>(def))
      v = s.getSource();
    else if (auto c = dyn_cast<tensor::CastOp>(def))
      v = c.getSource();
    else
      break;
  }
  return v;
}

/// In-place reuse: an elementwise op may write its result into an input
/// that dies at the op (same type, identity access, no other use, not a
/// caller-owned argument or a constant, nor a reshaped or sliced view of
/// one: writing there would change the caller's input or a constant). Returns
/// that input's index. The op's init is a new tensor, or with `anyInit` any
/// tensor it overwrites (an epilogue in the last tile of a loop of run-time
/// extent, whose product accumulated in that init's buffer already).
std::optional<unsigned> dyingInputToReuse(linalg::GenericOp op,
                                          bool anyInit = false) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0)
    return std::nullopt;
  OpOperand *init = op.getDpsInitOperand(0);
  if ((!anyInit && !init->get().getDefiningOp<tensor::EmptyOp>()) ||
      op.payloadUsesValueFromOperand(init) ||
      (anyInit && !op.getMatchingIndexingMap(init).isIdentity()))
    return std::nullopt;
  Type resultType = op->getResult(0).getType();
  for (OpOperand *in : op.getDpsInputOperands()) {
    Value v = in->get();
    Value viewed = viewedTensor(v);
    if (v.getType() != resultType || !v.hasOneUse() ||
        isa<BlockArgument>(viewed) ||
        viewed.getDefiningOp<arith::ConstantOp>() ||
        !op.getMatchingIndexingMap(in).isIdentity())
      continue;
    // A slice of a tensor dies only if that tensor does; a tile computed
    // here (the product's tile, accumulated in the init's buffer) dies here.
    if (anyInit && !v.getDefiningOp<scf::ForOp>() &&
        !v.getDefiningOp<linalg::LinalgOp>())
      continue;
    return in->getOperandNumber();
  }
  return std::nullopt;
}

/// An input of `op` that is its init too, read where it is written (an
/// elementwise op tiled in place once already). Returns its index.
std::optional<unsigned> inputOfInit(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0)
    return std::nullopt;
  OpOperand *init = op.getDpsInitOperand(0);
  if (!op.getMatchingIndexingMap(init).isIdentity())
    return std::nullopt;
  for (OpOperand *in : op.getDpsInputOperands())
    if (in->get() == init->get() && op.getMatchingIndexingMap(in).isIdentity())
      return in->getOperandNumber();
  return std::nullopt;
}

/// After tiling an op whose init was one of its inputs, each tile reads that
/// input at exactly the positions it writes; reading them from the tile of
/// the loop-carried destination instead lets bufferization update the buffer
/// in place rather than copy it.
void readReusedInputInPlace(linalg::LinalgOp tiled, unsigned inputIndex) {
  Value out = tiled.getDpsInitOperand(0)->get();
  auto outSlice = out.getDefiningOp<tensor::ExtractSliceOp>();
  auto inSlice =
      tiled->getOperand(inputIndex).getDefiningOp<tensor::ExtractSliceOp>();
  if (!outSlice || !inSlice || inSlice.getType() != outSlice.getType() ||
      inSlice.getMixedOffsets() != outSlice.getMixedOffsets() ||
      inSlice.getMixedSizes() != outSlice.getMixedSizes() ||
      inSlice.getMixedStrides() != outSlice.getMixedStrides())
    return;
  tiled->setOperand(inputIndex, out);
}

/// Tiles `op` with `tiling`, fusing into each tile the fills that start
/// its reductions and, when given, `producer` (an op whose result only `op`
/// reads). The fused originals that nothing uses any more are erased.
/// Returns the tiled and fused ops, the tiled `op` first.
FailureOr<SmallVector<Operation *>>
tileFusing(RewriterBase &rewriter, linalg::LinalgOp op,
           linalg::LinalgOp producer, const scf::SCFTilingOptions &tiling,
           llvm::DenseSet<Operation *> &erased) {
  SmallVector<Operation *> originals = {fusableFill(op)};
  if (producer)
    originals.append({producer.getOperation(), fusableFill(producer)});
  Operation *producerOp = producer ? producer.getOperation() : nullptr;
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  options.setFusionControlFn(
      [&](tensor::ExtractSliceOp, OpResult result,
          bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (result.getOwner() == producerOp ||
            isa<linalg::FillOp>(result.getOwner()))
          return scf::SCFTileAndFuseOptions::ControlFnResult{};
        return std::nullopt;
      });
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTileAndFuseResult> fused =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(fused))
    return failure();
  for (OpResult r : op->getResults())
    rewriter.replaceAllUsesWith(r, fused->replacements.lookup(r));
  rewriter.eraseOp(op);
  for (Operation *original : originals) {
    if (original && original->use_empty()) {
      erased.insert(original);
      rewriter.eraseOp(original);
    }
  }
  return SmallVector<Operation *>(fused->tiledAndFusedOps.begin(),
                                  fused->tiledAndFusedOps.end());
}

/// Reductions that start from a linalg.fill (matmuls, convolutions,
/// pooling): tile the parallel loops with the fill fused into each tile, then
/// tile the reduction loops inside. The accumulator tile is initialized in
/// place (in registers, after hoisting) instead of by a separate pass over
/// memory. Fails, changing nothing, when the op does not qualify.
LogicalResult tileWithFilledInit(RewriterBase &rewriter, linalg::LinalgOp op,
                                 ArrayRef<int64_t> tiles, int64_t l2Bytes,
                                 llvm::DenseSet<Operation *> &erased) {
  linalg::FillOp fill = fusableFill(op);
  if (!fill)
    return failure();
  MLIRContext *ctx = op->getContext();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  SmallVector<int64_t> parallel(tiles), reduction(tiles.size(), 0);
  for (size_t i = 0; i < tiles.size(); ++i)
    if (iters[i] == utils::IteratorType::reduction) {
      reduction[i] = tiles[i];
      parallel[i] = 0;
    }
  scf::SCFTilingOptions tiling;
  tiling.setTileSizes(getAsIndexOpFoldResult(ctx, parallel));
  tiling.setInterchange(tileInterchange(op, tiles, l2Bytes));
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
  Operation *tiledOp = op;
  if (llvm::any_of(parallel, [](int64_t t) { return t != 0; })) {
    FailureOr<SmallVector<Operation *>> tiled =
        tileFusing(rewriter, op, {}, tiling, erased);
    if (failed(tiled))
      return failure();
    tiledOp = tiled->front();
  }
  if (llvm::all_of(reduction, [](int64_t t) { return t == 0; }))
    return success();
  scf::SCFTilingOptions inner;
  inner.setTileSizes(getAsIndexOpFoldResult(ctx, reduction));
  inner.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
  rewriter.setInsertionPoint(tiledOp);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(tiledOp), inner);
  if (succeeded(tiled))
    rewriter.replaceOp(tiledOp, tiled->replacements);
  return success();
}

/// Tiles loop `dim` of `op` by tiles[dim] with an scf.forall (the loop the
/// thread pool splits; see OutlineParallelLoops.cpp), fusing a fill of the
/// init into it as tileWithFilledInit does. Returns the op inside the forall,
/// to be tiled further with tiles[dim] = 0.
FailureOr<linalg::LinalgOp> tileParallelLoop(RewriterBase &rewriter,
                                             linalg::LinalgOp op,
                                             ArrayRef<int64_t> tiles,
                                             int64_t dim,
                                             llvm::DenseSet<Operation *> &erased) {
  MLIRContext *ctx = op->getContext();
  SmallVector<int64_t> sizes(tiles.size(), 0);
  sizes[dim] = tiles[dim];
  scf::SCFTilingOptions tiling;
  tiling.setTileSizes(getAsIndexOpFoldResult(ctx, sizes));
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  if (fusableFill(op)) {
    FailureOr<SmallVector<Operation *>> tiled =
        tileFusing(rewriter, op, {}, tiling, erased);
    if (failed(tiled) || !isa<linalg::LinalgOp>(tiled->front()))
      return failure();
    return cast<linalg::LinalgOp>(tiled->front());
  }
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), tiling);
  if (failed(tiled) || tiled->tiledOps.size() != 1)
    return failure();
  auto inner = dyn_cast<linalg::LinalgOp>(tiled->tiledOps.front());
  if (!inner)
    return failure();
  rewriter.replaceOp(op, tiled->replacements);
  return inner;
}

/// The reduction (a convolution or a matmul, started from a fill) whose
/// result is read only by `consumer`, an elementwise op over the same
/// iteration space (bias, activation, residual add): its epilogue. Tiling
/// the consumer with the producer fused into each tile applies the
/// epilogue to each accumulator tile while it is in cache, instead of in a
/// second pass over the whole output (and, with threads, a second
/// fork-join).
linalg::LinalgOp epilogueProducer(linalg::LinalgOp consumer) {
  auto generic = dyn_cast<linalg::GenericOp>(consumer.getOperation());
  if (!generic || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() != 0 || !generic.hasPureTensorSemantics() ||
      !generic.getIndexingMapsArray().back().isIdentity() || touchesBools(consumer))
    return {};
  for (OpOperand *in : generic.getDpsInputOperands()) {
    auto producer = in->get().getDefiningOp<linalg::LinalgOp>();
    if (!producer || kiln::isAmxProduct(producer) ||
        !producer->hasOneUse() || producer->getNumResults() != 1 ||
        !fusableFill(producer) || touchesBools(producer) ||
        !generic.getMatchingIndexingMap(in).isIdentity() ||
        cast<ShapedType>(in->get().getType()).getShape() !=
            cast<ShapedType>(generic.getResult(0).getType()).getShape())
      continue;
    if (!isa<linalg::Conv2DNhwcHwcfOp, linalg::DepthwiseConv2DNhwcHwcOp>(
            producer.getOperation()) &&
        !producer->hasAttr(kiln::kInt8DepthwiseAttr) &&
        !linalg::isaContractionOpInterface(producer))
      continue;
    AffineMap out = producer.getIndexingMapMatchingResult(
        cast<OpResult>(producer->getResult(0)));
    if (out.getNumResults() != generic.getNumLoops() ||
        !llvm::all_of(llvm::seq<unsigned>(0, out.getNumResults()), [&](unsigned i) {
          return out.getResult(i) == getAffineDimExpr(i, out.getContext());
        }))
      continue;
    if (generic.payloadUsesValueFromOperand(generic.getDpsInitOperand(0)))
      continue;
    return producer;
  }
  return {};
}

/// Tiles an elementwise `consumer` and its reduction `producer` together:
/// the producer's own register tiles (and thread split, and loop order) on
/// the consumer's loops, the producer fused into each tile, then the
/// producer's reduction loops inside. Returns the tiled consumer; fails,
/// changing nothing, when the producer cannot be fused.
FailureOr<linalg::LinalgOp>
tileWithEpilogue(RewriterBase &rewriter, linalg::LinalgOp consumer,
                 linalg::LinalgOp producer, int64_t vw, int64_t minWork,
                 int64_t l2Bytes, RuntimeExtentTiling runtime,
                 llvm::DenseSet<Operation *> &erased) {
  SmallVector<int64_t> producerTiles =
      chooseTileSizes(producer, vw, runtime);
  if (producerTiles.empty())
    return failure();
  AffineMap out = producer.getIndexingMapMatchingResult(
      cast<OpResult>(producer->getResult(0)));
  unsigned n = out.getNumResults();
  SmallVector<int64_t> tiles(n, 0);
  for (unsigned i = 0; i < n; ++i)
    tiles[i] = producerTiles[out.getDimPosition(i)];
  keepDivisorsWhole(consumer, tiles);
  if (llvm::all_of(tiles, [](int64_t t) { return t == 0; }))
    return failure();
  auto consumerDim = [&](int64_t producerDim) -> int64_t {
    for (unsigned i = 0; i < n; ++i)
      if (out.getDimPosition(i) == producerDim)
        return i;
    return -1;
  };
  int64_t dim =
      consumerDim(parallelLoop(producer, producerTiles, minWork, l2Bytes));
  SmallVector<int64_t> interchange;
  for (int64_t d : tileInterchange(producer, producerTiles, l2Bytes))
    if (int64_t i = consumerDim(d); i >= 0)
      interchange.push_back(i);
  MLIRContext *ctx = consumer->getContext();
  linalg::LinalgOp tiledConsumer = consumer, tiledProducer = producer;
  // One tiling of the consumer with the producer fused: tiledConsumer and
  // tiledProducer become the ops inside the new loop (tiledProducer null
  // when the producer did not fuse).
  auto tileWithProducer = [&](linalg::LinalgOp c, linalg::LinalgOp p,
                              const scf::SCFTilingOptions &tiling) {
    FailureOr<SmallVector<Operation *>> tiled =
        tileFusing(rewriter, c, p, tiling, erased);
    if (failed(tiled))
      return failure();
    tiledConsumer = cast<linalg::LinalgOp>(tiled->front());
    tiledProducer = {};
    for (Operation *t : llvm::drop_begin(*tiled))
      if (t->getName() == p->getName())
        tiledProducer = cast<linalg::LinalgOp>(t);
    return success();
  };
  if (dim >= 0 && tiles[dim] != 0) {
    SmallVector<int64_t> sizes(n, 0);
    sizes[dim] = tiles[dim];
    scf::SCFTilingOptions tiling;
    tiling.setTileSizes(getAsIndexOpFoldResult(ctx, sizes));
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
    if (failed(tileWithProducer(consumer, producer, tiling)))
      return failure();
    tiles[dim] = 0;
  }
  if (tiledProducer && llvm::any_of(tiles, [](int64_t t) { return t != 0; })) {
    scf::SCFTilingOptions tiling;
    tiling.setTileSizes(getAsIndexOpFoldResult(ctx, tiles));
    tiling.setInterchange(interchange);
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
    if (failed(tileWithProducer(tiledConsumer, tiledProducer, tiling)))
      return tiledConsumer == consumer ? FailureOr<linalg::LinalgOp>(failure())
                                       : tiledConsumer;
  }
  if (!tiledProducer)
    return tiledConsumer; // not fused: the producer is tiled on its own
  // The producer's tile accumulates in the consumer's output tile, which the
  // consumer then overwrites in place: no buffer for the producer's whole
  // result (it would be allocated inside the loops). A consumer of another
  // element type (an epilogue that quantizes to int8) cannot hold the
  // accumulators: the producer keeps a tile of its own, which stays in
  // registers (--kiln-lower-vector-ops forwards its write to its read).
  linalg::FillOp fill = fusableFill(tiledProducer);
  Value dest = tiledConsumer.getDpsInitOperand(0)->get();
  if (!fill)
    return tiledConsumer;
  if (fill.getDpsInitOperand(0)->get().getType() == dest.getType()) {
    if (auto slice = dest.getDefiningOp<tensor::ExtractSliceOp>())
      if (slice->getBlock() == fill->getBlock() && fill->isBeforeInBlock(slice))
        slice->moveBefore(fill);
    fill.getDpsInitOperand(0)->set(dest);
  }
  // The producer's tile spans the consumer's: its loops of run-time extent
  // are tiles of the consumer's loops (of a symbolic dimension, or the last
  // of a static loop its tile does not divide), whole.
  SmallVector<int64_t> inner =
      chooseTileSizes(tiledProducer, vw, RuntimeExtentTiling::Whole);
  if (!inner.empty())
    (void)tileWithFilledInit(rewriter, tiledProducer, inner, l2Bytes, erased);
  return tiledConsumer;
}

void applyCleanups(Operation *root, RewritePatternSet &&patterns) {
  MLIRContext *ctx = root->getContext();
  for (Dialect *dialect : ctx->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : ctx->getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, ctx);
  (void)applyPatternsGreedily(root, std::move(patterns));
}

/// Keeps each reduction's accumulator tile in registers across its reduction
/// loops. Right after vectorization, a tile's accumulator is read and written
/// through one slice of the loop-carried tensor, an extract/insert pair that
/// hoists out of the loop; step 4's folding would make the read use the
/// loop-carried tensor directly, which blocks all hoisting, and every
/// reduction step would load and store the whole accumulator tile (ResNet's
/// 3x3 convolutions on 7x7 images ran 25% slower). Inner loops go first, so
/// that the slice leaves every reduction loop around it (a convolution's
/// kernel-row and channel loops); the vector read and write of the hoisted
/// slice leave the loops in the pipeline's kiln-cpu-hoist-invariant-subsets.
/// A tile loop of run-time extent holding other loops, and a loop around
/// one, is not tried (hoistInvariantSubsets).
void hoistAccumulatorSlices(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<scf::ForOp> loops;
  func.walk([&](scf::ForOp loop) { loops.push_back(loop); }); // post-order
  for (scf::ForOp loop : loops)
    hoistInvariantSubsets(rewriter, cast<LoopLikeOpInterface>(*loop));
}

constexpr llvm::StringLiteral kPass = "kiln-cpu-tile-and-vectorize";

struct TileAndVectorizePass
    : mlir::kiln::impl::TileAndVectorizePassBase<TileAndVectorizePass> {
  using TileAndVectorizePassBase::TileAndVectorizePassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();
    IRRewriter rewriter(ctx);
    parallelIfs = 0;

    // The rewrites that prepare ops for their kernels ran before this pass
    // (buildCPUTilingPipeline in lib/Codegen/CPU/Pipelines.cpp).
    // 1. Tile every linalg op into static register-sized tiles.
    //    Consumers first, so that a reduction fuses its fill before the fill
    //    would be tiled on its own.
    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    //    A loop of run-time extent (a symbolic dimension) is tiled as a
    //    long static loop would be, then split into its full tiles and the
    //    indices left, one at a time or, in a product's register tile
    //    loop, in tiles of powers of two (PartialTiles.cpp).
    bool runtimeExtents = llvm::any_of(
        ops, [](linalg::LinalgOp op) { return op.hasDynamicShape(); });
    runtimeTiling = runtimeExtents ? RuntimeExtentTiling::Full
                                   : RuntimeExtentTiling::Unit;
    llvm::DenseSet<Operation *> erased;
    //    A tensor's minimum and maximum (DynamicQuantizeLinear's range) wait
    //    until the loop that makes the tensor exists: they may be taken
    //    from its tiles (fuseMinMaxIntoProducer).
    SmallVector<MinMaxChain> minMax;
    llvm::DenseSet<Operation *> deferred;
    if (!runtimeExtents)
      for (linalg::LinalgOp op : ops)
        if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
          if (std::optional<MinMaxChain> chain = minMaxChainOf(generic)) {
            minMax.push_back(*chain);
            deferred.insert(chain->partials);
            deferred.insert(chain->combine);
            if (chain->rest)
              deferred.insert(chain->rest);
            for (linalg::GenericOp g : {chain->partials, chain->combine})
              if (linalg::FillOp fill = fusableFill(g))
                deferred.insert(fill);
          }
    for (linalg::LinalgOp op : llvm::reverse(ops))
      if (!erased.contains(op) && // else fused into its consumer's tiles
          !deferred.contains(op))
        tile(rewriter, op, erased);
    for (MinMaxChain chain : minMax)
      tileMinMax(rewriter, chain, erased);
    //    A static loop whose register tile does not divide it (AVX2's 6-row
    //    products): its full tiles and its last one, each static (nothing
    //    to do when every tile divides its loop: no affine.min was made).
    if (runtimeExtents)
      tilePartialTiles(rewriter, func);
    else
      peelPartialTiles(rewriter, func, vectorWidth);
    keepPaddedFillsApart(rewriter, func);

    // 2. Fold the tile arithmetic and turn unit-height 2-D windows into 1-D
    //    convolutions, the form MLIR vectorizes.
    {
      RewritePatternSet patterns(ctx);
      linalg::populateDecomposeConvolutionPatterns(patterns);
      tensor::populateMergeConsecutiveInsertExtractSlicePatterns(patterns);
      applyCleanups(func, std::move(patterns));
    }
    packConvFilterPanels(rewriter, func);

    // 3. Vectorize every static, tile-sized linalg op.
    ops.clear();
    func.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    for (linalg::LinalgOp op : ops)
      vectorize(rewriter, op);
    hoistAccumulatorSlices(rewriter, func);

    // 4. Read and write through the slices directly and drop unit dims.
    {
      RewritePatternSet patterns(ctx);
      tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(patterns);
      vector::populateVectorReductionToContractPatterns(patterns);
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
      // Each run-time size as the dimension of a tensor made before the
      // loops (the model's input, in the end), not of a loop's result:
      // value-bounds analysis (bufferization's slice comparisons) otherwise
      // proves every such size through each loop nest that made the tensor.
      if (runtimeExtents) {
        memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
        scf::populateSCFForLoopCanonicalizationPatterns(patterns);
      }
      applyCleanups(func, std::move(patterns));
    }
  }

  /// Tiles a deferred minimum and maximum: its partials taken from the tiles
  /// of the loop that makes the tensor, or, when that does not apply, every
  /// op of it as the walk above would have, in the same order.
  void tileMinMax(IRRewriter &rewriter, MinMaxChain chain,
                  llvm::DenseSet<Operation *> &erased) {
    if (succeeded(fuseMinMaxIntoProducer(rewriter, chain, vectorWidth)))
      return;
    kiln::remarkMissed(chain.partials, kPass, "range-in-producer",
                       "no parallel loop of static tiles makes the tensor; "
                       "its minimum and maximum are a pass of their own");
    linalg::FillOp combineFill = fusableFill(chain.combine);
    linalg::FillOp partialsFill = fusableFill(chain.partials);
    if (chain.rest)
      tile(rewriter, chain.rest, erased);
    tile(rewriter, chain.combine, erased);
    if (combineFill && !erased.contains(combineFill))
      tile(rewriter, combineFill, erased);
    tile(rewriter, chain.partials, erased);
    if (partialsFill && !erased.contains(partialsFill))
      tile(rewriter, partialsFill, erased);
  }

  /// Splits each tile loop of run-time extent into its full tiles and the
  /// indices left, folds the shapes of both to static ones, and tiles any op
  /// still of run-time extent (one whose tiling did not take that form) one
  /// index at a time along those loops.
  void tilePartialTiles(IRRewriter &rewriter, func::FuncOp func) {
    peelPartialTiles(rewriter, func, vectorWidth);
    applyCleanups(func, RewritePatternSet(func.getContext()));
    runtimeTiling = RuntimeExtentTiling::Unit;
    retiling = true;
    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) {
      if (op.hasDynamicShape())
        ops.push_back(op);
    });
    llvm::DenseSet<Operation *> erased;
    for (linalg::LinalgOp op : llvm::reverse(ops))
      if (!erased.contains(op))
        tile(rewriter, op, erased);
  }

  /// The id of the next kiln.parallel_if (markRunTimeFork).
  int64_t parallelIfs = 0;
  /// How tile() tiles the loops of run-time extent.
  RuntimeExtentTiling runtimeTiling = RuntimeExtentTiling::Unit;
  /// Whether tile() tiles the tiles of partial tiles again: an op among
  /// them may read its init as an input already (tiled in place).
  bool retiling = false;

  /// Tiles `op` as TileStrategy chooses: with its epilogue producer fused,
  /// its outermost parallel loop shared by threads, its fill fused.
  void tile(IRRewriter &rewriter, linalg::LinalgOp op,
            llvm::DenseSet<Operation *> &erased) {
    if (kiln::isAmxProduct(op) || op->hasAttr(kiln::kAmxEpilogueAttr))
      return; // AMX tiles after bufferization (--kiln-cpu-amx-matmul)
    if (op->hasAttr(kiln::kFillBorderAttr))
      return; // only its border is filled, after bufferization
    // A loop of extent 0 beside run-time ones (a [?, 0, 5] tensor, which
    // the graph's empty-tensor folds cannot make a constant, or an empty
    // slice of one): the op does nothing, and its tile sizes would divide
    // by 0.
    if (hasEmptyLoop(op))
      return;
    // (A partial tile's epilogue stays apart from its product: the product's
    // reduction loops are tiled already, around the tile.)
    if (linalg::LinalgOp producer =
            retiling ? linalg::LinalgOp() : epilogueProducer(op)) {
      Value pays = forkPaysAtRunTime(rewriter, producer, parallelWork);
      FailureOr<linalg::LinalgOp> tiled =
          tileWithEpilogue(rewriter, op, producer, vectorWidth, parallelWork,
                           l2Bytes, runtimeTiling, erased);
      if (succeeded(tiled)) {
        markRunTimeFork(rewriter, *tiled, pays, parallelIfs);
        return;
      }
    }
    std::optional<unsigned> reused;
    if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation())) {
      if (retiling && (reused = inputOfInit(generic)))
        ; // reads its init already
      else if ((reused = dyingInputToReuse(generic, retiling)))
        op.getDpsInitOperand(0)->set(op->getOperand(*reused));
    }
    SmallVector<int64_t> tiles =
        chooseTileSizes(op, vectorWidth, runtimeTiling);
    if (tiles.empty() || llvm::all_of(tiles, [](int64_t t) { return t == 0; }))
      return;
    // The outer loop over tiles that threads share, then the rest inside.
    int64_t dim = parallelLoop(op, tiles, parallelWork, l2Bytes);
    if (dim >= 0) {
      Value pays = forkPaysAtRunTime(rewriter, op, parallelWork);
      FailureOr<linalg::LinalgOp> inner =
          tileParallelLoop(rewriter, op, tiles, dim, erased);
      if (succeeded(inner)) {
        markRunTimeFork(rewriter, *inner, pays, parallelIfs);
        op = *inner;
        if (reused)
          readReusedInputInPlace(op, *reused);
        tiles[dim] = 0;
        if (llvm::all_of(tiles, [](int64_t t) { return t == 0; }))
          return;
      }
    }
    if (succeeded(tileWithFilledInit(rewriter, op, tiles, l2Bytes, erased)))
      return;
    scf::SCFTilingOptions options;
    options.setTileSizes(getAsIndexOpFoldResult(&getContext(), tiles));
    options.setInterchange(tileInterchange(op, tiles, l2Bytes));
    options.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
    rewriter.setInsertionPoint(op);
    FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(op.getOperation()), options);
    if (failed(tiled)) {
      kiln::remarkMissed(op, kPass, "register-tile",
                         "tiling it failed; it runs whole");
      return;
    }
    if (reused && !tiled->tiledOps.empty())
      if (auto t = dyn_cast<linalg::LinalgOp>(tiled->tiledOps.back()))
        readReusedInputInPlace(t, *reused);
    rewriter.replaceOp(op, tiled->replacements);
  }

  /// The tiled fill of each padded tensor whose interior is written
  /// (insert_slice) stays its own: CSE would merge identical fill loops of
  /// pads of one shape into one tensor, and bufferization would then copy
  /// it before every write.
  static void keepPaddedFillsApart(IRRewriter &rewriter, func::FuncOp func) {
    int64_t id = 0;
    func.walk([&](tensor::InsertSliceOp insert) {
      Operation *def = insert.getDest().getDefiningOp();
      if (isa_and_nonnull<scf::ForallOp, scf::ForOp, linalg::FillOp>(def) &&
          !def->hasAttr(kDistinctFillAttr))
        def->setAttr(kDistinctFillAttr, rewriter.getI64IntegerAttr(id++));
    });
  }

  /// Vectorizes one tile-sized op, or says why it stays scalar.
  void vectorize(IRRewriter &rewriter, linalg::LinalgOp op) {
    // The int8 depthwise tiles have a kernel of their own.
    if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
        generic && generic->hasAttr(kiln::kInt8DepthwiseAttr)) {
      if (failed(kiln::replaceInt8DepthwiseTile(rewriter, generic)))
        kiln::remarkMissed(op, kPass, "vnni-depthwise-kernel",
                           "the tile does not fit the vpdpbusd kernel; it "
                           "runs as scalar loops");
      return;
    }
    if (kiln::isAmxProduct(op) || op->hasAttr(kiln::kAmxEpilogueAttr) ||
        op->hasAttr(kiln::kFillBorderAttr))
      return; // lowered after bufferization
    if (int64_t volume = tileVolume(op); volume > kMaxVectorizedTile) {
      kiln::remarkMissed(
          op, kPass, "vectorize",
          volume == INT64_MAX
              ? llvm::Twine("its extents are not static; it runs as scalar "
                            "loops")
              : "it was not tiled and has " + llvm::Twine(volume) +
                    " elements, too many for vectors; it runs as scalar "
                    "loops");
      return;
    }
    if (touchesBools(op)) {
      kiln::remarkMissed(op, kPass, "vectorize",
                         "it reads or writes i1 values, which stay scalar");
      return;
    }
    // A rank-0 op that reads a tensor element by element (a scalar scan
    // step) is one scalar: linalg's vectorizer turns its tensor.extract into
    // a vector.gather with scalar indices, which does not verify.
    if (op.getNumLoops() == 0 &&
        !op->getRegion(0).getOps<tensor::ExtractOp>().empty())
      return;
    // N-d tensor.extract (gathers) from static tensors vectorize too: into
    // contiguous reads where the indices vary only along the innermost
    // dimension of the tile, into vector.gather otherwise. The vector.gather
    // of an extract from a tensor of run-time size does not lower, its
    // contiguous read does (a Resize over run-time lengths reads whole
    // channel vectors of the rows its tables pick).
    bool ndExtract = llvm::all_of(
        op->getRegion(0).getOps<tensor::ExtractOp>(), [&](tensor::ExtractOp e) {
          return e.getTensor().getType().hasStaticShape() ||
                 readWithoutGather(op, e);
        });
    auto precondition = [&](linalg::LinalgOp o) {
      return linalg::vectorizeOpPrecondition(o, {}, {}, ndExtract);
    };
    if (failed(precondition(op))) {
      FailureOr<linalg::LinalgOp> unitFree = dropUnitWindowDims(rewriter, op);
      if (succeeded(unitFree))
        op = *unitFree;
      if (failed(unitFree) || failed(precondition(op))) {
        kiln::remarkMissed(op, kPass, "vectorize",
                           "linalg's vectorizer does not take it; it runs as "
                           "scalar loops");
        return;
      }
    }
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::VectorizationResult> result =
        linalg::vectorize(rewriter, op, {}, {}, ndExtract);
    if (failed(result)) {
      kiln::remarkMissed(op, kPass, "vectorize",
                         "vectorizing it failed; it runs as scalar loops");
      return;
    }
    rewriter.replaceOp(op, result->replacements);
  }

  /// A gather through a window map (im2col: h = oh s + kh) is not a
  /// projected permutation; its tile has unit window dimensions, and
  /// without them the map is one. The op without its unit dimensions (which
  /// replaces `op`), or failure with `op` left as it was.
  static FailureOr<linalg::LinalgOp>
  dropUnitWindowDims(IRRewriter &rewriter, linalg::LinalgOp op) {
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic ||
        llvm::all_of(generic.getIndexingMapsArray(),
                     [](AffineMap m) { return m.isProjectedPermutation(); }))
      return failure();
    rewriter.setInsertionPoint(op);
    linalg::ControlDropUnitDims control;
    control.rankReductionStrategy =
        linalg::ControlDropUnitDims::RankReductionStrategy::ExtractInsertSlice;
    FailureOr<linalg::DropUnitDimsResult> dropped =
        linalg::dropUnitDims(rewriter, generic, control);
    if (failed(dropped))
      return failure();
    rewriter.replaceOp(op, dropped->replacements);
    return cast<linalg::LinalgOp>(dropped->resultOp.getOperation());
  }
};
} // namespace
