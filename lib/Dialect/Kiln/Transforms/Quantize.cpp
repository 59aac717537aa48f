//===- Quantize.cpp - int8 and bf16 matmuls and convolutions ----*- C++ -*-===//
//
// --quantize=dynamic: matrix products with constant weights read int8 weights
// quantized here (per output column, symmetric) and quantize their
// activations at run time (kiln.dynamic_quant_matmul). The weights are packed
// in the layout of AVX512-VNNI's vpdpbusd: 4 consecutive k of one column in
// one 32-bit lane, panels of R columns stored one after the other so that the
// kernel streams each panel contiguously.
//
// --precision=bf16: the same matmuls read bf16 weights rounded here, packed
// in pairs of k for AMX tiles (kiln.bf16_matmul). Both passes share which
// matmuls qualify and the remark that says which do not. Convolutions go
// the same way (kiln.bf16_conv2d); depthwise ones read bf16 activations
// against their f32 filter.
//
// --quantize=static: --kiln-observe-quant-inputs returns the input of every
// MatMul/Gemm with constant weights and every NHWC group-1 or depthwise
// convolution, the compiler runs that model on the calibration data, and
// --kiln-quantize-static replaces the same nodes with int8 ops whose input
// scale and zero point come from the observed ranges
// (kiln.static_quant_matmul / kiln.static_quant_conv2d /
// kiln.static_quant_depthwise_conv2d).
//
// --precision=fp16: every MatMul/Gemm/Conv reads fp16-rounded operands and
// accumulates in f32; constant weights are stored as fp16
// (--kiln-fp16-compute).
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Kiln/Transforms/Passes.h"
#include "kiln/Import/Onnx/OnnxImporter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <tuple>

namespace mlir::kiln {
#define GEN_PASS_DEF_QUANTIZEDYNAMICPASS
#define GEN_PASS_DEF_BF16MATMULPASS
#define GEN_PASS_DEF_FP16COMPUTEPASS
#define GEN_PASS_DEF_OBSERVEQUANTINPUTSPASS
#define GEN_PASS_DEF_QUANTIZESTATICPASS
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

/// Symmetric int8 of one column of `k` values `at(i)` in [-127, 127]: each
/// value goes to `put(i, q)`; returns the scale (max |w| / 127) and the
/// sum of the q.
std::pair<float, int32_t>
quantizeColumn(int64_t k, llvm::function_ref<float(int64_t)> at,
               llvm::function_ref<void(int64_t, int8_t)> put) {
  float amax = 0;
  for (int64_t i = 0; i < k; ++i)
    amax = std::max(amax, std::fabs(at(i)));
  // An all-zero column quantizes to zeros with any scale.
  float scale = amax > 0 ? amax / 127.0f : 1.0f;
  int32_t sum = 0;
  for (int64_t i = 0; i < k; ++i) {
    float q = std::nearbyint(at(i) / scale);
    auto qi = static_cast<int8_t>(std::clamp(q, -127.0f, 127.0f));
    sum += qi;
    put(i, qi);
  }
  return {scale, sum};
}

/// Per output column symmetric int8 for K x N weights `at(k, n)`, packed in
/// panels of `r` columns with 4 consecutive k of a column in one 32-bit
/// lane: [ceil(N / r), Kp / 4, 4 r] (Kp >= K, a multiple of 4), zeros
/// past K and N. `alpha` scales the result (it goes into the scales).
QuantizedWeights quantizeInt8(MLIRContext *ctx, int64_t k, int64_t kp,
                              int64_t n, int64_t r, float alpha,
                              llvm::function_ref<float(int64_t, int64_t)> at) {
  int64_t k4 = kp / 4, panels = (n + r - 1) / r;
  size_t bytes = size_t(panels) * r * k4 * 4;
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
      bytes, alignof(int64_t), /*dataIsMutable=*/true);
  MutableArrayRef<char> out = blob.getMutableData();
  std::memset(out.data(), 0, bytes);
  std::vector<float> scales(n);
  std::vector<int32_t> sums(n, 0);
  for (int64_t nn = 0; nn < n; ++nn) {
    int64_t p = nn / r, lane = nn % r;
    auto [scale, sum] = quantizeColumn(
        k, [&](int64_t kk) { return at(kk, nn); },
        [&](int64_t kk, int8_t q) {
          out[(p * k4 + kk / 4) * 4 * r + 4 * lane + kk % 4] =
              static_cast<char>(q);
        });
    scales[nn] = scale * alpha;
    sums[nn] = sum;
  }
  auto i8 = IntegerType::get(ctx, 8);
  auto packedType = RankedTensorType::get({panels, k4, 4 * r}, i8);
  QuantizedWeights q;
  q.packed =
      DenseResourceElementsAttr::get(packedType, "int8_weights", std::move(blob));
  q.scales = DenseElementsAttr::get(
      RankedTensorType::get({n}, Float32Type::get(ctx)), ArrayRef(scales));
  q.sums = DenseElementsAttr::get(
      RankedTensorType::get({n}, IntegerType::get(ctx, 32)), ArrayRef(sums));
  return q;
}

/// Quantizes W [K, N] (stored [N, K] when `transposed`) as
/// kiln.dynamic_quant_matmul wants: panels of panelWidth(N), K padded to 4.
QuantizedWeights quantizeWeights(MLIRContext *ctx, ArrayRef<float> w, int64_t k,
                                 int64_t n, bool transposed, float alpha) {
  return quantizeInt8(ctx, k, (k + 3) / 4 * 4, n, panelWidth(n), alpha,
                      [&](int64_t kk, int64_t nn) {
                        return transposed ? w[nn * k + kk] : w[kk * n + nn];
                      });
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

/// The node names the user keeps in f32 (kKeepFp32Attr), and which of them
/// were seen, so that a name that matches no candidate can be reported.
struct KeepFp32 {
  std::map<std::string, bool> names; // name -> seen
  std::set<std::string> byBudget;    // chosen by the accuracy budget search
  explicit KeepFp32(ModuleOp module) {
    if (auto list = module->getAttrOfType<ArrayAttr>(kKeepFp32Attr))
      for (Attribute a : list)
        if (auto s = dyn_cast<StringAttr>(a))
          names[s.str()] = false;
    if (auto list = module->getAttrOfType<ArrayAttr>(kKeepFp32BudgetAttr))
      for (Attribute a : list)
        if (auto s = dyn_cast<StringAttr>(a)) {
          names[s.str()] = false;
          byBudget.insert(s.str());
        }
  }
  /// Whether `op` is kept; records it under `skipped` if so.
  bool keeps(Operation *op, Skipped &skipped) {
    auto it = names.find(nodeName(op->getLoc()));
    if (it == names.end())
      return false;
    it->second = true;
    skipped.add(op, byBudget.count(it->first) ? "accuracy budget"
                                              : "--keep-fp32");
    return true;
  }
  /// One remark on the module for names that matched no candidate node.
  void reportUnused(ModuleOp module, StringRef kinds) {
    std::string unused;
    for (auto &[name, seen] : names)
      if (!seen)
        unused += (unused.empty() ? "'" : ", '") + name + "'";
    if (!unused.empty())
      module.emitRemark() << "--keep-fp32 names " << unused
                          << ", which is not a " << kinds
                          << " node of the model that would have been "
                             "converted (names are ONNX node names)";
  }
};

/// A MatMul or Gemm whose weights are a constant f32 [K, N] matrix, with
/// what a reduced-precision replacement needs to know.
struct Candidate {
  Operation *op = nullptr;       // the matmul
  Operation *replaced = nullptr; // the op whose result the replacement takes
  ConstantOp weights;
  bool transB = false;
  int64_t k = 0, n = 0;
  float alpha = 1.0f;
  std::vector<float> w;
  std::optional<std::vector<float>> bias; // per column, beta applied
};

/// `op` as a candidate, or why it stays f32. The int8 kernel needs N to be a
/// multiple of 16 (`wholePanels`); bf16 pads the last panel.
FailureOr<Candidate> analyze(Operation *op, std::string &why,
                             bool wholePanels) {
  Candidate c;
  c.op = c.replaced = op;
  auto gemm = dyn_cast<GemmOp>(op);
  Value input = op->getOperand(0), weights = op->getOperand(1);
  auto it = cast<RankedTensorType>(input.getType());
  auto wt = cast<RankedTensorType>(weights.getType());
  auto rt = cast<RankedTensorType>(op->getResult(0).getType());
  c.weights = weights.getDefiningOp<ConstantOp>();
  if (!c.weights)
    why = "weights computed at run time";
  else if (!it.getElementType().isF32() || !wt.getElementType().isF32())
    why = "not f32";
  else if (it.getRank() < 2 || wt.getRank() != 2 || !it.hasStaticShape() ||
           !wt.hasStaticShape())
    why = "not a static [..., M, K] x [K, N] product";
  else if (gemm && gemm.getTransA())
    why = "Gemm with transA";
  if (!why.empty())
    return failure();
  c.transB = gemm && gemm.getTransB();
  c.k = it.getShape().back();
  c.n = wt.getDimSize(c.transB ? 0 : 1);
  if (wt.getDimSize(c.transB ? 1 : 0) != c.k)
    return failure(); // the verifier's business
  if (wholePanels && c.n % 16 != 0) {
    why = "N = " + std::to_string(c.n) + " output columns, not a multiple of 16";
    return failure();
  }
  std::optional<std::vector<float>> w = readFloats(weights);
  if (!w) {
    why = "weight bytes not readable at compile time";
    return failure();
  }
  c.w = std::move(*w);
  c.alpha = gemm ? gemm.getAlpha().convertToFloat() : 1.0f;
  // The bias: Gemm's C, or a constant added by the matmul's only user.
  if (gemm && gemm.getC() && gemm.getBeta().convertToFloat() != 0.0f) {
    c.bias = perColumnBias(gemm.getC(), c.n, gemm.getBeta().convertToFloat());
    if (!c.bias) {
      why = "Gemm's C is not a constant per-column bias";
      return failure();
    }
  } else if (!gemm && op->getResult(0).hasOneUse()) {
    if (auto add = dyn_cast<AddOp>(*op->getResult(0).getUsers().begin());
        add && add.getType() == rt) {
      Value other =
          add.getLhs() == op->getResult(0) ? add.getRhs() : add.getLhs();
      auto ot = cast<RankedTensorType>(other.getType());
      if (ot.getRank() <= rt.getRank() &&
          (c.bias = perColumnBias(other, c.n, 1.0f)))
        c.replaced = add;
    }
  }
  return c;
}

/// The bias of `c` as a constant [N], or a null value.
Value biasConstant(OpBuilder &b, Location loc, const Candidate &c) {
  if (!c.bias)
    return Value();
  auto bt = RankedTensorType::get({c.n}, b.getF32Type());
  return ConstantOp::create(b, loc, bt,
                            DenseElementsAttr::get(bt, ArrayRef<float>(*c.bias)));
}

/// Replaces candidate `c` with what `build` makes (inserted before the
/// replaced op) and drops the f32 constants nothing else reads.
void replaceCandidate(
    OpBuilder &b, const Candidate &c,
    llvm::function_ref<Value(OpBuilder &, const Candidate &)> build) {
  b.setInsertionPoint(c.replaced);
  Value result = build(b, c);
  c.replaced->getResult(0).replaceAllUsesWith(result);
  // The f32 weights and bias go too, unless something else reads them.
  llvm::SetVector<Operation *> constants;
  for (Operation *o : {c.op, c.replaced})
    for (Value v : o->getOperands())
      if (auto cst = v.getDefiningOp<ConstantOp>())
        constants.insert(cst);
  c.replaced->erase();
  if (c.replaced != c.op)
    c.op->erase();
  for (Operation *cst : constants)
    if (cst->use_empty())
      cst->erase();
}

/// Replaces `conv` with `y` and drops its f32 filter if nothing else reads it.
void replaceConv(Conv2DOp conv, Value y) {
  auto filter = conv.getFilter().getDefiningOp<ConstantOp>();
  conv.getResult().replaceAllUsesWith(y);
  conv.erase();
  if (filter && filter->use_empty())
    filter->erase();
}

/// "<label>: 3 of 4 <kind> nodes <verb>; 1 kept in f32 (reason): 'a', ...".
std::string summary(StringRef label, int64_t converted, size_t total,
                    StringRef kind, StringRef verb, const Skipped &skipped) {
  std::string note;
  llvm::raw_string_ostream os(note);
  os << label << ": " << converted << " of " << total << " " << kind
     << " nodes " << verb;
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
  return note;
}

/// Replaces every candidate MatMul/Gemm of `func` with what `build` makes
/// (inserted before the replaced op), drops the f32 constants nothing else
/// reads, and remarks once how many were converted and why the rest were not:
/// "<label>: 3 of 4 MatMul/Gemm nodes <verb>; 1 kept in f32 (...)".
void rewriteMatmuls(
    func::FuncOp func, StringRef label, StringRef verb, bool wholePanels,
    bool onlyMatmuls, KeepFp32 &keep,
    llvm::function_ref<Value(OpBuilder &, const Candidate &)> build) {
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    if (isa<MatMulOp, GemmOp>(op))
      ops.push_back(op);
  });
  if (ops.empty())
    return;
  Skipped skipped;
  int64_t converted = 0;
  OpBuilder b(func.getContext());
  for (Operation *op : ops) {
    if (keep.keeps(op, skipped))
      continue;
    std::string why;
    FailureOr<Candidate> c = analyze(op, why, wholePanels);
    if (failed(c)) {
      if (!why.empty())
        skipped.add(op, why);
      continue;
    }
    replaceCandidate(b, *c, build);
    ++converted;
  }
  std::string note =
      summary(label, converted, ops.size(), "MatMul/Gemm", verb, skipped);
  // The int8 pass converts nothing else: say that the model stays f32.
  if (converted == 0 && onlyMatmuls)
    note.insert(note.find(';') == std::string::npos ? note.size()
                                                     : note.find(';'),
                "; the model is compiled in f32 unchanged");
  func.emitRemark() << note;
}

/// Weights that batch variants share keep one converted copy.
using WeightKey = std::tuple<const void *, bool, float>;
WeightKey weightKey(const Candidate &c) {
  ConstantOp weights = c.weights;
  return {weights.getValue().getAsOpaquePointer(), c.transB, c.alpha};
}

struct QuantizeDynamicPass
    : mlir::kiln::impl::QuantizeDynamicPassBase<QuantizeDynamicPass> {
  void runOnOperation() override {
    std::map<WeightKey, QuantizedWeights> cache;
    KeepFp32 keep(getOperation());
    getOperation().walk([&](func::FuncOp func) {
      rewriteMatmuls(
          func, "dynamic int8", "quantized", /*wholePanels=*/true,
          /*onlyMatmuls=*/true, keep,
          [&](OpBuilder &b, const Candidate &c) -> Value {
            auto found = cache.find(weightKey(c));
            if (found == cache.end())
              found = cache
                          .emplace(weightKey(c),
                                   quantizeWeights(func.getContext(), c.w, c.k,
                                                   c.n, c.transB, c.alpha))
                          .first;
            const QuantizedWeights &q = found->second;
            Location loc = c.op->getLoc();
            Value packed =
                ConstantOp::create(b, loc, q.packed.getType(), q.packed);
            Value scales =
                ConstantOp::create(b, loc, q.scales.getType(), q.scales);
            Value sums = ConstantOp::create(b, loc, q.sums.getType(), q.sums);
            return DynamicQuantMatMulOp::create(
                b, loc, c.replaced->getResult(0).getType(),
                c.op->getOperand(0), packed, scales, sums,
                biasConstant(b, loc, c));
          });
    });
    keep.reportUnused(getOperation(), "MatMul/Gemm");
  }
};

/// f32 to bf16, rounding to nearest even; NaN stays a (quiet) NaN.
uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

/// K x N weights, `at(k, n)`, rounded to bf16 and packed as
/// kiln.bf16_matmul and kiln.bf16_conv2d want: [ceil(N / 16), Kp / 2, 32],
/// zeros past K and N.
ElementsAttr packBf16(MLIRContext *ctx, int64_t k, int64_t n,
                      llvm::function_ref<float(int64_t, int64_t)> at) {
  int64_t kp = amxPaddedK(k, 2), k2 = kp / 2, panels = (n + 15) / 16;
  std::vector<uint16_t> out(size_t(panels) * k2 * 32, 0);
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t nn = 0; nn < n; ++nn)
      out[((nn / 16) * k2 + kk / 2) * 32 + 2 * (nn % 16) + kk % 2] =
          toBf16(at(kk, nn));
  AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyInferAlign(
      ArrayRef<uint16_t>(out), /*dataIsMutable=*/false);
  auto type = RankedTensorType::get({panels, k2, 32}, BFloat16Type::get(ctx));
  return DenseResourceElementsAttr::get(type, "bf16_weights", std::move(blob));
}

/// A convolution with one group per channel and one filter per group:
/// filter [KH, KW, 1, C] on C channels in NHWC.
bool isDepthwise(Conv2DOp conv) {
  auto it = cast<RankedTensorType>(conv.getInput().getType());
  auto ft = cast<RankedTensorType>(conv.getFilter().getType());
  int64_t c = it.getDimSize(3);
  return conv.isNHWC() && !ShapedType::isDynamic(c) && conv.getGroup() == uint64_t(c) &&
         ft.getDimSize(2) == 1 && ft.getDimSize(3) == c;
}

/// Why an NHWC convolution stays f32, or "" when kiln.bf16_conv2d fits
/// (or, with `depthwise`, kiln.static_quant_depthwise_conv2d for a
/// depthwise one).
std::string bf16ConvBlocker(Conv2DOp conv, bool depthwise = false) {
  if (!conv.isNHWC())
    return "not channels-last";
  if (conv.getGroup() != 1 && !(depthwise && isDepthwise(conv)))
    return depthwise ? "grouped" : "grouped or depthwise";
  auto it = cast<RankedTensorType>(conv.getInput().getType());
  auto ft = cast<RankedTensorType>(conv.getFilter().getType());
  if (!it.getElementType().isF32() || !ft.getElementType().isF32() ||
      !it.hasStaticShape() || !ft.hasStaticShape())
    return "not static f32";
  if (!conv.getFilter().getDefiningOp<ConstantOp>())
    return "filter computed at run time";
  return "";
}

struct Bf16MatmulPass : mlir::kiln::impl::Bf16MatmulPassBase<Bf16MatmulPass> {
  using Bf16MatmulPassBase::Bf16MatmulPassBase;

  void runOnOperation() override {
    std::map<WeightKey, ElementsAttr> cache;
    KeepFp32 keep(getOperation());
    getOperation().walk([&](func::FuncOp func) {
      if (runTimeProducts)
        convertRuntimeProducts(func, keep);
      rewriteMatmuls(
          func, "bf16", "in bf16", /*wholePanels=*/false,
          /*onlyMatmuls=*/false, keep,
          [&](OpBuilder &b, const Candidate &c) -> Value {
            ElementsAttr &packed = cache[weightKey(c)];
            if (!packed)
              packed = packBf16(func.getContext(), c.k, c.n,
                                [&](int64_t kk, int64_t nn) {
                                  return c.alpha * (c.transB ? c.w[nn * c.k + kk]
                                                             : c.w[kk * c.n + nn]);
                                });
            Location loc = c.op->getLoc();
            Value w = ConstantOp::create(b, loc, packed.getType(), packed);
            return Bf16MatMulOp::create(b, loc,
                                        c.replaced->getResult(0).getType(),
                                        c.op->getOperand(0), w,
                                        biasConstant(b, loc, c));
          });
      convertConvs(func, keep);
    });
    keep.reportUnused(getOperation(), "MatMul/Gemm/Conv");
  }

  /// Every MatMul of two run-time f32 tensors (attention's Q K^T and P V)
  /// becomes kiln.bf16_batch_matmul on [B, M, K] x [B, K, N] views; one
  /// remark says how many.
  void convertRuntimeProducts(func::FuncOp func, KeepFp32 &keep) {
    SmallVector<MatMulOp> ops;
    func.walk([&](MatMulOp op) {
      if (!op->getOperand(1).getDefiningOp<ConstantOp>())
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    Skipped skipped;
    int64_t converted = 0;
    for (MatMulOp op : ops) {
      if (keep.keeps(op, skipped))
        continue;
      auto at = cast<RankedTensorType>(op->getOperand(0).getType());
      auto bt = cast<RankedTensorType>(op->getOperand(1).getType());
      auto rt = cast<RankedTensorType>(op.getType());
      if (!at.getElementType().isF32() || !bt.getElementType().isF32() ||
          !at.hasStaticShape() || !bt.hasStaticShape() || at.getRank() < 2 ||
          bt.getRank() < 2) {
        skipped.add(op, "not a static f32 [..., M, K] x [..., K, N] product");
        continue;
      }
      int64_t k = at.getShape().back(), n = bt.getShape().back();
      int64_t batch = 1, m = at.getNumElements() / k;
      if (bt.getRank() > 2) {
        if (at.getRank() != bt.getRank() ||
            at.getShape().drop_back(2) != bt.getShape().drop_back(2)) {
          skipped.add(op, "batch dimensions broadcast");
          continue;
        }
        m = at.getDimSize(at.getRank() - 2);
        batch = at.getNumElements() / (m * k);
      }
      OpBuilder b(op);
      Location loc = op.getLoc();
      Type f32 = b.getF32Type();
      auto view = [&](Value v, ArrayRef<int64_t> shape) -> Value {
        return ReshapeOp::create(b, loc, RankedTensorType::get(shape, f32), v);
      };
      Value y = Bf16BatchMatMulOp::create(
          b, loc, RankedTensorType::get({batch, m, n}, f32),
          view(op->getOperand(0), {batch, m, k}),
          view(op->getOperand(1), {batch, k, n}));
      op.getResult().replaceAllUsesWith(view(y, rt.getShape()));
      op.erase();
      ++converted;
    }
    func.emitRemark() << summary("bf16", converted, ops.size(),
                                 "MatMul (two run-time operands)", "in bf16",
                                 skipped);
  }

  /// Every NHWC convolution with a constant filter becomes kiln.bf16_conv2d;
  /// one remark says how many and why the others stay f32.
  void convertConvs(func::FuncOp func, KeepFp32 &keep) {
    SmallVector<Conv2DOp> convs;
    func.walk([&](Conv2DOp op) { convs.push_back(op); });
    if (convs.empty())
      return;
    Skipped skipped;
    int64_t converted = 0;
    std::map<const void *, ElementsAttr> cache;
    for (Conv2DOp conv : convs) {
      if (keep.keeps(conv, skipped))
        continue;
      std::string why = bf16ConvBlocker(conv, /*depthwise=*/true);
      if (why.empty() && conv.getGroup() != 1) {
        roundDepthwiseInput(conv);
        ++converted;
        continue;
      }
      // A window of fewer than 32 values (one bf16 tile row), such as a 3x3
      // stem on RGB (K = 27), unfolds a few values at a time: measured on
      // SqueezeNet and MobileNetV2, f32 is faster (4% of either model).
      auto ft = cast<RankedTensorType>(conv.getFilter().getType());
      if (why.empty() && ft.hasStaticShape() &&
          ft.getDimSize(0) * ft.getDimSize(1) > 1 &&
          ft.getDimSize(0) * ft.getDimSize(1) * ft.getDimSize(2) < 32)
        why = "a window of K = KH * KW * C < 32 values, faster in f32";
      if (!why.empty()) {
        skipped.add(conv, why);
        continue;
      }
      auto filter = conv.getFilter().getDefiningOp<ConstantOp>();
      int64_t kh = ft.getDimSize(0), kw = ft.getDimSize(1),
              ch = ft.getDimSize(2), f = ft.getDimSize(3);
      ElementsAttr &packed = cache[filter.getValue().getAsOpaquePointer()];
      if (!packed) {
        std::optional<std::vector<float>> w = readFloats(conv.getFilter());
        if (!w) {
          skipped.add(conv, "filter bytes not readable at compile time");
          continue;
        }
        // HWCF is already [K, F] with k = (kh, kw, c) row-major.
        packed = packBf16(func.getContext(), kh * kw * ch, f,
                          [&](int64_t kk, int64_t nn) {
                            return (*w)[kk * f + nn];
                          });
      }
      OpBuilder b(conv);
      Location loc = conv.getLoc();
      Value w = ConstantOp::create(b, loc, packed.getType(), packed);
      Value y = Bf16Conv2DOp::create(
          b, loc, conv.getType(), conv.getInput(), w, conv.getBias(),
          b.getDenseI64ArrayAttr({kh, kw}), conv.getStridesAttr(),
          conv.getDilationsAttr(), conv.getPadsAttr());
      replaceConv(conv, y);
      ++converted;
    }
    func.emitRemark() << summary("bf16", converted, convs.size(), "Conv",
                                 "in bf16", skipped);
  }

  /// A depthwise convolution reads its input rounded to bf16 (a cast to
  /// bf16 and back, marked kBf16InputAttr): the producer's epilogue writes
  /// the bf16 tensor, half the bytes, and the convolution widens it against
  /// its f32 filter, accumulating in f32. There is no product to put on
  /// AMX tiles; the tensor in front of it is what costs.
  void roundDepthwiseInput(Conv2DOp conv) {
    OpBuilder b(conv);
    Location loc = conv.getLoc();
    auto type = cast<RankedTensorType>(conv.getInput().getType());
    Type bf16 = BFloat16Type::get(conv.getContext());
    Value half = CastOp::create(b, loc, type.clone(bf16), conv.getInput(),
                                TypeAttr::get(bf16));
    Value wide = CastOp::create(b, loc, type, half,
                                TypeAttr::get(type.getElementType()));
    conv.getInputMutable().assign(wide);
    conv->setAttr(kBf16InputAttr, b.getUnitAttr());
  }
};

/// Constant weights `values` of `shape` rounded to fp16 (nearest even):
/// stored as fp16 when `storeHalf` (the kernels read them at half the bytes
/// and convert each vector), else as f32 holding the rounded values, the
/// same numbers.
ElementsAttr fp16WeightsAttr(MLIRContext *ctx, ArrayRef<int64_t> shape,
                             ArrayRef<float> values, bool storeHalf) {
  std::vector<uint16_t> half(values.size());
  std::vector<float> wide(values.size());
  for (auto [i, v] : llvm::enumerate(values)) {
    APFloat x(v);
    bool lost;
    x.convert(APFloat::IEEEhalf(), APFloat::rmNearestTiesToEven, &lost);
    half[i] = static_cast<uint16_t>(x.bitcastToAPInt().getZExtValue());
    x.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
    wide[i] = x.convertToFloat();
  }
  if (!storeHalf) {
    auto type = RankedTensorType::get(shape, Float32Type::get(ctx));
    return DenseResourceElementsAttr::get(
        type, "fp16_rounded_weights",
        HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<float>(wide),
                                                       /*dataIsMutable=*/false));
  }
  auto type = RankedTensorType::get(shape, Float16Type::get(ctx));
  return DenseResourceElementsAttr::get(
      type, "fp16_weights",
      HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<uint16_t>(half),
                                                     /*dataIsMutable=*/false));
}

/// The f32 value of rounded weights `attr` (fp16WeightsAttr): the constant,
/// widened by a cast when it is stored as fp16.
Value fp16Weights(OpBuilder &b, Location loc, ElementsAttr attr) {
  Value stored = ConstantOp::create(b, loc, attr.getType(), attr);
  auto type = cast<RankedTensorType>(attr.getType());
  if (type.getElementType().isF32())
    return stored;
  Type f32 = b.getF32Type();
  return CastOp::create(b, loc, type.clone(f32), stored, TypeAttr::get(f32));
}

struct Fp16ComputePass
    : mlir::kiln::impl::Fp16ComputePassBase<Fp16ComputePass> {
  using Fp16ComputePassBase::Fp16ComputePassBase;
  /// Rows (matmul) or output pixels (convolution) from which a node's
  /// weights are stored as f32: see `storeHalf`.
  static constexpr int64_t kMaxHalfRows = 64;
  /// Rounded weights by (original constant, transposed, stored as fp16):
  /// the batch variants of one model (--batch-sizes) share one copy.
  std::map<std::tuple<const void *, bool, bool>, ElementsAttr> cache;

  void runOnOperation() override {
    KeepFp32 keep(getOperation());
    getOperation().walk([&](func::FuncOp func) { convert(func, keep); });
    keep.reportUnused(getOperation(), "MatMul/Gemm/Conv");
  }

  void convert(func::FuncOp func, KeepFp32 &keep) {
    SmallVector<Operation *> ops;
    func.walk([&](Operation *op) {
      if (isa<MatMulOp, GemmOp, Conv2DOp>(op))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    Skipped skipped;
    int64_t converted = 0;
    MLIRContext *ctx = func.getContext();
    Type f16 = Float16Type::get(ctx), f32 = Float32Type::get(ctx);
    // Whether the weights of the node at hand are stored as fp16: only
    // where that saves time. Converting costs one instruction per weight
    // vector, which the FMAs of all the rows it meets share. A filter that
    // stays in cache (at most `half-storage` bytes) or that meets 64 rows or
    // more (compute-bound: BERT's 128-row matmuls ran 25% slower with fp16
    // weights, SqueezeNet's RGB stem 30%) keeps f32 storage. Matrix-vector
    // products with large weights (the MLP) read half the bytes: 2x faster.
    bool storeHalf = false;
    // One fp16 copy per constant and one rounding per run-time value,
    // however many nodes read them.
    llvm::DenseMap<Value, Value> rounded;
    llvm::SetVector<Operation *> replaced; // f32 constants, erased if unused
    SmallVector<Operation *> moved;        // ops rebuilt on rounded inputs
    std::function<Value(Value)> fp16Operand = [&](Value v) -> Value {
      if (Value r = rounded.lookup(v))
        return r;
      auto type = cast<RankedTensorType>(v.getType());
      Operation *def = v.getDefiningOp();
      OpBuilder b(ctx);
      b.setInsertionPointAfterValue(v);
      Location loc = v.getLoc();
      Value result;
      ElementsAttr weights;
      if (auto cst = v.getDefiningOp<ConstantOp>();
          cst && type.getElementType().isF32()) {
        ElementsAttr &cached =
            cache[{cst.getValue().getAsOpaquePointer(), false, storeHalf}];
        if (!cached)
          if (std::optional<std::vector<float>> w = readFloats(v))
            cached = fp16WeightsAttr(ctx, type.getShape(), *w, storeHalf);
        weights = cached;
      }
      if (weights) {
        result = fp16Weights(b, loc, weights);
      } else if (def && v.hasOneUse() && def->getNumResults() == 1 &&
                 isa<ConcatOp, MaxPool2DOp, ReluOp, ReshapeOp, SliceOp,
                     TransposeOp>(def) &&
                 llvm::all_of(def->getOperandTypes(), [](Type t) {
                   return cast<ShapedType>(t).getElementType().isF32();
                 })) {
        // Rounding commutes with these (they move, select or take the
        // maximum of values): round their inputs instead, where the
        // rounding fuses into the producer (an activation epilogue) rather
        // than making a pass of its own (SqueezeNet's concatenations and
        // max pools).
        SmallVector<Value> inputs;
        for (Value in : def->getOperands())
          inputs.push_back(fp16Operand(in));
        b.setInsertionPoint(def);
        Operation *clone = b.clone(*def);
        clone->setOperands(inputs);
        moved.push_back(def);
        result = clone->getResult(0);
      } else {
        Value half =
            CastOp::create(b, loc, type.clone(f16), v, TypeAttr::get(f16));
        result = CastOp::create(b, loc, type, half, TypeAttr::get(f32));
      }
      rounded[v] = result;
      return result;
    };
    for (Operation *op : ops) {
      if (keep.keeps(op, skipped))
        continue;
      auto gemm = dyn_cast<GemmOp>(op);
      Value x = op->getOperand(0), w = op->getOperand(1);
      if (auto cst = w.getDefiningOp<ConstantOp>())
        replaced.insert(cst);
      auto xt = cast<RankedTensorType>(x.getType());
      auto wt = cast<RankedTensorType>(w.getType());
      if (!xt.getElementType().isF32() || !wt.getElementType().isF32()) {
        skipped.add(op, "not f32");
        continue;
      }
      if (gemm && gemm.getTransA()) {
        skipped.add(op, "Gemm with transA");
        continue;
      }
      auto rt = cast<RankedTensorType>(op->getResult(0).getType());
      int64_t channels =
          rt.getRank() == 0
              ? 1
              : rt.getDimSize(isa<Conv2DOp>(op) &&
                                      !cast<Conv2DOp>(op).isNHWC()
                                  ? 1
                                  : rt.getRank() - 1);
      storeHalf = wt.hasStaticShape() && rt.hasStaticShape() &&
                  wt.getNumElements() * 4 > halfStorage &&
                  rt.getNumElements() / std::max<int64_t>(channels, 1) <
                      kMaxHalfRows;
      // A Gemm's transposed constant B is stored [K, N] like a MatMul's.
      auto wCst = w.getDefiningOp<ConstantOp>();
      if (gemm && gemm.getTransB() && wCst && wt.hasStaticShape() &&
          wt.getRank() == 2) {
        int64_t n = wt.getDimSize(0), k = wt.getDimSize(1);
        ElementsAttr &attr =
            cache[{wCst.getValue().getAsOpaquePointer(), true, storeHalf}];
        if (!attr)
          if (std::optional<std::vector<float>> values = readFloats(w)) {
            std::vector<float> t(values->size());
            for (int64_t i = 0; i < n; ++i)
              for (int64_t j = 0; j < k; ++j)
                t[j * n + i] = (*values)[i * k + j];
            attr = fp16WeightsAttr(ctx, {k, n}, t, storeHalf);
          }
        if (attr) {
          OpBuilder b(op);
          op->setOperand(1, fp16Weights(b, op->getLoc(), attr));
          gemm.setTransB(false);
          op->setOperand(0, fp16Operand(x));
          op->setAttr(kFp16NodeAttr, b.getUnitAttr());
          ++converted;
          continue;
        }
      }
      op->setOperand(0, fp16Operand(x));
      op->setOperand(1, fp16Operand(w));
      op->setAttr(kFp16NodeAttr, UnitAttr::get(ctx));
      ++converted;
    }
    for (Operation *def : llvm::reverse(moved))
      if (def->use_empty())
        def->erase();
    for (Operation *cst : replaced)
      if (cst->use_empty())
        cst->erase();
    func.emitRemark() << summary("fp16", converted, ops.size(),
                                 "MatMul/Gemm/Conv", "in fp16", skipped);
  }
};

/// A MatMul/Gemm/Conv node as static int8 sees it: `why` it stays f32, or
/// empty for a candidate; a MatMul/Gemm candidate comes analyzed.
struct StaticNode {
  Operation *op;
  std::string why;
  std::optional<Candidate> matmul;
};

/// The nodes static int8 converts and calibration observes, in walk order:
/// MatMul/Gemm with constant f32 weights (`analyze`) and NHWC group-1 and
/// depthwise convolutions with a constant filter. Both passes see the same IR (the
/// same graph pipeline before them), so the i-th node is the same node.
/// Every MatMul/Gemm/Conv comes back, with `why` empty for candidates.
SmallVector<StaticNode> staticNodes(func::FuncOp func) {
  SmallVector<StaticNode> nodes;
  func.walk([&](Operation *op) {
    StaticNode node{op, "", std::nullopt};
    if (isa<MatMulOp, GemmOp>(op)) {
      FailureOr<Candidate> c = analyze(op, node.why, /*wholePanels=*/false);
      if (succeeded(c))
        node.matmul = std::move(*c);
      else if (node.why.empty())
        node.why = "not a [..., M, K] x [K, N] product";
    } else if (auto conv = dyn_cast<Conv2DOp>(op)) {
      node.why = bf16ConvBlocker(conv, /*depthwise=*/true);
      // A window of fewer than 64 values that must be unfolded (a 3x3 stem
      // on RGB: K = 27) fills under half of a 64-byte tile row and unfolds a
      // few bytes at a time; measured on SqueezeNet and MobileNetV2, the
      // f32 convolution is faster. (ResNet's 7x7 stem, K = 147, and 1x1
      // convolutions on 16 channels, which need no unfolding, are faster in
      // int8.)
      auto ft = cast<RankedTensorType>(conv.getFilter().getType());
      if (node.why.empty() && ft.hasStaticShape() && conv.getGroup() == 1) {
        int64_t k = ft.getDimSize(0) * ft.getDimSize(1) * ft.getDimSize(2);
        bool pointwise =
            ft.getDimSize(0) == 1 && ft.getDimSize(1) == 1 &&
            llvm::all_of(conv.getStrides(), [](int64_t v) { return v == 1; }) &&
            llvm::all_of(conv.getPads(), [](int64_t v) { return v == 0; });
        if (k < 64 && !pointwise)
          node.why = "a window of K = KH * KW * C < 64 values, faster in f32";
      }
      // The depthwise kernel takes 16, 8 or 4 channels per vector.
      if (node.why.empty() && conv.getGroup() != 1 &&
          ft.getDimSize(3) % 4 != 0)
        node.why = "a depthwise convolution on a channel count that is not "
                   "a multiple of 4";
    } else {
      return;
    }
    nodes.push_back(std::move(node));
  });
  return nodes;
}

struct ObserveQuantInputsPass
    : mlir::kiln::impl::ObserveQuantInputsPassBase<ObserveQuantInputsPass> {
  using ObserveQuantInputsPassBase::ObserveQuantInputsPassBase;

  /// The nodes to observe: static int8's candidates, or with `all` every
  /// MatMul/Gemm/Conv whose first input is f32.
  SmallVector<Operation *> observedNodes(func::FuncOp func) {
    SmallVector<Operation *> ops;
    if (all) {
      func.walk([&](Operation *op) {
        if (isa<MatMulOp, GemmOp, Conv2DOp>(op) &&
            cast<ShapedType>(op->getOperand(0).getType())
                .getElementType()
                .isF32())
          ops.push_back(op);
      });
      return ops;
    }
    for (const StaticNode &node : staticNodes(func))
      if (node.why.empty())
        ops.push_back(node.op);
    return ops;
  }

  void runOnOperation() override {
    SmallVector<Attribute> nodeNames;
    getOperation().walk([&](func::FuncOp func) {
      if (func.isExternal())
        return;
      auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
      SmallVector<Value> results(ret.getOperands());
      unsigned first = results.size();
      // One result per distinct value (a block's downsample branch and its
      // first conv read the same tensor), named by every index it serves:
      // bufferization cannot return one buffer twice.
      llvm::MapVector<Value, std::string> names;
      int64_t index = 0;
      for (Operation *op : observedNodes(func)) {
        std::string &name = names[op->getOperand(0)];
        name += (name.empty() ? kObservePrefix : ",") + std::to_string(index++);
        nodeNames.push_back(
            StringAttr::get(func.getContext(), nodeName(op->getLoc())));
      }
      if (names.empty())
        return;
      for (auto &[value, name] : names)
        results.push_back(value);
      ret->setOperands(results);
      func.setType(FunctionType::get(func.getContext(),
                                     func.getArgumentTypes(),
                                     ValueRange(results).getTypes()));
      for (auto [i, entry] : llvm::enumerate(names))
        func.setResultAttr(first + i, kValueNameAttr,
                           StringAttr::get(func.getContext(), entry.second));
    });
    getOperation()->setAttr(kObservedNodesAttr,
                            ArrayAttr::get(&getContext(), nodeNames));
  }
};

/// Scale and zero point mapping [min(lo, 0), max(hi, 0)] onto [0, 255].
std::pair<float, int64_t> uint8Params(float lo, float hi) {
  double l = std::min<double>(lo, 0.0), h = std::max<double>(hi, 0.0);
  double scale = (h - l) / 255.0;
  if (!(scale > 0) || !std::isfinite(scale))
    return {1.0f, 0};
  double zp = std::clamp(std::nearbyint(-l / scale), 0.0, 255.0);
  return {static_cast<float>(scale), static_cast<int64_t>(zp)};
}

struct QuantizeStaticPass
    : mlir::kiln::impl::QuantizeStaticPassBase<QuantizeStaticPass> {
  using QuantizeStaticPassBase::QuantizeStaticPassBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<float, float>> ranges;
    if (auto list = module->getAttrOfType<ArrayAttr>(kActivationRangesAttr))
      for (Attribute a : list) {
        auto r = dyn_cast<DenseF32ArrayAttr>(a);
        if (!r || r.size() != 2) {
          module.emitError() << kActivationRangesAttr
                             << " must hold array<f32: lo, hi> entries";
          return signalPassFailure();
        }
        ranges.push_back({r[0], r[1]});
      }
    KeepFp32 keep(module);
    // Batch variants share one converted copy of each weight.
    std::map<const void *, QuantizedWeights> cache;
    module.walk([&](func::FuncOp func) {
      SmallVector<StaticNode> nodes = staticNodes(func);
      if (nodes.empty())
        return;
      Skipped skipped;
      int64_t converted = 0, index = 0;
      OpBuilder b(func.getContext());
      for (StaticNode &node : nodes) {
        Operation *op = node.op;
        if (!node.why.empty()) {
          skipped.add(op, node.why);
          continue;
        }
        int64_t i = index++;
        if (keep.keeps(op, skipped))
          continue;
        if (i >= int64_t(ranges.size())) {
          skipped.add(op, "no calibrated range");
          continue;
        }
        auto [scale, zp] = uint8Params(ranges[i].first, ranges[i].second);
        if (auto conv = dyn_cast<Conv2DOp>(op)) {
          bool ok = conv.getGroup() == 1
                        ? convertConv(b, conv, scale, zp, cache)
                        : convertDepthwise(b, conv, scale, zp);
          if (ok)
            ++converted;
          else
            skipped.add(op, "filter bytes not readable at compile time");
          continue;
        }
        replaceCandidate(b, *node.matmul, [&](OpBuilder &b,
                                              const Candidate &c) -> Value {
          ConstantOp weights = c.weights;
          QuantizedWeights &q = cache[weights.getValue().getAsOpaquePointer()];
          if (!q.packed)
            q = quantizeInt8(func.getContext(), c.k, paddedK(c.k), c.n, 16,
                             c.alpha, [&](int64_t kk, int64_t nn) {
                               return c.transB ? c.w[nn * c.k + kk]
                                               : c.w[kk * c.n + nn];
                             });
          Location loc = c.op->getLoc();
          return StaticQuantMatMulOp::create(
              b, loc, c.replaced->getResult(0).getType(), c.op->getOperand(0),
              constant(b, loc, q.packed), constant(b, loc, q.scales),
              constant(b, loc, q.sums), biasConstant(b, loc, c),
              b.getF32FloatAttr(scale), b.getI64IntegerAttr(zp));
        });
        ++converted;
      }
      func.emitRemark() << summary("static int8", converted, nodes.size(),
                                   "MatMul/Gemm/Conv", "quantized", skipped);
    });
    keep.reportUnused(module, "MatMul/Gemm/Conv");
  }

  static Value constant(OpBuilder &b, Location loc, ElementsAttr value) {
    return ConstantOp::create(b, loc, value.getType(), value);
  }

  /// Replaces the depthwise `conv` with
  /// kiln.static_quant_depthwise_conv2d: its filter [KH, KW, 1, C]
  /// quantized per channel to symmetric int8 over its KH * KW taps and
  /// packed [ceil(KH / 4), KW, C, 4] (4 kernel rows of a channel per 32-bit
  /// lane); false if the filter bytes are not at hand.
  bool convertDepthwise(OpBuilder &b, Conv2DOp conv, float scale, int64_t zp) {
    std::optional<std::vector<float>> w = readFloats(conv.getFilter());
    if (!w)
      return false;
    auto ft = cast<RankedTensorType>(conv.getFilter().getType());
    int64_t kh = ft.getDimSize(0), kw = ft.getDimSize(1), c = ft.getDimSize(3);
    int64_t quads = (kh + 3) / 4;
    std::vector<int8_t> packed(quads * kw * c * 4, 0);
    std::vector<float> scales(c);
    std::vector<int32_t> sums(c);
    // Each channel is one column of its KH * KW taps t = (row, column).
    for (int64_t ch = 0; ch < c; ++ch)
      std::tie(scales[ch], sums[ch]) = quantizeColumn(
          kh * kw, [&](int64_t t) { return (*w)[t * c + ch]; },
          [&](int64_t t, int8_t q) {
            int64_t r = t / kw, col = t % kw;
            packed[((r / 4 * kw + col) * c + ch) * 4 + r % 4] = q;
          });
    MLIRContext *ctx = conv.getContext();
    b.setInsertionPoint(conv);
    Location loc = conv.getLoc();
    auto weights = DenseElementsAttr::get(
        RankedTensorType::get({quads, kw, c, 4}, IntegerType::get(ctx, 8)),
        ArrayRef(packed));
    auto scalesAttr = DenseElementsAttr::get(
        RankedTensorType::get({c}, Float32Type::get(ctx)), ArrayRef(scales));
    auto sumsAttr = DenseElementsAttr::get(
        RankedTensorType::get({c}, IntegerType::get(ctx, 32)), ArrayRef(sums));
    Value y = StaticQuantDepthwiseConv2DOp::create(
        b, loc, conv.getType(), conv.getInput(), constant(b, loc, weights),
        constant(b, loc, scalesAttr), constant(b, loc, sumsAttr),
        conv.getBias(), b.getF32FloatAttr(scale), b.getI64IntegerAttr(zp),
        b.getDenseI64ArrayAttr({kh, kw}), conv.getStridesAttr(),
        conv.getDilationsAttr(), conv.getPadsAttr());
    replaceConv(conv, y);
    return true;
  }

  /// K padded for the kernel: to whole AMX tile rows (64 bytes), or for
  /// the VNNI kernel (lane-k) to whole 4-byte lanes only. Padded to 64,
  /// MobileNetV2's 1x1 convolutions on 24 channels multiplied 40 zero bytes
  /// for every 24 (and 96 -> 128, 144 -> 192 elsewhere).
  int64_t paddedK(int64_t k) const {
    return laneK ? (k + 3) / 4 * 4 : amxPaddedK(k, 4);
  }

  /// Replaces `conv` with kiln.static_quant_conv2d; false if its filter
  /// bytes are not at hand.
  bool convertConv(OpBuilder &b, Conv2DOp conv, float scale, int64_t zp,
                   std::map<const void *, QuantizedWeights> &cache) {
    auto filter = conv.getFilter().getDefiningOp<ConstantOp>();
    auto ft = cast<RankedTensorType>(conv.getFilter().getType());
    int64_t kh = ft.getDimSize(0), kw = ft.getDimSize(1),
            ch = ft.getDimSize(2), f = ft.getDimSize(3);
    QuantizedWeights &q = cache[filter.getValue().getAsOpaquePointer()];
    if (!q.packed) {
      std::optional<std::vector<float>> w = readFloats(conv.getFilter());
      if (!w)
        return false;
      // HWCF is already [K, F] with k = (kh, kw, c) row-major.
      q = quantizeInt8(
          conv.getContext(), kh * kw * ch, paddedK(kh * kw * ch), f, 16, 1.0f,
          [&](int64_t kk, int64_t nn) { return (*w)[kk * f + nn]; });
    }
    b.setInsertionPoint(conv);
    Location loc = conv.getLoc();
    Value y = StaticQuantConv2DOp::create(
        b, loc, conv.getType(), conv.getInput(), constant(b, loc, q.packed),
        constant(b, loc, q.scales), constant(b, loc, q.sums), conv.getBias(),
        b.getF32FloatAttr(scale), b.getI64IntegerAttr(zp),
        b.getDenseI64ArrayAttr({kh, kw}), conv.getStridesAttr(),
        conv.getDilationsAttr(), conv.getPadsAttr());
    replaceConv(conv, y);
    return true;
  }
};
} // namespace
