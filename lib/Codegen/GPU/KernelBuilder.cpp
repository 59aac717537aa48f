//===- KernelBuilder.cpp - index helpers of the GPU kernels -----*- C++ -*-===//
//
// See KernelBuilder.h.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::kiln::gpu_mapping {
bool isHostPure(Operation *op) {
  return op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
         !op->hasTrait<OpTrait::IsTerminator>() && !isa<gpu::LaunchOp>(op);
}

SmallVector<Value> clonePayload(OpBuilder &b, linalg::GenericOp op,
                                IRMapping &map) {
  Block &payload = op.getRegion().front();
  for (Operation &inner : payload.without_terminator()) {
    if (isa<linalg::IndexOp>(inner))
      continue;
    Operation *copy = b.clone(inner, map);
    if (auto fm = dyn_cast<arith::ArithFastMathInterface>(copy)) {
      // Casts (extf, truncf) carry the attribute only when set.
      arith::FastMathFlagsAttr flags = fm.getFastMathFlagsAttr();
      copy->setAttr(
          fm.getFastMathAttrName(),
          arith::FastMathFlagsAttr::get(
              copy->getContext(),
              (flags ? flags.getValue() : arith::FastMathFlags::none) |
                  arith::FastMathFlags::contract));
    }
  }
  SmallVector<Value> results;
  for (Value y : payload.getTerminator()->getOperands())
    results.push_back(map.lookupOrDefault(y));
  return results;
}

SmallVector<Value> reductionNest(
    OpBuilder &b, Location loc, ArrayRef<unsigned> sDims,
    ArrayRef<int64_t> ranges, int64_t slices, SmallVector<Value> &ivs,
    ValueRange carried,
    function_ref<SmallVector<Value>(OpBuilder &, Value, ValueRange)> kSlice,
    unsigned level) {
  bool inner = level == sDims.size();
  int64_t ub = inner ? slices : ranges[sDims[level]];
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value upper = arith::ConstantIndexOp::create(b, loc, ub);
  auto loop = scf::ForOp::create(
      b, loc, zero, upper, one, carried,
      [&](OpBuilder &lb, Location, Value iv, ValueRange iterArgs) {
        SmallVector<Value> next;
        if (inner) {
          next = kSlice(lb, iv, iterArgs);
        } else {
          ivs[sDims[level]] = iv;
          next = reductionNest(lb, loc, sDims, ranges, slices, ivs, iterArgs,
                               kSlice, level + 1);
        }
        scf::YieldOp::create(lb, loc, next);
      });
  return SmallVector<Value>(loop.getResults());
}

void delinearize(OpBuilder &b, Location loc, Value linear,
                 ArrayRef<unsigned> dims, ArrayRef<int64_t> ranges,
                 SmallVectorImpl<Value> &ivs) {
  for (unsigned d : llvm::reverse(dims)) {
    if (d == dims.front()) {
      ivs[d] = linear;
      break;
    }
    Value size = arith::ConstantIndexOp::create(b, loc, ranges[d]);
    ivs[d] = arith::RemUIOp::create(b, loc, linear, size);
    linear = arith::DivUIOp::create(b, loc, linear, size);
  }
}

SmallVector<Value> operandIndices(OpBuilder &b, Location loc,
                                  linalg::GenericOp op, OpOperand &operand,
                                  ArrayRef<Value> ivs) {
  SmallVector<Value> out;
  for (AffineExpr e : op.getMatchingIndexingMap(&operand).getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(e))
      out.push_back(ivs[d.getPosition()]);
    else
      out.push_back(affine::expandAffineExpr(b, loc, e, ivs, {}));
  }
  return out;
}

Value guardedLoad(OpBuilder &b, Location loc, Value cond, Value memref,
                  ValueRange indices) {
  if (!cond)
    return memref::LoadOp::create(b, loc, memref, indices);
  Type t = cast<MemRefType>(memref.getType()).getElementType();
  auto ifOp = scf::IfOp::create(
      b, loc, cond,
      [&](OpBuilder &tb, Location l) {
        scf::YieldOp::create(
            tb, l, Value(memref::LoadOp::create(tb, l, memref, indices)));
      },
      [&](OpBuilder &eb, Location l) {
        scf::YieldOp::create(eb, l,
                             Value(arith::ConstantOp::create(
                                 eb, l, cast<TypedAttr>(eb.getZeroAttr(t)))));
      });
  return ifOp.getResult(0);
}

Value andCond(OpBuilder &b, Location loc, Value x, Value y) {
  if (!x)
    return y;
  if (!y)
    return x;
  return arith::AndIOp::create(b, loc, x, y);
}

Value below(OpBuilder &b, Location loc, Value v, int64_t bound, int64_t total,
            int64_t tile) {
  if (total % tile == 0)
    return Value();
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, v,
                               arith::ConstantIndexOp::create(b, loc, bound));
}
gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, KernelNames &names,
                           int64_t grid, int64_t block, TypeRange workgroup) {
  int64_t index = names.count++;
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value g = arith::ConstantIndexOp::create(b, loc, grid);
  Value t = arith::ConstantIndexOp::create(b, loc, block);
  auto func = cast<func::FuncOp>(b.getInsertionBlock()->getParentOp());
  std::string name = func.getSymName().str() + "_k" + std::to_string(index);
  return gpu::LaunchOp::create(
      b, loc, g, one, one, t, one, one, nullptr, nullptr, {}, workgroup, {},
      nullptr, nullptr, nullptr,
      FlatSymbolRefAttr::get(b.getStringAttr(names.module)),
      FlatSymbolRefAttr::get(b.getStringAttr(name)));
}

gpu::LaunchOp createContractionLaunch(OpBuilder &b, Location loc,
                                      KernelNames &names,
                                      const ContractionTiles &tiles,
                                      int64_t threads, TypeRange shared,
                                      SmallVector<Value> &ivs, Value &m0,
                                      Value &n0) {
  gpu::LaunchOp launch =
      createLaunch(b, loc, names, tiles.grid, threads, shared);
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&body);
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value bid = launch.getBlockIds().x;
  Value tn = arith::RemUIOp::create(b, loc, bid, cst(tiles.tilesN));
  Value rest = arith::DivUIOp::create(b, loc, bid, cst(tiles.tilesN));
  Value tm = arith::RemUIOp::create(b, loc, rest, cst(tiles.tilesM));
  Value g = arith::DivUIOp::create(b, loc, rest, cst(tiles.tilesM));
  ivs.assign(tiles.ranges.size(), cst(0));
  if (!tiles.dims.g.empty())
    delinearize(b, loc, g, tiles.dims.g, tiles.ranges, ivs);
  m0 = arith::MulIOp::create(b, loc, tm, cst(tiles.TM));
  n0 = arith::MulIOp::create(b, loc, tn, cst(tiles.TN));
  return launch;
}
} // namespace mlir::kiln::gpu_mapping
