//===- CorpusTest.cpp - the arena planner on the trace corpus ------------===//
//
// Plans every trace in test/plan/traces (simulated ones from make_traces.py,
// the compiler's own from export_model_traces.py) and checks
// the planner's quality targets, which are properties of the deterministic
// algorithm, not of the machine: the arena equals the lower bound on at least
// 95% of the traces and is on average within 1% of it.
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/MemoryPlan.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

using namespace mlir::kiln::plan;
namespace fs = std::filesystem;

namespace {

struct Trace {
  std::string name;
  uint64_t alignment = 64;
  std::vector<Buffer> buffers;
  Plan greedy, searched;
};

Trace loadTrace(const fs::path &path) {
  std::ifstream in(path);
  nlohmann::json doc = nlohmann::json::parse(in);
  Trace t;
  t.name = path.stem().string();
  t.alignment = doc.value("alignment", uint64_t(64));
  for (const nlohmann::json &b : doc.at("buffers"))
    t.buffers.push_back(
        {b.at("id").get<std::string>(), b.at("size").get<uint64_t>(),
         b.at("first").get<int64_t>(), b.at("last").get<int64_t>()});
  return t;
}

/// Every trace, planned once with greedy by size alone and once with the
/// default search.
const std::vector<Trace> &corpus() {
  static const std::vector<Trace> traces = [] {
    std::vector<fs::path> paths;
    for (const fs::directory_entry &e :
         fs::directory_iterator(KILN_PLAN_TRACES_DIR))
      if (e.path().extension() == ".json")
        paths.push_back(e.path());
    std::sort(paths.begin(), paths.end());
    std::vector<Trace> out;
    for (const fs::path &path : paths) {
      Trace t = loadTrace(path);
      PlanOptions options;
      options.alignment = t.alignment;
      t.searched = planArena(t.buffers, options);
      options.searchIterations = 0;
      t.greedy = planArena(t.buffers, options);
      out.push_back(std::move(t));
    }
    return out;
  }();
  return traces;
}

double ratio(const Plan &p) {
  return p.lowerBoundBytes ? double(p.arenaBytes) / double(p.lowerBoundBytes)
                           : 1.0;
}

/// The model family: the name up to the first '_' without its version
/// ("resnet50_r224..." -> "resnet", "mobilenetv2_..." -> "mobilenet").
std::string family(const std::string &name) {
  std::string f = name.substr(0, name.find('_'));
  while (!f.empty() && isdigit(f.back()))
    f.pop_back();
  if (f.size() > 1 && f.back() == 'v')
    f.pop_back();
  return f;
}

TEST(Corpus, HasTraces) {
  // make_traces.py writes 116 and export_model_traces.py 8; fewer means the
  // folder was not found or lost files.
  EXPECT_GE(corpus().size(), 100u);
}

TEST(Corpus, PlansAreValid) {
  for (const Trace &t : corpus()) {
    SCOPED_TRACE(t.name);
    EXPECT_EQ(validatePlan(t.buffers, t.searched, t.alignment), "");
    EXPECT_EQ(validatePlan(t.buffers, t.greedy, t.alignment), "");
    EXPECT_EQ(t.searched.lowerBoundBytes, lowerBound(t.buffers, t.alignment));
    EXPECT_GE(t.searched.arenaBytes, t.searched.lowerBoundBytes);
    EXPECT_LE(t.searched.arenaBytes, t.greedy.arenaBytes);
  }
}

TEST(Corpus, Deterministic) {
  for (const Trace &t : corpus()) {
    PlanOptions options;
    options.alignment = t.alignment;
    Plan again = planArena(t.buffers, options);
    EXPECT_EQ(again.offsets, t.searched.offsets) << t.name;
  }
}

TEST(Corpus, ReachesTheLowerBound) {
  struct Tally {
    size_t traces = 0, greedyAtBound = 0, atBound = 0;
    double greedySum = 0, sum = 0, max = 1;
  };
  std::map<std::string, Tally> byFamily;
  Tally all;
  for (const Trace &t : corpus()) {
    for (Tally *tally : {&byFamily[family(t.name)], &all}) {
      ++tally->traces;
      tally->greedyAtBound += t.greedy.arenaBytes == t.greedy.lowerBoundBytes;
      tally->atBound += t.searched.arenaBytes == t.searched.lowerBoundBytes;
      tally->greedySum += ratio(t.greedy);
      tally->sum += ratio(t.searched);
      tally->max = std::max(tally->max, ratio(t.searched));
    }
    if (t.searched.arenaBytes != t.searched.lowerBoundBytes)
      std::printf("  above the bound: %s %.4fx\n", t.name.c_str(),
                  ratio(t.searched));
  }
  byFamily["(all)"] = all;
  std::printf("  %-12s %6s %14s %11s %14s %11s %9s\n", "family", "traces",
              "greedy at LB", "greedy avg", "search at LB", "search avg",
              "max");
  for (const auto &[name, t] : byFamily)
    std::printf("  %-12s %6zu %13.1f%% %11.4f %13.1f%% %11.4f %9.4f\n",
                name.c_str(), t.traces, 100.0 * t.greedyAtBound / t.traces,
                t.greedySum / t.traces, 100.0 * t.atBound / t.traces,
                t.sum / t.traces, t.max);

  ASSERT_GT(all.traces, 0u);
  EXPECT_GE(double(all.atBound) / all.traces, 0.95);
  EXPECT_LE(all.sum / all.traces, 1.01);
}

} // namespace
