// One loaded version of a model: its execution slots, each with one session
// per batch variant, and the dynamic batcher that feeds them.
//
// Requests ("jobs") are cut into slices of at most the largest batch variant
// and queued. There are no worker threads: the HTTP thread that submits a job
// takes a free slot if there is one and becomes a leader (leader/follower).
// A leader takes slices from the front of the queue while they fit under the
// current batch cap, waiting up to max_queue_delay_us after the oldest one
// arrived for the batch to fill, runs the smallest variant that holds them
// (zero-padding the unused rows), copies each slice's rows back and wakes
// their owners. It leads until its own job is done, then hands the slot to
// the owner of the oldest waiting job. So an idle server runs a request with
// no thread hand-off, and a busy one wakes one thread per batch. With
// --slo-p99-ms the cap adapts (AIMD) to keep the p99 of batch run time plus
// the queue delay under the target.
//
// A model at run-time sizes runs each request at its own shapes; when its
// first symbol is a proven independent batch (packs()), a batch is the oldest
// request and the later ones with the same other sizes that fit under the
// cap, concatenated along that batch (no padding, no variants).
#ifndef KILN_TOOLS_KILN_SERVE_MODELVERSION_H
#define KILN_TOOLS_KILN_SERVE_MODELVERSION_H

#include "kiln/Client/Model.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::serve {

using Clock = std::chrono::steady_clock;
using client::TensorInfo;

/// Opens the model.so at `path` through the model client and checks that
/// this CPU can run it. Throws Error(400) saying why not.
std::shared_ptr<const client::Model> openModel(const std::string &path);

struct BatchingOptions {
  int slots = 1;               // batches that may run at once (--threads)
  int sessionThreads = 1;      // num_threads of each session (--session-threads)
  int64_t maxQueueDelayUs = 0; // how long a batch may wait to fill
  size_t maxQueue = 1024;      // queued slices beyond which submit fails (503)
  double sloP99Ms = 0;         // > 0: adapt the batch cap to this p99
};

/// A buffer with the alignment the runtime prefers.
class AlignedBuffer {
public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes);
  AlignedBuffer(AlignedBuffer &&o) noexcept : p_(o.p_), n_(o.n_) {
    o.p_ = nullptr;
    o.n_ = 0;
  }
  AlignedBuffer &operator=(AlignedBuffer &&o) noexcept;
  ~AlignedBuffer();
  char *data() const { return p_; }
  size_t size() const { return n_; }

private:
  char *p_ = nullptr;
  size_t n_ = 0;
};

/// Sessions for every batch variant, used by one leader at a time (defined in
/// ModelVersion.cpp).
struct Slot;
struct Variant;

/// One inference request: `rows` rows of every input (row-major, rows *
/// rowBytes each; caller-owned, valid until run() returns) and a buffer for
/// every output, filled by whichever thread runs its slices.
struct InferJob {
  int64_t rows = 1;
  std::vector<const char *> inputs;
  std::vector<AlignedBuffer> outputs;
  // A model with run-time sizes (runtimeExtents()): each input's shape as
  // the request gives it, and each output's as the run wrote it.
  std::vector<std::vector<int64_t>> inputShapes, outputShapes;
  Clock::time_point enqueued;

  // Batcher state, under ModelVersion's lock.
  std::condition_variable cv; // done, or handed a slot
  int queuedSlices = 0;
  int remaining = 0;    // slices not yet run
  bool leading = false; // its owner holds a slot
  Slot *slot = nullptr; // a slot handed over by a finishing leader
  std::string error;    // first failure
};

/// Counters exported at /metrics.
struct Metrics {
  std::atomic<uint64_t> success{0}, failure{0};
  std::atomic<uint64_t> inferenceRows{0}, executions{0}, paddedRows{0};
  // Durations in nanoseconds (exported in microseconds), so runs shorter
  // than a microsecond still add up.
  std::atomic<uint64_t> queueNs{0}, computeNs{0}, requestNs{0};
  std::atomic<int64_t> pending{0};
  std::vector<int64_t> batchBuckets; // histogram upper bounds, ascending
  std::unique_ptr<std::atomic<uint64_t>[]> batchCounts; // per bucket, + Inf
  std::atomic<uint64_t> batchSum{0};
};

class ModelVersion {
public:
  /// Creates the sessions and warms every variant of every slot with one
  /// run on zeros, so the version is ready for traffic when this returns.
  /// Throws Error when a session cannot be created or a warm-up run fails.
  ModelVersion(std::string name, int64_t version,
               std::shared_ptr<const client::Model> model,
               const BatchingOptions &options);
  ~ModelVersion();
  ModelVersion(const ModelVersion &) = delete;
  ModelVersion &operator=(const ModelVersion &) = delete;

  const std::string &name() const { return name_; }
  int64_t version() const { return version_; }
  const client::Model &model() const { return *model_; }
  const std::string &path() const { return model_->path(); }
  /// Compiled batch sizes, ascending; never empty.
  const std::vector<int64_t> &batchSizes() const {
    return model_->info().batchSizes;
  }
  /// True when every input and output has rank >= 1 and leading dimension
  /// batchSizes()[0]: then rows are independent and requests may be packed,
  /// padded and split along that dimension. Otherwise every request must
  /// match the declared shapes exactly and runs alone.
  bool batched() const { return batched_; }
  /// Bytes of one row (of the leading dimension) of each input and output;
  /// for an unbatched model, the whole tensor.
  const std::vector<size_t> &inputRowBytes() const { return inRowBytes_; }
  const std::vector<size_t> &outputRowBytes() const { return outRowBytes_; }
  /// The most rows one run takes: the largest variant, or for a model with
  /// a symbolic batch (dynamic()) the top of its range.
  int64_t maxBatch() const { return maxBatch_; }
  /// A symbolic batch (docs/shapes.md): one session runs any number of rows
  /// up to maxBatch() exactly, so batches are packed but never padded.
  bool dynamic() const { return dynamic_; }
  /// Symbolic dimensions at run-time sizes (docs/shapes.md): each request
  /// runs alone at the shapes it gives (within the compiled ranges), and
  /// each output has the shape the run wrote.
  bool runtimeExtents() const { return model_->info().runtimeExtents; }
  /// Run-time sizes with an independent batch (symbol 0, proven by the
  /// compiler): requests whose other sizes agree are concatenated along it,
  /// up to maxBatch() rows, into one run and split after. rows are then a
  /// request's batch, and inputRowBytes()/outputRowBytes() one row at the
  /// other symbols' maxima.
  bool packs() const { return packs_; }
  /// Requests carry rows along the leading dimension that the batcher may
  /// pack (batched() or packs()); a request's `rows` then count them.
  bool takesRows() const { return batched_ || packs_; }
  /// The current cap on rows per batch (the largest variant unless the SLO
  /// controller lowered it).
  int64_t batchCap() const { return cap_.load(std::memory_order_relaxed); }
  Metrics &metrics() { return metrics_; }

  /// Queues `job` (its output buffers allocated by the caller) and returns
  /// when every row ran, perhaps leading batches of other jobs meanwhile.
  /// Returns false with job->error set when the model failed. Throws
  /// Error(503) when the queue is full.
  bool run(const std::shared_ptr<InferJob> &job);

private:
  struct Slice {
    std::shared_ptr<InferJob> job;
    int64_t begin, rows;
  };
  void makeSlot(Slot &slot);
  void execute(Slot &slot, std::vector<Slice> &batch, int64_t rows,
               std::string &error);
  void takeBatch(std::vector<Slice> &batch, int64_t &rows);
  /// One session runs any number of rows up to maxBatch() exactly (a
  /// symbolic batch, or packing at run-time sizes): no variants, no padding.
  bool exactRows() const { return dynamic_ || packs_; }
  void packRuntimeBatch(Variant &v, const std::vector<Slice> &batch,
                        int64_t rows);
  bool unpackRuntimeBatch(Variant &v, const std::vector<Slice> &batch,
                          int64_t rows, std::string &message);
  void handOff(Slot *slot);
  void recordLatency(double us);
  int64_t effectiveCap() const;

  std::string name_;
  int64_t version_;
  std::shared_ptr<const client::Model> model_;
  bool batched_ = false;
  bool dynamic_ = false;
  bool packs_ = false;
  int64_t maxBatch_ = 1;
  BatchingOptions options_;
  std::vector<size_t> inRowBytes_, outRowBytes_;
  Metrics metrics_;

  std::mutex mu_;
  std::condition_variable fill_; // leaders waiting for a batch to fill
  std::deque<Slice> queue_;
  int64_t queuedRows_ = 0;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<Slot *> idle_;

  std::atomic<int64_t> cap_;
  std::mutex sloMu_;
  std::deque<double> window_;
  int sinceAdjust_ = 0;
};

} // namespace kiln::serve

#endif // KILN_TOOLS_KILN_SERVE_MODELVERSION_H
