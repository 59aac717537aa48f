//===- ResizeSymbolic.cpp - Resize at run-time sizes -------------*- C++ -*-===//
//
// Resize of an input whose sizes are symbolic (docs/shapes.md, "Run-time
// sizes"): nearest by whole constant scales becomes kiln.upsample_nearest;
// every other mode but tf_crop_and_resize builds resizeAxis's tables over
// run-time output positions.
//
//===----------------------------------------------------------------------===//
#include "ResizeTables.h"
#include "SymbolicSizes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::resize;

namespace {
/// `s` as m / 2^k (every finite double is one), reduced; nullopt when m or
/// 2^k would not fit the index arithmetic of a size.
std::optional<std::pair<int64_t, int64_t>> dyadic(double s) {
  int e = 0;
  double f = std::frexp(s, &e); // s = f * 2^e, f in [0.5, 1)
  int64_t m = (int64_t)std::ldexp(f, 53);
  int64_t k = 53 - e;
  while (k > 0 && m % 2 == 0) {
    m /= 2;
    --k;
  }
  if (k < 0 || k > 40 || m <= 0 || m > (int64_t(1) << 24))
    return std::nullopt;
  return std::make_pair(m, k);
}
} // namespace

/// Resize of an input with symbolic sizes (docs/shapes.md): nearest mode
/// with whole constant scales, under a coordinate mode that maps output o to
/// input o floordiv scale, becomes kiln.upsample_nearest (output size the
/// input's times the scale). For a whole scale k, o = q k + r with r < k:
/// asymmetric takes o / k and floor gives q (round_prefer_floor too when
/// k = 2, the only tie being r / k = 1/2); the half-pixel modes take
/// (2r + 1 - k) / 2k off q, strictly between -1/2 and 1/2, so either
/// rounding gives q; tf_half_pixel_for_nn adds (r + 1/2) / k < 1 and floor
/// gives q. Anything else takes resizeSymbolic's general tables: null here.
Value mlir::kiln::resize::upsampleSymbolic(OnnxNode &node, Value x,
                                          const ResizeAttrs &a,
                                          const ParamInput &scales,
                                          ArrayRef<int64_t> slot) {
  RankedTensorType xt = typeOf(x);
  if (a.mode != "nearest" || !scales.present || !scales.values ||
      a.ctm == "tf_crop_and_resize")
    return Value();
  SmallVector<int64_t> ks;
  int64_t largest = 1;
  for (int64_t d = 0; d < xt.getRank(); ++d) {
    double k = slot[d] >= 0 ? (*scales.values)[slot[d]] : 1.0;
    if (!(k >= 1.0 && k <= 65536.0 && k == std::floor(k)))
      return Value();
    ks.push_back((int64_t)k);
    largest = std::max(largest, ks.back());
  }
  const std::string &c = a.ctm, &n = a.nearestMode;
  bool rounding = n == "round_prefer_floor" || n == "round_prefer_ceil";
  bool floors =
      (c == "asymmetric" &&
       (n == "floor" || (n == "round_prefer_floor" && largest <= 2))) ||
      ((c == "half_pixel" || c == "pytorch_half_pixel") && rounding) ||
      (c == "tf_half_pixel_for_nn" && n == "floor");
  if (largest > 1 && !floors)
    return Value();
  FailureOr<Value> y =
      build<UpsampleNearestOp>(node, x, node.builder.getDenseI64ArrayAttr(ks));
  return succeeded(y) ? *y : Value();
}

/// Resize of an input with run-time sizes (docs/shapes.md) in any mode but
/// what upsampleSymbolic takes: the tables of resizeAxis over run-time
/// output positions, the first `out` of a constant iota as long as the
/// largest output (the arena's bound). The output length of an axis is
/// sizes[j] as the graph computed it (F.interpolate(size=...)), in * s for
/// a whole scale s, else floor(in * s) computed exactly as (in * m) floordiv
/// 2^k with s = m / 2^k.
FailureOr<Value> mlir::kiln::resize::resizeSymbolic(
    OnnxNode &node, Value x, const ResizeAttrs &a, const ParamInput &scales,
    const ParamInput &sizes, int sizesIdx, ArrayRef<int64_t> slot,
    StringRef policy) {
  RankedTensorType xt = typeOf(x);
  auto refuse = [&](const Twine &what) -> FailureOr<Value> {
    node.fail() << "input shape " << xt
                << " is not static; with symbolic sizes Resize needs " << what
                << "; give the symbolic dimensions one size each";
    return failure();
  };
  if (!node.sizes)
    return refuse("the symbolic-size conversion");
  if (a.ctm == "tf_crop_and_resize")
    return refuse("a coordinate_transformation_mode other than "
                  "tf_crop_and_resize");
  if (policy != "stretch")
    return refuse("keep_aspect_ratio_policy 'stretch', not '" + policy + "'");
  if (scales.present && !scales.values)
    return refuse("constant scales (these are computed at run time)");
  SymbolicSizes &S = *node.sizes;
  std::optional<SmallVector<SymSize>> sizeContents;
  if (sizes.present) {
    sizeContents = S.contents(node.input(sizesIdx));
    if (!sizeContents)
      return refuse("sizes that are constant or computed from the shapes "
                    "(as F.interpolate(size=...) exports them)");
  }
  OpBuilder &b = node.builder;
  Location loc = node.loc();
  Tables T(node);
  Type f64 = b.getF64Type();
  // A length as a one-element f64 table, computed from the symbols (not
  // from the tensor it sizes), so Resizes of equal sizes build the same
  // tables and CSE keeps one copy (a U-Net's decoder resizes to each skip
  // connection's size many times).
  auto lengthOf = [&](Value index) {
    Value n = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
    Value shape = tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({1}, b.getI64Type()), n);
    return T.wrap(build<CastOp>(node, shape, TypeAttr::get(f64)));
  };

  int64_t rank = xt.getRank();
  std::vector<AxisParams> axes(rank);
  SmallVector<std::optional<SymSize>> outSyms(rank);
  SmallVector<double> ratio(rank, 1.0);
  SmallVector<bool> slotKept(rank, false);
  for (int64_t d = 0; d < rank; ++d) {
    AxisParams &p = axes[d];
    p.in = xt.getDimSize(d);
    p.runtimeScale = false;
    p.roiStart = Tables::scalar(0);
    p.roiEnd = Tables::scalar(1);
    int64_t j = slot[d];
    if (j < 0) { // not listed in axes: kept as is
      p.out = p.in;
      p.scale = Tables::scalar(1);
      p.width = Tables::scalar(p.in);
      continue;
    }
    SymSize in = S.dim(x, d);
    std::optional<SymSize> out;
    Value outIndex;
    std::optional<int64_t> outMax;
    double s = 0;
    if (sizes.present) {
      out = (*sizeContents)[j];
      // The same length (a batch or channel axis the sizes copy from the
      // input's shape): every mode but tf_half_pixel_for_nn maps output o
      // to input o there, so the axis is kept as is.
      if (*out == in && a.ctm != "tf_half_pixel_for_nn") {
        p.out = p.in;
        p.scale = Tables::scalar(1);
        p.width = Tables::scalar(p.in);
        slotKept[d] = true;
        continue;
      }
    } else {
      s = (*scales.values)[j];
      ratio[d] = s;
      if (!(s > 0 && std::isfinite(s)))
        return refuse("positive scales, not " + std::to_string(s) +
                      " on axis " + std::to_string(d));
      if (a.antialias && a.mode != "nearest" && s < 1)
        return refuse("no antialiased shrinking (scale " + std::to_string(s) +
                      " on axis " + std::to_string(d) + ")");
      if (s == std::floor(s) && s <= 65536) {
        out = SymSize::mul(in, SymSize::constant((int64_t)s));
      } else if (std::optional<std::pair<int64_t, int64_t>> mk = dyadic(s)) {
        std::optional<int64_t> inMax = S.largest(in);
        if (std::optional<int64_t> c = in.getConstant()) {
          out = SymSize::constant((int64_t)std::floor(s * (double)*c));
        } else {
          Value inIndex = S.materialize(b, loc, in);
          Value prod = arith::MulIOp::create(
              b, loc, inIndex, arith::ConstantIndexOp::create(b, loc, mk->first));
          outIndex = arith::DivUIOp::create(
              b, loc, prod,
              arith::ConstantIndexOp::create(b, loc, int64_t(1) << mk->second));
          if (inMax)
            outMax = (*inMax * mk->first) >> mk->second;
        }
      } else {
        return refuse("a scale Kiln can represent exactly, not " +
                      std::to_string(s));
      }
    }
    if (sizes.present && a.antialias && a.mode != "nearest")
      return refuse("no antialiasing with sizes");
    if (out) {
      outSyms[d] = *out;
      outIndex = S.materialize(b, loc, *out);
      outMax = S.largest(*out);
    }
    p.out = out ? out->getConstant().value_or(ShapedType::kDynamic)
                : ShapedType::kDynamic;
    if (!ShapedType::isDynamic(p.out) && p.out <= 0) {
      node.fail() << "axis " << d << " resizes to " << p.out
                  << " elements; sizes and scales must give at least one";
      return failure();
    }
    if (!p.dynamic()) {
      // Both lengths known here: the static tables.
      double sc = sizes.present ? (double)p.out / p.in : s;
      p.scale = Tables::scalar(sc);
      p.width = Tables::scalar(sc * p.in);
      continue;
    }
    if (!outMax) {
      node.fail() << "axis " << d << " resizes to "
                  << (out ? S.str(*out) : std::string("a computed length"))
                  << " elements; Kiln sizes the output positions by the "
                     "largest, so "
                  << (out ? S.boundAdvice(*out)
                          : std::string("give each symbolic dimension a "
                                        "range (--dim SYMBOL=MIN..MAX)"));
      return failure();
    }
    constexpr int64_t kMaxPositions = 1 << 20;
    if (*outMax > kMaxPositions)
      return refuse("outputs of at most " + std::to_string(kMaxPositions) +
                    " elements per axis at the symbols' maxima, not " +
                    std::to_string(*outMax));
    // The output positions: the first `out` of a constant iota.
    auto iotaType = RankedTensorType::get({std::max<int64_t>(*outMax, 1)}, f64);
    SmallVector<double> iota;
    for (int64_t i = 0; i < iotaType.getDimSize(0); ++i)
      iota.push_back((double)i);
    Value all = ConstantOp::create(b, loc, iotaType,
                                   DenseElementsAttr::get(iotaType, ArrayRef(iota)));
    auto posType = RankedTensorType::get({p.out}, f64);
    auto positions = SizedSliceOp::create(
        b, loc, posType, all,
        ValueRange{arith::ConstantIndexOp::create(b, loc, 0)},
        ValueRange{outIndex}, b.getDenseI64ArrayAttr({1}));
    if (out)
      S.setDims(positions.getResult(), {*out});
    p.positions = Table{{}, positions.getResult()};
    p.inLen = ShapedType::isDynamic(p.in) ? lengthOf(S.materialize(b, loc, in))
                                          : Tables::scalar((double)p.in);
    p.outLen = ShapedType::isDynamic(p.out) ? lengthOf(outIndex)
                                            : Tables::scalar((double)p.out);
    if (sizes.present) {
      p.scale = T.div(p.outLen, p.inLen);
      p.width = p.outLen;
    } else {
      p.scale = Tables::scalar(s);
      p.width = T.mul(Tables::scalar(s), p.inLen);
    }
  }
  if (T.bad)
    return failure();

  // Shrinking axes first, as the static conversion does.
  SmallVector<int64_t> order;
  for (int64_t d = 0; d < rank; ++d)
    order.push_back(d);
  llvm::stable_sort(order,
                    [&](int64_t l, int64_t r) { return ratio[l] < ratio[r]; });
  for (int64_t d : order) {
    if (slot[d] < 0 || slotKept[d])
      continue;
    SmallVector<SymSize> dims = S.dims(x);
    FailureOr<Value> y = resizeAxis(node, T, x, d, axes[d], a);
    if (failed(y))
      return failure();
    if (*y != x) {
      // The output length as the graph computed it, for the nodes after.
      dims[d] = outSyms[d] ? *outSyms[d] : S.dim(*y, d);
      S.setDims(*y, dims);
    }
    x = *y;
  }
  return x;
}
