//===- DequantizedProducts.cpp - QDQ products on integers -------*- C++ -*-===//
//
// ONNX Runtime's static quantization writes QDQ models: each Conv, MatMul and
// Gemm reads DequantizeLinear(QuantizeLinear(x)) and DequantizeLinear(int8
// W), and the runtime that loads such a model runs the product in int8. They
// import as f32 products of dequantized values,
//
//   conv2d((cast(q) - zp) * s, (cast(w) - wzp) * sw[f])
//
// which this pass rewrites into the integer product and one scale per
// output channel,
//
//   cast(conv2d_i32(cast(q) - zp, w - wzp) to f32) * (s * sw[f]) + bias
//
// (exact products and sums; only the final scaling rounds, where the f32
// form rounded every term), so that kiln-integer-products-on-vnni gives it
// the int8 kernels when w - wzp fits int8 (int8 weights without a zero
// point, or uint8 ones with zero point 128, the tool's QUInt8 weights).
// Without those kernels (`anyGroup`: any grouped convolution too),
// kiln-integer-products-in-f32 runs it on the f32 kernels, the integer
// weights a constant filter packed at compile time: the QDQ form
// dequantized them at every run and gave the convolution a filter of
// run-time values (ResNet-18: 108 ms against 45 ms for the f32 model on an
// AVX2 host). An int8 activation is shifted to uint8 (q + 128, zero point +
// 128: the same differences), as vpdpbusd wants. It runs before the first
// canonicalization, while the dequantization of the weights is still a cast
// of the 8-bit constant. Weight zero points may be per tensor or per channel
// (any constant that broadcasts to the weights: they are folded into the
// constant w - wzp). Activation zero points other than one per tensor,
// scales that are not per tensor or per output channel, and (for the int8
// kernels) grouped convolutions other than depthwise ones on a multiple of
// 4 channels stay as they are.
//
//===----------------------------------------------------------------------===//
#include "IntegerValues.h"
#include "QuantizeCommon.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

#include <cmath>

namespace mlir::kiln {
#define GEN_PASS_DEF_DEQUANTIZEDPRODUCTSPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::quant;

namespace {
/// The largest zero point taken: 8-bit ones are within 255, and beyond
/// this the integer differences and their sums could overflow i32.
constexpr float kMaxZeroPoint = 1 << 16;

/// `v` = (cast(q) - zeroPoints) * scale, with q an 8-bit integer tensor.
struct Dequantized {
  Value q;
  std::vector<float> zeroPoints;  // none (0), one, or one per element of
  RankedTensorType zeroPointType; // this type, broadcast to q's shape
  std::vector<float> scales;      // one, or one per element of `scaleType`
  RankedTensorType scaleType;

  /// The zero point if there is one for the whole tensor (0 without one).
  std::optional<double> zeroPoint() const {
    if (zeroPoints.size() > 1)
      return std::nullopt;
    return zeroPoints.empty() ? 0.0 : double(zeroPoints[0]);
  }
};

/// The values of an f32 constant, or of one seen through reshapes and a cast
/// of an integer constant to f32: how a DequantizeLinear with an axis
/// imports its scales and zero points (a [F] constant reshaped to
/// [F, 1, 1, 1]; a uint8 or int8 zero point cast). Large constants are
/// resources, which canonicalization does not fold, so they stay that way.
std::optional<std::vector<float>> constantFloats(Value v) {
  auto throughReshapes = [](Value x) {
    while (auto r = x.getDefiningOp<ReshapeOp>())
      x = r.getInput();
    return x;
  };
  v = throughReshapes(v);
  if (auto c = v.getDefiningOp<CastOp>()) {
    if (!getElementTypeOrSelf(c.getType()).isF32())
      return std::nullopt;
    auto ints = throughReshapes(c.getInput()).getDefiningOp<ConstantOp>();
    if (!ints || !getElementTypeOrSelf(ints.getType()).isInteger())
      return std::nullopt;
    std::optional<std::vector<double>> values = integers::readInts(ints);
    if (!values)
      return std::nullopt;
    return std::vector<float>(values->begin(), values->end());
  }
  return readFloats(v);
}

std::optional<Dequantized> dequantized(Value v) {
  auto mul = v.getDefiningOp<MulOp>();
  if (!mul)
    return std::nullopt;
  Dequantized d;
  Value centered = mul.getLhs();
  std::optional<std::vector<float>> s = constantFloats(mul.getRhs());
  if (!s || s->empty() ||
      llvm::any_of(*s, [](float x) { return !(x > 0) || std::isinf(x); }))
    return std::nullopt;
  d.scales = *s;
  d.scaleType = cast<RankedTensorType>(mul.getRhs().getType());
  if (auto sub = centered.getDefiningOp<SubOp>()) {
    std::optional<std::vector<float>> zp = constantFloats(sub.getRhs());
    auto zpType = dyn_cast<RankedTensorType>(sub.getRhs().getType());
    if (!zp || zp->empty() || !zpType || !zpType.hasStaticShape() ||
        llvm::any_of(*zp, [](float z) {
          return !(std::abs(z) <= kMaxZeroPoint) || z != std::nearbyint(z);
        }))
      return std::nullopt;
    d.zeroPoints = *zp;
    d.zeroPointType = zpType;
    centered = sub.getLhs();
  }
  auto c = centered.getDefiningOp<CastOp>();
  if (!c || !getElementTypeOrSelf(c.getType()).isF32() ||
      c.getType() != v.getType())
    return std::nullopt;
  Type qt = getElementTypeOrSelf(c.getInput().getType());
  if (!qt.isInteger(8))
    return std::nullopt;
  d.q = c.getInput();
  return d;
}

/// The activation of a product as uint8 minus a zero point, in i32: an int8
/// one moves up by 128 with its zero point.
Value centeredU8(OpBuilder &b, Location loc, const Dequantized &d) {
  auto qt = cast<RankedTensorType>(d.q.getType());
  auto i32 = qt.clone(b.getI32Type());
  auto scalarI32 = RankedTensorType::get({}, b.getI32Type());
  Value u = d.q;
  double zp = *d.zeroPoint();
  if (!qt.getElementType().isUnsignedInteger()) {
    Value wide = CastOp::create(b, loc, i32, u, TypeAttr::get(b.getI32Type()));
    Value shifted = AddOp::create(
        b, loc, i32, wide,
        ConstantOp::create(b, loc, scalarI32,
                           DenseElementsAttr::get(scalarI32, int32_t(128))));
    Type u8 = IntegerType::get(b.getContext(), 8, IntegerType::Unsigned);
    u = CastOp::create(b, loc, qt.clone(u8), shifted, TypeAttr::get(u8));
    zp += 128;
  }
  Value wide = CastOp::create(b, loc, i32, u, TypeAttr::get(b.getI32Type()));
  Value z = ConstantOp::create(b, loc, scalarI32,
                               DenseElementsAttr::get(scalarI32, int32_t(zp)));
  return SubOp::create(b, loc, i32, wide, z);
}

/// Whether W's integers are its values as they are (an int8 constant
/// without a zero point) rather than `w - zp` (a uint8 one, or a zero point).
bool widenedAsIs(const Dequantized &w) {
  return llvm::all_of(w.zeroPoints, [](float z) { return z == 0; }) &&
         getElementTypeOrSelf(w.q.getType()).isSignlessInteger(8);
}

/// A constant 8-bit weight, dequantized with zero points (per tensor or
/// broadcast along any axes) or without, whose integers can be read when
/// they must be computed.
std::optional<Dequantized> constantWeights(Value v) {
  std::optional<Dequantized> d = dequantized(v);
  auto c = d ? d->q.getDefiningOp<ConstantOp>() : ConstantOp();
  if (!c || (!widenedAsIs(*d) && !integers::readInts(c)))
    return std::nullopt;
  if (d->zeroPoints.size() > 1 &&
      !integers::broadcastIndices(
          cast<RankedTensorType>(c.getType()).getShape(),
          d->zeroPointType.getShape()))
    return std::nullopt;
  return d;
}

/// The weights as i32 integers: the int8 constant widened, or (a uint8
/// constant, zero points) `w - zp` computed here, which for uint8 weights
/// with zero point 128 (ONNX Runtime's QUInt8 weights) is int8 again.
Value integerWeights(OpBuilder &b, Location loc, const Dequantized &w) {
  auto type = cast<RankedTensorType>(w.q.getType()).clone(b.getI32Type());
  if (widenedAsIs(w))
    return CastOp::create(b, loc, type, w.q, TypeAttr::get(b.getI32Type()));
  std::vector<double> q = *integers::readInts(w.q.getDefiningOp<ConstantOp>());
  std::vector<int64_t> zpAt(q.size(), 0);
  if (w.zeroPoints.size() > 1)
    zpAt = *integers::broadcastIndices(type.getShape(),
                                       w.zeroPointType.getShape());
  std::vector<int32_t> values;
  values.reserve(q.size());
  for (size_t i = 0; i < q.size(); ++i)
    values.push_back(
        int32_t(q[i] - (w.zeroPoints.empty() ? 0.0f : w.zeroPoints[zpAt[i]])));
  return ConstantOp::create(b, loc, type,
                            DenseElementsAttr::get(type, ArrayRef(values)));
}

/// The f32 constant `values` of `type`.
Value f32Constant(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  ArrayRef<float> values) {
  auto type = RankedTensorType::get(shape, b.getF32Type());
  return ConstantOp::create(b, loc, type, DenseElementsAttr::get(type, values));
}

/// The i32 product `build(a, w)` of x's centered uint8 activation and W's
/// integer weights, converted to `rt` (f32) and multiplied by x's scale
/// times W's (one, or one per output channel: `n` along `scaleShape`)
/// times `alpha`.
Value scaledProduct(
    OpBuilder &b, Location loc, RankedTensorType rt, const Dequantized &x,
    const Dequantized &w, int64_t n, ArrayRef<int64_t> scaleShape,
    llvm::function_ref<Value(Value, Value, RankedTensorType)> build,
    float alpha = 1.0f) {
  Value a = centeredU8(b, loc, x);
  Value wi = integerWeights(b, loc, w);
  Value acc = build(a, wi, rt.clone(b.getI32Type()));
  std::vector<float> scale(n);
  for (int64_t i = 0; i < n; ++i)
    scale[i] = x.scales[0] * w.scales[w.scales.size() == 1 ? 0 : i] * alpha;
  Value y = CastOp::create(b, loc, rt, acc, TypeAttr::get(b.getF32Type()));
  return MulOp::create(b, loc, rt, y, f32Constant(b, loc, scaleShape, scale));
}

/// The activation and weights of a product of dequantized values, with
/// per-tensor activation scales and `n` or one weight scales; nothing
/// otherwise.
std::optional<std::pair<Dequantized, Dequantized>>
dequantizedOperands(Operation *op, int64_t n) {
  auto rt = cast<RankedTensorType>(op->getResult(0).getType());
  if (!rt.hasStaticShape() || !rt.getElementType().isF32())
    return std::nullopt;
  std::optional<Dequantized> x = dequantized(op->getOperand(0));
  std::optional<Dequantized> w = constantWeights(op->getOperand(1));
  if (!x || !w || x->scales.size() != 1 || !x->zeroPoint() ||
      (w->scales.size() != 1 && int64_t(w->scales.size()) != n))
    return std::nullopt;
  return std::pair{*x, *w};
}

/// Whether the NCHW `conv` is one the int8 kernels take: group 1, or
/// depthwise (one channel and one filter per group) on a multiple of 4
/// channels.
bool onInt8Kernels(Conv2DOp conv) {
  if (conv.getGroup() == 1)
    return true;
  auto in = cast<RankedTensorType>(conv.getInput().getType());
  auto ft = cast<RankedTensorType>(conv.getFilter().getType());
  if (in.getRank() != 4 || ft.getRank() != 4)
    return false;
  int64_t c = in.getDimSize(1);
  return int64_t(conv.getGroup()) == c && ft.getDimSize(0) == c &&
         ft.getDimSize(1) == 1 && c % 4 == 0;
}

/// conv2d(dequantized x, dequantized W) [+ bias], NCHW, group 1 or
/// depthwise (any group with `anyGroup`).
bool rewriteConv(Conv2DOp conv, bool anyGroup) {
  auto rt = cast<RankedTensorType>(conv.getType());
  if (conv.isNHWC() || rt.getRank() != 4 || !(anyGroup || onInt8Kernels(conv)))
    return false;
  int64_t f = rt.getDimSize(1);
  auto operands = dequantizedOperands(conv, f);
  // Weight scales per tensor, or per output channel ([F, 1, 1, 1]).
  if (!operands || (operands->second.scales.size() != 1 &&
                    (operands->second.scaleType.getRank() != 4 ||
                     operands->second.scaleType.getDimSize(0) != f)))
    return false;
  Value bias = conv.getBias();
  if (bias && (cast<RankedTensorType>(bias.getType()).getNumElements() != f ||
               !cast<RankedTensorType>(bias.getType()).hasStaticShape()))
    return false;
  OpBuilder b(conv);
  Location loc = conv.getLoc();
  NamedAttrList attrs(conv->getAttrs());
  Value y = scaledProduct(
      b, loc, rt, operands->first, operands->second, f, {1, f, 1, 1},
      [&](Value a, Value w, RankedTensorType type) -> Value {
        return Conv2DOp::create(b, loc, TypeRange{type}, ValueRange{a, w},
                                attrs.getAttrs())
            .getResult();
      });
  if (bias) // [F] along the channels
    y = AddOp::create(b, loc, rt, y,
                      ReshapeOp::create(b, loc, rt.clone({1, f, 1, 1}), bias));
  conv.getResult().replaceAllUsesWith(y);
  conv->erase();
  return true;
}

/// matmul(dequantized x [..., M, K], dequantized W [K, N]).
bool rewriteMatmul(MatMulOp mm) {
  auto rt = cast<RankedTensorType>(mm.getType());
  auto wt = cast<RankedTensorType>(mm.getRhs().getType());
  if (rt.getRank() < 2 || wt.getRank() != 2)
    return false;
  int64_t n = wt.getDimSize(1);
  auto operands = dequantizedOperands(mm, n);
  // Weight scales per tensor, or per column ([N] or [1, N]).
  if (!operands || (operands->second.scales.size() != 1 &&
                    operands->second.scaleType.getShape().back() != n))
    return false;
  OpBuilder b(mm);
  Location loc = mm.getLoc();
  Value y =
      scaledProduct(b, loc, rt, operands->first, operands->second, n, {n},
                    [&](Value a, Value w, RankedTensorType type) -> Value {
                      return MatMulOp::create(b, loc, type, a, w);
                    });
  mm.getResult().replaceAllUsesWith(y);
  mm->erase();
  return true;
}

/// gemm(dequantized x [M, K], dequantized W [K, N] or, with trans_b, [N,
/// K]) * alpha + beta * C: torchvision's classifiers export their Linear
/// layers so. With trans_b the integer weights are transposed to [K, N]
/// (the integer-product passes read through the transpose).
bool rewriteGemm(GemmOp gemm) {
  auto rt = cast<RankedTensorType>(gemm.getType());
  auto wt = cast<RankedTensorType>(gemm.getB().getType());
  bool transB = gemm.getTransB();
  float alpha = gemm.getAlpha().convertToFloat();
  if (gemm.getTransA() || rt.getRank() != 2 || wt.getRank() != 2 ||
      !(std::isfinite(alpha) && alpha > 0))
    return false;
  int64_t n = rt.getDimSize(1);
  auto operands = dequantizedOperands(gemm, n);
  if (!operands)
    return false;
  // Weight scales per tensor, or per output column: [N] or [1, N] for
  // [K, N] weights, [N, 1] for [N, K] ones.
  RankedTensorType st = operands->second.scaleType;
  if (operands->second.scales.size() != 1 &&
      (transB ? st.getRank() != 2 || st.getDimSize(0) != n
              : st.getShape().back() != n))
    return false;
  Value c = gemm.getC();
  float beta = gemm.getBeta().convertToFloat();
  if (c && !cast<RankedTensorType>(c.getType()).hasStaticShape())
    return false;
  OpBuilder b(gemm);
  Location loc = gemm.getLoc();
  Value y = scaledProduct(
      b, loc, rt, operands->first, operands->second, n, {n},
      [&](Value a, Value w, RankedTensorType type) -> Value {
        if (transB) {
          auto t = cast<RankedTensorType>(w.getType());
          w = TransposeOp::create(b, loc,
                                  t.clone({t.getDimSize(1), t.getDimSize(0)}),
                                  w, b.getDenseI64ArrayAttr({1, 0}));
        }
        return MatMulOp::create(b, loc, type, a, w);
      },
      alpha);
  if (c && beta != 0) {
    if (beta != 1)
      c = MulOp::create(b, loc, c.getType(), c,
                        f32Constant(b, loc, {}, ArrayRef<float>{beta}));
    y = AddOp::create(b, loc, rt, y, c);
  }
  gemm.getResult().replaceAllUsesWith(y);
  gemm->erase();
  return true;
}

struct DequantizedProductsPass
    : mlir::kiln::impl::DequantizedProductsPassBase<DequantizedProductsPass> {
  using DequantizedProductsPassBase::DequantizedProductsPassBase;
  void runOnOperation() override {
    for (Operation *op : integers::products(getOperation())) {
      if (auto conv = dyn_cast<Conv2DOp>(op))
        (void)rewriteConv(conv, anyGroup);
      else
        (void)rewriteMatmul(cast<MatMulOp>(op));
    }
    SmallVector<GemmOp> gemms;
    getOperation()->walk([&](GemmOp g) { gemms.push_back(g); });
    for (GemmOp g : gemms)
      (void)rewriteGemm(g);
  }
};
} // namespace
