//===- MemoryPlan.cpp - greedy-by-size arena offsets and a bounded search -===//
//
// planArena places buffers greedily, largest first, each in the best-fitting
// gap left by the already placed buffers whose lifetimes intersect its own
// (Pisarchyk & Lee, "Efficient Memory Management for Deep Neural Net
// Inference", 2020; TFLite's greedy-by-size offset calculation). When that
// misses the lower bound, a bounded search tries other orders and gap
// policies, then moves the buffer that sets the arena's peak earlier in the
// order ("squeaky wheel") until the arena reaches the lower bound or the
// budget is spent. Everything is deterministic: ties break on input index and
// the search draws from a fixed-seed mt19937_64.
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/MemoryPlan.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <queue>
#include <random>

namespace mlir::kiln::plan {
namespace {

/// Work units (one per placement plus one per intersecting placed buffer
/// looked at) the search may spend after the first pass. It bounds the time
/// on large inputs, where one pass is already expensive, and keeps the result
/// independent of the machine (a time budget would not).
constexpr uint64_t kSearchWorkBudget = uint64_t(1) << 23;
/// Failed squeaky-wheel moves before the search restarts from the best order.
constexpr unsigned kRestartAfter = 256;
constexpr uint64_t kSeed = 0x6b696c6e706c616eull; // "kilnplan"

uint64_t alignUp(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }
uint64_t effectiveAlignment(uint64_t a) { return a == 0 ? 1 : a; }
/// A reversed lifetime is not something planArena can report (it has no
/// error channel); it is planned as the single step `first`. validatePlan and
/// kiln-plan reject it.
int64_t lastStep(const Buffer &b) { return std::max(b.first, b.last); }

/// The buffers that need bytes, with aligned sizes and lifetimes renumbered to
/// dense steps 0..numSteps-1 (renumbering keeps which lifetimes intersect).
struct Problem {
  std::vector<uint32_t> input; ///< index in the caller's list
  std::vector<uint64_t> size;
  std::vector<uint32_t> first, last;
  std::vector<uint64_t> length; ///< last - first in the caller's steps
  uint32_t numSteps = 0;

  size_t count() const { return size.size(); }
};

Problem makeProblem(const std::vector<Buffer> &buffers, uint64_t alignment) {
  Problem p;
  std::vector<int64_t> steps;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer &b = buffers[i];
    if (b.size == 0)
      continue;
    p.input.push_back(uint32_t(i));
    p.size.push_back(alignUp(b.size, alignment));
    p.length.push_back(uint64_t(lastStep(b)) - uint64_t(b.first));
    steps.push_back(b.first);
    steps.push_back(lastStep(b));
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  auto dense = [&](int64_t s) {
    return uint32_t(std::lower_bound(steps.begin(), steps.end(), s) -
                    steps.begin());
  };
  for (uint32_t i : p.input) {
    p.first.push_back(dense(buffers[i].first));
    p.last.push_back(dense(lastStep(buffers[i])));
  }
  p.numSteps = uint32_t(steps.size());
  return p;
}

/// Sum of the live sizes at every dense step.
std::vector<uint64_t> stepLoads(const Problem &p) {
  std::vector<uint64_t> delta(p.numSteps + 1, 0);
  for (size_t i = 0; i < p.count(); ++i) {
    delta[p.first[i]] += p.size[i];
    delta[p.last[i] + 1] -= p.size[i]; // wraps and comes back: exact mod 2^64
  }
  std::vector<uint64_t> load(p.numSteps);
  uint64_t live = 0;
  for (uint32_t s = 0; s < p.numSteps; ++s)
    load[s] = live += delta[s];
  return load;
}

enum class Fit {
  Best,    ///< smallest gap between intersecting buffers that fits (TFLite)
  First,   ///< lowest gap that fits
  BestTop, ///< like Best, also counting the room between the highest
           ///< intersecting buffer and the arena's current top as a gap
};
constexpr Fit kFits[] = {Fit::Best, Fit::BestTop, Fit::First};

/// Places buffers in a given order. The index of placed buffers is a max
/// segment tree over the buffers sorted by first step, holding each placed
/// buffer's last step: the buffers whose lifetimes intersect [f, l] are those
/// among the prefix with first <= l whose last >= f, found by descending only
/// into subtrees whose max reaches f. A placement costs O((k + 1) log n) for
/// k intersecting placed buffers, so a pass is O(n log n + n * live * log n).
class Placer {
public:
  explicit Placer(const Problem &p) : p(p), offset(p.count(), 0) {
    byFirst.resize(p.count());
    std::iota(byFirst.begin(), byFirst.end(), 0u);
    std::stable_sort(
        byFirst.begin(), byFirst.end(),
        [&](uint32_t a, uint32_t b) { return p.first[a] < p.first[b]; });
    rank.resize(p.count());
    firstSorted.resize(p.count());
    for (uint32_t r = 0; r < byFirst.size(); ++r) {
      rank[byFirst[r]] = r;
      firstSorted[r] = p.first[byFirst[r]];
    }
    leaves = 1;
    while (leaves < p.count())
      leaves *= 2;
    tree.assign(2 * size_t(leaves), -1);
  }

  struct Result {
    bool complete = false;
    uint64_t arena = 0;
    /// The buffer that raised the arena last (complete) or that would have
    /// ended past the limit (incomplete): the one to place earlier.
    uint32_t culprit = 0;
  };

  /// Places `order` (a permutation of the problem's buffers) with `fit`,
  /// giving up at the first buffer that would end past `limit` or once the
  /// total work passes `workLimit`. The first `keep` buffers of `order` must
  /// be those the previous pass placed first, with the same `fit`: their
  /// placements are reused (placement is deterministic), which halves the
  /// cost of the search's moves on average.
  Result run(const std::vector<uint32_t> &order, Fit fit, uint64_t limit,
             uint64_t workLimit, size_t keep) {
    if (fit != lastFit)
      keep = 0;
    lastFit = fit;
    rollback(std::min(keep, placed.size()));
    Result r;
    if (!placed.empty()) {
      r.arena = arenaAfter.back();
      r.culprit = raiserAfter.back();
    }
    for (size_t i = placed.size(); i < order.size(); ++i) {
      uint32_t item = order[i];
      uint64_t off = chooseOffset(item, fit, r.arena);
      uint64_t end = off + p.size[item];
      if (end > limit || workDone > workLimit) {
        r.culprit = item;
        return r;
      }
      offset[item] = off;
      insert(item);
      if (end > r.arena) {
        r.arena = end;
        r.culprit = item;
      }
      placed.push_back(item);
      arenaAfter.push_back(r.arena);
      raiserAfter.push_back(r.culprit);
    }
    r.complete = true;
    return r;
  }

  const std::vector<uint64_t> &offsets() const { return offset; }
  uint64_t work() const { return workDone; }

private:
  uint64_t chooseOffset(uint32_t item, Fit fit, uint64_t arena) {
    gathered.clear();
    uint32_t prefix = uint32_t(
        std::upper_bound(firstSorted.begin(), firstSorted.end(), p.last[item]) -
        firstSorted.begin());
    if (prefix > 0)
      collect(1, 0, leaves, prefix, int32_t(p.first[item]));
    workDone += 1 + gathered.size();
    std::sort(gathered.begin(), gathered.end(),
              [](const auto &a, const auto &b) { return a.first < b.first; });

    const uint64_t size = p.size[item];
    uint64_t top = 0; // end of the highest intersecting buffer seen so far
    uint64_t bestOffset = 0, bestGap = std::numeric_limits<uint64_t>::max();
    bool found = false;
    for (auto [lo, hi] : gathered) {
      if (lo > top && lo - top >= size && lo - top < bestGap) {
        bestOffset = top;
        bestGap = lo - top;
        found = true;
        if (fit == Fit::First)
          return bestOffset;
      }
      top = std::max(top, hi);
    }
    // Room above every intersecting buffer but below the arena's top costs
    // nothing; BestTop weighs it against the gaps below.
    if (fit == Fit::BestTop && arena > top && arena - top >= size &&
        arena - top < bestGap)
      return top;
    return found ? bestOffset : top;
  }

  void collect(uint32_t node, uint32_t lo, uint32_t hi, uint32_t prefix,
               int32_t first) {
    if (lo >= prefix || tree[node] < first)
      return;
    if (hi - lo == 1) {
      uint32_t item = byFirst[lo];
      gathered.emplace_back(offset[item], offset[item] + p.size[item]);
      return;
    }
    uint32_t mid = lo + (hi - lo) / 2;
    collect(2 * node, lo, mid, prefix, first);
    collect(2 * node + 1, mid, hi, prefix, first);
  }

  /// Takes back the placements after the first `count`, each in O(log n).
  void rollback(size_t count) {
    while (placed.size() > count) {
      uint32_t node = leaves + rank[placed.back()];
      tree[node] = -1;
      for (node /= 2; node > 0; node /= 2) {
        int32_t max = std::max(tree[2 * node], tree[2 * node + 1]);
        if (tree[node] == max)
          break;
        tree[node] = max;
      }
      placed.pop_back();
      arenaAfter.pop_back();
      raiserAfter.pop_back();
    }
  }

  void insert(uint32_t item) {
    uint32_t node = leaves + rank[item];
    int32_t last = int32_t(p.last[item]);
    tree[node] = last;
    for (node /= 2; node > 0 && tree[node] < last; node /= 2)
      tree[node] = last;
  }

  const Problem &p;
  std::vector<uint32_t> byFirst, rank, firstSorted;
  uint32_t leaves = 1;
  std::vector<int32_t> tree;
  std::vector<uint64_t> offset;
  /// The placements of the last pass, in order, with the arena and the
  /// buffer that last raised it after each.
  std::vector<uint32_t> placed, raiserAfter;
  std::vector<uint64_t> arenaAfter;
  Fit lastFit = Fit::Best;
  std::vector<std::pair<uint64_t, uint64_t>> gathered;
  uint64_t workDone = 0;
};

std::vector<uint32_t> identity(size_t n) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  return order;
}

/// Greedy by size: largest first; among equal sizes the longer lifetime, then
/// the earlier one, then input order.
std::vector<uint32_t> orderBySize(const Problem &p) {
  std::vector<uint32_t> order = identity(p.count());
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (p.size[a] != p.size[b])
      return p.size[a] > p.size[b];
    if (p.length[a] != p.length[b])
      return p.length[a] > p.length[b];
    if (p.first[a] != p.first[b])
      return p.first[a] < p.first[b];
    return a < b;
  });
  return order;
}

/// The other deterministic starting orders of the search.
std::vector<std::vector<uint32_t>> alternativeOrders(const Problem &p) {
  using u128 = unsigned __int128;
  std::vector<std::vector<uint32_t>> orders;
  auto add = [&](auto less) {
    std::vector<uint32_t> order = identity(p.count());
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return less(a, b) ? true : less(b, a) ? false : a < b;
    });
    orders.push_back(std::move(order));
  };
  auto area = [&](uint32_t i) { return u128(p.size[i]) * (p.length[i] + 1); };
  add([&](uint32_t a, uint32_t b) { return area(a) > area(b); });
  add([&](uint32_t a, uint32_t b) {
    if (p.length[a] != p.length[b])
      return p.length[a] > p.length[b];
    return p.size[a] > p.size[b];
  });

  // Breadth first (TFLite's greedy by breadth): the steps with the most live
  // bytes first, and at each step its buffers by size. A buffer belongs to
  // the heaviest step of its lifetime (the earliest among equals).
  std::vector<uint64_t> load = stepLoads(p);
  constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  // The earlier of two steps unless the later is strictly heavier, so that
  // folding left to right finds the earliest heaviest step.
  auto heavier = [&](uint32_t a, uint32_t b) {
    if (a == kNone)
      return b;
    if (b == kNone)
      return a;
    return load[b] > load[a] ? b : a;
  };
  size_t leaves = 1;
  while (leaves < load.size())
    leaves *= 2;
  std::vector<uint32_t> tree(2 * leaves, kNone);
  for (uint32_t s = 0; s < load.size(); ++s)
    tree[leaves + s] = s;
  for (size_t node = leaves - 1; node > 0; --node)
    tree[node] = heavier(tree[2 * node], tree[2 * node + 1]);
  std::vector<uint32_t> home(p.count());
  for (size_t i = 0; i < p.count(); ++i) {
    uint32_t left = kNone, right = kNone;
    for (size_t lo = leaves + p.first[i], hi = leaves + p.last[i] + 1; lo < hi;
         lo /= 2, hi /= 2) {
      if (lo & 1)
        left = heavier(left, tree[lo++]);
      if (hi & 1)
        right = heavier(tree[--hi], right);
    }
    home[i] = heavier(left, right);
  }
  add([&](uint32_t a, uint32_t b) {
    if (home[a] != home[b]) {
      if (load[home[a]] != load[home[b]])
        return load[home[a]] > load[home[b]];
      return home[a] < home[b];
    }
    return p.size[a] > p.size[b];
  });

  // In time order, as a linear-scan allocator would see them.
  add([&](uint32_t a, uint32_t b) {
    if (p.first[a] != p.first[b])
      return p.first[a] < p.first[b];
    return p.size[a] > p.size[b];
  });
  return orders;
}

uint64_t lowerBoundOf(const Problem &p) {
  std::vector<uint64_t> load = stepLoads(p);
  return load.empty() ? 0 : *std::max_element(load.begin(), load.end());
}

/// The best plan found so far, in problem indices.
struct Best {
  uint64_t arena = std::numeric_limits<uint64_t>::max();
  std::vector<uint64_t> offsets;
  std::vector<uint32_t> order;
  Fit fit = Fit::Best;
  uint32_t culprit = 0;
};

class Search {
public:
  Search(const Problem &p, uint64_t lowerBound, unsigned passes)
      : p(p), placer(p), lowerBound(lowerBound), passesLeft(passes) {}

  /// Runs one pass; keeps it when it beats the best plan. Returns the pass.
  /// `keep`: how many leading buffers `order` shares with the last pass.
  Placer::Result tryOrder(const std::vector<uint32_t> &order, Fit fit,
                          size_t keep = 0) {
    uint64_t limit = best.arena == std::numeric_limits<uint64_t>::max()
                         ? best.arena
                         : best.arena - 1;
    Placer::Result r = placer.run(order, fit, limit, workLimit, keep);
    if (r.complete) {
      best.arena = r.arena;
      best.offsets = placer.offsets();
      best.order = order;
      best.fit = fit;
      best.culprit = r.culprit;
    }
    return r;
  }

  bool done() const {
    return best.arena <= lowerBound || passesLeft == 0 ||
           placer.work() > workLimit;
  }

  const Best &run() {
    tryOrder(orderBySize(p), Fit::Best);
    workLimit = placer.work() + kSearchWorkBudget;
    for (Fit fit : {Fit::BestTop, Fit::First})
      if (!done()) {
        --passesLeft;
        tryOrder(best.order, fit);
      }
    for (const std::vector<uint32_t> &order : alternativeOrders(p))
      for (Fit fit : kFits)
        if (!done()) {
          --passesLeft;
          tryOrder(order, fit);
        }
    squeakyWheel();
    return best;
  }

private:
  uint64_t draw(uint64_t n) { return rng() % n; }

  /// Moves the buffer that made the arena too high to a random earlier place
  /// in the order, keeping the changed order even when the pass fails so the
  /// moves add up; after kRestartAfter failures in a row it starts again from
  /// the best order, scrambled by a few random swaps, with the next policy.
  void squeakyWheel() {
    std::vector<uint32_t> order = best.order;
    Fit fit = best.fit;
    uint32_t culprit = best.culprit;
    unsigned failures = 0, restarts = 0;
    bool fresh = true; // the placer's last pass was not a prefix of `order`
    while (!done()) {
      --passesLeft;
      // The culprit was placed or tried last, so finding it costs no more
      // than the pass that named it.
      uint32_t from = uint32_t(std::find(order.begin(), order.end(), culprit) -
                               order.begin());
      size_t keep = 0;
      if (from > 0) {
        uint32_t to = uint32_t(draw(from));
        std::rotate(order.begin() + to, order.begin() + from,
                    order.begin() + from + 1);
        keep = to;
      } else if (order.size() > 1) {
        size_t i = draw(order.size()), j = draw(order.size());
        std::swap(order[i], order[j]);
        keep = std::min(i, j);
      }
      Placer::Result r = tryOrder(order, fit, fresh ? 0 : keep);
      fresh = false;
      culprit = r.culprit;
      if (r.complete) {
        failures = 0;
        continue;
      }
      if (++failures < kRestartAfter)
        continue;
      failures = 0;
      order = best.order;
      fit = kFits[++restarts % 3];
      for (unsigned k = 0; k < 2 + restarts % 8 && order.size() > 1; ++k) {
        uint32_t i = uint32_t(draw(order.size() - 1));
        std::swap(order[i], order[i + 1]);
      }
      culprit = best.culprit;
      fresh = true;
    }
  }

  const Problem &p;
  Placer placer;
  uint64_t lowerBound;
  unsigned passesLeft;
  /// Unlimited for the first pass, which must complete.
  uint64_t workLimit = std::numeric_limits<uint64_t>::max();
  std::mt19937_64 rng{kSeed};
  Best best;
};

std::string describe(const Buffer &b, uint64_t offset, uint64_t size) {
  return "buffer '" + b.id + "' (bytes [" + std::to_string(offset) + ", " +
         std::to_string(offset + size) + "), steps " + std::to_string(b.first) +
         ".." + std::to_string(b.last) + ")";
}

} // namespace

uint64_t lowerBound(const std::vector<Buffer> &buffers, uint64_t alignment) {
  return lowerBoundOf(makeProblem(buffers, effectiveAlignment(alignment)));
}

Plan planArena(const std::vector<Buffer> &buffers, const PlanOptions &options) {
  Problem p = makeProblem(buffers, effectiveAlignment(options.alignment));
  Plan plan;
  plan.lowerBoundBytes = lowerBoundOf(p);
  plan.offsets.assign(buffers.size(), 0); // zero-size buffers sit at 0
  if (p.count() == 0)
    return plan;
  Search search(p, plan.lowerBoundBytes, options.searchIterations);
  const Best &best = search.run();
  plan.arenaBytes = best.arena;
  for (size_t i = 0; i < p.count(); ++i)
    plan.offsets[p.input[i]] = best.offsets[i];
  return plan;
}

std::string validatePlan(const std::vector<Buffer> &buffers, const Plan &plan,
                         uint64_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    return "alignment " + std::to_string(alignment) + " is not a power of two";
  if (plan.offsets.size() != buffers.size())
    return "the plan has " + std::to_string(plan.offsets.size()) +
           " offsets for " + std::to_string(buffers.size()) + " buffers";
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  std::vector<uint32_t> live;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer &b = buffers[i];
    uint64_t off = plan.offsets[i];
    if (b.last < b.first)
      return "buffer '" + b.id + "' ends (step " + std::to_string(b.last) +
             ") before it starts (step " + std::to_string(b.first) + ")";
    if (off % alignment != 0)
      return "buffer '" + b.id + "' is at offset " + std::to_string(off) +
             ", not a multiple of the alignment " + std::to_string(alignment);
    if (b.size > kMax - alignment)
      return "buffer '" + b.id + "' is too large";
    uint64_t size = alignUp(b.size, alignment);
    if (off > plan.arenaBytes || size > plan.arenaBytes - off)
      return describe(b, off, size) + " ends past the arena of " +
             std::to_string(plan.arenaBytes) + " bytes";
    if (size > 0)
      live.push_back(uint32_t(i));
  }
  uint64_t bound = lowerBound(buffers, alignment);
  if (plan.lowerBoundBytes != bound)
    return "the plan states a lower bound of " +
           std::to_string(plan.lowerBoundBytes) + " bytes, the buffers give " +
           std::to_string(bound);

  // Sweep the steps in order keeping the live buffers by offset; while no two
  // of them overlap, a new buffer can only overlap its neighbours by offset.
  std::stable_sort(live.begin(), live.end(), [&](uint32_t a, uint32_t b) {
    return buffers[a].first < buffers[b].first;
  });
  using Expiry = std::pair<int64_t, uint32_t>;
  std::priority_queue<Expiry, std::vector<Expiry>, std::greater<Expiry>> ends;
  std::map<uint64_t, uint32_t> byOffset;
  auto endOf = [&](uint32_t i) {
    return plan.offsets[i] + alignUp(buffers[i].size, alignment);
  };
  for (uint32_t i : live) {
    while (!ends.empty() && ends.top().first < buffers[i].first) {
      byOffset.erase(plan.offsets[ends.top().second]);
      ends.pop();
    }
    uint64_t off = plan.offsets[i], end = endOf(i);
    auto next = byOffset.lower_bound(off);
    std::optional<uint32_t> other;
    if (next != byOffset.end() && next->first < end)
      other = next->second;
    else if (next != byOffset.begin() && endOf(std::prev(next)->second) > off)
      other = std::prev(next)->second;
    if (other)
      return describe(buffers[*other], plan.offsets[*other],
                      endOf(*other) - plan.offsets[*other]) +
             " and " + describe(buffers[i], off, end - off) +
             " share bytes while both are live";
    byOffset.emplace(off, i);
    ends.emplace(buffers[i].last, i);
  }
  return "";
}

} // namespace mlir::kiln::plan
