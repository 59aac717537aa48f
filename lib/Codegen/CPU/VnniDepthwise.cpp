//===- VnniDepthwise.cpp - int8 depthwise tiles on vpdpbusd -----*- C++ -*-===//
//
// A depthwise convolution has no reduction over channels, so vpdpbusd's four
// products per 32-bit lane must come from four kernel taps of one channel.
// The product generic (marked kiln.int8_depthwise) takes them from four
// kernel rows: its packed weights hold q[kh, kw, c] at [kh / 4, kw, c, kh %
// 4]. A tile of R output rows x P pixels x L channels then runs as:
//
//   for each quad g of input rows, for each input column j:
//     I = the bytes of rows g (4 of them) at column j, interleaved per
//         channel: [x0 c0, x1 c0, x2 c0, x3 c0, x0 c1, ...]
//         (two 16-byte loads, two inserts and one vpermt2b)
//     for each output row r and kernel column kw with j = px s1 + kw d1:
//       acc[r][px] = vpdpbusd(acc[r][px], I, W[r][g][kw])
//
// Each interleaved column serves KW pixels (stride 1) of every output row
// whose window covers its rows. Two output rows at stride 1 share one quad of
// 4 input rows (rows 0-3 for row 0's taps 0-2 and row 1's taps 0-2); row 1
// reads it with its weights moved up one byte in each lane: a weight quad for
// a window that starts `delta` rows into the quad is built from the packed
// quads q0 = floor(delta / 4) and q0 + 1 with two shifts and an or.
//
// The accumulators start from the tile's init (a zero fill, folded away) and
// go back whole, so that the epilogue tile that reads them gets them in
// registers (Common/LowerVectorOps.cpp forwards the write to the read).
//
//===----------------------------------------------------------------------===//
#include "VnniDepthwise.h"

#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace {
/// The coefficient of loop `dim` in `e`, a sum of loops times constants.
std::optional<int64_t> coefficient(AffineExpr e, unsigned dim) {
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return d.getPosition() == dim ? 1 : 0;
  if (isa<AffineConstantExpr>(e))
    return 0;
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return std::nullopt;
  if (e.getKind() == AffineExprKind::Add) {
    std::optional<int64_t> l = coefficient(bin.getLHS(), dim),
                           r = coefficient(bin.getRHS(), dim);
    if (!l || !r)
      return std::nullopt;
    return *l + *r;
  }
  if (e.getKind() == AffineExprKind::Mul) {
    if (auto c = dyn_cast<AffineConstantExpr>(bin.getRHS()))
      if (std::optional<int64_t> l = coefficient(bin.getLHS(), dim))
        return *l * c.getValue();
    if (auto c = dyn_cast<AffineConstantExpr>(bin.getLHS()))
      if (std::optional<int64_t> r = coefficient(bin.getRHS(), dim))
        return *r * c.getValue();
  }
  return std::nullopt;
}

Value splatI32(OpBuilder &b, Location loc, int64_t lanes, int32_t v) {
  auto t = VectorType::get({lanes}, b.getI32Type());
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(t, b.getI32IntegerAttr(v)));
}
} // namespace

bool kiln::isU8S8ProductBody(linalg::GenericOp op) {
  return bodyIs<arith::ExtUIOp, arith::ExtSIOp, arith::MulIOp, arith::AddIOp>(
      op);
}

std::optional<kiln::Int8Depthwise>
kiln::matchInt8Depthwise(linalg::GenericOp op) {
  auto kh = op->getAttrOfType<IntegerAttr>(kInt8DepthwiseAttr);
  if (!kh || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != 7)
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  MLIRContext *ctx = op.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  if (maps[0].getNumResults() != 4 || maps[0].getResult(0) != d(0) ||
      maps[0].getResult(3) != d(3) ||
      maps[1] != AffineMap::get(7, 0, {d(4), d(5), d(3), d(6)}, ctx) ||
      maps[2] != AffineMap::get(7, 0, {d(0), d(1), d(2), d(3)}, ctx))
    return std::nullopt;
  if (!isU8S8ProductBody(op))
    return std::nullopt;
  Int8Depthwise k;
  k.kernelRows = kh.getInt();
  AffineExpr row = maps[0].getResult(1), col = maps[0].getResult(2);
  std::optional<int64_t> s0 = coefficient(row, 1), quad = coefficient(row, 4),
                         d0 = coefficient(row, 6), s1 = coefficient(col, 2),
                         d1 = coefficient(col, 5);
  if (!s0 || !quad || !d0 || !s1 || !d1 || *s0 < 1 || *d0 < 1 || *s1 < 1 ||
      *d1 < 1 || *quad != 4 * *d0)
    return std::nullopt;
  for (unsigned i : {0u, 2u, 3u, 5u})
    if (coefficient(row, i) != 0)
      return std::nullopt;
  for (unsigned i : {0u, 1u, 3u, 4u, 6u})
    if (coefficient(col, i) != 0)
      return std::nullopt;
  k.strides[0] = *s0;
  k.strides[1] = *s1;
  k.dilations[0] = *d0;
  k.dilations[1] = *d1;
  return k;
}

LogicalResult kiln::replaceInt8DepthwiseTile(RewriterBase &rewriter,
                                             linalg::GenericOp op) {
  std::optional<Int8Depthwise> k = matchInt8Depthwise(op);
  if (!k || !op.hasPureTensorSemantics())
    return failure();
  SmallVector<int64_t> r = op.getStaticLoopRanges();
  if (ShapedType::isDynamicShape(r) || r[0] != 1 || r[6] != 4)
    return failure();
  int64_t rows = r[1], pixels = r[2], channels = r[3], quads = r[4],
          kw = r[5];
  int64_t lanes = int8DepthwiseLanes(channels);
  // A tile of more than 32 accumulators would spill; several output rows
  // share quads of consecutive input rows only without a row dilation.
  if (!lanes || rows * pixels * (channels / lanes) > 32 ||
      (rows > 1 && k->dilations[0] != 1))
    return failure();
  Value input = op.getDpsInputOperand(0)->get();
  Value weights = op.getDpsInputOperand(1)->get();
  Value init = op.getDpsInitOperand(0)->get();
  auto inType = dyn_cast<RankedTensorType>(input.getType());
  auto initType = dyn_cast<RankedTensorType>(init.getType());
  if (!inType || !inType.hasStaticShape() || !initType ||
      !initType.hasStaticShape())
    return failure();
  int64_t inRows = inType.getDimSize(1), inCols = inType.getDimSize(2);

  Location loc = op.getLoc();
  OpBuilder &b = rewriter;
  rewriter.setInsertionPoint(op);
  Type i8 = b.getI8Type(), i32 = b.getI32Type();
  auto rowBytes = VectorType::get({lanes}, i8);
  auto quadBytes = VectorType::get({4 * lanes}, i8);
  auto accType = VectorType::get({lanes}, i32);
  std::string intrinsic =
      "llvm.x86.avx512.vpdpbusd." + std::to_string(32 * lanes);
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value zeroI8 = arith::ConstantIntOp::create(b, loc, 0, 8);
  Value zeroI32 = arith::ConstantIntOp::create(b, loc, 0, 32);
  Value zeroRow = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(rowBytes, b.getI8IntegerAttr(0)));

  // The input rows of quad g, byte t (-1: none, or a row no window reads).
  int64_t s0 = k->strides[0], d0 = k->dilations[0], kh = k->kernelRows;
  auto quadRow = [&](int64_t g, int64_t t) -> int64_t {
    if (d0 != 1) {
      int64_t tap = 4 * g + t;
      return rows == 1 && tap < kh ? tap * d0 : -1;
    }
    int64_t row = 4 * g + t;
    for (int64_t o = 0; o < rows; ++o)
      if (row >= o * s0 && row < o * s0 + kh && row < inRows)
        return row;
    return -1;
  };
  int64_t inputQuads = d0 != 1 ? quads : ((rows - 1) * s0 + kh + 3) / 4;

  // The accumulators, from the init.
  auto whole = VectorType::get(initType.getShape(), i32);
  SmallVector<Value> zeros(4, idx(0));
  Value accAll = vector::TransferReadOp::create(
      b, loc, whole, init, zeros, zeroI32,
      SmallVector<bool>(initType.getRank(), true));
  int64_t regs = channels / lanes;
  SmallVector<Value> acc(rows * pixels * regs);
  auto accAt = [&](int64_t o, int64_t px, int64_t v) -> Value & {
    return acc[(o * pixels + px) * regs + v];
  };
  for (int64_t o = 0; o < rows; ++o)
    for (int64_t px = 0; px < pixels; ++px) {
      Value row = vector::ExtractOp::create(b, loc, accAll,
                                            ArrayRef<int64_t>{0, o, px});
      for (int64_t v = 0; v < regs; ++v)
        accAt(o, px, v) = vector::ExtractStridedSliceOp::create(
            b, loc, row, ArrayRef<int64_t>{v * lanes}, ArrayRef<int64_t>{lanes},
            ArrayRef<int64_t>{1});
    }

  // The interleaving of 4 rows of L bytes: lane c takes byte c of each.
  SmallVector<int64_t> pairMask, quadMask;
  for (int64_t i = 0; i < 2 * lanes; ++i)
    pairMask.push_back(i);
  for (int64_t c = 0; c < lanes; ++c)
    for (int64_t t = 0; t < 4; ++t)
      quadMask.push_back(t * lanes + c);

  // The weights with each channel's 4 bytes in one dimension, so that a
  // vector of them is one load (a 2-D read became a load per channel).
  Value weightBytes = tensor::CollapseShapeOp::create(
      b, loc, weights, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  for (int64_t v = 0; v < regs; ++v) {
    Value c0 = idx(v * lanes);
    // The packed weight quads [q][kw] as i32 lanes.
    SmallVector<Value> packed(quads * kw);
    for (int64_t q = 0; q < quads; ++q)
      for (int64_t j = 0; j < kw; ++j) {
        Value bytes = vector::TransferReadOp::create(
            b, loc, quadBytes, weightBytes,
            ValueRange{idx(q), idx(j), idx(4 * v * lanes)}, zeroI8,
            ArrayRef<bool>{true});
        packed[q * kw + j] = vector::BitCastOp::create(b, loc, accType, bytes);
      }
    // The weights output row o applies to quad g at kernel column j, or
    // null when its window misses the quad.
    auto weightFor = [&](int64_t o, int64_t g, int64_t j) -> Value {
      if (d0 != 1)
        return vector::BitCastOp::create(b, loc, quadBytes,
                                         packed[g * kw + j]);
      int64_t delta = 4 * g - o * s0; // the window's tap at byte 0
      if (delta >= kh || delta <= -4)
        return Value();
      int64_t q0 = llvm::divideFloorSigned(delta, int64_t(4)),
              rho = delta - 4 * q0;
      auto quad = [&](int64_t q) -> Value {
        return q >= 0 && q < quads ? packed[q * kw + j] : Value();
      };
      Value lo = quad(q0), hi = quad(q0 + 1), w;
      if (rho == 0) {
        w = lo;
      } else {
        if (lo)
          lo = arith::ShRUIOp::create(b, loc, lo,
                                      splatI32(b, loc, lanes, 8 * rho));
        if (hi)
          hi = arith::ShLIOp::create(b, loc, hi,
                                     splatI32(b, loc, lanes, 32 - 8 * rho));
        w = lo && hi ? arith::OrIOp::create(b, loc, lo, hi).getResult()
                     : (lo ? lo : hi);
      }
      return w ? vector::BitCastOp::create(b, loc, quadBytes, w).getResult()
               : Value();
    };
    for (int64_t g = 0; g < inputQuads; ++g) {
      SmallVector<SmallVector<Value>> w(rows, SmallVector<Value>(kw));
      bool any = false;
      for (int64_t o = 0; o < rows; ++o)
        for (int64_t j = 0; j < kw; ++j)
          any |= bool(w[o][j] = weightFor(o, g, j));
      if (!any)
        continue;
      for (int64_t col = 0; col < inCols; ++col) {
        // The (pixel, kernel column) pairs that read this column.
        SmallVector<std::pair<int64_t, int64_t>> uses;
        for (int64_t j = 0; j < kw; ++j) {
          int64_t at = col - j * k->dilations[1];
          if (at >= 0 && at % k->strides[1] == 0 &&
              at / k->strides[1] < pixels)
            uses.push_back({at / k->strides[1], j});
        }
        if (uses.empty())
          continue;
        Value rowVec[4];
        for (int64_t t = 0; t < 4; ++t) {
          int64_t row = quadRow(g, t);
          rowVec[t] = row < 0 ? zeroRow
                              : vector::TransferReadOp::create(
                                    b, loc, rowBytes, input,
                                    ValueRange{idx(0), idx(row), idx(col), c0},
                                    zeroI8, ArrayRef<bool>{true})
                                    .getResult();
        }
        Value lo = vector::ShuffleOp::create(b, loc, rowVec[0], rowVec[1],
                                             pairMask);
        Value hi = vector::ShuffleOp::create(b, loc, rowVec[2], rowVec[3],
                                             pairMask);
        Value quad = vector::ShuffleOp::create(b, loc, lo, hi, quadMask);
        for (auto [px, j] : uses)
          for (int64_t o = 0; o < rows; ++o) {
            if (!w[o][j])
              continue;
            Value &a = accAt(o, px, v);
            a = LLVM::CallIntrinsicOp::create(
                    b, loc, accType, b.getStringAttr(intrinsic),
                    ValueRange{a, quad, w[o][j]})
                    .getResult(0);
          }
      }
    }
  }

  // The accumulators back, whole.
  for (int64_t o = 0; o < rows; ++o)
    for (int64_t px = 0; px < pixels; ++px) {
      Value row = vector::ExtractOp::create(b, loc, accAll,
                                            ArrayRef<int64_t>{0, o, px});
      for (int64_t v = 0; v < regs; ++v)
        row = vector::InsertStridedSliceOp::create(
            b, loc, accAt(o, px, v), row, ArrayRef<int64_t>{v * lanes},
            ArrayRef<int64_t>{1});
      accAll = vector::InsertOp::create(b, loc, row, accAll,
                                        ArrayRef<int64_t>{0, o, px});
    }
  Value result =
      vector::TransferWriteOp::create(
          b, loc, accAll, init, zeros,
          SmallVector<bool>(initType.getRank(), true))
          .getResult();
  rewriter.replaceOp(op, result);
  return success();
}
