//===- WidenHalf.cpp - imported fp16/bf16 models computed in f32 -*- C++ -*-===//
//
// A model converted to fp16 by an export tool carries fp16 weights, fp16
// activations and a Cast at each end. Every node then computes in fp16,
// which a CPU without fp16 arithmetic runs on generic, unvectorized paths.
// Here every fp16 and bf16 tensor inside the function becomes f32 (see the
// pass description in Passes.td): the model then runs on the f32 kernels,
// with the model's own Casts to half types still rounding.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseSet.h"

#include <cstring>

namespace mlir::kiln {
#define GEN_PASS_DEF_WIDENHALFPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
bool isHalf(Type t) { return t.isF16() || t.isBF16(); }

Type elementOf(Type t) {
  if (auto shaped = dyn_cast<ShapedType>(t))
    return shaped.getElementType();
  return t;
}

/// `t` with an f32 element type when its element type is a half type.
Type widened(Type t) {
  auto shaped = dyn_cast<TensorType>(t);
  if (!shaped || !isHalf(shaped.getElementType()))
    return t;
  return shaped.clone(Float32Type::get(t.getContext()));
}

float halfToFloat(const llvm::fltSemantics &sem, uint16_t bits) {
  APFloat v(sem, APInt(16, bits));
  bool lost;
  v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
  return v.convertToFloat();
}

/// The f32 twin of half constant data, or nullopt for a form it cannot read.
std::optional<ElementsAttr> widenedConstant(ElementsAttr value) {
  auto type = cast<ShapedType>(value.getType());
  auto wide = cast<ShapedType>(widened(type));
  const llvm::fltSemantics &sem =
      cast<FloatType>(type.getElementType()).getFloatSemantics();
  std::vector<float> out;
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (dense.isSplat()) {
      APFloat v = dense.getSplatValue<APFloat>();
      bool lost;
      v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
      return ElementsAttr(DenseElementsAttr::get(wide, v.convertToFloat()));
    }
    for (const APFloat &f : dense.getValues<APFloat>()) {
      APFloat v = f;
      bool lost;
      v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
      out.push_back(v.convertToFloat());
    }
  } else if (auto res = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    if (!blob || !type.hasStaticShape() ||
        blob->getData().size() != (size_t)type.getNumElements() * 2)
      return std::nullopt;
    ArrayRef<char> data = blob->getData();
    out.resize(type.getNumElements());
    for (size_t i = 0; i < out.size(); ++i) {
      uint16_t bits;
      std::memcpy(&bits, data.data() + 2 * i, 2);
      out[i] = halfToFloat(sem, bits);
    }
  } else {
    return std::nullopt;
  }
  if (out.size() <= 64)
    return ElementsAttr(DenseElementsAttr::get(wide, ArrayRef<float>(out)));
  return ElementsAttr(DenseResourceElementsAttr::get(
      wide, "widened_half",
      HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<float>(out),
                                                     /*dataIsMutable=*/false)));
}

struct WidenHalfPass : mlir::kiln::impl::WidenHalfPassBase<WidenHalfPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    bool any = false, punned = false;
    func.walk([&](Operation *op) {
      for (Type t : op->getResultTypes())
        any |= isHalf(elementOf(t));
      if (auto bc = dyn_cast<BitCastOp>(op))
        punned |= isHalf(elementOf(bc.getInput().getType())) ||
                  isHalf(elementOf(bc.getType()));
    });
    for (Type t : func.getArgumentTypes())
      any |= isHalf(elementOf(t));
    if (!any || punned)
      return;

    OpBuilder b(func.getContext());
    Type f32 = b.getF32Type();
    llvm::DenseSet<Operation *> created;
    auto castTo = [&](Location loc, Value v, Type to) {
      auto type = cast<TensorType>(v.getType()).clone(to);
      auto c = CastOp::create(b, loc, type, v, TypeAttr::get(to));
      created.insert(c);
      return c.getResult();
    };

    // Half arguments are widened once, at entry.
    Block &entry = func.front();
    b.setInsertionPointToStart(&entry);
    for (BlockArgument arg : entry.getArguments())
      if (isHalf(elementOf(arg.getType()))) {
        Value wide = castTo(arg.getLoc(), arg, f32);
        arg.replaceAllUsesExcept(wide, wide.getDefiningOp());
      }

    WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
      if (op == func || created.contains(op) || isa<func::ReturnOp>(op))
        return WalkResult::advance();
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            arg.setType(widened(arg.getType()));
      if (auto cst = dyn_cast<ConstantOp>(op)) {
        if (!isHalf(elementOf(cst.getType())))
          return WalkResult::advance();
        std::optional<ElementsAttr> wide = widenedConstant(cst.getValue());
        if (!wide) {
          op->emitError("cannot widen this half constant to f32");
          return WalkResult::interrupt();
        }
        cst.setValueAttr(*wide);
        cst.getResult().setType(cast<RankedTensorType>(wide->getType()));
        return WalkResult::advance();
      }
      if (auto c = dyn_cast<CastOp>(op); c && isHalf(c.getTo())) {
        // The model's own rounding to a half type stays: the cast keeps its
        // half result and a cast back to f32 follows it.
        b.setInsertionPointAfter(op);
        Value back = castTo(op->getLoc(), c.getResult(), f32);
        c.getResult().replaceAllUsesExcept(back, back.getDefiningOp());
        return WalkResult::advance();
      }
      for (OpResult r : op->getResults())
        r.setType(widened(r.getType()));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();

    // Half results are narrowed back before each return: the signature
    // stays what the model declares.
    func.walk([&](func::ReturnOp ret) {
      b.setInsertionPoint(ret);
      for (auto [i, type] : llvm::enumerate(func.getResultTypes())) {
        Value v = ret.getOperand(i);
        if (isHalf(elementOf(type)) && v.getType() != type)
          ret.setOperand(i, castTo(ret.getLoc(), v, elementOf(type)));
      }
    });
  }
};
} // namespace
