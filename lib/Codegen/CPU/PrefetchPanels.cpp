//===- PrefetchPanels.cpp - fetch the next weight panel ahead ----*- C++ -*-===//
//
// A convolution whose filter does not fit in L2, or a matmul whose packed
// weights do not, takes one panel of output channels per parallel iteration
// (channelsOutermost in TileStrategy.cpp): every pixel (row) tile of the
// iteration reads the same panel, so the first tile pulls it from memory and
// the others find it in L2. The first tile then waits on memory: ResNet-50's
// 7x7 layers (filters of 2 to 9 MiB, 49 pixels) ran at 39-54% of the FMA
// peak. This pass makes each iteration fetch the panel the next iteration
// will read while it computes on its own, spread evenly over its loop
// iterations, so that the memory traffic overlaps the arithmetic.
//
// It matches, after bufferization, a vector read of a constant global
//   %panel = f(%iv)                      (pure, %iv the forall's induction)
//   vector.transfer_read %global[%panel, i1, ..., in]
// inside an scf.forall, where i1..in do not depend on %iv, inside static
// scf.for loops of which at least one does not feed the read's indices (so
// the panel is read more than once). A loop iteration's position p among the
// T iterations of those loops picks which lines of the next panel it
// prefetches: offset p * panelBytes / T, one to four lines.
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/CPU/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_PREFETCHPANELSPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
constexpr int64_t kLineBytes = 64;
/// Most lines one loop iteration prefetches: beyond that the loop does too
/// little work per iteration to hide a panel's fetch anyway.
constexpr int64_t kMaxLinesPerIteration = 4;

/// The ops inside `forall` that `v` is computed from, `v`'s own included,
/// in order (empty when `v` is defined outside or is a block argument).
FailureOr<SetVector<Operation *>> sliceInside(Value v, scf::ForallOp forall) {
  SetVector<Operation *> slice;
  Operation *def = v.getDefiningOp();
  if (!def || !forall->isProperAncestor(def))
    return slice;
  BackwardSliceOptions options;
  options.filter = [&](Operation *op) { return forall->isProperAncestor(op); };
  options.omitBlockArguments = false;
  options.inclusive = true;
  if (failed(getBackwardSlice(v, &slice, options)))
    return failure();
  return slice;
}

/// The ops of `forall`'s body that `v` is computed from, in order, if they
/// are all pure and region-free and the only induction variable among their
/// leaves is `iv`; nullopt otherwise (or when `v` does not depend on `iv`).
std::optional<SetVector<Operation *>> panelIndexSlice(Value v, Value iv,
                                                      scf::ForallOp forall) {
  if (v == iv)
    return SetVector<Operation *>();
  FailureOr<SetVector<Operation *>> slice = sliceInside(v, forall);
  if (failed(slice))
    return std::nullopt;
  bool usesIv = false;
  for (Operation *op : *slice) {
    if (!isPure(op) || op->getNumRegions() != 0)
      return std::nullopt;
    for (Value operand : op->getOperands()) {
      if (operand == iv) {
        usesIv = true;
        continue;
      }
      if (isa<BlockArgument>(operand) &&
          forall->isAncestor(operand.getParentBlock()->getParentOp()))
        return std::nullopt; // another loop's induction variable
    }
  }
  if (!usesIv)
    return std::nullopt;
  return *slice;
}

/// Whether `v` is computed, inside `forall`, from `iv`.
bool dependsOn(Value v, Value iv, scf::ForallOp forall) {
  if (v == iv)
    return true;
  FailureOr<SetVector<Operation *>> slice = sliceInside(v, forall);
  if (failed(slice))
    return true; // unknown: say it does
  return llvm::any_of(*slice, [&](Operation *op) {
    return llvm::is_contained(op->getOperands(), iv);
  });
}

struct Candidate {
  vector::TransferReadOp read;
  memref::GetGlobalOp global;
  SetVector<Operation *> panelSlice;
  SmallVector<scf::ForOp> loops; // outermost first, all inside the forall
  int64_t iterations = 1;
};

/// The read as a candidate of `forall` (1-D, induction `iv`), or nullopt.
std::optional<Candidate> matchRead(vector::TransferReadOp read,
                                   scf::ForallOp forall, Value iv) {
  auto global = read.getBase().getDefiningOp<memref::GetGlobalOp>();
  if (!global)
    return std::nullopt;
  auto type = cast<MemRefType>(read.getBase().getType());
  if (type.getRank() < 2 || !type.hasStaticShape() ||
      !type.getLayout().isIdentity())
    return std::nullopt;
  auto symbol = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      global, global.getNameAttr());
  if (!symbol || !symbol.getConstant())
    return std::nullopt;
  std::optional<SetVector<Operation *>> slice =
      panelIndexSlice(read.getIndices()[0], iv, forall);
  if (!slice)
    return std::nullopt;
  for (Value index : read.getIndices().drop_front())
    if (dependsOn(index, iv, forall))
      return std::nullopt;

  Candidate c{read, global, *slice, {}, 1};
  for (Operation *p = read->getParentOp(); p != forall; p = p->getParentOp()) {
    auto loop = dyn_cast<scf::ForOp>(p);
    if (!loop)
      return std::nullopt;
    std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
    std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
    std::optional<int64_t> step = getConstantIntValue(loop.getStep());
    if (!lb || !ub || !step || *step <= 0 || *ub <= *lb)
      return std::nullopt;
    c.loops.insert(c.loops.begin(), loop);
    c.iterations *= (*ub - *lb + *step - 1) / *step;
  }
  // Reuse: a loop whose induction variable no index reads goes over the
  // same panel again.
  bool reused = llvm::any_of(c.loops, [&](scf::ForOp loop) {
    return llvm::none_of(read.getIndices(), [&](Value index) {
      return dependsOn(index, loop.getInductionVar(), forall);
    });
  });
  if (!reused) // also when there is no loop
    return std::nullopt;
  return c;
}

/// Inserts the prefetches of `c` at the top of its innermost loop's body.
void prefetchNextPanel(Candidate &c, scf::ForallOp forall, Value iv,
                       int64_t panels, int64_t panelElements,
                       int64_t elementBytes) {
  scf::ForOp inner = c.loops.back();
  OpBuilder b = OpBuilder::atBlockBegin(inner.getBody());
  Location loc = c.read.getLoc();
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  // The panel index of the next parallel iteration, clamped to the last.
  IRMapping next;
  Value step = getValueOrCreateConstantIndexOp(b, loc,
                                               forall.getMixedStep()[0]);
  next.map(iv, arith::AddIOp::create(b, loc, iv, step).getResult());
  for (Operation *op : c.panelSlice)
    b.clone(*op, next);
  Value panel = next.lookupOrDefault(c.read.getIndices()[0]);
  panel = arith::MinUIOp::create(b, loc, panel, cst(panels - 1));

  // p: this iteration's position among the loops' iterations.
  Value p;
  for (scf::ForOp loop : c.loops) {
    int64_t lb = *getConstantIntValue(loop.getLowerBound());
    int64_t ub = *getConstantIntValue(loop.getUpperBound());
    int64_t s = *getConstantIntValue(loop.getStep());
    Value i = loop.getInductionVar();
    if (lb != 0)
      i = arith::SubIOp::create(b, loc, i, cst(lb));
    if (s != 1)
      i = arith::DivUIOp::create(b, loc, i, cst(s));
    if (p)
      i = arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, p, cst((ub - lb + s - 1) / s)), i);
    p = i;
  }
  int64_t lineElements = kLineBytes / elementBytes;
  int64_t panelBytes = panelElements * elementBytes;
  int64_t lines = std::clamp<int64_t>(
      llvm::divideCeil(panelBytes, c.iterations * kLineBytes), 1,
      kMaxLinesPerIteration);
  Value offset = arith::DivUIOp::create(
      b, loc, arith::MulIOp::create(b, loc, p, cst(panelElements)),
      cst(c.iterations));

  // The panels as rows of a 2-D view.
  auto type = cast<MemRefType>(c.global.getType());
  SmallVector<ReassociationIndices> groups = {{0}, {}};
  for (int64_t d = 1; d < type.getRank(); ++d)
    groups[1].push_back(d);
  Value rows = memref::CollapseShapeOp::create(b, loc, c.global, groups);
  for (int64_t l = 0; l < lines; ++l) {
    Value at = offset;
    if (l > 0)
      at = arith::AddIOp::create(b, loc, offset, cst(l * lineElements));
    at = arith::MinUIOp::create(b, loc, at, cst(panelElements - 1));
    memref::PrefetchOp::create(b, loc, rows, ValueRange{panel, at},
                               /*isWrite=*/false, /*localityHint=*/2,
                               /*isDataCache=*/true);
  }
}

struct PrefetchPanelsPass
    : mlir::kiln::impl::PrefetchPanelsPassBase<PrefetchPanelsPass> {
  using PrefetchPanelsPassBase::PrefetchPanelsPassBase;

  void runOnOperation() override {
    SmallVector<scf::ForallOp> foralls;
    getOperation().walk([&](scf::ForallOp forall) {
      if (forall.getRank() == 1 && !forall->getParentOfType<scf::ForallOp>())
        foralls.push_back(forall);
    });
    for (scf::ForallOp forall : foralls) {
      Value iv = forall.getInductionVar(0);
      // One candidate per global: the read whose loops run longest (a
      // remainder tile's loop prefetches nothing of its own).
      llvm::MapVector<Operation *, Candidate> best;
      forall.walk([&](vector::TransferReadOp read) {
        std::optional<Candidate> c = matchRead(read, forall, iv);
        if (!c)
          return;
        auto [it, inserted] = best.try_emplace(c->global.getOperation(), *c);
        if (!inserted && c->iterations > it->second.iterations)
          it->second = *c;
      });
      for (auto &[global, c] : best) {
        auto type = cast<MemRefType>(c.global.getType());
        int64_t elementBytes =
            llvm::divideCeil(type.getElementTypeBitWidth(), 8);
        int64_t panelElements = type.getNumElements() / type.getDimSize(0);
        if (panelElements * elementBytes > maxPanelBytes ||
            panelElements * elementBytes < kLineBytes)
          continue;
        prefetchNextPanel(c, forall, iv, type.getDimSize(0), panelElements,
                          elementBytes);
      }
    }
  }
};
} // namespace
