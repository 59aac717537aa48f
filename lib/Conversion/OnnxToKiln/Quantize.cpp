//===- Quantize.cpp - ONNX quantization ops ---------------------*- C++ -*-===//
//
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear and the integer
// matrix products (MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv),
// decomposed into kiln ops: integers widen to i32 and lose their zero points
// before an i32 kiln.matmul / kiln.conv2d; requantization multiplies in f32,
// rounds half to even and saturates, the way ONNX's reference and ONNX
// Runtime compute it, so that results match bit for bit.
//
//===----------------------------------------------------------------------===//
#include "Conv.h"
#include "kiln/Dialect/Kiln/IR/ElementsUtils.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
FailureOr<Value> castTo(OnnxNode &node, FailureOr<Value> v, Type to) {
  if (failed(v))
    return failure();
  if (elementOf(*v) == to)
    return v;
  return build<CastOp>(node, *v, TypeAttr::get(to));
}

/// The types QuantizeLinear makes and DequantizeLinear reads: 8-bit and
/// 16-bit integers (16 since opset 21) and ONNX's narrow types (float8
/// since 19, int4 since 21, float4 since 23, int2 since 25).
bool isQuantType(Type t) {
  if (isNarrowType(t))
    return !isa<Float8E8M0FNUType>(t);
  return isa<IntegerType>(t) && (t.getIntOrFloatBitWidth() == 8 ||
                                 t.getIntOrFloatBitWidth() == 16);
}

/// The opset that introduced quantized type `t` (isQuantType).
int64_t quantTypeSince(Type t) {
  unsigned w = t.getIntOrFloatBitWidth();
  if (isa<FloatType>(t))
    return w == 4 ? 23 : 19;
  return w == 8 ? 10 : w == 2 ? 25 : 21;
}

/// Refuses a quantized type `t` that the node's opset does not have.
LogicalResult checkQuantOpset(OnnxNode &node, Type t) {
  if (node.opset >= quantTypeSince(t))
    return success();
  node.fail() << t << " needs opset " << quantTypeSince(t)
              << " of QuantizeLinear and DequantizeLinear; the model imports "
                 "opset "
              << node.opset << " (re-export it at a newer opset)";
  return failure();
}

/// A scale or zero point `v` for a tensor of rank `rank` quantized along
/// `axis`: one element becomes a scalar; a 1-D tensor of the axis' size gets
/// trailing unit dimensions so that it broadcasts along `axis`.
FailureOr<Value> alongAxis(OnnxNode &node, Value v, int64_t axis, int64_t rank,
                           int64_t axisSize, StringRef what) {
  RankedTensorType t = typeOf(v);
  if (t.hasStaticShape() && t.getNumElements() == 1)
    return reshapeTo(node, v, {});
  if (t.getRank() != 1 || t.getDimSize(0) != axisSize) {
    node.fail() << what << " of shape " << t
                << " must be a scalar or a 1-D tensor of " << axisSize
                << " elements (the size of axis " << axis << ")";
    return failure();
  }
  SmallVector<int64_t> shape = {axisSize};
  shape.append(rank - axis - 1, 1);
  return reshapeTo(node, v, shape);
}

/// The axis of a per-axis scale (opset 13's attribute); a per-tensor
/// `scale` (one element) needs none, whatever the attribute says.
FailureOr<int64_t> quantAxis(OnnxNode &node, RankedTensorType x, Value scale) {
  RankedTensorType s = typeOf(scale);
  if (x.getRank() == 0 || (s.hasStaticShape() && s.getNumElements() == 1))
    return 0;
  int64_t axis = node.opset >= 13 ? node.intAttr("axis", 1) : 1;
  FailureOr<int64_t> a = normalizeAxis(node, axis, x.getRank());
  if (failed(a))
    return failure();
  return a;
}

/// saturate(round(v) + zeroPoint) as `q`: v and the zero point (of type q,
/// or null for 0) in float; round half to even. A float `q` (float8, float4)
/// rounds and saturates in the cast (ONNX's Cast rules, `saturate`).
FailureOr<Value> saturateRound(OnnxNode &node, Value v, Value zeroPoint,
                               Type q) {
  Type f = elementOf(v);
  if (isa<FloatType>(q)) {
    FailureOr<Value> r = v;
    if (zeroPoint)
      r = build<AddOp>(node, v, *castTo(node, zeroPoint, f));
    if (failed(r))
      return failure();
    UnitAttr noSaturate;
    if (node.intAttr("saturate", 1) == 0 && !isa<Float4E2M1FNType>(q))
      noSaturate = node.builder.getUnitAttr();
    return build<CastOp>(node, *r, TypeAttr::get(q), noSaturate, StringAttr());
  }
  FailureOr<Value> r = build<RoundOp>(node, v);
  if (succeeded(r) && zeroPoint) {
    FailureOr<Value> zf = castTo(node, zeroPoint, f);
    if (failed(zf))
      return failure();
    r = build<AddOp>(node, *r, *zf);
  }
  if (failed(r))
    return failure();
  bool isUnsigned = q.isUnsignedInteger();
  unsigned width = q.getIntOrFloatBitWidth();
  double lo = isUnsigned ? 0 : -std::ldexp(1.0, width - 1);
  double hi = isUnsigned ? std::ldexp(1.0, width) - 1
                         : std::ldexp(1.0, width - 1) - 1;
  r = build<ClipOp>(node, *r, node.builder.getF32FloatAttr(lo),
                    node.builder.getF32FloatAttr(hi));
  return castTo(node, r, q);
}

/// The quantized type named by an optional zero point (uint8 by default).
FailureOr<Type> quantType(OnnxNode &node, Value zeroPoint) {
  Type q = zeroPoint ? elementOf(zeroPoint)
                     : node.builder.getIntegerType(8, /*isSigned=*/false);
  // QuantizeLinear 21's output_dtype names the type without a zero point;
  // with one, both must agree.
  if (int64_t dtype = node.intAttr("output_dtype", 0)) {
    std::string name;
    Type named = onnxElementType(node.builder, dtype, name);
    if (!named || !isQuantType(named)) {
      node.fail() << "output_dtype " << dtype << " (" << name
                  << ") is not a type QuantizeLinear makes";
      return failure();
    }
    if (zeroPoint && named != q) {
      node.fail() << "output_dtype " << dtype << " disagrees with the zero "
                  << "point's type " << q;
      return failure();
    }
    q = named;
  }
  if (!isQuantType(q)) {
    node.fail() << "quantizing to " << q
                << " is not supported; Kiln quantizes to 8-bit and 16-bit "
                   "integers, int4, int2, float8 and float4";
    return failure();
  }
  if (failed(checkQuantOpset(node, q)))
    return failure();
  return q;
}
} // namespace

namespace {
/// A scale or zero point `v` of blocked quantization (opset 21's
/// `block_size`): shaped like `x` but for `axis`, where each element covers
/// `block` consecutive elements of x (the last block may be short). Repeated
/// along `axis` to x's shape, a gather of constant indices i / block.
FailureOr<Value> expandBlocks(OnnxNode &node, Value v, RankedTensorType x,
                              int64_t axis, int64_t block, StringRef what) {
  RankedTensorType t = typeOf(v);
  int64_t n = x.getDimSize(axis);
  bool shaped = t.getRank() == x.getRank() &&
                t.getDimSize(axis) == (n + block - 1) / block;
  for (int64_t d = 0; shaped && d < x.getRank(); ++d)
    shaped =
        d == axis || t.getDimSize(d) == x.getDimSize(d) || x.isDynamicDim(d);
  if (!shaped) {
    node.fail() << what << " of shape " << t << " does not match " << x
                << " in blocks of " << block << " along axis " << axis
                << " (expected ceil(" << n << " / " << block
                << ") elements there and x's size elsewhere)";
    return failure();
  }
  SmallVector<int64_t> idx;
  for (int64_t i = 0; i < n; ++i)
    idx.push_back(i / block);
  auto idxType = RankedTensorType::get({n}, node.builder.getI64Type());
  Value iv = ConstantOp::create(node.builder, node.loc(), idxType,
                                DenseElementsAttr::get(idxType, ArrayRef(idx)));
  return build<GatherOp>(node, v, iv, node.builder.getI64IntegerAttr(axis));
}

/// The scale (input 1) and zero point (input 2, or null) of a Quantize or
/// DequantizeLinear of `x`, aligned to broadcast against it: per tensor, per
/// axis or, with `block_size`, per block along the axis.
FailureOr<std::pair<Value, Value>> scaleAndZeroPoint(OnnxNode &node, Value x,
                                                     StringRef prefix) {
  FailureOr<Value> scale = node.rankedInput(1);
  if (failed(scale))
    return failure();
  RankedTensorType xt = typeOf(x);
  Value zp = node.input(2);
  std::string scaleName = (prefix + "_scale").str();
  std::string zpName = (prefix + "_zero_point").str();
  if (int64_t block = node.intAttr("block_size", 0)) {
    if (block < 0 || failed(node.requireStaticShape(typeOf(*scale)))) {
      if (block < 0)
        node.fail() << "block_size " << block << " must be positive";
      return failure();
    }
    FailureOr<int64_t> axis =
        normalizeAxis(node, node.intAttr("axis", 1), xt.getRank());
    if (failed(axis))
      return failure();
    // Other dimensions of x may have run-time sizes (checked against the
    // scale's where they meet); the blocked one is cut at compile time.
    if (xt.isDynamicDim(*axis)) {
      node.fail() << "the blocked axis " << *axis << " of " << xt
                  << " has a run-time size; blocks need it static (give "
                     "that dimension one size)";
      return failure();
    }
    FailureOr<Value> s =
        expandBlocks(node, *scale, xt, *axis, block, scaleName);
    FailureOr<Value> z = zp ? expandBlocks(node, zp, xt, *axis, block, zpName)
                            : FailureOr<Value>(Value());
    if (failed(s) || failed(z))
      return failure();
    return std::pair{*s, *z};
  }
  FailureOr<int64_t> axis = quantAxis(node, xt, *scale);
  if (failed(axis))
    return failure();
  int64_t rank = xt.getRank();
  int64_t n = rank ? xt.getDimSize(*axis) : 1;
  // An axis of run-time size takes the scale's static length; the
  // broadcast against x checks at run time that the two agree.
  RankedTensorType st = typeOf(*scale);
  bool perTensor = st.hasStaticShape() && st.getNumElements() == 1;
  if (rank && xt.isDynamicDim(*axis) && !perTensor) {
    if (st.getRank() != 1 || st.isDynamicDim(0)) {
      node.fail() << scaleName << " of shape " << st << " must be a 1-D "
                  << "tensor of static length along axis " << *axis << " of "
                  << xt << ", whose size is known only at run time";
      return failure();
    }
    n = st.getDimSize(0);
  }
  FailureOr<Value> s = alongAxis(node, *scale, *axis, rank, n, scaleName);
  FailureOr<Value> z = zp ? alongAxis(node, zp, *axis, rank, n, zpName)
                          : FailureOr<Value>(Value());
  if (failed(s) || failed(z))
    return failure();
  return std::pair{*s, *z};
}
} // namespace

/// QuantizeLinear 10 (per tensor), 13 (per axis), 19 (float8, saturate),
/// 21 (blocks, int4, 16-bit), 23 (float4), 24, 25 (int2) with their default
/// precision (the division in the scale's type):
/// saturate(round(x / scale) + zero_point).
FailureOr<SmallVector<Value>>
mlir::kiln::convertQuantizeLinear(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0), scale = node.rankedInput(1);
  if (failed(x) || failed(scale))
    return failure();
  if (int64_t precision = node.intAttr("precision", 0);
      precision && !(precision == 1 && elementOf(*scale).isF32())) {
    node.fail() << "precision " << precision
                << " is not supported; Kiln divides by the scale in the "
                   "scale's own type (precision 0, or 1 for a float32 scale)";
    return failure();
  }
  FailureOr<Type> q = quantType(node, node.input(2));
  if (failed(q))
    return failure();
  FailureOr<std::pair<Value, Value>> sz = scaleAndZeroPoint(node, *x, "y");
  if (failed(sz))
    return failure();
  auto [s, zp] = *sz;
  if (!isa<FloatType>(elementOf(s))) {
    node.fail() << "y_scale must be a float tensor";
    return failure();
  }
  FailureOr<Value> xf = castTo(node, *x, elementOf(s));
  if (failed(xf))
    return failure();
  FailureOr<Value> v = build<DivOp>(node, *xf, s);
  if (failed(v))
    return failure();
  return one(saturateRound(node, *v, zp, *q));
}

/// DequantizeLinear 10 (per tensor), 13 (per axis), 19 (float8), 21
/// (blocks, int4, 16-bit), 23 (float4), 24, 25 (int2; output_dtype the
/// scale's type): (x - zero_point) * scale.
FailureOr<SmallVector<Value>>
mlir::kiln::convertDequantizeLinear(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0), scale = node.rankedInput(1);
  if (failed(x) || failed(scale))
    return failure();
  if (int64_t dtype = node.intAttr("output_dtype", 0);
      dtype && !(dtype == 1 && elementOf(*scale).isF32()) &&
      !(dtype == 10 && elementOf(*scale).isF16()) &&
      !(dtype == 16 && elementOf(*scale).isBF16())) {
    node.fail() << "output_dtype " << dtype
                << " differs from the scale's type " << elementOf(*scale)
                << ", which is not supported; Kiln returns the scale's type";
    return failure();
  }
  Type xt = elementOf(*x);
  if (!isQuantType(xt) && !xt.isSignlessInteger(32)) {
    node.fail() << "dequantizing " << xt
                << " is not supported; Kiln dequantizes 8-bit, 16-bit and "
                   "32-bit integers, int4, int2, float8 and float4";
    return failure();
  }
  if (isQuantType(xt) && failed(checkQuantOpset(node, xt)))
    return failure();
  FailureOr<std::pair<Value, Value>> sz = scaleAndZeroPoint(node, *x, "x");
  if (failed(sz))
    return failure();
  auto [s, zp] = *sz;
  Type f = elementOf(s);
  if (!isa<FloatType>(f)) {
    node.fail() << "x_scale must be a float tensor";
    return failure();
  }
  if (zp && elementOf(zp) != xt) {
    node.fail() << "x_zero_point is " << elementOf(zp) << " but x is " << xt
                << "; ONNX requires them to be of one type: check the "
                   "converter that wrote the model";
    return failure();
  }
  FailureOr<Value> v = castTo(node, *x, f);
  if (succeeded(v) && zp) {
    FailureOr<Value> zf = castTo(node, zp, f);
    if (failed(zf))
      return failure();
    v = build<SubOp>(node, *v, *zf);
  }
  if (failed(v))
    return failure();
  return one(build<MulOp>(node, *v, s));
}

/// DynamicQuantizeLinear 11: uint8 with the scale and zero point that map
/// [min(x, 0), max(x, 0)] onto [0, 255] (the op's function body, fused).
FailureOr<SmallVector<Value>>
mlir::kiln::convertDynamicQuantizeLinear(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0);
  if (failed(x))
    return failure();
  Type f = elementOf(*x);
  if (!f.isF32()) {
    node.fail() << "DynamicQuantizeLinear of " << f
                << " is not supported; it takes float32";
    return failure();
  }
  auto &b = node.builder;
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < typeOf(*x).getRank(); ++d)
    all.push_back(d);
  Value zero = scalarConstant(node, f, 0.0);
  FailureOr<Value> lo = build<ReduceMinOp>(
      node, *x, b.getDenseI64ArrayAttr(all), b.getBoolAttr(false));
  FailureOr<Value> hi = build<ReduceMaxOp>(
      node, *x, b.getDenseI64ArrayAttr(all), b.getBoolAttr(false));
  if (failed(lo) || failed(hi))
    return failure();
  lo = build<MinOp>(node, *lo, zero);
  hi = build<MaxOp>(node, *hi, zero);
  if (failed(lo) || failed(hi))
    return failure();
  FailureOr<Value> range = build<SubOp>(node, *hi, *lo);
  if (failed(range))
    return failure();
  FailureOr<Value> scale =
      build<DivOp>(node, *range, scalarConstant(node, f, 255.0));
  if (failed(scale))
    return failure();
  // zero point = saturate(round(0 - min / scale)).
  FailureOr<Value> minScaled = build<DivOp>(node, *lo, *scale);
  if (failed(minScaled))
    return failure();
  FailureOr<Value> zpf = build<SubOp>(node, zero, *minScaled);
  if (failed(zpf))
    return failure();
  Type u8 = b.getIntegerType(8, /*isSigned=*/false);
  FailureOr<Value> zp = saturateRound(node, *zpf, Value(), u8);
  if (failed(zp))
    return failure();
  FailureOr<Value> v = build<DivOp>(node, *x, *scale);
  if (failed(v))
    return failure();
  FailureOr<Value> y = saturateRound(node, *v, *zp, u8);
  if (failed(y))
    return failure();
  return SmallVector<Value>{*y, *scale, *zp};
}

namespace {
/// `v` widened to i32 minus its optional zero point `zp` (already aligned).
FailureOr<Value> widened(OnnxNode &node, Value v, FailureOr<Value> zp,
                         StringRef what) {
  Type t = elementOf(v);
  if (!isa<IntegerType>(t) || t.getIntOrFloatBitWidth() != 8) {
    node.fail() << what << " of type " << t
                << " is not supported; Kiln takes int8 and uint8";
    return failure();
  }
  Type i32 = node.builder.getI32Type();
  FailureOr<Value> w = castTo(node, v, i32);
  if (failed(zp))
    return failure();
  if (failed(w) || !*zp)
    return w;
  FailureOr<Value> z = castTo(node, *zp, i32);
  if (failed(z))
    return failure();
  return build<SubOp>(node, *w, *z);
}

/// A zero point or scale of A in A x B: scalar or per row of A.
FailureOr<Value> perRow(OnnxNode &node, Value v, Value a, StringRef what) {
  if (!v)
    return Value();
  RankedTensorType at = typeOf(a);
  int64_t rank = std::max<int64_t>(at.getRank(), 2);
  int64_t rows = at.getRank() >= 2 ? at.getDimSize(at.getRank() - 2) : 1;
  RankedTensorType vt = typeOf(v);
  if (ShapedType::isDynamic(rows) &&
      !(vt.hasStaticShape() && vt.getNumElements() == 1)) {
    node.fail() << what << " of shape " << vt
                << " is per row, and A's rows are symbolic (" << at
                << "): Kiln takes a per-row " << what
                << " with a static row count only; give the symbolic "
                   "dimensions one size to compile this node";
    return failure();
  }
  return alongAxis(node, v, rank - 2, rank, rows, what);
}

/// A zero point or scale of B in A x B: scalar or per column of B.
FailureOr<Value> perColumn(OnnxNode &node, Value v, Value bm, StringRef what) {
  if (!v)
    return Value();
  RankedTensorType bt = typeOf(bm);
  return alongAxis(node, v, 0, 1, bt.getDimSize(bt.getRank() - 1), what);
}

/// (A - a_zp) x (B - b_zp) in i32. A's sizes may be symbolic (a batch and
/// sequence of a dynamically quantized transformer); B's are static.
FailureOr<Value> matmulInteger(OnnxNode &node, Value a, Value bm, Value aZp,
                               Value bZp) {
  if ((!node.sizes && failed(node.requireStaticShape(typeOf(a)))) ||
      failed(node.requireStaticShape(typeOf(bm))))
    return failure();
  FailureOr<Value> a32 =
      widened(node, a, perRow(node, aZp, a, "a_zero_point"), "A");
  if (failed(a32))
    return failure();
  FailureOr<Value> b32 =
      widened(node, bm, perColumn(node, bZp, bm, "b_zero_point"), "B");
  if (failed(b32))
    return failure();
  return build<MatMulOp>(node, *a32, *b32);
}

/// A per-output-channel zero point or scale of the filter `w` (or a
/// scalar), aligned to dimension `axis` of a tensor of rank `rank`: 0 of the
/// filter [M, C, kH, kW], 1 of the result [N, M, H, W].
FailureOr<Value> perChannel(OnnxNode &node, Value v, Value w, int64_t axis,
                            int64_t rank, StringRef what) {
  if (!v)
    return Value();
  return alongAxis(node, v, axis, rank, typeOf(w).getDimSize(0), what);
}

/// (x - x_zp) * (w - w_zp) convolved in i32 (x_zp a scalar, w_zp per output
/// channel); padding contributes 0, i.e. x's zero point. x's batch, height
/// and width may be symbolic; the filter is static.
FailureOr<Value> convInteger(OnnxNode &node, Value x, Value w, Value xZp,
                             Value wZp) {
  if ((!node.sizes && failed(node.requireStaticShape(typeOf(x)))) ||
      failed(node.requireStaticShape(typeOf(w))))
    return failure();
  if (xZp &&
      (!typeOf(xZp).hasStaticShape() || typeOf(xZp).getNumElements() != 1)) {
    node.fail() << "a per-channel x_zero_point is not supported; ONNX "
                   "requires a scalar";
    return failure();
  }
  FailureOr<Value> x32 = widened(
      node, x, xZp ? reshapeTo(node, xZp, {}) : FailureOr<Value>(Value()), "x");
  if (failed(x32))
    return failure();
  // The filter [M, C, kH, kW]: a per-channel zero point is [M, 1, 1, 1].
  FailureOr<Value> wz =
      perChannel(node, wZp, w, 0, typeOf(w).getRank(), "w_zero_point");
  FailureOr<Value> w32 = widened(node, w, wz, "w");
  if (failed(w32))
    return failure();
  return buildConv(node, *x32, *w32, Value());
}

/// round(acc * multiplier) + zero point, saturated to the zero point's type.
FailureOr<SmallVector<Value>> requantize(OnnxNode &node, FailureOr<Value> acc,
                                         FailureOr<Value> multiplier,
                                         Value zp) {
  if (failed(acc) || failed(multiplier))
    return failure();
  FailureOr<Type> q = quantType(node, zp);
  if (failed(q))
    return failure();
  FailureOr<Value> f = castTo(node, *acc, elementOf(*multiplier));
  if (failed(f))
    return failure();
  FailureOr<Value> scaled = build<MulOp>(node, *f, *multiplier);
  FailureOr<Value> z = zp ? reshapeTo(node, zp, {}) : FailureOr<Value>(Value());
  if (failed(scaled) || failed(z))
    return failure();
  if (zp && typeOf(zp).getNumElements() != 1) {
    node.fail() << "a per-channel y_zero_point is not supported; ONNX "
                   "requires a scalar";
    return failure();
  }
  return one(saturateRound(node, *scaled, *z, *q));
}

/// a_scale * b_scale / y_scale: the f32 multiplier of the i32 accumulators.
FailureOr<Value> multiplier(OnnxNode &node, FailureOr<Value> aScale,
                            FailureOr<Value> bScale, Value yScale) {
  if (failed(aScale) || failed(bScale))
    return failure();
  FailureOr<Value> ys = reshapeTo(node, yScale, {});
  if (failed(ys))
    return failure();
  FailureOr<Value> m = build<MulOp>(node, *aScale, *bScale);
  if (failed(m))
    return failure();
  return build<DivOp>(node, *m, *ys);
}
} // namespace

FailureOr<SmallVector<Value>> mlir::kiln::convertMatMulInteger(OnnxNode &node) {
  FailureOr<Value> a = node.rankedInput(0), bm = node.rankedInput(1);
  if (failed(a) || failed(bm))
    return failure();
  return one(matmulInteger(node, *a, *bm, node.input(2), node.input(3)));
}

/// QLinearMatMul 10, 21 (which allows float16 and bfloat16 scales): inputs a, a_scale, a_zero_point, b, b_scale,
/// b_zero_point, y_scale, y_zero_point.
FailureOr<SmallVector<Value>> mlir::kiln::convertQLinearMatMul(OnnxNode &node) {
  for (unsigned i = 0; i < 8; ++i)
    if (failed(node.rankedInput(i)))
      return failure();
  Value a = node.input(0), bm = node.input(3);
  FailureOr<Value> acc =
      matmulInteger(node, a, bm, node.input(2), node.input(5));
  if (failed(acc))
    return failure();
  FailureOr<Value> m =
      multiplier(node, perRow(node, node.input(1), a, "a_scale"),
                 perColumn(node, node.input(4), bm, "b_scale"), node.input(6));
  return requantize(node, acc, m, node.input(7));
}

FailureOr<SmallVector<Value>> mlir::kiln::convertConvInteger(OnnxNode &node) {
  FailureOr<Value> x = node.rankedInput(0), w = node.rankedInput(1);
  if (failed(x) || failed(w))
    return failure();
  return one(convInteger(node, *x, *w, node.input(2), node.input(3)));
}

/// QLinearConv 10: inputs x, x_scale, x_zero_point, w, w_scale,
/// w_zero_point, y_scale, y_zero_point and an optional i32 bias.
FailureOr<SmallVector<Value>> mlir::kiln::convertQLinearConv(OnnxNode &node) {
  for (unsigned i = 0; i < 8; ++i)
    if (failed(node.rankedInput(i)))
      return failure();
  Value x = node.input(0), w = node.input(3);
  FailureOr<Value> acc = convInteger(node, x, w, node.input(2), node.input(5));
  if (failed(acc))
    return failure();
  int64_t rank = typeOf(*acc).getRank();
  if (Value bias = node.input(8)) {
    if (!elementOf(bias).isSignlessInteger(32)) {
      node.fail() << "the bias must be int32, got " << elementOf(bias);
      return failure();
    }
    FailureOr<Value> bb = perChannel(node, bias, w, 1, rank, "B");
    if (failed(bb))
      return failure();
    acc = build<AddOp>(node, *acc, *bb);
    if (failed(acc))
      return failure();
  }
  FailureOr<Value> xs = reshapeTo(node, node.input(1), {});
  FailureOr<Value> m = multiplier(
      node, xs, perChannel(node, node.input(4), w, 1, rank, "w_scale"),
      node.input(6));
  return requantize(node, acc, m, node.input(7));
}

//===----------------------------------------------------------------------===//
// com.microsoft's QLinear ops (ONNX Runtime's QOperator quantization)
//===----------------------------------------------------------------------===//
//
// quantize_static(quant_format=QOperator) writes the ops between QLinearConv
// and QLinearMatMul in ONNX Runtime's contrib domain. Each is the float op
// between a dequantization of its 8-bit inputs and a quantization of its
// result, all with scales and zero points per tensor:
//   y = saturate(round(f((x - x_zp) * x_scale) / y_scale) + y_zp).
// They convert to that composition; the graph passes fuse it as they fuse a
// QDQ model's.

namespace {
/// The 8-bit type of a contrib op's zero point (uint8 when it is omitted).
FailureOr<Type> contribQuantType(OnnxNode &node, Value zeroPoint,
                                 StringRef what) {
  Type q = zeroPoint ? elementOf(zeroPoint)
                     : node.builder.getIntegerType(8, /*isSigned=*/false);
  if (!q.isInteger(8)) {
    node.fail() << what << " must be uint8 or int8, got " << q;
    return failure();
  }
  return q;
}

/// A scale or zero point of a contrib QLinear op: one element, as a scalar.
FailureOr<Value> perTensor(OnnxNode &node, unsigned i, StringRef what,
                           bool isScale) {
  Value v = node.input(i);
  if (!v)
    return Value();
  FailureOr<Value> ranked = node.rankedInput(i);
  if (failed(ranked))
    return failure();
  RankedTensorType t = typeOf(*ranked);
  if (!t.hasStaticShape() || t.getNumElements() != 1 ||
      (isScale && !t.getElementType().isF32())) {
    node.fail() << what << " must be one "
                << (isScale ? "float32 value" : "value")
                << " (per tensor), got " << t;
    return failure();
  }
  return reshapeTo(node, *ranked, {});
}

/// The scale (required) and zero point (or null) of `name` at inputs `i`
/// and `i + 1`, as scalars.
FailureOr<std::pair<Value, Value>>
contribScaleAndZeroPoint(OnnxNode &node, unsigned i, StringRef name) {
  FailureOr<Value> s = perTensor(node, i, (name + "_scale").str(), true);
  FailureOr<Value> z = perTensor(node, i + 1, (name + "_zero_point").str(), false);
  if (failed(s) || failed(z))
    return failure();
  if (!*s) {
    node.fail() << name << "_scale is required";
    return failure();
  }
  return std::pair{*s, *z};
}

/// (x - zero point) * scale in f32 for the 8-bit input `x` with its scale
/// and zero point at inputs `x + 1` and `x + 2`.
FailureOr<Value> contribDequantize(OnnxNode &node, unsigned x, StringRef name) {
  FailureOr<Value> xv = node.rankedInput(x);
  FailureOr<std::pair<Value, Value>> sz =
      succeeded(xv) ? contribScaleAndZeroPoint(node, x + 1, name)
                    : FailureOr<std::pair<Value, Value>>(failure());
  if (failed(sz))
    return failure();
  auto [s, z] = *sz;
  FailureOr<Type> q = contribQuantType(node, *xv, name);
  if (failed(q))
    return failure();
  if (z && elementOf(z) != *q) {
    node.fail() << name << "_zero_point's type " << elementOf(z)
                << " differs from " << name << "'s " << *q;
    return failure();
  }
  Type f32 = node.builder.getF32Type();
  FailureOr<Value> v = castTo(node, *xv, f32);
  if (succeeded(v) && z)
    v = build<SubOp>(node, *v, *castTo(node, z, f32));
  if (failed(v))
    return failure();
  return build<MulOp>(node, *v, s);
}

/// saturate(round(v / scale) + zero point) with the scale and zero point at
/// inputs `s` and `s + 1`.
FailureOr<SmallVector<Value>> contribQuantize(OnnxNode &node,
                                              FailureOr<Value> v, unsigned s,
                                              StringRef name) {
  if (failed(v))
    return failure();
  FailureOr<std::pair<Value, Value>> sz = contribScaleAndZeroPoint(node, s, name);
  if (failed(sz))
    return failure();
  auto [scale, zp] = *sz;
  FailureOr<Type> q = contribQuantType(node, zp, (name + "_zero_point").str());
  if (failed(q))
    return failure();
  FailureOr<Value> scaled = build<DivOp>(node, *v, scale);
  if (failed(scaled))
    return failure();
  return one(saturateRound(node, *scaled, zp, *q));
}

/// QLinearAdd / QLinearMul: A, A_scale, A_zero_point, B, B_scale,
/// B_zero_point, C_scale, C_zero_point, numpy broadcasting.
template <typename OpTy>
FailureOr<SmallVector<Value>> qlinearBinary(OnnxNode &node) {
  FailureOr<Value> a = contribDequantize(node, 0, "A"),
                   b = contribDequantize(node, 3, "B");
  if (failed(a) || failed(b))
    return failure();
  return contribQuantize(node, build<OpTy>(node, *a, *b), 6, "C");
}
} // namespace

FailureOr<SmallVector<Value>> mlir::kiln::convertQLinearAdd(OnnxNode &node) {
  return qlinearBinary<AddOp>(node);
}

FailureOr<SmallVector<Value>> mlir::kiln::convertQLinearMul(OnnxNode &node) {
  return qlinearBinary<MulOp>(node);
}

/// QLinearSigmoid: X, X_scale, X_zero_point, Y_scale, Y_zero_point.
FailureOr<SmallVector<Value>>
mlir::kiln::convertQLinearSigmoid(OnnxNode &node) {
  FailureOr<Value> x = contribDequantize(node, 0, "X");
  if (failed(x))
    return failure();
  return contribQuantize(node, build<SigmoidOp>(node, *x), 3, "Y");
}

/// QLinearSoftmax: as QLinearSigmoid, the softmax along `axis` (-1); its
/// `opset` attribute (the Softmax version it stands for) below 13 takes the
/// softmax over the whole block of dimensions from `axis`, as Softmax did.
FailureOr<SmallVector<Value>>
mlir::kiln::convertQLinearSoftmax(OnnxNode &node) {
  FailureOr<Value> x = contribDequantize(node, 0, "X");
  if (failed(x))
    return failure();
  bool coerce = node.intAttr("opset", 13) < 13;
  return contribQuantize(
      node, softmaxOf(node, *x, node.intAttr("axis", -1), coerce), 3, "Y");
}

/// QLinearLeakyRelu: as QLinearSigmoid, with `alpha` (0.01).
FailureOr<SmallVector<Value>>
mlir::kiln::convertQLinearLeakyRelu(OnnxNode &node) {
  FailureOr<Value> x = contribDequantize(node, 0, "X");
  if (failed(x))
    return failure();
  auto &b = node.builder;
  return contribQuantize(
      node,
      build<LeakyReluOp>(node, *x,
                         b.getF32FloatAttr(node.floatAttr("alpha", 0.01f)),
                         b.getF32FloatAttr(0.0f)),
      3, "Y");
}

/// QLinearGlobalAveragePool: X, x_scale, x_zero_point, y_scale,
/// y_zero_point; `channels_last` puts the channels after the spatial axes.
FailureOr<SmallVector<Value>>
mlir::kiln::convertQLinearGlobalAveragePool(OnnxNode &node) {
  FailureOr<Value> x = contribDequantize(node, 0, "x");
  if (failed(x))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  if (rank < 3) {
    node.fail() << "expects X of rank 3 or more, got " << typeOf(node.input(0));
    return failure();
  }
  FailureOr<Value> mean;
  if (node.intAttr("channels_last", 0)) {
    SmallVector<int64_t> axes;
    for (int64_t d = 1; d + 1 < rank; ++d)
      axes.push_back(d);
    mean =
        build<ReduceMeanOp>(node, *x, node.builder.getDenseI64ArrayAttr(axes),
                            node.builder.getBoolAttr(true));
  } else {
    mean = build<GlobalAvgPoolOp>(node, *x);
  }
  return contribQuantize(node, mean, 3, "y");
}

/// QLinearAveragePool: X, x_scale, x_zero_point, y_scale, y_zero_point,
/// with AveragePool's attributes; `channels_last` (rank 4) pools NHWC.
FailureOr<SmallVector<Value>>
mlir::kiln::convertQLinearAveragePool(OnnxNode &node) {
  FailureOr<Value> x = contribDequantize(node, 0, "x");
  if (failed(x))
    return failure();
  bool channelsLast = node.intAttr("channels_last", 0) != 0;
  if (channelsLast && typeOf(*x).getRank() != 4) {
    node.fail() << "channels_last is supported for 4-D X only, got "
                << typeOf(node.input(0));
    return failure();
  }
  auto &b = node.builder;
  if (channelsLast)
    x = build<TransposeOp>(node, *x, b.getDenseI64ArrayAttr({0, 3, 1, 2}));
  FailureOr<Value> y =
      succeeded(x) ? averagePoolOf(node, *x) : FailureOr<Value>(failure());
  if (channelsLast && succeeded(y))
    y = build<TransposeOp>(node, *y, b.getDenseI64ArrayAttr({0, 2, 3, 1}));
  return contribQuantize(node, y, 3, "y");
}

/// QLinearConcat: Y_scale, Y_zero_point, then X, X_scale, X_zero_point for
/// each input; `axis`.
FailureOr<SmallVector<Value>> mlir::kiln::convertQLinearConcat(OnnxNode &node) {
  unsigned n = node.numInputs();
  if (n < 5 || (n - 2) % 3 != 0) {
    node.fail() << "expects Y_scale, Y_zero_point and a (tensor, scale, zero "
                   "point) triple per input, got "
                << n << " inputs";
    return failure();
  }
  SmallVector<Value> parts;
  for (unsigned i = 2; i < n; i += 3) {
    FailureOr<Value> x =
        contribDequantize(node, i, "X" + std::to_string((i - 2) / 3));
    if (failed(x))
      return failure();
    parts.push_back(*x);
  }
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.intAttr("axis", 0), typeOf(parts[0]).getRank());
  if (failed(axis))
    return failure();
  return contribQuantize(
      node, build<ConcatOp>(node, parts, node.builder.getI64IntegerAttr(*axis)),
      0, "Y");
}

/// QGemm: A, a_scale, a_zero_point, B, b_scale, b_zero_point, then optional
/// C (int32, at scale alpha * a_scale * b_scale), y_scale and
/// y_zero_point; `alpha`, `transA`, `transB`. b_scale and b_zero_point are
/// per tensor or per output column. Y is
/// alpha * dequant(A) dequant(B) + C * alpha * a_scale * b_scale, quantized
/// when y_scale is given, else float32.
FailureOr<SmallVector<Value>> mlir::kiln::convertQGemm(OnnxNode &node) {
  FailureOr<Value> a = contribDequantize(node, 0, "a");
  FailureOr<Value> bq = node.rankedInput(3), bs = node.rankedInput(4);
  FailureOr<bool> transAFlag = flagAttr(node, "transA"),
                  transBFlag = flagAttr(node, "transB");
  if (failed(a) || failed(bq) || failed(bs) || failed(transAFlag) ||
      failed(transBFlag))
    return failure();
  bool transA = *transAFlag, transB = *transBFlag;
  RankedTensorType bt = typeOf(*bq);
  if (typeOf(*a).getRank() != 2 || bt.getRank() != 2 || !bt.hasStaticShape() ||
      !elementOf(*bq).isInteger(8)) {
    node.fail() << "expects 2-D A and a 2-D uint8 or int8 B of static shape, "
                   "got "
                << typeOf(node.input(0)) << " and " << bt;
    return failure();
  }
  // B's scale and zero point along its output axis (N): [1, N], or [N, 1]
  // for transB.
  int64_t n = bt.getDimSize(transB ? 0 : 1);
  SmallVector<int64_t> column =
      transB ? SmallVector<int64_t>{n, 1} : SmallVector<int64_t>{1, n};
  auto alongN = [&](Value v, StringRef what, bool isScale) -> FailureOr<Value> {
    RankedTensorType t = typeOf(v);
    if (!t.hasStaticShape() || (isScale && !t.getElementType().isF32()) ||
        (t.getNumElements() != 1 &&
         (t.getRank() != 1 || t.getDimSize(0) != n))) {
      node.fail() << what << " must be one " << (isScale ? "float32 " : "")
                  << "value or one per output column (" << n << "), got " << t;
      return failure();
    }
    return reshapeTo(node, v,
                     t.getNumElements() == 1 ? SmallVector<int64_t>{} : column);
  };
  FailureOr<Value> scale = alongN(*bs, "b_scale", true);
  FailureOr<Value> b = castTo(node, *bq, node.builder.getF32Type());
  if (failed(scale) || failed(b))
    return failure();
  if (Value zp = node.input(5)) {
    if (elementOf(zp) != elementOf(*bq)) {
      node.fail() << "b_zero_point's type " << elementOf(zp)
                  << " differs from B's " << elementOf(*bq);
      return failure();
    }
    FailureOr<Value> z = alongN(zp, "b_zero_point", false);
    if (failed(z))
      return failure();
    b = build<SubOp>(node, *b, *castTo(node, *z, node.builder.getF32Type()));
  }
  if (succeeded(b))
    b = build<MulOp>(node, *b, *scale);
  if (failed(b))
    return failure();
  float alpha = node.floatAttr("alpha", 1.0f);
  auto &bl = node.builder;
  FailureOr<Value> y = build<GemmOp>(
      node, *a, *b, Value(), bl.getF32FloatAttr(alpha),
      bl.getF32FloatAttr(1.0f), bl.getBoolAttr(transA), bl.getBoolAttr(transB));
  if (failed(y))
    return failure();
  if (Value c = node.input(6)) {
    if (!elementOf(c).isSignlessInteger(32)) {
      node.fail() << "C must be int32, got " << elementOf(c);
      return failure();
    }
    // C's scale: alpha * a_scale * b_scale (per column as [N]).
    FailureOr<Value> as = perTensor(node, 1, "a_scale", true);
    FailureOr<Value> cs =
        reshapeTo(node, *bs,
                  typeOf(*bs).getNumElements() == 1 ? SmallVector<int64_t>{}
                                                    : SmallVector<int64_t>{n});
    if (failed(as) || failed(cs))
      return failure();
    FailureOr<Value> factor = build<MulOp>(node, *as, *cs);
    if (succeeded(factor))
      factor = build<MulOp>(node, *factor,
                            scalarConstant(node, bl.getF32Type(), alpha));
    FailureOr<Value> cf = castTo(node, c, bl.getF32Type());
    if (failed(factor) || failed(cf))
      return failure();
    FailureOr<Value> scaled = build<MulOp>(node, *cf, *factor);
    if (failed(scaled))
      return failure();
    y = build<AddOp>(node, *y, *scaled);
  }
  if (!node.input(7))
    return one(y);
  return contribQuantize(node, y, 7, "y");
}
