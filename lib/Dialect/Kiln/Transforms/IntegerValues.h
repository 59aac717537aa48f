//===- IntegerValues.h - what is known of integer tensors -------*- C++ -*-===//
//
// The passes that move imported integer products onto other kernels
// (kiln-integer-products-in-f32, kiln-integer-products-on-vnni) need the
// same facts about i32 operands: the range their elements can take, walked
// back to casts from narrow integer types and to constants, and the
// elements of those computed from constants only.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_DIALECT_KILN_TRANSFORMS_INTEGERVALUES_H
#define KILN_LIB_DIALECT_KILN_TRANSFORMS_INTEGERVALUES_H

#include "kiln/Dialect/Kiln/IR/KilnDialect.h"

#include "mlir/IR/TypeUtilities.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

namespace mlir::kiln::integers {

struct Interval {
  double lo, hi;
  double maxAbs() const { return std::max(std::fabs(lo), std::fabs(hi)); }
};

/// The values an integer type holds (i1 as 0/1; signless as signed), for
/// types of 16 bits or fewer.
std::optional<Interval> typeRange(Type t);

/// The integer elements of a constant (dense, or a weights resource of 8,
/// 16 or 32-bit integers or of 4 and 2-bit ones a byte each), row-major.
std::optional<std::vector<double>> readInts(ConstantOp c);

/// Bounds of an i32 tensor built from narrow integers: casts from types of
/// 16 bits or fewer, integer constants, sums and differences, and ops that
/// only move elements. Nothing else is trusted.
std::optional<Interval> intRange(Value v, unsigned depth = 0);

/// The elements of an integer value computed from constants only (casts
/// between integer types, sums and differences of operands that broadcast,
/// reshapes, transposes), row-major; nullopt otherwise.
std::optional<std::vector<double>> evalInts(Value v, unsigned depth = 0);

/// For each element of `shape` (row-major), the index of the element of
/// `from` broadcast to it (numpy's rules: `from` aligned to the last
/// dimensions, its dimensions 1 or equal); nothing if it does not broadcast.
std::optional<std::vector<int64_t>> broadcastIndices(ArrayRef<int64_t> shape,
                                                     ArrayRef<int64_t> from);

/// For each element of the transpose by `perm` of a tensor of `shape`
/// (row-major), the index of the element of the input it holds.
std::vector<int64_t> transposedIndices(ArrayRef<int64_t> shape,
                                       ArrayRef<int64_t> perm);

/// The kiln.conv2d and kiln.matmul ops under `root`, in walk order (to
/// rewrite while walking no more).
SmallVector<Operation *> products(Operation *root);

/// What kiln.integer_conv2d / integer_depthwise_conv2d / integer_matmul
/// take from an i32
/// product whose left operand is `[transpose](cast(x : ui8) [- zp])`.
struct VnniProduct {
  Value input;                 ///< x, uint8
  Value zeroPoint;             ///< one element in [0, 255], or null (0)
  SmallVector<int64_t> perm;   ///< the transpose between, if any
  std::vector<double> weights; ///< the right operand, row-major, int8 range
  bool depthwise = false;      ///< a conv2d with one group per channel
};

/// The longest reduction whose i32 sums cannot overflow (255 * 128 * K).
constexpr int64_t kMaxVnniReduction = 65536;

/// `op` (an i32 kiln.conv2d of group 1, a depthwise one on a multiple of 4
/// channels, or a kiln.matmul with a 2-D right operand; static shapes) as
/// a uint8 x int8 product, or nothing.
std::optional<VnniProduct> matchVnniProduct(Operation *op);

} // namespace mlir::kiln::integers

#endif
