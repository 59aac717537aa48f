//===- ModelValidation.cpp - checks before a model is trusted ---*- C++ -*-===//
#include "ModelValidation.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/defs/schema.h>

#include <map>
#include <set>
#include <string>
#include <vector>

using namespace mlir;

std::optional<int64_t> mlir::kiln::checkedTensorBytes(ArrayRef<int64_t> dims,
                                                      int64_t elementBytes) {
  int64_t bytes = elementBytes;
  for (int64_t d : dims)
    if (d < 0 || __builtin_mul_overflow(bytes, d, &bytes))
      return std::nullopt;
  return bytes;
}

namespace {
/// An operator version of the default domain since opset 18, its
/// attributes and its largest number of inputs (-1: variadic; ONNX 1.12's
/// registry, which Kiln links, ends at 17).
struct NewerOperator {
  const char *op;
  int64_t version;
  std::vector<std::pair<const char *, onnx::AttributeProto::AttributeType>>
      attributes;
  int64_t maxInputs;
};

const std::vector<NewerOperator> &newerOperators() {
  static const std::vector<NewerOperator> table = {
#include "NewerAttributes.inc"
  };
  return table;
}

/// The most inputs any version of `op` since opset 18 takes (-1: variadic
/// or not in the table): a later version's inputs are accepted as for the
/// registry's versions.
int64_t newerMaxInputs(const std::string &op) {
  int64_t most = -2;
  for (const NewerOperator &row : newerOperators())
    if (op == row.op)
      most = row.maxInputs < 0 || most == -1
                 ? -1
                 : std::max<int64_t>(most, row.maxInputs);
  return most == -2 ? -1 : most;
}

/// The newest version of `op` since opset 18 that `opset` includes, if any.
const NewerOperator *newerOperator(const std::string &op, int64_t opset) {
  const NewerOperator *best = nullptr;
  for (const NewerOperator &row : newerOperators())
    if (op == row.op && row.version <= opset &&
        (!best || row.version > best->version))
      best = &row;
  return best;
}

/// Ops whose window attributes ONNX's shape inference divides by or indexes
/// with, and the input that holds their weight (-1: none).
struct WindowOp {
  const char *opType;
  int weightInput;
};
constexpr WindowOp kWindowOps[] = {
    {"Conv", 1},        {"ConvInteger", 1}, {"QLinearConv", 3},
    {"ConvTranspose", 1}, {"MaxPool", -1},  {"AveragePool", -1},
    {"LpPool", -1},     {"MaxUnpool", -1},
};

class Validator {
public:
  Validator(MLIRContext &ctx, onnx::ModelProto &model)
      : ctx(ctx), model(model) {}

  LogicalResult run() {
    if (failed(checkOpsets()) || failed(checkFunctions()))
      return failure();
    onnx::GraphProto &graph = *model.mutable_graph();
    bool ok = succeeded(checkGraph(graph));
    // Only a graph whose values are each assigned once has one order.
    if (ok && failed(sortGraph(graph)))
      return failure();
    // ONNX's own shape inference of some ops (MaxUnpool in 1.12) reads the
    // type of an input that names nothing without checking it.
    llvm::StringSet<> outer;
    if (ok && failed(checkDefined(graph, outer)))
      return failure();
    if (graph.output_size() == 0) {
      emitError(UnknownLoc::get(&ctx)) << "the graph has no outputs, so there is nothing to "
                        "compute; list the values to return as graph outputs";
      ok = false;
    }
    llvm::StringSet<> outputs;
    for (const auto &out : graph.output()) {
      if (!outputs.insert(out.name()).second) {
        error(out.name()) << "graph output '" << out.name()
                          << "' is listed twice; each graph output needs its "
                             "own name (add an Identity node for a copy)";
        ok = false;
      }
      // Sequences and optionals live only inside the graph (docs/ops.md).
      const onnx::TypeProto &type = out.type();
      if (type.has_sequence_type() || type.has_optional_type() ||
          type.has_map_type()) {
        error(out.name()) << "graph output '" << out.name()
                          << "' is not a tensor; only tensor outputs are "
                             "supported (the C ABI returns tensors)";
        ok = false;
      }
    }
    return success(ok);
  }

private:
  InFlightDiagnostic error(const std::string &where) {
    return emitError(NameLoc::get(StringAttr::get(&ctx, where)));
  }

  std::string nodeName(const onnx::NodeProto &node, int index) {
    return node.name().empty() ? node.op_type() + "_" + std::to_string(index)
                               : node.name();
  }

  int64_t opsetOf(const std::string &domain) {
    return opsets.lookup(domain == "ai.onnx" ? "" : domain);
  }

  /// "node 'n' (Conv, opset 13)", the prefix of every node's message.
  /// Every node input names a graph input, an initializer, a node's output
  /// or (in a subgraph) a value of an enclosing graph.
  LogicalResult checkDefined(const onnx::GraphProto &graph,
                             const llvm::StringSet<> &outer) {
    llvm::StringSet<> known = outer;
    for (const auto &v : graph.input())
      known.insert(v.name());
    for (const auto &t : graph.initializer())
      known.insert(t.name());
    for (const auto &node : graph.node())
      for (const std::string &o : node.output())
        known.insert(o);
    for (int i = 0; i < graph.node_size(); ++i) {
      const onnx::NodeProto &node = graph.node(i);
      for (const std::string &in : node.input())
        if (!in.empty() && !known.contains(in))
          return error(in) << describe(node, i) << ": input '" << in
                           << "' is not a graph input, an initializer or the "
                              "output of an earlier node";
      for (const auto &attr : node.attribute()) {
        if (attr.has_g() && failed(checkDefined(attr.g(), known)))
          return failure();
        for (const auto &g : attr.graphs())
          if (failed(checkDefined(g, known)))
            return failure();
      }
    }
    return success();
  }

  std::string describe(const onnx::NodeProto &node, int index) {
    return "node '" + nodeName(node, index) + "' (" + node.op_type() +
           ", opset " + std::to_string(opsetOf(node.domain())) + ")";
  }

  LogicalResult checkOpsets() {
    for (const auto &imp : model.opset_import()) {
      std::string domain = imp.domain() == "ai.onnx" ? "" : imp.domain();
      auto [it, inserted] = opsets.try_emplace(domain, imp.version());
      std::string shown = domain.empty() ? "the default ONNX domain"
                                         : "the domain '" + domain + "'";
      if (!inserted && it->second != imp.version())
        return emitError(UnknownLoc::get(&ctx)) << "the model imports " << shown
                              << " twice, at opsets " << it->second << " and "
                              << imp.version();
      if (imp.version() < 1)
        return emitError(UnknownLoc::get(&ctx)) << "the model imports opset " << imp.version()
                              << " of " << shown
                              << "; opsets are numbered from 1";
      if (domain.empty() && imp.version() > mlir::kiln::kNewestOnnxOpset)
        return emitError(UnknownLoc::get(&ctx))
               << "the model imports opset " << imp.version() << " of "
               << shown << "; Kiln knows opsets 1 to "
               << mlir::kiln::kNewestOnnxOpset
               << " (ONNX 1.23); re-export the model with a released opset";
    }
    return success();
  }

  /// A model-local function that calls itself, directly or through others,
  /// would make ONNX's shape inference (and any inliner) recurse forever.
  LogicalResult checkFunctions() {
    llvm::StringMap<const onnx::FunctionProto *> functions;
    for (const auto &f : model.functions())
      functions[f.domain() + "." + f.name()] = &f;
    // 0: not visited, 1: on the current path, 2: done.
    llvm::StringMap<int> state;
    std::vector<std::string> path;
    std::function<LogicalResult(const std::string &)> visit =
        [&](const std::string &key) -> LogicalResult {
      int &s = state[key];
      if (s == 2)
        return success();
      if (s == 1) {
        std::string cycle;
        auto from = std::find(path.begin(), path.end(), key);
        for (auto it = from; it != path.end(); ++it)
          cycle += *it + " -> ";
        return error(key) << "model-local function '" << key
                          << "' calls itself (" << cycle << key
                          << "); recursive functions cannot be compiled";
      }
      s = 1;
      path.push_back(key);
      for (const auto &node : functions.lookup(key)->node()) {
        std::string callee = node.domain() + "." + node.op_type();
        if (functions.count(callee) && failed(visit(callee)))
          return failure();
      }
      path.pop_back();
      state[key] = 2;
      return success();
    };
    for (const auto &entry : functions)
      if (failed(visit(entry.getKey().str())))
        return failure();
    return success();
  }

  /// One assignment per value in `graph` (and, separately, in each
  /// subgraph), op types present, attributes as the schema says.
  LogicalResult checkGraph(onnx::GraphProto &graph) {
    bool ok = true;
    llvm::StringMap<std::string> producer; // value -> what assigns it
    for (const auto &in : graph.input())
      if (!producer.try_emplace(in.name(), "a graph input").second) {
        error(in.name()) << "graph input '" << in.name()
                         << "' is listed twice";
        ok = false;
      }
    llvm::StringSet<> initializers;
    for (const auto &init : graph.initializer()) {
      if (!initializers.insert(init.name()).second) {
        error(init.name()) << "initializer '" << init.name()
                           << "' is defined twice";
        ok = false;
      }
      // IR < 4 lists initializers among the inputs too: that is one value.
      producer.try_emplace(init.name(), "an initializer");
      if (failed(checkTensorData(init, "initializer '" + init.name() + "'")))
        ok = false;
    }
    for (const auto &sparse : graph.sparse_initializer())
      if (failed(checkTensorData(sparse.values(), "sparse initializer")) ||
          failed(checkTensorData(sparse.indices(), "sparse initializer")))
        ok = false;
    for (int i = 0; i < graph.node_size(); ++i) {
      onnx::NodeProto &node = *graph.mutable_node(i);
      if (node.op_type().empty()) {
        InFlightDiagnostic diag = emitError(UnknownLoc::get(&ctx));
        if (node.name().empty())
          diag << "node number " << i << " of its graph";
        else
          diag << "node '" << node.name() << "'";
        diag << " has no op type";
        ok = false;
        continue;
      }
      for (const std::string &out : node.output()) {
        if (out.empty())
          continue; // an optional output left out
        auto [it, inserted] =
            producer.try_emplace(out, "the output of " + describe(node, i));
        if (!inserted) {
          error(nodeName(node, i))
              << describe(node, i) << ": output '" << out << "' is already "
              << it->second
              << "; every value of an ONNX graph is assigned once";
          ok = false;
        }
      }
      if (failed(checkNode(node, i)))
        ok = false;
      for (auto &attr : *node.mutable_attribute()) {
        if (attr.has_t() &&
            failed(checkTensorData(attr.t(), describe(node, i) + ": attribute '" +
                                                 attr.name() + "'")))
          ok = false;
        for (const auto &t : attr.tensors())
          if (failed(checkTensorData(t, describe(node, i) + ": attribute '" +
                                            attr.name() + "'")))
            ok = false;
        if (attr.has_g() && failed(checkGraph(*attr.mutable_g())))
          ok = false;
        for (auto &g : *attr.mutable_graphs())
          if (failed(checkGraph(g)))
            ok = false;
      }
    }
    return success(ok);
  }

  /// The names `graph` reads from outside itself: node inputs and graph
  /// outputs it does not define, also those of its own subgraphs.
  static void outerNames(const onnx::GraphProto &graph,
                         llvm::StringSet<> &out) {
    llvm::StringSet<> defined;
    for (const auto &in : graph.input())
      defined.insert(in.name());
    for (const auto &init : graph.initializer())
      defined.insert(init.name());
    for (const auto &node : graph.node())
      for (const std::string &o : node.output())
        defined.insert(o);
    auto read = [&](const std::string &name) {
      if (!name.empty() && !defined.contains(name))
        out.insert(name);
    };
    for (const auto &node : graph.node()) {
      for (const std::string &in : node.input())
        read(in);
      for (const auto &attr : node.attribute()) {
        llvm::StringSet<> inner;
        if (attr.has_g())
          outerNames(attr.g(), inner);
        for (const auto &g : attr.graphs())
          outerNames(g, inner);
        for (const auto &name : inner)
          read(name.getKey().str());
      }
    }
    for (const auto &o : graph.output())
      read(o.name());
  }

  /// ONNX requires nodes in topological order, but tools that rewrite
  /// graphs (fp16 converters, optimizers) often leave them out of order, and
  /// ONNX Runtime sorts them. So does Kiln, keeping the file's order among
  /// nodes that do not depend on each other, and says so in a remark. A
  /// node depends on the producers of its inputs and of the names its
  /// subgraphs read from outside; a cycle is refused. Subgraphs are sorted
  /// the same way.
  LogicalResult sortGraph(onnx::GraphProto &graph) {
    int n = graph.node_size();
    llvm::StringMap<int> producer;
    for (int i = 0; i < n; ++i)
      for (const std::string &o : graph.node(i).output())
        if (!o.empty())
          producer[o] = i;
    std::vector<std::vector<int>> users(n);
    std::vector<int> pending(n, 0);
    // The first node (in file order) that reads a value produced later.
    int early = -1;
    std::string earlyValue;
    for (int i = 0; i < n; ++i) {
      const onnx::NodeProto &node = graph.node(i);
      llvm::StringSet<> reads;
      for (const std::string &in : node.input())
        if (!in.empty())
          reads.insert(in);
      for (const auto &attr : node.attribute()) {
        if (attr.has_g())
          outerNames(attr.g(), reads);
        for (const auto &g : attr.graphs())
          outerNames(g, reads);
      }
      std::set<int> deps;
      for (const auto &name : reads) {
        auto it = producer.find(name.getKey());
        if (it == producer.end())
          continue; // a graph input, initializer or outer value
        deps.insert(it->second);
        if (it->second >= i && early < 0) {
          early = i;
          earlyValue = name.getKey().str();
        }
      }
      for (int d : deps)
        users[d].push_back(i);
      pending[i] = (int)deps.size();
    }
    if (early >= 0) {
      // Kahn's algorithm, always taking the ready node earliest in the file.
      std::set<int> ready;
      for (int i = 0; i < n; ++i)
        if (pending[i] == 0)
          ready.insert(i);
      std::vector<int> order;
      order.reserve(n);
      while (!ready.empty()) {
        int i = *ready.begin();
        ready.erase(ready.begin());
        order.push_back(i);
        for (int u : users[i])
          if (--pending[u] == 0)
            ready.insert(u);
      }
      if ((int)order.size() != n) {
        std::string names;
        int listed = 0;
        for (int i = 0; i < n && listed < 4; ++i)
          if (pending[i] > 0) {
            names += (listed++ ? ", " : "") + describe(graph.node(i), i);
          }
        return error(graph.name())
               << "graph '" << graph.name() << "' has a cycle: "
               << n - (int)order.size()
               << " nodes depend on each other's outputs (" << names
               << (n - (int)order.size() > listed ? ", ..." : "")
               << "); an ONNX graph must be acyclic (use Loop for iteration)";
      }
      const onnx::NodeProto &reader = graph.node(early);
      emitRemark(NameLoc::get(StringAttr::get(&ctx, nodeName(reader, early))))
          << "the nodes of graph '" << graph.name()
          << "' were not in topological order (" << describe(reader, early)
          << " reads '" << earlyValue
          << "' before the node that produces it); Kiln sorted them, as "
             "ONNX Runtime does";
      std::vector<onnx::NodeProto> sorted(n);
      for (int k = 0; k < n; ++k)
        sorted[k].Swap(graph.mutable_node(order[k]));
      for (int k = 0; k < n; ++k)
        graph.mutable_node(k)->Swap(&sorted[k]);
    }
    for (auto &node : *graph.mutable_node())
      for (auto &attr : *node.mutable_attribute()) {
        if (attr.has_g() && failed(sortGraph(*attr.mutable_g())))
          return failure();
        for (auto &g : *attr.mutable_graphs())
          if (failed(sortGraph(g)))
            return failure();
      }
    return success();
  }

  /// A tensor's data must be what its dims and type say, before anything
  /// (ONNX's shape inference included) reads it: non-negative dims whose
  /// byte size fits in 64 bits, and raw_data of exactly that size or a typed
  /// field of exactly that many values. External data is checked when it is
  /// read (OnnxImporter).
  LogicalResult checkTensorData(const onnx::TensorProto &t,
                                const std::string &what) {
    auto fail = [&]() {
      return error(t.name().empty() ? what : t.name()) << what << ": ";
    };
    uint64_t count = 1;
    for (int64_t d : t.dims())
      if (d < 0 || (d && count > UINT64_MAX / (uint64_t)d)) {
        fail() << "tensor '" << t.name() << "' has the dims ["
               << llvm::join(llvm::map_range(t.dims(),
                                             [](int64_t v) {
                                               return std::to_string(v);
                                             }),
                             ", ")
               << "], which are negative or overflow 64 bits";
        return failure();
      } else {
        count *= (uint64_t)d;
      }
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
      return success();
    uint64_t size = 0; // bytes per element in raw_data
    uint64_t typed = 0;
    using TP = onnx::TensorProto;
    switch (t.data_type()) {
    case TP::FLOAT: size = 4; typed = t.float_data_size(); break;
    case TP::DOUBLE: size = 8; typed = t.double_data_size(); break;
    case TP::INT64: size = 8; typed = t.int64_data_size(); break;
    case TP::UINT64: size = 8; typed = t.uint64_data_size(); break;
    case TP::UINT32: size = 4; typed = t.uint64_data_size(); break;
    case TP::INT32: size = 4; typed = t.int32_data_size(); break;
    case TP::INT16: case TP::UINT16: case TP::FLOAT16: case TP::BFLOAT16:
      size = 2; typed = t.int32_data_size(); break;
    case TP::INT8: case TP::UINT8: case TP::BOOL:
      size = 1; typed = t.int32_data_size(); break;
    case TP::COMPLEX64: size = 8; typed = t.float_data_size() / 2; break;
    case TP::COMPLEX128: size = 16; typed = t.double_data_size() / 2; break;
    case TP::STRING:
      if (t.string_data_size() != 0 && (uint64_t)t.string_data_size() != count) {
        fail() << "tensor '" << t.name() << "' holds " << t.string_data_size()
               << " strings; its dims call for " << count;
        return failure();
      }
      return success();
    default:
      return success(); // the importer names the unsupported type
    }
    if (t.has_raw_data()) {
      if (count > UINT64_MAX / size || t.raw_data().size() != count * size) {
        fail() << "tensor '" << t.name() << "' has " << t.raw_data().size()
               << " bytes of raw data; its dims and type call for "
               << (count > UINT64_MAX / size ? std::string("more than 2^64")
                                            : std::to_string(count * size));
        return failure();
      }
      return success();
    }
    if (typed != count && !(typed == 0 && count == 0)) {
      fail() << "tensor '" << t.name() << "' holds " << typed
             << " values; its dims call for " << count;
      return failure();
    }
    return success();
  }

  LogicalResult checkNode(onnx::NodeProto &node, int index) {
    bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
    if (!defaultDomain)
      return success();
    int64_t opset = opsetOf(node.domain());
    std::set<std::string> seen;
    for (const auto &attr : node.attribute())
      if (!seen.insert(attr.name()).second)
        return error(nodeName(node, index))
               << describe(node, index) << ": attribute '" << attr.name()
               << "' is given twice";
    if (failed(checkAttributes(node, index, opset)) ||
        failed(checkWindow(node, index)) || failed(checkBranches(node, index)))
      return failure();
    return success();
  }

  /// An If's branches each produce the node's outputs, also the branch a
  /// constant condition leaves dead; a Loop body takes the iteration number
  /// and the condition and returns the condition.
  LogicalResult checkBranches(const onnx::NodeProto &node, int index) {
    for (const auto &attr : node.attribute()) {
      if (!attr.has_g())
        continue;
      const onnx::GraphProto &g = attr.g();
      if (node.op_type() == "If" && g.output_size() != node.output_size())
        return error(nodeName(node, index))
               << describe(node, index) << ": " << attr.name() << " returns "
               << g.output_size() << " values; the node has "
               << node.output_size() << " outputs, and each branch must "
               << "return one value for each";
      if (node.op_type() == "Loop" && attr.name() == "body" &&
          (g.input_size() < 2 || g.output_size() < 1 ||
           g.output_size() - 1 < g.input_size() - 2 ||
           node.input_size() < 2 || node.input_size() != g.input_size()))
        return error(nodeName(node, index))
               << describe(node, index)
               << ": the body must take the iteration number, the condition "
                  "and one value per loop-carried input, and return the "
                  "condition and one value per loop-carried input (then the "
                  "scan outputs); it takes "
               << g.input_size() << " and returns " << g.output_size()
               << " for " << node.input_size() << " node inputs";
    }
    return success();
  }

  /// Attribute names and types, and the number of inputs, against the
  /// operator's definition at the model's opset: ONNX's schema registry up to
  /// its last opset (ONNX 1.12 knows opsets up to 17), and past it the versions
  /// ONNX added since (NewerAttributes.inc, from ONNX 1.23's changelog), or the
  /// registry's last version of an operator that has not changed since.
  LogicalResult checkAttributes(const onnx::NodeProto &node, int index,
                                int64_t opset) {
    const auto &ranges =
        onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    auto range = ranges.find(onnx::ONNX_DOMAIN);
    if (range == ranges.end())
      return success();
    int64_t registryOpset = range->second.second;
    std::map<std::string, onnx::AttributeProto::AttributeType> known;
    int64_t version = 0, maxInputs = -1;
    if (const NewerOperator *newer = opset > registryOpset
                                         ? newerOperator(node.op_type(), opset)
                                         : nullptr) {
      for (const auto &[name, type] : newer->attributes)
        known[name] = type;
      version = newer->version;
      maxInputs = newerMaxInputs(node.op_type());
    } else if (const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
                   node.op_type(), int(std::min(opset, registryOpset)), "")) {
      for (const auto &[name, attr] : schema->attributes())
        known[name] = attr.type;
      version = schema->since_version();
      // A later version's inputs too (Squeeze's axes became an input at 13;
      // exports that pass it earlier have run): only inputs no version of
      // the op takes are refused.
      maxInputs = schema->max_input();
      if (const onnx::OpSchema *last = onnx::OpSchemaRegistry::Schema(
              node.op_type(), int(registryOpset), ""))
        maxInputs = std::max<int64_t>(maxInputs, last->max_input());
    } else {
      return success(); // the op table reports unknown ops
    }
    for (const auto &attr : node.attribute()) {
      if (attr.has_ref_attr_name())
        continue;
      auto it = known.find(attr.name());
      if (it == known.end()) {
        std::string names;
        for (const auto &entry : known)
          names += (names.empty() ? "" : ", ") + entry.first;
        return error(nodeName(node, index))
               << describe(node, index) << ": unknown attribute '"
               << attr.name() << "'; " << node.op_type() << "-" << version
               << " has " << (names.empty() ? "none" : names);
      }
      auto want = it->second;
      if (attr.type() != onnx::AttributeProto::UNDEFINED &&
          want != onnx::AttributeProto::UNDEFINED && attr.type() != want)
        return error(nodeName(node, index))
               << describe(node, index) << ": attribute '" << attr.name()
               << "' is " << onnx::AttributeProto::AttributeType_Name(attr.type())
               << ", but " << node.op_type() << " expects "
               << onnx::AttributeProto::AttributeType_Name(want);
    }
    // Inputs past the definition's last one: a converter reads the ones it
    // knows, and ONNX's inference may read the rest otherwise.
    if (maxInputs >= 0 && node.input_size() > maxInputs)
      return error(nodeName(node, index))
             << describe(node, index) << ": " << node.input_size()
             << " inputs, but " << node.op_type() << " takes at most "
             << maxInputs << " in any version "
             << (version > registryOpset
                     ? std::string("of ONNX 1.23")
                     : "up to opset " + std::to_string(registryOpset))
             << "; remove the extra inputs";
    return success();
  }

  /// strides, dilations and kernel_shape must be positive; without
  /// kernel_shape, a constant weight gives it (ONNX's default), so that
  /// shape inference compares it with the input's rank instead of reading
  /// past it.
  LogicalResult checkWindow(onnx::NodeProto &node, int index) {
    const WindowOp *op = nullptr;
    for (const WindowOp &w : kWindowOps)
      if (node.op_type() == w.opType)
        op = &w;
    if (!op)
      return success();
    bool hasKernelShape = false;
    for (const auto &attr : node.attribute()) {
      bool window = attr.name() == "strides" || attr.name() == "dilations" ||
                    attr.name() == "kernel_shape";
      hasKernelShape |= attr.name() == "kernel_shape";
      if (window)
        for (int64_t v : attr.ints())
          if (v < 1)
            return error(nodeName(node, index))
                   << describe(node, index) << ": " << attr.name()
                   << " must be 1 or more, got " << v;
      if (attr.name() == "group" && attr.i() < 1)
        return error(nodeName(node, index))
               << describe(node, index) << ": group must be 1 or more, got "
               << attr.i();
    }
    if (hasKernelShape || op->weightInput < 0 ||
        node.input_size() <= op->weightInput)
      return success();
    for (const auto &init : model.graph().initializer()) {
      if (init.name() != node.input(op->weightInput))
        continue;
      if (init.dims_size() < 3)
        return error(nodeName(node, index))
               << describe(node, index) << ": the weight '" << init.name()
               << "' has rank " << init.dims_size()
               << "; it must be [M, C/group, k1, k2, ...] (rank 3 or more)";
      auto *attr = node.add_attribute();
      attr->set_name("kernel_shape");
      attr->set_type(onnx::AttributeProto::INTS);
      for (int i = 2; i < init.dims_size(); ++i)
        attr->add_ints(init.dims(i));
    }
    return success();
  }

  MLIRContext &ctx;
  onnx::ModelProto &model;
  llvm::StringMap<int64_t> opsets; // domain ("" = default) -> version
};

} // namespace

LogicalResult mlir::kiln::validateModel(MLIRContext &ctx,
                                        onnx::ModelProto &model) {
  return Validator(ctx, model).run();
}
