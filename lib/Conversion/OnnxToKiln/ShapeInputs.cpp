//===- ShapeInputs.cpp - shape arguments given at run time ------*- C++ -*-===//
//
// The helpers of ShapeInputs.h. An op whose output shape is decided by an
// input's values (Reshape's shape, Expand's shape, Range's bounds, ...) takes
// it from the constant input when there is one, and otherwise from the output
// shape the model declares, with a kiln.guard that the run-time values agree.
//
//===----------------------------------------------------------------------===//
#include "ShapeInputs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::kiln;

std::string mlir::kiln::inputDesc(OnnxNode &node, unsigned i) {
  std::string idx = "input " + std::to_string(i);
  Value v = node.input(i);
  if (auto arg = dyn_cast_or_null<BlockArgument>(v))
    if (auto f = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()))
      // The importer's kValueNameAttr.
      if (auto n = f.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                  "onnx.name"))
        return "graph input '" + n.str() + "' (" + idx + ")";
  return idx;
}

namespace {
/// The static shape `v` must have because it flows, through elementwise ONNX
/// ops whose other operands are scalars or equally unknown (shape-preserving),
/// into a value whose type is declared static (a graph output, or an op ONNX
/// typed). The guard on `v`'s arguments still checks it at run time: a wrong
/// guess here can only refuse inputs, never compute wrong numbers.
std::optional<SmallVector<int64_t>> shapeFromUses(Value v, int depth) {
  static const llvm::StringSet<> elementwise = {
      "Add",       "Sub",         "Mul",   "Div",      "Pow",      "Max",
      "Min",       "Cos",         "Sin",   "Tan",      "Neg",      "Abs",
      "Exp",       "Log",         "Sqrt",  "Relu",     "Sigmoid",  "Tanh",
      "Cast",      "Ceil",        "Floor", "Round",    "Erf",      "Sign",
      "Identity",  "Reciprocal",  "Clip",  "CastLike", "Softplus", "Elu",
      "LeakyRelu", "HardSigmoid", "Selu"};
  if (depth > 64)
    return std::nullopt;
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (isa<func::ReturnOp>(user)) {
      auto f = user->getParentOfType<func::FuncOp>();
      auto t = dyn_cast<RankedTensorType>(
          f.getResultTypes()[use.getOperandNumber()]);
      if (t && t.hasStaticShape())
        return SmallVector<int64_t>(t.getShape());
      continue;
    }
    StringRef name = user->getName().getStringRef();
    if (!name.consume_front("onnx.") || user->getNumResults() != 1 ||
        !elementwise.contains(name.substr(name.rfind('.') + 1)))
      continue;
    // Scalars, or values as unknown as this one (a sibling of the same
    // computation, e.g. Add(cos(r), sin(r))), cannot change the shape.
    auto vt = dyn_cast<RankedTensorType>(v.getType());
    // CastLike's second operand gives only the element type.
    bool castLike = name.ends_with("CastLike");
    if (castLike && use.getOperandNumber() != 0)
      continue;
    bool othersScalar = llvm::all_of(user->getOpOperands(), [&](OpOperand &o) {
      if (&o == &use || isa<NoneType>(o.get().getType()) ||
          (castLike && o.getOperandNumber() == 1))
        return true;
      auto t = dyn_cast<RankedTensorType>(o.get().getType());
      return t && (t.getRank() == 0 ||
                   (vt && t.getRank() == vt.getRank() &&
                    llvm::all_of(t.getShape(), ShapedType::isDynamic)));
    });
    if (!othersScalar)
      continue;
    Value r = user->getResult(0);
    if (auto t = dyn_cast<RankedTensorType>(r.getType()))
      if (t.hasStaticShape())
        return SmallVector<int64_t>(t.getShape());
    if (std::optional<SmallVector<int64_t>> s = shapeFromUses(r, depth + 1))
      return s;
  }
  return std::nullopt;
}

} // namespace

std::optional<SmallVector<int64_t>> mlir::kiln::declaredShape(Value v) {
  if (auto t = dyn_cast<RankedTensorType>(v.getType()); t && t.hasStaticShape())
    return SmallVector<int64_t>(t.getShape());
  return shapeFromUses(v, 0);
}

std::string mlir::kiln::shapeStr(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "a scalar";
  std::string s;
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "x" : "") + std::to_string(d);
  return s;
}

FailureOr<RankedTensorType> mlir::kiln::declaredResult(OnnxNode &node,
                                                       unsigned i,
                                                       StringRef what) {
  Value result = node.op->getResult(i);
  auto t = dyn_cast<RankedTensorType>(result.getType());
  if (t && t.hasStaticShape())
    return t;
  if (auto elt = dyn_cast<ShapedType>(result.getType()))
    if (std::optional<SmallVector<int64_t>> s = shapeFromUses(result, 0))
      if (!t || t.getRank() == (int64_t)s->size())
        return RankedTensorType::get(*s, elt.getElementType());
  node.fail() << what
              << " must be a compile-time constant, or the output shape must "
                 "be declared static: "
              << what
              << " computed at run time with an undeclared output shape is "
                 "not supported (with symbolic dimensions Kiln follows "
                 "integer shape arithmetic: Shape, Size, Gather, Slice, "
                 "Concat, Add, Sub, Mul, Div, Mod, Max, Min, Where; sizes "
                 "rounded in floating point, such as ceil(h / 32.0), are "
                 "beyond it: give those dimensions one size)";
  return failure();
}

void mlir::kiln::guardInput(OnnxNode &node, Value ok, unsigned input,
                            const Twine &expectation) {
  std::string msg =
      node.describe() + ": " + inputDesc(node, input) + " " + expectation.str();
  GuardOp::create(node.builder, node.loc(), ok,
                  node.builder.getStringAttr(msg));
}

Value mlir::kiln::constI64(OnnxNode &node, ArrayRef<int64_t> values,
                           ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, node.builder.getI64Type());
  return ConstantOp::create(node.builder, node.loc(), type,
                            DenseElementsAttr::get(type, values));
}

Value mlir::kiln::constBool(OnnxNode &node, ArrayRef<bool> values,
                            ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, node.builder.getI1Type());
  return ConstantOp::create(node.builder, node.loc(), type,
                            DenseElementsAttr::get(type, values));
}

Value mlir::kiln::constF32(OnnxNode &node, ArrayRef<float> values,
                           ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, node.builder.getF32Type());
  return ConstantOp::create(node.builder, node.loc(), type,
                            DenseElementsAttr::get(type, values));
}

FailureOr<Value> mlir::kiln::castTo(OnnxNode &node, Value v, Type elt) {
  if (typeOf(v).getElementType() == elt)
    return v;
  return build<CastOp>(node, v, TypeAttr::get(elt));
}

FailureOr<Value> mlir::kiln::elementAt(OnnxNode &node, Value v, int64_t j) {
  if (typeOf(v).getRank() == 0)
    return v;
  Builder &b = node.builder;
  FailureOr<Value> s =
      build<SliceOp>(node, v, b.getDenseI64ArrayAttr({j}),
                     b.getDenseI64ArrayAttr({1}), b.getDenseI64ArrayAttr({1}));
  if (failed(s))
    return failure();
  return reshapeTo(node, *s, {});
}

FailureOr<Value> mlir::kiln::allOf(OnnxNode &node, Value cond) {
  RankedTensorType t = typeOf(cond);
  if (t.getRank() == 0)
    return cond;
  FailureOr<Value> f = castTo(node, cond, node.builder.getF32Type());
  if (failed(f))
    return failure();
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < t.getRank(); ++d)
    axes.push_back(d);
  FailureOr<Value> m =
      build<ReduceMinOp>(node, *f, node.builder.getDenseI64ArrayAttr(axes),
                         node.builder.getBoolAttr(false));
  if (failed(m))
    return failure();
  return castTo(node, *m, node.builder.getI1Type());
}

LogicalResult mlir::kiln::guardEquals(OnnxNode &node, unsigned input,
                                      ArrayRef<int64_t> expected,
                                      const Twine &what) {
  FailureOr<Value> v = node.rankedInput(input);
  if (failed(v))
    return failure();
  RankedTensorType t = typeOf(*v);
  if (!t.hasStaticShape() || t.getNumElements() != (int64_t)expected.size()) {
    node.fail() << inputDesc(node, input) << " has type " << t << "; "
                << what << " needs " << expected.size() << " values";
    return failure();
  }
  FailureOr<Value> i = castTo(node, *v, node.builder.getI64Type());
  if (failed(i))
    return failure();
  FailureOr<Value> eq =
      build<EqualOp>(node, *i, constI64(node, expected, t.getShape()));
  if (failed(eq))
    return failure();
  SmallVector<std::string> vals;
  for (int64_t e : expected)
    vals.push_back(std::to_string(e));
  guardInput(node, *eq, input,
             "must be [" + llvm::join(vals, ", ") + "]: " + what +
                 " this model was compiled for");
  return success();
}

FailureOr<Value> mlir::kiln::axesCounts(OnnxNode &node, Value axes,
                                        int64_t rank) {
  RankedTensorType t = typeOf(axes);
  if (!t.hasStaticShape() || t.getRank() > 1) {
    node.fail() << "axes of type " << t << " are not supported; Kiln needs "
                   "a 1-D tensor of static length";
    return failure();
  }
  int64_t k = t.getNumElements();
  if (k == 0)
    return constF32(node, SmallVector<float>(rank, 0.0f), {rank});
  FailureOr<Value> a = castTo(node, axes, node.builder.getI64Type());
  if (failed(a))
    return failure();
  FailureOr<Value> neg = build<LessOp>(node, *a, constI64(node, {0}, {}));
  FailureOr<Value> wrapped =
      failed(neg) ? FailureOr<Value>(failure())
                  : build<AddOp>(node, *a, constI64(node, {rank}, {}));
  if (failed(wrapped))
    return failure();
  FailureOr<Value> norm = build<WhereOp>(node, *neg, *wrapped, *a);
  if (failed(norm))
    return failure();
  FailureOr<Value> col = reshapeTo(node, *norm, {k, 1});
  if (failed(col))
    return failure();
  SmallVector<int64_t> iota;
  for (int64_t p = 0; p < rank; ++p)
    iota.push_back(p);
  FailureOr<Value> eq = build<EqualOp>(node, *col, constI64(node, iota, {1, rank}));
  if (failed(eq))
    return failure();
  FailureOr<Value> f = castTo(node, *eq, node.builder.getF32Type());
  if (failed(f))
    return failure();
  return build<ReduceSumOp>(node, *f, node.builder.getDenseI64ArrayAttr({0}),
                            node.builder.getBoolAttr(false));
}

FailureOr<Value> mlir::kiln::countsAre(OnnxNode &node, Value counts,
                                       ArrayRef<int64_t> set, int64_t rank) {
  SmallVector<float> ind(rank, 0.0f);
  for (int64_t p : set)
    ind[p] = 1.0f;
  FailureOr<Value> eq = build<EqualOp>(node, counts, constF32(node, ind, {rank}));
  if (failed(eq))
    return failure();
  return allOf(node, *eq);
}

SmallVector<SmallVector<int64_t>>
mlir::kiln::subsets(ArrayRef<int64_t> positions, int64_t k) {
  SmallVector<SmallVector<int64_t>> out;
  SmallVector<int64_t> cur;
  std::function<void(size_t)> rec = [&](size_t i) {
    if ((int64_t)cur.size() == k) {
      out.push_back(cur);
      return;
    }
    if (i == positions.size() || out.size() > 256)
      return;
    cur.push_back(positions[i]);
    rec(i + 1);
    cur.pop_back();
    rec(i + 1);
  };
  if (k >= 0 && k <= (int64_t)positions.size())
    rec(0);
  return out;
}

std::optional<SmallVector<int64_t>>
mlir::kiln::readAxes(OnnxNode &node, int64_t inputSince, bool &ok) {
  ok = true;
  if (node.opset < inputSince)
    return node.intsAttr("axes");
  if (!node.input(1))
    return std::nullopt;
  if (auto t = dyn_cast<RankedTensorType>(node.input(1).getType()))
    if (t.hasStaticShape() && t.getNumElements() == 0)
      return SmallVector<int64_t>();
  std::optional<SmallVector<int64_t>> axes = node.constantInts(1);
  if (!axes) {
    node.fail() << "axes must be a compile-time constant";
    ok = false;
  }
  return axes;
}

bool mlir::kiln::runtimeInput(OnnxNode &node, unsigned i) {
  Value v = node.input(i);
  if (!v || node.constantInput(i))
    return false;
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return !(t && t.hasStaticShape() && t.getNumElements() == 0);
}

SmallVector<int64_t> mlir::kiln::without(ArrayRef<int64_t> shape,
                                         ArrayRef<int64_t> removed) {
  SmallVector<int64_t> out;
  for (auto [p, d] : llvm::enumerate(shape))
    if (!llvm::is_contained(removed, (int64_t)p))
      out.push_back(d);
  return out;
}

FailureOr<SmallVector<AxesChoice>>
mlir::kiln::axesChoices(OnnxNode &node, ArrayRef<SmallVector<int64_t>> sets,
                        int64_t rank, const Twine &expectation) {
  if (sets.empty()) {
    node.fail() << "no axes give the declared output shape";
    return failure();
  }
  FailureOr<Value> counts = axesCounts(node, node.input(1), rank);
  if (failed(counts))
    return failure();
  SmallVector<AxesChoice> choices;
  Value any;
  for (const SmallVector<int64_t> &set : sets) {
    FailureOr<Value> when = countsAre(node, *counts, set, rank);
    if (failed(when))
      return failure();
    choices.push_back({set, *when});
    if (!any) {
      any = *when;
    } else {
      FailureOr<Value> o = build<OrOp>(node, any, *when);
      if (failed(o))
        return failure();
      any = *o;
    }
  }
  guardInput(node, any, 1, expectation);
  return choices;
}
