//===- KilnOpFolders.cpp - folders and canonicalizations --------*- C++ -*-===//
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "kiln/Dialect/Kiln/IR/ElementsUtils.h"

#include "mlir/Dialect/CommonFolders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/APSInt.h"

using namespace mlir;
using namespace mlir::kiln;

// Folding a large constant through an op would copy its bytes into a new
// attribute; beyond this many elements we leave the work to the generated code.
static constexpr int64_t kMaxFoldElements = 1 << 16;

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult IdentityOp::fold(FoldAdaptor) { return getInput(); }

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    if (getType().hasStaticShape() &&
        (dense.isSplat() || dense.getNumElements() <= kMaxFoldElements))
      return dense.reshape(getType());
  return {};
}

namespace {
/// reshape(reshape(x)) -> reshape(x)
struct ComposeReshapes : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ReshapeOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "input is not a reshape");
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), inner.getInput());
    return success();
  }
};

/// transpose(transpose(x, p1), p2) -> transpose(x, p1 o p2)
struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<TransposeOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "input is not a transpose");
    SmallVector<int64_t> perm;
    for (int64_t p : op.getPerm())
      perm.push_back(inner.getPerm()[p]);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(), inner.getInput(),
                                             perm);
    return success();
  }
};

/// clip(x, 0, +inf) -> relu(x)
struct ClipToRelu : OpRewritePattern<ClipOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ClipOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getMin().isZero() || !op.getMax().isInfinity() ||
        op.getMax().isNegative())
      return rewriter.notifyMatchFailure(op, "not a [0, +inf) clip");
    rewriter.replaceOpWithNewOp<ReluOp>(op, op.getInput());
    return success();
  }
};

/// global_avg_pool(x) -> reduce_mean(x, axes = 2.., keepdims)
struct GlobalAvgPoolToReduceMean : OpRewritePattern<GlobalAvgPoolOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GlobalAvgPoolOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<int64_t> axes;
    for (int64_t d = 2; d < op.getInput().getType().getRank(); ++d)
      axes.push_back(d);
    rewriter.replaceOpWithNewOp<ReduceMeanOp>(op, op.getType(), op.getInput(),
                                              axes, /*keepdims=*/true);
    return success();
  }
};
} // namespace

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<ComposeReshapes>(context);
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPerm();
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity &= perm[i] == (int64_t)i;
  if (identity)
    return getInput();
  // Small constants (shape arithmetic, e.g. torch's reversed pads) are
  // transposed here; weights are left to the lowering, which transposes
  // them once into the layout their consumer wants.
  auto c = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput());
  auto resultType = dyn_cast<RankedTensorType>(getType());
  if (!c || !resultType || !resultType.hasStaticShape())
    return {};
  if (c.isSplat())
    return DenseElementsAttr::get(resultType, c.getSplatValue<Attribute>());
  if (c.getNumElements() > 1024)
    return {};
  ArrayRef<int64_t> inShape = c.getType().getShape();
  ArrayRef<int64_t> outShape = resultType.getShape();
  int64_t rank = outShape.size();
  SmallVector<int64_t> inStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * inShape[d + 1];
  SmallVector<Attribute> in(c.getValues<Attribute>());
  SmallVector<Attribute> out;
  out.reserve(in.size());
  SmallVector<int64_t> idx(rank, 0);
  for (int64_t n = 0; n < c.getNumElements(); ++n) {
    // Output element idx reads input element idx[perm^-1]: out[i] = in[perm[i]].
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d)
      offset += idx[d] * inStrides[perm[d]];
    out.push_back(in[offset]);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < outShape[d])
        break;
      idx[d] = 0;
    }
  }
  return DenseElementsAttr::get(resultType, out);
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<ComposeTransposes>(context);
}

OpFoldResult PadOp::fold(FoldAdaptor) {
  if (llvm::all_of(getPads(), [](int64_t p) { return p == 0; }) &&
      getInput().getType() == getType())
    return getInput();
  return {};
}

void ClipOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<ClipToRelu>(context);
}

void GlobalAvgPoolOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                  MLIRContext *context) {
  results.add<GlobalAvgPoolToReduceMean>(context);
}

//===----------------------------------------------------------------------===//
// Data movement on small constants: gather, slice, concat and cast fold so
// that shape computations (Shape -> Gather -> Concat -> Reshape) become
// constants while OnnxToKiln still needs them.
//===----------------------------------------------------------------------===//

/// A small int or float constant the folders may read element by element.
static DenseElementsAttr smallDense(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || !dense.getType().hasStaticShape() ||
      !isa<IntegerType, FloatType>(dense.getElementType()) ||
      (!dense.isSplat() && dense.getNumElements() > kMaxFoldElements))
    return {};
  return dense;
}

static bool foldableResult(RankedTensorType type) {
  return type.hasStaticShape() && type.getNumElements() <= kMaxFoldElements;
}

/// Row-major strides of a static shape.
static SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = (int64_t)shape.size() - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// The constant of `type` whose element i is element `src[i].second` of
/// `inputs[src[i].first]`: the data movement of gather, slice and concat.
template <typename T>
static DenseElementsAttr pickAs(ArrayRef<DenseElementsAttr> inputs,
                                RankedTensorType type,
                                ArrayRef<std::pair<unsigned, int64_t>> src) {
  SmallVector<T> values;
  values.reserve(src.size());
  for (auto [k, i] : src) {
    auto range = inputs[k].template getValues<T>();
    values.push_back(range[inputs[k].isSplat() ? 0 : i]);
  }
  return DenseElementsAttr::get(type, values);
}

static DenseElementsAttr pick(ArrayRef<DenseElementsAttr> inputs,
                              RankedTensorType type,
                              ArrayRef<std::pair<unsigned, int64_t>> src) {
  if (isa<FloatType>(type.getElementType()))
    return pickAs<APFloat>(inputs, type, src);
  return pickAs<APInt>(inputs, type, src);
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  DenseElementsAttr data = smallDense(adaptor.getInput()),
                    indices = smallDense(adaptor.getIndices());
  RankedTensorType type = getType();
  if (!data || !indices || !foldableResult(type))
    return {};
  ArrayRef<int64_t> shape = data.getType().getShape();
  int64_t axis = getAxis(), n = shape[axis];
  if (n == 0)
    return {};
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < (int64_t)shape.size(); ++d)
    (d < axis ? outer : inner) *= d == axis ? 1 : shape[d];
  SmallVector<int64_t> picked;
  for (const APInt &v : indices.getValues<APInt>()) {
    // The lowering's semantics: wrap negative indices, then clamp.
    int64_t i = v.getSExtValue();
    i = std::clamp<int64_t>(i < 0 ? i + n : i, 0, n - 1);
    picked.push_back(i);
  }
  SmallVector<std::pair<unsigned, int64_t>> src;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : picked)
      for (int64_t j = 0; j < inner; ++j)
        src.push_back({0, (o * n + i) * inner + j});
  return pick(data, type, src);
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  RankedTensorType in = getInput().getType(), type = getType();
  bool whole = in == type &&
               llvm::all_of(getOffsets(), [](int64_t o) { return o == 0; }) &&
               llvm::all_of(getStrides(), [](int64_t s) { return s == 1; });
  if (whole)
    return getInput();
  DenseElementsAttr data = smallDense(adaptor.getInput());
  if (!data || !foldableResult(type))
    return {};
  SmallVector<int64_t> inStrides = stridesOf(in.getShape());
  ArrayRef<int64_t> offsets = getOffsets(), sizes = getSizes(),
                    strides = getStrides();
  int64_t rank = type.getRank();
  SmallVector<std::pair<unsigned, int64_t>> src;
  SmallVector<int64_t> idx(rank, 0);
  for (int64_t linear = 0, e = type.getNumElements(); linear < e; ++linear) {
    int64_t at = 0;
    for (int64_t d = 0; d < rank; ++d)
      at += (offsets[d] + idx[d] * strides[d]) * inStrides[d];
    src.push_back({0, at});
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < sizes[d])
        break;
      idx[d] = 0;
    }
  }
  return pick(data, type, src);
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  RankedTensorType type = getType();
  if (!foldableResult(type))
    return {};
  SmallVector<DenseElementsAttr> inputs;
  for (Attribute a : adaptor.getInputs()) {
    inputs.push_back(smallDense(a));
    if (!inputs.back())
      return {};
  }
  // Row-major: for each index before the axis, each input contributes its
  // whole block of dimensions axis.. in turn.
  int64_t axis = getAxis(), outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= type.getDimSize(d);
  SmallVector<std::pair<unsigned, int64_t>> src;
  for (int64_t o = 0; o < outer; ++o)
    for (auto [k, in] : llvm::enumerate(inputs)) {
      int64_t block = outer ? in.getNumElements() / outer : 0;
      for (int64_t j = 0; j < block; ++j)
        src.push_back({(unsigned)k, o * block + j});
    }
  return pick(inputs, type, src);
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  RankedTensorType type = getType();
  if (getInput().getType() == type)
    return getInput();
  DenseElementsAttr in = smallDense(adaptor.getInput());
  if (!in || !foldableResult(type))
    return {};
  Type from = in.getElementType(), to = type.getElementType();
  // The narrow types round and saturate by ONNX's rules, not APFloat's:
  // their casts run (LowerNarrowCast.cpp).
  if (isNarrowType(from) || isNarrowType(to))
    return {};
  int64_t n = in.isSplat() ? 1 : in.getNumElements();
  RankedTensorType valuesType =
      in.isSplat() ? RankedTensorType::get({}, to) : type;
  DenseElementsAttr out;
  if (auto toFloat = dyn_cast<FloatType>(to)) {
    SmallVector<APFloat> values;
    for (int64_t i = 0; i < n; ++i) {
      APFloat v(toFloat.getFloatSemantics());
      if (isa<FloatType>(from)) {
        v = in.getValues<APFloat>()[i];
        bool lost;
        v.convert(toFloat.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &lost);
      } else {
        APInt x = in.getValues<APInt>()[i];
        v.convertFromAPInt(x,
                           /*IsSigned=*/x.getBitWidth() != 1 &&
                               !from.isUnsignedInteger(),
                           APFloat::rmNearestTiesToEven);
      }
      values.push_back(v);
    }
    out = DenseElementsAttr::get(valuesType, values);
  } else {
    unsigned width = cast<IntegerType>(to).getWidth();
    SmallVector<APInt> values;
    for (int64_t i = 0; i < n; ++i) {
      if (isa<FloatType>(from)) {
        APFloat x = in.getValues<APFloat>()[i];
        if (width == 1) {
          values.emplace_back(1, !x.isZero());
          continue;
        }
        APSInt r(width, /*isUnsigned=*/to.isUnsignedInteger());
        bool exact;
        // Out of range or NaN is undefined at run time: leave it there.
        if (x.convertToInteger(r, APFloat::rmTowardZero, &exact) &
            APFloat::opInvalidOp)
          return {};
        values.push_back(r);
      } else {
        APInt x = in.getValues<APInt>()[i];
        if (width == 1)
          values.emplace_back(1, !x.isZero());
        else
          values.push_back(x.getBitWidth() == 1 || from.isUnsignedInteger()
                               ? x.zextOrTrunc(width)
                               : x.sextOrTrunc(width));
      }
    }
    out = DenseElementsAttr::get(valuesType, values);
  }
  return in.isSplat() ? out.resizeSplat(type) : out;
}

//===----------------------------------------------------------------------===//
// Binary elementwise: constant folding with broadcasting of small operands,
// and the identities x + 0, x - 0, x * 1, x / 1 when no broadcast is
// involved.
//===----------------------------------------------------------------------===//

/// Folds `fn` over two small constants, broadcasting them to `type`. `fn`
/// returns nullopt where the result is not a constant (integer division by
/// zero).
template <typename T, typename Fn>
static OpFoldResult foldElements(RankedTensorType type, DenseElementsAttr l,
                                 DenseElementsAttr r, Fn &&fn) {
  if (l.isSplat() && r.isSplat()) {
    std::optional<T> v = fn(l.getSplatValue<T>(), r.getSplatValue<T>());
    if (!v)
      return {};
    return DenseElementsAttr::get(type, *v);
  }
  // Per operand, the stride of each result dimension (0 where it broadcasts).
  int64_t rank = type.getRank();
  auto broadcastStrides = [&](ShapedType t) {
    SmallVector<int64_t> own = stridesOf(t.getShape()), out(rank, 0);
    for (int64_t i = 0; i < t.getRank(); ++i)
      if (t.getDimSize(i) != 1)
        out[rank - t.getRank() + i] = own[i];
    return out;
  };
  SmallVector<int64_t> ls = broadcastStrides(l.getType()),
                       rs = broadcastStrides(r.getType());
  auto li = l.getValues<T>(), ri = r.getValues<T>();
  SmallVector<T> values;
  SmallVector<int64_t> idx(rank, 0);
  for (int64_t linear = 0, e = type.getNumElements(); linear < e; ++linear) {
    int64_t a = 0, b = 0;
    for (int64_t d = 0; d < rank; ++d) {
      a += idx[d] * ls[d];
      b += idx[d] * rs[d];
    }
    std::optional<T> v = fn(li[l.isSplat() ? 0 : a], ri[r.isSplat() ? 0 : b]);
    if (!v)
      return {};
    values.push_back(*v);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < type.getDimSize(d))
        break;
      idx[d] = 0;
    }
  }
  return DenseElementsAttr::get(type, values);
}

template <typename FloatFn, typename IntFn>
static OpFoldResult foldBinary(Operation *op, Attribute lhs, Attribute rhs,
                               FloatFn &&floatFn, IntFn &&intFn) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  DenseElementsAttr l = smallDense(lhs), r = smallDense(rhs);
  if (!l || !r || !foldableResult(type))
    return {};
  // The integer folds below are signed; unsigned division and max/min are
  // left to run time.
  if (type.getElementType().isUnsignedInteger() && isa<DivOp, MaxOp, MinOp>(op))
    return {};
  if (isa<FloatType>(type.getElementType()))
    return foldElements<APFloat>(type, l, r,
                                 [&](const APFloat &x, const APFloat &y) {
                                   return std::optional<APFloat>(floatFn(x, y));
                                 });
  return foldElements<APInt>(type, l, r, intFn);
}

/// Whether `attr` is a splat of exactly `value`. Floats compare with their
/// sign (x + 0.0 is not x when x is -0.0, but x + (-0.0) and x - 0.0 are);
/// integers (other than bool) compare by value.
static bool isSplatOf(Attribute attr, double value) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || !dense.isSplat())
    return false;
  if (isa<FloatType>(dense.getElementType())) {
    APFloat v = dense.getSplatValue<APFloat>();
    return v.convertToDouble() == value &&
           v.isNegative() == std::signbit(value);
  }
  auto intType = dyn_cast<IntegerType>(dense.getElementType());
  if (!intType || intType.getWidth() == 1)
    return false;
  return dense.getSplatValue<APInt>().getSExtValue() == (int64_t)value;
}

namespace {
using IntResult = std::optional<APInt>;
IntResult intAdd(const APInt &x, const APInt &y) { return x + y; }
IntResult intSub(const APInt &x, const APInt &y) { return x - y; }
IntResult intMul(const APInt &x, const APInt &y) { return x * y; }
IntResult intDiv(const APInt &x, const APInt &y) {
  // Division by zero and INT_MIN / -1 trap at run time; do not fold them.
  if (y.isZero() || (x.isMinSignedValue() && y.isAllOnes()))
    return std::nullopt;
  return x.sdiv(y);
}
IntResult intMax(const APInt &x, const APInt &y) {
  return llvm::APIntOps::smax(x, y);
}
IntResult intMin(const APInt &x, const APInt &y) {
  return llvm::APIntOps::smin(x, y);
}
} // namespace

OpFoldResult AddOp::fold(FoldAdaptor a) {
  if (isSplatOf(a.getRhs(), -0.0) && getLhs().getType() == getType())
    return getLhs();
  return foldBinary(
      *this, a.getLhs(), a.getRhs(),
      [](APFloat x, const APFloat &y) { return x + y; }, intAdd);
}
OpFoldResult SubOp::fold(FoldAdaptor a) {
  if (isSplatOf(a.getRhs(), 0.0) && getLhs().getType() == getType())
    return getLhs();
  return foldBinary(
      *this, a.getLhs(), a.getRhs(),
      [](APFloat x, const APFloat &y) { return x - y; }, intSub);
}
OpFoldResult MulOp::fold(FoldAdaptor a) {
  if (isSplatOf(a.getRhs(), 1.0) && getLhs().getType() == getType())
    return getLhs();
  return foldBinary(
      *this, a.getLhs(), a.getRhs(),
      [](APFloat x, const APFloat &y) { return x * y; }, intMul);
}
OpFoldResult DivOp::fold(FoldAdaptor a) {
  if (isSplatOf(a.getRhs(), 1.0) && getLhs().getType() == getType())
    return getLhs();
  return foldBinary(
      *this, a.getLhs(), a.getRhs(),
      [](APFloat x, const APFloat &y) { return x / y; }, intDiv);
}
OpFoldResult PowOp::fold(FoldAdaptor a) {
  if (isSplatOf(a.getRhs(), 1.0) && getLhs().getType() == getType())
    return getLhs();
  return {};
}
OpFoldResult MaxOp::fold(FoldAdaptor a) {
  return foldBinary(
      *this, a.getLhs(), a.getRhs(),
      [](APFloat x, const APFloat &y) { return llvm::maxnum(x, y); }, intMax);
}
OpFoldResult MinOp::fold(FoldAdaptor a) {
  return foldBinary(
      *this, a.getLhs(), a.getRhs(),
      [](APFloat x, const APFloat &y) { return llvm::minnum(x, y); }, intMin);
}

// Logic on bools (i1 as APInt). Not folds too: shape logic (an expanded
// function's `Not(Equal(heads, kv_heads))`) must become a constant before
// the Expand or Reshape that reads it.
OpFoldResult NotOp::fold(FoldAdaptor a) {
  DenseElementsAttr in = smallDense(a.getInput());
  if (!in || !foldableResult(getType()))
    return {};
  if (in.isSplat())
    return DenseElementsAttr::get(getType(), ~in.getSplatValue<APInt>());
  SmallVector<APInt> values;
  for (APInt v : in.getValues<APInt>())
    values.push_back(~v);
  return DenseElementsAttr::get(getType(), values);
}
OpFoldResult AndOp::fold(FoldAdaptor a) {
  return foldBinary(
      *this, a.getLhs(), a.getRhs(),
      [](APFloat x, const APFloat &) { return x; },
      [](const APInt &x, const APInt &y) -> IntResult { return x & y; });
}
OpFoldResult OrOp::fold(FoldAdaptor a) {
  return foldBinary(
      *this, a.getLhs(), a.getRhs(),
      [](APFloat x, const APFloat &) { return x; },
      [](const APInt &x, const APInt &y) -> IntResult { return x | y; });
}
OpFoldResult XorOp::fold(FoldAdaptor a) {
  return foldBinary(
      *this, a.getLhs(), a.getRhs(),
      [](APFloat x, const APFloat &) { return x; },
      [](const APInt &x, const APInt &y) -> IntResult { return x ^ y; });
}
OpFoldResult PReluOp::fold(FoldAdaptor a) {
  return foldBinary(
      *this, a.getLhs(), a.getRhs(),
      [](APFloat x, const APFloat &y) {
        return x.isNegative() && !x.isZero() ? x * y : x;
      },
      [](const APInt &x, const APInt &) -> IntResult { return x; });
}

//===----------------------------------------------------------------------===//
// Unary ops and reductions of small constants. Exporters compute sizes in
// floating point and reduce shape tensors: torchvision's detection transform
// pads an image to ceil(max(h, w) / 32) * 32, written as ReduceMax, Cast,
// Div, Ceil and Cast of values that are constants once the input's size is.
//===----------------------------------------------------------------------===//

/// Applies `floatFn` or `intFn` to every element of a small constant of the
/// op's (same) type.
template <typename FloatFn, typename IntFn>
static OpFoldResult foldUnary(Operation *op, Attribute input, FloatFn &&floatFn,
                              IntFn &&intFn) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  DenseElementsAttr in = smallDense(input);
  if (!in || !foldableResult(type) || in.getType() != type)
    return {};
  bool isFloat = isa<FloatType>(type.getElementType());
  // Signed semantics only; unsigned and bool elements are left to run time.
  if (!isFloat && (type.getElementType().isUnsignedInteger() ||
                   type.getElementType().isInteger(1)))
    return {};
  if (in.isSplat())
    return isFloat
               ? DenseElementsAttr::get(type,
                                        floatFn(in.getSplatValue<APFloat>()))
               : DenseElementsAttr::get(type, intFn(in.getSplatValue<APInt>()));
  if (isFloat) {
    SmallVector<APFloat> values;
    for (APFloat v : in.getValues<APFloat>())
      values.push_back(floatFn(v));
    return DenseElementsAttr::get(type, values);
  }
  SmallVector<APInt> values;
  for (APInt v : in.getValues<APInt>())
    values.push_back(intFn(v));
  return DenseElementsAttr::get(type, values);
}

static APFloat roundedTo(APFloat x, APFloat::roundingMode mode) {
  x.roundToIntegral(mode);
  return x;
}

OpFoldResult FloorOp::fold(FoldAdaptor a) {
  return foldUnary(
      *this, a.getInput(),
      [](const APFloat &x) { return roundedTo(x, APFloat::rmTowardNegative); },
      [](const APInt &x) { return x; });
}
OpFoldResult CeilOp::fold(FoldAdaptor a) {
  return foldUnary(
      *this, a.getInput(),
      [](const APFloat &x) { return roundedTo(x, APFloat::rmTowardPositive); },
      [](const APInt &x) { return x; });
}
OpFoldResult RoundOp::fold(FoldAdaptor a) {
  return foldUnary(
      *this, a.getInput(),
      [](const APFloat &x) {
        return roundedTo(x, APFloat::rmNearestTiesToEven);
      },
      [](const APInt &x) { return x; });
}
OpFoldResult ReciprocalOp::fold(FoldAdaptor a) {
  // 1 / x rounded to nearest, as the lowering's divf computes it.
  if (!isa<FloatType>(getType().getElementType()))
    return {};
  return foldUnary(
      *this, a.getInput(),
      [](const APFloat &x) {
        APFloat one(x.getSemantics(), 1);
        one.divide(x, APFloat::rmNearestTiesToEven);
        return one;
      },
      [](const APInt &x) { return x; });
}
OpFoldResult NegOp::fold(FoldAdaptor a) {
  return foldUnary(
      *this, a.getInput(), [](const APFloat &x) { return neg(x); },
      [](const APInt &x) { return -x; });
}
OpFoldResult AbsOp::fold(FoldAdaptor a) {
  // The minimum integer stays itself, as the wrapping lowering computes.
  return foldUnary(
      *this, a.getInput(), [](const APFloat &x) { return abs(x); },
      [](const APInt &x) { return x.abs(); });
}

namespace {
enum class ReduceKind { Sum, Prod, Max, Min };
} // namespace

/// Folds a reduction of a small constant over `axes`. Not folded: float sums
/// and products (run time adds in another order), NaN operands of a float
/// maximum or minimum, unsigned and bool elements, and empty reductions.
static OpFoldResult foldReduce(Operation *op, Attribute input,
                               ArrayRef<int64_t> axes, ReduceKind kind) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  DenseElementsAttr in = smallDense(input);
  if (!in || !foldableResult(type))
    return {};
  Type elt = type.getElementType();
  bool isFloat = isa<FloatType>(elt);
  if (elt != in.getElementType() ||
      (isFloat && (kind == ReduceKind::Sum || kind == ReduceKind::Prod)) ||
      (!isFloat && (elt.isUnsignedInteger() || elt.isInteger(1))))
    return {};
  ArrayRef<int64_t> shape = in.getType().getShape();
  int64_t rank = shape.size(), n = in.getNumElements();
  if (n == 0 ||
      llvm::any_of(axes, [&](int64_t a) { return a < 0 || a >= rank; }))
    return {};
  // The result's elements in the input's rank (reduced dimensions of size 1),
  // and the stride of each input dimension into them (0 where reduced).
  SmallVector<int64_t> kept(shape);
  for (int64_t a : axes)
    kept[a] = 1;
  SmallVector<int64_t> outStrides = stridesOf(kept);
  for (int64_t a : axes)
    outStrides[a] = 0;
  int64_t outCount = 1;
  for (int64_t d : kept)
    outCount *= d;
  if (outCount != type.getNumElements())
    return {};
  auto combineInt = [&](const APInt &x, const APInt &y) {
    switch (kind) {
    case ReduceKind::Sum:
      return x + y;
    case ReduceKind::Prod:
      return x * y;
    case ReduceKind::Max:
      return llvm::APIntOps::smax(x, y);
    case ReduceKind::Min:
      return llvm::APIntOps::smin(x, y);
    }
    llvm_unreachable("reduction kind");
  };
  SmallVector<std::optional<APFloat>> floats(isFloat ? outCount : 0);
  SmallVector<std::optional<APInt>> ints(isFloat ? 0 : outCount);
  SmallVector<int64_t> idx(rank, 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    int64_t out = 0;
    for (int64_t d = 0; d < rank; ++d)
      out += idx[d] * outStrides[d];
    if (isFloat) {
      APFloat v = in.isSplat() ? in.getSplatValue<APFloat>()
                               : in.getValues<APFloat>()[linear];
      if (v.isNaN())
        return {};
      std::optional<APFloat> &acc = floats[out];
      acc = !acc ? v
                 : (kind == ReduceKind::Max ? llvm::maxnum(*acc, v)
                                            : llvm::minnum(*acc, v));
    } else {
      APInt v = in.isSplat() ? in.getSplatValue<APInt>()
                             : in.getValues<APInt>()[linear];
      std::optional<APInt> &acc = ints[out];
      acc = !acc ? v : combineInt(*acc, v);
    }
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
  if (isFloat) {
    SmallVector<APFloat> values;
    for (std::optional<APFloat> &v : floats)
      values.push_back(*v);
    return DenseElementsAttr::get(type, values);
  }
  SmallVector<APInt> values;
  for (std::optional<APInt> &v : ints)
    values.push_back(*v);
  return DenseElementsAttr::get(type, values);
}

OpFoldResult ReduceSumOp::fold(FoldAdaptor a) {
  return foldReduce(*this, a.getInput(), getAxes(), ReduceKind::Sum);
}
OpFoldResult ReduceProdOp::fold(FoldAdaptor a) {
  return foldReduce(*this, a.getInput(), getAxes(), ReduceKind::Prod);
}
OpFoldResult ReduceMaxOp::fold(FoldAdaptor a) {
  return foldReduce(*this, a.getInput(), getAxes(), ReduceKind::Max);
}
OpFoldResult ReduceMinOp::fold(FoldAdaptor a) {
  return foldReduce(*this, a.getInput(), getAxes(), ReduceKind::Min);
}
