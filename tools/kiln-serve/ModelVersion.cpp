#include "ModelVersion.h"

#include "Error.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace kiln::serve {

namespace {
constexpr size_t kAlignment = 64;
// The SLO controller looks at the last kWindow request latencies and adjusts
// the cap after every kAdjustEvery completions.
constexpr size_t kWindow = 128;
constexpr int kAdjustEvery = 16;
constexpr double kDecrease = 0.9; // Clipper backs off by 10%

uint64_t nanos(Clock::duration d) {
  return (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(d)
      .count();
}
} // namespace

AlignedBuffer::AlignedBuffer(size_t bytes) : n_(bytes) {
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  p_ = static_cast<char *>(
      std::aligned_alloc(kAlignment, rounded ? rounded : kAlignment));
  if (!p_)
    throw Error(503,
                "out of memory allocating " + std::to_string(bytes) + " bytes");
}

AlignedBuffer &AlignedBuffer::operator=(AlignedBuffer &&o) noexcept {
  std::swap(p_, o.p_);
  std::swap(n_, o.n_);
  return *this;
}

AlignedBuffer::~AlignedBuffer() { std::free(p_); }

struct Variant {
  std::unique_ptr<client::Session> session; // its tensors' shapes, too
  int64_t batch;                            // rows it holds
  std::vector<AlignedBuffer> in, out;       // staging for packed batches
  std::vector<kiln_tensor> inT, outT;
  // The shapes inT/outT point at; a symbolic batch sets their leading
  // dimension to each run's rows.
  std::vector<std::vector<int64_t>> inShapes, outShapes;
};

struct Slot {
  std::vector<Variant> variants; // ascending batch size
};

std::shared_ptr<const client::Model> openModel(const std::string &path) {
  std::shared_ptr<const client::Model> model;
  try {
    model = client::Model::open(path);
    model->checkCpu();
  } catch (const client::Error &e) {
    if (e.code() == KILN_OK)
      throw Error(400, e.what());
    throw Error(400, path + " cannot run on this CPU: " + e.statusMessage());
  }
  return model;
}

static size_t rowBytes(const TensorInfo &t, bool batched) {
  size_t n = t.elementSize();
  for (size_t d = batched ? 1 : 0; d < t.shape.size(); ++d)
    n *= (size_t)t.shape[d];
  return n;
}

// Batched: every tensor leads with the first variant's batch size. Several
// variants promise this (the client checks it); with one variant it is our
// reading of the shapes.
static bool leadsWithBatch(const client::Model &model) {
  const client::ModelInfo &info = model.info();
  // Run-time sizes: requests run at their own shapes, packed only along a
  // proven independent batch (packs()), never padded to one shape.
  if (info.runtimeExtents)
    return false;
  if (info.dynamic()) {
    // A symbolic batch: the tensors the model marks, which must be all.
    for (size_t i = 0; i < info.inputs.size(); ++i)
      if (i >= info.inputSymbols.size() || info.inputSymbols[i].empty() ||
          info.inputSymbols[i][0] < 0)
        throw Error(400, model.path() + ": input '" + info.inputs[i].name +
                             "' does not carry the symbolic batch '" +
                             info.symbols[0].name +
                             "'; kiln-serve packs requests along the batch, "
                             "so every input must lead with it");
    return !info.inputs.empty();
  }
  bool batched = !model.inputs().empty();
  for (const auto *list : {&model.inputs(), &model.outputs()})
    for (const TensorInfo &t : *list)
      batched = batched && !t.shape.empty() &&
                t.shape[0] == model.info().batchSizes.front();
  return batched;
}

ModelVersion::ModelVersion(std::string name, int64_t version,
                           std::shared_ptr<const client::Model> model,
                           const BatchingOptions &options)
    : name_(std::move(name)), version_(version), model_(std::move(model)),
      batched_(leadsWithBatch(*model_)), options_(options) {
  dynamic_ = batched_ && model_->info().dynamic();
  packs_ = model_->info().runtimeExtents && model_->info().independentBatch;
  maxBatch_ = exactRows() ? model_->info().symbols.front().max
                          : batchSizes().back();
  // Rows are what the batcher counts: a variant of 0 rows has none to fill.
  if (batchSizes().front() < 1)
    throw Error(400, path() + ": the batch sizes are not ascending and "
                              "positive");
  if (!batched_ && batchSizes().size() > 1)
    throw Error(400, path() + " has several batch variants but no input to "
                              "batch");
  // A packing model's tensors are at the maxima, the batch's included.
  for (const TensorInfo &t : model_->inputs())
    inRowBytes_.push_back(rowBytes(t, takesRows()));
  for (const TensorInfo &t : model_->outputs())
    outRowBytes_.push_back(rowBytes(t, takesRows()));
  cap_ = takesRows() ? maxBatch() : 1;

  // Powers of two up to the largest variant, then +Inf.
  for (int64_t b = 1;; b *= 2) {
    metrics_.batchBuckets.push_back(b);
    if (b >= maxBatch())
      break;
  }
  metrics_.batchCounts.reset(
      new std::atomic<uint64_t>[metrics_.batchBuckets.size() + 1]);
  for (size_t i = 0; i <= metrics_.batchBuckets.size(); ++i)
    metrics_.batchCounts[i] = 0;

  for (int i = 0; i < std::max(1, options_.slots); ++i) {
    slots_.push_back(std::make_unique<Slot>());
    makeSlot(*slots_.back());
    idle_.push_back(slots_.back().get());
  }
}

// Nothing can be running: every request holds a reference to its version.
ModelVersion::~ModelVersion() = default;

// One session and staging buffers per variant, each warmed with a run on
// zeros: page faults, lazy binding and cold caches are paid here, not by the
// first request.
void ModelVersion::makeSlot(Slot &slot) {
  // A symbolic batch needs one session, which runs up to maxBatch() rows.
  std::vector<int64_t> sizes =
      exactRows() ? std::vector<int64_t>{maxBatch_} : batchSizes();
  for (int64_t b : sizes) {
    std::string variant = path() + ": batch size " + std::to_string(b);
    Variant v;
    v.batch = takesRows() ? b : 1;
    try {
      v.session = model_->createSession({options_.sessionThreads, b});
    } catch (const client::Error &e) {
      throw Error(500, variant + ": " + e.what());
    }
    // A kiln_tensor over a staging buffer, shaped as the session's tensor
    // through a copy of its shape (a symbolic batch sets its leading
    // dimension per run).
    auto view = [](const AlignedBuffer &buffer, const TensorInfo &t,
                   std::vector<std::vector<int64_t>> &shapes) {
      shapes.push_back(t.shape);
      return kiln_tensor{buffer.data(), buffer.size(), t.dtype(),
                         (int32_t)t.shape.size(), shapes.back().data()};
    };
    v.inShapes.reserve(inRowBytes_.size());
    v.outShapes.reserve(outRowBytes_.size());
    for (size_t i = 0; i < inRowBytes_.size(); ++i) {
      v.in.emplace_back(inRowBytes_[i] * v.batch);
      std::memset(v.in.back().data(), 0, v.in.back().size());
      v.inT.push_back(view(v.in.back(), v.session->inputs()[i], v.inShapes));
    }
    for (size_t i = 0; i < outRowBytes_.size(); ++i) {
      v.out.emplace_back(outRowBytes_[i] * v.batch);
      v.outT.push_back(
          view(v.out.back(), v.session->outputs()[i], v.outShapes));
    }
    try {
      v.session->run(v.inT, v.outT);
    } catch (const client::Error &e) {
      throw Error(500, variant + ": the warm-up run failed: " +
                           e.statusMessage());
    }
    slot.variants.push_back(std::move(v));
  }
}

int64_t ModelVersion::effectiveCap() const {
  // Padding up to a variant costs as much as filling it, so the cap snaps
  // down to the largest variant it allows.
  int64_t cap = cap_.load(std::memory_order_relaxed);
  if (packs_)
    return cap;
  if (!batched_)
    return 1;
  if (dynamic_)
    return cap; // any number of rows runs as it is
  int64_t best = batchSizes().front();
  for (int64_t b : batchSizes())
    if (b <= cap)
      best = b;
  return best;
}

bool ModelVersion::run(const std::shared_ptr<InferJob> &job) {
  // A packing model's request is one slice: its batch is in range.
  int64_t sliceRows = batched_ ? maxBatch() : packs_ ? job->rows : 1;
  int64_t slices = (job->rows + sliceRows - 1) / sliceRows;
  std::unique_lock<std::mutex> lock(mu_);
  // An empty queue always admits, so one large request cannot be refused
  // forever.
  if (options_.maxQueue && !queue_.empty() &&
      queue_.size() + (size_t)slices > options_.maxQueue)
    throw Error(503, "model '" + name_ + "' version " +
                         std::to_string(version_) +
                         " is overloaded: " + std::to_string(queue_.size()) +
                         " requests are queued (--max-queue " +
                         std::to_string(options_.maxQueue) + "); retry later");
  job->enqueued = Clock::now();
  job->remaining = (int)slices;
  job->queuedSlices = (int)slices;
  for (int64_t begin = 0; begin < job->rows; begin += sliceRows)
    queue_.push_back({job, begin, std::min(sliceRows, job->rows - begin)});
  queuedRows_ += job->rows;
  metrics_.pending.fetch_add(1, std::memory_order_relaxed);

  Slot *slot = nullptr;
  if (!idle_.empty()) {
    slot = idle_.back();
    idle_.pop_back();
    job->leading = true;
  }
  if (options_.maxQueueDelayUs > 0)
    fill_.notify_all(); // a waiting batch may be full now

  std::vector<Slice> batch;
  std::vector<double> latencies;
  std::string error;
  while (job->remaining > 0) {
    if (!slot) {
      // Follow: until our rows ran, or a finishing leader hands us its slot.
      job->cv.wait(lock, [&] { return job->remaining == 0 || job->slot; });
      std::swap(slot, job->slot);
      continue;
    }
    if (queue_.empty()) {
      // Our last rows are running under another leader; nobody is waiting
      // for a slot (they would be in the queue), so park it.
      idle_.push_back(slot);
      slot = nullptr;
      job->leading = false;
      continue;
    }
    // Lead. Wait for the batch to fill, but never past the oldest request's
    // deadline.
    if (options_.maxQueueDelayUs > 0 && queuedRows_ < effectiveCap()) {
      auto deadline = queue_.front().job->enqueued +
                      std::chrono::microseconds(options_.maxQueueDelayUs);
      if (Clock::now() < deadline) {
        fill_.wait_until(lock, deadline);
        continue;
      }
    }
    int64_t rows = 0;
    takeBatch(batch, rows);
    lock.unlock();
    error.clear();
    Clock::time_point started = Clock::now();
    execute(*slot, batch, rows, error);
    if (options_.sloP99Ms > 0)
      latencies.push_back(
          std::chrono::duration<double, std::micro>(Clock::now() - started)
              .count() +
          (double)options_.maxQueueDelayUs);
    lock.lock();
    for (Slice &s : batch) {
      InferJob &j = *s.job;
      if (!error.empty() && j.error.empty())
        j.error = error;
      if (--j.remaining == 0 && &j != job.get())
        j.cv.notify_one();
    }
    batch.clear(); // may free other jobs; their owners wait for our lock
  }
  if (slot)
    handOff(slot);
  job->leading = false;
  bool ok = job->error.empty();
  lock.unlock();
  for (double us : latencies)
    recordLatency(us);
  return ok;
}

// Whether two requests to a packing model agree on every size but the batch.
static bool sameSizesButBatch(const InferJob &a, const InferJob &b) {
  if (a.inputShapes.size() != b.inputShapes.size())
    return false;
  for (size_t i = 0; i < a.inputShapes.size(); ++i)
    if (a.inputShapes[i].size() != b.inputShapes[i].size() ||
        !std::equal(a.inputShapes[i].begin() + 1, a.inputShapes[i].end(),
                    b.inputShapes[i].begin() + 1))
      return false;
  return true;
}

// Moves the next batch from the queue into `batch`: slices from the front
// while their rows fit under the cap. A packing model takes the oldest
// request and every later one (in order) with the same other sizes that
// fits, skipping the rest, which keep their place. Under mu_.
void ModelVersion::takeBatch(std::vector<Slice> &batch, int64_t &rows) {
  int64_t cap = effectiveCap();
  auto take = [&](std::deque<Slice>::iterator it) {
    rows += it->rows;
    queuedRows_ -= it->rows;
    if (--it->job->queuedSlices == 0)
      metrics_.pending.fetch_sub(1, std::memory_order_relaxed);
    batch.push_back(std::move(*it));
    return queue_.erase(it);
  };
  if (packs_) {
    take(queue_.begin());
    const InferJob &first = *batch.front().job;
    for (auto it = queue_.begin(); it != queue_.end() && rows < cap;)
      if (rows + it->rows <= cap && sameSizesButBatch(first, *it->job))
        it = take(it);
      else
        ++it;
    return;
  }
  while (!queue_.empty()) {
    if (!batch.empty() && rows + queue_.front().rows > cap)
      break;
    take(queue_.begin());
  }
}

// Gives a free slot to the owner of the oldest queued job that is only
// following, or parks it. Under mu_.
void ModelVersion::handOff(Slot *slot) {
  for (Slice &s : queue_) {
    InferJob &j = *s.job;
    if (!j.leading && !j.slot) {
      j.slot = slot;
      j.leading = true;
      j.cv.notify_one();
      return;
    }
  }
  idle_.push_back(slot);
}

void ModelVersion::execute(Slot &slot, std::vector<Slice> &batch, int64_t rows,
                           std::string &error) {
  Clock::time_point start = Clock::now();
  Variant *v = &slot.variants.back();
  for (Variant &candidate : slot.variants)
    if (candidate.batch >= rows) {
      v = &candidate;
      break;
    }
  size_t nIn = v->inT.size(), nOut = v->outT.size();
  // A symbolic batch runs exactly `rows` rows: no padding.
  int64_t runRows = exactRows() ? rows : v->batch;
  if (dynamic_) {
    for (size_t i = 0; i < nIn; ++i) {
      v->inShapes[i][0] = rows;
      v->inT[i].bytes = (size_t)rows * inRowBytes_[i];
    }
    for (size_t i = 0; i < nOut; ++i) {
      v->outShapes[i][0] = rows;
      v->outT[i].bytes = (size_t)rows * outRowBytes_[i];
    }
  }

  // One slice that fills the variant runs in place on the request's own
  // buffers; anything else is packed into the staging buffers.
  bool direct = batch.size() == 1 && batch[0].rows == runRows;
  for (size_t i = 0; direct && i < nIn; ++i)
    direct = reinterpret_cast<uintptr_t>(batch[0].job->inputs[i] +
                                         batch[0].begin * inRowBytes_[i]) %
                 model_->inputs()[i].elementSize() ==
             0;
  bool packed = runtimeExtents() && batch.size() > 1;
  if (packed) {
    packRuntimeBatch(*v, batch, rows);
  } else if (runtimeExtents()) {
    // One job at its own shapes; the staging buffers hold the largest.
    InferJob &job = *batch[0].job;
    for (size_t i = 0; i < nIn; ++i) {
      const std::vector<int64_t> &shape = job.inputShapes[i];
      std::copy(shape.begin(), shape.end(), v->inShapes[i].begin());
      size_t bytes = model_->inputs()[i].elementSize();
      for (int64_t d : shape)
        bytes *= (size_t)d;
      v->inT[i].bytes = bytes;
      bool aligned = reinterpret_cast<uintptr_t>(job.inputs[i]) %
                         model_->inputs()[i].elementSize() ==
                     0;
      if (aligned) {
        v->inT[i].data = const_cast<char *>(job.inputs[i]);
      } else {
        std::memcpy(v->in[i].data(), job.inputs[i], bytes);
        v->inT[i].data = v->in[i].data();
      }
    }
    for (size_t i = 0; i < nOut; ++i) {
      v->outT[i].data = job.outputs[i].data();
      v->outT[i].bytes = job.outputs[i].size();
    }
    direct = true; // nothing to copy back
  } else if (direct) {
    const Slice &s = batch[0];
    for (size_t i = 0; i < nIn; ++i)
      v->inT[i].data =
          const_cast<char *>(s.job->inputs[i] + s.begin * inRowBytes_[i]);
    for (size_t i = 0; i < nOut; ++i)
      v->outT[i].data = s.job->outputs[i].data() + s.begin * outRowBytes_[i];
  } else {
    for (size_t i = 0; i < nIn; ++i) {
      v->inT[i].data = v->in[i].data();
      char *dst = v->in[i].data();
      for (const Slice &s : batch) {
        size_t n = (size_t)s.rows * inRowBytes_[i];
        std::memcpy(dst, s.job->inputs[i] + s.begin * inRowBytes_[i], n);
        dst += n;
      }
      // Padding rows are zeros, so they cannot produce NaNs or traps.
      std::memset(dst, 0, (size_t)(runRows - rows) * inRowBytes_[i]);
    }
    for (size_t i = 0; i < nOut; ++i)
      v->outT[i].data = v->out[i].data();
  }

  std::string message;
  bool ok = true;
  try {
    v->session->run(v->inT, v->outT);
    if (packed) {
      ok = unpackRuntimeBatch(*v, batch, rows, message);
    } else if (runtimeExtents()) {
      InferJob &job = *batch[0].job;
      job.outputShapes.clear();
      for (size_t i = 0; i < nOut; ++i)
        job.outputShapes.push_back(v->session->outputShape(i));
    }
  } catch (const client::Error &e) {
    ok = false;
    message = e.statusMessage();
  }

  if (ok && !direct && !packed) {
    for (size_t i = 0; i < nOut; ++i) {
      const char *src = v->out[i].data();
      for (const Slice &s : batch) {
        size_t n = (size_t)s.rows * outRowBytes_[i];
        std::memcpy(s.job->outputs[i].data() + s.begin * outRowBytes_[i], src,
                    n);
        src += n;
      }
    }
  }

  Clock::time_point ran = Clock::now();
  Metrics &m = metrics_;
  m.executions.fetch_add(1, std::memory_order_relaxed);
  m.inferenceRows.fetch_add((uint64_t)rows, std::memory_order_relaxed);
  m.paddedRows.fetch_add((uint64_t)(runRows - rows),
                         std::memory_order_relaxed);
  m.computeNs.fetch_add(nanos(ran - start), std::memory_order_relaxed);
  m.batchSum.fetch_add((uint64_t)rows, std::memory_order_relaxed);
  size_t bucket = 0;
  while (bucket < m.batchBuckets.size() && rows > m.batchBuckets[bucket])
    ++bucket;
  m.batchCounts[bucket].fetch_add(1, std::memory_order_relaxed);

  for (const Slice &s : batch)
    m.queueNs.fetch_add(nanos(start - s.job->enqueued),
                        std::memory_order_relaxed);
  if (!ok)
    error = "model '" + name_ + "' version " + std::to_string(version_) +
            ": kiln_run failed: " + message;
}

// Requests of a packing model that agree on every size but the batch, as one
// run: each input's rows one request after another in the staging buffers
// (which hold the maxima), the batch their sum.
void ModelVersion::packRuntimeBatch(Variant &v, const std::vector<Slice> &batch,
                                    int64_t rows) {
  const InferJob &first = *batch.front().job;
  for (size_t i = 0; i < v.inT.size(); ++i) {
    const std::vector<int64_t> &shape = first.inputShapes[i];
    size_t rowBytes = model_->inputs()[i].elementSize();
    for (size_t d = 1; d < shape.size(); ++d)
      rowBytes *= (size_t)shape[d];
    std::copy(shape.begin(), shape.end(), v.inShapes[i].begin());
    v.inShapes[i][0] = rows;
    char *dst = v.in[i].data();
    for (const Slice &s : batch) {
      std::memcpy(dst, s.job->inputs[i], (size_t)s.rows * rowBytes);
      dst += (size_t)s.rows * rowBytes;
    }
    v.inT[i].data = v.in[i].data();
    v.inT[i].bytes = (size_t)rows * rowBytes;
  }
  for (size_t i = 0; i < v.outT.size(); ++i) {
    v.outT[i].data = v.out[i].data();
    v.outT[i].bytes = v.out[i].size();
  }
}

// Splits a packed run's outputs back into its requests along the batch; the
// compiler proved each row depends on its own inputs alone, so each request
// gets what it would have alone.
bool ModelVersion::unpackRuntimeBatch(Variant &v,
                                      const std::vector<Slice> &batch,
                                      int64_t rows, std::string &message) {
  for (const Slice &s : batch)
    s.job->outputShapes.clear();
  for (size_t i = 0; i < v.outT.size(); ++i) {
    std::vector<int64_t> shape = v.session->outputShape(i);
    if (shape.empty() || shape[0] != rows) {
      message = "output '" + model_->outputs()[i].name +
                "' does not lead with the batch of the packed run";
      return false;
    }
    size_t rowBytes = model_->outputs()[i].elementSize();
    for (size_t d = 1; d < shape.size(); ++d)
      rowBytes *= (size_t)shape[d];
    const char *src = v.out[i].data();
    for (const Slice &s : batch) {
      size_t n = (size_t)s.rows * rowBytes;
      std::memcpy(s.job->outputs[i].data(), src, n);
      src += n;
      shape[0] = s.rows;
      s.job->outputShapes.push_back(shape);
    }
  }
  return true;
}

// AIMD on the batch cap, as in Clipper: the latency it controls is what a
// request spends once its batch is formed (the batch's run) plus what it may
// wait for the batch to fill (--max-queue-delay-us). While the window's p99
// meets the SLO the cap grows by one row; when it does not, the cap shrinks
// by 10% (at least one row) and the window restarts, so one slow burst is not
// punished twice. Queueing behind other batches is left out on purpose: under
// overload, smaller batches would only lower throughput and lengthen the
// queue.
void ModelVersion::recordLatency(double us) {
  // Batch variants and packing along an independent batch both take rows
  // up to the cap; a model that runs each request alone has nothing to
  // adjust.
  if (!takesRows() || maxBatch() == 1)
    return;
  std::lock_guard<std::mutex> lock(sloMu_);
  window_.push_back(us);
  if (window_.size() > kWindow)
    window_.pop_front();
  if (++sinceAdjust_ < kAdjustEvery)
    return;
  sinceAdjust_ = 0;
  std::vector<double> sorted(window_.begin(), window_.end());
  size_t k = std::min(sorted.size() - 1, (size_t)(0.99 * sorted.size()));
  std::nth_element(sorted.begin(), sorted.begin() + k, sorted.end());
  double p99Ms = sorted[k] / 1000.0;
  int64_t cap = cap_.load();
  if (p99Ms > options_.sloP99Ms) {
    int64_t lower = std::min(cap - 1, (int64_t)(cap * kDecrease));
    cap_ = std::max<int64_t>(1, lower);
    window_.clear();
  } else if (cap < maxBatch()) {
    cap_ = cap + 1;
  }
}

} // namespace kiln::serve
