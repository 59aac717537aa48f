//===- RangeInProducer.h - a tensor's range from its producer's tiles -*- C++
//-*-===//
//
// DynamicQuantizeLinear's minimum and maximum of an activation, taken from
// the tiles of the loop that writes the activation instead of a pass of
// their own (--kiln-cpu-tile-and-vectorize).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CODEGEN_CPU_RANGEINPRODUCER_H
#define KILN_LIB_CODEGEN_CPU_RANGEINPRODUCER_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace mlir::kiln {

/// A float tensor's maximum and negated minimum in one pass (minMaxInBlocks
/// in LowerTensor.cpp; kMinMaxPartialsAttr): the blocked partials, their
/// combine into [2], and the pass over the elements after the blocks (null
/// when none are left).
struct MinMaxChain {
  linalg::GenericOp partials, combine, rest;
};

/// The chain whose blocked partials are `partials`, when it is one.
std::optional<MinMaxChain> minMaxChainOf(linalg::GenericOp partials);

/// Takes `chain`'s range from the tiles of the parallel loop (an scf.forall
/// of static bounds) that makes the reduced tensor, as each tile is
/// written: the loop gets one more shared output, [trips, 2, 16], and each
/// iteration reduces its tile (still in L1) into its row (laneRange); one
/// loop over those rows replaces the blocks' combine and the rest, and the
/// pass over the whole tensor goes. The result is the blocked pass's: the
/// same maximum and minimum, NaN when any element is one (up to the sign of
/// a zero, which kiln-cpu-cheap-float-ops gives up for every maximumf
/// already). Needs every element of the tensor written by exactly one
/// tile: one parallel_insert_slice of a static tile, trips x tile elements
/// in all (a forall's writes do not overlap), its trailing dimensions whole
/// (a contiguous tile, which reshapes without a copy). Fails with nothing
/// changed otherwise.
LogicalResult fuseMinMaxIntoProducer(RewriterBase &rewriter, MinMaxChain chain,
                                     int64_t vectorWidth);

} // namespace mlir::kiln

#endif // KILN_LIB_CODEGEN_CPU_RANGEINPRODUCER_H
