//===- MarkInputsReadOnly.cpp - graph inputs are the caller's ---*- C++ -*-===//
#include "kiln/Codegen/Common/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_MARKINPUTSREADONLYPASS
#include "kiln/Codegen/Common/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
struct MarkInputsReadOnlyPass
    : mlir::kiln::impl::MarkInputsReadOnlyPassBase<MarkInputsReadOnlyPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
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
