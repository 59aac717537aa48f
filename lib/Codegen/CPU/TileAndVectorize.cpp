//===- TileAndVectorize.cpp - static register tiles, then vectors -*- C++ -*-===//
#include "VnniDepthwise.h"
#include "kiln/Codegen/CPU/Passes.h"
#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/Kiln/IR/ElementsUtils.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_TILEANDVECTORIZEPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// Largest divisor of `size` not above `target` (the whole size if it fits).
/// Tiles that divide their loop keep every tile static: no masks, no peeling.
int64_t divisorAtMost(int64_t size, int64_t target) {
  if (size <= target)
    return size;
  for (int64_t d = target; d > 1; --d)
    if (size % d == 0)
      return d;
  return 1;
}

/// The vector-dimension tile of a register tile: the whole loop when it fits
/// in two registers, else a divisor made of whole or half registers (two
/// registers first, then one, two and a half, ...), else any divisor up to
/// two registers. 1000 classes get 40 lanes, not 25 (a register and a
/// 9-lane remainder on every FMA). A register and a half (24 lanes of 16) is
/// the last resort: LLVM widens such vectors and assembles every load from
/// pieces, and a 1x1 convolution to 24 channels (MobileNetV2) ran twice as
/// fast with tiles of 8; 144 channels take 16 rather than 24 for the same
/// reason (MobileNetV2 13.0 -> 11.0 ms on one thread).
int64_t registerTile(int64_t size, int64_t vw) {
  if (vw >= 2 && size > vw && size < 2 * vw && size % (vw / 2) == 0)
    return vw / 2;
  if (size <= 2 * vw || vw < 2)
    return divisorAtMost(size, 2 * vw);
  int64_t half = vw / 2;
  for (int64_t d : {4 * half, 2 * half, 5 * half, 3 * half, half})
    if (size % d == 0)
      return d;
  return divisorAtMost(size, 2 * vw);
}

/// Vectorizing a tile bigger than this would build huge vectors; such an op
/// (whose tiling failed) is left to become scalar loops instead.
constexpr int64_t kMaxVectorizedTile = 1 << 16;

/// The innermost tile of an elementwise op, at most `budget` lanes: a
/// power-of-two number of whole registers where one divides the loop (96
/// channels take 32 lanes, not 48: LLVM widens a 48-lane vector and
/// assembles its loads and stores from pieces), else a loop shorter than a
/// register whole, else half a register, else the largest divisor.
int64_t vectorTile(int64_t size, int64_t budget, int64_t vw) {
  int64_t lanes = 1;
  while (lanes * 2 <= budget)
    lanes *= 2;
  for (; lanes >= vw; lanes /= 2)
    if (size % lanes == 0)
      return lanes;
  if (size <= budget && size < vw)
    return size;
  if (vw >= 2 && vw / 2 <= budget && size % (vw / 2) == 0)
    return vw / 2;
  return divisorAtMost(size, budget);
}

/// Channels per depthwise tile: whole vector registers where the channel
/// count allows (2, else 3, else 1 register), so that no tile ends in a
/// partial register (MobileNetV2's 144 channels got 24-lane tiles: one full
/// and one half register per pixel). Other counts take the largest divisor up
/// to two registers.
int64_t depthwiseChannelTile(int64_t channels, int64_t vw) {
  for (int64_t regs : {2, 1})
    if (channels % (regs * vw) == 0)
      return regs * vw;
  return divisorAtMost(channels, 2 * vw);
}

/// Marks a contraction whose constant right-hand side packConstantRhs laid
/// out in panels: its panel dimension is one register tile, taken whole.
constexpr llvm::StringLiteral kPackedRhsAttr = "kiln.packed_rhs";

/// Lanes of a register tile over the N of a packed right-hand side.
int64_t panelLanes(int64_t n, int64_t vw) {
  return n % (4 * vw) == 0 ? 4 * vw : registerTile(n, vw);
}

/// Columns per panel of a packed right-hand side: 4 registers when they
/// divide N (a matrix-vector product then has 4 independent FMA chains for
/// its single row of accumulators; a 4 x 64 tile holds 16), else the usual
/// register tile. It depends on B alone, so that the batch variants of one
/// model pack each weight the same way and share one copy of it. 0: no
/// packing (a single panel).
int64_t panelWidth(int64_t n, int64_t vw) {
  int64_t width = panelLanes(n, vw);
  // A tile of whole and half registers (40 lanes for 1000 classes) is made
  // of panels half a register wide, several per tile (panelsPerTile): the
  // vectors keep a power-of-two length. LLVM widens a 40-lane vector and
  // assembles each of its loads from pieces (MobileNetV2's classifier ran at
  // a third of the speed of its weight stream).
  if (width > vw / 2 && width % vw != 0 && width % (vw / 2) == 0)
    width = vw / 2;
  return width > 0 && n % width == 0 && n / width >= 2 ? width : 0;
}

/// Panels of width panelWidth(n, vw) that one register tile spans.
int64_t panelsPerTile(int64_t n, int64_t vw) {
  int64_t width = panelWidth(n, vw);
  if (!width)
    return 1;
  return divisorAtMost(n / width,
                       std::max<int64_t>(1, panelLanes(n, vw) / width));
}

/// The f16 constant that `v` widens to f32 (an elementwise extf of it, as
/// --precision=fp16 leaves in front of a product), rebuilt through the
/// reshapes between (a depthwise filter is collapsed to [KH, KW, C]); a null
/// value if `v` is something else.
Value halfConstantOf(RewriterBase &rewriter, Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return Value();
  auto rebuilt = [&](Value src, auto reshape) -> Value {
    Value half = halfConstantOf(rewriter, src);
    if (!half)
      return Value();
    rewriter.setInsertionPoint(reshape);
    auto type = cast<RankedTensorType>(reshape.getType())
                    .clone(cast<ShapedType>(half.getType()).getElementType());
    return decltype(reshape)::create(rewriter, reshape.getLoc(), type, half,
                                     reshape.getReassociationIndices())
        .getResult();
  };
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def))
    return rebuilt(collapse.getSrc(), collapse);
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
    if (!expand.getType().hasStaticShape())
      return Value();
    return rebuilt(expand.getSrc(), expand);
  }
  auto generic = dyn_cast<linalg::GenericOp>(def);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      !generic.hasPureTensorSemantics() ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return Value();
  Block &body = generic.getRegion().front();
  auto ext = dyn_cast<arith::ExtFOp>(body.front());
  if (!ext || body.getOperations().size() != 2 ||
      ext.getIn() != body.getArgument(0) ||
      body.getTerminator()->getOperand(0) != ext.getResult())
    return Value();
  Value src = generic.getDpsInputOperand(0)->get();
  auto cst = src.getDefiningOp<arith::ConstantOp>();
  if (!cst || !cast<ShapedType>(src.getType()).getElementType().isF16())
    return Value();
  return src;
}

/// Rebuilds named op `op` (whose region is made for its operand types) with
/// `inputs` in place of its inputs.
template <typename OpTy>
void rebuildWithInputs(RewriterBase &rewriter, OpTy op, ValueRange inputs) {
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute a : op->getAttrs())
    if (a.getName() != "operandSegmentSizes")
      attrs.push_back(a);
  rewriter.setInsertionPoint(op);
  auto rebuilt = OpTy::create(rewriter, op.getLoc(), op->getResultTypes(),
                              inputs, op.getDpsInits(), attrs);
  rewriter.replaceOp(op, rebuilt->getResults());
}

/// --precision=fp16 stores constant weights as fp16 and widens them with an
/// elementwise op in front of each product, which would write an f32 copy
/// of every weight to the arena on each run. Matmuls and convolutions read
/// the fp16 constant instead and widen each value in their kernels (named
/// linalg ops convert mixed operands in their bodies): the weights are read
/// at half the bytes.
void readHalfWeightsInKernels(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<linalg::LinalgOp> ops;
  func.walk([&](linalg::LinalgOp op) {
    auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation());
    if ((matmul ? !matmul.hasUserDefinedMaps()
                : isa<linalg::Conv2DNhwcHwcfOp,
                      linalg::DepthwiseConv2DNhwcHwcOp>(op)) &&
        op.hasPureTensorSemantics())
      ops.push_back(op);
  });
  for (linalg::LinalgOp op : ops) {
    Value weights = op.getDpsInputOperand(1)->get();
    Operation *widen = weights.getDefiningOp();
    Value half = halfConstantOf(rewriter, weights);
    if (!half)
      continue;
    SmallVector<Value> inputs = {op.getDpsInputOperand(0)->get(), half};
    if (auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation()))
      rebuildWithInputs(rewriter, matmul, inputs);
    else if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op.getOperation()))
      rebuildWithInputs(rewriter, conv, inputs);
    else
      rebuildWithInputs(rewriter,
                        cast<linalg::DepthwiseConv2DNhwcHwcOp>(op.getOperation()),
                        inputs);
    // The widening ops (and reshapes) nothing reads any more.
    while (widen && widen->use_empty()) {
      Operation *next = widen->getNumOperands()
                            ? widen->getOperand(0).getDefiningOp()
                            : nullptr;
      if (isa<arith::ConstantOp>(widen))
        break;
      rewriter.eraseOp(widen);
      widen = next;
    }
  }
}

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
    if (!elements || !aType || !bType || !cType || !aType.hasStaticShape() ||
        !bType.hasStaticShape() || !cType.hasStaticShape())
      continue;
    Type elt = cType.getElementType();
    Type bElt = bType.getElementType();
    // fp16 weights (readHalfWeightsInKernels) are widened in the kernel.
    if (!elt.isF32() || aType.getElementType() != elt ||
        (bElt != elt && !bElt.isF16()))
      continue;
    int64_t m = cType.getDimSize(0), k = bType.getDimSize(0),
            n = bType.getDimSize(1);
    int64_t width = panelWidth(n, vw);
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
      Value empty = tensor::EmptyOp::create(rewriter, loc, outType.getShape(), elt);
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

/// The fill of a static empty tensor with a constant that defines `v`, or
/// null.
linalg::FillOp constantFillOfEmpty(Value v) {
  auto fill = v.getDefiningOp<linalg::FillOp>();
  auto empty = fill ? fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>()
                    : tensor::EmptyOp();
  if (!fill || !empty || !empty.getDynamicSizes().empty() ||
      !fill.getInputs()[0].getDefiningOp<arith::ConstantOp>())
    return nullptr;
  return fill;
}

/// A clone of `fill` (see constantFillOfEmpty), of its empty tensor and of
/// its constant, created before `before`. Clones, so that the fill keeps
/// its marks (kUnreadPaddingAttr).
Value cloneFillBefore(RewriterBase &rewriter, linalg::FillOp fill,
                      Operation *before) {
  rewriter.setInsertionPoint(before);
  IRMapping map;
  rewriter.clone(*fill.getInputs()[0].getDefiningOp(), map);
  rewriter.clone(*fill.getOutputs()[0].getDefiningOp(), map);
  return rewriter.clone(*fill, map)->getResult(0);
}

/// Whether `use` is an init its op overwrites whole without reading it: a
/// linalg op's init its body never reads, or the tensor a loop marked
/// kOverwrittenOutsAttr carries (the int8 dot-product kernels).
bool isOverwrittenInit(OpOperand &use) {
  Operation *op = use.getOwner();
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return linalgOp.isDpsInit(&use) &&
           !linalgOp.payloadUsesValueFromOperand(&use);
  if (!op->hasAttr(kiln::kOverwrittenOutsAttr) || op->getNumResults() != 1)
    return false;
  if (auto forall = dyn_cast<scf::ForallOp>(op))
    return &use == &forall.getOutputsMutable()[0];
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return &use == &loop.getInitArgsMutable()[0];
  return false;
}

/// The one init of `op` (see isOverwrittenInit), when it is an empty
/// tensor and `op` has one result and is not a copy (the copies are what
/// the callers remove); null otherwise.
OpOperand *overwrittenEmptyInit(Operation *op) {
  if (!op || isa<linalg::CopyOp, linalg::FillOp>(op) ||
      op->getNumResults() != 1)
    return nullptr;
  OpOperand *init = nullptr;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    if (linalgOp.getNumDpsInits() == 1)
      init = linalgOp.getDpsInitOperand(0);
  } else if (auto forall = dyn_cast<scf::ForallOp>(op)) {
    init = &forall.getOutputsMutable()[0];
  } else if (auto loop = dyn_cast<scf::ForOp>(op)) {
    if (loop.getNumRegionIterArgs() == 1)
      init = &loop.getInitArgsMutable()[0];
  }
  return init && isOverwrittenInit(*init) &&
                 init->get().getDefiningOp<tensor::EmptyOp>()
             ? init
             : nullptr;
}

/// Points `insert` at a fresh clone of `fill` made above `producer` (CSE
/// may share one fill between two pads of the same shape), and starts
/// `init` (of `producer`) from the slice of that clone the insert writes,
/// seen through an expand_shape by `groups` when given.
void startFromInsertedSlice(RewriterBase &rewriter, linalg::FillOp fill,
                            Operation *producer, OpOperand *init,
                            tensor::InsertSliceOp insert,
                            ArrayRef<ReassociationIndices> groups) {
  Value newFill = cloneFillBefore(rewriter, fill, producer);
  Value newDest = tensor::ExtractSliceOp::create(
      rewriter, insert.getLoc(), insert.getSourceType(), newFill,
      insert.getMixedOffsets(), insert.getMixedSizes(),
      insert.getMixedStrides());
  if (!groups.empty())
    newDest = tensor::ExpandShapeOp::create(
        rewriter, insert.getLoc(), init->get().getType(), newDest, groups);
  init->set(newDest);
  insert.getDestMutable().set(newFill);
}

/// A padded tensor is built as fill(padded) + copy(x into its interior
/// slice); when x comes from an elementwise op that only the copy reads
/// (the activation after a convolution, which then fuses as its epilogue),
/// that op writes straight into the interior slice instead: the copy, a
/// whole pass over the activation, disappears (MobileNetV2 pads every
/// depthwise convolution's input). The fill and slice move above the op.
/// The slice may be seen through a reshape: static int8 pads the channels
/// of a 1x1 convolution's [pixels, C] rows to a multiple of 64, and copies
/// the NHWC activation in through an expand_shape of the slice (and a
/// collapse_shape of the result back).
void writeIntoCopyDestination(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<linalg::CopyOp> copies;
  func.walk([&](linalg::CopyOp op) { copies.push_back(op); });
  for (linalg::CopyOp copy : copies) {
    if (!copy.hasPureTensorSemantics() || !copy->getResult(0).hasOneUse())
      continue;
    Value src = copy.getInputs()[0];
    // An elementwise generic, a named op such as the transpose of an NCHW
    // model input in front of a padded stem, or an int8 kernel with its
    // requantization.
    Operation *producer = src.getDefiningOp();
    OpOperand *init = overwrittenEmptyInit(producer);
    // The destination, possibly an expand_shape of the slice, whose
    // result then goes back through the matching collapse_shape.
    Value dest = copy.getOutputs()[0];
    auto expand = dest.getDefiningOp<tensor::ExpandShapeOp>();
    auto slice = (expand ? expand.getSrc() : dest)
                     .getDefiningOp<tensor::ExtractSliceOp>();
    Operation *user = *copy->getResult(0).getUsers().begin();
    auto collapse = dyn_cast<tensor::CollapseShapeOp>(user);
    if (expand) {
      if (!collapse || !collapse->hasOneUse() || !expand->hasOneUse() ||
          collapse.getReassociationIndices() !=
              expand.getReassociationIndices() ||
          collapse.getType() != expand.getSrcType())
        continue;
      user = *collapse->getUsers().begin();
    }
    auto insert = dyn_cast<tensor::InsertSliceOp>(user);
    if (!init || !slice || !insert || !src.hasOneUse() ||
        producer->getBlock() != copy->getBlock() ||
        dest.getType() != src.getType() || !slice.hasUnitStride() ||
        !insert.hasUnitStride() || !slice.getOffsets().empty() ||
        !insert.getOffsets().empty() ||
        slice.getStaticOffsets() != insert.getStaticOffsets() ||
        slice.getStaticSizes() != insert.getStaticSizes() ||
        insert.getDest() != slice.getSource())
      continue;
    auto fill = constantFillOfEmpty(slice.getSource());
    if (!fill)
      continue;
    // A padded tensor of its own for this copy, its slice the same box.
    startFromInsertedSlice(rewriter, fill, producer, init, insert,
                           expand ? expand.getReassociationIndices()
                                  : SmallVector<ReassociationIndices, 4>());
    rewriter.replaceOp(copy, producer->getResult(0));
    if (expand && expand->use_empty())
      rewriter.eraseOp(expand);
  }
}

/// An op whose result is inserted, directly or through a collapse_shape,
/// into a slice of a constant-filled tensor, and that never reads its own
/// empty init: static int8's unfolded windows (im2col, [N, OH, OW, KH, KW
/// C]) inserted into the first K columns of the [M, Kp] rows whose K is
/// padded for the kernel (to 64 bytes for AMX). Lowering builds the
/// unfolding on that slice, but canonicalization gives the generic a fresh
/// empty init (its body never reads one), and the insert then bufferizes as
/// a serial copy of every row between two parallel loops: SqueezeNet's 3x3
/// expansions copied 435 KB at 55 x 55, 3% of its int8 time on one thread
/// and 6% on two. The op writes into the slice again (seen through the
/// matching expand_shape) of a fresh clone of the fill, as
/// writeIntoCopyDestination does.
void writeIntoInsertDestination(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<tensor::InsertSliceOp> inserts;
  func.walk([&](tensor::InsertSliceOp op) { inserts.push_back(op); });
  for (tensor::InsertSliceOp insert : inserts) {
    Value src = insert.getSource();
    auto collapse = src.getDefiningOp<tensor::CollapseShapeOp>();
    Value produced = collapse ? collapse.getSrc() : src;
    Operation *producer = produced.getDefiningOp();
    OpOperand *init = overwrittenEmptyInit(producer);
    if (!init || !src.hasOneUse() || !produced.hasOneUse() ||
        producer->getBlock() != insert->getBlock() || !insert.hasUnitStride() ||
        !insert.getOffsets().empty() || !insert.getSizes().empty() ||
        insert.getSourceType().getRank() != insert.getDestType().getRank())
      continue;
    auto fill = constantFillOfEmpty(insert.getDest());
    if (!fill)
      continue;
    startFromInsertedSlice(rewriter, fill, producer, init, insert,
                           collapse ? collapse.getReassociationIndices()
                                    : SmallVector<ReassociationIndices, 4>());
    if (fill->use_empty()) {
      Operation *empty = fill.getOutputs()[0].getDefiningOp();
      rewriter.eraseOp(fill);
      if (empty->use_empty())
        rewriter.eraseOp(empty);
    }
  }
}

/// Whether `v` is `root` or a slice or reshape of it (transitively).
bool derivesFrom(Value v, Value root) {
  while (v != root) {
    Operation *def = v.getDefiningOp();
    if (!isa_and_nonnull<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
                         tensor::CollapseShapeOp>(def))
      return false;
    v = def->getOperand(0);
  }
  return true;
}

/// `v` (derived from `root` by slices and reshapes) rebuilt on `newRoot`,
/// the clones inserted at `b`'s insertion point.
Value rebase(OpBuilder &b, Value v, Value root, Value newRoot) {
  if (v == root)
    return newRoot;
  Operation *def = v.getDefiningOp();
  Value src = rebase(b, def->getOperand(0), root, newRoot);
  IRMapping map;
  map.map(def->getOperand(0), src);
  return b.clone(*def, map)->getResult(0);
}

/// The destination operand that `v` was written into (through reshapes and
/// the results of destination-style ops) whose value derives from `root`.
OpOperand *rootedInit(Value v, Value root) {
  while (Operation *def = v.getDefiningOp()) {
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def)) {
      v = def->getOperand(0);
      continue;
    }
    auto dps = dyn_cast<DestinationStyleOpInterface>(def);
    if (!dps)
      return nullptr;
    OpOperand *init = dps.getTiedOpOperand(cast<OpResult>(v));
    if (!init)
      return nullptr;
    if (derivesFrom(init->get(), root))
      return init;
    v = init->get();
  }
  return nullptr;
}

/// CSE merges identical fills of one shape, and identical empty tensors
/// with the slices taken from them: the zero-padded rows of two int8 1x1
/// convolutions with the same K, the padded inputs or unfolded windows of
/// two 3x3 ones, the results of two concatenations of one shape that their
/// producers write in place. Every insert into the shared tensor but the
/// first then bufferizes as a copy of the whole tensor (serial memcpys
/// between the parallel loops). Each further insert gets a tensor of its
/// own (a clone of the fill and its empty tensor, or of the empty tensor),
/// created right before the op that writes its source, with the slices and
/// reshapes that op writes through rebuilt on it.
constexpr const char *kDistinctEmptyAttr = "kiln.distinct_empty";
void splitSharedDestinations(RewriterBase &rewriter, func::FuncOp func) {
  int64_t distinct = 0;
  SmallVector<Operation *> roots;
  func.walk([&](Operation *op) {
    if (auto fill = dyn_cast<linalg::FillOp>(op)) {
      if (fill.hasPureTensorSemantics() &&
          fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
        roots.push_back(op);
    } else if (isa<tensor::EmptyOp>(op)) {
      roots.push_back(op);
    }
  });
  for (Operation *rootOp : roots) {
    Value root = rootOp->getResult(0);
    SmallVector<tensor::InsertSliceOp> inserts;
    for (Operation *user : rootOp->getUsers())
      if (auto insert = dyn_cast<tensor::InsertSliceOp>(user))
        if (insert.getDest() == root && insert->getBlock() == rootOp->getBlock())
          inserts.push_back(insert);
    if (inserts.size() < 2)
      continue;
    llvm::sort(inserts, [](tensor::InsertSliceOp a, tensor::InsertSliceOp b) {
      return a->isBeforeInBlock(b);
    });
    for (tensor::InsertSliceOp insert : llvm::drop_begin(inserts)) {
      OpOperand *init = rootedInit(insert.getSource(), root);
      Operation *first = insert;
      if (init && init->getOwner()->getBlock() == insert->getBlock())
        first = init->getOwner();
      else
        init = nullptr;
      rewriter.setInsertionPoint(first);
      IRMapping map;
      if (auto fill = dyn_cast<linalg::FillOp>(rootOp)) {
        Operation *empty = fill.getOutputs()[0].getDefiningOp();
        map.map(empty->getResult(0), rewriter.clone(*empty)->getResult(0));
      }
      Operation *clone = rewriter.clone(*rootOp, map);
      // Without an id of its own, CSE after this pass would merge the new
      // tensor with the shared one again (a fill is kept apart by the id
      // every padded tensor's fill gets after tiling).
      if (isa<tensor::EmptyOp>(clone))
        clone->setAttr(kDistinctEmptyAttr,
                       rewriter.getI64IntegerAttr(distinct++));
      Value fresh = clone->getResult(0);
      if (init)
        init->set(rebase(rewriter, init->get(), root, fresh));
      insert.getDestMutable().set(fresh);
    }
  }
}

bool touchesBools(linalg::LinalgOp op);

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
        touchesBools(epilogue) ||
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

/// A padded tensor is a fill of the whole tensor, then its interior
/// overwritten (insert_slice, or a producer writing into an interior slice
/// after writeIntoCopyDestination). Only the border needs the fill: for a
/// 3x3 depthwise convolution at 112x112 it is 3.5% of the tensor, and every
/// depthwise input of MobileNetV2 is padded so (the whole-tensor fills were
/// 8.5% of its f32 time and 15% of its int8 time, all of it memset). Such a
/// fill is marked with its interior box (kFillBorderAttr) and left whole
/// here; after bufferization --kiln-cpu-fill-borders fills the border alone.
void markBorderFills(func::FuncOp func) {
  func.walk([&](linalg::FillOp fill) {
    auto empty = fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
    auto type = dyn_cast<RankedTensorType>(fill.getResult(0).getType());
    if (!empty || !type || !type.hasStaticShape() ||
        !fill.hasPureTensorSemantics())
      return;
    // The interior box every user overwrites, and whether one writes it.
    std::optional<std::pair<SmallVector<int64_t>, SmallVector<int64_t>>> box;
    bool ok = true, written = false;
    auto sameBox = [&](ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes) {
      if (ShapedType::isDynamicShape(offsets) ||
          ShapedType::isDynamicShape(sizes))
        return false;
      if (!box)
        box.emplace(SmallVector<int64_t>(offsets), SmallVector<int64_t>(sizes));
      return box->first == offsets && box->second == sizes;
    };
    for (Operation *user : fill->getUsers()) {
      if (auto insert = dyn_cast<tensor::InsertSliceOp>(user)) {
        ok &= insert.getDest() == fill.getResult(0) && insert.hasUnitStride() &&
              insert.getSource() != fill.getResult(0) &&
              insert.getSourceType().getRank() == type.getRank() &&
              sameBox(insert.getStaticOffsets(), insert.getStaticSizes());
        written = true;
      } else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user)) {
        // An init that its op overwrites without reading it (directly or
        // through an expand_shape, see writeIntoCopyDestination).
        ok &= slice.hasUnitStride() &&
              slice.getType().getRank() == type.getRank() &&
              sameBox(slice.getStaticOffsets(), slice.getStaticSizes()) &&
              llvm::all_of(slice->getUses(), [&](OpOperand &use) {
                if (auto expand =
                        dyn_cast<tensor::ExpandShapeOp>(use.getOwner()))
                  return llvm::all_of(expand->getUses(), isOverwrittenInit);
                return isOverwrittenInit(use);
              });
      } else {
        ok = false;
      }
    }
    if (!ok || !written || !box)
      return;
    SmallVector<int64_t> packed(box->first);
    packed.append(box->second);
    fill->setAttr(kiln::kFillBorderAttr,
                  DenseI64ArrayAttr::get(fill.getContext(), packed));
  });
}

/// A concatenation is lowered as a chain over one empty tensor E:
///   D0 = E; Di = insert_slice(copy(xi into extract_slice(Di-1)), Di-1).
/// When every xi comes from an elementwise generic that only the copy reads
/// (int8's dequantizing epilogues) or from an int8 kernel with its
/// requantization (a loop marked kOverwrittenOutsAttr), each writes
/// straight into its slice instead and the copies, a pass over the whole
/// result, disappear: a fresh E goes above the first producer, each slice
/// right before its producer and each insert right after it. The producers
/// must run in the order of the concatenation.
void writeConcatInPlace(RewriterBase &rewriter, func::FuncOp func) {
  struct Link {
    tensor::ExtractSliceOp slice;
    linalg::CopyOp copy;
    tensor::InsertSliceOp insert;
    Operation *producer;
    OpOperand *init;
  };
  // The link whose copy is `copy`, writing a slice of `dest`, if it is one.
  // CSE may have merged identical slices of a shared empty tensor, so the
  // slice may have other users.
  auto linkAt = [](linalg::CopyOp copy, Value dest) -> std::optional<Link> {
    if (!copy || !copy.hasPureTensorSemantics() ||
        !copy->getResult(0).hasOneUse())
      return std::nullopt;
    auto slice = copy.getOutputs()[0].getDefiningOp<tensor::ExtractSliceOp>();
    auto insert =
        dyn_cast<tensor::InsertSliceOp>(*copy->getResult(0).getUsers().begin());
    if (!slice || slice.getSource() != dest || !insert ||
        insert.getDest() != dest ||
        slice.getStaticOffsets() != insert.getStaticOffsets() ||
        slice.getStaticSizes() != insert.getStaticSizes() ||
        !slice.hasUnitStride() || !insert.hasUnitStride() ||
        !slice.getOffsets().empty() || !insert.getOffsets().empty())
      return std::nullopt;
    Value src = copy.getInputs()[0];
    Operation *producer = src.getDefiningOp();
    OpOperand *init = overwrittenEmptyInit(producer);
    if (!init ||
        !(isa<linalg::GenericOp>(producer) ||
          producer->hasAttr(kiln::kOverwrittenOutsAttr)) ||
        !src.hasOneUse() || producer->getBlock() != copy->getBlock() ||
        slice.getType() != src.getType())
      return std::nullopt;
    return Link{slice, copy, insert, producer, init};
  };
  SmallVector<tensor::EmptyOp> empties;
  func.walk([&](tensor::EmptyOp op) {
    if (op.getDynamicSizes().empty())
      empties.push_back(op);
  });
  for (tensor::EmptyOp empty : empties) {
    // CSE may share one empty tensor between several concatenations: each
    // chain starts at a copy into a slice of it.
    SmallVector<linalg::CopyOp> starts;
    for (Operation *user : empty->getUsers())
      if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user))
        for (Operation *sliceUser : slice->getUsers())
          if (auto copy = dyn_cast<linalg::CopyOp>(sliceUser))
            starts.push_back(copy);
    for (linalg::CopyOp start : starts) {
      SmallVector<Link> chain;
      std::optional<Link> link = linkAt(start, empty.getResult());
      while (link) {
        chain.push_back(*link);
        Value dest = link->insert.getResult();
        // The next link reads dest through one slice (into its copy) and
        // one insert.
        linalg::CopyOp next;
        int uses = 0;
        for (Operation *user : dest.getUsers()) {
          ++uses;
          if (auto s = dyn_cast<tensor::ExtractSliceOp>(user))
            if (s->hasOneUse())
              next = dyn_cast<linalg::CopyOp>(*s->getUsers().begin());
        }
        link = uses == 2 ? linkAt(next, dest) : std::nullopt;
      }
      if (chain.size() < 2)
        continue;
      bool ordered = true;
      for (size_t i = 1; i < chain.size(); ++i)
        ordered &= chain[i - 1].producer->isBeforeInBlock(chain[i].producer);
      if (!ordered)
        continue;
      rewriter.setInsertionPoint(chain.front().producer);
      Value current = rewriter.clone(*empty)->getResult(0);
      for (Link &l : chain) {
        rewriter.setInsertionPoint(l.producer);
        auto slice = tensor::ExtractSliceOp::create(
            rewriter, l.slice.getLoc(), l.slice.getType(), current,
            l.slice.getMixedOffsets(), l.slice.getMixedSizes(),
            l.slice.getMixedStrides());
        l.init->set(slice);
        rewriter.setInsertionPointAfter(l.producer);
        current = tensor::InsertSliceOp::create(
            rewriter, l.insert.getLoc(), l.producer->getResult(0), current,
            l.insert.getMixedOffsets(), l.insert.getMixedSizes(),
            l.insert.getMixedStrides());
      }
      rewriter.replaceAllUsesWith(chain.back().insert.getResult(), current);
      for (Link &l : llvm::reverse(chain)) {
        rewriter.eraseOp(l.insert);
        rewriter.eraseOp(l.copy);
        if (l.slice->use_empty())
          rewriter.eraseOp(l.slice);
      }
    }
  }
}

/// The fill that initializes `op`'s one init, when it is the fill's only use
/// and `op` reduces (so the fill can be fused into each of its tiles).
linalg::FillOp fusableFill(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return {};
  auto fill = op.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
  return fill && fill->hasOneUse() ? fill : linalg::FillOp();
}

/// A convolution whose output channels are not a multiple of the register
/// (1000 classes: only of half a register) ran all of its tiles on half
/// registers or on vectors LLVM assembles from pieces. It is split along
/// its output channels into the largest multiple of the register (992) and
/// the rest (8): two convolutions, each writing its part of one output.
void splitConvChannels(RewriterBase &rewriter, func::FuncOp func, int64_t vw) {
  SmallVector<linalg::Conv2DNhwcHwcfOp> convs;
  func.walk([&](linalg::Conv2DNhwcHwcfOp op) { convs.push_back(op); });
  for (linalg::Conv2DNhwcHwcfOp conv : convs) {
    auto outType = dyn_cast<RankedTensorType>(conv->getResult(0).getType());
    Value x = conv.getInputs()[0], w = conv.getInputs()[1];
    auto wType = dyn_cast<RankedTensorType>(w.getType());
    linalg::FillOp fill = fusableFill(conv);
    if (vw < 2 || !conv.hasPureTensorSemantics() || !outType || !wType ||
        !outType.hasStaticShape() || !wType.hasStaticShape() || !fill ||
        !outType.getElementType().isF32())
      continue;
    int64_t f = outType.getDimSize(3), rest = f % vw, main = f - rest;
    if (rest == 0 || f < 2 * vw)
      continue;
    Location loc = conv.getLoc();
    rewriter.setInsertionPoint(conv);
    auto cst = w.getDefiningOp<arith::ConstantOp>();
    auto elements = cst ? dyn_cast<ElementsAttr>(cst.getValue()) : nullptr;
    auto filterPart = [&](int64_t begin, int64_t size) -> Value {
      if (elements)
        if (std::optional<ElementsAttr> part = mlir::kiln::sliceInnermost(
                elements, begin, size, /*keepDense=*/true))
          return arith::ConstantOp::create(rewriter, loc, part->getType(),
                                           cast<TypedAttr>(*part));
      SmallVector<OpFoldResult> offsets(4, rewriter.getIndexAttr(0));
      offsets[3] = rewriter.getIndexAttr(begin);
      SmallVector<OpFoldResult> sizes = getAsIndexOpFoldResult(
          rewriter.getContext(), {wType.getDimSize(0), wType.getDimSize(1),
                                  wType.getDimSize(2), size});
      SmallVector<OpFoldResult> ones(4, rewriter.getIndexAttr(1));
      return tensor::ExtractSliceOp::create(rewriter, loc, w, offsets, sizes,
                                            ones);
    };
    SmallVector<int64_t> shape(outType.getShape());
    Value result = tensor::EmptyOp::create(rewriter, loc, shape,
                                           outType.getElementType());
    for (auto [begin, size] : {std::pair<int64_t, int64_t>{0, main},
                               std::pair<int64_t, int64_t>{main, rest}}) {
      shape[3] = size;
      Value empty = tensor::EmptyOp::create(rewriter, loc, shape,
                                            outType.getElementType());
      Value init = linalg::FillOp::create(rewriter, loc, fill.getInputs()[0],
                                          empty)
                       .getResult(0);
      Value part = linalg::Conv2DNhwcHwcfOp::create(
                       rewriter, loc, TypeRange{init.getType()},
                       ValueRange{x, filterPart(begin, size)}, ValueRange{init},
                       conv.getStrides(), conv.getDilations())
                       .getResult(0);
      SmallVector<OpFoldResult> offsets(4, rewriter.getIndexAttr(0));
      offsets[3] = rewriter.getIndexAttr(begin);
      SmallVector<OpFoldResult> ones(4, rewriter.getIndexAttr(1));
      result = tensor::InsertSliceOp::create(
          rewriter, loc, part, result, offsets,
          getAsIndexOpFoldResult(rewriter.getContext(), shape), ones);
    }
    rewriter.replaceOp(conv, result);
    if (fill->use_empty())
      rewriter.eraseOp(fill);
  }
}

/// For an op that copies one input of 32-bit elements to its output with
/// the innermost loop of the input not the innermost of the output (a
/// transpose moving the last dimension), those two loops (output's,
/// input's), when both are multiples of 16 and the vectors have 16 lanes
/// (the 16 x 16 shuffle transpose); nothing otherwise.
std::optional<std::pair<int64_t, int64_t>> transposedPair(linalg::LinalgOp op,
                                                          int64_t vw) {
  if (vw != 16 || op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0 || op.hasDynamicShape())
    return std::nullopt;
  auto inType =
      dyn_cast<RankedTensorType>(op.getDpsInputOperand(0)->get().getType());
  auto outType =
      dyn_cast<RankedTensorType>(op.getDpsInitOperand(0)->get().getType());
  if (!inType || !outType ||
      inType.getElementType() != outType.getElementType() ||
      !inType.getElementType().isIntOrFloat() ||
      inType.getElementTypeBitWidth() != 32)
    return std::nullopt;
  if (!isa<linalg::TransposeOp>(op.getOperation())) {
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic || generic.getBody()->getOperations().size() != 1)
      return std::nullopt;
  }
  AffineMap in = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!in.isPermutation() || !out.isIdentity() || in.getNumResults() < 2)
    return std::nullopt;
  int64_t outInner = out.getNumDims() - 1;
  int64_t inInner = in.getDimPosition(in.getNumResults() - 1);
  SmallVector<int64_t> r = op.getStaticLoopRanges();
  if (outInner == inInner || r[outInner] % vw || r[inInner] % vw)
    return std::nullopt;
  return std::make_pair(outInner, inInner);
}

/// Tile sizes for one op (0 = leave the loop whole).
SmallVector<int64_t> chooseTileSizes(linalg::LinalgOp op, int64_t vw) {
  SmallVector<int64_t> r = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  int64_t n = r.size();
  SmallVector<int64_t> t(n, 1);
  if (isa<linalg::Conv2DNhwcHwcfOp>(op)) {
    // (n, oh, ow, f, kh, kw, c): 8 output pixels x 2 registers of channels
    // (16 accumulators) and a unit kernel row (so it decomposes to 1-D).
    // Input channels per step: 2 for spatial kernels, whose kw filter taps
    // must fit beside the accumulators (8 made ResNet-18 35-50% slower), 8
    // for 1x1 kernels, which hold one tap per channel.
    int64_t channelStep = r[4] * r[5] == 1 ? 8 : 2;
    // Fewer output channels than a register (a group of a grouped
    // convolution: 4 to 8 in ResNeXt and RegNet) leave room for twice the
    // pixels, which doubles the independent FMA chains.
    int64_t f = registerTile(r[3], vw);
    int64_t pixels = divisorAtMost(r[2], f < vw ? 16 : 8);
    // A row width with no divisor near 8 (13 in SqueezeNet's last stage)
    // would leave one pixel per tile: a single dependent FMA chain. Take the
    // whole row then, against one register of channels. Not for a row of
    // under 8 pixels (a tile of 3 when the tile is tiled again, inside its
    // epilogue's loops), which that would leave with fewer chains.
    if (pixels < 4 && r[2] <= 16 && r[2] >= 8 && f > vw / 2) {
      pixels = r[2];
      f = r[3] % vw == 0 ? vw : r[3] % (vw / 2) == 0 ? vw / 2 : f;
    } else if (pixels < 4 && r[3] % vw == 0) {
      // A row with a divisor between 5 and 12 but none near 8 (27 = 3 x 9
      // in SqueezeNet's middle stage gave 3 pixels x 2 registers: 6 FMA
      // chains, too few to hide the FMA latency): that many pixels against
      // one register of channels.
      int64_t wider = divisorAtMost(r[2], 12);
      if (wider >= 5) {
        pixels = wider;
        f = vw;
      } else if (r[3] % (4 * vw) == 0) {
        // None between 4 and 12 either (111 = 3 x 37, SqueezeNet's stem):
        // four registers of channels, 8 to 12 chains, one input channel
        // per step so that the kw taps (4 registers each) fit beside them.
        f = 4 * vw;
        channelStep = 1;
      }
    }
    t = {1, 1, pixels, f, 1, 0, divisorAtMost(r[6], channelStep)};
  } else if (isa<linalg::DepthwiseConv2DNhwcHwcOp>(op)) {
    // (n, oh, ow, c, kh, kw): output pixels x whole registers of channels.
    int64_t c = depthwiseChannelTile(r[3], vw);
    int64_t pixels = c > 2 * vw ? 7 : 8;
    t = {1, 1, divisorAtMost(r[2], pixels), c, 1, 0};
  } else if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
             generic && generic->hasAttr(kiln::kInt8DepthwiseAttr)) {
    // (n, oh, ow, c, kq, kw, t): up to 8 pixels of one or two output rows
    // against one vector of channels (16 accumulators). Two rows at stride
    // 1 share each interleaved quad of input rows; one row takes two
    // vectors of channels instead.
    std::optional<kiln::Int8Depthwise> k = kiln::matchInt8Depthwise(generic);
    if (!k)
      return {};
    int64_t lanes = kiln::int8DepthwiseLanes(r[3]);
    if (!lanes)
      return {};
    int64_t rows = k->strides[0] == 1 && k->dilations[0] == 1 && r[1] % 2 == 0
                       ? 2
                       : 1;
    int64_t pixels = divisorAtMost(r[2], 8);
    if (pixels < 4 && r[2] <= 16) {
      pixels = r[2];
      rows = 1;
    }
    int64_t regs = rows == 1 && pixels <= 8 && r[3] % (2 * lanes) == 0 ? 2 : 1;
    t = {1, rows, pixels, regs * lanes, 0, 0, 0};
  } else if (isa<linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcMaxUnsignedOp,
                 linalg::PoolingNhwcSumOp>(op)) {
    // (n, oh, ow, c, kh, kw): tiled like a depthwise convolution.
    t = {1, 1, divisorAtMost(r[2], 8), divisorAtMost(r[3], 2 * vw), 1, 0};
  } else if (isa<linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp>(op)) {
    // (n, c, oh, ow, kh, kw): channels are the vector dimension.
    t = {1, divisorAtMost(r[1], vw), 1, divisorAtMost(r[3], 8), 1, 0};
  } else if (linalg::isaContractionOpInterface(op)) {
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    if (failed(dims) || dims->m.empty() || dims->n.empty())
      return {};
    // An mr x nr register tile, one reduction step at a time: 16
    // accumulators (8 x 2 registers). A packed right-hand side's panel is
    // the register tile's width, taken whole, with as many rows as fit.
    bool packed = op->hasAttr(kPackedRhsAttr) && dims->n.size() == 2;
    int64_t nr = packed ? r[dims->n.back()]
                        : registerTile(r[dims->n.back()], vw);
    int64_t panels = 1;
    if (packed)
      panels = panelsPerTile(r[dims->n.front()] * nr, vw);
    int64_t regs = std::max<int64_t>(1, nr * panels / vw);
    int64_t mr = std::max<int64_t>(1, 16 / regs);
    int64_t m = r[dims->m.back()];
    int64_t rows = divisorAtMost(m, std::min<int64_t>(mr, 8));
    // An M with no divisor near mr (49 = 7 x 7 against 4-row tiles) would
    // take one row per tile, which streams the whole panel for each row and
    // has too few FMA chains: 49 x 2048 x 512 ran at 15 GFLOP/s. Up to 28
    // accumulators then (7 rows of 4 registers), the weights read from L1
    // by the FMAs.
    int64_t vectors = (nr * panels + vw - 1) / vw;
    if (2 * rows <= std::min<int64_t>(mr, 8))
      rows =
          std::max(rows, divisorAtMost(m, std::max<int64_t>(1, 28 / vectors)));
    t[dims->m.back()] = rows;
    t[dims->n.back()] = nr;
    if (packed)
      t[dims->n.front()] = panels;
  } else if (std::optional<std::pair<int64_t, int64_t>> pair =
                 transposedPair(op, vw)) {
    // A transpose that moves the innermost dimension: 16 x 16 squares,
    // read as 16 rows of the input and written as 16 rows of the output,
    // transposed in registers (--kiln-cpu-lower-vector-ops, shuffles).
    // Tiled like an elementwise op, each 64-lane output row gathered one
    // element at a time from 64 input rows (attention's K^T: 48 vinsertps
    // per 64 lanes).
    for (int64_t i = 0; i < n; ++i)
      t[i] = 1;
    t[pair->first] = vw;
    t[pair->second] = vw;
  } else {
    // Elementwise, transposes, fills, copies and reductions: up to four
    // registers along the innermost parallel loop; when that loop is short,
    // the next-outer parallel loop fills the rest.
    int64_t lastPar = -1, prevPar = -1, lastRed = -1;
    for (int64_t i = 0; i < n; ++i) {
      if (iters[i] == utils::IteratorType::parallel) {
        prevPar = lastPar;
        lastPar = i;
      } else {
        lastRed = i;
      }
    }
    int64_t budget = 4 * vw;
    if (lastRed >= 0 && lastRed > lastPar) {
      t[lastRed] = vectorTile(r[lastRed], budget, vw);
      budget = std::max<int64_t>(1, budget / t[lastRed]);
    }
    if (lastPar >= 0) {
      t[lastPar] = vectorTile(r[lastPar], budget, vw);
      if (prevPar >= 0 && t[lastPar] == r[lastPar] && r[lastPar] < vw)
        t[prevPar] = divisorAtMost(r[prevPar], std::max<int64_t>(1, budget / r[lastPar]));
    }
    if (lastRed >= 0 && lastRed < lastPar)
      t[lastRed] = 1;
  }
  for (int64_t i = 0; i < n; ++i)
    if (t[i] == r[i] || ShapedType::isDynamic(r[i]))
      t[i] = 0;
  return t;
}

/// Bytes of a statically shaped operand of `op` (0 when dynamic).
int64_t operandBytes(linalg::LinalgOp op, unsigned index) {
  auto type = dyn_cast<RankedTensorType>(op->getOperand(index).getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return 0;
  return type.getNumElements() * type.getElementTypeBitWidth() / 8;
}

/// Bytes of a convolution's input that its windows touch: a strided window
/// smaller than its stride skips rows and columns (a 1x1 convolution with
/// stride 2 reads a quarter of its input).
int64_t convInputBytesRead(linalg::Conv2DNhwcHwcfOp op) {
  int64_t bytes = operandBytes(op, 0);
  if (bytes == 0)
    return 0;
  auto input = cast<RankedTensorType>(op.getInputs()[0].getType());
  auto filter = cast<RankedTensorType>(op.getInputs()[1].getType());
  auto output = cast<RankedTensorType>(op.getOutputs()[0].getType());
  SmallVector<int64_t> strides(op.getStrides().getValues<int64_t>());
  SmallVector<int64_t> dilations(op.getDilations().getValues<int64_t>());
  for (int d : {0, 1}) {
    int64_t in = input.getDimSize(1 + d), out = output.getDimSize(1 + d);
    int64_t k = filter.getDimSize(d);
    if (dilations[d] == 1 && k < strides[d] && out * k < in)
      bytes = bytes / in * (out * k);
  }
  return bytes;
}

/// The order of a product's output tiles. Output pixels (rows) outside and
/// channels (columns) inside read the whole filter once per pixel tile:
/// free while the filter stays in L2, but ResNet's last stages have filters
/// of 1 to 9 MiB and few pixels (a 3x3 512-channel layer at 7x7 streamed its
/// 9.4 MiB filter from L3 seven times and ran at 29% of peak), a batch of 8
/// multiplies the pixel tiles by 8, and a transformer's MLP at 14x14 tokens
/// (196 x 384 x 1536, 2.4 MB of weights) streamed its weights from L3 once
/// per 4-row tile, at a third of the peak. Such a product takes one register
/// tile of output channels (one packed panel of a matmul's weights) at a
/// time, outermost, and all pixels inside: the filter is read once (a panel
/// of it stays in L2 across the pixels) and the input once per panel
/// instead, when that reads at most half as much. Returns that loop over
/// output channels (3 of a convolution, 1 of a packed matmul), or -1 when
/// the op keeps its own order.
int64_t channelsOutermost(linalg::LinalgOp op, ArrayRef<int64_t> tiles) {
  // The loop over output channels (panels of a packed matmul) and the input
  // bytes read once per channel tile.
  int64_t channels = -1, input = 0;
  if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op.getOperation())) {
    if (tiles.size() != 7)
      return -1;
    channels = 3;
    input = convInputBytesRead(conv);
  } else if (op->hasAttr(kPackedRhsAttr) && tiles.size() == 4) {
    // (m, panel, column, k) of packConstantRhs.
    channels = 1;
    input = operandBytes(op, 0);
  }
  if (channels < 0 || tiles[channels] == 0)
    return -1;
  int64_t filter = operandBytes(op, 1);
  SmallVector<int64_t> r = op.getStaticLoopRanges();
  if (input == 0 || filter == 0 || r[channels] / tiles[channels] < 2)
    return -1;
  // Bytes each order reads from beyond L2 (taken as 1 MiB): an operand
  // that fits is read from memory once, one that does not once per tile of
  // the outer loops.
  constexpr int64_t kCache = 1 << 20;
  int64_t pixelTiles = 1;
  for (int64_t d = 0; d < channels; ++d)
    pixelTiles *= tiles[d] ? r[d] / tiles[d] : 1;
  // A filter under 1 MiB stays in L2 across the pixel tiles. One of 1 MiB
  // does not while the input streams past it: when the input fits, taking
  // the channels outermost reads both once and --kiln-cpu-prefetch-panels
  // hides the filter's fetch (ResNet-50's 14x14 1x1 layers: 1-2% faster).
  // Measured and not taken: the same at batch 8 (6.4 MB inputs, 2% slower)
  // and for ResNet's 590 KiB 3x3 filters at 28x28 (0-3% slower).
  if (filter < kCache || (filter == kCache && input > kCache))
    return -1;
  double pixelsOuter = double(pixelTiles) * filter;
  double channelsOuter =
      input > kCache ? double(r[channels] / tiles[channels]) * input : input;
  return 2 * channelsOuter < pixelsOuter ? channels : -1;
}

/// Tiling loop order for `op`: the channels first for channelsOutermost
/// products, the other loops in their order after them; else the op's own
/// order (empty).
SmallVector<int64_t> tileInterchange(linalg::LinalgOp op,
                                     ArrayRef<int64_t> tiles) {
  int64_t channels = channelsOutermost(op, tiles);
  if (channels < 0)
    return {};
  SmallVector<int64_t> order = {channels};
  for (int64_t d = 0, e = tiles.size(); d < e; ++d)
    if (d != channels)
      order.push_back(d);
  return order;
}

/// In-place reuse: an elementwise op may write its result into an input
/// that dies at the op (same type, identity access, no other use, not a
/// caller-owned argument or a constant). Returns that input's index.
std::optional<unsigned> dyingInputToReuse(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0)
    return std::nullopt;
  OpOperand *init = op.getDpsInitOperand(0);
  if (!init->get().getDefiningOp<tensor::EmptyOp>() ||
      op.payloadUsesValueFromOperand(init))
    return std::nullopt;
  Type resultType = op->getResult(0).getType();
  for (OpOperand *in : op.getDpsInputOperands()) {
    Value v = in->get();
    if (v.getType() != resultType || !v.hasOneUse() ||
        isa<BlockArgument>(v) || v.getDefiningOp<arith::ConstantOp>() ||
        !op.getMatchingIndexingMap(in).isIdentity())
      continue;
    return in->getOperandNumber();
  }
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
                                 ArrayRef<int64_t> tiles,
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
  tiling.setInterchange(tileInterchange(op, tiles));
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

/// Bools are one byte each in memory, but vector<Nxi1> loads and stores are
/// bit-packed; ops that read or write i1 tensors stay scalar loops.
bool touchesBools(linalg::LinalgOp op) {
  auto isBool = [](Type t) {
    return getElementTypeOrSelf(t).isInteger(1);
  };
  return llvm::any_of(op->getOperandTypes(), isBool) ||
         llvm::any_of(op->getResultTypes(), isBool);
}

int64_t tileVolume(linalg::LinalgOp op) {
  int64_t v = 1;
  for (int64_t s : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(s))
      return INT64_MAX;
    v *= s;
  }
  return v;
}

/// The loop of `op` to split across threads: the outermost parallel loop
/// that its tiles cut into at least two pieces, or -1 when the op is too
/// small to be worth a fork and join (fewer than `minWork` iterations of its
/// loop nest) or has no such loop.
int64_t parallelLoop(linalg::LinalgOp op, ArrayRef<int64_t> tiles,
                     int64_t minWork) {
  if (minWork <= 0 || tileVolume(op) < minWork)
    return -1;
  if (int64_t channels = channelsOutermost(op, tiles); channels >= 0)
    return channels;
  SmallVector<int64_t> r = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  for (auto [i, t] : llvm::enumerate(tiles))
    if (iters[i] == utils::IteratorType::parallel && t != 0 &&
        r[i] / t >= 2)
      return i;
  return -1;
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
/// A unique id on the loop (or fill) that fills a padded tensor, so that CSE
/// keeps the pads of one shape apart.
constexpr const char *kDistinctFillAttr = "kiln.distinct_fill";

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
FailureOr<linalg::LinalgOp> tileWithEpilogue(RewriterBase &rewriter,
                                             linalg::LinalgOp consumer,
                                             linalg::LinalgOp producer,
                                             int64_t vw, int64_t minWork,
                                             llvm::DenseSet<Operation *> &erased) {
  SmallVector<int64_t> producerTiles = chooseTileSizes(producer, vw);
  if (producerTiles.empty())
    return failure();
  AffineMap out = producer.getIndexingMapMatchingResult(
      cast<OpResult>(producer->getResult(0)));
  unsigned n = out.getNumResults();
  SmallVector<int64_t> tiles(n, 0);
  for (unsigned i = 0; i < n; ++i)
    tiles[i] = producerTiles[out.getDimPosition(i)];
  if (llvm::all_of(tiles, [](int64_t t) { return t == 0; }))
    return failure();
  auto consumerDim = [&](int64_t producerDim) -> int64_t {
    for (unsigned i = 0; i < n; ++i)
      if (out.getDimPosition(i) == producerDim)
        return i;
    return -1;
  };
  int64_t dim = consumerDim(parallelLoop(producer, producerTiles, minWork));
  SmallVector<int64_t> interchange;
  for (int64_t d : tileInterchange(producer, producerTiles))
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
  // registers (--kiln-cpu-lower-vector-ops forwards its write to its read).
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
  SmallVector<int64_t> inner = chooseTileSizes(tiledProducer, vw);
  if (!inner.empty())
    (void)tileWithFilledInit(rewriter, tiledProducer, inner, erased);
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
/// slice leave the loops in the pipeline's loop-invariant-subset-hoisting.
void hoistAccumulatorSlices(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<scf::ForOp> loops;
  func.walk([&](scf::ForOp loop) { loops.push_back(loop); }); // post-order
  for (scf::ForOp loop : loops)
    (void)hoistLoopInvariantSubsets(rewriter,
                                    cast<LoopLikeOpInterface>(*loop));
}

struct TileAndVectorizePass
    : mlir::kiln::impl::TileAndVectorizePassBase<TileAndVectorizePass> {
  using TileAndVectorizePassBase::TileAndVectorizePassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();
    IRRewriter rewriter(ctx);

    // 0. CSE shares one zero-filled tensor between every matmul that starts
    //    from zero; give each consumer its own fill so that it can be fused
    //    into the consumer's tiles (and its buffer need not live long).
    SmallVector<linalg::FillOp> fills;
    func.walk([&](linalg::FillOp op) { fills.push_back(op); });
    for (linalg::FillOp fill : fills) {
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : fill->getResult(0).getUses())
        uses.push_back(&use);
      // A padded tensor (filled, its interior written through a slice and
      // inserted back) must stay one tensor: a second fill would be a
      // second buffer, and the insert a copy between the two.
      if (llvm::any_of(uses, [](OpOperand *use) {
            return isa<tensor::ExtractSliceOp, tensor::InsertSliceOp>(
                use->getOwner());
          }))
        continue;
      for (OpOperand *use : llvm::drop_begin(uses)) {
        rewriter.setInsertionPoint(use->getOwner());
        Operation *init = fill.getDpsInitOperand(0)->get().getDefiningOp();
        Operation *freshInit = isa_and_nonnull<tensor::EmptyOp>(init)
                                   ? rewriter.clone(*init)
                                   : nullptr;
        Operation *clone = rewriter.clone(*fill);
        if (freshInit)
          clone->setOperand(1, freshInit->getResult(0));
        use->set(clone->getResult(0));
      }
    }

    // The AMX kernels start their accumulators from zero tiles: the zero
    // fill of a marked product would only be a memset nobody reads.
    if (amx)
      func.walk([&](linalg::GenericOp op) {
        if (!kiln::isAmxProduct(op))
          return;
        if (auto fill = op.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>())
          op.getDpsInitOperand(0)->set(fill.getOutputs()[0]);
      });

    readHalfWeightsInKernels(rewriter, func);
    splitSharedDestinations(rewriter, func);
    splitConvChannels(rewriter, func, vectorWidth);
    packConstantRhs(rewriter, func, vectorWidth);
    writeIntoCopyDestination(rewriter, func);
    writeIntoInsertDestination(rewriter, func);
    writeConcatInPlace(rewriter, func);
    markBorderFills(func);
    if (amx)
      markAmxEpilogues(func, amxEpilogueBytes);

    // 1. Tile every linalg op into static register-sized tiles.
    //    Consumers first, so that a reduction fuses its fill before the fill
    //    would be tiled on its own.
    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    llvm::DenseSet<Operation *> erased;
    for (linalg::LinalgOp op : llvm::reverse(ops)) {
      if (erased.contains(op))
        continue; // fused into its consumer's tiles
      if (kiln::isAmxProduct(op) || op->hasAttr(kiln::kAmxEpilogueAttr))
        continue; // AMX tiles after bufferization (--kiln-cpu-amx-matmul)
      if (op->hasAttr(kiln::kFillBorderAttr))
        continue; // only its border is filled, after bufferization
      if (linalg::LinalgOp producer = epilogueProducer(op))
        if (succeeded(tileWithEpilogue(rewriter, op, producer, vectorWidth,
                                       parallelWork, erased)))
          continue;
      std::optional<unsigned> reused;
      if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
        if ((reused = dyingInputToReuse(generic)))
          op.getDpsInitOperand(0)->set(op->getOperand(*reused));
      SmallVector<int64_t> tiles = chooseTileSizes(op, vectorWidth);
      if (tiles.empty() || llvm::all_of(tiles, [](int64_t t) { return t == 0; }))
        continue;
      // The outer loop over tiles that threads share, then the rest inside.
      int64_t dim = parallelLoop(op, tiles, parallelWork);
      if (dim >= 0) {
        FailureOr<linalg::LinalgOp> inner =
            tileParallelLoop(rewriter, op, tiles, dim, erased);
        if (succeeded(inner)) {
          op = *inner;
          if (reused)
            readReusedInputInPlace(op, *reused);
          tiles[dim] = 0;
          if (llvm::all_of(tiles, [](int64_t t) { return t == 0; }))
            continue;
        }
      }
      if (succeeded(tileWithFilledInit(rewriter, op, tiles, erased)))
        continue;
      scf::SCFTilingOptions options;
      options.setTileSizes(getAsIndexOpFoldResult(ctx, tiles));
      options.setInterchange(tileInterchange(op, tiles));
      options.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled))
        continue;
      if (reused && !tiled->tiledOps.empty())
        if (auto t = dyn_cast<linalg::LinalgOp>(tiled->tiledOps.back()))
          readReusedInputInPlace(t, *reused);
      rewriter.replaceOp(op, tiled->replacements);
    }

    // The tiled fill of each padded tensor whose interior is written
    // (insert_slice) stays its own: CSE would merge identical fill loops of
    // pads of one shape into one tensor, and bufferization would then copy
    // it before every write.
    {
      int64_t id = 0;
      func.walk([&](tensor::InsertSliceOp insert) {
        Operation *def = insert.getDest().getDefiningOp();
        if (isa_and_nonnull<scf::ForallOp, scf::ForOp, linalg::FillOp>(def) &&
            !def->hasAttr(kDistinctFillAttr))
          def->setAttr(kDistinctFillAttr, rewriter.getI64IntegerAttr(id++));
      });
    }

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
    for (linalg::LinalgOp op : ops) {
      // The int8 depthwise tiles have a kernel of their own.
      if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
          generic && generic->hasAttr(kiln::kInt8DepthwiseAttr)) {
        (void)kiln::replaceInt8DepthwiseTile(rewriter, generic);
        continue;
      }
      if (tileVolume(op) > kMaxVectorizedTile || touchesBools(op) ||
          kiln::isAmxProduct(op) || op->hasAttr(kiln::kAmxEpilogueAttr) ||
          op->hasAttr(kiln::kFillBorderAttr))
        continue;
      if (failed(linalg::vectorizeOpPrecondition(op))) {
        // A gather through a window map (im2col: h = oh s + kh) is not a
        // projected permutation; its tile has unit window dimensions, and
        // without them the map is one.
        auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
        if (!generic || llvm::all_of(generic.getIndexingMapsArray(),
                                     [](AffineMap m) {
                                       return m.isProjectedPermutation();
                                     }))
          continue;
        rewriter.setInsertionPoint(op);
        linalg::ControlDropUnitDims control;
        control.rankReductionStrategy = linalg::ControlDropUnitDims::
            RankReductionStrategy::ExtractInsertSlice;
        FailureOr<linalg::DropUnitDimsResult> dropped =
            linalg::dropUnitDims(rewriter, generic, control);
        if (failed(dropped))
          continue;
        rewriter.replaceOp(op, dropped->replacements);
        op = cast<linalg::LinalgOp>(dropped->resultOp.getOperation());
        if (failed(linalg::vectorizeOpPrecondition(op)))
          continue;
      }
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::VectorizationResult> result =
          linalg::vectorize(rewriter, op);
      if (succeeded(result))
        rewriter.replaceOp(op, result->replacements);
    }

    hoistAccumulatorSlices(rewriter, func);

    // 4. Read and write through the slices directly and drop unit dims.
    {
      RewritePatternSet patterns(ctx);
      tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(patterns);
      vector::populateVectorReductionToContractPatterns(patterns);
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
      applyCleanups(func, std::move(patterns));
    }
  }
};
} // namespace
