//===- Bf16Matmul.cpp - bf16 matmuls and convolutions ---------*- C++ -*-===//
//
// --precision=bf16: matrix products with constant weights read bf16 weights
// rounded here, packed in pairs of k for AMX tiles (kiln.bf16_matmul); they
// share which matmuls qualify and the remark that says which do not with
// --kiln-quantize-dynamic. Convolutions go the same way (kiln.bf16_conv2d);
// depthwise ones read bf16 activations against their f32 filter.
//
//===----------------------------------------------------------------------===//
#include "QuantizeCommon.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include <cstring>

namespace mlir::kiln {
#define GEN_PASS_DEF_BF16MATMULPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::quant;

namespace {
struct Bf16MatmulPass : mlir::kiln::impl::Bf16MatmulPassBase<Bf16MatmulPass> {
  using Bf16MatmulPassBase::Bf16MatmulPassBase;

  void runOnOperation() override {
    std::map<WeightKey, ElementsAttr> cache;
    KeepFp32 keep(getOperation());
    getOperation().walk([&](func::FuncOp func) {
      if (runTimeProducts)
        convertRuntimeProducts(func, keep);
      rewriteMatmuls(
          func, "bf16", "in bf16", /*wholePanels=*/false,
          /*onlyMatmuls=*/false, keep,
          [&](OpBuilder &b, const Candidate &c) -> Value {
            ElementsAttr &packed = cache[weightKey(c)];
            if (!packed)
              packed = packBf16(func.getContext(), c.k, c.n,
                                [&](int64_t kk, int64_t nn) {
                                  return c.alpha * (c.transB ? c.w[nn * c.k + kk]
                                                             : c.w[kk * c.n + nn]);
                                });
            Location loc = c.op->getLoc();
            Value w = ConstantOp::create(b, loc, packed.getType(), packed);
            return Bf16MatMulOp::create(b, loc,
                                        c.replaced->getResult(0).getType(),
                                        c.op->getOperand(0), w,
                                        biasConstant(b, loc, c));
          });
      convertConvs(func, keep);
    });
    keep.reportUnused(getOperation(), "MatMul/Gemm/Conv");
  }

  /// Every MatMul of two run-time f32 tensors (attention's Q K^T and P V)
  /// becomes kiln.bf16_batch_matmul on [B, M, K] x [B, K, N] views; one
  /// remark says how many.
  void convertRuntimeProducts(func::FuncOp func, KeepFp32 &keep) {
    SmallVector<MatMulOp> ops;
    func.walk([&](MatMulOp op) {
      if (!op->getOperand(1).getDefiningOp<ConstantOp>())
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    Skipped skipped;
    int64_t converted = 0;
    for (MatMulOp op : ops) {
      if (keep.keeps(op, skipped))
        continue;
      auto at = cast<RankedTensorType>(op->getOperand(0).getType());
      auto bt = cast<RankedTensorType>(op->getOperand(1).getType());
      auto rt = cast<RankedTensorType>(op.getType());
      if (!at.getElementType().isF32() || !bt.getElementType().isF32() ||
          !at.hasStaticShape() || !bt.hasStaticShape() || at.getRank() < 2 ||
          bt.getRank() < 2) {
        skipped.add(op, "not a static f32 [..., M, K] x [..., K, N] product");
        continue;
      }
      int64_t k = at.getShape().back(), n = bt.getShape().back();
      int64_t batch = 1, m = at.getNumElements() / k;
      if (bt.getRank() > 2) {
        if (at.getRank() != bt.getRank() ||
            at.getShape().drop_back(2) != bt.getShape().drop_back(2)) {
          skipped.add(op, "batch dimensions broadcast");
          continue;
        }
        m = at.getDimSize(at.getRank() - 2);
        batch = at.getNumElements() / (m * k);
      }
      OpBuilder b(op);
      Location loc = op.getLoc();
      Type f32 = b.getF32Type();
      auto view = [&](Value v, ArrayRef<int64_t> shape) -> Value {
        return ReshapeOp::create(b, loc, RankedTensorType::get(shape, f32), v);
      };
      Value y = Bf16BatchMatMulOp::create(
          b, loc, RankedTensorType::get({batch, m, n}, f32),
          view(op->getOperand(0), {batch, m, k}),
          view(op->getOperand(1), {batch, k, n}));
      op.getResult().replaceAllUsesWith(view(y, rt.getShape()));
      op.erase();
      ++converted;
    }
    func.emitRemark() << summary("bf16", converted, ops.size(),
                                 "MatMul (two run-time operands)", "in bf16",
                                 skipped);
  }

  /// Every NHWC convolution with a constant filter becomes kiln.bf16_conv2d;
  /// one remark says how many and why the others stay f32.
  void convertConvs(func::FuncOp func, KeepFp32 &keep) {
    SmallVector<Conv2DOp> convs;
    func.walk([&](Conv2DOp op) { convs.push_back(op); });
    if (convs.empty())
      return;
    Skipped skipped;
    int64_t converted = 0;
    std::map<const void *, ElementsAttr> cache;
    for (Conv2DOp conv : convs) {
      if (keep.keeps(conv, skipped))
        continue;
      std::string why = bf16ConvBlocker(conv, /*depthwise=*/true);
      if (why.empty() && conv.getGroup() != 1) {
        roundDepthwiseInput(conv);
        ++converted;
        continue;
      }
      // A window of fewer than 32 values (one bf16 tile row), such as a 3x3
      // stem on RGB (K = 27), unfolds a few values at a time: measured on
      // SqueezeNet and MobileNetV2, f32 is faster (4% of either model).
      auto ft = cast<RankedTensorType>(conv.getFilter().getType());
      if (why.empty() && ft.hasStaticShape() &&
          ft.getDimSize(0) * ft.getDimSize(1) > 1 &&
          ft.getDimSize(0) * ft.getDimSize(1) * ft.getDimSize(2) < 32)
        why = "a window of K = KH * KW * C < 32 values, faster in f32";
      if (!why.empty()) {
        skipped.add(conv, why);
        continue;
      }
      auto filter = conv.getFilter().getDefiningOp<ConstantOp>();
      int64_t kh = ft.getDimSize(0), kw = ft.getDimSize(1),
              ch = ft.getDimSize(2), f = ft.getDimSize(3);
      ElementsAttr &packed = cache[filter.getValue().getAsOpaquePointer()];
      if (!packed) {
        std::optional<std::vector<float>> w = readFloats(conv.getFilter());
        if (!w) {
          skipped.add(conv, "filter bytes not readable at compile time");
          continue;
        }
        // HWCF is already [K, F] with k = (kh, kw, c) row-major.
        packed = packBf16(func.getContext(), kh * kw * ch, f,
                          [&](int64_t kk, int64_t nn) {
                            return (*w)[kk * f + nn];
                          });
      }
      OpBuilder b(conv);
      Location loc = conv.getLoc();
      Value w = ConstantOp::create(b, loc, packed.getType(), packed);
      Value y = Bf16Conv2DOp::create(
          b, loc, conv.getType(), conv.getInput(), w, conv.getBias(),
          b.getDenseI64ArrayAttr({kh, kw}), conv.getStridesAttr(),
          conv.getDilationsAttr(), conv.getPadsAttr());
      replaceConv(conv, y);
      ++converted;
    }
    func.emitRemark() << summary("bf16", converted, convs.size(), "Conv",
                                 "in bf16", skipped);
  }

  /// A depthwise convolution reads its input rounded to bf16 (a cast to
  /// bf16 and back, marked kBf16InputAttr): the producer's epilogue writes
  /// the bf16 tensor, half the bytes, and the convolution widens it against
  /// its f32 filter, accumulating in f32. There is no product to put on
  /// AMX tiles; the tensor in front of it is what costs.
  void roundDepthwiseInput(Conv2DOp conv) {
    OpBuilder b(conv);
    Location loc = conv.getLoc();
    auto type = cast<RankedTensorType>(conv.getInput().getType());
    Type bf16 = BFloat16Type::get(conv.getContext());
    Value half = CastOp::create(b, loc, type.clone(bf16), conv.getInput(),
                                TypeAttr::get(bf16));
    Value wide = CastOp::create(b, loc, type, half,
                                TypeAttr::get(type.getElementType()));
    conv.getInputMutable().assign(wide);
    conv->setAttr(kBf16InputAttr, b.getUnitAttr());
  }
};


} // namespace
