//===- LongFunctions.cpp - keep LLVM's work per function bounded -*- C++
//-*-===//
//
// LLVM's optimizer and code generator grow faster than linearly with the size
// of one basic block (alias queries, MemorySSA walks, the machine scheduler's
// load clustering). A model lowers to one graph function; most of it is loop
// nests, which outlineLoopNests (Target.cpp) moves out, but a graph of
// thousands of tiny tensors (a Sum of 20,000 inputs of 8 floats) lowers to
// straight-line code: one block of 60,000 instructions that took over 300 s.
//
// Two rewrites keep every function LLVM sees bounded:
//  - A graph function with many pointer arguments (one per input, output and
//    the arena) takes the runtime's argument array instead, and loads each
//    pointer in the block that uses it, just before its first use. Code cut
//    out of it then needs that one pointer, not hundreds of them.
//  - A long block outside loops is cut into runs of about kRunInstructions,
//    each moved into a function of its own. Cuts go where the fewest values
//    cross them.
//
// Both only apply past thresholds no model of ordinary size reaches, so the
// code of such models is unchanged byte for byte.
//
//===----------------------------------------------------------------------===//
#include "kiln/Target/Target.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/CodeExtractor.h"
#include "llvm/Transforms/Utils/Local.h"

using namespace llvm;

namespace {
/// Graph functions with at least this many pointer arguments take the
/// argument array instead.
constexpr unsigned kManyArguments = 256;
/// Blocks longer than this are cut into runs of about kRunInstructions.
constexpr size_t kLongBlock = 6000;
constexpr size_t kRunInstructions = 2000;

/// Replaces each extractvalue of a chain of insertvalues with the inserted
/// value: MLIR's LLVM lowering wraps every pointer argument in a memref
/// descriptor at the top of the function; without this the descriptors, not
/// the uses, would decide where an argument is first needed.
void forwardDescriptorFields(Function &f) {
  SmallVector<Instruction *> dead;
  for (BasicBlock &bb : f)
    for (Instruction &inst : bb)
      if (auto *ev = dyn_cast<ExtractValueInst>(&inst))
        if (Value *v = FindInsertedValue(ev->getAggregateOperand(),
                                         ev->getIndices())) {
          if (v->getType() != ev->getType())
            continue;
          ev->replaceAllUsesWith(v);
          dead.push_back(ev);
        }
  for (Instruction *inst : dead)
    if (inst->use_empty())
      RecursivelyDeleteTriviallyDeadInstructions(inst);
}

/// Whether `call` passes, as argument i, the pointer the entry function loads
/// from `argv[i]` (ModelDescriptor.cpp builds it so).
bool passesArgumentArray(CallInst *call, Value *argv) {
  for (auto [i, arg] : llvm::enumerate(call->args())) {
    auto *load = dyn_cast<LoadInst>(arg.get());
    if (!load)
      return false;
    auto *gep = dyn_cast<GetElementPtrInst>(load->getPointerOperand());
    if (!gep || gep->getPointerOperand() != argv || gep->getNumIndices() != 1)
      return false;
    auto *index = dyn_cast<ConstantInt>(gep->getOperand(1));
    if (!index || index->getZExtValue() != i)
      return false;
  }
  return true;
}

/// `graph(p0, ..., pn)` becomes `graph(argv)`: each use of pi reads argv[i]
/// in its block, before the block's first use (for a phi, at the end of the
/// incoming block).
Function *takeArgumentArray(Function *graph) {
  LLVMContext &ctx = graph->getContext();
  Type *ptr = PointerType::getUnqual(ctx);
  forwardDescriptorFields(*graph);
  auto *type = FunctionType::get(Type::getVoidTy(ctx), {ptr}, false);
  Function *nf =
      Function::Create(type, graph->getLinkage(), graph->getName() + ".argv",
                       graph->getParent());
  nf->setAttributes(AttributeList::get(ctx, graph->getAttributes().getFnAttrs(),
                                       AttributeSet(), {}));
  nf->splice(nf->end(), graph);
  Argument *argv = nf->getArg(0);
  argv->setName("argv");
  MDNode *invariant = MDNode::get(ctx, {});
  for (Argument &arg : graph->args()) {
    DenseMap<BasicBlock *, Instruction *> first;
    for (Use &use : arg.uses()) {
      auto *user = cast<Instruction>(use.getUser());
      Instruction *at = user;
      if (auto *phi = dyn_cast<PHINode>(user))
        at = phi->getIncomingBlock(use)->getTerminator();
      Instruction *&slot = first[at->getParent()];
      if (!slot || at->comesBefore(slot))
        slot = at;
    }
    DenseMap<BasicBlock *, Value *> loaded;
    for (auto [bb, at] : first) {
      IRBuilder<> b(at);
      Value *slot = b.CreateConstInBoundsGEP1_64(ptr, argv, arg.getArgNo());
      LoadInst *load = b.CreateLoad(ptr, slot, arg.getName());
      load->setMetadata(LLVMContext::MD_invariant_load, invariant);
      loaded[bb] = load;
    }
    while (!arg.use_empty()) {
      Use &use = *arg.use_begin();
      auto *user = cast<Instruction>(use.getUser());
      BasicBlock *bb = user->getParent();
      if (auto *phi = dyn_cast<PHINode>(user))
        bb = phi->getIncomingBlock(use);
      use.set(loaded[bb]);
    }
  }
  nf->takeName(graph);
  return nf;
}

/// Moves graphs of many arguments called from __kiln_entry to the argument
/// array form.
void passArgumentArrays(Module &module) {
  Function *entry = module.getFunction("__kiln_entry");
  if (!entry || entry->isDeclaration() || entry->arg_size() != 2)
    return;
  Value *argv = entry->getArg(1);
  SmallVector<CallInst *> calls;
  for (BasicBlock &bb : *entry)
    for (Instruction &inst : bb)
      if (auto *call = dyn_cast<CallInst>(&inst))
        if (Function *graph = call->getCalledFunction();
            graph && !graph->isDeclaration() && graph->hasOneUse() &&
            graph->arg_size() >= kManyArguments &&
            graph->getReturnType()->isVoidTy() &&
            passesArgumentArray(call, argv))
          calls.push_back(call);
  for (CallInst *call : calls) {
    Function *graph = call->getCalledFunction();
    Function *nf = takeArgumentArray(graph);
    CallInst::Create(nf, {argv}, "", call->getIterator());
    SmallVector<Value *> args(call->args());
    call->eraseFromParent();
    graph->eraseFromParent();
    for (Value *v : args)
      if (auto *inst = dyn_cast<Instruction>(v); inst && inst->use_empty())
        RecursivelyDeleteTriviallyDeadInstructions(inst);
  }
}

/// Cut positions in a block's `insts` (indices into it): runs of about
/// kRunInstructions, each cut where the fewest values of the block cross.
SmallVector<size_t> chooseCuts(ArrayRef<Instruction *> insts) {
  size_t n = insts.size();
  DenseMap<const Instruction *, size_t> index;
  for (auto [i, inst] : llvm::enumerate(insts))
    index[inst] = i;
  // live[p]: values defined before position p and used at or after it.
  std::vector<int64_t> delta(n + 2, 0);
  for (auto [i, inst] : llvm::enumerate(insts)) {
    size_t last = i;
    for (User *user : inst->users()) {
      auto it = index.find(cast<Instruction>(user));
      last = std::max(last, it == index.end() ? n : it->second);
    }
    if (last > i) {
      delta[i + 1] += 1;
      delta[last + 1] -= 1;
    }
  }
  std::vector<int64_t> live(n + 1, 0);
  int64_t running = 0;
  for (size_t p = 0; p <= n; ++p) {
    running += delta[p];
    live[p] = running;
  }
  SmallVector<size_t> cuts;
  size_t pos = 0;
  while (n - pos > kRunInstructions * 3 / 2) {
    size_t best = pos + kRunInstructions;
    for (size_t p = pos + kRunInstructions / 2;
         p <= pos + kRunInstructions * 3 / 2 && p < n; ++p)
      if (live[p] < live[best])
        best = p;
    cuts.push_back(best);
    pos = best;
  }
  return cuts;
}

/// Moves runs of a long block into functions of their own.
void outlineRuns(BasicBlock *bb, unsigned &counter) {
  SmallVector<Instruction *> insts;
  for (Instruction &inst : *bb)
    if (!isa<PHINode>(inst) && !inst.isTerminator())
      insts.push_back(&inst);
  // The allocas at the top of an entry block stay there; a run holding
  // another alloca is not moved (CodeExtractor refuses it).
  size_t start = 0;
  while (start < insts.size() && isa<AllocaInst>(insts[start]))
    ++start;
  if (insts.size() - start < kLongBlock)
    return;
  SmallVector<size_t> cuts = chooseCuts(ArrayRef(insts).drop_front(start));
  SmallVector<Instruction *> starts = {insts[start]};
  for (size_t c : cuts)
    starts.push_back(insts[start + c]);
  Instruction *terminator = bb->getTerminator();
  SmallVector<BasicBlock *> runs;
  BasicBlock *cur = bb;
  for (Instruction *s : starts) {
    cur = SplitBlock(cur, s);
    runs.push_back(cur);
  }
  SplitBlock(cur, terminator);
  // One cache for all the runs (it only describes blocks, which each
  // extraction leaves in place but for the one it moves).
  CodeExtractorAnalysisCache cache(*bb->getParent());
  for (BasicBlock *run : runs) {
    CodeExtractor extractor({run}, /*DT=*/nullptr, /*AggregateArgs=*/false,
                            nullptr, nullptr, nullptr, /*AllowVarArgs=*/false,
                            /*AllowAlloca=*/false, nullptr,
                            "run" + std::to_string(counter++));
    if (!extractor.isEligible())
      continue;
    if (Function *part = extractor.extractCodeRegion(cache)) {
      part->addFnAttr(Attribute::NoInline);
      part->addFnAttr(Attribute::NoUnwind);
    }
  }
}
} // namespace

void mlir::kiln::boundLongFunctions(Module &module) {
  passArgumentArrays(module);
  // Only straight-line code outside loops: a loop body cut into calls would
  // pay them every iteration.
  SmallVector<BasicBlock *> longBlocks;
  for (Function &f : module) {
    if (f.isDeclaration() || llvm::none_of(f, [](BasicBlock &bb) {
          return bb.size() >= kLongBlock;
        }))
      continue;
    DominatorTree dt(f);
    LoopInfo li(dt);
    for (BasicBlock &bb : f)
      if (bb.size() >= kLongBlock && !li.getLoopFor(&bb))
        longBlocks.push_back(&bb);
  }
  unsigned counter = 0;
  for (BasicBlock *bb : longBlocks)
    outlineRuns(bb, counter);
}
