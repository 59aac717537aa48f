//===- LowerShapeOps.cpp - kiln.guard, kiln.expand, sized ops ---*- C++ -*-===//
//
// kiln.expand is a broadcasting copy; the sized ops (shapes the graph
// computes) take their run-time sizes from their index operands. A guard becomes: reduce the condition to one i1 (all elements true), and if
// it is false, call `__kiln_guard_failed(i32)` with the message attached to
// the call. The call is a placeholder that survives bufferization;
// --kiln-arena-allocation numbers the guards of the module, replaces each
// call with a store of (index + 1) into the status word at the start of the
// arena and records the messages for the model descriptor (docs/ops.md,
// "Shape arguments given as graph inputs").
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::kiln;

LogicalResult mlir::kiln::lowerGuard(OpBuilder &b, GuardOp op) {
  Location loc = op.getLoc();
  auto module = op->getParentOfType<ModuleOp>();
  auto callee = module.lookupSymbol<func::FuncOp>(kGuardFailedFn);
  if (!callee) {
    OpBuilder mb(module.getBodyRegion());
    callee = func::FuncOp::create(
        mb, module.getLoc(), kGuardFailedFn,
        mb.getFunctionType({mb.getI32Type()}, {}));
    callee.setPrivate();
  }
  Value cond = op.getCondition();
  RankedTensorType type = typeOf(cond);
  if (type.getRank() > 0) {
    // all(cond): an and-reduction over every dimension into a scalar.
    Value yes = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
    Value init =
        linalg::FillOp::create(b, loc, ValueRange{yes},
                               ValueRange{emptyTensor(b, loc, {}, b.getI1Type())})
            .getResult(0);
    SmallVector<AffineMap> maps = {
        b.getMultiDimIdentityMap(type.getRank()),
        AffineMap::get(type.getRank(), 0, {}, b.getContext())};
    SmallVector<utils::IteratorType> iters(type.getRank(),
                                           utils::IteratorType::reduction);
    cond = linalg::GenericOp::create(
               b, loc, init.getType(), cond, init, maps, iters,
               [](OpBuilder &nb, Location nl, ValueRange a) {
                 linalg::YieldOp::create(
                     nb, nl, Value(arith::AndIOp::create(nb, nl, a[0], a[1])));
               })
               .getResult(0);
  }
  Value ok = tensor::ExtractOp::create(b, loc, cond, ValueRange{});
  Value failedCond = arith::XOrIOp::create(
      b, loc, ok, arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
  auto ifOp = scf::IfOp::create(b, loc, failedCond, /*withElse=*/false);
  OpBuilder tb = ifOp.getThenBodyBuilder();
  // The index is assigned by the arena pass; 0 until then.
  Value idx = arith::ConstantOp::create(tb, loc, tb.getI32IntegerAttr(0));
  auto call = func::CallOp::create(tb, loc, callee, ValueRange{idx});
  call->setAttr(kGuardMessageAttr, op.getMessageAttr());
  return success();
}

/// A sized_slice with a negative stride: a generic over the result that
/// reads `offset + i * stride` along every dimension (tensor.extract_slice
/// takes positive strides only).
static Value reversedSlice(OpBuilder &b, Location loc, SizedSliceOp s) {
  RankedTensorType out = s.getType();
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < out.getRank(); ++d)
    if (out.isDynamicDim(d))
      dyn.push_back(s.getSizes()[d]);
  return mappedGeneric(
      b, loc, out.getShape(), out.getElementType(), {}, {},
      [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
        SmallVector<Value> at;
        for (int64_t d = 0; d < out.getRank(); ++d) {
          Value i = linalg::IndexOp::create(nb, nl, d);
          Value step = arith::MulIOp::create(
              nb, nl, i,
              arith::ConstantIndexOp::create(nb, nl, s.getStrides()[d]));
          at.push_back(arith::AddIOp::create(nb, nl, s.getOffsets()[d], step));
        }
        return tensor::ExtractOp::create(nb, nl, s.getInput(), at);
      },
      dyn);
}

FailureOr<Value> mlir::kiln::lowerShapeOps(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  if (auto s = dyn_cast<ShapeOfOp>(op)) {
    RankedTensorType in = s.getInput().getType();
    SmallVector<Value> dims;
    for (int64_t d = s.getStart(), end = s.getEnd(); d < end; ++d)
      dims.push_back(
          in.isDynamicDim(d)
              ? Value(arith::IndexCastOp::create(
                    b, loc, b.getI64Type(),
                    tensor::DimOp::create(b, loc, s.getInput(), d)))
              : Value(arith::ConstantOp::create(
                    b, loc, b.getI64IntegerAttr(in.getDimSize(d)))));
    return Value(tensor::FromElementsOp::create(b, loc, s.getType(), dims));
  }
  if (auto r = dyn_cast<SizedReshapeOp>(op))
    return reshaped(b, loc, r.getInput(), r.getType().getShape(),
                    r.getSizes());
  if (auto e = dyn_cast<SizedExpandOp>(op)) {
    RankedTensorType type = e.getType();
    return broadcastGeneric(
        b, loc, type.getShape(), type.getElementType(), e.getInput(),
        [](OpBuilder &, Location, ValueRange a) { return a[0]; }, e.getSizes());
  }
  if (auto s = dyn_cast<SizedSliceOp>(op)) {
    RankedTensorType out = s.getType();
    if (llvm::any_of(s.getStrides(), [](int64_t k) { return k < 0; }))
      return reversedSlice(b, loc, s);
    // A piece with no elements (an empty last part of a Split beside
    // run-time sizes) may start at the end of its input, an offset
    // tensor.extract_slice rejects; it reads nothing.
    if (llvm::is_contained(out.getShape(), 0)) {
      SmallVector<Value> dynamic;
      for (int64_t d = 0; d < out.getRank(); ++d)
        if (out.isDynamicDim(d))
          dynamic.push_back(s.getSizes()[d]);
      return Value(tensor::EmptyOp::create(b, loc, out.getShape(),
                                           out.getElementType(), dynamic));
    }
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (int64_t d = 0; d < out.getRank(); ++d) {
      offsets.push_back(getAsOpFoldResult(s.getOffsets()[d]));
      sizes.push_back(out.isDynamicDim(d)
                          ? OpFoldResult(s.getSizes()[d])
                          : OpFoldResult(b.getIndexAttr(out.getDimSize(d))));
      strides.push_back(b.getIndexAttr(s.getStrides()[d]));
    }
    return Value(tensor::ExtractSliceOp::create(b, loc, out, s.getInput(),
                                                offsets, sizes, strides));
  }
  if (auto e = dyn_cast<ExpandOp>(op)) {
    RankedTensorType type = e.getType();
    return broadcastGeneric(b, e.getLoc(), type.getShape(),
                            type.getElementType(), e.getInput(),
                            [](OpBuilder &, Location, ValueRange a) {
                              return a[0];
                            });
  }
  return Value();
}
