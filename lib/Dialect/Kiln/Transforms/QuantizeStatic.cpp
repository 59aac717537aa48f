//===- QuantizeStatic.cpp - calibrated int8 products ----------*- C++ -*-===//
//
// --quantize=static: the nodes --kiln-observe-quant-inputs observed become int8
// ops whose input scale and zero point come from the observed ranges
// (kiln.static_quant_matmul / kiln.static_quant_conv2d /
// kiln.static_quant_depthwise_conv2d).
//
//===----------------------------------------------------------------------===//
#include "QuantizeCommon.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_QUANTIZESTATICPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::quant;

namespace {
/// Scale and zero point mapping [min(lo, 0), max(hi, 0)] onto [0, 255].
std::pair<float, int64_t> uint8Params(float lo, float hi) {
  double l = std::min<double>(lo, 0.0), h = std::max<double>(hi, 0.0);
  double scale = (h - l) / 255.0;
  if (!(scale > 0) || !std::isfinite(scale))
    return {1.0f, 0};
  double zp = std::clamp(std::nearbyint(-l / scale), 0.0, 255.0);
  return {static_cast<float>(scale), static_cast<int64_t>(zp)};
}

struct QuantizeStaticPass
    : mlir::kiln::impl::QuantizeStaticPassBase<QuantizeStaticPass> {
  using QuantizeStaticPassBase::QuantizeStaticPassBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<float, float>> ranges;
    if (auto list = module->getAttrOfType<ArrayAttr>(kActivationRangesAttr))
      for (Attribute a : list) {
        auto r = dyn_cast<DenseF32ArrayAttr>(a);
        if (!r || r.size() != 2) {
          module.emitError() << kActivationRangesAttr
                             << " must hold array<f32: lo, hi> entries";
          return signalPassFailure();
        }
        ranges.push_back({r[0], r[1]});
      }
    KeepFp32 keep(module);
    // Batch variants share one converted copy of each weight.
    std::map<const void *, QuantizedWeights> cache;
    module.walk([&](func::FuncOp func) {
      SmallVector<StaticNode> nodes = staticNodes(func);
      if (nodes.empty())
        return;
      Skipped skipped;
      int64_t converted = 0, index = 0;
      OpBuilder b(func.getContext());
      for (StaticNode &node : nodes) {
        Operation *op = node.op;
        if (!node.why.empty()) {
          skipped.add(op, node.why);
          continue;
        }
        int64_t i = index++;
        if (keep.keeps(op, skipped))
          continue;
        if (auto conv = dyn_cast<Conv2DOp>(op);
            conv && conv.getGroup() != 1 && !depthwise) {
          skipped.add(op, "depthwise, which has no int8 kernel on this "
                          "target (AVX2 without AVX512-VNNI)");
          continue;
        }
        if (i >= int64_t(ranges.size())) {
          skipped.add(op, "no calibrated range");
          continue;
        }
        auto [scale, zp] = uint8Params(ranges[i].first, ranges[i].second);
        if (auto conv = dyn_cast<Conv2DOp>(op)) {
          bool ok = conv.getGroup() == 1
                        ? convertConv(b, conv, scale, zp, cache)
                        : convertDepthwise(b, conv, scale, zp);
          if (ok)
            ++converted;
          else
            skipped.add(op, "filter bytes not readable at compile time");
          continue;
        }
        replaceCandidate(b, *node.matmul, [&](OpBuilder &b,
                                              const Candidate &c) -> Value {
          ConstantOp weights = c.weights;
          QuantizedWeights &q = cache[weights.getValue().getAsOpaquePointer()];
          if (!q.packed)
            q = quantizeInt8(func.getContext(), c.k, paddedK(c.k), c.n, 16,
                             c.alpha, [&](int64_t kk, int64_t nn) {
                               return c.transB ? c.w[nn * c.k + kk]
                                               : c.w[kk * c.n + nn];
                             });
          Location loc = c.op->getLoc();
          return StaticQuantMatMulOp::create(
              b, loc, c.replaced->getResult(0).getType(), c.op->getOperand(0),
              constant(b, loc, q.packed), constant(b, loc, q.scales),
              constant(b, loc, q.sums), biasConstant(b, loc, c),
              b.getF32FloatAttr(scale), b.getI64IntegerAttr(zp));
        });
        ++converted;
      }
      func.emitRemark() << summary("static int8", converted, nodes.size(),
                                   "MatMul/Gemm/Conv", "quantized", skipped);
    });
    keep.reportUnused(module, "MatMul/Gemm/Conv");
  }

  static Value constant(OpBuilder &b, Location loc, ElementsAttr value) {
    return ConstantOp::create(b, loc, value.getType(), value);
  }

  /// Replaces the depthwise `conv` with
  /// kiln.static_quant_depthwise_conv2d: its filter [KH, KW, 1, C]
  /// quantized per channel to symmetric int8 over its KH * KW taps and
  /// packed [ceil(KH / 4), KW, C, 4] (4 kernel rows of a channel per 32-bit
  /// lane); false if the filter bytes are not at hand.
  bool convertDepthwise(OpBuilder &b, Conv2DOp conv, float scale, int64_t zp) {
    std::optional<std::vector<float>> w = readFloats(conv.getFilter());
    if (!w)
      return false;
    auto ft = cast<RankedTensorType>(conv.getFilter().getType());
    int64_t kh = ft.getDimSize(0), kw = ft.getDimSize(1), c = ft.getDimSize(3);
    std::vector<int8_t> q(kh * kw * c);
    std::vector<float> scales(c);
    // Each channel is one column of its KH * KW taps t = (row, column).
    for (int64_t ch = 0; ch < c; ++ch)
      scales[ch] = quantizeColumn(
                       kh * kw, [&](int64_t t) { return (*w)[t * c + ch]; },
                       [&](int64_t t, int8_t v) { q[t * c + ch] = v; })
                       .first;
    MLIRContext *ctx = conv.getContext();
    b.setInsertionPoint(conv);
    Location loc = conv.getLoc();
    auto [weights, sumsAttr] = packDepthwiseInt8(
        ctx, kh, kw, c, [&](int64_t t, int64_t ch) { return q[t * c + ch]; });
    auto scalesAttr = DenseElementsAttr::get(
        RankedTensorType::get({c}, Float32Type::get(ctx)), ArrayRef(scales));
    Value y = StaticQuantDepthwiseConv2DOp::create(
        b, loc, conv.getType(), conv.getInput(), constant(b, loc, weights),
        constant(b, loc, scalesAttr), constant(b, loc, sumsAttr),
        conv.getBias(), b.getF32FloatAttr(scale), b.getI64IntegerAttr(zp),
        b.getDenseI64ArrayAttr({kh, kw}), conv.getStridesAttr(),
        conv.getDilationsAttr(), conv.getPadsAttr());
    replaceConv(conv, y);
    return true;
  }

  /// K padded for the kernel: to whole AMX tile rows (64 bytes), or for
  /// the VNNI kernel (lane-k) to whole 4-byte lanes only. Padded to 64,
  /// MobileNetV2's 1x1 convolutions on 24 channels multiplied 40 zero bytes
  /// for every 24 (and 96 -> 128, 144 -> 192 elsewhere).
  int64_t paddedK(int64_t k) const {
    return laneK ? (k + 3) / 4 * 4 : amxPaddedK(k, 4);
  }

  /// Replaces `conv` with kiln.static_quant_conv2d; false if its filter
  /// bytes are not at hand.
  bool convertConv(OpBuilder &b, Conv2DOp conv, float scale, int64_t zp,
                   std::map<const void *, QuantizedWeights> &cache) {
    auto filter = conv.getFilter().getDefiningOp<ConstantOp>();
    auto ft = cast<RankedTensorType>(conv.getFilter().getType());
    int64_t kh = ft.getDimSize(0), kw = ft.getDimSize(1),
            ch = ft.getDimSize(2), f = ft.getDimSize(3);
    QuantizedWeights &q = cache[filter.getValue().getAsOpaquePointer()];
    if (!q.packed) {
      std::optional<std::vector<float>> w = readFloats(conv.getFilter());
      if (!w)
        return false;
      // HWCF is already [K, F] with k = (kh, kw, c) row-major.
      q = quantizeInt8(
          conv.getContext(), kh * kw * ch, paddedK(kh * kw * ch), f, 16, 1.0f,
          [&](int64_t kk, int64_t nn) { return (*w)[kk * f + nn]; });
    }
    b.setInsertionPoint(conv);
    Location loc = conv.getLoc();
    Value y = StaticQuantConv2DOp::create(
        b, loc, conv.getType(), conv.getInput(), constant(b, loc, q.packed),
        constant(b, loc, q.scales), constant(b, loc, q.sums), conv.getBias(),
        b.getF32FloatAttr(scale), b.getI64IntegerAttr(zp),
        b.getDenseI64ArrayAttr({kh, kw}), conv.getStridesAttr(),
        conv.getDilationsAttr(), conv.getPadsAttr());
    replaceConv(conv, y);
    return true;
  }
};
} // namespace
