// The KServe v2 infer call: a JSON request (optionally followed by raw tensor
// bytes, the binary tensor extension) in, a JSON response (optionally followed
// by raw output bytes) out.
#ifndef KILN_TOOLS_KILN_SERVE_INFER_H
#define KILN_TOOLS_KILN_SERVE_INFER_H

#include "ModelVersion.h"

#include <optional>
#include <string>

namespace kiln::serve {

struct InferResponse {
  std::string body;
  /// Bytes of JSON at the start of `body`; set when raw output bytes follow
  /// (send it as Inference-Header-Content-Length).
  std::optional<size_t> jsonBytes;
};

/// Parses `body` (its first `headerLength` bytes are JSON when the client sent
/// Inference-Header-Content-Length), checks every input against the model,
/// queues the request on `model`'s batcher, waits for it and builds the
/// response. Throws Error: 400 for a bad request, 503 when the queue is full,
/// 500 when the model fails.
InferResponse infer(ModelVersion &model, const std::string &body,
                    const std::optional<std::string> &headerLength);

} // namespace kiln::serve

#endif // KILN_TOOLS_KILN_SERVE_INFER_H
