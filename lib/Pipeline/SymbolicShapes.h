//===- SymbolicShapes.h - one graph at run-time sizes -------------*- C++ -*-===//
//
// A range for a symbolic dimension that is not an independent batch (a
// sequence length, an image side, or a batch the graph mixes) compiles one
// graph whose shapes stay dynamic to the end: --kiln-bind-symbolic-shapes
// gives it the sizes at run time and the arena is planned at the maxima
// (docs/shapes.md).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_PIPELINE_SYMBOLICSHAPES_H
#define KILN_LIB_PIPELINE_SYMBOLICSHAPES_H

#include "kiln/Import/Onnx/ShapeBounds.h"
#include "kiln/Target/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace mlir::kiln {

struct SymbolicShapes {
  /// One per dim_param (and one per unnamed dimension), in input order.
  std::vector<ModelDesc::Symbol> symbols;
  /// Per graph input, per axis: its symbol, or -1.
  std::vector<std::vector<int32_t>> inputAxes;
  /// Symbol 0 is an independent batch: it leads every input and output, no
  /// other axis carries it, and the graph keeps its samples apart (proven on
  /// a probe), so callers may concatenate requests along it.
  bool independentBatch = false;
};

/// Whether symbol 0 of `shapes` leads every input and appears nowhere else:
/// the shape of a batch (the graph must still be proven to keep it apart).
bool leadsLikeBatch(const SymbolicShapes &shapes);

/// Groups the symbolic input dimensions `dims` (each given a range) of
/// `graph` into symbols; the inputs sharing a dim_param share one, which
/// must have one range.
llvm::Expected<SymbolicShapes>
planSymbolicShapes(func::FuncOp graph, const std::vector<SymbolicDim> &dims);

/// Records the symbols on `graph` for --kiln-bind-symbolic-shapes.
void markSymbolicShapes(func::FuncOp graph, const SymbolicShapes &shapes);

} // namespace mlir::kiln

#endif
