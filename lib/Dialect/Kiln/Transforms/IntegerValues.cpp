//===- IntegerValues.cpp - what is known of integer tensors -----*- C++ -*-===//
#include "IntegerValues.h"

#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::integers;

/// The values an integer type holds (i1 as 0/1; signless as signed).
std::optional<Interval> integers::typeRange(Type t) {
  auto it = dyn_cast<IntegerType>(t);
  if (!it || it.getWidth() > 16)
    return std::nullopt;
  unsigned w = it.getWidth();
  if (w == 1 || it.isUnsigned())
    return Interval{0, std::ldexp(1.0, w) - 1};
  return Interval{-std::ldexp(1.0, w - 1), std::ldexp(1.0, w - 1) - 1};
}

/// The most elements a constant operand may have to be evaluated here.
static constexpr int64_t kMaxEvaluated = int64_t(1) << 26;

/// The integer elements of a constant (dense or a weights resource of 8, 16
/// or 32-bit integers), row-major.
std::optional<std::vector<double>> integers::readInts(ConstantOp c) {
  auto type = cast<ShapedType>(c.getValue().getType());
  auto it = dyn_cast<IntegerType>(type.getElementType());
  if (!it || !type.hasStaticShape() || type.getNumElements() > kMaxEvaluated)
    return std::nullopt;
  bool isUnsigned = it.isUnsigned() || it.getWidth() == 1;
  std::vector<double> out;
  out.reserve(type.getNumElements());
  if (auto dense = dyn_cast<DenseIntElementsAttr>(c.getValue())) {
    for (const APInt &x : dense)
      out.push_back(isUnsigned ? (double)x.getZExtValue()
                               : (double)x.getSExtValue());
    return out;
  }
  auto res = dyn_cast<DenseResourceElementsAttr>(c.getValue());
  unsigned w = it.getWidth();
  AsmResourceBlob *blob = res ? res.getRawHandle().getBlob() : nullptr;
  // 4-bit and 2-bit types take a byte per element (the importer unpacks
  // them); their value is the low bits of it.
  size_t bytes = w < 8 ? 1 : w / 8;
  if (!blob || (w != 2 && w != 4 && w != 8 && w != 16 && w != 32) ||
      blob->getData().size() != size_t(type.getNumElements()) * bytes)
    return std::nullopt;
  const char *data = blob->getData().data();
  for (int64_t i = 0; i < type.getNumElements(); ++i) {
    int64_t v;
    if (w < 8) {
      v = (uint8_t)data[i] & ((1 << w) - 1);
      if (!isUnsigned && v >= (1 << (w - 1)))
        v -= 1 << w;
    } else if (w == 8)
      v = isUnsigned ? (int64_t)(uint8_t)data[i] : (int64_t)(int8_t)data[i];
    else if (w == 16) {
      uint16_t u;
      std::memcpy(&u, data + 2 * i, 2);
      v = isUnsigned ? (int64_t)u : (int64_t)(int16_t)u;
    } else {
      uint32_t u;
      std::memcpy(&u, data + 4 * i, 4);
      v = isUnsigned ? (int64_t)u : (int64_t)(int32_t)u;
    }
    out.push_back((double)v);
  }
  return out;
}

/// Bounds of an i32 tensor built from narrow integers: casts from types of
/// 16 bits or fewer, integer constants, sums and differences, and ops that
/// only move elements. Nothing else is trusted.
std::optional<Interval> integers::intRange(Value v, unsigned depth) {
  if (depth > 16)
    return std::nullopt;
  Operation *op = v.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (auto c = dyn_cast<CastOp>(op))
    return typeRange(getElementTypeOrSelf(c.getInput().getType()));
  if (auto c = dyn_cast<ConstantOp>(op)) {
    std::optional<std::vector<double>> values = readInts(c);
    if (!values || values->empty())
      return std::nullopt;
    auto [lo, hi] = std::minmax_element(values->begin(), values->end());
    return Interval{*lo, *hi};
  }
  if (isa<SubOp, AddOp>(op)) {
    auto a = intRange(op->getOperand(0), depth + 1);
    auto b = intRange(op->getOperand(1), depth + 1);
    if (!a || !b)
      return std::nullopt;
    if (isa<AddOp>(op))
      return Interval{a->lo + b->lo, a->hi + b->hi};
    return Interval{a->lo - b->hi, a->hi - b->lo};
  }
  if (isa<TransposeOp, ReshapeOp, IdentityOp>(op))
    return intRange(op->getOperand(0), depth + 1);
  return std::nullopt;
}

std::optional<std::vector<int64_t>>
integers::broadcastIndices(ArrayRef<int64_t> shape, ArrayRef<int64_t> from) {
  int64_t rank = shape.size(), offset = rank - int64_t(from.size());
  if (offset < 0)
    return std::nullopt;
  std::vector<int64_t> strides(rank, 0); // of `from`, 0 where broadcast
  for (int64_t d = rank - 1, stride = 1; d >= offset; --d) {
    int64_t n = from[d - offset];
    if (n != 1 && n != shape[d])
      return std::nullopt;
    strides[d] = n == 1 ? 0 : stride;
    stride *= n;
  }
  int64_t total = 1;
  for (int64_t n : shape)
    total *= n;
  std::vector<int64_t> indices(total);
  std::vector<int64_t> at(rank, 0);
  for (int64_t i = 0, index = 0; i < total; ++i) {
    indices[i] = index;
    for (int64_t d = rank - 1; d >= 0; --d) { // the next multi-index
      index += strides[d];
      if (++at[d] < shape[d])
        break;
      index -= strides[d] * shape[d];
      at[d] = 0;
    }
  }
  return indices;
}

std::vector<int64_t> integers::transposedIndices(ArrayRef<int64_t> shape,
                                                 ArrayRef<int64_t> perm) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  int64_t total = 1;
  for (int64_t n : shape)
    total *= n;
  std::vector<int64_t> out(total);
  SmallVector<int64_t> index(perm.size(), 0); // in the result's order
  for (int64_t &v : out) {
    int64_t from = 0;
    for (size_t d = 0; d < perm.size(); ++d)
      from += index[d] * strides[perm[d]];
    v = from;
    for (int64_t d = int64_t(perm.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[perm[d]])
        break;
      index[d] = 0;
    }
  }
  return out;
}

/// The elements of an integer value computed from constants only (casts
/// between integer types, sums and differences of operands that broadcast,
/// reshapes, transposes), row-major; nullopt otherwise.
std::optional<std::vector<double>> integers::evalInts(Value v, unsigned depth) {
  Operation *op = v.getDefiningOp();
  if (!op || depth > 8)
    return std::nullopt;
  if (auto c = dyn_cast<ConstantOp>(op))
    return readInts(c);
  if (auto c = dyn_cast<CastOp>(op)) {
    if (!isa<IntegerType>(getElementTypeOrSelf(c.getInput().getType())) ||
        !isa<IntegerType>(c.getTo()))
      return std::nullopt;
    auto in = evalInts(c.getInput(), depth + 1);
    auto range = typeRange(c.getTo());
    // Narrowing casts wrap: only widening (or i32) keeps the values.
    if (in && range && llvm::any_of(*in, [&](double x) {
          return x < range->lo || x > range->hi;
        }))
      return std::nullopt;
    return in;
  }
  if (isa<ReshapeOp, IdentityOp>(op))
    return evalInts(op->getOperand(0), depth + 1);
  if (auto t = dyn_cast<TransposeOp>(op)) {
    // The layout pass permutes a filter that is not yet a constant.
    auto in = evalInts(t.getInput(), depth + 1);
    auto it = cast<ShapedType>(t.getInput().getType());
    if (!in || !it.hasStaticShape())
      return std::nullopt;
    std::vector<int64_t> from = transposedIndices(it.getShape(), t.getPerm());
    std::vector<double> out(in->size());
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = (*in)[from[i]];
    return out;
  }
  if (isa<SubOp, AddOp>(op)) {
    auto a = evalInts(op->getOperand(0), depth + 1);
    auto b = evalInts(op->getOperand(1), depth + 1);
    auto outType = cast<ShapedType>(v.getType());
    if (!a || !b || !outType.hasStaticShape())
      return std::nullopt;
    size_t n = outType.getNumElements();
    // Each operand broadcast to the result: the same shape or one element
    // as they are, others (a per-channel zero point [F, 1, 1, 1] against
    // weights [F, C, KH, KW]) through their indices.
    auto broadcast = [&](Value x, std::vector<double> &values) {
      if (values.size() == n || values.size() == 1)
        return true;
      auto t = dyn_cast<ShapedType>(x.getType());
      std::optional<std::vector<int64_t>> at;
      if (t && t.hasStaticShape() &&
          size_t(t.getNumElements()) == values.size())
        at = broadcastIndices(outType.getShape(), t.getShape());
      if (!at)
        return false;
      std::vector<double> wide(n);
      for (size_t i = 0; i < n; ++i)
        wide[i] = values[(*at)[i]];
      values = std::move(wide);
      return true;
    };
    if (!broadcast(op->getOperand(0), *a) || !broadcast(op->getOperand(1), *b))
      return std::nullopt;
    std::vector<double> out(n);
    double sign = isa<SubOp>(op) ? -1 : 1;
    for (size_t i = 0; i < n; ++i)
      out[i] =
          (*a)[a->size() == 1 ? 0 : i] + sign * (*b)[b->size() == 1 ? 0 : i];
    return out;
  }
  return std::nullopt;
}

SmallVector<Operation *> integers::products(Operation *root) {
  SmallVector<Operation *> found;
  root->walk([&](Operation *op) {
    if (isa<Conv2DOp, MatMulOp>(op))
      found.push_back(op);
  });
  return found;
}

/// x of `cast(x : ui8) -> i32`, or null.
static Value widenedU8(Value v) {
  auto c = v.getDefiningOp<CastOp>();
  if (!c || !getElementTypeOrSelf(c.getInput().getType()).isUnsignedInteger(8))
    return {};
  return c.getInput();
}

std::optional<VnniProduct> integers::matchVnniProduct(Operation *op) {
  if (op->getNumResults() != 1 ||
      !getElementTypeOrSelf(op->getResult(0).getType()).isSignlessInteger(32))
    return std::nullopt;
  auto lhs = cast<RankedTensorType>(op->getOperand(0).getType());
  auto rhs = cast<RankedTensorType>(op->getOperand(1).getType());
  auto out = cast<RankedTensorType>(op->getResult(0).getType());
  // A matmul's rows may be of run-time count (a symbolic batch or sequence,
  // docs/shapes.md): its leading sizes, not K or N.
  bool runTimeRows = isa<MatMulOp>(op) && lhs.getRank() >= 2 &&
                     !lhs.isDynamicDim(lhs.getRank() - 1) &&
                     !out.isDynamicDim(out.getRank() - 1);
  if ((!lhs.hasStaticShape() && !runTimeRows) || !rhs.hasStaticShape() ||
      (!out.hasStaticShape() && !runTimeRows))
    return std::nullopt;
  int64_t k;
  bool depthwise = false;
  if (auto conv = dyn_cast<Conv2DOp>(op)) {
    if (lhs.getRank() != 4 || rhs.getRank() != 4)
      return std::nullopt;
    ArrayRef<int64_t> f = rhs.getShape();
    int64_t channels = lhs.getDimSize(conv.isNHWC() ? 3 : 1);
    int64_t perGroup = conv.isNHWC() ? f[2] : f[1];
    int64_t filters = conv.isNHWC() ? f[3] : f[0];
    // Depthwise: one channel per group, one filter per channel, on a
    // channel count the depthwise kernel's vectors divide (16, 8 or 4).
    depthwise = conv.getGroup() != 1 && int64_t(conv.getGroup()) == channels &&
                perGroup == 1 && filters == channels && channels % 4 == 0;
    if (conv.getGroup() != 1 && !depthwise)
      return std::nullopt;
    k = conv.isNHWC() ? f[0] * f[1] * f[2] : f[1] * f[2] * f[3];
  } else if (isa<MatMulOp>(op)) {
    if (lhs.getRank() < 2 || rhs.getRank() != 2)
      return std::nullopt;
    k = rhs.getDimSize(0);
  } else {
    return std::nullopt;
  }
  if (k < 1 || k > kMaxVnniReduction)
    return std::nullopt;

  VnniProduct p;
  p.depthwise = depthwise;
  Value a = op->getOperand(0);
  if (auto t = a.getDefiningOp<TransposeOp>()) {
    p.perm.assign(t.getPerm().begin(), t.getPerm().end());
    a = t.getInput();
  }
  if (Value x = widenedU8(a)) {
    p.input = x;
  } else if (auto sub = a.getDefiningOp<SubOp>()) {
    p.input = widenedU8(sub.getLhs());
    p.zeroPoint = sub.getRhs();
    auto zt = cast<RankedTensorType>(p.zeroPoint.getType());
    std::optional<Interval> zr = intRange(p.zeroPoint);
    if (!p.input || !zt.hasStaticShape() || zt.getNumElements() != 1 || !zr ||
        zr->lo < 0 || zr->hi > 255 ||
        cast<RankedTensorType>(p.input.getType()).getShape() !=
            cast<RankedTensorType>(a.getType()).getShape())
      return std::nullopt;
  } else {
    return std::nullopt;
  }
  // A transposed input is redone on uint8 with static sizes only.
  if (!p.perm.empty() && !lhs.hasStaticShape())
    return std::nullopt;
  std::optional<std::vector<double>> w = evalInts(op->getOperand(1));
  if (!w || llvm::any_of(*w, [](double v) { return v < -128 || v > 127; }))
    return std::nullopt;
  p.weights = std::move(*w);
  return p;
}
