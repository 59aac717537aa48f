//===- LowerIndexing.cpp - scatter, scans and gathers ---------*- C++ -*-===//
//
// Ops whose writes depend on data (scatters), or whose elements depend on
// earlier ones (scans, LU; top-k and selection are in LowerSelect.cpp) are
// scalar scf.for loops over tensors
// carried as iter_args: one-shot bufferization turns each such chain into
// in-place stores into one buffer (the copy of the data, or a fresh result),
// which the arena then places like any other. Gathers (gather_nd,
// reverse_sequence) are linalg.generic ops that extract from their input,
// like kiln.gather.
//
// Every index computed at run time is wrapped (negative counts from the end)
// and then clamped into its dimension before it is used, so no access ever
// leaves a tensor; scatters turn an out-of-range update into a rewrite of the
// element already at the clamped position (no change).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"
#include "ScalarLoops.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::loops;

namespace {
/// `i` wrapped and clamped into dimension `d` of `v` (clampIndex), static or
/// of run-time size.
Value clampInto(OpBuilder &b, Location loc, Value i, Value v, int64_t d,
                Value *inRange) {
  OpFoldResult n = tensor::getMixedSize(b, loc, v, d);
  if (std::optional<int64_t> c = getConstantIntValue(n))
    return clampIndex(b, loc, i, *c, inRange);
  return clampIndex(b, loc, i, cast<Value>(n), inRange);
}

/// `scatter(out)` when every run-time dimension of `data` is above 0, else
/// `out` as it is (a scatter into no elements writes nothing; its loops
/// would read the clamped position -1). Static data: `scatter(out)`.
Value unlessEmpty(OpBuilder &b, Location loc, Value data, Value out,
                  function_ref<Value(OpBuilder &, Location)> scatter) {
  SmallVector<Value> sizes = dynamicDims(b, loc, data);
  if (sizes.empty())
    return scatter(b, loc);
  Value zero = cIdx(b, loc, 0), any;
  for (Value n : sizes) {
    Value above =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, n, zero);
    any = any ? arith::AndIOp::create(b, loc, any, above).getResult() : above;
  }
  auto branch = scf::IfOp::create(
      b, loc, any,
      [&](OpBuilder &tb, Location tl) {
        scf::YieldOp::create(tb, tl, scatter(tb, tl));
      },
      [&](OpBuilder &eb, Location el) { scf::YieldOp::create(eb, el, out); });
  return branch.getResult(0);
}

Value lowerScatterElements(OpBuilder &b, ScatterElementsOp op) {
  Location loc = op.getLoc();
  int64_t axis = op.getAxis();
  RankedTensorType data = op.getData().getType();
  StringRef reduction = op.getReduction();
  Value out = copied(b, loc, op.getData());
  // No element to write: an update of run-time extent against a static 0
  // would land at the clamped position -1.
  if (llvm::is_contained(data.getShape(), 0))
    return out;
  return unlessEmpty(
      b, loc, op.getData(), out, [&](OpBuilder &sb, Location sl) {
        return loopNest(
            sb, sl, op.getUpdates().getType().getShape(), out,
            [&](OpBuilder &nb, Location nl, ValueRange ivs, ValueRange args) {
              Value ok;
              Value pos =
                  clampInto(nb, nl, readIndex(nb, nl, op.getIndices(), ivs),
                            op.getData(), axis, &ok);
              Ivs at(ivs);
              at[axis] = pos;
              // Outside the axis an update lands at its own position; with
              // run-time sizes (updates not proved to fit) one past the data
              // changes nothing.
              for (int64_t d = 0; d < data.getRank(); ++d) {
                if (d == axis || !(data.isDynamicDim(d) ||
                                   op.getUpdates().getType().isDynamicDim(d)))
                  continue;
                Value inside;
                at[d] = clampInto(nb, nl, ivs[d], op.getData(), d, &inside);
                ok = arith::AndIOp::create(nb, nl, ok, inside);
              }
              Value u = tensor::ExtractOp::create(nb, nl, op.getUpdates(), ivs);
              return SmallVector<Value>{
                  scatterOne(nb, nl, reduction, args[0], at, u, ok)};
            },
            dynamicDims(sb, sl, op.getUpdates()))[0];
      });
}

Value lowerScatterND(OpBuilder &b, ScatterNDOp op) {
  Location loc = op.getLoc();
  RankedTensorType data = op.getData().getType(),
                   idx = op.getIndices().getType();
  int64_t q = idx.getShape().back();
  StringRef reduction = op.getReduction();
  Value out = copied(b, loc, op.getData());
  if (llvm::is_contained(data.getShape().take_front(q), 0))
    return out;
  return unlessEmpty(
      b, loc, op.getData(), out, [&](OpBuilder &sb, Location sl) {
        return loopNest(
            sb, sl, idx.getShape().drop_back(), out,
            [&](OpBuilder &nb, Location nl, ValueRange ivs, ValueRange args) {
              Ivs prefix;
              Value ok = arith::ConstantIntOp::create(nb, nl, 1, 1);
              for (int64_t j = 0; j < q; ++j) {
                Ivs at(ivs);
                at.push_back(cIdx(nb, nl, j));
                Value inRange;
                Value pos =
                    clampInto(nb, nl, readIndex(nb, nl, op.getIndices(), at),
                              op.getData(), j, &inRange);
                prefix.push_back(pos);
                ok = arith::AndIOp::create(nb, nl, ok, inRange);
              }
              return loopNest(
                  nb, nl, data.getShape().drop_front(q), args,
                  [&](OpBuilder &ib, Location il, ValueRange jvs,
                      ValueRange inner) {
                    Ivs at(prefix), from(ivs);
                    llvm::append_range(at, jvs);
                    llvm::append_range(from, jvs);
                    Value u = tensor::ExtractOp::create(ib, il, op.getUpdates(),
                                                        from);
                    return SmallVector<Value>{
                        scatterOne(ib, il, reduction, inner[0], at, u, ok)};
                  },
                  dynamicDims(nb, nl, op.getData(), q));
            },
            dynamicDims(sb, sl, op.getIndices(), 0, idx.getRank() - 1))[0];
      });
}

/// Result (p..., s...) is data[p_0..p_{b-1}, idx(p, 0..q-1), s...] with the
/// indices wrapped and clamped like kiln.gather's.
Value lowerGatherND(OpBuilder &b, GatherNDOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = op.getType(), data = op.getData().getType(),
                   idx = op.getIndices().getType();
  int64_t batch = op.getBatchDims(), q = idx.getShape().back(),
          positions = idx.getRank() - 1;
  // Symbolic sizes: the result's leading dimensions are the indices', the
  // rest the data's.
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dyn.push_back(d < positions
                        ? tensor::DimOp::create(b, loc, op.getIndices(), d)
                        : tensor::DimOp::create(b, loc, op.getData(),
                                                d - positions + batch + q));
  return mappedGeneric(
      b, loc, type.getShape(), type.getElementType(), {}, {},
      [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
        Ivs out;
        for (int64_t d = 0; d < type.getRank(); ++d)
          out.push_back(linalg::IndexOp::create(nb, nl, d));
        Ivs at(ArrayRef<Value>(out).take_front(batch));
        for (int64_t j = 0; j < q; ++j) {
          Ivs from(ArrayRef<Value>(out).take_front(positions));
          from.push_back(cIdx(nb, nl, j));
          Value i = readIndex(nb, nl, op.getIndices(), from);
          at.push_back(
              data.isDynamicDim(batch + j)
                  ? clampIndex(nb, nl, i,
                               tensor::DimOp::create(nb, nl, op.getData(),
                                                     batch + j)
                                   .getResult())
                  : clampIndex(nb, nl, i, data.getDimSize(batch + j)));
        }
        llvm::append_range(at, ArrayRef<Value>(out).drop_front(positions));
        return tensor::ExtractOp::create(nb, nl, op.getData(), at);
      },
      dyn);
}

/// A value chosen among per-dimension sizes (constants or run-time values)
/// by a run-time dimension.
Value pickByDim(OpBuilder &b, Location loc, Value dim,
                ArrayRef<OpFoldResult> perDim) {
  auto value = [&](OpFoldResult v) {
    return getValueOrCreateConstantIndexOp(b, loc, v);
  };
  Value r = value(perDim.back());
  for (int64_t d = perDim.size() - 2; d >= 0; --d) {
    Value is = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, dim,
                                     cIdx(b, loc, d));
    r = arith::SelectOp::create(b, loc, is, value(perDim[d]), r);
  }
  return r;
}

/// A scan over the flattened input: element `lin` combines (adds, or
/// multiplies for CumProd) the result one step before it along the axis (a
/// stride away), in order, so every element is read after it is written. The
/// axis is read at run time (a constant folds). Symbolic sizes are read with
/// tensor.dim (the strides and the count are then run-time products).
template <typename CumOp> Value lowerCumulative(OpBuilder &b, CumOp op) {
  constexpr bool isProd = std::is_same_v<CumOp, CumProdOp>;
  auto step = [](OpBuilder &nb, Location nl, Value acc, Value x) -> Value {
    return combine(nb, nl, isProd ? "mul" : "add", acc, x);
  };
  Location loc = op.getLoc();
  RankedTensorType type = op.getType();
  int64_t rank = type.getRank();
  Type elt = type.getElementType();
  if (type.hasStaticShape() && type.getNumElements() == 0)
    return op.getInput();
  SmallVector<OpFoldResult> dims = tensor::getMixedSizes(b, loc, op.getInput());
  auto times = [&](OpFoldResult x, OpFoldResult y) -> OpFoldResult {
    std::optional<int64_t> cx = getConstantIntValue(x),
                           cy = getConstantIntValue(y);
    if (cx && cy)
      return b.getIndexAttr(*cx * *cy);
    return arith::MulIOp::create(b, loc,
                                 getValueOrCreateConstantIndexOp(b, loc, x),
                                 getValueOrCreateConstantIndexOp(b, loc, y))
        .getResult();
  };
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = times(strides[d + 1], dims[d + 1]);
  OpFoldResult totalSize =
      rank ? times(strides[0], dims[0]) : OpFoldResult(b.getIndexAttr(1));
  std::optional<int64_t> staticTotal = getConstantIntValue(totalSize);
  int64_t flat = staticTotal.value_or(ShapedType::kDynamic);
  SmallVector<Value> flatDyn;
  if (!staticTotal)
    flatDyn.push_back(getValueOrCreateConstantIndexOp(b, loc, totalSize));
  Value total = getValueOrCreateConstantIndexOp(b, loc, totalSize);
  // The axis: negative counts from the end, then clamped into [0, rank).
  RankedTensorType axisType = op.getAxis().getType();
  Ivs zeros(axisType.getRank(), cIdx(b, loc, 0));
  Value axis = readIndex(b, loc, op.getAxis(), zeros);
  Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                         axis, cIdx(b, loc, 0));
  axis = arith::SelectOp::create(
      b, loc, negative, arith::AddIOp::create(b, loc, axis, cIdx(b, loc, rank)),
      axis);
  axis = minIdx(b, loc, arith::MaxSIOp::create(b, loc, axis, cIdx(b, loc, 0)),
                cIdx(b, loc, rank - 1));
  Value stride = pickByDim(b, loc, axis, strides);
  Value size = pickByDim(b, loc, axis, dims);
  Value x = reshaped(b, loc, op.getInput(), {flat}, flatDyn);
  Value identity =
      isProd
          ? Value(arith::ConstantOp::create(b, loc, elt, b.getOneAttr(elt)))
          : Value(arith::ConstantOp::create(b, loc, elt, b.getZeroAttr(elt)));
  bool reverse = op.getReverse(), exclusive = op.getExclusive();
  Value y = zeroFilled(b, loc, {flat}, elt, flatDyn);
  y = forLoop(
      b, loc, cIdx(b, loc, 0), total, y,
      [&](OpBuilder &nb, Location nl, Value it, ValueRange args) {
        Value last = arith::SubIOp::create(nb, nl, total, cIdx(nb, nl, 1));
        Value lin =
            reverse ? (Value)arith::SubIOp::create(nb, nl, last, it) : it;
        Value c = arith::RemUIOp::create(
            nb, nl, arith::DivUIOp::create(nb, nl, lin, stride), size);
        Value edge = reverse ? (Value)arith::SubIOp::create(
                                   nb, nl, size, cIdx(nb, nl, 1))
                             : cIdx(nb, nl, 0);
        Value first =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, c, edge);
        Value prev = reverse ? (Value)arith::AddIOp::create(nb, nl, lin, stride)
                             : (Value)arith::SubIOp::create(nb, nl, lin, stride);
        prev = arith::SelectOp::create(nb, nl, first, lin, prev);
        Value prevY = tensor::ExtractOp::create(nb, nl, args[0], prev);
        Value v;
        if (exclusive) {
          Value prevX = tensor::ExtractOp::create(nb, nl, x, prev);
          v = arith::SelectOp::create(nb, nl, first, identity,
                                      step(nb, nl, prevY, prevX));
        } else {
          Value cur = tensor::ExtractOp::create(nb, nl, x, lin);
          v = arith::SelectOp::create(nb, nl, first, cur,
                                      step(nb, nl, prevY, cur));
        }
        return SmallVector<Value>{
            tensor::InsertOp::create(nb, nl, v, args[0], lin)};
      })[0];
  return reshaped(b, loc, y, type.getShape(),
                  dynamicDims(b, loc, op.getInput()));
}

/// Result at (.., b, .., t, ..) reads time lengths[b] - 1 - t when t is
/// inside the (clamped) length, else t.
Value lowerReverseSequence(OpBuilder &b, ReverseSequenceOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = op.getType();
  int64_t batchAxis = op.getBatchAxis(), timeAxis = op.getTimeAxis();
  // Sizes of any dimension may be symbolic (a bidirectional layer over a
  // sequence of run-time length).
  Value dynamicSteps;
  if (type.isDynamicDim(timeAxis))
    dynamicSteps = tensor::DimOp::create(b, loc, op.getInput(), timeAxis);
  return mappedGeneric(
      b, loc, type.getShape(), type.getElementType(), {}, {},
      [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
        Ivs at;
        for (int64_t d = 0; d < type.getRank(); ++d)
          at.push_back(linalg::IndexOp::create(nb, nl, d));
        Value len = readIndex(nb, nl, op.getLengths(), at[batchAxis]);
        len =
            minIdx(nb, nl, arith::MaxSIOp::create(nb, nl, len, cIdx(nb, nl, 0)),
                   dynamicSteps ? dynamicSteps
                                : cIdx(nb, nl, type.getDimSize(timeAxis)));
        Value t = at[timeAxis];
        Value inside =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, t, len);
        Value mirrored = arith::SubIOp::create(
            nb, nl, arith::SubIOp::create(nb, nl, len, cIdx(nb, nl, 1)), t);
        at[timeAxis] = arith::SelectOp::create(nb, nl, inside, mirrored, t);
        return tensor::ExtractOp::create(nb, nl, op.getInput(), at);
      },
      dynamicDims(b, loc, op.getInput()));
}

/// LU decomposition with partial pivoting of each matrix, in place on a
/// copy; the determinant is the product of the pivots, negated per swap.
Value lowerDet(OpBuilder &b, DetOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = op.getInput().getType();
  int64_t m = type.getShape().back();
  int64_t batch = type.getNumElements() / std::max<int64_t>(m * m, 1);
  if (m == 0)
    batch = op.getType().getNumElements();
  Type elt = type.getElementType();
  Value one = floatConst(b, loc, elt, 1.0), zero = floatConst(b, loc, elt, 0.0);
  Value dets = filledTensor(b, loc, {batch}, elt, 1.0);
  if (m > 0 && batch > 0) {
    Value a = copied(b, loc, reshaped(b, loc, op.getInput(), {batch, m, m}));
    Value mIdx = cIdx(b, loc, m);
    SmallVector<Value> r = loopNest(
        b, loc, {batch}, {a, dets},
        [&](OpBuilder &nb, Location nl, ValueRange bi, ValueRange st) {
          Value bb = bi[0];
          auto at = [&](Value i, Value j) { return Ivs{bb, i, j}; };
          SmallVector<Value> lu = forLoop(
              nb, nl, cIdx(nb, nl, 0), mIdx, {st[0], one},
              [&](OpBuilder &kb, Location kl, Value k, ValueRange s) {
                Value A = s[0], det = s[1];
                auto absAt = [&](OpBuilder &xb, Location xl, Value i) -> Value {
                  return math::AbsFOp::create(
                      xb, xl, tensor::ExtractOp::create(xb, xl, A, at(i, k)));
                };
                // The row with the largest magnitude in column k (first wins).
                Value k1 = arith::AddIOp::create(kb, kl, k, cIdx(kb, kl, 1));
                Value pivotRow = forLoop(
                    kb, kl, k1, mIdx, {absAt(kb, kl, k), k},
                    [&](OpBuilder &ib, Location il, Value i, ValueRange best) {
                      Value v = absAt(ib, il, i);
                      Value take = arith::CmpFOp::create(
                          ib, il, arith::CmpFPredicate::OGT, v, best[0]);
                      return SmallVector<Value>{
                          arith::SelectOp::create(ib, il, take, v, best[0]),
                          arith::SelectOp::create(ib, il, take, i, best[1])};
                    })[1];
                // Swap rows k and pivotRow (a no-op when they are one row).
                A = forLoop(kb, kl, cIdx(kb, kl, 0), mIdx, A,
                            [&](OpBuilder &jb, Location jl, Value j,
                                ValueRange s2) {
                              Value t = s2[0];
                              Value x = tensor::ExtractOp::create(jb, jl, t, at(k, j));
                              Value y = tensor::ExtractOp::create(jb, jl, t,
                                                                  at(pivotRow, j));
                              t = tensor::InsertOp::create(jb, jl, y, t, at(k, j));
                              t = tensor::InsertOp::create(jb, jl, x, t,
                                                           at(pivotRow, j));
                              return SmallVector<Value>{t};
                            })[0];
                Value swapped = arith::CmpIOp::create(
                    kb, kl, arith::CmpIPredicate::ne, pivotRow, k);
                det = arith::SelectOp::create(
                    kb, kl, swapped, arith::NegFOp::create(kb, kl, det), det);
                Value pivot = tensor::ExtractOp::create(kb, kl, A, at(k, k));
                det = arith::MulFOp::create(kb, kl, det, pivot);
                // A zero pivot makes the determinant 0; skip its division.
                Value singular = arith::CmpFOp::create(
                    kb, kl, arith::CmpFPredicate::OEQ, pivot, zero);
                Value divisor =
                    arith::SelectOp::create(kb, kl, singular, one, pivot);
                A = forLoop(
                    kb, kl, k1, mIdx, A,
                    [&](OpBuilder &ib, Location il, Value i, ValueRange s2) {
                      Value f = arith::DivFOp::create(
                          ib, il, tensor::ExtractOp::create(ib, il, s2[0], at(i, k)),
                          divisor);
                      f = arith::SelectOp::create(ib, il, singular, zero, f);
                      return forLoop(
                          ib, il, k1, mIdx, s2,
                          [&](OpBuilder &jb, Location jl, Value j,
                              ValueRange s3) {
                            Value t = s3[0];
                            Value akj = tensor::ExtractOp::create(jb, jl, t, at(k, j));
                            Value aij = tensor::ExtractOp::create(jb, jl, t, at(i, j));
                            Value v = arith::SubFOp::create(
                                jb, jl, aij, arith::MulFOp::create(jb, jl, f, akj));
                            return SmallVector<Value>{
                                tensor::InsertOp::create(jb, jl, v, t, at(i, j))};
                          });
                    })[0];
                return SmallVector<Value>{A, det};
              });
          Value d = tensor::InsertOp::create(nb, nl, lu[1], st[1], bb);
          return SmallVector<Value>{lu[0], d};
        });
    dets = r[1];
  }
  return reshaped(b, loc, dets, op.getType().getShape());
}

} // namespace

FailureOr<Value> mlir::kiln::lowerIndexing(OpBuilder &b, Operation *op) {
  if (auto s = dyn_cast<ScatterElementsOp>(op))
    return lowerScatterElements(b, s);
  if (auto s = dyn_cast<ScatterNDOp>(op))
    return lowerScatterND(b, s);
  if (auto g = dyn_cast<GatherNDOp>(op))
    return lowerGatherND(b, g);
  if (auto c = dyn_cast<CumSumOp>(op))
    return lowerCumulative(b, c);
  if (auto c = dyn_cast<CumProdOp>(op))
    return lowerCumulative(b, c);
  if (auto r = dyn_cast<ReverseSequenceOp>(op))
    return lowerReverseSequence(b, r);
  if (auto d = dyn_cast<DetOp>(op))
    return lowerDet(b, d);
  return lowerSelect(b, op);
}
