//===- VerifyBatchIndependence.cpp - is a dimension a true batch? -*- C++ -*-===//
//
// A model whose symbolic leading dimension is an independent batch computes
// each sample from that sample's inputs alone. Such a model compiled for
// batch sizes {1, b, ...} runs any batch n in its range as a sequence of
// compiled batches over consecutive slices of the inputs and outputs, with
// the arena planned once (docs/shapes.md). This pass proves the property on
// the graph compiled at a probe batch size P, a prime chosen to be no other
// size of the model: every tensor that has P at exactly one axis carries the
// batch there, and every op must keep samples apart along it.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_VERIFYBATCHINDEPENDENCEPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
constexpr int64_t kNone = -1;

int64_t rankOf(Value v) { return cast<RankedTensorType>(v.getType()).getRank(); }

struct Checker {
  int64_t batch;
  std::string why; // set when an op mixes samples

  /// The axis of `v` of size `batch`, kNone, or failure when several are.
  FailureOr<int64_t> axisOf(Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t)
      return kNone;
    int64_t axis = kNone;
    for (auto [i, d] : llvm::enumerate(t.getShape())) {
      if (d != batch)
        continue;
      if (axis != kNone) {
        why = "it has the batch size at two axes, so Kiln cannot tell which "
              "one is the batch";
        return failure();
      }
      axis = i;
    }
    return axis;
  }

  bool fail(const Twine &reason) {
    why = reason.str();
    return false;
  }

  /// Elementwise with right-aligned broadcasting: every batched operand
  /// carries the batch at the result's batch axis.
  bool elementwise(ArrayRef<int64_t> in, ValueRange operands, int64_t out,
                   int64_t outRank) {
    for (auto [a, v] : llvm::zip(in, operands))
      if (a != kNone && a + (outRank - rankOf(v)) != out)
        return fail("its operands carry the batch at different axes");
    return true;
  }

  /// Whether `op` keeps samples apart; `in` and `out` are the batch axes of
  /// its operands and results.
  bool check(Operation *op, ArrayRef<int64_t> in, ArrayRef<int64_t> out) {
    if (!checkOp(op, in, out))
      return false;
    if (isa<ShapeOfOp>(op))
      return true; // sizes of per-sample dimensions, the same for all

    bool anyIn = llvm::any_of(in, [](int64_t a) { return a != kNone; });
    if (anyIn && op->getNumResults() &&
        llvm::all_of(out, [](int64_t a) { return a == kNone; }))
      return fail("its result has no batch axis: it combines the samples");
    return true;
  }

  bool checkOp(Operation *op, ArrayRef<int64_t> in, ArrayRef<int64_t> out) {
    bool anyIn = llvm::any_of(in, [](int64_t a) { return a != kNone; });
    bool anyOut = llvm::any_of(out, [](int64_t a) { return a != kNone; });
    if (!anyIn && !anyOut)
      return true;
    if (!anyIn) {
      // A batched value made from batch-free data is the same for every
      // sample only when it is a splat or a broadcast.
      if (auto c = dyn_cast<ConstantOp>(op))
        if (auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
            dense && dense.isSplat())
          return true;
      if (isa<ExpandOp, SizedExpandOp>(op))
        return true;
      return fail("it makes a tensor with the batch size from data that "
                  "does not depend on the samples, which can differ per "
                  "sample");
    }
    int64_t r = op->getNumResults() ? out[0] : kNone;
    int64_t outRank = op->getNumResults() ? rankOf(op->getResult(0)) : 0;
    if (isa<GuardOp>(op))
      return true; // a run-time check of an input's values; no result
    if (auto t = dyn_cast<TransposeOp>(op)) {
      ArrayRef<int64_t> perm = t.getPerm();
      if (r == kNone || perm[r] != in[0])
        return fail("the transpose moves the batch axis inconsistently");
      return true;
    }
    if (isa<ReshapeOp, SizedReshapeOp>(op)) {
      // Samples stay whole when the dimensions in front of the batch hold
      // the same number of elements before and after (a run-time size there
      // cannot be compared, so it counts as mixing).
      auto inType = cast<RankedTensorType>(op->getOperand(0).getType());
      auto outType = cast<RankedTensorType>(op->getResult(0).getType());
      auto elementsBefore = [](RankedTensorType t, int64_t axis) {
        std::optional<int64_t> n = 1;
        for (int64_t d = 0; d < axis; ++d)
          if (t.isDynamicDim(d))
            n.reset();
          else if (n)
            *n *= t.getDimSize(d);
        return n;
      };
      std::optional<int64_t> before = elementsBefore(inType, in[0]);
      if (r == kNone || !before || before != elementsBefore(outType, r))
        return fail("the reshape merges the batch with another dimension");
      return true;
    }
    if (auto shape = dyn_cast<ShapeOfOp>(op)) {
      // Sizes of the other dimensions are the same for every sample; the
      // batch size itself read as data is not.
      if ((int64_t)shape.getStart() <= in[0] && in[0] < (int64_t)shape.getEnd())
        return fail("it reads the batch size as a value");
      return true;
    }
    if (auto concat = dyn_cast<ConcatOp>(op)) {
      if ((int64_t)concat.getAxis() == r)
        return fail("it concatenates along the batch axis");
      return elementwise(in, op->getOperands(), r, outRank);
    }
    if (auto pad = dyn_cast<PadOp>(op)) {
      ArrayRef<int64_t> pads = pad.getPads();
      int64_t rank = rankOf(pad.getInput());
      if (in[0] != r || pads[in[0]] != 0 || pads[in[0] + rank] != 0)
        return fail("it pads the batch axis");
      return true;
    }
    if (auto slice = dyn_cast<SliceOp>(op)) {
      if (in[0] != r || slice.getOffsets()[r] != 0 ||
          slice.getSizes()[r] != batch || slice.getStrides()[r] != 1)
        return fail("it slices the batch axis");
      return true;
    }
    if (auto slice = dyn_cast<SizedSliceOp>(op)) {
      // The result keeps the batch size at the batch axis only by taking all
      // of it, in order when the stride is 1.
      if (in[0] != r || slice.getStrides()[r] != 1)
        return fail("it slices the batch axis");
      return true;
    }
    if (auto gather = dyn_cast<GatherOp>(op)) {
      int64_t axis = gather.getAxis();
      int64_t idxRank = rankOf(gather.getIndices());
      if (in[0] != kNone && in[1] != kNone)
        return fail("both its data and its indices carry the batch");
      if (in[0] != kNone) {
        if (in[0] == axis)
          return fail("it gathers along the batch axis");
        int64_t want = in[0] < axis ? in[0] : in[0] + idxRank - 1;
        return want == r || fail("the batch axis moves inconsistently");
      }
      // Per-sample indices into a shared table (an embedding lookup).
      return axis + in[1] == r || fail("the batch axis moves inconsistently");
    }
    if (auto mm = dyn_cast<MatMulOp>(op)) {
      int64_t lr = rankOf(mm.getLhs()), rr = rankOf(mm.getRhs());
      if (lr < 2 || rr < 2)
        return fail("Kiln checks only matrix products of rank 2 or more");
      auto role = [&](int64_t a, int64_t rank, bool lhs) -> int64_t {
        if (a == kNone)
          return kNone;
        if (a == rank - 1)
          return lhs ? -2 : outRank - 1; // lhs K: mixing; rhs N
        if (a == rank - 2)
          return lhs ? outRank - 2 : -2; // lhs M; rhs K: mixing
        return a + (outRank - rank);     // a batch dimension of the product
      };
      int64_t l = role(in[0], lr, true), q = role(in[1], rr, false);
      if (l == -2 || q == -2)
        return fail("the batch is a reduced dimension of the product");
      if (l != kNone && q != kNone && l != q)
        return fail("both factors carry the batch, at different axes");
      return (l != kNone ? l : q) == r ||
             fail("the batch axis moves inconsistently");
    }
    if (auto gemm = dyn_cast<GemmOp>(op)) {
      int64_t a = in[0], b = in[1];
      int64_t aRow = gemm.getTransA() ? 1 : 0, bCol = gemm.getTransB() ? 0 : 1;
      if ((a != kNone && a != aRow) || (b != kNone && b != bCol) ||
          (a != kNone && b != kNone))
        return fail("the batch is a reduced dimension of the product");
      int64_t want = a != kNone ? 0 : 1;
      if (want != r)
        return fail("the batch axis moves inconsistently");
      if (in.size() > 2 && in[2] != kNone &&
          in[2] + (2 - rankOf(gemm.getC())) != r)
        return fail("its bias carries the batch at another axis");
      return true;
    }
    if (isa<Conv2DOp, MaxPool2DOp, AvgPool2DOp, GlobalAvgPoolOp, BatchNormOp>(
            op)) {
      for (int64_t a : in.drop_front())
        if (a != kNone)
          return fail("its weights carry the batch");
      return (in[0] == 0 && r == 0) ||
             fail("the batch is not its leading (N) dimension");
    }
    if (auto softmax = dyn_cast<SoftmaxOp>(op)) {
      int64_t axis = softmax.getAxis();
      if (axis < 0)
        axis += outRank;
      return (axis != in[0] && r == in[0]) ||
             fail("it normalizes along the batch axis");
    }
    if (auto norm = dyn_cast<LayerNormOp>(op)) {
      int64_t axis = norm.getAxis();
      if (axis < 0)
        axis += outRank;
      for (int64_t a : in.drop_front())
        if (a != kNone)
          return fail("its scale or bias carries the batch");
      return (in[0] < axis && r == in[0]) ||
             fail("it normalizes over the batch axis");
    }
    auto reduceAxes = [&](ArrayRef<int64_t> axes, bool keep) {
      if (llvm::is_contained(axes, in[0]))
        return fail("it reduces over the batch axis");
      int64_t want = in[0];
      if (!keep)
        want -= llvm::count_if(axes, [&](int64_t a) { return a < in[0]; });
      return want == r || fail("the batch axis moves inconsistently");
    };
    if (auto red = dyn_cast<ReduceMeanOp>(op))
      return reduceAxes(red.getAxes(), red.getKeepdims());
    if (auto red = dyn_cast<ReduceSumOp>(op))
      return reduceAxes(red.getAxes(), red.getKeepdims());
    if (auto red = dyn_cast<ReduceMaxOp>(op))
      return reduceAxes(red.getAxes(), red.getKeepdims());
    if (auto red = dyn_cast<ReduceMinOp>(op))
      return reduceAxes(red.getAxes(), red.getKeepdims());
    if (auto red = dyn_cast<ReduceProdOp>(op))
      return reduceAxes(red.getAxes(), red.getKeepdims());
    if (auto arg = dyn_cast<ArgMaxOp>(op))
      return reduceAxes({(int64_t)arg.getAxis()}, arg.getKeepdims());
    if (auto arg = dyn_cast<ArgMinOp>(op))
      return reduceAxes({(int64_t)arg.getAxis()}, arg.getKeepdims());
    if (op->hasTrait<OpTrait::SameOperandsAndResultType>() ||
        isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, PReluOp, ModOp,
            EqualOp, LessOp, LessEqualOp, GreaterOp, GreaterEqualOp, AndOp,
            OrOp, XorOp, WhereOp, BitShiftOp, CastOp, BitCastOp, ClipOp,
            IdentityOp, ExpandOp, SizedExpandOp>(op))
      return elementwise(in, op->getOperands(), r, outRank);
    return fail("Kiln does not yet know whether " +
                op->getName().getStringRef() + " keeps samples apart");
  }
};

/// Whether a constant holds `value` as data (the batch size used as a number,
/// e.g. a mean over the batch computed as a sum divided by the size).
bool holdsValue(ElementsAttr value, int64_t batch) {
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense || dense.getNumElements() > 4096)
    return false;
  Type elt = dense.getElementType();
  if (elt.isInteger() && elt.getIntOrFloatBitWidth() > 8)
    return llvm::any_of(dense.getValues<APInt>(), [&](const APInt &v) {
      return v.getSExtValue() == batch;
    });
  if (isa<FloatType>(elt))
    return llvm::any_of(dense.getValues<APFloat>(), [&](const APFloat &v) {
      return v.convertToDouble() == (double)batch;
    });
  return false;
}

/// " ('name')" for a graph input or output the importer named, else "".
std::string nameOf(StringAttr name) {
  return name ? " ('" + name.str() + "')" : "";
}

struct VerifyBatchIndependencePass
    : mlir::kiln::impl::VerifyBatchIndependencePassBase<
          VerifyBatchIndependencePass> {
  using VerifyBatchIndependencePassBase::VerifyBatchIndependencePassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (batch < 2) {
      func.emitError() << "kiln-verify-batch-independence needs a probe batch "
                          "size of 2 or more, got "
                       << (int64_t)batch;
      return signalPassFailure();
    }
    Checker checker{(int64_t)batch, ""};
    bool ok = true;
    for (BlockArgument arg : func.getArguments()) {
      FailureOr<int64_t> a = checker.axisOf(arg);
      if (failed(a) || (*a != kNone && *a != 0)) {
        func.emitError() << "input " << arg.getArgNumber()
                         << nameOf(func.getArgAttrOfType<StringAttr>(
                                arg.getArgNumber(), "onnx.name"))
                         << " has the batch size " << (int64_t)batch
                         << " at an axis other than 0";
        ok = false;
      }
    }
    func.walk([&](Operation *op) {
      if (!isa<KilnDialect>(op->getDialect()))
        return;
      if (auto c = dyn_cast<ConstantOp>(op); c && holdsValue(c.getValue(), batch)) {
        op->emitError() << "the model uses the batch size as a value (a "
                           "constant computed from a tensor's shape holds "
                        << (int64_t)batch
                        << ", the probe batch size), so its samples are not "
                           "independent";
        ok = false;
        return;
      }
      SmallVector<int64_t> in, out;
      checker.why.clear();
      bool known = true;
      for (Value v : op->getOperands()) {
        FailureOr<int64_t> a = checker.axisOf(v);
        known &= succeeded(a);
        in.push_back(succeeded(a) ? *a : kNone);
      }
      for (Value v : op->getResults()) {
        FailureOr<int64_t> a = checker.axisOf(v);
        known &= succeeded(a);
        out.push_back(succeeded(a) ? *a : kNone);
      }
      if (known && checker.check(op, in, out))
        return;
      op->emitError() << "this node does not keep the samples of the batch "
                         "apart: "
                      << checker.why;
      ok = false;
    });
    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      FailureOr<int64_t> a = checker.axisOf(v);
      if (succeeded(a) && *a == 0)
        continue;
      func.emitError() << "output " << i
                       << nameOf(func.getResultAttrOfType<StringAttr>(
                              i, "onnx.name"))
                       << " does not lead with the batch dimension";
      ok = false;
    }
    if (!ok)
      signalPassFailure();
  }
};
} // namespace
