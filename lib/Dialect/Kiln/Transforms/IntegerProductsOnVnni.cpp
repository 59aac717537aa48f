//===- IntegerProductsOnVnni.cpp - imported int8 on vpdpbusd ----*- C++ -*-===//
//
// Models quantized by other tools (ONNX Runtime's quantize_dynamic writes
// DynamicQuantizeLinear -> ConvInteger / MatMulInteger; QLinearConv and
// QLinearMatMul) multiply uint8 activations by int8 weights, exactly what
// AVX512-VNNI's vpdpbusd does, four products per 32-bit lane. They reach the
// graph as i32 kiln.conv2d / kiln.matmul of widened operands; this pass
// gives them the int8 kernels of --quantize=dynamic|static instead:
//
//   conv2d(cast(x : ui8) - zp, w)  ->  integer_conv2d(x, zp, packed(w), sums)
//
// (kiln.integer_depthwise_conv2d for a depthwise one, whose packing puts
// four kernel rows of a channel in a lane)
// with the same i32 result: the kernel adds x * w over the window, and
// zp * sum(w) is subtracted once per output column; padding reads the zero
// point, so it adds zp * w that the same correction removes. Only the
// products kiln-integer-products-in-f32 left in i32 for this pass
// (keep-vnni-products) are seen here; the layout pass has made their
// convolutions NHWC by then.
//
//===----------------------------------------------------------------------===//
#include "IntegerValues.h"
#include "QuantizeCommon.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_INTEGERPRODUCTSONVNNIPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::integers;

namespace {
/// The packed weights and column sums of the K x N int8 matrix `w`
/// (row-major: a [K, N] matmul operand, or an HWCF filter with K = (kh, kw,
/// c) and N = f).
std::pair<Value, Value> packedWeights(OpBuilder &b, Location loc, int64_t k,
                                      int64_t n, ArrayRef<double> w) {
  auto [packed, sums] = quant::packInt8(
      b.getContext(), k, (k + 3) / 4 * 4, n, /*r=*/16,
      [&](int64_t kk, int64_t nn) { return int8_t(w[kk * n + nn]); });
  return {ConstantOp::create(b, loc, packed.getType(), packed),
          ConstantOp::create(b, loc, sums.getType(), sums)};
}

/// The uint8 input of `p` as the product reads it (the transpose between
/// redone on uint8), and its zero point (0 when there is none).
std::pair<Value, Value> activation(OpBuilder &b, Location loc,
                                   const VnniProduct &p) {
  Value x = p.input;
  if (!p.perm.empty()) {
    auto t = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> shape;
    for (int64_t d : p.perm)
      shape.push_back(t.getDimSize(d));
    x = TransposeOp::create(b, loc, t.clone(shape), x, p.perm);
  }
  Value zp = p.zeroPoint;
  if (!zp) {
    auto type = RankedTensorType::get({}, b.getI32Type());
    zp = ConstantOp::create(b, loc, type,
                            DenseElementsAttr::get(type, int32_t(0)));
  }
  return {x, zp};
}

/// The depthwise NHWC `conv` on x with its HWCF filter [KH, KW, 1, C]
/// (tap t of channel c at t * C + c in `weights`).
Value depthwiseConv(OpBuilder &b, Location loc, Conv2DOp conv,
                    RankedTensorType type, Value x, Value zp,
                    ArrayRef<int64_t> ws, ArrayRef<double> weights) {
  int64_t c = ws[3];
  auto [packed, sums] = quant::packDepthwiseInt8(
      b.getContext(), ws[0], ws[1], c,
      [&](int64_t t, int64_t ch) { return int8_t(weights[t * c + ch]); });
  return IntegerDepthwiseConv2DOp::create(
      b, loc, type, x, zp, ConstantOp::create(b, loc, packed.getType(), packed),
      ConstantOp::create(b, loc, sums.getType(), sums),
      b.getDenseI64ArrayAttr({ws[0], ws[1]}), conv.getStridesAttr(),
      conv.getDilationsAttr(), conv.getPadsAttr());
}

/// Rewrites `op` when it matches; true when rewritten.
bool rewrite(Operation *op, bool depthwise) {
  if (auto conv = dyn_cast<Conv2DOp>(op); conv && !conv.isNHWC())
    return false;
  std::optional<VnniProduct> p = matchVnniProduct(op);
  if (!p || (p->depthwise && !depthwise))
    return false;
  OpBuilder b(op);
  Location loc = op->getLoc();
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  auto [x, zp] = activation(b, loc, *p);
  ArrayRef<int64_t> ws =
      cast<RankedTensorType>(op->getOperand(1).getType()).getShape();
  int64_t n = ws.back();
  Value y;
  if (auto conv = dyn_cast<Conv2DOp>(op)) {
    if (p->depthwise) {
      y = depthwiseConv(b, loc, conv, type, x, zp, ws, p->weights);
    } else {
      auto [w, sums] =
          packedWeights(b, loc, p->weights.size() / n, n, p->weights);
      y = IntegerConv2DOp::create(
          b, loc, type, x, zp, w, sums, b.getDenseI64ArrayAttr({ws[0], ws[1]}),
          conv.getStridesAttr(), conv.getDilationsAttr(), conv.getPadsAttr());
    }
    if (Value bias = conv.getBias())
      y = AddOp::create(b, loc, type, y, bias);
  } else {
    auto [w, sums] =
        packedWeights(b, loc, p->weights.size() / n, n, p->weights);
    y = IntegerMatMulOp::create(b, loc, type, x, zp, w, sums);
  }
  op->getResult(0).replaceAllUsesWith(y);
  op->erase();
  return true;
}

struct IntegerProductsOnVnniPass
    : mlir::kiln::impl::IntegerProductsOnVnniPassBase<
          IntegerProductsOnVnniPass> {
  using IntegerProductsOnVnniPassBase::IntegerProductsOnVnniPassBase;
  void runOnOperation() override {
    for (Operation *op : products(getOperation()))
      (void)rewrite(op, depthwise);
  }
};
} // namespace
