//===- ShapeInputs.cpp - shape arguments given at run time ------*- C++ -*-===//
//
// The guard helpers of ShapeInputs.h, and the ONNX ops whose output shape is
// decided by an input's values: Expand, Tile, ConstantOfShape, Range,
// OneHot, EyeLike and the window functions. Each takes its shape from the
// constant input when there is one, and otherwise from the output shape the
// model declares, with a kiln.guard that the run-time values agree.
//
//===----------------------------------------------------------------------===//
#include "ShapeInputs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;

namespace {
std::string shapeStr(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "a scalar";
  std::string s;
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "x" : "") + std::to_string(d);
  return s;
}

/// "graph input 'shape' (input 1)" or "input 1".
std::string inputDesc(OnnxNode &node, unsigned i) {
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

/// The static shape `v` must have because it flows, through elementwise ONNX
/// ops whose other operands are scalars or equally unknown (shape-preserving),
/// into a value whose type is declared static (a graph output, or an op ONNX
/// typed). The guard on `v`'s arguments still checks it at run time: a wrong
/// guess here can only refuse inputs, never compute wrong numbers.
std::optional<SmallVector<int64_t>> shapeFromUses(Value v, int depth) {
  static const llvm::StringSet<> elementwise = {
      "Add",  "Sub",  "Mul",     "Div",  "Pow",   "Max",     "Min",
      "Cos",  "Sin",  "Tan",     "Neg",  "Abs",   "Exp",     "Log",
      "Sqrt", "Relu", "Sigmoid", "Tanh", "Cast",  "Ceil",    "Floor",
      "Round", "Erf", "Sign",    "Identity", "Reciprocal", "Clip"};
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
    bool othersScalar = llvm::all_of(user->getOpOperands(), [&](OpOperand &o) {
      if (&o == &use || isa<NoneType>(o.get().getType()))
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
                 "be declared static: a run-time "
              << what
              << " with an undeclared output shape is not supported (Kiln "
                 "compiles static shapes)";
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

namespace {
/// A constant of `type` whose element at row-major position i is f(i).
Value constantOf(OnnxNode &node, RankedTensorType type,
                 const std::function<double(int64_t)> &f) {
  Type elt = type.getElementType();
  SmallVector<Attribute> values;
  for (int64_t i = 0, n = type.getNumElements(); i < n; ++i) {
    double v = f(i);
    if (auto ft = dyn_cast<FloatType>(elt))
      values.push_back(FloatAttr::get(ft, v));
    else
      values.push_back(IntegerAttr::get(elt, (int64_t)v));
  }
  return ConstantOp::create(node.builder, node.loc(), type,
                            DenseElementsAttr::get(type, values));
}

/// Builds a kiln.expand of `x` to `type`, folded like build().
FailureOr<Value> expandTo(OnnxNode &node, Value x, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, typeOf(x).getElementType());
  if (typeOf(x) == type)
    return x;
  auto op = ExpandOp::create(node.builder, node.loc(), type, x);
  if (failed(finishBuild(node, op)))
    return failure();
  return foldBuilt(node, op);
}

} // namespace

/// Expand 8, 13: numpy broadcasting of the input with `shape`.
FailureOr<SmallVector<Value>> mlir::kiln::convertExpand(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x) || failed(node.requireStaticShape(typeOf(*x))))
    return failure();
  ArrayRef<int64_t> in = typeOf(*x).getShape();
  auto broadcastOf = [&](ArrayRef<int64_t> s) -> FailureOr<SmallVector<int64_t>> {
    int64_t r = std::max(in.size(), s.size());
    SmallVector<int64_t> out(r);
    for (int64_t p = 0; p < r; ++p) {
      int64_t a = p - (r - (int64_t)in.size()) >= 0 ? in[p - (r - in.size())] : 1;
      int64_t b = p - (r - (int64_t)s.size()) >= 0 ? s[p - (r - s.size())] : 1;
      if (a != b && a != 1 && b != 1) {
        node.fail() << "cannot broadcast input shape " << shapeStr(in)
                    << " with shape " << shapeStr(s);
        return failure();
      }
      out[p] = a == 1 ? b : a;
    }
    return out;
  };
  if (std::optional<SmallVector<int64_t>> s = node.constantInts(1)) {
    FailureOr<SmallVector<int64_t>> out = broadcastOf(*s);
    if (failed(out))
      return failure();
    return one(expandTo(node, *x, *out));
  }
  FailureOr<RankedTensorType> declared = declaredResult(node, 0, "shape");
  FailureOr<Value> s = node.rankedInput(1);
  if (failed(declared) || failed(s))
    return failure();
  ArrayRef<int64_t> out = declared->getShape();
  RankedTensorType st = typeOf(*s);
  int64_t r = out.size();
  if (st.getRank() != 1 || !st.hasStaticShape() || st.getDimSize(0) > r ||
      (int64_t)in.size() > r) {
    node.fail() << "shape of type " << st << " cannot give the declared "
                << "output shape " << shapeStr(out);
    return failure();
  }
  int64_t k = st.getDimSize(0);
  // Entry j of `shape` lines up with output dimension p = r - k + j: it must
  // be that dimension, or 1 where the input already has it.
  SmallVector<int64_t> want;
  SmallVector<bool> oneOk;
  for (int64_t p = 0; p < r; ++p) {
    int64_t a = p - (r - (int64_t)in.size()) >= 0 ? in[p - (r - in.size())] : 1;
    if (a != out[p] && a != 1) {
      node.fail() << "input shape " << shapeStr(in)
                  << " does not broadcast to the declared output shape "
                  << shapeStr(out);
      return failure();
    }
    if (p < r - k) {
      if (a != out[p]) {
        node.fail() << "shape has " << k << " entries, too few for the "
                    << "declared output shape " << shapeStr(out);
        return failure();
      }
      continue;
    }
    want.push_back(out[p]);
    oneOk.push_back(a == out[p]);
  }
  FailureOr<Value> si = castTo(node, *s, node.builder.getI64Type());
  if (failed(si))
    return failure();
  FailureOr<Value> eq = build<EqualOp>(node, *si, constI64(node, want, {k}));
  FailureOr<Value> isOne =
      failed(eq) ? FailureOr<Value>(failure())
                 : build<EqualOp>(node, *si,
                                  constI64(node, SmallVector<int64_t>(k, 1), {k}));
  FailureOr<Value> oneFine =
      failed(isOne) ? FailureOr<Value>(failure())
                    : build<AndOp>(node, *isOne, constBool(node, oneOk, {k}));
  FailureOr<Value> ok =
      failed(oneFine) ? FailureOr<Value>(failure()) : build<OrOp>(node, *eq, *oneFine);
  if (failed(ok))
    return failure();
  guardInput(node, *ok, 1,
             "must broadcast the input " + shapeStr(in) + " to " +
                 shapeStr(out) + ", the output shape this model was compiled "
                                 "for");
  return one(expandTo(node, *x, out));
}

/// Tile 6, 13: interleave size-1 dimensions, broadcast them to the repeats,
/// merge each pair.
FailureOr<SmallVector<Value>> mlir::kiln::convertTile(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x) || failed(node.requireStaticShape(typeOf(*x))))
    return failure();
  ArrayRef<int64_t> in = typeOf(*x).getShape();
  int64_t r = in.size();
  SmallVector<int64_t> reps;
  if (std::optional<SmallVector<int64_t>> c = node.constantInts(1)) {
    reps = *c;
    if ((int64_t)reps.size() != r ||
        llvm::any_of(reps, [](int64_t v) { return v < 0; })) {
      node.fail() << "repeats must have " << r << " non-negative entries";
      return failure();
    }
  } else {
    FailureOr<RankedTensorType> declared = declaredResult(node, 0, "repeats");
    if (failed(declared))
      return failure();
    if (declared->getRank() != r) {
      node.fail() << "the declared output rank " << declared->getRank()
                  << " differs from the input rank " << r;
      return failure();
    }
    SmallVector<bool> anyOk;
    for (int64_t d = 0; d < r; ++d) {
      int64_t o = declared->getDimSize(d);
      if (in[d] == 0 ? o != 0 : o % in[d]) {
        node.fail() << "the declared output shape "
                    << shapeStr(declared->getShape())
                    << " is not a tiling of the input shape " << shapeStr(in);
        return failure();
      }
      reps.push_back(in[d] ? o / in[d] : 0);
      anyOk.push_back(in[d] == 0);
    }
    FailureOr<Value> rv = node.rankedInput(1);
    if (failed(rv))
      return failure();
    if (!typeOf(*rv).hasStaticShape() || typeOf(*rv).getNumElements() != r) {
      node.fail() << "repeats must have " << r << " entries";
      return failure();
    }
    FailureOr<Value> ri = castTo(node, *rv, node.builder.getI64Type());
    FailureOr<Value> eq =
        failed(ri) ? FailureOr<Value>(failure()) : build<EqualOp>(node, *ri, constI64(node, reps, {r}));
    FailureOr<Value> ok =
        failed(eq) ? FailureOr<Value>(failure()) : build<OrOp>(node, *eq, constBool(node, anyOk, {r}));
    if (failed(ok))
      return failure();
    guardInput(node, *ok, 1,
               "must tile " + shapeStr(in) + " to " +
                   shapeStr(declared->getShape()) +
                   ", the output shape this model was compiled for");
  }
  SmallVector<int64_t> spread, wide, out;
  for (int64_t d = 0; d < r; ++d) {
    spread.append({1, in[d]});
    wide.append({reps[d], in[d]});
    out.push_back(reps[d] * in[d]);
  }
  FailureOr<Value> v = reshapeTo(node, *x, spread);
  if (succeeded(v))
    v = expandTo(node, *v, wide);
  if (succeeded(v))
    v = reshapeTo(node, *v, out);
  return one(v);
}

/// ConstantOfShape 9, 20, 21: a splat of `value` (default float 0).
FailureOr<SmallVector<Value>>
mlir::kiln::convertConstantOfShape(OnnxNode &node) {
  SmallVector<int64_t> shape;
  if (std::optional<SmallVector<int64_t>> c = node.constantInts(0)) {
    shape = *c;
  } else {
    FailureOr<RankedTensorType> declared = declaredResult(node, 0, "the shape");
    if (failed(declared))
      return failure();
    shape.assign(declared->getShape().begin(), declared->getShape().end());
    if (failed(guardEquals(node, 0, shape, "the output shape")))
      return failure();
  }
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; })) {
    node.fail() << "shape " << shapeStr(shape) << " has a negative dimension";
    return failure();
  }
  Attribute value = node.builder.getF32FloatAttr(0.0f);
  if (auto v = node.op->getAttrOfType<DenseElementsAttr>("value")) {
    if (v.getNumElements() != 1) {
      node.fail() << "value must have exactly one element";
      return failure();
    }
    value = *v.getValues<Attribute>().begin();
  } else if (node.hasAttr("value")) {
    node.fail() << "only an inline dense 'value' is supported";
    return failure();
  }
  auto type = RankedTensorType::get(shape, cast<TypedAttr>(value).getType());
  Value c = ConstantOp::create(node.builder, node.loc(), type,
                               DenseElementsAttr::get(type, value));
  return SmallVector<Value>{c};
}

/// Range 11: start + i * delta for i < max(ceil((limit - start) / delta), 0).
FailureOr<SmallVector<Value>> mlir::kiln::convertRange(OnnxNode &node) {
  FailureOr<Value> start = node.rankedInput(0), limit = node.rankedInput(1),
                   delta = node.rankedInput(2);
  if (failed(start) || failed(limit) || failed(delta))
    return failure();
  Type elt = typeOf(*start).getElementType();
  int64_t n;
  std::optional<double> s = node.constantScalar(0), l = node.constantScalar(1),
                        d = node.constantScalar(2);
  if (s && l && d) {
    if (*d == 0) {
      node.fail() << "delta must not be 0";
      return failure();
    }
    n = (int64_t)std::max(std::ceil((*l - *s) / *d), 0.0);
  } else {
    FailureOr<RankedTensorType> declared =
        declaredResult(node, 0, "start, limit and delta");
    if (failed(declared))
      return failure();
    if (declared->getRank() != 1) {
      node.fail() << "the declared output is not 1-D";
      return failure();
    }
    n = declared->getDimSize(0);
    // The count, in f64 (exact for any count that fits in memory).
    Type f64 = node.builder.getF64Type();
    FailureOr<Value> sf = castTo(node, *start, f64), lf = castTo(node, *limit, f64),
                     df = castTo(node, *delta, f64);
    if (failed(sf) || failed(lf) || failed(df))
      return failure();
    FailureOr<Value> q = build<SubOp>(node, *lf, *sf);
    if (succeeded(q))
      q = build<DivOp>(node, *q, *df);
    if (succeeded(q))
      q = build<CeilOp>(node, *q);
    auto f64Const = [&](double v) {
      auto t = RankedTensorType::get({}, f64);
      return ConstantOp::create(node.builder, node.loc(), t,
                                DenseElementsAttr::get(t, v));
    };
    if (succeeded(q))
      q = build<MaxOp>(node, *q, f64Const(0.0));
    if (succeeded(q))
      q = build<EqualOp>(node, *q, f64Const((double)n));
    if (failed(q))
      return failure();
    guardInput(node, *q, 1,
               "with start and delta must give " + std::to_string(n) +
                   " elements, the output length this model was compiled "
                   "for");
  }
  auto iotaType = RankedTensorType::get({n}, elt);
  Value iota = constantOf(node, iotaType, [](int64_t i) { return (double)i; });
  FailureOr<Value> v = build<MulOp>(node, iota, *delta);
  if (succeeded(v))
    v = build<AddOp>(node, *v, *start);
  return one(v);
}

/// OneHot 9, 11: on where the (wrapped) index equals the position along
/// `axis`, off elsewhere.
FailureOr<SmallVector<Value>> mlir::kiln::convertOneHot(OnnxNode &node) {
  FailureOr<Value> indices = node.rankedInput(0), values = node.rankedInput(2);
  if (failed(indices) || failed(values) ||
      failed(node.requireStaticShape(typeOf(*indices))))
    return failure();
  ArrayRef<int64_t> in = typeOf(*indices).getShape();
  int64_t r = in.size() + 1;
  FailureOr<int64_t> axis = normalizeAxis(node, node.intAttr("axis", -1), r);
  if (failed(axis))
    return failure();
  int64_t depth;
  if (std::optional<double> c = node.constantScalar(1)) {
    depth = (int64_t)*c;
  } else {
    FailureOr<RankedTensorType> declared = declaredResult(node, 0, "depth");
    if (failed(declared))
      return failure();
    if (declared->getRank() != r) {
      node.fail() << "the declared output rank " << declared->getRank()
                  << " is not the indices' rank + 1";
      return failure();
    }
    depth = declared->getDimSize(*axis);
    if (failed(guardEquals(node, 1, {depth}, "the depth")))
      return failure();
  }
  if (typeOf(*values).getNumElements() != 2) {
    node.fail() << "values must hold [off, on]";
    return failure();
  }
  FailureOr<Value> idx = castTo(node, *indices, node.builder.getI64Type());
  if (failed(idx))
    return failure();
  FailureOr<Value> neg = build<LessOp>(node, *idx, constI64(node, {0}, {}));
  FailureOr<Value> wrapped =
      failed(neg) ? FailureOr<Value>(failure()) : build<AddOp>(node, *idx, constI64(node, {depth}, {}));
  if (failed(wrapped))
    return failure();
  idx = build<WhereOp>(node, *neg, *wrapped, *idx);
  SmallVector<int64_t> withOne(in), iotaShape(r, 1);
  withOne.insert(withOne.begin() + *axis, 1);
  iotaShape[*axis] = depth;
  if (succeeded(idx))
    idx = reshapeTo(node, *idx, withOne);
  if (failed(idx))
    return failure();
  SmallVector<int64_t> iota;
  for (int64_t i = 0; i < depth; ++i)
    iota.push_back(i);
  FailureOr<Value> hit = build<EqualOp>(node, *idx, constI64(node, iota, iotaShape));
  FailureOr<Value> off = elementAt(node, *values, 0),
                   on = elementAt(node, *values, 1);
  if (failed(hit) || failed(off) || failed(on))
    return failure();
  return one(build<WhereOp>(node, *hit, *on, *off));
}

/// EyeLike 9, 22: ones on diagonal k of a 2-D input's shape.
FailureOr<SmallVector<Value>> mlir::kiln::convertEyeLike(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x) || failed(node.requireStaticShape(typeOf(*x))))
    return failure();
  RankedTensorType in = typeOf(*x);
  if (in.getRank() != 2) {
    node.fail() << "expects a 2-D input, got rank " << in.getRank();
    return failure();
  }
  Type elt = in.getElementType();
  if (auto declared = dyn_cast<RankedTensorType>(node.op->getResult(0).getType()))
    elt = declared.getElementType();
  int64_t k = node.intAttr("k", 0), cols = in.getDimSize(1);
  auto type = RankedTensorType::get(in.getShape(), elt);
  return SmallVector<Value>{constantOf(node, type, [&](int64_t i) {
    return i % cols - i / cols == k ? 1.0 : 0.0;
  })};
}

namespace {
enum class Window { Hann, Hamming, Blackman };

/// HannWindow, HammingWindow, BlackmanWindow 17: the window of a run-time
/// size is computed at compile time for the declared length.
FailureOr<SmallVector<Value>> window(OnnxNode &node, Window kind) {
  int64_t n;
  Type elt = node.builder.getF32Type();
  auto declared = dyn_cast<RankedTensorType>(node.op->getResult(0).getType());
  if (declared)
    elt = declared.getElementType();
  if (std::optional<double> c = node.constantScalar(0)) {
    n = (int64_t)*c;
  } else {
    FailureOr<RankedTensorType> d = declaredResult(node, 0, "size");
    if (failed(d))
      return failure();
    if (d->getRank() != 1) {
      node.fail() << "the declared output is not 1-D";
      return failure();
    }
    n = d->getDimSize(0);
    if (failed(guardEquals(node, 0, {n}, "the window length")))
      return failure();
  }
  if (n < 0) {
    node.fail() << "size " << n << " is negative";
    return failure();
  }
  double period = node.intAttr("periodic", 1) ? (double)n : (double)(n - 1);
  auto type = RankedTensorType::get({n}, elt);
  return SmallVector<Value>{constantOf(node, type, [&](int64_t i) {
    double a = period > 0 ? 2 * M_PI * (double)i / period : 0.0;
    switch (kind) {
    case Window::Hann:
      return 0.5 - 0.5 * std::cos(a);
    case Window::Hamming:
      return 25.0 / 46.0 - 21.0 / 46.0 * std::cos(a);
    case Window::Blackman:
      return 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2 * a);
    }
    return 0.0;
  })};
}

} // namespace

FailureOr<SmallVector<Value>> mlir::kiln::convertHannWindow(OnnxNode &node) {
  return window(node, Window::Hann);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertHammingWindow(OnnxNode &node) {
  return window(node, Window::Hamming);
}

FailureOr<SmallVector<Value>>
mlir::kiln::convertBlackmanWindow(OnnxNode &node) {
  return window(node, Window::Blackman);
}
