//===- LowerSelect.cpp - top-k and data-dependent selection ----*- C++ -*-===//
//
// TopK, Compress, NonZero and Unique as scalar scf.for loops over tensors
// (ScalarLoops.h). Where the number of elements selected is known only at
// run time (a run-time k, or no declared output shape: docs/shapes.md,
// "Sizes that depend on the data"), a first pass counts, the count is
// clamped to the bound the op implies (arith.minui, which the arena's
// bounds read), and the result has that many elements.
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"
#include "ScalarLoops.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::loops;

namespace {
/// Per row (every position outside the axis), an insertion into a sorted
/// list of the best k so far: an element goes after every entry at least as
/// good as it (so ties keep the lower index first), entries behind it move
/// down one, and the last falls off.
Value lowerTopK(OpBuilder &b, TopKOp op) {
  Location loc = op.getLoc();
  Value input = op.getInput();
  RankedTensorType type = op.getInput().getType();
  int64_t axis = op.getAxis(), k = op.getK(), n = type.getDimSize(axis);
  // The input viewed as [outer, n, inner]; at symbolic sizes each of the
  // three may be dynamic, sized by the product of its dimensions.
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d == axis)
      continue;
    int64_t &part = d < axis ? outer : inner;
    part = type.isDynamicDim(d) || ShapedType::isDynamic(part)
               ? ShapedType::kDynamic
               : part * type.getDimSize(d);
  }
  auto product = [&](int64_t from, int64_t to) -> Value {
    Value p = cIdx(b, loc, 1);
    for (int64_t d = from; d < to; ++d)
      p = arith::MulIOp::create(b, loc, p,
                                tensor::DimOp::create(b, loc, input, d));
    return p;
  };
  Value outerV = ShapedType::isDynamic(outer) ? product(0, axis) : Value();
  Value innerV = ShapedType::isDynamic(inner)
                     ? product(axis + 1, type.getRank())
                     : Value();
  Value nV = ShapedType::isDynamic(n) ? tensor::DimOp::create(b, loc, input, axis)
                                      : Value();
  auto nAt = [&](OpBuilder &nb, Location nl) {
    return nV ? nV : cIdx(nb, nl, n);
  };
  // A run-time k (the guard before the op checked it is in [0, n]; the
  // clamp bounds the lists for the arena) or the constant one: `kPlus(d)`
  // is k + d at the builder's point.
  Value kRun;
  if (Value ks = op.getKSize())
    kRun = arith::MinUIOp::create(b, loc, ks, nAt(b, loc));
  auto kPlus = [&](OpBuilder &nb, Location nl, int64_t d) -> Value {
    if (!kRun)
      return cIdx(nb, nl, k + d);
    return d ? (Value)arith::AddIOp::create(nb, nl, kRun, cIdx(nb, nl, d))
             : kRun;
  };
  auto present = [](ArrayRef<Value> vs) {
    SmallVector<Value> r;
    for (Value v : vs)
      if (v)
        r.push_back(v);
    return r;
  };
  SmallVector<Value> listDyn = present({outerV, kRun, innerV});
  // Unsigned elements are compared unsigned on their signless bits.
  bool isUnsigned = isUnsignedInt(type);
  Type elt = signlessType(type.getElementType()), i64 = b.getI64Type();
  int64_t listLen = kRun ? ShapedType::kDynamic : k;
  Value values = zeroFilled(b, loc, {outer, listLen, inner}, elt, listDyn);
  Value indices = zeroFilled(b, loc, {outer, listLen, inner}, i64, listDyn);
  bool empty = !ShapedType::isDynamic(outer) &&
               !ShapedType::isDynamic(inner) && outer * inner == 0;
  if ((kRun || k > 0) && !empty) {
    Value x = reshaped(b, loc, asSignless(b, loc, input), {outer, n, inner},
                       present({outerV, nV, innerV}));
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
          // A run-time k of 0 keeps nothing: no element is visited.
          Value steps = nAt(nb, nl);
          if (kRun)
            steps = arith::SelectOp::create(
                nb, nl,
                arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, kRun,
                                      cIdx(nb, nl, 0)),
                cIdx(nb, nl, 0), steps);
          return forLoop(
              nb, nl, cIdx(nb, nl, 0), steps, lists,
              [&](OpBuilder &ib, Location il, Value i, ValueRange vi) {
                Value V = vi[0], I = vi[1];
                Value v = tensor::ExtractOp::create(ib, il, x, ValueRange{o, i, in});
                Value filled = minIdx(ib, il, i, kPlus(ib, il, 0));
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
                Value last = minIdx(ib, il, filled, kPlus(ib, il, -1));
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
                    ib, il, arith::CmpIPredicate::slt, p, kPlus(ib, il, 0));
                Value at = minIdx(ib, il, p, kPlus(ib, il, -1));
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
        },
        present({outerV, innerV}));
    values = r[0];
    indices = r[1];
  }
  RankedTensorType result = op.getValues().getType();
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < result.getRank(); ++d)
    if (result.isDynamicDim(d))
      dyn.push_back(d == axis ? kRun
                              : (Value)tensor::DimOp::create(b, loc, input, d));
  ArrayRef<int64_t> shape = result.getShape();
  op.getIndices().replaceAllUsesWith(reshaped(b, loc, indices, shape, dyn));
  return reshaped(b, loc, values, shape, dyn);
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

/// Whether the scalar `v` is not zero (a float NaN is not zero).
Value isNonZero(OpBuilder &b, Location loc, Value v) {
  Type elt = v.getType();
  Value zero = arith::ConstantOp::create(b, loc, elt, b.getZeroAttr(elt));
  if (isa<FloatType>(elt))
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v, zero);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, zero);
}

/// Compress whose count is known only at run time (a dynamic size along
/// the axis): one pass counts the true entries among the first
/// min(axis, condition) of the condition, a second copies those slices. The
/// count is clamped to that length, which bounds the result for the arena.
Value lowerCompressCounted(OpBuilder &b, CompressOp op) {
  Location loc = op.getLoc();
  Value x = op.getInput(), cond = op.getCondition();
  RankedTensorType in = typeOf(x);
  int64_t axis = op.getAxis();
  auto dimOf = [&](Value v, int64_t d) -> Value {
    if (typeOf(v).isDynamicDim(d))
      return tensor::DimOp::create(b, loc, v, d);
    return cIdx(b, loc, typeOf(v).getDimSize(d));
  };
  Value steps = arith::MinUIOp::create(b, loc, dimOf(x, axis), dimOf(cond, 0));
  Value zero = cIdx(b, loc, 0), one = cIdx(b, loc, 1);
  auto isTrue = [&](OpBuilder &nb, Location nl, Value i) {
    return isNonZero(nb, nl, tensor::ExtractOp::create(nb, nl, cond, i));
  };
  Value count =
      forLoop(b, loc, zero, steps, {zero},
              [&](OpBuilder &nb, Location nl, Value i, ValueRange st) {
                Value t = arith::IndexCastUIOp::create(
                    nb, nl, nb.getIndexType(), isTrue(nb, nl, i));
                return SmallVector<Value>{
                    arith::AddIOp::create(nb, nl, st[0], t)};
              })[0];
  count = arith::MinUIOp::create(b, loc, count, steps);
  SmallVector<Value> dyn, lbs, ubs, strides;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (d == axis)
      dyn.push_back(count);
    else if (in.isDynamicDim(d))
      dyn.push_back(dimOf(x, d));
    lbs.push_back(zero);
    ubs.push_back(d == axis ? one : dimOf(x, d));
    strides.push_back(one);
  }
  Value out = emptyTensor(b, loc, op.getType().getShape(),
                          in.getElementType(), dyn);
  return forLoop(
      b, loc, zero, steps, {out, zero},
      [&](OpBuilder &nb, Location nl, Value i, ValueRange st) {
        auto ifOp = scf::IfOp::create(
            nb, nl, isTrue(nb, nl, i),
            [&](OpBuilder &tb, Location tl) {
              Value r = scf::buildLoopNest(
                            tb, tl, lbs, ubs, strides, st[0],
                            [&](OpBuilder &ib, Location il, ValueRange ivs,
                                ValueRange s) -> scf::ValueVector {
                              Ivs from(ivs), to(ivs);
                              from[axis] = i;
                              to[axis] = st[1];
                              Value v =
                                  tensor::ExtractOp::create(ib, il, x, from);
                              return {tensor::InsertOp::create(ib, il, v, s[0],
                                                               to)};
                            })
                            .results[0];
              scf::YieldOp::create(
                  tb, tl,
                  ValueRange{r, arith::AddIOp::create(tb, tl, st[1],
                                                      cIdx(tb, tl, 1))});
            },
            [&](OpBuilder &eb, Location el) {
              scf::YieldOp::create(eb, el, ValueRange{st[0], st[1]});
            });
        return SmallVector<Value>{ifOp.getResult(0), ifOp.getResult(1)};
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

/// NonZero whose count is known only at run time (a `[rank, ?]` result):
/// one pass counts the non-zero elements, a second writes their
/// coordinates. The count is clamped to the input's element count, which
/// the arena's bounds then see as the result's largest size.
Value lowerNonZeroCounted(OpBuilder &b, NonZeroOp op) {
  Location loc = op.getLoc();
  Value x = op.getInput();
  RankedTensorType in = typeOf(x);
  SmallVector<Value> lbs, ubs, steps;
  Value total = cIdx(b, loc, 1);
  for (int64_t d = 0; d < in.getRank(); ++d) {
    Value n = in.isDynamicDim(d) ? (Value)tensor::DimOp::create(b, loc, x, d)
                                 : cIdx(b, loc, in.getDimSize(d));
    lbs.push_back(cIdx(b, loc, 0));
    ubs.push_back(n);
    steps.push_back(cIdx(b, loc, 1));
    total = arith::MulIOp::create(b, loc, total, n);
  }
  auto nest = [&](Value init, auto body) {
    return scf::buildLoopNest(
               b, loc, lbs, ubs, steps, init,
               [&](OpBuilder &nb, Location nl, ValueRange ivs,
                   ValueRange args) -> scf::ValueVector {
                 Value v = tensor::ExtractOp::create(nb, nl, x, ivs);
                 return {body(nb, nl, ivs, isNonZero(nb, nl, v), args[0])};
               })
        .results;
  };
  auto plusOne = [](OpBuilder &nb, Location nl, Value nz, Value c) -> Value {
    return arith::AddIOp::create(
        nb, nl, c,
        arith::IndexCastUIOp::create(nb, nl, nb.getIndexType(), nz));
  };
  Value count = nest(cIdx(b, loc, 0), [&](OpBuilder &nb, Location nl,
                                          ValueRange, Value nz, Value c) {
    return plusOne(nb, nl, nz, c);
  })[0];
  count = arith::MinUIOp::create(b, loc, count, total);
  Value out = emptyTensor(b, loc, op.getType().getShape(), b.getI64Type(),
                          ValueRange{count});
  // The coordinates go to column `col` of the result (carried in a second
  // loop nest as the tensor and its next free column).
  SmallVector<Value> init{out, cIdx(b, loc, 0)};
  scf::LoopNest writes = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, init,
      [&](OpBuilder &nb, Location nl, ValueRange ivs,
          ValueRange args) -> scf::ValueVector {
        Value v = tensor::ExtractOp::create(nb, nl, x, ivs);
        Value nz = isNonZero(nb, nl, v);
        auto ifOp = scf::IfOp::create(
            nb, nl, nz,
            [&](OpBuilder &tb, Location tl) {
              Value r = args[0];
              for (auto [d, iv] : llvm::enumerate(ivs)) {
                Value c = arith::IndexCastOp::create(tb, tl, tb.getI64Type(), iv);
                r = tensor::InsertOp::create(
                    tb, tl, c, r, ValueRange{cIdx(tb, tl, d), args[1]});
              }
              if (ivs.empty()) // a scalar's coordinate is [0]
                r = tensor::InsertOp::create(
                    tb, tl,
                    arith::ConstantOp::create(tb, tl, tb.getI64IntegerAttr(0)),
                    r, ValueRange{cIdx(tb, tl, 0), args[1]});
              scf::YieldOp::create(tb, tl, r);
            },
            [&](OpBuilder &eb, Location el) {
              scf::YieldOp::create(eb, el, args[0]);
            });
        return {ifOp.getResult(0), plusOne(nb, nl, nz, args[1])};
      });
  return writes.results[0];
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
  // A number of distinct slices known only at run time: the lists have
  // room for all n, and are cut to the count at the end.
  bool counted = ShapedType::isDynamic(m);
  if (counted)
    m = n;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (d != axis)
      (d < axis ? outer : inner) *= in.getDimSize(d);
  Type i64 = b.getI64Type();
  Value values = zeroFilled(b, loc, {outer, m, inner}, in.getElementType());
  Value indices = zeroFilled(b, loc, {m}, i64);
  Value inverse = zeroFilled(b, loc, {n}, i64);
  Value counts = zeroFilled(b, loc, {m}, i64);
  // Counted, empty slices still count as one distinct value.
  if (n > 0 && (counted || outer * inner > 0)) {
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
    if (counted) {
      // The distinct slices: those that are their own first occurrence.
      Value distinct = forLoop(
          b, loc, cIdx(b, loc, 0), cIdx(b, loc, n), cIdx(b, loc, 0),
          [&](OpBuilder &nb, Location nl, Value i, ValueRange st) {
            Value own = eqIdx(nb, nl, readIndex(nb, nl, firsts, i), i);
            return SmallVector<Value>{arith::AddIOp::create(
                nb, nl, st[0],
                arith::IndexCastUIOp::create(nb, nl, nb.getIndexType(), own))};
          })[0];
      Value count = arith::MinUIOp::create(b, loc, distinct, cIdx(b, loc, n));
      auto head = [&](Value v, int64_t d) -> Value {
        RankedTensorType t = typeOf(v);
        SmallVector<OpFoldResult> offsets(t.getRank(), b.getIndexAttr(0)),
            sizes, strides(t.getRank(), b.getIndexAttr(1));
        for (int64_t i = 0; i < t.getRank(); ++i)
          sizes.push_back(i == d ? OpFoldResult(count)
                                 : b.getIndexAttr(t.getDimSize(i)));
        return tensor::ExtractSliceOp::create(b, loc, v, offsets, sizes,
                                              strides);
      };
      values = head(values, 1);
      indices = head(indices, 0);
      counts = head(counts, 0);
    }
  } else if (counted) {
    // No slices: no distinct values.
    auto none = [&](Value v, int64_t d) -> Value {
      RankedTensorType t = typeOf(v);
      SmallVector<OpFoldResult> offsets(t.getRank(), b.getIndexAttr(0)),
          sizes, strides(t.getRank(), b.getIndexAttr(1));
      for (int64_t i = 0; i < t.getRank(); ++i)
        sizes.push_back(b.getIndexAttr(i == d ? 0 : t.getDimSize(i)));
      return tensor::CastOp::create(
          b, loc,
          RankedTensorType::get(
              [&] {
                SmallVector<int64_t> shape(t.getShape());
                shape[d] = ShapedType::kDynamic;
                return shape;
              }(),
              t.getElementType()),
          tensor::ExtractSliceOp::create(b, loc, v, offsets, sizes, strides));
    };
    values = none(values, 1);
    indices = none(indices, 0);
    counts = none(counts, 0);
  }
  op.getIndices().replaceAllUsesWith(indices);
  op.getInverse().replaceAllUsesWith(inverse);
  op.getCounts().replaceAllUsesWith(counts);
  SmallVector<Value> dyn;
  if (counted)
    dyn.push_back(tensor::DimOp::create(b, loc, values, 1));
  return reshaped(b, loc, values, op.getValues().getType().getShape(), dyn);
}
} // namespace

FailureOr<Value> mlir::kiln::lowerSelect(OpBuilder &b, Operation *op) {
  if (auto t = dyn_cast<TopKOp>(op))
    return lowerTopK(b, t);
  if (auto c = dyn_cast<CompressOp>(op))
    return c.getType().hasStaticShape() ? lowerCompress(b, c)
                                        : lowerCompressCounted(b, c);
  if (auto n = dyn_cast<NonZeroOp>(op)) {
    if (n.getInput().getType().hasStaticShape() &&
        n.getType().hasStaticShape())
      return lowerNonZero(b, n);
    // A declared count (checked by a guard) on a symbolic input.
    Value r = lowerNonZeroCounted(b, n);
    if (r.getType() != n.getType())
      r = tensor::CastOp::create(b, n.getLoc(), n.getType(), r);
    return r;
  }
  if (auto u = dyn_cast<UniqueOp>(op))
    return lowerUnique(b, u);
  if (auto s = dyn_cast<NonMaxSuppressionOp>(op))
    return lowerNonMaxSuppression(b, s);
  return Value();
}
