//===- BatchVariants.h - one graph per batch size ----------------*- C++ -*-===//
#ifndef KILN_LIB_PIPELINE_BATCHVARIANTS_H
#define KILN_LIB_PIPELINE_BATCHVARIANTS_H

#include "kiln/Import/Onnx/ShapeBounds.h"
#include "kiln/Target/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::kiln {

/// --batch-sizes: one copy of the imported graph @main_graph per batch size,
/// @main_graph_b<N>, differing only in the leading dimension of the inputs;
/// every type after that is inferred again, and the weights stay one set of
/// constants. `batchSizes` must be sorted and unique. Returns the names of
/// the entry functions: ["main_graph"] when `batchSizes` is empty.
/// With `onlySymbolic`, only the inputs whose leading dimension is symbolic
/// (`?`) take the batch size; the others keep their shapes.
llvm::Expected<std::vector<std::string>>
makeBatchVariants(ModuleOp module, const std::vector<int64_t> &batchSizes,
                  bool onlySymbolic = false);

/// Every variant's outputs must lead with its batch size.
llvm::Error checkBatchVariantOutputs(ModuleOp module,
                                     const std::vector<std::string> &entryNames,
                                     const std::vector<int64_t> &batchSizes,
                                     const std::vector<TensorDesc> &outputs);

/// A symbolic leading dimension given a range (docs/shapes.md): the model
/// is compiled for the batch sizes `variants` (ascending, the first 1) and
/// runs any batch in [min, max] as those over consecutive slices, which is
/// right because the probe proved the samples independent.
struct SymbolicBatch {
  std::string name; ///< the dim_param, or INPUT[0] for an unnamed one
  int64_t min = 0, max = 0;
  std::vector<bool> batchedInputs; ///< per graph input: leads with the symbol
  std::vector<int64_t> variants;
};

/// Checks that the dimensions the importer left symbolic (`dims`) are one
/// symbol at axis 0 with one range, and picks the variants: 1, the
/// --batch-sizes in range, and (without --batch-sizes) min(8, max).
llvm::Expected<SymbolicBatch>
planSymbolicBatch(ModuleOp module, const std::vector<SymbolicDim> &dims,
                  const std::vector<int64_t> &batchSizes);

struct SymbolicShapes;

/// Builds a copy of the graph at a probe batch size (a prime that is no other
/// size in the model) and runs kiln-verify-batch-independence on it. Errors
/// name the nodes that mix samples. With `others`, the graph runs at run-time
/// sizes and `batch` is its symbol 0: the probe keeps the other symbols of
/// `others` at run-time sizes.
llvm::Error proveBatchIndependence(ModuleOp module,
                                   const SymbolicBatch &batch,
                                   uint64_t maxTensorBytes,
                                   const SymbolicShapes *others = nullptr);

} // namespace mlir::kiln

#endif
