//===- FoldConstantWeights.cpp - weights computed from constants -*- C++
//-*-===//
//
// A model whose weights are stored in another form than the product reads
// computes them at every run: weight-only quantized models
// (DequantizeLinear of int8 or int4 weights with per-row or blocked scales,
// activations in f32), QDQ weights the integer kernels do not take, weights
// transposed or reshaped by the exporter. The f32 kernels then multiply a
// run-time filter, which they cannot pack ahead of time, after a pass over
// the weights. Canonicalization folds such expressions only for small
// constants, not for the resources large weights are imported as.
//
// This pass evaluates the weight operand of each f32 kiln.conv2d,
// kiln.matmul and kiln.gemm (and a conv or gemm bias) when it is computed
// from constants only, through casts to f32, reshapes, transposes, gathers
// with constant indices and broadcast sums, differences, products and
// quotients, each rounded to f32 in the model's order of operations (as ONNX
// defines them), and gives the product an f32 constant instead.
// Expressions that would make a constant larger than their largest
// constant (an Expand of a scalar, say) are left alone: they would grow the
// .so.
//
//===----------------------------------------------------------------------===//
#include "IntegerValues.h"
#include "QuantizeCommon.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>
#include <optional>
#include <vector>

namespace mlir::kiln {
#define GEN_PASS_DEF_FOLDCONSTANTWEIGHTSPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// The most elements a folded weight may have (1 GiB of f32).
constexpr int64_t kMaxFolded = int64_t(1) << 28;

struct Evaluator {
  int64_t largestLeaf = 0; // the most elements of a constant read

  static int64_t elements(Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.hasStaticShape() ? t.getNumElements() : -1;
  }

  /// The elements of f32 `v`, computed from constants only; nothing
  /// otherwise.
  std::optional<std::vector<float>> eval(Value v, unsigned depth = 0) {
    Operation *op = v.getDefiningOp();
    int64_t n = elements(v);
    if (!op || depth > 12 || n < 0 || n > kMaxFolded ||
        !getElementTypeOrSelf(v.getType()).isF32())
      return std::nullopt;
    if (auto c = dyn_cast<ConstantOp>(op)) {
      largestLeaf = std::max(largestLeaf, n);
      return quant::readFloats(c);
    }
    if (auto c = dyn_cast<CastOp>(op))
      return castToF32(c, depth);
    if (isa<ReshapeOp, IdentityOp>(op))
      return eval(op->getOperand(0), depth + 1);
    if (auto t = dyn_cast<TransposeOp>(op)) {
      auto in = eval(t.getInput(), depth + 1);
      if (!in)
        return std::nullopt;
      std::vector<int64_t> from = integers::transposedIndices(
          cast<RankedTensorType>(t.getInput().getType()).getShape(),
          t.getPerm());
      std::vector<float> out(n);
      for (int64_t i = 0; i < n; ++i)
        out[i] = (*in)[from[i]];
      return out;
    }
    if (auto g = dyn_cast<GatherOp>(op))
      return gather(g, depth);
    if (isa<AddOp, SubOp, MulOp, DivOp>(op))
      return binary(op, depth);
    return std::nullopt;
  }

  /// Counts the integer constants `v` is computed from (evalInts may
  /// broadcast them to a larger result, which must not count as a leaf).
  void noteLeaves(Value v, unsigned depth = 0) {
    Operation *op = v.getDefiningOp();
    if (!op || depth > 12)
      return;
    if (isa<ConstantOp>(op)) {
      largestLeaf = std::max(largestLeaf, elements(v));
      return;
    }
    for (Value operand : op->getOperands())
      noteLeaves(operand, depth + 1);
  }

  /// A cast to f32 of an integer constant (int8, uint8, int4 widened, ...)
  /// or of f32 values.
  std::optional<std::vector<float>> castToF32(CastOp c, unsigned depth) {
    Type from = getElementTypeOrSelf(c.getInput().getType());
    if (from.isF32())
      return eval(c.getInput(), depth + 1);
    if (!isa<IntegerType>(from) || from.isInteger(1))
      return std::nullopt;
    std::optional<std::vector<double>> ints = integers::evalInts(c.getInput());
    if (!ints)
      return std::nullopt;
    noteLeaves(c.getInput());
    std::vector<float> out(ints->size());
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = float(int64_t((*ints)[i])); // as sitofp / uitofp round
    return out;
  }

  /// Gather along `axis` with constant indices (a blocked
  /// DequantizeLinear's scales, repeated over each block).
  std::optional<std::vector<float>> gather(GatherOp g, unsigned depth) {
    auto it = cast<RankedTensorType>(g.getInput().getType());
    auto idxOp = g.getIndices().getDefiningOp<ConstantOp>();
    if (!idxOp || !it.hasStaticShape())
      return std::nullopt;
    std::optional<std::vector<double>> idx = integers::readInts(idxOp);
    std::optional<std::vector<float>> in = eval(g.getInput(), depth + 1);
    if (!idx || !in)
      return std::nullopt;
    int64_t axis = g.getAxis(), rank = it.getRank();
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return std::nullopt;
    int64_t outer = 1, inner = 1, size = it.getDimSize(axis);
    for (int64_t d = 0; d < axis; ++d)
      outer *= it.getDimSize(d);
    for (int64_t d = axis + 1; d < rank; ++d)
      inner *= it.getDimSize(d);
    std::vector<float> out;
    out.reserve(outer * idx->size() * inner);
    for (int64_t o = 0; o < outer; ++o)
      for (double k : *idx) {
        int64_t j = int64_t(k) < 0 ? int64_t(k) + size : int64_t(k);
        if (j < 0 || j >= size)
          return std::nullopt; // the run clamps; leave it to the run
        for (int64_t i = 0; i < inner; ++i)
          out.push_back((*in)[(o * size + j) * inner + i]);
      }
    if (int64_t(out.size()) != elements(g.getResult()))
      return std::nullopt;
    return out;
  }

  /// An elementwise sum, difference, product or quotient, its operands
  /// broadcast to the result, rounded to f32 as the run does.
  std::optional<std::vector<float>> binary(Operation *op, unsigned depth) {
    auto rt = cast<RankedTensorType>(op->getResult(0).getType());
    std::optional<std::vector<float>> a = eval(op->getOperand(0), depth + 1),
                                      b = eval(op->getOperand(1), depth + 1);
    if (!a || !b)
      return std::nullopt;
    size_t n = rt.getNumElements();
    // An operand of the result's size or of one element is read as it is;
    // others (scales per row against weights) through broadcast indices.
    auto indices = [&](Value x, const std::vector<float> &values,
                       std::vector<int64_t> &at) {
      if (values.size() == n || values.size() == 1)
        return true;
      std::optional<std::vector<int64_t>> bi = integers::broadcastIndices(
          rt.getShape(), cast<RankedTensorType>(x.getType()).getShape());
      if (bi)
        at = std::move(*bi);
      return bool(bi);
    };
    std::vector<int64_t> ai, bi;
    if (!indices(op->getOperand(0), *a, ai) ||
        !indices(op->getOperand(1), *b, bi))
      return std::nullopt;
    auto element = [n](const std::vector<float> &v,
                       const std::vector<int64_t> &at, size_t i) {
      return v.size() == n ? v[i] : v.size() == 1 ? v[0] : v[at[i]];
    };
    std::vector<float> out(n);
    for (size_t i = 0; i < n; ++i) {
      float x = element(*a, ai, i), y = element(*b, bi, i);
      out[i] = isa<AddOp>(op)   ? x + y
               : isa<SubOp>(op) ? x - y
               : isa<MulOp>(op) ? x * y
                                : x / y;
    }
    return out;
  }
};

/// Replaces operand `index` of `op` with its value when it is computed from
/// constants only and no larger than the largest of them.
void foldOperand(Operation *op, unsigned index) {
  if (index >= op->getNumOperands())
    return;
  Value v = op->getOperand(index);
  if (!v || !v.getDefiningOp() || isa<ConstantOp>(v.getDefiningOp()))
    return;
  Evaluator e;
  std::optional<std::vector<float>> values = e.eval(v);
  if (!values || int64_t(values->size()) > e.largestLeaf)
    return;
  auto type = cast<RankedTensorType>(v.getType());
  OpBuilder b(op);
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
      values->size() * sizeof(float), alignof(float), /*dataIsMutable=*/true);
  std::memcpy(blob.getMutableData().data(), values->data(),
              values->size() * sizeof(float));
  Value c = ConstantOp::create(
      b, op->getLoc(), type,
      DenseResourceElementsAttr::get(type, "folded_weights", std::move(blob)));
  op->setOperand(index, c);
}

struct FoldConstantWeightsPass
    : mlir::kiln::impl::FoldConstantWeightsPassBase<FoldConstantWeightsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> products;
    getOperation()->walk([&](Operation *op) {
      if (isa<Conv2DOp, MatMulOp, GemmOp>(op) &&
          getElementTypeOrSelf(op->getResult(0).getType()).isF32())
        products.push_back(op);
    });
    for (Operation *op : products) {
      foldOperand(op, 1);     // the filter, the right operand
      if (!isa<MatMulOp>(op)) // a conv2d's bias, a gemm's C
        foldOperand(op, 2);
    }
  }
};
} // namespace
