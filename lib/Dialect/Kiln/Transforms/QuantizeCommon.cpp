//===- QuantizeCommon.cpp - what the precision passes share ------*- C++ -*-===//
#include "QuantizeCommon.h"

#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::kiln;

namespace mlir::kiln::quant {

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

int64_t panelWidth(int64_t n) { return n % 32 == 0 ? 32 : 16; }

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

std::pair<ElementsAttr, DenseElementsAttr>
packInt8(MLIRContext *ctx, int64_t k, int64_t kp, int64_t n, int64_t r,
         llvm::function_ref<int8_t(int64_t, int64_t)> q) {
  int64_t k4 = kp / 4, panels = (n + r - 1) / r;
  size_t bytes = size_t(panels) * r * k4 * 4;
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
      bytes, alignof(int64_t), /*dataIsMutable=*/true);
  MutableArrayRef<char> out = blob.getMutableData();
  std::memset(out.data(), 0, bytes);
  std::vector<int32_t> sums(n, 0);
  for (int64_t nn = 0; nn < n; ++nn) {
    int64_t p = nn / r, lane = nn % r;
    for (int64_t kk = 0; kk < k; ++kk) {
      int8_t v = q(kk, nn);
      out[(p * k4 + kk / 4) * 4 * r + 4 * lane + kk % 4] = static_cast<char>(v);
      sums[nn] += v;
    }
  }
  auto i8 = IntegerType::get(ctx, 8);
  auto packedType = RankedTensorType::get({panels, k4, 4 * r}, i8);
  return {DenseResourceElementsAttr::get(packedType, "int8_weights",
                                         std::move(blob)),
          DenseElementsAttr::get(
              RankedTensorType::get({n}, IntegerType::get(ctx, 32)),
              ArrayRef(sums))};
}

std::pair<ElementsAttr, DenseElementsAttr>
packDepthwiseInt8(MLIRContext *ctx, int64_t kh, int64_t kw, int64_t c,
                  llvm::function_ref<int8_t(int64_t, int64_t)> q) {
  int64_t quads = (kh + 3) / 4;
  std::vector<int8_t> packed(size_t(quads) * kw * c * 4, 0);
  std::vector<int32_t> sums(c, 0);
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t t = 0; t < kh * kw; ++t) {
      int64_t r = t / kw, col = t % kw;
      int8_t v = q(t, ch);
      packed[((r / 4 * kw + col) * c + ch) * 4 + r % 4] = v;
      sums[ch] += v;
    }
  auto i8 = IntegerType::get(ctx, 8);
  return {DenseElementsAttr::get(RankedTensorType::get({quads, kw, c, 4}, i8),
                                 ArrayRef(packed)),
          DenseElementsAttr::get(
              RankedTensorType::get({c}, IntegerType::get(ctx, 32)),
              ArrayRef(sums))};
}

QuantizedWeights quantizeInt8(MLIRContext *ctx, int64_t k, int64_t kp,
                              int64_t n, int64_t r, float alpha,
                              llvm::function_ref<float(int64_t, int64_t)> at) {
  std::vector<int8_t> values(size_t(k) * n);
  std::vector<float> scales(n);
  for (int64_t nn = 0; nn < n; ++nn)
    scales[nn] =
        alpha * quantizeColumn(
                    k, [&](int64_t kk) { return at(kk, nn); },
                    [&](int64_t kk, int8_t q) { values[kk * n + nn] = q; })
                    .first;
  QuantizedWeights q;
  std::tie(q.packed, q.sums) =
      packInt8(ctx, k, kp, n, r,
               [&](int64_t kk, int64_t nn) { return values[kk * n + nn]; });
  q.scales = DenseElementsAttr::get(
      RankedTensorType::get({n}, Float32Type::get(ctx)), ArrayRef(scales));
  return q;
}

QuantizedWeights quantizeWeights(MLIRContext *ctx, ArrayRef<float> w, int64_t k,
                                 int64_t n, bool transposed, float alpha) {
  return quantizeInt8(ctx, k, (k + 3) / 4 * 4, n, panelWidth(n), alpha,
                      [&](int64_t kk, int64_t nn) {
                        return transposed ? w[nn * k + kk] : w[kk * n + nn];
                      });
}

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

Value biasConstant(OpBuilder &b, Location loc, const Candidate &c) {
  if (!c.bias)
    return Value();
  auto bt = RankedTensorType::get({c.n}, b.getF32Type());
  return ConstantOp::create(b, loc, bt,
                            DenseElementsAttr::get(bt, ArrayRef<float>(*c.bias)));
}

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

void replaceConv(Conv2DOp conv, Value y) {
  auto filter = conv.getFilter().getDefiningOp<ConstantOp>();
  conv.getResult().replaceAllUsesWith(y);
  conv.erase();
  if (filter && filter->use_empty())
    filter->erase();
}

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

WeightKey weightKey(const Candidate &c) {
  ConstantOp weights = c.weights;
  return {weights.getValue().getAsOpaquePointer(), c.transB, c.alpha};
}

uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

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

bool isDepthwise(Conv2DOp conv) {
  auto it = cast<RankedTensorType>(conv.getInput().getType());
  auto ft = cast<RankedTensorType>(conv.getFilter().getType());
  int64_t c = it.getDimSize(3);
  return conv.isNHWC() && !ShapedType::isDynamic(c) && conv.getGroup() == uint64_t(c) &&
         ft.getDimSize(2) == 1 && ft.getDimSize(3) == c;
}

std::string bf16ConvBlocker(Conv2DOp conv, bool depthwise) {
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

} // namespace mlir::kiln::quant
