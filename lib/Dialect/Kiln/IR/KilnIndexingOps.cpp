//===- KilnIndexingOps.cpp - shape rules of indexing and scan ops -*- C++
//-*-===//
//
// Shape rules (inferReturnTypes) and verifiers of the scatter, gather_nd,
// cumsum, top_k, reverse_sequence, det, compress, non_zero, unique and
// random ops.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "OpHelpers.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::kiln;

using namespace mlir::kiln::detail;

namespace {
/// Dimensions agree unless one of them is unknown.
bool sameDim(int64_t a, int64_t b) { return a == kDyn || b == kDyn || a == b; }

LogicalResult checkReduction(std::optional<Location> loc, StringRef r) {
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    return emitOptionalError(loc, "reduction '", r,
                             "' is not one of none, add, mul, max, min");
  return success();
}
} // namespace

LogicalResult ScatterElementsOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  RankedTensorType data = rankedType(adaptor.getData()),
                   idx = rankedType(adaptor.getIndices()),
                   upd = rankedType(adaptor.getUpdates());
  int64_t rank = data.getRank(), axis = adaptor.getAxis();
  if (failed(checkReduction(loc, adaptor.getReduction())))
    return failure();
  if (rank < 1 || axis < 0 || axis >= rank)
    return emitOptionalError(loc, "axis ", axis, " is out of range for rank ",
                             rank);
  if (upd.getElementType() != data.getElementType())
    return emitOptionalError(loc, "updates must have the data's element type ",
                             data.getElementType(), ", got ",
                             upd.getElementType());
  if (idx.getRank() != rank || upd.getRank() != rank)
    return emitOptionalError(loc, "indices ", shapeStr(idx.getShape()),
                             " and updates ", shapeStr(upd.getShape()),
                             " must have the data's rank ", rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (!sameDim(idx.getDimSize(d), upd.getDimSize(d)))
      return emitOptionalError(loc, "indices ", shapeStr(idx.getShape()),
                               " and updates ", shapeStr(upd.getShape()),
                               " must have one shape");
    // Outside the axis an update lands at its own position, which must exist.
    int64_t u = upd.getDimSize(d), n = data.getDimSize(d);
    if (d != axis && u != kDyn && n != kDyn && u > n)
      return emitOptionalError(loc, "updates ", shapeStr(upd.getShape()),
                               " do not fit in data ",
                               shapeStr(data.getShape()), " at dimension ", d);
  }
  types.push_back(data);
  return success();
}
KILN_COMPATIBLE(ScatterElementsOp)

LogicalResult ScatterNDOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType data = rankedType(adaptor.getData()),
                   idx = rankedType(adaptor.getIndices()),
                   upd = rankedType(adaptor.getUpdates());
  if (failed(checkReduction(loc, adaptor.getReduction())))
    return failure();
  if (upd.getElementType() != data.getElementType())
    return emitOptionalError(loc, "updates must have the data's element type ",
                             data.getElementType(), ", got ",
                             upd.getElementType());
  int64_t q = idx.getRank() ? idx.getShape().back() : kDyn;
  if (idx.getRank() < 1 || q == kDyn || q < 1 || q > data.getRank())
    return emitOptionalError(loc, "indices ", shapeStr(idx.getShape()),
                             " must end in a static dimension of 1 to ",
                             data.getRank(), " (the data's rank)");
  SmallVector<int64_t> want(idx.getShape().drop_back());
  llvm::append_range(want, data.getShape().drop_front(q));
  if (upd.getRank() != (int64_t)want.size() ||
      !llvm::all_of(llvm::zip(upd.getShape(), want),
                    [](auto p) { return sameDim(std::get<0>(p), std::get<1>(p)); }))
    return emitOptionalError(loc, "updates ", shapeStr(upd.getShape()),
                             " must have shape ", shapeStr(want),
                             " (indices.shape[:-1] + data.shape[q:])");
  types.push_back(data);
  return success();
}
KILN_COMPATIBLE(ScatterNDOp)

LogicalResult GatherNDOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  RankedTensorType data = rankedType(adaptor.getData()),
                   idx = rankedType(adaptor.getIndices());
  int64_t b = adaptor.getBatchDims();
  int64_t q = idx.getRank() ? idx.getShape().back() : kDyn;
  if (b < 0 || b >= std::min(idx.getRank(), data.getRank()))
    return emitOptionalError(loc, "batch_dims ", b,
                             " must be below the ranks of data and indices");
  if (q == kDyn || q < 1 || b + q > data.getRank())
    return emitOptionalError(loc, "indices ", shapeStr(idx.getShape()),
                             " must end in a static dimension q with 1 <= q "
                             "<= data rank - batch_dims (",
                             data.getRank() - b, ")");
  for (int64_t d = 0; d < b; ++d)
    if (!sameDim(data.getDimSize(d), idx.getDimSize(d)))
      return emitOptionalError(loc, "batch dimension ", d, " differs: data ",
                               shapeStr(data.getShape()), ", indices ",
                               shapeStr(idx.getShape()));
  // A dimension of size 0 has nothing to clamp into.
  for (int64_t d = b; d < b + q; ++d)
    if (data.getDimSize(d) == 0 && idx.hasStaticShape() &&
        idx.getNumElements() > 0)
      return emitOptionalError(loc, "cannot gather from dimension ", d,
                               " of size 0");
  SmallVector<int64_t> shape(idx.getShape().drop_back());
  llvm::append_range(shape, data.getShape().drop_front(b + q));
  types.push_back(RankedTensorType::get(shape, data.getElementType()));
  return success();
}
KILN_COMPATIBLE(GatherNDOp)

namespace {
/// CumSum and CumProd: the input's type, for a one-element axis.
LogicalResult inferCumulative(std::optional<Location> loc, Value input,
                              Value axisValue, SmallVectorImpl<Type> &types) {
  RankedTensorType x = rankedType(input), axis = rankedType(axisValue);
  if (x.getRank() < 1)
    return emitOptionalError(loc, "expects an input of rank 1 or more");
  if (axis.hasStaticShape() && axis.getNumElements() != 1)
    return emitOptionalError(loc, "axis must have one element, got shape ",
                             shapeStr(axis.getShape()));
  types.push_back(x);
  return success();
}
} // namespace

LogicalResult CumSumOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return inferCumulative(loc, adaptor.getInput(), adaptor.getAxis(), types);
}
KILN_COMPATIBLE(CumSumOp)

LogicalResult CumProdOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferCumulative(loc, adaptor.getInput(), adaptor.getAxis(), types);
}
KILN_COMPATIBLE(CumProdOp)

LogicalResult TopKOp::inferReturnTypes(MLIRContext *ctx,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  RankedTensorType x = rankedType(adaptor.getInput());
  int64_t axis = adaptor.getAxis(), k = adaptor.getK();
  if (axis < 0 || axis >= x.getRank())
    return emitOptionalError(loc, "axis ", axis, " is out of range for rank ",
                             x.getRank());
  int64_t n = x.getDimSize(axis);
  bool runtimeK = adaptor.getKSize() != nullptr;
  if (!runtimeK && (k < 0 || (n != kDyn && k > n)))
    return emitOptionalError(loc, "k = ", k, " is not in [0, ", n,
                             "] (the size of axis ", axis, ")");
  SmallVector<int64_t> shape(x.getShape());
  shape[axis] = runtimeK ? kDyn : k;
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  types.push_back(RankedTensorType::get(shape, IntegerType::get(ctx, 64)));
  return success();
}
KILN_COMPATIBLE(TopKOp)

LogicalResult ReverseSequenceOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  RankedTensorType x = rankedType(adaptor.getInput()),
                   lens = rankedType(adaptor.getLengths());
  int64_t rank = x.getRank(), b = adaptor.getBatchAxis(),
          t = adaptor.getTimeAxis();
  if (rank < 2 || b < 0 || b >= rank || t < 0 || t >= rank || b == t)
    return emitOptionalError(loc, "batch_axis ", b, " and time_axis ", t,
                             " must be two different axes of rank ", rank);
  if (lens.getRank() != 1 || !sameDim(lens.getDimSize(0), x.getDimSize(b)))
    return emitOptionalError(loc, "lengths ", shapeStr(lens.getShape()),
                             " must have one entry per batch (",
                             x.getDimSize(b), ")");
  types.push_back(x);
  return success();
}
KILN_COMPATIBLE(ReverseSequenceOp)

LogicalResult DetOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  RankedTensorType x = rankedType(adaptor.getInput());
  int64_t rank = x.getRank();
  if (rank < 2 || !sameDim(x.getDimSize(rank - 1), x.getDimSize(rank - 2)))
    return emitOptionalError(loc, "expects square matrices [..., M, M], got ",
                             shapeStr(x.getShape()));
  types.push_back(RankedTensorType::get(x.getShape().drop_back(2),
                                        x.getElementType()));
  return success();
}
KILN_COMPATIBLE(DetOp)

LogicalResult CompressOp::verify() {
  RankedTensorType x = getInput().getType(), c = getCondition().getType(),
                   r = getType();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= x.getRank())
    return emitOpError() << "axis " << axis << " is out of range for rank "
                         << x.getRank();
  if (c.getRank() != 1)
    return emitOpError() << "expects a 1-D condition, got "
                         << shapeStr(c.getShape());
  if (r.getElementType() != x.getElementType() || r.getRank() != x.getRank())
    return emitOpError() << "result " << r << " must have the input's rank and "
                         << "element type";
  for (int64_t d = 0; d < x.getRank(); ++d)
    if (d != axis && !sameDim(r.getDimSize(d), x.getDimSize(d)))
      return emitOpError() << "result " << shapeStr(r.getShape())
                           << " differs from the input "
                           << shapeStr(x.getShape()) << " outside axis "
                           << axis;
  return success();
}

LogicalResult NonZeroOp::verify() {
  RankedTensorType x = getInput().getType(), r = getType();
  if (r.getRank() != 2 ||
      !sameDim(r.getDimSize(0), std::max<int64_t>(x.getRank(), 1)))
    return emitOpError() << "result " << shapeStr(r.getShape())
                         << " must be [rank, count] with rank "
                         << std::max<int64_t>(x.getRank(), 1);
  return success();
}

LogicalResult NonMaxSuppressionOp::verify() {
  RankedTensorType boxes = getBoxes().getType(), scores = getScores().getType();
  if (boxes.getRank() != 3 || !sameDim(boxes.getDimSize(2), 4))
    return emitOpError() << "boxes " << shapeStr(boxes.getShape())
                         << " must be [batches, boxes, 4]";
  if (scores.getRank() != 3 ||
      !sameDim(scores.getDimSize(0), boxes.getDimSize(0)) ||
      !sameDim(scores.getDimSize(2), boxes.getDimSize(1)))
    return emitOpError() << "scores " << shapeStr(scores.getShape())
                         << " must be [batches, classes, boxes] for boxes "
                         << shapeStr(boxes.getShape());
  SmallVector<Value> scalars{getMaxPerClass(), getIouThreshold()};
  if (Value t = getScoreThreshold())
    scalars.push_back(t);
  for (Value v : scalars) {
    auto t = cast<RankedTensorType>(v.getType());
    if (!t.hasStaticShape() || t.getNumElements() != 1)
      return emitOpError() << "thresholds must have one element, got "
                           << shapeStr(t.getShape());
  }
  RankedTensorType r = getResult().getType();
  if (r.getRank() != 2 || !sameDim(r.getDimSize(1), 3))
    return emitOpError() << "result " << shapeStr(r.getShape())
                         << " must be [count, 3]";
  return success();
}

LogicalResult UniqueOp::verify() {
  RankedTensorType x = getInput().getType(), v = getValues().getType();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= x.getRank())
    return emitOpError() << "axis " << axis << " is out of range for rank "
                         << x.getRank();
  if (v.getElementType() != x.getElementType() || v.getRank() != x.getRank())
    return emitOpError() << "values " << v
                         << " must have the input's rank and element type";
  for (int64_t d = 0; d < x.getRank(); ++d)
    if (d != axis && !sameDim(v.getDimSize(d), x.getDimSize(d)))
      return emitOpError() << "values " << shapeStr(v.getShape())
                           << " differ from the input "
                           << shapeStr(x.getShape()) << " outside axis "
                           << axis;
  int64_t m = v.getDimSize(axis), n = x.getDimSize(axis);
  auto is1D = [&](RankedTensorType t, int64_t size) {
    return t.getRank() == 1 && sameDim(t.getDimSize(0), size);
  };
  if (!is1D(getIndices().getType(), m) || !is1D(getCounts().getType(), m) ||
      !is1D(getInverse().getType(), n))
    return emitOpError() << "expects indices and counts of shape [" << m
                         << "] and inverse of shape [" << n << "]";
  return success();
}

LogicalResult RandomOp::verify() {
  StringRef d = getDistribution();
  if (d != "uniform" && d != "normal")
    return emitOpError() << "distribution '" << d
                         << "' is not one of uniform, normal";
  RankedTensorType r = getType();
  if (!getLike()) {
    if (!r.hasStaticShape())
      return emitOpError() << "result " << shapeStr(r.getShape())
                           << " has symbolic dimensions but no `like` "
                              "operand to take them from";
    return success();
  }
  auto like = cast<RankedTensorType>(getLike().getType());
  bool same = like.getRank() == r.getRank();
  for (int64_t i = 0; same && i < r.getRank(); ++i)
    same = r.isDynamicDim(i) == like.isDynamicDim(i) &&
           r.getDimSize(i) == like.getDimSize(i);
  if (!same)
    return emitOpError() << "result " << shapeStr(r.getShape())
                         << " must have the shape of `like`, "
                         << shapeStr(like.getShape());
  return success();
}
