//===- SymbolicSizes.cpp - sizes the graph computes from Shape ---*- C++
//-*-===//
//
// The rules that size each kiln op's result from its operands and the
// bounds of those sizes (the polynomials themselves are in SymSize.cpp, the
// run-time guards that sizes agree in SizeAgreement.cpp).
//
//===----------------------------------------------------------------------===//
#include "SymbolicSizes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "kiln/Dialect/Onnx/OnnxDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

using namespace mlir;
using namespace mlir::kiln;

//===----------------------------------------------------------------------===//
// Dimensions of converted values
//===----------------------------------------------------------------------===//

namespace {
/// How deep a size is traced through the ops that made it.
constexpr int kMaxDepth = 256;
} // namespace

bool mlir::kiln::broadcastsOperands(Operation *op) {
  return op->hasTrait<OpTrait::SameOperandsAndResultType>() ||
         isa<CastOp, AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, ModOp,
             PReluOp, EqualOp, LessOp, LessEqualOp, GreaterOp, GreaterEqualOp,
             AndOp, OrOp, XorOp, WhereOp, LayerNormOp, BitShiftOp>(op);
}

/// The largest size of dimension `axis` of a window op's (or a Pad's,
/// Concat's, nearest upsampling's) result: its type inferred again with every
/// operand at its largest shape. These ops' output sizes only grow with
/// their inputs', so that bounds every run (a convolution's rows at the
/// image's largest height), as the arena's planner finds in code generation.
std::optional<int64_t> SymbolicSizes::largestByInference(Value v,
                                                         int64_t axis) {
  Operation *def = v.getDefiningOp();
  if (!isa_and_nonnull<Conv2DOp, MaxPool2DOp, AvgPool2DOp, PadOp, ConcatOp,
                       UpsampleNearestOp>(def) ||
      def->getNumResults() != 1 || depth > kMaxDepth)
    return std::nullopt;
  ++depth;
  OpBuilder b(def);
  SmallVector<Value> operands;
  SmallVector<Operation *> temporaries;
  bool bounded = true;
  for (Value o : def->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(o.getType());
    if (!t) {
      bounded = false;
      break;
    }
    if (t.hasStaticShape()) {
      operands.push_back(o);
      continue;
    }
    SmallVector<int64_t> shape;
    for (int64_t d = 0; d < t.getRank() && bounded; ++d) {
      std::optional<int64_t> n =
          t.isDynamicDim(d) ? largest(dim(o, d)) : t.getDimSize(d);
      bounded = n.has_value();
      shape.push_back(n.value_or(0));
    }
    if (!bounded)
      break;
    auto largestInput =
        tensor::EmptyOp::create(b, def->getLoc(), shape, t.getElementType());
    temporaries.push_back(largestInput);
    operands.push_back(largestInput);
  }
  SmallVector<Type> types;
  if (bounded)
    bounded = succeeded(cast<InferTypeOpInterface>(def).inferReturnTypes(
        def->getContext(), def->getLoc(), operands, def->getAttrDictionary(),
        def->getPropertiesStorage(), def->getRegions(), types));
  for (Operation *t : temporaries)
    t->erase();
  --depth;
  auto type = bounded && types.size() == 1
                  ? dyn_cast<RankedTensorType>(types[0])
                  : RankedTensorType();
  if (!type || axis >= type.getRank() || type.isDynamicDim(axis))
    return std::nullopt;
  return type.getDimSize(axis);
}

/// The largest size of an axis the data decides, where the op bounds it
/// (docs/shapes.md, "Sizes that depend on the data"): a run-time TopK's k
/// and Unique's distinct slices by their axis (a guard checks k against
/// it), a Compress's kept slices by its axis, NonZero's count by the
/// input's element count, NonMaxSuppression's kept rows by the number of
/// (batch, class, box) scores, a Slice's by its input's size.
std::optional<int64_t> SymbolicSizes::largestOfDataSize(Value v, int64_t axis) {
  Operation *def = v.getDefiningOp();
  if (!def || depth > kMaxDepth)
    return std::nullopt;
  auto largestCount = [&](Value x) -> std::optional<int64_t> {
    std::optional<SymSize> count = SymSize::constant(1);
    for (const SymSize &d : dims(x))
      if (!(count = SymSize::mul(*count, d)))
        return std::nullopt;
    return largest(*count);
  };
  // A run-time slice (bounds read from the data) reads inside its input.
  if (auto s = dyn_cast<SizedSliceOp>(def))
    return largest(dim(s.getInput(), axis));
  if (auto t = dyn_cast<TopKOp>(def); t && axis == t.getAxis())
    return largest(dim(t.getInput(), axis));
  if (auto c = dyn_cast<CompressOp>(def); c && axis == c.getAxis())
    return largest(dim(c.getInput(), axis));
  if (auto u = dyn_cast<UniqueOp>(def)) {
    unsigned result = cast<OpResult>(v).getResultNumber();
    if ((result == 0 && axis == u.getAxis()) ||
        (result != 0 && result != 2 && axis == 0))
      return largest(dim(u.getInput(), u.getAxis()));
    return std::nullopt;
  }
  if (auto n = dyn_cast<NonZeroOp>(def); n && axis == 1)
    return largestCount(n.getInput());
  if (auto n = dyn_cast<NonMaxSuppressionOp>(def); n && axis == 0)
    return largestCount(n.getScores());
  return std::nullopt;
}

unsigned SymbolicSizes::atomFor(Value v, int64_t axis) {
  // A graph input's dim_param is one atom for every input naming it.
  std::string name;
  Atom atom{v, axis, "", std::nullopt, std::nullopt};
  if (auto arg = dyn_cast<BlockArgument>(v))
    if (arg.getOwner()->isEntryBlock() &&
        arg.getOwner()->getParentOp() == func.getOperation()) {
      unsigned i = arg.getArgNumber();
      if (auto params = func.getArgAttrOfType<ArrayAttr>(
              i, onnx::OnnxDialect::kDimParamsAttr))
        if (axis < (int64_t)params.size())
          if (auto s = dyn_cast<StringAttr>(params[axis]))
            name = s.str();
      auto symbols = func.getArgAttrOfType<DenseI64ArrayAttr>(i, kSymbolsAttr);
      auto bounds = func->getAttrOfType<DenseI64ArrayAttr>(kSymbolBoundsAttr);
      if (symbols && bounds && axis < (int64_t)symbols.size()) {
        int64_t s = symbols[axis];
        if (s >= 0 && 2 * s + 1 < (int64_t)bounds.size()) {
          atom.min = bounds[2 * s];
          atom.max = bounds[2 * s + 1];
        }
      }
      std::string input;
      if (auto n = func.getArgAttrOfType<StringAttr>(
              i, onnx::OnnxDialect::kValueNameAttr))
        input = n.str();
      atom.name = name.empty() ? input + "[" + std::to_string(axis) + "]"
                               : name;
    }
  if (!name.empty()) {
    auto it = namedAtoms.find(name);
    if (it != namedAtoms.end())
      return it->second;
  }
  auto key = std::make_pair(v, axis);
  if (auto it = atomIds.find(key); it != atomIds.end())
    return it->second;
  if (atom.name.empty()) {
    atom.max = largestByInference(v, axis);
    if (!atom.max)
      atom.max = largestOfDataSize(v, axis);
    std::string what = "a value";
    if (Operation *def = v.getDefiningOp())
      if (auto loc = dyn_cast<NameLoc>(def->getLoc()))
        what = "'" + loc.getName().str() + "'";
    atom.name = "dim " + std::to_string(axis) + " of " + what;
  }
  unsigned id = atoms.size();
  atoms.push_back(atom);
  atomIds[key] = id;
  if (!name.empty())
    namedAtoms[name] = id;
  return id;
}

/// The i1 `v` negated.
static Value notI1(OpBuilder &b, Location loc, Value v) {
  return arith::XOrIOp::create(
      b, loc, v, arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
}

Value mlir::kiln::orNotTaken(OpBuilder &b, Location loc, Value ok, Value when) {
  return when ? arith::OrIOp::create(b, loc, ok, notI1(b, loc, when)) : ok;
}

int64_t SymbolicSizes::addTakenCondition(Value cond, bool negated,
                                         int64_t outer) {
  takenConditions.push_back({cond, negated, outer});
  return static_cast<int64_t>(takenConditions.size());
}

bool SymbolicSizes::knowsTakenCondition(Operation *op) const {
  auto index = op->getAttrOfType<IntegerAttr>(kSpeculativeAttr);
  return index && index.getInt() >= 1 &&
         index.getInt() <= static_cast<int64_t>(takenConditions.size());
}

Value SymbolicSizes::takenCondition(OpBuilder &b, Location loc,
                                    Operation *op) const {
  if (!knowsTakenCondition(op))
    return {};
  int64_t i = op->getAttrOfType<IntegerAttr>(kSpeculativeAttr).getInt();
  Value all;
  for (; i > 0; i = takenConditions[i - 1].outer) {
    const Taken &t = takenConditions[i - 1];
    auto type = cast<RankedTensorType>(t.cond.getType());
    SmallVector<Value> at(type.getRank(),
                          arith::ConstantIndexOp::create(b, loc, 0));
    Value c = tensor::ExtractOp::create(b, loc, t.cond, at);
    if (t.negated)
      c = notI1(b, loc, c);
    all = all ? arith::AndIOp::create(b, loc, all, c) : c;
  }
  return all;
}

void SymbolicSizes::boundByOptions(Value v, int64_t axis,
                                   ArrayRef<SymSize> options) {
  std::optional<int64_t> lo, hi;
  for (const SymSize &o : options) {
    std::optional<int64_t> a = smallest(o), b = largest(o);
    if (!a || !b)
      return;
    lo = lo ? std::min(*lo, *a) : *a;
    hi = hi ? std::max(*hi, *b) : *b;
  }
  SymSize d = dim(v, axis);
  auto it = atomIds.find({v, axis});
  if (!lo || it == atomIds.end() || d.getConstant())
    return;
  Atom &atom = atoms[it->second];
  atom.min = atom.min ? std::max(*atom.min, *lo) : *lo;
  atom.max = atom.max ? std::min(*atom.max, *hi) : *hi;
}

std::optional<std::string> SymbolicSizes::inputSymbolName(const SymSize &s) {
  std::optional<unsigned> id = s.getAtom();
  if (!id || *id >= atoms.size())
    return std::nullopt;
  auto it = namedAtoms.find(atoms[*id].name);
  if (it == namedAtoms.end() || it->second != *id)
    return std::nullopt;
  return atoms[*id].name;
}

SymSize SymbolicSizes::dim(Value v, int64_t axis) {
  auto type = cast<RankedTensorType>(v.getType());
  if (!type.isDynamicDim(axis))
    return SymSize::constant(type.getDimSize(axis));
  auto key = std::make_pair(v, axis);
  if (auto it = dimMemo.find(key); it != dimMemo.end())
    return it->second;
  std::optional<SymSize> s = computeDim(v, axis);
  SymSize r = s ? *s : SymSize::atom(atomFor(v, axis));
  dimMemo[key] = r;
  return r;
}

SmallVector<SymSize> SymbolicSizes::dims(Value v) {
  SmallVector<SymSize> out;
  for (int64_t d = 0; d < cast<RankedTensorType>(v.getType()).getRank(); ++d)
    out.push_back(dim(v, d));
  return out;
}

void SymbolicSizes::setDims(Value v, ArrayRef<SymSize> sizes) {
  for (auto [d, s] : llvm::enumerate(sizes))
    dimMemo[{v, (int64_t)d}] = s;
}

/// The output size of a window along an axis of extent `in` (KilnOps.cpp's
/// windowOutput): room / stride + 1 with room = in + pads - span, rounded
/// up with ceil_mode. Only where every size in range leaves room for a
/// window and ceil_mode's correction (a last window starting past the
/// input) cannot apply; a size of its own elsewhere.
std::optional<SymSize> SymbolicSizes::windowSize(const SymSize &in,
                                                 int64_t kernel, int64_t stride,
                                                 int64_t dilation, int64_t pb,
                                                 int64_t pe, bool ceilMode) {
  int64_t span, pads, shift;
  if (kernel < 1 || stride < 1 || dilation < 1 ||
      __builtin_mul_overflow(kernel - 1, dilation, &span) ||
      __builtin_add_overflow(span, 1, &span) ||
      __builtin_add_overflow(pb, pe, &pads) ||
      __builtin_sub_overflow(pads, span, &shift))
    return std::nullopt;
  std::optional<SymSize> room = SymSize::add(in, SymSize::constant(shift));
  std::optional<int64_t> low = room ? smallest(*room) : std::nullopt;
  int64_t reach;
  if (!low || *low < 0 ||
      (ceilMode &&
       (__builtin_add_overflow(pe, stride, &reach) || reach > span)))
    return std::nullopt;
  if (ceilMode)
    room = SymSize::add(*room, SymSize::constant(stride - 1));
  std::optional<SymSize> q = room ? floorDiv(*room, stride) : std::nullopt;
  return q ? SymSize::add(*q, SymSize::constant(1)) : std::nullopt;
}

std::optional<SymSize> SymbolicSizes::windowDim(Operation *def, int64_t axis) {
  // The batch is the input's; each spatial axis a window's count.
  auto spatial = [&](Value in, bool nhwc,
                     auto &&size) -> std::optional<SymSize> {
    int64_t h = nhwc ? 1 : 2;
    if (axis == 0)
      return dim(in, 0);
    if (axis == h || axis == h + 1)
      return size(dim(in, axis), axis - h);
    return std::nullopt;
  };
  if (auto conv = dyn_cast<Conv2DOp>(def)) {
    auto w = cast<RankedTensorType>(conv.getFilter().getType());
    int64_t wh = conv.isNHWC() ? 0 : 2;
    return spatial(
        conv.getInput(), conv.isNHWC(), [&](const SymSize &in, int64_t i) {
          return windowSize(in, w.getDimSize(wh + i), conv.getStrides()[i],
                            conv.getDilations()[i], conv.getPads()[i],
                            conv.getPads()[i + 2], false);
        });
  }
  auto pool = [&](auto op) -> std::optional<SymSize> {
    int64_t c = op.isNHWC() ? 3 : 1;
    if (axis == c)
      return dim(op.getInput(), c);
    return spatial(
        op.getInput(), op.isNHWC(), [&](const SymSize &in, int64_t i) {
          return windowSize(in, op.getKernelShape()[i], op.getStrides()[i],
                            op.getDilations()[i], op.getPads()[i],
                            op.getPads()[i + 2], op.getCeilMode());
        });
  };
  if (auto p = dyn_cast<MaxPool2DOp>(def))
    return pool(p);
  if (auto p = dyn_cast<AvgPool2DOp>(def))
    return pool(p);
  return std::nullopt;
}

std::optional<SymSize> SymbolicSizes::computeDim(Value v, int64_t axis) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getNumResults() != 1)
    return std::nullopt;
  // Sizes traced through a pathological chain stop being compared (an atom
  // of their own), never recurse without end.
  if (depth > kMaxDepth)
    return std::nullopt;
  struct Deeper {
    int &d;
    explicit Deeper(int &d) : d(d) { ++d; }
    ~Deeper() { --d; }
  } deeper(depth);
  int64_t rank = cast<RankedTensorType>(v.getType()).getRank();
  auto rankOf = [](Value x) {
    return cast<RankedTensorType>(x.getType()).getRank();
  };
  auto dynamicAt = [](Value x, int64_t d) {
    return cast<RankedTensorType>(x.getType()).isDynamicDim(d);
  };
  if (auto t = dyn_cast<TransposeOp>(def))
    return dim(t.getInput(), t.getPerm()[axis]);
  if (std::optional<SymSize> w = windowDim(def, axis))
    return w;
  // Constant pads add to the input's size (LRN pads only the channels).
  if (auto p = dyn_cast<PadOp>(def)) {
    ArrayRef<int64_t> pads = p.getPads();
    return SymSize::add(dim(p.getInput(), axis),
                        SymSize::constant(pads[axis] + pads[axis + rank]));
  }
  // A compress keeps every other axis of its input (the data decides only
  // the compressed one).
  if (auto c = dyn_cast<CompressOp>(def); c && axis != c.getAxis())
    return dim(c.getInput(), axis);
  // A scatter writes into a copy of its data; a reversal and a batch
  // normalization keep their input's shape, a global pooling its batch and
  // channels (the rest are 1).
  if (isa<ScatterNDOp, ScatterElementsOp, ReverseSequenceOp, BatchNormOp>(
          def) ||
      (isa<GlobalAvgPoolOp>(def) && axis < 2))
    return dim(def->getOperand(0), axis);
  // Running sums and products keep their input's shape; nearest upsampling
  // by whole factors multiplies each size by its factor.
  if (isa<CumSumOp, CumProdOp>(def))
    return dim(def->getOperand(0), axis);
  if (auto u = dyn_cast<UpsampleNearestOp>(def))
    return SymSize::mul(dim(u.getInput(), axis),
                        SymSize::constant(u.getScales()[axis]));
  // GatherElements has the shape of its indices.
  if (auto g = dyn_cast<GatherElementsOp>(def))
    return dim(g.getIndices(), axis);
  if (broadcastsOperands(def)) {
    for (Value o : def->getOperands()) {
      auto ot = dyn_cast<RankedTensorType>(o.getType());
      if (!ot)
        continue;
      int64_t k = axis - (rank - ot.getRank());
      if (k >= 0 && ot.isDynamicDim(k))
        return dim(o, k);
    }
    return std::nullopt;
  }
  if (auto e = dyn_cast<ExpandOp>(def)) {
    int64_t k = axis - (rank - rankOf(e.getInput()));
    if (k >= 0 && dynamicAt(e.getInput(), k))
      return dim(e.getInput(), k);
    return std::nullopt;
  }
  if (auto m = dyn_cast<MatMulOp>(def)) {
    Value a = m.getOperand(0), b = m.getOperand(1);
    int64_t ra = rankOf(a), rb = rankOf(b);
    if (ra < 2 || rb < 2)
      return std::nullopt;
    if (axis == rank - 1)
      return dim(b, rb - 1);
    if (axis == rank - 2)
      return dim(a, ra - 2);
    for (auto [x, rx] : {std::make_pair(a, ra), std::make_pair(b, rb)}) {
      int64_t k = axis - (rank - rx);
      if (k >= 0 && k < rx - 2 && dynamicAt(x, k))
        return dim(x, k);
    }
    return std::nullopt;
  }
  if (auto g = dyn_cast<GemmOp>(def)) {
    if (axis == 0)
      return dim(g.getA(), g.getTransA() ? 1 : 0);
    return dim(g.getB(), g.getTransB() ? 0 : 1);
  }
  if (auto g = dyn_cast<GatherOp>(def)) {
    int64_t k = g.getAxis(), q = rankOf(g.getIndices());
    if (axis < k)
      return dim(g.getInput(), axis);
    if (axis < k + q)
      return dim(g.getIndices(), axis - k);
    return dim(g.getInput(), axis - q + 1);
  }
  if (auto c = dyn_cast<ConcatOp>(def)) {
    if (axis != (int64_t)c.getAxis()) {
      for (Value in : c.getInputs())
        if (dynamicAt(in, axis))
          return dim(in, axis);
      return std::nullopt;
    }
    SymSize sum;
    for (Value in : c.getInputs()) {
      std::optional<SymSize> s = SymSize::add(sum, dim(in, axis));
      if (!s)
        return std::nullopt;
      sum = *s;
    }
    return sum;
  }
  if (auto r = dyn_cast<ReshapeOp>(def)) {
    // As the lowering sizes it (LowerTensor.cpp, reshapeDims).
    RankedTensorType out = r.getType();
    if (llvm::count_if(out.getShape(), ShapedType::isDynamic) != 1) {
      if (std::optional<SmallVector<int64_t>> sources =
              unitDimsReshape(r.getInput().getType(), out))
        return dim(r.getInput(), (*sources)[axis]);
      return dim(r.getInput(), axis);
    }
    SymSize count = SymSize::constant(1);
    for (const SymSize &s : dims(r.getInput())) {
      std::optional<SymSize> p = SymSize::mul(count, s);
      if (!p)
        return std::nullopt;
      count = *p;
    }
    int64_t known = 1;
    for (int64_t n : out.getShape())
      if (!ShapedType::isDynamic(n))
        known *= n;
    return SymSize::divExact(count, SymSize::constant(known));
  }
  auto reduced = [&](ArrayRef<int64_t> axes, bool keep,
                     Value in) -> std::optional<SymSize> {
    int64_t k = 0;
    for (int64_t d = 0; d < rankOf(in); ++d) {
      bool red = llvm::is_contained(axes, d);
      if (red && !keep)
        continue;
      if (k++ == axis)
        return red ? SymSize::constant(1) : dim(in, d);
    }
    return std::nullopt;
  };
  if (auto r = dyn_cast<ReduceSumOp>(def))
    return reduced(r.getAxes(), r.getKeepdims(), r.getInput());
  if (auto r = dyn_cast<ArgMaxOp>(def))
    return reduced({(int64_t)r.getAxis()}, r.getKeepdims(), r.getInput());
  if (auto r = dyn_cast<ArgMinOp>(def))
    return reduced({(int64_t)r.getAxis()}, r.getKeepdims(), r.getInput());
  if (auto r = dyn_cast<ReduceMeanOp>(def))
    return reduced(r.getAxes(), r.getKeepdims(), r.getInput());
  if (auto r = dyn_cast<ReduceMaxOp>(def))
    return reduced(r.getAxes(), r.getKeepdims(), r.getInput());
  if (auto r = dyn_cast<ReduceMinOp>(def))
    return reduced(r.getAxes(), r.getKeepdims(), r.getInput());
  return std::nullopt;
}

std::optional<int64_t> SymbolicSizes::bound(const SymSize &s, bool upper) {
  int budget = 64;
  return refinedBound(s, upper, budget);
}

/// Interval arithmetic forgets that a remainder `n - c * (n // c)` lies in
/// [0, c): Swin's padded width `w + (7 - w % 7) % 7` would be bounded by
/// w's range plus 7 times the quotient's, far past the truth. For each
/// quotient atom q = N // c of s, with coefficient a, s scaled by m = c /
/// gcd(a, c) is rest + k * (N - c * q) with k = -a / gcd(a, c), the
/// remainder N - c * q in [0, c - 1]; the bound of rest plus that of the
/// remainder, divided by m, is a bound of s. The tightest of these and the
/// plain interval wins.
std::optional<int64_t> SymbolicSizes::refinedBound(const SymSize &s, bool upper,
                                                   int &budget) {
  // Each call spends one of `budget`: nested remainders (three patch
  // mergings' `ceil(ceil(ceil(h / 2) / 2) / 2)` padded to 7) take a few
  // levels, and the search stays small.
  std::optional<int64_t> best = intervalBound(s, upper);
  if (--budget <= 0)
    return best;
  for (const auto &[m, a] : s.getTerms()) {
    if (m.size() != 1 || !atoms[m[0]].divisor)
      continue;
    unsigned id = m[0];
    int64_t c = atoms[id].divisor;
    int64_t g = std::gcd(a < 0 ? -a : a, c), scale = c / g, k = -a / g;
    std::optional<SymSize> scaled = SymSize::mul(s, SymSize::constant(scale));
    std::optional<SymSize> minusKN =
        SymSize::mul(atoms[id].numerator, SymSize::constant(-k));
    int64_t kc;
    if (!scaled || !minusKN || __builtin_mul_overflow(k, c, &kc))
      continue;
    std::optional<SymSize> kcq =
        SymSize::mul(SymSize::atom(id), SymSize::constant(kc));
    std::optional<SymSize> rest =
        kcq ? SymSize::add(*scaled, *minusKN) : std::nullopt;
    if (rest)
      rest = SymSize::add(*rest, *kcq);
    if (!rest || rest->getTerms().count(m))
      continue;
    std::optional<int64_t> b = refinedBound(*rest, upper, budget);
    int64_t span;
    if (!b || __builtin_mul_overflow(k, c - 1, &span))
      continue;
    int64_t r = upper ? std::max<int64_t>(0, span) : std::min<int64_t>(0, span);
    if (__builtin_add_overflow(*b, r, &r))
      continue;
    r = upper ? llvm::divideFloorSigned(r, scale)
              : llvm::divideCeilSigned(r, scale);
    if (!best || (upper ? r < *best : r > *best))
      best = r;
  }
  return best;
}

std::optional<int64_t> SymbolicSizes::intervalBound(const SymSize &s,
                                                    bool upper) {
  // Interval arithmetic over the atoms' ranges. A dimension of a value is
  // never below 0 (its range's low end where it has none); a quotient's
  // range is its numerator's, divided.
  auto range = [&](unsigned id)
      -> std::pair<std::optional<int64_t>, std::optional<int64_t>> {
    const Atom &a = atoms[id];
    if (a.divisor)
      return {a.min, a.max};
    return {a.min ? a.min : std::optional<int64_t>(0), a.max};
  };
  int64_t total = 0;
  for (const auto &[m, c] : s.getTerms()) {
    // The product's interval, then scaled by c: its high end bounds c > 0
    // from above, its low end c < 0.
    int64_t lo = 1, hi = 1;
    bool known = true;
    for (unsigned id : m) {
      auto [alo, ahi] = range(id);
      if (!alo || !ahi) {
        known = false;
        break;
      }
      int64_t p[4];
      if (__builtin_mul_overflow(lo, *alo, &p[0]) ||
          __builtin_mul_overflow(lo, *ahi, &p[1]) ||
          __builtin_mul_overflow(hi, *alo, &p[2]) ||
          __builtin_mul_overflow(hi, *ahi, &p[3]))
        return std::nullopt;
      lo = *std::min_element(p, p + 4);
      hi = *std::max_element(p, p + 4);
    }
    int64_t term;
    if (!known) {
      // Only the side a non-negative product without a high end does not
      // need: its low end, 0 or more, for c > 0 bounding from below.
      bool sizes = llvm::all_of(m, [&](unsigned id) {
        std::optional<int64_t> l = range(id).first;
        return l && *l >= 0;
      });
      if (!sizes || upper == (c > 0))
        return std::nullopt;
      lo = 1;
      for (unsigned id : m)
        if (__builtin_mul_overflow(lo, *range(id).first, &lo))
          return std::nullopt;
      hi = lo;
    }
    if (__builtin_mul_overflow(c, (upper == (c > 0)) ? hi : lo, &term) ||
        __builtin_add_overflow(total, term, &total))
      return std::nullopt;
  }
  return total;
}

bool SymbolicSizes::definedOutside(const SymSize &s, Region &region) {
  for (const auto &[monomial, coefficient] : s.getTerms())
    for (unsigned id : monomial) {
      if (atoms[id].divisor) {
        if (!definedOutside(atoms[id].numerator, region))
          return false;
      } else if (region.isAncestor(atoms[id].value.getParentRegion())) {
        return false;
      }
    }
  return true;
}

std::optional<SymSize> SymbolicSizes::floorDiv(const SymSize &p, int64_t c) {
  if (c <= 0)
    return std::nullopt;
  // floor((c * q + r) / c) = q + floor(r / c) for an integer polynomial q:
  // each coefficient splits into c * k + m with 0 <= m < c, and only the
  // remainder terms stay under the division.
  SymSize q, r;
  for (const auto &[m, coef] : p.getTerms()) {
    int64_t k = llvm::divideFloorSigned(coef, c), kc, rest;
    if (__builtin_mul_overflow(k, c, &kc) ||
        __builtin_sub_overflow(coef, kc, &rest))
      return std::nullopt;
    std::optional<SymSize> mono = SymSize::constant(1);
    for (unsigned id : m)
      if (!mono || !(mono = SymSize::mul(*mono, SymSize::atom(id))))
        return std::nullopt;
    std::optional<SymSize> qk = SymSize::mul(*mono, SymSize::constant(k));
    std::optional<SymSize> rk = SymSize::mul(*mono, SymSize::constant(rest));
    if (!qk || !rk || !(qk = SymSize::add(q, *qk)) ||
        !(rk = SymSize::add(r, *rk)))
      return std::nullopt;
    q = *qk;
    r = *rk;
  }
  if (std::optional<int64_t> rc = r.getConstant())
    return SymSize::add(q, SymSize::constant(llvm::divideFloorSigned(*rc, c)));
  // floor(g * a / (g * b)) = floor(a / b): `8 * seq // 16` is `seq // 2`.
  int64_t g = c;
  for (const auto &[m, coef] : r.getTerms())
    g = std::gcd(g, coef);
  if (g > 1) {
    std::optional<SymSize> reduced = SymSize::divExact(r, SymSize::constant(g));
    if (!reduced)
      return std::nullopt;
    r = *reduced;
    c /= g;
  }
  // floor((P + n // a) / c) = floor((a * P + n) / (a * c)) for integer P
  // and positive a and c: a halving of a halving (`ceil(ceil(h / 2) / 2)`,
  // strided layers, patch mergings) is one division of h, not a nest
  // (nested floor divisions make the Presburger systems bufferization
  // builds to compare subsets grow exponentially).
  for (const auto &[m, coef] : r.getTerms()) {
    if (m.size() != 1 || coef != 1 || !atoms[m[0]].divisor)
      continue;
    unsigned inner = m[0];
    int64_t a = atoms[inner].divisor, ac;
    std::optional<SymSize> num = SymSize::mul(r, SymSize::constant(a));
    std::optional<SymSize> minusAq =
        SymSize::mul(SymSize::atom(inner), SymSize::constant(-a));
    if (__builtin_mul_overflow(a, c, &ac) || !num || !minusAq ||
        !(num = SymSize::add(*num, *minusAq)) ||
        !(num = SymSize::add(*num, atoms[inner].numerator)))
      break;
    std::optional<SymSize> flat = floorDiv(*num, ac);
    if (!flat)
      break;
    return SymSize::add(q, *flat);
  }
  auto key = std::make_pair(r.getTerms(), c);
  unsigned id;
  if (auto it = quotientAtoms.find(key); it != quotientAtoms.end()) {
    id = it->second;
  } else {
    Atom atom{Value(),
              0,
              "(" + str(r) + " // " + std::to_string(c) + ")",
              std::nullopt,
              std::nullopt,
              r,
              c};
    if (std::optional<int64_t> lo = bound(r, false))
      atom.min = llvm::divideFloorSigned(*lo, c);
    if (std::optional<int64_t> hi = bound(r, true))
      atom.max = llvm::divideFloorSigned(*hi, c);
    id = atoms.size();
    atoms.push_back(atom);
    quotientAtoms[key] = id;
  }
  return SymSize::add(q, SymSize::atom(id));
}

std::optional<SymSize> SymbolicSizes::floorMod(const SymSize &p, int64_t c) {
  std::optional<SymSize> q = floorDiv(p, c);
  if (!q || !(q = SymSize::mul(*q, SymSize::constant(-c))))
    return std::nullopt;
  return SymSize::add(p, *q);
}

std::optional<int64_t> SymbolicSizes::largest(const SymSize &s) {
  return bound(s, true);
}

std::optional<int64_t> SymbolicSizes::smallest(const SymSize &s) {
  // A size is never negative, whatever its symbols' ranges say.
  std::optional<int64_t> b = bound(s, false);
  bool sizeLike = llvm::all_of(s.getTerms(), [&](const auto &t) {
    return t.second > 0 && llvm::all_of(t.first, [&](unsigned id) {
             return !atoms[id].divisor || atoms[id].min >= 0;
           });
  });
  if (!b && sizeLike)
    return 0;
  return b;
}

std::string SymbolicSizes::boundAdvice(const SymSize &s) {
  // The atoms without a largest value: graph inputs' dimensions (a range
  // bounds them) and sizes computed inside the graph that Kiln cannot
  // bound (no range helps).
  SmallVector<std::string> inputs, derived;
  SmallVector<const SymSize *> work = {&s};
  while (!work.empty()) {
    const SymSize *p = work.pop_back_val();
    for (const auto &[monomial, coefficient] : p->getTerms())
      for (unsigned id : monomial) {
        const Atom &a = atoms[id];
        if (a.divisor) {
          work.push_back(&a.numerator);
          continue;
        }
        if (a.max)
          continue;
        auto arg = dyn_cast<BlockArgument>(a.value);
        bool input = arg && arg.getOwner()->isEntryBlock() &&
                     arg.getOwner()->getParentOp() == func.getOperation();
        SmallVector<std::string> &list = input ? inputs : derived;
        if (!llvm::is_contained(list, a.name))
          list.push_back(a.name);
      }
  }
  if (!derived.empty()) {
    return "the size of " + llvm::join(derived, " and of ") +
           " has no largest value Kiln can derive from the inputs' ranges "
           "(the data decides it, or an op Kiln does not follow computes "
           "it); no --dim range bounds it, so compute this size from the "
           "inputs' shapes";
  }
  if (inputs.empty())
    return "give each symbolic dimension a range (--dim SYMBOL=MIN..MAX)";
  // A dim_param takes --dim; an unnamed dimension ("x[1]") a range in the
  // input's --input-shape.
  SmallVector<std::string> flags;
  for (const std::string &name : inputs)
    flags.push_back(namedAtoms.count(name)
                        ? "--dim " + name + "=MIN..MAX"
                        : "a range for " + name + " in --input-shape");
  return "give " + llvm::join(inputs, " and ") + " a range (" +
         llvm::join(flags, ", ") + ")";
}

std::string SymbolicSizes::str(const SymSize &s) {
  SmallVector<std::string> names;
  for (const Atom &a : atoms)
    names.push_back(a.name);
  return s.str(names);
}

Value SymbolicSizes::materialize(OpBuilder &b, Location loc, const SymSize &s) {
  if (std::optional<int64_t> c = s.getConstant())
    return arith::ConstantIndexOp::create(b, loc, *c);
  // Each product of atoms as an arith.muli chain (the arena's bounds trace
  // products), then one affine.apply of the sum with its coefficients.
  SmallVector<Value> products;
  AffineExpr sum = getAffineConstantExpr(0, b.getContext());
  bool single = false;
  for (const auto &[m, c] : s.getTerms()) {
    if (m.empty()) {
      sum = sum + c;
      continue;
    }
    Value p;
    for (unsigned id : m) {
      Value d;
      if (const Atom &a = atoms[id]; a.divisor) {
        // An affine floordiv, which the arena's bounds follow.
        Value n = materialize(b, loc, a.numerator);
        AffineExpr q =
            getAffineSymbolExpr(0, b.getContext()).floorDiv(a.divisor);
        d = affine::AffineApplyOp::create(b, loc, AffineMap::get(0, 1, q), n);
      } else {
        d = tensor::DimOp::create(b, loc, a.value, a.axis);
      }
      p = p ? Value(arith::MulIOp::create(b, loc, p, d)) : d;
    }
    sum = sum + getAffineSymbolExpr(products.size(), b.getContext()) * c;
    products.push_back(p);
    single = c == 1;
  }
  if (products.size() == 1 && single && s.getTerms().size() == 1)
    return products.front();
  AffineMap map = AffineMap::get(0, products.size(), sum);
  return affine::AffineApplyOp::create(b, loc, map, products);
}
