//===- BatchVariants.h - one graph per batch size ----------------*- C++ -*-===//
#ifndef KILN_LIB_PIPELINE_BATCHVARIANTS_H
#define KILN_LIB_PIPELINE_BATCHVARIANTS_H

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
llvm::Expected<std::vector<std::string>>
makeBatchVariants(ModuleOp module, const std::vector<int64_t> &batchSizes);

/// Every variant's outputs must lead with its batch size.
llvm::Error checkBatchVariantOutputs(ModuleOp module,
                                     const std::vector<std::string> &entryNames,
                                     const std::vector<int64_t> &batchSizes,
                                     const std::vector<TensorDesc> &outputs);

} // namespace mlir::kiln

#endif
