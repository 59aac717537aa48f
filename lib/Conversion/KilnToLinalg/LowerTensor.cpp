//===- LowerTensor.cpp - data movement and reductions to linalg -*- C++ -*-===//
#include "Lowering.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"

#include <limits>

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// The most parts one concatenation writes into its destination. Bufferizing
/// a chain of n inserts into one tensor costs about n^3.4 (one-shot analysis
/// and empty-tensor elimination: 25 parts 0.16 s, 50 parts 1.6 s, 100 parts
/// 18 s), so more parts are concatenated in groups of this many first: one
/// more copy of the data per level, and compile time linear in the parts.
constexpr size_t kMaxConcatParts = 16;

Value concatValues(OpBuilder &b, Location loc, ValueRange inputs, int64_t axis,
                   RankedTensorType type) {
  if (inputs.size() > kMaxConcatParts) {
    SmallVector<Value> groups;
    for (size_t i = 0; i < inputs.size(); i += kMaxConcatParts) {
      ValueRange group = inputs.slice(
          i, std::min(kMaxConcatParts, inputs.size() - i));
      SmallVector<int64_t> shape(type.getShape());
      shape[axis] = 0;
      for (Value v : group)
        if (!ShapedType::isDynamic(shape[axis]))
          shape[axis] = typeOf(v).isDynamicDim(axis)
                            ? ShapedType::kDynamic
                            : shape[axis] + typeOf(v).getDimSize(axis);
      groups.push_back(concatValues(
          b, loc, group, axis,
          RankedTensorType::get(shape, type.getElementType())));
    }
    return concatValues(b, loc, groups, axis, type);
  }
  // Symbolic sizes (docs/shapes.md): a dimension beside the axis is any
  // input's that has it dynamic (they agree), the axis is their sum, and
  // each part's offset the sum of the sizes before it.
  auto sizeOf = [&](Value v, int64_t d) -> OpFoldResult {
    if (!typeOf(v).isDynamicDim(d))
      return b.getIndexAttr(typeOf(v).getDimSize(d));
    return tensor::DimOp::create(b, loc, v, d).getResult();
  };
  auto add = [&](OpFoldResult x, OpFoldResult y) -> OpFoldResult {
    std::optional<int64_t> cx = getConstantIntValue(x),
                           cy = getConstantIntValue(y);
    if (cx && cy)
      return b.getIndexAttr(*cx + *cy);
    if (cx == 0)
      return y;
    if (cy == 0)
      return x;
    return arith::AddIOp::create(b, loc,
                                 getValueOrCreateConstantIndexOp(b, loc, x),
                                 getValueOrCreateConstantIndexOp(b, loc, y))
        .getResult();
  };
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d))
      continue;
    if (d == axis) {
      OpFoldResult total = b.getIndexAttr(0);
      for (Value in : inputs)
        total = add(total, sizeOf(in, d));
      dyn.push_back(getValueOrCreateConstantIndexOp(b, loc, total));
      continue;
    }
    Value from = inputs.front();
    for (Value in : inputs)
      if (typeOf(in).isDynamicDim(d)) {
        from = in;
        break;
      }
    dyn.push_back(
        getValueOrCreateConstantIndexOp(b, loc, sizeOf(from, d)));
  }
  Value dest =
      emptyTensor(b, loc, type.getShape(), type.getElementType(), dyn);
  OpFoldResult offset = b.getIndexAttr(0);
  for (Value in : inputs) {
    RankedTensorType t = typeOf(in);
    if (llvm::is_contained(t.getShape(), 0))
      continue; // nothing to copy, and its offset may be the end
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)),
        sizes, strides(type.getRank(), b.getIndexAttr(1));
    for (int64_t d = 0; d < t.getRank(); ++d)
      sizes.push_back(sizeOf(in, d));
    offsets[axis] = offset;
    offset = add(offset, sizes[axis]);
    // An explicit copy into the slice: after bufferization it writes straight
    // into the destination, as a loop nest the code generator vectorizes.
    Value slice = tensor::ExtractSliceOp::create(b, loc, t, dest, offsets,
                                                 sizes, strides);
    Value copied = linalg::CopyOp::create(b, loc, in, slice).getResult(0);
    dest = tensor::InsertSliceOp::create(b, loc, copied, dest, offsets, sizes,
                                         strides);
  }
  return dest;
}

/// Each output element reads input element (i floordiv scale) per
/// dimension: one generic whose input map divides, tiled like an
/// elementwise op (its innermost dimension, unscaled in NHWC, stays a
/// contiguous vector). A symbolic size is the input's times its scale.
Value lowerUpsampleNearest(OpBuilder &b, UpsampleNearestOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = op.getType();
  ArrayRef<int64_t> scales = op.getScales();
  int64_t rank = type.getRank();
  SmallVector<AffineExpr> exprs;
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < rank; ++d) {
    AffineExpr e = b.getAffineDimExpr(d);
    exprs.push_back(scales[d] == 1 ? e : e.floorDiv(scales[d]));
    if (type.isDynamicDim(d)) {
      Value size = tensor::DimOp::create(b, loc, op.getInput(), d);
      if (scales[d] != 1)
        size = arith::MulIOp::create(
            b, loc, size, arith::ConstantIndexOp::create(b, loc, scales[d]));
      dyn.push_back(size);
    }
  }
  AffineMap in = AffineMap::get(rank, 0, exprs, b.getContext());
  return mappedGeneric(b, loc, type.getShape(), type.getElementType(),
                       ValueRange{op.getInput()}, {in},
                       [](OpBuilder &, Location, ValueRange v) -> Value {
                         return v[0];
                       },
                       dyn);
}

Value lowerConcat(OpBuilder &b, ConcatOp op) {
  return concatValues(b, op.getLoc(), op.getInputs(), op.getAxis(),
                      op.getType());
}

/// Result element (i..., j..., k...) is input[i..., clamp(wrap(indices[j...])),
/// k...]: a generic over the result that reads the indices and extracts from
/// the input. Wrapping and clamping keep every read inside the input.
/// Constant indices (a Resize's source positions) are read inside the body,
/// at the loop indices, rather than as an operand: a tile that spans only
/// dimensions after the axis then reads one index, which linalg's vectorizer
/// sees as invariant, and the input as contiguous vectors.
Value lowerGather(OpBuilder &b, GatherOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = op.getType();
  Value input = op.getInput();
  int64_t axis = op.getAxis(), rank = type.getRank(),
          idxRank = op.getIndices().getType().getRank(),
          n = op.getInput().getType().getDimSize(axis);
  SmallVector<AffineExpr> idxExprs;
  for (int64_t i = 0; i < idxRank; ++i)
    idxExprs.push_back(b.getAffineDimExpr(axis + i));
  AffineMap idxMap = AffineMap::get(rank, 0, idxExprs, b.getContext());
  // Symbolic sizes: the data's before and after the axis, the indices' at it.
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < rank; ++d) {
    if (!type.isDynamicDim(d))
      continue;
    bool fromIndices = d >= axis && d < axis + idxRank;
    dyn.push_back(tensor::DimOp::create(
        b, loc, fromIndices ? op.getIndices() : input,
        fromIndices ? d - axis : (d < axis ? d : d - idxRank + 1)));
  }
  // A symbolic axis wraps negative indices and clamps by its run-time size.
  Value runN = ShapedType::isDynamic(n)
                   ? tensor::DimOp::create(b, loc, input, axis).getResult()
                   : Value();
  // Constant indices, and any indices into data of run-time size, are read
  // in the body rather than passed as an operand: a computed table (a
  // Resize's over run-time lengths) is then not fused into the gather, and
  // the vectorizer sees each row index invariant over a channel vector.
  Value indices = op.getIndices();
  bool captured = matchPattern(indices, m_Constant()) ||
                  !op.getInput().getType().hasStaticShape();
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  if (!captured) {
    operands.push_back(indices);
    maps.push_back(idxMap);
  }
  return mappedGeneric(
      b, loc, type.getShape(), type.getElementType(), operands, maps,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value raw = a[0];
        if (captured) {
          SmallVector<Value> at;
          for (int64_t i = 0; i < idxRank; ++i)
            at.push_back(linalg::IndexOp::create(nb, nl, axis + i));
          raw = tensor::ExtractOp::create(nb, nl, indices, at);
        }
        Value i = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), raw);
        i = runN ? clampIndex(nb, nl, i, runN) : clampIndex(nb, nl, i, n);
        SmallVector<Value> at;
        for (int64_t d = 0; d < axis; ++d)
          at.push_back(linalg::IndexOp::create(nb, nl, d));
        at.push_back(i);
        for (int64_t d = axis + idxRank; d < rank; ++d)
          at.push_back(linalg::IndexOp::create(nb, nl, d));
        return tensor::ExtractOp::create(nb, nl, input, at);
      },
      dyn);
}

Value lowerSlice(OpBuilder &b, SliceOp op) {
  auto attrs = [&](ArrayRef<int64_t> v) {
    return llvm::map_to_vector(
        v, [&](int64_t x) -> OpFoldResult { return b.getIndexAttr(x); });
  };
  return tensor::ExtractSliceOp::create(
      b, op.getLoc(), op.getType(), op.getInput(), attrs(op.getOffsets()),
      attrs(op.getSizes()), attrs(op.getStrides()));
}

constexpr int64_t kBlocks = 8, kLanes = 64;

/// Every element of an `input` whose dimensions outside `axes` are all 1:
/// `flat` ([n]) and its first `main` elements as `blocks` ([kBlocks, rows,
/// kLanes], rows >= 2). With symbolic sizes (docs/shapes.md) n, main and
/// rows are counted at run time (nRun, mainRun; n and main are dynamic) and
/// rows may be 0 or 1. None when not such an input.
struct BlockedElements {
  Value flat, blocks;
  int64_t n, main;
  Value nRun, mainRun;
};

Value sliceOf(OpBuilder &b, Location loc, Value flat, OpFoldResult offset,
              OpFoldResult size) {
  return tensor::ExtractSliceOp::create(
      b, loc, flat, ArrayRef<OpFoldResult>{offset},
      ArrayRef<OpFoldResult>{size}, ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
}

Value sliceOf(OpBuilder &b, Location loc, Value flat, int64_t offset,
              int64_t size) {
  return sliceOf(b, loc, flat, b.getIndexAttr(offset), b.getIndexAttr(size));
}

/// The elements of `v` after its blocks.
Value elementsAfterBlocks(OpBuilder &b, Location loc,
                          const BlockedElements &v) {
  if (!v.nRun)
    return sliceOf(b, loc, v.flat, v.main, v.n - v.main);
  return sliceOf(b, loc, v.flat, v.mainRun,
                 arith::SubIOp::create(b, loc, v.nRun, v.mainRun).getResult());
}

/// blockedElements of an input with symbolic sizes: the blocks' rows are
/// n floordiv (kBlocks kLanes) at run time, the rest (under kBlocks kLanes
/// elements) after them.
BlockedElements runTimeBlocks(OpBuilder &b, Location loc, Value input) {
  Value n = sizeProduct(b, loc, input, 0, typeOf(input).getRank());
  Value flat = reshaped(b, loc, input, {ShapedType::kDynamic}, n);
  Value block = arith::ConstantIndexOp::create(b, loc, kBlocks * kLanes);
  Value rows = arith::DivUIOp::create(b, loc, n, block);
  Value main = arith::MulIOp::create(b, loc, rows, block);
  Value blocks =
      reshaped(b, loc, sliceOf(b, loc, flat, b.getIndexAttr(0), main),
               {kBlocks, ShapedType::kDynamic, kLanes}, rows);
  return BlockedElements{
      flat, blocks, ShapedType::kDynamic, ShapedType::kDynamic, n, main};
}

std::optional<BlockedElements> blockedElements(OpBuilder &b, Location loc,
                                               Value input,
                                               ArrayRef<int64_t> axes) {
  RankedTensorType type = typeOf(input);
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.getDimSize(d) != 1 && !llvm::is_contained(axes, d))
      return std::nullopt;
  if (!type.hasStaticShape())
    return runTimeBlocks(b, loc, input);
  int64_t n = type.getNumElements(), rows = n / (kBlocks * kLanes);
  int64_t main = rows * kBlocks * kLanes;
  if (rows < 2)
    return std::nullopt;
  Value flat = reshaped(b, loc, input, {n});
  Value blocks =
      reshaped(b, loc, main == n ? flat : sliceOf(b, loc, flat, 0, main),
               {kBlocks, rows, kLanes});
  return BlockedElements{flat, blocks, n, main};
}

/// A reduction of every element of a static `input` (its other dimensions
/// all 1) to a 0-d tensor, in stages that vectorize: a [kBlocks, rows,
/// kLanes] view reduced over its rows into kBlocks x kLanes partial results
/// (each lane a chain of its own, as wide vectors; the blocks are parallel
/// work), those reduced to one value, then the elements left over after the
/// blocks. Reduced in one scalar chain instead, DynamicQuantizeLinear's
/// minimum and maximum took half of a quantized MobileNetV2's time. Null
/// when the input is too small or not such a reduction.
Value reducedInBlocks(
    OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes,
    double init,
    const std::function<Value(OpBuilder &, Location, Value, Value)> &combine) {
  std::optional<BlockedElements> v = blockedElements(b, loc, input, axes);
  if (!v)
    return {};
  Type elt = typeOf(input).getElementType();
  Value blocks = v->blocks;
  int64_t n = v->n, main = v->main;
  auto combined = [&](Value in, Value acc, ArrayRef<AffineMap> maps,
                      ArrayRef<utils::IteratorType> iters) {
    return linalg::GenericOp::create(
               b, loc, acc.getType(), in, acc, maps, iters,
               [&](OpBuilder &nb, Location nl, ValueRange a) {
                 linalg::YieldOp::create(nb, nl, combine(nb, nl, a[1], a[0]));
               })
        .getResult(0);
  };
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  auto par = utils::IteratorType::parallel,
       red = utils::IteratorType::reduction;
  MLIRContext *ctx = b.getContext();
  Value partial = combined(
      blocks, filledTensor(b, loc, {kBlocks, kLanes}, elt, init),
      {b.getMultiDimIdentityMap(3), AffineMap::get(3, 0, {d(0), d(2)}, ctx)},
      {par, red, par});
  Value acc = combined(partial, filledTensor(b, loc, {}, elt, init),
                       {b.getMultiDimIdentityMap(2), AffineMap::get(2, 0, ctx)},
                       {red, red});
  if (v->nRun || main != n)
    acc = combined(elementsAfterBlocks(b, loc, *v), acc,
                   {b.getMultiDimIdentityMap(1), AffineMap::get(1, 0, ctx)},
                   {red});
  return acc;
}

/// The minimum and the maximum of every element of a float `input` (as
/// reducedInBlocks allows) in one pass over it, as 0-d tensors: the maxima
/// of x and of -x, each lane keeping both ([kBlocks, 2, kLanes] partial
/// results), and min = -max(-x), which is exact (NaNs propagate, -0 < +0 as
/// for minimumf). DynamicQuantizeLinear reads each activation for both, and
/// two reductions read it twice. Null when not such a reduction.
std::optional<std::pair<Value, Value>> minMaxInBlocks(OpBuilder &b,
                                                      Location loc, Value input,
                                                      ArrayRef<int64_t> axes) {
  Type elt = typeOf(input).getElementType();
  if (!isa<FloatType>(elt))
    return std::nullopt;
  std::optional<BlockedElements> v = blockedElements(b, loc, input, axes);
  if (!v)
    return std::nullopt;
  Value blocks = v->blocks;
  int64_t n = v->n, main = v->main;
  double inf = std::numeric_limits<double>::infinity();
  MLIRContext *ctx = b.getContext();
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  auto par = utils::IteratorType::parallel,
       red = utils::IteratorType::reduction;
  // acc = max(acc, side == 0 ? x : -x), `side` the loop dimension `sideDim`.
  auto reduce = [&](Value in, Value acc, ArrayRef<AffineMap> maps,
                    ArrayRef<utils::IteratorType> iters,
                    std::optional<unsigned> sideDim) {
    return linalg::GenericOp::create(
               b, loc, acc.getType(), in, acc, maps, iters,
               [&](OpBuilder &nb, Location nl, ValueRange a) {
                 Value x = a[0];
                 if (sideDim) {
                   Value side = linalg::IndexOp::create(nb, nl, *sideDim);
                   Value second = arith::CmpIOp::create(
                       nb, nl, arith::CmpIPredicate::ne, side,
                       arith::ConstantIndexOp::create(nb, nl, 0));
                   x = arith::SelectOp::create(
                       nb, nl, second, arith::NegFOp::create(nb, nl, x), x);
                 }
                 linalg::YieldOp::create(
                     nb, nl,
                     arith::MaximumFOp::create(nb, nl, a[1], x).getResult());
               })
        .getResult(0);
  };
  // Marked for the CPU tiling, which may take the partials from the tiles of
  // the loop that makes `input` instead (kMinMaxPartialsAttr).
  auto marked = [&](Value v, const char *attr) {
    v.getDefiningOp()->setAttr(attr, b.getUnitAttr());
    return v;
  };
  // (block, row, side, lane) over [kBlocks, rows, kLanes].
  Value partial = marked(
      reduce(blocks, filledTensor(b, loc, {kBlocks, 2, kLanes}, elt, -inf),
             {AffineMap::get(4, 0, {d(0), d(1), d(3)}, ctx),
              AffineMap::get(4, 0, {d(0), d(2), d(3)}, ctx)},
             {par, red, par, par}, 2),
      kMinMaxPartialsAttr);
  Value acc = marked(
      reduce(partial, filledTensor(b, loc, {2}, elt, -inf),
             {b.getMultiDimIdentityMap(3), AffineMap::get(3, 0, {d(1)}, ctx)},
             {red, par, red}, std::nullopt),
      kMinMaxCombineAttr);
  if (v->nRun || main != n)
    acc = marked(reduce(elementsAfterBlocks(b, loc, *v), acc,
                        {AffineMap::get(2, 0, {d(1)}, ctx),
                         AffineMap::get(2, 0, {d(0)}, ctx)},
                        {par, red}, 0),
                 kMinMaxRestAttr);
  auto element = [&](int64_t i) {
    Value one = tensor::ExtractSliceOp::create(
        b, loc, acc, ArrayRef<OpFoldResult>{b.getIndexAttr(i)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    return reshaped(b, loc, one, {});
  };
  Value hi = element(0);
  Value lo =
      broadcastGeneric(b, loc, {}, elt, element(1),
                       [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                         return arith::NegFOp::create(nb, nl, a[0]);
                       });
  return std::make_pair(lo, hi);
}

/// `sum` (the sums of `input` over `axes`) divided by the number of
/// elements summed, counted at run time where a reduced axis is symbolic.
Value dividedByCount(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> axes, Value sum) {
  RankedTensorType inType = typeOf(input);
  int64_t count = 1;
  Value runCount; // the count where a reduced dimension is symbolic
  for (int64_t a : axes) {
    if (!inType.isDynamicDim(a)) {
      count *= inType.getDimSize(a);
      continue;
    }
    Value d = tensor::DimOp::create(b, loc, input, a);
    runCount = runCount ? arith::MulIOp::create(b, loc, runCount, d) : d;
  }
  Type elt = inType.getElementType();
  if (runCount) {
    runCount = arith::IndexCastOp::create(b, loc, b.getI64Type(), runCount);
    runCount = arith::SIToFPOp::create(b, loc, elt, runCount);
    if (count != 1)
      runCount = arith::MulFOp::create(b, loc, runCount,
                                       floatConst(b, loc, elt, count));
  }
  RankedTensorType rt = typeOf(sum);
  return broadcastGeneric(
      b, loc, rt.getShape(), elt, sum,
      [count, runCount](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value c = runCount ? runCount
                           : floatConst(nb, nl, a[0].getType(), (double)count);
        return arith::DivFOp::create(nb, nl, a[0], c);
      },
      dynamicDims(b, loc, sum));
}

template <typename OpTy>
Value lowerReduce(OpBuilder &b, OpTy op, double init,
                  const std::function<Value(OpBuilder &, Location, Value,
                                            Value)> &combine,
                  bool mean) {
  Location loc = op.getLoc();
  Value input = op.getInput();
  ArrayRef<int64_t> axes = op.getAxes();
  Value r = reducedInBlocks(b, loc, input, axes, init, combine);
  if (!r)
    r = reduced(b, loc, input, axes, init, combine);
  if (mean)
    r = dividedByCount(b, loc, input, axes, r);
  return reshaped(b, loc, r, op.getType().getShape(), dynamicDims(b, loc, r));
}

/// ArgMax/ArgMin: one reduction over the axis carrying the extreme value and
/// its index; a strictly better element replaces them (the first extreme
/// wins), or an equal one too with select_last_index.
template <typename OpTy>
Value lowerArgReduce(OpBuilder &b, OpTy op, bool isMax) {
  Location loc = op.getLoc();
  Value input = op.getInput();
  RankedTensorType type = typeOf(input);
  int64_t axis = op.getAxis(), rank = type.getRank();
  SmallVector<int64_t> outShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iters;
  for (int64_t d = 0; d < rank; ++d) {
    iters.push_back(d == axis ? utils::IteratorType::reduction
                              : utils::IteratorType::parallel);
    if (d != axis) {
      outShape.push_back(type.getDimSize(d));
      outExprs.push_back(b.getAffineDimExpr(d));
    }
  }
  // Symbolic sizes of the kept dimensions size the results at run time.
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && type.isDynamicDim(d))
      dyn.push_back(tensor::DimOp::create(b, loc, input, d));
  Type elt = type.getElementType(), i64 = b.getI64Type();
  double inf = std::numeric_limits<double>::infinity();
  Value values = filledTensor(b, loc, outShape, elt, isMax ? -inf : inf, dyn);
  Value zero = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
  Value indices = linalg::FillOp::create(
                      b, loc, zero, emptyTensor(b, loc, outShape, i64, dyn))
                      .getResult(0);
  AffineMap outMap = AffineMap::get(rank, 0, outExprs, b.getContext());
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank), outMap,
                                 outMap};
  arith::CmpFPredicate pred =
      isMax ? (op.getSelectLastIndex() ? arith::CmpFPredicate::OGE
                                       : arith::CmpFPredicate::OGT)
            : (op.getSelectLastIndex() ? arith::CmpFPredicate::OLE
                                       : arith::CmpFPredicate::OLT);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{values.getType(), indices.getType()}, input,
      ValueRange{values, indices}, maps, iters,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value idx = linalg::IndexOp::create(nb, nl, axis);
        idx = arith::IndexCastOp::create(nb, nl, i64, idx);
        Value take = arith::CmpFOp::create(nb, nl, pred, args[0], args[1]);
        Value v = arith::SelectOp::create(nb, nl, take, args[0], args[1]);
        Value i = arith::SelectOp::create(nb, nl, take, idx, args[2]);
        linalg::YieldOp::create(nb, nl, ValueRange{v, i});
      });
  // keepdims adds a static 1: the dynamic sizes stay the same, in order.
  return reshaped(b, loc, generic.getResult(1), op.getType().getShape(), dyn);
}

/// The run-time sizes of a reshape's symbolic result dimensions: one is what
/// the element count leaves after the static ones; several keep the input's
/// in order where the reshape only removes or adds 1s (unitDimsReshape), and
/// otherwise must each sit where the input has a symbolic dimension, whose
/// size they keep.
FailureOr<SmallVector<Value>> reshapeDims(OpBuilder &b, ReshapeOp op) {
  RankedTensorType in = op.getInput().getType(), out = op.getType();
  Location loc = op.getLoc();
  SmallVector<Value> dyn;
  int64_t numDyn = llvm::count_if(out.getShape(), ShapedType::isDynamic);
  if (numDyn == 0)
    return dyn;
  if (numDyn == 1) {
    Value count = sizeProduct(b, loc, op.getInput(), 0, in.getRank());
    int64_t known = 1;
    for (int64_t n : out.getShape())
      if (!ShapedType::isDynamic(n))
        known *= n;
    if (known == 0)
      return op.emitError() << "cannot size the symbolic dimension of " << out
                            << ": the other dimensions hold no elements";
    dyn.push_back(arith::DivUIOp::create(
        b, loc, count, arith::ConstantIndexOp::create(b, loc, known)));
    return dyn;
  }
  std::optional<SmallVector<int64_t>> sources = unitDimsReshape(in, out);
  for (int64_t d = 0; d < out.getRank(); ++d) {
    if (!out.isDynamicDim(d))
      continue;
    if (sources) {
      dyn.push_back(
          tensor::DimOp::create(b, loc, op.getInput(), (*sources)[d]));
      continue;
    }
    if (d >= in.getRank() || !in.isDynamicDim(d))
      return op.emitError() << "cannot size the symbolic dimensions of " << out
                            << " from " << in
                            << "; give the symbolic dimensions one size";
    dyn.push_back(tensor::DimOp::create(b, loc, op.getInput(), d));
  }
  return dyn;
}

// Combining steps of the reductions; integers (signless, signed in ONNX:
// int8 to int64) take the integer ops.
Value add(OpBuilder &b, Location l, Value acc, Value x) {
  if (isa<IntegerType>(acc.getType()))
    return arith::AddIOp::create(b, l, acc, x);
  return arith::AddFOp::create(b, l, acc, x);
}
Value max(OpBuilder &b, Location l, Value acc, Value x) {
  if (isa<IntegerType>(acc.getType()))
    return arith::MaxSIOp::create(b, l, acc, x);
  return arith::MaximumFOp::create(b, l, acc, x);
}
Value min(OpBuilder &b, Location l, Value acc, Value x) {
  if (isa<IntegerType>(acc.getType()))
    return arith::MinSIOp::create(b, l, acc, x);
  return arith::MinimumFOp::create(b, l, acc, x);
}
Value mul(OpBuilder &b, Location l, Value acc, Value x) {
  if (isa<IntegerType>(acc.getType()))
    return arith::MulIOp::create(b, l, acc, x);
  return arith::MulFOp::create(b, l, acc, x);
}
/// A kiln.reduce_min and a kiln.reduce_max of one input over the same axes
/// (DynamicQuantizeLinear's pair), lowered together by the first of them:
/// one pass (minMaxInBlocks). The second one's uses take its value and it
/// is marked kLoweredWithSibling, for the lowering walk to erase. Null when
/// `op` has no such sibling after it.
Value lowerMinMaxPair(OpBuilder &b, Operation *op) {
  if (!isa<FloatType>(getElementTypeOrSelf(op->getOperand(0).getType())))
    return Value();
  bool isMin = isa<ReduceMinOp>(op);
  auto axesOf = [](Operation *o) {
    if (auto r = dyn_cast<ReduceMinOp>(o))
      return std::make_pair(r.getAxes(), r.getKeepdims());
    auto r = cast<ReduceMaxOp>(o);
    return std::make_pair(r.getAxes(), r.getKeepdims());
  };
  Value input = op->getOperand(0);
  Operation *sibling = nullptr;
  for (Operation *user : input.getUsers())
    if ((isMin ? isa<ReduceMaxOp>(user) : isa<ReduceMinOp>(user)) &&
        user->getBlock() == op->getBlock() && op->isBeforeInBlock(user) &&
        axesOf(user) == axesOf(op) && !user->hasAttr(kLoweredWithSibling)) {
      sibling = user;
      break;
    }
  if (!sibling)
    return Value();
  std::optional<std::pair<Value, Value>> minMax =
      minMaxInBlocks(b, op->getLoc(), input, axesOf(op).first);
  if (!minMax)
    return Value();
  auto shaped = [&](Value v, Operation *o) {
    return reshaped(
        b, o->getLoc(), v,
        cast<RankedTensorType>(o->getResult(0).getType()).getShape());
  };
  Value mine = shaped(isMin ? minMax->first : minMax->second, op);
  Value theirs = shaped(isMin ? minMax->second : minMax->first, sibling);
  sibling->getResult(0).replaceAllUsesWith(theirs);
  sibling->setAttr(kLoweredWithSibling, b.getUnitAttr());
  return mine;
}

} // namespace

FailureOr<Value> mlir::kiln::lowerTensor(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (auto c = dyn_cast<ConstantOp>(op))
    return Value(arith::ConstantOp::create(b, loc, c.getType(),
                                           cast<TypedAttr>(c.getValue())));
  if (auto r = dyn_cast<ReshapeOp>(op)) {
    FailureOr<SmallVector<Value>> dyn = reshapeDims(b, r);
    if (failed(dyn))
      return failure();
    return reshaped(b, loc, r.getInput(), r.getType().getShape(), *dyn);
  }
  if (auto t = dyn_cast<TransposeOp>(op))
    return transposed(b, loc, t.getInput(), t.getPerm());
  if (auto c = dyn_cast<ConcatOp>(op))
    return lowerConcat(b, c);
  if (auto g = dyn_cast<GatherOp>(op))
    return lowerGather(b, g);
  if (auto s = dyn_cast<SliceOp>(op))
    return lowerSlice(b, s);
  if (auto u = dyn_cast<UpsampleNearestOp>(op))
    return lowerUpsampleNearest(b, u);
  if (auto p = dyn_cast<PadOp>(op)) {
    ArrayRef<int64_t> pads = p.getPads();
    size_t rank = pads.size() / 2;
    return padded(b, loc, p.getInput(), pads.take_front(rank),
                  pads.drop_front(rank), p.getValue().convertToDouble());
  }
  if (auto r = dyn_cast<ReduceMeanOp>(op))
    return lowerReduce(b, r, 0.0, add, /*mean=*/true);
  if (auto r = dyn_cast<ReduceSumOp>(op))
    return lowerReduce(b, r, 0.0, add, false);
  if (isa<ReduceMaxOp, ReduceMinOp>(op))
    if (Value r = lowerMinMaxPair(b, op))
      return r;
  if (auto r = dyn_cast<ReduceMaxOp>(op))
    return lowerReduce(b, r, -inf, max, false);
  if (auto r = dyn_cast<ReduceMinOp>(op))
    return lowerReduce(b, r, inf, min, false);
  if (auto r = dyn_cast<ArgMaxOp>(op))
    return lowerArgReduce(b, r, /*isMax=*/true);
  if (auto r = dyn_cast<ArgMinOp>(op))
    return lowerArgReduce(b, r, /*isMax=*/false);
  if (auto r = dyn_cast<ReduceProdOp>(op))
    return lowerReduce(b, r, 1.0, mul, false);
  if (auto g = dyn_cast<GlobalAvgPoolOp>(op)) {
    SmallVector<int64_t> axes;
    for (int64_t d = 2; d < g.getInput().getType().getRank(); ++d)
      axes.push_back(d);
    Value r = dividedByCount(b, loc, g.getInput(), axes,
                             reduced(b, loc, g.getInput(), axes, 0.0, add));
    return reshaped(b, loc, r, g.getType().getShape(), dynamicDims(b, loc, r));
  }
  return Value();
}
