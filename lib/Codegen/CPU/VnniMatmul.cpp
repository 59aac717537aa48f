//===- VnniMatmul.cpp - int8 and bf16 dot-product kernels -----*- C++ -*-===//
//
// The integer product of dynamic and static int8 (a linalg.generic marked
// kiln.int8_matmul: u8 rows times s8 weights packed 4 k per 32-bit lane)
// becomes an explicit register-blocked micro-kernel. LLVM 22 does not form
// vpdpbusd on its own: the generic tiling of this op gives scalar multiplies,
// and even the per-lane 4-way dot written plainly in LLVM IR (zext/sext,
// mul, strided lanes added) becomes pmovzx/pmovsx/pmaddwd and shuffles. So
// the kernel calls the intrinsic itself:
//
//   for m0 in 0..M step mr:               rows of the tile
//     for p in 0..P step pp:              pp panels of R columns
//       acc[mr][pp R/16] = 0              (in registers)
//       for k4 in 0..K4:
//         b[j][i] = w[p + j, k4, 64 i : 64 i + 64]    pp R/16 loads
//         for each row: a = broadcast(qa[m0 + row, 4 k4 : 4 k4 + 4])
//           acc[row][j][i] = vpdpbusd(acc[row][j][i], a, b[j][i])
//       [epilogue on the registers] store into out[m0 : m0 + mr, p.., :]
//
// The weights were packed panel by panel at compile time, so a panel streams
// through memory contiguously while the mr rows of qa stay in L1. When the
// rows are a convolution's unfolded windows (vnni::Window), the k loop runs
// over the taps and each tap's run of KW C bytes, and the broadcasts read the
// padded input itself: the unfolding, KH KW times the input, is not made
// (the int8 U-Net's 3x3 layers spent 11% of their time copying it). Weights
// over 1 MiB swap the two outer loops (each panel group read once, all rows
// inside). A bf16 product (kiln.bf16_matmul, on targets with AVX512-BF16
// and no AMX) is the same kernel on pairs of k: vdpbf16ps into f32.
//
//===----------------------------------------------------------------------===//
#include "VnniDepthwise.h"
#include "VnniKernel.h"
#include "VnniMatch.h"
#include "kiln/Codegen/CPU/Passes.h"
#include "kiln/Codegen/Common/Remarks.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "kiln/Dialect/Kiln/IR/ElementsUtils.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include <functional>
#include <map>

namespace mlir::kiln {
#define GEN_PASS_DEF_VNNIMATMULPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln::vnni;

namespace {
int64_t divisorAtMost(int64_t size, int64_t target) {
  for (int64_t d = std::min(size, target); d > 1; --d)
    if (size % d == 0)
      return d;
  return 1;
}

/// `v` with the dimensions of each group in `groups` merged (a view).
Value collapsed(OpBuilder &b, Location loc, Value v,
                ArrayRef<ReassociationIndices> groups) {
  return tensor::CollapseShapeOp::create(b, loc, v, groups);
}
} // namespace

void VnniKernel::chooseTileShape(int64_t maxRows) {
  // A panel of 16 columns (static int8 keeps AMX's layout without AMX) is
  // one register per row: such panels go up to four at a time, so that a
  // tile has 12 to 16 accumulators. One at a time, SqueezeNet's 13 x 13
  // layers (169 rows, no divisor up to 8) ran one accumulator per tile, a
  // single chain of dependent vpdpbusd.
  pp = nv == 1 && !avx2 ? divisorAtMost(k.p, 4) : 1;
  int64_t rowTarget =
      std::min(maxRows, std::max<int64_t>(1, accumulatorRegs() / (nv * pp)));
  if (ShapedType::isDynamic(k.m)) {
    // No divisor to look for: full tiles of the target, the rest in
    // halving tiles (runTimeTail).
    mr = std::min(rowTarget, mMax);
    return;
  }
  // The largest divisor of M up to the target, unless it is under half the
  // target: then tiles of the target and one tile of the rows left over.
  mr = divisorAtMost(k.m, rowTarget);
  if (2 * mr <= rowTarget && k.m > rowTarget)
    mr = rowTarget;
  rowsOf = k.m;
  if (consumer &&
      cast<RankedTensorType>(consumer->op.getResult(0).getType()).getRank() ==
          4)
    chooseRank4TileShape(maxRows);
  full = rowsOf / mr;
  tail = rowsOf % mr;
}

/// A consumer of rank 4 ([1, H, W, C]) takes one row of H per iteration: W
/// pixel rows, written as one row of its result (the interior of a padded
/// tensor or a slice of a concatenation after the in-place rewrites, where
/// no [M, C] view exists), in tiles of mr rows and one of the rest. The
/// panels per tile and mr are the cheapest by a count of cycles per k step
/// of a tile of a rows and q panels: two vpdpbusd a cycle, 1.5 loads (a
/// broadcast per row, a weight vector per register), and no less than the
/// vpdpbusd latency. Tiles of 11 rows of one panel for 55 (a divisor), one
/// broadcast per vpdpbusd, ran SqueezeNet's 55 x 55 expansions 20% slower
/// than 4 x 4 and a tail of 3; tiles of 5 x 3 panels and a tail of 2 for
/// MobileNetV2's 112 ran 3% slower in all than 8 x 2.
void VnniKernel::chooseRank4TileShape(int64_t maxRows) {
  auto ct = cast<RankedTensorType>(consumer->op.getResult(0).getType());
  hRows = ct.getDimSize(1);
  wRows = ct.getDimSize(2);
  rowsOf = wRows;
  auto cycles = [&](int64_t a, int64_t q) {
    if (avx2) // two vpmaddwd a cycle, with as many vpaddd; 4 weight loads
              // a panel register and a broadcast a row, 2 loads a cycle
      return std::max({a * q * nv * 2.0, a * q * nv * 8.0 / 3.5,
                       (q * nv * 4.0 + a) / 2.0, 4.0});
    return std::max({a * q * nv / 2.0, (a + q * nv) / 1.5, 5.0});
  };
  double best = 0;
  for (int64_t q = nv == 1 && !avx2 ? std::min<int64_t>(4, k.p) : 1; q >= 1;
       --q) {
    if (k.p % q)
      continue;
    int64_t t = std::min(
        {maxRows, std::max<int64_t>(1, accumulatorRegs() / (nv * q)), wRows});
    for (int64_t a : {divisorAtMost(wRows, t), t}) {
      // Ties go to tiles without a tail (less code, one loop).
      double cost = (wRows / a * cycles(a, q) +
                     (wRows % a ? cycles(wRows % a, q) + 0.5 : 0)) *
                    double(k.p / q);
      if (best == 0 || cost < best) {
        best = cost;
        pp = q;
        mr = a;
      }
    }
  }
}

Value VnniKernel::idx(OpBuilder &, int64_t v) {
  Value &c = constants[v];
  if (!c)
    c = arith::ConstantIndexOp::create(b, loc, v);
  return c;
}

/// The constants, the byte views of the operands, the output and the
/// consumer's broadcasts, made once ahead of the loops.
void VnniKernel::prepare() {
  for (int64_t v :
       {int64_t(0), int64_t(1), g, k.m, mr, k.p, k.k4, pp, full * mr, full - 1,
        mr + tail, k.r, wRows, hRows, full, tail, full + (tail ? 1 : 0)})
    if (!ShapedType::isDynamic(v))
      idx(b, v);
  if (ShapedType::isDynamic(k.m)) {
    mRun = tensor::DimOp::create(b, loc, k.rows, 0);
    fullRun = arith::DivUIOp::create(b, loc, mRun, idx(b, mr));
    splitRun = arith::MulIOp::create(b, loc, fullRun, idx(b, mr));
    // runTimeTail's masks (its tiles of n < mr rows are in the loop below).
    for (int64_t n = 1; n < mr; n *= 2)
      idx(b, ~(2 * n - 1));
  }
  for (int64_t i = 0; i < nv; ++i) {
    idx(b, 16 * g * i);
    idx(b, 16 * i);
    for (int64_t q = 1; q < parts; ++q) // the AVX2 form's 16-byte loads
      idx(b, 16 * g * i + 16 * q);
  }
  for (int64_t row = 1; row < std::max(mr + tail, pp); ++row)
    idx(b, row);
  if (const std::optional<Window> &w = k.window)
    for (int64_t v : {w->ow, w->oh, w->hp, w->rowStride, w->tapStride,
                      w->pixelStride, w->taps, w->run / g, w->kwCount,
                      w->kwStride, w->kwCount * (w->run / g)})
      idx(b, v);
  zero = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(part, b.getZeroAttr(part.getElementType())));
  zeroLane = arith::ConstantOp::create(b, loc, b.getZeroAttr(lane));
  // Byte views the kernel indexes directly: [M, 4 K4] and [P, K4, 4 R]
  // (the expand_shapes they come from fold away).
  // Unfolded windows are read from the padded input itself, [N Hp, Wp C].
  if (k.window)
    rows = cast<RankedTensorType>(k.window->src.getType()).getRank() == 4
               ? collapsed(b, loc, k.window->src, {{0, 1}, {2, 3}})
               : collapsed(b, loc, k.window->src, {{0, 1}, {2}});
  else
    rows = collapsed(b, loc, k.rows, {{0}, {1, 2}});
  weights = collapsed(b, loc, k.weights, {{0}, {1}, {2, 3}});
  if (avx2)
    prepareAvx2();
  // Only the rows may be of run-time size (match, matchConsumer).
  ValueRange rowsDyn = mRun ? ValueRange(mRun) : ValueRange();
  out = consumer
            ? tensor::EmptyOp::create(
                  b, loc,
                  cast<RankedTensorType>(consumer->op.getResult(0).getType())
                      .getShape(),
                  getElementTypeOrSelf(consumer->op.getResult(0).getType()),
                  rowsDyn)
                  .getResult()
            : tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{k.m, k.p, k.r},
                                      epilogue ? f32 : acc.getElementType(),
                                      rowsDyn)
                  .getResult();
  zeroF = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  zeroI32 = arith::ConstantIntOp::create(b, loc, 0, 32);
  if (consumer) {
    for (auto [in, kind] :
         llvm::zip(consumer->op.getDpsInputOperands(), consumer->kinds)) {
      Value v = in->get();
      if (kind == Consumer::Scalar) {
        if (auto t = dyn_cast<RankedTensorType>(v.getType()))
          v = tensor::ExtractOp::create(
              b, loc, v, SmallVector<Value>(t.getRank(), idx(b, 0)));
        v = vector::BroadcastOp::create(b, loc, lanes(v.getType()), v);
      }
      if (auto t = dyn_cast<RankedTensorType>(v.getType());
          kind == Consumer::Channels && t.getRank() == 4) // read as [C]
        v = collapsed(b, loc, v, {ReassociationIndices{0, 1, 2, 3}});
      scalars.push_back(v);
    }
    consumer->op.getBody()->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (operand.getParentRegion() != &consumer->op.getRegion() &&
            !outside.contains(operand))
          outside.map(operand, vector::BroadcastOp::create(
                                   b, loc, lanes(operand.getType()), operand)
                                   .getResult());
    });
  }
  overwrites = b.getUnitAttr();
}

/// The AVX2 form's operands in 16 bits, which is all pmaddwd multiplies:
/// the rows zero-extended once ahead of the kernel (a pass over the input,
/// against the KH KW F multiply-adds each byte takes part in), so that a
/// row's group is one 64-bit broadcast from memory; and constant weights
/// sign-extended at compile time, so that pmaddwd reads them from memory.
/// Widening both per step of the k loop took 8 more vector ops per tile
/// step and left too few registers: ResNet-18 QDQ ran slower than in f32.
/// Unfolded rows of 1 MiB and more (a 3-channel stem's, 1.9 MB in ResNet-18)
/// are the exception: a 16-bit copy beside them took the arena from 4.1 to
/// 7.0 MB, so the k loop widens their groups itself (one vpmovzxbw a row).
void VnniKernel::prepareAvx2() {
  Type i16 = b.getI16Type();
  zeroWord = arith::ConstantOp::create(b, loc, b.getZeroAttr(i16));
  auto rowType = cast<RankedTensorType>(rows.getType());
  wideRows = k.window || (mRun ? mMax * rowType.getDimSize(1)
                               : rowType.getNumElements()) < kWideRowsBytes;
  if (wideRows)
    rows = widenedRows(rowType);
  // The packed weights, through the reshapes that keep their bytes' order.
  Value w = k.weights;
  while (Operation *def = w.getDefiningOp()) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
      break;
    w = def->getOperand(0);
  }
  auto cst = w.getDefiningOp<arith::ConstantOp>();
  auto elements = cst ? dyn_cast<ElementsAttr>(cst.getValue()) : ElementsAttr();
  if (!elements)
    return;
  std::optional<ElementsAttr> wide = mlir::kiln::widenInt8Elements(
      elements, cast<RankedTensorType>(weights.getType()).getShape());
  if (!wide)
    return;
  weights =
      arith::ConstantOp::create(b, loc, cast<TypedAttr>(*wide)).getResult();
  wideWeights = true;
}

/// The rows zero-extended to i16 by an elementwise generic.
Value VnniKernel::widenedRows(RankedTensorType rowType) {
  Type i16 = b.getI16Type();
  auto wideType = rowType.clone(i16);
  SmallVector<Value> dyn;
  if (mRun)
    dyn.push_back(mRun);
  Value empty = tensor::EmptyOp::create(b, loc, wideType.getShape(), i16, dyn);
  AffineMap id = b.getMultiDimIdentityMap(wideType.getRank());
  return linalg::GenericOp::create(
             b, loc, wideType, rows, empty, ArrayRef<AffineMap>{id, id},
             SmallVector<utils::IteratorType>(wideType.getRank(),
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(
                   nb, l,
                   arith::ExtUIOp::create(nb, l, i16, args[0]).getResult());
             })
      .getResult(0);
}

/// The consumer's body on 16 lanes of accumulators at `at` of its result
/// (where its full-shape inputs are read too), their per-channel values at
/// `chan`.
Value VnniKernel::applyConsumer(OpBuilder &b2, Value accVec, ValueRange at,
                                ValueRange chan) {
  IRMapping map = outside;
  Block *body = consumer->op.getBody();
  for (auto [arg, kind, in] :
       llvm::zip(body->getArguments(), consumer->kinds, scalars)) {
    Type elt = arg.getType();
    Value v = in;
    if (kind == Consumer::Product)
      v = accVec;
    else if (kind != Consumer::Scalar)
      v = vector::TransferReadOp::create(
          b2, loc, lanes(elt), in, kind == Consumer::Full ? at : chan,
          arith::ConstantOp::create(b2, loc, b2.getZeroAttr(elt)),
          ArrayRef<bool>{true});
    map.map(arg, v);
  }
  for (Operation &inner : body->without_terminator()) {
    Value r;
    if (auto cst = dyn_cast<arith::ConstantOp>(inner)) {
      r = arith::ConstantOp::create(
          b2, loc,
          DenseElementsAttr::get(lanes(cst.getType()),
                                 cast<TypedAttr>(cst.getValue())));
    } else {
      OperationState state(loc, inner.getName());
      for (Value operand : inner.getOperands())
        state.addOperands(map.lookup(operand));
      state.addTypes(lanes(inner.getResult(0).getType()));
      state.addAttributes(inner.getAttrs());
      r = b2.create(state)->getResult(0);
    }
    map.map(inner.getResult(0), r);
  }
  return map.lookup(body->getTerminator()->getOperand(0));
}

/// Into the product's [M, P, R], or in a forall the slice of its own rows
/// (row m0 at `rowBase`) or panels (ownPanels, panel p0 at 0).
Store VnniKernel::productStore(std::optional<int64_t> rowBase,
                               bool ownPanels) {
  return [this, rowBase, ownPanels](OpBuilder &b2, Value v, Value t,
                                    int64_t row, Value m, int64_t j, Value p,
                                    int64_t i) -> Value {
    return vector::TransferWriteOp::create(
               b2, loc, v, t,
               ValueRange{rowBase ? idx(b2, *rowBase + row) : m,
                          ownPanels ? idx(b2, j) : p, idx(b2, 16 * i)},
               ArrayRef<bool>{true})
        .getResult();
  };
}

/// Through the consumer into its [M, P, R] result (in a forall's slice: row
/// m0 at `rowBase`, or panel p0 at 0 with ownPanels), or into [1, H, W, C]
/// at row h, pixels from w0 (in a forall's slice: at hAt, wAt).
Store VnniKernel::consumerStore(std::optional<int64_t> rowBase, bool ownPanels,
                                Value h, Value w0, Value hAt, Value wAt) {
  return [this, rowBase, ownPanels, h, w0, hAt,
          wAt](OpBuilder &b2, Value v, Value t, int64_t row, Value m, int64_t j,
               Value p, int64_t i) -> Value {
    SmallVector<Value> at, to, chan;
    if (h) {
      Value c0 = arith::AddIOp::create(
          b2, loc, arith::MulIOp::create(b2, loc, p, idx(b2, k.r)),
          idx(b2, 16 * i));
      chan = {c0};
      auto plus = [&](Value x) -> Value {
        return row ? arith::AddIOp::create(b2, loc, x, idx(b2, row)).getResult()
                   : x;
      };
      at = {idx(b2, 0), h, plus(w0), c0};
      to = {idx(b2, 0), hAt, wAt == w0 ? at[2] : plus(wAt), c0};
    } else {
      chan = {p, idx(b2, 16 * i)};
      at = {m, p, chan[1]};
      to = {rowBase ? idx(b2, *rowBase + row) : m, ownPanels ? idx(b2, j) : p,
            chan[1]};
    }
    return vector::TransferWriteOp::create(b2, loc,
                                           applyConsumer(b2, v, at, chan), t,
                                           to, ArrayRef<bool>{true})
        .getResult();
  };
}

/// One group of k of row `row` (at rowAt[row], column col, or with colAt
/// colAt[row] + col), repeated across a register: 4 bytes in each 32-bit
/// lane, 2 bf16 in each 32 bits, or on AVX2 4 widened k in each 64 bits.
Value VnniKernel::rowGroup(OpBuilder &b3, int64_t row, ArrayRef<Value> rowAt,
                           Value col, ArrayRef<Value> colAt) {
  Value at = colAt.empty()
                 ? col
                 : arith::AddIOp::create(b3, loc, colAt[row], col).getResult();
  Type word = avx2 ? b3.getI16Type() : lane;
  Type whole = avx2 ? b3.getI64Type() : i32;
  int64_t copies = avx2 ? 4 : 16;
  bool widen = avx2 && !wideRows;
  Value a = vector::TransferReadOp::create(
      b3, loc, VectorType::get({g}, widen ? lane : word), rows,
      ValueRange{rowAt[row], at}, avx2 && !widen ? zeroWord : zeroLane,
      ArrayRef<bool>{true});
  if (widen)
    a = arith::ExtUIOp::create(b3, loc, VectorType::get({g}, word), a);
  a = vector::BitCastOp::create(b3, loc, VectorType::get({1}, whole), a);
  a = vector::ExtractOp::create(b3, loc, a, 0);
  a = vector::BroadcastOp::create(b3, loc, VectorType::get({copies}, whole), a);
  return vector::BitCastOp::create(
      b3, loc, avx2 ? VectorType::get({16}, word) : bytes64, a);
}

/// One step of the k loop: loads the panels' weight vectors at group k4,
/// broadcasts one group of k of each row (row `row` of the rows at column
/// `col`, or with colAt at colAt[row] + col) and issues one dot-product
/// instruction per accumulator. Accumulator (row, j, i) is register i of
/// panel j.
SmallVector<Value> VnniKernel::kStep(OpBuilder &b3, ArrayRef<Value> panel,
                                     Value k4, ValueRange accs,
                                     ArrayRef<Value> rowAt, Value col,
                                     ArrayRef<Value> colAt) {
  SmallVector<Value> w;
  for (int64_t j = 0; j < pp; ++j)
    for (int64_t i = 0; i < nv; ++i)
      w.push_back(vector::TransferReadOp::create(
          b3, loc, bytes64, weights,
          ValueRange{panel[j], k4, idx(b3, 16 * g * i)}, zeroLane,
          ArrayRef<bool>{true}));
  SmallVector<Value> next;
  for (int64_t row = 0; row < int64_t(rowAt.size()); ++row) {
    Value a = rowGroup(b3, row, rowAt, col, colAt);
    for (int64_t c = 0; c < pp * nv; ++c)
      next.push_back(LLVM::CallIntrinsicOp::create(
                         b3, loc, acc, b3.getStringAttr(intrinsic),
                         ValueRange{accs[row * pp * nv + c], a, w[c]})
                         .getResult(0));
  }
  return next;
}

/// kStep on AVX2, which multiplies 16-bit integers only: pmaddwd multiplies
/// 16 pairs of them and adds each pair into a 32-bit lane. Each 16 bytes of
/// a weight vector (columns 4q .. 4q + 3, 4 k each) are 16 16-bit lanes
/// (widened at compile time, or here when the weights are no constant), and
/// the row's group of 4 (widened by prepareAvx2 or rowGroup) is repeated in
/// each 64 bits, so lane 2c + h of part q adds the products of k 2h and 2h + 1
/// of column 4q + c. u8 x s8 products and their pairs fit 16 and 32 bits:
/// exact, as vpdpbusd. Accumulator (row, j, i, q) is part q of register i of
/// panel j.
SmallVector<Value> VnniKernel::kStepAvx2(OpBuilder &b3, ArrayRef<Value> panel,
                                         Value k4, ValueRange accs,
                                         ArrayRef<Value> rowAt, Value col,
                                         ArrayRef<Value> colAt) {
  Type i16 = b3.getI16Type();
  auto words = VectorType::get({16}, i16);
  auto bytes16 = VectorType::get({16}, i8);
  SmallVector<Value> w;
  for (int64_t j = 0; j < pp; ++j)
    for (int64_t i = 0; i < nv; ++i)
      for (int64_t q = 0; q < parts; ++q) {
        SmallVector<Value, 3> at{panel[j], k4, idx(b3, 64 * i + 16 * q)};
        w.push_back(
            wideWeights
                ? vector::TransferReadOp::create(b3, loc, words, weights, at,
                                                 zeroWord, ArrayRef<bool>{true})
                      .getResult()
                : arith::ExtSIOp::create(b3, loc, words,
                                         vector::TransferReadOp::create(
                                             b3, loc, bytes16, weights, at,
                                             zeroLane, ArrayRef<bool>{true}))
                      .getResult());
      }
  SmallVector<Value> next;
  for (int64_t row = 0; row < int64_t(rowAt.size()); ++row) {
    Value a = rowGroup(b3, row, rowAt, col, colAt);
    for (int64_t c = 0; c < int64_t(w.size()); ++c) {
      Value pairs = LLVM::CallIntrinsicOp::create(b3, loc, part,
                                                  b3.getStringAttr(intrinsic),
                                                  ValueRange{a, w[c]})
                        .getResult(0);
      next.push_back(arith::AddIOp::create(
          b3, loc, accs[row * int64_t(w.size()) + c], pairs));
    }
  }
  return next;
}

/// Accumulator register `index` (row, panel, register of 16 columns) after
/// the k loop; on AVX2 the sums of its four parts' pairs of lanes.
Value VnniKernel::accumulated(OpBuilder &b2, scf::ForOp kLoop, int64_t index) {
  if (!avx2)
    return kLoop.getResult(index);
  auto r = [&](int64_t q) { return kLoop.getResult(index * parts + q); };
  SmallVector<int64_t> first16, evens, odds;
  for (int64_t l = 0; l < 16; ++l) {
    first16.push_back(l);
    evens.push_back(2 * l);
    odds.push_back(2 * l + 1);
  }
  Value lo = vector::ShuffleOp::create(b2, loc, r(0), r(1), first16);
  Value hi = vector::ShuffleOp::create(b2, loc, r(2), r(3), first16);
  return arith::AddIOp::create(
      b2, loc, vector::ShuffleOp::create(b2, loc, lo, hi, evens),
      vector::ShuffleOp::create(b2, loc, lo, hi, odds));
}

/// The k loop of one block; the accumulators are the loop's results. Over
/// unfolded windows it is the kernel rows, then (per tap) the taps of the
/// row, then the contiguous run of bytes: row m of the product reads the
/// padded input from row n Hp + oh s0 + kh d0, column ow s1 C (+ kw d1 C):
/// (n, oh, ow) of m is worked out once per block, outside the loops.
scf::ForOp VnniKernel::accumulate(OpBuilder &b2, ArrayRef<Value> panel,
                                  ArrayRef<Value> rowIdx, int64_t mr) {
  SmallVector<Value> init(mr * pp * nv * parts, zero);
  if (!k.window)
    return scf::ForOp::create(
        b2, loc, idx(b2, 0), idx(b2, k.k4), idx(b2, 1), init,
        [&](OpBuilder &b3, Location, Value k4, ValueRange accs) {
          Value col = arith::MulIOp::create(b3, loc, k4, idx(b3, g));
          scf::YieldOp::create(
              b3, loc,
              avx2 ? kStepAvx2(b3, panel, k4, accs, rowIdx, col, {})
                   : kStep(b3, panel, k4, accs, rowIdx, col, {}));
        });
  const Window &win = *k.window;
  SmallVector<Value> rowBase, colAt;
  for (Value m : rowIdx) {
    Value pixel = arith::RemUIOp::create(b2, loc, m, idx(b2, win.ow));
    Value line = arith::DivUIOp::create(b2, loc, m, idx(b2, win.ow));
    // line = n OH + oh: the row of the padded input is n Hp + oh s0.
    Value oh = arith::RemUIOp::create(b2, loc, line, idx(b2, win.oh));
    Value n = arith::DivUIOp::create(b2, loc, line, idx(b2, win.oh));
    rowBase.push_back(arith::AddIOp::create(
        b2, loc, arith::MulIOp::create(b2, loc, n, idx(b2, win.hp)),
        arith::MulIOp::create(b2, loc, oh, idx(b2, win.rowStride))));
    colAt.push_back(
        arith::MulIOp::create(b2, loc, pixel, idx(b2, win.pixelStride)));
  }
  int64_t perRun = win.run / g;
  // The runs of one kernel row: one (KW C) or KW (C each, kw d1 C apart).
  auto runs = [&](OpBuilder &b3, Value kh, ArrayRef<Value> rowAt,
                  ValueRange tapAccs) -> ValueRange {
    Value first =
        arith::MulIOp::create(b3, loc, kh, idx(b3, win.kwCount * perRun));
    auto run = [&](OpBuilder &b4, Value start, ArrayRef<Value> colsAt,
                   ValueRange runAccs) {
      return scf::ForOp::create(
          b4, loc, idx(b4, 0), idx(b4, perRun), idx(b4, 1), runAccs,
          [&](OpBuilder &b5, Location, Value j, ValueRange accs) {
            Value k4 = arith::AddIOp::create(b5, loc, start, j);
            Value col = arith::MulIOp::create(b5, loc, j, idx(b5, g));
            scf::YieldOp::create(
                b5, loc,
                avx2 ? kStepAvx2(b5, panel, k4, accs, rowAt, col, colsAt)
                     : kStep(b5, panel, k4, accs, rowAt, col, colsAt));
          });
    };
    if (win.kwCount == 1)
      return run(b3, first, colAt, tapAccs).getResults();
    return scf::ForOp::create(
               b3, loc, idx(b3, 0), idx(b3, win.kwCount), idx(b3, 1), tapAccs,
               [&](OpBuilder &b4, Location, Value kw, ValueRange kwAccs) {
                 Value start = arith::AddIOp::create(
                     b4, loc, first,
                     arith::MulIOp::create(b4, loc, kw, idx(b4, perRun)));
                 Value right =
                     arith::MulIOp::create(b4, loc, kw, idx(b4, win.kwStride));
                 SmallVector<Value> colsAt;
                 for (Value c : colAt)
                   colsAt.push_back(arith::AddIOp::create(b4, loc, c, right));
                 scf::YieldOp::create(
                     b4, loc, run(b4, start, colsAt, kwAccs).getResults());
               })
        .getResults();
  };
  return scf::ForOp::create(
      b2, loc, idx(b2, 0), idx(b2, win.taps), idx(b2, 1), init,
      [&](OpBuilder &b3, Location, Value kh, ValueRange tapAccs) {
        Value down = arith::MulIOp::create(b3, loc, kh, idx(b3, win.tapStride));
        SmallVector<Value> rowAt;
        for (Value base : rowBase)
          rowAt.push_back(arith::AddIOp::create(b3, loc, base, down));
        scf::YieldOp::create(b3, loc, runs(b3, kh, rowAt, tapAccs));
      });
}

/// One block: `mr` rows from row m0 against the pp panels from p0, written
/// into `dest` by `store`, with the epilogue applied on the registers (per
/// column vectors of the panel, per row scalars broadcast).
Value VnniKernel::block(OpBuilder &b2, Value m0, Value p0, Value dest,
                        const Store &store, int64_t mr) {
  // The tile's panels p0 .. p0 + pp - 1.
  SmallVector<Value> panel = {p0};
  for (int64_t j = 1; j < pp; ++j)
    panel.push_back(arith::AddIOp::create(b2, loc, p0, idx(b2, j)).getResult());
  SmallVector<Value> rowIdx;
  for (int64_t row = 0; row < mr; ++row)
    rowIdx.push_back(
        row ? arith::AddIOp::create(b2, loc, m0, idx(b2, row)).getResult()
            : m0);
  scf::ForOp kLoop = accumulate(b2, panel, rowIdx, mr);
  SmallVector<Value> wscale, wsum, bias;
  auto columns = [&](Value v, Type elt, Value pad, int64_t j, int64_t i) {
    return vector::TransferReadOp::create(
        b2, loc, VectorType::get({16}, elt), v,
        ValueRange{panel[j], idx(b2, 16 * i)}, pad, ArrayRef<bool>{true});
  };
  if (epilogue)
    for (int64_t j = 0; j < pp; ++j)
      for (int64_t i = 0; i < nv; ++i) {
        wscale.push_back(columns(epilogue->weightScale, f32, zeroF, j, i));
        wsum.push_back(columns(epilogue->weightSum, i32, zeroI32, j, i));
        if (epilogue->bias)
          bias.push_back(columns(epilogue->bias, f32, zeroF, j, i));
      }
  Value t = dest;
  for (int64_t row = 0; row < mr; ++row) {
    Value scale, zp;
    if (epilogue) {
      scale = vector::BroadcastOp::create(
          b2, loc, accF,
          tensor::ExtractOp::create(b2, loc, epilogue->scale,
                                    ValueRange{rowIdx[row]}));
      zp = vector::BroadcastOp::create(
          b2, loc, acc,
          tensor::ExtractOp::create(b2, loc, epilogue->zeroPoint,
                                    ValueRange{rowIdx[row]}));
    }
    for (int64_t c = 0; c < pp * nv; ++c) {
      int64_t j = c / nv, i = c % nv;
      Value v = accumulated(b2, kLoop, row * pp * nv + c);
      if (epilogue) {
        // acc - zp * sum is exact in i32; then one rounding.
        v = arith::SubIOp::create(b2, loc, v,
                                  arith::MulIOp::create(b2, loc, zp, wsum[c]));
        v = arith::SIToFPOp::create(b2, loc, accF, v);
        v = arith::MulFOp::create(
            b2, loc, v, arith::MulFOp::create(b2, loc, scale, wscale[c]));
        if (epilogue->bias)
          v = arith::AddFOp::create(b2, loc, v, bias[c]);
      }
      t = store(b2, v, t, row, rowIdx[row], j, panel[j], i);
    }
  }
  return t;
}

namespace {
struct VnniMatmulPass : mlir::kiln::impl::VnniMatmulPassBase<VnniMatmulPass> {
  using VnniMatmulPassBase::VnniMatmulPassBase;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op->hasAttr(mlir::kiln::kInt8MatmulAttr) ||
          (bf16 && op->hasAttr(mlir::kiln::kBf16MatmulAttr)))
        ops.push_back(op);
    });
    for (linalg::GenericOp op : ops) {
      std::string why;
      FailureOr<DotProduct> k = match(op, why);
      // AMX takes 16-column panels with K padded to 64 bytes (or a K of
      // one narrower step), after bufferization; its zero fill goes in
      // --kiln-cpu-drop-amx-zero-fills.
      if (amx && succeeded(k) && !k->bf16 && k->r == 16 &&
          !ShapedType::isDynamic(k->m) && (k->k4 % 16 == 0 || k->k4 < 16)) {
        op->removeAttr(mlir::kiln::kInt8MatmulAttr);
        op->setAttr(mlir::kiln::kAmxInt8MatmulAttr,
                    UnitAttr::get(op.getContext()));
        continue;
      }
      if (failed(k)) {
        // Still correct through the generic tiling, only slower.
        mlir::kiln::remarkMissed(
            op, "kiln-cpu-vnni-matmul",
            op->hasAttr(mlir::kiln::kBf16MatmulAttr) ? "vdpbf16ps-kernel"
                                                     : "vpdpbusd-kernel",
            "left to the generic lowering: " + llvm::Twine(why));
        continue;
      }
      std::optional<Epilogue> epilogue = matchEpilogue(op, *k);
      std::optional<Consumer> consumer;
      if (!epilogue && k->p * k->k4 * k->r * 4 < kPanelsOuterBytes)
        consumer = matchConsumer(op, *k);
      // With an epilogue or a consumer the kernel goes where it is: its
      // operands may be defined after the product.
      Operation *last = epilogue   ? epilogue->op.getOperation()
                        : consumer ? consumer->op.getOperation()
                                   : op.getOperation();
      OpBuilder b(last);
      Value result =
          VnniKernel(b, op, *k, maxRows, parallelWork, epilogue, consumer, avx2)
              .build();
      last->getResult(0).replaceAllUsesWith(result);
      Operation *lastInit =
          consumer ? consumer->op.getDpsInitOperand(0)->get().getDefiningOp()
                   : nullptr;
      if (last != op.getOperation())
        last->erase();
      if (lastInit && lastInit->use_empty())
        lastInit->erase();
      if (consumer)
        for (Operation *view : llvm::reverse(consumer->views))
          view->erase();
      op.erase();
      if (k->fill->use_empty())
        k->fill.erase();
      // The unfolding and its views, once nothing else reads them.
      if (k->window) {
        SmallVector<Operation *> dead(k->window->views);
        dead.push_back(k->window->unfold);
        for (Operation *view : dead) {
          if (!view->use_empty())
            break;
          SmallVector<Value> operands(view->getOperands());
          view->erase();
          for (Value v : operands)
            if (Operation *def = v.getDefiningOp();
                def && def->use_empty() &&
                isa<tensor::EmptyOp, linalg::FillOp>(def))
              def->erase();
        }
      }
    }
  }
};
} // namespace
