//===- PackWeights.cpp - constant globals -> one weights argument -*- C++ -*-===//
//
// A kernel cannot read a host global: the weights must be in device memory.
// They are packed into one blob (64-byte aligned pieces) that the runtime
// copies to the device when a session is created, and every get_global
// becomes a view of a new trailing `weights` argument at the piece's offset,
// exactly like the arena's buffers.
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/GPU/Passes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_PACKWEIGHTSPASS
#include "kiln/Codegen/GPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
constexpr int64_t kAlignment = 64;

/// Appends the bytes of a global's initial value as the device will read
/// them: dense little-endian elements, i1 as one byte each.
LogicalResult appendBytes(memref::GlobalOp global, std::string &blob) {
  auto type = global.getType();
  Attribute init = global.getInitialValueAttr();
  int64_t elems = type.getNumElements();
  Type elt = type.getElementType();
  int64_t eltBytes = std::max<int64_t>(1, (elt.getIntOrFloatBitWidth() + 7) / 8);
  size_t start = blob.size();
  if (auto res = dyn_cast_or_null<DenseResourceElementsAttr>(init)) {
    AsmResourceBlob *data = res.getRawHandle().getBlob();
    if (!data)
      return global.emitError() << "weights '" << global.getSymName()
                                << "' have no data (elided resource)";
    ArrayRef<char> bytes = data->getData();
    blob.append(bytes.data(), bytes.size());
  } else if (auto dense = dyn_cast_or_null<DenseElementsAttr>(init)) {
    if (elt.isInteger(1)) {
      for (bool v : dense.getValues<bool>())
        blob.push_back(v ? 1 : 0);
    } else if (dense.isSplat()) {
      ArrayRef<char> one = dense.getRawData();
      for (int64_t i = 0; i < elems; ++i)
        blob.append(one.data(), one.size());
    } else {
      ArrayRef<char> bytes = dense.getRawData();
      blob.append(bytes.data(), bytes.size());
    }
  } else {
    return global.emitError() << "weights '" << global.getSymName()
                              << "' have no dense initial value; the GPU "
                                 "target needs constant weights";
  }
  if ((int64_t)(blob.size() - start) != elems * eltBytes)
    return global.emitError()
           << "weights '" << global.getSymName() << "' hold "
           << blob.size() - start << " bytes, expected " << elems * eltBytes;
  return success();
}

struct PackWeightsPass
    : mlir::kiln::impl::PackWeightsPassBase<PackWeightsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    std::string blob;
    llvm::StringMap<int64_t> offsetOf;
    SmallVector<memref::GlobalOp> globals;
    for (auto global : module.getOps<memref::GlobalOp>()) {
      if (!global.getConstant() || global.isExternal()) {
        global.emitError() << "global '" << global.getSymName()
                           << "' is not a constant; the GPU target keeps "
                              "only constant weights on the device";
        return signalPassFailure();
      }
      blob.resize(llvm::alignTo(blob.size(), kAlignment), '\0');
      offsetOf[global.getSymName()] = blob.size();
      if (failed(appendBytes(global, blob)))
        return signalPassFailure();
      globals.push_back(global);
    }
    // Never empty: a zero-byte global has no LLVM constant.
    int64_t total = std::max<int64_t>(kAlignment,
                                      llvm::alignTo(blob.size(), kAlignment));
    blob.resize(total, '\0');

    IRRewriter rewriter(ctx);
    auto blobType = MemRefType::get({total}, rewriter.getI8Type());
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isDeclaration())
        continue;
      if (failed(func.insertArgument(
              func.getNumArguments(), blobType,
              rewriter.getDictionaryAttr(rewriter.getNamedAttr(
                  mlir::kiln::kWeightsArgAttr, rewriter.getUnitAttr())),
              func.getLoc())))
        return signalPassFailure();
      Value weights = func.getArgument(func.getNumArguments() - 1);
      SmallVector<memref::GetGlobalOp> uses;
      func.walk([&](memref::GetGlobalOp op) { uses.push_back(op); });
      for (memref::GetGlobalOp op : uses) {
        auto it = offsetOf.find(op.getName());
        if (it == offsetOf.end()) {
          op.emitError() << "unknown global '" << op.getName() << "'";
          return signalPassFailure();
        }
        rewriter.setInsertionPoint(op);
        Value off =
            arith::ConstantIndexOp::create(rewriter, op.getLoc(), it->second);
        rewriter.replaceOpWithNewOp<memref::ViewOp>(op, op.getType(), weights,
                                                    off, ValueRange{});
      }
    }
    for (memref::GlobalOp g : globals)
      g.erase();

    // The blob itself, as a resource the program extraction reads back.
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    auto tensorType = RankedTensorType::get({total}, b.getI8Type());
    auto data = HeapAsmResourceBlob::allocateAndCopyInferAlign(
        ArrayRef<char>(blob.data(), blob.size()));
    auto attr = DenseResourceElementsAttr::get(tensorType, kWeightsGlobalName,
                                               std::move(data));
    memref::GlobalOp::create(b, module.getLoc(), mlir::kiln::kWeightsGlobal,
                             b.getStringAttr("private"), blobType, attr,
                             /*constant=*/true, b.getI64IntegerAttr(kAlignment));
  }

  static constexpr const char *kWeightsGlobalName = "kiln_weights";
};
} // namespace
