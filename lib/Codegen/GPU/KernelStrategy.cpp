//===- KernelStrategy.cpp - which kernel an op becomes ----------*- C++ -*-===//
//
// See KernelStrategy.h.
//
//===----------------------------------------------------------------------===//
#include "KernelStrategy.h"

namespace mlir::kiln::gpu_mapping {
bool isParallelizable(linalg::GenericOp op) {
  for (int64_t r : op.getStaticLoopRanges())
    if (ShapedType::isDynamic(r))
      return false;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    for (AffineExpr e : map.getResults()) {
      bool ok = true;
      e.walk([&](AffineExpr sub) {
        if (auto d = dyn_cast<AffineDimExpr>(sub))
          if (op.getIteratorTypesArray()[d.getPosition()] !=
              utils::IteratorType::parallel)
            ok = false;
      });
      if (!ok)
        return false;
    }
  }
  return true;
}

std::optional<Contraction> classifyContraction(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return std::nullopt;
  bool hasIndex = false;
  op.getRegion().walk([&](linalg::IndexOp) { hasIndex = true; });
  if (hasIndex)
    return std::nullopt;
  Block &payload = op.getRegion().front();
  SmallVector<OpOperand *> mem;
  for (OpOperand *in : op.getDpsInputOperands())
    if (isa<MemRefType>(in->get().getType())) {
      if (payload.getArgument(in->getOperandNumber()).use_empty())
        return std::nullopt;
      mem.push_back(in);
    }
  if (mem.size() != 2)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto iterators = op.getIteratorTypesArray();
  Contraction c;
  auto classify = [&](OpOperand *a, OpOperand *b) {
    c = Contraction{a, b, {}, {}, {}, {}, {}};
    AffineMap mapA = op.getMatchingIndexingMap(a);
    AffineMap mapB = op.getMatchingIndexingMap(b);
    for (unsigned d = 0; d < ranges.size(); ++d) {
      bool inA = mapA.isFunctionOfDim(d), inB = mapB.isFunctionOfDim(d);
      if (iterators[d] == utils::IteratorType::parallel)
        (inA && !inB ? c.m : !inA && inB ? c.n : c.g).push_back(d);
      else
        (inA && inB ? c.k : c.s).push_back(d);
    }
  };
  classify(mem[0], mem[1]);
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (outMap.getNumResults() == 0)
    return std::nullopt;
  auto last = dyn_cast<AffineDimExpr>(outMap.getResults().back());
  if (!last)
    return std::nullopt;
  unsigned fast = last.getPosition();
  if (llvm::is_contained(c.m, fast))
    classify(mem[1], mem[0]);
  if (c.m.empty() || c.n.empty() || c.k.empty() || c.n.back() != fast)
    return std::nullopt;
  return c;
}
} // namespace mlir::kiln::gpu_mapping
