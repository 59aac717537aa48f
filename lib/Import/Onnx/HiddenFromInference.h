//===- HiddenFromInference.h - ops ONNX's inference gets wrong -*- C++ -*-===//
//
// Kiln links Debian's ONNX library (1.12), whose shape inference of some
// newer ops computes wrong static shapes; the importer hides those nodes
// while ONNX infers and lets Kiln's conversion type their outputs.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_IMPORT_ONNX_HIDDENFROMINFERENCE_H
#define KILN_LIB_IMPORT_ONNX_HIDDENFROMINFERENCE_H

#include <onnx/onnx_pb.h>

#include <string>
#include <utility>
#include <vector>

namespace mlir::kiln {
/// Ops whose shape inference in the ONNX library Kiln links (Debian's
/// 1.12) computes wrong static shapes: STFT counts its frames with the
/// onesided bin count instead of the frame length ([2, 300] with frames of
/// 64 every 16 gives 17 frames, not 15). While ONNX infers, these nodes are
/// moved to a domain it does not know, so their outputs stay untyped and
/// Kiln's conversion computes them; the domain is restored after.
class HiddenFromInference {
public:
  explicit HiddenFromInference(::onnx::GraphProto &graph) { hide(graph); }
  ~HiddenFromInference() {
    for (auto &[node, domain] : hidden)
      node->set_domain(domain);
  }

private:
  void hide(::onnx::GraphProto &graph) {
    for (::onnx::NodeProto &n : *graph.mutable_node()) {
      if ((n.domain().empty() || n.domain() == "ai.onnx") &&
          n.op_type() == "STFT") {
        hidden.push_back({&n, n.domain()});
        n.set_domain("kiln.uninferred");
      }
      for (::onnx::AttributeProto &a : *n.mutable_attribute()) {
        if (a.has_g())
          hide(*a.mutable_g());
        for (::onnx::GraphProto &g : *a.mutable_graphs())
          hide(g);
      }
    }
  }
  std::vector<std::pair<::onnx::NodeProto *, std::string>> hidden;
};
} // namespace mlir::kiln

#endif
