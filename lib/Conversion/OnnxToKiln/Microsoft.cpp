//===- Microsoft.cpp - ONNX Runtime's transformer contrib ops ---*- C++ -*-===//
//
// The com.microsoft ops that ONNX Runtime's transformer optimizer and
// Hugging Face Optimum write into the models they save: fused GELUs,
// FusedMatMul, EmbedLayerNormalization and the skip-connection layer norms
// (Attention and QAttention are in Attention.cpp; the default-domain
// LayerNormalization / SimplifiedLayerNormalization ONNX Runtime registers
// for opsets without ONNX's own in Normalization.cpp). Each becomes the
// standard ops it fuses (kiln.layer_norm, kiln.matmul, gathers, elementwise
// ops), which Kiln's own fusion passes then treat as they treat the exported
// originals. MatMulNBits, ORT's weight-only int4 product, has its weights
// dequantized here at compile time.
//
// Semantics follow ONNX Runtime's contrib op documentation
// (docs/ContribOperators.md of onnxruntime), version 1 of each.
//
//===----------------------------------------------------------------------===//
#include "Build.h"
#include "SymbolicSizes.h"

#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>
#include <vector>

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// a + b (+ c when present), in the ops' order.
FailureOr<Value> sum(OnnxNode &node, Value a, Value b, Value c = Value()) {
  FailureOr<Value> s = build<AddOp>(node, a, b);
  if (succeeded(s) && c)
    s = build<AddOp>(node, *s, c);
  return s;
}

/// Optional float input `i` (null when absent), or failure.
FailureOr<Value> optionalFloat(OnnxNode &node, unsigned i) {
  if (!node.input(i))
    return Value();
  return elementwiseFloatInput(node, i);
}

/// Refuses the statistics outputs (mean, inv_std_var) of the layer norms,
/// which ONNX Runtime computes for training only.
LogicalResult refuseStatistics(OnnxNode &node, ArrayRef<unsigned> outputs) {
  for (unsigned i : outputs)
    if (node.resultUsed(i)) {
      node.fail() << "output " << i
                  << " (a normalization statistic, computed by ONNX Runtime "
                     "for training) is not supported; use only the "
                     "normalized output and the skip sum";
      return failure();
    }
  return success();
}

/// The normalized axis of a layer norm over the last dimension.
FailureOr<int64_t> lastAxis(OnnxNode &node, Value x) {
  int64_t rank = typeOf(x).getRank();
  if (rank == 0) {
    node.fail() << "cannot normalize a scalar";
    return failure();
  }
  return rank - 1;
}
} // namespace

namespace {
enum class GeluBias { None, Optional, Required };

/// The GELU (erf, or its tanh approximation) of input 0, plus input 1 first
/// when `bias` has one.
FailureOr<SmallVector<Value>> geluOfSum(OnnxNode &node, bool tanh,
                                        GeluBias bias) {
  FailureOr<Value> x = elementwiseFloatInput(node, 0),
                   b = bias == GeluBias::None ? FailureOr<Value>(Value())
                       : bias == GeluBias::Optional
                           ? optionalFloat(node, 1)
                           : elementwiseFloatInput(node, 1);
  if (failed(x) || failed(b) || (*b && failed(x = build<AddOp>(node, *x, *b))))
    return failure();
  return one(gelu(node, *x, tanh));
}
} // namespace

/// Gelu (com.microsoft): the exact (erf) GELU.
FailureOr<SmallVector<Value>> mlir::kiln::convertMsGelu(OnnxNode &node) {
  return geluOfSum(node, /*tanh=*/false, GeluBias::None);
}

/// BiasGelu(A, B): the exact GELU of A + B.
FailureOr<SmallVector<Value>> mlir::kiln::convertBiasGelu(OnnxNode &node) {
  return geluOfSum(node, /*tanh=*/false, GeluBias::Required);
}

/// FastGelu(X, bias?): the tanh approximation of GELU of X (+ bias).
FailureOr<SmallVector<Value>> mlir::kiln::convertFastGelu(OnnxNode &node) {
  return geluOfSum(node, /*tanh=*/true, GeluBias::Optional);
}

/// QuickGelu(X): X * sigmoid(alpha X), alpha 1.702 by default.
FailureOr<SmallVector<Value>> mlir::kiln::convertQuickGelu(OnnxNode &node) {
  FailureOr<Value> x = elementwiseFloatInput(node, 0);
  if (failed(x))
    return failure();
  Value alpha =
      scalarConstant(node, elementOf(*x), node.floatAttr("alpha", 1.702f));
  FailureOr<Value> y = build<MulOp>(node, *x, alpha);
  if (failed(y) || failed(y = build<SigmoidOp>(node, *y)))
    return failure();
  return one(build<MulOp>(node, *x, *y));
}

/// BiasAdd(X, bias, skip): X + bias + skip (diffusion models' UNets).
FailureOr<SmallVector<Value>> mlir::kiln::convertBiasAdd(OnnxNode &node) {
  FailureOr<Value> x = elementwiseFloatInput(node, 0),
                   bias = elementwiseFloatInput(node, 1),
                   skip = elementwiseFloatInput(node, 2);
  if (failed(x) || failed(bias) || failed(skip))
    return failure();
  return one(sum(node, *x, *bias, *skip));
}

/// FusedMatMul(A, B): alpha * op(A) @ op(B), numpy matmul broadcasting.
/// transA/transB swap the last two dimensions; transBatchA/transBatchB
/// first move dimension 0 behind the batch dimensions (1 .. rank-2), so a
/// [M, B..., K] operand is read as [B..., M, K].
FailureOr<SmallVector<Value>> mlir::kiln::convertFusedMatMul(OnnxNode &node) {
  FailureOr<Value> a = node.rankedInput(0), b = node.rankedInput(1);
  if (failed(a) || failed(b))
    return failure();
  auto operand = [&](Value v, StringRef trans,
                     StringRef transBatch) -> FailureOr<Value> {
    int64_t rank = typeOf(v).getRank();
    bool t = node.intAttr(trans, 0) != 0, tb = node.intAttr(transBatch, 0) != 0;
    if ((t || tb) && rank < 2) {
      node.fail() << trans << "/" << transBatch
                  << " need an operand of rank 2 or more, got " << typeOf(v);
      return failure();
    }
    if (!t && !tb)
      return v;
    SmallVector<int64_t> perm;
    if (tb) {
      for (int64_t d = 1; d + 1 < rank; ++d)
        perm.push_back(d);
      perm.append({0, rank - 1});
    } else {
      for (int64_t d = 0; d < rank; ++d)
        perm.push_back(d);
    }
    if (t)
      std::swap(perm[rank - 2], perm[rank - 1]);
    return transposeBy(node, v, perm);
  };
  FailureOr<Value> lhs = operand(*a, "transA", "transBatchA"),
                   rhs = operand(*b, "transB", "transBatchB");
  if (failed(lhs) || failed(rhs))
    return failure();
  FailureOr<Value> y = build<MatMulOp>(node, *lhs, *rhs);
  float alpha = node.floatAttr("alpha", 1.0f);
  if (succeeded(y) && alpha != 1.0f)
    y = build<MulOp>(node, *y, scalarConstant(node, elementOf(*y), alpha));
  return one(y);
}

namespace {
/// The skip layer norms: the layer norm (`rms`: the RMS norm) with gamma
/// (input 2) and beta (input `betaInput`, when any) over the last dimension
/// of input + skip (+ the bias at input `biasInput`); output 3 is that sum,
/// the statistics outputs 1 and 2 are refused.
FailureOr<SmallVector<Value>> skipNorm(OnnxNode &node, bool rms,
                                       std::optional<unsigned> betaInput,
                                       unsigned biasInput) {
  FailureOr<Value> x = elementwiseFloatInput(node, 0),
                   skip = elementwiseFloatInput(node, 1),
                   gamma = node.rankedInput(2),
                   beta = betaInput ? optionalFloat(node, *betaInput)
                                    : FailureOr<Value>(Value()),
                   bias = optionalFloat(node, biasInput);
  if (failed(x) || failed(skip) || failed(gamma) || failed(beta) ||
      failed(bias) || failed(refuseStatistics(node, {1, 2})))
    return failure();
  FailureOr<Value> s = sum(node, *x, *skip, *bias);
  FailureOr<int64_t> axis =
      failed(s) ? FailureOr<int64_t>(failure()) : lastAxis(node, *s);
  if (failed(axis))
    return failure();
  float epsilon = node.floatAttr("epsilon", 1e-12f);
  auto &b = node.builder;
  FailureOr<Value> y =
      rms ? rmsNorm(node, *s, *gamma, *axis, epsilon)
          : build<LayerNormOp>(node, *s, *gamma, *beta,
                               b.getI64IntegerAttr(*axis),
                               b.getF32FloatAttr(epsilon), UnitAttr());
  if (failed(y))
    return failure();
  return SmallVector<Value>{*y, Value(), Value(), *s};
}
} // namespace

/// SkipLayerNormalization(input, skip, gamma, beta?, bias?).
FailureOr<SmallVector<Value>>
mlir::kiln::convertSkipLayerNormalization(OnnxNode &node) {
  return skipNorm(node, /*rms=*/false, 3, 4);
}

/// SkipSimplifiedLayerNormalization(input, skip, gamma, bias?).
FailureOr<SmallVector<Value>>
mlir::kiln::convertSkipSimplifiedLayerNormalization(OnnxNode &node) {
  return skipNorm(node, /*rms=*/true, std::nullopt, 3);
}

/// EmbedLayerNormalization(input_ids, segment_ids?, word_embedding,
/// position_embedding, segment_embedding?, gamma, beta, mask?,
/// position_ids?): the layer norm over the hidden dimension of
/// word_embedding[input_ids] + position_embedding[position_ids, or 0 .. S-1]
/// (+ segment_embedding[segment_ids]). Output 1 (mask_index) is the number of
/// non-zero mask entries per sequence, which Attention takes as key lengths
/// (zeros without a mask, as ONNX Runtime writes: Attention then masks every
/// key alike, which leaves the softmax unchanged); output 2 is the embedding
/// sum. Indices out of range are clamped, as for Gather.
FailureOr<SmallVector<Value>>
mlir::kiln::convertEmbedLayerNormalization(OnnxNode &node) {
  FailureOr<Value> ids = sizedInput(node, 0), words = node.staticInput(2),
                   positions = node.staticInput(3), gamma = node.rankedInput(5),
                   beta = node.rankedInput(6);
  if (failed(ids) || failed(words) || failed(positions) || failed(gamma) ||
      failed(beta))
    return failure();
  RankedTensorType it = typeOf(*ids), wt = typeOf(*words),
                   pt = typeOf(*positions);
  if (it.getRank() != 2 || wt.getRank() != 2 || pt.getRank() != 2 ||
      pt.getDimSize(1) != wt.getDimSize(1) ||
      !elementOf(*ids).isSignlessInteger()) {
    node.fail() << "expects integer input_ids [batch, seq] and word and "
                   "position embeddings [rows, hidden] of one hidden size, "
                   "got "
                << it << ", " << wt << " and " << pt;
    return failure();
  }
  auto &b = node.builder;
  // The batch and the sequence may be symbolic (an encoder exported with
  // dynamic axes, then fused by ONNX Runtime's optimizer).
  SymSize batch = sizeOf(node, *ids, 0), seq = sizeOf(node, *ids, 1);
  auto axis0 = b.getI64IntegerAttr(0);
  FailureOr<Value> sum = build<GatherOp>(node, *words, *ids, axis0);
  Value posIds = node.input(8);
  std::optional<int64_t> longest =
      seq.getConstant() ? seq.getConstant() : node.sizes->largest(seq);
  if (!posIds && (!longest || *longest > pt.getDimSize(0))) {
    // Positions 0 .. S-1 index the table: a longer sequence would read
    // rows that do not exist (ONNX Runtime refuses it too).
    InFlightDiagnostic diag = node.fail();
    if (seq.getConstant())
      diag << "the sequence (" << *longest << " tokens) is longer than ";
    else
      diag << "the sequence ('" << sizeStr(node, seq) << "', "
           << (longest ? "up to " + std::to_string(*longest) : "unbounded")
           << " tokens) may be longer than ";
    diag << "position_embedding (" << pt.getDimSize(0)
         << " rows): compile for a sequence of at most " << pt.getDimSize(0)
         << " tokens, or pass position_ids";
    return failure();
  }
  if (!posIds && seq.getConstant()) {
    SmallVector<int64_t> range;
    for (int64_t i = 0; i < *longest; ++i)
      range.push_back(i);
    auto type = RankedTensorType::get({1, *longest}, b.getI64Type());
    posIds = ConstantOp::create(b, node.loc(), type,
                                DenseElementsAttr::get(type, ArrayRef(range)));
  } else if (!posIds) {
    FailureOr<Value> iota =
        iotaOfSize(node, seq, b.getI64Type(), "the position ids");
    if (succeeded(iota))
      iota = reshapeToSizes(node, *iota, {SymSize::constant(1), seq});
    if (failed(iota))
      return failure();
    posIds = *iota;
  }
  FailureOr<Value> pos = build<GatherOp>(node, *positions, posIds, axis0);
  if (failed(sum) || failed(pos) ||
      failed(sum = build<AddOp>(node, *sum, *pos)))
    return failure();
  if (Value segIds = node.input(1)) {
    Value segTable = node.input(4);
    if (!segTable) {
      node.fail() << "segment_ids need a segment_embedding (input 4)";
      return failure();
    }
    FailureOr<Value> seg = build<GatherOp>(node, segTable, segIds, axis0);
    if (failed(seg) || failed(sum = build<AddOp>(node, *sum, *seg)))
      return failure();
  }
  FailureOr<Value> y = build<LayerNormOp>(
      node, *sum, *gamma, *beta, b.getI64IntegerAttr(2),
      b.getF32FloatAttr(node.floatAttr("epsilon", 1e-12f)), UnitAttr());
  if (failed(y))
    return failure();
  Value maskIndex;
  if (node.resultUsed(1)) {
    auto i32 = b.getI32Type();
    FailureOr<Value> count;
    if (Value mask = node.input(7)) {
      FailureOr<Value> m = sizedInput(node, 7);
      if (succeeded(m) && (typeOf(*m).getRank() != 2 ||
                           knownToDiffer(sizeOf(node, *m, 0), batch) ||
                           knownToDiffer(sizeOf(node, *m, 1), seq))) {
        node.fail() << "mask must be " << sizesStr(node, {batch, seq})
                    << ", got " << typeOf(*m);
        return failure();
      }
      FailureOr<Value> nonzero;
      if (succeeded(m))
        nonzero =
            build<EqualOp>(node, *m, scalarConstant(node, elementOf(*m), 0.0));
      if (succeeded(nonzero))
        nonzero = build<NotOp>(node, *nonzero);
      // Counted in f32 (exact up to 2^24 tokens), the sum's type.
      if (succeeded(nonzero))
        count = build<CastOp>(node, *nonzero, TypeAttr::get(b.getF32Type()));
      if (succeeded(count))
        count = build<ReduceSumOp>(node, *count, b.getDenseI64ArrayAttr({1}),
                                   b.getBoolAttr(false));
      if (succeeded(count))
        count = build<CastOp>(node, *count, TypeAttr::get(i32));
    } else if (std::optional<int64_t> n = batch.getConstant()) {
      auto type = RankedTensorType::get({*n}, i32);
      count = Value(ConstantOp::create(
          b, node.loc(), type,
          DenseElementsAttr::get(type, b.getI32IntegerAttr(0).getValue())));
    } else {
      count = expandToSizes(node, scalarConstant(node, i32, 0), {batch});
    }
    if (failed(count))
      return failure();
    maskIndex = *count;
  }
  return SmallVector<Value>{*y, maskIndex, *sum};
}

namespace {
/// Element `i` of a float constant (f32, f16 or bf16) as a float.
float floatAt(DenseElementsAttr a, int64_t i) {
  APFloat v = a.isSplat() ? a.getSplatValue<APFloat>()
                          : *(a.getValues<APFloat>().begin() + i);
  bool lost = false;
  v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
  return v.convertToFloat();
}

/// The `bits`-bit value `i` of packed bytes, least significant bits first.
int64_t packedAt(ArrayRef<uint8_t> bytes, int64_t i, int64_t bits) {
  int64_t bit = i * bits;
  return (bytes[bit / 8] >> (bit % 8)) & ((1 << bits) - 1);
}
} // namespace

/// MatMulNBits(A, B, scales, zero_points?, bias at input 5?): ONNX Runtime's
/// weight-only quantized product (its MatMul4BitsQuantizer, Olive and
/// onnxruntime-genai write it): B holds N rows of K `bits`-bit values in
/// blocks of block_size along K, packed least significant bits first, with a
/// scale per (row, block) and a zero point per (row, block) (packed like B,
/// or floats; 2^(bits-1) when absent). The weights are dequantized at compile
/// time, W[k][n] = (q - zero_point) * scale, and A @ W (+ bias) runs on the
/// f32 kernels, as the weight-only QDQ forms do (docs/quantization.md).
/// g_idx (act-order) is refused.
FailureOr<SmallVector<Value>> mlir::kiln::convertMatMulNBits(OnnxNode &node) {
  FailureOr<Value> a = node.rankedInput(0);
  if (failed(a))
    return failure();
  int64_t k = node.intAttr("K", 0), n = node.intAttr("N", 0),
          bits = node.intAttr("bits", 4), block = node.intAttr("block_size", 0);
  if (k <= 0 || n <= 0 || (bits != 2 && bits != 4 && bits != 8) || block < 16 ||
      (block & (block - 1)) != 0 || k > (int64_t(1) << 24) ||
      n > (int64_t(1) << 24)) {
    node.fail() << "needs K and N > 0 (at most 2^24), bits 2, 4 or 8 and a "
                   "block_size that is a power of two of at least 16, got K "
                << k << ", N " << n << ", bits " << bits << ", block_size "
                << block;
    return failure();
  }
  if (k * n > (int64_t(1) << 30)) {
    node.fail() << "a " << k << " x " << n
                << " weight is too large to dequantize at compile time "
                   "(at most 2^30 values)";
    return failure();
  }
  RankedTensorType at = typeOf(*a);
  if (at.getRank() < 1 || at.getShape().back() != k) {
    node.fail() << "A's last dimension must be K = " << k << ", got " << at;
    return failure();
  }
  int64_t blocks = (k + block - 1) / block, blob = block * bits / 8;
  std::optional<DenseElementsAttr> b = node.constantInput(1),
                                   scales = node.constantInput(2);
  if (!b || !scales) {
    node.fail() << "B and scales must be constants (initializers): Kiln "
                   "dequantizes the weights at compile time";
    return failure();
  }
  if (!b->getElementType().isInteger(8) ||
      b->getNumElements() != n * blocks * blob ||
      !isa<FloatType>(scales->getElementType()) ||
      scales->getNumElements() != n * blocks) {
    node.fail() << "B must be uint8 [" << n << ", " << blocks << ", " << blob
                << "] and scales " << n * blocks << " floats, got "
                << b->getType() << " and " << scales->getType();
    return failure();
  }
  std::optional<DenseElementsAttr> zeros;
  int64_t zeroRow = 0;
  if (node.input(3)) {
    zeros = node.constantInput(3);
    zeroRow = (blocks * bits + 7) / 8;
    bool packed = zeros && zeros->getElementType().isInteger(8) &&
                  zeros->getNumElements() == n * zeroRow;
    bool floats = zeros && isa<FloatType>(zeros->getElementType()) &&
                  zeros->getNumElements() == n * blocks;
    if (!packed && !floats) {
      node.fail() << "zero_points must be a constant of " << n * zeroRow
                  << " packed uint8 or " << n * blocks << " floats";
      return failure();
    }
  }
  if (node.input(4)) {
    node.fail() << "g_idx (act-order block indices, input 4) is not "
                   "supported; quantize without act-order (or reorder the "
                   "weights' rows of K) before compiling";
    return failure();
  }
  // Raw bytes: splats are expanded so that every index reads.
  auto bytesOf = [](DenseElementsAttr attr) {
    std::vector<uint8_t> out;
    out.reserve(attr.getNumElements());
    for (const APInt &v : attr.getValues<APInt>())
      out.push_back(uint8_t(v.getZExtValue()));
    return out;
  };
  std::vector<uint8_t> q = bytesOf(*b), zp;
  bool floatZeros = zeros && isa<FloatType>(zeros->getElementType());
  if (zeros && !floatZeros)
    zp = bytesOf(*zeros);
  // Scales and zero points per (row, block), read once.
  std::vector<float> scale(n * blocks),
      zero(n * blocks, float(1 << (bits - 1)));
  for (int64_t rb = 0; rb < n * blocks; ++rb) {
    scale[rb] = floatAt(*scales, rb);
    if (floatZeros)
      zero[rb] = floatAt(*zeros, rb);
    else if (zeros)
      zero[rb] = float(
          packedAt(zp, (rb / blocks) * zeroRow * 8 / bits + rb % blocks, bits));
  }
  std::vector<float> w(k * n);
  for (int64_t row = 0; row < n; ++row)
    for (int64_t i = 0; i < k; ++i) {
      int64_t rb = row * blocks + i / block;
      float value = float(packedAt(q, row * blocks * block + i, bits));
      w[i * n + row] = (value - zero[rb]) * scale[rb];
    }
  auto &bl = node.builder;
  auto type = RankedTensorType::get({k, n}, bl.getF32Type());
  AsmResourceBlob data = HeapAsmResourceBlob::allocate(
      w.size() * sizeof(float), alignof(float), /*dataIsMutable=*/true);
  std::memcpy(data.getMutableData().data(), w.data(), w.size() * sizeof(float));
  Value weights = ConstantOp::create(
      bl, node.loc(), type,
      DenseResourceElementsAttr::get(type, "matmul_nbits", std::move(data)));
  Type elt = at.getElementType();
  FailureOr<Value> x = *a;
  if (!elt.isF32())
    x = build<CastOp>(node, *a, TypeAttr::get(bl.getF32Type()));
  FailureOr<Value> y;
  if (succeeded(x))
    y = build<MatMulOp>(node, *x, weights);
  if (succeeded(y) && !elt.isF32())
    y = build<CastOp>(node, *y, TypeAttr::get(elt));
  if (succeeded(y) && node.input(5))
    y = build<AddOp>(node, *y, node.input(5));
  return one(y);
}
