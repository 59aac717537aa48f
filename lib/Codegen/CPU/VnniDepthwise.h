//===- VnniDepthwise.h - the int8 depthwise tile kernel ---------*- C++ -*-===//
//
// Used by --kiln-cpu-tile-and-vectorize for the generics marked
// kiln.int8_depthwise (see kiln/Conversion/Passes.h): their geometry, which
// the tile sizes follow, and the vpdpbusd kernel that replaces each tile
// instead of linalg's vectorizer. The u8 x s8 product body is shared with
// --kiln-cpu-vnni-matmul.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CODEGEN_CPU_VNNIDEPTHWISE_H
#define KILN_LIB_CODEGEN_CPU_VNNIDEPTHWISE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
/// The geometry of a generic marked kiln.int8_depthwise.
struct Int8Depthwise {
  int64_t kernelRows;    // KH: kernel rows past it have zero weights
  int64_t strides[2];    // (rows, columns)
  int64_t dilations[2];
};

/// Whether `op`'s body is one op of each of `Ops`, in order, then its yield.
template <typename... Ops> bool bodyIs(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  auto it = body.begin();
  auto next = [&]() -> Operation * {
    return it == body.end() ? nullptr : &*it++;
  };
  return (isa_and_nonnull<Ops>(next()) && ...) &&
         isa_and_nonnull<linalg::YieldOp>(next());
}

/// Whether `op`'s body is acc + zext(u8) * sext(s8) in i32, the product
/// both VNNI kernels (matmul and depthwise) compute.
bool isU8S8ProductBody(linalg::GenericOp op);

/// Channels per vector of the kernel for `channels` channels: 16, 8 or 4
/// (vpdpbusd on 512, 256 or 128 bits), 0 when none divides them.
inline int64_t int8DepthwiseLanes(int64_t channels) {
  return channels % 16 == 0 ? 16
         : channels % 8 == 0 ? 8
         : channels % 4 == 0 ? 4
                             : 0;
}

/// `op`'s geometry when it is a marked product with the expected maps and
/// body.
std::optional<Int8Depthwise> matchInt8Depthwise(linalg::GenericOp op);

/// Replaces `tile`, a marked product whose loops are tile-sized (static,
/// at most 16 accumulator registers), with its vpdpbusd kernel; fails,
/// changing nothing, when it does not fit.
LogicalResult replaceInt8DepthwiseTile(RewriterBase &rewriter,
                                       linalg::GenericOp tile);
} // namespace mlir::kiln

#endif // KILN_LIB_CODEGEN_CPU_VNNIDEPTHWISE_H
