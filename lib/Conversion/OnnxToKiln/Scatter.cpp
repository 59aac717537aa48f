//===- Scatter.cpp - ONNX scatters ------------------------------*- C++ -*-===//
//
// ScatterElements (and the deprecated Scatter, the same op), ScatterND and
// TensorScatter (24, the KV-cache update).
//
//===----------------------------------------------------------------------===//
#include "ShapeInputs.h"
#include "SymbolicSizes.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
FailureOr<StringAttr> reductionAttr(OnnxNode &node) {
  std::string r = node.strAttr("reduction", "none");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min") {
    node.fail() << "reduction '" << r
                << "' is not supported; expected none, add, mul, max or min";
    return failure();
  }
  return node.builder.getStringAttr(r);
}

} // namespace

/// ScatterElements 11, 13, 16 (reduction), 18 (max/min); Scatter 9, 11.
FailureOr<SmallVector<Value>>
mlir::kiln::convertScatterElements(OnnxNode &node) {
  FailureOr<Value> data = node.rankedInput(0), indices = node.rankedInput(1),
                   updates = node.rankedInput(2);
  if (failed(data) || failed(indices) || failed(updates))
    return failure();
  RankedTensorType type = typeOf(*data);
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.intAttr("axis", 0), type.getRank());
  FailureOr<StringAttr> reduction = reductionAttr(node);
  if (failed(axis) || failed(reduction))
    return failure();
  if (failed(checkConstantIndices(
          node, 1, [&](size_t) { return type.getDimSize(*axis); })))
    return failure();
  // Symbolic sizes: the indices and the updates must have one shape at run
  // time (the lowering reads both at each update's position).
  RankedTensorType it = typeOf(*indices), ut = typeOf(*updates);
  if (node.sizes && it.getRank() == ut.getRank())
    for (int64_t d = 0; d < it.getRank(); ++d)
      if (it.isDynamicDim(d) || ut.isDynamicDim(d))
        guardSameSize(node, *indices, d, *updates, d,
                      "dimension " + std::to_string(d) +
                          " of the indices and of the updates");
  return one(build<ScatterElementsOp>(node, *data, *indices, *updates,
                                      node.builder.getI64IntegerAttr(*axis),
                                      *reduction));
}

/// ScatterND 11, 13, 16 (reduction), 18 (max/min).
FailureOr<SmallVector<Value>> mlir::kiln::convertScatterND(OnnxNode &node) {
  FailureOr<Value> data = node.rankedInput(0), indices = node.rankedInput(1),
                   updates = node.rankedInput(2);
  if (failed(data) || failed(indices) || failed(updates))
    return failure();
  FailureOr<StringAttr> reduction = reductionAttr(node);
  if (failed(reduction))
    return failure();
  RankedTensorType type = typeOf(*data), idx = typeOf(*indices);
  if (idx.getRank() >= 1 && !ShapedType::isDynamic(idx.getShape().back())) {
    int64_t q = idx.getShape().back();
    if (failed(checkConstantIndices(node, 1, [&](size_t k) {
          return q > 0 && q <= type.getRank() ? type.getDimSize(k % q)
                                              : ShapedType::kDynamic;
        })))
      return failure();
  }
  // Symbolic sizes: updates must be indices.shape[:-1] + data.shape[q:] at
  // run time too (the lowering loops over those and reads the updates).
  RankedTensorType ut = typeOf(*updates);
  if (node.sizes && idx.getRank() >= 1 &&
      !ShapedType::isDynamic(idx.getShape().back())) {
    int64_t q = idx.getShape().back(), lead = idx.getRank() - 1;
    if (q >= 1 && q <= type.getRank() &&
        ut.getRank() == lead + type.getRank() - q)
      for (int64_t d = 0; d < ut.getRank(); ++d) {
        Value from = d < lead ? *indices : *data;
        int64_t fd = d < lead ? d : q + d - lead;
        if (ut.isDynamicDim(d) || typeOf(from).isDynamicDim(fd))
          guardSameSize(node, *updates, d, from, fd,
                        "dimension " + std::to_string(d) +
                            " of the updates and dimension " +
                            std::to_string(fd) + " of the " +
                            (d < lead ? "indices" : "data"));
      }
  }
  return one(build<ScatterNDOp>(node, *data, *indices, *updates, *reduction));
}

/// TensorScatter 24: `update` (the cache's shape with S positions along
/// `axis`) written into `past_cache` (M positions) at write_indices[b] +
/// s, modulo M in "circular" mode. Functional and gather-based: present
/// position j of batch b reads update position (j - w[b]) (mod M) where that
/// is in [0, S), and the past cache elsewhere. "linear" mode guards
/// 0 <= w[b] and w[b] + S <= M, which ONNX requires.
FailureOr<SmallVector<Value>> mlir::kiln::convertTensorScatter(OnnxNode &node) {
  FailureOr<Value> past = node.staticInput(0), update = node.staticInput(1);
  if (failed(past) || failed(update))
    return failure();
  RankedTensorType pt = typeOf(*past), ut = typeOf(*update);
  int64_t rank = pt.getRank();
  if (rank < 2 || ut.getRank() != rank ||
      ut.getElementType() != pt.getElementType()) {
    node.fail() << "expects past_cache and update of one element type and "
                   "the same rank (at least 2), got "
                << pt << " and " << ut;
    return failure();
  }
  FailureOr<int64_t> axis = normalizeAxis(node, node.intAttr("axis", -2), rank);
  if (failed(axis))
    return failure();
  if (*axis == 0) {
    node.fail() << "axis cannot be 0 (the batch dimension)";
    return failure();
  }
  std::string mode = node.strAttr("mode", "linear");
  if (mode != "linear" && mode != "circular") {
    node.fail() << "mode '" << mode
                << "' is not supported; expected linear or circular";
    return failure();
  }
  int64_t batch = pt.getDimSize(0), m = pt.getDimSize(*axis),
          s = ut.getDimSize(*axis);
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && ut.getDimSize(d) != pt.getDimSize(d)) {
      node.fail() << "update " << ut << " must match past_cache " << pt
                  << " outside axis " << *axis;
      return failure();
    }
  if (s > m) {
    node.fail() << "update has " << s << " positions along axis " << *axis
                << ", more than the cache's " << m;
    return failure();
  }
  if (s == 0)
    return SmallVector<Value>{*past};
  IndexMath im{node};
  Value w;
  if (node.input(2)) {
    auto wt = dyn_cast<RankedTensorType>(node.input(2).getType());
    if (!wt || !wt.hasStaticShape() || wt.getRank() != 1 ||
        wt.getDimSize(0) != batch) {
      node.fail() << "write_indices must have shape [" << batch << "]";
      return failure();
    }
    w = im.check(castTo(node, node.input(2), node.builder.getI64Type()));
  } else {
    w = constI64(node, SmallVector<int64_t>(batch, 0), {batch});
  }
  // src[b, j] = j - w[b] (mod M), shaped [B, 1.., M, ..1].
  SmallVector<int64_t> wShape(rank, 1), jShape(rank, 1);
  wShape[0] = batch;
  jShape[*axis] = m;
  Value wb = im.check(reshapeTo(node, w, wShape));
  Value j = im.check(reshapeTo(node, im.iota(m), jShape));
  Value src = im.sub(j, wb);
  if (mode == "circular")
    src = im.check(
        build<ModOp>(node, src, im.c(m), node.builder.getBoolAttr(false)));
  Value inside = im.land(im.less(im.c(-1), src), im.less(src, im.c(s)));
  Value idx = im.clamp(src, im.c(0), im.c(s - 1));
  if (!im.ok)
    return failure();
  // Without write_indices every write starts at 0 and fits.
  if (mode == "linear" && node.input(2)) {
    Value fits = im.land(im.less(im.c(-1), w), im.less(w, im.c(m - s + 1)));
    FailureOr<Value> all = allOf(node, fits);
    if (!im.ok || failed(all))
      return failure();
    guardInput(node, *all, 2,
               "must be in [0, " + Twine(m - s) + "]: linear mode writes the " +
                   Twine(s) + " update positions inside the cache's " +
                   Twine(m));
  }
  SmallVector<int64_t> full(pt.getShape());
  auto idxType = RankedTensorType::get(full, node.builder.getI64Type());
  Value idxFull = ExpandOp::create(node.builder, node.loc(), idxType, idx);
  FailureOr<Value> g = build<GatherElementsOp>(
      node, *update, idxFull, node.builder.getI64IntegerAttr(*axis));
  if (failed(g))
    return failure();
  return one(build<WhereOp>(node, inside, *g, *past));
}
