//===- LowerSoftmax.cpp - a softmax as one loop over its rows -*- C++ -*-===//
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
} // namespace

FailureOr<Value> mlir::kiln::rowBlockedSoftmax(OpBuilder &b, SoftmaxOp op) {
  RankedTensorType rt = op.getType();
  int64_t rank = rt.getRank();
  if (!rt.hasStaticShape() || op.getAxis() != rank - 1 || rank < 2 ||
      !isa<FloatType>(rt.getElementType()))
    return failure();
  int64_t n = rt.getShape().back();
  if (n < 32 || n % 16 != 0 || rt.getNumElements() < kMinBlockedElements)
    return failure();
  // Blocks of the second-to-last axis: the largest of at most 8 rows that
  // divides it and fits kMaxBlockElements.
  ArrayRef<int64_t> shape = rt.getShape();
  int64_t block = 1;
  for (int64_t r : {8, 4, 2})
    if (shape[rank - 2] % r == 0 && r * n <= kMaxBlockElements) {
      block = r;
      break;
    }
  // Iteration i is block i % blocks of the row axis, in the outer index
  // i / blocks (row-major over the leading axes).
  SmallVector<int64_t> basis(shape.take_front(rank - 2));
  basis.push_back(shape[rank - 2] / block);
  int64_t count = 1;
  for (int64_t d : basis)
    count *= d;
  Location loc = op.getLoc();
  Type elt = rt.getElementType();
  Value x = op.getInput();
  Value init = emptyTensor(b, loc, shape, elt);
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(count)}, ValueRange{init},
      std::nullopt);
  {
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
    sizes[rank - 2] = b.getIndexAttr(block);
    sizes[rank - 1] = b.getIndexAttr(n);
    // [block, n], the unit leading axes dropped.
    Value tile = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get({block, n}, elt), x, offsets, sizes,
        strides);
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
    Value p =
        mappedGeneric(b, loc, {block, n}, elt, ValueRange{e, s}, {id, row},
                      [](OpBuilder &nb, Location nl, ValueRange v) -> Value {
                        return arith::DivFOp::create(nb, nl, v[0], v[1]);
                      });
    b.setInsertionPointToEnd(&forall.getTerminator().getRegion().front());
    tensor::ParallelInsertSliceOp::create(
        b, loc, p, forall.getRegionOutArgs().front(), offsets, sizes, strides);
  }
  return forall.getResult(0);
}
