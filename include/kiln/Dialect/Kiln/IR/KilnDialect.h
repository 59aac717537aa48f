//===- KilnDialect.h - the Kiln graph dialect -------------------*- C++ -*-===//
#ifndef KILN_DIALECT_KILN_IR_KILNDIALECT_H
#define KILN_DIALECT_KILN_IR_KILNDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "kiln/Dialect/Kiln/IR/KilnOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "kiln/Dialect/Kiln/IR/KilnOps.h.inc"

namespace mlir::kiln {
/// Two tensor types are compatible when they have the same element type and
/// rank and agree on every dimension that both know.
bool areCompatibleTensorTypes(TypeRange lhs, TypeRange rhs);

/// Fails `op` (data movement: reshapes, broadcasts) unless `in` and `out`
/// have one element type.
LogicalResult verifySameElementType(Operation *op, RankedTensorType in,
                                    RankedTensorType out);

/// ONNX multidirectional (numpy) broadcast of two static shapes; failure when
/// the shapes do not broadcast.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> lhs,
                                                ArrayRef<int64_t> rhs);

/// When a reshape from `in` to `out` only removes or adds dimensions of
/// static size 1 (the other dimensions, static or run-time, in the same
/// order with the same static sizes): for each dimension of `out`, the
/// dimension of `in` it is (-1 for an added 1). A kiln.reshape with several
/// run-time dimensions of this form keeps each one's size in that order.
std::optional<SmallVector<int64_t>> unitDimsReshape(RankedTensorType in,
                                                    RankedTensorType out);

/// The K of a product on AMX tiles, padded: `group` values of K share a
/// 32-bit lane (2 for bf16, 4 for int8) and a tile row holds 16 lanes. A K
/// that fits in one row is padded to whole lanes only (the kernel takes one
/// narrower step); a longer K to whole rows.
inline int64_t amxPaddedK(int64_t k, int64_t group) {
  int64_t align = k <= 16 * group ? group : 16 * group;
  return (k + align - 1) / align * align;
}
} // namespace mlir::kiln

#endif
