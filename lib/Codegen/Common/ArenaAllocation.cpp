//===- ArenaAllocation.cpp - every buffer at an offset of one arena -*- C++ -*-===//
//
// The generated code never allocates: after bufferization each memref.alloc of
// an entry function is rewritten to a memref.view of a trailing arena
// argument at a static offset. Offsets come from the memory planner
// (kiln/Codegen/MemoryPlan.h) on liveness intervals: the steps are the
// top-level ops of the function, and a buffer lives from its allocation to
// the last step that uses it or any view of it. The plan is recorded on the
// function for --emit=memory-plan and the compile report.
//
// Run-time guards (kiln.guard, lowered to calls of __kiln_guard_failed) write
// their number into a status word that the first kGuardStatusBytes of the
// arena hold; the runtime zeroes it before and reads it after each run.
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/Common/Passes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "kiln/Codegen/MemoryPlan.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "kiln/Codegen/Common/SymbolicBounds.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_ARENAALLOCATIONPASS
#include "kiln/Codegen/Common/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
namespace plan = mlir::kiln::plan;

namespace {
using mlir::kiln::kGuardFailedFn;
using mlir::kiln::kGuardMessageAttr;
using mlir::kiln::kMaxLoopScratchBytes;

/// Whether the buffer `v` (or a view of it) leaves the iteration that made
/// it: yielded or returned.
bool escapes(Value v) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (user->hasTrait<OpTrait::IsTerminator>())
      return true;
    if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
      if (view.getViewSource() == v && escapes(user->getResult(0)))
        return true;
    }
  }
  return false;
}

int64_t bufferBytes(MemRefType type) {
  int64_t eltBytes =
      std::max<int64_t>(1, (type.getElementTypeBitWidth() + 7) / 8);
  return type.getNumElements() * eltBytes;
}

/// The bytes of the largest buffer `op` can allocate: a dynamic size (a
/// symbolic dimension, docs/shapes.md) at its upper bound, which
/// --kiln-bind-symbolic-shapes made derivable from the symbols' ranges.
FailureOr<int64_t> largestBytes(memref::AllocOp op) {
  MemRefType type = op.getType();
  if (type.hasStaticShape())
    return bufferBytes(type);
  int64_t bytes = std::max<int64_t>(1, (type.getElementTypeBitWidth() + 7) / 8);
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t size = type.getDimSize(d);
    if (type.isDynamicDim(d)) {
      std::optional<int64_t> ub = mlir::kiln::largestDim(op.getResult(), d);
      if (!ub || *ub < 0)
        return failure();
      size = *ub;
    }
    if (__builtin_mul_overflow(bytes, size, &bytes))
      return failure();
  }
  return bytes;
}

struct ArenaAllocationPass
    : mlir::kiln::impl::ArenaAllocationPassBase<ArenaAllocationPass> {
  using ArenaAllocationPassBase::ArenaAllocationPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    int64_t arenaBytes = 0;
    SmallVector<Attribute> guardMessages;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isDeclaration())
        continue;
      // Kernels that an entry function calls (the AMX kernels) work on the
      // buffers it passes them and have no arena of their own.
      if (func.isPrivate() &&
          !func.walk([](memref::AllocOp) { return WalkResult::interrupt(); })
               .wasInterrupted())
        continue;
      if (failed(runOnFunction(func, arenaBytes, guardMessages)))
        return signalPassFailure();
    }
    if (auto placeholder = module.lookupSymbol<func::FuncOp>(kGuardFailedFn))
      placeholder.erase();
    if (!guardMessages.empty())
      module->setAttr(mlir::kiln::kGuardMessagesAttr,
                      ArrayAttr::get(ctx, guardMessages));
    module->setAttr(mlir::kiln::kArenaBytesAttr,
                    IntegerAttr::get(IntegerType::get(ctx, 64), arenaBytes));
  }

  LogicalResult runOnFunction(func::FuncOp func, int64_t &arenaBytes,
                              SmallVectorImpl<Attribute> &guardMessages) {
    IRRewriter rewriter(&getContext());
    replaceCopies(rewriter, func);
    moveLoopScratchToStack(rewriter, func);
    FailureOr<SmallVector<memref::AllocOp>> allocs = arenaBuffers(func);
    if (failed(allocs))
      return failure();
    Liveness live = liveness(func, *allocs);
    plan::PlanOptions options;
    options.alignment = alignment;
    plan::Plan arenaPlan = plan::planArena(live.buffers, options);
    SmallVector<int64_t> offsets(arenaPlan.offsets.begin(),
                                 arenaPlan.offsets.end());
    int64_t size = arenaPlan.arenaBytes;
    SmallVector<func::CallOp> guards;
    func.walk([&](func::CallOp call) {
      if (call.getCallee() == kGuardFailedFn)
        guards.push_back(call);
    });
    // The status word goes first; every buffer moves up by one block.
    int64_t reserved = guards.empty() ? 0 : mlir::kiln::kGuardStatusBytes;
    for (int64_t &offset : offsets)
      offset += reserved;
    size += reserved;
    arenaBytes = std::max(arenaBytes, size);
    recordPlan(func, *allocs, live, offsets, size, arenaPlan.lowerBoundBytes);
    shrinkEmptyArguments(func);
    FailureOr<Value> arena = appendArena(rewriter, func, size);
    if (failed(arena))
      return failure();
    numberGuards(rewriter, func, *arena, guards, guardMessages,
                 returnAtFailedGuard);
    for (auto [op, offset] : llvm::zip(*allocs, offsets)) {
      rewriter.setInsertionPoint(op);
      Value off = arith::ConstantIndexOp::create(rewriter, op.getLoc(), offset);
      rewriter.replaceOpWithNewOp<memref::ViewOp>(op, op.getType(), *arena,
                                                  off, op.getDynamicSizes());
    }
    return success();
  }

  /// memref.copy would call a runtime library; a linalg.copy becomes loops.
  static void replaceCopies(IRRewriter &rewriter, func::FuncOp func) {
    SmallVector<memref::CopyOp> copies;
    func.walk([&](memref::CopyOp op) { copies.push_back(op); });
    for (memref::CopyOp op : copies) {
      // A tile written in place leaves a copy of a buffer onto itself.
      if (op.getSource() == op.getTarget()) {
        rewriter.eraseOp(op);
        continue;
      }
      rewriter.setInsertionPoint(op);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(op, op.getSource(),
                                                  op.getTarget());
    }
    func.walk([&](memref::DeallocOp op) { rewriter.eraseOp(op); });
  }

  /// A small buffer allocated inside a loop (a tile that tiling could not
  /// keep in registers: an f32 accumulator tile whose epilogue writes
  /// another type) becomes a stack buffer made once, at the top of the
  /// parallel loop's body (once per task; see OutlineParallelLoops.cpp) or
  /// of the function: every iteration gets the same memory, which it finds
  /// holding the last iteration's values instead of undefined ones. One of
  /// run-time size qualifies by its size at the symbols' maxima.
  static void moveLoopScratchToStack(IRRewriter &rewriter, func::FuncOp func) {
    SmallVector<memref::AllocOp> inLoops;
    func.walk([&](memref::AllocOp op) {
      if (op->getParentOp() != func.getOperation())
        inLoops.push_back(op);
    });
    DominanceInfo dominance(func);
    for (memref::AllocOp op : inLoops) {
      MemRefType type = op.getType();
      FailureOr<int64_t> bytes = largestBytes(op);
      if (!type.getLayout().isIdentity() || failed(bytes) ||
          *bytes > kMaxLoopScratchBytes || escapes(op.getResult()))
        continue;
      // The outermost parallel loop around it, which may be nested in
      // graph loops, gets outlined: its body is made once per task.
      Block *home = &func.getBody().front();
      Operation *outermost = op;
      for (Operation *p = op->getParentOp(); p != func.getOperation();
           p = p->getParentOp()) {
        outermost = p;
        if (auto forall = dyn_cast<scf::ForallOp>(p))
          home = forall.getBody();
      }
      if (type.hasStaticShape()) {
        rewriter.setInsertionPointToStart(home);
        rewriter.replaceOpWithNewOp<memref::AllocaOp>(op, type,
                                                      op.getAlignmentAttr());
        continue;
      }
      // A slice of run-time extent (a symbolic dimension), at most
      // kMaxLoopScratchBytes at the symbols' maxima: a stack buffer of its
      // run-time size, made where its sizes are known: at the top of the
      // task, or before the loop nest when no parallel loop is around it.
      // One in graph loops alone keeps its arena slot.
      if (inGraphLoops(op, func))
        continue;
      Operation *before =
          home == &func.getBody().front() ? outermost : &home->front();
      if (!llvm::all_of(op.getDynamicSizes(), [&](Value size) {
            return dominance.properlyDominates(size, before);
          }))
        continue;
      rewriter.setInsertionPoint(before);
      rewriter.replaceOpWithNewOp<memref::AllocaOp>(
          op, type, op.getDynamicSizes(), op.getAlignmentAttr());
    }
  }

  /// Whether every op around `op` up to `func` is a loop over the graph
  /// (kGraphLoopAttr): its iterations run one after another, so a buffer
  /// allocated in it can take one arena slot for the whole loop, reused by
  /// every iteration.
  static bool inGraphLoops(Operation *op, func::FuncOp func) {
    for (Operation *p = op->getParentOp(); p != func.getOperation();
         p = p->getParentOp())
      if (!isa<scf::ForOp, scf::WhileOp>(p) ||
          !p->hasAttr(mlir::kiln::kGraphLoopAttr))
        return false;
    return true;
  }

  /// Every buffer that goes into the arena: the allocations at the top of
  /// the function or in graph loops (not yielded out of their iteration),
  /// each of bounded size and identity layout (an error otherwise).
  static FailureOr<SmallVector<memref::AllocOp>>
  arenaBuffers(func::FuncOp func) {
    SmallVector<memref::AllocOp> allocs;
    WalkResult walk = func.walk([&](memref::AllocOp op) {
      MemRefType type = op.getType();
      if (!type.getLayout().isIdentity()) {
        op.emitError() << "buffer " << type
                       << " has no identity layout; it cannot live in the "
                          "arena";
        return WalkResult::interrupt();
      }
      if (failed(largestBytes(op))) {
        op.emitError() << "buffer " << type
                       << " has a dynamic size without an upper bound; it "
                          "cannot live in the arena";
        return WalkResult::interrupt();
      }
      if (op->getParentOp() != func.getOperation() && !inGraphLoops(op, func)) {
        op.emitError() << "buffer " << type
                       << " is allocated inside a loop; it cannot live in the "
                          "arena";
        return WalkResult::interrupt();
      }
      if (op->getParentOp() != func.getOperation() && escapes(op.getResult())) {
        op.emitError() << "buffer " << type
                       << " outlives the iteration of the graph loop that "
                          "allocates it; it cannot have one arena slot";
        return WalkResult::interrupt();
      }
      allocs.push_back(op);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    return allocs;
  }

  /// The interval of each buffer and the op that first writes it.
  struct Liveness {
    std::vector<plan::Buffer> buffers;
    SmallVector<std::string> producers;
  };

  /// Liveness: one step per top-level op of the function. A buffer is live
  /// from the first op that touches it (not from the alloc, which costs
  /// nothing) to the last; views and loop-carried values alias it.
  static Liveness liveness(func::FuncOp func,
                           SmallVectorImpl<memref::AllocOp> &allocs) {
    DenseMap<Operation *, int64_t> stepOf;
    int64_t step = 0;
    for (Operation &op : func.getBody().front())
      stepOf[&op] = step++;
    auto topLevel = [&](Operation *op) {
      while (op->getParentOp() != func.getOperation())
        op = op->getParentOp();
      return op;
    };
    Liveness live;
    for (auto [i, op] : llvm::enumerate(allocs)) {
      plan::Buffer b;
      b.id = "b" + std::to_string(i);
      b.size = *largestBytes(op);
      b.first = INT64_MAX;
      b.last = stepOf[topLevel(op)];
      Operation *producer = nullptr;
      SmallVector<Value> worklist = {op.getResult()};
      while (!worklist.empty()) {
        Value v = worklist.pop_back_val();
        for (OpOperand &use : v.getUses()) {
          Operation *user = use.getOwner();
          Operation *top = topLevel(user);
          b.last = std::max(b.last, stepOf[top]);
          b.first = std::min(b.first, stepOf[top]);
          if (!producer || stepOf[top] < stepOf[producer])
            producer = top;
          if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
            if (view.getViewSource() == v)
              for (Value r : user->getResults())
                worklist.push_back(r);
          } else if (auto loop = dyn_cast<scf::ForOp>(user)) {
            for (auto [init, iterArg, result] :
                 llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs(),
                           loop.getResults()))
              if (init == v) {
                worklist.push_back(iterArg);
                worklist.push_back(result);
              }
          } else if (isa<scf::YieldOp>(user)) {
            if (auto loop = dyn_cast<scf::ForOp>(user->getParentOp()))
              worklist.push_back(loop.getResult(use.getOperandNumber()));
          }
        }
      }
      if (b.first == INT64_MAX)
        b.first = stepOf[topLevel(op)];
      std::string name;
      if (producer) {
        if (auto loc = dyn_cast<NameLoc>(producer->getLoc()))
          name = loc.getName().str();
        else
          name = producer->getName().getStringRef().str();
      }
      live.producers.push_back(name);
      live.buffers.push_back(std::move(b));
    }
    return live;
  }

  /// The plan on the function, for --emit=memory-plan and the report.
  static void recordPlan(func::FuncOp func,
                         SmallVectorImpl<memref::AllocOp> &allocs,
                         const Liveness &live, ArrayRef<int64_t> offsets,
                         int64_t size, int64_t lowerBound) {
    MLIRContext *ctx = func.getContext();
    func->setAttr(mlir::kiln::kArenaBytesAttr,
                  IntegerAttr::get(IntegerType::get(ctx, 64), size));
    func->setAttr(mlir::kiln::kArenaLowerBoundAttr,
                  IntegerAttr::get(IntegerType::get(ctx, 64), lowerBound));
    SmallVector<Attribute> records;
    Builder b(ctx);
    for (auto [buf, offset, producer, op] :
         llvm::zip(live.buffers, offsets, live.producers, allocs)) {
      std::string type;
      llvm::raw_string_ostream os(type);
      os << op.getType();
      records.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("size", b.getI64IntegerAttr(buf.size)),
           b.getNamedAttr("offset", b.getI64IntegerAttr(offset)),
           b.getNamedAttr("first", b.getI64IntegerAttr(buf.first)),
           b.getNamedAttr("last", b.getI64IntegerAttr(buf.last)),
           b.getNamedAttr("producer", b.getStringAttr(producer)),
           b.getNamedAttr("type", b.getStringAttr(type))}));
    }
    func->setAttr(mlir::kiln::kMemoryPlanAttr, b.getArrayAttr(records));
  }

  /// An empty tensor argument nobody reads (3x4x0) becomes memref<0xT>: the
  /// same bare pointer to the caller, and a type the LLVM lowering of the
  /// signature accepts (it rejects a zero inner dimension).
  static void shrinkEmptyArguments(func::FuncOp func) {
    SmallVector<Type> argTypes(func.getArgumentTypes());
    for (BlockArgument arg : func.getArguments()) {
      auto t = dyn_cast<MemRefType>(arg.getType());
      if (!t || !t.hasStaticShape() || t.getNumElements() != 0 ||
          !arg.use_empty() || t.getRank() == 1)
        continue;
      arg.setType(MemRefType::get({0}, t.getElementType()));
      argTypes[arg.getArgNumber()] = arg.getType();
    }
    func.setType(
        FunctionType::get(func.getContext(), argTypes, func.getResultTypes()));
  }

  /// The arena: a trailing memref<size x i8> argument marked kArenaArgAttr.
  static FailureOr<Value> appendArena(IRRewriter &rewriter, func::FuncOp func,
                                      int64_t size) {
    MLIRContext *ctx = func.getContext();
    auto arenaType = MemRefType::get({size}, IntegerType::get(ctx, 8));
    // The arena goes last, but before the run-time sizes of a function with
    // symbolic dimensions (--kiln-bind-symbolic-shapes): the runtime passes
    // inputs, outputs, arena, dims.
    unsigned at = func.getNumArguments();
    if (at && func.getArgAttr(at - 1, mlir::kiln::kDimsArgAttr))
      --at;
    if (failed(func.insertArgument(
            at, arenaType,
            DictionaryAttr::get(ctx, {rewriter.getNamedAttr(
                                         mlir::kiln::kArenaArgAttr,
                                         rewriter.getUnitAttr())}),
            func.getLoc())))
      return failure();
    return func.getArgument(at);
  }

  /// Each guard stores its number (its message's index + 1) into the status
  /// word at the start of the arena instead of calling the placeholder. A
  /// guard whose `scf.if` sits at the top of a function without results
  /// becomes, if `returnAtFailedGuard`, a branch to a block that stores and
  /// returns, so nothing after a failed check runs; the function's top-level
  /// ops stay its direct children (parallel loops are still outlined).
  static void numberGuards(IRRewriter &rewriter, func::FuncOp func, Value arena,
                           ArrayRef<func::CallOp> guards,
                           SmallVectorImpl<Attribute> &guardMessages,
                           bool returnAtFailedGuard) {
    if (guards.empty())
      return;
    rewriter.setInsertionPointToStart(&func.getBody().front());
    Location loc = func.getLoc();
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value status = memref::ViewOp::create(
        rewriter, loc, MemRefType::get({1}, rewriter.getI32Type()), arena, zero,
        ValueRange{});
    for (func::CallOp call : guards) {
      guardMessages.push_back(call->getAttr(kGuardMessageAttr));
      rewriter.setInsertionPoint(call);
      Value number = arith::ConstantOp::create(
          rewriter, call.getLoc(),
          rewriter.getI32IntegerAttr((int32_t)guardMessages.size()));
      memref::StoreOp::create(rewriter, call.getLoc(), number, status,
                              ValueRange{zero});
      auto check = dyn_cast<scf::IfOp>(call->getParentOp());
      rewriter.eraseOp(call);
      if (!returnAtFailedGuard || !check ||
          check->getParentOp() != func.getOperation() ||
          func.getNumResults() != 0 || check.getNumResults() != 0 ||
          !check.getElseRegion().empty())
        continue;
      // before: ... scf.if %failed { store } rest...  becomes
      // before: ... cf.cond_br %failed, ^fail, ^rest
      // ^fail: store; return      ^rest: rest...
      Block *before = check->getBlock();
      Block *rest = rewriter.splitBlock(before, std::next(check->getIterator()));
      Block *fail = rewriter.createBlock(rest);
      Block &then = check.getThenRegion().front();
      rewriter.eraseOp(then.getTerminator());
      rewriter.inlineBlockBefore(&then, fail, fail->end());
      rewriter.setInsertionPointToEnd(fail);
      func::ReturnOp::create(rewriter, check.getLoc());
      rewriter.setInsertionPointToEnd(before);
      cf::CondBranchOp::create(rewriter, check.getLoc(), check.getCondition(),
                               fail, rest);
      rewriter.eraseOp(check);
    }
  }
};
} // namespace
