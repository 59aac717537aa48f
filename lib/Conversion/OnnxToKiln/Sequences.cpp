//===- Sequences.cpp - ONNX sequences as compile-time lists -----*- C++ -*-===//
//
// Kiln has no sequence values. A sequence built and read in straight-line
// code (a scripted model's `parts = x.split(n)`, `torch.stack(parts)`,
// `parts[i]`, `len(parts)`) is a list of tensors known while converting:
// SequenceConstruct, SequenceEmpty, SequenceInsert, SequenceErase and
// SplitToSequence build the list, SequenceAt, SequenceLength and
// ConcatFromSequence read it, and only tensor ops remain; SequenceMap
// copies its body once per element. Positions and split sizes must be
// compile-time constants. A sequence a Loop carries is
// the Loop's (SequenceAppends.cpp); sequence graph inputs and outputs are
// refused (the C ABI passes tensors).
//
//===----------------------------------------------------------------------===//
#include "Build.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// The most tensors one SplitToSequence makes: each becomes ops of its own.
constexpr int64_t kMaxPieces = 4096;

/// The constant position of input `i` (default `dflt` when omitted), in
/// [-n, n + extra), as an index in [0, n + extra).
FailureOr<int64_t> position(OnnxNode &node, unsigned i, int64_t dflt, int64_t n,
                            int64_t extra) {
  int64_t p = dflt;
  if (node.input(i)) {
    std::optional<double> c = node.constantScalar(i);
    if (!c) {
      node.fail() << "a position computed at run time is not supported: Kiln "
                     "keeps sequences as compile-time lists; make it a "
                     "constant";
      return failure();
    }
    p = (int64_t)*c;
  }
  if (p < -n || p >= n + extra) {
    node.fail() << "position " << p << " is outside the sequence of " << n
                << " tensors";
    return failure();
  }
  return p < 0 ? p + n : p;
}

FailureOr<SmallVector<Value>> splitToSequence(OnnxNode &node) {
  FailureOr<Value> x = node.staticInput(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
  int64_t rank = shape.size();
  FailureOr<int64_t> axis = normalizeAxis(node, node.intAttr("axis", 0), rank);
  if (failed(axis))
    return failure();
  int64_t n = shape[*axis];
  SmallVector<int64_t> sizes;
  bool scalarSplit = true;
  if (node.input(1)) {
    std::optional<DenseElementsAttr> split = node.constantInput(1);
    if (!split) {
      node.fail() << "a split computed at run time is not supported: Kiln "
                     "keeps sequences as compile-time lists; make it a "
                     "constant";
      return failure();
    }
    scalarSplit = split->getType().getRank() == 0;
    for (const APInt &v : split->getValues<APInt>())
      sizes.push_back(v.getSExtValue());
    if (llvm::any_of(sizes, [](int64_t s) { return s < 0; }) ||
        (scalarSplit && sizes[0] == 0)) {
      node.fail() << "split sizes must be positive";
      return failure();
    }
  } else {
    sizes.push_back(1);
  }
  if (scalarSplit) {
    int64_t chunk = sizes[0];
    if ((n + chunk - 1) / chunk > kMaxPieces) {
      node.fail() << "splits into " << (n + chunk - 1) / chunk
                  << " tensors; more than " << kMaxPieces
                  << " is not supported (each is a tensor of its own while "
                     "compiling); use Split or a Loop";
      return failure();
    }
    sizes.clear();
    for (int64_t at = 0; at < n; at += chunk)
      sizes.push_back(std::min(chunk, n - at));
  } else {
    int64_t total = 0;
    for (int64_t s : sizes)
      total += s;
    if (total != n) {
      node.fail() << "split sizes add up to " << total << ", not the axis "
                  << "length " << n;
      return failure();
    }
  }
  if ((int64_t)sizes.size() > kMaxPieces) {
    node.fail() << "splits into " << sizes.size() << " tensors; more than "
                << kMaxPieces << " is not supported (each is a tensor of "
                << "its own while compiling); use Split or a Loop";
    return failure();
  }
  // keepdims applies when split is not given (pieces of one).
  bool drop = !node.input(1) && node.intAttr("keepdims", 1) == 0;
  SmallVector<Value> parts;
  int64_t at = 0;
  for (int64_t s : sizes) {
    SmallVector<int64_t> offsets(rank, 0), size(shape), strides(rank, 1);
    offsets[*axis] = at;
    size[*axis] = s;
    at += s;
    FailureOr<Value> part =
        build<SliceOp>(node, *x, node.builder.getDenseI64ArrayAttr(offsets),
                       node.builder.getDenseI64ArrayAttr(size),
                       node.builder.getDenseI64ArrayAttr(strides));
    if (succeeded(part) && drop) {
      SmallVector<int64_t> squeezed(shape);
      squeezed.erase(squeezed.begin() + *axis);
      part = reshapeTo(node, *part, squeezed);
    }
    if (failed(part))
      return failure();
    parts.push_back(*part);
  }
  return parts;
}

FailureOr<Value> concatFromSequence(OnnxNode &node, ArrayRef<Value> parts) {
  if (parts.empty()) {
    node.fail() << "concatenates an empty sequence; ONNX defines no result "
                   "for it";
    return failure();
  }
  RankedTensorType first = typeOf(parts.front());
  int64_t rank = first.getRank();
  bool stack = node.intAttr("new_axis", 0) == 1;
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.intAttr("axis", 0), stack ? rank + 1 : rank);
  if (failed(axis))
    return failure();
  SmallVector<Value> inputs;
  for (Value p : parts) {
    RankedTensorType t = typeOf(p);
    if (!t.hasStaticShape() || t.getRank() != rank ||
        t.getElementType() != first.getElementType()) {
      node.fail() << "the sequence holds " << first << " and " << t
                  << "; ConcatFromSequence needs tensors of one element type "
                     "and rank, of static shapes";
      return failure();
    }
    if (stack) {
      SmallVector<int64_t> shape(t.getShape());
      shape.insert(shape.begin() + *axis, 1);
      FailureOr<Value> r = reshapeTo(node, p, shape);
      if (failed(r))
        return failure();
      p = *r;
    }
    inputs.push_back(p);
  }
  if (inputs.size() == 1)
    return inputs.front();
  return build<ConcatOp>(node, inputs, node.builder.getI64IntegerAttr(*axis));
}
} // namespace

bool mlir::kiln::isSequenceListOp(StringRef opType) {
  static constexpr StringLiteral kOps[] = {
      "SequenceConstruct", "SequenceEmpty",     "SequenceInsert",
      "SequenceErase",     "SequenceAt",        "SequenceLength",
      "SplitToSequence",   "ConcatFromSequence"};
  return llvm::is_contained(kOps, opType);
}

std::optional<LogicalResult>
mlir::kiln::convertSequenceOp(OnnxNode &node, SequenceLists &lists) {
  StringRef type = node.opType();
  Operation *op = node.op;
  // The list of the sequence operand, if it is one (else the op is left to
  // the Loop folding or reported as unsupported).
  const SmallVector<Value> *in = nullptr;
  bool readsList = type != "SequenceConstruct" && type != "SequenceEmpty" &&
                   type != "SplitToSequence";
  if (readsList) {
    auto it =
        op->getNumOperands() ? lists.find(op->getOperand(0)) : lists.end();
    if (it == lists.end())
      return std::nullopt;
    in = &it->second;
  }
  int64_t n = in ? (int64_t)in->size() : 0;
  // A sequence result: its list.
  auto list = [&](FailureOr<SmallVector<Value>> elements) -> LogicalResult {
    if (failed(elements))
      return failure();
    lists[op->getResult(0)] = *elements;
    return success();
  };
  // A tensor result replaces the op.
  auto tensor = [&](FailureOr<Value> v) -> LogicalResult {
    if (failed(v))
      return failure();
    op->getResult(0).replaceAllUsesWith(*v);
    op->erase();
    return success();
  };
  if (type == "SequenceEmpty")
    return list(SmallVector<Value>{});
  if (type == "SequenceConstruct") {
    SmallVector<Value> elements;
    for (unsigned i = 0; i < op->getNumOperands(); ++i) {
      FailureOr<Value> t = node.rankedInput(i);
      if (failed(t))
        return failure();
      elements.push_back(*t);
    }
    return list(elements);
  }
  if (type == "SplitToSequence")
    return list(splitToSequence(node));
  if (type == "SequenceInsert") {
    FailureOr<Value> t = node.rankedInput(1);
    FailureOr<int64_t> at = position(node, 2, n, n, 1);
    if (failed(t) || failed(at))
      return failure();
    SmallVector<Value> elements(*in);
    elements.insert(elements.begin() + *at, *t);
    return list(elements);
  }
  if (type == "SequenceErase") {
    FailureOr<int64_t> at = position(node, 1, -1, n, 0);
    if (failed(at))
      return failure();
    SmallVector<Value> elements(*in);
    elements.erase(elements.begin() + *at);
    return list(elements);
  }
  if (type == "SequenceAt") {
    FailureOr<int64_t> at = position(node, 1, 0, n, 0);
    if (failed(at))
      return failure();
    return tensor((*in)[*at]);
  }
  if (type == "SequenceLength")
    return tensor(splatConstant(
        node, RankedTensorType::get({}, node.builder.getI64Type()), double(n)));
  return tensor(concatFromSequence(node, *in));
}

FailureOr<Operation *>
mlir::kiln::unrollSequenceMap(OnnxNode &node, const SequenceLists &lists) {
  Operation *op = node.op;
  if (op->getNumRegions() != 1 || op->getRegion(0).empty()) {
    node.fail() << "has no body graph";
    return failure();
  }
  Block &body = op->getRegion(0).front();
  Operation *yield = &body.back();
  if (yield->getName().getStringRef() != "onnx.Yield") {
    node.fail() << "its body graph has no outputs";
    return failure();
  }
  if (body.getNumArguments() != op->getNumOperands() ||
      yield->getNumOperands() != op->getNumResults()) {
    node.fail() << "its body takes " << body.getNumArguments()
                << " inputs and gives " << yield->getNumOperands()
                << " outputs; the node has " << op->getNumOperands()
                << " inputs and " << op->getNumResults() << " outputs";
    return failure();
  }
  // Per input: its list, or null for a tensor every iteration sees whole.
  SmallVector<const SmallVector<Value> *> inputLists;
  int64_t n = -1;
  for (auto [j, v] : llvm::enumerate(op->getOperands())) {
    auto it = lists.find(v);
    if (it != lists.end()) {
      int64_t len = it->second.size();
      if (n >= 0 && len != n) {
        node.fail() << "its input sequences have different lengths (" << n
                    << " and " << len << ")";
        return failure();
      }
      n = len;
      inputLists.push_back(&it->second);
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (j == 0 || !isa<RankedTensorType>(v.getType()) ||
        (def && def->getName().getDialectNamespace() == "onnx")) {
      node.fail() << "input " << j
                  << " is a sequence Kiln does not hold as a compile-time "
                     "list (a graph input, or one a Loop builds); Kiln maps "
                     "sequences built in straight-line code";
      return failure();
    }
    inputLists.push_back(nullptr);
  }
  if (n == 0) {
    node.fail() << "maps an empty sequence; the element types of its outputs "
                   "are unknown";
    return failure();
  }
  int64_t bodyOps = 0;
  body.walk([&](Operation *) { ++bodyOps; });
  if (n * bodyOps > kMaxPieces * 64) {
    node.fail() << "unrolled over " << n << " elements its body of " << bodyOps
                << " operations would make " << n * bodyOps << "; at most "
                << kMaxPieces * 64 << " are supported";
    return failure();
  }
  // One copy of the body per element, converted next by the walk; each
  // output sequence is then a SequenceConstruct of the copies' results.
  OpBuilder &b = node.builder;
  b.setInsertionPoint(op);
  Operation *first = nullptr;
  SmallVector<SmallVector<Value>> outputs(op->getNumResults());
  for (int64_t i = 0; i < n; ++i) {
    IRMapping map;
    for (auto [j, arg] : llvm::enumerate(body.getArguments()))
      map.map(arg, inputLists[j] ? (*inputLists[j])[i] : op->getOperand(j));
    for (Operation &inner : body) {
      if (&inner == yield)
        break;
      Operation *copy = b.clone(inner, map);
      if (!first)
        first = copy;
    }
    for (auto [k, v] : llvm::enumerate(yield->getOperands()))
      outputs[k].push_back(map.lookupOrDefault(v));
  }
  for (auto [k, result] : llvm::enumerate(op->getResults())) {
    OperationState state(op->getLoc(), "onnx.SequenceConstruct");
    state.addOperands(outputs[k]);
    state.addTypes(result.getType());
    Operation *construct = b.create(state);
    if (!first)
      first = construct;
    result.replaceAllUsesWith(construct->getResult(0));
  }
  op->erase();
  return first;
}
