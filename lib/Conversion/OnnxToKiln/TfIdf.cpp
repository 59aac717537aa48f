//===- TfIdf.cpp - ONNX TfIdfVectorizer -------------------------*- C++ -*-===//
//
// TfIdfVectorizer on integer tokens with static shapes. The n-gram pool is an
// attribute, so the op is a fixed pattern match: for every gram length n and
// skip s the tokens at positions p, p + (s+1), ..., p + (n-1)(s+1) are compared
// with every pool n-gram at once ([rows, grams, starts] booleans), the matches
// are counted over the starts, and a constant [grams, outputs] matrix scatters
// the counts (times the IDF weights) to the output columns.
//
//===----------------------------------------------------------------------===//
#include "Build.h"

using namespace mlir;
using namespace mlir::kiln;

FailureOr<SmallVector<Value>>
mlir::kiln::convertTfIdfVectorizer(OnnxNode &node) {
  FailureOr<Value> x = node.staticInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = typeOf(*x);
  Type elt = type.getElementType();
  if (!elt.isSignlessInteger(32) && !elt.isSignlessInteger(64)) {
    node.fail() << "element type " << elt
                << " is not supported for TfIdfVectorizer; Kiln supports "
                   "int32 and int64 tokens (string tokens are not supported)";
    return failure();
  }
  if (type.getRank() != 1 && type.getRank() != 2) {
    node.fail() << "expects tokens of rank 1 or 2, got " << type;
    return failure();
  }
  if (node.hasAttr("pool_strings") && !node.hasAttr("pool_int64s")) {
    node.fail() << "pool_strings is not supported; Kiln matches integer "
                   "tokens (pool_int64s)";
    return failure();
  }
  std::string mode = node.strAttr("mode", "");
  int64_t minGram = node.intAttr("min_gram_length", 0);
  int64_t maxGram = node.intAttr("max_gram_length", 0);
  int64_t maxSkip = node.intAttr("max_skip_count", 0);
  std::optional<SmallVector<int64_t>> counts = node.intsAttr("ngram_counts");
  std::optional<SmallVector<int64_t>> indexes = node.intsAttr("ngram_indexes");
  std::optional<SmallVector<int64_t>> pool = node.intsAttr("pool_int64s");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") {
    node.fail() << "mode must be TF, IDF or TFIDF, got '" << mode << "'";
    return failure();
  }
  if (!counts || !indexes || !pool || minGram < 1 || maxGram < minGram ||
      maxSkip < 0 || counts->empty() || (int64_t)counts->size() < maxGram) {
    node.fail() << "needs ngram_counts (one start per gram length up to "
                   "max_gram_length), ngram_indexes, pool_int64s and "
                   "1 <= min_gram_length <= max_gram_length";
    return failure();
  }
  // Pool entries by gram length: entries [counts[n-1], counts[n]) are the
  // n-grams, each n tokens long.
  int64_t numGrams = 0;
  SmallVector<std::pair<int64_t, int64_t>> gramsOfLength; // (first, count)
  for (int64_t n = 1; n <= (int64_t)counts->size(); ++n) {
    int64_t begin = (*counts)[n - 1];
    int64_t end = n < (int64_t)counts->size() ? (*counts)[n]
                                              : (int64_t)pool->size();
    if (begin < 0 || end < begin || end > (int64_t)pool->size() ||
        (end - begin) % n) {
      node.fail() << "ngram_counts entry " << n - 1
                  << " does not delimit whole " << n
                  << "-grams of pool_int64s";
      return failure();
    }
    gramsOfLength.push_back({numGrams, (end - begin) / n});
    numGrams += (end - begin) / n;
  }
  if ((int64_t)indexes->size() != numGrams) {
    node.fail() << "ngram_indexes has " << indexes->size()
                << " entries but the pool holds " << numGrams << " n-grams";
    return failure();
  }
  int64_t outCols = 0;
  for (int64_t i : *indexes) {
    if (i < 0) {
      node.fail() << "ngram_indexes must not be negative";
      return failure();
    }
    outCols = std::max(outCols, i + 1);
  }
  SmallVector<float> weights(numGrams, 1.0f);
  if (auto w = node.op->getAttrOfType<ArrayAttr>("weights")) {
    if ((int64_t)w.size() != numGrams) {
      node.fail() << "weights has " << w.size() << " entries, expected "
                  << numGrams;
      return failure();
    }
    for (auto [i, a] : llvm::enumerate(w))
      if (auto f = dyn_cast<FloatAttr>(a))
        weights[i] = f.getValueAsDouble();
  }

  bool batched = type.getRank() == 2;
  int64_t rows = batched ? type.getDimSize(0) : 1;
  int64_t len = type.getDimSize(type.getRank() - 1);
  FailureOr<Value> tokens = reshapeTo(node, *x, {rows, 1, len});
  if (failed(tokens))
    return failure();
  auto &b = node.builder;
  Type f32 = b.getF32Type();

  // counts[rows, numGrams] as a sum of per-(n, skip) [rows, grams_n] blocks,
  // placed into their columns by concatenation.
  SmallVector<Value> blocks;
  int64_t poolOffset = 0;
  for (int64_t n = 1; n <= (int64_t)counts->size(); ++n) {
    auto [firstGram, grams] = gramsOfLength[n - 1];
    int64_t poolBegin = (*counts)[n - 1];
    (void)firstGram;
    poolOffset = poolBegin;
    if (grams == 0)
      continue;
    Value total;
    bool counted = n >= minGram && n <= maxGram;
    // Unigrams have no gaps to skip: they are counted once.
    int64_t skips = n == 1 ? 0 : maxSkip;
    for (int64_t s = 0; counted && s <= skips; ++s) {
      int64_t stride = s + 1;
      int64_t starts = len - (n - 1) * stride;
      if (starts <= 0)
        break;
      Value match;
      for (int64_t t = 0; t < n; ++t) {
        // Tokens at p + t * stride for every start p: [rows, 1, starts].
        FailureOr<Value> window = build<SliceOp>(
            node, *tokens, b.getDenseI64ArrayAttr({0, 0, t * stride}),
            b.getDenseI64ArrayAttr({rows, 1, starts}),
            b.getDenseI64ArrayAttr({1, 1, 1}));
        if (failed(window))
          return failure();
        // The t-th token of each pool n-gram: [1, grams, 1].
        auto gramType = RankedTensorType::get({1, grams, 1}, elt);
        SmallVector<APInt> want;
        for (int64_t g = 0; g < grams; ++g)
          want.push_back(APInt(elt.getIntOrFloatBitWidth(),
                               (*pool)[poolOffset + g * n + t], true));
        Value gramTok = ConstantOp::create(
            b, node.loc(), gramType, DenseElementsAttr::get(gramType, want));
        FailureOr<Value> eq = build<EqualOp>(node, *window, gramTok);
        if (failed(eq))
          return failure();
        if (match) {
          eq = build<AndOp>(node, match, *eq);
          if (failed(eq))
            return failure();
        }
        match = *eq;
      }
      FailureOr<Value> asFloat = build<CastOp>(node, match, TypeAttr::get(f32));
      if (failed(asFloat))
        return failure();
      FailureOr<Value> sum =
          build<ReduceSumOp>(node, *asFloat, b.getDenseI64ArrayAttr({2}),
                             b.getBoolAttr(false));
      if (failed(sum))
        return failure();
      if (total) {
        sum = build<AddOp>(node, total, *sum);
        if (failed(sum))
          return failure();
      }
      total = *sum;
    }
    if (!total) {
      auto zeroType = RankedTensorType::get({rows, grams}, f32);
      total = ConstantOp::create(
          b, node.loc(), zeroType,
          DenseElementsAttr::get(zeroType, b.getF32FloatAttr(0.0f)));
    }
    blocks.push_back(total);
  }
  FailureOr<Value> tf =
      blocks.size() == 1
          ? FailureOr<Value>(blocks.front())
          : build<ConcatOp>(node, ValueRange(blocks), b.getI64IntegerAttr(1));
  if (failed(tf))
    return failure();
  Value score = *tf;
  if (mode == "IDF") {
    auto zeroType = RankedTensorType::get({}, f32);
    Value zero = ConstantOp::create(
        b, node.loc(), zeroType,
        DenseElementsAttr::get(zeroType, b.getF32FloatAttr(0.0f)));
    FailureOr<Value> seen = build<GreaterOp>(node, score, zero);
    if (failed(seen) ||
        failed(seen = build<CastOp>(node, *seen, TypeAttr::get(f32))))
      return failure();
    score = *seen;
  }
  // Weights (IDF, TFIDF) and the placement of each n-gram's column in one
  // [numGrams, outCols] matrix.
  SmallVector<float> place(numGrams * outCols, 0.0f);
  for (int64_t g = 0; g < numGrams; ++g)
    place[g * outCols + (*indexes)[g]] = mode == "TF" ? 1.0f : weights[g];
  auto placeType = RankedTensorType::get({numGrams, outCols}, f32);
  Value placeMat = ConstantOp::create(
      b, node.loc(), placeType,
      DenseElementsAttr::get(placeType, ArrayRef<float>(place)));
  FailureOr<Value> y = build<MatMulOp>(node, score, placeMat);
  if (failed(y))
    return failure();
  if (!batched)
    return one(reshapeTo(node, *y, {outCols}));
  return one(y);
}
