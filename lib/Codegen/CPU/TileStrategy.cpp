//===- TileStrategy.cpp - how each op is tiled ------------------*- C++ -*-===//
#include "TileStrategy.h"
#include "VnniDepthwise.h"
#include "kiln/Codegen/Common/SymbolicBounds.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <numeric>

namespace mlir::kiln {

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

/// Accumulator registers a product's register tile may hold: 16 of
/// AVX-512's 32 vector registers, 12 of AVX2's 16. With 16 on AVX2 the
/// broadcast operands had no register left: LLVM spilled them to the stack
/// around every FMA (1,242 stack moves for 1,848 FMAs in ResNet-18).
int64_t accumulatorBudget(int64_t vw) { return vw >= 16 ? 16 : 12; }

/// Rows of a product's register tile `vectors` registers wide, from a budget
/// of accumulators. AVX2's 16 registers also hold the tile's row of
/// right-hand vectors and a broadcast: at most 15 - vectors accumulators. A
/// 3 x 4-register tile (12 + 4 + 1) spilled an accumulator on every step:
/// 96 x 512 x 1024 ran at 37 GFLOP/s against 75 for 128 x 512 x 1024, whose
/// 2 x 4 tile fits (Zen 3).
int64_t rowsBeside(int64_t budget, int64_t vectors, int64_t vw) {
  if (vw < 16)
    budget = std::min(budget, 15 - vectors);
  return std::max<int64_t>(1, budget / vectors);
}

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

/// For an op that copies one input of 32-bit elements to its output with
/// the innermost loop of the input not the innermost of the output (a
/// transpose moving the last dimension), those two loops (output's,
/// input's), when both are multiples of 16 and the vectors have 16 lanes
/// (the 16 x 16 shuffle transpose); nothing otherwise. `r` gives the loop
/// extents (a run-time extent as the extent it is tiled as).
std::optional<std::pair<int64_t, int64_t>>
transposedPair(linalg::LinalgOp op, ArrayRef<int64_t> r, int64_t vw) {
  if (vw != 16 || op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0)
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
  if (outInner == inInner || r[outInner] % vw || r[inInner] % vw)
    return std::nullopt;
  return std::make_pair(outInner, inInner);
}

/// Whether an input of `op` reads along `loop` across its rows: `loop`
/// indexes one of its dimensions, not its innermost.
static bool readsAcrossRows(linalg::LinalgOp op, int64_t loop) {
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (map.getNumResults() == 0)
      continue;
    for (auto [i, e] : llvm::enumerate(map.getResults()))
      if (e.isFunctionOfDim(loop) && i + 1 != map.getNumResults())
        return true;
  }
  return false;
}

namespace {
SmallVector<int64_t> chooseTileSizesFor(linalg::LinalgOp op,
                                        SmallVector<int64_t> r, int64_t vw);
} // namespace

/// The extent a loop of run-time extent is tiled as under
/// RuntimeExtentTiling::Full: a multiple of every tile the strategy picks
/// (1024 x 315 has the divisors 1 to 10, 12, 14, 15, 16, 32 and 64), so that
/// it gets the tile of a large static loop.
constexpr int64_t kNominalExtent = 1024 * 315;

/// Tile sizes for one op (0 = leave the loop whole), before
/// keepDivisorsWhole. The loops of run-time extent are tiled as `runtime`
/// says; the other loops as if each of those had the extent it is tiled as.
static SmallVector<int64_t>
chooseTileSizesAnyOffset(linalg::LinalgOp op, int64_t vw,
                         RuntimeExtentTiling runtime) {
  SmallVector<int64_t> r = op.getStaticLoopRanges();
  if (!ShapedType::isDynamicShape(r))
    return chooseTileSizesFor(op, r, vw);
  bool full = runtime == RuntimeExtentTiling::Full;
  SmallVector<int64_t> extents(r);
  for (int64_t &n : extents)
    if (ShapedType::isDynamic(n))
      n = full ? kNominalExtent : 1;
  SmallVector<int64_t> t = chooseTileSizesFor(op, extents, vw);
  if (t.empty())
    t.assign(r.size(), 0);
  for (auto [i, n] : llvm::enumerate(r)) {
    if (!ShapedType::isDynamic(n))
      continue;
    if (runtime == RuntimeExtentTiling::Whole)
      t[i] = 0;
    else if (runtime == RuntimeExtentTiling::Unit || t[i] == 0)
      t[i] = 1;
  }
  return t;
}

void keepDivisorsWhole(linalg::LinalgOp op, MutableArrayRef<int64_t> tiles) {
  // The lcm of the divisors each loop meets; 0 where one is not a constant.
  SmallVector<int64_t> multiple(op.getNumLoops(), 1);
  for (AffineMap map : op.getIndexingMapsArray())
    for (AffineExpr e : map.getResults())
      e.walk([&](AffineExpr sub) {
        auto bin = dyn_cast<AffineBinaryOpExpr>(sub);
        if (!bin || (bin.getKind() != AffineExprKind::FloorDiv &&
                     bin.getKind() != AffineExprKind::CeilDiv &&
                     bin.getKind() != AffineExprKind::Mod))
          return;
        auto c = dyn_cast<AffineConstantExpr>(bin.getRHS());
        int64_t divisor = c && c.getValue() > 0 ? c.getValue() : 0;
        bin.getLHS().walk([&](AffineExpr x) {
          auto dim = dyn_cast<AffineDimExpr>(x);
          if (!dim || dim.getPosition() >= multiple.size())
            return;
          int64_t &m = multiple[dim.getPosition()];
          m = divisor == 0 || m == 0 ? 0 : std::lcm(m, divisor);
        });
      });
  for (auto [t, m] : llvm::zip(tiles, multiple)) {
    if (t <= 1 || m == 1)
      continue;
    t = m > 0 && t >= m ? t / m * m : 1;
  }
}

SmallVector<int64_t> chooseTileSizes(linalg::LinalgOp op, int64_t vw,
                                     RuntimeExtentTiling runtime) {
  SmallVector<int64_t> t = chooseTileSizesAnyOffset(op, vw, runtime);
  keepDivisorsWhole(op, t);
  return t;
}

namespace {
/// The register tile of a contraction (a matmul, a packed-weight product),
/// into `t`; false when its dimensions are not a product's.
bool productTiles(linalg::LinalgOp op, ArrayRef<int64_t> r, int64_t vw,
                  SmallVectorImpl<int64_t> &t) {
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty())
    return false;
  // An mr x nr register tile, one reduction step at a time: 16
  // accumulators (8 x 2 registers). A packed right-hand side's panel is
  // the register tile's width, taken whole, with as many rows as fit.
  bool packed = op->hasAttr(kPackedRhsAttr) && dims->n.size() == 2;
  int64_t nr = packed ? r[dims->n.back()]
                      : registerTile(r[dims->n.back()], vw);
  // Columns of an unpacked right-hand side (an activation: attention's
  // K^T, a product of two inputs) in whole registers, the columns left a
  // static last tile (PartialTiles.cpp). A tile of two and a half registers
  // (40 lanes for 40 or 1000 columns) is widened by LLVM and assembled
  // from pieces: 40 x 16 x 1000 ran at 0.35 ns per FMA against 0.017 with
  // 32-lane tiles and an 8-lane rest (Zen 5), and a static encoder at
  // sequence 40 at twice the time of its run-time-size compile.
  if (!packed && nr > vw && nr % vw != 0)
    nr = r[dims->n.back()] >= 2 * vw ? 2 * vw : vw;
  int64_t panels = 1;
  if (packed)
    panels = panelsPerTile(r[dims->n.front()] * nr, vw);
  int64_t m = r[dims->m.back()];
  int64_t regs = std::max<int64_t>(1, nr * panels / vw);
  int64_t acc = accumulatorBudget(vw);
  int64_t mr = rowsBeside(acc, regs, vw);
  int64_t rows = divisorAtMost(m, std::min<int64_t>(mr, 8));
  // AVX2, an M with no divisor near the rows that fit (an odd M against
  // 2 rows of a 4-register panel: 197 tokens, 77, 49): one row per tile,
  // 2 or 4 FMA chains, streaming the panel once per row. 6 rows x 2
  // registers then (12 accumulators beside the two weight vectors and a
  // broadcast, the tile every BLAS uses there; a packed panel taken half
  // at a time), the last tile a static one of the rows left
  // (PartialTiles.cpp). 197 x 384 x 384: 2.4x faster on one thread, 2.2x
  // on two (Zen 3). Not for an M with a fair divisor: the half-panel tiles
  // of 128 x 256 x 1024 ran 7% faster on one thread but 17% slower on two.
  bool isFloatProduct = isa<FloatType>(
      getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType()));
  bool avx2Rows = vw < 16 && isFloatProduct;
  if (avx2Rows && 2 * rows <= std::min<int64_t>(mr, 8) && m > rows) {
    if (packed && panels == 1 && nr == 4 * vw) {
      nr = 2 * vw;
      mr = rowsBeside(acc, 2, vw);
    }
    rows = std::min<int64_t>({m, mr, 8});
  }
  // An M with no divisor near mr (49 = 7 x 7 against 4-row tiles) would
  // take one row per tile, which streams the whole panel for each row and
  // has too few FMA chains: 49 x 2048 x 512 ran at 15 GFLOP/s. Up to 28
  // accumulators then (7 rows of 4 registers), the weights read from L1
  // by the FMAs.
  int64_t vectors = (nr * panels + vw - 1) / vw;
  if (2 * rows <= std::min<int64_t>(mr, 8))
    rows = std::max(rows, divisorAtMost(m, rowsBeside(acc == 16 ? 28 : acc,
                                                      vectors, vw)));
  // An M with neither (197 tokens, a batch of 11 or 13, against 4-register
  // panels): full tiles of the rows that fit and a static last tile of the
  // rows left (PartialTiles.cpp), as on AVX2, rather than one row per tile.
  // 197 x 768 x 3072 ran at 50 GFLOP/s, now 193 (one thread, Zen 5).
  if (!avx2Rows && isFloatProduct && 2 * rows <= std::min<int64_t>(mr, 8) &&
      m > rows)
    rows = std::min<int64_t>({m, mr, 8});
  t[dims->m.back()] = rows;
  t[dims->n.back()] = nr;
  if (packed)
    t[dims->n.front()] = panels;
  return true;
}

SmallVector<int64_t> chooseTileSizesFor(linalg::LinalgOp op,
                                        SmallVector<int64_t> r, int64_t vw) {
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
    int64_t acc = accumulatorBudget(vw);
    int64_t pixels = divisorAtMost(r[2], f < vw ? acc : acc / 2);
    // A row width with no divisor near 8 (13 in SqueezeNet's last stage)
    // would leave one pixel per tile: a single dependent FMA chain. Take the
    // whole row then, against one register of channels. Not for a row of
    // under 8 pixels (a tile of 3 when the tile is tiled again, inside its
    // epilogue's loops), which that would leave with fewer chains.
    // One register of channels: up to 16 pixels with AVX-512, 13 with AVX2
    // (the accumulators, a weight vector and a broadcast: 14 pixels spilled).
    int64_t wholeRow = acc == 16 ? 16 : 13;
    if (pixels < 4 && r[2] <= wholeRow && r[2] >= 8 && f > vw / 2) {
      pixels = r[2];
      f = r[3] % vw == 0 ? vw : r[3] % (vw / 2) == 0 ? vw / 2 : f;
    } else if (pixels < 4 && acc < 16 && r[2] > wholeRow &&
               r[3] % (2 * vw) == 0) {
      // AVX2, a row of over 13 pixels with no divisor near 6 (ResNet's 14):
      // 6 pixels x 2 registers (12 accumulators) and one static tile of the
      // pixels left (PartialTiles.cpp), rather than 7 pixels x 1 register
      // (7 chains, 8 loads per 7 FMAs). ResNet-18's 14-wide 3x3 layers 23%
      // faster on a Zen 3. Not for a row of 7: 6 + 1 pixels ran no faster.
      pixels = acc / 2;
      f = 2 * vw;
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
    // AVX2 (16 registers): one filter tap per step. With the whole kernel
    // row in a step, each input pixel's broadcast serves several taps, so
    // LLVM kept it live across them and spilled it (a 5 x 2-register tile
    // of the U-Net's 3x3 layers: 24 stack moves beside 60 FMAs); per tap
    // the broadcasts of a step are all different and die at once, and 4
    // input channels per step keep the loop as long. ResNet-18 6%,
    // SqueezeNet 7% and the saliency U-Net 16% faster on a Zen 3.
    int64_t kwTile = 0;
    if (acc < 16 && r[5] > 1) {
      kwTile = 1;
      if (channelStep == 2)
        channelStep = 4;
    }
    t = {1, 1, pixels, f, 1, kwTile, divisorAtMost(r[6], channelStep)};
  } else if (isa<linalg::DepthwiseConv2DNhwcHwcOp>(op)) {
    // (n, oh, ow, c, kh, kw): output pixels x whole registers of channels.
    int64_t c = depthwiseChannelTile(r[3], vw);
    int64_t pixels = c > 2 * vw ? 7 : 8;
    if (accumulatorBudget(vw) < 16) // AVX2: as many pixels as registers fit
      pixels = std::max<int64_t>(1, accumulatorBudget(vw) / ((c + vw - 1) / vw));
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
  } else if (op->hasAttr(kiln::kLanePartialsAttr) && n == 8) {
    // (n, oh, ow, f, l, kh, kw, cb): output pixels x one register of lane
    // partial sums (one accumulator and FMA chain per pixel), one kernel
    // tap and one block of input channels per step: the step is then
    // elementwise (a vector contraction over the blocks lowered to shuffles
    // and scalar adds).
    t = {1, 1, divisorAtMost(r[2], accumulatorBudget(vw)), 1, r[4], 1, 1, 1};
  } else if (isa<linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcMaxUnsignedOp,
                 linalg::PoolingNhwcSumOp>(op)) {
    // (n, oh, ow, c, kh, kw): tiled like a depthwise convolution.
    t = {1, 1, divisorAtMost(r[2], accumulatorBudget(vw) / 2),
         divisorAtMost(r[3], 2 * vw), 1, 0};
  } else if (isa<linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp>(op)) {
    // (n, c, oh, ow, kh, kw): channels are the vector dimension.
    t = {1, divisorAtMost(r[1], vw), 1, divisorAtMost(r[3], 8), 1, 0};
  } else if (linalg::isaContractionOpInterface(op)) {
    if (!productTiles(op, r, vw, t))
      return {};
  } else if (std::optional<std::pair<int64_t, int64_t>> pair =
                 transposedPair(op, r, vw)) {
    // A transpose that moves the innermost dimension: 16 x 16 squares,
    // read as 16 rows of the input and written as 16 rows of the output,
    // transposed in registers (--kiln-lower-vector-ops, shuffles).
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
    // A run-time innermost loop that an input reads across its rows (K^T
    // of heads narrower than a register, which transposedPair leaves): two
    // registers per tile. Its lanes are gathered one load at a time either
    // way, and LLVM's SLP vectorizer spent 3 s on one 64-lane gather whose
    // rows lie a run-time size apart (Opset-23 Attention, 8 heads of 8:
    // compile 5.4 s to 1.6 s, the run 1-3% faster).
    if (lastRed < 0 && lastPar >= 0 &&
        ShapedType::isDynamic(op.getStaticLoopRanges()[lastPar]) &&
        readsAcrossRows(op, lastPar))
      budget = 2 * vw;
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
} // namespace

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
int64_t channelsOutermost(linalg::LinalgOp op, ArrayRef<int64_t> tiles,
                          int64_t l2Bytes) {
  // The loop over output channels (panels of a packed matmul) and the input
  // bytes read once per channel tile.
  int64_t channels = -1, input = 0;
  if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op.getOperation())) {
    if (tiles.size() != 7)
      return -1;
    channels = 3;
    input = convInputBytesRead(conv);
  } else if (op->hasAttr(kPackedRhsAttr) && tiles.size() == 4) {
    // (m, panel, column, k) of kiln-cpu-pack-constant-rhs.
    channels = 1;
    input = operandBytes(op, 0);
  }
  if (channels < 0 || tiles[channels] == 0)
    return -1;
  int64_t filter = operandBytes(op, 1);
  SmallVector<int64_t> r = op.getStaticLoopRanges();
  if (input == 0 || filter == 0 || r[channels] / tiles[channels] < 2)
    return -1;
  // Bytes each order reads from beyond L2 (`l2Bytes`, the target's: 1 MiB
  // on Zen 4/5 and Skylake-SP, 512 KiB on Zen 2/3): an operand that fits is
  // read from memory once, one that does not once per tile of the outer
  // loops.
  const int64_t kCache = l2Bytes;
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
                                     ArrayRef<int64_t> tiles, int64_t l2Bytes) {
  int64_t channels = channelsOutermost(op, tiles, l2Bytes);
  if (channels < 0)
    return {};
  SmallVector<int64_t> order = {channels};
  for (int64_t d = 0, e = tiles.size(); d < e; ++d)
    if (d != channels)
      order.push_back(d);
  return order;
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

namespace {

/// Whether each task of `op` split along `loop` by tiles[loop] can hold
/// the slice of every result no one reads whose payload reads its init
/// (the value half of an ArgMin): tiling drops such a result from the
/// parallel loop, so each task works on a copy of its slice, a buffer of
/// its own (at most kMaxLoopScratchBytes; see ArenaAllocation.cpp).
/// `largest` holds each loop's largest extent.
bool unreadResultsFitTasks(linalg::LinalgOp op, ArrayRef<int64_t> tiles,
                           int64_t loop,
                           ArrayRef<std::optional<int64_t>> largest) {
  for (OpResult result : op->getResults()) {
    OpOperand *init = op.getDpsInitOperand(result.getResultNumber());
    if (!result.use_empty() || !op.payloadUsesValueFromOperand(init))
      continue;
    Type element = getElementTypeOrSelf(init->get().getType());
    int64_t bytes =
        std::max<int64_t>(1, (element.getIntOrFloatBitWidth() + 7) / 8);
    for (AffineExpr e : op.getMatchingIndexingMap(init).getResults()) {
      auto d = dyn_cast<AffineDimExpr>(e);
      if (!d)
        return false;
      std::optional<int64_t> n = d.getPosition() == loop && tiles[loop] != 0
                                     ? std::optional<int64_t>(tiles[loop])
                                     : largest[d.getPosition()];
      if (!n || __builtin_mul_overflow(bytes, *n, &bytes))
        return false;
    }
    if (bytes > kMaxLoopScratchBytes)
      return false;
  }
  return true;
}

/// The loop of `op` to split across threads, before the tasks' buffers are
/// considered (see parallelLoop); `largest` holds each loop's largest
/// extent.
int64_t parallelLoopOf(linalg::LinalgOp op, ArrayRef<int64_t> tiles,
                       int64_t minWork, int64_t l2Bytes,
                       ArrayRef<std::optional<int64_t>> largest) {
  SmallVector<int64_t> r = op.getStaticLoopRanges();
  // A loop of run-time extent (a symbolic dimension, docs/shapes.md)
  // counts at its largest: an op too small at the symbols' maxima never
  // pays for a fork.
  int64_t volume = 1;
  for (auto [i, n] : llvm::enumerate(r)) {
    int64_t e = largest[i].value_or(INT64_MAX);
    if (__builtin_mul_overflow(volume, e, &volume))
      volume = INT64_MAX;
  }
  if (volume < minWork)
    return -1;
  if (int64_t channels = channelsOutermost(op, tiles, l2Bytes); channels >= 0)
    return channels;
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  // A loop of run-time extent tiled one index at a time (an image's rows),
  // so that no task has a partial tile; the one that can be the longest,
  // the batch of one image losing to its rows.
  int64_t rows = -1, longest = 1;
  for (auto [i, t] : llvm::enumerate(tiles))
    if (iters[i] == utils::IteratorType::parallel && t == 1 &&
        ShapedType::isDynamic(r[i]) && largest[i] && *largest[i] > longest) {
      rows = i;
      longest = *largest[i];
    }
  // Not a loop its tile does not divide (AVX2's 6-row tiles over an M
  // without a divisor near 6): its full tiles and its last one are split
  // apart inside each task (peelPartialTiles), not across tasks.
  for (auto [i, t] : llvm::enumerate(tiles))
    if (iters[i] == utils::IteratorType::parallel && t != 0 &&
        !ShapedType::isDynamic(r[i]) && r[i] / t >= 2 && r[i] % t == 0)
      // The outermost of the two, as static code takes its outermost loop,
      // when the run-time one can be long: a convolution's rows rather
      // than its few channel panels (each thread then reads half the
      // input, not all of it, and 3 panels do not leave one of 2 threads
      // idle a third of the loop), but attention's 4 heads rather than a
      // batch of at most 8, which is often 1.
      return rows >= 0 && rows < static_cast<int64_t>(i) &&
                     longest >= 8 * (r[i] / t)
                 ? rows
                 : i;
  // No static loop to share.
  return rows;
}

/// The run-time extent of loop `loop` of `op`: the size of an operand's
/// dimension that the loop indexes, inputs first. A tensor made by a
/// destination-style op (a fill) stands for its init, down to the
/// tensor.empty's size: a dimension of the op's result would keep a fill
/// alive that tiling fuses into the loop.
Value runTimeExtent(OpBuilder &b, linalg::LinalgOp op, unsigned loop) {
  SmallVector<OpOperand *> operands = op.getDpsInputOperands();
  for (OpOperand &init : op.getDpsInitsMutable())
    operands.push_back(&init);
  for (OpOperand *operand : operands) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    for (auto [axis, e] : llvm::enumerate(map.getResults())) {
      if (e != b.getAffineDimExpr(loop))
        continue;
      Value v = operand->get();
      while (auto result = dyn_cast<OpResult>(v)) {
        auto dps = dyn_cast<DestinationStyleOpInterface>(result.getOwner());
        OpOperand *init = dps ? dps.getTiedOpOperand(result) : nullptr;
        if (!init || init->get().getType() != v.getType())
          break;
        v = init->get();
      }
      auto type = cast<ShapedType>(v.getType());
      if (!type.isDynamicDim(axis))
        return arith::ConstantIndexOp::create(b, op.getLoc(),
                                              type.getDimSize(axis));
      if (auto empty = v.getDefiningOp<tensor::EmptyOp>())
        return empty.getDynamicSize(axis);
      return tensor::DimOp::create(b, op.getLoc(), v, axis);
    }
  }
  return {};
}

} // namespace

int64_t parallelLoop(linalg::LinalgOp op, ArrayRef<int64_t> tiles,
                     int64_t minWork, int64_t l2Bytes) {
  if (minWork <= 0)
    return -1;
  SmallVector<std::optional<int64_t>> largest;
  for (auto [i, n] : llvm::enumerate(op.getStaticLoopRanges()))
    largest.push_back(ShapedType::isDynamic(n) ? largestLoopExtent(op, i)
                                               : std::optional<int64_t>(n));
  int64_t loop = parallelLoopOf(op, tiles, minWork, l2Bytes, largest);
  if (loop < 0 || !unreadResultsFitTasks(op, tiles, loop, largest))
    return -1;
  return loop;
}

Value forkPaysAtRunTime(OpBuilder &b, linalg::LinalgOp op, int64_t minWork) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (minWork <= 0 || !llvm::any_of(ranges, ShapedType::isDynamic))
    return {};
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op);
  Location loc = op.getLoc();
  // Each factor is at most its bound; the product of the static ones
  // saturates, and so does the run-time product (at minWork: beyond it the
  // answer is known), so nothing wraps.
  int64_t known = 1;
  SmallVector<Value> extents;
  for (auto [i, n] : llvm::enumerate(ranges)) {
    if (!ShapedType::isDynamic(n)) {
      if (__builtin_mul_overflow(known, n, &known) || known > minWork)
        known = minWork;
      continue;
    }
    Value e = runTimeExtent(b, op, i);
    if (!e)
      return {};
    extents.push_back(e);
  }
  Value cap = arith::ConstantIndexOp::create(b, loc, minWork);
  Value work = arith::ConstantIndexOp::create(b, loc, known);
  for (Value e : extents)
    work = arith::MinUIOp::create(b, loc,
                                  arith::MulIOp::create(b, loc, work, e), cap);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, work, cap);
}

void markRunTimeFork(OpBuilder &b, Operation *inside, Value pays, int64_t &id) {
  auto loop =
      inside ? inside->getParentOfType<scf::ForallOp>() : scf::ForallOp();
  Operation *def = pays ? pays.getDefiningOp() : nullptr;
  if (!loop || !def || def->getBlock() != loop->getBlock() ||
      !def->isBeforeInBlock(loop) || loop->hasAttr(kiln::kParallelIfAttr))
    return;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop);
  kiln::ParallelIfOp::create(b, loop.getLoc(), pays, id);
  loop->setAttr(kiln::kParallelIfAttr, b.getI64IntegerAttr(id++));
}

std::optional<int64_t> largestLoopExtent(linalg::LinalgOp op, int64_t loop) {
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (auto [k, e] : llvm::enumerate(map.getResults()))
      if (auto d = dyn_cast<AffineDimExpr>(e); d && d.getPosition() == loop)
        if (std::optional<int64_t> n = largestDim(operand.get(), k))
          return n;
  }
  return std::nullopt;
}

} // namespace mlir::kiln
