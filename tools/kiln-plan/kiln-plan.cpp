// kiln-plan: plans one arena for a JSON list of buffers with the compiler's
// memory planner and prints every buffer's offset.
//
//   kiln-plan [--search-iterations N] [--validate] [--stats] PLAN.json|-
//
// Input:  {"alignment": 64, "buffers": [{"id": "t7", "size": 4096,
//          "first": 3, "last": 9}, ...]}   (lifetimes are inclusive steps)
// Output: {"arena_bytes": N, "lower_bound_bytes": M, "offsets": {"t7": 0, ...}}
//
// Exit status: 0 success, 1 --validate found the plan invalid (a planner
// bug), 2 anything the user can fix (usage, unreadable or invalid input).
#include "kiln/Codegen/MemoryPlan.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <string>
#include <unordered_map>

using namespace mlir::kiln;
using json = nlohmann::json;

namespace {

constexpr int kExitInvalidPlan = 1;
constexpr int kExitError = 2;

/// A problem with the user's input or command line; main prints it and
/// exits with kExitError.
struct UserError {
  std::string message;
};

struct Options {
  std::string input;
  unsigned searchIterations = plan::PlanOptions().searchIterations;
  bool validate = false;
  bool stats = false;
  bool help = false;
};

const char *kUsage =
    "usage: kiln-plan [--search-iterations N] [--validate] [--stats] "
    "PLAN.json|-\n"
    "\n"
    "Plans one memory arena for the buffers in PLAN.json (- reads stdin):\n"
    "  {\"alignment\": 64, \"buffers\": [{\"id\": \"t7\", \"size\": 4096, "
    "\"first\": 3, \"last\": 9}, ...]}\n"
    "Buffers whose inclusive step intervals [first, last] intersect never "
    "share bytes.\n"
    "Prints {\"arena_bytes\": N, \"lower_bound_bytes\": M, \"offsets\": "
    "{\"t7\": 0, ...}}.\n"
    "\n"
    "  --search-iterations N  extra orders the improvement search may try "
    "(default 2000, 0: greedy by size only)\n"
    "  --validate             check the plan (alignment, bounds, no overlap "
    "of live buffers) and report on stderr\n"
    "  --stats                print sizes, bounds and timing on stderr\n"
    "\n"
    "Exit status: 0 success, 1 --validate found the plan invalid, 2 bad "
    "usage or input.\n";

Options parseArgs(int argc, char **argv) {
  Options opts;
  bool haveInput = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      opts.help = true;
      return opts;
    }
    if (arg == "--validate") {
      opts.validate = true;
    } else if (arg == "--stats") {
      opts.stats = true;
    } else if (arg == "--search-iterations" ||
               arg.rfind("--search-iterations=", 0) == 0) {
      std::string value;
      if (arg.size() > 19 && arg[19] == '=')
        value = arg.substr(20);
      else if (i + 1 < argc)
        value = argv[++i];
      else
        throw UserError{"--search-iterations needs a value"};
      size_t used = 0;
      unsigned long n = 0;
      try {
        n = std::stoul(value, &used);
      } catch (const std::exception &) {
        used = 0;
      }
      if (used == 0 || used != value.size() || value[0] == '-' ||
          n > std::numeric_limits<unsigned>::max())
        throw UserError{"--search-iterations expects a non-negative integer, "
                        "got '" +
                        value + "'"};
      opts.searchIterations = unsigned(n);
    } else if (arg.size() > 1 && arg[0] == '-') {
      throw UserError{"unknown option '" + arg + "' (see --help)"};
    } else if (haveInput) {
      throw UserError{"expected one input file, got '" + opts.input +
                      "' and '" + arg + "'"};
    } else {
      opts.input = arg;
      haveInput = true;
    }
  }
  if (!haveInput)
    throw UserError{"no input file (give PLAN.json, or - for stdin)"};
  return opts;
}

json readJson(const std::string &path) {
  try {
    if (path == "-")
      return json::parse(std::cin);
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
      throw UserError{"'" + path + "' is a directory, not a JSON file"};
    std::ifstream in(path);
    if (!in)
      throw UserError{"cannot open '" + path + "'"};
    return json::parse(in);
  } catch (const json::parse_error &e) {
    // Drop nlohmann's "[json.exception.parse_error.101] " prefix.
    std::string what = e.what();
    size_t cut = what.find("] ");
    throw UserError{(path == "-" ? std::string("<stdin>") : path) +
                    ": malformed JSON: " +
                    (cut == std::string::npos ? what : what.substr(cut + 2))};
  }
}

uint64_t readUnsigned(const json &v, const std::string &what) {
  if (!v.is_number_integer() ||
      (!v.is_number_unsigned() && v.get<int64_t>() < 0))
    throw UserError{what + " must be a non-negative integer, got " + v.dump()};
  return v.get<uint64_t>();
}

int64_t readStep(const json &v, const std::string &what) {
  if (!v.is_number_integer() ||
      (v.is_number_unsigned() &&
       v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())))
    throw UserError{what + " must be an integer step index, got " + v.dump()};
  return v.get<int64_t>();
}

struct Input {
  uint64_t alignment = 64;
  std::vector<plan::Buffer> buffers;
};

Input parseInput(const json &doc) {
  if (!doc.is_object())
    throw UserError{"the input must be a JSON object with a \"buffers\" array"};
  Input in;
  if (doc.contains("alignment")) {
    in.alignment = readUnsigned(doc["alignment"], "\"alignment\"");
    if (in.alignment == 0 || (in.alignment & (in.alignment - 1)) != 0)
      throw UserError{"\"alignment\" must be a power of two, got " +
                      std::to_string(in.alignment)};
  }
  if (!doc.contains("buffers"))
    throw UserError{
        "missing \"buffers\" (an array of {id, size, first, last})"};
  const json &list = doc["buffers"];
  if (!list.is_array())
    throw UserError{"\"buffers\" must be an array, got " +
                    std::string(list.type_name())};

  std::unordered_map<std::string, size_t> seen;
  // The sum of aligned sizes bounds every arena; keeping it below 2^63 keeps
  // every offset and end the planner computes exact.
  constexpr uint64_t kMaxTotal = uint64_t(1) << 63;
  uint64_t total = 0;
  in.buffers.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const json &b = list[i];
    std::string where = "buffers[" + std::to_string(i) + "]";
    if (!b.is_object())
      throw UserError{where + " must be an object {id, size, first, last}"};
    for (const char *key : {"id", "size", "first", "last"})
      if (!b.contains(key))
        throw UserError{where + " has no \"" + key + "\""};
    if (!b["id"].is_string())
      throw UserError{where + ".id must be a string, got " + b["id"].dump()};
    plan::Buffer buf;
    buf.id = b["id"].get<std::string>();
    where += " ('" + buf.id + "')";
    buf.size = readUnsigned(b["size"], where + ".size");
    buf.first = readStep(b["first"], where + ".first");
    buf.last = readStep(b["last"], where + ".last");
    if (buf.last < buf.first)
      throw UserError{where + " ends (last " + std::to_string(buf.last) +
                      ") before it starts (first " + std::to_string(buf.first) +
                      ")"};
    auto [it, fresh] = seen.emplace(buf.id, i);
    if (!fresh)
      throw UserError{"duplicate id '" + buf.id + "' (buffers[" +
                      std::to_string(it->second) + "] and buffers[" +
                      std::to_string(i) + "])"};
    uint64_t room = kMaxTotal - total;
    if (buf.size > room ||
        (buf.size + in.alignment - 1) / in.alignment * in.alignment > room)
      throw UserError{where + ": the buffers add up to more than 2^63 bytes"};
    total += (buf.size + in.alignment - 1) / in.alignment * in.alignment;
    in.buffers.push_back(std::move(buf));
  }
  return in;
}

/// The most buffers (of any size) live at one step.
size_t maxLive(const std::vector<plan::Buffer> &buffers) {
  std::vector<std::pair<int64_t, int>> events;
  for (const plan::Buffer &b : buffers) {
    events.emplace_back(b.first, 1);
    if (b.last < std::numeric_limits<int64_t>::max())
      events.emplace_back(b.last + 1, -1);
  }
  std::sort(events.begin(), events.end()); // ends (-1) before starts at a step
  long live = 0, most = 0;
  for (auto [step, delta] : events)
    most = std::max(most, live += delta);
  return size_t(most);
}

void printPlan(const Input &in, const plan::Plan &p) {
  std::string out =
      "{\"arena_bytes\": " + std::to_string(p.arenaBytes) +
      ", \"lower_bound_bytes\": " + std::to_string(p.lowerBoundBytes) +
      ", \"offsets\": {";
  for (size_t i = 0; i < in.buffers.size(); ++i) {
    if (i)
      out += ", ";
    out += json(in.buffers[i].id).dump() + ": " + std::to_string(p.offsets[i]);
  }
  out += "}}\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
}

std::string fixed3(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

std::string ratio(uint64_t arena, uint64_t bound) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f",
                bound ? double(arena) / double(bound) : 1.0);
  return text;
}

int run(const Options &opts) {
  if (opts.help) {
    std::cout << kUsage;
    return 0;
  }
  Input in = parseInput(readJson(opts.input));
  plan::PlanOptions planOpts;
  planOpts.alignment = in.alignment;
  planOpts.searchIterations = opts.searchIterations;

  auto start = std::chrono::steady_clock::now();
  plan::Plan p = plan::planArena(in.buffers, planOpts);
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  printPlan(in, p);
  std::fflush(stdout);

  if (opts.stats) {
    planOpts.searchIterations = 0;
    plan::Plan greedy = plan::planArena(in.buffers, planOpts);
    size_t empty = std::count_if(in.buffers.begin(), in.buffers.end(),
                                 [](const plan::Buffer &b) { return !b.size; });
    std::cerr << "kiln-plan: " << in.buffers.size() << " buffers (" << empty
              << " of size 0), at most " << maxLive(in.buffers)
              << " live at once, alignment " << in.alignment << "\n"
              << "kiln-plan: lower bound " << p.lowerBoundBytes
              << " bytes; greedy by size " << greedy.arenaBytes << " ("
              << ratio(greedy.arenaBytes, p.lowerBoundBytes)
              << "x); after search " << p.arenaBytes << " ("
              << ratio(p.arenaBytes, p.lowerBoundBytes) << "x)\n"
              << "kiln-plan: planned in " << fixed3(ms) << " ms\n";
  }
  if (opts.validate) {
    std::string problem = plan::validatePlan(in.buffers, p, in.alignment);
    if (!problem.empty()) {
      std::cerr << "kiln-plan: error: invalid plan: " << problem << "\n";
      return kExitInvalidPlan;
    }
    std::cerr << "kiln-plan: plan is valid (" << in.buffers.size()
              << " buffers, arena " << p.arenaBytes << " bytes)\n";
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(parseArgs(argc, argv));
  } catch (const UserError &e) {
    std::cerr << "kiln-plan: error: " << e.message << "\n";
    return kExitError;
  } catch (const std::exception &e) {
    std::cerr << "kiln-plan: error: " << e.what() << "\n";
    return kExitError;
  }
}
