//===- LowerSuppression.cpp - non-maximum suppression -----------*- C++ -*-===//
//
// kiln.non_max_suppression as scalar scf loops over tensors (ScalarLoops.h),
// the way ONNX Runtime computes it. Per batch entry and class, the indices of
// the boxes whose score passes the threshold are listed in ascending order
// and made a binary heap by descending score (equal scores: the lower index
// first, the order of a stable sort); taking boxes off it best first, a box
// is kept unless a box kept before it in the class overlaps it by IoU above
// the threshold, until the class has min(boxes, max_per_class) or no box is
// left. That is O(m + taken * (log m + kept)) for m boxes passing the score
// threshold, and a detector takes few more than it keeps. The extents and
// areas of the class's kept boxes are kept beside the rows, one row of a
// [5, boxes] tensor each, so the comparison with every kept box reads them
// contiguously (it vectorizes without gathers) instead of gathering each
// kept box's corners again. torchvision's batched NMS is one class of
// thousands of boxes of which most are kept: this loop is its whole cost.
// The rows go to a tensor sized at the op's bound (batches * classes *
// min(boxes, max)), and the result is its first `count` rows, the count
// clamped to the bound for the arena (or the first k rows of a declared
// static [k, 3], which a guard on the count checks).
//===----------------------------------------------------------------------===//
#include "Lowering.h"
#include "ScalarLoops.h"

#include "mlir/IR/Matchers.h"

#include <limits>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::loops;

namespace {
/// One box as its extent on each axis, and its area.
struct Extent {
  Value xMin, xMax, yMin, yMax, area;
};

/// The box's area from its extents.
Value areaOf(OpBuilder &b, Location loc, Value xMin, Value xMax, Value yMin,
             Value yMax) {
  return arith::MulFOp::create(b, loc,
                               arith::SubFOp::create(b, loc, xMax, xMin),
                               arith::SubFOp::create(b, loc, yMax, yMin));
}

/// Extent with its area from the four extents.
Extent withArea(OpBuilder &b, Location loc, Value xMin, Value xMax, Value yMin,
                Value yMax) {
  return {xMin, xMax, yMin, yMax, areaOf(b, loc, xMin, xMax, yMin, yMax)};
}

/// Box `i` of batch entry `bi` as its extents: corners `[y1, x1, y2, x2]`
/// in any order, or `[x_center, y_center, width, height]`.
Extent extentOf(OpBuilder &b, Location loc, Value boxes, Value bi, Value i,
                bool center) {
  Value c[4];
  for (int64_t k = 0; k < 4; ++k)
    c[k] = tensor::ExtractOp::create(b, loc, boxes,
                                     ValueRange{bi, i, cIdx(b, loc, k)});
  if (center) {
    Value half = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.5f));
    Value w = arith::MulFOp::create(b, loc, c[2], half);
    Value h = arith::MulFOp::create(b, loc, c[3], half);
    return withArea(b, loc, arith::SubFOp::create(b, loc, c[0], w),
                    arith::AddFOp::create(b, loc, c[0], w),
                    arith::SubFOp::create(b, loc, c[1], h),
                    arith::AddFOp::create(b, loc, c[1], h));
  }
  return withArea(b, loc, arith::MinimumFOp::create(b, loc, c[1], c[3]),
                  arith::MaximumFOp::create(b, loc, c[1], c[3]),
                  arith::MinimumFOp::create(b, loc, c[0], c[2]),
                  arith::MaximumFOp::create(b, loc, c[0], c[2]));
}

/// The fields of Extent in the order of the kept boxes' tensor's rows.
constexpr int64_t kExtentFields = 5;

/// Writes `e` into column `at` of the [5, n] tensor `kept`.
Value storeExtent(OpBuilder &b, Location loc, const Extent &e, Value kept,
                  Value at) {
  Value fields[kExtentFields] = {e.xMin, e.xMax, e.yMin, e.yMax, e.area};
  for (int64_t f = 0; f < kExtentFields; ++f)
    kept = tensor::InsertOp::create(b, loc, fields[f], kept,
                                    ValueRange{cIdx(b, loc, f), at});
  return kept;
}

/// Column `at` of the [5, n] tensor `kept`.
Extent loadExtent(OpBuilder &b, Location loc, Value kept, Value at) {
  Value fields[kExtentFields];
  for (int64_t f = 0; f < kExtentFields; ++f)
    fields[f] = tensor::ExtractOp::create(b, loc, kept,
                                          ValueRange{cIdx(b, loc, f), at});
  return {fields[0], fields[1], fields[2], fields[3], fields[4]};
}

/// Whether the intersection over union of `p` and `q` is strictly greater
/// than `threshold`. Boxes that do not intersect, or with no area, never
/// suppress each other.
Value overlapsTooMuch(OpBuilder &b, Location loc, const Extent &p,
                      const Extent &q, Value threshold) {
  auto gt = [&](Value x, Value y) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, y);
  };
  auto both = [&](Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); };
  auto size = [&](Value lo, Value hi) {
    return arith::SubFOp::create(b, loc, hi, lo);
  };
  Value ixMin = arith::MaximumFOp::create(b, loc, p.xMin, q.xMin);
  Value ixMax = arith::MinimumFOp::create(b, loc, p.xMax, q.xMax);
  Value iyMin = arith::MaximumFOp::create(b, loc, p.yMin, q.yMin);
  Value iyMax = arith::MinimumFOp::create(b, loc, p.yMax, q.yMax);
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  Value inter = arith::MulFOp::create(b, loc, size(ixMin, ixMax),
                                      size(iyMin, iyMax));
  Value areaP = p.area, areaQ = q.area;
  Value uni = arith::SubFOp::create(
      b, loc, arith::AddFOp::create(b, loc, areaP, areaQ), inter);
  Value valid = both(both(gt(ixMax, ixMin), gt(iyMax, iyMin)),
                     both(both(gt(inter, zero), gt(areaP, zero)),
                          both(gt(areaQ, zero), gt(uni, zero))));
  Value iou = arith::DivFOp::create(b, loc, inter, uni);
  return both(valid, gt(iou, threshold));
}

/// Kept boxes compared at a time: the comparison stops after the first
/// block with a box that suppresses the candidate. A block is a few
/// vectors' worth, so the vectorized loop keeps its speed where no box
/// suppresses (every block is read), and a box suppressed by one of the
/// first kept boxes, as most are in a trained detector's clusters, costs
/// one block.
constexpr int64_t kSuppressionBlock = 64;

/// Whether one of the first `here` boxes of `kept` overlaps `e` too much.
Value suppressedBy(OpBuilder &b, Location loc, Value kept, Value here,
                   const Extent &e, Value threshold) {
  Type idx = b.getIndexType(), i1 = b.getI1Type();
  auto loop = scf::WhileOp::create(
      b, loc, TypeRange{idx, i1},
      ValueRange{cIdx(b, loc, 0), arith::ConstantIntOp::create(b, loc, 0, 1)},
      [&](OpBuilder &wb, Location wl, ValueRange st) {
        Value more = arith::CmpIOp::create(wb, wl, arith::CmpIPredicate::ult,
                                           st[0], here);
        Value go = arith::AndIOp::create(
            wb, wl, more,
            arith::XOrIOp::create(wb, wl, st[1],
                                  arith::ConstantIntOp::create(wb, wl, 1, 1)));
        scf::ConditionOp::create(wb, wl, go, st);
      },
      [&](OpBuilder &bb, Location bl, ValueRange st) {
        Value end = arith::MinUIOp::create(
            bb, bl,
            arith::AddIOp::create(bb, bl, st[0],
                                  cIdx(bb, bl, kSuppressionBlock)),
            here);
        Value hit = forLoop(
            bb, bl, st[0], end, {arith::ConstantIntOp::create(bb, bl, 0, 1)},
            [&](OpBuilder &qb, Location ql, Value q, ValueRange hv) {
              Value o = overlapsTooMuch(qb, ql, loadExtent(qb, ql, kept, q), e,
                                        threshold);
              return SmallVector<Value>{arith::OrIOp::create(qb, ql, hv[0], o)};
            })[0];
        scf::YieldOp::create(bb, bl, ValueRange{end, hit});
      });
  return loop.getResult(1);
}

/// The one element of a one-element tensor.
Value onlyElement(OpBuilder &b, Location loc, Value t) {
  SmallVector<Value> at(typeOf(t).getRank(), cIdx(b, loc, 0));
  return tensor::ExtractOp::create(b, loc, t, at);
}

using Key = function_ref<Value(OpBuilder &, Location, Value)>;

/// Whether box index `x` (i64) comes before `y`: a higher score, or an
/// equal one and a lower index (the order of a stable descending sort).
Value before(OpBuilder &b, Location loc, Key key, Value x, Value y) {
  Value kx = key(b, loc, x), ky = key(b, loc, y);
  Value tie = arith::AndIOp::create(
      b, loc, arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, kx, ky),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y));
  return arith::OrIOp::create(
      b, loc, arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, kx, ky),
      tie);
}

/// Moves entry `at` of the binary heap `heap` (its first `size` entries,
/// the best at 0) down until neither child comes before it.
Value siftDown(OpBuilder &b, Location loc, Key key, Value heap, Value at,
               Value size) {
  auto ult = [](OpBuilder &nb, Location nl, Value x, Value y) -> Value {
    return arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ult, x, y);
  };
  Value one = cIdx(b, loc, 1);
  // Reads are clamped into the heap; those past it are not used.
  Value lastPlace = arith::SelectOp::create(
      b, loc, ult(b, loc, cIdx(b, loc, 0), size),
      arith::SubIOp::create(b, loc, size, one), cIdx(b, loc, 0));
  auto read = [&](OpBuilder &nb, Location nl, Value h, Value i) -> Value {
    return tensor::ExtractOp::create(
        nb, nl, h, ValueRange{arith::MinUIOp::create(nb, nl, i, lastPlace)});
  };
  Type idx = b.getIndexType();
  auto loop = scf::WhileOp::create(
      b, loc, TypeRange{heap.getType(), idx, idx}, ValueRange{heap, at, at},
      [&](OpBuilder &nb, Location nl, ValueRange st) {
        Value h = st[0], i = st[1];
        Value l = arith::AddIOp::create(
            nb, nl, arith::AddIOp::create(nb, nl, i, i), cIdx(nb, nl, 1));
        Value r = arith::AddIOp::create(nb, nl, l, cIdx(nb, nl, 1));
        Value takeRight = arith::AndIOp::create(
            nb, nl, ult(nb, nl, r, size),
            before(nb, nl, key, read(nb, nl, h, r), read(nb, nl, h, l)));
        Value c = arith::SelectOp::create(nb, nl, takeRight, r, l);
        Value go = arith::AndIOp::create(
            nb, nl, ult(nb, nl, l, size),
            before(nb, nl, key, read(nb, nl, h, c), read(nb, nl, h, i)));
        scf::ConditionOp::create(nb, nl, go, ValueRange{h, i, c});
      },
      [&](OpBuilder &nb, Location nl, ValueRange st) {
        Value h = st[0], i = st[1], c = st[2];
        Value vi = tensor::ExtractOp::create(nb, nl, h, i);
        Value vc = tensor::ExtractOp::create(nb, nl, h, c);
        h = tensor::InsertOp::create(nb, nl, vc, h, i);
        h = tensor::InsertOp::create(nb, nl, vi, h, c);
        scf::YieldOp::create(nb, nl, ValueRange{h, c, c});
      });
  return loop.getResult(0);
}

/// The first `size` entries of `list` arranged as a binary heap, best
/// first (Floyd's construction, bottom-up).
Value heapify(OpBuilder &b, Location loc, Key key, Value list, Value size) {
  Value half = arith::DivUIOp::create(b, loc, size, cIdx(b, loc, 2));
  return forLoop(b, loc, cIdx(b, loc, 0), half, {list},
                 [&](OpBuilder &nb, Location nl, Value t, ValueRange h) {
                   Value at = arith::SubIOp::create(
                       nb, nl, arith::SubIOp::create(nb, nl, half, t),
                       cIdx(nb, nl, 1));
                   return SmallVector<Value>{
                       siftDown(nb, nl, key, h[0], at, size)};
                 })[0];
}

/// The largest number of boxes a class keeps, when max_per_class is a
/// compile-time constant.
std::optional<int64_t> constantMax(NonMaxSuppressionOp op) {
  DenseIntElementsAttr c;
  if (!matchPattern(op.getMaxPerClass(), m_Constant(&c)) ||
      c.getNumElements() != 1)
    return std::nullopt;
  return std::max<int64_t>((*c.value_begin<APInt>()).getSExtValue(), 0);
}
} // namespace

Value mlir::kiln::lowerNonMaxSuppression(OpBuilder &b, NonMaxSuppressionOp op) {
  Location loc = op.getLoc();
  Value boxes = op.getBoxes(), scores = op.getScores();
  bool center = op.getCenterPointBox();
  auto dimOf = [&](Value v, int64_t d) -> Value {
    if (typeOf(v).isDynamicDim(d))
      return tensor::DimOp::create(b, loc, v, d);
    return cIdx(b, loc, typeOf(v).getDimSize(d));
  };
  RankedTensorType st = typeOf(scores);
  int64_t batches = st.getDimSize(0), classes = st.getDimSize(1),
          n = typeOf(boxes).getDimSize(1);
  Value nV = dimOf(boxes, 1);
  // Steps per class: min(boxes, max_per_class), max_per_class clamped to 0.
  Value maxRaw = onlyElement(b, loc, op.getMaxPerClass());
  maxRaw = arith::MaxSIOp::create(
      b, loc, maxRaw, arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0)));
  Value steps = arith::MinUIOp::create(
      b, loc, arith::IndexCastOp::create(b, loc, b.getIndexType(), maxRaw), nV);
  Value iou = onlyElement(b, loc, op.getIouThreshold());
  Value threshold =
      op.getScoreThreshold() ? onlyElement(b, loc, op.getScoreThreshold()) : Value();

  // The bound: batches * classes * min(boxes, max) rows.
  std::optional<int64_t> maxConst = constantMax(op);
  int64_t bound = ShapedType::kDynamic;
  if (!ShapedType::isDynamic(batches) && !ShapedType::isDynamic(classes) &&
      !ShapedType::isDynamic(n))
    bound = batches * classes * (maxConst ? std::min(n, *maxConst) : n);
  Value boundV;
  if (ShapedType::isDynamic(bound)) {
    Value perClass = maxConst ? arith::MinUIOp::create(
                                    b, loc, nV, cIdx(b, loc, *maxConst))
                              : nV;
    boundV = arith::MulIOp::create(
        b, loc, arith::MulIOp::create(b, loc, dimOf(scores, 0), dimOf(scores, 1)),
        perClass);
  } else {
    boundV = cIdx(b, loc, bound);
  }
  // A declared static result [k, 3] (checked by a guard on the count) is
  // the first k rows, so the rows written have room for k.
  RankedTensorType resultType = op.getResult().getType();
  int64_t k = resultType.getDimSize(0);
  int64_t room = bound;
  Value roomV = boundV;
  if (!ShapedType::isDynamic(k)) {
    if (!ShapedType::isDynamic(bound))
      room = std::max(bound, k);
    else
      roomV = arith::MaxUIOp::create(b, loc, boundV, cIdx(b, loc, k));
  }
  Type i64 = b.getI64Type();
  Value rows = emptyTensor(b, loc, {room, 3}, i64,
                           ShapedType::isDynamic(room) ? ValueRange{roomV}
                                                       : ValueRange{});
  // The running boxes of the class being processed, in ascending order:
  // their indices, the first `live` entries of `cand`.
  Value cand = emptyTensor(b, loc, {n}, i64,
                           ShapedType::isDynamic(n) ? ValueRange{nV}
                                                    : ValueRange{});
  // The extents and areas of the class's kept boxes, a row a field.
  Value keptBoxes =
      emptyTensor(b, loc, {kExtentFields, n}, b.getF32Type(),
                  ShapedType::isDynamic(n) ? ValueRange{nV} : ValueRange{});
  SmallVector<Value> classDyn;
  if (ShapedType::isDynamic(batches))
    classDyn.push_back(dimOf(scores, 0));
  if (ShapedType::isDynamic(classes))
    classDyn.push_back(dimOf(scores, 1));
  auto toIdx = [](OpBuilder &nb, Location nl, Value v) -> Value {
    return arith::IndexCastOp::create(nb, nl, nb.getIndexType(), v);
  };
  auto toI64 = [&](OpBuilder &nb, Location nl, Value v) -> Value {
    return arith::IndexCastOp::create(nb, nl, i64, v);
  };
  auto plus = [](OpBuilder &nb, Location nl, Value v, Value flag) -> Value {
    return arith::AddIOp::create(
        nb, nl, v, arith::IndexCastUIOp::create(nb, nl, nb.getIndexType(), flag));
  };
  SmallVector<Value> r = loopNest(
      b, loc, {batches, classes}, {rows, cand, cIdx(b, loc, 0), keptBoxes},
      [&](OpBuilder &nb, Location nl, ValueRange bc, ValueRange state) {
        Value bi = bc[0], ci = bc[1];
        auto scoreAt = [&](OpBuilder &sb, Location sl, Value j) -> Value {
          return tensor::ExtractOp::create(sb, sl, scores,
                                           ValueRange{bi, ci, j});
        };
        // The boxes whose score passes the threshold start running (each
        // index is written at the next free place, which only a passing
        // one then takes; that place is never past the index).
        SmallVector<Value> start = forLoop(
            nb, nl, cIdx(nb, nl, 0), nV, {state[1], cIdx(nb, nl, 0)},
            [&](OpBuilder &jb, Location jl, Value j, ValueRange st) {
              Value c = tensor::InsertOp::create(jb, jl, toI64(jb, jl, j),
                                                 st[0], st[1]);
              Value pass = arith::ConstantIntOp::create(jb, jl, 1, 1);
              if (threshold)
                pass = arith::CmpFOp::create(jb, jl, arith::CmpFPredicate::OGT,
                                             scoreAt(jb, jl, j), threshold);
              return SmallVector<Value>{c, plus(jb, jl, st[1], pass)};
            });
        auto key = [&](OpBuilder &sb, Location sl, Value j) {
          return scoreAt(sb, sl, toIdx(sb, sl, j));
        };
        Value heap = heapify(nb, nl, key, start[0], start[1]);
        // Best first, a box is kept unless a box kept before it in this
        // class overlaps it too much, until the class has `steps` boxes or
        // none is left. The class's kept boxes are the last `here` rows, and
        // the first `here` columns of `kept`.
        Type idx = nb.getIndexType();
        auto walk = scf::WhileOp::create(
            nb, nl,
            TypeRange{heap.getType(), idx, rows.getType(), idx, idx,
                      keptBoxes.getType()},
            ValueRange{heap, start[1], state[0], state[2], cIdx(nb, nl, 0),
                       state[3]},
            [&](OpBuilder &wb, Location wl, ValueRange s) {
              Value go = arith::AndIOp::create(
                  wb, wl,
                  arith::CmpIOp::create(wb, wl, arith::CmpIPredicate::ugt, s[1],
                                        cIdx(wb, wl, 0)),
                  arith::CmpIOp::create(wb, wl, arith::CmpIPredicate::ult, s[4],
                                        steps));
              scf::ConditionOp::create(wb, wl, go, s);
            },
            [&](OpBuilder &kb, Location kl, ValueRange s) {
              // Take the best off the heap: the last entry moves to the top.
              Value size = arith::SubIOp::create(kb, kl, s[1], cIdx(kb, kl, 1));
              Value j = readIndex(kb, kl, s[0], cIdx(kb, kl, 0));
              Value h = tensor::InsertOp::create(
                  kb, kl, tensor::ExtractOp::create(kb, kl, s[0], size), s[0],
                  cIdx(kb, kl, 0));
              h = siftDown(kb, kl, key, h, cIdx(kb, kl, 0), size);
              Extent e = extentOf(kb, kl, boxes, bi, j, center);
              Value hit = suppressedBy(kb, kl, s[5], s[4], e, iou);
              Value keep = arith::XOrIOp::create(
                  kb, kl, hit, arith::ConstantIntOp::create(kb, kl, 1, 1));
              // Row `count` is free (fewer than `steps` kept here), so it is
              // written either way and counted when kept; so is column
              // `here` of the kept boxes.
              Value keptNow = storeExtent(kb, kl, e, s[5], s[4]);
              Value rowsNow = s[2];
              Value fields[3] = {bi, ci, j};
              for (int64_t f = 0; f < 3; ++f)
                rowsNow = tensor::InsertOp::create(
                    kb, kl, toI64(kb, kl, fields[f]), rowsNow,
                    ValueRange{s[3], cIdx(kb, kl, f)});
              scf::YieldOp::create(
                  kb, kl,
                  ValueRange{h, size, rowsNow, plus(kb, kl, s[3], keep),
                             plus(kb, kl, s[4], keep), keptNow});
            });
        return SmallVector<Value>{walk.getResult(2), walk.getResult(0),
                                  walk.getResult(3), walk.getResult(5)};
      },
      classDyn);
  Value count = arith::MinUIOp::create(b, loc, r[2], boundV);
  op.getCount().replaceAllUsesWith(tensor::FromElementsOp::create(
      b, loc, op.getCount().getType(),
      ValueRange{arith::IndexCastOp::create(b, loc, i64, count)}));
  OpFoldResult length = ShapedType::isDynamic(k) ? OpFoldResult(count)
                                                 : OpFoldResult(b.getIndexAttr(k));
  Value head = tensor::ExtractSliceOp::create(
      b, loc, r[0], ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{length, b.getIndexAttr(3)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
  if (head.getType() != resultType)
    head = tensor::CastOp::create(b, loc, resultType, head);
  return head;
}
