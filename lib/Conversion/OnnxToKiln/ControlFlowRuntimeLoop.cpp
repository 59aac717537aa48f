//===- ControlFlowRuntimeLoop.cpp - Loops run at run time -----*- C++ -*-===//
//
// A Loop that is not unrolled becomes a kiln.loop holding its body (see
// ControlFlow.cpp): its trip count (the condition input folded in, a size
// built from the size itself), the bound of its scan outputs' rows, and the
// loop op whose body the pass converts next (LoopFinish.cpp completes it).
//
//===----------------------------------------------------------------------===//
#include "ControlFlow.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

std::optional<int64_t> Inliner::largestValue(Value v, int depth) {
  auto one = [](Value x) {
    auto t = dyn_cast<RankedTensorType>(x.getType());
    return t && t.hasStaticShape() && t.getNumElements() == 1 &&
           t.getElementType().isInteger(64);
  };
  if (!one(v))
    return std::nullopt;
  if (std::optional<int64_t> c = constantInt(v))
    return c;
  if (std::optional<SmallVector<SymSize>> c = sizes.contents(v);
      c && c->size() == 1)
    if (std::optional<int64_t> l = sizes.largest(c->front()))
      return l;
  Operation *def = v.getDefiningOp();
  if (!def || depth > 16)
    return std::nullopt;
  StringRef name = def->getName().getStringRef();
  auto is = [&](StringRef op) {
    return name == ("onnx." + op).str() || name == ("kiln." + op.lower());
  };
  if (is("Identity") || is("Reshape") || is("Squeeze") || is("Unsqueeze"))
    return largestValue(def->getOperand(0), depth + 1);
  if (is("Min") || is("Max") || is("Clip")) {
    // min: the smallest bound of any operand; max: the largest of all;
    // clip: its input's bound or its max, whichever is smaller.
    bool min = !is("Max");
    std::optional<int64_t> best;
    for (auto [i, operand] : llvm::enumerate(def->getOperands())) {
      if (is("Clip") && i == 1)
        continue; // the lower bound
      std::optional<int64_t> l =
          one(operand) ? largestValue(operand, depth + 1) : std::nullopt;
      if (!l && !min)
        return std::nullopt;
      if (l)
        best = best ? (min ? std::min(*best, *l) : std::max(*best, *l)) : *l;
    }
    return best;
  }
  return std::nullopt;
}

FailureOr<SmallVector<Value>> Inliner::runtimeLoop(OnnxNode &node, Region &body,
                                                   ArrayRef<Value> initial,
                                                   int64_t k, bool earlyExit) {
  Location loc = node.loc();
  Value m = node.input(0);
  if (!m && !earlyExit) {
    node.fail() << "has no trip count M and its body never changes the "
                   "condition, so it would run forever";
    return failure();
  }
  if (!m && k > 0) {
    node.fail() << "has no trip count M and its body decides when to stop, "
                   "so its "
                << k
                << " scan output(s) have no bound on their length; give the "
                   "loop a trip count M (a constant, or a size of an input "
                   "dimension with a range)";
    return failure();
  }
  if (!m) // a while loop: runs until its body says stop
    m = i64Constant(loc, std::numeric_limits<int64_t>::max(), false);
  auto mType = dyn_cast<RankedTensorType>(m.getType());
  if (!mType || !mType.hasStaticShape() || mType.getNumElements() != 1 ||
      !mType.getElementType().isInteger(64)) {
    node.fail() << "the trip count M must be one int64 value; it is "
                << m.getType();
    return failure();
  }
  int64_t bound = 0;
  if (k > 0) {
    std::optional<int64_t> largest = largestValue(m);
    if (largest)
      largest = std::max<int64_t>(*largest, 0);
    if (!largest) {
      node.fail() << "stacks " << k
                  << " scan output(s) over a trip count M that Kiln cannot "
                     "bound (M is computed at run time, not from the "
                     "shapes of the inputs); scan outputs of unbounded "
                     "length are not supported: give M as a size of an "
                     "input dimension with a range (--dim, --input-shape), "
                     "or declare the scan outputs' length in the model";
      return failure();
    }
    // The arena reserves every row the scan outputs may have.
    if (*largest > kMaxScanRows) {
      node.fail() << "stacks " << k << " scan output(s) over up to " << *largest
                  << " iterations (the trip count M's largest value); Kiln "
                     "reserves memory for every row and refuses more than "
                  << kMaxScanRows
                  << ": give M a smaller bound (a smaller range of the "
                     "dimension it is computed from)";
      return failure();
    }
    bound = *largest;
  }
  Value trips = m;
  std::optional<SmallVector<SymSize>> known = sizes.contents(m);
  if (known && known->size() == 1 && !known->front().getConstant()) {
    // A size (Shape(x)[0], as exporters write `range(x.size(0))`): built
    // from the size itself, so that an outer loop can compute it before it
    // runs where it sizes this loop's scan outputs.
    Value n = arith::IndexCastOp::create(
        b, loc, b.getI64Type(), sizes.materialize(b, loc, known->front()));
    trips = tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({}, b.getI64Type()), n);
    sizes.setContents(trips, *known);
  } else if (mType.getRank() > 0) { // [1] or [1, 1]: the one value, rank 0
    auto empty = RankedTensorType::get({0}, b.getI64Type());
    OperationState shape(loc, "onnx.Constant");
    shape.addAttribute("value",
                       DenseElementsAttr::get(empty, ArrayRef<int64_t>{}));
    shape.addTypes(empty);
    Operation *r = onnxOp(loc, "Reshape", {m, b.create(shape)->getResult(0)},
                          {}, b.getI64Type());
    r->getResult(0).setType(RankedTensorType::get({}, b.getI64Type()));
    trips = r->getResult(0);
  }
  Value cond = node.input(1);
  std::optional<int64_t> constCond = cond ? constantInt(cond) : std::nullopt;
  if (constCond && *constCond == 0) // runs no iteration
    trips = i64Constant(loc, 0, false);
  else if (cond && !constCond)
    trips =
        onnxOp(loc, "Where",
               {scalarCondition(loc, cond), trips, i64Constant(loc, 0, false)},
               {}, b.getI64Type())
            ->getResult(0);
  return makeLoop(node, body, trips, initial, k, bound, earlyExit);
}

FailureOr<SmallVector<Value>> Inliner::makeLoop(OnnxNode &node, Region &body,
                                                Value trips,
                                                ArrayRef<Value> initial,
                                                int64_t k, int64_t bound,
                                                bool earlyExit) {
  Location loc = node.loc();
  if (earlyExit) {
    Value c = body.front().getTerminator()->getOperand(0);
    if (auto t = dyn_cast<ShapedType>(c.getType());
        t && (!t.getElementType().isInteger(1) ||
              (t.hasStaticShape() && t.getNumElements() != 1))) {
      node.fail() << "the body's condition output is " << c.getType()
                  << "; it must be one bool";
      return failure();
    }
  }
  SmallVector<Type> types;
  for (Value v : initial) {
    if (!isa<RankedTensorType>(v.getType())) {
      node.fail() << "a loop-carried value has no ranked type (" << v.getType()
                  << ")";
      return failure();
    }
    types.push_back(v.getType());
  }
  for (int64_t j = 0; j < k; ++j) // typed by finishOnnxLoop
    types.push_back(
        RankedTensorType::get({ShapedType::kDynamic}, b.getF32Type()));
  auto loop =
      LoopOp::create(b, loc, types, trips, initial, b.getI64IntegerAttr(bound));
  loop->setAttr(kOnnxNodeAttr, b.getStringAttr(node.describe()));
  loop.setEarlyExit(earlyExit);
  loop.getBody().takeBody(body);
  Block &block = loop.getBody().front();
  if (earlyExit) { // the condition the body yields, as a rank-0 i1
    Operation *yield = block.getTerminator();
    Value c = yield->getOperand(0);
    b.setInsertionPoint(yield);
    yield->setOperand(0, scalarCondition(loc, c));
  }
  // The body always runs with a true condition.
  b.setInsertionPointToStart(&block);
  block.getArgument(1).replaceAllUsesWith(boolConstant(loc, true));
  block.eraseArgument(1);
  block.getArgument(0).setType(RankedTensorType::get({}, b.getI64Type()));
  // A loop-carried value keeps its shape (finishOnnxLoop checks the types
  // and the sizes, and every iteration writes over the same buffer), so its
  // run-time sizes in the body and after the loop are its init's.
  for (auto [i, v] : llvm::enumerate(initial)) {
    block.getArgument(1 + i).setType(v.getType());
    if (!typeOf(v).hasStaticShape()) {
      sizes.setDims(block.getArgument(1 + i), sizes.dims(v));
      sizes.setDims(loop.getResult(i), sizes.dims(v));
    }
  }
  return SmallVector<Value>(loop.getResults());
}
