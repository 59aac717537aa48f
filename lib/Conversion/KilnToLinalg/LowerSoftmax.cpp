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
// stored whole (8 MiB for 8 heads of 512 tokens).
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

std::optional<AttentionChain> mlir::kiln::attentionChain(MatMulOp pv) {
  auto softmax = pv.getLhs().getDefiningOp<SoftmaxOp>();
  if (!softmax || !softmax->hasOneUse())
    return std::nullopt;
  auto qk = softmax.getInput().getDefiningOp<MatMulOp>();
  if (!qk || !qk->hasOneUse())
    return std::nullopt;
  RankedTensorType a = typeOf(qk.getLhs()), bt = typeOf(qk.getRhs()),
                   v = typeOf(pv.getRhs()), s = qk.getType(), o = pv.getType();
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
  if ((int64_t)softmax.getAxis() != rank - 1 || n < 32 ||
      n % 16 != 0 || s.getNumElements() < kMinBlockedElements)
    return std::nullopt;
  return AttentionChain{qk, softmax};
}

bool mlir::kiln::inAttentionChain(Operation *op) {
  Operation *next = op;
  for (int step = 0; step < 2; ++step) {
    if (!next->hasOneUse())
      return false;
    next = *next->getUsers().begin();
    if (auto pv = dyn_cast<MatMulOp>(next)) {
      std::optional<AttentionChain> chain = attentionChain(pv);
      return chain && (chain->qk == op || chain->softmax == op);
    }
  }
  return false;
}

Value mlir::kiln::rowBlockedAttention(OpBuilder &b, MatMulOp pv,
                                      AttentionChain chain) {
  Location loc = pv.getLoc();
  Value q = chain.qk.getLhs(), kt = chain.qk.getRhs(), v = pv.getRhs();
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
        Value p = softmaxRows(b, loc, matmul2D(b, loc, rows, keys), block, n);
        return matmul2D(b, loc, p, values);
      });
}
