//===- LowerIndexing.cpp - scatter, scans and selection -------*- C++ -*-===//
//
// Ops whose writes depend on data (scatters), or whose elements depend on
// earlier ones (scans, top-k, LU) are scalar scf.for loops over tensors
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

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
using Ivs = SmallVector<Value>;

Value cIdx(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// A tensor of `shape` filled with zero of `elt` (float, integer or bool).
Value zeroFilled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                 Type elt) {
  Value zero = arith::ConstantOp::create(b, loc, elt, b.getZeroAttr(elt));
  return linalg::FillOp::create(b, loc, zero, emptyTensor(b, loc, shape, elt))
      .getResult(0);
}

/// A fresh copy of `v` that the scatter loops then overwrite in place.
Value copied(OpBuilder &b, Location loc, Value v) {
  RankedTensorType t = typeOf(v);
  Value init = emptyTensor(b, loc, t.getShape(), t.getElementType());
  return linalg::CopyOp::create(b, loc, v, init).getResult(0);
}

/// A nest of scf.for loops over a static shape carrying `iterArgs`.
SmallVector<Value> loopNest(
    OpBuilder &b, Location loc, ArrayRef<int64_t> shape, ValueRange iterArgs,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange,
                                    ValueRange)>
        body) {
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t d : shape) {
    lbs.push_back(cIdx(b, loc, 0));
    ubs.push_back(cIdx(b, loc, d));
    steps.push_back(cIdx(b, loc, 1));
  }
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, iterArgs,
      [&](OpBuilder &nb, Location nl, ValueRange ivs, ValueRange args) {
        SmallVector<Value> r = body(nb, nl, ivs, args);
        return scf::ValueVector(r.begin(), r.end());
      });
  return SmallVector<Value>(nest.results.begin(), nest.results.end());
}

/// One scf.for from `lb` to `ub` carrying `iterArgs`.
SmallVector<Value>
forLoop(OpBuilder &b, Location loc, Value lb, Value ub, ValueRange iterArgs,
        function_ref<SmallVector<Value>(OpBuilder &, Location, Value,
                                        ValueRange)>
            body) {
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, cIdx(b, loc, 1), iterArgs,
      [&](OpBuilder &nb, Location nl, Value iv, ValueRange args) {
        scf::YieldOp::create(nb, nl, body(nb, nl, iv, args));
      });
  return SmallVector<Value>(loop.getResults().begin(), loop.getResults().end());
}

/// An index read from an integer tensor, as `index`.
Value readIndex(OpBuilder &b, Location loc, Value tensor, ValueRange at) {
  Value v = tensor::ExtractOp::create(b, loc, tensor, at);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

Value minIdx(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MinSIOp::create(b, loc, x, y);
}

Value add(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::AddFOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, x, y);
}

/// `old` combined with `update` by a scatter's reduction.
Value combine(OpBuilder &b, Location loc, StringRef reduction, Value old,
              Value update) {
  bool isFloat = isa<FloatType>(old.getType());
  if (reduction == "add")
    return add(b, loc, old, update);
  if (reduction == "mul")
    return isFloat ? (Value)arith::MulFOp::create(b, loc, old, update)
                   : (Value)arith::MulIOp::create(b, loc, old, update);
  if (reduction == "max")
    return isFloat ? (Value)arith::MaximumFOp::create(b, loc, old, update)
                   : (Value)arith::MaxSIOp::create(b, loc, old, update);
  if (reduction == "min")
    return isFloat ? (Value)arith::MinimumFOp::create(b, loc, old, update)
                   : (Value)arith::MinSIOp::create(b, loc, old, update);
  return update;
}

/// Writes `combine(dest[at], value)` to dest[at] when `ok`, else leaves it.
Value scatterOne(OpBuilder &b, Location loc, StringRef reduction, Value dest,
                 ValueRange at, Value value, Value ok) {
  Value old = tensor::ExtractOp::create(b, loc, dest, at);
  Value v = combine(b, loc, reduction, old, value);
  v = arith::SelectOp::create(b, loc, ok, v, old);
  return tensor::InsertOp::create(b, loc, v, dest, at);
}

Value lowerScatterElements(OpBuilder &b, ScatterElementsOp op) {
  Location loc = op.getLoc();
  int64_t axis = op.getAxis();
  int64_t n = op.getData().getType().getDimSize(axis);
  StringRef reduction = op.getReduction();
  Value out = copied(b, loc, op.getData());
  if (n == 0)
    return out;
  return loopNest(
      b, loc, op.getUpdates().getType().getShape(), out,
      [&](OpBuilder &nb, Location nl, ValueRange ivs, ValueRange args) {
        Value ok;
        Value pos = clampIndex(
            nb, nl, readIndex(nb, nl, op.getIndices(), ivs), n, &ok);
        Ivs at(ivs);
        at[axis] = pos;
        Value u = tensor::ExtractOp::create(nb, nl, op.getUpdates(), ivs);
        return SmallVector<Value>{
            scatterOne(nb, nl, reduction, args[0], at, u, ok)};
      })[0];
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
  return loopNest(
      b, loc, idx.getShape().drop_back(), out,
      [&](OpBuilder &nb, Location nl, ValueRange ivs, ValueRange args) {
        Ivs prefix;
        Value ok = arith::ConstantIntOp::create(nb, nl, 1, 1);
        for (int64_t j = 0; j < q; ++j) {
          Ivs at(ivs);
          at.push_back(cIdx(nb, nl, j));
          Value inRange;
          Value pos = clampIndex(nb, nl, readIndex(nb, nl, op.getIndices(), at),
                                 data.getDimSize(j), &inRange);
          prefix.push_back(pos);
          ok = arith::AndIOp::create(nb, nl, ok, inRange);
        }
        return loopNest(
            nb, nl, data.getShape().drop_front(q), args,
            [&](OpBuilder &ib, Location il, ValueRange jvs, ValueRange inner) {
              Ivs at(prefix), from(ivs);
              llvm::append_range(at, jvs);
              llvm::append_range(from, jvs);
              Value u = tensor::ExtractOp::create(ib, il, op.getUpdates(), from);
              return SmallVector<Value>{
                  scatterOne(ib, il, reduction, inner[0], at, u, ok)};
            });
      })[0];
}

/// Result (p..., s...) is data[p_0..p_{b-1}, idx(p, 0..q-1), s...] with the
/// indices wrapped and clamped like kiln.gather's.
Value lowerGatherND(OpBuilder &b, GatherNDOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = op.getType(), data = op.getData().getType(),
                   idx = op.getIndices().getType();
  int64_t batch = op.getBatchDims(), q = idx.getShape().back(),
          positions = idx.getRank() - 1;
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
          at.push_back(clampIndex(nb, nl,
                                  readIndex(nb, nl, op.getIndices(), from),
                                  data.getDimSize(batch + j)));
        }
        llvm::append_range(at, ArrayRef<Value>(out).drop_front(positions));
        return tensor::ExtractOp::create(nb, nl, op.getData(), at);
      });
}

/// A value chosen among per-dimension constants by a run-time dimension.
Value pickByDim(OpBuilder &b, Location loc, Value dim,
                ArrayRef<int64_t> perDim) {
  Value r = cIdx(b, loc, perDim.back());
  for (int64_t d = perDim.size() - 2; d >= 0; --d) {
    Value is = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, dim,
                                     cIdx(b, loc, d));
    r = arith::SelectOp::create(b, loc, is, cIdx(b, loc, perDim[d]), r);
  }
  return r;
}

/// A scan over the flattened input: element `lin` combines (adds, or
/// multiplies for CumProd) the result one step before it along the axis (a
/// stride away), in order, so every element is read after it is written. The
/// axis is read at run time (a constant folds).
template <typename CumOp> Value lowerCumulative(OpBuilder &b, CumOp op) {
  constexpr bool isProd = std::is_same_v<CumOp, CumProdOp>;
  auto step = [](OpBuilder &nb, Location nl, Value acc, Value x) -> Value {
    return combine(nb, nl, isProd ? "mul" : "add", acc, x);
  };
  Location loc = op.getLoc();
  RankedTensorType type = op.getType();
  int64_t rank = type.getRank(), total = type.getNumElements();
  Type elt = type.getElementType();
  if (total == 0)
    return op.getInput();
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * type.getDimSize(d + 1);
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
  Value size = pickByDim(b, loc, axis, type.getShape());
  Value x = reshaped(b, loc, op.getInput(), {total});
  Value identity =
      isProd
          ? Value(arith::ConstantOp::create(b, loc, elt, b.getOneAttr(elt)))
          : Value(arith::ConstantOp::create(b, loc, elt, b.getZeroAttr(elt)));
  bool reverse = op.getReverse(), exclusive = op.getExclusive();
  Value y = zeroFilled(b, loc, {total}, elt);
  y = forLoop(
      b, loc, cIdx(b, loc, 0), cIdx(b, loc, total), y,
      [&](OpBuilder &nb, Location nl, Value it, ValueRange args) {
        Value lin = reverse ? (Value)arith::SubIOp::create(
                                  nb, nl, cIdx(nb, nl, total - 1), it)
                            : it;
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
  return reshaped(b, loc, y, type.getShape());
}

/// Per row (every position outside the axis), an insertion into a sorted
/// list of the best k so far: an element goes after every entry at least as
/// good as it (so ties keep the lower index first), entries behind it move
/// down one, and the last falls off.
Value lowerTopK(OpBuilder &b, TopKOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = op.getInput().getType();
  int64_t axis = op.getAxis(), k = op.getK(), n = type.getDimSize(axis);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d != axis)
      (d < axis ? outer : inner) *= type.getDimSize(d);
  // Unsigned elements are compared unsigned on their signless bits.
  bool isUnsigned = isUnsignedInt(type);
  Type elt = signlessType(type.getElementType()), i64 = b.getI64Type();
  Value values = zeroFilled(b, loc, {outer, k, inner}, elt);
  Value indices = zeroFilled(b, loc, {outer, k, inner}, i64);
  if (k > 0 && outer * inner > 0) {
    Value x = reshaped(b, loc, asSignless(b, loc, op.getInput()),
                       {outer, n, inner});
    bool isFloat = isa<FloatType>(elt), largest = op.getLargest();
    auto better = [&](OpBuilder &nb, Location nl, Value v, Value e) -> Value {
      if (isFloat)
        return arith::CmpFOp::create(nb, nl,
                                     largest ? arith::CmpFPredicate::OGT
                                             : arith::CmpFPredicate::OLT,
                                     v, e);
      return arith::CmpIOp::create(
          nb, nl,
          largest ? (isUnsigned ? arith::CmpIPredicate::ugt
                                : arith::CmpIPredicate::sgt)
                  : (isUnsigned ? arith::CmpIPredicate::ult
                                : arith::CmpIPredicate::slt),
          v, e);
    };
    SmallVector<Value> r = loopNest(
        b, loc, {outer, inner}, {values, indices},
        [&](OpBuilder &nb, Location nl, ValueRange oi, ValueRange lists) {
          Value o = oi[0], in = oi[1];
          return forLoop(
              nb, nl, cIdx(nb, nl, 0), cIdx(nb, nl, n), lists,
              [&](OpBuilder &ib, Location il, Value i, ValueRange vi) {
                Value V = vi[0], I = vi[1];
                Value v = tensor::ExtractOp::create(ib, il, x, ValueRange{o, i, in});
                Value filled = minIdx(ib, il, i, cIdx(ib, il, k));
                // p: how many kept entries are at least as good as v.
                Value p = forLoop(
                    ib, il, cIdx(ib, il, 0), filled, cIdx(ib, il, 0),
                    [&](OpBuilder &jb, Location jl, Value j, ValueRange cnt) {
                      Value e = tensor::ExtractOp::create(jb, jl, V,
                                                          ValueRange{o, j, in});
                      Value stays = arith::XOrIOp::create(
                          jb, jl, better(jb, jl, v, e),
                          arith::ConstantIntOp::create(jb, jl, 1, 1));
                      Value next = arith::AddIOp::create(jb, jl, cnt[0],
                                                         cIdx(jb, jl, 1));
                      return SmallVector<Value>{
                          arith::SelectOp::create(jb, jl, stays, next, cnt[0])};
                    })[0];
                // Entries p .. last-1 move to p+1 .. last, from the back.
                Value last = minIdx(ib, il, filled, cIdx(ib, il, k - 1));
                Value moves = arith::MaxSIOp::create(
                    ib, il, arith::SubIOp::create(ib, il, last, p),
                    cIdx(ib, il, 0));
                SmallVector<Value> shifted = forLoop(
                    ib, il, cIdx(ib, il, 0), moves, {V, I},
                    [&](OpBuilder &jb, Location jl, Value t, ValueRange vj) {
                      Value to = arith::SubIOp::create(jb, jl, last, t);
                      Value from = arith::SubIOp::create(jb, jl, to,
                                                         cIdx(jb, jl, 1));
                      SmallVector<Value> res;
                      for (Value list : vj) {
                        Value e = tensor::ExtractOp::create(
                            jb, jl, list, ValueRange{o, from, in});
                        res.push_back(tensor::InsertOp::create(
                            jb, jl, e, list, ValueRange{o, to, in}));
                      }
                      return res;
                    });
                // v goes to p when p < k; otherwise nothing changes.
                Value fits = arith::CmpIOp::create(
                    ib, il, arith::CmpIPredicate::slt, p, cIdx(ib, il, k));
                Value at = minIdx(ib, il, p, cIdx(ib, il, k - 1));
                Value idx = arith::IndexCastOp::create(ib, il, i64, i);
                SmallVector<Value> res;
                for (auto [list, value] :
                     llvm::zip(shifted, SmallVector<Value>{v, idx})) {
                  Ivs pos{o, at, in};
                  Value old = tensor::ExtractOp::create(ib, il, list, pos);
                  Value w = arith::SelectOp::create(ib, il, fits, value, old);
                  res.push_back(tensor::InsertOp::create(ib, il, w, list, pos));
                }
                return res;
              });
        });
    values = r[0];
    indices = r[1];
  }
  ArrayRef<int64_t> shape = op.getValues().getType().getShape();
  op.getIndices().replaceAllUsesWith(reshaped(b, loc, indices, shape));
  return reshaped(b, loc, values, shape);
}

/// Result at (.., b, .., t, ..) reads time lengths[b] - 1 - t when t is
/// inside the (clamped) length, else t.
Value lowerReverseSequence(OpBuilder &b, ReverseSequenceOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = op.getType();
  int64_t batchAxis = op.getBatchAxis(), timeAxis = op.getTimeAxis(),
          steps = type.getDimSize(timeAxis);
  return mappedGeneric(
      b, loc, type.getShape(), type.getElementType(), {}, {},
      [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
        Ivs at;
        for (int64_t d = 0; d < type.getRank(); ++d)
          at.push_back(linalg::IndexOp::create(nb, nl, d));
        Value len = readIndex(nb, nl, op.getLengths(), at[batchAxis]);
        len = minIdx(nb, nl,
                     arith::MaxSIOp::create(nb, nl, len, cIdx(nb, nl, 0)),
                     cIdx(nb, nl, steps));
        Value t = at[timeAxis];
        Value inside =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, t, len);
        Value mirrored = arith::SubIOp::create(
            nb, nl, arith::SubIOp::create(nb, nl, len, cIdx(nb, nl, 1)), t);
        at[timeAxis] = arith::SelectOp::create(nb, nl, inside, mirrored, t);
        return tensor::ExtractOp::create(nb, nl, op.getInput(), at);
      });
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

/// Walks the condition in order; each true entry copies its slice to the
/// next free slice of the result while there is one.
Value lowerCompress(OpBuilder &b, CompressOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = op.getType(), in = op.getInput().getType();
  int64_t axis = op.getAxis(), room = type.getDimSize(axis);
  int64_t steps = std::min(in.getDimSize(axis),
                           op.getCondition().getType().getDimSize(0));
  Value out = zeroFilled(b, loc, type.getShape(), type.getElementType());
  if (room == 0 || steps == 0 || type.getNumElements() == 0)
    return out;
  SmallVector<int64_t> slice(type.getShape());
  slice[axis] = 1;
  return forLoop(
      b, loc, cIdx(b, loc, 0), cIdx(b, loc, steps), {out, cIdx(b, loc, 0)},
      [&](OpBuilder &nb, Location nl, Value i, ValueRange st) {
        Value c = tensor::ExtractOp::create(nb, nl, op.getCondition(), i);
        Value take = arith::AndIOp::create(
            nb, nl, c,
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, st[1],
                                  cIdx(nb, nl, room)));
        Value dst = minIdx(nb, nl, st[1], cIdx(nb, nl, room - 1));
        Value r = loopNest(
            nb, nl, slice, st[0],
            [&](OpBuilder &ib, Location il, ValueRange ivs, ValueRange s) {
              Ivs from(ivs), to(ivs);
              from[axis] = i;
              to[axis] = dst;
              Value v = tensor::ExtractOp::create(ib, il, op.getInput(), from);
              return SmallVector<Value>{
                  scatterOne(ib, il, "none", s[0], to, v, take)};
            })[0];
        Value next = arith::AddIOp::create(
            nb, nl, st[1],
            arith::IndexCastOp::create(
                nb, nl, nb.getIndexType(),
                arith::ExtUIOp::create(nb, nl, nb.getI64Type(), take)));
        return SmallVector<Value>{r, next};
      })[0];
}

/// Walks the input in row-major order; each non-zero element writes its
/// coordinates to the next free column while there is one.
Value lowerNonZero(OpBuilder &b, NonZeroOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = op.getType(), in = op.getInput().getType();
  int64_t room = type.getDimSize(1), total = in.getNumElements();
  Value out = zeroFilled(b, loc, type.getShape(), type.getElementType());
  if (room == 0 || total == 0)
    return out;
  SmallVector<int64_t> shape(in.getShape()), strides(in.getRank(), 1);
  if (shape.empty())
    shape.push_back(1), strides.push_back(1);
  for (int64_t d = shape.size() - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  Value x = reshaped(b, loc, op.getInput(), {total});
  Type elt = in.getElementType();
  Value zero = arith::ConstantOp::create(b, loc, elt, b.getZeroAttr(elt));
  return forLoop(
      b, loc, cIdx(b, loc, 0), cIdx(b, loc, total), {out, cIdx(b, loc, 0)},
      [&](OpBuilder &nb, Location nl, Value lin, ValueRange st) {
        Value v = tensor::ExtractOp::create(nb, nl, x, lin);
        Value nz = isa<FloatType>(elt)
                       ? (Value)arith::CmpFOp::create(
                             nb, nl, arith::CmpFPredicate::UNE, v, zero)
                       : (Value)arith::CmpIOp::create(
                             nb, nl, arith::CmpIPredicate::ne, v, zero);
        Value take = arith::AndIOp::create(
            nb, nl, nz,
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, st[1],
                                  cIdx(nb, nl, room)));
        Value col = minIdx(nb, nl, st[1], cIdx(nb, nl, room - 1));
        Value r = st[0];
        for (int64_t d = 0; d < (int64_t)shape.size(); ++d) {
          Value coord = arith::RemUIOp::create(
              nb, nl, arith::DivUIOp::create(nb, nl, lin, cIdx(nb, nl, strides[d])),
              cIdx(nb, nl, shape[d]));
          coord = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), coord);
          r = scatterOne(nb, nl, "none", r, ValueRange{cIdx(nb, nl, d), col},
                         coord, take);
        }
        Value next = arith::AddIOp::create(
            nb, nl, st[1],
            arith::IndexCastOp::create(
                nb, nl, nb.getIndexType(),
                arith::ExtUIOp::create(nb, nl, nb.getI64Type(), take)));
        return SmallVector<Value>{r, next};
      })[0];
}
/// Three-way comparison (-1, 0, 1 as index) of slices `a` and `b` of a
/// [outer, n, inner] tensor, lexicographic in row-major order.
Value compareSlices(OpBuilder &b, Location loc, Value x, Value sa, Value sb) {
  RankedTensorType t = typeOf(x);
  bool isFloat = isa<FloatType>(t.getElementType());
  return loopNest(
      b, loc, {t.getDimSize(0), t.getDimSize(2)}, cIdx(b, loc, 0),
      [&](OpBuilder &nb, Location nl, ValueRange oi, ValueRange st) {
        Value xa = tensor::ExtractOp::create(nb, nl, x, ValueRange{oi[0], sa, oi[1]});
        Value xb = tensor::ExtractOp::create(nb, nl, x, ValueRange{oi[0], sb, oi[1]});
        auto less = [&](Value l, Value r) -> Value {
          if (isFloat)
            return arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OLT, l, r);
          return arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, l, r);
        };
        Value here = arith::SelectOp::create(
            nb, nl, less(xa, xb), cIdx(nb, nl, -1),
            arith::SelectOp::create(nb, nl, less(xb, xa), cIdx(nb, nl, 1),
                                    cIdx(nb, nl, 0)));
        Value undecided = arith::CmpIOp::create(
            nb, nl, arith::CmpIPredicate::eq, st[0], cIdx(nb, nl, 0));
        return SmallVector<Value>{
            arith::SelectOp::create(nb, nl, undecided, here, st[0])};
      })[0];
}

/// First, for every slice, the first slice equal to it; then, per slice, its
/// group's position among the distinct slices (how many distinct slices sort
/// before it, or occur first before it), which is its inverse index, and the
/// slice's contribution to values, indices and counts. O(n^2) slice
/// comparisons.
Value lowerUnique(OpBuilder &b, UniqueOp op) {
  Location loc = op.getLoc();
  RankedTensorType in = op.getInput().getType();
  int64_t axis = op.getAxis(), n = in.getDimSize(axis),
          m = op.getValues().getType().getDimSize(axis);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (d != axis)
      (d < axis ? outer : inner) *= in.getDimSize(d);
  Type i64 = b.getI64Type();
  Value values = zeroFilled(b, loc, {outer, m, inner}, in.getElementType());
  Value indices = zeroFilled(b, loc, {m}, i64);
  Value inverse = zeroFilled(b, loc, {n}, i64);
  Value counts = zeroFilled(b, loc, {m}, i64);
  if (n > 0 && outer * inner > 0) {
    Value x = reshaped(b, loc, op.getInput(), {outer, n, inner});
    auto toI64 = [&](OpBuilder &nb, Location nl, Value v) -> Value {
      return arith::IndexCastOp::create(nb, nl, i64, v);
    };
    auto eqIdx = [&](OpBuilder &nb, Location nl, Value l, Value r) -> Value {
      return arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, l, r);
    };
    // firsts[i]: the first j <= i whose slice equals slice i.
    Value firsts = forLoop(
        b, loc, cIdx(b, loc, 0), cIdx(b, loc, n), zeroFilled(b, loc, {n}, i64),
        [&](OpBuilder &nb, Location nl, Value i, ValueRange st) {
          Value f = forLoop(
              nb, nl, cIdx(nb, nl, 0), i, i,
              [&](OpBuilder &jb, Location jl, Value j, ValueRange cur) {
                Value same = arith::AndIOp::create(
                    jb, jl,
                    eqIdx(jb, jl, compareSlices(jb, jl, x, j, i), cIdx(jb, jl, 0)),
                    eqIdx(jb, jl, cur[0], i));
                return SmallVector<Value>{
                    arith::SelectOp::create(jb, jl, same, j, cur[0])};
              })[0];
          return SmallVector<Value>{
              tensor::InsertOp::create(nb, nl, toI64(nb, nl, f), st[0], i)};
        })[0];
    bool sorted = op.getSorted();
    SmallVector<Value> r = forLoop(
        b, loc, cIdx(b, loc, 0), cIdx(b, loc, n),
        {values, indices, inverse, counts},
        [&](OpBuilder &nb, Location nl, Value i, ValueRange st) {
          Value fi = readIndex(nb, nl, firsts, i);
          Value rank = forLoop(
              nb, nl, cIdx(nb, nl, 0), cIdx(nb, nl, n), cIdx(nb, nl, 0),
              [&](OpBuilder &gb, Location gl, Value g, ValueRange cnt) {
                Value distinct = eqIdx(gb, gl, readIndex(gb, gl, firsts, g), g);
                Value before =
                    sorted ? (Value)eqIdx(gb, gl, compareSlices(gb, gl, x, g, i),
                                          cIdx(gb, gl, -1))
                           : (Value)arith::CmpIOp::create(
                                 gb, gl, arith::CmpIPredicate::slt, g, fi);
                Value counted = arith::AndIOp::create(gb, gl, distinct, before);
                return SmallVector<Value>{arith::SelectOp::create(
                    gb, gl, counted,
                    arith::AddIOp::create(gb, gl, cnt[0], cIdx(gb, gl, 1)),
                    cnt[0])};
              })[0];
          Value fits = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt,
                                             rank, cIdx(nb, nl, m));
          Value pos = minIdx(nb, nl, rank, cIdx(nb, nl, m - 1));
          Value first = arith::AndIOp::create(nb, nl, fits, eqIdx(nb, nl, fi, i));
          Value inv = tensor::InsertOp::create(nb, nl, toI64(nb, nl, rank), st[2], i);
          Value one = arith::ConstantOp::create(nb, nl, i64, nb.getI64IntegerAttr(1));
          Value cnt = scatterOne(nb, nl, "add", st[3], pos, one, fits);
          Value idx = scatterOne(nb, nl, "none", st[1], pos, toI64(nb, nl, i), first);
          Value vals = loopNest(
              nb, nl, {outer, inner}, st[0],
              [&](OpBuilder &ib, Location il, ValueRange oi, ValueRange s) {
                Value v = tensor::ExtractOp::create(ib, il, x,
                                                    ValueRange{oi[0], i, oi[1]});
                return SmallVector<Value>{scatterOne(
                    ib, il, "none", s[0], Ivs{oi[0], pos, oi[1]}, v, first)};
              })[0];
          return SmallVector<Value>{vals, idx, inv, cnt};
        });
    values = r[0];
    indices = r[1];
    inverse = r[2];
    counts = r[3];
  }
  op.getIndices().replaceAllUsesWith(indices);
  op.getInverse().replaceAllUsesWith(inverse);
  op.getCounts().replaceAllUsesWith(counts);
  return reshaped(b, loc, values, op.getValues().getType().getShape());
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
  if (auto t = dyn_cast<TopKOp>(op))
    return lowerTopK(b, t);
  if (auto r = dyn_cast<ReverseSequenceOp>(op))
    return lowerReverseSequence(b, r);
  if (auto d = dyn_cast<DetOp>(op))
    return lowerDet(b, d);
  if (auto c = dyn_cast<CompressOp>(op))
    return lowerCompress(b, c);
  if (auto n = dyn_cast<NonZeroOp>(op))
    return lowerNonZero(b, n);
  if (auto u = dyn_cast<UniqueOp>(op))
    return lowerUnique(b, u);
  return Value();
}
