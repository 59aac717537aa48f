//===- LowerLoop.cpp - kiln.loop -> scf.for ---------------------*- C++ -*-===//
//
// A kiln.loop (ONNX Loop of a run-time trip count) becomes an scf.for over
// tensors (an scf.while when the body may end the loop, `early_exit`),
// marked kGraphLoopAttr, whose body is the loop's already lowered body:
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
//                        first rows, one per iteration run. A slice of
//                        run-time shape (a symbolic batch) has its sizes
//                        computed before the loop, traced back through
//                        the body to values outside it: a loop-carried
//                        value has the shape of its init, as every
//                        iteration writes its new value over it.
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
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// The run-time sizes of the scan slices of a kiln.loop, computed before the
/// loop (the builder's insertion point) from what its body computes them
/// from; null where a size depends on what an iteration computes.
class HoistedSizes {
public:
  HoistedSizes(OpBuilder &b, Location loc, LoopOp loop)
      : b(b), loc(loc), loop(loop) {}

  /// Dimension `d` of the tensor `t` of the body.
  Value dim(Value t, int64_t d) {
    auto type = cast<RankedTensorType>(t.getType());
    if (!type.isDynamicDim(d))
      return arith::ConstantIndexOp::create(b, loc, type.getDimSize(d));
    if (outside(t))
      return tensor::DimOp::create(b, loc, t, d);
    if (auto arg = dyn_cast<BlockArgument>(t)) {
      unsigned i = arg.getArgNumber();
      if (arg.getOwner() == &loop.getBody().front() && i >= 1 &&
          i - 1 < loop.getNumCarried())
        return dim(loop.getInits()[i - 1], d);
      return {};
    }
    Deeper deeper(depth);
    if (depth > kMaxDepth)
      return {};
    auto result = cast<OpResult>(t);
    Operation *def = result.getOwner();
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(def))
      if (dps.hasPureTensorSemantics())
        return dim(dps.getDpsInits()[result.getResultNumber()], d);
    if (auto empty = dyn_cast<tensor::EmptyOp>(def))
      return size(empty.getMixedSizes()[d]);
    // An inner kiln.loop, lowered first, keeps each carried tensor's size
    // (LoopFinish.cpp refuses one that changes it), its scan buffers too:
    // the size of its init.
    // So does any scf.for that yields its iter_arg updated in place
    // (a CumSum's loop inserting into its destination).
    if (auto inner = dyn_cast<scf::ForOp>(def);
        inner && !def->hasAttr(kGraphLoopAttr) &&
        writesInto(inner.getYieldedValues()[result.getResultNumber()],
                   inner.getRegionIterArgs()[result.getResultNumber()]))
      return dim(inner.getInitArgs()[result.getResultNumber()], d);
    if (def->hasAttr(kGraphLoopAttr)) {
      unsigned i = result.getResultNumber();
      if (auto inner = dyn_cast<scf::ForOp>(def))
        return dim(inner.getInitArgs()[i], d);
      if (auto inner = dyn_cast<scf::WhileOp>(def);
          inner && i < inner.getInits().size() &&
          inner.getInits()[i].getType() == t.getType())
        return dim(inner.getInits()[i], d);
    }
    if (isa<ReifyRankedShapedTypeOpInterface>(def)) {
      OpBuilder inner(def);
      ReifiedRankedShapedTypeDims shapes;
      if (succeeded(reifyResultShapes(inner, def, shapes)))
        return size(shapes[result.getResultNumber()][d]);
    }
    return {};
  }

private:
  /// Whether `v` is `dest` with elements written into it: reached from
  /// `dest` through the destinations of the ops that compute it.
  static bool writesInto(Value v, Value dest) {
    for (int hops = 0; hops < kMaxDepth; ++hops) {
      if (v == dest)
        return true;
      auto r = dyn_cast<OpResult>(v);
      if (!r)
        return false;
      Operation *op = r.getOwner();
      if (auto insert = dyn_cast<tensor::InsertOp>(op))
        v = insert.getDest();
      else if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
        v = dps.getDpsInits()[r.getResultNumber()];
      else if (auto loop = dyn_cast<scf::ForOp>(op);
               loop &&
               writesInto(loop.getYieldedValues()[r.getResultNumber()],
                          loop.getRegionIterArgs()[r.getResultNumber()]))
        v = loop.getInitArgs()[r.getResultNumber()];
      else
        return false;
    }
    return false;
  }
  bool outside(Value v) {
    return !loop.getBody().isAncestor(v.getParentRegion());
  }
  Value size(OpFoldResult s) {
    if (auto attr = dyn_cast<Attribute>(s))
      return arith::ConstantIndexOp::create(b, loc,
                                            cast<IntegerAttr>(attr).getInt());
    return scalar(cast<Value>(s));
  }
  /// An index (or integer) scalar of the body, recomputed before the loop.
  Value scalar(Value v) {
    if (outside(v))
      return v;
    if (Value h = done.lookup(v))
      return h;
    Operation *def = v.getDefiningOp();
    if (!def)
      return {};
    Deeper deeper(depth);
    if (depth > kMaxDepth)
      return {};
    if (auto dimOp = dyn_cast<tensor::DimOp>(def)) {
      std::optional<int64_t> c = dimOp.getConstantIndex();
      return c ? dim(dimOp.getSource(), *c) : Value();
    }
    // A size the body computed as a one-element tensor (a trip count from
    // kiln.shape_of, reshaped to rank 0): its element.
    if (auto extract = dyn_cast<tensor::ExtractOp>(def)) {
      Value src = extract.getTensor();
      for (int hops = 0; hops < 8; ++hops) {
        auto type = cast<RankedTensorType>(src.getType());
        if (!type.hasStaticShape() || type.getNumElements() != 1)
          return {};
        Operation *from = src.getDefiningOp();
        if (auto elements = dyn_cast_or_null<tensor::FromElementsOp>(from)) {
          Value h = scalar(elements.getElements()[0]);
          if (h)
            done[v] = h;
          return h;
        }
        if (!isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
                from))
          return {};
        src = from->getOperand(0);
      }
      return {};
    }
    bool arith =
        isa<arith::ArithDialect>(def->getDialect()) ||
        isa<affine::AffineApplyOp, affine::AffineMinOp, affine::AffineMaxOp>(
            def);
    if (!arith || def->getNumRegions() != 0 || def->getNumResults() != 1 ||
        !isPure(def))
      return {};
    IRMapping map;
    for (Value o : def->getOperands()) {
      Value h = scalar(o);
      if (!h)
        return {};
      map.map(o, h);
    }
    Value h = b.clone(*def, map)->getResult(0);
    done[v] = h;
    return h;
  }

  static constexpr int kMaxDepth = 64;
  struct Deeper {
    int &d;
    explicit Deeper(int &d) : d(d) { ++d; }
    ~Deeper() { --d; }
  };
  OpBuilder &b;
  Location loc;
  LoopOp loop;
  int depth = 0;
  DenseMap<Value, Value> done;
};
} // namespace

/// Whether an op that computes `v` in the loop body `body` reads `state`
/// other than as an elementwise op indexing it like its result. Later passes
/// fuse such ops and let tensor.empty elimination have them write into
/// `state`; an op that reads it otherwise (h's matmul in h' = tanh(x + h R),
/// or one that broadcasts another operand) would then overwrite what it
/// still reads, which bufferization refuses.
static bool readsWhileComputing(Value v, Value state, Region &body) {
  SmallVector<Operation *> work;
  DenseSet<Operation *> seen;
  auto push = [&](Value x) {
    Operation *def = x.getDefiningOp();
    if (def && body.isAncestor(def->getParentRegion()) &&
        seen.insert(def).second)
      work.push_back(def);
  };
  push(v);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    auto g = dyn_cast<linalg::GenericOp>(op);
    bool elementwise = g && g.getNumReductionLoops() == 0 &&
                       llvm::all_of(g.getIndexingMapsArray(),
                                    [](AffineMap m) { return m.isIdentity(); });
    bool reads = false;
    op->walk([&](Operation *inner) {
      for (Value o : inner->getOperands()) {
        if (o == state)
          reads = true;
        else if (Operation *def = o.getDefiningOp();
                 def && !op->isAncestor(def))
          push(o);
      }
    });
    if (reads && !elementwise)
      return true;
  }
  return false;
}

/// Moves the body of `loop` to the end of the builder's block as iteration
/// `iv`, with `state` the loop-carried values then the scan buffers; returns
/// what the next iteration gets (and, with early_exit, sets `cond` to the
/// condition the body computed, an i1).
static SmallVector<Value> spliceBody(OpBuilder &nb, Location l, LoopOp loop,
                                     Value iv, ValueRange state, Value *cond,
                                     ArrayRef<SmallVector<Value>> scanDyn) {
  Block &body = loop.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  unsigned n = loop.getNumCarried();
  Value i64 = arith::IndexCastOp::create(nb, l, nb.getI64Type(), iv);
  Value iteration = tensor::FromElementsOp::create(
      nb, l, RankedTensorType::get({}, nb.getI64Type()), i64);
  body.getArgument(0).replaceAllUsesWith(iteration);
  for (unsigned i = 0; i < n; ++i)
    body.getArgument(1 + i).replaceAllUsesWith(state[i]);
  Block *dst = nb.getInsertionBlock();
  dst->getOperations().splice(dst->end(), body.getOperations(), body.begin(),
                              Block::iterator(yield));
  nb.setInsertionPointToEnd(dst);
  ValueRange values = loop.getYieldedResults();
  if (loop.getEarlyExit())
    *cond = tensor::ExtractOp::create(nb, l, yield.getValues()[0], {});
  SmallVector<Value> next;
  for (unsigned i = 0; i < n; ++i) {
    Value v = values[i];
    if (v == state[i])
      next.push_back(v);
    else if (readsWhileComputing(v, state[i], *dst->getParent()))
      // Computed into a buffer of its own (an allocation tensor.empty
      // elimination does not look through), then copied over the state.
      next.push_back(bufferization::MaterializeInDestinationOp::create(
                         nb, l,
                         bufferization::AllocTensorOp::create(nb, l, typeOf(v),
                                                              ValueRange(), v),
                         state[i])
                         .getResult());
    else
      next.push_back(
          bufferization::MaterializeInDestinationOp::create(nb, l, v, state[i])
              .getResult());
  }
  for (unsigned j = n; j < values.size(); ++j) {
    Value slice = values[j];
    RankedTensorType t = typeOf(slice);
    SmallVector<OpFoldResult> offsets(t.getRank() + 1, nb.getIndexAttr(0));
    offsets[0] = iv;
    SmallVector<OpFoldResult> sizes{nb.getIndexAttr(1)};
    unsigned k = 0;
    for (int64_t d : t.getShape())
      sizes.push_back(ShapedType::isDynamic(d)
                          ? OpFoldResult(scanDyn[j - n][k++])
                          : nb.getIndexAttr(d));
    SmallVector<OpFoldResult> strides(t.getRank() + 1, nb.getIndexAttr(1));
    next.push_back(tensor::InsertSliceOp::create(nb, l, slice, state[j],
                                                 offsets, sizes, strides));
  }
  return next;
}

/// An early-exit loop: an scf.while whose state is the loop's state, then
/// the iteration number and the condition (the tensors first: one-shot
/// bufferization matches the condition's tensors to the before block's
/// arguments by position, and canonicalization drops the condition, which
/// the body does not read). It runs while i < trips and the last condition
/// is true; returns the number of iterations run, then the final state.
static SmallVector<Value> emitWhile(OpBuilder &b, Location loc, LoopOp loop,
                                    Value trips, ValueRange inits,
                                    ArrayRef<SmallVector<Value>> scanDyn) {
  unsigned n = inits.size();
  SmallVector<Value> whileInits(inits);
  whileInits.push_back(arith::ConstantIndexOp::create(b, loc, 0));
  whileInits.push_back(arith::ConstantIntOp::create(b, loc, 1, 1));
  SmallVector<Type> types;
  for (Value v : whileInits)
    types.push_back(v.getType());
  SmallVector<Location> locs(types.size(), loc);
  auto whileOp = scf::WhileOp::create(b, loc, types, whileInits);
  Block *before = b.createBlock(&whileOp.getBefore(), {}, types, locs);
  Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                     before->getArgument(n), trips);
  more = arith::AndIOp::create(b, loc, more, before->getArgument(n + 1));
  scf::ConditionOp::create(b, loc, more, before->getArguments());
  Block *after = b.createBlock(&whileOp.getAfter(), {}, types, locs);
  Value iv = after->getArgument(n), cond;
  SmallVector<Value> next = spliceBody(
      b, loc, loop, iv, after->getArguments().take_front(n), &cond, scanDyn);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  next.push_back(arith::AddIOp::create(b, loc, iv, one));
  next.push_back(cond);
  scf::YieldOp::create(b, loc, next);
  whileOp->setAttr(kGraphLoopAttr, b.getUnitAttr());
  b.setInsertionPointAfter(whileOp);
  SmallVector<Value> results{whileOp.getResult(n)};
  llvm::append_range(results, whileOp.getResults().take_front(n));
  return results;
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

  unsigned n = loop.getNumCarried();
  SmallVector<Value> inits(loop.getInits());
  // The run-time sizes of each scan slice, in order.
  SmallVector<SmallVector<Value>> scanDyn;
  if (loop.getNumScans() > 0) {
    int64_t bound = loop.getScanBound();
    trips = arith::MinSIOp::create(
        b, loc, trips, arith::ConstantIndexOp::create(b, loc, bound));
    HoistedSizes hoisted(b, loc, loop);
    for (auto [j, slice] :
         llvm::enumerate(loop.getYieldedResults().drop_front(n))) {
      RankedTensorType t = typeOf(slice);
      SmallVector<int64_t> shape{bound};
      llvm::append_range(shape, t.getShape());
      SmallVector<Value> &dyn = scanDyn.emplace_back();
      for (int64_t d = 0; d < t.getRank(); ++d) {
        if (!t.isDynamicDim(d))
          continue;
        Value size = hoisted.dim(slice, d);
        if (!size)
          return loop.emitError()
                 << "scan output " << j << " stacks slices of type " << t
                 << " whose run-time size " << d
                 << " depends on what an iteration computes; Kiln stacks "
                    "slices whose sizes are known before the loop";
        dyn.push_back(size);
      }
      inits.push_back(emptyTensor(b, loc, shape, t.getElementType(), dyn));
    }
  }

  // The final state, and the rows of the scan outputs: the iterations run.
  SmallVector<Value> state;
  Value rows = trips;
  if (loop.getEarlyExit()) {
    state = emitWhile(b, loc, loop, trips, inits, scanDyn);
    // At most `trips` (which the arena bounds): the clamp tells the bound.
    rows = arith::MinSIOp::create(b, loc, state.front(), trips);
    state.erase(state.begin());
  } else {
    auto forOp = scf::ForOp::create(
        b, loc, zero, trips, one, inits,
        [&](OpBuilder &nb, Location l, Value iv, ValueRange iterArgs) {
          scf::YieldOp::create(
              nb, l, spliceBody(nb, l, loop, iv, iterArgs, nullptr, scanDyn));
        });
    forOp->setAttr(kGraphLoopAttr, b.getUnitAttr());
    b.setInsertionPointAfter(forOp);
    state.assign(forOp.getResults().begin(), forOp.getResults().end());
  }
  for (unsigned i = 0; i < n; ++i)
    loop.getResult(i).replaceAllUsesWith(state[i]);
  for (unsigned j = n; j < loop.getNumResults(); ++j) {
    RankedTensorType t = typeOf(loop.getResult(j));
    SmallVector<OpFoldResult> offsets(t.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes{rows};
    unsigned k = 0;
    for (int64_t d : t.getShape().drop_front())
      sizes.push_back(ShapedType::isDynamic(d)
                          ? OpFoldResult(scanDyn[j - n][k++])
                          : b.getIndexAttr(d));
    SmallVector<OpFoldResult> strides(t.getRank(), b.getIndexAttr(1));
    Value stacked = tensor::ExtractSliceOp::create(b, loc, t, state[j], offsets,
                                                   sizes, strides);
    loop.getResult(j).replaceAllUsesWith(stacked);
  }
  loop->erase();
  return success();
}
