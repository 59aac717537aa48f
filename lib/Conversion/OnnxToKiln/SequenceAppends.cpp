//===- SequenceAppends.cpp - lists appended in a Loop -----------*- C++ -*-===//
//
// `outs.append(y)` in a scripted loop exports as a loop-carried sequence.
// Kiln has no sequence values; such a sequence, read once after the loop by
// ConcatFromSequence, is a scan output of y (docs/shapes.md, "Loops of a
// run-time trip count").
//
//===----------------------------------------------------------------------===//
#include "ControlFlow.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::kiln;

std::optional<Inliner::StackedRead> Inliner::planRead(Operation *concat,
                                                      Value slice) {
  auto t = dyn_cast<RankedTensorType>(slice.getType());
  auto attr = [&](StringRef name) -> int64_t {
    auto a = concat->getAttrOfType<IntegerAttr>(name);
    return a ? a.getInt() : 0;
  };
  int64_t axis = attr("axis"), newAxis = attr("new_axis");
  if (!t || concat->getNumOperands() != 1)
    return std::nullopt;
  int64_t r = t.getRank();
  StackedRead read;
  if (newAxis == 1) {
    if (axis < 0)
      axis += r + 1;
    if (axis < 0 || axis > r)
      return std::nullopt;
    if (axis > 0) {
      for (int64_t d = 1; d <= axis; ++d)
        read.perm.push_back(d);
      read.perm.push_back(0);
      for (int64_t d = axis + 1; d <= r; ++d)
        read.perm.push_back(d);
    }
    return read;
  }
  if (newAxis != 0 || r < 1 || (axis != 0 && axis != -r))
    return std::nullopt;
  read.shape.push_back(-1);
  for (int64_t d : t.getShape().drop_front()) {
    if (ShapedType::isDynamic(d))
      return std::nullopt;
    read.shape.push_back(d);
  }
  return read;
}

Value Inliner::emitRead(Operation *concat, const StackedRead &read,
                        Value stacked, Type elt) {
  Location loc = concat->getLoc();
  if (!read.perm.empty())
    return onnxOp(loc, "Transpose", {stacked},
                  {b.getNamedAttr("perm", b.getI64ArrayAttr(read.perm))}, elt)
        ->getResult(0);
  if (read.shape.empty())
    return stacked;
  auto shapeType =
      RankedTensorType::get({(int64_t)read.shape.size()}, b.getI64Type());
  OperationState c(loc, "onnx.Constant");
  c.addAttribute("value", DenseElementsAttr::get(
                              shapeType, ArrayRef<int64_t>(read.shape)));
  c.addTypes(shapeType);
  return onnxOp(loc, "Reshape", {stacked, b.create(c)->getResult(0)}, {}, elt)
      ->getResult(0);
}

Operation *Inliner::foldSequenceAppends(Operation *op) {
  Region *body = regionNamed(op, "body");
  if (!body || body->empty() || op->getNumOperands() < 2)
    return op;
  Block &block = body->front();
  Operation *yield = block.getTerminator();
  unsigned n = op->getNumOperands() - 2;
  if (!yield || yield->getNumOperands() != 1 + op->getNumResults() ||
      block.getNumArguments() != 2 + n || op->getNumResults() < n)
    return op;
  struct Append {
    unsigned carried;
    Operation *insert;
  };
  SmallVector<Append> appends;
  for (unsigned c = 0; c < n; ++c) {
    Operation *init = op->getOperand(2 + c).getDefiningOp();
    Value arg = block.getArgument(2 + c);
    Operation *insert = yield->getOperand(1 + c).getDefiningOp();
    if (!init || init->getName().getStringRef() != "onnx.SequenceEmpty" ||
        !insert || insert->getName().getStringRef() != "onnx.SequenceInsert" ||
        insert->getNumOperands() != 2 || insert->getOperand(0) != arg ||
        !arg.hasOneUse() || !insert->getResult(0).hasOneUse())
      continue;
    Value slice = insert->getOperand(1);
    bool readable =
        llvm::all_of(op->getResult(c).getUsers(), [&](Operation *u) {
          return u->getName().getStringRef() == "onnx.ConcatFromSequence" &&
                 planRead(u, slice);
        });
    if (readable)
      appends.push_back({c, insert});
  }
  if (appends.empty())
    return op;
  llvm::SmallDenseSet<unsigned> folded;
  for (const Append &a : appends)
    folded.insert(a.carried);
  // The new Loop: the folded sequences leave the loop-carried values and
  // their appended values become scan outputs after the existing ones.
  OperationState state(op->getLoc(), op->getName());
  state.addAttributes(op->getAttrs());
  SmallVector<Type> types;
  SmallVector<Value> yielded{yield->getOperand(0)};
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    if (i < 2 || !folded.contains(i - 2))
      state.addOperands(op->getOperand(i));
  for (unsigned r = 0; r < op->getNumResults(); ++r)
    if (r >= n || !folded.contains(r)) {
      types.push_back(op->getResult(r).getType());
      yielded.push_back(yield->getOperand(1 + r));
    }
  for (const Append &a : appends) {
    Value slice = a.insert->getOperand(1);
    types.push_back(UnrankedTensorType::get(elementTypeOf(slice)));
    yielded.push_back(slice);
  }
  state.addTypes(types);
  for (unsigned i = 0; i < op->getNumRegions(); ++i)
    state.addRegion();
  Operation *loop = b.create(state);
  for (unsigned i = 0; i < op->getNumRegions(); ++i)
    loop->getRegion(i).takeBody(op->getRegion(i));
  yield->setOperands(yielded);
  for (const Append &a : llvm::reverse(appends)) {
    a.insert->erase();
    block.eraseArgument(2 + a.carried);
  }
  unsigned next = 0;
  for (unsigned r = 0; r < op->getNumResults(); ++r)
    if (r >= n || !folded.contains(r))
      op->getResult(r).replaceAllUsesWith(loop->getResult(next++));
  for (const Append &a : appends) {
    Value stacked = loop->getResult(next++);
    Value slice =
        yielded[yielded.size() - appends.size() + (&a - appends.data())];
    for (Operation *concat :
         llvm::make_early_inc_range(op->getResult(a.carried).getUsers())) {
      b.setInsertionPoint(concat);
      concat->getResult(0).replaceAllUsesWith(emitRead(
          concat, *planRead(concat, slice), stacked, elementTypeOf(slice)));
      concat->erase();
    }
  }
  // The SequenceEmpty inits are left to the conversion, which erases them
  // once unused (it may hold a pointer to the op before this one).
  b.setInsertionPoint(loop);
  op->erase();
  return loop;
}
