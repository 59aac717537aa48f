//===- ShapeBounds.h - sizes given for symbolic input dimensions -*- C++ -*-===//
//
// The user gives each symbolic or unknown input dimension one size or a
// range of sizes: per input (--input-shape x=1x3x32..960x32..960) or per
// ONNX dim_param shared by several inputs (--dim seq=1..512). The importer
// applies them (OnnxImporter.cpp); docs/shapes.md describes the rules.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IMPORT_ONNX_SHAPEBOUNDS_H
#define KILN_IMPORT_ONNX_SHAPEBOUNDS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::kiln {

/// One size (min == max) or the sizes min..max a dimension may take.
struct DimBound {
  int64_t min = 0;
  int64_t max = 0;

  static DimBound exactly(int64_t size) { return {size, size}; }
  bool isStatic() const { return min == max; }
  bool contains(int64_t size) const { return min <= size && size <= max; }
  bool operator==(const DimBound &o) const {
    return min == o.min && max == o.max;
  }
};

/// An input's whole shape, one bound per axis.
using InputShape = std::pair<std::string, std::vector<DimBound>>;
/// A dim_param and its bound.
using SymbolBound = std::pair<std::string, DimBound>;

/// A dimension of a graph input that stays symbolic after import.
struct SymbolicDim {
  std::string input;
  int64_t axis = 0;
  std::string dimParam;          ///< "" for an unknown dimension
  std::optional<DimBound> bound; ///< the range given, if any
  std::vector<int64_t> inputShape; ///< the input's sizes, -1 where symbolic
  /// The one size a node's weight gives it (--check), and that node.
  std::optional<int64_t> fixedSize;
  std::string fixedBy;
  /// The dim_param in quotes, or INPUT[axis] for an unnamed dimension.
  std::string label() const {
    return dimParam.empty() ? input + "[" + std::to_string(axis) + "]"
                            : "'" + dimParam + "'";
  }
};

/// "7" or "32..960".
std::string toString(DimBound bound);
/// "1x3x32..960x32..960".
std::string toString(const std::vector<DimBound> &shape);

/// "7" or "MIN..MAX" with 0 <= MIN <= MAX.
llvm::Expected<DimBound> parseDimBound(llvm::StringRef text);
/// "NAME=D0xD1x..." where each Di is a size or a range (--input-shape).
llvm::Expected<InputShape> parseInputShape(llvm::StringRef text);
/// "SYMBOL=N" or "SYMBOL=MIN..MAX" (--dim).
llvm::Expected<SymbolBound> parseSymbolBound(llvm::StringRef text);

} // namespace mlir::kiln

#endif
