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

  /// Reads each symbol's size from `dims`, bounded by its maximum.
  static SmallVector<Value> readSymbols(OpBuilder &b, Location loc,
                                        ArrayRef<int64_t> bounds, Value dims) {
    SmallVector<Value> symbols;
    for (size_t s = 0; s < bounds.size() / 2; ++s) {
      Value at = arith::ConstantIndexOp::create(b, loc, s);
      Value raw = memref::LoadOp::create(b, loc, dims, at);
      raw = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
      auto map = AffineMap::get(
          0, 1,
          {b.getAffineSymbolExpr(0), b.getAffineConstantExpr(bounds[2 * s + 1])},
          b.getContext());
      symbols.push_back(affine::AffineMinOp::create(b, loc, map, raw));
    }
    return symbols;
  }

  /// The argument an input of `type` arrives in: itself if static, else
  /// bytes at its largest size (`axes` names each dynamic axis's symbol).
  static FailureOr<Type> inputArgType(func::FuncOp func, unsigned i,
                                      MemRefType type, ArrayRef<int64_t> bounds) {
    if (type.hasStaticShape())
      return Type(type);
    auto axes = func.getArgAttrOfType<DenseI64ArrayAttr>(
        i, mlir::kiln::kSymbolsAttr);
    if (!axes || (int64_t)axes.size() != type.getRank())
      return func.emitError() << "input " << i << " of type " << type
                              << " has no symbol for each dynamic axis";
    int64_t bytes = elementBytes(type);
    for (int64_t d = 0; d < type.getRank(); ++d) {
      int64_t s = axes[d];
      if (type.isDynamicDim(d) && (s < 0 || 2 * s + 1 >= (int64_t)bounds.size()))
        return func.emitError() << "input " << i << " axis " << d
                                << " is dynamic but names no symbol";
      bytes *= type.isDynamicDim(d) ? bounds[2 * s + 1] : type.getDimSize(d);
    }
    return Type(MemRefType::get({bytes}, IntegerType::get(func.getContext(), 8)));
  }

  LogicalResult bind(func::FuncOp func) {
    MLIRContext *ctx = func.getContext();
    ArrayRef<int64_t> bounds =
        func->getAttrOfType<DenseI64ArrayAttr>(mlir::kiln::kSymbolBoundsAttr)
            .asArrayRef();
    int64_t numSymbols = bounds.size() / 2;
    if (func.getBody().getBlocks().size() != 1)
      return func.emitError("symbolic shapes need a single-block function");
    Block &entry = func.front();
    auto ret = cast<func::ReturnOp>(entry.getTerminator());
    unsigned numInputs = func.getNumArguments();
    unsigned numOutputs = ret.getNumOperands();
    Location loc = func.getLoc();
    OpBuilder b(ctx);

    // The new arguments, appended in their final order: inputs, outputs,
    // dims. The old inputs are erased at the end.
    SmallVector<Type> argTypes;
    for (unsigned i = 0; i < numInputs; ++i) {
      FailureOr<Type> t = inputArgType(
          func, i, cast<MemRefType>(func.getArgumentTypes()[i]), bounds);
      if (failed(t))
        return failure();
      argTypes.push_back(*t);
    }
    // A dynamic output's byte size needs the inputs bound first (below).
    int64_t numDims = numSymbols;
    for (Value r : ret.getOperands()) {
      auto type = cast<MemRefType>(r.getType());
      numDims += type.getRank();
      argTypes.push_back(type.hasStaticShape()
                             ? Type(type)
                             : Type(MemRefType::get({0}, b.getI8Type())));
    }
    argTypes.push_back(MemRefType::get({numDims}, b.getI64Type()));
    SmallVector<BlockArgument> args;
    for (Type t : argTypes)
      args.push_back(entry.addArgument(t, loc));
    BlockArgument dims = args.back();

    b.setInsertionPointToStart(&entry);
    SmallVector<Value> symbols = readSymbols(b, loc, bounds, dims);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    // Inputs: a dynamic one is its bytes viewed at the run-time sizes.
    for (unsigned i = 0; i < numInputs; ++i) {
      BlockArgument old = entry.getArgument(i);
      auto type = cast<MemRefType>(old.getType());
      if (type.hasStaticShape()) {
        old.replaceAllUsesWith(args[i]);
        continue;
      }
      auto axes = func.getArgAttrOfType<DenseI64ArrayAttr>(
          i, mlir::kiln::kSymbolsAttr);
      SmallVector<Value> sizes;
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.isDynamicDim(d))
          sizes.push_back(symbols[axes[d]]);
      old.replaceAllUsesWith(
          memref::ViewOp::create(b, loc, type, args[i], zero, sizes));
    }

    // Each output's largest size, now traceable to the symbols.
    SmallVector<int64_t> outSymbols, outBounds;
    for (auto [o, r] : llvm::enumerate(ret.getOperands())) {
      auto type = cast<MemRefType>(r.getType());
      int64_t bytes = elementBytes(type);
      for (int64_t d = 0; d < type.getRank(); ++d) {
        std::optional<int64_t> ub = mlir::kiln::largestDim(r, d);
        if (!ub)
          return ret.emitError() << "output " << o << " (" << type
                                 << "): dimension " << d
                                 << " has no upper bound";
        bytes *= *ub;
        outBounds.push_back(*ub);
      }
      if (!type.hasStaticShape()) {
        argTypes[numInputs + o] = MemRefType::get({bytes}, b.getI8Type());
        args[numInputs + o].setType(argTypes[numInputs + o]);
      }
    }

    // Outputs: written into their arguments, their shapes into `dims`.
    int64_t dimAt = numSymbols;
    for (unsigned o = 0; o < numOutputs; ++o) {
      auto type = cast<MemRefType>(ret.getOperand(o).getType());
      writeOutput(ret, ret.getOperand(o), args[numInputs + o]);
      b.setInsertionPoint(ret);
      for (int64_t d = 0; d < type.getRank(); ++d) {
        Value size = memref::DimOp::create(b, loc, ret.getOperand(o), d);
        Value same = mlir::kiln::forwardedDim(ret.getOperand(o), d);
        auto which = llvm::find(symbols, same);
        outSymbols.push_back(!type.isDynamicDim(d) ? -1
                             : same && which != symbols.end()
                                 ? which - symbols.begin()
                                 : -2);
        Value v = arith::IndexCastOp::create(b, loc, b.getI64Type(), size);
        Value at = arith::ConstantIndexOp::create(b, loc, dimAt++);
        memref::StoreOp::create(b, loc, v, dims, at);
      }
    }
    ret->setOperands({});

    // Argument attributes follow their inputs and outputs; dims is marked.
    SmallVector<DictionaryAttr> attrs;
    for (unsigned i = 0; i < numInputs; ++i)
      attrs.push_back(func.getArgAttrDict(i));
    for (unsigned o = 0; o < numOutputs; ++o)
      attrs.push_back(func.getResultAttrDict(o));
    entry.eraseArguments(0, numInputs);
    func.setType(FunctionType::get(ctx, argTypes, {}));
    func.removeArgAttrsAttr();
    func.removeResAttrsAttr();
    // All arguments' attributes at once (one setArgAttr per argument
    // rebuilds the array of all of them): the inputs' without their
    // symbols, the outputs', and the dims argument's mark.
    SmallVector<DictionaryAttr> argAttrs;
    for (auto [k, a] : llvm::enumerate(attrs)) {
      NamedAttrList list(a);
      if (k < numInputs)
        list.erase(StringAttr::get(ctx, mlir::kiln::kSymbolsAttr));
      argAttrs.push_back(list.getDictionary(ctx));
    }
    while (argAttrs.size() + 1 < argTypes.size())
      argAttrs.push_back(DictionaryAttr::get(ctx));
    argAttrs.push_back(DictionaryAttr::get(
        ctx, {NamedAttribute(StringAttr::get(ctx, mlir::kiln::kDimsArgAttr),
                             UnitAttr::get(ctx))}));
    func.setAllArgAttrs(argAttrs);
    func->setAttr(mlir::kiln::kOutputSymbolsAttr,
                  DenseI64ArrayAttr::get(ctx, outSymbols));
    func->setAttr(mlir::kiln::kOutputBoundsAttr,
                  DenseI64ArrayAttr::get(ctx, outBounds));
    return success();
  }

  /// Makes the buffer `r` that `ret` returns land in the output argument
  /// `out`. A buffer allocated in the function and returned once becomes
  /// the output itself (a view of its bytes at the allocated sizes), with
  /// no copy; anything else is copied into it at its run-time sizes.
  static void writeOutput(func::ReturnOp ret, Value r, Value out) {
    auto type = cast<MemRefType>(r.getType());
    Location loc = ret.getLoc();
    auto alloc = r.getDefiningOp<memref::AllocOp>();
    if (alloc && alloc->getBlock() == ret->getBlock() &&
        llvm::count(ret.getOperands(), r) == 1) {
      OpBuilder b(alloc);
      Value target = out;
      if (!type.hasStaticShape())
        target = memref::ViewOp::create(
            b, loc, type, out, arith::ConstantIndexOp::create(b, loc, 0),
            alloc.getDynamicSizes());
      alloc.getResult().replaceAllUsesWith(target);
      alloc.erase();
      return;
    }
    OpBuilder b(ret);
    Value target = out;
    if (!type.hasStaticShape()) {
      SmallVector<Value> sizes;
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.isDynamicDim(d))
          sizes.push_back(memref::DimOp::create(b, loc, r, d));
      target = memref::ViewOp::create(
          b, loc, type, out, arith::ConstantIndexOp::create(b, loc, 0), sizes);
    }
    memref::CopyOp::create(b, loc, r, target);
  }
};
} // namespace
