//===- Fp16Compute.cpp - fp16 operands, f32 sums --------------*- C++ -*-===//
//
// --precision=fp16: every MatMul/Gemm/Conv reads fp16-rounded operands and
// accumulates in f32; constant weights are stored as fp16.
//
//===----------------------------------------------------------------------===//
#include "QuantizeCommon.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/IR/DialectResourceBlobManager.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_FP16COMPUTEPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::quant;

namespace {
/// Constant weights `values` of `shape` rounded to fp16 (nearest even):
/// stored as fp16 when `storeHalf` (the kernels read them at half the bytes
/// and convert each vector), else as f32 holding the rounded values, the
/// same numbers.
ElementsAttr fp16WeightsAttr(MLIRContext *ctx, ArrayRef<int64_t> shape,
                             ArrayRef<float> values, bool storeHalf) {
  std::vector<uint16_t> half(values.size());
  std::vector<float> wide(values.size());
  for (auto [i, v] : llvm::enumerate(values)) {
    APFloat x(v);
    bool lost;
    x.convert(APFloat::IEEEhalf(), APFloat::rmNearestTiesToEven, &lost);
    half[i] = static_cast<uint16_t>(x.bitcastToAPInt().getZExtValue());
    x.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
    wide[i] = x.convertToFloat();
  }
  if (!storeHalf) {
    auto type = RankedTensorType::get(shape, Float32Type::get(ctx));
    return DenseResourceElementsAttr::get(
        type, "fp16_rounded_weights",
        HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<float>(wide),
                                                       /*dataIsMutable=*/false));
  }
  auto type = RankedTensorType::get(shape, Float16Type::get(ctx));
  return DenseResourceElementsAttr::get(
      type, "fp16_weights",
      HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<uint16_t>(half),
                                                     /*dataIsMutable=*/false));
}

/// The f32 value of rounded weights `attr` (fp16WeightsAttr): the constant,
/// widened by a cast when it is stored as fp16.
Value fp16Weights(OpBuilder &b, Location loc, ElementsAttr attr) {
  Value stored = ConstantOp::create(b, loc, attr.getType(), attr);
  auto type = cast<RankedTensorType>(attr.getType());
  if (type.getElementType().isF32())
    return stored;
  Type f32 = b.getF32Type();
  return CastOp::create(b, loc, type.clone(f32), stored, TypeAttr::get(f32));
}

struct Fp16ComputePass
    : mlir::kiln::impl::Fp16ComputePassBase<Fp16ComputePass> {
  using Fp16ComputePassBase::Fp16ComputePassBase;
  /// Rows (matmul) or output pixels (convolution) from which a node's
  /// weights are stored as f32: see `storeHalf`.
  static constexpr int64_t kMaxHalfRows = 64;
  /// Rounded weights by (original constant, transposed, stored as fp16):
  /// the batch variants of one model (--batch-sizes) share one copy.
  std::map<std::tuple<const void *, bool, bool>, ElementsAttr> cache;

  void runOnOperation() override {
    KeepFp32 keep(getOperation());
    getOperation().walk([&](func::FuncOp func) { convert(func, keep); });
    keep.reportUnused(getOperation(), "MatMul/Gemm/Conv");
  }

  void convert(func::FuncOp func, KeepFp32 &keep) {
    SmallVector<Operation *> ops;
    func.walk([&](Operation *op) {
      if (isa<MatMulOp, GemmOp, Conv2DOp>(op))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    Skipped skipped;
    int64_t converted = 0;
    MLIRContext *ctx = func.getContext();
    Type f16 = Float16Type::get(ctx), f32 = Float32Type::get(ctx);
    // Whether the weights of the node at hand are stored as fp16: only
    // where that saves time. Converting costs one instruction per weight
    // vector, which the FMAs of all the rows it meets share. A filter that
    // stays in cache (at most `half-storage` bytes) or that meets 64 rows or
    // more (compute-bound: BERT's 128-row matmuls ran 25% slower with fp16
    // weights, SqueezeNet's RGB stem 30%) keeps f32 storage. Matrix-vector
    // products with large weights (the MLP) read half the bytes: 2x faster.
    bool storeHalf = false;
    // One fp16 copy per constant and one rounding per run-time value,
    // however many nodes read them.
    llvm::DenseMap<Value, Value> rounded;
    llvm::SetVector<Operation *> replaced; // f32 constants, erased if unused
    SmallVector<Operation *> moved;        // ops rebuilt on rounded inputs
    std::function<Value(Value)> fp16Operand = [&](Value v) -> Value {
      if (Value r = rounded.lookup(v))
        return r;
      auto type = cast<RankedTensorType>(v.getType());
      Operation *def = v.getDefiningOp();
      OpBuilder b(ctx);
      b.setInsertionPointAfterValue(v);
      Location loc = v.getLoc();
      Value result;
      ElementsAttr weights;
      if (auto cst = v.getDefiningOp<ConstantOp>();
          cst && type.getElementType().isF32()) {
        ElementsAttr &cached =
            cache[{cst.getValue().getAsOpaquePointer(), false, storeHalf}];
        if (!cached)
          if (std::optional<std::vector<float>> w = readFloats(v))
            cached = fp16WeightsAttr(ctx, type.getShape(), *w, storeHalf);
        weights = cached;
      }
      if (weights) {
        result = fp16Weights(b, loc, weights);
      } else if (def && v.hasOneUse() && def->getNumResults() == 1 &&
                 isa<ConcatOp, MaxPool2DOp, ReluOp, ReshapeOp, SliceOp,
                     TransposeOp>(def) &&
                 llvm::all_of(def->getOperandTypes(), [](Type t) {
                   return cast<ShapedType>(t).getElementType().isF32();
                 })) {
        // Rounding commutes with these (they move, select or take the
        // maximum of values): round their inputs instead, where the
        // rounding fuses into the producer (an activation epilogue) rather
        // than making a pass of its own (SqueezeNet's concatenations and
        // max pools).
        SmallVector<Value> inputs;
        for (Value in : def->getOperands())
          inputs.push_back(fp16Operand(in));
        b.setInsertionPoint(def);
        Operation *clone = b.clone(*def);
        clone->setOperands(inputs);
        moved.push_back(def);
        result = clone->getResult(0);
      } else {
        Value half =
            CastOp::create(b, loc, type.clone(f16), v, TypeAttr::get(f16));
        result = CastOp::create(b, loc, type, half, TypeAttr::get(f32));
      }
      rounded[v] = result;
      return result;
    };
    for (Operation *op : ops) {
      if (keep.keeps(op, skipped))
        continue;
      auto gemm = dyn_cast<GemmOp>(op);
      Value x = op->getOperand(0), w = op->getOperand(1);
      if (auto cst = w.getDefiningOp<ConstantOp>())
        replaced.insert(cst);
      auto xt = cast<RankedTensorType>(x.getType());
      auto wt = cast<RankedTensorType>(w.getType());
      if (!xt.getElementType().isF32() || !wt.getElementType().isF32()) {
        skipped.add(op, "not f32");
        continue;
      }
      if (gemm && gemm.getTransA()) {
        skipped.add(op, "Gemm with transA");
        continue;
      }
      auto rt = cast<RankedTensorType>(op->getResult(0).getType());
      int64_t channels =
          rt.getRank() == 0
              ? 1
              : rt.getDimSize(isa<Conv2DOp>(op) &&
                                      !cast<Conv2DOp>(op).isNHWC()
                                  ? 1
                                  : rt.getRank() - 1);
      storeHalf = wt.hasStaticShape() && rt.hasStaticShape() &&
                  wt.getNumElements() * 4 > halfStorage &&
                  rt.getNumElements() / std::max<int64_t>(channels, 1) <
                      kMaxHalfRows;
      // A Gemm's transposed constant B is stored [K, N] like a MatMul's.
      auto wCst = w.getDefiningOp<ConstantOp>();
      if (gemm && gemm.getTransB() && wCst && wt.hasStaticShape() &&
          wt.getRank() == 2) {
        int64_t n = wt.getDimSize(0), k = wt.getDimSize(1);
        ElementsAttr &attr =
            cache[{wCst.getValue().getAsOpaquePointer(), true, storeHalf}];
        if (!attr)
          if (std::optional<std::vector<float>> values = readFloats(w)) {
            std::vector<float> t(values->size());
            for (int64_t i = 0; i < n; ++i)
              for (int64_t j = 0; j < k; ++j)
                t[j * n + i] = (*values)[i * k + j];
            attr = fp16WeightsAttr(ctx, {k, n}, t, storeHalf);
          }
        if (attr) {
          OpBuilder b(op);
          op->setOperand(1, fp16Weights(b, op->getLoc(), attr));
          gemm.setTransB(false);
          op->setOperand(0, fp16Operand(x));
          op->setAttr(kFp16NodeAttr, b.getUnitAttr());
          ++converted;
          continue;
        }
      }
      op->setOperand(0, fp16Operand(x));
      op->setOperand(1, fp16Operand(w));
      op->setAttr(kFp16NodeAttr, UnitAttr::get(ctx));
      ++converted;
    }
    for (Operation *def : llvm::reverse(moved))
      if (def->use_empty())
        def->erase();
    for (Operation *cst : replaced)
      if (cst->use_empty())
        cst->erase();
    func.emitRemark() << summary("fp16", converted, ops.size(),
                                 "MatMul/Gemm/Conv", "in fp16", skipped);
  }
};

} // namespace
