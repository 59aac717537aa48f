//===- ControlFlowScan.cpp - ONNX Scan --------------------------*- C++ -*-===//
//
// Scan runs its body once per slice of its scan inputs, carrying states and
// stacking per-step outputs. A scan of a static length whose unrolled size
// stays under kMaxUnrolledOps is unrolled: Gather takes slice t, Unsqueeze +
// Concat stack the outputs (opset 8's batch axis is unrolled the same way).
// Any other (a length known only at run time, from a symbolic dimension, or
// a long one) becomes the kiln.loop of an ONNX Loop: the body takes slice i
// of each scan input itself (Gather at the iteration number, or at
// length - 1 - i for a reversed input), the loop's trip count is the
// inputs' common length, and its stacked outputs are reversed (Slice with
// step -1) or moved to their axis (Transpose) after it. Scan outputs are
// bounded by the length's largest value (`--dim seq=1..512`: 512 rows).
//
//===----------------------------------------------------------------------===//
#include "ControlFlow.h"

using namespace mlir;
using namespace mlir::kiln;

FailureOr<SmallVector<Value>>
Inliner::unrollScan(OnnxNode &node, Region &body, ValueRange states,
                    ValueRange scans, int64_t numOut, const ScanAxes &axes,
                    bool mayLoop) {
  Location loc = node.loc();
  int64_t steps = -1;
  bool runtime = false;
  for (auto [j, s] : llvm::enumerate(scans)) {
    auto t = dyn_cast<RankedTensorType>(s.getType());
    int64_t axis = axes.inAxes[j];
    if (t && axis < 0)
      axis += t.getRank();
    if (!t || axis < 0 || axis >= t.getRank()) {
      node.fail() << "scan input " << j << " (" << s.getType()
                  << ") has no axis " << axes.inAxes[j];
      return failure();
    }
    if (t.isDynamicDim(axis)) {
      runtime = true;
      continue;
    }
    if (steps >= 0 && steps != t.getDimSize(axis)) {
      node.fail() << "scan inputs have different lengths (" << steps << " and "
                  << t.getDimSize(axis) << ")";
      return failure();
    }
    steps = t.getDimSize(axis);
  }
  bool tooLong = steps > kMaxUnrolledOps / std::max<int64_t>(countOps(body), 1);
  if (mayLoop && (runtime || tooLong))
    return scanLoop(node, body, states, scans, numOut, axes);
  if (runtime) {
    node.fail() << "a scan of run-time length along its batch axis (opset 8) "
                   "is not supported; give the dimension one size";
    return failure();
  }
  if (steps <= 0) {
    node.fail() << "an empty scan (length " << steps << ") is not supported";
    return failure();
  }
  if (failed(checkUnrollSize(node, body, steps)))
    return failure();
  SmallVector<Value> carried(states.begin(), states.end());
  SmallVector<SmallVector<Value>> perStep(numOut);
  for (int64_t t = 0; t < steps; ++t) {
    SmallVector<Value> args(carried);
    for (auto [j, s] : llvm::enumerate(scans))
      args.push_back(
          take(loc, s, axes.inDirs[j] ? steps - 1 - t : t, axes.inAxes[j]));
    SmallVector<Value> outs = inlineBody(body, args);
    if (outs.size() != carried.size() + numOut) {
      node.fail() << "the body yields " << outs.size() << " values; expected "
                  << carried.size() + numOut;
      return failure();
    }
    for (size_t i = 0; i < carried.size(); ++i)
      carried[i] = outs[i];
    for (int64_t k = 0; k < numOut; ++k)
      perStep[k].push_back(outs[carried.size() + k]);
  }
  SmallVector<Value> results(carried);
  for (int64_t k = 0; k < numOut; ++k) {
    if (axes.outDirs[k])
      std::reverse(perStep[k].begin(), perStep[k].end());
    results.push_back(stack(loc, perStep[k], axes.outAxes[k]));
  }
  return results;
}

FailureOr<SmallVector<Value>> Inliner::rewriteScan(OnnxNode &node) {
  Operation *op = node.op;
  Region *body = regionNamed(op, "body");
  int64_t m = node.intAttr("num_scan_inputs", -1);
  if (!body || m < 1) {
    node.fail() << "needs a body subgraph and num_scan_inputs >= 1";
    return failure();
  }
  auto listOr = [&](StringRef attr, int64_t n, int64_t dflt) {
    SmallVector<int64_t> v =
        node.intsAttr(attr).value_or(SmallVector<int64_t>(n, dflt));
    v.resize(n, dflt);
    return v;
  };
  if (opset >= 9) {
    int64_t n = (int64_t)op->getNumOperands() - m;
    int64_t k = (int64_t)op->getNumResults() - n;
    if (n < 0 || k < 0) {
      node.fail() << "has " << op->getNumOperands() << " inputs and "
                  << op->getNumResults() << " outputs for " << m
                  << " scan inputs";
      return failure();
    }
    ValueRange all = op->getOperands();
    ScanAxes axes{listOr("scan_input_axes", m, 0),
                  listOr("scan_input_directions", m, 0),
                  listOr("scan_output_axes", k, 0),
                  listOr("scan_output_directions", k, 0)};
    return unrollScan(node, *body, all.take_front(n), all.drop_front(n), k,
                      axes, /*mayLoop=*/true);
  }
  // Opset 8: input 0 is sequence_lens, every input has a leading batch
  // axis and the scan runs along axis 1.
  if (node.input(0)) {
    node.fail() << "sequence_lens is not supported; Kiln scans every "
                   "sequence to its full length";
    return failure();
  }
  ValueRange all = op->getOperands().drop_front();
  int64_t n = (int64_t)all.size() - m;
  int64_t k = (int64_t)op->getNumResults() - n;
  if (n < 0 || k < 0) {
    node.fail() << "has " << all.size() << " inputs and " << op->getNumResults()
                << " outputs for " << m << " scan inputs";
    return failure();
  }
  auto batchOf = [](Value v) -> int64_t {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.getRank() > 0 && !t.isDynamicDim(0) ? t.getDimSize(0) : -1;
  };
  int64_t batch = all.empty() ? -1 : batchOf(all.front());
  for (Value v : all)
    if (batchOf(v) != batch || batch <= 0) {
      node.fail() << "every input needs the same static batch dimension";
      return failure();
    }
  ScanAxes axes{SmallVector<int64_t>(m, 0), listOr("directions", m, 0),
                SmallVector<int64_t>(k, 0), SmallVector<int64_t>(k, 0)};
  SmallVector<SmallVector<Value>> perBatch(op->getNumResults());
  for (int64_t bi = 0; bi < batch; ++bi) {
    SmallVector<Value> states, scans;
    for (int64_t i = 0; i < n; ++i)
      states.push_back(take(node.loc(), all[i], bi, 0));
    for (int64_t j = 0; j < m; ++j)
      scans.push_back(take(node.loc(), all[n + j], bi, 0));
    // The body is cloned once per batch row: never moved into a loop.
    FailureOr<SmallVector<Value>> r =
        unrollScan(node, *body, states, scans, k, axes, /*mayLoop=*/false);
    if (failed(r))
      return failure();
    for (auto [i, v] : llvm::enumerate(*r))
      perBatch[i].push_back(v);
  }
  SmallVector<Value> results;
  for (auto &vs : perBatch)
    results.push_back(stack(node.loc(), vs, 0));
  return results;
}

FailureOr<SmallVector<Value>>
Inliner::scanLoop(OnnxNode &node, Region &body, ValueRange states,
                  ValueRange scans, int64_t numOut, const ScanAxes &axes) {
  Location loc = node.loc();
  Block &block = body.front();
  Operation *yield = block.getTerminator();
  unsigned n = states.size(), m = scans.size();
  if (!yield || yield->getName().getStringRef() != "onnx.Yield" ||
      block.getNumArguments() != n + m ||
      yield->getNumOperands() != n + numOut) {
    node.fail() << "the body must take " << n + m
                << " values (the states, then one slice per scan input) and "
                   "yield "
                << n + numOut << " (the states, then one per scan output)";
    return failure();
  }
  // Every check comes before the body is changed.
  SmallVector<int64_t> inAxes;
  std::optional<SymSize> length;
  for (auto [j, s] : llvm::enumerate(scans)) {
    int64_t rank = cast<RankedTensorType>(s.getType()).getRank();
    inAxes.push_back(axes.inAxes[j] < 0 ? axes.inAxes[j] + rank
                                        : axes.inAxes[j]);
    SymSize len = sizes.dim(s, inAxes.back());
    if (length && *length != len) {
      node.fail() << "scan inputs have lengths " << sizes.str(*length)
                  << " and " << sizes.str(len)
                  << ", which Kiln cannot prove equal; name their dimensions "
                     "with one dim_param, or give them one size";
      return failure();
    }
    length = len;
  }
  int64_t bound = 0;
  if (numOut > 0) {
    std::optional<int64_t> largest = sizes.largest(*length);
    if (!largest) {
      node.fail() << "stacks " << numOut << " scan output(s) over a scan of "
                  << sizes.str(*length) << " steps, which has no upper bound; "
                  << sizes.boundAdvice(*length);
      return failure();
    }
    if (*largest > kMaxScanRows) {
      node.fail() << "stacks " << numOut << " scan output(s) of up to "
                  << *largest
                  << " rows; Kiln reserves memory for every row and refuses "
                     "more than "
                  << kMaxScanRows
                  << ": give the scanned dimension a smaller range";
      return failure();
    }
    bound = *largest;
  }
  SmallVector<SmallVector<int64_t>> perms(numOut);
  for (int64_t k = 0; k < numOut; ++k) {
    if (axes.outDirs[k] && opset < 10) {
      node.fail() << "a reversed scan output of run-time length needs Slice "
                     "with steps (opset 10); opset "
                  << opset << " is not supported";
      return failure();
    }
    int64_t axis = axes.outAxes[k];
    if (axis == 0)
      continue;
    auto slice = dyn_cast<RankedTensorType>(yield->getOperand(n + k).getType());
    int64_t rank = slice ? slice.getRank() + 1 : 0;
    if (axis < 0)
      axis += rank;
    if (!slice || axis < 0 || axis >= rank) {
      node.fail() << "scan output " << k << " is stacked on axis "
                  << axes.outAxes[k] << ", which the body's output ("
                  << yield->getOperand(n + k).getType() << ") does not have";
      return failure();
    }
    for (int64_t d = 1; d <= axis; ++d)
      perms[k].push_back(d);
    perms[k].push_back(0);
    for (int64_t d = axis + 1; d < rank; ++d)
      perms[k].push_back(d);
  }

  // The trip count: the scan inputs' common length, a rank-0 i64.
  auto i64 = RankedTensorType::get({}, b.getI64Type());
  Value trips;
  if (std::optional<int64_t> c = length->getConstant()) {
    trips = i64Constant(loc, *c, false);
  } else {
    Value x = scans.front();
    Operation *shape = onnxOp(loc, "Shape", {x}, {}, b.getI64Type());
    shape->getResult(0).setType(RankedTensorType::get(
        {cast<RankedTensorType>(x.getType()).getRank()}, b.getI64Type()));
    trips = take(loc, shape->getResult(0), inAxes.front(), 0);
  }
  Value last;
  if (llvm::any_of(axes.inDirs, [](int64_t d) { return d != 0; })) {
    last = onnxOp(loc, "Sub", {trips, i64Constant(loc, 1, false)}, {},
                  b.getI64Type())
               ->getResult(0);
    last.setType(i64);
  }

  // The body as a Loop body: (iteration, condition, states...) yielding
  // (condition, states..., scan slices...), taking its slices itself.
  {
    OpBuilder::InsertionGuard guard(b);
    Value iteration = block.insertArgument(0u, i64, loc);
    Value cond =
        block.insertArgument(1u, RankedTensorType::get({}, b.getI1Type()), loc);
    b.setInsertionPointToStart(&block);
    for (unsigned j = 0; j < m; ++j) {
      Value index = iteration;
      if (axes.inDirs[j]) {
        index = onnxOp(loc, "Sub", {last, iteration}, {}, b.getI64Type())
                    ->getResult(0);
        index.setType(i64);
      }
      block.getArgument(2 + n + j).replaceAllUsesWith(
          take(loc, scans[j], index, inAxes[j]));
    }
    for (unsigned j = m; j-- > 0;)
      block.eraseArgument(2 + n + j);
    yield->insertOperands(0, cond);
  }
  SmallVector<Value> initial(states.begin(), states.end());
  FailureOr<SmallVector<Value>> results =
      makeLoop(node, body, trips, initial, numOut, bound);
  if (failed(results))
    return failure();

  // The outputs, stacked on axis 0 in iteration order: reversed, moved.
  b.setInsertionPoint(node.op);
  for (int64_t k = 0; k < numOut; ++k) {
    Value &out = (*results)[n + k];
    Type elt = elementTypeOf(yield->getOperand(1 + n + k));
    if (axes.outDirs[k]) {
      auto vec = [&](int64_t v) { return i64Constant(loc, v, true); };
      out = onnxOp(loc, "Slice",
                   {out, vec(-1), vec(std::numeric_limits<int64_t>::min()),
                    vec(0), vec(-1)},
                   {}, elt)
                ->getResult(0);
    }
    if (!perms[k].empty())
      out = onnxOp(loc, "Transpose", {out},
                   {b.getNamedAttr("perm", b.getI64ArrayAttr(perms[k]))}, elt)
                ->getResult(0);
  }
  return results;
}
