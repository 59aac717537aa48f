//===- OnnxToKiln.cpp - the onnx.* -> kiln.* pass ---------------*- C++ -*-===//
#include "kiln/Conversion/OnnxToKiln/OnnxToKiln.h"
#include "Build.h"
#include "SymbolicSizes.h"
#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "kiln/Dialect/Kiln/IR/ElementsUtils.h"
#include "kiln/Dialect/Onnx/OnnxDialect.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_CONVERTONNXTOKILNPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

//===----------------------------------------------------------------------===//
// OnnxNode
//===----------------------------------------------------------------------===//

StringRef OnnxNode::opType() const {
  StringRef name = op->getName().getStringRef();
  name.consume_front("onnx.");
  return name.substr(name.rfind('.') + 1);
}

std::string OnnxNode::describe() const {
  // A kiln.loop still completing (finishOnnxLoop) is its ONNX Loop.
  if (auto loop = op->getAttrOfType<StringAttr>(kOnnxNodeAttr))
    return loop.str();
  std::string name;
  if (auto nameLoc = dyn_cast<NameLoc>(op->getLoc()))
    name = nameLoc.getName().str();
  // The join of an If's branch results is the If to the user.
  std::string type = op->hasAttr(kIfJoinAttr) ? "If" : opType().str();
  return "node '" + name + "' (" + type + ", opset " + std::to_string(opset) +
         ")";
}

InFlightDiagnostic OnnxNode::fail() {
  InFlightDiagnostic diag = emitError(loc());
  diag << describe() << ": ";
  return diag;
}

Value OnnxNode::input(unsigned i) const {
  if (i >= op->getNumOperands())
    return nullptr;
  Value v = op->getOperand(i);
  return isa<NoneType>(v.getType()) ? nullptr : v;
}

FailureOr<Value> OnnxNode::rankedInput(unsigned i) {
  Value v = input(i);
  if (!v) {
    fail() << "input " << i << " is required";
    return failure();
  }
  if (!isa<RankedTensorType>(v.getType())) {
    fail() << "input " << i << " has unknown rank (" << v.getType() << ")";
    return failure();
  }
  return v;
}

FailureOr<Value> OnnxNode::staticInput(unsigned i) {
  FailureOr<Value> v = rankedInput(i);
  if (failed(v) || failed(requireStaticShape(typeOf(*v))))
    return failure();
  return v;
}

LogicalResult OnnxNode::requireStaticShape(RankedTensorType type) {
  if (type.hasStaticShape())
    return success();
  fail() << "input shape " << type << " is not static";
  return failure();
}

bool OnnxNode::resultUsed(unsigned i) const {
  return i < op->getNumResults() && !op->getResult(i).use_empty();
}

int64_t OnnxNode::intAttr(StringRef name, int64_t dflt) const {
  if (auto a = op->getAttrOfType<IntegerAttr>(name))
    return a.getInt();
  return dflt;
}

float OnnxNode::floatAttr(StringRef name, float dflt) const {
  if (auto a = op->getAttrOfType<FloatAttr>(name))
    return a.getValueAsDouble();
  // Some exporters write integral floats (alpha = 1) as INT attributes.
  if (auto a = op->getAttrOfType<IntegerAttr>(name))
    return (float)a.getInt();
  return dflt;
}

std::string OnnxNode::strAttr(StringRef name, StringRef dflt) const {
  if (auto a = op->getAttrOfType<StringAttr>(name))
    return a.str();
  return dflt.str();
}

std::optional<SmallVector<int64_t>> OnnxNode::intsAttr(StringRef name) const {
  auto a = op->getAttrOfType<ArrayAttr>(name);
  if (!a)
    return std::nullopt;
  SmallVector<int64_t> out;
  for (Attribute e : a) {
    // A malformed model may give floats where ints belong: not an int list.
    auto i = dyn_cast<IntegerAttr>(e);
    if (!i)
      return std::nullopt;
    out.push_back(i.getInt());
  }
  return out;
}

std::optional<DenseElementsAttr> OnnxNode::constantInput(unsigned i) const {
  Value v = input(i);
  if (!v)
    return std::nullopt;
  auto cst = v.getDefiningOp<ConstantOp>();
  if (!cst)
    return std::nullopt;
  ElementsAttr value = cst.getValue();
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return dense;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    ArrayRef<char> data = blob->getData();
    bool splat = false;
    if (!DenseElementsAttr::isValidRawBuffer(resource.getType(), data, splat))
      return std::nullopt;
    return DenseElementsAttr::getFromRawBuffer(resource.getType(), data);
  }
  return std::nullopt;
}

std::optional<SmallVector<int64_t>> OnnxNode::constantInts(unsigned i) const {
  std::optional<DenseElementsAttr> c = constantInput(i);
  if (!c || !c->getElementType().isInteger())
    return std::nullopt;
  SmallVector<int64_t> out;
  for (const APInt &v : c->getValues<APInt>())
    out.push_back(v.getSExtValue());
  return out;
}

std::optional<double> OnnxNode::constantScalar(unsigned i) const {
  std::optional<DenseElementsAttr> c = constantInput(i);
  if (!c || c->getNumElements() != 1)
    return std::nullopt;
  if (isa<FloatType>(c->getElementType()))
    return (*c->getValues<APFloat>().begin()).convertToDouble();
  return (double)(*c->getValues<APInt>().begin()).getSExtValue();
}

//===----------------------------------------------------------------------===//
// Shared ONNX semantics
//===----------------------------------------------------------------------===//

/// ONNX's inference typed the import: a static shape it knows must agree
/// with Kiln's, or the conversion is wrong; or, for a graph output whose
/// declared shape it could not check, the declaration is.
static LogicalResult checkInferredShapes(OnnxNode &node, Operation *op,
                                         ArrayRef<Value> results) {
  bool mismatch = false;
  for (unsigned i = 0; i < op->getNumResults() && i < results.size(); ++i) {
    Value repl = results[i];
    auto want = dyn_cast<RankedTensorType>(op->getResult(i).getType());
    auto got = repl ? dyn_cast<RankedTensorType>(repl.getType()) : nullptr;
    if (!want || !got || !want.hasStaticShape() ||
        want.getShape() == got.getShape())
      continue;
    bool declared = llvm::any_of(op->getResult(i).getUsers(), [](Operation *u) {
      return isa<func::ReturnOp>(u) ||
             u->getName().getStringRef() == "onnx.Yield";
    });
    if (declared)
      node.fail() << "Kiln computes output " << i << " as " << got
                  << " but the model declares " << want
                  << " for it as an output of its graph; the declared "
                     "shape does not hold at the input sizes given, or "
                     "Kiln's conversion of "
                  << node.opType()
                  << " is wrong (please report it with the model)";
    else
      node.fail() << "Kiln computes output " << i << " as " << got
                  << " but ONNX shape inference says " << want
                  << "; this is a bug in Kiln's conversion of " << node.opType()
                  << " (please report it)";
    mismatch = true;
  }
  return failure(mismatch);
}

LogicalResult mlir::kiln::finishBuild(OnnxNode &node, Operation *op) {
  std::string message;
  LogicalResult result = success();
  {
    ScopedDiagnosticHandler capture(op->getContext(), [&](Diagnostic &diag) {
      if (message.empty())
        message = diag.str();
      return success();
    });
    if (auto infer = dyn_cast<InferTypeOpInterface>(op)) {
      SmallVector<Type> types;
      result = infer.inferReturnTypes(
          op->getContext(), op->getLoc(), op->getOperands(),
          op->getAttrDictionary(), op->getPropertiesStorage(),
          op->getRegions(), types);
      if (succeeded(result))
        for (auto [r, t] : llvm::zip(op->getResults(), types))
          r.setType(t);
    } else if (op->hasTrait<OpTrait::SameOperandsAndResultType>()) {
      op->getResult(0).setType(op->getOperand(0).getType());
    }
    if (succeeded(result))
      result = verify(op, /*verifyRecursively=*/false);
  }
  if (failed(result)) {
    // Strip the "'kiln.x' op " prefix: users know ONNX ops, not ours.
    StringRef text(message);
    if (size_t pos = text.find(" op "); text.starts_with("'") && pos != StringRef::npos)
      text = text.drop_front(pos + 4);
    // A type constraint of the graph op means an element type Kiln has no
    // kernel for yet: say so in those words.
    if (text.contains(" must be ") && text.contains("but got")) {
      SmallVector<std::string> types;
      for (Value v : op->getOperands())
        if (auto t = dyn_cast<ShapedType>(v.getType())) {
          std::string s;
          llvm::raw_string_ostream os(s);
          os << t.getElementType();
          if (!llvm::is_contained(types, s))
            types.push_back(s);
        }
      node.fail() << "element type " << llvm::join(types, ", ")
                  << " is not supported for " << node.opType() << " yet ("
                  << text << ")";
    } else {
      node.fail() << text;
    }
    op->erase();
  }
  return result;
}

Value mlir::kiln::foldBuilt(OnnxNode &node, Operation *op) {
  Value result = op->getResult(0);
  SmallVector<OpFoldResult> folded;
  if (op->getNumResults() != 1 || failed(op->fold(folded)) || folded.empty())
    return result;
  if (auto attr = dyn_cast<Attribute>(folded.front());
      attr && hidesBatchProbe(op, attr))
    return result;
  Value repl;
  if (auto v = dyn_cast<Value>(folded.front())) {
    repl = v;
  } else if (auto attr = dyn_cast_or_null<ElementsAttr>(
                 cast<Attribute>(folded.front()))) {
    if (attr.getType() == result.getType())
      repl = ConstantOp::create(node.builder, node.loc(), attr.getType(), attr);
  }
  // The replacement must keep the type that ONNX shape inference and the
  // node's consumers were checked against.
  if (!repl || repl == result || repl.getType() != result.getType())
    return result;
  op->erase();
  return repl;
}

static FailureOr<Value> checkFloat(OnnxNode &node, FailureOr<Value> v) {
  if (failed(v))
    return failure();
  if (!isa<FloatType>(typeOf(*v).getElementType())) {
    node.fail() << "element type " << typeOf(*v).getElementType()
                << " is not supported; expects a float tensor";
    return failure();
  }
  return v;
}

FailureOr<Value> mlir::kiln::floatInput(OnnxNode &node, unsigned i) {
  return checkFloat(node, node.staticInput(i));
}

FailureOr<Value> mlir::kiln::elementwiseFloatInput(OnnxNode &node,
                                                   unsigned i) {
  return checkFloat(node, node.rankedInput(i));
}

FailureOr<Value> mlir::kiln::reshapeTo(OnnxNode &node, Value v,
                                       ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape() == shape)
    return v;
  auto op = ReshapeOp::create(node.builder, node.loc(),
                              RankedTensorType::get(shape, type.getElementType()),
                              v);
  if (failed(finishBuild(node, op)))
    return failure();
  return foldBuilt(node, op);
}

FailureOr<Value> mlir::kiln::transposeBy(OnnxNode &node, Value v,
                                         ArrayRef<int64_t> perm) {
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(perm))
    identity &= (int64_t)i == p;
  if (identity)
    return v;
  return build<TransposeOp>(node, v, node.builder.getDenseI64ArrayAttr(perm));
}

FailureOr<int64_t> mlir::kiln::normalizeAxis(OnnxNode &node, int64_t axis,
                                             int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1)) {
    node.fail() << "axis " << axis << " is out of range for rank " << rank;
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

FailureOr<SmallVector<int64_t>>
mlir::kiln::normalizeAxes(OnnxNode &node, ArrayRef<int64_t> axes,
                          int64_t rank) {
  SmallVector<int64_t> out;
  for (int64_t a : axes) {
    FailureOr<int64_t> n = normalizeAxis(node, a, rank);
    if (failed(n))
      return failure();
    out.push_back(*n);
  }
  return out;
}

Value mlir::kiln::splatConstant(OnnxNode &node, RankedTensorType type,
                                double value) {
  Type elt = type.getElementType();
  Attribute a;
  if (isa<FloatType>(elt))
    a = FloatAttr::get(elt, value);
  else
    a = IntegerAttr::get(elt, APInt(elt.getIntOrFloatBitWidth(),
                                    (uint64_t)(int64_t)value,
                                    /*isSigned=*/true, /*implicitTrunc=*/true));
  return ConstantOp::create(node.builder, node.loc(), type,
                            DenseElementsAttr::get(type, a));
}

Value mlir::kiln::scalarConstant(OnnxNode &node, Type elt, double value) {
  return splatConstant(node, RankedTensorType::get({}, elt), value);
}

FailureOr<int64_t> mlir::kiln::checkedGatherAxis(OnnxNode &node, Value data) {
  auto type = cast<RankedTensorType>(data.getType());
  if (type.getRank() == 0) {
    node.fail() << "cannot gather from a scalar";
    return failure();
  }
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.intAttr("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  int64_t n = type.getDimSize(*axis);
  if (std::optional<SmallVector<int64_t>> c = node.constantInts(1))
    for (int64_t i : *c)
      if (n != ShapedType::kDynamic && (i < -n || i >= n)) {
        node.fail() << "index " << i << " is out of range for axis " << *axis
                    << " of size " << n;
        return failure();
      }
  return axis;
}

LogicalResult
mlir::kiln::checkConstantIndices(OnnxNode &node, unsigned input,
                                 const std::function<int64_t(size_t)> &dimOf) {
  std::optional<SmallVector<int64_t>> c = node.constantInts(input);
  if (!c)
    return success();
  for (auto [k, i] : llvm::enumerate(*c)) {
    int64_t n = dimOf(k);
    if (n != ShapedType::kDynamic && (i < -n || i >= n)) {
      node.fail() << "index " << i
                  << " is out of range for a dimension of size " << n;
      return failure();
    }
  }
  return success();
}

FailureOr<SliceBounds>
mlir::kiln::resolveSlice(OnnxNode &node, ArrayRef<int64_t> shape,
                         ArrayRef<int64_t> starts, ArrayRef<int64_t> ends,
                         std::optional<SmallVector<int64_t>> axes,
                         std::optional<SmallVector<int64_t>> steps) {
  int64_t rank = shape.size();
  if (ShapedType::isDynamicShape(shape)) {
    node.fail() << "the input shape must be static";
    return failure();
  }
  if (starts.size() != ends.size()) {
    node.fail() << "starts and ends have " << starts.size() << " and "
                << ends.size() << " values; they must have one per sliced axis";
    return failure();
  }
  if (!axes) {
    axes.emplace();
    for (int64_t i = 0; i < (int64_t)starts.size(); ++i)
      axes->push_back(i);
  }
  if (!steps)
    steps = SmallVector<int64_t>(starts.size(), 1);
  if (axes->size() != starts.size() || steps->size() != starts.size()) {
    node.fail() << "starts, ends, axes and steps must have as many values as "
                   "starts ("
                << starts.size() << "), got " << axes->size() << " axes and "
                << steps->size() << " steps";
    return failure();
  }
  SliceBounds bounds;
  bounds.offsets.assign(rank, 0);
  bounds.sizes.assign(shape.begin(), shape.end());
  bounds.strides.assign(rank, 1);
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    FailureOr<int64_t> axis = normalizeAxis(node, (*axes)[i], rank);
    if (failed(axis))
      return failure();
    if (seen[*axis]) {
      node.fail() << "axis " << (*axes)[i] << " is sliced twice";
      return failure();
    }
    seen[*axis] = true;
    int64_t step = (*steps)[i], dim = shape[*axis];
    if (step == 0) {
      node.fail() << "steps must not be 0";
      return failure();
    }
    if (step < 0) {
      node.fail() << "negative steps (reversed slices) are not supported yet; "
                     "axis "
                  << (*axes)[i] << " has step " << step;
      return failure();
    }
    // Negative positions count from the end, then both clamp to [0, dim]
    // (so INT64_MAX means "to the end").
    int64_t start = starts[i], end = ends[i];
    start = std::clamp<int64_t>(start < 0 ? start + dim : start, 0, dim);
    end = std::clamp<int64_t>(end < 0 ? end + dim : end, 0, dim);
    bounds.offsets[*axis] = start;
    bounds.sizes[*axis] = end > start ? (end - start - 1) / step + 1 : 0;
    bounds.strides[*axis] = step;
  }
  return bounds;
}

FailureOr<SmallVector<int64_t>>
mlir::kiln::resolvePads2D(OnnxNode &node, ArrayRef<int64_t> inputHW,
                          ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                          ArrayRef<int64_t> dilations) {
  std::string autoPad = node.strAttr("auto_pad", "NOTSET");
  if (autoPad == "NOTSET") {
    SmallVector<int64_t> pads = node.intsAttr("pads").value_or(
        SmallVector<int64_t>{0, 0, 0, 0});
    if (pads.size() != 4) {
      node.fail() << "expects 4 pads for a 2-D window, got " << pads.size();
      return failure();
    }
    return pads;
  }
  if (autoPad == "VALID")
    return SmallVector<int64_t>{0, 0, 0, 0};
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER") {
    node.fail() << "unknown auto_pad '" << autoPad
                << "'; expected NOTSET, VALID, SAME_UPPER or SAME_LOWER";
    return failure();
  }
  SmallVector<int64_t> pads(4, 0);
  for (int i = 0; i < 2; ++i) {
    // With a symbolic size, SAME padding is static only at stride 1, where
    // it pads the (dilated) kernel's extent minus one whatever the size.
    if (ShapedType::isDynamic(inputHW[i]) && strides[i] != 1) {
      node.fail() << "auto_pad " << autoPad << " with stride " << strides[i]
                  << " pads by an amount that depends on the symbolic size "
                     "of spatial axis "
                  << i
                  << "; give that dimension one size, or export the model "
                     "with explicit pads";
      return failure();
    }
    if (ShapedType::isDynamic(inputHW[i])) {
      int64_t total = (kernel[i] - 1) * dilations[i];
      int64_t small = total / 2, large = total - small;
      pads[i] = autoPad == "SAME_UPPER" ? small : large;
      pads[i + 2] = autoPad == "SAME_UPPER" ? large : small;
      continue;
    }
    int64_t out = (inputHW[i] + strides[i] - 1) / strides[i];
    int64_t total = std::max<int64_t>(
        (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 -
            inputHW[i],
        0);
    int64_t small = total / 2, large = total - small;
    pads[i] = autoPad == "SAME_UPPER" ? small : large;
    pads[i + 2] = autoPad == "SAME_UPPER" ? large : small;
  }
  return pads;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// Whether `target` is integer shape arithmetic that SymbolicSizes follows
/// (Shape and Size of tensors, Gather, Concat, Add, ...; no floats, no
/// graph inputs), so the conversion can check a Reshape's element counts.
static bool tracedTarget(Value target) {
  static const llvm::StringSet<> kTraced = {
      "onnx.Shape",     "onnx.Size",     "onnx.Gather",     "onnx.Concat",
      "onnx.Slice",     "onnx.Add",      "onnx.Sub",        "onnx.Mul",
      "onnx.Div",       "onnx.Mod",      "onnx.Max",        "onnx.Min",
      "onnx.Neg",       "onnx.Cast",     "onnx.Identity",   "onnx.Squeeze",
      "onnx.Unsqueeze", "onnx.Constant", "onnx.Initializer"};
  SmallVector<Value> work{target};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!def || !type || !type.getElementType().isInteger() ||
        !kTraced.contains(def->getName().getStringRef()))
      return false;
    if (!seen.insert(def).second)
      continue;
    if (seen.size() > 256)
      return false;
    StringRef name = def->getName().getStringRef();
    if (name == "onnx.Shape" || name == "onnx.Size")
      continue;
    llvm::append_range(work, def->getOperands());
  }
  return true;
}

/// A Reshape of a tensor with a symbolic dimension whose target shape is
/// computed in the graph (Shape, Gather, Unsqueeze, Concat: how exporters
/// write `x.view(b, n, heads, d)`), and which ONNX's shape inference with
/// data propagation resolved to one symbolic size among constants: the
/// target becomes that constant shape with -1 for the symbolic size (the
/// element count decides it, as Reshape does) (docs/shapes.md). Where the
/// computation is arithmetic SymbolicSizes follows, the constant is kept
/// as kInferredTargetAttr and the conversion checks the element counts of
/// the computed target (a target of the wrong count is an error, not a
/// -1); elsewhere the computation, now unused, is dropped. Anything else
/// is left as it is.
static void foldSymbolicReshapeShapes(OpBuilder &builder, Block &body) {
  bool folded = false;
  for (Operation &op : body) {
    if (op.getName().getStringRef() != "onnx.Reshape" ||
        op.getNumOperands() != 2 || op.getNumResults() != 1)
      continue;
    auto in = dyn_cast<RankedTensorType>(op.getOperand(0).getType());
    auto out = dyn_cast<RankedTensorType>(op.getResult(0).getType());
    Operation *shapeDef = op.getOperand(1).getDefiningOp();
    if (!in || !out || in.hasStaticShape() ||
        llvm::count_if(out.getShape(), ShapedType::isDynamic) != 1 ||
        !shapeDef || isa<onnx::InitializerOp>(shapeDef))
      continue;
    SmallVector<int64_t> target(out.getShape());
    for (int64_t &d : target)
      if (ShapedType::isDynamic(d))
        d = -1;
    auto type = RankedTensorType::get({(int64_t)target.size()},
                                      builder.getI64Type());
    auto value = DenseIntElementsAttr::get(type, ArrayRef(target));
    if (tracedTarget(op.getOperand(1))) {
      op.setAttr(kInferredTargetAttr, value);
      continue;
    }
    builder.setInsertionPoint(&op);
    op.setOperand(1, ConstantOp::create(builder, op.getLoc(), type, value));
    folded = true;
  }
  // The shape computations left without a use.
  for (bool erased = folded; erased;) {
    erased = false;
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      if (op.getName().getDialectNamespace() == "onnx" && op.use_empty() &&
          op.getNumRegions() == 0 && op.getNumResults() > 0) {
        op.erase();
        erased = true;
      }
  }
}

namespace {
/// Why no converter takes `node`: a deprecated version, a version Kiln has
/// not converted yet (never an older one's meaning instead), an unknown
/// domain, an opset older than the first converted version, or an unknown
/// op. `known` holds the since-versions the table converts.
/// ONNX's narrow types (float8, float4, int4, int2) are cast, quantized
/// and moved; an op that would compute on them is refused, not lowered to
/// arithmetic on their storage bytes.
LogicalResult refuseNarrowCompute(OnnxNode &node, StringRef domain) {
  static const llvm::StringSet<> kMoves = {
      "BitCast",   "Cast",      "CastLike",         "DequantizeLinear",
      "QuantizeLinear",
      "Identity",  "Reshape",   "Transpose",        "Concat",
      "Slice",     "Gather",    "GatherElements",   "GatherND",
      "Squeeze",   "Unsqueeze", "Flatten",          "Shape",
      "Size",      "Expand",    "Split",            "Tile",
      "Where",     "Constant",  "If",               "Loop",
      "Scan",      "Optional",  "OptionalGetElement"};
  if (domain.empty() && kMoves.contains(node.opType()))
    return success();
  for (Value v : node.op->getOperands())
    if (isa<RankedTensorType>(v.getType()) && isNarrowType(v.getType())) {
      node.fail() << "computing on " << getElementTypeOrSelf(v.getType())
                  << " is not supported: Kiln casts, quantizes, dequantizes "
                     "and moves ONNX's float8, float4, int4 and int2 tensors; "
                     "Cast the input to float first";
      return failure();
    }
  return success();
}

void reportUnconverted(OnnxNode &node, StringRef domain,
                       const OnnxSpecVersion *specVersion,
                       SmallVector<int64_t> known) {
  InFlightDiagnostic diag = node.fail();
  llvm::sort(known);
  int64_t opset = node.opset;
  std::optional<int64_t> spec;
  if (specVersion)
    spec = specVersion->since;
  if (specVersion && specVersion->deprecated) {
    diag << "opset " << opset << " means " << node.opType() << "-" << *spec
         << ", which ONNX deprecated (removed); "
         << (node.opType() == "Upsample" ? "use Resize, or " : "")
         << "re-export the model with an opset below " << *spec;
  } else if (spec && !known.empty() && *spec > known.front()) {
    int64_t below = 0;
    for (int64_t k : known)
      if (k < *spec)
        below = k;
    diag << "opset " << opset << " means " << node.opType() << "-" << *spec
         << ", which Kiln does not convert yet (it converts " << node.opType()
         << "-"
         << llvm::join(llvm::map_range(
                           known, [](int64_t v) { return std::to_string(v); }),
                       ", -")
         << "); " << node.opType() << "-" << *spec
         << " changed the op's definition, so re-export the model with an "
            "opset below "
         << *spec << " (to use " << node.opType() << "-" << below
         << ") or replace the node";
  } else if (domain == "com.microsoft" && known.empty()) {
    diag << "ONNX Runtime's contrib op " << node.opType()
         << " (domain com.microsoft) is not supported; of that domain Kiln "
            "converts the transformer ops its optimizer writes and the "
            "QLinear ops of its QOperator quantization (docs/ops.md). Export "
            "or quantize the model with standard ONNX ops (for "
            "quantization, quant_format=QDQ)";
  } else if (!domain.empty() && known.empty()) {
    diag << "the operator domain '" << domain
         << "' is not supported; Kiln compiles the default ONNX domain "
            "(ai.onnx)";
  } else if (!known.empty()) {
    diag << "Kiln supports " << node.opType() << " from opset "
         << known.front() << "; re-export the model with a newer opset";
  } else {
    diag << "op type " << node.opType()
         << " is not supported by Kiln yet; remove or replace it before "
            "compiling";
  }
}

struct ConvertOnnxToKilnPass
    : mlir::kiln::impl::ConvertOnnxToKilnPassBase<ConvertOnnxToKilnPass> {
  using ConvertOnnxToKilnPassBase::ConvertOnnxToKilnPassBase;

  bool withinSizeLimit(OnnxNode &node, TypeRange types,
                       StringRef what = "result", ValueRange values = {}) {
    return withinTensorLimit(node, types, maxTensorBytes, what, values);
  }

  // Each op's (row, since-version) pairs in table order, keyed by op type,
  // or "<domain>.<OpType>" for other domains than ai.onnx.
  using Version = std::pair<const OnnxOpRow *, int64_t>;
  llvm::StringMap<SmallVector<Version>> byType;
  llvm::StringMap<int64_t> opsets;
  bool anyFailed = false;
  // Nodes that failed, and nodes fed by them: the latter are skipped so
  // that one bad node is reported once, not once per consumer.
  llvm::DenseSet<Operation *> failedOps;
  bool deferSequences = true;
  /// The sequences built so far, as lists of converted tensors.
  SequenceLists sequences;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (const OnnxOpRow &row : onnxOpTable()) {
      if (!row.convert)
        continue; // control flow, inlined below
      std::string key = *row.domain ? std::string(row.domain) + "." + row.opType
                                    : std::string(row.opType);
      for (int64_t since : row.versions())
        byType[key].push_back({&row, since});
    }

    if (auto dict = module->getAttrOfType<DictionaryAttr>(
            onnx::OnnxDialect::kOpsetImportAttr))
      for (NamedAttribute entry : dict)
        opsets[entry.getName() == "ai.onnx" ? "" : entry.getName().str()] =
            cast<IntegerAttr>(entry.getValue()).getInt();

    OpBuilder builder(&getContext());
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      Block &body = func.getBody().front();
      foldSymbolicReshapeShapes(builder, body);
      SymbolicSizes sizes(func);
      convertBlock(body, builder, sizes);
      // SequenceEmpty waits for the Loops after it, which may fold the
      // sequence into a scan output (ControlFlow.cpp); one still used is
      // reported now.
      deferSequences = false;
      convertBlock(body, builder, sizes);
      deferSequences = true;
      // Omitted optional inputs are gone with their users, and so are the
      // sequence ops whose lists were read (the last first).
      for (Operation &op :
           llvm::make_early_inc_range(llvm::reverse(func.getBody().front())))
        if ((isa<onnx::NoValueOp>(op) ||
             (sequences.count(op.getNumResults() ? op.getResult(0) : Value()) &&
              !failedOps.contains(&op))) &&
            op.use_empty())
          op.erase();
      sequences.clear();
      auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
      func.setType(FunctionType::get(&getContext(), func.getArgumentTypes(),
                                     ret.getOperandTypes()));
    }
    if (auto probe = module->getAttrOfType<IntegerAttr>(kBatchProbeAttr))
      anyFailed |= readsBatchProbe(module, probe.getInt());
    if (anyFailed)
      signalPassFailure();
  }

  /// Guards the sizes every op that converted `op` (after `before`, or
  /// from the block's start) needs equal: DequantizeLinear's subtraction of
  /// a zero point of its own symbolic size, not only the last op.
  static void guardBuiltOps(SymbolicSizes &sizes, OnnxNode &node, Block &body,
                            Operation *before, Operation *op) {
    SmallVector<Operation *> built;
    for (Operation *o = before ? before->getNextNode() : &body.front();
         o && o != op; o = o->getNextNode())
      built.push_back(o);
    for (Operation *o : built)
      sizes.guardAgreement(node, o);
  }

  /// Converts the onnx ops of `body` in order (a function's, or a
  /// kiln.loop's body, whose onnx.Yield then becomes a kiln.yield).
  void convertBlock(Block &body, OpBuilder &builder, SymbolicSizes &sizes) {
    for (Operation *next = body.empty() ? nullptr : &body.front(); next;) {
      Operation *op = next;
      next = op->getNextNode();
      if (auto loop = dyn_cast<LoopOp>(op)) {
        if (!isa<YieldOp>(loop.getBody().front().getTerminator()) &&
            !failedOps.contains(op))
          finishLoop(loop, builder, sizes);
        continue;
      }
      if (op->getName().getStringRef() == "onnx.Yield")
        continue;
      if (op->getName().getStringRef() == "onnx.SequenceEmpty") {
        if (op->use_empty()) {
          op->erase();
          continue;
        }
        // One a Loop carries waits for the Loop's folding.
        if (deferSequences && llvm::any_of(op->getUsers(), [](Operation *u) {
              return u->getName().getStringRef() == "onnx.Loop";
            }))
          continue;
      }
      if (!isa<onnx::OnnxDialect>(op->getDialect()) &&
          op->getName().getDialectNamespace() != "onnx")
        continue;
      if (isOnnxControlFlow(op) && !failedOps.contains(op) &&
          llvm::none_of(op->getOperands(), [&](Value v) {
            return failedOps.contains(v.getDefiningOp());
          })) {
        // Everything before it is converted, so a condition or trip count
        // computed from shapes is a constant now. The inlined ops (nested
        // control flow too) are converted next.
        Operation *prev = op->getPrevNode();
        if (!inlineOnnxControlFlow(op, opsets, sizes)) {
          anyFailed = true;
          failedOps.insert(op);
          continue;
        }
        next = prev ? prev->getNextNode() : &body.front();
        continue;
      }
      builder.setInsertionPoint(op);
      if (auto init = dyn_cast<onnx::InitializerOp>(op)) {
        Value c = ConstantOp::create(
            builder, op->getLoc(), init.getValue().getType(), init.getValue());
        op->getResult(0).replaceAllUsesWith(c);
        op->erase();
        continue;
      }
      if (isa<onnx::NoValueOp>(op) || failedOps.contains(op))
        continue;
      if (llvm::any_of(op->getOperands(), [&](Value v) {
            return failedOps.contains(v.getDefiningOp());
          })) {
        failedOps.insert(op);
        continue;
      }

      StringRef fullName = op->getName().getStringRef();
      StringRef rest = fullName.drop_front(strlen("onnx."));
      size_t dot = rest.rfind('.');
      std::string domain =
          dot == StringRef::npos ? "" : rest.substr(0, dot).str();
      int64_t opset = opsets.lookup(domain);
      OnnxNode node(op, builder, opset);
      node.sizes = &sizes;

      if (domain.empty() && node.opType() == "SequenceMap" &&
          onnxSpecVersion(domain, node.opType(), opset)) {
        FailureOr<Operation *> first = unrollSequenceMap(node, sequences);
        if (failed(first)) {
          anyFailed = true;
          failedOps.insert(op);
          continue;
        }
        next = *first; // the copies of its body, converted next
        continue;
      }
      if (domain.empty() && isSequenceListOp(node.opType()) &&
          onnxSpecVersion(domain, node.opType(), opset)) {
        if (op->getNumResults() && sequences.count(op->getResult(0)))
          continue; // its list was made in the first walk
        if (std::optional<LogicalResult> done =
                convertSequenceOp(node, sequences)) {
          if (failed(*done)) {
            anyFailed = true;
            failedOps.insert(op);
          }
          continue;
        }
      }

      // Ops of other domains are keyed "<domain>.<OpType>".
      std::string key = domain.empty() ? node.opType().str()
                                       : domain + "." + node.opType().str();
      // The version of the op the opset means (ONNX 1.23); a row must
      // list exactly that version. Ops ONNX does not define (other
      // domains) take the largest since-version not above the opset.
      const OnnxSpecVersion *specVersion =
          onnxSpecVersion(domain, node.opType(), opset);
      std::optional<int64_t> spec;
      if (specVersion)
        spec = specVersion->since;
      std::optional<Version> chosen;
      for (Version v : byType.lookup(key))
        if (spec ? v.second == *spec
                 : v.second <= opset && (!chosen || v.second > chosen->second))
          chosen = v;
      // ONNX Runtime registers its LayerNormalization and
      // SimplifiedLayerNormalization (version 1) in the default domain, and
      // its transformer optimizer writes them into models of any opset:
      // where ONNX defines no such op at the node's opset, take ORT's.
      if (!chosen && domain.empty() && !specVersion &&
          llvm::is_contained({StringRef("LayerNormalization"),
                              StringRef("SimplifiedLayerNormalization")},
                             node.opType()))
        for (Version v : byType.lookup("com.microsoft." + node.opType().str()))
          if (v.second == 1)
            chosen = v;
      if (!chosen) {
        anyFailed = true;
        failedOps.insert(op);
        SmallVector<int64_t> known;
        for (Version v : byType.lookup(key))
          known.push_back(v.second);
        reportUnconverted(node, domain, specVersion, known);
        continue;
      }
      // Inputs: graph inputs are not checked elsewhere, and converters
      // build index constants from their sizes.
      if (!withinSizeLimit(node, op->getOperandTypes(), "input",
                           op->getOperands()) ||
          !withinSizeLimit(node, op->getResultTypes()) ||
          failed(refuseNarrowCompute(node, domain)) ||
          failed(refuseNonBinaryFlags(node))) {
        anyFailed = true;
        failedOps.insert(op);
        continue;
      }
      Operation *before = op->getPrevNode();
      FailureOr<SmallVector<Value>> results = chosen->first->convert(node);
      if (succeeded(results)) {
        SmallVector<Value> computed;
        for (Value v : *results)
          if (v) // an optional output Kiln does not compute is null
            computed.push_back(v);
        if (!withinSizeLimit(node, ValueRange(computed).getTypes(), "result",
                             computed))
          results = failure();
      }
      if (failed(results)) {
        anyFailed = true;
        failedOps.insert(op);
        continue;
      }
      bool mismatch = failed(checkInferredShapes(node, op, *results));
      if (mismatch) {
        anyFailed = true;
        failedOps.insert(op);
        continue;
      }
      guardBuiltOps(sizes, node, body, before, op);
      if (Value c = sizes.record(node, *results))
        (*results)[0] = c;
      for (unsigned i = 0; i < op->getNumResults(); ++i) {
        Value repl = i < results->size() ? (*results)[i] : Value();
        if (repl) {
          op->getResult(i).replaceAllUsesWith(repl);
        } else if (!op->getResult(i).use_empty()) {
          node.fail() << "output " << i
                      << " is used but Kiln does not compute it";
          anyFailed = true;
        }
      }
      if (op->use_empty())
        op->erase();
      else
        failedOps.insert(op);
    }
  }

  /// Converts the body of a kiln.loop that inlineOnnxControlFlow made from
  /// an ONNX Loop, then gives it its kiln.yield and its scan outputs' types.
  void finishLoop(LoopOp loop, OpBuilder &builder, SymbolicSizes &sizes) {
    Block &body = loop.getBody().front();
    bool before = anyFailed;
    anyFailed = false;
    convertBlock(body, builder, sizes);
    Operation *yield = body.getTerminator();
    bool ok = !anyFailed && llvm::none_of(yield->getOperands(), [&](Value v) {
      return failedOps.contains(v.getDefiningOp()) ||
             (v.getDefiningOp() &&
              isa<onnx::OnnxDialect>(v.getDefiningOp()->getDialect()));
    });
    anyFailed |= before;
    if (!ok) {
      anyFailed = true;
      failedOps.insert(loop);
      return;
    }
    if (failed(finishOnnxLoop(loop, sizes))) {
      anyFailed = true;
      failedOps.insert(loop);
    }
  }
};
} // namespace
