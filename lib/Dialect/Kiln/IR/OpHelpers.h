//===- OpHelpers.h - helpers shared by the kiln op definitions --*- C++ -*-===//
//
// Private to lib/Dialect/Kiln/IR: what KilnOps.cpp and KilnIndexingOps.cpp
// both need to state shape rules and their diagnostics.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_DIALECT_KILN_IR_OPHELPERS_H
#define KILN_LIB_DIALECT_KILN_IR_OPHELPERS_H

#include "kiln/Dialect/Kiln/IR/KilnDialect.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::kiln::detail {

inline constexpr int64_t kDyn = ShapedType::kDynamic;

/// Ranked operand type; the ODS constraints guarantee rankedness.
inline RankedTensorType rankedType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// "[2,?,4]" for diagnostics.
inline std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleave(
      shape, os, [&](int64_t d) { os << (d == kDyn ? "?" : std::to_string(d)); },
      ",");
  os << "]";
  return s;
}

} // namespace mlir::kiln::detail

/// Ops whose inferred result types may be refined by the declared ones.
#define KILN_COMPATIBLE(OP)                                                    \
  bool OP::isCompatibleReturnTypes(TypeRange l, TypeRange r) {                 \
    return areCompatibleTensorTypes(l, r);                                     \
  }

#endif
