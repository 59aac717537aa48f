//===- OnnxImporter.h - ONNX protobuf to the onnx dialect -------*- C++ -*-===//
#ifndef KILN_IMPORT_ONNX_ONNXIMPORTER_H
#define KILN_IMPORT_ONNX_ONNXIMPORTER_H

#include "kiln/Import/Onnx/ShapeBounds.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mlir::kiln {

struct ImportOptions {
  /// Shapes for inputs with symbolic or unknown dimensions, a size or a
  /// range per axis (--input-shape).
  std::vector<InputShape> inputShapes;
  /// Sizes or ranges of the graph's dim_params (--dim); an --input-shape
  /// that gives a dim_param one size gives it to every input that uses it.
  std::vector<SymbolBound> dims;
  /// Keep symbolic dimensions (as `?`, their dim_params in onnx.dim_params)
  /// when no size is given, or a range is, instead of failing.
  bool allowDynamicInputs = false;
  /// Keep symbolic dimensions that have a range (min < max) as `?`; a
  /// dimension with no size or range still fails.
  bool allowRangedInputs = false;
  /// With allowDynamicInputs or allowRangedInputs: filled with every input
  /// dimension left symbolic, in input and axis order.
  std::vector<SymbolicDim> *symbolicDims = nullptr;
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
