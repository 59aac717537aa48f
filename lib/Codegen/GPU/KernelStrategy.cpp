//===- KernelStrategy.cpp - which kernel an op becomes ----------*- C++ -*-===//
//
// See KernelStrategy.h. Every path that turns an op down says why in a
// string; the three fallbacks (off tensor cores, off the shared-memory
// tiles, onto one thread) each report it through one function below, as a
// missed-optimization remark (kiln-compile --remarks, and --debug-only).
//
//===----------------------------------------------------------------------===//
#include "KernelStrategy.h"

#include "kiln/Codegen/Common/Remarks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::kiln::gpu_mapping {
namespace {
//===----------------------------------------------------------------------===//
// Fallbacks: one function each
//===----------------------------------------------------------------------===//

void explain(Operation *op, StringRef what, StringRef why) {
  remarkMissed(op, "kiln-gpu-map-to-launch", what, why);
}

/// A contraction that the strategy did not put on tensor cores: it runs
/// on the shared-memory tiles or one thread per point instead.
void explainTensorCoreFallback(Operation *op, StringRef why) {
  explain(op, "tensor-cores", why);
}

/// A generic with a reduction that the strategy did not give shared-memory
/// tiles: it runs with one thread per point (or group of points), every
/// input value loaded from global memory by each thread that uses it.
void explainTiledFallback(Operation *op, StringRef why) {
  explain(op, "shared-memory-tiles", why);
}

/// An op that runs in a one-thread kernel.
void explainSingleThreadFallback(Operation *op, StringRef why) {
  explain(op, "parallel-threads", why);
}

/// Writes `parts` to `whyNot` and returns nothing: a plan that does not
/// apply.
template <typename... Parts>
std::nullopt_t reject(std::string &whyNot, const Parts &...parts) {
  llvm::raw_string_ostream os(whyNot);
  (os << ... << parts);
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Classification
//===----------------------------------------------------------------------===//

/// Product of `ranges` over `dims`.
int64_t extent(ArrayRef<int64_t> ranges, ArrayRef<unsigned> dims) {
  int64_t n = 1;
  for (unsigned d : dims)
    n *= ranges[d];
  return n;
}

/// Static loop ranges, and every output indexed by parallel dims only.
bool isParallelizable(linalg::GenericOp op, std::string &whyNot) {
  for (auto [d, r] : llvm::enumerate(op.getStaticLoopRanges()))
    if (ShapedType::isDynamic(r)) {
      reject(whyNot, "loop dimension ", d, " has a dynamic range");
      return false;
    }
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
      if (!ok) {
        reject(whyNot, "output ",
               init.getOperandNumber() - op.getNumDpsInputs(),
               " is indexed by a reduction dimension");
        return false;
      }
    }
  }
  return true;
}

/// The GEMM view of `op`, or nothing: one output, a reduction, no
/// linalg.index, exactly two memref inputs that the payload reads, non-empty
/// M, N and K, and N holding the output's contiguous dimension (A and B are
/// swapped to make it so).
std::optional<Contraction> classifyContraction(linalg::GenericOp op,
                                               std::string &whyNot) {
  if (op.getNumDpsInits() != 1)
    return reject(whyNot, "not a contraction: ", op.getNumDpsInits(),
                  " outputs");
  if (op.getNumReductionLoops() == 0)
    return reject(whyNot, "not a contraction: no reduction");
  bool hasIndex = false;
  op.getRegion().walk([&](linalg::IndexOp) { hasIndex = true; });
  if (hasIndex)
    return reject(whyNot, "not a contraction: the payload reads linalg.index");
  Block &payload = op.getRegion().front();
  SmallVector<OpOperand *> mem;
  for (OpOperand *in : op.getDpsInputOperands())
    if (isa<MemRefType>(in->get().getType())) {
      if (payload.getArgument(in->getOperandNumber()).use_empty())
        return reject(whyNot,
                      "not a contraction: the payload does not read "
                      "input ",
                      in->getOperandNumber());
      mem.push_back(in);
    }
  if (mem.size() != 2)
    return reject(whyNot, "not a contraction: ", mem.size(),
                  " buffer inputs, not 2");
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
    return reject(whyNot, "not a contraction: the output is a scalar");
  auto last = dyn_cast<AffineDimExpr>(outMap.getResults().back());
  if (!last)
    return reject(whyNot, "not a contraction: the output's innermost index "
                          "is not a loop dimension");
  unsigned fast = last.getPosition();
  if (llvm::is_contained(c.m, fast))
    classify(mem[1], mem[0]);
  if (c.m.empty() || c.n.empty())
    return reject(whyNot, "not a contraction: no parallel dimension that "
                          "only one input uses (an input depends on both M "
                          "and N, as in a depthwise convolution or pooling)");
  if (c.k.empty())
    return reject(whyNot, "not a contraction: no reduction dimension that "
                          "both inputs use");
  if (c.n.back() != fast)
    return reject(whyNot, "not a contraction: the output's contiguous "
                          "dimension is used by both inputs or neither");
  return c;
}

/// Whether `op`'s payload is exactly `out + a * b` over the contraction's
/// two inputs (in either order), as a wmma multiply-accumulate computes.
bool isMultiplyAdd(linalg::GenericOp op, const Contraction &c) {
  Block &payload = op.getRegion().front();
  OpOperand &init = op.getDpsInitsMutable()[0];
  Value argA = payload.getArgument(c.a->getOperandNumber());
  Value argB = payload.getArgument(c.b->getOperandNumber());
  Value argOut = payload.getArgument(init.getOperandNumber());
  auto ops = payload.without_terminator();
  if (std::distance(ops.begin(), ops.end()) != 2)
    return false;
  auto mul = dyn_cast<arith::MulFOp>(&*ops.begin());
  auto add = dyn_cast<arith::AddFOp>(&*std::next(ops.begin()));
  if (!mul || !add ||
      payload.getTerminator()->getOperands() != ValueRange{add.getResult()})
    return false;
  auto isPair = [](Value x, Value y, Value p, Value q) {
    return (x == p && y == q) || (x == q && y == p);
  };
  return isPair(mul.getLhs(), mul.getRhs(), argA, argB) &&
         isPair(add.getLhs(), add.getRhs(), argOut, mul.getResult());
}

//===----------------------------------------------------------------------===//
// Plans
//===----------------------------------------------------------------------===//

/// The tiles of `c` for blocks of TM x TN outputs; nothing when the grid
/// is too large.
std::optional<ContractionTiles> cutTiles(linalg::GenericOp op,
                                         const Contraction &c, int64_t TM,
                                         int64_t TN, std::string &whyNot) {
  ContractionTiles t{c, op.getStaticLoopRanges(), 0, 0, 0, 0, TM, TN, 0, 0, 0};
  t.M = extent(t.ranges, c.m);
  t.N = extent(t.ranges, c.n);
  t.K = extent(t.ranges, c.k);
  t.G = extent(t.ranges, c.g);
  t.tilesM = llvm::divideCeil(t.M, TM);
  t.tilesN = llvm::divideCeil(t.N, TN);
  t.grid = t.G * t.tilesM * t.tilesN;
  if (t.grid > INT32_MAX)
    return reject(whyNot, t.grid, " blocks are too many for one grid");
  return t;
}

/// Tensor cores for `c`: fp16 operands, an fp16 or fp32 output, a
/// multiply-add payload and M, N, K of at least one fragment. A tile of
/// 64 (two fragments per warp) on a side of at least 64, else 32.
std::optional<TensorCorePlan> planTensorCores(linalg::GenericOp op,
                                              const Contraction &c,
                                              std::string &whyNot) {
  constexpr int64_t kFrag = TensorCorePlan::kFrag;
  MLIRContext *ctx = op.getContext();
  Type f16 = Float16Type::get(ctx), f32 = Float32Type::get(ctx);
  auto elementType = [](Value v) {
    return cast<MemRefType>(v.getType()).getElementType();
  };
  Type aType = elementType(c.a->get()), bType = elementType(c.b->get());
  Type outType = elementType(op.getDpsInitsMutable()[0].get());
  if (aType != f16 || bType != f16)
    return reject(whyNot, "the inputs are ", aType, " and ", bType,
                  ", not f16");
  if (outType != f16 && outType != f32)
    return reject(whyNot, "the output is ", outType, ", not f16 or f32");
  if (!isMultiplyAdd(op, c))
    return reject(whyNot, "the payload is not exactly out + a * b");
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t M = extent(ranges, c.m), N = extent(ranges, c.n);
  int64_t K = extent(ranges, c.k);
  if (M < kFrag || N < kFrag || K < kFrag)
    return reject(whyNot, "M = ", M, ", N = ", N, ", K = ", K,
                  ": each must be at least ", kFrag);
  int64_t FM = M >= 64 ? 2 : 1, FN = N >= 64 ? 2 : 1;
  std::optional<ContractionTiles> tiles =
      cutTiles(op, c, 2 * kFrag * FM, 2 * kFrag * FN, whyNot);
  if (!tiles)
    return std::nullopt;
  return TensorCorePlan{std::move(*tiles), FM, FN};
}

/// Shared-memory tiles for `c`: up to 4 x 4 outputs per thread (64 x 64
/// per block) along M and N; a side under 16 does not fill the block (a
/// matrix-vector product keeps the generic mapping), and K under half a
/// slice gains nothing from staging.
std::optional<TiledPlan> planTiles(linalg::GenericOp op, const Contraction &c,
                                   std::string &whyNot) {
  constexpr int64_t kSide = TiledPlan::kSide, kTK = TiledPlan::kTK;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t M = extent(ranges, c.m), N = extent(ranges, c.n);
  int64_t K = extent(ranges, c.k);
  auto regs = [](int64_t size) -> int64_t {
    return size >= 64 ? 4 : size >= 32 ? 2 : size >= 16 ? 1 : 0;
  };
  int64_t RM = regs(M), RN = regs(N);
  if (!RM || !RN)
    return reject(whyNot, "M = ", M, ", N = ", N, ": a side under ", kSide,
                  " does not fill a block");
  if (K < kTK / 2)
    return reject(whyNot, "K = ", K, " is under ", kTK / 2);
  std::optional<ContractionTiles> tiles =
      cutTiles(op, c, kSide * RM, kSide * RN, whyNot);
  if (!tiles)
    return std::nullopt;
  return TiledPlan{std::move(*tiles), RM, RN};
}

/// Thread coarsening for kernels with a reduction (matmuls, convolutions):
/// each thread computes `coarsen` outputs along a parallel dimension that
/// some input does not depend on, so that input's loads are shared by the
/// outputs (B[k, j] of a matmul once per 4 rows; a convolution's filter
/// once per 4 output pixels). The innermost parallel dimension stays one
/// element per thread to keep neighbouring threads on neighbouring
/// addresses. A range that `coarsen` does not divide gets the largest
/// power-of-two factor below it that does (14 output columns: 2).
/// Returns {dimension, factor}, or {-1, 1}.
std::pair<int64_t, int64_t> coarsenDim(linalg::GenericOp op, int64_t coarsen,
                                       ArrayRef<int64_t> ranges,
                                       ArrayRef<unsigned> parallelDims,
                                       ArrayRef<unsigned> reductionDims) {
  if (coarsen <= 1 || reductionDims.empty() || parallelDims.size() < 2)
    return {-1, 1};
  for (int64_t factor = coarsen; factor > 1; factor /= 2)
    for (unsigned d : llvm::reverse(parallelDims.drop_back())) {
      if (ranges[d] % factor != 0)
        continue;
      for (OpOperand *in : op.getDpsInputOperands()) {
        if (!isa<MemRefType>(in->get().getType()))
          continue;
        if (!op.getMatchingIndexingMap(in).isFunctionOfDim(d))
          return {d, factor};
      }
    }
  return {-1, 1};
}

/// One thread per point (or per `factor` points along a coarsened
/// dimension), `blockSize` threads per block; one thread for an empty
/// iteration space. Fails on a grid too large for the launch.
FailureOr<KernelPlan> planParallel(linalg::GenericOp op,
                                   const MappingOptions &options) {
  ParallelPlan p;
  p.ranges = op.getStaticLoopRanges();
  for (auto [d, it] : llvm::enumerate(op.getIteratorTypesArray()))
    (it == utils::IteratorType::parallel ? p.parallelDims : p.reductionDims)
        .push_back(d);
  if (llvm::any_of(p.ranges, [](int64_t r) { return r == 0; })) {
    explainSingleThreadFallback(op, "the iteration space is empty");
    return KernelPlan(SingleThreadPlan{});
  }
  std::tie(p.coarsenDim, p.factor) = coarsenDim(
      op, options.coarsen, p.ranges, p.parallelDims, p.reductionDims);
  p.threadRanges = p.ranges;
  if (p.coarsenDim >= 0)
    p.threadRanges[p.coarsenDim] /= p.factor;
  p.total = 1;
  for (unsigned d : p.parallelDims)
    p.total *= p.threadRanges[d];
  p.block = std::min<int64_t>(p.total, options.blockSize);
  p.grid = llvm::divideCeil(p.total, p.block);
  if (p.grid > INT32_MAX)
    return op.emitError() << "iteration space of " << p.total
                          << " points is too large for one grid";
  return KernelPlan(std::move(p));
}

/// The kernel of a generic on buffers with static ranges and outputs
/// indexed by parallel dimensions only: tensor cores, shared-memory
/// tiles, or one thread per point, the first that applies.
FailureOr<KernelPlan> chooseGenericKernel(linalg::GenericOp op,
                                          const MappingOptions &options) {
  std::string whyNot;
  std::optional<Contraction> c = classifyContraction(op, whyNot);
  if (c) {
    if (!options.tile) {
      whyNot = "turned off (tile=false)";
    } else if (!options.tensorCores) {
      explainTensorCoreFallback(op, "turned off (tensor-cores=false)");
    } else if (std::optional<TensorCorePlan> p =
                   planTensorCores(op, *c, whyNot)) {
      return KernelPlan(std::move(*p));
    } else {
      explainTensorCoreFallback(op, whyNot);
      whyNot.clear();
    }
    if (options.tile)
      if (std::optional<TiledPlan> p = planTiles(op, *c, whyNot))
        return KernelPlan(std::move(*p));
  }
  // An elementwise generic has nothing to share between threads.
  if (op.getNumReductionLoops() > 0)
    explainTiledFallback(op, whyNot);
  return planParallel(op, options);
}
} // namespace

FailureOr<KernelPlan> chooseKernel(Operation *op,
                                   const MappingOptions &options) {
  if (llvm::any_of(op->getResults(), [](Value r) { return !r.use_empty(); })) {
    explainSingleThreadFallback(op, "later ops use its results; it runs with "
                                    "every op up to its last user");
    return KernelPlan(SequentialGroupPlan{});
  }
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic) {
    explainSingleThreadFallback(op, "not a linalg.generic");
    return KernelPlan(SingleThreadPlan{});
  }
  if (!generic.hasPureBufferSemantics()) {
    explainSingleThreadFallback(op, "not on buffers only");
    return KernelPlan(SingleThreadPlan{});
  }
  std::string whyNot;
  if (!isParallelizable(generic, whyNot)) {
    explainSingleThreadFallback(op, whyNot);
    return KernelPlan(SingleThreadPlan{});
  }
  return chooseGenericKernel(generic, options);
}
} // namespace mlir::kiln::gpu_mapping
