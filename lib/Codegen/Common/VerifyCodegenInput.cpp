//===- VerifyCodegenInput.cpp - what code generation may assume --*- C++ -*-===//
//
// The contract between --kiln-convert-kiln-to-linalg (and the linalg-level
// passes after it) and code generation, checked at the boundary. Every code
// generation pass may rely on it instead of re-checking, and a lowering that
// breaks it fails here, naming the op, instead of deep inside a kernel
// builder.
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/Common/Passes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_VERIFYCODEGENINPUTPASS
#include "kiln/Codegen/Common/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// The dialects whose ops code generation takes: linalg on tensors, with the
/// scalar, tensor and loop ops around it.
bool isCodegenDialect(StringRef ns) {
  return llvm::is_contained({"builtin", "func", "arith", "math", "linalg",
                             "tensor", "scf", "affine", "index", "complex",
                             "ub", "bufferization"},
                            ns);
}

/// A ranked tensor with static dimensions.
bool isStaticTensor(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && rt.hasStaticShape();
}

/// Element type of operand `i` of `op`, or null.
Type elementTypeOf(Operation *op, unsigned i) {
  if (i >= op->getNumOperands())
    return nullptr;
  return getElementTypeOrSelf(op->getOperand(i).getType());
}

/// Checks the products the kernels replace: a generic reading two tensors
/// into one static tensor of rank `rank` (or `rank` + 1 with `batched`: a
/// batch first), of the given element types.
LogicalResult checkProduct(Operation *op, StringRef marker, Type a, Type b,
                           Type acc, int64_t rank, bool batched) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic)
    return op->emitOpError() << "is marked " << marker
                             << " but is not a linalg.generic";
  if (generic.getNumDpsInputs() != 2 || generic.getNumDpsInits() != 1 ||
      !generic.hasPureTensorSemantics())
    return op->emitOpError() << "is marked " << marker
                             << " but does not read two tensors into one";
  auto init = dyn_cast<RankedTensorType>(generic.getDpsInits()[0].getType());
  // The rows (the first dimension) may be of run-time count: a symbolic
  // batch or sequence (docs/shapes.md), which the kernels split at run time.
  if (!init ||
      !(init.getRank() == rank || (batched && init.getRank() == rank + 1)) ||
      !(init.hasStaticShape() ||
        (init.isDynamicDim(0) && init.getNumDynamicDims() == 1)))
    return op->emitOpError()
           << "is marked " << marker << " but its result "
           << generic.getDpsInits()[0].getType() << " is not a tensor of rank "
           << rank << (batched ? " (or one more, a batch first)" : "")
           << ", static but for its first dimension";
  if (elementTypeOf(op, 0) != a || elementTypeOf(op, 1) != b ||
      init.getElementType() != acc)
    return op->emitOpError()
           << "is marked " << marker << " but computes "
           << elementTypeOf(op, 0) << " x " << elementTypeOf(op, 1) << " -> "
           << init.getElementType() << ", not " << a << " x " << b << " -> "
           << acc;
  return success();
}

/// What each contract attribute promises about the op it is on.
LogicalResult checkMarkers(Operation *op) {
  MLIRContext *ctx = op->getContext();
  Type i8 = IntegerType::get(ctx, 8), i32 = IntegerType::get(ctx, 32);
  Type bf16 = BFloat16Type::get(ctx), f32 = Float32Type::get(ctx);
  if (op->hasAttr(kInt8MatmulAttr) &&
      failed(checkProduct(op, kInt8MatmulAttr, i8, i8, i32, 3, true)))
    return failure();
  if (op->hasAttr(kBf16MatmulAttr) &&
      failed(checkProduct(op, kBf16MatmulAttr, bf16, bf16, f32, 3, true)))
    return failure();
  if (op->hasAttr(kInt8DepthwiseAttr) &&
      failed(checkProduct(op, kInt8DepthwiseAttr, i8, i8, i32, 4, false)))
    return failure();
  if (op->hasAttr(kInt8EpilogueAttr) && !isa<linalg::GenericOp>(op))
    return op->emitOpError() << "is marked " << kInt8EpilogueAttr
                             << " but is not a linalg.generic";
  if (op->hasAttr(kRequantAttr) && !isa<math::RoundEvenOp>(op))
    return op->emitOpError() << "is marked " << kRequantAttr
                             << " but is not a math.roundeven";
  if (op->hasAttr(kUnreadPaddingAttr) && !isa<linalg::FillOp>(op))
    return op->emitOpError() << "is marked " << kUnreadPaddingAttr
                             << " but is not a linalg.fill";
  return success();
}

struct VerifyCodegenInputPass
    : mlir::kiln::impl::VerifyCodegenInputPassBase<VerifyCodegenInputPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool ok = true;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      // The arena is planned for these sizes: every argument and result of
      // an entry function is a static tensor.
      for (Type t : llvm::concat<const Type>(func.getArgumentTypes(),
                                             func.getResultTypes()))
        if (func.isPublic() && !isStaticTensor(t) &&
            !(func->hasAttr(mlir::kiln::kSymbolBoundsAttr) &&
              isa<RankedTensorType>(t))) {
          func.emitOpError() << "takes or returns " << t
                             << ", not a tensor of static shape";
          ok = false;
        }
    }
    module.walk([&](Operation *op) {
      StringRef ns = op->getName().getDialectNamespace();
      if (!isCodegenDialect(ns)) {
        op->emitOpError() << "is left for code generation, which takes "
                             "linalg on tensors and the ops around it";
        ok = false;
        return WalkResult::advance();
      }
      if (failed(checkMarkers(op)))
        ok = false;
      return WalkResult::advance();
    });
    if (!ok)
      signalPassFailure();
  }
};
} // namespace
