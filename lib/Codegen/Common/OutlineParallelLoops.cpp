//===- OutlineParallelLoops.cpp - scf.forall -> thread-pool calls -*- C++ -*-===//
//
// The first of two passes that carry a parallel loop from the tiled IR to the
// runtime's pool (runtime/src/pool.c), which every model.so links whatever its
// target: kiln-outline-parallel-loops (memrefs, after the arena is planned)
// moves the body of each top-level one-dimensional scf.forall into a function
//   @F_parN(%begin: index, %end: index, captured...)
// that runs iterations [begin, end), and replaces the loop with a call of a
// declared launcher @__kiln_parallel_launch.F_parN(%count, captured...).
// Captured values are constants and view-like ops (cloned into the body) and
// scalars and static identity-layout memrefs (passed; one pointer each under
// the bare-pointer calling convention). A loop whose captures cannot be
// passed that way, or that is not at the top of its function (or inside
// loops over the graph only, kGraphLoopAttr), becomes a plain scf.for.
// Fixed-size stack buffers at the top of the body (scratch) are made once
// per task, or once before the sequential loop. The launchers
// become calls of the pool in kiln-cpu-lower-parallel-launches
// (lib/Codegen/CPU/LowerParallelLaunches.cpp).
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/Common/Passes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_OUTLINEPARALLELLOOPSPASS
#include "kiln/Codegen/Common/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
using mlir::kiln::kFiberLaunchPrefix;
using mlir::kiln::kFibersAttr;
using mlir::kiln::kParallelLaunchPrefix;

/// Whether `t` can cross the call as one 8-byte slot: a scalar, or a memref
/// that the bare-pointer calling convention passes as its data pointer.
bool passable(Type t) {
  if (t.isIndex() || isa<IntegerType, FloatType>(t))
    return t.isIndex() || t.getIntOrFloatBitWidth() <= 64;
  auto m = dyn_cast<MemRefType>(t);
  return m && m.hasStaticShape() && m.getLayout().isIdentity() &&
         !m.getMemorySpace();
}

/// Decides how the body gets `v`: cloned (constants, weights, and side-effect-free
/// ops such as views whose operands it can get too), or passed. Fails when
/// neither works.
LogicalResult capture(Value v, SetVector<Operation *> &clones,
                      SetVector<Value> &args) {
  if (args.contains(v))
    return success();
  Operation *def = v.getDefiningOp();
  if (def && clones.contains(def))
    return success();
  // Weights are referenced in the body, not passed: an address stored into
  // the context escapes, and LLVM then no longer merges identical constants
  // (the transposed weights of each batch variant, say).
  if (def && (def->hasTrait<OpTrait::ConstantLike>() ||
              isa<memref::GetGlobalOp>(def))) {
    clones.insert(def);
    return success();
  }
  if (passable(v.getType())) {
    args.insert(v);
    return success();
  }
  if (!def || def->getNumRegions() || !isMemoryEffectFree(def))
    return failure();
  for (Value operand : def->getOperands())
    if (failed(capture(operand, clones, args)))
      return failure();
  clones.insert(def); // after its operands: clones stay in def-use order
  return success();
}

/// The fixed-size stack buffers at the top of `loop`'s body (an AMX
/// kernel's scratch for its epilogue). Each iteration may reuse the last
/// one's: they are made once per task, or once before a sequential loop,
/// since a stack allocation inside a loop takes more stack every iteration.
SmallVector<memref::AllocaOp> iterationScratch(scf::ForallOp loop) {
  SmallVector<memref::AllocaOp> allocas;
  for (Operation &op : loop.getBody()->without_terminator())
    if (auto alloca = dyn_cast<memref::AllocaOp>(op))
      if (alloca->getNumOperands() == 0 && alloca.getType().hasStaticShape())
        allocas.push_back(alloca);
  return allocas;
}

/// The constant lower bound and step of a one-dimensional forall, or
/// failure; its upper bound may be a run-time size (a symbolic dimension,
/// docs/shapes.md).
FailureOr<std::array<int64_t, 2>> constantStart(scf::ForallOp loop) {
  if (loop.getRank() != 1)
    return failure();
  std::optional<int64_t> lb = getConstantIntValue(loop.getMixedLowerBound()[0]);
  std::optional<int64_t> st = getConstantIntValue(loop.getMixedStep()[0]);
  if (!lb || !st || *st <= 0)
    return failure();
  return std::array<int64_t, 2>{*lb, *st};
}

struct OutlineParallelLoopsPass
    : mlir::kiln::impl::OutlineParallelLoopsPassBase<OutlineParallelLoopsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      if (func.isDeclaration())
        continue;
      SmallVector<scf::ForallOp> loops;
      func.walk([&](scf::ForallOp loop) { loops.push_back(loop); });
      // By id: a dynamic U-Net has hundreds of parallel loops, and a scan
      // per loop would be quadratic.
      llvm::DenseMap<int64_t, kiln::ParallelIfOp> decisions;
      func.walk([&](kiln::ParallelIfOp op) {
        decisions.try_emplace(op.getLoop(), op);
      });
      int counter = 0;
      for (scf::ForallOp loop : loops) {
        if (succeeded(outline(func, loop, counter, decisions)))
          continue;
        if (loop->hasAttr(kFibersAttr)) {
          loop.emitError("cannot outline the threads of an emulated GPU "
                         "block; they must not run one after another");
          return signalPassFailure();
        }
        if (failed(toSequential(loop)))
          return signalPassFailure();
      }
      func.walk([](kiln::ParallelIfOp op) { op.erase(); });
    }
  }

  /// The run-time decision whether `loop` pays for a fork (kiln.parallel_if
  /// before it in its block), or null: always.
  static Value
  forkDecision(scf::ForallOp loop,
               const llvm::DenseMap<int64_t, kiln::ParallelIfOp> &decisions) {
    auto id = loop->getAttrOfType<IntegerAttr>(kiln::kParallelIfAttr);
    if (!id)
      return {};
    kiln::ParallelIfOp op = decisions.lookup(id.getInt());
    if (!op || op->getBlock() != loop->getBlock() ||
        !op->isBeforeInBlock(loop))
      return {};
    return op.getWorth();
  }

  /// A forall this pass does not hand to the pool runs as an scf.for.
  LogicalResult toSequential(scf::ForallOp loop) {
    for (memref::AllocaOp alloca : iterationScratch(loop))
      alloca->moveBefore(loop);
    IRRewriter rewriter(loop);
    rewriter.setInsertionPoint(loop);
    if (failed(scf::forallToForLoop(rewriter, loop))) {
      loop.emitError("cannot turn this scf.forall into a sequential loop");
      return failure();
    }
    return success();
  }

  /// At the top of `func`, or only inside loops over the graph
  /// (kGraphLoopAttr), each of whose iterations may then start the pool.
  static bool atTop(func::FuncOp func, scf::ForallOp loop) {
    for (Operation *p = loop->getParentOp(); p != func.getOperation();
         p = p->getParentOp())
      if (!isa<scf::ForOp, scf::WhileOp>(p) ||
          !p->hasAttr(mlir::kiln::kGraphLoopAttr))
        return false;
    return true;
  }

  LogicalResult outline(func::FuncOp func, scf::ForallOp loop, int &counter,
                        const llvm::DenseMap<int64_t, kiln::ParallelIfOp> &decisions) {
    bool fibers = loop->hasAttr(kFibersAttr);
    if ((!fibers && !atTop(func, loop)) || loop.getNumResults() ||
        loop.getMapping())
      return failure();
    FailureOr<std::array<int64_t, 2>> start = constantStart(loop);
    if (failed(start))
      return failure();
    auto [lb, step] = *start;
    OpFoldResult ub = loop.getMixedUpperBound()[0];

    SetVector<Value> used;
    getUsedValuesDefinedAbove(loop.getRegion(), used);
    SetVector<Operation *> clones;
    SetVector<Value> args;
    for (Value v : used)
      if (failed(capture(v, clones, args)))
        return failure();

    MLIRContext *ctx = &getContext();
    ModuleOp module = getOperation();
    OpBuilder b(ctx);
    Location loc = loop.getLoc();
    Type indexType = b.getIndexType();

    // The body: iterations [begin, end) of the loop.
    std::string name =
        (func.getSymName() + "_par" + Twine(counter++)).str();
    SmallVector<Type> argTypes = {indexType, indexType};
    for (Value v : args)
      argTypes.push_back(v.getType());
    b.setInsertionPointAfter(func);
    auto body = func::FuncOp::create(b, loc, name,
                                     b.getFunctionType(argTypes, {}));
    body.setPrivate();
    body->setAttr("llvm.linkage",
                  LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal));
    Block *entry = body.addEntryBlock();
    b.setInsertionPointToStart(entry);
    IRMapping map;
    for (auto [i, v] : llvm::enumerate(args))
      map.map(v, entry->getArgument(i + 2));
    for (Operation *op : clones)
      b.clone(*op, map);
    SmallVector<memref::AllocaOp> scratch = iterationScratch(loop);
    for (memref::AllocaOp alloca : scratch)
      b.clone(*alloca, map);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto inner = scf::ForOp::create(b, loc, entry->getArgument(0),
                                    entry->getArgument(1), one);
    b.setInsertionPointToStart(inner.getBody());
    Value iv = inner.getInductionVar();
    if (step != 1)
      iv = arith::MulIOp::create(
          b, loc, iv, arith::ConstantIndexOp::create(b, loc, step));
    if (lb != 0)
      iv = arith::AddIOp::create(b, loc, iv,
                                 arith::ConstantIndexOp::create(b, loc, lb));
    map.map(loop.getInductionVar(0), iv);
    for (Operation &op : loop.getBody()->without_terminator())
      if (!llvm::is_contained(scratch, &op))
        b.clone(op, map);
    b.setInsertionPointToEnd(entry);
    func::ReturnOp::create(b, loc);

    // The launcher the caller calls; lowered by the second pass.
    SmallVector<Type> launchTypes = {indexType};
    for (Value v : args)
      launchTypes.push_back(v.getType());
    b.setInsertionPoint(func);
    auto launch = func::FuncOp::create(
        b, loc,
        (llvm::Twine(fibers ? kFiberLaunchPrefix : kParallelLaunchPrefix) + name)
            .str(),
        b.getFunctionType(launchTypes, {}));
    launch.setPrivate();
    (void)module;

    b.setInsertionPoint(loop);
    // The trip count: a constant, or max(ub - lb, 0) ceildiv step at run
    // time.
    Value count;
    if (std::optional<int64_t> n = getConstantIntValue(ub)) {
      count = arith::ConstantIndexOp::create(
          b, loc, *n > lb ? (*n - lb + step - 1) / step : 0);
    } else {
      count = arith::SubIOp::create(b, loc, cast<Value>(ub),
                                    arith::ConstantIndexOp::create(b, loc, lb));
      count = arith::MaxSIOp::create(b, loc, count,
                                     arith::ConstantIndexOp::create(b, loc, 0));
      if (step != 1)
        count = arith::CeilDivSIOp::create(
            b, loc, count, arith::ConstantIndexOp::create(b, loc, step));
    }
    SmallVector<Value> operands = {count};
    operands.append(args.begin(), args.end());
    // An op of a symbolic dimension too small at the run-time sizes to pay
    // for a fork runs its iterations on this thread.
    if (Value fork = forkDecision(loop, decisions)) {
      // Called from two places, the body would be inlined into both the
      // caller and the pool's task, every such op's code twice (the dynamic
      // BERT encoder: 55k lines of LLVM IR to 17k static). One call per
      // op on the serial path costs nothing measurable.
      body->setAttr("passthrough",
                    b.getArrayAttr({b.getStringAttr("noinline")}));
      auto branch = scf::IfOp::create(b, loc, fork, /*withElseRegion=*/true);
      b.setInsertionPointToStart(branch.thenBlock());
      func::CallOp::create(b, loc, launch, operands);
      b.setInsertionPointToStart(branch.elseBlock());
      operands.insert(operands.begin(),
                      arith::ConstantIndexOp::create(b, loc, 0));
      func::CallOp::create(b, loc, body, operands);
    } else {
      func::CallOp::create(b, loc, launch, operands);
    }
    loop.erase();
    return success();
  }
};

} // namespace
