//===- SymbolicBounds.cpp - largest values of run-time sizes -----*- C++ -*-===//
#include "kiln/Codegen/Common/SymbolicBounds.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace {
/// How deep a size may be traced. A size is often a few ops deep, but a
/// reshape in every block of a network chains them: EfficientNet-B0's
/// batch at its classifier goes through a collapse and an expand in each of
/// its 16 squeeze-excitation blocks, past 64 ops. The limit keeps a
/// pathological chain from exhausting the stack.
constexpr int kMaxDepth = 512;

std::optional<int64_t> largest(Value v, int depth);

/// The static size, or the value, of entry `i` of a list of mixed sizes.
std::optional<int64_t> largestOf(OpFoldResult ofr, int depth) {
  if (auto attr = dyn_cast<Attribute>(ofr))
    return cast<IntegerAttr>(attr).getInt();
  return largest(cast<Value>(ofr), depth);
}

/// The size dimension `d` of `shaped` is made from, as a mixed size: the
/// operand of the op that sized it, or null if it cannot be told.
OpFoldResult sourceOfDim(Value shaped, int64_t d) {
  auto type = cast<ShapedType>(shaped.getType());
  if (!type.isDynamicDim(d))
    return IntegerAttr::get(IndexType::get(shaped.getContext()),
                            type.getDimSize(d));
  Operation *def = shaped.getDefiningOp();
  if (!def)
    return {};
  if (auto result = dyn_cast<OpResult>(shaped))
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(def))
      if (dps.hasPureTensorSemantics())
        return sourceOfDim(dps.getDpsInits()[result.getResultNumber()], d);
  if (auto alloc = dyn_cast<memref::AllocOp>(def))
    return alloc.getMixedSizes()[d];
  if (auto alloca = dyn_cast<memref::AllocaOp>(def))
    return alloca.getMixedSizes()[d];
  if (auto empty = dyn_cast<tensor::EmptyOp>(def))
    return empty.getMixedSizes()[d];
  if (auto view = dyn_cast<memref::ViewOp>(def)) {
    unsigned k = 0;
    for (int64_t i = 0; i < d; ++i)
      k += type.isDynamicDim(i);
    return view.getSizes()[k];
  }
  if (auto e = dyn_cast<memref::ExpandShapeOp>(def))
    return e.getMixedOutputShape()[d];
  if (auto e = dyn_cast<tensor::ExpandShapeOp>(def))
    return e.getMixedOutputShape()[d];
  if (auto s = dyn_cast<OffsetSizeAndStrideOpInterface>(def))
    if (isa<memref::SubViewOp, tensor::ExtractSliceOp>(def) &&
        s.getMixedSizes().size() == (size_t)type.getRank())
      return s.getMixedSizes()[d];
  if (isa<memref::CastOp, tensor::CastOp>(def))
    return sourceOfDim(def->getOperand(0), d);
  return {};
}

/// The largest size of dimension `d` of `shaped`.
std::optional<int64_t> largestDimAt(Value shaped, int64_t d, int depth) {
  auto type = cast<ShapedType>(shaped.getType());
  if (!type.isDynamicDim(d))
    return type.getDimSize(d);
  if (depth > kMaxDepth)
    return std::nullopt;
  // An input of an entry function before --kiln-bind-symbolic-shapes: the
  // maximum of the symbol its `kiln.symbols` gives the axis.
  if (auto arg = dyn_cast<BlockArgument>(shaped))
    if (auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()))
      if (arg.getOwner()->isEntryBlock()) {
        auto symbols = func.getArgAttrOfType<DenseI64ArrayAttr>(
            arg.getArgNumber(), kiln::kSymbolsAttr);
        auto bounds =
            func->getAttrOfType<DenseI64ArrayAttr>(kiln::kSymbolBoundsAttr);
        if (symbols && bounds && d < (int64_t)symbols.size()) {
          int64_t s = symbols[d];
          if (s >= 0 && 2 * s + 1 < (int64_t)bounds.size())
            return bounds[2 * s + 1];
        }
      }
  Operation *def = shaped.getDefiningOp();
  // A collapsed dimension is the product of the ones it merges.
  auto collapsed = [&](Value src, ArrayRef<ReassociationIndices> groups)
      -> std::optional<int64_t> {
    int64_t product = 1;
    for (int64_t i : groups[d]) {
      std::optional<int64_t> n = largestDimAt(src, i, depth + 1);
      if (!n || __builtin_mul_overflow(product, *n, &product))
        return std::nullopt;
    }
    return product;
  };
  // A cast (a collapsed view returned as an identity-layout output) keeps
  // the sizes of its source.
  if (isa_and_present<memref::CastOp, tensor::CastOp>(def))
    return largestDimAt(def->getOperand(0), d, depth + 1);
  if (auto c = dyn_cast_or_null<memref::CollapseShapeOp>(def))
    return collapsed(c.getSrc(), c.getReassociationIndices());
  if (auto c = dyn_cast_or_null<tensor::CollapseShapeOp>(def))
    return collapsed(c.getSrc(), c.getReassociationIndices());
  OpFoldResult src = sourceOfDim(shaped, d);
  if (!src)
    return std::nullopt;
  return largestOf(src, depth + 1);
}

/// What is known of an index expression's values: the least and the
/// greatest (either may be unknown).
struct Range {
  std::optional<int64_t> lo, hi;
};

/// The range of `e` given its operands' ranges, by interval arithmetic:
/// sums, products by constants of either sign (a difference of sizes, as a
/// reshape between a product and a window's output gives, is a sum with a
/// factor -1), products of non-negative factors, and quotients and
/// remainders by positive constants (the forms shape reification gives a
/// collapsed or expanded size, and a window's output size: (in + pads -
/// span) floordiv stride + 1). A product of two factors whose least values
/// are not known to be non-negative is bounded by the product of their
/// greatest values, as the sizes it multiplies are never negative.
Range rangeOfExpr(AffineExpr e, ArrayRef<Range> dims, ArrayRef<Range> symbols) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return {c.getValue(), c.getValue()};
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return dims[d.getPosition()];
  if (auto s = dyn_cast<AffineSymbolExpr>(e))
    return symbols[s.getPosition()];
  auto bin = cast<AffineBinaryOpExpr>(e);
  Range a = rangeOfExpr(bin.getLHS(), dims, symbols);
  Range b = rangeOfExpr(bin.getRHS(), dims, symbols);
  auto add = [](std::optional<int64_t> x,
                std::optional<int64_t> y) -> std::optional<int64_t> {
    int64_t r;
    if (!x || !y || __builtin_add_overflow(*x, *y, &r))
      return std::nullopt;
    return r;
  };
  auto mul = [](std::optional<int64_t> x, int64_t k) -> std::optional<int64_t> {
    int64_t r;
    if (!x || __builtin_mul_overflow(*x, k, &r))
      return std::nullopt;
    return r;
  };
  auto byConstant = [&](AffineExpr rhs) -> std::optional<int64_t> {
    if (auto k = dyn_cast<AffineConstantExpr>(rhs))
      return k.getValue();
    return std::nullopt;
  };
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return {add(a.lo, b.lo), add(a.hi, b.hi)};
  case AffineExprKind::Mul: {
    if (std::optional<int64_t> k = byConstant(bin.getRHS()))
      return *k >= 0 ? Range{mul(a.lo, *k), mul(a.hi, *k)}
                     : Range{mul(a.hi, *k), mul(a.lo, *k)};
    Range r;
    int64_t p;
    if (a.lo && b.lo && *a.lo >= 0 && *b.lo >= 0 &&
        !__builtin_mul_overflow(*a.lo, *b.lo, &p))
      r.lo = p;
    if (a.hi && b.hi && *a.hi >= 0 && *b.hi >= 0 &&
        !__builtin_mul_overflow(*a.hi, *b.hi, &p))
      r.hi = p;
    return r;
  }
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv: {
    std::optional<int64_t> k = byConstant(bin.getRHS());
    if (!k || *k <= 0)
      return {};
    auto div = [&](std::optional<int64_t> x) -> std::optional<int64_t> {
      if (!x)
        return std::nullopt;
      return e.getKind() == AffineExprKind::FloorDiv
                 ? llvm::divideFloorSigned(*x, *k)
                 : llvm::divideCeilSigned(*x, *k);
    };
    return {div(a.lo), div(a.hi)};
  }
  case AffineExprKind::Mod: {
    std::optional<int64_t> k = byConstant(bin.getRHS());
    if (!k || *k <= 0)
      return {};
    return {0, *k - 1};
  }
  default:
    return {};
  }
}

Range range(Value v, int depth);

/// The range of each operand of `op`'s affine map, dimensions then symbols.
template <typename AffineOp>
SmallVector<Range> operandRanges(AffineOp op, int depth) {
  SmallVector<Range> values;
  for (Value operand : op.getMapOperands())
    values.push_back(range(operand, depth + 1));
  return values;
}

/// The least value of a symbol's size read from the entry function's dims
/// argument: its minimum, which the runtime checked before the call
/// (BindSymbolicShapes.cpp).
std::optional<int64_t> symbolMinimum(memref::LoadOp load) {
  auto arg = dyn_cast<BlockArgument>(load.getMemRef());
  auto func = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())
                  : func::FuncOp();
  auto bounds =
      func ? func->getAttrOfType<DenseI64ArrayAttr>(kiln::kSymbolBoundsAttr)
           : DenseI64ArrayAttr();
  APInt c;
  // While the pass rebuilds the signature, the block has arguments the
  // function type does not have yet.
  if (!bounds || !arg.getOwner()->isEntryBlock() ||
      arg.getArgNumber() >= func.getNumArguments() ||
      !func.getArgAttr(arg.getArgNumber(), kiln::kDimsArgAttr) ||
      load.getIndices().size() != 1 ||
      !matchPattern(load.getIndices()[0], m_ConstantInt(&c)))
    return std::nullopt;
  int64_t s = c.getSExtValue();
  if (s < 0 || 2 * s + 1 >= (int64_t)bounds.size())
    return std::nullopt;
  return bounds[2 * s];
}

/// The ranges found so far in one query (largestSize, largestDim): each
/// value's range is computed once, so a size that many others share is not
/// walked again for each (a walk of a graph's sizes without it can take
/// time exponential in its depth).
thread_local llvm::DenseMap<Value, Range> *knownRanges = nullptr;

Range computeRange(Value v, int depth);

Range range(Value v, int depth) {
  if (depth > kMaxDepth)
    return {};
  if (knownRanges)
    if (auto it = knownRanges->find(v); it != knownRanges->end())
      return it->second;
  Range r = computeRange(v, depth);
  if (knownRanges)
    (*knownRanges)[v] = r;
  return r;
}

/// Keeps the ranges of one query, and of the queries it makes.
class RangeQuery {
public:
  RangeQuery() : outer(knownRanges) {
    if (!knownRanges)
      knownRanges = &ranges;
  }
  ~RangeQuery() { knownRanges = outer; }
  RangeQuery(const RangeQuery &) = delete;
  RangeQuery &operator=(const RangeQuery &) = delete;

private:
  llvm::DenseMap<Value, Range> ranges;
  llvm::DenseMap<Value, Range> *outer;
};

/// The least and the largest value of the size `v`, in one walk of what
/// computes it. Largest: a constant, a dimension's largest size, the
/// affine maps and arithmetic on those. Least: a constant, a dimension (0),
/// a symbol's minimum (symbolMinimum), and the same maps and arithmetic;
/// differences of sizes (a reshape's size between a product and a window's
/// output) need it for their largest value.
Range computeRange(Value v, int depth) {
  APInt c;
  if (matchPattern(v, m_ConstantInt(&c)))
    return {c.getSExtValue(), c.getSExtValue()};
  Operation *def = v.getDefiningOp();
  if (!def)
    return {};
  if (auto dim = dyn_cast<memref::DimOp>(def)) {
    std::optional<int64_t> i = dim.getConstantIndex();
    return {0, i ? largestDimAt(dim.getSource(), *i, depth + 1) : std::nullopt};
  }
  if (auto dim = dyn_cast<tensor::DimOp>(def)) {
    std::optional<int64_t> i = dim.getConstantIndex();
    return {0, i ? largestDimAt(dim.getSource(), *i, depth + 1) : std::nullopt};
  }
  if (auto load = dyn_cast<memref::LoadOp>(def))
    return {symbolMinimum(load), std::nullopt};
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(def))
    return range(def->getOperand(0), depth + 1);
  // affine.min: at most the smallest bound of its expressions (a window's
  // output size with ceil_mode takes the smaller of two); at least the
  // smallest least value, when every expression has one.
  if (auto min = dyn_cast<affine::AffineMinOp>(def)) {
    AffineMap map = min.getAffineMap();
    SmallVector<Range> values = operandRanges(min, depth);
    ArrayRef<Range> all(values);
    Range r;
    bool lows = true;
    for (AffineExpr e : map.getResults()) {
      Range k = rangeOfExpr(e, all.take_front(map.getNumDims()),
                            all.drop_front(map.getNumDims()));
      if (k.hi)
        r.hi = r.hi ? std::min(*r.hi, *k.hi) : *k.hi;
      lows &= k.lo.has_value();
      if (k.lo)
        r.lo = r.lo ? std::min(*r.lo, *k.lo) : *k.lo;
    }
    if (!lows)
      r.lo.reset();
    return r;
  }
  if (auto apply = dyn_cast<affine::AffineApplyOp>(def)) {
    AffineMap map = apply.getAffineMap();
    SmallVector<Range> values = operandRanges(apply, depth);
    ArrayRef<Range> all(values);
    return rangeOfExpr(map.getResult(0), all.take_front(map.getNumDims()),
                       all.drop_front(map.getNumDims()));
  }
  // A minimum is at most each operand that has a bound: a size computed
  // from the data (NonZero's count) is clamped to one that has.
  if (isa<arith::MinSIOp, arith::MinUIOp>(def)) {
    Range r;
    for (Value operand : def->getOperands())
      if (std::optional<int64_t> k = range(operand, depth + 1).hi; k && *k >= 0)
        r.hi = r.hi ? std::min(*r.hi, *k) : *k;
    return r;
  }
  // A choice between two sizes (an If's result where its branches' sizes
  // differ in several axes) lies between the smaller least value and the
  // larger greatest value.
  if (auto select = dyn_cast<arith::SelectOp>(def)) {
    Range a = range(select.getTrueValue(), depth + 1);
    Range b = range(select.getFalseValue(), depth + 1);
    Range r;
    if (a.hi && b.hi)
      r.hi = std::max(*a.hi, *b.hi);
    if (a.lo && b.lo)
      r.lo = std::min(*a.lo, *b.lo);
    return r;
  }
  // A quotient by a positive constant is at most the dividend's quotient.
  if (isa<arith::DivUIOp, arith::DivSIOp, arith::CeilDivUIOp,
          arith::CeilDivSIOp>(def)) {
    std::optional<int64_t> a = range(def->getOperand(0), depth + 1).hi;
    APInt k;
    if (!a || *a < 0 || !matchPattern(def->getOperand(1), m_ConstantInt(&k)) ||
        k.getSExtValue() <= 0)
      return {};
    int64_t q = k.getSExtValue();
    return {std::nullopt, isa<arith::CeilDivUIOp, arith::CeilDivSIOp>(def)
                              ? (*a + q - 1) / q
                              : *a / q};
  }
  if (!isa<arith::MulIOp, arith::AddIOp, arith::MaxSIOp, arith::MaxUIOp>(def))
    return {};
  Range a = range(def->getOperand(0), depth + 1);
  Range b = range(def->getOperand(1), depth + 1);
  Range r;
  int64_t n;
  // Largest: both operands' largest values known and non-negative.
  bool his = a.hi && b.hi && *a.hi >= 0 && *b.hi >= 0;
  if (isa<arith::MulIOp>(def)) {
    if (his && !__builtin_mul_overflow(*a.hi, *b.hi, &n))
      r.hi = n;
    if (a.lo && b.lo && *a.lo >= 0 && *b.lo >= 0 &&
        !__builtin_mul_overflow(*a.lo, *b.lo, &n))
      r.lo = n;
  } else if (isa<arith::AddIOp>(def)) {
    if (his && !__builtin_add_overflow(*a.hi, *b.hi, &n))
      r.hi = n;
    if (a.lo && b.lo && !__builtin_add_overflow(*a.lo, *b.lo, &n))
      r.lo = n;
  } else {
    if (his)
      r.hi = std::max(*a.hi, *b.hi);
    // A signed maximum is at least each operand's least value.
    if (isa<arith::MaxSIOp>(def))
      r.lo = a.lo && b.lo ? std::max(*a.lo, *b.lo) : a.lo ? a.lo : b.lo;
  }
  return r;
}

std::optional<int64_t> largest(Value v, int depth) {
  return range(v, depth).hi;
}

Value forwarded(Value shaped, int64_t d, int depth) {
  if (depth > kMaxDepth)
    return {};
  // A collapsed dimension made of one source dimension and unit ones is
  // that dimension: an output collapsed from its kernel's panels ([batch,
  // 2, 32] -> [batch, 64], a matmul's on AVX2) keeps its batch symbol.
  Operation *def = shaped.getDefiningOp();
  if (isa_and_present<memref::CollapseShapeOp, tensor::CollapseShapeOp>(def) &&
      cast<ShapedType>(shaped.getType()).isDynamicDim(d)) {
    SmallVector<ReassociationIndices> groups =
        isa<memref::CollapseShapeOp>(def)
            ? cast<memref::CollapseShapeOp>(def).getReassociationIndices()
            : cast<tensor::CollapseShapeOp>(def).getReassociationIndices();
    Value src = def->getOperand(0);
    auto srcType = cast<ShapedType>(src.getType());
    std::optional<int64_t> only;
    for (int64_t i : groups[d]) {
      if (!srcType.isDynamicDim(i) && srcType.getDimSize(i) == 1)
        continue;
      if (only)
        return {}; // a product of sizes is no one symbol
      only = i;
    }
    return only ? forwarded(src, *only, depth + 1) : Value();
  }
  OpFoldResult src = sourceOfDim(shaped, d);
  auto v = dyn_cast_if_present<Value>(src);
  if (!v)
    return {};
  if (auto dim = v.getDefiningOp<memref::DimOp>())
    if (std::optional<int64_t> i = dim.getConstantIndex())
      if (Value f = forwarded(dim.getSource(), *i, depth + 1))
        return f;
  if (auto dim = v.getDefiningOp<tensor::DimOp>())
    if (std::optional<int64_t> i = dim.getConstantIndex())
      if (Value f = forwarded(dim.getSource(), *i, depth + 1))
        return f;
  return v;
}
} // namespace

std::optional<int64_t> mlir::kiln::largestSize(Value size) {
  RangeQuery query;
  return largest(size, 0);
}

std::optional<int64_t> mlir::kiln::largestDim(Value shaped, int64_t dim) {
  RangeQuery query;
  return largestDimAt(shaped, dim, 0);
}

Value mlir::kiln::forwardedDim(Value shaped, int64_t dim) {
  return forwarded(shaped, dim, 0);
}
