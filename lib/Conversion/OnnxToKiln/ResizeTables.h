//===- ResizeTables.h - Resize's per-axis tables ----------------*- C++ -*-===//
//
// Resize (Resize.cpp) is separable: each resized axis gathers 1, 2 or 4
// source slices and blends them with per-position weights, from tables over
// the output positions of the axis. This header holds what the static
// conversion (Resize.cpp) and the one at run-time sizes (ResizeSymbolic.cpp)
// share: the table arithmetic, the node's parameters and attributes, and
// resizeAxis, which builds one axis from its tables.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CONVERSION_ONNXTOKILN_RESIZETABLES_H
#define KILN_LIB_CONVERSION_ONNXTOKILN_RESIZETABLES_H

#include "Build.h"

#include <cmath>
#include <optional>
#include <string>

namespace mlir::kiln::resize {

/// A vector over the output positions of one axis, or a scalar (size 1) that
/// broadcasts: compile-time doubles, or a run-time f64 tensor.
struct Table {
  SmallVector<double> cst;
  Value run;
  bool isConst() const { return !run; }
};

/// Arithmetic on tables: folded here when every operand is constant, kiln ops
/// otherwise. A failed build is remembered in `bad` (checked once at the end)
/// so that the formulas read as formulas.
class Tables {
public:
  explicit Tables(OnnxNode &node) : node(node) {}
  OnnxNode &node;
  bool bad = false;

  static Table cst(ArrayRef<double> v) { return {SmallVector<double>(v), {}}; }
  static Table scalar(double v) { return cst({v}); }
  static Table iota(int64_t n) {
    Table t;
    for (int64_t i = 0; i < n; ++i)
      t.cst.push_back(i);
    return t;
  }
  Table wrap(FailureOr<Value> v) {
    if (failed(v)) {
      bad = true;
      return scalar(0);
    }
    return {{}, *v};
  }

  Value materialize(const Table &t) {
    if (t.run)
      return t.run;
    auto type = RankedTensorType::get({(int64_t)t.cst.size()},
                                      node.builder.getF64Type());
    return ConstantOp::create(node.builder, node.loc(), type,
                              DenseElementsAttr::get(type, ArrayRef(t.cst)));
  }

  template <typename OpTy>
  Table binary(const Table &a, const Table &b, double (*fn)(double, double)) {
    if (a.isConst() && b.isConst()) {
      size_t n = std::max(a.cst.size(), b.cst.size());
      Table r;
      for (size_t i = 0; i < n; ++i)
        r.cst.push_back(fn(a.cst[a.cst.size() == 1 ? 0 : i],
                           b.cst[b.cst.size() == 1 ? 0 : i]));
      return r;
    }
    return wrap(build<OpTy>(node, materialize(a), materialize(b)));
  }
  template <typename OpTy>
  Table unary(const Table &a, double (*fn)(double)) {
    if (a.isConst()) {
      Table r;
      for (double v : a.cst)
        r.cst.push_back(fn(v));
      return r;
    }
    return wrap(build<OpTy>(node, a.run));
  }

  Table add(const Table &a, const Table &b) {
    return binary<AddOp>(a, b, [](double x, double y) { return x + y; });
  }
  Table sub(const Table &a, const Table &b) {
    return binary<SubOp>(a, b, [](double x, double y) { return x - y; });
  }
  Table mul(const Table &a, const Table &b) {
    return binary<MulOp>(a, b, [](double x, double y) { return x * y; });
  }
  Table div(const Table &a, const Table &b) {
    return binary<DivOp>(a, b, [](double x, double y) { return x / y; });
  }
  Table min(const Table &a, const Table &b) {
    return binary<MinOp>(a, b, [](double x, double y) { return std::min(x, y); });
  }
  Table max(const Table &a, const Table &b) {
    return binary<MaxOp>(a, b, [](double x, double y) { return std::max(x, y); });
  }
  Table floor(const Table &a) {
    return unary<FloorOp>(a, [](double x) { return std::floor(x); });
  }
  Table ceil(const Table &a) {
    return unary<CeilOp>(a, [](double x) { return std::ceil(x); });
  }
  Table abs(const Table &a) {
    return unary<AbsOp>(a, [](double x) { return std::fabs(x); });
  }
  Table clamp(const Table &a, double lo, double hi) {
    return min(max(a, scalar(lo)), scalar(hi));
  }
  Table clamp(const Table &a, double lo, const Table &hi) {
    return min(max(a, scalar(lo)), hi);
  }
  /// 1 where lo <= a <= hi, else 0 (from float ops only: bool tensors are not
  /// stored by the code generator yet).
  Table inRange(const Table &a, double lo, double hi) {
    return inRange(a, lo, scalar(hi));
  }
  Table inRange(const Table &a, double lo, const Table &hi) {
    Table outside = min(ceil(abs(sub(a, clamp(a, lo, hi)))), scalar(1));
    return sub(scalar(1), outside);
  }

  /// The table as an i64 index vector (its values are integral).
  FailureOr<Value> indices(const Table &t) {
    if (t.isConst()) {
      SmallVector<int64_t> v;
      for (double x : t.cst)
        v.push_back((int64_t)std::llround(x));
      auto type = RankedTensorType::get({(int64_t)v.size()},
                                        node.builder.getI64Type());
      return ConstantOp::create(node.builder, node.loc(), type,
                                DenseElementsAttr::get(type, ArrayRef(v)))
          .getResult();
    }
    return build<CastOp>(node, t.run, TypeAttr::get(node.builder.getI64Type()));
  }

  /// The table as `elt` weights of shape [n, 1 x trailing], which broadcast
  /// along the resized axis of a tensor with `trailing` dimensions after it.
  FailureOr<Value> weights(const Table &t, Type elt, int64_t trailing) {
    SmallVector<int64_t> shape(trailing + 1, 1);
    if (t.isConst()) {
      shape[0] = t.cst.size();
      auto type = RankedTensorType::get(shape, elt);
      SmallVector<APFloat> v;
      for (double x : t.cst) {
        APFloat f(x);
        bool lost;
        f.convert(cast<FloatType>(elt).getFloatSemantics(),
                  APFloat::rmNearestTiesToEven, &lost);
        v.push_back(f);
      }
      return ConstantOp::create(node.builder, node.loc(), type,
                                DenseElementsAttr::get(type, v))
          .getResult();
    }
    shape[0] = typeOf(t.run).getDimSize(0);
    FailureOr<Value> c = build<CastOp>(node, t.run, TypeAttr::get(elt));
    if (failed(c))
      return failure();
    return reshapeTo(node, *c, shape);
  }

  /// Element `i` of a run-time 1-D tensor as a scalar table.
  Table element(Value v, int64_t i) {
    auto idxType = RankedTensorType::get({1}, node.builder.getI64Type());
    Value idx = ConstantOp::create(node.builder, node.loc(), idxType,
                                   DenseElementsAttr::get(idxType, ArrayRef(i)));
    FailureOr<Value> g =
        build<GatherOp>(node, v, idx, node.builder.getI64IntegerAttr(0));
    if (failed(g))
      return wrap(failure());
    return wrap(build<CastOp>(node, *g, TypeAttr::get(node.builder.getF64Type())));
  }
};

/// An input that is either a compile-time list of numbers or a run-time 1-D
/// tensor; `present` is false for an omitted or empty input.
struct ParamInput {
  bool present = false;
  std::optional<SmallVector<double>> values;
  Value run;
};

/// Reads input `idx` of `node` (-1: not an input of this version).
ParamInput readParam(OnnxNode &node, int idx);

struct ResizeAttrs {
  std::string mode, ctm, nearestMode;
  double cubicA = -0.75, extrapolation = 0.0;
  bool excludeOutside = false, antialias = false;
};

/// One resized axis: in/out lengths, the scale and the output length the
/// reference uses (scale * in), and the roi bounds for tf_crop_and_resize.
/// At run-time sizes (docs/shapes.md) `in` and/or `out` are kDynamic and
/// `inLen`/`outLen` hold them as run-time scalars, `positions` the output
/// positions 0..out-1 as a run-time f64 vector.
struct AxisParams {
  int64_t in, out;
  Table scale, width, roiStart, roiEnd;
  bool runtimeScale;
  Table inLen, outLen, positions;
  bool dynamic() const {
    return ShapedType::isDynamic(in) || ShapedType::isDynamic(out);
  }
};

/// Resizes `x` along `axis`.
FailureOr<Value> resizeAxis(OnnxNode &node, Tables &T, Value x, int64_t axis,
                            const AxisParams &p, const ResizeAttrs &a);

/// Resize at run-time sizes (ResizeSymbolic.cpp): nearest by whole constant
/// scales as kiln.upsample_nearest (null when that does not apply), and
/// every other mode from the tables over run-time output positions.
Value upsampleSymbolic(OnnxNode &node, Value x, const ResizeAttrs &a,
                       const ParamInput &scales, ArrayRef<int64_t> slot);
FailureOr<Value> resizeSymbolic(OnnxNode &node, Value x, const ResizeAttrs &a,
                                const ParamInput &scales,
                                const ParamInput &sizes, int sizesIdx,
                                ArrayRef<int64_t> slot, StringRef policy);

} // namespace mlir::kiln::resize

#endif // KILN_LIB_CONVERSION_ONNXTOKILN_RESIZETABLES_H
