//===- Passes.h - graph passes of the Kiln dialect --------------*- C++ -*-===//
#ifndef KILN_DIALECT_KILN_TRANSFORMS_PASSES_H
#define KILN_DIALECT_KILN_TRANSFORMS_PASSES_H

#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kiln {
#define GEN_PASS_DECL
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"

/// Module attribute: an array of ONNX node names (strings) that
/// --kiln-quantize-dynamic and --kiln-bf16-matmul leave in f32
/// (kiln-compile --keep-fp32).
inline constexpr const char *kKeepFp32Attr = "kiln.keep_fp32";
/// Module attribute: node names the accuracy budget search
/// (--max-accuracy-drop) keeps in f32; treated like kKeepFp32Attr, with
/// "accuracy budget" as the reason in the remark.
inline constexpr const char *kKeepFp32BudgetAttr = "kiln.keep_fp32_budget";
/// Marks a MatMul/Gemm/Conv that --kiln-fp16-compute converted.
inline constexpr const char *kFp16NodeAttr = "kiln.fp16";
/// Unit attribute on a depthwise kiln.conv2d whose input --precision=bf16
/// rounded to bf16 (through a kiln.cast pair that the lowering reads
/// through: the convolution reads the bf16 tensor).
inline constexpr const char *kBf16InputAttr = "kiln.bf16_input";
/// Module attribute for --kiln-quantize-static: an array of
/// `array<f32: lo, hi>`, the calibrated range of the input of each node
/// that --kiln-observe-quant-inputs observes, in its order.
inline constexpr const char *kActivationRangesAttr = "kiln.activation_ranges";
/// Module attribute --kiln-observe-quant-inputs sets: the ONNX node name of
/// each observed node, in index order ("?" for a node without one).
inline constexpr const char *kObservedNodesAttr = "kiln.observed_nodes";
/// Prefix of the names of the results --kiln-observe-quant-inputs adds.
inline constexpr const char *kObservePrefix = "kiln.observe:";
} // namespace mlir::kiln

#endif
