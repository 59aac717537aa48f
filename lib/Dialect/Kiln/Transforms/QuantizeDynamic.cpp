//===- QuantizeDynamic.cpp - dynamic int8 for MatMul/Gemm -------*- C++ -*-===//
//
// --quantize=dynamic: matrix products with constant weights read int8 weights
// quantized here (per output column, symmetric) and quantize their
// activations at run time (kiln.dynamic_quant_matmul). The weights are packed
// in the layout of AVX512-VNNI's vpdpbusd: 4 consecutive k of one column in
// one 32-bit lane, panels of R columns stored one after the other so that the
// kernel streams each panel contiguously.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <cstring>
#include <map>

namespace mlir::kiln {
#define GEN_PASS_DEF_QUANTIZEDYNAMICPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// The f32 values of a constant in row-major order, or nothing if the
/// constant is not f32 or its bytes are not at hand.
std::optional<std::vector<float>> readFloats(Value v) {
  auto cst = v.getDefiningOp<ConstantOp>();
  if (!cst)
    return std::nullopt;
  ElementsAttr attr = cst.getValue();
  auto type = cast<ShapedType>(attr.getType());
  if (!type.getElementType().isF32() || !type.hasStaticShape())
    return std::nullopt;
  size_t n = type.getNumElements();
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    auto values = dense.getValues<float>();
    return std::vector<float>(values.begin(), values.end());
  }
  if (auto res = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    if (!blob || blob->getData().size() != n * sizeof(float))
      return std::nullopt;
    std::vector<float> out(n);
    std::memcpy(out.data(), blob->getData().data(), n * sizeof(float));
    return out;
  }
  return std::nullopt;
}

/// Columns per panel of the packed weights: two or one AVX-512 registers of
/// i32 lanes.
int64_t panelWidth(int64_t n) { return n % 32 == 0 ? 32 : 16; }

struct QuantizedWeights {
  ElementsAttr packed;
  DenseElementsAttr scales, sums;
};

/// Quantizes W [K, N] (stored [N, K] when `transposed`) per column to
/// symmetric int8 and packs it as kiln.dynamic_quant_matmul wants; `alpha`
/// scales the result.
QuantizedWeights quantizeWeights(MLIRContext *ctx, ArrayRef<float> w, int64_t k,
                                 int64_t n, bool transposed, float alpha) {
  auto at = [&](int64_t kk, int64_t nn) {
    return transposed ? w[nn * k + kk] : w[kk * n + nn];
  };
  int64_t r = panelWidth(n), k4 = (k + 3) / 4;
  size_t bytes = size_t(n) * k4 * 4;
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
      bytes, alignof(int64_t), /*dataIsMutable=*/true);
  MutableArrayRef<char> out = blob.getMutableData();
  std::memset(out.data(), 0, bytes);
  std::vector<float> scales(n);
  std::vector<int32_t> sums(n, 0);
  for (int64_t nn = 0; nn < n; ++nn) {
    float amax = 0;
    for (int64_t kk = 0; kk < k; ++kk)
      amax = std::max(amax, std::fabs(at(kk, nn)));
    // An all-zero column quantizes to zeros with any scale.
    float scale = amax > 0 ? amax / 127.0f : 1.0f;
    scales[nn] = scale * alpha;
    int64_t p = nn / r, lane = nn % r;
    for (int64_t kk = 0; kk < k; ++kk) {
      float q = std::nearbyint(at(kk, nn) / scale);
      int32_t qi = static_cast<int32_t>(std::clamp(q, -127.0f, 127.0f));
      sums[nn] += qi;
      out[(p * k4 + kk / 4) * 4 * r + 4 * lane + kk % 4] =
          static_cast<char>(static_cast<int8_t>(qi));
    }
  }
  auto i8 = IntegerType::get(ctx, 8);
  auto packedType = RankedTensorType::get({n / r, k4, 4 * r}, i8);
  QuantizedWeights q;
  q.packed =
      DenseResourceElementsAttr::get(packedType, "int8_weights", std::move(blob));
  q.scales = DenseElementsAttr::get(
      RankedTensorType::get({n}, Float32Type::get(ctx)), ArrayRef(scales));
  q.sums = DenseElementsAttr::get(
      RankedTensorType::get({n}, IntegerType::get(ctx, 32)), ArrayRef(sums));
  return q;
}

/// A constant that broadcasts to one value per column ([N], [1, N], a scalar
/// ...), times `beta`, as N floats; nothing otherwise.
std::optional<std::vector<float>> perColumnBias(Value c, int64_t n,
                                                float beta) {
  std::optional<std::vector<float>> v = readFloats(c);
  if (!v)
    return std::nullopt;
  auto t = cast<RankedTensorType>(c.getType());
  for (int64_t d = 0; d + 1 < t.getRank(); ++d)
    if (t.getDimSize(d) != 1)
      return std::nullopt;
  std::vector<float> out(n);
  if (v->size() == 1)
    std::fill(out.begin(), out.end(), (*v)[0] * beta);
  else if (int64_t(v->size()) == n)
    for (int64_t i = 0; i < n; ++i)
      out[i] = (*v)[i] * beta;
  else
    return std::nullopt;
  return out;
}

std::string nodeName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location l : fused.getLocations())
      if (auto name = dyn_cast<NameLoc>(l))
        return name.getName().str();
  return "?";
}

/// Why the matmuls that stay in f32 do; reported once per function.
struct Skipped {
  std::map<std::string, std::vector<std::string>> byReason;
  void add(Operation *op, const std::string &reason) {
    byReason[reason].push_back(nodeName(op->getLoc()));
  }
};

struct QuantizeDynamicPass
    : mlir::kiln::impl::QuantizeDynamicPassBase<QuantizeDynamicPass> {
  void runOnOperation() override {
    // Batch variants share their weight constants; so do their quantized
    // copies.
    std::map<std::tuple<const void *, bool, float>, QuantizedWeights> cache;
    getOperation().walk([&](func::FuncOp func) { runOnFunction(func, cache); });
  }

  void runOnFunction(
      func::FuncOp func,
      std::map<std::tuple<const void *, bool, float>, QuantizedWeights> &cache) {
    SmallVector<Operation *> candidates;
    func.walk([&](Operation *op) {
      if (isa<MatMulOp, GemmOp>(op))
        candidates.push_back(op);
    });
    if (candidates.empty())
      return;
    Skipped skipped;
    int64_t quantized = 0;
    OpBuilder b(func.getContext());
    for (Operation *op : candidates) {
      auto gemm = dyn_cast<GemmOp>(op);
      Value input = op->getOperand(0), weights = op->getOperand(1);
      auto it = cast<RankedTensorType>(input.getType());
      auto wt = cast<RankedTensorType>(weights.getType());
      auto rt = cast<RankedTensorType>(op->getResult(0).getType());
      auto cst = weights.getDefiningOp<ConstantOp>();
      if (!cst) {
        skipped.add(op, "weights computed at run time");
        continue;
      }
      if (!it.getElementType().isF32() || !wt.getElementType().isF32()) {
        skipped.add(op, "not f32");
        continue;
      }
      if (it.getRank() < 2 || wt.getRank() != 2 || !it.hasStaticShape() ||
          !wt.hasStaticShape()) {
        skipped.add(op, "not a static [..., M, K] x [K, N] product");
        continue;
      }
      if (gemm && gemm.getTransA()) {
        skipped.add(op, "Gemm with transA");
        continue;
      }
      bool transB = gemm && gemm.getTransB();
      int64_t k = it.getShape().back();
      int64_t n = wt.getDimSize(transB ? 0 : 1);
      if (wt.getDimSize(transB ? 1 : 0) != k)
        continue; // the verifier's business
      if (n % 16 != 0) {
        skipped.add(op, "N = " + std::to_string(n) +
                            " output columns, not a multiple of 16");
        continue;
      }
      std::optional<std::vector<float>> w = readFloats(weights);
      if (!w) {
        skipped.add(op, "weight bytes not readable at compile time");
        continue;
      }
      float alpha = gemm ? gemm.getAlpha().convertToFloat() : 1.0f;
      // The bias: Gemm's C, or a constant added by the matmul's only user.
      std::optional<std::vector<float>> bias;
      Operation *replaced = op;
      if (gemm && gemm.getC() && gemm.getBeta().convertToFloat() != 0.0f) {
        bias = perColumnBias(gemm.getC(), n, gemm.getBeta().convertToFloat());
        if (!bias) {
          skipped.add(op, "Gemm's C is not a constant per-column bias");
          continue;
        }
      } else if (!gemm && op->getResult(0).hasOneUse()) {
        if (auto add = dyn_cast<AddOp>(*op->getResult(0).getUsers().begin());
            add && add.getType() == rt) {
          Value other = add.getLhs() == op->getResult(0) ? add.getRhs()
                                                         : add.getLhs();
          auto ot = cast<RankedTensorType>(other.getType());
          if (ot.getRank() <= rt.getRank() &&
              (bias = perColumnBias(other, n, 1.0f)))
            replaced = add;
        }
      }
      auto key = std::make_tuple(cst.getValue().getAsOpaquePointer(), transB,
                                 alpha);
      auto found = cache.find(key);
      if (found == cache.end())
        found = cache
                    .emplace(key, quantizeWeights(func.getContext(), *w, k, n,
                                                  transB, alpha))
                    .first;
      const QuantizedWeights &q = found->second;
      b.setInsertionPoint(replaced);
      Location loc = op->getLoc();
      Value packed = ConstantOp::create(b, loc, q.packed.getType(), q.packed);
      Value scales = ConstantOp::create(b, loc, q.scales.getType(), q.scales);
      Value sums = ConstantOp::create(b, loc, q.sums.getType(), q.sums);
      Value biasValue;
      if (bias) {
        auto bt = RankedTensorType::get({n}, b.getF32Type());
        biasValue = ConstantOp::create(
            b, loc, bt, DenseElementsAttr::get(bt, ArrayRef<float>(*bias)));
      }
      Value result = DynamicQuantMatMulOp::create(b, loc, rt, input, packed,
                                                  scales, sums, biasValue);
      replaced->getResult(0).replaceAllUsesWith(result);
      // The f32 weights and bias go too, unless something else reads them.
      llvm::SetVector<Operation *> constants;
      for (Operation *o : {op, replaced})
        for (Value v : o->getOperands())
          if (auto c = v.getDefiningOp<ConstantOp>())
            constants.insert(c);
      replaced->erase();
      if (replaced != op)
        op->erase();
      for (Operation *c : constants)
        if (c->use_empty())
          c->erase();
      ++quantized;
    }
    std::string note;
    llvm::raw_string_ostream os(note);
    os << "dynamic int8: " << quantized << " of " << candidates.size()
       << " MatMul/Gemm nodes quantized";
    if (quantized == 0)
      os << "; the model is compiled in f32 unchanged";
    for (auto &[reason, nodes] : skipped.byReason) {
      os << "; " << nodes.size() << " kept in f32 (" << reason << "): ";
      for (auto [i, name] : llvm::enumerate(nodes)) {
        if (i == 3) {
          os << ", ...";
          break;
        }
        os << (i ? ", " : "") << "'" << name << "'";
      }
    }
    func.emitRemark() << note;
  }
};
} // namespace
