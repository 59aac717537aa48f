//===- MemoryPlanTest.cpp - the arena planner on hand-made buffer lists ---===//
//
// Edge cases with known answers, validatePlan's diagnostics, and properties
// that must hold on any input (valid plans, never below the lower bound,
// never worse than greedy by size, deterministic) checked on random lists.
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/MemoryPlan.h"

#include <gtest/gtest.h>

#include <random>

using namespace mlir::kiln::plan;

namespace {

Plan plan(const std::vector<Buffer> &buffers, uint64_t alignment = 64,
          unsigned searchIterations = PlanOptions().searchIterations) {
  PlanOptions options;
  options.alignment = alignment;
  options.searchIterations = searchIterations;
  return planArena(buffers, options);
}

/// Plans, validates and checks the bound; returns the plan.
Plan checkedPlan(const std::vector<Buffer> &buffers, uint64_t alignment = 64) {
  Plan p = plan(buffers, alignment);
  EXPECT_EQ(validatePlan(buffers, p, alignment), "");
  EXPECT_EQ(p.lowerBoundBytes, lowerBound(buffers, alignment));
  EXPECT_GE(p.arenaBytes, p.lowerBoundBytes);
  return p;
}

TEST(MemoryPlan, Empty) {
  Plan p = checkedPlan({});
  EXPECT_EQ(p.arenaBytes, 0u);
  EXPECT_EQ(p.lowerBoundBytes, 0u);
  EXPECT_TRUE(p.offsets.empty());
}

TEST(MemoryPlan, OneBuffer) {
  Plan p = checkedPlan({{"a", 100, 3, 7}});
  EXPECT_EQ(p.arenaBytes, 128u); // 100 rounded up to 64
  EXPECT_EQ(p.lowerBoundBytes, 128u);
  EXPECT_EQ(p.offsets, std::vector<uint64_t>{0});
}

TEST(MemoryPlan, ZeroSizeBuffersTakeNoBytes) {
  Plan p = checkedPlan({{"z0", 0, 0, 9}, {"a", 64, 0, 9}, {"z1", 0, 2, 3}});
  EXPECT_EQ(p.arenaBytes, 64u);
  EXPECT_EQ(p.offsets[0], 0u);
  EXPECT_EQ(p.offsets[2], 0u);

  Plan none = checkedPlan({{"z0", 0, 0, 1}, {"z1", 0, 0, 1}});
  EXPECT_EQ(none.arenaBytes, 0u);
  EXPECT_EQ(none.offsets, (std::vector<uint64_t>{0, 0}));
}

TEST(MemoryPlan, AllOverlappingTakeTheSum) {
  std::vector<Buffer> buffers;
  uint64_t sum = 0;
  for (int i = 0; i < 20; ++i) {
    buffers.push_back(
        {"b" + std::to_string(i), uint64_t(64 * (i % 7 + 1)), i, 100 + i});
    sum += 64 * (i % 7 + 1);
  }
  Plan p = checkedPlan(buffers);
  EXPECT_EQ(p.lowerBoundBytes, sum);
  EXPECT_EQ(p.arenaBytes, sum);
}

TEST(MemoryPlan, AllDisjointTakeTheLargest) {
  std::vector<Buffer> buffers;
  for (int i = 0; i < 20; ++i)
    buffers.push_back({"b" + std::to_string(i), uint64_t(1000 * (i % 9 + 1)),
                       2 * i, 2 * i + 1});
  Plan p = checkedPlan(buffers);
  EXPECT_EQ(p.arenaBytes, 9024u); // 9000 rounded up to 64
  for (uint64_t offset : p.offsets)
    EXPECT_EQ(offset, 0u);
}

TEST(MemoryPlan, LifetimesAreInclusive) {
  // [0, 1] and [1, 2] share step 1; [0, 1] and [2, 3] share nothing.
  EXPECT_EQ(checkedPlan({{"a", 64, 0, 1}, {"b", 64, 1, 2}}).arenaBytes, 128u);
  EXPECT_EQ(checkedPlan({{"a", 64, 0, 1}, {"b", 64, 2, 3}}).arenaBytes, 64u);
  EXPECT_EQ(checkedPlan({{"a", 64, 5, 5}, {"b", 64, 5, 5}}).arenaBytes, 128u);
}

TEST(MemoryPlan, AlignmentRounding) {
  std::vector<Buffer> buffers = {
      {"a", 1, 0, 9}, {"b", 63, 0, 9}, {"c", 64, 0, 9}, {"d", 65, 0, 9}};
  EXPECT_EQ(checkedPlan(buffers, 64).arenaBytes, 64u + 64 + 64 + 128);
  EXPECT_EQ(checkedPlan(buffers, 1).arenaBytes, 1u + 63 + 64 + 65);
  EXPECT_EQ(checkedPlan(buffers, 16).arenaBytes, 16u + 64 + 64 + 80);
  Plan page = checkedPlan(buffers, 4096);
  EXPECT_EQ(page.arenaBytes, 4u * 4096);
  for (uint64_t offset : page.offsets)
    EXPECT_EQ(offset % 4096, 0u);
  EXPECT_EQ(lowerBound(buffers, 128), 4u * 128);
}

TEST(MemoryPlan, LowerBoundIsThePeakLiveSum) {
  // Live sums by step: 0:100 1:300 2:500 3:600 4:400 5:0 6:50
  std::vector<Buffer> buffers = {{"a", 100, 0, 2},
                                 {"b", 200, 1, 4},
                                 {"c", 200, 2, 3},
                                 {"d", 200, 3, 4},
                                 {"e", 50, 6, 6}};
  EXPECT_EQ(lowerBound(buffers, 1), 600u);
  EXPECT_EQ(checkedPlan(buffers, 1).arenaBytes, 600u);
}

TEST(MemoryPlan, NegativeAndSparseSteps) {
  std::vector<Buffer> buffers = {{"a", 64, -1000000000000, -5},
                                 {"b", 64, -5, 7},
                                 {"c", 128, 8, 1000000000000},
                                 {"d", 64, 1000000000000, 1000000000000}};
  Plan p = checkedPlan(buffers);
  EXPECT_EQ(p.lowerBoundBytes, 192u);
  EXPECT_EQ(p.arenaBytes, 192u);
}

TEST(MemoryPlan, ReusesTheBytesOfDeadBuffers) {
  // A chain: each buffer dies when the next-but-one is made, so two slots
  // suffice whatever the sizes' order.
  std::vector<Buffer> buffers;
  for (int i = 0; i < 50; ++i)
    buffers.push_back({"t" + std::to_string(i), 4096, i, i + 1});
  Plan p = checkedPlan(buffers);
  EXPECT_EQ(p.arenaBytes, 2u * 4096);
}

TEST(MemoryPlan, ReversedLifetimeIsPlannedAsOneStep) {
  // kiln-plan rejects it; the library has no error channel and must not
  // crash. validatePlan reports it.
  std::vector<Buffer> buffers = {{"a", 64, 5, 2}, {"b", 64, 5, 5}};
  Plan p = plan(buffers);
  EXPECT_EQ(p.arenaBytes, 128u);
  EXPECT_NE(validatePlan(buffers, p, 64).find("ends (step 2) before"),
            std::string::npos);
}

TEST(MemoryPlan, ZeroAlignmentMeansBytes) {
  Plan p = plan({{"a", 3, 0, 1}, {"b", 5, 0, 1}}, 0);
  EXPECT_EQ(p.arenaBytes, 8u);
}

TEST(MemoryPlan, SearchBeatsGreedyBySize) {
  // The smallest kind of case where greedy by size misses the lower bound
  // (1344 against 1280 bytes) and another order reaches it; found by a
  // random search over six-buffer lists.
  std::vector<Buffer> buffers = {{"a", 320, 1, 3}, {"b", 384, 2, 3},
                                 {"c", 128, 3, 4}, {"d", 448, 0, 1},
                                 {"e", 256, 2, 3}, {"f", 320, 2, 2}};
  Plan greedy = plan(buffers, 64, 0);
  EXPECT_EQ(validatePlan(buffers, greedy, 64), "");
  EXPECT_EQ(greedy.arenaBytes, 1344u);
  Plan searched = checkedPlan(buffers);
  EXPECT_EQ(searched.lowerBoundBytes, 1280u);
  EXPECT_EQ(searched.arenaBytes, 1280u);
}

// --- validatePlan -----------------------------------------------------------

TEST(ValidatePlan, AcceptsSharedBytesOfDisjointLifetimes) {
  std::vector<Buffer> buffers = {{"a", 64, 0, 1}, {"b", 64, 2, 3}};
  Plan p{64, 64, {0, 0}};
  EXPECT_EQ(validatePlan(buffers, p, 64), "");
}

TEST(ValidatePlan, RejectsLiveBuffersSharingBytes) {
  std::vector<Buffer> buffers = {
      {"a", 128, 0, 4}, {"b", 64, 2, 3}, {"c", 64, 5, 6}};
  Plan p{192, 192, {0, 64, 0}};
  std::string why = validatePlan(buffers, p, 64);
  EXPECT_NE(why.find("'a'"), std::string::npos) << why;
  EXPECT_NE(why.find("'b'"), std::string::npos) << why;
  EXPECT_NE(why.find("share bytes"), std::string::npos) << why;
  // The same with the later buffer below the earlier one.
  std::vector<Buffer> pair = {{"a", 128, 0, 4}, {"b", 128, 2, 3}};
  std::string below = validatePlan(pair, Plan{192, 256, {64, 0}}, 64);
  EXPECT_NE(below.find("share bytes"), std::string::npos) << below;
}

TEST(ValidatePlan, RejectsBadOffsetsAndArena) {
  std::vector<Buffer> buffers = {{"a", 64, 0, 1}, {"b", 64, 1, 2}};
  EXPECT_NE(validatePlan(buffers, Plan{128, 128, {0, 32}}, 64)
                .find("not a multiple of the alignment"),
            std::string::npos);
  EXPECT_NE(validatePlan(buffers, Plan{64, 128, {0, 64}}, 64)
                .find("ends past the arena"),
            std::string::npos);
  EXPECT_NE(validatePlan(buffers, Plan{128, 128, {0}}, 64)
                .find("1 offsets for 2 buffers"),
            std::string::npos);
  EXPECT_NE(
      validatePlan(buffers, Plan{128, 64, {0, 64}}, 64).find("lower bound"),
      std::string::npos);
  EXPECT_NE(validatePlan(buffers, Plan{128, 128, {0, 64}}, 48)
                .find("not a power of two"),
            std::string::npos);
  EXPECT_NE(validatePlan(buffers, Plan{128, 128, {0, 64}}, 0)
                .find("not a power of two"),
            std::string::npos);
  EXPECT_EQ(validatePlan(buffers, Plan{128, 128, {0, 64}}, 64), "");
}

// --- Properties on random buffer lists --------------------------------------

std::vector<Buffer> randomBuffers(std::mt19937_64 &rng, size_t count,
                                  int64_t steps, uint64_t maxSize) {
  std::vector<Buffer> buffers;
  for (size_t i = 0; i < count; ++i) {
    int64_t first = int64_t(rng() % uint64_t(steps));
    int64_t span =
        int64_t(rng() % 8 == 0 ? rng() % uint64_t(steps) : rng() % 4);
    uint64_t size = rng() % 10 == 0 ? 0 : 1 + rng() % maxSize;
    buffers.push_back({"r" + std::to_string(i), size, first, first + span});
  }
  return buffers;
}

TEST(MemoryPlan, RandomListsGiveValidPlans) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 300; ++round) {
    size_t count = 1 + rng() % 60;
    uint64_t alignment = uint64_t(1) << (rng() % 8);
    std::vector<Buffer> buffers =
        randomBuffers(rng, count, 1 + int64_t(rng() % 40), 5000);
    Plan p = checkedPlan(buffers, alignment);
    Plan greedy = plan(buffers, alignment, 0);
    EXPECT_EQ(validatePlan(buffers, greedy, alignment), "");
    EXPECT_LE(p.arenaBytes, greedy.arenaBytes) << "round " << round;
  }
}

TEST(MemoryPlan, Deterministic) {
  std::mt19937_64 rng(11);
  std::vector<Buffer> buffers = randomBuffers(rng, 400, 200, 1 << 20);
  Plan a = plan(buffers), b = plan(buffers);
  EXPECT_EQ(a.arenaBytes, b.arenaBytes);
  EXPECT_EQ(a.offsets, b.offsets);
}

TEST(MemoryPlan, TenThousandBuffers) {
  std::mt19937_64 rng(3);
  std::vector<Buffer> buffers = randomBuffers(rng, 10000, 5000, 1 << 16);
  checkedPlan(buffers);
}

} // namespace
