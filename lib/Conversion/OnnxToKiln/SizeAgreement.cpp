//===- SizeAgreement.cpp - run-time checks that sizes agree ----*- C++ -*-===//
//
// Where an op combines dimensions that must be equal (broadcasting operands,
// Concat outside its axis, a product's reduced and batch dimensions, a
// Gemm's bias) and the polynomials do not prove them equal, a kiln.guard
// checks them at run time; where a failed guard does not end the run, the
// operands are read through views of one size.
//
//===----------------------------------------------------------------------===//
#include "SymbolicSizes.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

void SymbolicSizes::guardAgreement(OnnxNode &node, Operation *def) {
  if (def->getNumResults() != 1)
    return;
  auto out = dyn_cast<RankedTensorType>(def->getResult(0).getType());
  if (!out)
    return;
  // (operand, axis) pairs per group that must have one size.
  SmallVector<SmallVector<std::pair<Value, int64_t>>> groups;
  auto rankOf = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getRank();
  };
  if (broadcastsOperands(def) && def->getNumOperands() > 1) {
    for (int64_t a = 0; a < out.getRank(); ++a) {
      SmallVector<std::pair<Value, int64_t>> g;
      for (Value o : def->getOperands()) {
        auto t = dyn_cast<RankedTensorType>(o.getType());
        int64_t k = t ? a - (out.getRank() - t.getRank()) : -1;
        if (k >= 0 && t.getDimSize(k) != 1)
          g.push_back({o, k});
      }
      groups.push_back(std::move(g));
    }
  } else if (auto c = dyn_cast<ConcatOp>(def)) {
    for (int64_t a = 0; a < out.getRank(); ++a) {
      if (a == (int64_t)c.getAxis())
        continue;
      SmallVector<std::pair<Value, int64_t>> g;
      for (Value o : c.getInputs())
        g.push_back({o, a});
      groups.push_back(std::move(g));
    }
  } else if (auto m = dyn_cast<MatMulOp>(def)) {
    Value l = m.getLhs(), r = m.getRhs();
    int64_t lr = rankOf(l), rr = rankOf(r);
    // The reduced size: a 1-D operand's only dimension.
    if (lr >= 1 && rr >= 1)
      groups.push_back({{l, lr - 1}, {r, rr >= 2 ? rr - 2 : 0}});
    if (lr >= 2 && rr >= 2) {
      for (int64_t a = 0; a + 2 < out.getRank(); ++a) {
        SmallVector<std::pair<Value, int64_t>> g;
        for (auto [v, rank] : {std::make_pair(l, lr), std::make_pair(r, rr)}) {
          int64_t k = a - (out.getRank() - rank);
          if (k >= 0 && cast<RankedTensorType>(v.getType()).getDimSize(k) != 1)
            g.push_back({v, k});
        }
        groups.push_back(std::move(g));
      }
    }
  } else if (auto gm = dyn_cast<GemmOp>(def)) {
    // The reduced size of op(A) and op(B); C broadcast to [M, N] (a C
    // dimension of static size 1 broadcasts; one of run-time size must be
    // the result's).
    Value a = gm.getA(), bv = gm.getB();
    if (rankOf(a) == 2 && rankOf(bv) == 2) {
      int64_t m = gm.getTransA() ? 1 : 0, k = gm.getTransA() ? 0 : 1;
      int64_t n = gm.getTransB() ? 0 : 1, kb = gm.getTransB() ? 1 : 0;
      groups.push_back({{a, k}, {bv, kb}});
      if (Value c = gm.getC()) {
        int64_t cr = rankOf(c);
        auto ct = cast<RankedTensorType>(c.getType());
        std::pair<Value, int64_t> rows{a, m}, cols{bv, n};
        for (auto [axis, result] :
             {std::make_pair(cr - 2, rows), std::make_pair(cr - 1, cols)})
          if (axis >= 0 && ct.getDimSize(axis) != 1)
            groups.push_back({result, {c, axis}});
      }
    }
  }
  // Checked before the op: a failed guard ends the run there
  // (--kiln-arena-allocation), so it never computes on the mismatch.
  OpBuilder &b = node.builder;
  OpBuilder::InsertionGuard atOp(b);
  b.setInsertionPoint(def);
  DenseMap<Value, Value> fitted; // operands replaced by their fitted views
  auto inputIndex = [&](Value v) -> std::string {
    Value now = fitted.lookup(v) ? fitted.lookup(v) : v;
    for (unsigned i = 0; i < def->getNumOperands(); ++i)
      if (def->getOperand(i) == now)
        return std::to_string(i);
    return "?";
  };
  bool speculative =
      node.op->hasAttr(kSpeculativeAttr) && knowsTakenCondition(node.op);
  // In a Loop, Scan or If body a failed guard does not end the body, so the
  // op would still read its operands at the anchor's size: each member that
  // may disagree is read as a view of that size (zeros past its end).
  bool body = !isa<func::FuncOp>(def->getParentOp());
  bool fit = speculative || body;
  Value taken; // where the op's branch is taken (true in a body)
  for (const auto &g : groups) {
    if (g.size() < 2)
      continue;
    bool dynamic = llvm::any_of(g, [](const std::pair<Value, int64_t> &p) {
      return cast<RankedTensorType>(p.first.getType()).isDynamicDim(p.second);
    });
    if (!dynamic)
      continue; // static sizes were checked by the op's type
    // The member the others are checked against: the first, or in a
    // speculative op one of static size (the op's loop then runs over that
    // size, so every member is read at it).
    size_t anchor = 0;
    for (size_t i = 0; fit && i < g.size(); ++i)
      if (!cast<RankedTensorType>(g[i].first.getType())
               .isDynamicDim(g[i].second)) {
        anchor = i;
        break;
      }
    auto [av, ak] = g[anchor];
    SymSize first = dim(av, ak);
    for (auto [i, member] : llvm::enumerate(g)) {
      auto [v, k] = member;
      SymSize s = dim(v, k);
      if (i == anchor || s == first)
        continue;
      std::string message =
          node.describe() + ": dimension " + std::to_string(k) +
          " of operand " + inputIndex(v) + " (" + str(s) + ") and dimension " +
          std::to_string(ak) + " of operand " + inputIndex(av) + " (" +
          str(first) +
          ") differ at these input sizes, where the node needs them equal; "
          "the model's shapes agree only at some sizes of its symbolic "
          "dimensions, so run it at those (or compile it with fixed sizes)";
      // In a branch inlined to run whether or not it is taken, the sizes
      // need to agree only where it is taken; where it is not, the operand
      // is read as zeros of the anchor's size, so it reads in bounds. In a
      // body the operand is always read at the anchor's size.
      if (fit) {
        if (!taken)
          taken = speculative ? takenCondition(b, node.loc(), node.op)
                              : arith::ConstantOp::create(b, node.loc(),
                                                          b.getBoolAttr(true));
        Value cur = fitted.lookup(v) ? fitted.lookup(v) : v;
        FailureOr<Value> view = fitUntakenOperand(node, cur, k, first, taken);
        if (succeeded(view)) {
          guardEqualDims(b, node.loc(), av, ak, cur, k, message,
                         speculative ? taken : Value());
          def->replaceUsesOfWith(cur, *view);
          fitted[v] = *view;
          continue;
        }
      }
      guardEqualDims(b, node.loc(), av, ak, v, k, message);
    }
  }
}

void SymbolicSizes::guardEqualDims(OpBuilder &b, Location loc, Value x,
                                   int64_t ax, Value y, int64_t yx,
                                   const Twine &message, Value when) {
  auto sizeOf = [&](Value v, int64_t k) -> Value {
    auto type = RankedTensorType::get({1}, b.getI64Type());
    return ShapeOfOp::create(b, loc, type, v, b.getI64IntegerAttr(k),
                             b.getI64IntegerAttr(k + 1));
  };
  auto eqType = RankedTensorType::get({1}, b.getI1Type());
  Value want = sizeOf(x, ax);
  Value got = sizeOf(y, yx);
  Value ok = EqualOp::create(b, loc, eqType, want, got);
  if (when) { // equal, or not taken
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value eq = tensor::ExtractOp::create(b, loc, ok, ValueRange{zero});
    ok = tensor::FromElementsOp::create(b, loc, eqType,
                                        orNotTaken(b, loc, eq, when));
  }
  GuardOp::create(b, loc, ok, b.getStringAttr(message.str()));
}
