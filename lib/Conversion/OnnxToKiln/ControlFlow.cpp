//===- ControlFlow.cpp - If, Loop and Scan ---------------------*- C++ -*-===//
//
// Kiln's graphs are straight-line code but for kiln.loop (a Loop of a
// run-time trip count, below). ConvertOnnxToKilnPass reaches an
// ONNX control-flow node after every node before it is converted (shape
// arithmetic on constants folded), and rewrites it here into the ops it
// stands for, still in the onnx dialect; the pass then converts those like
// any others, nested control flow included:
//
//   If    a condition known at compile time (a constant, or computed from
//         shapes and constants) inlines only the taken branch, so the other
//         may even be invalid for these shapes (ONNX functions guard such
//         branches with conditions on ranks); otherwise both branches are
//         inlined and the results selected with Where on the condition, or,
//         where a result's shape differs between the branches in one axis
//         (an empty result in one branch, a data-dependent one in the
//         other), each branch's result compressed along that axis by the
//         condition and the two joined: the result has the taken branch's
//         shape, bounded by the sum of both. Branches that hold a
//         contraction, convolution, recurrent op or loop (or many
//         operations) run only when taken, where every result has one
//         static shape: each branch becomes a kiln.loop of one iteration or
//         none carrying the results, the else branch's starting from zeros,
//         the then branch's from what the else branch's left.
//         Results whose run-time sizes may differ between the branches
//         (both `?` here) are joined by a marked Where or Concat, which
//         BranchJoin.cpp converts once the branches' sizes are known.
//   Scan  unrolled over a static scan axis (ControlFlowScan.cpp); a scan
//         of run-time length (or a long one) becomes a kiln.loop.
//   Loop  unrolled to its trip count M when M is known at compile time (or
//         fixed by a scan output's declared length, checked at run time).
//         A short loop without scan outputs may end early (the body
//         computes its condition, or the condition comes at run time): it
//         is unrolled to M, and once the condition is false each later
//         iteration keeps the state (Where on the running condition), which
//         is what stopping would have left. Otherwise (a run-time M, an M
//         too large to unroll, no M at all, or a body that ends a loop with
//         scan outputs) the loop becomes a kiln.loop holding the body
//         (ControlFlowRuntimeLoop.cpp), which the pass converts next
//         (finishOnnxLoop, LoopFinish.cpp, completes it); it stops when the
//         body's condition is false (`early_exit`) if the body computes one.
//
// Unrolling multiplies the body: loops past kMaxUnrolledOps unrolled
// operations stay loops.
//
// Anything else is reported against the node, which then stays unconverted.
//
//===----------------------------------------------------------------------===//
#include "ControlFlow.h"
#include "ShapeInputs.h"
#include "kiln/Conversion/OnnxToKiln/OnnxToKiln.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "kiln/Dialect/Onnx/OnnxDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::kiln;

int64_t Inliner::countOps(Region &region) {
  int64_t n = 0;
  region.walk([&](Operation *) { ++n; });
  return n;
}

bool Inliner::isControlFlow(Operation *op) {
  StringRef name = op->getName().getStringRef();
  return op->getNumRegions() > 0 &&
         (name == "onnx.If" || name == "onnx.Loop" || name == "onnx.Scan");
}

std::optional<DenseElementsAttr> Inliner::constantOf(Value v) {
  if (!v)
    return std::nullopt;
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  ElementsAttr value;
  if (auto init = dyn_cast<onnx::InitializerOp>(def))
    value = init.getValue();
  else if (auto converted = dyn_cast<kiln::ConstantOp>(def))
    value = converted.getValue(); // folded by the conversion so far
  else if (def->getName().getStringRef() == "onnx.Constant")
    value = def->getAttrOfType<ElementsAttr>("value");
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(value))
    return dense;
  return std::nullopt;
}

std::optional<int64_t> Inliner::constantInt(Value v) {
  std::optional<DenseElementsAttr> c = constantOf(v);
  if (!c || c->getNumElements() != 1)
    return std::nullopt;
  if (c->getElementType().isInteger(1))
    return (*c->getValues<bool>().begin()) ? 1 : 0;
  if (!c->getElementType().isInteger())
    return std::nullopt;
  return (*c->getValues<APInt>().begin()).getSExtValue();
}

Type Inliner::elementTypeOf(Value v) {
  if (auto t = dyn_cast<ShapedType>(v.getType()))
    return t.getElementType();
  return Float32Type::get(v.getContext());
}

bool Inliner::rewrite(Operation *op) {
  b.setInsertionPoint(op);
  if (op->getName().getStringRef() == "onnx.Loop")
    op = foldSequenceAppends(op);
  OnnxNode node(op, b, opset);
  b.setInsertionPoint(op);
  // What a speculative node inlines is speculative too.
  speculative = op->hasAttr(kSpeculativeAttr);
  taken = 0;
  if (auto index = op->getAttrOfType<IntegerAttr>(kSpeculativeAttr))
    taken = index.getInt();
  StringRef name = op->getName().getStringRef();
  FailureOr<SmallVector<Value>> results = name == "onnx.If" ? rewriteIf(node)
                                          : name == "onnx.Scan"
                                              ? rewriteScan(node)
                                              : rewriteLoop(node);
  if (failed(results))
    return false;
  for (auto [from, to] : llvm::zip(op->getResults(), *results))
    from.replaceAllUsesWith(to);
  op->erase();
  return true;
}

Operation *Inliner::onnxOp(Location loc, StringRef type, ValueRange operands,
                           ArrayRef<NamedAttribute> attrs, Type elt) {
  OperationState state(loc, ("onnx." + type).str());
  state.addOperands(operands);
  state.addAttributes(attrs);
  state.addTypes(UnrankedTensorType::get(elt));
  return b.create(state);
}

Value Inliner::i64Constant(Location loc, int64_t v, bool vector) {
  auto type = vector ? RankedTensorType::get({1}, b.getI64Type())
                     : RankedTensorType::get({}, b.getI64Type());
  OperationState state(loc, "onnx.Constant");
  state.addAttribute("value", DenseElementsAttr::get(type, v));
  state.addTypes(type);
  return b.create(state)->getResult(0);
}

Value Inliner::boolConstant(Location loc, bool v) {
  auto type = RankedTensorType::get({}, b.getI1Type());
  OperationState state(loc, "onnx.Constant");
  state.addAttribute("value", DenseElementsAttr::get(type, v));
  state.addTypes(type);
  return b.create(state)->getResult(0);
}

Value Inliner::take(Location loc, Value x, int64_t index, int64_t axis) {
  return take(loc, x, i64Constant(loc, index, false), axis);
}

Value Inliner::take(Location loc, Value x, Value index, int64_t axis) {
  Operation *g = onnxOp(loc, "Gather", {x, index},
                        {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))},
                        elementTypeOf(x));
  // The slice's type, when known, lets later steps check static lengths.
  if (auto t = dyn_cast<RankedTensorType>(x.getType())) {
    int64_t a = axis < 0 ? axis + t.getRank() : axis;
    if (a >= 0 && a < t.getRank()) {
      SmallVector<int64_t> shape(t.getShape());
      shape.erase(shape.begin() + a);
      g->getResult(0).setType(RankedTensorType::get(shape, t.getElementType()));
    }
  }
  return g->getResult(0);
}

Value Inliner::stack(Location loc, ArrayRef<Value> parts, int64_t axis) {
  SmallVector<Value> expanded;
  for (Value p : parts) {
    Operation *u;
    if (opset >= 13)
      u = onnxOp(loc, "Unsqueeze", {p, i64Constant(loc, axis, true)}, {},
                 elementTypeOf(p));
    else
      u = onnxOp(
          loc, "Unsqueeze", {p},
          {b.getNamedAttr("axes", b.getArrayAttr({b.getI64IntegerAttr(axis)}))},
          elementTypeOf(p));
    expanded.push_back(u->getResult(0));
  }
  if (expanded.size() == 1)
    return expanded.front();
  return onnxOp(loc, "Concat", expanded,
                {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))},
                elementTypeOf(parts.front()))
      ->getResult(0);
}

SmallVector<Value> Inliner::inlineBody(Region &region, ValueRange args) {
  Block &block = region.front();
  IRMapping map;
  for (auto [arg, v] : llvm::zip(block.getArguments(), args))
    map.map(arg, v);
  SmallVector<Value> yielded;
  for (Operation &inner : block) {
    if (inner.getName().getStringRef() == "onnx.Yield") {
      for (Value v : inner.getOperands())
        yielded.push_back(map.lookupOrDefault(v));
      break;
    }
    Operation *clone = b.clone(inner, map);
    if (speculative)
      clone->walk([&](Operation *o) {
        o->setAttr(kSpeculativeAttr, b.getI64IntegerAttr(taken));
      });
  }
  return yielded;
}

Region *Inliner::regionNamed(Operation *op, StringRef name) {
  auto names = op->getAttrOfType<ArrayAttr>("onnx.regions");
  if (!names)
    return nullptr;
  for (auto [i, n] : llvm::enumerate(names))
    if (cast<StringAttr>(n).getValue() == name && i < op->getNumRegions() &&
        !op->getRegion(i).empty())
      return &op->getRegion(i);
  return nullptr;
}

FailureOr<SmallVector<Value>> Inliner::rewriteIf(OnnxNode &node) {
  Operation *op = node.op;
  Region *thenR = regionNamed(op, "then_branch");
  Region *elseR = regionNamed(op, "else_branch");
  if (!thenR || !elseR) {
    node.fail() << "needs then_branch and else_branch subgraphs";
    return failure();
  }
  Value cond = node.input(0);
  if (!cond) {
    node.fail() << "input 0 (cond) is required";
    return failure();
  }
  if (std::optional<int64_t> c = constantInt(cond)) {
    SmallVector<Value> taken = inlineBody(*c ? *thenR : *elseR, {});
    if (taken.size() != op->getNumResults()) {
      node.fail() << "the branch yields " << taken.size() << " values for "
                  << op->getNumResults() << " outputs";
      return failure();
    }
    return taken;
  }
  if (opset < 9) {
    node.fail() << "a run-time condition needs Where (opset 9); opset " << opset
                << " If with a non-constant condition is not supported";
    return failure();
  }
  if (expensiveBranches(*thenR, *elseR)) {
    if (std::optional<SmallVector<RankedTensorType>> types =
            branchTypes(node.op, *thenR, *elseR)) {
      if (llvm::all_of(*types,
                       [](RankedTensorType t) { return t.hasStaticShape(); }))
        return branchLoops(node, cond, *thenR, *elseR, *types);
      if (sizedByShapes(*thenR) && sizedByShapes(*elseR))
        return branchScans(node, cond, *thenR, *elseR, *types);
    }
  }
  bool outer = speculative;
  int64_t outerTaken = taken;
  auto [thenTaken, elseTaken] = branchConditions(cond);
  speculative = true;
  taken = thenTaken;
  SmallVector<Value> thenV = inlineBody(*thenR, {});
  taken = elseTaken;
  SmallVector<Value> elseV = inlineBody(*elseR, {});
  speculative = outer;
  taken = outerTaken;
  if (thenV.size() != op->getNumResults() ||
      elseV.size() != op->getNumResults()) {
    node.fail() << "the branches yield " << thenV.size() << " and "
                << elseV.size() << " values for " << op->getNumResults()
                << " outputs";
    return failure();
  }
  // Both branches run and the taken one's result is kept: by Where when the
  // shapes agree, and by cutting along the one axis where they may differ.
  SmallVector<Value> out;
  for (auto [t, e] : llvm::zip(thenV, elseV)) {
    std::optional<int64_t> axis = differingAxis(t, e);
    if (axis && *axis >= 0 && opset >= 11) {
      out.push_back(keepTaken(op->getLoc(), cond, t, e, *axis));
      continue;
    }
    if (axis) {
      node.fail() << "the branches produce different shapes (" << t.getType()
                  << " and " << e.getType()
                  << "); Kiln keeps the taken branch's result when the ranks "
                     "agree (opset 11 or later)";
      return failure();
    }
    // Marked: two run-time sizes at an axis may still differ once the
    // branches convert (BranchJoin.cpp).
    out.push_back(onnxOp(op->getLoc(), "Where", {cond, t, e},
                         {b.getNamedAttr(kIfJoinAttr, b.getUnitAttr())},
                         elementTypeOf(t))
                      ->getResult(0));
  }
  return out;
}

std::pair<int64_t, int64_t> Inliner::branchConditions(Value cond) {
  auto type = dyn_cast<RankedTensorType>(cond.getType());
  if ((speculative && taken == 0) || !type || !type.hasStaticShape() ||
      type.getNumElements() != 1 || !type.getElementType().isInteger(1))
    return {0, 0};
  // The condition is converted (everything before the If is), so no later
  // conversion replaces it.
  int64_t outer = speculative ? taken : 0;
  return {sizes.addTakenCondition(cond, false, outer),
          sizes.addTakenCondition(cond, true, outer)};
}

bool Inliner::expensiveBranches(Region &thenR, Region &elseR) {
  static const llvm::StringSet<> heavy = {
      "onnx.Conv",          "onnx.ConvTranspose", "onnx.ConvInteger",
      "onnx.QLinearConv",   "onnx.MatMul",        "onnx.MatMulInteger",
      "onnx.QLinearMatMul", "onnx.Gemm",          "onnx.Einsum",
      "onnx.LSTM",          "onnx.GRU",           "onnx.RNN",
      "onnx.Attention",     "onnx.Loop",          "onnx.Scan"};
  int64_t ops = 0;
  bool found = false;
  for (Region *r : {&thenR, &elseR})
    r->walk([&](Operation *o) {
      ++ops;
      found |= heavy.contains(o->getName().getStringRef());
    });
  return found || ops >= kMinBranchOps;
}

namespace {
/// Whether `v`'s contents are computed from shapes and constants alone
/// (Shape, Size, constants, and integer arithmetic on them), so that the
/// sizes a consumer takes from it are known before a branch runs.
bool computedFromShapes(Value v, DenseSet<Value> &seen, int depth) {
  if (isa<NoneType>(v.getType()) || !seen.insert(v).second)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || depth > 64) // a graph input, a loop's iteration: data
    return false;
  static const llvm::StringSet<> leaves = {"onnx.Constant", "onnx.Initializer",
                                           "onnx.Shape", "onnx.Size"};
  static const llvm::StringSet<> arithmetic = {
      "onnx.Gather",  "onnx.Concat",     "onnx.Unsqueeze",
      "onnx.Squeeze", "onnx.Cast",       "onnx.Identity",
      "onnx.Slice",   "onnx.Add",        "onnx.Sub",
      "onnx.Mul",     "onnx.Div",        "onnx.Mod",
      "onnx.Neg",     "onnx.Abs",        "onnx.Max",
      "onnx.Min",     "onnx.Floor",      "onnx.Ceil",
      "onnx.Sqrt",    "onnx.ReduceProd", "onnx.ReduceSum",
      "onnx.Equal",   "onnx.Less",       "onnx.Greater",
      "onnx.Not",     "onnx.Where",      "onnx.Range",
      "onnx.Expand",  "onnx.Reshape",    "onnx.ConstantOfShape"};
  StringRef name = def->getName().getStringRef();
  if (leaves.contains(name))
    return true;
  if (!arithmetic.contains(name))
    return false;
  return llvm::all_of(def->getOperands(), [&](Value o) {
    return computedFromShapes(o, seen, depth + 1);
  });
}
} // namespace

bool Inliner::sizedByShapes(Region &region) {
  // Ops whose results' sizes are what their data says.
  static const llvm::StringSet<> dataSized = {
      "onnx.NonZero",           "onnx.Compress", "onnx.Unique",
      "onnx.NonMaxSuppression", "onnx.Loop",     "onnx.StringSplit"};
  // Size-deciding operands: (op, first operand, last operand).
  static const llvm::StringMap<std::pair<unsigned, unsigned>> sizeArgs = {
      {"onnx.Reshape", {1, 1}},
      {"onnx.Expand", {1, 1}},
      {"onnx.ConstantOfShape", {0, 0}},
      {"onnx.Slice", {1, 4}},
      {"onnx.Tile", {1, 1}},
      {"onnx.Pad", {1, 3}},
      {"onnx.Resize", {2, 3}},
      {"onnx.Upsample", {1, 1}},
      {"onnx.Range", {0, 2}},
      {"onnx.OneHot", {1, 1}},
      {"onnx.Split", {1, 1}},
      {"onnx.TopK", {1, 1}},
      {"onnx.CenterCropPad", {1, 1}},
      {"onnx.Col2Im", {1, 2}},
      {"onnx.AffineGrid", {1, 1}},
      {"onnx.DFT", {1, 1}},
      {"onnx.STFT", {2, 3}},
      {"onnx.MaxUnpool", {2, 2}},
      {"onnx.MelWeightMatrix", {0, 4}},
      {"onnx.HannWindow", {0, 0}},
      {"onnx.HammingWindow", {0, 0}},
      {"onnx.BlackmanWindow", {0, 0}}};
  DenseSet<Value> seen;
  WalkResult walk = region.walk([&](Operation *o) {
    StringRef name = o->getName().getStringRef();
    if (dataSized.contains(name))
      return WalkResult::interrupt();
    // A nested If keeps the taken result by cutting (Compress) where its
    // branches' shapes differ.
    if (name == "onnx.If" && o->getNumRegions() == 2 &&
        !branchTypes(o, o->getRegion(0), o->getRegion(1)))
      return WalkResult::interrupt();
    auto it = sizeArgs.find(name);
    if (it == sizeArgs.end())
      return WalkResult::advance();
    for (unsigned i = it->second.first;
         i <= it->second.second && i < o->getNumOperands(); ++i)
      if (!computedFromShapes(o->getOperand(i), seen, 0))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

std::optional<SmallVector<RankedTensorType>>
Inliner::branchTypes(Operation *op, Region &thenR, Region &elseR) {
  SmallVector<RankedTensorType> types;
  for (Region *r : {&thenR, &elseR}) {
    if (!r->hasOneBlock() || r->front().getNumArguments() != 0 ||
        r->front().empty())
      return std::nullopt;
    Operation *yield = &r->front().back();
    if (yield->getName().getStringRef() != "onnx.Yield" ||
        yield->getNumOperands() != op->getNumResults())
      return std::nullopt;
    for (auto [i, v] : llvm::enumerate(yield->getOperands())) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (!t || !b.getZeroAttr(t.getElementType()))
        return std::nullopt;
      if (r == &thenR)
        types.push_back(t);
      else if (types[i] != t)
        return std::nullopt;
    }
  }
  return types;
}

FailureOr<SmallVector<Value>>
Inliner::branchLoops(OnnxNode &node, Value cond, Region &thenR, Region &elseR,
                     ArrayRef<RankedTensorType> types) {
  Location loc = node.loc();
  OpBuilder::InsertPoint before = b.saveInsertionPoint();
  Value taken = scalarCondition(loc, cond);
  SmallVector<Value> carried;
  for (RankedTensorType t : types) {
    OperationState zeros(loc, "onnx.Constant");
    zeros.addAttribute(
        "value", DenseElementsAttr::get(t, b.getZeroAttr(t.getElementType())));
    zeros.addTypes(t);
    carried.push_back(b.create(zeros)->getResult(0));
  }
  std::pair<Region *, bool> order[] = {{&elseR, false}, {&thenR, true}};
  for (auto [region, runs] : order) {
    Value trips = branchBody(loc, taken, *region, runs, types);
    b.restoreInsertionPoint(before);
    FailureOr<SmallVector<Value>> results =
        makeLoop(node, *region, trips, carried, /*k=*/0, /*bound=*/0);
    b.restoreInsertionPoint(before);
    if (failed(results))
      return failure();
    carried = *results;
  }
  return carried;
}

Value Inliner::branchBody(Location loc, Value taken, Region &region,
                          bool runsWhenTrue,
                          ArrayRef<RankedTensorType> carried) {
  auto i64Scalar = RankedTensorType::get({}, b.getI64Type());
  Operation *trips =
      onnxOp(loc, "Where",
             {taken, i64Constant(loc, runsWhenTrue ? 1 : 0, false),
              i64Constant(loc, runsWhenTrue ? 0 : 1, false)},
             {}, b.getI64Type());
  trips->getResult(0).setType(i64Scalar);
  OpBuilder::InsertionGuard guard(b);
  // A Loop body: (iteration, condition, loop-carried values) yielding
  // (condition, loop-carried values or scan slices); the branch reads none
  // of its arguments.
  Block &block = region.front();
  block.addArgument(i64Scalar, loc);
  block.addArgument(RankedTensorType::get({}, b.getI1Type()), loc);
  for (RankedTensorType t : carried)
    block.addArgument(t, loc);
  Operation *yield = &block.back();
  b.setInsertionPoint(yield);
  SmallVector<Value> yielded{boolConstant(loc, true)};
  llvm::append_range(yielded, yield->getOperands());
  yield->setOperands(yielded);
  if (speculative) // inside a branch that runs whether taken or not
    region.walk([&](Operation *o) {
      o->setAttr(kSpeculativeAttr, b.getI64IntegerAttr(0));
    });
  return trips->getResult(0);
}

FailureOr<SmallVector<Value>>
Inliner::branchScans(OnnxNode &node, Value cond, Region &thenR, Region &elseR,
                     ArrayRef<RankedTensorType> types) {
  Location loc = node.loc();
  OpBuilder::InsertPoint before = b.saveInsertionPoint();
  Value taken = scalarCondition(loc, cond);
  int64_t k = (int64_t)types.size();
  SmallVector<SmallVector<Value>> stacked;
  for (auto [region, runs] : {std::pair<Region *, bool>{&thenR, true},
                              std::pair<Region *, bool>{&elseR, false}}) {
    Value trips = branchBody(loc, taken, *region, runs, {});
    b.restoreInsertionPoint(before);
    FailureOr<SmallVector<Value>> results =
        makeLoop(node, *region, trips, {}, k, /*bound=*/1);
    b.restoreInsertionPoint(before);
    if (failed(results))
      return failure();
    stacked.push_back(*results);
  }
  // Each result is stacked once by the branch that ran and not at all by
  // the other: the one row of the two stacks together.
  SmallVector<Value> out;
  for (auto [t, e, type] : llvm::zip(stacked[0], stacked[1], types)) {
    // Marked: the rows' run-time sizes may differ (BranchJoin.cpp).
    Value both = onnxOp(loc, "Concat", {t, e},
                        {b.getNamedAttr("axis", b.getI64IntegerAttr(0)),
                         b.getNamedAttr(kIfJoinAttr, b.getUnitAttr())},
                        type.getElementType())
                     ->getResult(0);
    out.push_back(take(loc, both, 0, 0));
  }
  return out;
}

std::optional<int64_t> Inliner::differingAxis(Value t, Value e) {
  auto tt = dyn_cast<RankedTensorType>(t.getType());
  auto et = dyn_cast<RankedTensorType>(e.getType());
  if (!tt || !et)
    return std::nullopt;
  if (tt.getRank() != et.getRank())
    return tt.hasStaticShape() && et.hasStaticShape()
               ? std::optional<int64_t>(-1)
               : std::nullopt;
  SmallVector<int64_t> differ;
  bool bothRunTime = false;
  for (int64_t d = 0; d < tt.getRank(); ++d) {
    int64_t a = tt.getDimSize(d), c = et.getDimSize(d);
    if (!ShapedType::isDynamic(a) && a == c)
      continue;
    // Two run-time sizes are usually one symbolic size; whether they are
    // is known once the branches convert.
    if (ShapedType::isDynamic(a) && ShapedType::isDynamic(c)) {
      bothRunTime = true;
      continue;
    }
    differ.push_back(d);
  }
  // Several axes (static sizes among them or not), or one beside run-time
  // sizes that may differ too (a pool of one input's P x 5 against another
  // input's H x W), are compared once the branches convert, and joined
  // there (BranchJoin.cpp).
  if (differ.size() != 1 || bothRunTime)
    return std::nullopt;
  return differ.front();
}

Value Inliner::keepTaken(Location loc, Value cond, Value t, Value e,
                         int64_t axis) {
  // Concat(Compress(t, cond), Compress(e, !cond)) along `axis`, each
  // condition repeated along the axis: the taken result whole, the other
  // cut to nothing. Compress gives the data-dependent length a bound.
  auto keep = [&](Value x, Value c) {
    Value length =
        onnxOp(loc, "Shape", {x},
               {b.getNamedAttr("start", b.getI64IntegerAttr(axis)),
                b.getNamedAttr("end", b.getI64IntegerAttr(axis + 1))},
               b.getI64Type())
            ->getResult(0);
    Value mask =
        onnxOp(loc, "Expand", {c, length}, {}, b.getI1Type())->getResult(0);
    return onnxOp(loc, "Compress", {x, mask},
                  {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))},
                  elementTypeOf(x))
        ->getResult(0);
  };
  // A one-element condition of any rank, as a scalar: Expand then gives a
  // 1-D mask whatever the condition's rank.
  Value taken = scalarCondition(loc, cond);
  Value other = onnxOp(loc, "Not", {taken}, {}, b.getI1Type())->getResult(0);
  return onnxOp(loc, "Concat", {keep(t, taken), keep(e, other)},
                {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))},
                elementTypeOf(t))
      ->getResult(0);
}

LogicalResult Inliner::checkUnrollSize(OnnxNode &node, Region &body,
                                       int64_t iterations) {
  int64_t ops = countOps(body);
  if (iterations > kMaxUnrolledOps / std::max<int64_t>(ops, 1)) {
    node.fail() << "runs its " << ops << "-operation body " << iterations
                << " times; Kiln unrolls loops and refuses more than "
                << kMaxUnrolledOps << " unrolled operations";
    return failure();
  }
  return success();
}

Value Inliner::scalarCondition(Location loc, Value c) {
  if (auto t = dyn_cast<RankedTensorType>(c.getType()); t && t.getRank() == 0)
    return c;
  auto type = RankedTensorType::get({0}, b.getI64Type());
  OperationState shape(loc, "onnx.Constant");
  shape.addAttribute("value",
                     DenseElementsAttr::get(type, ArrayRef<int64_t>{}));
  shape.addTypes(type);
  Operation *r = onnxOp(loc, "Reshape", {c, b.create(shape)->getResult(0)}, {},
                        b.getI1Type());
  r->getResult(0).setType(RankedTensorType::get({}, b.getI1Type()));
  return r->getResult(0);
}

Value Inliner::bothTrue(Location loc, Value a, Value c) {
  Operation *r =
      onnxOp(loc, "And", {a, scalarCondition(loc, c)}, {}, b.getI1Type());
  r->getResult(0).setType(RankedTensorType::get({}, b.getI1Type()));
  return r->getResult(0);
}

FailureOr<SmallVector<Value>> Inliner::rewriteLoop(OnnxNode &node) {
  Operation *op = node.op;
  Region *body = regionNamed(op, "body");
  if (!body) {
    node.fail() << "needs a body subgraph";
    return failure();
  }
  std::optional<int64_t> trips;
  if (node.input(0))
    trips = constantInt(node.input(0));
  // At a probe batch size, a loop of that many iterations reads the batch
  // size: it stays a loop over the constant, which the pass reports.
  if (auto probe = op->getParentOfType<ModuleOp>()->getAttrOfType<IntegerAttr>(
          kBatchProbeAttr);
      probe && trips == probe.getInt())
    trips = std::nullopt;
  Value cond = node.input(1);
  std::optional<int64_t> constCondIn =
      cond ? constantInt(cond) : std::optional<int64_t>(1);
  Block &block = body->front();
  Operation *yield = block.getTerminator();
  if (!yield || yield->getName().getStringRef() != "onnx.Yield" ||
      block.getNumArguments() < 2 || yield->getNumOperands() < 1) {
    node.fail() << "the body must take (iteration, condition, ...) and "
                   "yield (condition, ...)";
    return failure();
  }
  int64_t n = (int64_t)op->getNumOperands() - 2;
  int64_t k = (int64_t)op->getNumResults() - n;
  if (n < 0 || k < 0 || (int64_t)yield->getNumOperands() != 1 + n + k) {
    node.fail() << "the body yields " << yield->getNumOperands()
                << " values; expected 1 + " << n << " loop-carried + " << k
                << " scan outputs";
    return failure();
  }
  // Can the body stop the loop? Not when its condition output is its
  // condition input (directly or through Identity) or a constant true.
  Value condOut = yield->getOperand(0);
  if (Operation *def = condOut.getDefiningOp())
    if (def->getName().getStringRef() == "onnx.Identity" &&
        def->getNumOperands() == 1)
      condOut = def->getOperand(0);
  std::optional<int64_t> constCond = constantInt(condOut);
  bool earlyExit =
      condOut != block.getArgument(1) && !(constCond && *constCond);
  SmallVector<Value> initial(op->getOperands().drop_front(2));
  if (constCondIn && *constCondIn == 0 && k == 0)
    return initial; // runs no iteration
  // Without scan outputs, a loop that may stop early runs to M with its
  // state frozen from the first false condition on.
  bool freeze = k == 0 && trips && (earlyExit || !constCondIn);
  if (freeze && opset < 9) {
    node.fail() << "a loop that can end early needs Where (opset 9); opset "
                << opset << " is not supported";
    return failure();
  }
  // A run-time trip count or condition otherwise: the length the model
  // declares for a scan output fixes the trip count, and a guard checks at
  // run time that M equals it and that the condition is true.
  bool guarded = false;
  // A loop whose body decides when to stop, with scan outputs or a run-time
  // M, stays a loop (that stops when the body says so).
  if (!freeze && earlyExit)
    return runtimeLoop(node, *body, initial, k, /*earlyExit=*/true);
  if (!freeze && (!trips || !constCondIn)) {
    // The scan output's own type, or the static shape it flows into
    // through shape-preserving ops (a Cast to the declared graph output,
    // as the expanded Range's Loop has).
    for (unsigned r = std::max<int64_t>(n, 0); r < op->getNumResults(); ++r) {
      std::optional<int64_t> length;
      if (auto t = dyn_cast<RankedTensorType>(op->getResult(r).getType());
          t && t.getRank() >= 1 && !t.isDynamicDim(0))
        length = t.getDimSize(0);
      else if (std::optional<SmallVector<int64_t>> s =
                   declaredShape(op->getResult(r));
               s && !s->empty())
        length = s->front();
      if (length) {
        if (!trips)
          trips = *length;
        guarded = true;
        break;
      }
    }
    if (!guarded)
      return runtimeLoop(node, *body, initial, k, /*earlyExit=*/false);
  } else if (constCondIn && *constCondIn == 0) {
    node.fail() << "a loop whose condition is a constant false runs no "
                   "iteration, so its scan outputs would be empty; that is "
                   "not supported";
    return failure();
  }
  int64_t m = trips.value_or(0); // set on every path that gets here
  if (m < 1) {
    if (k == 0)
      return initial;
    node.fail() << "a loop that runs " << m
                << " times (empty scan outputs) is not supported";
    return failure();
  }
  if (!guarded && node.input(0) &&
      m > kMaxUnrolledOps / std::max<int64_t>(countOps(*body), 1))
    return runtimeLoop(node, *body, initial, k, earlyExit);
  if (failed(checkUnrollSize(node, *body, m)))
    return failure();
  Location loc = node.loc();
  if (guarded) {
    auto i1 = [&](Value like) {
      auto t = dyn_cast<RankedTensorType>(like.getType());
      return t ? RankedTensorType::get(t.getShape(), b.getI1Type())
               : RankedTensorType::get({}, b.getI1Type());
    };
    Value ok;
    if (node.input(0) && !constantInt(node.input(0))) {
      Value runM = node.input(0);
      OperationState eq(loc, "onnx.Equal");
      eq.addOperands({runM, i64Constant(loc, m, false)});
      eq.addTypes(i1(runM));
      ok = b.create(eq)->getResult(0);
    }
    if (cond && !constantInt(cond)) {
      if (ok) {
        OperationState both(loc, "onnx.And");
        both.addOperands({ok, cond});
        both.addTypes(i1(ok));
        ok = b.create(both)->getResult(0);
      } else {
        ok = cond;
      }
    }
    if (ok)
      GuardOp::create(b, loc, ok,
                      b.getStringAttr(node.describe() +
                                      ": the trip count M must be " +
                                      std::to_string(m) +
                                      " and the condition true: the scan "
                                      "length this model was compiled for"));
  }
  // `alive`: the condition the next iteration runs under.
  Value alive =
      freeze && cond ? scalarCondition(loc, cond) : boolConstant(loc, true);
  SmallVector<Value> carried(initial);
  SmallVector<SmallVector<Value>> perStep(k);
  // With a condition (frozen), an iteration may run after the loop stopped.
  speculative = speculative || freeze;
  if (freeze)
    taken = 0; // an iteration's results are used while the loop runs
  for (int64_t t = 0; t < m; ++t) {
    SmallVector<Value> args{i64Constant(loc, t, false), alive};
    args.append(carried);
    SmallVector<Value> outs = inlineBody(*body, args);
    for (int64_t i = 0; i < n; ++i)
      carried[i] = freeze
                       ? onnxOp(loc, "Where", {alive, outs[1 + i], carried[i]},
                                {}, elementTypeOf(carried[i]))
                             ->getResult(0)
                       : outs[1 + i];
    for (int64_t j = 0; j < k; ++j)
      perStep[j].push_back(outs[1 + n + j]);
    if (freeze && t + 1 < m)
      alive = earlyExit ? bothTrue(loc, alive, outs[0]) : alive;
  }
  SmallVector<Value> results(carried);
  for (int64_t j = 0; j < k; ++j)
    results.push_back(stack(loc, perStep[j], 0));
  return results;
}

bool mlir::kiln::isOnnxControlFlow(Operation *op) {
  return Inliner::isControlFlow(op);
}

bool mlir::kiln::inlineOnnxControlFlow(Operation *op,
                                       const llvm::StringMap<int64_t> &opsets,
                                       SymbolicSizes &sizes) {
  OpBuilder builder(op->getContext());
  Inliner inliner(builder, opsets, sizes);
  return inliner.rewrite(op);
}
