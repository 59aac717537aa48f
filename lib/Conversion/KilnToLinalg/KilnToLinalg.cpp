//===- KilnToLinalg.cpp - kiln.* -> linalg/tensor/arith/math ----*- C++ -*-===//
#include "Lowering.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/Kiln/IR/ElementsUtils.h"

#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>

namespace mlir::kiln {
#define GEN_PASS_DEF_CONVERTKILNTOLINALGPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

Value mlir::kiln::emptyTensor(OpBuilder &b, Location loc,
                              ArrayRef<int64_t> shape, Type elt,
                              ValueRange dyn) {
  return tensor::EmptyOp::create(b, loc, shape, elt, dyn);
}

SmallVector<Value> mlir::kiln::dynamicDims(OpBuilder &b, Location loc, Value v,
                                           int64_t from, int64_t to) {
  SmallVector<Value> dyn;
  RankedTensorType t = typeOf(v);
  for (int64_t d = from; d < (to < 0 ? t.getRank() : to); ++d)
    if (t.isDynamicDim(d))
      dyn.push_back(tensor::DimOp::create(b, loc, v, d));
  return dyn;
}

Value mlir::kiln::sizeProduct(OpBuilder &b, Location loc, Value v, int64_t from,
                              int64_t to) {
  RankedTensorType t = typeOf(v);
  Value n = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t d = from; d < to; ++d)
    n = arith::MulIOp::create(
        b, loc, n,
        t.isDynamicDim(d)
            ? Value(tensor::DimOp::create(b, loc, v, d))
            : Value(arith::ConstantIndexOp::create(b, loc, t.getDimSize(d))));
  return n;
}

FailureOr<SmallVector<Value>>
mlir::kiln::broadcastDims(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                          ValueRange inputs) {
  SmallVector<Value> dyn;
  int64_t rank = shape.size();
  for (int64_t d = 0; d < rank; ++d) {
    if (!ShapedType::isDynamic(shape[d]))
      continue;
    Value size;
    for (Value in : inputs) {
      RankedTensorType t = typeOf(in);
      int64_t i = d - (rank - t.getRank());
      if (i >= 0 && t.isDynamicDim(i)) {
        size = tensor::DimOp::create(b, loc, in, i);
        break;
      }
    }
    if (!size)
      return failure();
    dyn.push_back(size);
  }
  return dyn;
}

Value mlir::kiln::floatConst(OpBuilder &b, Location loc, Type elt,
                             double value) {
  if (auto it = dyn_cast<IntegerType>(elt)) {
    unsigned w = it.getWidth();
    bool isUnsigned = it.isUnsigned() || w == 1;
    APInt lo = isUnsigned ? APInt::getMinValue(w) : APInt::getSignedMinValue(w);
    APInt hi = isUnsigned ? APInt::getMaxValue(w) : APInt::getSignedMaxValue(w);
    APInt v;
    if (std::isnan(value))
      v = APInt(w, 0);
    else if (isUnsigned ? value <= lo.roundToDouble(false)
                        : value <= lo.roundToDouble(true))
      v = lo;
    else if (isUnsigned ? value >= hi.roundToDouble(false)
                        : value >= hi.roundToDouble(true))
      v = hi;
    else
      v = APInt(w, (uint64_t)(int64_t)std::trunc(value), /*isSigned=*/true,
                /*implicitTrunc=*/true);
    Type s = b.getIntegerType(w);
    return arith::ConstantOp::create(b, loc, s, b.getIntegerAttr(s, v));
  }
  return arith::ConstantOp::create(b, loc, elt, b.getFloatAttr(elt, value));
}

bool mlir::kiln::isUnsignedInt(Type t) {
  return getElementTypeOrSelf(t).isUnsignedInteger();
}

Type mlir::kiln::signlessType(Type t) {
  Type elt = getElementTypeOrSelf(t);
  Type s;
  if (isNarrowType(elt))
    s = IntegerType::get(t.getContext(), 8);
  else if (elt.isUnsignedInteger())
    s = IntegerType::get(t.getContext(), elt.getIntOrFloatBitWidth());
  else
    return t;
  if (auto st = dyn_cast<ShapedType>(t))
    return st.clone(s);
  return s;
}

Value mlir::kiln::asSignless(OpBuilder &b, Location loc, Value v) {
  Type s = signlessType(v.getType());
  if (s == v.getType())
    return v;
  return UnrealizedConversionCastOp::create(b, loc, s, v).getResult(0);
}

/// The bits of a scalar attribute of an integer or narrow float type,
/// zero-extended to a byte or more (the storage of the narrow types).
static APInt storageBits(Attribute a) {
  APInt bits = isa<FloatAttr>(a)
                   ? cast<FloatAttr>(a).getValue().bitcastToAPInt()
                   : cast<IntegerAttr>(a).getValue();
  return bits.getBitWidth() < 8 ? bits.zext(8) : bits;
}

/// `dense` with the storage element type of `type` (signless, or the byte of
/// a narrow type: 4-bit and 2-bit values keep their bits, zero-extended).
static DenseElementsAttr storageElements(DenseElementsAttr dense, Type type) {
  Type elt = getElementTypeOrSelf(type);
  if (dense.getElementType().getIntOrFloatBitWidth() ==
      elt.getIntOrFloatBitWidth())
    return dense.bitcast(elt);
  if (dense.isSplat())
    return DenseElementsAttr::get(cast<ShapedType>(type),
                                  storageBits(dense.getSplatValue<Attribute>()));
  SmallVector<APInt> bits;
  for (Attribute a : dense.getValues<Attribute>())
    bits.push_back(storageBits(a));
  return DenseElementsAttr::get(cast<ShapedType>(type), bits);
}

/// Gives every `ui` value of `func` its signless type (arith, linalg and the
/// LLVM lowering know signless integers only; signedness lived in the kiln
/// ops, which are gone), every value of a narrow type its storage byte (i8;
/// the casts computed the formats), and drops the casts that became
/// identities.
static void retypeUnsigned(func::FuncOp func) {
  func.walk([](Operation *op) {
    for (Region &r : op->getRegions())
      for (Block &blk : r)
        for (BlockArgument a : blk.getArguments())
          a.setType(signlessType(a.getType()));
    for (OpResult r : op->getResults())
      r.setType(signlessType(r.getType()));
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      Type t = c.getType();
      if (auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
          dense && dense.getType() != t)
        c.setValueAttr(storageElements(dense, t));
      else if (isNarrowType(c.getValue().getType()) && !isa<ShapedType>(t))
        c.setValueAttr(IntegerAttr::get(t, storageBits(c.getValue())));
      else if (auto res = dyn_cast<DenseResourceElementsAttr>(c.getValue());
               res && res.getType() != t)
        c.setValueAttr(DenseResourceElementsAttr::get(cast<ShapedType>(t),
                                                      res.getRawHandle()));
    }
  });
  func.walk([](UnrealizedConversionCastOp c) {
    if (c->getNumOperands() == 1 && c->getNumResults() == 1 &&
        c->getOperand(0).getType() == c->getResult(0).getType()) {
      c->getResult(0).replaceAllUsesWith(c->getOperand(0));
      c->erase();
    }
  });
  auto signless = [](TypeRange types) {
    return llvm::map_to_vector(types, [](Type t) { return signlessType(t); });
  };
  func.setType(FunctionType::get(func.getContext(),
                                 signless(func.getArgumentTypes()),
                                 signless(func.getResultTypes())));
}

Value mlir::kiln::filledTensor(OpBuilder &b, Location loc,
                               ArrayRef<int64_t> shape, Type elt,
                               double value, ValueRange dyn) {
  Value init = emptyTensor(b, loc, shape, elt, dyn);
  return linalg::FillOp::create(b, loc, floatConst(b, loc, elt, value), init)
      .getResult(0);
}

Value mlir::kiln::mappedGeneric(OpBuilder &b, Location loc,
                                ArrayRef<int64_t> shape, Type elt,
                                ValueRange inputs,
                                ArrayRef<AffineMap> inputMaps,
                                const BodyFn &body, ValueRange dyn) {
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(b.getMultiDimIdentityMap(shape.size()));
  SmallVector<utils::IteratorType> iters(shape.size(),
                                         utils::IteratorType::parallel);
  Value init = emptyTensor(b, loc, shape, elt, dyn);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), inputs, init, maps, iters,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value r = body(nb, nl, args.drop_back());
        linalg::YieldOp::create(nb, nl, r);
      });
  return generic.getResult(0);
}

/// clampIndex on a dimension of `size` elements, the last at `last`.
static Value clampIndexTo(OpBuilder &b, Location loc, Value i, Value zero,
                          Value size, Value last, Value *inRange) {
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, zero);
  Value w = arith::SelectOp::create(b, loc, negative,
                                    arith::AddIOp::create(b, loc, i, size), i);
  Value clamped = arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, w, zero), last);
  if (inRange)
    *inRange = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, w, zero),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, w, size));
  return clamped;
}

Value mlir::kiln::clampIndex(OpBuilder &b, Location loc, Value i, int64_t n,
                             Value *inRange) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value size = arith::ConstantIndexOp::create(b, loc, n);
  Value last = arith::ConstantIndexOp::create(b, loc, n - 1);
  return clampIndexTo(b, loc, i, zero, size, last, inRange);
}

Value mlir::kiln::clampIndex(OpBuilder &b, Location loc, Value i, Value n,
                             Value *inRange) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value last = arith::SubIOp::create(
      b, loc, n, arith::ConstantIndexOp::create(b, loc, 1));
  return clampIndexTo(b, loc, i, zero, n, last, inRange);
}

AffineMap mlir::kiln::broadcastMap(OpBuilder &b, RankedTensorType t,
                                   ArrayRef<int64_t> shape) {
  int64_t rank = shape.size();
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < t.getRank(); ++i) {
    int64_t d = rank - t.getRank() + i;
    exprs.push_back(t.getDimSize(i) == 1 && shape[d] != 1
                        ? b.getAffineConstantExpr(0)
                        : b.getAffineDimExpr(d));
  }
  return AffineMap::get(rank, 0, exprs, b.getContext());
}

Value mlir::kiln::broadcastGeneric(OpBuilder &b, Location loc,
                                   ArrayRef<int64_t> shape, Type elt,
                                   ValueRange inputs, const BodyFn &body,
                                   ValueRange dyn) {
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(broadcastMap(b, typeOf(in), shape));
  return mappedGeneric(b, loc, shape, elt, inputs, maps, body, dyn);
}

/// Pads `x` with `value`: `low[d]` before and `high[d]` after each dimension.
Value mlir::kiln::padded(OpBuilder &b, Location loc, Value x,
                         ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                         double value, Value runTimeValue) {
  if (llvm::all_of(low, [](int64_t p) { return p == 0; }) &&
      llvm::all_of(high, [](int64_t p) { return p == 0; }))
    return x;
  RankedTensorType t = typeOf(x);
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> offsets, sizes, strides;
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < t.getRank(); ++d) {
    offsets.push_back(b.getIndexAttr(low[d]));
    strides.push_back(b.getIndexAttr(1));
    if (!t.isDynamicDim(d)) {
      shape.push_back(t.getDimSize(d) + low[d] + high[d]);
      sizes.push_back(b.getIndexAttr(t.getDimSize(d)));
      continue;
    }
    // A symbolic size (docs/shapes.md): the padded size is the run-time
    // size plus the pads.
    Value size = tensor::DimOp::create(b, loc, x, d);
    shape.push_back(ShapedType::kDynamic);
    sizes.push_back(size);
    dyn.push_back(arith::AddIOp::create(
        b, loc, size,
        arith::ConstantIndexOp::create(b, loc, low[d] + high[d])));
  }
  Value dest =
      runTimeValue
          ? linalg::FillOp::create(
                b, loc, runTimeValue,
                emptyTensor(b, loc, shape, t.getElementType(), dyn))
                .getResult(0)
          : filledTensor(b, loc, shape, t.getElementType(), value, dyn);
  Value slice =
      tensor::ExtractSliceOp::create(b, loc, t, dest, offsets, sizes, strides);
  Value copied = linalg::CopyOp::create(b, loc, x, slice).getResult(0);
  return tensor::InsertSliceOp::create(b, loc, copied, dest, offsets, sizes,
                                       strides);
}

DenseIntElementsAttr mlir::kiln::i64Vector(OpBuilder &b, ArrayRef<int64_t> v) {
  return DenseIntElementsAttr::get(
      RankedTensorType::get({(int64_t)v.size()}, b.getI64Type()), v);
}

/// reshaped() where a size is symbolic: collapse to 1-D (a dynamic size
/// unless every dimension is static), then expand to `shape` sized by `dyn`.
static Value reshapedDynamic(OpBuilder &b, Location loc, Value v,
                             ArrayRef<int64_t> shape, ValueRange dyn) {
  RankedTensorType type = typeOf(v);
  auto target = RankedTensorType::get(shape, type.getElementType());
  // Group by group when the dimensions group (each group with one size of
  // run-time extent at most, as the conversion proves for kiln.sized_reshape):
  // MLIR's expand-strided-metadata cannot expand one dimension into several
  // of run-time size, which the route through a 1-D view would need.
  int64_t numDynamic = llvm::count_if(shape, ShapedType::isDynamic);
  // A group is only a view when its one side is of run-time size exactly
  // where the other is: a static input reshaped to sizes the graph computes
  // (a product guarded equal to them at run time) goes through the 1-D view.
  auto consistent = [](ArrayRef<int64_t> big, ArrayRef<int64_t> small,
                       ArrayRef<ReassociationIndices> groups) {
    for (auto [k, group] : llvm::enumerate(groups))
      if (llvm::any_of(group, [&](int64_t i) {
            return ShapedType::isDynamic(big[i]);
          }) != ShapedType::isDynamic(small[k]))
        return false;
    return true;
  };
  if (type.getRank() > target.getRank() && target.getRank() > 0) {
    auto groups = getReassociationIndicesForCollapse(type.getShape(), shape);
    if (groups && consistent(type.getShape(), shape, *groups))
      return tensor::CollapseShapeOp::create(b, loc, target, v, *groups);
  } else if (type.getRank() < target.getRank() && type.getRank() > 0 &&
             (int64_t)dyn.size() == numDynamic) {
    auto groups = getReassociationIndicesForCollapse(shape, type.getShape());
    if (groups && consistent(shape, type.getShape(), *groups)) {
      SmallVector<OpFoldResult> sizes;
      unsigned next = 0;
      for (int64_t s : shape)
        sizes.push_back(ShapedType::isDynamic(s)
                            ? OpFoldResult(dyn[next++])
                            : OpFoldResult(b.getIndexAttr(s)));
      return tensor::ExpandShapeOp::create(b, loc, target, v, *groups, sizes);
    }
  } else if (type == target) {
    return v;
  }
  auto all = [](int64_t rank) {
    SmallVector<ReassociationIndices> r;
    ReassociationIndices group;
    for (int64_t i = 0; i < rank; ++i)
      group.push_back(i);
    if (rank)
      r.push_back(group);
    return r;
  };
  int64_t flatSize =
      type.hasStaticShape() ? type.getNumElements() : ShapedType::kDynamic;
  auto flatType = RankedTensorType::get({flatSize}, type.getElementType());
  Value flat = v;
  if (type.getRank() == 0)
    flat = tensor::ExpandShapeOp::create(b, loc, flatType, v,
                                         SmallVector<ReassociationIndices>{},
                                         ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  else if (type.getRank() != 1)
    flat = tensor::CollapseShapeOp::create(b, loc, flatType, v,
                                           all(type.getRank()));
  if (target.getRank() == 1)
    return target == flatType
               ? flat
               : Value(tensor::CastOp::create(b, loc, target, flat));
  // The 1-D view is of run-time length exactly when the target has a
  // dimension of run-time size.
  if (numDynamic > 0 && !flatType.isDynamicDim(0))
    flat = tensor::CastOp::create(
        b, loc,
        RankedTensorType::get({ShapedType::kDynamic}, type.getElementType()),
        flat);
  else if (numDynamic == 0 && flatType.isDynamicDim(0))
    flat = tensor::CastOp::create(
        b, loc,
        RankedTensorType::get({target.getNumElements()}, type.getElementType()),
        flat);
  SmallVector<OpFoldResult> sizes;
  unsigned next = 0;
  for (int64_t s : shape)
    sizes.push_back(ShapedType::isDynamic(s) ? OpFoldResult(dyn[next++])
                                             : OpFoldResult(b.getIndexAttr(s)));
  return tensor::ExpandShapeOp::create(b, loc, target, flat,
                                       all(target.getRank()), sizes);
}

Value mlir::kiln::reshaped(OpBuilder &b, Location loc, Value v,
                           ArrayRef<int64_t> shape, ValueRange dyn) {
  RankedTensorType type = typeOf(v);
  if (type.getShape() == shape && type.hasStaticShape())
    return v;
  if (!type.hasStaticShape() || !dyn.empty())
    return reshapedDynamic(b, loc, v, shape, dyn);
  auto target = RankedTensorType::get(shape, type.getElementType());
  // Through a 1-D (or 0-D) view: collapse everything, expand to the target.
  auto flatType = RankedTensorType::get(
      type.getNumElements() == 1 && (type.getRank() == 0 || shape.empty())
          ? ArrayRef<int64_t>{}
          : ArrayRef<int64_t>{type.getNumElements()},
      type.getElementType());
  auto allDims = [](int64_t rank, int64_t flatRank) {
    SmallVector<ReassociationIndices> r;
    if (flatRank == 0)
      return r;
    ReassociationIndices all;
    for (int64_t i = 0; i < rank; ++i)
      all.push_back(i);
    r.push_back(all);
    return r;
  };
  Value flat = v;
  if (type.getRank() != 1 || flatType.getRank() != 1)
    flat = tensor::CollapseShapeOp::create(
        b, loc, flatType, v, allDims(type.getRank(), flatType.getRank()));
  if (target.getRank() == 1 && flatType.getRank() == 1)
    return flat;
  return tensor::ExpandShapeOp::create(
      b, loc, target, flat, allDims(target.getRank(), flatType.getRank()));
}

Value mlir::kiln::reduced(
    OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes,
    double init,
    const std::function<Value(OpBuilder &, Location, Value, Value)> &combine) {
  RankedTensorType type = typeOf(input);
  SmallVector<int64_t> outShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iters;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    bool red = llvm::is_contained(axes, d);
    iters.push_back(red ? utils::IteratorType::reduction
                        : utils::IteratorType::parallel);
    if (!red) {
      outShape.push_back(type.getDimSize(d));
      outExprs.push_back(b.getAffineDimExpr(d));
    }
  }
  Type elt = type.getElementType();
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d) && !llvm::is_contained(axes, d))
      dyn.push_back(tensor::DimOp::create(b, loc, input, d));
  Value acc = filledTensor(b, loc, outShape, elt, init, dyn);
  SmallVector<AffineMap> maps = {
      b.getMultiDimIdentityMap(type.getRank()),
      AffineMap::get(type.getRank(), 0, outExprs, b.getContext())};
  auto generic = linalg::GenericOp::create(
      b, loc, acc.getType(), input, acc, maps, iters,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl, combine(nb, nl, args[1], args[0]));
      });
  return generic.getResult(0);
}

Value mlir::kiln::transposed(OpBuilder &b, Location loc, Value v,
                             ArrayRef<int64_t> perm) {
  if (auto cst = v.getDefiningOp<arith::ConstantOp>())
    if (auto elements = dyn_cast<ElementsAttr>(cst.getValue()))
      if (std::optional<ElementsAttr> t = transposeElements(elements, perm))
        return arith::ConstantOp::create(b, loc, t->getType(),
                                         cast<TypedAttr>(*t));
  RankedTensorType type = typeOf(v);
  SmallVector<int64_t> shape;
  SmallVector<Value> dyn;
  for (int64_t p : perm) {
    shape.push_back(type.getDimSize(p));
    if (type.isDynamicDim(p))
      dyn.push_back(tensor::DimOp::create(b, loc, v, p));
  }
  Value init = emptyTensor(b, loc, shape, type.getElementType(), dyn);
  return linalg::TransposeOp::create(b, loc, v, init, perm).getResult()[0];
}

/// The ops whose lowerings size symbolic (dynamic) dimensions at run time
/// (docs/shapes.md); any other op needs static operand and result types.
static bool lowersSymbolicSizes(Operation *op) {
  // Unique: a count of distinct slices known at run time, of a static input.
  if (auto u = dyn_cast<UniqueOp>(op))
    return u.getInput().getType().hasStaticShape();
  return isElementwise(op) ||
         isa<MatMulOp, GemmOp, SoftmaxOp, LayerNormOp, TransposeOp, GatherOp,
             ReshapeOp, ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp,
             ConstantOp, Conv2DOp, MaxPool2DOp, AvgPool2DOp, GlobalAvgPoolOp,
             BatchNormOp, ConcatOp, PadOp, UpsampleNearestOp, ShapeOfOp,
             SizedReshapeOp, SizedExpandOp, SizedSliceOp, NonZeroOp, GatherNDOp,
             CompressOp, TopKOp, NonMaxSuppressionOp, RandomOp, LoopOp, YieldOp,
             CumSumOp, CumProdOp, ArgMaxOp, ArgMinOp, ReduceProdOp,
             GatherElementsOp, IntegerMatMulOp, ScatterNDOp, ScatterElementsOp,
             ReverseSequenceOp>(op);
}

std::optional<std::string> mlir::kiln::symbolicSizesUnsupported(Operation *op) {
  if (lowersSymbolicSizes(op))
    return std::nullopt;
  SmallVector<Type> types(op->getOperandTypes());
  llvm::append_range(types, op->getResultTypes());
  for (Type t : types)
    if (auto rt = dyn_cast<RankedTensorType>(t); rt && !rt.hasStaticShape()) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "'" << op->getName()
         << "' does not support symbolic dimensions yet (type '" << t
         << "'); give the symbolic dimensions one size each (--dim "
            "SYMBOL=N or --input-shape)";
      return text;
    }
  return std::nullopt;
}

/// The error for an op without symbolic-size support whose operands or
/// results have dynamic dimensions.
static LogicalResult requireStaticTypes(Operation *op) {
  if (std::optional<std::string> why = symbolicSizesUnsupported(op))
    return op->emitError() << *why;
  return success();
}

namespace {
struct ConvertKilnToLinalgPass
    : mlir::kiln::impl::ConvertKilnToLinalgPassBase<ConvertKilnToLinalgPass> {
  using ConvertKilnToLinalgPassBase::ConvertKilnToLinalgPassBase;

  void runOnOperation() override {
    bool anyFailed = false;
    OpBuilder b(&getContext());
    getOperation().walk([&](func::FuncOp func) {
      if (failed(lowerBlock(b, func.getBody().front())))
        anyFailed = true;
      else
        retypeUnsigned(func);
    });
    if (anyFailed)
      signalPassFailure();
  }

  /// Lowers the kiln ops of `block` in order; a kiln.loop's body first.
  LogicalResult lowerBlock(OpBuilder &b, Block &block) {
    bool anyFailed = false;
    // An attention's ops before its last product wait for that product,
    // which lowers them all as one loop.
    DenseMap<Operation *, AttentionChain> chains;
    DenseSet<Operation *> waiting;
    if (rowBlocks) {
      chains = attentionChains(block);
      for (auto &[pv, chain] : chains)
        for (Operation *o : chain.ops())
          waiting.insert(o);
    }
    for (Operation &opRef : llvm::make_early_inc_range(block)) {
      Operation *op = &opRef;
      if (!isa<KilnDialect>(op->getDialect()) || isa<YieldOp>(op))
        continue;
      if (op->hasAttr(kLoweredWithSibling)) {
        op->erase();
        continue;
      }
      if (failed(requireStaticTypes(op)))
        return failure();
      b.setInsertionPoint(op);
      if (auto loop = dyn_cast<LoopOp>(op)) {
        if (failed(lowerBlock(b, loop.getBody().front())) ||
            failed(lowerLoop(b, loop)))
          anyFailed = true;
        continue;
      }
      if (auto guard = dyn_cast<GuardOp>(op)) {
        if (failed(lowerGuard(b, guard)))
          anyFailed = true;
        else
          op->erase();
        continue;
      }
      FailureOr<Value> repl = Value();
      const AttentionChain *chain = nullptr;
      if (rowBlocks) {
        if (waiting.contains(op))
          continue;
        if (auto it = chains.find(op); it != chains.end()) {
          chain = &it->second;
          repl = rowBlockedAttention(b, cast<MatMulOp>(op), *chain);
        } else if (auto softmax = dyn_cast<SoftmaxOp>(op))
          if (FailureOr<Value> blocked = rowBlockedSoftmax(b, softmax);
              succeeded(blocked))
            repl = *blocked;
      }
      for (auto lower :
           {lowerElementwise, lowerTensor, lowerNN, lowerGatherElements,
            lowerShapeOps, lowerIndexing, lowerQuantized, lowerRandom}) {
        if (*repl)
          break;
        repl = lower(b, op);
        if (failed(repl))
          break;
      }
      if (succeeded(repl) && !*repl) {
        op->emitError() << "no lowering to linalg for " << op->getName();
        repl = failure();
      }
      if (failed(repl)) {
        anyFailed = true;
        continue;
      }
      // Unsigned results are computed as signless; later ops still see the
      // kiln op's `ui` type until the function is retyped.
      Type origType = op->getResult(0).getType();
      if (repl->getType() != origType)
        repl =
            UnrealizedConversionCastOp::create(b, op->getLoc(), origType, *repl)
                .getResult(0);
      op->getResult(0).replaceAllUsesWith(*repl);
      op->erase();
      if (chain) {
        // Users first. (The list is a local: llvm::reverse over the
        // temporary ops() would iterate freed memory.)
        SmallVector<Operation *> ops = chain->ops();
        for (Operation *o : llvm::reverse(ops))
          o->erase();
      }
    }
    return failure(anyFailed);
  }
};
} // namespace
