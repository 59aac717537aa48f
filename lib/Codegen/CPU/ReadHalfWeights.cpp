//===- ReadHalfWeights.cpp - fp16 weights read by the kernels ---*- C++ -*-===//
#include "kiln/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_READHALFWEIGHTSPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// The f16 constant that `v` widens to f32 (an elementwise extf of it, as
/// --precision=fp16 leaves in front of a product), rebuilt through the
/// reshapes between (a depthwise filter is collapsed to [KH, KW, C]); a null
/// value if `v` is something else.
Value halfConstantOf(RewriterBase &rewriter, Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return Value();
  auto rebuilt = [&](Value src, auto reshape) -> Value {
    Value half = halfConstantOf(rewriter, src);
    if (!half)
      return Value();
    rewriter.setInsertionPoint(reshape);
    auto type = cast<RankedTensorType>(reshape.getType())
                    .clone(cast<ShapedType>(half.getType()).getElementType());
    return decltype(reshape)::create(rewriter, reshape.getLoc(), type, half,
                                     reshape.getReassociationIndices())
        .getResult();
  };
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def))
    return rebuilt(collapse.getSrc(), collapse);
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
    if (!expand.getType().hasStaticShape())
      return Value();
    return rebuilt(expand.getSrc(), expand);
  }
  auto generic = dyn_cast<linalg::GenericOp>(def);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      !generic.hasPureTensorSemantics() ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return Value();
  Block &body = generic.getRegion().front();
  auto ext = dyn_cast<arith::ExtFOp>(body.front());
  if (!ext || body.getOperations().size() != 2 ||
      ext.getIn() != body.getArgument(0) ||
      body.getTerminator()->getOperand(0) != ext.getResult())
    return Value();
  Value src = generic.getDpsInputOperand(0)->get();
  auto cst = src.getDefiningOp<arith::ConstantOp>();
  if (!cst || !cast<ShapedType>(src.getType()).getElementType().isF16())
    return Value();
  return src;
}

/// Rebuilds named op `op` (whose region is made for its operand types) with
/// `inputs` in place of its inputs.
template <typename OpTy>
void rebuildWithInputs(RewriterBase &rewriter, OpTy op, ValueRange inputs) {
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute a : op->getAttrs())
    if (a.getName() != "operandSegmentSizes")
      attrs.push_back(a);
  rewriter.setInsertionPoint(op);
  auto rebuilt = OpTy::create(rewriter, op.getLoc(), op->getResultTypes(),
                              inputs, op.getDpsInits(), attrs);
  rewriter.replaceOp(op, rebuilt->getResults());
}

/// --precision=fp16 stores constant weights as fp16 and widens them with an
/// elementwise op in front of each product, which would write an f32 copy
/// of every weight to the arena on each run. Matmuls and convolutions read
/// the fp16 constant instead and widen each value in their kernels (named
/// linalg ops convert mixed operands in their bodies): the weights are read
/// at half the bytes.
void readHalfWeightsInKernels(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<linalg::LinalgOp> ops;
  func.walk([&](linalg::LinalgOp op) {
    auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation());
    if ((matmul ? !matmul.hasUserDefinedMaps()
                : isa<linalg::Conv2DNhwcHwcfOp,
                      linalg::DepthwiseConv2DNhwcHwcOp>(op)) &&
        op.hasPureTensorSemantics())
      ops.push_back(op);
  });
  for (linalg::LinalgOp op : ops) {
    Value weights = op.getDpsInputOperand(1)->get();
    Operation *widen = weights.getDefiningOp();
    Value half = halfConstantOf(rewriter, weights);
    if (!half)
      continue;
    SmallVector<Value> inputs = {op.getDpsInputOperand(0)->get(), half};
    if (auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation()))
      rebuildWithInputs(rewriter, matmul, inputs);
    else if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op.getOperation()))
      rebuildWithInputs(rewriter, conv, inputs);
    else
      rebuildWithInputs(rewriter,
                        cast<linalg::DepthwiseConv2DNhwcHwcOp>(op.getOperation()),
                        inputs);
    // The widening ops (and reshapes) nothing reads any more.
    while (widen && widen->use_empty()) {
      Operation *next = widen->getNumOperands()
                            ? widen->getOperand(0).getDefiningOp()
                            : nullptr;
      if (isa<arith::ConstantOp>(widen))
        break;
      rewriter.eraseOp(widen);
      widen = next;
    }
  }
}

struct ReadHalfWeightsPass
    : mlir::kiln::impl::ReadHalfWeightsPassBase<ReadHalfWeightsPass> {
  using ReadHalfWeightsPassBase::ReadHalfWeightsPassBase;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    readHalfWeightsInKernels(rewriter, getOperation());
  }
};
} // namespace
