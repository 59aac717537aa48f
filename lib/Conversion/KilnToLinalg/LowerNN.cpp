//===- LowerNN.cpp - matmul, convolution, pooling, normalization -*- C++ -*-===//
//
// Convolutions run in NHWC with HWCF filters. An NCHW convolution transposes
// its input on the way in, its filter at compile time (weights are constants),
// and its bias add writes the result back in NCHW; one that --kiln-layout made
// NHWC needs none of that. This is the layout for which MLIR's convolution
// vectorization produces register-blocked code. Pooling runs in the layout of
// its op.
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include <limits>

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Map from a rank-`rank` iteration space that drops dimension `skip`.
AffineMap dropDim(OpBuilder &b, int64_t rank, int64_t skip) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    if (d != skip)
      exprs.push_back(b.getAffineDimExpr(d));
  return AffineMap::get(rank, 0, exprs, b.getContext());
}

/// tensor.dim of `v` at `d` if that dimension is dynamic (for a `dyn`).
void appendIfDynamic(OpBuilder &b, Location loc, Value v, int64_t d,
                     SmallVectorImpl<Value> &dyn) {
  if (typeOf(v).isDynamicDim(d))
    dyn.push_back(tensor::DimOp::create(b, loc, v, d));
}

/// The run-time length of a sliding window's output along the symbolic axis
/// `axis` of `x` (docs/shapes.md), as windowOutput computes it for a static
/// one: (in + pads - span) floordiv stride + 1, and with ceil_mode the
/// quotient rounded up but no window starting past the input and its
/// leading padding. It is an affine function of the input's size (never
/// below 0), so the arena bounds it at the symbols' maxima.
Value windowOutputSize(OpBuilder &b, Location loc, Value x, int64_t axis,
                       int64_t kernel, int64_t stride, int64_t dilation,
                       int64_t padBegin, int64_t padEnd, bool ceilMode) {
  Value in = tensor::DimOp::create(b, loc, x, axis);
  int64_t span = (kernel - 1) * dilation + 1;
  AffineExpr s0 = b.getAffineSymbolExpr(0);
  AffineExpr room = s0 + (padBegin + padEnd - span);
  SmallVector<AffineExpr> results = {
      (ceilMode ? room.ceilDiv(stride) : room.floorDiv(stride)) + 1};
  if (ceilMode)
    results.push_back((s0 + padBegin).ceilDiv(stride));
  Value out = affine::AffineMinOp::create(
      b, loc, AffineMap::get(0, 1, results, b.getContext()), ValueRange{in});
  return arith::MaxSIOp::create(b, loc, out,
                                arith::ConstantIndexOp::create(b, loc, 0));
}

} // namespace

Value mlir::kiln::matmul2D(OpBuilder &b, Location loc, Value a, Value bm) {
  RankedTensorType at = typeOf(a), bt = typeOf(bm);
  SmallVector<Value> dyn;
  appendIfDynamic(b, loc, a, 0, dyn);
  appendIfDynamic(b, loc, bm, 1, dyn);
  Value acc = filledTensor(b, loc, {at.getDimSize(0), bt.getDimSize(1)},
                           at.getElementType(), 0.0, dyn);
  return linalg::MatmulOp::create(b, loc, ValueRange{a, bm}, ValueRange{acc})
      .getResult(0);
}

namespace {
FailureOr<Value> lowerMatMul(OpBuilder &b, MatMulOp op) {
  Location loc = op.getLoc();
  Value a = op.getLhs(), bm = op.getRhs();
  Type elt = typeOf(a).getElementType();
  if (typeOf(a).getRank() == 1)
    a = reshaped(b, loc, a, {1, typeOf(a).getDimSize(0)},
                 dynamicDims(b, loc, a));
  if (typeOf(bm).getRank() == 1)
    bm = reshaped(b, loc, bm, {typeOf(bm).getDimSize(0), 1},
                  dynamicDims(b, loc, bm));
  RankedTensorType at = typeOf(a), bt = typeOf(bm);
  int64_t k = at.getShape().back();
  Value result;
  if (bt.getRank() == 2 && at.hasStaticShape()) {
    // [..., M, K] x [K, N]: fold the batch into M and use one 2-D matmul.
    int64_t rows = at.getNumElements() / k;
    Value flat = reshaped(b, loc, a, {rows, k});
    result = matmul2D(b, loc, flat, bm);
  } else if (bt.getRank() == 2 && !at.isDynamicDim(at.getRank() - 1)) {
    // The same with symbolic leading sizes: the rows are their product.
    Value rows = sizeProduct(b, loc, a, 0, at.getRank() - 1);
    Value flat =
        reshaped(b, loc, a, {ShapedType::kDynamic, k}, ValueRange{rows});
    result = matmul2D(b, loc, flat, bm);
  } else {
    // General batched, broadcasting matmul as a contraction generic.
    SmallVector<int64_t> outShape(op.getType().getShape());
    if (typeOf(op.getLhs()).getRank() == 1)
      outShape.insert(outShape.end() - (typeOf(op.getRhs()).getRank() == 1 ? 0 : 1), 1);
    if (typeOf(op.getRhs()).getRank() == 1)
      outShape.push_back(1);
    int64_t outRank = outShape.size(), loops = outRank + 1;
    auto operandMap = [&](RankedTensorType t, bool isLhs) {
      SmallVector<AffineExpr> e;
      int64_t batch = t.getRank() - 2, outBatch = outRank - 2;
      for (int64_t i = 0; i < batch; ++i) {
        int64_t d = outBatch - batch + i;
        e.push_back(t.getDimSize(i) == 1 && outShape[d] != 1
                        ? b.getAffineConstantExpr(0)
                        : b.getAffineDimExpr(d));
      }
      AffineExpr m = b.getAffineDimExpr(outRank - 2),
                 n = b.getAffineDimExpr(outRank - 1),
                 kk = b.getAffineDimExpr(outRank);
      if (isLhs) {
        e.push_back(m);
        e.push_back(kk);
      } else {
        e.push_back(kk);
        e.push_back(n);
      }
      return AffineMap::get(loops, 0, e, b.getContext());
    };
    SmallVector<AffineMap> maps = {
        operandMap(at, true), operandMap(bt, false),
        AffineMap::getMultiDimIdentityMap(loops, b.getContext())
            .getMajorSubMap(outRank)};
    SmallVector<utils::IteratorType> iters(outRank,
                                           utils::IteratorType::parallel);
    iters.push_back(utils::IteratorType::reduction);
    // Symbolic sizes: a batch dimension from whichever operand has it
    // dynamic, M from the left operand, N from the right.
    SmallVector<Value> dyn;
    for (int64_t d = 0; d < outRank; ++d) {
      if (!ShapedType::isDynamic(outShape[d]))
        continue;
      if (d == outRank - 2) {
        appendIfDynamic(b, loc, a, at.getRank() - 2, dyn);
      } else if (d == outRank - 1) {
        appendIfDynamic(b, loc, bm, bt.getRank() - 1, dyn);
      } else {
        Value from = a;
        int64_t i = d - (outRank - at.getRank());
        if (i < 0 || !at.isDynamicDim(i)) {
          from = bm;
          i = d - (outRank - bt.getRank());
        }
        appendIfDynamic(b, loc, from, i, dyn);
      }
    }
    Value acc = filledTensor(b, loc, outShape, elt, 0.0, dyn);
    result = linalg::GenericOp::create(
                 b, loc, acc.getType(), ValueRange{a, bm}, acc, maps, iters,
                 [](OpBuilder &nb, Location nl, ValueRange args) {
                   Value sum;
                   if (isa<IntegerType>(args[0].getType()))
                     sum = arith::AddIOp::create(
                         nb, nl, args[2],
                         arith::MulIOp::create(nb, nl, args[0], args[1]));
                   else
                     sum = arith::AddFOp::create(
                         nb, nl, args[2],
                         arith::MulFOp::create(nb, nl, args[0], args[1]));
                   linalg::YieldOp::create(nb, nl, ValueRange{sum});
                 })
                 .getResult(0);
  }
  RankedTensorType rt = op.getType();
  if (rt.hasStaticShape())
    return reshaped(b, loc, result, rt.getShape());
  // Symbolic sizes of the result: its leading dimensions are the left
  // operand's, the last one the right operand's.
  if (typeOf(result).getRank() == rt.getRank() &&
      typeOf(result).getShape() == rt.getShape())
    return result;
  SmallVector<Value> dyn;
  Value lhs = op.getLhs(), rhs = op.getRhs();
  // The batched product keeps a vector operand's unit dimension ([..., 1,
  // N] for a vector on the left, [..., M, 1] on the right): the result's
  // sizes are its others.
  bool lhsVector = typeOf(lhs).getRank() == 1,
       rhsVector = typeOf(rhs).getRank() == 1;
  int64_t rr = typeOf(result).getRank();
  if (rr == rt.getRank() + lhsVector + rhsVector) {
    for (int64_t i = 0, d = 0; i < rr; ++i) {
      if ((rhsVector && i == rr - 1) || (lhsVector && i == rr - 2))
        continue;
      if (rt.isDynamicDim(d++))
        dyn.push_back(b.createOrFold<tensor::DimOp>(loc, result, i));
    }
    return reshaped(b, loc, result, rt.getShape(), dyn);
  }
  for (int64_t d = 0; d < rt.getRank(); ++d) {
    if (!rt.isDynamicDim(d))
      continue;
    if (d == rt.getRank() - 1 && typeOf(rhs).getRank() >= 2)
      appendIfDynamic(b, loc, rhs, typeOf(rhs).getRank() - 1, dyn);
    else
      appendIfDynamic(
          b, loc, lhs,
          rhsVector ? d : d - (rt.getRank() - typeOf(lhs).getRank()), dyn);
  }
  return reshaped(b, loc, result, rt.getShape(), dyn);
}

FailureOr<Value> lowerGemm(OpBuilder &b, GemmOp op) {
  Location loc = op.getLoc();
  Value a = op.getA(), bm = op.getB();
  if (op.getTransA())
    a = transposed(b, loc, a, {1, 0});
  if (op.getTransB())
    bm = transposed(b, loc, bm, {1, 0});
  Value acc = matmul2D(b, loc, a, bm);
  double alpha = op.getAlpha().convertToDouble();
  double beta = op.getBeta().convertToDouble();
  Value c = op.getC();
  if (alpha == 1.0 && (!c || beta == 0.0))
    return acc;
  SmallVector<Value> inputs = {acc};
  if (c && beta != 0.0)
    inputs.push_back(c);
  RankedTensorType rt = op.getType();
  FailureOr<SmallVector<Value>> dyn =
      broadcastDims(b, loc, rt.getShape(), inputs);
  if (failed(dyn))
    return op.emitError() << "cannot size the symbolic dimensions of " << rt;
  return broadcastGeneric(
      b, loc, rt.getShape(), rt.getElementType(), inputs,
      [alpha, beta](OpBuilder &nb, Location nl, ValueRange v) -> Value {
        Type t = v[0].getType();
        Value r = v[0];
        if (alpha != 1.0)
          r = arith::MulFOp::create(nb, nl, r, floatConst(nb, nl, t, alpha));
        if (v.size() > 1) {
          Value cv = v[1];
          if (beta != 1.0)
            cv = arith::MulFOp::create(nb, nl, cv, floatConst(nb, nl, t, beta));
          r = arith::AddFOp::create(nb, nl, r, cv);
        }
        return r;
      },
      *dyn);
}

/// One NHWC convolution of `xp` with an HWCF filter (group == 1; grouped
/// ones loop over this per group in LowerGroupedConv.cpp).
Value convNHWC(OpBuilder &b, Location loc, Value xp, Value hwcf, int64_t oh,
               int64_t ow, ArrayRef<int64_t> strides,
               ArrayRef<int64_t> dilations, ValueRange dyn) {
  RankedTensorType xt = typeOf(xp), wt = typeOf(hwcf);
  int64_t n = xt.getDimSize(0), f = wt.getDimSize(3);
  Value acc =
      filledTensor(b, loc, {n, oh, ow, f}, xt.getElementType(), 0.0, dyn);
  return linalg::Conv2DNhwcHwcfOp::create(
             b, loc, TypeRange{acc.getType()}, ValueRange{xp, hwcf},
             ValueRange{acc}, i64Vector(b, strides), i64Vector(b, dilations))
      .getResult(0);
}

/// The bf16 tensor that `x` widens, when `x` is a lowered kiln.cast of one
/// to f32 (an elementwise generic whose body is one arith.extf); null
/// otherwise.
Value widenedBf16(Value x) {
  auto g = x.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 1 || g->getNumResults() != 1 ||
      !llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return Value();
  Block &body = g.getRegion().front();
  auto ext = dyn_cast<arith::ExtFOp>(body.front());
  if (!ext || ext.getIn() != body.getArgument(0) ||
      !ext.getIn().getType().isBF16() ||
      body.getTerminator()->getOperand(0) != ext.getResult())
    return Value();
  return g.getDpsInputOperand(0)->get();
}

FailureOr<Value> lowerConv(OpBuilder &b, Conv2DOp op) {
  Location loc = op.getLoc();
  RankedTensorType rt = op.getType(), xt = op.getInput().getType(),
                   wt = op.getFilter().getType();
  ArrayRef<int64_t> pads = op.getPads();
  bool nhwc = op.isNHWC();
  int64_t group = op.getGroup(), c = xt.getDimSize(nhwc ? 3 : 1),
          f = wt.getDimSize(nhwc ? 3 : 0);
  int64_t oh = rt.getDimSize(nhwc ? 1 : 2), ow = rt.getDimSize(nhwc ? 2 : 3);
  bool depthwise = group == c && f == c;
  // Symbolic batch and spatial sizes (docs/shapes.md): the output's are
  // computed from the input's at run time, in NHWC order.
  SmallVector<Value> dyn;
  if (!rt.hasStaticShape()) {
    int64_t xh = nhwc ? 1 : 2;
    ArrayRef<int64_t> k = wt.getShape();
    int64_t kh = nhwc ? k[0] : k[2], kw = nhwc ? k[1] : k[3];
    appendIfDynamic(b, loc, op.getInput(), 0, dyn);
    for (int i = 0; i < 2; ++i)
      if (rt.isDynamicDim(xh + i))
        dyn.push_back(windowOutputSize(
            b, loc, op.getInput(), xh + i, i ? kw : kh, op.getStrides()[i],
            op.getDilations()[i], pads[i], pads[i + 2], false));
  }
  Value x = nhwc ? op.getInput()
                 : transposed(b, loc, op.getInput(), {0, 2, 3, 1});
  // A depthwise convolution whose input --precision=bf16 rounded to bf16
  // and widened back reads the bf16 tensor: it widens each value as it
  // loads it, exactly, and the tensor in front of it has half the bytes.
  if (depthwise && nhwc && op->hasAttr(kBf16InputAttr))
    if (Value narrow = widenedBf16(x))
      x = narrow;
  x = padded(b, loc, x, {0, pads[0], pads[1], 0}, {0, pads[2], pads[3], 0},
             0.0);
  // The filter goes to HWCF once, at compile time for constant weights;
  // groups then take slices of the transposed filter.
  Value hwcf =
      nhwc ? op.getFilter() : transposed(b, loc, op.getFilter(), {2, 3, 1, 0});
  wt = typeOf(hwcf);
  Value y;
  if (group == 1) {
    y = convNHWC(b, loc, x, hwcf, oh, ow, op.getStrides(), op.getDilations(),
                 dyn);
  } else if (depthwise) {
    // Depthwise: [KH, KW, 1, C] -> [KH, KW, C].
    Value hwc = reshaped(b, loc, hwcf, {wt.getDimSize(0), wt.getDimSize(1), f});
    Value acc = filledTensor(b, loc, {rt.getDimSize(0), oh, ow, f},
                             rt.getElementType(), 0.0, dyn);
    y = linalg::DepthwiseConv2DNhwcHwcOp::create(
            b, loc, TypeRange{acc.getType()}, ValueRange{x, hwc},
            ValueRange{acc}, i64Vector(b, op.getStrides()),
            i64Vector(b, op.getDilations()))
            .getResult(0);
  } else {
    y = groupedConvNHWC(b, loc, x, hwcf, group, {rt.getDimSize(0), oh, ow, f},
                        op.getStrides(), op.getDilations(), dyn);
  }
  // Back to NCHW unless the op is NHWC, adding the bias on the way.
  if (nhwc && !op.getBias())
    return y;
  SmallVector<Value> inputs = {y};
  SmallVector<AffineMap> maps = {
      nhwc ? b.getMultiDimIdentityMap(4)
           : AffineMap::get(4, 0,
                            {b.getAffineDimExpr(0), b.getAffineDimExpr(2),
                             b.getAffineDimExpr(3), b.getAffineDimExpr(1)},
                            b.getContext())};
  if (Value bias = op.getBias()) {
    inputs.push_back(bias);
    maps.push_back(AffineMap::get(4, 0, {b.getAffineDimExpr(nhwc ? 3 : 1)},
                                  b.getContext()));
  }
  // The result's dynamic sizes in its own order: NCHW puts the channels,
  // always static, second, so the order of N, H, W is the same.
  return mappedGeneric(b, loc, rt.getShape(), rt.getElementType(), inputs, maps,
                       [](OpBuilder &nb, Location nl, ValueRange v) -> Value {
                         if (v.size() == 1)
                           return v[0];
                         if (isa<IntegerType>(v[0].getType()))
                           return arith::AddIOp::create(nb, nl, v[0], v[1]);
                         return arith::AddFOp::create(nb, nl, v[0], v[1]);
                       },
                       dyn);
}

/// Extra bottom/right padding so that ceil_mode's last windows fit (`h` is
/// the first spatial dimension).
SmallVector<int64_t> ceilExtra(RankedTensorType in, RankedTensorType out,
                               ArrayRef<int64_t> k, ArrayRef<int64_t> s,
                               ArrayRef<int64_t> d, ArrayRef<int64_t> pads,
                               int64_t h, bool ceilMode) {
  SmallVector<int64_t> extra(2, 0);
  for (int i = 0; i < 2; ++i) {
    // A symbolic size: ceil_mode's last window reaches at most stride - 1
    // past the padded input (more padding than a size needs is never read).
    if (in.isDynamicDim(h + i) || out.isDynamicDim(h + i)) {
      extra[i] = out.isDynamicDim(h + i) && ceilMode ? s[i] - 1 : 0;
      continue;
    }
    int64_t need = (out.getDimSize(h + i) - 1) * s[i] + (k[i] - 1) * d[i] + 1;
    int64_t have = in.getDimSize(h + i) + pads[i] + pads[i + 2];
    extra[i] = std::max<int64_t>(0, need - have);
  }
  return extra;
}

/// Pooling of `input` (NHWC when `nhwc`, else NCHW) into a result of type
/// `out` in the same layout, with `op`'s window.
template <typename PoolOp>
FailureOr<Value> lowerPoolIn(OpBuilder &b, PoolOp op, bool isMax, Value input,
                             RankedTensorType out, bool nhwc) {
  Location loc = op.getLoc();
  RankedTensorType in = typeOf(input);
  Type elt = in.getElementType();
  ArrayRef<int64_t> k = op.getKernelShape(), s = op.getStrides(),
                    d = op.getDilations(), pads = op.getPads();
  int64_t h = nhwc ? 1 : 2;
  bool ceil = op.getCeilMode();
  SmallVector<int64_t> extra = ceilExtra(in, out, k, s, d, pads, h, ceil);
  // Symbolic sizes (docs/shapes.md): the output's, in order, from the
  // input's at run time.
  SmallVector<Value> dyn;
  for (int64_t a = 0; a < 4; ++a) {
    if (!out.isDynamicDim(a))
      continue;
    if (a != h && a != h + 1) {
      dyn.push_back(tensor::DimOp::create(b, loc, input, a));
      continue;
    }
    int i = a - h;
    if (ceil && pads[i + 2] >= (k[i] - 1) * d[i] + 1)
      return op.emitError()
             << "ceil_mode with an end pad (" << pads[i + 2]
             << ") as large as the window does not support symbolic "
                "dimensions yet; give the symbolic dimensions one size each";
    dyn.push_back(windowOutputSize(b, loc, input, a, k[i], s[i], d[i],
                                   pads[i], pads[i + 2], ceil));
  }
  double padValue = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
  SmallVector<int64_t> padLo(4, 0), padHi(4, 0);
  padLo[h] = pads[0];
  padLo[h + 1] = pads[1];
  padHi[h] = pads[2] + extra[0];
  padHi[h + 1] = pads[3] + extra[1];
  Value x = padded(b, loc, input, padLo, padHi, padValue);
  Value window = emptyTensor(b, loc, k, elt);
  Value acc = filledTensor(b, loc, out.getShape(), elt, padValue, dyn);
  auto pool = [&](auto tag) -> Value {
    using Op = decltype(tag);
    return Op::create(b, loc, TypeRange{acc.getType()}, ValueRange{x, window},
                      ValueRange{acc}, i64Vector(b, s), i64Vector(b, d))
        .getResult(0);
  };
  if (isMax)
    return nhwc ? pool(linalg::PoolingNhwcMaxOp())
                : pool(linalg::PoolingNchwMaxOp());
  Value sum = nhwc ? pool(linalg::PoolingNhwcSumOp())
                   : pool(linalg::PoolingNchwSumOp());
  // Divisor per output position: window cells inside the input, or inside
  // the explicitly padded input with count_include_pad; ceil_mode's extra
  // cells never count.
  bool includePad = false;
  if constexpr (std::is_same_v<PoolOp, AvgPool2DOp>)
    includePad = op.getCountIncludePad();
  AffineMap hw = AffineMap::get(
      4, 0, {b.getAffineDimExpr(h), b.getAffineDimExpr(h + 1)}, b.getContext());
  auto divide = [](OpBuilder &nb, Location nl, Value v, Value c) -> Value {
    if (c.getType() != v.getType())
      c = arith::TruncFOp::create(nb, nl, v.getType(), c);
    return arith::DivFOp::create(nb, nl, v, c);
  };
  if (!out.hasStaticShape()) {
    // Counted per output position at run time: for each axis, the window
    // taps o * s - pad + j * d inside [lo, hi), at least one.
    SmallVector<Value> sizes;
    for (int i = 0; i < 2; ++i)
      sizes.push_back(tensor::DimOp::create(b, loc, input, h + i));
    return mappedGeneric(
        b, loc, out.getShape(), elt, ValueRange{sum},
        {b.getMultiDimIdentityMap(4)},
        [&](OpBuilder &nb, Location nl, ValueRange v) -> Value {
          auto cst = [&](int64_t c) {
            return arith::ConstantIndexOp::create(nb, nl, c).getResult();
          };
          Value total = cst(1);
          for (int i = 0; i < 2; ++i) {
            Value o = linalg::IndexOp::create(nb, nl, h + i);
            Value lo = cst(includePad ? -pads[i] : 0);
            Value hi = includePad
                           ? arith::AddIOp::create(nb, nl, sizes[i],
                                                   cst(pads[i + 2]))
                                 .getResult()
                           : sizes[i];
            Value first = arith::SubIOp::create(
                nb, nl, arith::MulIOp::create(nb, nl, o, cst(s[i])),
                cst(pads[i]));
            Value cnt = cst(0);
            for (int64_t j = 0; j < k[i]; ++j) {
              Value pos = arith::AddIOp::create(nb, nl, first, cst(j * d[i]));
              Value in = arith::AndIOp::create(
                  nb, nl,
                  arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, pos,
                                        lo),
                  arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, pos,
                                        hi));
              cnt = arith::AddIOp::create(
                  nb, nl, cnt,
                  arith::SelectOp::create(nb, nl, in, cst(1), cst(0)));
            }
            cnt = arith::MaxSIOp::create(nb, nl, cnt, cst(1));
            total = arith::MulIOp::create(nb, nl, total, cnt);
          }
          Value i64 = arith::IndexCastOp::create(nb, nl, nb.getI64Type(),
                                                 total);
          Value f = arith::SIToFPOp::create(nb, nl, nb.getF32Type(), i64);
          return divide(nb, nl, v[0], f);
        },
        dyn);
  }
  int64_t oh = out.getDimSize(h), ow = out.getDimSize(h + 1);
  SmallVector<float> counts;
  std::array<SmallVector<int64_t>, 2> perAxis;
  for (int i = 0; i < 2; ++i) {
    int64_t size = in.getDimSize(h + i);
    int64_t lo = includePad ? -pads[i] : 0;
    int64_t hi = includePad ? size + pads[i + 2] : size;
    for (int64_t o = 0; o < out.getDimSize(h + i); ++o) {
      int64_t cnt = 0;
      for (int64_t kk = 0; kk < k[i]; ++kk) {
        int64_t pos = o * s[i] - pads[i] + kk * d[i];
        cnt += pos >= lo && pos < hi;
      }
      perAxis[i].push_back(std::max<int64_t>(cnt, 1));
    }
  }
  for (int64_t h = 0; h < oh; ++h)
    for (int64_t w = 0; w < ow; ++w)
      counts.push_back((float)(perAxis[0][h] * perAxis[1][w]));
  auto countType = RankedTensorType::get({oh, ow}, b.getF32Type());
  Value countTensor = arith::ConstantOp::create(
      b, loc, countType, DenseElementsAttr::get(countType, ArrayRef<float>(counts)));
  return mappedGeneric(
      b, loc, out.getShape(), elt, ValueRange{sum, countTensor},
      {b.getMultiDimIdentityMap(4), hw},
      [&](OpBuilder &nb, Location nl, ValueRange v) -> Value {
        return divide(nb, nl, v[0], v[1]);
      });
}

/// Pooling in the op's layout; an NCHW one with symbolic sizes runs in NHWC
/// between two transposes: tiled NCHW, its window rows become rank-reducing
/// subviews that drop one of two unit dimensions (batch and row), which
/// bufferization cannot tell apart once the strides are run-time ones.
template <typename PoolOp>
FailureOr<Value> lowerPool(OpBuilder &b, PoolOp op, bool isMax) {
  RankedTensorType out = op.getType();
  if (op.isNHWC() || out.hasStaticShape())
    return lowerPoolIn(b, op, isMax, op.getInput(), out, op.isNHWC());
  Location loc = op.getLoc();
  Value input = transposed(b, loc, op.getInput(), {0, 2, 3, 1});
  SmallVector<int64_t> shape = {out.getDimSize(0), out.getDimSize(2),
                                out.getDimSize(3), out.getDimSize(1)};
  FailureOr<Value> pooled = lowerPoolIn(
      b, op, isMax, input,
      RankedTensorType::get(shape, out.getElementType()), /*nhwc=*/true);
  if (failed(pooled))
    return failure();
  return transposed(b, loc, *pooled, {0, 3, 1, 2});
}

FailureOr<Value> lowerBatchNorm(OpBuilder &b, BatchNormOp op) {
  Location loc = op.getLoc();
  RankedTensorType rt = op.getType();
  Type elt = rt.getElementType();
  int64_t c = rt.getDimSize(1);
  double eps = op.getEpsilon().convertToDouble();
  // Per channel: s = scale / sqrt(var + eps), t = bias - mean * s.
  Value s = broadcastGeneric(
      b, loc, {c}, elt, ValueRange{op.getScale(), op.getVariance()},
      [eps](OpBuilder &nb, Location nl, ValueRange v) -> Value {
        Value ve = arith::AddFOp::create(nb, nl, v[1],
                                         floatConst(nb, nl, v[1].getType(), eps));
        return arith::DivFOp::create(nb, nl, v[0],
                                     math::SqrtOp::create(nb, nl, ve));
      });
  Value t = broadcastGeneric(
      b, loc, {c}, elt, ValueRange{op.getBias(), op.getMean(), s},
      [](OpBuilder &nb, Location nl, ValueRange v) -> Value {
        return arith::SubFOp::create(nb, nl, v[0],
                                     arith::MulFOp::create(nb, nl, v[1], v[2]));
      });
  int64_t rank = rt.getRank();
  AffineMap channel =
      AffineMap::get(rank, 0, {b.getAffineDimExpr(1)}, b.getContext());
  return mappedGeneric(b, loc, rt.getShape(), elt,
                       ValueRange{op.getInput(), s, t},
                       {b.getMultiDimIdentityMap(rank), channel, channel},
                       [](OpBuilder &nb, Location nl, ValueRange v) -> Value {
                         Value m = arith::MulFOp::create(nb, nl, v[0], v[1]);
                         return arith::AddFOp::create(nb, nl, m, v[2]);
                       },
                       dynamicDims(b, loc, op.getInput()));
}

/// Two passes over the normalized block of each leading index: the mean,
/// then the variance as the mean of squared centered values (more accurate
/// than E[x^2] - E[x]^2), then one elementwise pass that normalizes, scales
/// and shifts. With `rms` there is no mean: one pass sums the squares and the
/// last pass only normalizes and scales.
FailureOr<Value> lowerLayerNorm(OpBuilder &b, LayerNormOp op) {
  Location loc = op.getLoc();
  RankedTensorType rt = op.getType();
  Type elt = rt.getElementType();
  ArrayRef<int64_t> shape = rt.getShape();
  int64_t rank = rt.getRank(), axis = op.getAxis();
  double eps = op.getEpsilon().convertToDouble();
  SmallVector<int64_t> axes, outer(shape.take_front(axis));
  int64_t count = 1;
  for (int64_t d = axis; d < rank; ++d) {
    axes.push_back(d);
    count *= shape[d];
  }
  Value x = op.getInput();
  for (int64_t d : axes)
    if (ShapedType::isDynamic(shape[d]))
      return op.emitError()
             << "the normalized dimensions of " << rt
             << " are symbolic; give them sizes (only the leading dimensions "
                "may be symbolic)";
  SmallVector<Value> allDyn = dynamicDims(b, loc, x);
  SmallVector<Value> outerDyn(ArrayRef<Value>(allDyn).take_front(
      llvm::count_if(outer, ShapedType::isDynamic)));
  // The leading dimensions; getMajorSubMap(0) would be a null map, so axis 0
  // (one statistic for the whole tensor) builds the empty-result map itself.
  AffineMap id = b.getMultiDimIdentityMap(rank),
            lead = AffineMap::get(rank, 0, id.getResults().take_front(axis),
                                  b.getContext());
  auto divideByCount = [count](OpBuilder &nb, Location nl, Value v) -> Value {
    return arith::DivFOp::create(
        nb, nl, v, floatConst(nb, nl, v.getType(), (double)count));
  };
  bool rms = op.getRms();
  // The RMS form centers on zero: no mean pass.
  Value mean;
  if (!rms) {
    Value sum =
        reduced(b, loc, x, axes, 0.0,
                [](OpBuilder &nb, Location nl, Value acc, Value v) -> Value {
                  return arith::AddFOp::create(nb, nl, acc, v);
                });
    mean = broadcastGeneric(
        b, loc, outer, elt, sum,
        [&](OpBuilder &nb, Location nl, ValueRange v) -> Value {
          return divideByCount(nb, nl, v[0]);
        },
        outerDyn);
  }
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  for (int64_t d : axes)
    iters[d] = utils::IteratorType::reduction;
  Value acc = filledTensor(b, loc, outer, elt, 0.0, outerDyn);
  SmallVector<Value> sqInputs = {x};
  SmallVector<AffineMap> sqMaps = {id, lead};
  if (!rms) {
    sqInputs.push_back(mean);
    sqMaps.push_back(lead);
  }
  Value squares =
      linalg::GenericOp::create(
          b, loc, acc.getType(), sqInputs, acc, sqMaps, iters,
          [rms](OpBuilder &nb, Location nl, ValueRange v) {
            Value d = rms ? v[0] : arith::SubFOp::create(nb, nl, v[0], v[1]);
            Value sq = arith::MulFOp::create(nb, nl, d, d);
            linalg::YieldOp::create(
                nb, nl,
                ValueRange{arith::AddFOp::create(nb, nl, v.back(), sq)});
          })
          .getResult(0);
  Value invStd = broadcastGeneric(
      b, loc, outer, elt, squares,
      [&](OpBuilder &nb, Location nl, ValueRange v) -> Value {
        Value var = divideByCount(nb, nl, v[0]);
        Value ve = arith::AddFOp::create(
            nb, nl, var, floatConst(nb, nl, var.getType(), eps));
        return math::RsqrtOp::create(nb, nl, ve);
      },
      outerDyn);
  if (rms)
    return mappedGeneric(
        b, loc, shape, elt, ValueRange{x, invStd, op.getScale()},
        {id, lead, broadcastMap(b, op.getScale().getType(), shape)},
        [](OpBuilder &nb, Location nl, ValueRange v) -> Value {
          Value n = arith::MulFOp::create(nb, nl, v[0], v[1]);
          return arith::MulFOp::create(nb, nl, n, v[2]);
        },
        allDyn);
  SmallVector<Value> inputs = {x, mean, invStd, op.getScale()};
  SmallVector<AffineMap> maps = {
      id, lead, lead, broadcastMap(b, op.getScale().getType(), shape)};
  if (Value bias = op.getBias()) {
    inputs.push_back(bias);
    maps.push_back(broadcastMap(b, typeOf(bias), shape));
  }
  return mappedGeneric(b, loc, shape, elt, inputs, maps,
                       [](OpBuilder &nb, Location nl, ValueRange v) -> Value {
                         Value c = arith::SubFOp::create(nb, nl, v[0], v[1]);
                         Value n = arith::MulFOp::create(nb, nl, c, v[2]);
                         Value y = arith::MulFOp::create(nb, nl, n, v[3]);
                         if (v.size() > 4)
                           y = arith::AddFOp::create(nb, nl, y, v[4]);
                         return y;
                       },
                       allDyn);
}

/// A reduction of `v` along its innermost dimension of run-time size n, as
/// softmax's static rows are reduced: the first 16 * (n floordiv 16)
/// elements as [..., n floordiv 16, 16] (16 lanes side by side, then over
/// the lanes), the n mod 16 left one at a time, and the two combined. A
/// reduction straight along a row of run-time length carries one scalar
/// from element to element.
Value laneSplitReduced(
    OpBuilder &b, Location loc, Value v, double init,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  RankedTensorType type = typeOf(v);
  int64_t rank = type.getRank(), axis = rank - 1;
  MLIRContext *ctx = b.getContext();
  AffineExpr s0 = getAffineSymbolExpr(0, ctx);
  Value n = tensor::DimOp::create(b, loc, v, axis);
  Value q = affine::AffineApplyOp::create(
      b, loc, AffineMap::get(0, 1, s0.floorDiv(16)), ValueRange{n});
  Value full = affine::AffineApplyOp::create(
      b, loc, AffineMap::get(0, 1, s0.floorDiv(16) * 16), ValueRange{n});
  // The rest is at most 15 (the arena's bound for it).
  Value rest = affine::AffineMinOp::create(
      b, loc,
      AffineMap::get(0, 1, {s0 - s0.floorDiv(16) * 16, getAffineConstantExpr(15, ctx)},
                     ctx),
      ValueRange{n});
  auto part = [&](OpFoldResult offset, OpFoldResult size) {
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
        strides(rank, b.getIndexAttr(1));
    SmallVector<int64_t> shape;
    for (int64_t d = 0; d < axis; ++d) {
      shape.push_back(type.getDimSize(d));
      sizes.push_back(type.isDynamicDim(d)
                          ? OpFoldResult(tensor::DimOp::create(b, loc, v, d))
                          : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
    }
    offsets[axis] = offset;
    sizes.push_back(size);
    shape.push_back(ShapedType::kDynamic);
    return tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), v, offsets,
        sizes, strides);
  };
  Value head = part(b.getIndexAttr(0), full);
  SmallVector<int64_t> split(type.getShape());
  split.back() = ShapedType::kDynamic;
  split.push_back(16);
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < axis; ++d)
    if (type.isDynamicDim(d))
      dyn.push_back(tensor::DimOp::create(b, loc, v, d));
  dyn.push_back(q);
  Value lanes = reduced(b, loc, reshaped(b, loc, head, split, dyn), {axis},
                        init, combine);
  Value headReduced = reduced(b, loc, lanes, {axis}, init, combine);
  Value tailReduced =
      reduced(b, loc, part(full, rest), {axis}, init, combine);
  RankedTensorType rt = typeOf(headReduced);
  return broadcastGeneric(
      b, loc, rt.getShape(), rt.getElementType(),
      ValueRange{headReduced, tailReduced},
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        return combine(nb, nl, a[0], a[1]);
      },
      dynamicDims(b, loc, headReduced));
}

FailureOr<Value> lowerSoftmax(OpBuilder &b, SoftmaxOp op) {
  Location loc = op.getLoc();
  RankedTensorType rt = op.getType();
  Type elt = rt.getElementType();
  int64_t rank = rt.getRank(), axis = op.getAxis();
  Value x = op.getInput();
  // The row maximum only keeps exp() in range. maxnumf skips a NaN where
  // maximumf would return it, but the NaN's own exp(x - m) is NaN either
  // way and makes the sum, hence every output of the row, NaN: the results
  // are the same. LLVM reduces maxnumf vectors with shuffles and maximumf
  // one lane at a time (a fifth of bert_small's time).
  // A reduction along the innermost dimension would combine vector lanes at
  // every step; [..., n / 16, 16] is reduced over n / 16 (16 lanes side by
  // side) and then over the 16 lanes.
  int64_t n = rt.getDimSize(axis);
  auto rowReduced = [&](Value v, double init,
                        function_ref<Value(OpBuilder &, Location, Value, Value)>
                            combine) {
    if (axis == rank - 1 && ShapedType::isDynamic(n))
      return laneSplitReduced(b, loc, v, init, combine);
    if (axis != rank - 1 || ShapedType::isDynamic(n) || n % 16 != 0 ||
        n == 16 || !rt.hasStaticShape())
      return reduced(b, loc, v, {axis}, init, combine);
    SmallVector<int64_t> split(rt.getShape());
    split.back() = n / 16;
    split.push_back(16);
    Value lanes = reduced(b, loc, reshaped(b, loc, v, split), {axis}, init,
                          combine);
    return reduced(b, loc, lanes, {axis}, init, combine);
  };
  Value m = rowReduced(x, -std::numeric_limits<double>::infinity(),
                       [](OpBuilder &nb, Location nl, Value acc, Value v) -> Value {
                         return arith::MaxNumFOp::create(nb, nl, acc, v);
                       });
  AffineMap id = b.getMultiDimIdentityMap(rank), red = dropDim(b, rank, axis);
  SmallVector<Value> dyn = dynamicDims(b, loc, x);
  Value e = mappedGeneric(b, loc, rt.getShape(), elt, ValueRange{x, m},
                          {id, red},
                          [](OpBuilder &nb, Location nl, ValueRange v) -> Value {
                            return math::ExpOp::create(
                                nb, nl, arith::SubFOp::create(nb, nl, v[0], v[1]));
                          },
                          dyn);
  Value s = rowReduced(e, 0.0,
                       [](OpBuilder &nb, Location nl, Value acc, Value v) -> Value {
                         return arith::AddFOp::create(nb, nl, acc, v);
                       });
  return mappedGeneric(b, loc, rt.getShape(), elt, ValueRange{e, s}, {id, red},
                       [](OpBuilder &nb, Location nl, ValueRange v) -> Value {
                         return arith::DivFOp::create(nb, nl, v[0], v[1]);
                       },
                       dyn);
}
} // namespace

FailureOr<Value> mlir::kiln::lowerNN(OpBuilder &b, Operation *op) {
  if (auto m = dyn_cast<MatMulOp>(op))
    return lowerMatMul(b, m);
  if (auto g = dyn_cast<GemmOp>(op))
    return lowerGemm(b, g);
  if (auto c = dyn_cast<Conv2DOp>(op))
    return lowerConv(b, c);
  if (auto p = dyn_cast<MaxPool2DOp>(op))
    return lowerPool(b, p, true);
  if (auto p = dyn_cast<AvgPool2DOp>(op))
    return lowerPool(b, p, false);
  if (auto n = dyn_cast<BatchNormOp>(op))
    return lowerBatchNorm(b, n);
  if (auto s = dyn_cast<SoftmaxOp>(op))
    return lowerSoftmax(b, s);
  if (auto n = dyn_cast<LayerNormOp>(op))
    return lowerLayerNorm(b, n);
  return Value();
}
