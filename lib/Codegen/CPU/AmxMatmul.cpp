//===- AmxMatmul.cpp - bf16 and int8 products on AMX tiles ------*- C++ -*-===//
//
// Two products become loops of AMX tile instructions:
// - kiln.bf16_matmul's (a linalg.generic on buffers marked kiln.bf16_matmul:
//   bf16 rows [M, K2, 2] times weights packed [P, K2, 16, 2] -> f32
//   [M, P, 16]), with tdpbf16ps;
// - static int8's (marked kiln.amx_int8_matmul: u8 rows [M, K4, 4] times s8
//   weights [P, K4, 16, 4] -> i32 [M, P, 16]), with tdpbusd.
// An AMX core has eight tile registers of up to 16 rows x 64 bytes; one
// multiply takes a [rows, 64 bytes] A tile and a [16, 64 bytes] B tile (16
// groups of k for each of 16 columns: pairs of bf16 or quads of int8) into a
// [rows, 16] f32 or i32 accumulator. The blocking keeps four accumulators,
// two A and two B tiles live (all eight registers):
//
//   for each block of 32 rows and 2 panels (in parallel):
//     C[2][2] = 0
//     for kc in 0..K2 / 16:                            (K4 / 16 for int8)
//       A[i] = rows[m0 + 16 i .. +16, 64 bytes at kc]  (row stride Kp)
//       B[j] = weights[p0 + j, 16 kc .. +16, 0 .. 64 bytes] (contiguous 1 KiB)
//       C[i][j] += A[i] * B[j]
//     store C[i][j] into out[m0 + 16 i .., p0 + j, 0 .. 16]
//
// Rows past the last block of 32 get tiles with fewer rows (tile shapes are
// static; LLVM's tile configuration gives each its own), an odd last panel a
// block of one. The accumulator tiles are loop-carried values: LLVM keeps
// them in tile registers across the k loop. A K of fewer than 16 groups
// (amxPaddedK pads it to whole groups only) takes one step with A tiles of
// K2 * 4 bytes per row and B tiles of K2 rows: a 16-channel bf16 input is
// then read as 32-byte rows rather than padded to 64.
//
// A product whose only reader is an elementwise generic marked
// kiln.amx_epilogue (the dequantization or bias, activation, and the next
// product's quantization or bf16 rounding; kiln-cpu-mark-amx-epilogues marks it and
// moves the product next to it) applies it to each block instead: blocks
// then span up to 16 panels, their accumulators go a pair of panels at a
// time to a scratch buffer on the stack (one per thread, at most 32 KiB,
// made outside the loop over blocks), and the epilogue runs on its rows,
// 16 channels at a time, with what does not change along a row (per-channel
// scales, bias) computed once per block. The accumulators never make a round
// trip through memory, and the product's result buffer is not allocated.
//
// The pass runs after bufferization because AMX loads and stores address
// memory, and before the arena is planned, because a fused epilogue moves
// the last read of the product's inputs to where the epilogue was;
// --kiln-cpu-tile-and-vectorize leaves the marked generics whole.
// Each group of blocks with one tile shape goes into a function of its own
// (noinline): LLVM gives each of the 8 tile registers one shape per function
// and runs out of registers when several kernels share one.
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/Common/ChannelInvariance.h"
#include "kiln/Codegen/CPU/Passes.h"
#include "Utils.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_AMXMATMULPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// The operands of one marked product and the row strides (in elements) of
/// its rows and output. With `batch` > 0 every operand has a leading batch
/// dimension (kiln.bf16_batch_matmul) that the loops index first. `group` is
/// 2 for bf16 (pairs of k) and 4 for int8 (quads); k2 counts the groups.
struct TileProduct {
  Value rows, weights, out;
  int64_t batch = 0, m, p, k2, group = 2;
  int64_t rowStride, outStride;
  bool int8() const { return group == 4; }
  /// Weight elements of `panels` panels (all of K), over every batch.
  int64_t weightCount(int64_t panels) const {
    return std::max<int64_t>(batch, 1) * panels * 16 * group * k2;
  }
  int64_t elementBytes() const { return int8() ? 1 : 2; }
  /// The fused epilogue (kAmxEpilogueAttr), or null: applied to each block
  /// of accumulators instead of storing them to `out`. `epilogueOperands`
  /// are its operands as the emitting function sees them (null for the one
  /// that reads the accumulators, input `accInput`).
  linalg::GenericOp epilogue;
  unsigned accInput = 0;
  SmallVector<Value> epilogueOperands;
};

/// The stride of dimension `dim` when the dimensions after it are
/// contiguous (strides `inner`), or nothing.
std::optional<int64_t> strideOf(MemRefType t, unsigned dim,
                                ArrayRef<int64_t> inner) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(t.getStridesAndOffset(strides, offset)) ||
      ArrayRef<int64_t>(strides).drop_front(dim + 1) != inner ||
      llvm::any_of(ArrayRef<int64_t>(strides).take_front(dim + 1),
                   ShapedType::isDynamic))
    return std::nullopt;
  return strides[dim];
}

FailureOr<TileProduct> match(linalg::GenericOp op, std::string &why) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1) {
    why = "expects two buffer inputs and one buffer init";
    return failure();
  }
  TileProduct k;
  k.rows = op.getDpsInputOperand(0)->get();
  k.weights = op.getDpsInputOperand(1)->get();
  k.out = op.getDpsInitOperand(0)->get();
  auto at = dyn_cast<MemRefType>(k.rows.getType());
  auto wt = dyn_cast<MemRefType>(k.weights.getType());
  auto ot = dyn_cast<MemRefType>(k.out.getType());
  unsigned b = at && at.getRank() == 4 ? 1 : 0; // leading batch dimension
  k.group = op->hasAttr(mlir::kiln::kAmxInt8MatmulAttr) ? 4 : 2;
  auto elementsAre = [&](Type a, Type w, Type o) {
    return at.getElementType() == a && wt.getElementType() == w &&
           ot.getElementType() == o;
  };
  Builder types(op.getContext());
  if (!at || !wt || !ot || !at.hasStaticShape() || !wt.hasStaticShape() ||
      !ot.hasStaticShape() || at.getRank() != 3 + b || wt.getRank() != 4 + b ||
      ot.getRank() != 3 + b ||
      !(k.int8() ? elementsAre(types.getI8Type(), types.getI8Type(),
                               types.getI32Type())
                 : elementsAre(types.getBF16Type(), types.getBF16Type(),
                               types.getF32Type()))) {
    why = k.int8() ? "expects static i8 [M, K4, 4] x i8 [P, K4, 16, 4] -> "
                     "i32 [M, P, 16]"
                   : "expects static bf16 [(B,) M, K2, 2] x bf16 [(B,) P, K2, "
                     "16, 2] -> f32 [(B,) M, P, 16]";
    return failure();
  }
  k.batch = b ? at.getDimSize(0) : 0;
  k.m = at.getDimSize(b);
  k.k2 = at.getDimSize(b + 1);
  k.p = wt.getDimSize(b);
  if ((b && (wt.getDimSize(0) != k.batch || ot.getDimSize(0) != k.batch)) ||
      at.getDimSize(b + 2) != k.group || wt.getDimSize(b + 1) != k.k2 ||
      wt.getDimSize(b + 2) != 16 || wt.getDimSize(b + 3) != k.group ||
      ot.getDimSize(b) != k.m || ot.getDimSize(b + 1) != k.p ||
      ot.getDimSize(b + 2) != 16 || (k.k2 > 16 && k.k2 % 16 != 0)) {
    why = "shapes do not agree, or K is not padded to 64 bytes";
    return failure();
  }
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  MLIRContext *ctx = op.getContext();
  unsigned n = 5 + b;
  auto d = [&](unsigned i) { return getAffineDimExpr(i + b, ctx); };
  auto with = [&](SmallVector<AffineExpr> r) {
    if (b)
      r.insert(r.begin(), getAffineDimExpr(0, ctx));
    return AffineMap::get(n, 0, r, ctx);
  };
  if (maps[0] != with({d(0), d(3), d(4)}) ||
      maps[1] != with({d(1), d(3), d(2), d(4)}) ||
      maps[2] != with({d(0), d(1), d(2)})) {
    why = "unexpected indexing maps";
    return failure();
  }
  std::optional<int64_t> rowStride = strideOf(at, b, {k.group, 1});
  std::optional<int64_t> weightStride = strideOf(wt, b + 1, {k.group, 1});
  std::optional<int64_t> outStride = strideOf(ot, b, {16, 1});
  if (!rowStride || !weightStride || *weightStride != 16 * k.group ||
      !outStride) {
    why = "a buffer's rows are not contiguous";
    return failure();
  }
  k.rowStride = *rowStride;
  k.outStride = *outStride;
  return k;
}

/// A group of blocks with less work than this runs on one thread (a
/// fork-join costs a few microseconds, about 1 MFLOP of tile work)...
/// A product left on one thread costs more than its own time: the next
/// layer, split by rows, then reads all of its output from that core.
/// From 8 to 1 MFLOP: SqueezeNet on two threads 0.91 (int8) and 0.94 (bf16)
/// of before, the one-thread times unchanged.
constexpr int64_t kMinParallelFlops = 1'000'000;
/// ...unless it streams at least this many bytes of weights: a product of a
/// few rows (a classifier at batch 1) does little work per byte, and takes
/// as long as its weights take to come from L3 or memory (MobileNetV2's
/// 1280 x 1000 int8 classifier, 1.3 MB: 65 us on one thread). Split by
/// panels, each thread streams its share.
constexpr int64_t kMinParallelWeightBytes = 256 * 1024;

/// Rows of the A tiles of one block, and how many blocks of that shape
/// follow each other from `start`. With `lastStart` >= 0 the last block
/// starts there instead, overlapping the one before it.
struct RowGroup {
  int64_t start, count;
  SmallVector<int64_t> tileRows;
  int64_t lastStart = -1;
};

/// Blocks of 32 rows, then one of 16 and one of the rest. Each group has one
/// tile height: LLVM fixes the shape of each of the 8 tile registers for a
/// whole function, so one kernel function holds tiles of one height (plus
/// the B tiles of 16 rows).
///
/// With `overlap` (rows computed twice give the same values, written
/// twice), a tail of 17 to 31 rows after blocks of 32 is one more block of
/// 32 ending at row M instead of two groups: 49 rows are rows 0-31 and
/// 17-48. Each group streams all of the weights, and at 7x7 a layer's
/// weights are 10-20 times its rows: three groups (32, 16 and 1 rows) took
/// ResNet-50's 3x3 512-channel convolution in bf16 2.2 times as long as
/// its 32-row group alone. A tail of 16 rows or fewer is one group either
/// way, and fewer rows to compute.
SmallVector<RowGroup> rowGroups(int64_t m, bool overlap) {
  SmallVector<RowGroup> groups;
  if (overlap && m > 32 && m % 32 > 16) {
    groups.push_back({0, m / 32 + 1, {16, 16}, m - 32});
    return groups;
  }
  if (m / 32)
    groups.push_back({0, m / 32, {16, 16}});
  int64_t tail = m % 32, start = m - tail;
  if (tail >= 16) {
    groups.push_back({start, 1, {16}});
    start += 16;
    tail -= 16;
  }
  if (tail)
    groups.push_back({start, 1, {tail}});
  return groups;
}

/// Whether `v` is `root` seen through reshapes.
bool reshapeOf(Value v, Value root) {
  while (v != root) {
    Operation *def = v.getDefiningOp();
    if (!isa_and_nonnull<memref::CollapseShapeOp, memref::ExpandShapeOp>(def))
      return false;
    v = def->getOperand(0);
  }
  return true;
}

/// The generic marked kAmxEpilogueAttr that reads `k`'s accumulators, when
/// it can run on each block of them: nothing with effects but allocations
/// between the product and it, `out` (contiguous rows of 16 P) read by
/// nothing else, its loops [..., 16 P] spanning M, and every value its body
/// takes from outside a constant. Sets k.epilogue and k.accInput.
bool matchEpilogue(linalg::GenericOp product, TileProduct &k) {
  if (k.batch || k.outStride != 16 * k.p)
    return false;
  // Views, constants and the allocation of the epilogue's result (which
  // bufferization places right before it) may stand between the two.
  Operation *next = product->getNextNode();
  while (next && (isMemoryEffectFree(next) || isa<memref::AllocOp>(next)) &&
         !isa<linalg::GenericOp>(next))
    next = next->getNextNode();
  auto epilogue = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!epilogue || !epilogue->hasAttr(mlir::kiln::kAmxEpilogueAttr) ||
      !epilogue.hasPureBufferSemantics())
    return false;
  std::optional<unsigned> acc;
  for (OpOperand *in : epilogue.getDpsInputOperands())
    if (reshapeOf(in->get(), k.out))
      acc = in->getOperandNumber();
  if (!acc)
    return false;
  // Every reader of `out` is the product, a reshape or the epilogue.
  SmallVector<Value> work = {k.out};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(user))
        work.push_back(user->getResult(0));
      else if (user != product && user != epilogue)
        return false;
    }
  }
  SmallVector<int64_t> ranges = epilogue.getStaticLoopRanges();
  int64_t rows = 1;
  for (int64_t r : ArrayRef<int64_t>(ranges).drop_back())
    rows *= r;
  if (ranges.empty() || ShapedType::isDynamicShape(ranges) ||
      ranges.back() != 16 * k.p || rows != k.m)
    return false;
  Block &body = epilogue.getRegion().front();
  for (Operation &op : body.without_terminator())
    for (Value v : op.getOperands())
      if (v.getParentBlock() != &body && !matchPattern(v, m_Constant()))
        return false;
  Value yielded = body.getTerminator()->getOperand(0);
  if (yielded.getParentBlock() != &body && !matchPattern(yielded, m_Constant()))
    return false;
  k.epilogue = epilogue;
  k.accInput = *acc;
  return true;
}

/// The indices of the leading loops of `k`'s epilogue at row `m` (the rows
/// are those loops flattened, the innermost fastest).
SmallVector<Value> rowIndices(OpBuilder &b, Location loc, const TileProduct &k,
                              Value m) {
  linalg::GenericOp e = k.epilogue;
  SmallVector<int64_t> ranges = e.getStaticLoopRanges();
  SmallVector<Value> idx(ranges.size() - 1);
  Value rest = m;
  for (int64_t d = int64_t(idx.size()) - 1; d > 0; --d) {
    Value r = arith::ConstantIndexOp::create(b, loc, ranges[d]);
    idx[d] = arith::RemUIOp::create(b, loc, rest, r);
    rest = arith::DivUIOp::create(b, loc, rest, r);
  }
  if (!idx.empty())
    idx[0] = rest;
  return idx;
}

/// Emits `k`'s epilogue on vectors of 16 lanes for channels `c` .. `c` + 16:
/// with no `row` (the indices of rowIndices), the values that are the same
/// for a whole channel (loaded and computed once per block, into `map`);
/// with a row and its 16 accumulators `acc`, the rest, and the result's
/// write. Inputs are loaded at the row's indices (a broadcast where an
/// input does not vary along the channels).
void emitEpilogue(OpBuilder &b, Location loc, const TileProduct &k,
                  std::optional<ArrayRef<Value>> row, Value c, Value acc,
                  IRMapping &map) {
  linalg::GenericOp e = k.epilogue;
  unsigned n = e.getNumLoops();
  bool invariantPart = !row;
  // The accumulators vary with the row even when the epilogue has one row
  // (and their map names the channels alone).
  Block &body = e.getRegion().front();
  llvm::DenseMap<Value, bool> memo = {{body.getArgument(k.accInput), false}};
  auto variesWithRow = [&](Value v) {
    return !kiln::isPerChannel(e, v, memo);
  };
  SmallVector<Value> idx(n);
  if (row)
    llvm::copy(*row, idx.begin());
  idx[n - 1] = c;
  auto vec = [](Type t) { return VectorType::get({16}, t); };
  auto splat = [&](Value v) -> Value {
    return vector::BroadcastOp::create(b, loc, vec(v.getType()), v);
  };
  for (OpOperand *in : e.getDpsInputOperands()) {
    unsigned t = in->getOperandNumber();
    BlockArgument arg = body.getArgument(t);
    if (variesWithRow(arg) == invariantPart)
      continue;
    if (t == k.accInput) {
      map.map(arg, acc);
      continue;
    }
    Value src = k.epilogueOperands[t];
    auto type = dyn_cast<MemRefType>(src.getType());
    if (!type) {
      map.map(arg, splat(src));
      continue;
    }
    AffineMap am = e.getMatchingIndexingMap(in);
    SmallVector<Value> at;
    std::optional<unsigned> lanes;
    for (auto [q, expr] : llvm::enumerate(am.getResults())) {
      unsigned d = cast<AffineDimExpr>(expr).getPosition();
      at.push_back(idx[d]);
      if (d == n - 1)
        lanes = q;
    }
    if (!lanes) {
      map.map(arg, splat(memref::LoadOp::create(b, loc, src, at)));
      continue;
    }
    AffineMap perm = AffineMap::get(
        type.getRank(), 0, getAffineDimExpr(*lanes, b.getContext()));
    map.map(arg, vector::TransferReadOp::create(
                     b, loc, vec(type.getElementType()), src, at,
                     /*padding=*/std::nullopt, perm, ArrayRef<bool>{true}));
  }
  // Constants the body takes from outside, as vectors.
  auto operand = [&](Value v) -> Value {
    if (map.contains(v))
      return map.lookup(v);
    Value s = b.clone(*v.getDefiningOp())->getResult(0);
    return splat(s);
  };
  for (Operation &op : body.without_terminator()) {
    if (variesWithRow(op.getResult(0)) == invariantPart)
      continue;
    if (op.hasTrait<OpTrait::ConstantLike>()) {
      map.map(op.getResult(0), splat(b.clone(op)->getResult(0)));
      continue;
    }
    SmallVector<Value> operands;
    for (Value v : op.getOperands())
      operands.push_back(operand(v));
    OperationState state(loc, op.getName().getIdentifier(), operands,
                         TypeRange{vec(op.getResult(0).getType())},
                         op.getAttrs());
    map.map(op.getResult(0), b.create(state)->getResult(0));
  }
  if (invariantPart)
    return;
  Value y = operand(body.getTerminator()->getOperand(0));
  vector::TransferWriteOp::create(b, loc, y, k.epilogueOperands.back(), idx,
                                  ArrayRef<bool>{true});
}

/// The buffer `v` views: through subviews, reshapes and casts to an
/// allocation or an argument.
Value viewedBuffer(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    v = view.getViewSource();
  }
  return v;
}

/// Weights from this size up come from L3 or memory on each pass (L2 is
/// 2 MiB per core on the machines measured, and holds activations too).
constexpr int64_t kOverlapWeightBytes = 1024 * 1024;

/// Whether the last block of `k`'s rows should overlap the one before it
/// (rows computed twice) rather than take groups of smaller tiles, each of
/// which streams all of the weights: when the weights do not stay in L2
/// (with smaller weights, MobileNetV2 ran 2-5% slower computing rows
/// twice), and unless the fused epilogue writes a buffer it also reads (in
/// place), where a second pass over a row would apply it to its own
/// result.
bool overlapRows(const TileProduct &k) {
  if (k.weightCount(k.p) * k.elementBytes() < kOverlapWeightBytes)
    return false;
  linalg::GenericOp e = k.epilogue;
  if (!e)
    return true;
  Value written = viewedBuffer(e.getDpsInitOperand(0)->get());
  for (OpOperand *in : e.getDpsInputOperands())
    if (viewedBuffer(in->get()) == written)
      return false;
  return true;
}

/// Emits the loops of one group of blocks (all with the same tile shapes) on
/// the buffers it is given: `emit(b, rows, weights, out, epilogueOperands)`.
using EmitGroup =
    function_ref<void(OpBuilder &, Value, Value, Value, ValueRange)>;

/// Panels in a block: `count` blocks of `panels` panels from `start`.
struct PanelGroup {
  int64_t start, count, panels;
};

/// The indices one block computes with, made once at its start.
struct BlockIndices {
  Value batch; ///< the batch index, or null
  Value rowStride, weightStride, outStride, zero;
  SmallVector<Value> mi; ///< first row of each A tile
  SmallVector<Value> pj; ///< each panel of the block
  /// Indices into a batched operand: the batch first when there is one.
  SmallVector<Value> at(std::initializer_list<Value> rest) const {
    SmallVector<Value> v;
    if (batch)
      v.push_back(batch);
    v.append(rest.begin(), rest.end());
    return v;
  }
};

/// The AMX kernel of one product, in named steps: the groups of blocks
/// (rowGroups, panelGroups), the loop over one group's blocks, shared by
/// the threads when the group is worth a fork-join (emitGroup), one block's
/// k loop of tile loads and products (accumulate), and its stores or fused
/// epilogue (emitBlock).
class AmxKernel {
public:
  AmxKernel(OpBuilder &b, Location loc, const TileProduct &k) : loc(loc), k(k) {
    // A row of a tile is 64 bytes: 32 bf16 or 64 int8, 16 groups of k. The
    // loop over K takes 16 groups at a time; a K of fewer groups, one step
    // of all of them (A tiles of narrower rows, B tiles of fewer rows).
    elt = k.int8() ? Type(b.getI8Type()) : Type(b.getBF16Type());
    accElt = k.int8() ? Type(b.getI32Type()) : Type(b.getF32Type());
    rowElems = 16 * k.group;
    kStep = std::min<int64_t>(k.k2, 16);
    bType = amx::TileType::get({kStep, rowElems}, elt);
  }

  /// Emits the loops of the product at `b`'s insertion point; `kernel(b,
  /// emit)` places the loops of one group of blocks: `emit(b, rows, weights,
  /// out)` builds them on those buffers.
  void emit(OpBuilder &b, function_ref<void(OpBuilder &, EmitGroup)> kernel);

private:
  SmallVector<PanelGroup> panelGroups() const;
  void emitGroup(OpBuilder &b, const RowGroup &rg, const PanelGroup &pg,
                 Value rows, Value weights, Value out,
                 ValueRange epilogueOperands);
  void emitBlock(OpBuilder &b, const TileProduct &k, Value bt, Value m0,
                 ArrayRef<int64_t> tileRows, Value p0, int64_t np,
                 Value scratch);
  ValueRange accumulate(OpBuilder &b, const TileProduct &k,
                        const BlockIndices &ix, ArrayRef<int64_t> tileRows,
                        int64_t j0, int64_t nj);
  void applyEpilogue(OpBuilder &b, const TileProduct &k,
                     const BlockIndices &ix, ArrayRef<int64_t> tileRows,
                     Value m0, int64_t np, Value scratch);
  Value cst(OpBuilder &b, int64_t v) const {
    return arith::ConstantIndexOp::create(b, loc, v);
  }

  Location loc;
  const TileProduct &k;
  Type elt, accElt;
  int64_t rowElems = 0, kStep = 0;
  amx::TileType bType;
};

ValueRange AmxKernel::accumulate(OpBuilder &b, const TileProduct &k,
                                 const BlockIndices &ix,
                                 ArrayRef<int64_t> tileRows, int64_t j0,
                                 int64_t nj) {
  // The accumulators of panels j0 .. j0 + nj (at most two: with two A tiles
  // and two B tiles, four accumulators fill the 8 tile registers), index
  // i * nj + j.
  SmallVector<Value> init;
  SmallVector<amx::TileType> accTypes;
  for (int64_t rows : tileRows)
    for (int64_t j = 0; j < nj; ++j) {
      accTypes.push_back(amx::TileType::get({rows, 16}, accElt));
      init.push_back(amx::TileZeroOp::create(b, loc, accTypes.back()));
    }
  auto loop = scf::ForOp::create(
      b, loc, ix.zero, cst(b, k.k2), cst(b, kStep), init,
      [&](OpBuilder &b, Location, Value k2, ValueRange accs) {
        SmallVector<Value> a, w, next;
        for (auto [i, rows] : llvm::enumerate(tileRows))
          a.push_back(amx::TileLoadOp::create(
              b, loc, amx::TileType::get({rows, kStep * k.group}, elt), k.rows,
              ix.at({ix.mi[i], k2, ix.zero}), ix.rowStride));
        for (int64_t j = 0; j < nj; ++j)
          w.push_back(amx::TileLoadOp::create(
              b, loc, bType, k.weights,
              ix.at({ix.pj[j0 + j], k2, ix.zero, ix.zero}), ix.weightStride));
        for (size_t i = 0; i < tileRows.size(); ++i)
          for (int64_t j = 0; j < nj; ++j)
            next.push_back(
                k.int8()
                    // u8 rows times s8 weights: tdpbusd.
                    ? amx::TileMulIOp::create(b, loc, accTypes[i * nj + j],
                                              a[i], w[j], accs[i * nj + j],
                                              /*isZextLhs=*/true,
                                              /*isZextRhs=*/false)
                          .getResult()
                    : amx::TileMulFOp::create(b, loc, accTypes[i * nj + j],
                                              a[i], w[j], accs[i * nj + j])
                          .getResult());
        scf::YieldOp::create(b, loc, next);
      });
  return loop.getResults();
}

/// The block's accumulators, a pair of panels at a time (the next pair's
/// products overlap the stores of the last), go to `scratch` (at most 32
/// KiB, in L1); the epilogue then runs on each of its rows.
void AmxKernel::applyEpilogue(OpBuilder &b, const TileProduct &k,
                              const BlockIndices &ix,
                              ArrayRef<int64_t> tileRows, Value m0, int64_t np,
                              Value scratch) {
  int64_t rows = 0;
  for (int64_t r : tileRows)
    rows += r;
  Value scratchStride = cst(b, np * 16);
  for (int64_t j0 = 0; j0 < np; j0 += 2) {
    int64_t nj = std::min<int64_t>(2, np - j0);
    ValueRange accs = accumulate(b, k, ix, tileRows, j0, nj);
    for (size_t i = 0; i < tileRows.size(); ++i)
      for (int64_t j = 0; j < nj; ++j)
        amx::TileStoreOp::create(
            b, loc, scratch, ValueRange{cst(b, 16 * i), cst(b, 16 * (j0 + j))},
            accs[i * nj + j], scratchStride);
  }
  // What does not change with the row (per-channel scales, bias) once.
  SmallVector<IRMapping> invariant(np);
  SmallVector<Value> channels;
  for (int64_t j = 0; j < np; ++j) {
    channels.push_back(arith::MulIOp::create(b, loc, ix.pj[j], cst(b, 16)));
    emitEpilogue(b, loc, k, std::nullopt, channels[j], Value(), invariant[j]);
  }
  OpBuilder &outer = b;
  scf::ForOp::create(
      b, loc, ix.zero, cst(b, rows), cst(b, 1), ValueRange{},
      [&](OpBuilder &b, Location, Value r, ValueRange) {
        SmallVector<Value> row =
            rowIndices(b, loc, k, arith::AddIOp::create(b, loc, m0, r));
        for (int64_t j = 0; j < np; ++j) {
          // The column constants go ahead of the loop (`outer`).
          SmallVector<Value> at = {r, cst(outer, 16 * j)};
          Value acc = vector::LoadOp::create(
              b, loc, VectorType::get({16}, accElt), scratch, ValueRange(at));
          emitEpilogue(b, loc, k, ArrayRef<Value>(row), channels[j], acc,
                       invariant[j]);
        }
        scf::YieldOp::create(b, loc);
      });
}

/// One block: rows m0 .. (tiles of `tileRows` rows), panels p0 .. p0 + np.
void AmxKernel::emitBlock(OpBuilder &b, const TileProduct &k, Value bt,
                          Value m0, ArrayRef<int64_t> tileRows, Value p0,
                          int64_t np, Value scratch) {
  BlockIndices ix;
  ix.batch = bt;
  ix.rowStride = cst(b, k.rowStride);
  ix.weightStride = cst(b, rowElems);
  ix.outStride = cst(b, k.outStride);
  ix.zero = cst(b, 0);
  for (size_t i = 0; i < tileRows.size(); ++i)
    ix.mi.push_back(
        i ? arith::AddIOp::create(b, loc, m0, cst(b, 16 * i)).getResult()
          : m0);
  for (int64_t j = 0; j < np; ++j)
    ix.pj.push_back(
        j ? arith::AddIOp::create(b, loc, p0, cst(b, j)).getResult() : p0);
  if (k.epilogue)
    return applyEpilogue(b, k, ix, tileRows, m0, np, scratch);
  ValueRange accs = accumulate(b, k, ix, tileRows, 0, np);
  for (size_t i = 0; i < tileRows.size(); ++i)
    for (int64_t j = 0; j < np; ++j)
      amx::TileStoreOp::create(b, loc, k.out, ix.at({ix.mi[i], ix.pj[j], ix.zero}),
                               accs[i * np + j], ix.outStride);
}

/// Panels in pairs, then an odd last one alone. A fused epilogue takes up
/// to 16 panels per block (the most that divides P), so that the epilogue
/// waits for the accumulators once per 32 rows of 256 channels rather than
/// once per pair.
SmallVector<PanelGroup> AmxKernel::panelGroups() const {
  SmallVector<PanelGroup> groups;
  if (k.epilogue) {
    int64_t g = 16;
    while (k.p % g)
      --g;
    groups.push_back({0, k.p / g, g});
  } else {
    if (k.p / 2)
      groups.push_back({0, k.p / 2, 2});
    if (k.p % 2)
      groups.push_back({k.p - 1, 1, 1});
  }
  return groups;
}

void AmxKernel::emitGroup(OpBuilder &b, const RowGroup &rg,
                          const PanelGroup &pg, Value rows, Value weights,
                          Value out, ValueRange epilogueOperands) {
  TileProduct kk = k;
  kk.rows = rows;
  kk.weights = weights;
  kk.out = out;
  kk.epilogueOperands.assign(epilogueOperands.begin(), epilogueOperands.end());
  int64_t rowsPerBlock = 16 * rg.tileRows.size();
  int64_t blocks = rg.count * pg.count;
  // A fused epilogue's scratch: one per thread, made where the loop over
  // blocks starts (inside a parallel loop's body, which the outlining gives
  // each task once), never inside a sequential loop, where each iteration
  // would take more stack.
  auto scratch = [&](OpBuilder &b) -> Value {
    if (!k.epilogue)
      return Value();
    int64_t rows = 0;
    for (int64_t r : rg.tileRows)
      rows += r;
    return memref::AllocaOp::create(
        b, loc,
        MemRefType::get({rows, pg.panels * 16},
                        k.int8() ? Type(b.getI32Type()) : Type(b.getF32Type())));
  };
  Value shared;
  // Two row blocks take the panels outermost: both read a panel's weights
  // one after the other, the second from cache (and threads split the
  // weights rather than each streaming all of them). More row blocks take
  // the rows outermost, so that each thread writes whole rows that the next
  // layer reads on the same core.
  bool panelsOuter = rg.count == 2;
  auto body = [&](OpBuilder &b, Value iv) {
    // iv = (batch, row block, panel block), the last fastest (row and panel
    // block swapped with panelsOuter).
    Value bt;
    if (k.batch) {
      bt = arith::DivUIOp::create(b, loc, iv, cst(b, blocks));
      iv = arith::RemUIOp::create(b, loc, iv, cst(b, blocks));
    }
    Value rowBlock, panelBlock;
    if (panelsOuter) {
      panelBlock = arith::DivUIOp::create(b, loc, iv, cst(b, rg.count));
      rowBlock = arith::RemUIOp::create(b, loc, iv, cst(b, rg.count));
    } else {
      rowBlock = arith::DivUIOp::create(b, loc, iv, cst(b, pg.count));
      panelBlock = arith::RemUIOp::create(b, loc, iv, cst(b, pg.count));
    }
    Value m0 = arith::AddIOp::create(
        b, loc, cst(b, rg.start),
        arith::MulIOp::create(b, loc, rowBlock, cst(b, rowsPerBlock)));
    if (rg.lastStart >= 0)
      m0 = arith::MinUIOp::create(b, loc, m0, cst(b, rg.lastStart));
    Value p0 = arith::AddIOp::create(
        b, loc, cst(b, pg.start),
        arith::MulIOp::create(b, loc, panelBlock, cst(b, pg.panels)));
    emitBlock(b, kk, bt, m0, rg.tileRows, p0, pg.panels,
              shared ? shared : scratch(b));
  };
  int64_t count = blocks * std::max<int64_t>(k.batch, 1);
  if (count == 1) {
    body(b, cst(b, 0));
    return;
  }
  // Blocks are independent: threads share them when the group is worth a
  // fork-join (kMinParallelFlops); a small one loops on one thread.
  int64_t groupRows = rg.count * rowsPerBlock;
  if (rg.tileRows.size() == 1)
    groupRows = rg.tileRows[0];
  if (rg.lastStart >= 0)
    groupRows = rg.lastStart + rowsPerBlock - rg.start;
  int64_t weightCount = k.weightCount(pg.count * pg.panels);
  int64_t weightBytes = weightCount * k.elementBytes();
  int64_t flops = 2 * groupRows * weightCount;
  OpBuilder::InsertionGuard guard(b);
  if (flops < kMinParallelFlops && weightBytes < kMinParallelWeightBytes) {
    shared = scratch(b);
    auto loop = scf::ForOp::create(b, loc, cst(b, 0), cst(b, count), cst(b, 1));
    b.setInsertionPointToStart(loop.getBody());
    body(b, loop.getInductionVar());
    return;
  }
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(count)}, ValueRange{},
      std::nullopt);
  b.setInsertionPointToStart(forall.getBody());
  body(b, forall.getInductionVar(0));
}

void AmxKernel::emit(OpBuilder &b,
                     function_ref<void(OpBuilder &, EmitGroup)> kernel) {
  SmallVector<PanelGroup> groups = panelGroups();
  for (const RowGroup &rg : rowGroups(k.m, overlapRows(k)))
    for (const PanelGroup &pg : groups)
      kernel(b, [&](OpBuilder &b, Value rows, Value weights, Value out,
                    ValueRange epilogueOperands) {
        emitGroup(b, rg, pg, rows, weights, out, epilogueOperands);
      });
}

/// Whether `v` can be passed to a function under the bare-pointer calling
/// convention the pipeline uses: a static, identity-layout memref.
bool passable(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.hasStaticShape() && t.getLayout().isIdentity();
}

/// How a kernel function gets `v`: the passable value it is a view of (or
/// `v`, an integer or float), and the views from there (their other operands
/// constants), outermost first. Nothing when there is no such value.
std::optional<std::pair<Value, SmallVector<Operation *>>> viewRoot(Value v) {
  SmallVector<Operation *> views;
  while (isa<MemRefType>(v.getType()) && !passable(v)) {
    Operation *def = v.getDefiningOp();
    if (!isa_and_nonnull<ViewLikeOpInterface>(def) || def->getNumResults() != 1)
      return std::nullopt;
    for (Value operand : llvm::drop_begin(def->getOperands()))
      if (!matchPattern(operand, m_Constant()))
        return std::nullopt;
    views.push_back(def);
    v = def->getOperand(0);
  }
  if (!isa<MemRefType>(v.getType()) && !v.getType().isIntOrFloat())
    return std::nullopt;
  std::reverse(views.begin(), views.end());
  return std::make_pair(v, views);
}

struct AmxMatmulPass : mlir::kiln::impl::AmxMatmulPassBase<AmxMatmulPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (func::FuncOp func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      SmallVector<linalg::GenericOp> ops;
      func.walk([&](linalg::GenericOp op) {
        if (mlir::kiln::isAmxProduct(op))
          ops.push_back(op);
      });
      int counter = 0;
      Operation *last = func; // kernels follow their caller in order
      for (linalg::GenericOp op : ops) {
        std::string why;
        FailureOr<TileProduct> k = match(op, why);
        if (failed(k)) {
          // Its zero fill may be gone (kiln-cpu-drop-amx-zero-fills): no other
          // lowering may compute it.
          op->emitError() << (op->hasAttr(mlir::kiln::kAmxInt8MatmulAttr)
                                  ? "int8"
                                  : "bf16")
                          << " matmul does not fit the AMX kernel: " << why;
          return signalPassFailure();
        }
        OpBuilder b(op);
        bool call =
            passable(k->rows) && passable(k->weights) && passable(k->out);
        // The epilogue's operands reach a kernel function as the values they
        // are views of, with the views rebuilt inside.
        SmallVector<std::pair<Value, SmallVector<Operation *>>> roots;
        if (matchEpilogue(op, *k)) {
          k->epilogueOperands = llvm::to_vector(k->epilogue->getOperands());
          for (auto [t, v] : llvm::enumerate(k->epilogueOperands)) {
            // The accumulators stay in the kernel: no argument.
            auto root = t == k->accInput
                            ? std::make_pair(Value(), SmallVector<Operation *>())
                            : viewRoot(v);
            if (!root)
              call = false;
            else
              roots.push_back(*root);
          }
        }
        // Only effect-free ops (views of the epilogue's operands) run
        // between the two: the kernel takes the epilogue's place.
        if (k->epilogue)
          b.setInsertionPoint(k->epilogue);
        AmxKernel(b, op.getLoc(), *k).emit(b, [&](OpBuilder &b, EmitGroup emit) {
          if (!call) {
            emit(b, k->rows, k->weights, k->out, k->epilogueOperands);
            return;
          }
          // Each group of blocks in a function of its own, never inlined:
          // see rowGroups.
          Location loc = op.getLoc();
          OpBuilder mb(module.getContext());
          mb.setInsertionPointAfter(last);
          // A fused epilogue replaces `out`, which is then not passed (and
          // its buffer, unused, not allocated).
          SmallVector<Value> args = {k->rows, k->weights};
          if (!k->epilogue)
            args.push_back(k->out);
          for (auto &root : roots)
            if (root.first)
              args.push_back(root.first);
          SmallVector<Type> types = llvm::to_vector(ValueRange(args).getTypes());
          auto kernel = func::FuncOp::create(
              mb, loc, (func.getSymName() + "_amx" + Twine(counter++)).str(),
              mb.getFunctionType(types, {}));
          kernel.setPrivate();
          last = kernel;
          kernel->setAttr("llvm.linkage",
                          LLVM::LinkageAttr::get(module.getContext(),
                                                 LLVM::Linkage::Internal));
          kernel->setAttr("passthrough",
                          mb.getArrayAttr({mb.getStringAttr("noinline")}));
          Block *entry = kernel.addEntryBlock();
          mb.setInsertionPointToStart(entry);
          SmallVector<Value> operands;
          unsigned next = k->epilogue ? 2 : 3;
          for (auto &root : roots) {
            if (!root.first) {
              operands.push_back(Value());
              continue;
            }
            IRMapping map;
            Value arg = entry->getArgument(next++);
            map.map(root.first, arg);
            for (Operation *view : root.second) {
              for (Value c : llvm::drop_begin(view->getOperands()))
                if (!map.contains(c))
                  map.map(c, mb.clone(*c.getDefiningOp())->getResult(0));
              mb.clone(*view, map);
            }
            operands.push_back(root.second.empty()
                                   ? arg
                                   : map.lookup(root.second.back()->getResult(0)));
          }
          emit(mb, entry->getArgument(0), entry->getArgument(1),
               k->epilogue ? Value() : entry->getArgument(2), operands);
          func::ReturnOp::create(mb, loc);
          func::CallOp::create(b, loc, kernel, args);
        });
        if (k->epilogue)
          k->epilogue.erase();
        op.erase();
      }
    }
  }
};
} // namespace
