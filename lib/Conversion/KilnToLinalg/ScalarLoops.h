//===- ScalarLoops.h - scalar loops over tensors ----------------*- C++ -*-===//
//
// What the lowerings of scatters, scans and selection (LowerIndexing.cpp,
// LowerSelect.cpp) build their scalar scf.for loops with: loops carrying
// tensors as iter_args, index constants and reads, and one-element writes.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CONVERSION_KILNTOLINALG_SCALARLOOPS_H
#define KILN_LIB_CONVERSION_KILNTOLINALG_SCALARLOOPS_H

#include "Lowering.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::kiln::loops {
using Ivs = SmallVector<Value>;

inline Value cIdx(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// A tensor of `shape` filled with zero of `elt` (float, integer or bool).
inline Value zeroFilled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                        Type elt, ValueRange dyn = {}) {
  Value zero = arith::ConstantOp::create(b, loc, elt, b.getZeroAttr(elt));
  return linalg::FillOp::create(b, loc, zero,
                                emptyTensor(b, loc, shape, elt, dyn))
      .getResult(0);
}

/// A fresh copy of `v` that the scatter loops then overwrite in place.
inline Value copied(OpBuilder &b, Location loc, Value v) {
  RankedTensorType t = typeOf(v);
  Value init = emptyTensor(b, loc, t.getShape(), t.getElementType(),
                           dynamicDims(b, loc, v));
  return linalg::CopyOp::create(b, loc, v, init).getResult(0);
}

/// A nest of scf.for loops over `shape` carrying `iterArgs`; `dyn` sizes
/// its dynamic entries in order, as for emptyTensor.
inline SmallVector<Value>
loopNest(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
         ValueRange iterArgs,
         function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange,
                                         ValueRange)>
             body,
         ValueRange dyn = {}) {
  SmallVector<Value> lbs, ubs, steps;
  unsigned next = 0;
  for (int64_t d : shape) {
    lbs.push_back(cIdx(b, loc, 0));
    ubs.push_back(ShapedType::isDynamic(d) ? dyn[next++] : cIdx(b, loc, d));
    steps.push_back(cIdx(b, loc, 1));
  }
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, iterArgs,
      [&](OpBuilder &nb, Location nl, ValueRange ivs, ValueRange args) {
        SmallVector<Value> r = body(nb, nl, ivs, args);
        return scf::ValueVector(r.begin(), r.end());
      });
  return SmallVector<Value>(nest.results.begin(), nest.results.end());
}

/// One scf.for from `lb` to `ub` carrying `iterArgs`.
inline SmallVector<Value> forLoop(
    OpBuilder &b, Location loc, Value lb, Value ub, ValueRange iterArgs,
    function_ref<SmallVector<Value>(OpBuilder &, Location, Value, ValueRange)>
        body) {
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, cIdx(b, loc, 1), iterArgs,
      [&](OpBuilder &nb, Location nl, Value iv, ValueRange args) {
        scf::YieldOp::create(nb, nl, body(nb, nl, iv, args));
      });
  return SmallVector<Value>(loop.getResults().begin(), loop.getResults().end());
}

/// An index read from an integer tensor, as `index`.
inline Value readIndex(OpBuilder &b, Location loc, Value tensor,
                       ValueRange at) {
  Value v = tensor::ExtractOp::create(b, loc, tensor, at);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

inline Value minIdx(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MinSIOp::create(b, loc, x, y);
}

inline Value add(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::AddFOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, x, y);
}

/// `old` combined with `update` by a scatter's reduction.
inline Value combine(OpBuilder &b, Location loc, StringRef reduction, Value old,
                     Value update) {
  bool isFloat = isa<FloatType>(old.getType());
  if (reduction == "add")
    return add(b, loc, old, update);
  if (reduction == "mul")
    return isFloat ? (Value)arith::MulFOp::create(b, loc, old, update)
                   : (Value)arith::MulIOp::create(b, loc, old, update);
  if (reduction == "max")
    return isFloat ? (Value)arith::MaximumFOp::create(b, loc, old, update)
                   : (Value)arith::MaxSIOp::create(b, loc, old, update);
  if (reduction == "min")
    return isFloat ? (Value)arith::MinimumFOp::create(b, loc, old, update)
                   : (Value)arith::MinSIOp::create(b, loc, old, update);
  return update;
}

/// Writes `combine(dest[at], value)` to dest[at] when `ok`, else leaves it.
inline Value scatterOne(OpBuilder &b, Location loc, StringRef reduction,
                        Value dest, ValueRange at, Value value, Value ok) {
  Value old = tensor::ExtractOp::create(b, loc, dest, at);
  Value v = combine(b, loc, reduction, old, value);
  v = arith::SelectOp::create(b, loc, ok, v, old);
  return tensor::InsertOp::create(b, loc, v, dest, at);
}

} // namespace mlir::kiln::loops

#endif
