//===- ChannelInvariance.h - per-channel values of a generic body -*- C++ -*-===//
//
// Shared by the passes that rewrite an elementwise epilogue around its
// per-channel values (the AMX kernel's fused epilogue hoists them out of its
// row loop; --kiln-fold-requantization folds the scales into them; and
// --kiln-hoist-requantization reads the constants of a quantization).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CODEGEN_CPU_CHANNELINVARIANCE_H
#define KILN_LIB_CODEGEN_CPU_CHANNELINVARIANCE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::kiln {
/// Whether `v`, a value of `g`'s body, is the same for every element of a
/// channel (the innermost loop): built only from values defined outside the
/// body and from inputs indexed by the innermost loop alone (or by none).
/// `memo` caches the answers for one body.
bool isPerChannel(linalg::GenericOp g, Value v,
                  llvm::DenseMap<Value, bool> &memo);

/// The float constant `v` holds, if it is one.
std::optional<double> floatConstant(Value v);
} // namespace mlir::kiln

#endif // KILN_LIB_CODEGEN_CPU_CHANNELINVARIANCE_H
