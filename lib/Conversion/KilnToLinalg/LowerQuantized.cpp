//===- LowerQuantized.cpp - int8 and bf16 products to linalg ----*- C++ -*-===//
//
// kiln.dynamic_quant_matmul, five steps, each a linalg op on [M, K] rows (the
// batch folded into M):
//   1. per-row min(x, 0) and max(x, 0) (reductions starting from 0);
//   2. per-row scale, 1 / scale and zero point (uint8, asymmetric);
//   3. the rows quantized to uint8 (padded with zeros to a multiple of 4);
//   4. the integer product: a linalg.generic marked `kiln.int8_matmul`
//      (u8 [M, K4, 4] x s8 [P, K4, R, 4] -> i32 [M, P, R]), which
//      --kiln-cpu-vnni-matmul replaces with a vpdpbusd micro-kernel;
//   5. the epilogue: i32 minus the zero point's share, scaled per row and
//      column, plus the bias, in f32.
//
// kiln.bf16_matmul, kiln.bf16_conv2d and kiln.bf16_batch_matmul: rows of
// bf16 activations (rounded once; for a convolution padded and unfolded),
// the product as a linalg.generic marked `kiln.bf16_matmul` (bf16 rows
// [(B,) M, Kp/2, 2] x packed [(B,) P, Kp/2, 16, 2] -> f32 [(B,) M, P, 16]),
// which --kiln-cpu-amx-matmul replaces with AMX tile loops, and the bias.
//
// kiln.static_quant_matmul and kiln.static_quant_conv2d: the input quantized
// to uint8 with the calibrated scale and zero point (for a convolution
// padded with the zero point and unfolded like bf16's), the integer product
// marked `kiln.int8_matmul` on 16-column panels (the VNNI kernel, or AMX's
// tdpbusd where the target has it), and the dequantization in the result's
// shape.
//
// kiln.static_quant_depthwise_conv2d: the input quantized to uint8 and
// padded, the integer product marked `kiln.int8_depthwise` (4 kernel rows
// per 32-bit lane, the vpdpbusd kernel of --kiln-cpu-tile-and-vectorize),
// and the same dequantization.
//
// kiln.integer_matmul, kiln.integer_conv2d and kiln.integer_depthwise_conv2d
// (imported int8 models): the uint8 input as it is (a convolution's padded
// with its run-time zero point), the same product (the depthwise one as for
// static int8), and acc - zero_point * sums[n] in i32.
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"
#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "kiln/Dialect/Kiln/IR/ElementsUtils.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
Value f32Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

/// clamp(v, lo, hi) on f32.
Value clampF(OpBuilder &b, Location loc, Value v, double lo, double hi) {
  v = arith::MaximumFOp::create(b, loc, v, f32Const(b, loc, lo));
  return arith::MinimumFOp::create(b, loc, v, f32Const(b, loc, hi));
}

/// The product generic of the tile kernels, acc += widen(a) * widen(w)
/// over the given maps and loops: uint8 rows times int8 weights in i32
/// (marked kiln.int8_matmul for the VNNI or AMX kernel), or bf16 times bf16
/// in f32 (marked kiln.bf16_matmul for the AMX kernel).
Value markedProduct(OpBuilder &b, Location loc, Value rows, Value weights,
                    Value acc, ArrayRef<AffineMap> maps,
                    ArrayRef<utils::IteratorType> loops, bool int8) {
  auto product = linalg::GenericOp::create(
      b, loc, acc.getType(), ValueRange{rows, weights}, acc, maps, loops,
      [int8](OpBuilder &nb, Location nl, ValueRange a) {
        Value sum;
        if (int8) {
          Type i32 = nb.getI32Type();
          Value av = arith::ExtUIOp::create(nb, nl, i32, a[0]);
          Value wv = arith::ExtSIOp::create(nb, nl, i32, a[1]);
          sum = arith::AddIOp::create(nb, nl, a[2],
                                      arith::MulIOp::create(nb, nl, av, wv));
        } else {
          Type f32 = nb.getF32Type();
          Value av = arith::ExtFOp::create(nb, nl, f32, a[0]);
          Value wv = arith::ExtFOp::create(nb, nl, f32, a[1]);
          sum = arith::AddFOp::create(nb, nl, a[2],
                                      arith::MulFOp::create(nb, nl, av, wv));
        }
        linalg::YieldOp::create(nb, nl, sum);
      });
  product->setAttr(int8 ? kInt8MatmulAttr : kBf16MatmulAttr,
                   UnitAttr::get(b.getContext()));
  return product.getResult(0);
}

/// The integer product of uint8 rows [M, Kp] and int8 weights packed
/// [P, Kp / 4, 4 R]: acc[m, p, r] = sum over (k4, j) of rows[m, k4, j] *
/// w[p, k4, r, j] in i32, loops (m, p, r, k4, j) on views that split the
/// groups of 4; a generic marked kiln.int8_matmul for the VNNI or AMX kernel.
Value int8RowProduct(OpBuilder &b, Location loc, Value rows, Value weights) {
  MLIRContext *ctx = b.getContext();
  auto wt = cast<RankedTensorType>(weights.getType());
  int64_t m = cast<RankedTensorType>(rows.getType()).getDimSize(0);
  int64_t panels = wt.getDimSize(0), k4 = wt.getDimSize(1),
          r = wt.getDimSize(2) / 4;
  Type i8 = b.getI8Type();
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  auto par = utils::IteratorType::parallel,
       red = utils::IteratorType::reduction;
  // M may be a run-time count (docs/shapes.md); the kernel splits it.
  Value acc = filledTensor(b, loc, {m, panels, r}, b.getI32Type(), 0.0,
                           dynamicDims(b, loc, rows));
  Value rows3 = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({m, k4, 4}, i8), rows,
      SmallVector<ReassociationIndices>{{0}, {1, 2}});
  Value w4 = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({panels, k4, r, 4}, i8), weights,
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  SmallVector<AffineMap> maps = {
      AffineMap::get(5, 0, {d(0), d(3), d(4)}, ctx),
      AffineMap::get(5, 0, {d(1), d(3), d(2), d(4)}, ctx),
      AffineMap::get(5, 0, {d(0), d(1), d(2)}, ctx)};
  return markedProduct(b, loc, rows3, w4, acc, maps,
                       {par, par, par, red, red}, /*int8=*/true);
}

FailureOr<Value> lowerDynamicQuantMatMul(OpBuilder &b,
                                         DynamicQuantMatMulOp op) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  RankedTensorType it = op.getInput().getType(), wt = op.getWeights().getType();
  int64_t k = it.getShape().back(), rows = it.getNumElements() / k;
  int64_t panels = wt.getDimSize(0), k4 = wt.getDimSize(1),
          r = wt.getDimSize(2) / 4, kp = 4 * k4;
  Type f32 = b.getF32Type(), i32 = b.getI32Type(), i8 = b.getI8Type();
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  auto par = utils::IteratorType::parallel;

  Value x = reshaped(b, loc, op.getInput(), {rows, k});
  // Columns past K meet zero weights; they are padded with 0, which changes
  // neither the range (it includes 0) nor the product.
  Value xp = padded(b, loc, x, {0, 0}, {0, kp - k}, 0.0);

  // 1. The range of each row, widened to include 0 (the fills start at 0).
  //    A row reduction of a [rows, kp] tile would reduce across vector lanes
  //    at every step; instead [rows, kp / c, c] is reduced over its middle
  //    dimension (c lanes side by side), then the c lanes.
  int64_t c = kp % 16 == 0 ? 16 : kp % 8 == 0 ? 8 : 4;
  Value x3 = reshaped(b, loc, xp, {rows, kp / c, c});
  auto range = [&](bool max) {
    auto combine = [max](OpBuilder &nb, Location nl, Value acc,
                         Value v) -> Value {
      // maxnum/minnum: LLVM reduces their vectors with shuffles, while
      // maximum/minimum (NaN-propagating) become one scalar step per lane.
      if (max)
        return arith::MaxNumFOp::create(nb, nl, acc, v);
      return arith::MinNumFOp::create(nb, nl, acc, v);
    };
    Value lanes = reduced(b, loc, x3, {1}, 0.0, combine);
    return reduced(b, loc, lanes, {1}, 0.0, combine);
  };
  Value lo = range(false), hi = range(true);

  // 2. scale = (hi - lo) / 255 (1 for an all-zero row), zero point =
  //    round(-lo / scale) in [0, 255], as f32 for step 3 and i32 for step 5.
  AffineMap id1 = b.getMultiDimIdentityMap(1);
  SmallVector<Value> inits = {emptyTensor(b, loc, {rows}, f32),
                              emptyTensor(b, loc, {rows}, f32),
                              emptyTensor(b, loc, {rows}, f32),
                              emptyTensor(b, loc, {rows}, i32)};
  auto params = linalg::GenericOp::create(
      b, loc, TypeRange(ValueRange(inits)), ValueRange{lo, hi}, inits,
      SmallVector<AffineMap>(6, id1), {par},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value range = arith::SubFOp::create(nb, nl, a[1], a[0]);
        Value scale =
            arith::DivFOp::create(nb, nl, range, f32Const(nb, nl, 255.0));
        Value isZero = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                             scale, f32Const(nb, nl, 0.0));
        scale = arith::SelectOp::create(nb, nl, isZero, f32Const(nb, nl, 1.0),
                                        scale);
        Value inv =
            arith::DivFOp::create(nb, nl, f32Const(nb, nl, 1.0), scale);
        Value zp = math::RoundEvenOp::create(
            nb, nl,
            arith::MulFOp::create(nb, nl, arith::NegFOp::create(nb, nl, a[0]),
                                  inv));
        zp = clampF(nb, nl, zp, 0.0, 255.0);
        Value zpi = arith::FPToSIOp::create(nb, nl, nb.getI32Type(), zp);
        linalg::YieldOp::create(nb, nl, ValueRange{scale, inv, zp, zpi});
      });
  Value scale = params.getResult(0), inv = params.getResult(1),
        zpf = params.getResult(2), zpi = params.getResult(3);

  // 3. q = clamp(round(x / scale) + zp, 0, 255) as (unsigned) i8.
  AffineMap id2 = b.getMultiDimIdentityMap(2);
  AffineMap row = AffineMap::get(2, 0, {d(0)}, ctx);
  Value qa = mappedGeneric(
      b, loc, {rows, kp}, i8, ValueRange{xp, inv, zpf}, {id2, row, row},
      [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value v = math::RoundEvenOp::create(
            nb, nl, arith::MulFOp::create(nb, nl, a[0], a[1]));
        v = clampF(nb, nl, arith::AddFOp::create(nb, nl, v, a[2]), 0.0, 255.0);
        Value vi = arith::FPToSIOp::create(nb, nl, nb.getI32Type(), v);
        return arith::TruncIOp::create(nb, nl, nb.getI8Type(), vi);
      });

  // 4. The integer product.
  Value product = int8RowProduct(b, loc, qa, op.getWeights());

  // 5. y = scale[m] * wscale[n] * (acc - zp[m] * wsum[n]) + bias[n], n = p R + r.
  auto perColumn = [&](Value v) { return reshaped(b, loc, v, {panels, r}); };
  SmallVector<Value> inputs = {product, scale, zpi,
                               perColumn(op.getWeightScales()),
                               perColumn(op.getWeightSums())};
  if (op.getBias())
    inputs.push_back(perColumn(op.getBias()));
  AffineMap id3 = b.getMultiDimIdentityMap(3);
  AffineMap m3 = AffineMap::get(3, 0, {d(0)}, ctx);
  AffineMap col3 = AffineMap::get(3, 0, {d(1), d(2)}, ctx);
  SmallVector<AffineMap> inMaps = {id3, m3, m3, col3, col3};
  if (op.getBias())
    inMaps.push_back(col3);
  Value y = mappedGeneric(
      b, loc, {rows, panels, r}, f32, inputs, inMaps,
      [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        // acc - zp * wsum is exact in i32; only the result is rounded.
        Value corrected = arith::SubIOp::create(
            nb, nl, a[0], arith::MulIOp::create(nb, nl, a[2], a[4]));
        Value f = arith::SIToFPOp::create(nb, nl, nb.getF32Type(), corrected);
        Value s = arith::MulFOp::create(nb, nl, a[1], a[3]);
        Value v = arith::MulFOp::create(nb, nl, f, s);
        if (a.size() > 5)
          v = arith::AddFOp::create(nb, nl, v, a[5]);
        return v;
      });
  y.getDefiningOp()->setAttr(kInt8EpilogueAttr, UnitAttr::get(ctx));
  return reshaped(b, loc, y, op.getType().getShape());
}

/// `x` [..., K] f32 rounded to bf16 (nearest even), its last dimension
/// padded with zeros to kp.
Value bf16Rows(OpBuilder &b, Location loc, Value x, int64_t kp) {
  RankedTensorType t = cast<RankedTensorType>(x.getType());
  int64_t rank = t.getRank();
  SmallVector<int64_t> low(rank, 0), high(rank, 0), shape(t.getShape());
  high.back() = kp - shape.back();
  shape.back() = kp;
  Value xp = padded(b, loc, x, low, high, 0.0);
  return mappedGeneric(
      b, loc, shape, b.getBF16Type(), ValueRange{xp},
      {b.getMultiDimIdentityMap(rank)},
      [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        return arith::TruncFOp::create(nb, nl, nb.getBF16Type(), a[0]);
      });
}

/// bf16 rows [M, Kp] times packed weights [P, Kp / 2, 32] in f32 (a generic
/// marked kiln.bf16_matmul), as `shape` (M rows of n = shape.back()
/// columns), plus `bias` [n] when given. The bias is added in `shape`, so
/// that the elementwise ops after it fuse with it and the result can be
/// written straight into a padded tensor.
Value bf16Product(OpBuilder &b, Location loc, Value rows, Value weights,
                  Value bias, ArrayRef<int64_t> shape) {
  int64_t n = shape.back();
  MLIRContext *ctx = b.getContext();
  auto wt = cast<RankedTensorType>(weights.getType());
  int64_t m = cast<RankedTensorType>(rows.getType()).getDimSize(0);
  int64_t panels = wt.getDimSize(0), k2 = wt.getDimSize(1);
  Type f32 = b.getF32Type(), bf16 = b.getBF16Type();
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  auto par = utils::IteratorType::parallel,
       red = utils::IteratorType::reduction;
  // acc[m, p, c] = sum over (k2, j) of rows[m, k2, j] * w[p, k2, c, j],
  // loops (m, p, c, k2, j).
  Value acc = filledTensor(b, loc, {m, panels, 16}, f32, 0.0);
  Value rows3 = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({m, k2, 2}, bf16), rows,
      SmallVector<ReassociationIndices>{{0}, {1, 2}});
  Value w4 = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({panels, k2, 16, 2}, bf16), weights,
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  SmallVector<AffineMap> maps = {
      AffineMap::get(5, 0, {d(0), d(3), d(4)}, ctx),
      AffineMap::get(5, 0, {d(1), d(3), d(2), d(4)}, ctx),
      AffineMap::get(5, 0, {d(0), d(1), d(2)}, ctx)};
  Value product = markedProduct(b, loc, rows3, w4, acc, maps,
                                {par, par, par, red, red}, /*int8=*/false);
  Value y = reshaped(b, loc, product, {m, panels * 16});
  // Columns past N (the last panel padded with zero weights) are dropped.
  if (panels * 16 != n)
    y = tensor::ExtractSliceOp::create(
        b, loc, y, ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(m), b.getIndexAttr(n)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
  y = reshaped(b, loc, y, shape);
  if (!bias)
    return y;
  unsigned rank = shape.size();
  AffineMap col = AffineMap::get(rank, 0, {d(rank - 1)}, ctx);
  return mappedGeneric(b, loc, shape, f32, ValueRange{y, bias},
                       {b.getMultiDimIdentityMap(rank), col},
                       [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                         return arith::AddFOp::create(nb, nl, a[0], a[1]);
                       });
}

/// kiln.bf16_matmul: the rows rounded to bf16, the product, the bias.
FailureOr<Value> lowerBf16MatMul(OpBuilder &b, Bf16MatMulOp op) {
  Location loc = op.getLoc();
  RankedTensorType it = op.getInput().getType(), rt = op.getType();
  int64_t k = it.getShape().back(), rows = it.getNumElements() / k;
  int64_t kp = 2 * op.getWeights().getType().getDimSize(1);
  Value x = bf16Rows(b, loc, reshaped(b, loc, op.getInput(), {rows, k}), kp);
  return bf16Product(b, loc, x, op.getWeights(), op.getBias(), rt.getShape());
}

/// kiln.bf16_batch_matmul: lhs rows rounded to bf16 (K padded to Kp), rhs
/// rounded and packed per batch like constant weights ([B, P, Kp / 2, 16, 2]
/// through a gather generic), the product marked kiln.bf16_matmul with a
/// leading batch loop, the padded columns dropped.
FailureOr<Value> lowerBf16BatchMatMul(OpBuilder &b, Bf16BatchMatMulOp op) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  RankedTensorType at = op.getLhs().getType(), rt = op.getType();
  int64_t batch = at.getDimSize(0), m = at.getDimSize(1), k = at.getDimSize(2),
          n = rt.getDimSize(2);
  int64_t kp = amxPaddedK(k, 2), k2 = kp / 2, panels = (n + 15) / 16;
  Type f32 = b.getF32Type(), bf16 = b.getBF16Type();
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  auto par = utils::IteratorType::parallel,
       red = utils::IteratorType::reduction;
  auto round = [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
    return arith::TruncFOp::create(nb, nl, nb.getBF16Type(), a[0]);
  };
  Value rows = bf16Rows(b, loc, op.getLhs(), kp);
  // packed[b, p, k2, c, j] = rhs[b, 2 k2 + j, 16 p + c] (zero past K and N).
  Value bp = padded(b, loc, op.getRhs(), {0, 0, 0},
                    {0, kp - k, panels * 16 - n}, 0.0);
  AffineMap gather = AffineMap::get(
      5, 0, {d(0), d(2) * 2 + d(4), d(1) * 16 + d(3)}, ctx);
  Value packed = mappedGeneric(b, loc, {batch, panels, k2, 16, 2}, bf16,
                               ValueRange{bp}, {gather}, round);
  // acc[b, m, p, c] = sum over (k2, j) of rows[b, m, k2, j] *
  // packed[b, p, k2, c, j], loops (b, m, p, c, k2, j).
  Value acc = filledTensor(b, loc, {batch, m, panels, 16}, f32, 0.0);
  Value rows4 = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({batch, m, k2, 2}, bf16), rows,
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  SmallVector<AffineMap> maps = {
      AffineMap::get(6, 0, {d(0), d(1), d(4), d(5)}, ctx),
      AffineMap::get(6, 0, {d(0), d(2), d(4), d(3), d(5)}, ctx),
      AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, ctx)};
  Value product = markedProduct(b, loc, rows4, packed, acc, maps,
                                {par, par, par, par, red, red},
                                /*int8=*/false);
  Value y = reshaped(b, loc, product, {batch, m, panels * 16});
  if (panels * 16 != n)
    y = tensor::ExtractSliceOp::create(
        b, loc, y,
        ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0),
                               b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(batch), b.getIndexAttr(m),
                               b.getIndexAttr(n)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                               b.getIndexAttr(1)});
  return y;
}

/// Marks the fill under `padded`, an insert_slice into a zero-filled tensor,
/// as padding that only meets zero weights (kUnreadPaddingAttr).
void markUnreadPadding(Value padded) {
  if (auto insert = padded.getDefiningOp<tensor::InsertSliceOp>())
    if (auto fill = insert.getDest().getDefiningOp<linalg::FillOp>())
      fill->setAttr(kUnreadPaddingAttr, UnitAttr::get(padded.getContext()));
}

/// The rows [M, Kp] of a convolution over `xq`, an NHWC input already in
/// the product's element type: padded with `padValue`, unfolded into rows
/// of K = KH * KW * C values per output pixel (im2col: a copy through the
/// window map), K padded with zeros to kp. A 1x1 convolution with stride 1
/// and no padding needs no unfolding: its rows are the pixels. With
/// `kPadUnread` (int8: the padded columns meet zero weights in an integer
/// product) the K padding's fill is marked kUnreadPaddingAttr. A scalar
/// `runTimePad` (of xq's element type) replaces `padValue` when given.
Value unfoldedRows(OpBuilder &b, Location loc, Value xq,
                   ArrayRef<int64_t> kernel, ArrayRef<int64_t> s,
                   ArrayRef<int64_t> dl, ArrayRef<int64_t> pads, int64_t oh,
                   int64_t ow, int64_t kp, double padValue, bool kPadUnread,
                   Value runTimePad = {}) {
  MLIRContext *ctx = b.getContext();
  auto it = cast<RankedTensorType>(xq.getType());
  Type elt = it.getElementType();
  int64_t n = it.getDimSize(0), c = it.getDimSize(3);
  int64_t k = kernel[0] * kernel[1] * c, m = n * oh * ow;
  bool pointwise = kernel[0] == 1 && kernel[1] == 1 && s[0] == 1 &&
                   s[1] == 1 && llvm::all_of(pads, [](int64_t p) {
                     return p == 0;
                   });
  if (pointwise) {
    Value rows = reshaped(b, loc, xq, {m, k});
    if (kp != k) {
      rows = padded(b, loc, rows, {0, 0}, {0, kp - k}, 0.0);
      if (kPadUnread)
        markUnreadPadding(rows);
    }
    return rows;
  }
  Value xp = padded(b, loc, xq, {0, pads[0], pads[1], 0},
                    {0, pads[2], pads[3], 0}, padValue, runTimePad);
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  // cols[n, oh, ow, kh, j] with j = kw C + c. Without dilation along W,
  // (kw, c) is one contiguous run of KW C values in the row of pixels:
  // xp viewed as [N, Hp, Wp C] gives xp[n, oh s0 + kh d0, ow s1 C + j], so
  // the unfolding copies runs of KW C (192 for 3x3 on 64 channels) rather
  // than C. Only for C a multiple of 16: LLVM 22 aborts on some bf16
  // vectors of odd lengths (9 lanes for a 3x3 stem on RGB). Otherwise
  // (kw, c) stay two dimensions.
  SmallVector<int64_t> colsShape = {n, oh, ow, kernel[0]};
  AffineMap window;
  Value src = xp;
  if (dl[1] == 1 && c % 16 == 0) {
    auto xt = cast<RankedTensorType>(xp.getType());
    src = reshaped(b, loc, xp, {n, xt.getDimSize(1), xt.getDimSize(2) * c});
    colsShape.push_back(kernel[1] * c);
    window = AffineMap::get(
        5, 0, {d(0), d(1) * s[0] + d(3) * dl[0], d(2) * (s[1] * c) + d(4)},
        ctx);
  } else {
    colsShape.append({kernel[1], c});
    window = AffineMap::get(6, 0,
                            {d(0), d(1) * s[0] + d(3) * dl[0],
                             d(2) * s[1] + d(4) * dl[1], d(5)},
                            ctx);
  }
  // With K padded, the unfolding writes straight into the first K columns
  // of the zero-filled [M, Kp] rows.
  Value dest, init;
  SmallVector<OpFoldResult> zeros(2, b.getIndexAttr(0)),
      ones(2, b.getIndexAttr(1)),
      sizes = {b.getIndexAttr(m), b.getIndexAttr(k)};
  // [M, K] <-> [N, OH, OW | KH, ...] directly (not through 1-D), so that
  // the view of the strided slice stays a view after bufferization.
  SmallVector<ReassociationIndices> groups = {{0, 1, 2}, {3, 4}};
  if (colsShape.size() == 6)
    groups.back().push_back(5);
  if (kp != k) {
    dest = filledTensor(b, loc, {m, kp}, elt, 0.0);
    Value slice =
        tensor::ExtractSliceOp::create(b, loc, dest, zeros, sizes, ones);
    init = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(colsShape, elt), slice, groups);
  } else {
    init = tensor::EmptyOp::create(b, loc, colsShape, elt);
  }
  SmallVector<AffineMap> maps = {window,
                                 b.getMultiDimIdentityMap(colsShape.size())};
  SmallVector<utils::IteratorType> loops(colsShape.size(),
                                         utils::IteratorType::parallel);
  Value cols =
      linalg::GenericOp::create(
          b, loc, init.getType(), ValueRange{src}, ValueRange{init}, maps,
          loops,
          [](OpBuilder &nb, Location nl, ValueRange a) {
            linalg::YieldOp::create(nb, nl, a[0]);
          })
          .getResult(0);
  Value rows = tensor::CollapseShapeOp::create(b, loc, cols, groups);
  if (dest) {
    rows = tensor::InsertSliceOp::create(b, loc, rows, dest, zeros, sizes,
                                         ones);
    if (kPadUnread)
      markUnreadPadding(rows);
  }
  return rows;
}

/// An NHWC input seen as rows for an elementwise conversion: [N H W, C]
/// when C is a multiple of 16, else one flat run (an RGB input's C = 3
/// would otherwise give 3-lane vectors).
SmallVector<int64_t> conversionShape(RankedTensorType it) {
  int64_t c = it.getShape().back(), numel = it.getNumElements();
  if (c % 16 != 0)
    return {numel};
  return {numel / c, c};
}

/// kiln.bf16_conv2d: the input rounded to bf16 once, padded and unfolded,
/// then the same product as a matmul.
FailureOr<Value> lowerBf16Conv2D(OpBuilder &b, Bf16Conv2DOp op) {
  Location loc = op.getLoc();
  RankedTensorType it = op.getInput().getType(), rt = op.getType();
  int64_t kp = 2 * op.getWeights().getType().getDimSize(1);
  SmallVector<int64_t> flat = conversionShape(it);
  Value xb = bf16Rows(b, loc, reshaped(b, loc, op.getInput(), flat),
                      flat.back());
  xb = reshaped(b, loc, xb, it.getShape());
  Value rows = unfoldedRows(b, loc, xb, op.getKernel(), op.getStrides(),
                            op.getDilations(), op.getPads(), rt.getDimSize(1),
                            rt.getDimSize(2), kp, 0.0, /*kPadUnread=*/false);
  return bf16Product(b, loc, rows, op.getWeights(), op.getBias(),
                     rt.getShape());
}

/// `x` f32 quantized with a fixed scale and zero point to uint8 (stored as
/// i8): clamp(round_half_even(x / scale) + zp, 0, 255).
Value quantizedU8(OpBuilder &b, Location loc, Value x, float scale,
                  int64_t zeroPoint) {
  auto t = cast<RankedTensorType>(x.getType());
  double inv = 1.0 / double(scale), zp = double(zeroPoint);
  return mappedGeneric(
      b, loc, t.getShape(), b.getI8Type(), ValueRange{x},
      {b.getMultiDimIdentityMap(t.getRank())},
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        auto round = math::RoundEvenOp::create(
            nb, nl, arith::MulFOp::create(nb, nl, a[0], f32Const(nb, nl, inv)));
        // Static int8's requantization, which --kiln-fold-requantization may
        // rewrite once fused with the producer's epilogue.
        round->setAttr(kRequantAttr, nb.getUnitAttr());
        Value v = round;
        v = clampF(nb, nl, arith::AddFOp::create(nb, nl, v, f32Const(nb, nl, zp)),
                   0.0, 255.0);
        Value vi = arith::FPToSIOp::create(nb, nl, nb.getI32Type(), v);
        return arith::TruncIOp::create(nb, nl, nb.getI8Type(), vi);
      });
}

/// The dequantization of an i32 product `acc` already in the result's
/// shape (N = its last dimension): (acc - zp * sums[n]) * (scale *
/// wscale[n]) + bias[n], in f32. It is an elementwise generic of its own so
/// that the elementwise ops after it fuse with it.
Value dequantized(OpBuilder &b, Location loc, Value acc, Value wscales,
                  Value wsums, Value bias, float scale, int64_t zeroPoint) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(acc.getType()).getShape();
  unsigned rank = shape.size();
  AffineMap col =
      AffineMap::get(rank, 0, {b.getAffineDimExpr(rank - 1)}, b.getContext());
  SmallVector<Value> inputs = {acc, wscales, wsums};
  if (bias)
    inputs.push_back(bias);
  SmallVector<AffineMap> inMaps(inputs.size(), col);
  inMaps[0] = b.getMultiDimIdentityMap(rank);
  return mappedGeneric(
      b, loc, shape, b.getF32Type(), inputs, inMaps,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        // acc - zp * sum is exact in i32; only the result is rounded.
        Value zp = arith::ConstantOp::create(
            nb, nl, nb.getI32IntegerAttr(int32_t(zeroPoint)));
        Value corrected = arith::SubIOp::create(
            nb, nl, a[0], arith::MulIOp::create(nb, nl, zp, a[2]));
        Value f = arith::SIToFPOp::create(nb, nl, nb.getF32Type(), corrected);
        Value v = arith::MulFOp::create(
            nb, nl, f,
            arith::MulFOp::create(nb, nl, a[1], f32Const(nb, nl, scale)));
        if (a.size() > 3)
          v = arith::AddFOp::create(nb, nl, v, a[3]);
        return v;
      });
}

/// uint8 rows [M, Kp] times packed int8 weights [P, Kp / 4, 64]: the
/// integer product (a generic marked kiln.int8_matmul, which the VNNI or,
/// re-marked, the AMX kernel replaces) in i32, in `shape` (M rows of N =
/// shape.back() columns).
Value int8Columns(OpBuilder &b, Location loc, Value rows, Value weights,
                  ArrayRef<int64_t> shape, ValueRange dyn = {}) {
  int64_t n = shape.back();
  auto wt = cast<RankedTensorType>(weights.getType());
  int64_t m = cast<RankedTensorType>(rows.getType()).getDimSize(0);
  int64_t panels = wt.getDimSize(0);
  SmallVector<Value> mDyn = dynamicDims(b, loc, rows);
  Value product = int8RowProduct(b, loc, rows, weights);
  Value y = reshaped(b, loc, product, {m, panels * 16}, mDyn);
  // Columns past N (the last panel padded with zero weights) are dropped.
  if (panels * 16 != n)
    y = tensor::ExtractSliceOp::create(
        b, loc, y, ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{mDyn.empty() ? OpFoldResult(b.getIndexAttr(m))
                                            : OpFoldResult(mDyn[0]),
                               b.getIndexAttr(n)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
  return reshaped(b, loc, y, shape, dyn);
}

/// int8Columns, then the dequantization (acc - zp * sums[n]) * (scale *
/// wscale[n]) + bias[n] in `shape`, so that the elementwise ops after it
/// fuse with it.
Value int8Product(OpBuilder &b, Location loc, Value rows, Value weights,
                  Value wscales, Value wsums, Value bias, float scale,
                  int64_t zeroPoint, ArrayRef<int64_t> shape) {
  return dequantized(b, loc, int8Columns(b, loc, rows, weights, shape), wscales,
                     wsums, bias, scale, zeroPoint);
}

/// The zero point as the i8 value whose bits hold it (128 -> -128).
double zeroPointBits(int64_t zp) { return double(zp > 127 ? zp - 256 : zp); }

/// kiln.static_quant_matmul: rows quantized with the calibrated scale
/// (K padded with the zero point, which meets zero weights), the product.
FailureOr<Value> lowerStaticQuantMatMul(OpBuilder &b, StaticQuantMatMulOp op) {
  Location loc = op.getLoc();
  RankedTensorType it = op.getInput().getType(), rt = op.getType();
  int64_t k = it.getShape().back(), rows = it.getNumElements() / k;
  int64_t kp = 4 * op.getWeights().getType().getDimSize(1);
  float scale = op.getInputScale().convertToFloat();
  int64_t zp = op.getInputZeroPoint();
  Value q = quantizedU8(b, loc, reshaped(b, loc, op.getInput(), {rows, k}),
                        scale, zp);
  if (kp != k)
    q = padded(b, loc, q, {0, 0}, {0, kp - k}, 0.0);
  return int8Product(b, loc, q, op.getWeights(), op.getWeightScales(),
                     op.getWeightSums(), op.getBias(), scale, zp,
                     rt.getShape());
}

/// kiln.static_quant_conv2d: the input quantized once, padded with the zero
/// point (an exact 0), unfolded, then the product.
FailureOr<Value> lowerStaticQuantConv2D(OpBuilder &b, StaticQuantConv2DOp op) {
  Location loc = op.getLoc();
  RankedTensorType it = op.getInput().getType(), rt = op.getType();
  int64_t kp = 4 * op.getWeights().getType().getDimSize(1);
  float scale = op.getInputScale().convertToFloat();
  int64_t zp = op.getInputZeroPoint();
  Value q = quantizedU8(
      b, loc, reshaped(b, loc, op.getInput(), conversionShape(it)), scale, zp);
  q = reshaped(b, loc, q, it.getShape());
  Value rows = unfoldedRows(b, loc, q, op.getKernel(), op.getStrides(),
                            op.getDilations(), op.getPads(), rt.getDimSize(1),
                            rt.getDimSize(2), kp, zeroPointBits(zp),
                            /*kPadUnread=*/true);
  return int8Product(b, loc, rows, op.getWeights(), op.getWeightScales(),
                     op.getWeightSums(), op.getBias(), scale, zp,
                     rt.getShape());
}

/// The i32 product of a depthwise int8 convolution: the uint8 NHWC input
/// `q` padded with `padByte` (or the scalar `runTimePad`, an i8), then a
/// generic marked kiln.int8_depthwise over loops (n, oh, ow, c, kq, kw, t),
/// which reads input row oh s0 + (4 kq + t) d0 against packed weight [kq,
/// kw, c, t] (--kiln-cpu-tile-and-vectorize gives its tiles a vpdpbusd
/// kernel), into `rt`'s shape. Rows past the last kernel row (4 kq + t >=
/// KH) meet zero weights; the padding below the input covers the ones they
/// would read.
Value int8DepthwiseProduct(OpBuilder &b, Location loc, Value q,
                           TypedValue<RankedTensorType> weights,
                           RankedTensorType rt, ArrayRef<int64_t> kernel,
                           ArrayRef<int64_t> s, ArrayRef<int64_t> dil,
                           ArrayRef<int64_t> pads, double padByte,
                           Value runTimePad = {}) {
  auto it = cast<RankedTensorType>(q.getType());
  int64_t quads = weights.getType().getDimSize(0);
  int64_t rowsRead =
      (rt.getDimSize(1) - 1) * s[0] + (4 * quads - 1) * dil[0] + 1;
  int64_t below = std::max<int64_t>(
      pads[2], rowsRead - it.getDimSize(1) - pads[0]);
  q = padded(b, loc, q, {0, pads[0], pads[1], 0}, {0, below, pads[3], 0},
             padByte, runTimePad);
  MLIRContext *ctx = b.getContext();
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  // (n, oh, ow, c, kq, kw, t)
  SmallVector<AffineMap> maps = {
      AffineMap::get(7, 0,
                     {d(0), d(1) * s[0] + (d(4) * 4 + d(6)) * dil[0],
                      d(2) * s[1] + d(5) * dil[1], d(3)},
                     ctx),
      AffineMap::get(7, 0, {d(4), d(5), d(3), d(6)}, ctx),
      AffineMap::get(7, 0, {d(0), d(1), d(2), d(3)}, ctx)};
  auto par = utils::IteratorType::parallel,
       red = utils::IteratorType::reduction;
  Value acc = filledTensor(b, loc, rt.getShape(), b.getI32Type(), 0.0);
  auto product = linalg::GenericOp::create(
      b, loc, acc.getType(), ValueRange{q, weights}, acc, maps,
      {par, par, par, par, red, red, red},
      [](OpBuilder &nb, Location nl, ValueRange a) {
        Type i32 = nb.getI32Type();
        Value av = arith::ExtUIOp::create(nb, nl, i32, a[0]);
        Value wv = arith::ExtSIOp::create(nb, nl, i32, a[1]);
        linalg::YieldOp::create(
            nb, nl,
            arith::AddIOp::create(nb, nl, a[2],
                                  arith::MulIOp::create(nb, nl, av, wv))
                .getResult());
      });
  // The kernel rows that are not padding: the kernel skips the others.
  product->setAttr(kInt8DepthwiseAttr, b.getI64IntegerAttr(kernel[0]));
  return product.getResult(0);
}

/// kiln.static_quant_depthwise_conv2d: the input quantized once to uint8
/// and padded with the zero point, the product, then the dequantization in
/// the result's shape.
FailureOr<Value>
lowerStaticQuantDepthwiseConv2D(OpBuilder &b, StaticQuantDepthwiseConv2DOp op) {
  Location loc = op.getLoc();
  RankedTensorType it = op.getInput().getType(), rt = op.getType();
  float scale = op.getInputScale().convertToFloat();
  int64_t zp = op.getInputZeroPoint();
  Value q = quantizedU8(
      b, loc, reshaped(b, loc, op.getInput(), conversionShape(it)), scale, zp);
  q = reshaped(b, loc, q, it.getShape());
  Value acc = int8DepthwiseProduct(
      b, loc, q, op.getWeights(), rt, op.getKernel(), op.getStrides(),
      op.getDilations(), op.getPads(), zeroPointBits(zp));
  return dequantized(b, loc, acc, op.getWeightScales(), op.getWeightSums(),
                     op.getBias(), scale, zp);
}

/// The one element of `zp` (an integer product's run-time zero point).
Value zeroPointScalar(OpBuilder &b, Location loc, Value zp) {
  auto t = cast<RankedTensorType>(zp.getType());
  SmallVector<Value> at(t.getRank(), arith::ConstantIndexOp::create(b, loc, 0));
  return tensor::ExtractOp::create(b, loc, zp, at);
}

/// acc [..., N] minus zp * sums[n], exactly in i32 (an elementwise generic
/// of its own, so that the dequantization after it fuses with it). With
/// both constant (a QDQ model's activation zero point and the weights'
/// sums) the products are one constant, computed here: a vpmulld less per
/// vector of outputs in the product's epilogue; the same i32 values.
Value zeroPointCorrected(OpBuilder &b, Location loc, Value acc, Value zp,
                         Value sums) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(acc.getType()).getShape();
  unsigned rank = shape.size();
  DenseIntElementsAttr zpValue;
  ElementsAttr sumValues;
  if (matchPattern(zp, m_Constant(&zpValue)) && zpValue.getNumElements() == 1 &&
      zpValue.getElementType().isInteger(32) &&
      matchPattern(sums, m_Constant(&sumValues)))
    if (std::optional<ElementsAttr> products = multipliedInt32Elements(
            sumValues,
            int32_t((*zpValue.getValues<APInt>().begin()).getSExtValue()))) {
      Value shares =
          arith::ConstantOp::create(b, loc, cast<TypedAttr>(*products));
      AffineMap column = AffineMap::get(rank, 0, {b.getAffineDimExpr(rank - 1)},
                                        b.getContext());
      return mappedGeneric(
          b, loc, shape, b.getI32Type(), ValueRange{acc, shares},
          {b.getMultiDimIdentityMap(rank), column},
          [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
            return arith::SubIOp::create(nb, nl, a[0], a[1]);
          },
          dynamicDims(b, loc, acc));
    }
  auto zt = cast<RankedTensorType>(zp.getType());
  SmallVector<AffineExpr> origin(zt.getRank(), b.getAffineConstantExpr(0));
  SmallVector<AffineMap> maps = {
      b.getMultiDimIdentityMap(rank),
      AffineMap::get(rank, 0, origin, b.getContext()),
      AffineMap::get(rank, 0, {b.getAffineDimExpr(rank - 1)}, b.getContext())};
  return mappedGeneric(
      b, loc, shape, b.getI32Type(), ValueRange{acc, zp, sums}, maps,
      [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        return arith::SubIOp::create(nb, nl, a[0],
                                     arith::MulIOp::create(nb, nl, a[1], a[2]));
      },
      dynamicDims(b, loc, acc));
}

/// kiln.integer_matmul: the uint8 rows as they are (K padded with zeros,
/// which meet zero weights), the product, the zero point's share removed.
FailureOr<Value> lowerIntegerMatMul(OpBuilder &b, IntegerMatMulOp op) {
  Location loc = op.getLoc();
  RankedTensorType it = op.getInput().getType(), rt = op.getType();
  int64_t k = it.getShape().back();
  int64_t kp = 4 * op.getWeights().getType().getDimSize(1);
  Value in = asSignless(b, loc, op.getInput());
  // The rows: a static count, or (symbolic leading sizes, docs/shapes.md)
  // their product at run time; the result's leading sizes are the input's.
  int64_t rows = ShapedType::kDynamic;
  SmallVector<Value> rowsDyn, outDyn;
  if (it.hasStaticShape()) {
    rows = it.getNumElements() / k;
  } else {
    rowsDyn.push_back(sizeProduct(b, loc, in, 0, it.getRank() - 1));
    outDyn = dynamicDims(b, loc, in);
  }
  Value q = reshaped(b, loc, in, {rows, k}, rowsDyn);
  if (kp != k) {
    q = padded(b, loc, q, {0, 0}, {0, kp - k}, 0.0);
    markUnreadPadding(q);
  }
  Value acc = int8Columns(b, loc, q, op.getWeights(), rt.getShape(), outDyn);
  return zeroPointCorrected(b, loc, acc, op.getInputZeroPoint(),
                            op.getWeightSums());
}

/// kiln.integer_conv2d: the uint8 input padded with its zero point (whose
/// share the correction removes again, so padding adds 0), unfolded, the
/// product, the correction.
FailureOr<Value> lowerIntegerConv2D(OpBuilder &b, IntegerConv2DOp op) {
  Location loc = op.getLoc();
  RankedTensorType rt = op.getType();
  int64_t kp = 4 * op.getWeights().getType().getDimSize(1);
  Value zpByte = arith::TruncIOp::create(
      b, loc, b.getI8Type(), zeroPointScalar(b, loc, op.getInputZeroPoint()));
  Value rows = unfoldedRows(b, loc, asSignless(b, loc, op.getInput()),
                            op.getKernel(), op.getStrides(), op.getDilations(),
                            op.getPads(), rt.getDimSize(1), rt.getDimSize(2),
                            kp, 0.0, /*kPadUnread=*/true, zpByte);
  Value acc = int8Columns(b, loc, rows, op.getWeights(), rt.getShape());
  return zeroPointCorrected(b, loc, acc, op.getInputZeroPoint(),
                            op.getWeightSums());
}

/// kiln.integer_depthwise_conv2d: the uint8 input padded with its zero
/// point (padding adds 0 after the correction), the product, the
/// correction by the channels' weight sums.
FailureOr<Value> lowerIntegerDepthwiseConv2D(OpBuilder &b,
                                             IntegerDepthwiseConv2DOp op) {
  Location loc = op.getLoc();
  Value zpByte = arith::TruncIOp::create(
      b, loc, b.getI8Type(), zeroPointScalar(b, loc, op.getInputZeroPoint()));
  Value acc = int8DepthwiseProduct(
      b, loc, asSignless(b, loc, op.getInput()), op.getWeights(), op.getType(),
      op.getKernel(), op.getStrides(), op.getDilations(), op.getPads(), 0.0,
      zpByte);
  return zeroPointCorrected(b, loc, acc, op.getInputZeroPoint(),
                            op.getWeightSums());
}
} // namespace

FailureOr<Value> mlir::kiln::lowerQuantized(OpBuilder &b, Operation *op) {
  if (auto q = dyn_cast<DynamicQuantMatMulOp>(op))
    return lowerDynamicQuantMatMul(b, q);
  if (auto m = dyn_cast<Bf16MatMulOp>(op))
    return lowerBf16MatMul(b, m);
  if (auto c = dyn_cast<Bf16Conv2DOp>(op))
    return lowerBf16Conv2D(b, c);
  if (auto m = dyn_cast<Bf16BatchMatMulOp>(op))
    return lowerBf16BatchMatMul(b, m);
  if (auto m = dyn_cast<StaticQuantMatMulOp>(op))
    return lowerStaticQuantMatMul(b, m);
  if (auto c = dyn_cast<StaticQuantConv2DOp>(op))
    return lowerStaticQuantConv2D(b, c);
  if (auto c = dyn_cast<StaticQuantDepthwiseConv2DOp>(op))
    return lowerStaticQuantDepthwiseConv2D(b, c);
  if (auto m = dyn_cast<IntegerMatMulOp>(op))
    return lowerIntegerMatMul(b, m);
  if (auto c = dyn_cast<IntegerConv2DOp>(op))
    return lowerIntegerConv2D(b, c);
  if (auto c = dyn_cast<IntegerDepthwiseConv2DOp>(op))
    return lowerIntegerDepthwiseConv2D(b, c);
  return Value();
}
