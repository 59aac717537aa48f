//===- StaleDeclarations.cpp - declared shapes the graph contradicts ------===//
//
// Part of the ONNX importer: value_info and output shapes that tools and
// exporters leave behind where the graph computes others.
//
//===----------------------------------------------------------------------===//
#include "StaleDeclarations.h"
#include "SafeInference.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <exception>
#include <optional>
#include <string>

using llvm::SmallVector;

namespace {
/// A type's sizes when all are static.
std::optional<SmallVector<int64_t>> staticDims(const onnx::TypeProto &t) {
  if (!t.has_tensor_type() || !t.tensor_type().has_shape())
    return std::nullopt;
  SmallVector<int64_t> dims;
  for (const auto &d : t.tensor_type().shape().dim()) {
    if (!d.has_dim_value())
      return std::nullopt;
    dims.push_back(d.dim_value());
  }
  return dims;
}

/// "[2, n, ?]".
std::string text(const onnx::TypeProto &t) {
  std::string out = "[";
  for (const auto &d : t.tensor_type().shape().dim()) {
    if (out.size() > 1)
      out += ", ";
    out += d.has_dim_value()       ? std::to_string(d.dim_value())
           : d.dim_param().empty() ? std::string("?")
                                   : d.dim_param();
  }
  return out + "]";
}

/// The declared sizes the graph computes otherwise: as an input's symbol,
/// or as another size. Their positions, or nothing when the ranks differ.
SmallVector<int> staleSizes(const onnx::TypeProto &declared,
                            const onnx::TypeProto &fresh) {
  SmallVector<int> at;
  if (!declared.has_tensor_type() || !fresh.has_tensor_type() ||
      !declared.tensor_type().has_shape() || !fresh.tensor_type().has_shape())
    return at;
  const auto &d = declared.tensor_type().shape();
  const auto &f = fresh.tensor_type().shape();
  if (d.dim_size() != f.dim_size())
    return at;
  for (int i = 0; i < d.dim_size(); ++i)
    if (d.dim(i).has_dim_value() &&
        (f.dim(i).has_dim_value() ? f.dim(i).dim_value() != d.dim(i).dim_value()
                                  : !f.dim(i).dim_param().empty()))
      at.push_back(i);
  return at;
}

using Remark = llvm::function_ref<void(llvm::StringRef, llvm::StringRef)>;

/// Drops each value_info of `real` that contradicts what `fresh` (the same
/// graph inferred without it) computes: in the top-level graph a static
/// shape against another static one, and with symbolic inputs any stale
/// size (the top-level graph's outputs inferred afresh count too).
void dropStaleValueInfo(onnx::GraphProto &real, const onnx::GraphProto &fresh,
                        bool top, bool symbolicInputs, Remark remark) {
  llvm::StringMap<const onnx::TypeProto *> inferred;
  for (const onnx::ValueInfoProto &info : fresh.value_info())
    inferred[info.name()] = &info.type();
  if (top && symbolicInputs)
    for (const onnx::ValueInfoProto &info : fresh.output())
      inferred[info.name()] = &info.type();
  auto *infos = real.mutable_value_info();
  for (int i = infos->size() - 1; i >= 0; --i) {
    const onnx::ValueInfoProto &info = infos->Get(i);
    const onnx::TypeProto *computed = inferred.lookup(info.name());
    if (!computed)
      continue;
    std::optional<SmallVector<int64_t>> a = staticDims(info.type()),
                                        b = staticDims(*computed);
    bool differ = top && a && b && *a != *b;
    if (!differ &&
        (!symbolicInputs || staleSizes(info.type(), *computed).empty()))
      continue;
    remark(info.name(), "value_info of '" + info.name() +
                            "' declares the shape " + text(info.type()) +
                            " but the graph computes " + text(*computed) +
                            "; Kiln ignored the stale value_info, as ONNX "
                            "Runtime does");
    infos->DeleteSubrange(i, 1);
  }
}

/// Gives each output of `real` declaring a size `fresh` computes otherwise
/// the computed one, and drops a subgraph's stale value_info; then the same
/// in every subgraph (the probe's nodes are the graph's, in the same order).
void repairOutputs(onnx::GraphProto &real, const onnx::GraphProto &fresh,
                   bool top, Remark remark) {
  for (int i = 0; i < real.output_size() && i < fresh.output_size(); ++i) {
    onnx::ValueInfoProto &out = *real.mutable_output(i);
    const onnx::TypeProto &computed = fresh.output(i).type();
    SmallVector<int> at = staleSizes(out.type(), computed);
    if (at.empty())
      continue;
    std::string before = text(out.type());
    auto *shape = out.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int d : at)
      *shape->mutable_dim(d) = computed.tensor_type().shape().dim(d);
    remark(out.name(),
           (top ? "graph output '" + out.name() + "'"
                : "output '" + out.name() + "' of subgraph '" + real.name() +
                      "'") +
               " declares the shape " + before + " but the graph computes " +
               text(computed) +
               " at the input sizes given; Kiln keeps the computed shape " +
               text(out.type()) + ", as ONNX Runtime runs it");
  }
  if (!top)
    dropStaleValueInfo(real, fresh, /*top=*/false, /*symbolicInputs=*/true,
                       remark);
  for (int n = 0; n < real.node_size() && n < fresh.node_size(); ++n)
    for (int a = 0; a < real.node(n).attribute_size() &&
                    a < fresh.node(n).attribute_size();
         ++a) {
      onnx::AttributeProto &attr = *real.mutable_node(n)->mutable_attribute(a);
      const onnx::AttributeProto &probed = fresh.node(n).attribute(a);
      if (attr.has_g() && probed.has_g())
        repairOutputs(*attr.mutable_g(), probed.g(), false, remark);
      for (int k = 0; k < attr.graphs_size() && k < probed.graphs_size(); ++k)
        repairOutputs(*attr.mutable_graphs(k), probed.graphs(k), false, remark);
    }
}

/// Clears the shapes of `g`'s outputs, and a subgraph's value_info, in
/// every graph nested in it: inferred afresh, to compare with the declared.
void undeclare(onnx::GraphProto &g, bool top) {
  for (onnx::ValueInfoProto &out : *g.mutable_output())
    if (out.type().has_tensor_type())
      out.mutable_type()->mutable_tensor_type()->clear_shape();
  if (!top)
    g.clear_value_info();
  for (onnx::NodeProto &n : *g.mutable_node())
    for (onnx::AttributeProto &a : *n.mutable_attribute()) {
      if (a.has_g())
        undeclare(*a.mutable_g(), false);
      for (onnx::GraphProto &each : *a.mutable_graphs())
        undeclare(each, false);
    }
}
} // namespace

/// Tools that rewrite a graph (fp16 converters, editors) can leave value_info
/// with the shapes of the graph before: ONNX's shape inference keeps such a
/// declared shape, and the conversion would then blame itself for the
/// disagreement. The top-level graph is inferred once without its
/// value_info (large initializers stand in as inputs of their shape, so no
/// weight bytes are copied); a value_info whose static shape contradicts a
/// static inferred one is dropped, with a remark, as ONNX Runtime ignores
/// it. Where inference knows no static shape, value_info stays: it declares
/// the shapes of run-time shape arguments.
///
/// With symbolic inputs, a declared size where the graph computes an input's
/// symbol is stale too: an exporter told only the inputs' axes are dynamic
/// writes the traced sizes into the outputs (and value_info). ONNX
/// Runtime runs such a model at every size, warning that the output's shape
/// differs from the declared one; Kiln drops that value_info and keeps the
/// computed dimensions of such an output, with a remark. A size inference
/// does not know (data-dependent) keeps the declared one, which bounds it.
void mlir::kiln::dropStaleDeclarations(
    ::onnx::ModelProto &model, bool sizesGiven,
    llvm::function_ref<void(llvm::StringRef, llvm::StringRef)> remark) {
  onnx::GraphProto &graph = *model.mutable_graph();
  auto symbolic = [](const onnx::ValueInfoProto &info) {
    if (!info.type().has_tensor_type() ||
        !info.type().tensor_type().has_shape())
      return false;
    return llvm::any_of(info.type().tensor_type().shape().dim(),
                        [](const auto &d) { return !d.has_dim_value(); });
  };
  // Sizes given on the command line may contradict declared ones too.
  bool symbolicInputs = llvm::any_of(graph.input(), symbolic) || sizesGiven;
  if (graph.value_info_size() == 0 && !symbolicInputs)
    return;
  onnx::ModelProto probe;
  *probe.mutable_opset_import() = model.opset_import();
  probe.set_ir_version(model.ir_version());
  *probe.mutable_functions() = model.functions();
  onnx::GraphProto &g = *probe.mutable_graph();
  g.set_name(graph.name());
  *g.mutable_node() = graph.node();
  *g.mutable_input() = graph.input();
  *g.mutable_output() = graph.output();
  if (symbolicInputs)
    undeclare(g, /*top=*/true);
  for (const onnx::TensorProto &init : graph.initializer()) {
    bool small = init.raw_data().size() <= 4096 &&
                 init.data_location() != onnx::TensorProto::EXTERNAL;
    if (small) {
      *g.add_initializer() = init;
      continue;
    }
    onnx::ValueInfoProto *in = g.add_input();
    in->set_name(init.name());
    auto *tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(init.data_type());
    auto *shape = tt->mutable_shape();
    for (int64_t d : init.dims())
      shape->add_dim()->set_dim_value(d);
  }
  if (!inferShapesSafely(probe))
    return;
  dropStaleValueInfo(graph, g, /*top=*/true, symbolicInputs, remark);
  if (symbolicInputs)
    repairOutputs(graph, g, /*top=*/true, remark);
}
