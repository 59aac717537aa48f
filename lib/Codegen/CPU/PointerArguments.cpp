//===- PointerArguments.cpp - many memref arguments as pointers -*- C++ -*-===//
//
// convert-func-to-llvm's bare-pointer calling convention replaces each memref
// argument through the dialect conversion, which asks for the order of the
// block's operations once per argument after inserting before all of them:
// a walk of the whole entry block per argument. A graph of thousands of
// inputs spent most of its MLIR code generation there. This pass writes the
// same code (a pointer argument and a descriptor built from it) directly.
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/CPU/Passes.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_POINTERARGUMENTSPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// Whether convert-func-to-llvm's bare-pointer convention passes `type` as
/// a pointer whose descriptor fromStaticShape rebuilds.
bool isStaticMemRef(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape())
    return false;
  if (Attribute space = memref.getMemorySpace();
      space && !isa<IntegerAttr>(space))
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(memref.getStridesAndOffset(strides, offset)))
    return false;
  return !ShapedType::isDynamic(offset) &&
         llvm::none_of(strides, ShapedType::isDynamic);
}

struct PointerArgumentsPass
    : public kiln::impl::PointerArgumentsPassBase<PointerArgumentsPass> {
  using PointerArgumentsPassBase::PointerArgumentsPassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() ||
        llvm::count_if(func.getArgumentTypes(), isStaticMemRef) <
            (int64_t)minArguments)
      return;
    MLIRContext *ctx = &getContext();
    LLVMTypeConverter converter(ctx);
    Block &body = func.front();
    OpBuilder b = OpBuilder::atBlockBegin(&body);
    SmallVector<Type> inputs(func.getArgumentTypes());
    for (BlockArgument arg : body.getArguments()) {
      auto type = dyn_cast<MemRefType>(arg.getType());
      if (!type || !isStaticMemRef(type))
        continue;
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : arg.getUses())
        uses.push_back(&use);
      auto ptr = LLVM::LLVMPointerType::get(ctx, type.getMemorySpaceAsInt());
      arg.setType(ptr);
      inputs[arg.getArgNumber()] = ptr;
      Location loc = func.getLoc();
      Value desc =
          MemRefDescriptor::fromStaticShape(b, loc, converter, type, arg);
      Value memref =
          UnrealizedConversionCastOp::create(b, loc, type, desc).getResult(0);
      for (OpOperand *use : uses)
        use->set(memref);
    }
    func.setType(FunctionType::get(ctx, inputs, func.getResultTypes()));
  }
};
} // namespace
