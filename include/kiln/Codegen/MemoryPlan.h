//===- MemoryPlan.h - static offsets for every buffer of one arena -*- C++ -*-===//
//
// The planner works on a list of buffers with inclusive lifetimes
// [first, last] (step indices); two buffers may share bytes only if their
// lifetimes are disjoint. It has no MLIR dependency: kiln-plan and the
// arena pass both call it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_MEMORYPLAN_H
#define KILN_CODEGEN_MEMORYPLAN_H

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::kiln::plan {

struct Buffer {
  std::string id;
  uint64_t size = 0;  ///< bytes (aligned up by the planner)
  int64_t first = 0;  ///< first step the buffer is live (inclusive)
  int64_t last = 0;   ///< last step the buffer is live (inclusive)
};

struct PlanOptions {
  uint64_t alignment = 64;
  /// Bounded improvement search after greedy-by-size (0 disables it).
  unsigned searchIterations = 2000;
};

struct Plan {
  uint64_t arenaBytes = 0;
  uint64_t lowerBoundBytes = 0;
  std::vector<uint64_t> offsets; ///< one per input buffer, same order
};

/// The largest sum of aligned sizes live at any one step.
uint64_t lowerBound(const std::vector<Buffer> &buffers, uint64_t alignment);

/// Offsets for every buffer such that buffers with overlapping lifetimes do
/// not overlap in memory, every offset is aligned, and the arena is as small
/// as the planner can make it (never below lowerBound).
Plan planArena(const std::vector<Buffer> &buffers, const PlanOptions &options);

/// Checks a plan: alignment, bounds and no overlap of live buffers. Returns
/// an empty string when valid, else what is wrong.
std::string validatePlan(const std::vector<Buffer> &buffers, const Plan &plan,
                         uint64_t alignment);

} // namespace mlir::kiln::plan

#endif
