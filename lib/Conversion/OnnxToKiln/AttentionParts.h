//===- AttentionParts.h - pieces shared by the attention ops ----*- C++ -*-===//
//
// Building blocks that ONNX's Attention and RotaryEmbedding (Attention.cpp)
// and ONNX Runtime's com.microsoft Attention and QAttention
// (MsAttention.cpp) share.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CONVERSION_ONNXTOKILN_ATTENTIONPARTS_H
#define KILN_LIB_CONVERSION_ONNXTOKILN_ATTENTIONPARTS_H

#include "kiln/Conversion/OnnxToKiln/OnnxToKiln.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::kiln::attention {

/// kiln.slice of the last dimension of `v`: `count` elements from `first`,
/// `stride` apart; the other dimensions whole (of run-time size where they
/// are symbolic).
FailureOr<Value> sliceLast(OnnxNode &node, Value v, int64_t first,
                           int64_t count, int64_t stride = 1);
/// Constants of `shape` whose element at (i, j) of the last two dimensions
/// is `pred(i, j)` (i1) or `f(i, j)` (i64).
Value boolGrid(OnnxNode &node, ArrayRef<int64_t> shape,
               llvm::function_ref<bool(int64_t, int64_t)> pred);
Value intGrid(OnnxNode &node, ArrayRef<int64_t> shape,
              llvm::function_ref<int64_t(int64_t, int64_t)> f);
/// `a + b`, where a null operand is absent.
FailureOr<Value> addBias(OnnxNode &node, Value a, FailureOr<Value> b);
/// Q, K or V as [B, H, S, D]: 4-D inputs as they are, 3-D [B, S, H * D]
/// split into `heads` heads and transposed (the batch and sequence may be
/// symbolic).
FailureOr<Value> toHeads(OnnxNode &node, Value v, int64_t heads);

} // namespace mlir::kiln::attention

#endif
