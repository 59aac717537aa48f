// The KServe v2 infer call: a JSON request (optionally followed by raw tensor
// bytes, the binary tensor extension) in, a JSON response (optionally followed
// by raw output bytes) out.
#ifndef KILN_TOOLS_KILN_SERVE_INFER_H
#define KILN_TOOLS_KILN_SERVE_INFER_H

#include "ModelVersion.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::serve {

struct InferResponse {
  std::string body;
  /// Bytes of JSON at the start of `body`; set when raw output bytes follow
  /// (send it as Inference-Header-Content-Length).
  std::optional<size_t> jsonBytes;
};

// Pieces of one infer call that do not depend on the protocol: HTTP/JSON
// (infer() below) and gRPC (GrpcInfer.cpp) check inputs, run jobs and count
// requests the same way, so a model answers both with the same numbers and
// the same errors.

/// "model 'm' version 3", for messages.
std::string describe(const ModelVersion &model);
/// "'x', 'z'" (or "none"): the names of `specs`, for messages.
std::string tensorNames(const std::vector<TensorInfo> &specs);
/// The shape metadata shows for input (or output) `index`: -1 as the batch
/// dimension when any number of rows is accepted in one run, and on every
/// symbolic axis of a model with run-time sizes.
std::vector<int64_t> advertisedShape(const ModelVersion &model, bool input,
                                     size_t index);
/// Output `index`'s shape after `job` ran: its rows in a batched model, the
/// shape the run wrote in a model with run-time sizes.
std::vector<int64_t> outputShape(const ModelVersion &model, size_t index,
                                 const InferJob &job);
/// The bytes of output `index` that `job` holds (at outputShape()).
size_t outputBytes(const ModelVersion &model, size_t index,
                   const InferJob &job);

/// Checks the `datatype` and `shape` of input `index`: every dimension
/// equal, but for any number of rows (>= 1, the same for every input, kept in
/// `rows`, -1 before the first input) in a batched model, and any size in
/// range (the same for a shared symbol) on a symbolic axis of a model with
/// run-time sizes, whose shape it records in `job`. Returns its element
/// count. Throws Error(400) naming `what`.
size_t checkInput(const ModelVersion &model, size_t index,
                  const std::string &datatype,
                  const std::vector<int64_t> &shape, int64_t &rows,
                  InferJob &job, const std::string &what);

/// Allocates `job`'s outputs, queues it on `model`'s batcher and waits.
/// Throws Error(503) when the queue is full, Error(500) when the model fails.
void runJob(ModelVersion &model, const std::shared_ptr<InferJob> &job);

/// Runs `fn` as one request of `model` in its metrics: success and duration,
/// or failure when it throws.
template <typename F> void countRequest(ModelVersion &model, F &&fn) {
  Clock::time_point start = Clock::now();
  Metrics &m = model.metrics();
  try {
    fn();
  } catch (...) {
    m.failure.fetch_add(1, std::memory_order_relaxed);
    throw;
  }
  m.success.fetch_add(1, std::memory_order_relaxed);
  m.requestNs.fetch_add(
      (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(
          Clock::now() - start)
          .count(),
      std::memory_order_relaxed);
}

/// Parses `body` (its first `headerLength` bytes are JSON when the client sent
/// Inference-Header-Content-Length), checks every input against the model,
/// queues the request on `model`'s batcher, waits for it and builds the
/// response. Throws Error: 400 for a bad request, 503 when the queue is full,
/// 500 when the model fails.
InferResponse infer(ModelVersion &model, const std::string &body,
                    const std::optional<std::string> &headerLength);

} // namespace kiln::serve

#endif // KILN_TOOLS_KILN_SERVE_INFER_H
