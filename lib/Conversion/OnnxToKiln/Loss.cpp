//===- Loss.cpp - ONNX loss functions ---------------------------*- C++ -*-===//
//
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss are decomposed into
// graph ops: the log-probability of each target class is picked with one
// kiln.gather_elements along the class axis (O(N * d) work, not a one-hot
// over C), its weight with one kiln.gather, and ignored targets are masked
// with kiln.where.
//
//===----------------------------------------------------------------------===//
#include "Build.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// 0, 1, ..., rank - 1.
SmallVector<int64_t> allAxes(int64_t rank) {
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < rank; ++d)
    axes.push_back(d);
  return axes;
}

/// The negative log-likelihood of `logProb` ([N, C, d1..dk]) at `target`
/// ([N, d1..dk]) with the node's weight input `weightIdx` (optional [C]),
/// reduction and ignore_index. Ignored targets contribute 0 and weigh 0;
/// "mean" divides by the summed weights of the other targets.
FailureOr<Value> negativeLogLikelihood(OnnxNode &node, Value logProb,
                                       Value target, unsigned weightIdx) {
  RankedTensorType xType = typeOf(logProb), tType = typeOf(target);
  if (failed(node.requireStaticShape(xType)) ||
      failed(node.requireStaticShape(tType)))
    return failure();
  int64_t rank = xType.getRank();
  if (rank < 2) {
    node.fail() << "the input must have shape [N, C] or [N, C, d1, ...], got "
                << xType;
    return failure();
  }
  SmallVector<int64_t> lossShape(xType.getShape());
  lossShape.erase(lossShape.begin() + 1);
  if (tType.getShape() != ArrayRef<int64_t>(lossShape)) {
    node.fail() << "the target shape " << tType
                << " must be the input shape without dimension 1";
    return failure();
  }
  Type elt = xType.getElementType(), idxElt = tType.getElementType();
  if (!idxElt.isInteger(32) && !idxElt.isInteger(64)) {
    node.fail() << "target element type " << idxElt
                << " is not supported; Kiln reads int32 and int64 targets";
    return failure();
  }
  std::string reduction = node.strAttr("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    node.fail() << "reduction '" << reduction
                << "' is not supported; expected none, sum or mean";
    return failure();
  }
  Value weight = node.input(weightIdx);
  if (weight) {
    RankedTensorType wType = typeOf(weight);
    if (wType.getRank() != 1 || wType.getDimSize(0) != xType.getDimSize(1) ||
        wType.getElementType() != elt) {
      node.fail() << "the weight " << wType << " must have shape ["
                  << xType.getDimSize(1) << "] and type " << elt;
      return failure();
    }
  }
  auto &b = node.builder;

  // -logProb[n, target[n, d...], d...]; gather_elements clamps the index,
  // so ignored (possibly out-of-range) targets read a harmless element.
  SmallVector<int64_t> idxShape(lossShape);
  idxShape.insert(idxShape.begin() + 1, 1);
  FailureOr<Value> idx = reshapeTo(node, target, idxShape);
  if (failed(idx))
    return failure();
  FailureOr<Value> loss = build<GatherElementsOp>(node, logProb, *idx,
                                                  b.getI64IntegerAttr(1));
  if (succeeded(loss))
    loss = reshapeTo(node, *loss, lossShape);
  if (succeeded(loss))
    loss = build<NegOp>(node, *loss);
  if (failed(loss))
    return failure();

  // The weight of each target, when there is one.
  FailureOr<Value> w = Value();
  if (weight) {
    w = build<GatherOp>(node, weight, target, b.getI64IntegerAttr(0));
    if (succeeded(w))
      loss = build<MulOp>(node, *loss, *w);
    if (failed(w) || failed(loss))
      return failure();
  }

  // ignore_index: no default; a value the target type cannot hold never
  // matches.
  if (node.hasAttr("ignore_index")) {
    int64_t ii = node.intAttr("ignore_index", 0);
    bool representable =
        idxElt.isInteger(64) || (ii >= INT32_MIN && ii <= INT32_MAX);
    if (representable) {
      FailureOr<Value> ignored =
          build<EqualOp>(node, target, scalarConstant(node, idxElt, ii));
      if (failed(ignored))
        return failure();
      Value zero = scalarConstant(node, elt, 0.0);
      loss = build<WhereOp>(node, *ignored, zero, *loss);
      if (failed(loss))
        return failure();
      if (reduction == "mean")
        w = build<WhereOp>(node, *ignored, zero,
                           *w ? *w : scalarConstant(node, elt, 1.0));
      if (failed(w))
        return failure();
    }
  }

  if (reduction == "none")
    return loss;
  SmallVector<int64_t> axes = allAxes(rank - 1);
  if (reduction == "mean" && !*w)
    return build<ReduceMeanOp>(node, *loss, b.getDenseI64ArrayAttr(axes),
                               b.getBoolAttr(false));
  FailureOr<Value> sum = build<ReduceSumOp>(
      node, *loss, b.getDenseI64ArrayAttr(axes), b.getBoolAttr(false));
  if (failed(sum) || reduction == "sum")
    return sum;
  FailureOr<Value> total = build<ReduceSumOp>(
      node, *w, b.getDenseI64ArrayAttr(axes), b.getBoolAttr(false));
  if (failed(total))
    return failure();
  return build<DivOp>(node, *sum, *total);
}

} // namespace

/// NegativeLogLikelihoodLoss 12, 13.
FailureOr<SmallVector<Value>>
mlir::kiln::convertNegativeLogLikelihoodLoss(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0), target = node.rankedInput(1);
  if (failed(x) || failed(target))
    return failure();
  return one(negativeLogLikelihood(node, *x, *target, 2));
}

/// SoftmaxCrossEntropyLoss 12, 13: LogSoftmax over the class axis (the
/// optional second output), then the negative log-likelihood.
FailureOr<SmallVector<Value>>
mlir::kiln::convertSoftmaxCrossEntropyLoss(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0), target = node.rankedInput(1);
  if (failed(x) || failed(target))
    return failure();
  if (typeOf(*x).getRank() < 2) {
    node.fail() << "the scores must have shape [N, C] or [N, C, d1, ...], got "
                << x->getType();
    return failure();
  }
  FailureOr<Value> logProb = logSoftmax(node, *x, 1);
  if (failed(logProb))
    return failure();
  FailureOr<Value> loss = negativeLogLikelihood(node, *logProb, *target, 2);
  if (failed(loss))
    return failure();
  return SmallVector<Value>{*loss, node.resultUsed(1) ? *logProb : Value()};
}
