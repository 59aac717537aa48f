//===- OnnxImporter.h - ONNX protobuf to the onnx dialect -------*- C++ -*-===//
#ifndef KILN_IMPORT_ONNX_ONNXIMPORTER_H
#define KILN_IMPORT_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mlir::kiln {

struct ImportOptions {
  /// Static shapes for inputs with symbolic or unknown dimensions.
  std::vector<std::pair<std::string, std::vector<int64_t>>> inputShapes;
  /// Accept inputs with symbolic dimensions (kept as `?`) instead of failing.
  bool allowDynamicInputs = false;
};

/// Reads `path` (binary ModelProto, or protobuf text format when the name ends
/// in .onnxtxt / .textproto) and builds a module with one function, @main_graph,
/// holding one `onnx.<OpType>` op per node. Errors are emitted as diagnostics
/// on `context` and yield a null module; nothing throws.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxFile(mlir::MLIRContext &context,
                                                 const std::string &path,
                                                 const ImportOptions &options);

/// The module's attributes are named in OnnxDialect (onnx.*) and in
/// kiln/Dialect/Kiln/IR/Contract.h (kiln.model_hash).

} // namespace mlir::kiln

#endif
