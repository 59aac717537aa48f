//===- HoistRequantization.cpp - quantize before max pooling and concat --===//
//
// Static int8 quantizes a layer's input as an elementwise generic in front
// of the product (the roundeven marked kiln.requant). When that input is a
// max pooling or a concatenation of f32 values, the quantization can move
// above them:
//
//   q(concat(x0, x1, ...)) = concat(q(x0), q(x1), ...)
//
// for any elementwise q, and
//
//   q(maxpool(x)) = maxpool_unsigned(q(x))
//
// when q is non-decreasing and its results are in [0, 255] (the uint8 bytes
// then compare as unsigned numbers): the largest value of a window
// quantizes to the largest byte. A -inf padding, which max pooling never
// picks over a value of its window, becomes 0, which unsigned max pooling
// never picks over a byte of its window.
//
// The quantization then sits right after the ops that made x (an
// epilogue, or the f32 stem convolution's), and --kiln-fuse-elementwise
// puts it in their loops: the tensor between them is written as bytes
// instead of floats, and the pooling reads a quarter of the bytes and
// compares 64 values per instruction instead of 16. Both rewrites give the
// same bytes as before, except where an input is NaN: the pooled f32 NaN
// quantized to the lowest byte, and now the window's other values decide.
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/Common/ChannelInvariance.h"
#include "kiln/Codegen/Common/Passes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/RegionUtils.h"

#include <cmath>
#include <limits>

namespace mlir::kiln {
#define GEN_PASS_DEF_HOISTREQUANTIZATIONPASS
#include "kiln/Codegen/Common/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using mlir::kiln::floatConstant;

namespace {
/// Whether `g` is a static int8 quantization that can move: one f32 input
/// and one i8 result over the same shape, read and written through identity
/// maps, every loop parallel, a body that does not look at the indices and
/// holds a roundeven marked kRequantAttr.
bool isMovableQuantization(linalg::GenericOp g) {
  if (g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      !g.hasPureTensorSemantics() ||
      g.getNumParallelLoops() != g.getNumLoops() ||
      !llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }) ||
      g.payloadUsesValueFromOperand(g.getDpsInitOperand(0)))
    return false;
  auto in = dyn_cast<RankedTensorType>(g.getDpsInputs()[0].getType());
  auto out = dyn_cast<RankedTensorType>(g.getResult(0).getType());
  if (!in || !out || !in.getElementType().isF32() ||
      !out.getElementType().isInteger(8))
    return false;
  bool marked = false;
  for (Operation &op : g.getRegion().front()) {
    if (isa<linalg::IndexOp>(op))
      return false;
    if (isa<math::RoundEvenOp>(op) && op.hasAttr(kiln::kRequantAttr))
      marked = true;
  }
  return marked;
}

/// Whether the body of `g` is a chain of non-decreasing steps from its
/// input to its result, with every value that reaches the conversion to an
/// integer in [0, 255]: each step a multiplication by a positive constant,
/// an addition or subtraction of a constant, a fused multiply-add with a
/// positive constant factor, a clamp against a constant, or a rounding;
/// then fptosi and a truncation to i8. Tracks the interval of the chain's
/// value from (-inf, inf).
bool isNonDecreasingToBytes(linalg::GenericOp g) {
  Block &body = g.getRegion().front();
  Value x = body.getArgument(0);
  double lo = -INFINITY, hi = INFINITY;
  bool converted = false;
  for (Operation &op : body.without_terminator()) {
    if (op.getNumResults() != 1)
      return false;
    // The other operands are constants; `x` is one operand.
    SmallVector<double> consts;
    bool usesX = false;
    for (Value v : op.getOperands()) {
      if (v == x) {
        usesX = true;
        continue;
      }
      std::optional<double> c = floatConstant(v);
      if (!c)
        return false;
      consts.push_back(*c);
    }
    if (op.hasTrait<OpTrait::ConstantLike>())
      continue;
    if (!usesX || op.getNumOperands() != consts.size() + 1)
      return false;
    if (converted) {
      // Past the conversion only the truncation to bytes.
      auto trunc = dyn_cast<arith::TruncIOp>(op);
      if (!trunc || !trunc.getType().isInteger(8))
        return false;
    } else if (isa<arith::MulFOp>(op)) {
      if (!(consts[0] > 0))
        return false;
      lo *= consts[0];
      hi *= consts[0];
    } else if (isa<arith::AddFOp>(op)) {
      lo += consts[0];
      hi += consts[0];
    } else if (auto sub = dyn_cast<arith::SubFOp>(op)) {
      if (sub.getLhs() != x)
        return false; // c - x decreases
      lo -= consts[0];
      hi -= consts[0];
    } else if (auto fma = dyn_cast<math::FmaOp>(op)) {
      if (fma.getC() == x || !(consts[0] > 0))
        return false; // x * a + b with a > 0
      lo = lo * consts[0] + consts[1];
      hi = hi * consts[0] + consts[1];
    } else if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op)) {
      lo = std::max(lo, consts[0]);
      hi = std::max(hi, consts[0]);
    } else if (isa<arith::MinimumFOp, arith::MinNumFOp>(op)) {
      lo = std::min(lo, consts[0]);
      hi = std::min(hi, consts[0]);
    } else if (isa<math::RoundEvenOp>(op)) {
      lo = std::nearbyint(lo);
      hi = std::nearbyint(hi);
    } else if (isa<arith::FPToSIOp>(op)) {
      if (!(lo >= 0 && hi <= 255))
        return false;
      converted = true;
    } else {
      return false;
    }
    x = op.getResult(0);
  }
  return converted && body.getTerminator()->getOperand(0) == x &&
         isa<arith::TruncIOp>(x.getDefiningOp());
}

/// `g` (a movable quantization) applied to `x`, an f32 tensor of any shape.
Value quantized(OpBuilder &b, linalg::GenericOp g, Value x) {
  Location loc = g.getLoc();
  auto t = cast<RankedTensorType>(x.getType());
  Value init = tensor::EmptyOp::create(b, loc, t.getShape(),
                                       b.getIntegerType(8));
  AffineMap id = b.getMultiDimIdentityMap(t.getRank());
  SmallVector<utils::IteratorType> loops(t.getRank(),
                                         utils::IteratorType::parallel);
  auto q = linalg::GenericOp::create(b, loc, init.getType(), ValueRange{x},
                                     ValueRange{init},
                                     ArrayRef<AffineMap>{id, id}, loops);
  IRMapping map;
  g.getRegion().cloneInto(&q.getRegion(), map);
  return q.getResult(0);
}

/// The pieces of a concatenation as its lowering builds it, a chain over one
/// empty tensor E: D0 = E; Di = insert_slice(copy(xi into extract_slice(Di-1
/// at the slice's box)), Di-1 at the same box). The inserts, first first.
std::optional<SmallVector<tensor::InsertSliceOp>> concatPieces(Value v) {
  SmallVector<tensor::InsertSliceOp> pieces;
  while (!v.getDefiningOp<tensor::EmptyOp>()) {
    auto insert = v.getDefiningOp<tensor::InsertSliceOp>();
    if (!insert)
      return std::nullopt;
    auto copy = insert.getSource().getDefiningOp<linalg::CopyOp>();
    auto slice = copy ? copy.getOutputs()[0].getDefiningOp<tensor::ExtractSliceOp>()
                      : tensor::ExtractSliceOp();
    if (!slice || slice.getSource() != insert.getDest() ||
        slice.getMixedOffsets() != insert.getMixedOffsets() ||
        slice.getMixedSizes() != insert.getMixedSizes() ||
        !slice.hasUnitStride() || !insert.hasUnitStride())
      return std::nullopt;
    pieces.push_back(insert);
    v = insert.getDest();
  }
  if (pieces.size() < 2)
    return std::nullopt;
  std::reverse(pieces.begin(), pieces.end());
  return pieces;
}

/// A chain like concatPieces' over a new i8 empty tensor (or `dest`), with
/// `parts[i]` at the box of `pieces[i]`.
Value concatOf(OpBuilder &b, Location loc, ArrayRef<tensor::InsertSliceOp> pieces,
               ArrayRef<Value> parts, Value dest) {
  for (auto [box, part] : llvm::zip(pieces, parts)) {
    tensor::InsertSliceOp insert = box;
    Value slice = tensor::ExtractSliceOp::create(
        b, loc, cast<RankedTensorType>(part.getType()), dest,
        insert.getMixedOffsets(), insert.getMixedSizes(),
        insert.getMixedStrides());
    Value copied = linalg::CopyOp::create(b, loc, part, slice).getResult(0);
    dest = tensor::InsertSliceOp::create(b, loc, copied, dest,
                                         insert.getMixedOffsets(),
                                         insert.getMixedSizes(),
                                         insert.getMixedStrides());
  }
  return dest;
}

/// Whether `v` is a fill with -inf or the lowest float: no value of a max
/// pooling's window is below it.
bool isLowestFill(Value v) {
  auto fill = v.getDefiningOp<linalg::FillOp>();
  std::optional<double> c = fill ? floatConstant(fill.getInputs()[0]) : std::nullopt;
  return c && (*c == -INFINITY || *c <= -std::numeric_limits<float>::max());
}

/// Erases `op` if nothing uses it and it has no effects, then, the same way,
/// the ops that made its operands. Quantizations are left to later cleanup:
/// the pass's worklist may still hold them.
void eraseDead(Operation *op) {
  SetVector<Operation *> work;
  work.insert(op);
  while (!work.empty()) {
    Operation *next = work.pop_back_val();
    auto generic = dyn_cast<linalg::GenericOp>(next);
    if (!isOpTriviallyDead(next) ||
        (generic && isMovableQuantization(generic)))
      continue;
    for (Value v : next->getOperands())
      if (Operation *def = v.getDefiningOp())
        work.insert(def);
    next->erase();
  }
}

/// Replaces `g` with `v` and erases what only `g` read.
void replace(linalg::GenericOp g, Value v) {
  Operation *input = g.getDpsInputs()[0].getDefiningOp();
  g.getResult(0).replaceAllUsesWith(v);
  g.erase();
  if (input)
    eraseDead(input);
}

/// Moves `g` above the concatenation or max pooling that makes its input;
/// returns the quantizations that replaced it (to move further), or
/// nothing.
std::optional<SmallVector<linalg::GenericOp>> hoist(linalg::GenericOp g) {
  Value in = g.getDpsInputs()[0];
  // The lowering quantizes rows [pixels, C]: look through reshapes, and
  // reshape the bytes the same way at the end.
  SmallVector<Operation *> reshapes;
  while (in.hasOneUse() &&
         isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
             in.getDefiningOp())) {
    reshapes.push_back(in.getDefiningOp());
    in = in.getDefiningOp()->getOperand(0);
  }
  if (!in.hasOneUse())
    return std::nullopt;
  OpBuilder b(g);
  Location loc = g.getLoc();
  // `v`, bytes at `in`'s shape, reshaped back to `g`'s.
  auto reshapedBack = [&](Value v) {
    for (Operation *op : llvm::reverse(reshapes)) {
      if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
        v = tensor::CollapseShapeOp::create(
            b, loc, v, collapse.getReassociationIndices());
      } else {
        auto expand = cast<tensor::ExpandShapeOp>(op);
        v = tensor::ExpandShapeOp::create(
            b, loc,
            RankedTensorType::get(expand.getResultType().getShape(),
                                  b.getIntegerType(8)),
            v, expand.getReassociationIndices(),
            expand.getMixedOutputShape());
      }
    }
    return v;
  };
  auto byteType = [&](Value v) {
    return RankedTensorType::get(cast<RankedTensorType>(v.getType()).getShape(),
                                 b.getIntegerType(8));
  };
  SmallVector<linalg::GenericOp> moved;
  auto quantize = [&](Value x) {
    Value q = quantized(b, g, x);
    moved.push_back(q.getDefiningOp<linalg::GenericOp>());
    return q;
  };

  if (std::optional<SmallVector<tensor::InsertSliceOp>> pieces =
          concatPieces(in)) {
    SmallVector<Value> parts;
    for (tensor::InsertSliceOp insert : *pieces)
      parts.push_back(quantize(
          insert.getSource().getDefiningOp<linalg::CopyOp>().getInputs()[0]));
    Value dest = tensor::EmptyOp::create(b, loc, byteType(in).getShape(),
                                         b.getIntegerType(8));
    replace(g, reshapedBack(concatOf(b, loc, *pieces, parts, dest)));
    return moved;
  }

  auto pool = in.getDefiningOp<linalg::PoolingNhwcMaxOp>();
  if (!pool || !isNonDecreasingToBytes(g) ||
      !isLowestFill(pool.getOutputs()[0]))
    return std::nullopt;
  Value x = pool.getInputs()[0];
  Value xq;
  // A padded input (the pad lowering's fill, slice, copy and insert):
  // quantize the interior and pad the bytes with 0.
  auto padInsert = x.getDefiningOp<tensor::InsertSliceOp>();
  auto padCopy = padInsert
                     ? padInsert.getSource().getDefiningOp<linalg::CopyOp>()
                     : linalg::CopyOp();
  if (padCopy && isLowestFill(padInsert.getDest())) {
    Value zero = arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0));
    Value filled =
        linalg::FillOp::create(
            b, loc, zero,
            tensor::EmptyOp::create(b, loc, byteType(x).getShape(),
                                    b.getIntegerType(8)).getResult())
            .getResult(0);
    xq = concatOf(b, loc, {padInsert}, {quantize(padCopy.getInputs()[0])},
                  filled);
  } else {
    xq = quantize(x);
  }
  Value zero = arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0));
  Value init =
      linalg::FillOp::create(b, loc, zero,
                             tensor::EmptyOp::create(
                                 b, loc, byteType(pool.getResult(0)).getShape(),
                                 b.getIntegerType(8))
                                 .getResult())
          .getResult(0);
  auto pooled = linalg::PoolingNhwcMaxUnsignedOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{xq, pool.getInputs()[1]},
      ValueRange{init}, pool.getStrides(), pool.getDilations());
  replace(g, reshapedBack(pooled.getResult(0)));
  return moved;
}

struct HoistRequantizationPass
    : mlir::kiln::impl::HoistRequantizationPassBase<HoistRequantizationPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> work;
    getOperation().walk([&](linalg::GenericOp g) {
      if (isMovableQuantization(g))
        work.push_back(g);
    });
    while (!work.empty()) {
      linalg::GenericOp g = work.pop_back_val();
      if (std::optional<SmallVector<linalg::GenericOp>> moved = hoist(g))
        work.append(moved->begin(), moved->end());
    }
  }
};
} // namespace
