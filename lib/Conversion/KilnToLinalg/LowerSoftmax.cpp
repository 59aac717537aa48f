//===- LowerSoftmax.cpp - softmax and attention over row blocks -*- C++ -*-===//
//
// kiln.softmax over the last axis of a static tensor of many rows (an
// attention's scores, [batch, heads, query, key]) becomes one scf.forall
// over blocks of rows. Each block computes its rows' maxima, the
// exponentials, their sums and the quotients while the rows are in cache:
// the whole-tensor form is six loop nests (two reductions in two stages
// each, the exponentials, the quotients), each a pass over the tensor and
// a fork-join of the thread pool, and its second stages ran on one thread.
// The arithmetic is the same, in the same order, so the numbers are too.
//
// An attention written as MatMul, Softmax, MatMul (softmax(q kt) v) becomes
// one such loop over blocks of query rows of each head: the block's scores,
// their softmax, and the product with the head's v. The scores are never
// stored whole (8 MiB for 8 heads of 512 tokens). Elementwise ops between
// the products and the softmax (BERT's scale and additive mask, a causal
// mask, Attention-23's zeroing of fully masked rows) run on the block too,
// on the block's slice of their other operands.
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Elements from which a softmax is split into blocks of rows shared among
/// threads: the codegen's default for sharing one op among threads (its
/// `parallel-work` option, kiln-cpu-tiling-pipeline). Below it the
/// whole-tensor form runs on one thread anyway.
constexpr int64_t kMinBlockedElements = 32768;
/// The most elements in one block of rows (16 KiB of f32: the block and its
/// exponentials stay in a 48 KiB L1 cache).
constexpr int64_t kMaxBlockElements = 4096;

using Combine = std::function<Value(OpBuilder &, Location, Value, Value)>;

/// Rows [block, n] reduced to [block], n / 16 lanes at a time: [block,
/// n / 16, 16] over its middle axis, then the 16 lanes (a reduction along
/// the innermost axis would combine vector lanes at every step).
Value rowsReduced(OpBuilder &b, Location loc, Value rows, int64_t block,
                  int64_t n, double init, const Combine &combine) {
  Value lanes = reduced(b, loc, reshaped(b, loc, rows, {block, n / 16, 16}),
                        {1}, init, combine);
  return reduced(b, loc, lanes, {1}, init, combine);
}

/// The softmax of each row of `tile` [block, n] (n a multiple of 16): the
/// maxima, the exponentials, their sums and the quotients.
Value softmaxRows(OpBuilder &b, Location loc, Value tile, int64_t block,
                  int64_t n) {
  Type elt = typeOf(tile).getElementType();
  // The row maximum keeps exp() in range; maxnumf as the whole-tensor
  // form (lowerSoftmax) explains.
  Value m = rowsReduced(
      b, loc, tile, block, n, -std::numeric_limits<double>::infinity(),
      [](OpBuilder &nb, Location nl, Value acc, Value v) {
        return arith::MaxNumFOp::create(nb, nl, acc, v).getResult();
      });
  AffineMap id = b.getMultiDimIdentityMap(2),
            row = AffineMap::get(2, 0, b.getAffineDimExpr(0), b.getContext());
  Value e =
      mappedGeneric(b, loc, {block, n}, elt, ValueRange{tile, m}, {id, row},
                    [](OpBuilder &nb, Location nl, ValueRange v) -> Value {
                      return math::ExpOp::create(
                          nb, nl, arith::SubFOp::create(nb, nl, v[0], v[1]));
                    });
  Value s =
      rowsReduced(b, loc, e, block, n, 0.0,
                  [](OpBuilder &nb, Location nl, Value acc, Value v) {
                    return arith::AddFOp::create(nb, nl, acc, v).getResult();
                  });
  return mappedGeneric(b, loc, {block, n}, elt, ValueRange{e, s}, {id, row},
                       [](OpBuilder &nb, Location nl, ValueRange v) -> Value {
                         return arith::DivFOp::create(nb, nl, v[0], v[1]);
                       });
}

/// The largest block of at most `most` rows (a power of two) that divides
/// `rows` and, `cols` long, holds at most `elements`; 1 if none does.
int64_t rowBlock(int64_t rows, int64_t cols, int64_t most, int64_t elements) {
  for (int64_t r = most; r > 1; r /= 2)
    if (rows % r == 0 && r * cols <= elements)
      return r;
  return 1;
}

/// A static tensor of `shape` computed by one scf.forall over blocks of
/// `block` rows of its second-to-last axis (the thread pool's loop).
/// Iteration i takes block i % (rows / block) of the leading index
/// i / (rows / block) (row-major). `body` gets the offsets of its block's
/// first element (the leading indices, the first row, 0) and returns the
/// block's rows, [block, shape.back()].
Value overRowBlocks(
    OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Type elt,
    int64_t block,
    function_ref<Value(OpBuilder &, ArrayRef<OpFoldResult>)> body) {
  int64_t rank = shape.size();
  SmallVector<int64_t> basis(shape.take_front(rank - 2));
  basis.push_back(shape[rank - 2] / block);
  int64_t count = 1;
  for (int64_t d : basis)
    count *= d;
  Value init = emptyTensor(b, loc, shape, elt);
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(count)}, ValueRange{init},
      std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
      sizes(rank, b.getIndexAttr(1)), strides(rank, b.getIndexAttr(1));
  Value rest = forall.getInductionVar(0);
  for (int64_t d = rank - 2; d >= 0; --d) {
    Value size = arith::ConstantIndexOp::create(b, loc, basis[d]);
    Value index = d == 0 ? rest : arith::RemUIOp::create(b, loc, rest, size);
    if (d == rank - 2)
      index = arith::MulIOp::create(
          b, loc, index, arith::ConstantIndexOp::create(b, loc, block));
    offsets[d] = index;
    if (d > 0)
      rest = arith::DivUIOp::create(b, loc, rest, size);
  }
  Value rows = body(b, offsets);
  sizes[rank - 2] = b.getIndexAttr(block);
  sizes[rank - 1] = b.getIndexAttr(shape.back());
  b.setInsertionPointToEnd(&forall.getTerminator().getRegion().front());
  tensor::ParallelInsertSliceOp::create(
      b, loc, rows, forall.getRegionOutArgs().front(), offsets, sizes, strides);
  return forall.getResult(0);
}

/// The matrix [rows, cols] of `x` at the leading indices of `offsets`
/// (rows from `first`, or from 0), the unit leading axes dropped.
Value matrixAt(OpBuilder &b, Location loc, Value x,
               ArrayRef<OpFoldResult> offsets, OpFoldResult first, int64_t rows,
               int64_t cols) {
  RankedTensorType t = typeOf(x);
  int64_t rank = t.getRank();
  SmallVector<OpFoldResult> at(offsets.take_front(rank - 2)),
      sizes(rank, b.getIndexAttr(1)), strides(rank, b.getIndexAttr(1));
  at.push_back(first);
  at.push_back(b.getIndexAttr(0));
  sizes[rank - 2] = b.getIndexAttr(rows);
  sizes[rank - 1] = b.getIndexAttr(cols);
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({rows, cols}, t.getElementType()), x, at,
      sizes, strides);
}

/// The block of rows of `x` (broadcast to scores whose block starts at
/// `offsets`) that an op over the block's [block, n] tile reads: its
/// leading axes at the block's indices, its last two sliced as the tile's
/// (or kept where of size 1), as a tensor of rank at most 2 that
/// broadcasts to the tile.
Value blockOperand(OpBuilder &b, Location loc, Value x,
                   ArrayRef<OpFoldResult> offsets, int64_t block, int64_t n) {
  RankedTensorType t = typeOf(x);
  int64_t rank = t.getRank(), lead = offsets.size() - rank;
  if (rank == 0)
    return x;
  SmallVector<OpFoldResult> at, sizes, strides(rank, b.getIndexAttr(1));
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = t.getDimSize(d), axis = lead + d;
    bool row = axis == (int64_t)offsets.size() - 2,
         col = axis == (int64_t)offsets.size() - 1;
    at.push_back(size == 1 || col ? b.getIndexAttr(0) : offsets[axis]);
    sizes.push_back(b.getIndexAttr(size == 1 ? 1 : row ? block : col ? n : 1));
  }
  SmallVector<int64_t> tile;
  for (int64_t d = std::max<int64_t>(rank - 2, 0); d < rank; ++d)
    tile.push_back(*getConstantIntValue(sizes[d]));
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(tile, t.getElementType()), x, at, sizes,
      strides);
}

/// `ops` (elementwise, in order) applied to the [block, n] tile `chain` of
/// scores whose block starts at `offsets`, each reading the previous
/// result at its chain operand and its other operands' blocks.
Value applied(OpBuilder &b, Location loc, Value chain,
              ArrayRef<std::pair<Operation *, unsigned>> ops,
              ArrayRef<OpFoldResult> offsets, int64_t block, int64_t n) {
  for (auto [op, index] : ops) {
    SmallVector<Value> inputs;
    for (auto [i, operand] : llvm::enumerate(op->getOperands()))
      inputs.push_back(i == index
                           ? chain
                           : blockOperand(b, loc, operand, offsets, block, n));
    chain = broadcastGeneric(b, loc, {block, n}, b.getF32Type(), inputs,
                             *elementwiseBody(op));
  }
  return chain;
}

} // namespace

FailureOr<Value> mlir::kiln::rowBlockedSoftmax(OpBuilder &b, SoftmaxOp op) {
  RankedTensorType rt = op.getType();
  int64_t rank = rt.getRank();
  if (!rt.hasStaticShape() || (int64_t)op.getAxis() != rank - 1 || rank < 2 ||
      !isa<FloatType>(rt.getElementType()))
    return failure();
  int64_t n = rt.getShape().back();
  if (n < 32 || n % 16 != 0 || rt.getNumElements() < kMinBlockedElements)
    return failure();
  ArrayRef<int64_t> shape = rt.getShape();
  int64_t block = rowBlock(shape[rank - 2], n, 8, kMaxBlockElements);
  Value x = op.getInput();
  return overRowBlocks(b, op.getLoc(), shape, rt.getElementType(), block,
                       [&](OpBuilder &b, ArrayRef<OpFoldResult> offsets) {
                         Value tile = matrixAt(b, op.getLoc(), x, offsets,
                                               offsets[rank - 2], block, n);
                         return softmaxRows(b, op.getLoc(), tile, block, n);
                       });
}

namespace {
/// The most elementwise ops on each side of an attention's softmax.
constexpr int kMaxChainOps = 8;

using ChainOps = SmallVector<std::pair<Operation *, unsigned>>;

/// Whether `op` may take part in an attention chain over scores of type `s`
/// as an elementwise op: its result has the scores' type and each operand
/// is f32 (or i1), of static shape, broadcast to the scores.
bool chainable(Operation *op, RankedTensorType s) {
  if (op->getNumResults() != 1 || op->getResult(0).getType() != s ||
      !elementwiseBody(op))
    return false;
  for (Value v : op->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.hasStaticShape() || t.getRank() > s.getRank() ||
        !(t.getElementType().isF32() || t.getElementType().isInteger(1)))
      return false;
    for (auto [d, size] : llvm::enumerate(t.getShape()))
      if (size != 1 && size != s.getDimSize(s.getRank() - t.getRank() + d))
        return false;
  }
  return true;
}

/// The elementwise ops (at most `budget`, each result read once) from the
/// result of an op `End` of type `s` to `v`, in order, with the index of
/// the operand each reads the chain by; none if `v` is not reached so.
/// Every operand of the scores' type is tried (an `Add` of a bias and the
/// scores may read them by either).
template <typename End>
std::optional<std::pair<End, ChainOps>> chainFrom(Value v, RankedTensorType s,
                                                  int budget = kMaxChainOps) {
  Operation *def = v.getDefiningOp();
  if (!def || !v.hasOneUse())
    return std::nullopt;
  if (auto end = dyn_cast<End>(def))
    return std::make_pair(end, ChainOps{});
  if (budget == 0 || !chainable(def, s))
    return std::nullopt;
  for (OpOperand &use : def->getOpOperands()) {
    if (use.get().getType() != s)
      continue;
    if (auto up = chainFrom<End>(use.get(), s, budget - 1)) {
      up->second.push_back({def, use.getOperandNumber()});
      return up;
    }
  }
  return std::nullopt;
}

/// The chain ending in `pv`, if it is one.
std::optional<AttentionChain> attentionChain(MatMulOp pv) {
  RankedTensorType s = typeOf(pv.getLhs());
  auto probs = chainFrom<SoftmaxOp>(pv.getLhs(), s);
  if (!probs)
    return std::nullopt;
  SoftmaxOp softmax = probs->first;
  auto scores = chainFrom<MatMulOp>(softmax.getInput(), s);
  if (!scores)
    return std::nullopt;
  MatMulOp qk = scores->first;
  RankedTensorType a = typeOf(qk.getLhs()), bt = typeOf(qk.getRhs()),
                   v = typeOf(pv.getRhs()), o = pv.getType();
  int64_t rank = s.getRank();
  if (rank < 2)
    return std::nullopt;
  for (RankedTensorType t : {a, bt, v, s, o})
    if (!t.hasStaticShape() || t.getRank() != rank ||
        !t.getElementType().isF32())
      return std::nullopt;
  // The same leading (head) indices everywhere: no broadcast product.
  for (RankedTensorType t : {a, bt, v, o})
    if (t.getShape().take_front(rank - 2) != s.getShape().take_front(rank - 2))
      return std::nullopt;
  int64_t n = s.getShape().back();
  if ((int64_t)softmax.getAxis() != rank - 1 || n < 32 || n % 16 != 0 ||
      s.getNumElements() < kMinBlockedElements)
    return std::nullopt;
  return AttentionChain{qk, softmax, std::move(scores->second),
                        std::move(probs->second)};
}
} // namespace

SmallVector<Operation *> AttentionChain::ops() const {
  SmallVector<Operation *> all{qk};
  for (auto [op, index] : onScores)
    all.push_back(op);
  all.push_back(softmax);
  for (auto [op, index] : onProbs)
    all.push_back(op);
  return all;
}

DenseMap<Operation *, AttentionChain>
mlir::kiln::attentionChains(Block &block) {
  DenseMap<Operation *, AttentionChain> chains;
  DenseSet<Operation *> taken;
  for (Operation &op : block) {
    auto pv = dyn_cast<MatMulOp>(op);
    std::optional<AttentionChain> chain;
    if (!pv || !(chain = attentionChain(pv)))
      continue;
    // A first product that is an earlier chain's last (one attention's
    // output its scores' input) stays with the earlier chain.
    SmallVector<Operation *> ops = chain->ops();
    if (llvm::any_of(ops, [&](Operation *o) {
          return taken.contains(o) || chains.contains(o);
        }))
      continue;
    taken.insert(ops.begin(), ops.end());
    chains.try_emplace(pv, std::move(*chain));
  }
  return chains;
}

Value mlir::kiln::rowBlockedAttention(OpBuilder &b, MatMulOp pv,
                                      const AttentionChain &chain) {
  Location loc = pv.getLoc();
  MatMulOp qk = chain.qk;
  Value q = qk.getLhs(), kt = qk.getRhs(), v = pv.getRhs();
  RankedTensorType o = pv.getType();
  ArrayRef<int64_t> shape = o.getShape();
  int64_t rank = o.getRank();
  int64_t k = typeOf(q).getShape().back(), n = typeOf(kt).getShape().back(),
          d = shape.back();
  int64_t block = rowBlock(shape[rank - 2], n, 32, kMaxBlockElements);
  return overRowBlocks(
      b, loc, shape, o.getElementType(), block,
      [&](OpBuilder &b, ArrayRef<OpFoldResult> offsets) {
        Value rows = matrixAt(b, loc, q, offsets, offsets[rank - 2], block, k);
        Value keys = matrixAt(b, loc, kt, offsets, b.getIndexAttr(0), k, n);
        Value values = matrixAt(b, loc, v, offsets, b.getIndexAttr(0), n, d);
        Value scores = applied(b, loc, matmul2D(b, loc, rows, keys),
                               chain.onScores, offsets, block, n);
        Value p = applied(b, loc, softmaxRows(b, loc, scores, block, n),
                          chain.onProbs, offsets, block, n);
        return matmul2D(b, loc, p, values);
      });
}
