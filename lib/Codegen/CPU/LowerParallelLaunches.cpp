//===- LowerParallelLaunches.cpp - launcher calls to the thread pool -*- C++ -*-===//
//
// The second half of carrying a parallel loop to the runtime's pool
// (runtime/src/pool.c); the first is kiln-outline-parallel-loops
// (lib/Codegen/Common/OutlineParallelLoops.cpp). In the LLVM dialect, after
// everything else is lowered, each launcher call becomes
//   ctx = alloca [n x i64]; store the captured values into ctx;
//   __kiln_parallel_for(@F_parN.task, ctx, count)
// with a trampoline @F_parN.task(ctx, begin, end) that loads them back and
// calls @F_parN. Emulated GPU blocks (kiln.fibers) go to __kiln_emu_fibers
// the same way.
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/CPU/Passes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringMap.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_LOWERPARALLELLAUNCHESPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
using mlir::kiln::kFiberLaunchPrefix;
using mlir::kiln::kFibersFn;
using mlir::kiln::kParallelForFn;
using mlir::kiln::kParallelLaunchPrefix;

struct LowerParallelLaunchesPass
    : mlir::kiln::impl::LowerParallelLaunchesPassBase<
          LowerParallelLaunchesPass> {
  void runOnOperation() override {
    if (failed(lower(kParallelLaunchPrefix, kParallelForFn)) ||
        failed(lower(kFiberLaunchPrefix, kFibersFn)))
      signalPassFailure();
  }

  /// Lowers the launchers named `prefix` + body to calls of `runner`.
  LogicalResult lower(StringRef prefix, StringRef runner) {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<LLVM::LLVMFuncOp> launchers;
    for (auto f : module.getOps<LLVM::LLVMFuncOp>())
      if (f.getName().starts_with(prefix))
        launchers.push_back(f);
    if (launchers.empty())
      return success();

    // One walk and one symbol table for all launchers: a model with
    // thousands of parallel loops made a walk per launcher quadratic (the
    // 1,000-node U-Net spent 12 s here).
    SymbolTable symbols(module);
    llvm::StringMap<SmallVector<LLVM::CallOp>> callsOf;
    module.walk([&](LLVM::CallOp call) {
      if (std::optional<StringRef> callee = call.getCallee();
          callee && callee->starts_with(prefix))
        callsOf[*callee].push_back(call);
    });

    OpBuilder b(ctx);
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    auto voidType = LLVM::LLVMVoidType::get(ctx);
    auto parallelFor = symbols.lookup<LLVM::LLVMFuncOp>(runner);
    if (!parallelFor) {
      b.setInsertionPointToStart(module.getBody());
      parallelFor = LLVM::LLVMFuncOp::create(
          b, module.getLoc(), runner,
          LLVM::LLVMFunctionType::get(voidType, {ptrType, ptrType, i64}));
    }

    for (LLVM::LLVMFuncOp launcher : launchers) {
      StringRef bodyName = launcher.getName().drop_front(prefix.size());
      auto body = symbols.lookup<LLVM::LLVMFuncOp>(bodyName);
      if (!body) {
        return launcher.emitError("no parallel body '") << bodyName << "'";
      }
      ArrayRef<Type> captured =
          launcher.getFunctionType().getParams().drop_front();
      for (Type t : captured)
        if (!isa<LLVM::LLVMPointerType, IntegerType, FloatType>(t)) {
          return launcher.emitError("parallel loop captures a value of type ")
                 << t << ", which does not fit a context slot";
        }

      // The trampoline the pool calls: (ctx, begin, end) -> body.
      b.setInsertionPointAfter(body);
      Location loc = body.getLoc();
      auto task = LLVM::LLVMFuncOp::create(
          b, loc, (bodyName + ".task").str(),
          LLVM::LLVMFunctionType::get(voidType, {ptrType, i64, i64}),
          LLVM::Linkage::Internal);
      Block *entry = task.addEntryBlock(b);
      b.setInsertionPointToStart(entry);
      SmallVector<Value> callArgs = {entry->getArgument(1),
                                     entry->getArgument(2)};
      for (auto [i, t] : llvm::enumerate(captured)) {
        Value slot = LLVM::GEPOp::create(
            b, loc, ptrType, i64, entry->getArgument(0),
            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
        callArgs.push_back(LLVM::LoadOp::create(b, loc, t, slot));
      }
      LLVM::CallOp::create(b, loc, body, callArgs);
      LLVM::ReturnOp::create(b, loc, ValueRange{});

      // Each call of the launcher: fill a context, run the loop.
      for (LLVM::CallOp call : callsOf.lookup(launcher.getName())) {
        auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
        Location cloc = call.getLoc();
        // One slot at least: alloca of zero elements is not portable.
        int64_t slots = std::max<int64_t>(1, captured.size());
        b.setInsertionPointToStart(&caller.getBody().front());
        Value size = LLVM::ConstantOp::create(b, cloc, i64,
                                              b.getI64IntegerAttr(slots));
        Value ctxPtr = LLVM::AllocaOp::create(b, cloc, ptrType, i64, size,
                                              /*alignment=*/8);
        b.setInsertionPoint(call);
        for (auto [i, v] : llvm::enumerate(call.getArgOperands().drop_front())) {
          Value slot = LLVM::GEPOp::create(
              b, cloc, ptrType, i64, ctxPtr,
              ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
          LLVM::StoreOp::create(b, cloc, v, slot);
        }
        Value fn = LLVM::AddressOfOp::create(b, cloc, ptrType, task.getName());
        LLVM::CallOp::create(
            b, cloc, parallelFor,
            ValueRange{fn, ctxPtr, call.getArgOperands().front()});
        call.erase();
      }
      launcher.erase();
    }
    return success();
  }
};
} // namespace
