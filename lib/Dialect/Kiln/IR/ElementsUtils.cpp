//===- ElementsUtils.cpp - compile-time work on constant tensors -*- C++ -*-===//
//
// Weights are dense resources (bytes moved out of the protobuf); transposing
// one at compile time copies its bytes once into a new blob, so that layout
// changes never cost a run-time copy of a weight.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Kiln/IR/ElementsUtils.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/TypeUtilities.h"

#include <cstring>

using namespace mlir;

namespace {
/// The bytes of a non-splat dense or dense-resource attribute of a
/// byte-sized element type, checked against its type's size.
std::optional<ArrayRef<char>> rawBytes(ElementsAttr value) {
  auto type = cast<RankedTensorType>(value.getType());
  ArrayRef<char> data;
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    data = dense.getRawData();
  } else if (auto res = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    data = blob->getData();
  } else {
    return std::nullopt;
  }
  unsigned bits = type.getElementTypeBitWidth();
  if (bits % 8 || data.size() != size_t(type.getNumElements()) * (bits / 8))
    return std::nullopt;
  return data;
}

/// `value`'s elements laid out anew as `newType`: a splat is resized, else
/// `copy(out, in, eltBytes)` fills the new bytes from the old. The result is
/// dense when `keepDense` and `value` is dense, else a resource named `name`.
std::optional<ElementsAttr>
relayout(ElementsAttr value, RankedTensorType newType, bool keepDense,
         StringRef name,
         function_ref<void(MutableArrayRef<char>, ArrayRef<char>, size_t)> copy) {
  if (auto dense = dyn_cast<DenseElementsAttr>(value); dense && dense.isSplat())
    return ElementsAttr(dense.resizeSplat(newType));
  std::optional<ArrayRef<char>> data = rawBytes(value);
  if (!data)
    return std::nullopt;
  size_t eltBytes = newType.getElementTypeBitWidth() / 8;
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
      newType.getNumElements() * eltBytes, alignof(int64_t),
      /*dataIsMutable=*/true);
  copy(blob.getMutableData(), *data, eltBytes);
  if (keepDense && isa<DenseElementsAttr>(value))
    return ElementsAttr(
        DenseElementsAttr::getFromRawBuffer(newType, blob.getData()));
  return ElementsAttr(
      DenseResourceElementsAttr::get(newType, name, std::move(blob)));
}
} // namespace

std::optional<ElementsAttr>
mlir::kiln::permuteElements(ElementsAttr value, ArrayRef<int64_t> inShape,
                            ArrayRef<int64_t> perm, bool keepDense) {
  auto type = cast<RankedTensorType>(value.getType());
  Type elt = type.getElementType();
  if (!type.hasStaticShape() || !elt.isIntOrFloat() ||
      perm.size() != inShape.size() ||
      ShapedType::getNumElements(inShape) != type.getNumElements())
    return std::nullopt;
  int64_t rank = inShape.size();
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(inShape[p]);
  SmallVector<int64_t> inStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * inShape[d + 1];
  return relayout(
      value, RankedTensorType::get(shape, elt), keepDense, "transposed",
      [&](MutableArrayRef<char> out, ArrayRef<char> in, size_t eltBytes) {
        SmallVector<int64_t> idx(rank, 0);
        for (int64_t linear = 0, n = type.getNumElements(); linear < n;
             ++linear) {
          int64_t src = 0;
          for (int64_t d = 0; d < rank; ++d)
            src += idx[d] * inStrides[perm[d]];
          memcpy(out.data() + linear * eltBytes, in.data() + src * eltBytes,
                 eltBytes);
          for (int64_t d = rank - 1; d >= 0; --d) {
            if (++idx[d] < shape[d])
              break;
            idx[d] = 0;
          }
        }
      });
}

std::optional<ElementsAttr>
mlir::kiln::transposeElements(ElementsAttr value, ArrayRef<int64_t> perm,
                              bool keepDense) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return std::nullopt;
  return permuteElements(value, type.getShape(), perm, keepDense);
}

std::optional<ElementsAttr>
mlir::kiln::sliceInnermost(ElementsAttr value, int64_t begin, int64_t size,
                           bool keepDense) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() || type.getRank() == 0 ||
      !type.getElementType().isIntOrFloat())
    return std::nullopt;
  int64_t inner = type.getShape().back();
  if (begin < 0 || size <= 0 || begin + size > inner)
    return std::nullopt;
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = size;
  int64_t rows = type.getNumElements() / inner;
  return relayout(
      value, RankedTensorType::get(shape, type.getElementType()), keepDense,
      "sliced",
      [&](MutableArrayRef<char> out, ArrayRef<char> in, size_t eltBytes) {
        for (int64_t r = 0; r < rows; ++r)
          memcpy(out.data() + r * size * eltBytes,
                 in.data() + (r * inner + begin) * eltBytes, size * eltBytes);
      });
}

std::optional<ElementsAttr> mlir::kiln::sliceOutermost(ElementsAttr value,
                                                       int64_t begin,
                                                       int64_t size,
                                                       bool keepDense) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() || type.getRank() == 0 ||
      !type.getElementType().isIntOrFloat())
    return std::nullopt;
  int64_t outer = type.getShape().front();
  if (begin < 0 || size <= 0 || begin + size > outer)
    return std::nullopt;
  SmallVector<int64_t> shape(type.getShape());
  shape.front() = size;
  int64_t row = type.getNumElements() / outer;
  return relayout(
      value, RankedTensorType::get(shape, type.getElementType()), keepDense,
      "sliced",
      [&](MutableArrayRef<char> out, ArrayRef<char> in, size_t eltBytes) {
        memcpy(out.data(), in.data() + begin * row * eltBytes,
               size * row * eltBytes);
      });
}

std::optional<ElementsAttr>
mlir::kiln::reshapeElements(ElementsAttr value, ArrayRef<int64_t> shape) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return std::nullopt;
  auto newType = RankedTensorType::get(shape, type.getElementType());
  if (!newType.hasStaticShape() ||
      newType.getNumElements() != type.getNumElements())
    return std::nullopt;
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return ElementsAttr(dense.reshape(newType));
  if (auto res = dyn_cast<DenseResourceElementsAttr>(value))
    return ElementsAttr(
        DenseResourceElementsAttr::get(newType, res.getRawHandle()));
  return std::nullopt;
}

std::optional<ElementsAttr>
mlir::kiln::widenInt8Elements(ElementsAttr value, ArrayRef<int64_t> shape) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.getElementType().isInteger(8))
    return std::nullopt;
  auto newType =
      RankedTensorType::get(shape, IntegerType::get(type.getContext(), 16));
  if (!newType.hasStaticShape() ||
      newType.getNumElements() != type.getNumElements())
    return std::nullopt;
  if (auto dense = dyn_cast<DenseElementsAttr>(value); dense && dense.isSplat())
    return ElementsAttr(
        DenseElementsAttr::get(newType, dense.getSplatValue<APInt>().sext(16)));
  return relayout(value, newType, /*keepDense=*/false, "int16_weights",
                  [](MutableArrayRef<char> out, ArrayRef<char> in, size_t) {
                    for (size_t i = 0; i < in.size(); ++i) {
                      auto v = int16_t(int8_t(in[i]));
                      std::memcpy(out.data() + 2 * i, &v, 2);
                    }
                  });
}

std::optional<ElementsAttr>
mlir::kiln::multipliedInt32Elements(ElementsAttr value, int32_t factor) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.getElementType().isInteger(32))
    return std::nullopt;
  auto times = [&](uint32_t v) { return v * uint32_t(factor); };
  if (auto dense = dyn_cast<DenseElementsAttr>(value); dense && dense.isSplat())
    return ElementsAttr(DenseElementsAttr::get(
        type, APInt(32, times(uint32_t(
                            dense.getSplatValue<APInt>().getZExtValue())))));
  return relayout(value, type, /*keepDense=*/true, "kiln_scaled_i32",
                  [&](MutableArrayRef<char> out, ArrayRef<char> in, size_t) {
                    for (size_t i = 0; i + 4 <= in.size(); i += 4) {
                      uint32_t v;
                      std::memcpy(&v, in.data() + i, 4);
                      v = times(v);
                      std::memcpy(out.data() + i, &v, 4);
                    }
                  });
}

bool mlir::kiln::isNarrowType(Type t) {
  Type elt = getElementTypeOrSelf(t);
  if (auto i = dyn_cast<IntegerType>(elt))
    return i.getWidth() == 2 || i.getWidth() == 4;
  return isa<FloatType>(elt) && elt.getIntOrFloatBitWidth() <= 8;
}
