//===- MarkInputsReadOnly.cpp - graph inputs are the caller's ---*- C++ -*-===//
#include "kiln/Codegen/Common/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_MARKINPUTSREADONLYPASS
#include "kiln/Codegen/Common/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// Each ranked tensor argument becomes an identity-layout memref read
/// through a restrict, non-writable to_tensor: what one-shot bufferization
/// makes of a non-writable argument, without argument attributes.
void takeMemRefs(func::FuncOp func) {
  Block &body = func.front();
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  SmallVector<Type> inputs(func.getArgumentTypes());
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      continue;
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : arg.getUses())
      uses.push_back(&use);
    auto memref = MemRefType::get(type.getShape(), type.getElementType());
    arg.setType(memref);
    inputs[arg.getArgNumber()] = memref;
    Value tensor = bufferization::ToTensorOp::create(
        b, func.getLoc(), type, arg, /*restrict=*/true, /*writable=*/false);
    for (OpOperand *use : uses)
      use->set(tensor);
  }
  func.setType(
      FunctionType::get(func.getContext(), inputs, func.getResultTypes()));
}

struct MarkInputsReadOnlyPass
    : mlir::kiln::impl::MarkInputsReadOnlyPassBase<MarkInputsReadOnlyPass> {
  using MarkInputsReadOnlyPassBase::MarkInputsReadOnlyPassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (func.isPublic() && llvm::count_if(func.getArgumentTypes(),
                                          llvm::IsaPred<RankedTensorType>) >=
                               (int64_t)minMemrefArguments) {
      takeMemRefs(func);
      return;
    }
    Builder b(func.getContext());
    SmallVector<Attribute> attrs;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      NamedAttrList list(func.getArgAttrDict(i));
      list.set(bufferization::BufferizationDialect::kWritableAttrName,
               b.getBoolAttr(false));
      attrs.push_back(list.getDictionary(func.getContext()));
    }
    // All at once: one setArgAttr per argument rebuilds the whole array.
    func.setAllArgAttrs(attrs);
  }
};
} // namespace
