//===- ShapeBounds.cpp - parsing sizes for symbolic dimensions --*- C++ -*-===//
#include "kiln/Import/Onnx/ShapeBounds.h"

#include "llvm/ADT/SmallVector.h"

using namespace mlir::kiln;
using llvm::Expected;
using llvm::StringRef;

static llvm::Error bad(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string mlir::kiln::toString(DimBound bound) {
  if (bound.isStatic())
    return std::to_string(bound.min);
  return std::to_string(bound.min) + ".." + std::to_string(bound.max);
}

std::string mlir::kiln::toString(const std::vector<DimBound> &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + toString(shape[i]);
  return s;
}

Expected<DimBound> mlir::kiln::parseDimBound(StringRef text) {
  auto [lo, hi] = text.split("..");
  bool range = text.contains("..");
  DimBound bound;
  // getAsInteger rejects signs other than '-', spaces and overflow.
  if (lo.empty() || lo.getAsInteger(10, bound.min) || bound.min < 0)
    return bad("'" + text + "' is not a size (0 or more) or a range MIN..MAX");
  bound.max = bound.min;
  if (range && (hi.empty() || hi.getAsInteger(10, bound.max)))
    return bad("'" + text + "' is not a size (0 or more) or a range MIN..MAX");
  if (bound.max < bound.min)
    return bad("the range '" + text + "' is empty (MAX is below MIN)");
  return bound;
}

Expected<InputShape> mlir::kiln::parseInputShape(StringRef text) {
  auto [name, dims] = text.rsplit('=');
  const char *expected = "; expected NAME=D0xD1x... such as input=1x3x224x224, "
                         "where a dimension may be a range MIN..MAX";
  if (!text.contains('=') || name.empty() || dims.empty())
    return bad("bad --input-shape '" + text + "'" + expected);
  llvm::SmallVector<StringRef> parts;
  dims.split(parts, 'x');
  InputShape shape{name.str(), {}};
  for (StringRef p : parts) {
    Expected<DimBound> bound = parseDimBound(p);
    if (!bound) {
      llvm::consumeError(bound.takeError());
      return bad("bad --input-shape '" + text + "'" + expected);
    }
    shape.second.push_back(*bound);
  }
  return shape;
}

Expected<SymbolBound> mlir::kiln::parseSymbolBound(StringRef text) {
  auto [name, size] = text.rsplit('=');
  if (!text.contains('=') || name.empty() || size.empty())
    return bad("bad --dim '" + text +
               "'; expected SYMBOL=N or SYMBOL=MIN..MAX such as batch=1..32");
  Expected<DimBound> bound = parseDimBound(size);
  if (!bound)
    return bad("bad --dim '" + text + "': " + toString(bound.takeError()));
  return SymbolBound{name.str(), *bound};
}
