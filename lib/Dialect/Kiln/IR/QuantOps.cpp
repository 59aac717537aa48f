//===- QuantOps.cpp - verifiers of the reduced-precision matmuls -*- C++ -*-===//
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;

LogicalResult DynamicQuantMatMulOp::verify() {
  RankedTensorType in = getInput().getType(), w = getWeights().getType(),
                   out = getType();
  if (in.getRank() < 2 || !in.hasStaticShape())
    return emitOpError() << "expects a static input of rank 2 or more, got "
                         << in;
  if (w.getRank() != 3 || !w.hasStaticShape() || w.getDimSize(2) % 4 != 0)
    return emitOpError() << "expects packed weights [N / R, ceil(K / 4), 4 * R]"
                         << ", got " << w;
  int64_t k = in.getShape().back();
  int64_t k4 = (k + 3) / 4;
  if (w.getDimSize(1) != k4)
    return emitOpError() << "expects " << k4 << " groups of 4 along K = " << k
                         << " in the packed weights, got " << w.getDimSize(1);
  int64_t n = w.getDimSize(0) * (w.getDimSize(2) / 4);
  auto checkVector = [&](Value v, StringRef what) -> LogicalResult {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != 1 || t.getDimSize(0) != n)
      return emitOpError() << "expects " << what << " of shape [" << n
                           << "], got " << t;
    return success();
  };
  if (failed(checkVector(getWeightScales(), "weight_scales")) ||
      failed(checkVector(getWeightSums(), "weight_sums")) ||
      (getBias() && failed(checkVector(getBias(), "bias"))))
    return failure();
  SmallVector<int64_t> shape(in.getShape());
  shape.back() = n;
  if (out.getShape() != ArrayRef<int64_t>(shape))
    return emitOpError() << "expects result type "
                         << RankedTensorType::get(shape, out.getElementType())
                         << ", got " << out;
  return success();
}

/// Checks packed bf16 weights for K rows and N columns and an optional bias
/// [N].
static LogicalResult verifyBf16Weights(Operation *op, RankedTensorType w,
                                       Value bias, int64_t k, int64_t n) {
  int64_t kp = amxPaddedK(k, 2), panels = (n + 15) / 16;
  if (w.getRank() != 3 || !w.hasStaticShape() || w.getDimSize(0) != panels ||
      w.getDimSize(1) != kp / 2 || w.getDimSize(2) != 32)
    return op->emitOpError() << "expects packed weights [" << panels << ", "
                             << kp / 2 << ", 32] for K = " << k << " and N = "
                             << n << ", got " << w;
  if (bias) {
    auto t = cast<RankedTensorType>(bias.getType());
    if (t.getRank() != 1 || t.getDimSize(0) != n)
      return op->emitOpError()
             << "expects bias of shape [" << n << "], got " << t;
  }
  return success();
}

LogicalResult Bf16MatMulOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  if (in.getRank() < 2 || !in.hasStaticShape())
    return emitOpError() << "expects a static input of rank 2 or more, got "
                         << in;
  if (out.getRank() != in.getRank() ||
      out.getShape().drop_back() != in.getShape().drop_back())
    return emitOpError() << "expects the result to keep the input's leading "
                            "dimensions, got "
                         << out;
  return verifyBf16Weights(*this, getWeights().getType(), getBias(),
                           in.getShape().back(), out.getShape().back());
}

/// A calibrated input quantization: a positive scale, a uint8 zero point.
static LogicalResult verifyInputQuant(Operation *op, float scale,
                                      int64_t zeroPoint) {
  if (!(scale > 0) || !std::isfinite(scale) || zeroPoint < 0 ||
      zeroPoint > 255)
    return op->emitOpError() << "expects a positive input scale and a zero "
                                "point in [0, 255], got "
                             << scale << " and " << zeroPoint;
  return success();
}

/// Checks the operands of a static int8 product for K rows and N columns:
/// packed weights [ceil(N / 16), Kp / 4, 64] (Kp = amxPaddedK(K, 4), or K
/// rounded up to a multiple of 4 for the VNNI kernel),
/// scales, sums and bias [N], a zero point in [0, 255], a positive scale.
static LogicalResult verifyStaticQuant(Operation *op, RankedTensorType w,
                                       ValueRange vectors, float scale,
                                       int64_t zeroPoint, int64_t k,
                                       int64_t n) {
  int64_t kp = amxPaddedK(k, 4), lanes = (k + 3) / 4, panels = (n + 15) / 16;
  if (w.getRank() != 3 || !w.hasStaticShape() || w.getDimSize(0) != panels ||
      (w.getDimSize(1) != kp / 4 && w.getDimSize(1) != lanes) ||
      w.getDimSize(2) != 64)
    return op->emitOpError()
           << "expects packed weights [" << panels << ", " << kp / 4 << " or "
           << lanes << ", 64] for K = " << k << " and N = " << n << ", got "
           << w;
  for (Value v : vectors) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != 1 || t.getDimSize(0) != n)
      return op->emitOpError()
             << "expects weight scales, sums and bias of shape [" << n
             << "], got " << t;
  }
  return verifyInputQuant(op, scale, zeroPoint);
}

LogicalResult StaticQuantMatMulOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  if (in.getRank() < 2 || !in.hasStaticShape() ||
      out.getRank() != in.getRank() ||
      out.getShape().drop_back() != in.getShape().drop_back())
    return emitOpError() << "expects a static [..., M, K] input and a result "
                            "with its leading dimensions, got "
                         << in << " -> " << out;
  SmallVector<Value> vectors = {getWeightScales(), getWeightSums()};
  if (getBias())
    vectors.push_back(getBias());
  return verifyStaticQuant(*this, getWeights().getType(), vectors,
                           getInputScale().convertToFloat(),
                           getInputZeroPoint(), in.getShape().back(),
                           out.getShape().back());
}

/// The NHWC input, result, kernel, strides, dilations and pads of a
/// reduced-precision convolution agree.
static LogicalResult verifyConvShapes(Operation *op, RankedTensorType in,
                                      RankedTensorType out,
                                      ArrayRef<int64_t> kernel,
                                      ArrayRef<int64_t> s, ArrayRef<int64_t> d,
                                      ArrayRef<int64_t> pads) {
  if (in.getRank() != 4 || !in.hasStaticShape() || out.getRank() != 4 ||
      kernel.size() != 2 || s.size() != 2 || d.size() != 2 || pads.size() != 4)
    return op->emitOpError() << "expects an NHWC input and result and 2-D "
                                "kernel, strides, dilations and 4 pads";
  if (llvm::any_of(llvm::concat<const int64_t>(kernel, s, d),
                   [](int64_t v) { return v < 1; }) ||
      llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return op->emitOpError() << "expects a kernel, strides and dilations of "
                                "at least 1 and pads of at least 0";
  int64_t oh = (in.getDimSize(1) + pads[0] + pads[2] - d[0] * (kernel[0] - 1) -
                1) / s[0] + 1;
  int64_t ow = (in.getDimSize(2) + pads[1] + pads[3] - d[1] * (kernel[1] - 1) -
                1) / s[1] + 1;
  if (out.getDimSize(0) != in.getDimSize(0) || out.getDimSize(1) != oh ||
      out.getDimSize(2) != ow)
    return op->emitOpError() << "expects result [" << in.getDimSize(0) << ", "
                             << oh << ", " << ow << ", F], got " << out;
  return success();
}

LogicalResult StaticQuantConv2DOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  ArrayRef<int64_t> kernel = getKernel();
  if (failed(verifyConvShapes(*this, in, out, kernel, getStrides(),
                              getDilations(), getPads())))
    return failure();
  SmallVector<Value> vectors = {getWeightScales(), getWeightSums()};
  if (getBias())
    vectors.push_back(getBias());
  return verifyStaticQuant(*this, getWeights().getType(), vectors,
                           getInputScale().convertToFloat(),
                           getInputZeroPoint(),
                           kernel[0] * kernel[1] * in.getDimSize(3),
                           out.getDimSize(3));
}

/// The shapes of a depthwise int8 convolution (as verifyConvShapes) and its
/// packed filter on `in`'s C channels: [ceil(KH / 4), KW, C, 4] (kernel rows
/// in groups of 4), and C result channels.
static LogicalResult
verifyDepthwiseWeights(Operation *op, RankedTensorType in, RankedTensorType w,
                       RankedTensorType out, ArrayRef<int64_t> kernel,
                       ArrayRef<int64_t> s, ArrayRef<int64_t> d,
                       ArrayRef<int64_t> pads) {
  if (failed(verifyConvShapes(op, in, out, kernel, s, d, pads)))
    return failure();
  int64_t c = in.getDimSize(3);
  int64_t quads = (kernel[0] + 3) / 4;
  if (!w.hasStaticShape() || w.getRank() != 4 || w.getDimSize(0) != quads ||
      w.getDimSize(1) != kernel[1] || w.getDimSize(2) != c ||
      w.getDimSize(3) != 4 || out.getDimSize(3) != c)
    return op->emitOpError()
           << "expects weights [" << quads << ", " << kernel[1] << ", " << c
           << ", 4] (kernel rows in groups of 4) and " << c
           << " result channels, got " << w << " -> " << out;
  return success();
}

LogicalResult StaticQuantDepthwiseConv2DOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  ArrayRef<int64_t> kernel = getKernel();
  if (failed(verifyDepthwiseWeights(*this, in, getWeights().getType(), out,
                                    kernel, getStrides(), getDilations(),
                                    getPads())))
    return failure();
  int64_t c = in.getDimSize(3);
  SmallVector<Value> vectors = {getWeightScales(), getWeightSums()};
  if (getBias())
    vectors.push_back(getBias());
  for (Value v : vectors) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != 1 || t.getDimSize(0) != c)
      return emitOpError() << "expects weight scales, sums and bias of shape ["
                           << c << "], got " << t;
  }
  return verifyInputQuant(*this, getInputScale().convertToFloat(),
                          getInputZeroPoint());
}

LogicalResult Bf16Conv2DOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  ArrayRef<int64_t> kernel = getKernel();
  if (failed(verifyConvShapes(*this, in, out, kernel, getStrides(),
                              getDilations(), getPads())))
    return failure();
  return verifyBf16Weights(*this, getWeights().getType(), getBias(),
                           kernel[0] * kernel[1] * in.getDimSize(3),
                           out.getDimSize(3));
}

LogicalResult Bf16BatchMatMulOp::verify() {
  RankedTensorType a = getLhs().getType(), b = getRhs().getType(),
                   out = getType();
  if (a.getRank() != 3 || b.getRank() != 3 || out.getRank() != 3 ||
      !a.hasStaticShape() || !b.hasStaticShape() ||
      a.getDimSize(0) != b.getDimSize(0) || a.getDimSize(2) != b.getDimSize(1) ||
      out.getShape() != ArrayRef<int64_t>{a.getDimSize(0), a.getDimSize(1),
                                          b.getDimSize(2)})
    return emitOpError() << "expects static [B, M, K] x [B, K, N] -> [B, M, N], "
                            "got "
                         << a << " x " << b << " -> " << out;
  return success();
}

/// The weight sums [N] (i32) and the one-element zero point of an integer
/// product.
static LogicalResult verifySumsAndZeroPoint(Operation *op,
                                            RankedTensorType sums,
                                            RankedTensorType zeroPoint,
                                            int64_t n) {
  if (sums.getRank() != 1 || sums.getDimSize(0) != n)
    return op->emitOpError()
           << "expects weight sums of shape [" << n << "], got " << sums;
  if (!zeroPoint.hasStaticShape() || zeroPoint.getNumElements() != 1)
    return op->emitOpError()
           << "expects a one-element zero point, got " << zeroPoint;
  return success();
}

/// Checks the operands of an integer product with K rows and N columns:
/// weights packed [ceil(N / 16), ceil(K / 4), 64] for the VNNI kernel, sums
/// [N] and a one-element zero point.
static LogicalResult verifyIntegerProduct(Operation *op, RankedTensorType w,
                                          RankedTensorType sums,
                                          RankedTensorType zeroPoint, int64_t k,
                                          int64_t n) {
  int64_t lanes = (k + 3) / 4, panels = (n + 15) / 16;
  if (w.getRank() != 3 || !w.hasStaticShape() || w.getDimSize(0) != panels ||
      w.getDimSize(1) != lanes || w.getDimSize(2) != 64)
    return op->emitOpError()
           << "expects packed weights [" << panels << ", " << lanes
           << ", 64] for K = " << k << " and N = " << n << ", got " << w;
  return verifySumsAndZeroPoint(op, sums, zeroPoint, n);
}

LogicalResult IntegerMatMulOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  // The leading sizes may be symbolic (docs/shapes.md); K and N are static.
  if (in.getRank() < 2 || in.isDynamicDim(in.getRank() - 1) ||
      out.getRank() != in.getRank() || out.isDynamicDim(out.getRank() - 1) ||
      out.getShape().drop_back() != in.getShape().drop_back())
    return emitOpError() << "expects a [..., M, K] input with a static K and "
                            "a result with its leading dimensions, got "
                         << in << " -> " << out;
  return verifyIntegerProduct(*this, getWeights().getType(),
                              getWeightSums().getType(),
                              getInputZeroPoint().getType(),
                              in.getShape().back(), out.getShape().back());
}

LogicalResult IntegerConv2DOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  ArrayRef<int64_t> kernel = getKernel();
  if (failed(verifyConvShapes(*this, in, out, kernel, getStrides(),
                              getDilations(), getPads())))
    return failure();
  return verifyIntegerProduct(
      *this, getWeights().getType(), getWeightSums().getType(),
      getInputZeroPoint().getType(), kernel[0] * kernel[1] * in.getDimSize(3),
      out.getDimSize(3));
}

LogicalResult IntegerDepthwiseConv2DOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  ArrayRef<int64_t> kernel = getKernel();
  if (failed(verifyDepthwiseWeights(*this, in, getWeights().getType(), out,
                                    kernel, getStrides(), getDilations(),
                                    getPads())))
    return failure();
  return verifySumsAndZeroPoint(*this, getWeightSums().getType(),
                                getInputZeroPoint().getType(),
                                in.getDimSize(3));
}
