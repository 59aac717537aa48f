//===- QuantizeDynamic.cpp - int8 weights, run-time activations -*- C++ -*-===//
//
// --quantize=dynamic: matrix products with constant weights read int8 weights
// quantized here (per output column, symmetric) and quantize their
// activations at run time (kiln.dynamic_quant_matmul). The weights are packed
// in the layout of AVX512-VNNI's vpdpbusd: 4 consecutive k of one column in
// one 32-bit lane, panels of R columns stored one after the other so that the
// kernel streams each panel contiguously.
//
//===----------------------------------------------------------------------===//
#include "QuantizeCommon.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_QUANTIZEDYNAMICPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::quant;

namespace {
struct QuantizeDynamicPass
    : mlir::kiln::impl::QuantizeDynamicPassBase<QuantizeDynamicPass> {
  void runOnOperation() override {
    std::map<WeightKey, QuantizedWeights> cache;
    KeepFp32 keep(getOperation());
    getOperation().walk([&](func::FuncOp func) {
      rewriteMatmuls(
          func, "dynamic int8", "quantized", /*wholePanels=*/true,
          /*onlyMatmuls=*/true, keep,
          [&](OpBuilder &b, const Candidate &c) -> Value {
            auto found = cache.find(weightKey(c));
            if (found == cache.end())
              found = cache
                          .emplace(weightKey(c),
                                   quantizeWeights(func.getContext(), c.w, c.k,
                                                   c.n, c.transB, c.alpha))
                          .first;
            const QuantizedWeights &q = found->second;
            Location loc = c.op->getLoc();
            Value packed =
                ConstantOp::create(b, loc, q.packed.getType(), q.packed);
            Value scales =
                ConstantOp::create(b, loc, q.scales.getType(), q.scales);
            Value sums = ConstantOp::create(b, loc, q.sums.getType(), q.sums);
            return DynamicQuantMatMulOp::create(
                b, loc, c.replaced->getResult(0).getType(),
                c.op->getOperand(0), packed, scales, sums,
                biasConstant(b, loc, c));
          });
    });
    keep.reportUnused(getOperation(), "MatMul/Gemm");
  }
};

} // namespace
