//===- LowerLoop.cpp - kiln.loop -> scf.for ---------------------*- C++ -*-===//
//
// A kiln.loop (ONNX Loop of a run-time trip count) becomes an scf.for over
// tensors, marked kGraphLoopAttr, whose body is the loop's already lowered
// body:
//
//   loop-carried values  iter_args; each iteration copies the value it
//                        computes into the iter_arg
//                        (bufferization.materialize_in_destination; empty
//                        tensor elimination makes its producer write there
//                        directly), so that bufferization keeps every
//                        loop-carried value in one buffer and nothing the
//                        body allocates outlives its iteration (the arena
//                        gives body buffers one slot for the whole loop);
//   scan outputs         iter_args of `scan_bound` rows, each iteration
//                        inserting its slice at row i; the result is the
//                        first `trip_count` rows.
//
// The function's inputs are marked read-only for bufferization, which then
// copies a loop-carried value that starts as a graph input (or a constant)
// instead of updating the caller's buffer.
//
// The trip count is clamped to [0, scan_bound] when there are scan outputs
// (the conversion derives the bound from the symbols' ranges, which the
// runtime checks, so the clamp only keeps a wrong bound memory-safe).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::kiln;

/// A loop-carried value is updated in place, and may start as a graph
/// input: bufferization must copy it rather than write the caller's buffer.
static void markInputsReadOnly(func::FuncOp func) {
  Builder b(func.getContext());
  SmallVector<Attribute> attrs;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    NamedAttrList list(func.getArgAttrDict(i));
    list.set(bufferization::BufferizationDialect::kWritableAttrName,
             b.getBoolAttr(false));
    attrs.push_back(list.getDictionary(func.getContext()));
  }
  func.setAllArgAttrs(attrs);
}

LogicalResult mlir::kiln::lowerLoop(OpBuilder &b, LoopOp loop) {
  Location loc = loop.getLoc();
  b.setInsertionPoint(loop);
  Value tripTensor = loop.getTripCount();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> at(typeOf(tripTensor).getRank(), zero);
  Value trips = tensor::ExtractOp::create(b, loc, tripTensor, at);
  trips = arith::IndexCastOp::create(b, loc, b.getIndexType(), trips);
  trips = arith::MaxSIOp::create(b, loc, trips, zero);

  Block &body = loop.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  unsigned n = loop.getNumCarried();
  markInputsReadOnly(loop->getParentOfType<func::FuncOp>());
  SmallVector<Value> inits(loop.getInits());
  if (loop.getNumScans() > 0) {
    int64_t bound = loop.getScanBound();
    trips = arith::MinSIOp::create(
        b, loc, trips, arith::ConstantIndexOp::create(b, loc, bound));
    for (Value slice : yield.getValues().drop_front(n)) {
      RankedTensorType t = typeOf(slice);
      SmallVector<int64_t> shape{bound};
      llvm::append_range(shape, t.getShape());
      inits.push_back(emptyTensor(b, loc, shape, t.getElementType()));
    }
  }

  auto forOp = scf::ForOp::create(
      b, loc, zero, trips, one, inits,
      [&](OpBuilder &nb, Location l, Value iv, ValueRange iterArgs) {
        Value i64 = arith::IndexCastOp::create(nb, l, nb.getI64Type(), iv);
        Value iteration = tensor::FromElementsOp::create(
            nb, l, RankedTensorType::get({}, nb.getI64Type()), i64);
        body.getArgument(0).replaceAllUsesWith(iteration);
        for (unsigned i = 0; i < n; ++i)
          body.getArgument(1 + i).replaceAllUsesWith(iterArgs[i]);
        Block *dst = nb.getInsertionBlock();
        dst->getOperations().splice(dst->end(), body.getOperations(),
                                    body.begin(), Block::iterator(yield));
        nb.setInsertionPointToEnd(dst);
        SmallVector<Value> next;
        for (unsigned i = 0; i < n; ++i) {
          Value v = yield.getValues()[i];
          next.push_back(
              v == iterArgs[i]
                  ? v
                  : bufferization::MaterializeInDestinationOp::create(
                        nb, l, v, iterArgs[i])
                        .getResult());
        }
        for (unsigned j = n; j < yield.getValues().size(); ++j) {
          Value slice = yield.getValues()[j];
          RankedTensorType t = typeOf(slice);
          SmallVector<OpFoldResult> offsets(t.getRank() + 1,
                                            nb.getIndexAttr(0));
          offsets[0] = iv;
          SmallVector<OpFoldResult> sizes{nb.getIndexAttr(1)};
          for (int64_t d : t.getShape())
            sizes.push_back(nb.getIndexAttr(d));
          SmallVector<OpFoldResult> strides(t.getRank() + 1,
                                            nb.getIndexAttr(1));
          next.push_back(tensor::InsertSliceOp::create(
              nb, l, slice, iterArgs[j], offsets, sizes, strides));
        }
        scf::YieldOp::create(nb, l, next);
      });
  forOp->setAttr(kGraphLoopAttr, b.getUnitAttr());

  b.setInsertionPointAfter(forOp);
  for (unsigned i = 0; i < n; ++i)
    loop.getResult(i).replaceAllUsesWith(forOp.getResult(i));
  for (unsigned j = n; j < loop.getNumResults(); ++j) {
    RankedTensorType t = typeOf(loop.getResult(j));
    SmallVector<OpFoldResult> offsets(t.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes{trips};
    for (int64_t d : t.getShape().drop_front())
      sizes.push_back(b.getIndexAttr(d));
    SmallVector<OpFoldResult> strides(t.getRank(), b.getIndexAttr(1));
    Value rows = tensor::ExtractSliceOp::create(b, loc, t, forOp.getResult(j),
                                                offsets, sizes, strides);
    loop.getResult(j).replaceAllUsesWith(rows);
  }
  loop->erase();
  return success();
}
