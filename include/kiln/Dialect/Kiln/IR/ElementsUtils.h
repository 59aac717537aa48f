//===- ElementsUtils.h - compile-time work on constant tensors --*- C++ -*-===//
#ifndef KILN_DIALECT_KILN_IR_ELEMENTSUTILS_H
#define KILN_DIALECT_KILN_IR_ELEMENTSUTILS_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/Types.h"

#include <optional>

namespace mlir::kiln {
/// The elements of `value`, read row-major as a tensor of `shape` (same
/// number of elements), then transposed by `perm` (result dimension i is
/// dimension perm[i] of `shape`). Works on dense and dense-resource
/// (weights) attributes of byte-sized element types. The result is a new
/// resource blob owned by MLIR, or with `keepDense` a dense attribute when
/// `value` is one (small constants stay printable and foldable).
/// std::nullopt when the value cannot be read.
std::optional<ElementsAttr> permuteElements(ElementsAttr value,
                                            ArrayRef<int64_t> shape,
                                            ArrayRef<int64_t> perm,
                                            bool keepDense = false);

/// permuteElements with `value`'s own shape.
std::optional<ElementsAttr> transposeElements(ElementsAttr value,
                                              ArrayRef<int64_t> perm,
                                              bool keepDense = false);
/// Elements [begin, begin + size) of the innermost dimension of `value`,
/// every other dimension whole: a new resource blob, or with `keepDense` a
/// dense attribute when `value` is one. std::nullopt when the value cannot
/// be read.
std::optional<ElementsAttr> sliceInnermost(ElementsAttr value, int64_t begin,
                                           int64_t size, bool keepDense = false);

/// Rows [begin, begin + size) of the outermost dimension of `value` (one
/// contiguous run of its bytes), as sliceInnermost returns them.
std::optional<ElementsAttr> sliceOutermost(ElementsAttr value, int64_t begin,
                                           int64_t size,
                                           bool keepDense = false);

/// `value` with another shape of as many elements (the same bytes).
std::optional<ElementsAttr> reshapeElements(ElementsAttr value,
                                            ArrayRef<int64_t> shape);

/// The i8 elements of `value` sign-extended to i16, in `shape` (as many
/// elements, row-major): a new resource blob. std::nullopt when the value
/// cannot be read or is not of i8.
std::optional<ElementsAttr> widenInt8Elements(ElementsAttr value,
                                              ArrayRef<int64_t> shape);

/// The i32 elements of `value` each times `factor`, wrapping as i32
/// arithmetic does: a splat stays one, dense stays dense, a resource becomes
/// a new blob. std::nullopt when the value cannot be read or is not of i32.
std::optional<ElementsAttr> multipliedInt32Elements(ElementsAttr value,
                                                    int32_t factor);

/// Whether `t` (or its element type) is one of ONNX's narrow types: the
/// float8 formats (f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ, f8E8M0FNU),
/// f4E2M1FN and the 4-bit and 2-bit integers. Kiln stores them a byte each,
/// casts, quantizes and moves them, and computes on nothing else of them.
bool isNarrowType(Type t);
} // namespace mlir::kiln

#endif
