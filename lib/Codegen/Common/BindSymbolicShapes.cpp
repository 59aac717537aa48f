//===- BindSymbolicShapes.cpp - run-time sizes for symbolic dims -*- C++ -*-===//
//
// A model compiled with a range for a symbolic dimension (docs/shapes.md)
// runs one graph at every size in range. After bufferization its entry
// function still has dynamically shaped memref arguments and results, which
// the bare-pointer calling convention cannot pass. This pass gives the
// function the form the runtime calls (runtime/src/model_abi.h):
//
//   inputs..., outputs..., dims
//
// where `dims` is a memref<Nxi64> holding each symbol's size (written by the
// runtime after it checked the range) followed by every output's shape
// (written here, read back by kiln_get_output_shape). A dynamically shaped
// input or output is a byte buffer (memref<Bxi8>, B its largest size) viewed
// at the run-time sizes. Each symbol's size is read once and passed through
// affine.min with its maximum: the runtime guarantees that bound, and the
// arena planner derives the largest size of every buffer from it
// (kiln/Codegen/Common/SymbolicBounds.h).
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/Common/Passes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "kiln/Codegen/Common/SymbolicBounds.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_BINDSYMBOLICSHAPESPASS
#include "kiln/Codegen/Common/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
int64_t elementBytes(MemRefType t) {
  return std::max<int64_t>(1, (t.getElementTypeBitWidth() + 7) / 8);
}


struct BindSymbolicShapesPass
    : mlir::kiln::impl::BindSymbolicShapesPassBase<BindSymbolicShapesPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func->hasAttr(mlir::kiln::kSymbolBoundsAttr) &&
          failed(bind(func)))
        return signalPassFailure();
  }

  LogicalResult bind(func::FuncOp func) {
    MLIRContext *ctx = func.getContext();
    auto bounds =
        func->getAttrOfType<DenseI64ArrayAttr>(mlir::kiln::kSymbolBoundsAttr);
    int64_t numSymbols = bounds.size() / 2;
    if (func.getBody().getBlocks().size() != 1)
      return func.emitError("symbolic shapes need a single-block function");
    Block &entry = func.front();
    auto ret = cast<func::ReturnOp>(entry.getTerminator());
    OpBuilder b(ctx);
    Location loc = func.getLoc();
    unsigned numInputs = func.getNumArguments();
    unsigned numOutputs = ret.getNumOperands();

    // The sizes of the outputs' shapes follow the symbols in `dims`.
    int64_t numDims = numSymbols;
    for (Value r : ret.getOperands())
      numDims += cast<MemRefType>(r.getType()).getRank();
    auto dimsType = MemRefType::get({numDims}, b.getI64Type());
    BlockArgument dims = entry.addArgument(dimsType, loc);

    b.setInsertionPointToStart(&entry);
    SmallVector<Value> symbols;
    for (int64_t s = 0; s < numSymbols; ++s) {
      Value at = arith::ConstantIndexOp::create(b, loc, s);
      Value raw = memref::LoadOp::create(b, loc, dims, at);
      raw = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
      AffineExpr s0 = b.getAffineSymbolExpr(0);
      auto map = AffineMap::get(0, 1, {s0, b.getAffineConstantExpr(bounds[2 * s + 1])}, ctx);
      symbols.push_back(affine::AffineMinOp::create(b, loc, map, raw));
    }
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);

    // Inputs: a dynamic one becomes bytes viewed at the run-time sizes.
    SmallVector<Type> newInputs;
    for (unsigned i = 0; i < numInputs; ++i) {
      BlockArgument arg = entry.getArgument(i);
      auto type = cast<MemRefType>(arg.getType());
      if (type.hasStaticShape()) {
        newInputs.push_back(type);
        continue;
      }
      auto axes = func.getArgAttrOfType<DenseI64ArrayAttr>(
          i, mlir::kiln::kSymbolsAttr);
      if (!axes || (int64_t)axes.size() != type.getRank())
        return func.emitError() << "input " << i << " of type " << type
                                << " has no symbol for each dynamic axis";
      int64_t bytes = elementBytes(type);
      SmallVector<Value> sizes;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (!type.isDynamicDim(d)) {
          bytes *= type.getDimSize(d);
          continue;
        }
        int64_t s = axes[d];
        if (s < 0 || s >= numSymbols)
          return func.emitError() << "input " << i << " axis " << d
                                  << " is dynamic but names no symbol";
        bytes *= bounds[2 * s + 1];
        sizes.push_back(symbols[s]);
      }
      auto rawType = MemRefType::get({bytes}, b.getI8Type());
      Value raw = entry.addArgument(rawType, arg.getLoc());
      Value view = memref::ViewOp::create(b, loc, type, raw, zero, sizes);
      arg.replaceAllUsesWith(view);
      newInputs.push_back(rawType);
    }

    // Outputs: written into output arguments, their shapes into `dims`.
    SmallVector<Type> outTypes;
    SmallVector<int64_t> outSymbols, outBounds;
    b.setInsertionPoint(ret);
    int64_t dimAt = numSymbols;
    for (unsigned o = 0; o < numOutputs; ++o) {
      Value r = ret.getOperand(o);
      auto type = cast<MemRefType>(r.getType());
      int64_t bytes = elementBytes(type);
      SmallVector<Value> sizes, allSizes;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        std::optional<int64_t> ub = mlir::kiln::largestDim(r, d);
        if (!ub)
          return ret.emitError() << "output " << o << " (" << type
                                 << "): dimension " << d
                                 << " has no upper bound";
        bytes *= *ub;
        outBounds.push_back(*ub);
        Value size = memref::DimOp::create(b, loc, r, d);
        allSizes.push_back(size);
        if (!type.isDynamicDim(d)) {
          outSymbols.push_back(-1);
          continue;
        }
        sizes.push_back(size);
        Value same = mlir::kiln::forwardedDim(r, d);
        auto at = llvm::find(symbols, same);
        outSymbols.push_back(same && at != symbols.end()
                                 ? at - symbols.begin()
                                 : -2);
      }
      Type argType = type.hasStaticShape()
                         ? Type(type)
                         : Type(MemRefType::get({bytes}, b.getI8Type()));
      Value out = entry.addArgument(argType, loc);
      outTypes.push_back(argType);
      Value target = type.hasStaticShape()
                         ? out
                         : Value(memref::ViewOp::create(b, loc, type, out, zero,
                                                        sizes));
      memref::CopyOp::create(b, loc, r, target);
      for (Value size : allSizes) {
        Value at = arith::ConstantIndexOp::create(b, loc, dimAt++);
        Value v = arith::IndexCastOp::create(b, loc, b.getI64Type(), size);
        memref::StoreOp::create(b, loc, v, dims, at);
      }
    }
    ret->setOperands({});

    // The new signature: inputs (bytes where dynamic), outputs, dims. The
    // old arguments are gone; argument attributes follow their inputs.
    SmallVector<DictionaryAttr> inputAttrs;
    for (unsigned i = 0; i < numInputs; ++i)
      inputAttrs.push_back(func.getArgAttrDict(i));
    SmallVector<DictionaryAttr> outputAttrs;
    for (unsigned o = 0; o < numOutputs; ++o)
      outputAttrs.push_back(func.getResultAttrDict(o));
    // Arguments now: old inputs, dims, raw inputs (dynamic ones), outputs.
    // Reorder into inputs, outputs, dims by replacing the static inputs'
    // uses with fresh arguments in order.
    SmallVector<Type> order;
    SmallVector<Location> locs;
    SmallVector<Value> finalArgs;
    unsigned rawNext = numInputs + 1;
    for (unsigned i = 0; i < numInputs; ++i) {
      BlockArgument oldArg = entry.getArgument(i);
      if (cast<MemRefType>(oldArg.getType()).hasStaticShape())
        finalArgs.push_back(oldArg);
      else
        finalArgs.push_back(entry.getArgument(rawNext++));
    }
    for (unsigned o = 0; o < numOutputs; ++o)
      finalArgs.push_back(entry.getArgument(rawNext + o));
    finalArgs.push_back(dims);
    for (Value v : finalArgs) {
      order.push_back(v.getType());
      locs.push_back(v.getLoc());
    }
    SmallVector<BlockArgument> fresh;
    for (auto [t, l] : llvm::zip(order, locs))
      fresh.push_back(entry.addArgument(t, l));
    for (auto [oldV, newV] : llvm::zip(finalArgs, fresh))
      oldV.replaceAllUsesWith(newV);
    entry.eraseArguments(0, entry.getNumArguments() - fresh.size());
    func.setType(FunctionType::get(ctx, order, {}));
    func.removeArgAttrsAttr();
    func.removeResAttrsAttr();
    for (unsigned i = 0; i < numInputs; ++i) {
      func.setArgAttrs(i, inputAttrs[i]);
      func.removeArgAttr(i, StringAttr::get(ctx, mlir::kiln::kSymbolsAttr));
    }
    for (unsigned o = 0; o < numOutputs; ++o)
      func.setArgAttrs(numInputs + o, outputAttrs[o]);
    func.setArgAttr(numInputs + numOutputs, mlir::kiln::kDimsArgAttr,
                    UnitAttr::get(ctx));
    func->setAttr(mlir::kiln::kOutputSymbolsAttr,
                  DenseI64ArrayAttr::get(ctx, outSymbols));
    func->setAttr(mlir::kiln::kOutputBoundsAttr,
                  DenseI64ArrayAttr::get(ctx, outBounds));
    return success();
  }
};
} // namespace
