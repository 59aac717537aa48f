//===- VnniMatch.cpp - what the VNNI kernel takes ----------------*- C++
//-*-===//
#include "VnniMatch.h"
#include "VnniDepthwise.h"

#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::kiln::vnni;

/// acc + extf(a) * extf(w), the body of a kiln.bf16_matmul product.
static bool isBf16ProductBody(linalg::GenericOp op) {
  return mlir::kiln::bodyIs<arith::ExtFOp, arith::ExtFOp, arith::MulFOp,
                            arith::AddFOp>(op);
}

/// The value of `e` with its dimensions at `dims`.
static int64_t valueAt(AffineExpr e, ArrayRef<int64_t> dims) {
  SmallVector<AffineExpr> at;
  for (int64_t d : dims)
    at.push_back(getAffineConstantExpr(d, e.getContext()));
  return cast<AffineConstantExpr>(e.replaceDimsAndSymbols(at, {})).getValue();
}

/// The coefficients of `e` in dimensions 0..n-1 when `e` is exactly their
/// weighted sum (no constant term, no floordiv or mod), else nothing.
static std::optional<SmallVector<int64_t>> linearCoefficients(AffineExpr e,
                                                              unsigned n) {
  SmallVector<int64_t> zeros(n, 0), coeff;
  if (valueAt(e, zeros) != 0)
    return std::nullopt;
  AffineExpr sum = getAffineConstantExpr(0, e.getContext());
  for (unsigned i = 0; i < n; ++i) {
    SmallVector<int64_t> unit = zeros;
    unit[i] = 1;
    coeff.push_back(valueAt(e, unit));
    sum = sum + getAffineDimExpr(i, e.getContext()) * coeff.back();
  }
  if (simplifyAffineExpr(sum, n, 0) != simplifyAffineExpr(e, n, 0))
    return std::nullopt;
  return coeff;
}

/// The unfolded windows `rows` ([M, K4, g]) come from, as LowerQuantized's
/// unfoldedRows makes them (and canonicalization leaves them): a copy
/// through the window map, [N, OH, OW, KH, KW C] <- [N, Hp, Wp C] through
/// (n, oh s0 + kh d0, ow s1 C + j), or [N, OH, OW, KH, KW, C] <- [N, Hp, Wp,
/// C] through (n, oh s0 + kh d0, ow s1 + kw d1, c); then reshapes, which
/// keep the row-major order, possibly with the [M, K] rows inserted into the
/// first K columns of zero-filled [M, Kp] ones.
static std::optional<Window> matchWindow(const DotProduct &k) {
  Window w;
  Value v = k.rows;
  int64_t kUnfolded = k.k4 * k.group();
  linalg::GenericOp unfold;
  while (!unfold) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return std::nullopt;
    w.views.push_back(def);
    if (auto reshape = dyn_cast<tensor::ExpandShapeOp>(def)) {
      v = reshape.getSrc();
    } else if (auto reshape = dyn_cast<tensor::CollapseShapeOp>(def)) {
      v = reshape.getSrc();
    } else if (auto insert = dyn_cast<tensor::InsertSliceOp>(def)) {
      auto fill = insert.getDest().getDefiningOp<linalg::FillOp>();
      RankedTensorType from = insert.getSourceType(),
                       into = insert.getResultType();
      if (!fill ||
          !(matchPattern(fill.value(), m_Zero()) ||
            matchPattern(fill.value(), m_PosZeroFloat())) ||
          !insert.hasZeroOffset() || !insert.hasUnitStride() ||
          from.getRank() != 2 || into.getRank() != 2 ||
          from.getDimSize(0) != k.m || into.getDimSize(0) != k.m ||
          into.getDimSize(1) != kUnfolded || kUnfolded != k.k4 * k.group() ||
          !from.hasStaticShape())
        return std::nullopt;
      kUnfolded = from.getDimSize(1);
      v = insert.getSource();
    } else if (auto generic = dyn_cast<linalg::GenericOp>(def)) {
      w.views.pop_back();
      unfold = generic;
    } else {
      return std::nullopt;
    }
  }
  if (!unfold || unfold.getNumDpsInputs() != 1 ||
      unfold.getNumDpsInits() != 1 ||
      unfold.getNumParallelLoops() != unfold.getNumLoops() ||
      !unfold.getDpsInitOperand(0)->get().getDefiningOp<tensor::EmptyOp>())
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(unfold.getBody()->getTerminator());
  if (yield.getNumOperands() != 1 ||
      yield.getOperand(0) != unfold.getBody()->getArgument(0))
    return std::nullopt;
  auto cols = cast<RankedTensorType>(unfold.getResult(0).getType());
  auto src = dyn_cast<RankedTensorType>(unfold.getDpsInputs()[0].getType());
  unsigned loops = unfold.getNumLoops();
  // 5 loops (n, oh, ow, kh, j): one run per kernel row; 6 loops (n, oh, ow,
  // kh, kw, c): one run per tap.
  if (!cols.hasStaticShape() || !src || !src.hasStaticShape() ||
      (loops != 5 && loops != 6) || src.getRank() != loops - 2)
    return std::nullopt;
  SmallVector<AffineMap> maps = unfold.getIndexingMapsArray();
  MLIRContext *ctx = unfold.getContext();
  if (!maps[1].isIdentity() || maps[0].getNumResults() != loops - 2 ||
      maps[0].getResult(0) != getAffineDimExpr(0, ctx) ||
      (loops == 6 && maps[0].getResult(3) != getAffineDimExpr(5, ctx)))
    return std::nullopt;
  auto h = linearCoefficients(maps[0].getResult(1), loops);
  auto wc = linearCoefficients(maps[0].getResult(2), loops);
  // h = oh s0 + kh d0 and w = ow s1 (C) + j | kw d1: no other dimension.
  auto only = [](ArrayRef<int64_t> c, ArrayRef<unsigned> dims) {
    for (auto [i, v] : llvm::enumerate(c))
      if (v != 0 && !llvm::is_contained(dims, unsigned(i)))
        return false;
    return true;
  };
  if (!h || !wc || !only(*h, {1, 3}) || !only(*wc, {2, 4}) ||
      (loops == 5 && (*wc)[4] != 1))
    return std::nullopt;
  int64_t c = loops == 6 ? src.getDimSize(3) : 1;
  w.src = unfold.getDpsInputs()[0];
  w.unfold = unfold;
  w.oh = cols.getDimSize(1);
  w.ow = cols.getDimSize(2);
  w.taps = cols.getDimSize(3);
  w.hp = src.getDimSize(1);
  w.rowStride = (*h)[1];
  w.tapStride = (*h)[3];
  w.pixelStride = (*wc)[2] * c;
  if (loops == 6) {
    w.kwCount = cols.getDimSize(4);
    w.kwStride = (*wc)[4] * c;
    w.run = c;
  } else {
    w.run = cols.getDimSize(4);
  }
  int64_t g = k.group(), width = src.getDimSize(2) * c;
  // Each group of k lies within one run, and the kernel reads no column
  // past the unfolded K (the rest of Kp meets zero rows).
  if (src.getDimSize(0) != cols.getDimSize(0) ||
      cols.getDimSize(0) * w.oh * w.ow != k.m || w.run % g != 0 ||
      w.taps * w.kwCount * w.run != kUnfolded || w.rowStride < 0 ||
      w.tapStride < 0 || w.pixelStride < 0 || w.kwStride < 0 ||
      (w.oh - 1) * w.rowStride + (w.taps - 1) * w.tapStride >= w.hp ||
      (w.ow - 1) * w.pixelStride + (w.kwCount - 1) * w.kwStride + w.run > width)
    return std::nullopt;
  return w;
}

FailureOr<DotProduct> mlir::kiln::vnni::match(linalg::GenericOp op,
                                              std::string &why) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1) {
    why = "expects two inputs and one init";
    return failure();
  }
  DotProduct k;
  k.bf16 = op->hasAttr(mlir::kiln::kBf16MatmulAttr);
  k.rows = op.getDpsInputOperand(0)->get();
  k.weights = op.getDpsInputOperand(1)->get();
  auto at = dyn_cast<RankedTensorType>(k.rows.getType());
  auto wt = dyn_cast<RankedTensorType>(k.weights.getType());
  auto ot = dyn_cast<RankedTensorType>(op.getResult(0).getType());
  auto isLane = [&](Type t) { return k.bf16 ? t.isBF16() : t.isInteger(8); };
  // Static but for the rows, which may be of run-time count (a symbolic
  // batch or sequence; the kernel splits them at run time).
  auto staticButRows = [](RankedTensorType t) {
    return t.hasStaticShape() || (t.getRank() >= 1 && t.isDynamicDim(0) &&
                                  t.getNumDynamicDims() == 1);
  };
  if (!at || !wt || !ot || !staticButRows(at) || !wt.hasStaticShape() ||
      !staticButRows(ot) || at.getRank() != 3 || wt.getRank() != 4 ||
      ot.getRank() != 3 || !isLane(at.getElementType()) ||
      !isLane(wt.getElementType()) ||
      !(k.bf16 ? ot.getElementType().isF32()
               : ot.getElementType().isInteger(32))) {
    why = k.bf16 ? "expects bf16 [M, K2, 2] x bf16 [P, K2, R, 2] -> f32 "
                   "[M, P, R], static but for M"
                 : "expects i8 [M, K4, 4] x i8 [P, K4, R, 4] -> i32 [M, P, R], "
                   "static but for M";
    return failure();
  }
  k.m = at.getDimSize(0);
  k.p = wt.getDimSize(0);
  k.k4 = wt.getDimSize(1);
  k.r = wt.getDimSize(2);
  if (at.getDimSize(1) != k.k4 || at.getDimSize(2) != k.group() ||
      wt.getDimSize(3) != k.group() || ot.getDimSize(0) != k.m ||
      ot.getDimSize(1) != k.p || ot.getDimSize(2) != k.r || k.r % 16 != 0) {
    why = "shapes do not agree, or R is not a multiple of 16";
    return failure();
  }
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  MLIRContext *ctx = op.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  if (maps[0] != AffineMap::get(5, 0, {d(0), d(3), d(4)}, ctx) ||
      maps[1] != AffineMap::get(5, 0, {d(1), d(3), d(2), d(4)}, ctx) ||
      maps[2] != AffineMap::get(5, 0, {d(0), d(1), d(2)}, ctx)) {
    why = "unexpected indexing maps";
    return failure();
  }
  if (k.bf16 ? !isBf16ProductBody(op) : !mlir::kiln::isU8S8ProductBody(op)) {
    why = k.bf16 ? "the body is not acc + extf(a) * extf(w)"
                 : "the body is not acc + zext(a) * sext(w)";
    return failure();
  }
  k.fill = op.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
  if (!k.fill || !(matchPattern(k.fill.value(), m_Zero()) ||
                   matchPattern(k.fill.value(), m_PosZeroFloat()))) {
    why = "the accumulator does not start from a zero fill";
    return failure();
  }
  if (!ShapedType::isDynamic(k.m))
    k.window = matchWindow(k);
  return k;
}

std::optional<Epilogue> mlir::kiln::vnni::matchEpilogue(linalg::GenericOp op,
                                                        const DotProduct &k) {
  Value acc = op.getResult(0);
  if (k.bf16 || !acc.hasOneUse())
    return std::nullopt;
  auto user = dyn_cast<linalg::GenericOp>(*acc.getUsers().begin());
  if (!user || !user->hasAttr(mlir::kiln::kInt8EpilogueAttr) ||
      user.getNumDpsInits() != 1 ||
      (user.getNumDpsInputs() != 5 && user.getNumDpsInputs() != 6) ||
      user.getDpsInputOperand(0)->get() != acc)
    return std::nullopt;
  auto has = [](Value v, ArrayRef<int64_t> shape, Type elt) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.getShape() == shape && t.getElementType() == elt;
  };
  Builder b(op.getContext());
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  Epilogue e{user,
             user.getDpsInputOperand(1)->get(),
             user.getDpsInputOperand(2)->get(),
             user.getDpsInputOperand(3)->get(),
             user.getDpsInputOperand(4)->get(),
             user.getNumDpsInputs() == 6 ? user.getDpsInputOperand(5)->get()
                                         : Value()};
  if (!has(e.scale, {k.m}, f32) || !has(e.zeroPoint, {k.m}, i32) ||
      !has(e.weightScale, {k.p, k.r}, f32) ||
      !has(e.weightSum, {k.p, k.r}, i32) ||
      (e.bias && !has(e.bias, {k.p, k.r}, f32)) ||
      !has(user.getResult(0), {k.m, k.p, k.r}, f32))
    return std::nullopt;
  return e;
}

/// Whether `t`, read through `map` by a consumer over [1, H, W, C], is one
/// value per channel: [C], or [1, 1, 1, C] (an NCHW [1, C, 1, 1] made NHWC).
static bool isChannelVector(RankedTensorType t, AffineMap map,
                            int64_t channels) {
  return t.getRank() >= 1 && map.getNumResults() == unsigned(t.getRank()) &&
         t.getShape().back() == channels &&
         map.getResults().back() == getAffineDimExpr(3, map.getContext()) &&
         llvm::all_of(t.getShape().drop_back(),
                      [](int64_t d) { return d == 1; });
}

std::optional<Consumer> mlir::kiln::vnni::matchConsumer(linalg::GenericOp op,
                                                        const DotProduct &k) {
  Consumer c;
  Value v = op.getResult(0);
  while (v.hasOneUse() && isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
                              *v.getUsers().begin())) {
    c.views.push_back(*v.getUsers().begin());
    v = c.views.back()->getResult(0);
  }
  if (!v.hasOneUse())
    return std::nullopt;
  auto user = dyn_cast<linalg::GenericOp>(*v.getUsers().begin());
  auto type = dyn_cast<RankedTensorType>(v.getType());
  // Rows of run-time count: the consumer of [M, P, R] only.
  bool runTimeRows = ShapedType::isDynamic(k.m);
  if (!user || !type ||
      !(runTimeRows ? type.getShape() == ArrayRef<int64_t>{k.m, k.p, k.r}
                    : type.hasStaticShape()) ||
      !(type.getShape() == ArrayRef<int64_t>{k.m, k.p, k.r} ||
        (type.getRank() == 4 && type.getDimSize(0) == 1 &&
         type.getShape().back() == k.p * k.r)) ||
      (!runTimeRows && type.getNumElements() != k.m * k.p * k.r) ||
      user.getNumDpsInits() != 1 || user->getNumResults() != 1 ||
      !user.hasPureTensorSemantics() ||
      user.getNumParallelLoops() != user.getNumLoops() ||
      user.getNumLoops() != uint64_t(type.getRank()) ||
      user.payloadUsesValueFromOperand(user.getDpsInitOperand(0)) ||
      !user.getDpsInitOperand(0)->get().getDefiningOp<tensor::EmptyOp>() ||
      !user.getIndexingMapsArray().back().isIdentity() ||
      cast<RankedTensorType>(user->getResult(0).getType()).getShape() !=
          type.getShape() ||
      !(k.bf16
            ? getElementTypeOrSelf(user.getResult(0).getType()).isBF16()
            : getElementTypeOrSelf(user.getResult(0).getType()).isIntOrFloat()))
    return std::nullopt;
  c.op = user;
  int64_t rank = type.getRank();
  for (OpOperand *in : user.getDpsInputOperands()) {
    AffineMap map = user.getMatchingIndexingMap(in);
    auto t = dyn_cast<RankedTensorType>(in->get().getType());
    if (in->get() == v && map.isIdentity())
      c.kinds.push_back(Consumer::Product);
    else if (t && map.isIdentity() && t.getShape() == type.getShape())
      c.kinds.push_back(Consumer::Full);
    else if (t && rank == 4 && isChannelVector(t, map, type.getDimSize(3)))
      c.kinds.push_back(Consumer::Channels);
    else if (t && rank == 3 && t.getShape() == type.getShape().drop_front() &&
             map == AffineMap::get(3, 0,
                                   {getAffineDimExpr(1, op.getContext()),
                                    getAffineDimExpr(2, op.getContext())},
                                   op.getContext()))
      c.kinds.push_back(Consumer::Channels);
    else if (!t || llvm::all_of(t.getShape(), [](int64_t d) { return d == 1; }))
      c.kinds.push_back(Consumer::Scalar); // one element, e.g. [1, 1, 1, 1]
    else
      return std::nullopt;
  }
  if (llvm::count(c.kinds, Consumer::Product) != 1)
    return std::nullopt;
  // Ops that take vectors as they take scalars.
  for (Operation &inner : user.getBody()->without_terminator())
    if (inner.getNumRegions() != 0 || inner.getNumResults() != 1 ||
        !(isa<arith::ConstantOp>(inner) ||
          OpTrait::hasElementwiseMappableTraits(&inner)) ||
        !isPure(&inner) || !inner.getResult(0).getType().isIntOrFloat())
      return std::nullopt;
  return c;
}
