//===- Training.cpp - ai.onnx.preview.training optimizers -------*- C++ -*-===//
//
// The optimizer update rules of the ai.onnx.preview.training domain
// (Adagrad, Momentum, Adam) are elementwise formulas over the tensors being
// optimized, with the learning rate R and the step count T as run-time
// scalars. They are built from kiln elementwise ops; a compiled model applies
// one optimizer step per run.
//
//===----------------------------------------------------------------------===//
#include "Build.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Small expression builder over one node: every op is built, verified and
/// folded through build<>; the first failure sticks.
class Expr {
public:
  explicit Expr(OnnxNode &node) : node(node) {}

  Value scalar(double v) {
    return scalarConstant(node, node.builder.getF32Type(), v);
  }
  template <typename OpTy> Value op(Value a, Value b) {
    if (!ok || !a || !b)
      return fail();
    FailureOr<Value> r = build<OpTy>(node, a, b);
    return failed(r) ? fail() : *r;
  }
  template <typename OpTy> Value op(Value a) {
    if (!ok || !a)
      return fail();
    FailureOr<Value> r = build<OpTy>(node, a);
    return failed(r) ? fail() : *r;
  }
  Value add(Value a, Value b) { return op<AddOp>(a, b); }
  Value sub(Value a, Value b) { return op<SubOp>(a, b); }
  Value mul(Value a, Value b) { return op<MulOp>(a, b); }
  Value div(Value a, Value b) { return op<DivOp>(a, b); }
  Value where(Value c, Value a, Value b) {
    if (!ok || !c || !a || !b)
      return fail();
    FailureOr<Value> r = build<WhereOp>(node, c, a, b);
    return failed(r) ? fail() : *r;
  }
  Value toF32(Value v) {
    if (!ok || !v)
      return fail();
    if (typeOf(v).getElementType().isF32())
      return v;
    FailureOr<Value> r =
        build<CastOp>(node, v, TypeAttr::get(node.builder.getF32Type()));
    return failed(r) ? fail() : *r;
  }
  /// g + norm * x (the gradient of the L2 regularization term added).
  Value regularized(Value x, Value g, double norm) {
    return norm == 0.0 ? g : add(mul(scalar(norm), x), g);
  }
  bool ok = true;

private:
  Value fail() {
    ok = false;
    return Value();
  }
  OnnxNode &node;
};

/// Checks the optimizer's signature: R, T, then `groups` groups of n tensors
/// (X, G, and the optimizer's state), and as many outputs as state groups.
/// Returns n.
FailureOr<int64_t> tensorsPerGroup(OnnxNode &node, int64_t groups,
                                   int64_t outputGroups) {
  int64_t rest = (int64_t)node.numInputs() - 2;
  if (rest <= 0 || rest % groups) {
    node.fail() << "expects R, T and " << groups
                << " groups of equally many tensors; got "
                << node.numInputs() << " inputs";
    return failure();
  }
  int64_t n = rest / groups;
  if ((int64_t)node.op->getNumResults() != n * outputGroups) {
    node.fail() << "expects " << n * outputGroups << " outputs for " << n
                << " optimized tensors";
    return failure();
  }
  for (unsigned i = 0; i < node.numInputs(); ++i) {
    FailureOr<Value> v = node.rankedInput(i);
    if (failed(v))
      return failure();
    if (i != 1 && !typeOf(*v).getElementType().isF32()) {
      node.fail() << "element type " << typeOf(*v).getElementType()
                  << " is not supported; Kiln's optimizers update float32 "
                     "tensors";
      return failure();
    }
  }
  return n;
}
} // namespace

FailureOr<SmallVector<Value>> mlir::kiln::convertAdagrad(OnnxNode &node) {
  FailureOr<int64_t> n = tensorsPerGroup(node, 3, 2);
  if (failed(n))
    return failure();
  Expr e(node);
  double decay = node.floatAttr("decay_factor", 0.0f);
  double eps = node.floatAttr("epsilon", 1e-6f);
  double norm = node.floatAttr("norm_coefficient", 0.0f);
  Value r = node.input(0), t = e.toF32(node.input(1));
  // r / (1 + t * decay)
  Value rate = e.div(r, e.add(e.scalar(1.0), e.mul(t, e.scalar(decay))));
  SmallVector<Value> xs, hs;
  for (int64_t i = 0; i < *n; ++i) {
    Value x = node.input(2 + i), g = node.input(2 + *n + i),
          h = node.input(2 + 2 * *n + i);
    Value gr = e.regularized(x, g, norm);
    Value hNew = e.add(h, e.mul(gr, gr));
    Value hSqrt = e.add(e.op<SqrtOp>(hNew), e.scalar(eps));
    xs.push_back(e.sub(x, e.div(e.mul(rate, gr), hSqrt)));
    hs.push_back(hNew);
  }
  if (!e.ok)
    return failure();
  xs.append(hs);
  return xs;
}

FailureOr<SmallVector<Value>> mlir::kiln::convertMomentum(OnnxNode &node) {
  FailureOr<int64_t> n = tensorsPerGroup(node, 3, 2);
  if (failed(n))
    return failure();
  std::string mode = node.strAttr("mode", "");
  if (mode != "standard" && mode != "nesterov") {
    node.fail() << "mode must be 'standard' or 'nesterov', got '" << mode
                << "'";
    return failure();
  }
  Expr e(node);
  double alpha = node.floatAttr("alpha", 0.0f);
  double beta = node.floatAttr("beta", 0.0f);
  double norm = node.floatAttr("norm_coefficient", 0.0f);
  Value r = node.input(0), t = e.toF32(node.input(1));
  // beta, except 1 at the first step (T = 0).
  Value betaAdj = e.where(e.op<GreaterOp>(t, e.scalar(0.0)), e.scalar(beta),
                          e.scalar(1.0));
  SmallVector<Value> xs, vs;
  for (int64_t i = 0; i < *n; ++i) {
    Value x = node.input(2 + i), g = node.input(2 + *n + i),
          v = node.input(2 + 2 * *n + i);
    Value gr = e.regularized(x, g, norm);
    Value vNew = e.add(e.mul(e.scalar(alpha), v), e.mul(betaAdj, gr));
    Value step = mode == "standard"
                     ? vNew
                     : e.add(gr, e.mul(e.scalar(alpha), vNew));
    xs.push_back(e.sub(x, e.mul(r, step)));
    vs.push_back(vNew);
  }
  if (!e.ok)
    return failure();
  xs.append(vs);
  return xs;
}

FailureOr<SmallVector<Value>> mlir::kiln::convertAdam(OnnxNode &node) {
  FailureOr<int64_t> n = tensorsPerGroup(node, 4, 3);
  if (failed(n))
    return failure();
  Expr e(node);
  double alpha = node.floatAttr("alpha", 0.9f);
  double beta = node.floatAttr("beta", 0.999f);
  double eps = node.floatAttr("epsilon", 1e-6f);
  double norm = node.floatAttr("norm_coefficient", 0.0f);
  double post = node.floatAttr("norm_coefficient_post", 0.0f);
  Value r = node.input(0), t = e.toF32(node.input(1));
  // Bias correction from the second step on:
  // r * sqrt(1 - beta^t) / (1 - alpha^t) when t > 0, else r.
  Value one = e.scalar(1.0);
  Value corrected = e.div(
      e.mul(r, e.op<SqrtOp>(e.sub(one, e.op<PowOp>(e.scalar(beta), t)))),
      e.sub(one, e.op<PowOp>(e.scalar(alpha), t)));
  Value rate = e.where(e.op<GreaterOp>(t, e.scalar(0.0)), corrected, r);
  SmallVector<Value> xs, vs, hs;
  for (int64_t i = 0; i < *n; ++i) {
    Value x = node.input(2 + i), g = node.input(2 + *n + i),
          v = node.input(2 + 2 * *n + i), h = node.input(2 + 3 * *n + i);
    Value gr = e.regularized(x, g, norm);
    Value vNew = e.add(e.mul(e.scalar(alpha), v), e.mul(e.scalar(1 - alpha), gr));
    Value hNew =
        e.add(e.mul(e.scalar(beta), h), e.mul(e.scalar(1 - beta), e.mul(gr, gr)));
    Value hSqrt = e.add(e.op<SqrtOp>(hNew), e.scalar(eps));
    Value xNew = e.sub(x, e.mul(rate, e.div(vNew, hSqrt)));
    if (post != 0.0)
      xNew = e.mul(e.scalar(1 - post), xNew);
    xs.push_back(xNew);
    vs.push_back(vNew);
    hs.push_back(hNew);
  }
  if (!e.ok)
    return failure();
  xs.append(vs);
  xs.append(hs);
  return xs;
}
