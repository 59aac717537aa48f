//===- ModelValidation.h - checks before a model is trusted -----*- C++ -*-===//
//
// A model file is untrusted input. ONNX's shape inference assumes a valid
// model (an invalid one can crash it), and the importer assumes every value
// is assigned once. validateModel checks what they rely on first and reports
// each problem with the node, op type and opset (docs/security.md).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_IMPORT_ONNX_MODELVALIDATION_H
#define KILN_LIB_IMPORT_ONNX_MODELVALIDATION_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>

namespace mlir::kiln {

/// The newest opset of the default ONNX domain Kiln knows of (ONNX 1.23).
constexpr int64_t kNewestOnnxOpset = 28;

/// Opset imports, graph structure (one assignment per value, unique graph
/// outputs, op types present), model-local functions (no recursion) and, for
/// the default domain at opsets ONNX's schema registry knows, attribute
/// names and types; window attributes (strides, dilations, kernel_shape)
/// positive. Sorts nodes that are out of topological order (reporting it as
/// a remark) and refuses cycles. May add a Conv's kernel_shape from its constant weight (the
/// value ONNX defines as the default) so that shape inference never reads
/// past an input's rank.
LogicalResult validateModel(MLIRContext &ctx, ::onnx::ModelProto &model);

/// The byte size of `count` elements of `elementBytes` each from the
/// dimensions `dims`, or nullopt when a dimension is negative or the product
/// does not fit in 63 bits.
std::optional<int64_t> checkedTensorBytes(ArrayRef<int64_t> dims,
                                          int64_t elementBytes);

} // namespace mlir::kiln

#endif
