//===- KilnOps.cpp - Kiln op verifiers and shape inference ------*- C++ -*-===//
//
// Every shape rule of the graph dialect lives here, in inferReturnTypes: the
// verifier, the shape-inference pass and OnnxToKiln's builders all use it.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "OpHelpers.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::kiln;

using namespace mlir::kiln::detail;

bool mlir::kiln::areCompatibleTensorTypes(TypeRange lhs, TypeRange rhs) {
  if (lhs.size() != rhs.size())
    return false;
  for (auto [l, r] : llvm::zip(lhs, rhs)) {
    auto lt = dyn_cast<RankedTensorType>(l), rt = dyn_cast<RankedTensorType>(r);
    if (!lt || !rt)
      return l == r;
    if (lt.getElementType() != rt.getElementType() ||
        lt.getRank() != rt.getRank())
      return false;
    for (auto [a, b] : llvm::zip(lt.getShape(), rt.getShape()))
      if (a != kDyn && b != kDyn && a != b)
        return false;
  }
  return true;
}

FailureOr<SmallVector<int64_t>>
mlir::kiln::broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t a = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t b = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (a == 1)
      out[i] = b;
    else if (b == 1 || a == b)
      out[i] = a;
    else if (a == kDyn || b == kDyn)
      out[i] = a == kDyn ? b : a;
    else
      return failure();
  }
  return out;
}

namespace {
/// Output length of a sliding window (convolution or pooling).
int64_t windowOutput(int64_t in, int64_t kernel, int64_t stride,
                     int64_t dilation, int64_t padBegin, int64_t padEnd,
                     bool ceilMode) {
  if (in == kDyn)
    return kDyn;
  int64_t span = (kernel - 1) * dilation + 1;
  int64_t room = in + padBegin + padEnd - span;
  if (room < 0)
    return 0;
  int64_t out = (ceilMode ? (room + stride - 1) / stride : room / stride) + 1;
  // The last window must start inside the input or its leading padding.
  if (ceilMode && (out - 1) * stride >= in + padBegin)
    --out;
  return out;
}

LogicalResult checkWindowAttrs(std::optional<Location> loc, StringRef what,
                               ArrayRef<int64_t> strides,
                               ArrayRef<int64_t> dilations,
                               ArrayRef<int64_t> pads) {
  if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4)
    return emitOptionalError(loc, what,
                             " expects 2 strides, 2 dilations and 4 pads, got ",
                             strides.size(), ", ", dilations.size(), " and ",
                             pads.size());
  if (llvm::any_of(strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(dilations, [](int64_t d) { return d < 1; }) ||
      llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return emitOptionalError(
        loc, what, " expects positive strides and dilations and non-negative pads");
  return success();
}
} // namespace

//===----------------------------------------------------------------------===//
// Constants and data movement
//===----------------------------------------------------------------------===//

LogicalResult mlir::kiln::verifySameElementType(Operation *op,
                                                RankedTensorType in,
                                                RankedTensorType out) {
  if (in.getElementType() != out.getElementType())
    return op->emitOpError() << "cannot change the element type from "
                             << in.getElementType() << " to "
                             << out.getElementType();
  return success();
}

std::optional<SmallVector<int64_t>>
mlir::kiln::unitDimsReshape(RankedTensorType in, RankedTensorType out) {
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (in.getDimSize(d) != 1)
      kept.push_back(d);
  SmallVector<int64_t> sources;
  size_t next = 0;
  for (int64_t d = 0; d < out.getRank(); ++d) {
    if (out.getDimSize(d) == 1) {
      sources.push_back(-1);
      continue;
    }
    if (next == kept.size() || in.getDimSize(kept[next]) != out.getDimSize(d))
      return std::nullopt;
    sources.push_back(kept[next++]);
  }
  if (next != kept.size())
    return std::nullopt;
  return sources;
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  if (failed(verifySameElementType(*this, in, out)))
    return failure();
  if (in.hasStaticShape() && out.hasStaticShape() &&
      in.getNumElements() != out.getNumElements())
    return emitOpError() << "cannot reshape " << in.getNumElements()
                         << " elements " << shapeStr(in.getShape()) << " into "
                         << out.getNumElements() << " "
                         << shapeStr(out.getShape());
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType in = rankedType(adaptor.getInput());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  if ((int64_t)perm.size() != in.getRank())
    return emitOptionalError(loc, "expects perm of size ", in.getRank(),
                             ", got ", perm.size());
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank() || seen[p])
      return emitOptionalError(loc, "perm ", shapeStr(perm),
                               " is not a permutation of 0..", in.getRank() - 1);
    seen[p] = true;
    shape.push_back(in.getDimSize(p));
  }
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}
KILN_COMPATIBLE(TransposeOp)

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  if (adaptor.getInputs().empty())
    return emitOptionalError(loc, "expects at least one input");
  RankedTensorType first = rankedType(adaptor.getInputs().front());
  int64_t rank = first.getRank(), axis = adaptor.getAxis();
  if (axis < 0 || axis >= rank)
    return emitOptionalError(loc, "axis ", axis, " is out of range for rank ",
                             rank);
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (Value v : adaptor.getInputs()) {
    RankedTensorType t = rankedType(v);
    if (t.getRank() != rank || t.getElementType() != first.getElementType())
      return emitOptionalError(loc, "expects inputs of one rank and element type");
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis)
        continue;
      if (t.getDimSize(d) != shape[d] && t.getDimSize(d) != kDyn &&
          shape[d] != kDyn)
        return emitOptionalError(loc, "input shapes ", shapeStr(first.getShape()),
                                 " and ", shapeStr(t.getShape()),
                                 " differ outside axis ", axis);
      if (shape[d] == kDyn)
        shape[d] = t.getDimSize(d);
    }
    int64_t a = t.getDimSize(axis);
    shape[axis] = (shape[axis] == kDyn || a == kDyn) ? kDyn : shape[axis] + a;
  }
  types.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}
KILN_COMPATIBLE(ConcatOp)

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  RankedTensorType in = rankedType(adaptor.getInput());
  ArrayRef<int64_t> pads = adaptor.getPads();
  int64_t rank = in.getRank();
  if ((int64_t)pads.size() != 2 * rank)
    return emitOptionalError(loc, "expects ", 2 * rank, " pads for rank ", rank,
                             ", got ", pads.size());
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return emitOptionalError(loc, "expects non-negative pads, got ",
                             shapeStr(pads));
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t s = in.getDimSize(d);
    shape.push_back(s == kDyn ? kDyn : s + pads[d] + pads[d + rank]);
  }
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}
KILN_COMPATIBLE(PadOp)

LogicalResult UpsampleNearestOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  RankedTensorType in = rankedType(adaptor.getInput());
  ArrayRef<int64_t> scales = adaptor.getScales();
  int64_t rank = in.getRank();
  if ((int64_t)scales.size() != rank)
    return emitOptionalError(loc, "expects ", rank, " scales for rank ", rank,
                             ", got ", scales.size());
  if (llvm::any_of(scales, [](int64_t k) { return k < 1 || k > (1 << 16); }))
    return emitOptionalError(loc, "expects scales from 1 to 65536, got ",
                             shapeStr(scales));
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t s = in.getDimSize(d), r;
    if (s == kDyn)
      shape.push_back(kDyn);
    else if (__builtin_mul_overflow(s, scales[d], &r))
      return emitOptionalError(loc, "dimension ", d, " of size ", s,
                               " times ", scales[d], " overflows");
    else
      shape.push_back(r);
  }
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}
KILN_COMPATIBLE(UpsampleNearestOp)

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  RankedTensorType in = rankedType(adaptor.getInput()),
                   idx = rankedType(adaptor.getIndices());
  int64_t rank = in.getRank(), axis = adaptor.getAxis();
  if (axis < 0 || axis >= rank)
    return emitOptionalError(loc, "axis ", axis, " is out of range for rank ",
                             rank);
  // With no element to clamp into, any index would read outside the input.
  if (in.getDimSize(axis) == 0 && idx.hasStaticShape() &&
      idx.getNumElements() > 0)
    return emitOptionalError(loc, "cannot gather from axis ", axis,
                             " of size 0");
  SmallVector<int64_t> shape(in.getShape().take_front(axis));
  llvm::append_range(shape, idx.getShape());
  llvm::append_range(shape, in.getShape().drop_front(axis + 1));
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}
KILN_COMPATIBLE(GatherOp)

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  RankedTensorType in = rankedType(adaptor.getInput());
  ArrayRef<int64_t> offsets = adaptor.getOffsets(), sizes = adaptor.getSizes(),
                    strides = adaptor.getStrides();
  int64_t rank = in.getRank();
  if ((int64_t)offsets.size() != rank || (int64_t)sizes.size() != rank ||
      (int64_t)strides.size() != rank)
    return emitOptionalError(
        loc, "expects ", rank, " offsets, sizes and strides for rank ", rank,
        ", got ", offsets.size(), ", ", sizes.size(), " and ", strides.size());
  for (int64_t d = 0; d < rank; ++d) {
    if (offsets[d] < 0 || sizes[d] < 0 || strides[d] < 1)
      return emitOptionalError(
          loc,
          "expects non-negative offsets and sizes and positive strides, "
          "got offsets ",
          shapeStr(offsets), ", sizes ", shapeStr(sizes), ", strides ",
          shapeStr(strides));
    int64_t dim = in.getDimSize(d);
    // The last position read, offset + (size - 1) * stride, must exist.
    if (dim != kDyn && sizes[d] > 0 &&
        (offsets[d] >= dim ||
         (sizes[d] - 1) > (dim - 1 - offsets[d]) / strides[d]))
      return emitOptionalError(
          loc, "dimension ", d, " of size ", dim, " has no room for ", sizes[d],
          " elements from offset ", offsets[d], " with stride ", strides[d]);
  }
  types.push_back(RankedTensorType::get(sizes, in.getElementType()));
  return success();
}
KILN_COMPATIBLE(SliceOp)

LogicalResult CastOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  RankedTensorType in = rankedType(adaptor.getInput());
  types.push_back(in.clone(adaptor.getTo()));
  return success();
}
KILN_COMPATIBLE(CastOp)

LogicalResult BitCastOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  RankedTensorType in = rankedType(adaptor.getInput());
  Type to = adaptor.getTo();
  // A bool is stored as a byte.
  auto bits = [](Type t) {
    return t.isInteger(1) ? 8u : t.getIntOrFloatBitWidth();
  };
  if (bits(in.getElementType()) != bits(to))
    return emitOptionalError(loc, "cannot bitcast ", in.getElementType(),
                             " to ", to, ": the widths differ");
  types.push_back(in.clone(to));
  return success();
}
KILN_COMPATIBLE(BitCastOp)

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult ClipOp::verify() {
  if (getMin().convertToDouble() > getMax().convertToDouble())
    return emitOpError() << "min " << getMin().convertToDouble()
                         << " exceeds max " << getMax().convertToDouble();
  return success();
}

static LogicalResult inferBroadcast(std::optional<Location> loc, Value lhs,
                                    Value rhs, SmallVectorImpl<Type> &types) {
  RankedTensorType l = rankedType(lhs), r = rankedType(rhs);
  if (l.getElementType() != r.getElementType())
    return emitOptionalError(loc, "operand element types ", l.getElementType(),
                             " and ", r.getElementType(), " differ");
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(l.getShape(), r.getShape());
  if (failed(shape))
    return emitOptionalError(loc, "shapes ", shapeStr(l.getShape()), " and ",
                             shapeStr(r.getShape()), " do not broadcast");
  types.push_back(RankedTensorType::get(*shape, l.getElementType()));
  return success();
}

#define KILN_BINARY(OP)                                                        \
  LogicalResult OP::inferReturnTypes(MLIRContext *,                            \
                                     std::optional<Location> loc,              \
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &types) {           \
    return inferBroadcast(loc, adaptor.getLhs(), adaptor.getRhs(), types);     \
  }                                                                            \
  KILN_COMPATIBLE(OP)
KILN_BINARY(AddOp)
KILN_BINARY(SubOp)
KILN_BINARY(MulOp)
KILN_BINARY(DivOp)
KILN_BINARY(PowOp)
KILN_BINARY(MaxOp)
KILN_BINARY(MinOp)
KILN_BINARY(AndOp)
KILN_BINARY(OrOp)
KILN_BINARY(XorOp)
KILN_BINARY(PReluOp)
KILN_BINARY(ModOp)
KILN_BINARY(BitShiftOp)
#undef KILN_BINARY

LogicalResult ModOp::verify() {
  if (!getFmod() && isa<FloatType>(getType().getElementType()))
    return emitOpError() << "on floats requires fmod = true";
  return success();
}

// Comparisons: the broadcast shape of the operands, as bool.
#define KILN_COMPARE(OP)                                                       \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *ctx, std::optional<Location> loc, Adaptor adaptor,          \
      SmallVectorImpl<Type> &types) {                                          \
    if (failed(                                                                \
            inferBroadcast(loc, adaptor.getLhs(), adaptor.getRhs(), types)))   \
      return failure();                                                        \
    types[0] =                                                                 \
        cast<RankedTensorType>(types[0]).clone(IntegerType::get(ctx, 1));      \
    return success();                                                          \
  }                                                                            \
  KILN_COMPATIBLE(OP)
KILN_COMPARE(EqualOp)
KILN_COMPARE(LessOp)
KILN_COMPARE(LessEqualOp)
KILN_COMPARE(GreaterOp)
KILN_COMPARE(GreaterEqualOp)
#undef KILN_COMPARE

LogicalResult WhereOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  if (failed(inferBroadcast(loc, adaptor.getLhs(), adaptor.getRhs(), types)))
    return failure();
  auto values = cast<RankedTensorType>(types[0]);
  RankedTensorType c = rankedType(adaptor.getCondition());
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(c.getShape(), values.getShape());
  if (failed(shape))
    return emitOptionalError(loc, "condition shape ", shapeStr(c.getShape()),
                             " does not broadcast with ",
                             shapeStr(values.getShape()));
  types[0] = RankedTensorType::get(*shape, values.getElementType());
  return success();
}
KILN_COMPATIBLE(WhereOp)

//===----------------------------------------------------------------------===//
// Linear algebra and convolution
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  RankedTensorType l = rankedType(adaptor.getLhs()),
                   r = rankedType(adaptor.getRhs());
  if (l.getRank() < 1 || r.getRank() < 1)
    return emitOptionalError(loc, "expects operands of rank 1 or more");
  if (l.getElementType() != r.getElementType())
    return emitOptionalError(loc, "operand element types differ");
  SmallVector<int64_t> ls(l.getShape()), rs(r.getShape());
  bool lVec = ls.size() == 1, rVec = rs.size() == 1;
  if (lVec)
    ls.insert(ls.begin(), 1);
  if (rVec)
    rs.push_back(1);
  int64_t k1 = ls.back(), k2 = rs[rs.size() - 2];
  if (k1 != kDyn && k2 != kDyn && k1 != k2)
    return emitOptionalError(loc, "contracting dimensions differ: ",
                             shapeStr(l.getShape()), " x ",
                             shapeStr(r.getShape()));
  FailureOr<SmallVector<int64_t>> batch =
      broadcastShapes(ArrayRef<int64_t>(ls).drop_back(2),
                      ArrayRef<int64_t>(rs).drop_back(2));
  if (failed(batch))
    return emitOptionalError(loc, "batch dimensions of ", shapeStr(l.getShape()),
                             " and ", shapeStr(r.getShape()),
                             " do not broadcast");
  SmallVector<int64_t> shape = *batch;
  if (!lVec)
    shape.push_back(ls[ls.size() - 2]);
  if (!rVec)
    shape.push_back(rs.back());
  types.push_back(RankedTensorType::get(shape, l.getElementType()));
  return success();
}
KILN_COMPATIBLE(MatMulOp)

LogicalResult GemmOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  RankedTensorType a = rankedType(adaptor.getA()), b = rankedType(adaptor.getB());
  if (a.getRank() != 2 || b.getRank() != 2)
    return emitOptionalError(loc, "expects 2-D A and B, got ",
                             shapeStr(a.getShape()), " and ",
                             shapeStr(b.getShape()));
  bool ta = adaptor.getTransA(), tb = adaptor.getTransB();
  int64_t m = a.getDimSize(ta ? 1 : 0), ka = a.getDimSize(ta ? 0 : 1);
  int64_t kb = b.getDimSize(tb ? 1 : 0), n = b.getDimSize(tb ? 0 : 1);
  if (ka != kDyn && kb != kDyn && ka != kb)
    return emitOptionalError(loc, "contracting dimensions differ: ", ka, " vs ",
                             kb);
  if (Value c = adaptor.getC()) {
    FailureOr<SmallVector<int64_t>> s =
        broadcastShapes(rankedType(c).getShape(), {m, n});
    if (failed(s) || s->size() != 2 || ((*s)[0] != m && m != kDyn) ||
        ((*s)[1] != n && n != kDyn))
      return emitOptionalError(loc, "C of shape ",
                               shapeStr(rankedType(c).getShape()),
                               " does not broadcast to ", shapeStr({m, n}));
  }
  types.push_back(RankedTensorType::get({m, n}, a.getElementType()));
  return success();
}
KILN_COMPATIBLE(GemmOp)

LogicalResult Conv2DOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  RankedTensorType x = rankedType(adaptor.getInput()),
                   w = rankedType(adaptor.getFilter());
  if (x.getRank() != 4 || w.getRank() != 4)
    return emitOptionalError(loc, "expects 4-D input and filter, got ",
                             shapeStr(x.getShape()), " and ",
                             shapeStr(w.getShape()));
  ArrayRef<int64_t> st = adaptor.getStrides(), dl = adaptor.getDilations(),
                    pd = adaptor.getPads();
  if (failed(checkWindowAttrs(loc, "conv2d", st, dl, pd)))
    return failure();
  StringRef layout = adaptor.getLayout();
  if (layout != "NCHW" && layout != "NHWC")
    return emitOptionalError(loc, "expects layout \"NCHW\" or \"NHWC\", got \"",
                             layout, "\"");
  // Where channels, spatial dimensions and filter dimensions sit.
  bool nhwc = layout == "NHWC";
  int64_t xc = nhwc ? 3 : 1, xh = nhwc ? 1 : 2, wf = nhwc ? 3 : 0,
          wcd = nhwc ? 2 : 1, wh = nhwc ? 0 : 2;
  int64_t group = adaptor.getGroup();
  int64_t c = x.getDimSize(xc), f = w.getDimSize(wf), wc = w.getDimSize(wcd);
  if (group < 1 || (f != kDyn && f % group) ||
      (c != kDyn && wc != kDyn && c != wc * group))
    return emitOptionalError(loc, "input channels ", c, ", filter ",
                             shapeStr(w.getShape()), " and group ", group,
                             " disagree (expects C = filter C * group)");
  if (Value b = adaptor.getBias()) {
    RankedTensorType bt = rankedType(b);
    if (bt.getRank() != 1 || (bt.getDimSize(0) != f && f != kDyn))
      return emitOptionalError(loc, "bias of shape ", shapeStr(bt.getShape()),
                               " does not match ", f, " output channels");
  }
  SmallVector<int64_t> shape = {x.getDimSize(0)};
  for (int i = 0; i < 2; ++i)
    shape.push_back(windowOutput(x.getDimSize(xh + i), w.getDimSize(wh + i),
                                 st[i], dl[i], pd[i], pd[i + 2], false));
  shape.insert(shape.begin() + xc, f);
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}
KILN_COMPATIBLE(Conv2DOp)

//===----------------------------------------------------------------------===//
// Pooling and reductions
//===----------------------------------------------------------------------===//

template <typename Adaptor>
static LogicalResult inferPool(std::optional<Location> loc, Adaptor adaptor,
                               SmallVectorImpl<Type> &types) {
  RankedTensorType x = rankedType(adaptor.getInput());
  StringRef layout = adaptor.getLayout();
  if (layout != "NCHW" && layout != "NHWC")
    return emitOptionalError(loc, "expects layout \"NCHW\" or \"NHWC\", got \"",
                             layout, "\"");
  if (x.getRank() != 4)
    return emitOptionalError(loc, "expects a 4-D ", layout, " input, got ",
                             shapeStr(x.getShape()));
  int64_t xc = layout == "NHWC" ? 3 : 1, xh = layout == "NHWC" ? 1 : 2;
  ArrayRef<int64_t> k = adaptor.getKernelShape();
  if (k.size() != 2 || k[0] < 1 || k[1] < 1)
    return emitOptionalError(loc, "expects a 2-D positive kernel_shape");
  if (failed(checkWindowAttrs(loc, "pooling", adaptor.getStrides(),
                              adaptor.getDilations(), adaptor.getPads())))
    return failure();
  SmallVector<int64_t> shape = {x.getDimSize(0)};
  for (int i = 0; i < 2; ++i)
    shape.push_back(windowOutput(x.getDimSize(xh + i), k[i],
                                 adaptor.getStrides()[i],
                                 adaptor.getDilations()[i], adaptor.getPads()[i],
                                 adaptor.getPads()[i + 2],
                                 adaptor.getCeilMode()));
  shape.insert(shape.begin() + xc, x.getDimSize(xc));
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult MaxPool2DOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return inferPool(loc, adaptor, types);
}
KILN_COMPATIBLE(MaxPool2DOp)

LogicalResult AvgPool2DOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return inferPool(loc, adaptor, types);
}
KILN_COMPATIBLE(AvgPool2DOp)

LogicalResult GlobalAvgPoolOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  RankedTensorType x = rankedType(adaptor.getInput());
  if (x.getRank() < 3)
    return emitOptionalError(loc, "expects rank 3 or more, got ",
                             shapeStr(x.getShape()));
  SmallVector<int64_t> shape(x.getShape());
  std::fill(shape.begin() + 2, shape.end(), 1);
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}
KILN_COMPATIBLE(GlobalAvgPoolOp)

template <typename Adaptor>
static LogicalResult inferReduce(std::optional<Location> loc, Adaptor adaptor,
                                 SmallVectorImpl<Type> &types) {
  RankedTensorType x = rankedType(adaptor.getInput());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] < 0 || axes[i] >= x.getRank() || (i && axes[i] <= axes[i - 1]))
      return emitOptionalError(loc, "axes ", shapeStr(axes),
                               " must be sorted, unique and in [0, ",
                               x.getRank(), ")");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < x.getRank(); ++d) {
    if (!llvm::is_contained(axes, d))
      shape.push_back(x.getDimSize(d));
    else if (adaptor.getKeepdims())
      shape.push_back(1);
  }
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

#define KILN_REDUCE(OP)                                                        \
  LogicalResult OP::inferReturnTypes(MLIRContext *,                            \
                                     std::optional<Location> loc,              \
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &types) {           \
    return inferReduce(loc, adaptor, types);                                   \
  }                                                                            \
  KILN_COMPATIBLE(OP)
KILN_REDUCE(ReduceMeanOp)
KILN_REDUCE(ReduceSumOp)
KILN_REDUCE(ReduceMaxOp)
KILN_REDUCE(ReduceMinOp)
KILN_REDUCE(ReduceProdOp)
#undef KILN_REDUCE

template <typename Adaptor>
static LogicalResult
inferArgReduce(MLIRContext *ctx, std::optional<Location> loc, Adaptor adaptor,
               SmallVectorImpl<Type> &types) {
  RankedTensorType x = rankedType(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= x.getRank())
    return emitOptionalError(loc, "axis ", axis, " is out of range [0, ",
                             x.getRank(), ")");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < x.getRank(); ++d) {
    if (d != axis)
      shape.push_back(x.getDimSize(d));
    else if (adaptor.getKeepdims())
      shape.push_back(1);
  }
  types.push_back(RankedTensorType::get(shape, IntegerType::get(ctx, 64)));
  return success();
}

#define KILN_ARG_REDUCE(OP)                                                    \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *ctx, std::optional<Location> loc, Adaptor adaptor,          \
      SmallVectorImpl<Type> &types) {                                          \
    return inferArgReduce(ctx, loc, adaptor, types);                           \
  }                                                                            \
  KILN_COMPATIBLE(OP)
KILN_ARG_REDUCE(ArgMaxOp)
KILN_ARG_REDUCE(ArgMinOp)
#undef KILN_ARG_REDUCE

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType x = rankedType(adaptor.getInput());
  if (x.getRank() < 2)
    return emitOptionalError(loc, "expects rank 2 or more, got ",
                             shapeStr(x.getShape()));
  int64_t c = x.getDimSize(1);
  for (Value p : {adaptor.getScale(), adaptor.getBias(), adaptor.getMean(),
                  adaptor.getVariance()}) {
    RankedTensorType t = rankedType(p);
    if (t.getRank() != 1 || (t.getDimSize(0) != c && c != kDyn &&
                             t.getDimSize(0) != kDyn))
      return emitOptionalError(loc, "expects per-channel parameters of shape [",
                               c, "], got ", shapeStr(t.getShape()));
  }
  types.push_back(x);
  return success();
}
KILN_COMPATIBLE(BatchNormOp)

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType x = rankedType(adaptor.getInput());
  int64_t rank = x.getRank(), axis = adaptor.getAxis();
  if (axis < 0 || axis >= rank)
    return emitOptionalError(loc, "axis ", axis, " is out of range for rank ",
                             rank);
  if (adaptor.getRms() && adaptor.getBias())
    return emitOptionalError(loc, "an rms normalization takes no bias");
  ArrayRef<int64_t> normalized = x.getShape().drop_front(axis);
  for (Value p : {adaptor.getScale(), adaptor.getBias()}) {
    if (!p)
      continue;
    RankedTensorType t = rankedType(p);
    if (t.getElementType() != x.getElementType())
      return emitOptionalError(loc,
                               "scale and bias must have the input's "
                               "element type ",
                               x.getElementType(), ", got ",
                               t.getElementType());
    // Unidirectional: the parameters broadcast to the normalized shape,
    // never the other way round.
    FailureOr<SmallVector<int64_t>> b =
        broadcastShapes(t.getShape(), normalized);
    if (t.getRank() > (int64_t)normalized.size() || failed(b) ||
        llvm::any_of(llvm::zip(*b, normalized), [](auto p) {
          return std::get<1>(p) != kDyn && std::get<0>(p) != std::get<1>(p);
        }))
      return emitOptionalError(loc,
                               "scale and bias must broadcast to the "
                               "normalized shape ",
                               shapeStr(normalized), ", got ",
                               shapeStr(t.getShape()));
  }
  types.push_back(x);
  return success();
}
KILN_COMPATIBLE(LayerNormOp)

LogicalResult SoftmaxOp::verify() {
  int64_t axis = getAxis(), rank = getType().getRank();
  if (axis < 0 || axis >= rank)
    return emitOpError() << "axis " << axis << " is out of range for rank "
                         << rank;
  return success();
}

//===----------------------------------------------------------------------===//
// GatherElements
//===----------------------------------------------------------------------===//

LogicalResult GatherElementsOp::inferReturnTypes(MLIRContext *,
                                                 std::optional<Location> loc,
                                                 Adaptor adaptor,
                                                 SmallVectorImpl<Type> &types) {
  RankedTensorType in = rankedType(adaptor.getInput()),
                   idx = rankedType(adaptor.getIndices());
  int64_t rank = in.getRank(), axis = adaptor.getAxis();
  if (axis < 0 || axis >= rank)
    return emitOptionalError(loc, "axis ", axis, " is out of range for rank ",
                             rank);
  if (idx.getRank() != rank)
    return emitOptionalError(loc, "indices of rank ", idx.getRank(),
                             " must have the input's rank ", rank);
  // Off the axis, an index position is also a position of the input.
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && in.getDimSize(d) != kDyn && idx.getDimSize(d) != kDyn &&
        idx.getDimSize(d) > in.getDimSize(d))
      return emitOptionalError(loc, "indices shape ", shapeStr(idx.getShape()),
                               " exceeds the input shape ",
                               shapeStr(in.getShape()), " in dimension ", d);
  // With no element to clamp into, any index would read outside the input.
  if (in.getDimSize(axis) == 0 && idx.hasStaticShape() &&
      idx.getNumElements() > 0)
    return emitOptionalError(loc, "cannot gather from axis ", axis,
                             " of size 0");
  types.push_back(RankedTensorType::get(idx.getShape(), in.getElementType()));
  return success();
}
KILN_COMPATIBLE(GatherElementsOp)

#define GET_OP_CLASSES
#include "kiln/Dialect/Kiln/IR/KilnOps.cpp.inc"
